"""Polars and SQL forms of the text family (private; see `text` for the scalar twins).

The form tables (`polars_table`, `sql_table`) name these (``polars_<name>`` / ``sql_<name>``),
imported on a form's first call, so declaring a function never imports polars (nor this
package). Each form mirrors its scalar twin: the same value and the same error codes, checked in
the same order. A form that cannot be faithful for the arguments it is given (a pattern that is
not a literal, a result whose length cannot be bounded when compiling...) raises `Unsupported`
at compile time with the reason; it never answers differently.

Ground rules, as the scalar engine has them:

- **Code points.** Lengths and positions count code points: polars ``str.len_chars``/``slice``,
  SQL ``LENGTH``/``SUBSTRING``. Polars ``str.find`` gives byte offsets, so positions are read as
  the length of the text before a match; ``str.reverse`` (and DuckDB ``reverse``) reverse
  graphemes, so nothing here reverses a text.
- **Case.** The scalar engine maps case one character to one character with Python's tables
  (``"ß"`` stays ``"ß"``, ``"Σ"`` lowers to ``"σ"`` wherever it stands). Engines map whole
  texts with their own tables (polars ``to_uppercase("ß")`` is ``"SS"``, DuckDB gives ``"ẞ"``,
  their Unicode versions differ from Python's). The set of characters where each engine's
  mapping differs from ours is derived over every code point by the tests and listed in
  `casefix`; UPPER/LOWER/PROPER (and the case-insensitive searches, which lower both sides
  first, as `_textsearch.lower1` does) use the engine's own mapping on every text without
  such a character (ASCII texts are never searched), and on the others the one-to-one table
  built from Python's mappings (polars ``replace_many``) or, in SQL, the text cut into those
  characters (mapped by our table) and runs without them (mapped by the engine).
- **Sizes.** Every text the scalar engine builds is checked against the text limit (32,767
  code points) and a longer one stops the evaluation (`LimitExceeded`), which a column
  expression cannot do for one row. Functions that can grow a text (CONCAT, TEXTJOIN, REPT,
  SUBSTITUTE, REPLACE, REGEXREPLACE, ENCODEURL...) therefore have forms only where the result
  is bounded when compiling: literal arguments (folded through the scalar implementation) or
  literal replacement sizes that cannot grow a text. Input texts are taken to be within the
  limit (the checker's cost model takes them so too); an input column holding a longer text
  is outside what these forms promise.
- **Regular expressions.** The scalar engine runs RE2; polars runs Rust ``regex`` and DuckDB
  runs RE2. Only literal patterns of a checked common subset are translated (`_Regex`):
  literals, ``.``, classes, ``\\d \\w \\s`` (ASCII, as RE2 has them), groups, alternation,
  greedy and lazy quantifiers, ``^``/``$``; everything is re-rendered with ``\\x{..}`` escapes
  so both engines read the same pattern. A pattern RE2 rejects is ``#VALUE!`` on every row, as
  in the scalar engine; anything else outside the subset is refused.

Layout: `_base` (refusals, folding, the polars and SQL tools), `case` (case mapping and the
character-level functions), `search` (FIND, SEARCH, TEXTBEFORE/AFTER, TEXTSPLIT), `regex`
(the REGEX* functions), `formatting` (growing texts, VALUE, TEXT).
"""
