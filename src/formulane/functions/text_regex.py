"""Text functions, regular expressions: REGEXTEST, REGEXEXTRACT(ALL), REGEXGROUPS, REGEXREPLACE.

Contract: patterns are RE2 (`_textsearch.Regex`: linear time, unanchored, RE2 syntax), matched
on code points as every text function counts them; an invalid pattern is ``#VALUE!`` with RE2's
message, and a run whose worst case (text bytes x program size) is over budget is refused
before it starts. Functions that build lists or texts check the result's size before building
it. Declared in the "text" category (the reference lists them with the other text functions);
their polars and SQL forms live in `columnar/forms/text/regex.py`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable, Sequence

from ..runtime import poll
from ..types import BOOLEAN, NUMBER, TEXT, list_of
from ..values import NA, VALUE, XLError
from ._textsearch import Regex, flag, replacement_template
from .spec import Cost, builtin, p, sig


def _regex(pattern: str, case_sensitivity: Decimal | int, text: str, fn: str) -> Regex:
    ignore_case = flag(case_sensitivity, fn, "case_sensitivity")
    return Regex(pattern, text, fn, case_sensitive=not ignore_case)


@builtin(
    "REGEXTEST",
    sig(p("text", TEXT), p("pattern", TEXT), p("case_sensitivity", NUMBER, 0), returns=BOOLEAN),
    doc="Whether the RE2 pattern matches anywhere in the text (case_sensitivity 1 ignores "
        "case); linear time.",
    examples=['REGEXTEST("abc123", "[0-9]+") -> TRUE', 'REGEXTEST("ABC", "^abc$", 1) -> TRUE',
              'REGEXTEST(REPT("a", 30) & "!", "(a+)+$") -> FALSE',
              'REGEXTEST("a", "(") -> #VALUE!'],
    cost=Cost.text(0.25, 20),
    errors=("#VALUE!",),
    category="text",
)
def regextest(text: str, pattern: str, case_sensitivity: Decimal | int = 0) -> bool:
    return _regex(pattern, case_sensitivity, text, "REGEXTEST").search() is not None


@builtin(
    "REGEXEXTRACT",
    sig(p("text", TEXT), p("pattern", TEXT), p("return_mode", NUMBER, 0),
        p("case_sensitivity", NUMBER, 0), returns=TEXT),
    doc="The first match of the RE2 pattern, #N/A when none (return_mode must be 0: use "
        "REGEXEXTRACTALL or REGEXGROUPS for lists).",
    examples=['REGEXEXTRACT("ab12cd345", "[0-9]+") -> "12"', 'REGEXEXTRACT("abc", "[0-9]") -> #N/A',
              'REGEXEXTRACT("ABC", "b", 0, 1) -> "B"', 'REGEXEXTRACT("abc", "b", 1) -> #VALUE!'],
    cost=Cost.text(0.25, 20),
    errors=("#VALUE!", "#N/A"),
    category="text",
)
def regexextract(text: str, pattern: str, return_mode: Decimal | int = 0,
                 case_sensitivity: Decimal | int = 0) -> str:
    if return_mode != 0:
        raise XLError(VALUE, "REGEXEXTRACT returns one text: for all matches use "
                             "REGEXEXTRACTALL, for capture groups use REGEXGROUPS")
    regex = _regex(pattern, case_sensitivity, text, "REGEXEXTRACT")
    spans = regex.search()
    if spans is None:
        raise XLError(NA, "REGEXEXTRACT: no match")
    return regex.text(spans[0])


@builtin(
    "REGEXEXTRACTALL",
    sig(p("text", TEXT), p("pattern", TEXT), p("case_sensitivity", NUMBER, 0),
        returns=list_of(TEXT)),
    doc="Every non-overlapping match of the RE2 pattern, as a list (empty when none; Excel's "
        "REGEXEXTRACT mode 1).",
    examples=['REGEXEXTRACTALL("ab12cd345", "[0-9]+") -> ["12", "345"]',
              'REGEXEXTRACTALL("abc", "[0-9]") -> []',
              'REGEXEXTRACTALL("aAa", "a", 1) -> ["a", "A", "a"]'],
    cost=Cost.text(64, 20),
    needs_ctx=True,
    errors=("#VALUE!",),
    category="text",
)
def regexextractall(ctx: Any, text: str, pattern: str,
                    case_sensitivity: Decimal | int = 0) -> tuple[str, ...]:
    regex = _regex(pattern, case_sensitivity, text, "REGEXEXTRACTALL")
    out: list[str] = []
    for spans in regex.spans():
        if len(out) >= ctx.max_list:  # the list limit, before the next match
            ctx.check_list(len(out) + 1)
        out.append(regex.text(spans[0]))
        poll(1)  # a metered run stops at its deadline inside a long match list
    ctx.check_list(len(out))  # once, for the memory budget
    return tuple(out)


@builtin(
    "REGEXGROUPS",
    sig(p("text", TEXT), p("pattern", TEXT), p("case_sensitivity", NUMBER, 0),
        returns=list_of(TEXT)),
    doc="The capture groups of the first match, as a list (\"\" for a group that did not take "
        "part); #N/A when nothing matches (Excel's REGEXEXTRACT mode 2).",
    examples=['REGEXGROUPS("john@example.com", "(\\w+)@(\\w+)") -> ["john", "example"]',
              'REGEXGROUPS("abc", "(x)") -> #N/A', 'REGEXGROUPS("ab", "(a)(z)?") -> ["a", ""]'],
    cost=Cost.text(1, 20),
    errors=("#VALUE!", "#N/A"),
    category="text",
)
def regexgroups(text: str, pattern: str, case_sensitivity: Decimal | int = 0) -> tuple[str, ...]:
    regex = _regex(pattern, case_sensitivity, text, "REGEXGROUPS")
    spans = regex.search()
    if spans is None:
        raise XLError(NA, "REGEXGROUPS: no match")
    return tuple(regex.text(span) for span in spans[1:])


@builtin(
    "REGEXREPLACE",
    sig(p("text", TEXT), p("pattern", TEXT), p("replacement", TEXT), p("occurrence", NUMBER, 0),
        p("case_sensitivity", NUMBER, 0), returns=TEXT),
    doc="The text with matches of the RE2 pattern replaced ($1, ${name} insert groups); "
        "occurrence 0 replaces all, n the n-th, -n the n-th from the end.",
    examples=['REGEXREPLACE("a1b22", "[0-9]+", "#") -> "a#b#"',
              'REGEXREPLACE("a1b22", "[0-9]+", "#", 2) -> "a1b#"',
              'REGEXREPLACE("a1b2c3", "[0-9]", "", -1) -> "a1b2c"',
              'REGEXREPLACE("John Smith", "(\\w+) (\\w+)", "$2, $1") -> "Smith, John"',
              'REGEXREPLACE("abc", "[", "x") -> #VALUE!'],
    cost=Cost.text(64, 20),
    needs_ctx=True,
    errors=("#VALUE!",),
    category="text",
)
def regexreplace(ctx: Any, text: str, pattern: str, replacement: str,
                 occurrence: Decimal | int = 0, case_sensitivity: Decimal | int = 0) -> str:
    regex = _regex(pattern, case_sensitivity, text, "REGEXREPLACE")
    template = replacement_template(replacement, regex, "REGEXREPLACE")
    nth = int(occurrence)
    matches: Iterable[Sequence[tuple[int, int]]] = regex.spans()
    if nth:
        found = list(matches)  # at most one per character, plus one
        index = nth - 1 if nth > 0 else len(found) + nth
        if not 0 <= index < len(found):
            return text
        matches = (found[index],)
    out: list[str] = []
    size = 0
    last = 0

    def put(piece: str) -> None:
        nonlocal size
        size += len(piece)
        if size > ctx.max_text:  # before the join: a replacement can grow the text
            ctx.check_text(size)
        out.append(piece)

    for spans in matches:
        poll(1 + len(template))  # a metered run stops at its deadline inside the loop
        put(regex.text((last, spans[0][0])))
        for part in template:
            put(part if isinstance(part, str) else regex.text(spans[part]))
        last = spans[0][1]
    put(regex.text((last, len(regex.subject))))
    ctx.check_text(size)  # once, for the memory budget, before the join
    return "".join(out)
