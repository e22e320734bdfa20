"""Polars and SQL forms of the text family (private; see `text` for the scalar twins).

Specs name these through ``text._form`` (``polars_<name>`` / ``sql_<name>`` here), resolved on
first use, so declaring a function never imports polars (nor this module). Each form mirrors its
scalar twin: the same value and the same error codes, checked in the same order. A form that
cannot be faithful for the arguments it is given (a pattern that is not a literal, a result
whose length cannot be bounded when compiling...) raises `Unsupported` at compile time with the
reason; it never answers differently.

Ground rules, as the scalar engine has them:

- **Code points.** Lengths and positions count code points: polars ``str.len_chars``/``slice``,
  SQL ``LENGTH``/``SUBSTRING``. Polars ``str.find`` gives byte offsets, so positions are read as
  the length of the text before a match; ``str.reverse`` (and DuckDB ``reverse``) reverse
  graphemes, so nothing here reverses a text.
- **Case.** The scalar engine maps case one character to one character with Python's tables
  (``"ß"`` stays ``"ß"``, ``"Σ"`` lowers to ``"σ"`` wherever it stands). Engines map whole
  texts with their own tables (polars ``to_uppercase("ß")`` is ``"SS"``, DuckDB gives ``"ẞ"``,
  their Unicode versions differ from Python's). So UPPER/LOWER (and the case-insensitive
  searches, which lower both sides first, as `_textsearch.lower1` does) translate with a table
  built from Python's own mappings: polars ``str.replace_many`` over the single-character
  pairs; SQL ``TRANSLATE``, behind a fast path: a row made only of characters whose mapping
  every engine shares (not special-cased, not an unpaired cased letter, assigned in Python's
  Unicode) uses the engine's own ``UPPER``/``LOWER``.
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
"""

from __future__ import annotations

import datetime as dt
import decimal
import importlib
import itertools
import unicodedata
from decimal import Decimal
from functools import lru_cache
from typing import Any, Callable, Iterable, NoReturn, Sequence

from sqlglot import exp

from ..errors import LimitExceeded, Unsupported
from ..limits import DEFAULT_LIMITS
from ..values import CONTEXT, ErrorValue, XLError


class _Lazy:
    """A module imported on first attribute access (the SQL forms never import polars)."""

    def __init__(self, name: str) -> None:
        self.__dict__["_name"] = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__dict__["_name"]), attr)


pl: Any = _Lazy("polars")
_vp: Any = _Lazy("formulane.vectorized.polars")

#: The text limit the forms bound results by (the default `Limits.max_text_length`).
LIMIT = DEFAULT_LIMITS.max_text_length
#: Counts and positions are clamped to this before becoming integers (no cast can overflow;
#: any larger count acts as "all of the text").
_CLAMP = (1 << 31) - 1
_NOT = object()  # not a literal
L = exp.Literal


def _refuse(backend: str, name: str, reason: str) -> NoReturn:
    verb = "polars cannot evaluate" if backend == "polars" else "SQL cannot express"
    raise Unsupported(f"{verb} {name}: {reason}", function=name, backend=backend,
                      reason=reason)


# ------------------------------------------------------------------------------- constants


def pl_const(e: Any) -> Any:
    """The value of a polars literal expression (lists as tuples), else `_NOT`."""
    try:
        # a literal, or an expression of literals only (``-1`` is a negation of one)
        if not e.meta.is_literal() and (e.meta.root_names() or _reads_elements(e)):
            return _NOT
        value = pl.select(e).to_series()
    except Exception:
        return _NOT
    if len(value) != 1:
        return _NOT
    v = value[0]
    if isinstance(v, pl.Series):
        return tuple(v.to_list())
    return v


def _reads_elements(e: Any) -> bool:
    try:
        return "element()" in str(e) or "col(" in str(e)
    except Exception:
        return True


def sql_const(e: Any) -> Any:
    """The value of a SQL literal (numbers as Decimal, arrays as tuples), else `_NOT`."""
    if isinstance(e, exp.Paren):
        return sql_const(e.this)
    if isinstance(e, exp.Literal):
        return e.this if e.is_string else Decimal(e.this)
    if isinstance(e, exp.Neg):
        inner = sql_const(e.this)
        return -inner if isinstance(inner, Decimal) else _NOT
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    if isinstance(e, exp.Array):
        items = [sql_const(i) for i in e.expressions]
        return _NOT if any(i is _NOT for i in items) else tuple(items)
    return _NOT


def _const(backend: str, e: Any) -> Any:
    return pl_const(e) if backend == "polars" else sql_const(e)


def _engine_value(v: Any) -> Any:
    """A literal as the scalar engine holds it (floats by their shortest repr)."""
    if isinstance(v, float):
        return Decimal(int(v)) if v.is_integer() and abs(v) < 2**53 else Decimal(repr(v))
    if isinstance(v, tuple):
        return tuple(_engine_value(i) for i in v)
    if isinstance(v, list):
        return tuple(_engine_value(i) for i in v)
    return v


def _int(v: Any) -> int:
    """Excel's truncation of a literal count or position."""
    return int(Decimal(v)) if not isinstance(v, int) else v


# ----------------------------------------------------------------------------- folding


def _scalar(name: str) -> Any:
    from . import registry

    return registry.default_registry().get(name)


def _fold(backend: str, name: str, args: Sequence[Any], *, sig: int = 0) -> Any:
    """Every argument a literal: the scalar implementation's answer, computed once when
    compiling (a literal value, or an error code); a result over the text limit is refused
    (the scalar engine stops there). Not all literal: `_NOT`."""
    values = [_const(backend, a) for a in args]
    if any(v is _NOT for v in values):
        return _NOT
    spec = _scalar(name)
    impl = spec.signatures[sig].impl or spec.impl
    values = [_engine_value(v) for v in values]
    try:
        with decimal.localcontext(CONTEXT):
            if spec.needs_ctx:
                from ..interpreter.meter import EvalContext

                ctx = EvalContext(DEFAULT_LIMITS, dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc),
                                  False)
                result = impl(ctx, *values)
            else:
                result = impl(*values)
    except XLError as exc:
        return _error_literal(backend, exc.code if hasattr(exc, "code") else str(exc),
                              spec.signatures[sig].returns)
    except LimitExceeded as exc:
        _refuse(backend, name, f"the result is over the text limit ({exc.message})")
    except (ArithmeticError, ValueError):
        return _error_literal(backend, "#NUM!", spec.signatures[sig].returns)
    except (TypeError, AttributeError):
        # a constant the implementation never receives (the null value of an argument that
        # is always an error): not folded, the form's own expression handles it
        return _NOT
    if isinstance(result, ErrorValue):
        return _error_literal(backend, result.code, spec.signatures[sig].returns)
    return _literal(backend, result)


class _Folded:
    """A plan's answer when every argument was a literal: the form's whole result (a literal,
    or a (null, error code) pair), kept apart from the plan tuples the forms unpack."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result


def _error_literal(backend: str, code: Any, returns: Any = None) -> Any:
    """A null of the function's result type (a Number's null must stay numeric: the backend
    tests numbers for #NUM!) with the error code."""
    code = getattr(code, "code", code)
    if backend == "polars":
        dtype = pl.Utf8 if returns is None or returns.kind in ("Any", "Var") \
            else _vp.dtype_of(returns)
        return pl.lit(None, dtype=dtype), pl.lit(code)
    return exp.Null(), L.string(code)


def _literal(backend: str, value: Any) -> Any:
    if backend == "polars":
        if isinstance(value, bool):
            return pl.lit(value)
        if isinstance(value, (int, Decimal)):
            return _pl_number(pl.lit(float(value)) if _vp.numbers() == "float"
                              else pl.lit(Decimal(value), dtype=_vp.DECIMAL_DTYPE))
        if isinstance(value, tuple):
            return pl.lit(pl.Series([list(value)], dtype=pl.List(pl.Utf8)))
        return pl.lit(value, dtype=pl.Utf8)
    if isinstance(value, tuple):
        return exp.cast(exp.Array(expressions=[L.string(v) for v in value]),
                        exp.DataType.build("VARCHAR[]"))
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, Decimal)):
        return L.number(format(Decimal(value), "f"))
    return L.string(value)


def _folded_or(backend: str, name: str, args: Sequence[Any], reason: str, sig: int = 0) -> Any:
    out = _fold(backend, name, args, sig=sig)
    if out is _NOT:
        _refuse(backend, name, reason)
    return out


# --------------------------------------------------------------------------- polars tools


def _pl_number(e: Any) -> Any:
    """An integer or float expression as the program's Number dtype."""
    return e.cast(pl.Float64) if _vp.numbers() == "float" else e.cast(_vp.DECIMAL_DTYPE)


def _pl_int(n: Any) -> Any:
    """A Number truncated toward zero to Int64 (clamped first: never an overflow)."""
    return n.clip(-_CLAMP, _CLAMP).cast(pl.Int64, strict=False)


def _pl_text(v: str) -> Any:
    return pl.lit(v, dtype=pl.Utf8)


# ------------------------------------------------------------------------------ SQL tools


def _f(name: str, *args: Any) -> Any:
    return exp.func(name, *args, dialect="duckdb")


def _p(e: Any) -> Any:
    return exp.Paren(this=e) if not isinstance(e, (exp.Column, exp.Literal, exp.Func,
                                                   exp.Paren)) else e


def _sql_int(n: Any) -> Any:
    """A Number truncated toward zero to BIGINT (clamped first)."""
    clamped = _f("LEAST", _f("GREATEST", n.copy(), L.number(-_CLAMP)), L.number(_CLAMP))
    return exp.cast(_f("TRUNC", clamped), exp.DataType.build("BIGINT"))


def _lt(a: Any, b: Any) -> Any:
    return exp.LT(this=_p(a), expression=_p(b))


def _gt(a: Any, b: Any) -> Any:
    return exp.GT(this=_p(a), expression=_p(b))


def _ge(a: Any, b: Any) -> Any:
    return exp.GTE(this=_p(a), expression=_p(b))


def _eq(a: Any, b: Any) -> Any:
    return exp.EQ(this=_p(a), expression=_p(b))


def _add(a: Any, b: Any) -> Any:
    return exp.Add(this=_p(a), expression=_p(b))


def _sub(a: Any, b: Any) -> Any:
    return exp.Sub(this=_p(a), expression=_p(b))


def _case(pairs: list[tuple[Any, Any]], default: Any = None) -> Any:
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=default)


def _cat(*parts: Any) -> Any:
    out = parts[0]
    for p in parts[1:]:
        out = exp.DPipe(this=out, expression=p, safe=True)
    return out


def _length(e: Any) -> Any:
    return exp.Length(this=e.copy())


def _substr(e: Any, start: Any, length: Any = None) -> Any:
    args = [e.copy(), start] + ([length] if length is not None else [])
    return _f("SUBSTRING", *args)


_LETS = itertools.count(1)


def _let(value: Any, build: Callable[[Any], Any]) -> Any:
    """``build(v)`` with v bound to ``value`` once (DuckDB: a one-item LIST_TRANSFORM), so a
    large sub-expression used several times is written once."""
    if isinstance(value, (exp.Column, exp.Literal)):
        return build(value)
    name = f"_fl{next(_LETS)}"
    body = build(exp.column(name))
    mapped = _f("LIST_TRANSFORM", exp.Array(expressions=[value]),
                exp.Lambda(this=body, expressions=[exp.to_identifier(name)]))
    return exp.Bracket(this=mapped, expressions=[L.number(1)], offset=1)


# ======================================================================= Unicode tables


def _code_points(limit: int = 0x110000) -> Iterable[str]:
    for c in range(limit):
        if not 0xD800 <= c <= 0xDFFF:
            yield chr(c)


#: No character at or above this code point has a case mapping (checked by the tests).
_CASED_LIMIT = 0x20000


@lru_cache(maxsize=None)
def case_table(kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(from, to): the characters the scalar engine's UPPER (or LOWER) changes, one to one
    (``str.upper`` of one character, kept when it gives several)."""
    fn = str.upper if kind == "upper" else str.lower
    src: list[str] = []
    dst: list[str] = []
    for ch in _code_points(_CASED_LIMIT):
        mapped = fn(ch)
        if len(mapped) == 1 and mapped != ch:
            src.append(ch)
            dst.append(mapped)
    return tuple(src), tuple(dst)


def _ranges(chars: Iterable[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for c in chars:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return [(a, b) for a, b in out]


def _class(ranges: Iterable[tuple[int, int]], negate: bool = False) -> str:
    """A regex character class both Rust ``regex`` and RE2 read the same way."""
    body = "".join(_esc(chr(a)) if a == b else f"{_esc(chr(a))}-{_esc(chr(b))}"
                   for a, b in ranges)
    return f"[{'^' if negate else ''}{body}]"


def _esc(ch: str) -> str:
    return "\\x{%X}" % ord(ch)


@lru_cache(maxsize=None)
def letter_class() -> str:
    """Python's ``str.isalpha`` (categories L*) as a class (PROPER's letters)."""
    return _class(_ranges(ord(c) for c in _code_points() if c.isalpha()))


#: The fast path of the SQL case mapping covers Latin, Greek and Cyrillic (a short class).
_FAST_LIMIT = 0x530


@lru_cache(maxsize=None)
def engine_case_safe_class() -> str:
    """Characters whose one-to-one case mapping every engine shares with Python: assigned
    in Python's Unicode, not special-cased (no multi-character mapping), not a cased letter
    without a partner (a later Unicode may give it one), among the Latin, Greek and Cyrillic
    blocks. A row made only of these can use the engine's own UPPER/LOWER."""
    safe = []
    for ch in _code_points(_FAST_LIMIT):
        cat = unicodedata.category(ch)
        if cat == "Cn" or len(ch.upper()) > 1 or len(ch.lower()) > 1:
            continue
        if cat in ("Lu", "Ll", "Lt") and ch.upper() == ch and ch.lower() == ch:
            continue
        safe.append(ord(ch))
    return _class(_ranges(safe))


# ---------------------------------------------------------------------- case mapping


def pl_case(e: Any, kind: str) -> Any:
    src, dst = case_table(kind)
    return e.str.replace_many(list(src), list(dst))


def sql_case(e: Any, kind: str) -> Any:
    src, dst = case_table(kind)

    def build(v: Any) -> Any:
        native = exp.Upper(this=v.copy()) if kind == "upper" else exp.Lower(this=v.copy())
        safe = exp.RegexpLike(this=v.copy(),
                              expression=L.string(f"^{engine_case_safe_class()}*$"))
        translated = _f("TRANSLATE", v.copy(), L.string("".join(src)), L.string("".join(dst)))
        return _case([(safe, native)], translated)

    return _let(e, build)


def polars_upper(text: Any) -> Any:
    return pl_case(text, "upper")


def polars_lower(text: Any) -> Any:
    return pl_case(text, "lower")


def sql_upper(text: Any) -> Any:
    return sql_case(text, "upper")


def sql_lower(text: Any) -> Any:
    return sql_case(text, "lower")


def polars_proper(text: Any) -> Any:
    """Letter runs get their first letter upper, the rest lower; other runs stay."""
    letters = letter_class()
    runs = text.str.extract_all(f"{letters}+|{letters[0]}^{letters[1:]}+")
    w = pl.element()
    head = pl_case(w.str.slice(0, 1), "upper")
    rest = pl_case(w.str.slice(1), "lower")
    fixed = pl.when(w.str.contains(f"^{letters}")).then(head + rest).otherwise(w)
    return pl.when(text == "").then(_pl_text("")).otherwise(
        runs.list.eval(fixed).list.join(""))


def sql_proper(text: Any) -> Any:
    letters = letter_class()
    runs = _f("REGEXP_EXTRACT_ALL", text.copy(),
              L.string(f"{letters}+|{letters[0]}^{letters[1:]}+"))
    w = exp.column("_w")
    fixed = _case([(exp.RegexpLike(this=w.copy(), expression=L.string(f"^{letters}")),
                    _cat(sql_case(_substr(w, L.number(1), L.number(1)), "upper"),
                         sql_case(_substr(w, L.number(2)), "lower")))], w.copy())
    mapped = _f("LIST_TRANSFORM", runs, exp.Lambda(this=fixed,
                                                   expressions=[exp.to_identifier("_w")]))
    return _f("ARRAY_TO_STRING", mapped, L.string(""))


# ------------------------------------------------------------------------- simple ones


def polars_len(text: Any) -> Any:
    return _pl_number(text.str.len_chars())


def sql_len(text: Any) -> Any:
    return _length(text)


def polars_left(text: Any, n: Any) -> Any:
    return text.str.head(_pl_int(n.clip(lower_bound=0))), [(n < 0, "#VALUE!")]


def sql_left(text: Any, n: Any) -> Any:
    return _substr(text, L.number(1), _sql_int(n)), [(_lt(n, L.number(0)), "#VALUE!")]


def polars_right(text: Any, n: Any) -> Any:
    return text.str.tail(_pl_int(n.clip(lower_bound=0))), [(n < 0, "#VALUE!")]


def sql_right(text: Any, n: Any) -> Any:
    k = _f("GREATEST", _sql_int(n), L.number(0))
    return _f("RIGHT", text.copy(), k), [(_lt(n, L.number(0)), "#VALUE!")]


def polars_mid(text: Any, start: Any, n: Any) -> Any:
    s = _pl_int(start.clip(lower_bound=1))
    k = _pl_int(n.clip(lower_bound=0))
    return text.str.slice(s - 1, k), [(start < 1, "#VALUE!"), (n < 0, "#VALUE!")]


def sql_mid(text: Any, start: Any, n: Any) -> Any:
    s = _f("GREATEST", _sql_int(start), L.number(1))
    k = _f("GREATEST", _sql_int(n), L.number(0))
    return _substr(text, s, k), [(_lt(start, L.number(1)), "#VALUE!"),
                                 (_lt(n, L.number(0)), "#VALUE!")]


def polars_trim(text: Any) -> Any:
    return text.str.replace_all(" {2,}", " ").str.strip_chars(" ")


def sql_trim(text: Any) -> Any:
    squeezed = exp.RegexpReplace(this=text.copy(), expression=L.string(" {2,}"),
                                 replacement=L.string(" "), modifiers=L.string("g"))
    return exp.Trim(this=squeezed, expression=L.string(" "), position="BOTH")


_CONTROL = r"[\x{0}-\x{1F}]"


def polars_clean(text: Any) -> Any:
    return text.str.replace_all(_CONTROL, "")


def sql_clean(text: Any) -> Any:
    return exp.RegexpReplace(this=text.copy(), expression=L.string(_CONTROL),
                             replacement=L.string(""), modifiers=L.string("g"))


def polars_exact(a: Any, b: Any) -> Any:
    return a == b


def sql_exact(a: Any, b: Any) -> Any:
    return _eq(a, b)


def polars_startswith(text: Any, prefix: Any) -> Any:
    return text.str.starts_with(prefix)


def sql_startswith(text: Any, prefix: Any) -> Any:
    return _f("STARTS_WITH", text.copy(), prefix.copy())


def polars_endswith(text: Any, suffix: Any) -> Any:
    return text.str.ends_with(suffix)


def sql_endswith(text: Any, suffix: Any) -> Any:
    return _f("ENDS_WITH", text.copy(), suffix.copy())


def polars_contains(text: Any, sub: Any) -> Any:
    return text.str.contains(sub, literal=True)


def sql_contains(text: Any, sub: Any) -> Any:
    return _f("CONTAINS", text.copy(), sub.copy())


# ------------------------------------------------------------------ code points, CHAR

_HEX = [format(i, "x") for i in range(16)]


def _pl_hex4(n: Any) -> Any:
    digits = [((n // (16 ** i)) % 16).replace_strict(list(range(16)), _HEX,
                                                     return_dtype=pl.Utf8)
              for i in (3, 2, 1, 0)]
    return pl.concat_str(digits)


def _pl_chr(n: Any) -> Any:
    """The character of code point n (an Int64 expression, null where not valid), natively:
    a JSON string escape decoded (two UTF-16 surrogates above U+FFFF)."""
    high = n - 0x10000
    bmp = pl.concat_str([pl.lit('"\\u'), _pl_hex4(n), pl.lit('"')])
    astral = pl.concat_str([pl.lit('"\\u'), _pl_hex4(0xD800 + high // 1024), pl.lit("\\u"),
                            _pl_hex4(0xDC00 + high % 1024), pl.lit('"')])
    quoted = pl.when(n <= 0xFFFF).then(bmp).otherwise(astral)
    return quoted.str.json_decode(pl.Utf8)


def polars_char(number: Any) -> Any:
    bad = (number < 1) | (number >= 256)
    n = pl.when(~bad).then(_pl_int(number))
    return _pl_chr(n), [(bad, "#VALUE!")]


def sql_char(number: Any) -> Any:
    bad = exp.or_(_lt(number, L.number(1)), _ge(number, L.number(256)))
    n = _case([(exp.Not(this=exp.Paren(this=bad)), _sql_int(number))])
    return _f("CHR", exp.cast(n, exp.DataType.build("INT"))), [(bad, "#VALUE!")]


def polars_unichar(number: Any) -> Any:
    bad = (number < 1) | (number >= 0x110000)
    k = _pl_int(number)
    surrogate = (k >= 0xD800) & (k <= 0xDFFF)
    n = pl.when(~bad & ~surrogate).then(k)
    return _pl_chr(n).str.normalize("NFC"), [(bad, "#VALUE!"), (surrogate, "#N/A")]


def sql_unichar(number: Any) -> Any:
    bad = exp.or_(_lt(number, L.number(1)), _ge(number, L.number(0x110000)))
    k = _sql_int(number)
    surrogate = exp.and_(_ge(k, L.number(0xD800)), exp.LTE(this=k.copy(),
                                                            expression=L.number(0xDFFF)))
    ok = exp.Not(this=exp.Paren(this=exp.or_(bad.copy(), surrogate.copy())))
    n = exp.cast(_case([(ok, k.copy())]), exp.DataType.build("INT"))
    return _f("NFC_NORMALIZE", _f("CHR", n)), \
        [(bad, "#VALUE!"), (surrogate, "#N/A")]


def polars_unicode(text: Any) -> Any:
    """The first character's code point, decoded from its UTF-8 bytes."""
    hexed = text.str.slice(0, 1).str.encode("hex")
    b = [hexed.str.slice(2 * i, 2).str.to_integer(base=16, strict=False) for i in range(4)]
    size = hexed.str.len_chars() // 2
    cp = (pl.when(size == 1).then(b[0])
          .when(size == 2).then((b[0] - 0xC0) * 64 + (b[1] - 0x80))
          .when(size == 3).then((b[0] - 0xE0) * 4096 + (b[1] - 0x80) * 64 + (b[2] - 0x80))
          .otherwise((b[0] - 0xF0) * 262144 + (b[1] - 0x80) * 4096 + (b[2] - 0x80) * 64
                     + (b[3] - 0x80)))
    return _pl_number(cp), [(text == "", "#VALUE!")]


def sql_unicode(text: Any) -> Any:
    empty = _eq(text, L.string(""))
    return _f("UNICODE", text.copy()), [(empty, "#VALUE!")]


polars_code = polars_unicode
sql_code = sql_unicode


# ----------------------------------------------------------------------- FIND, SEARCH


def _pl_position_after(start: Any, within: Any, find: Any, empty_find: Any,
                       found_at: Callable[[Any], tuple[Any, Any]]) -> Any:
    """Shared by FIND and SEARCH: start_num checks, then ``found_at(tail)`` gives (found,
    characters before the match) in the text from start_num on."""
    s = _pl_int(start.clip(lower_bound=1))
    length = within.str.len_chars().cast(pl.Int64)
    past = s > length + empty_find.cast(pl.Int64)
    tail = within.str.slice(s - 1)
    found, before = found_at(tail)
    value = _pl_number(before.cast(pl.Int64) + s)
    return value, [(start < 1, "#VALUE!"), (past, "#VALUE!"), (~found, "#VALUE!")]


def _pl_literal_find(tail: Any, needle: Any) -> tuple[Any, Any]:
    parts = tail.str.splitn(needle, 2)
    before = parts.struct.field("field_0").str.len_chars()
    found = parts.struct.field("field_1").is_not_null()
    return found, before


def polars_find(find: Any, within: Any, start: Any) -> Any:
    const = pl_const(find)
    if const == "":
        return _pl_position_after(start, within, find, pl.lit(True),
                                  lambda tail: (pl.lit(True), pl.lit(0)))
    if const is not _NOT:
        return _pl_position_after(start, within, find, pl.lit(False),
                                  lambda tail: _pl_literal_find(tail, const))
    empty = find == ""

    def found_at(tail: Any) -> tuple[Any, Any]:
        found, before = _pl_literal_find(tail, find)
        return empty | found, pl.when(empty).then(0).otherwise(before)

    return _pl_position_after(start, within, find, empty, found_at)


def _sql_position_after(start: Any, within: Any, empty_find: Any,
                        offset_in: Callable[[Any], Any], hay: Any = None) -> Any:
    """FIND/SEARCH in SQL: ``offset_in(tail)`` is the 0-based offset of the match in the
    text from start_num on (``hay``: the text searched, lowered for SEARCH; same length as
    ``within``), NULL when there is none."""
    s = _f("GREATEST", _sql_int(start), L.number(1))
    past = _gt(s, _add(_length(within), _case([(empty_find, L.number(1))], L.number(0))))
    searched = within if hay is None else hay
    offset = _let(_substr(searched, s.copy()), offset_in)
    value = _add(offset, s.copy())
    return value, [(_lt(start, L.number(1)), "#VALUE!"), (past, "#VALUE!"),
                   (exp.Is(this=offset.copy(), expression=exp.Null()), "#VALUE!")]


def _sql_strpos_offset(needle: Any) -> Callable[[Any], Any]:
    def offset_in(tail: Any) -> Any:  # STRPOS(x, '') is 1
        return _sub(exp.Nullif(this=_f("STRPOS", tail, needle.copy()), expression=L.number(0)),
                    L.number(1))
    return offset_in


def sql_find(find: Any, within: Any, start: Any) -> Any:
    return _sql_position_after(start, within, _eq(find, L.string("")),
                               _sql_strpos_offset(find))


def _search_plan(backend: str, find: Any, name: str = "SEARCH") -> tuple[bool, list[str], str]:
    """SEARCH's literal pattern: (empty find_text, literal segments or [], regex or "")."""
    from ._textsearch import lower1, wildcard_segments

    const = _const(backend, find)
    if not isinstance(const, str):
        _refuse(backend, name, "find_text must be a literal (its wildcards decide the search)")
    leading, segments = wildcard_segments(lower1(const))
    if not segments:
        return const == "", [], ""
    if leading or len(segments) > 1 or any(ch is None for ch in segments[0]):
        _check_regex_work(backend, name, _search_re2(leading, segments))
        body = "(?s:.*?)".join("".join("." if ch is None else _esc(ch) for ch in seg)
                               for seg in segments)
        return False, [], ("(?s:.*?)" if leading else "") + "(?s:" + body + ")"
    return False, ["".join(ch for ch in segments[0] if ch is not None)], ""


def _search_re2(leading: bool, segments: list[list[str | None]]) -> str:
    import re2  # type: ignore[import-untyped]

    parts = ["".join("." if ch is None else re2.escape(ch) for ch in seg) for seg in segments]
    return (".*?" if leading else "") + ".*?".join(parts)


def polars_search(find: Any, within: Any, start: Any) -> Any:
    empty, literal, regex = _search_plan("polars", find)
    if not literal and not regex:
        return _pl_position_after(start, within, find, pl.lit(empty),
                                  lambda tail: (pl.lit(True), pl.lit(0)))
    lowered = pl_case(within, "lower")
    if literal:
        return _pl_position_after(start, lowered, find, pl.lit(False),
                                  lambda tail: _pl_literal_find(tail, literal[0]))

    def found_at(tail: Any) -> tuple[Any, Any]:
        prefix = tail.str.extract(f"^(?s:(.*?)){regex}", 1)
        return prefix.is_not_null(), prefix.str.len_chars()

    return _pl_position_after(start, lowered, find, pl.lit(False), found_at)


def sql_search(find: Any, within: Any, start: Any) -> Any:
    empty, literal, regex = _search_plan("sql", find)
    if not literal and not regex:
        return _sql_position_after(start, within, exp.Boolean(this=empty),
                                   lambda tail: L.number(0))
    lowered = sql_case(within, "lower")
    if literal:
        return _sql_position_after(start, within, exp.Boolean(this=False),
                                   _sql_strpos_offset(L.string(literal[0])), lowered)

    def offset_in(tail: Any) -> Any:
        found = exp.RegexpLike(this=tail, expression=L.string(regex))
        prefix = exp.RegexpExtract(this=tail.copy(), expression=L.string(f"^(?s:(.*?)){regex}"),
                                   group=L.number(1))
        return _case([(found, _length(prefix))])

    return _sql_position_after(start, within, exp.Boolean(this=False), offset_in, lowered)


# ------------------------------------------------------------ RE2 work budget (scalar)


def _check_regex_work(backend: str, name: str, pattern: str, case_sensitive: bool = True,
                      dot_nl: bool = True) -> None:
    """Refuse a pattern whose RE2 program is large enough that the scalar engine could stop
    with `LimitExceeded` on a text within the text limit (see `_textsearch.check_work`)."""
    from ._textsearch import REGEX_WORK_LIMIT, compile_regex, options

    worst = 0
    modes = [False] if not pattern.isascii() else [True, False]
    for latin1 in modes:
        try:
            regex = compile_regex(pattern.encode("ascii") if latin1 else pattern,
                                  options(case_sensitive, dot_nl, latin1), name)
        except XLError:
            continue
        size = max(regex.programsize, regex.reverseprogramsize)
        nbytes = LIMIT if latin1 else 4 * LIMIT
        worst = max(worst, size * nbytes)
    if worst > REGEX_WORK_LIMIT:
        _refuse(backend, name, "the pattern is large enough that the scalar engine's regular-"
                "expression budget could stop a long text")


# ===================================================================== growing texts


_GROWS = ("the result's length is not bounded when compiling (the scalar engine stops a text "
          "over {limit:,} characters, which a column expression cannot do for one row); "
          "literal arguments are folded")


def _grows() -> str:
    return _GROWS.format(limit=LIMIT)


def polars_concat(*args: Any) -> Any:
    return _folded_or("polars", "CONCAT", args, _grows())


def sql_concat(*args: Any) -> Any:
    return _folded_or("sql", "CONCAT", args, _grows())


def polars_concatenate(*args: Any) -> Any:
    return _folded_or("polars", "CONCATENATE", args, _grows())


def sql_concatenate(*args: Any) -> Any:
    return _folded_or("sql", "CONCATENATE", args, _grows())


def polars_textjoin(*args: Any) -> Any:
    return _folded_or("polars", "TEXTJOIN", args, _grows())


def sql_textjoin(*args: Any) -> Any:
    return _folded_or("sql", "TEXTJOIN", args, _grows())


def polars_encodeurl(text: Any) -> Any:
    return _folded_or("polars", "ENCODEURL", [text], "percent-encoding has no polars "
                      "expression, and it can grow a text up to 12-fold past the text limit; "
                      "literal arguments are folded")


def sql_encodeurl(text: Any) -> Any:
    return _folded_or("sql", "ENCODEURL", [text], "percent-encoding has no portable SQL "
                      "function, and it can grow a text up to 12-fold past the text limit; "
                      "literal arguments are folded")


def _rept(backend: str, text: Any, n: Any) -> Any:
    folded = _fold(backend, "REPT", [text, n])
    if folded is not _NOT:
        return folded
    t, k = _const(backend, text), _const(backend, n)
    if t == "":
        return "empty"
    if k is not _NOT and k is not None and _int(k) <= 1:
        return "at most once"
    _refuse(backend, "REPT", "the repetition count must be a literal 0 or 1 unless the text is "
            "a literal (" + _grows() + ")")


def polars_rept(text: Any, n: Any) -> Any:
    plan = _rept("polars", text, n)
    if not isinstance(plan, str):
        return plan
    if plan == "empty":
        return _pl_text(""), [(n < 0, "#VALUE!")]
    return pl.when(n >= 1).then(text).otherwise(_pl_text("")), [(n < 0, "#VALUE!")]


def sql_rept(text: Any, n: Any) -> Any:
    plan = _rept("sql", text, n)
    if not isinstance(plan, str):
        return plan
    bad = [(_lt(n, L.number(0)), "#VALUE!")]
    if plan == "empty":
        return L.string(""), bad
    return _case([(_ge(n, L.number(1)), text.copy())], L.string("")), bad


def _substitute_plan(backend: str, args: Sequence[Any]) -> Any:
    folded = _fold(backend, "SUBSTITUTE", args, sig=0 if len(args) == 3 else 1)
    if folded is not _NOT:
        return folded
    old, new = _const(backend, args[1]), _const(backend, args[2])
    if not isinstance(old, str) or not isinstance(new, str):
        _refuse(backend, "SUBSTITUTE", "old_text and new_text must be literals (the result's "
                "length must be bounded when compiling)")
    if old and len(new) > len(old):
        _refuse(backend, "SUBSTITUTE", "new_text is longer than old_text: " + _grows())
    return old, new


def polars_substitute(text: Any, old: Any, new: Any, instance: Any = None) -> Any:
    plan = _substitute_plan("polars", [a for a in (text, old, new, instance) if a is not None])
    if not isinstance(plan, tuple) or len(plan) != 2 or not isinstance(plan[0], str):
        return plan
    o, w = plan
    if instance is None:
        return text if not o else text.str.replace_all(o, w, literal=True)
    errors = [(instance < 1, "#VALUE!")]
    if not o:
        return text, errors
    k = _pl_int(instance.clip(lower_bound=1))
    parts = text.str.split(o)
    head = parts.list.slice(0, k).list.join(o)
    tail = parts.list.slice(k).list.join(o)
    value = pl.when(parts.list.len() > k).then(pl.concat_str([head, _pl_text(w), tail])) \
        .otherwise(text)
    return value, errors


def sql_substitute(text: Any, old: Any, new: Any, instance: Any = None) -> Any:
    plan = _substitute_plan("sql", [a for a in (text, old, new, instance) if a is not None])
    if not isinstance(plan, tuple) or len(plan) != 2 or not isinstance(plan[0], str):
        return plan
    o, w = plan
    if instance is None:
        return text if not o else _f("REPLACE", text.copy(), L.string(o), L.string(w))
    errors = [(_lt(instance, L.number(1)), "#VALUE!")]
    if not o:
        return text, errors
    k = _f("GREATEST", _sql_int(instance), L.number(1))
    parts = _f("STRING_SPLIT", text.copy(), L.string(o))
    size = exp.ArraySize(this=parts.copy())
    head = _f("ARRAY_TO_STRING", _f("LIST_SLICE", parts.copy(), L.number(1), k.copy()),
              L.string(o))
    tail = _f("ARRAY_TO_STRING", _f("LIST_SLICE", parts.copy(), _add(k.copy(), L.number(1)),
                                    size.copy()), L.string(o))
    value = _case([(_gt(size, k.copy()), _cat(head, L.string(w), tail))], text.copy())
    return value, errors


def _replace_plan(backend: str, args: Sequence[Any]) -> Any:
    folded = _fold(backend, "REPLACE", args)
    if folded is not _NOT:
        return folded
    t, s, k, w = (_const(backend, a) for a in args)
    if isinstance(t, str) and isinstance(w, str):
        if len(t) + len(w) <= LIMIT:
            return None
    elif all(v is not _NOT and v is not None for v in (s, k)) and isinstance(w, str):
        start, count = _int(s), _int(k)
        if start < 1 or count < 0 or len(w) <= min(count, max(0, LIMIT - start + 1)):
            return None  # every row an error, or the result never outgrows the text
    _refuse(backend, "REPLACE", "start_num, num_chars and new_text must be literals with "
            "new_text no longer than the characters it replaces (" + _grows() + ")")


def polars_replace(text: Any, start: Any, n: Any, new: Any) -> Any:
    plan = _replace_plan("polars", [text, start, n, new])
    if plan is not None:
        return plan
    s = _pl_int(start.clip(lower_bound=1))
    k = _pl_int(n.clip(lower_bound=0))
    value = pl.concat_str([text.str.slice(0, s - 1), new, text.str.slice(s - 1 + k)])
    return value, [(start < 1, "#VALUE!"), (n < 0, "#VALUE!")]


def sql_replace(text: Any, start: Any, n: Any, new: Any) -> Any:
    plan = _replace_plan("sql", [text, start, n, new])
    if plan is not None:
        return plan
    s = _f("GREATEST", _sql_int(start), L.number(1))
    k = _f("GREATEST", _sql_int(n), L.number(0))
    value = _cat(_substr(text, L.number(1), _sub(s, L.number(1))), new.copy(),
                 _substr(text, _add(s.copy(), k)))
    return value, [(_lt(start, L.number(1)), "#VALUE!"), (_lt(n, L.number(0)), "#VALUE!")]


# ----------------------------------------------------------------------- conversions

_READS_NUMBERS = ("Excel's reading of a number in a text (currency, accounting negatives, "
                  "groups of three, mixed fractions, times, 34-digit decimals) has no exact "
                  "native equivalent; literal arguments are folded")


def polars_value(text: Any) -> Any:
    return _folded_or("polars", "VALUE", [text], _READS_NUMBERS)


def sql_value(text: Any) -> Any:
    return _folded_or("sql", "VALUE", [text], _READS_NUMBERS)


def polars_numbervalue(*args: Any) -> Any:
    return _folded_or("polars", "NUMBERVALUE", args, _READS_NUMBERS)


def sql_numbervalue(*args: Any) -> Any:
    return _folded_or("sql", "NUMBERVALUE", args, _READS_NUMBERS)


# ------------------------------------------------------------ TEXTBEFORE, TEXTAFTER, SPLIT


def _one_delimiter(backend: str, name: str, delim: Any) -> str:
    d = _const(backend, delim)
    if isinstance(d, tuple) and len(d) == 1:
        d = d[0]
    if not isinstance(d, str):
        _refuse(backend, name, "the delimiter must be one literal text (several delimiters, "
                "the longest winning at each position, have no native split)")
    return d


def _flag(v: Any) -> bool | None:
    """An Excel 0/1 flag literal: its truth, or None when it is neither (#VALUE!)."""
    if v is None or v is _NOT or isinstance(v, (str, tuple)):
        return None
    if v == 0:
        return False
    if v == 1:
        return True
    return None


def _literal_flag(backend: str, name: str, arg: Any, what: str) -> bool | None:
    v = _const(backend, arg)
    if v is _NOT:
        _refuse(backend, name, f"{what} must be a literal")
    return _flag(v)


def _caseless(text: str) -> bool:
    """No character of ``text`` takes part in a lower-case mapping (so ignoring case finds
    exactly what matching case finds)."""
    src, dst = case_table("lower")
    involved = set(src) | set(dst)
    return not any(ch in involved for ch in text)


def _has_border(d: str) -> bool:
    """Some proper prefix of d is also a suffix: occurrences may overlap, so counting from
    the end can find other occurrences than counting from the start."""
    return any(d[:i] == d[-i:] for i in range(1, len(d)))


class _Span:
    """Where TEXTBEFORE/TEXTAFTER cut: start and end (characters) and whether found."""

    def __init__(self, start: Any, end: Any, found: Any) -> None:
        self.start, self.end, self.found = start, end, found


def _before_after_plan(backend: str, name: str, args: Sequence[Any]) -> Any:
    folded = _fold(backend, name, args)
    if folded is not _NOT:
        return _Folded(folded)
    text, delim, inst, mode, end = args[:5]
    d = _one_delimiter(backend, name, delim)
    k = _const(backend, inst)
    if k is _NOT or k is None:
        _refuse(backend, name, "instance_num must be a literal")
    ignore_case = _literal_flag(backend, name, mode, "match_mode")
    match_end = _literal_flag(backend, name, end, "match_end")
    k = _int(k)
    if ignore_case is None or match_end is None or k == 0:
        return "bad"  # #VALUE! for every non-empty text
    if ignore_case and not _caseless(d):
        from ._textsearch import lower1
        d = lower1(d)
    else:
        ignore_case = False
    if k < 0 and d and _has_border(d):
        _refuse(backend, name, "a negative instance_num with a delimiter whose occurrences can "
                "overlap (counting from the end would find others)")
    return d, k, ignore_case, match_end


def _pl_span(text: Any, d: str, k: int, ignore_case: bool, match_end: bool) -> _Span:
    length = text.str.len_chars().cast(pl.Int64)
    if not d:
        at = pl.lit(0, dtype=pl.Int64) if k > 0 else length
        return _Span(at, at, pl.lit(True))
    hay = pl_case(text, "lower") if ignore_case else text
    parts = hay.str.split(d)
    count = parts.list.len().cast(pl.Int64) - 1
    if k > 0:
        j = pl.lit(k, dtype=pl.Int64)
        found = count >= k
        edge = count == k - 1  # match_end: the end of the text counts as one more
        edge_at = length
    else:
        j = count + k + 1
        found = j >= 1
        edge = count == -k - 1
        edge_at = pl.lit(0, dtype=pl.Int64)
    start = parts.list.slice(0, j.clip(lower_bound=0)).list.join(d).str.len_chars() \
        .cast(pl.Int64)
    end = start + len(d)
    if match_end:
        start = pl.when(found).then(start).when(edge).then(edge_at)
        end = pl.when(found).then(end).when(edge).then(edge_at)
        found = found | edge
    return _Span(start, end, found)


def _pl_before_after(name: str, args: Sequence[Any]) -> Any:
    plan = _before_after_plan("polars", name, args)
    if isinstance(plan, _Folded):
        return plan.result
    text = args[0]
    fallback = args[5] if len(args) > 5 else pl.lit(None, dtype=pl.Utf8)
    empty = text == ""
    if plan == "bad":
        return pl.when(empty).then(_pl_text("")), [(~empty, "#VALUE!")]
    d, k, ignore_case, match_end = plan
    span = _pl_span(text, d, k, ignore_case, match_end)
    cut = text.str.slice(0, span.start) if name == "TEXTBEFORE" else text.str.slice(span.end)
    too_far = text.str.len_chars() < abs(k)
    value = pl.when(empty).then(_pl_text("")).when(span.found).then(cut).otherwise(fallback)
    missing = ~empty & ~span.found & fallback.is_null()
    return value, [(~empty & too_far, "#VALUE!"), (missing, "#N/A")]


def polars_textbefore(*args: Any) -> Any:
    return _pl_before_after("TEXTBEFORE", args)


def polars_textafter(*args: Any) -> Any:
    return _pl_before_after("TEXTAFTER", args)


def _sql_span(text: Any, d: str, k: int, ignore_case: bool, match_end: bool) -> _Span:
    length = _length(text)
    if not d:
        at = L.number(0) if k > 0 else length
        return _Span(at, at.copy(), exp.Boolean(this=True))
    hay = sql_case(text, "lower") if ignore_case else text.copy()
    parts = _f("STRING_SPLIT", hay, L.string(d))
    count = _sub(exp.ArraySize(this=parts.copy()), L.number(1))
    if k > 0:
        j: Any = L.number(k)
        found = _ge(count, L.number(k))
        edge = _eq(count.copy(), L.number(k - 1))
        edge_at = length.copy()
    else:
        j = _add(count.copy(), L.number(k + 1))
        found = _ge(j.copy(), L.number(1))
        edge = _eq(count.copy(), L.number(-k - 1))
        edge_at = L.number(0)
    head = _f("LIST_SLICE", parts.copy(), L.number(1), _f("GREATEST", j, L.number(0)))
    start = _length(_f("ARRAY_TO_STRING", head, L.string(d)))
    end = _add(start.copy(), L.number(len(d)))
    if match_end:
        start = _case([(found.copy(), start), (edge.copy(), edge_at.copy())])
        end = _case([(found.copy(), end), (edge.copy(), edge_at.copy())])
        found = exp.or_(found, edge)
    return _Span(start, end, found)


def _sql_before_after(name: str, args: Sequence[Any]) -> Any:
    plan = _before_after_plan("sql", name, args)
    if isinstance(plan, _Folded):
        return plan.result
    text = args[0]
    fallback = args[5] if len(args) > 5 else exp.Null()
    empty = _eq(text, L.string(""))
    if plan == "bad":
        return _case([(empty, L.string(""))]), [
            (exp.Not(this=exp.Paren(this=empty.copy())), "#VALUE!")]
    d, k, ignore_case, match_end = plan
    span = _sql_span(text, d, k, ignore_case, match_end)
    if name == "TEXTBEFORE":
        cut = _substr(text, L.number(1), span.start)
    else:
        cut = _substr(text, _add(span.end, L.number(1)))
    too_far = _lt(_length(text), L.number(abs(k)))
    value = _case([(empty.copy(), L.string("")), (span.found.copy(), cut)], fallback.copy())
    not_empty = exp.Not(this=exp.Paren(this=empty.copy()))
    missing = exp.and_(not_empty.copy(), exp.Not(this=exp.Paren(this=span.found.copy())),
                       exp.Is(this=fallback.copy(), expression=exp.Null()))
    return value, [(exp.and_(not_empty, too_far), "#VALUE!"), (missing, "#N/A")]


def sql_textbefore(*args: Any) -> Any:
    return _sql_before_after("TEXTBEFORE", args)


def sql_textafter(*args: Any) -> Any:
    return _sql_before_after("TEXTAFTER", args)


def _split_plan(backend: str, args: Sequence[Any]) -> Any:
    folded = _fold(backend, "TEXTSPLIT", args)
    if folded is not _NOT:
        return _Folded(folded)
    text, delim, row, ignore_empty, mode = args
    r = _const(backend, row)
    if r is _NOT:
        _refuse(backend, "TEXTSPLIT", "row_delimiter must be a literal (or left out)")
    if r:
        return "bad"
    d = _const(backend, delim)
    if isinstance(d, tuple) and len(d) == 1:
        d = d[0]
    if d == "" or d == ():
        return "bad"
    d = _one_delimiter(backend, "TEXTSPLIT", delim if not isinstance(d, str) else delim)
    if isinstance(_const(backend, delim), tuple):
        d = _const(backend, delim)[0]
    ignore_case = _literal_flag(backend, "TEXTSPLIT", mode, "match_mode")
    if ignore_case is None:
        return "bad"
    if ignore_case and not _caseless(d):
        _refuse(backend, "TEXTSPLIT", "match_mode 1 with a delimiter that has cased letters (the "
                "pieces would have to be cut from the text by positions found in its lower case)")
    return d


def polars_textsplit(text: Any, delim: Any, row: Any, ignore_empty: Any, mode: Any) -> Any:
    plan = _split_plan("polars", [text, delim, row, ignore_empty, mode])
    if isinstance(plan, _Folded):
        return plan.result
    if isinstance(plan, str) and plan == "bad":
        return pl.lit(None, dtype=pl.List(pl.Utf8)), [(pl.lit(True), "#VALUE!")]
    if not isinstance(plan, str):
        return plan
    parts = text.str.split(plan)
    kept = parts.list.eval(pl.element().filter(pl.element() != ""))
    return pl.when(ignore_empty).then(kept).otherwise(parts)


def sql_textsplit(text: Any, delim: Any, row: Any, ignore_empty: Any, mode: Any) -> Any:
    plan = _split_plan("sql", [text, delim, row, ignore_empty, mode])
    if isinstance(plan, _Folded):
        return plan.result
    if isinstance(plan, str) and plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    if not isinstance(plan, str):
        return plan
    parts = _f("STRING_SPLIT", text.copy(), L.string(plan))
    x = exp.column("_x")
    kept = _f("LIST_FILTER", parts.copy(), exp.Lambda(
        this=exp.NEQ(this=x, expression=L.string("")), expressions=[exp.to_identifier("_x")]))
    return _case([(ignore_empty.copy(), kept)], parts)


# ==================================================================== regular expressions


class _Unsafe(Exception):
    """The pattern leaves the subset both engines read alike."""


_PERL = {"d": [(0x30, 0x39)],
         "w": [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
         "s": [(0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)]}  # RE2's ASCII \d \w \s
_CONTROL_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


class _Regex:
    """A literal RE2 pattern re-rendered for Rust ``regex`` and RE2 alike, with its number of
    capture groups and the least length of a match (0: it can match an empty text)."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.i = 0
        self.groups = 0
        self.ascii = source.isascii()
        rendered, self.minlen = self._alt()
        if self.i != len(source):
            raise _Unsafe("unbalanced parenthesis")
        self.rendered = rendered

    def _peek(self) -> str:
        return self.src[self.i] if self.i < len(self.src) else ""

    def _next(self) -> str:
        ch = self._peek()
        if not ch:
            raise _Unsafe("the pattern ends too early")
        self.i += 1
        return ch

    def _alt(self) -> tuple[str, int]:
        branches = [self._concat()]
        while self._peek() == "|":
            self.i += 1
            branches.append(self._concat())
        return "|".join(b for b, _ in branches), min(n for _, n in branches)

    def _concat(self) -> tuple[str, int]:
        out, least = [], 0
        while self._peek() not in ("", "|", ")"):
            piece, n = self._repeat()
            out.append(piece)
            least += n
        return "".join(out), least

    def _repeat(self) -> tuple[str, int]:
        atom, n, quantifiable = self._atom()
        ch = self._peek()
        if ch not in ("*", "+", "?", "{"):
            return atom, n
        if not quantifiable:
            raise _Unsafe("a repeated anchor")
        self.i += 1
        if ch == "*":
            q, low = "*", 0
        elif ch == "+":
            q, low = "+", 1
        elif ch == "?":
            q, low = "?", 0
        else:
            end = self.src.find("}", self.i)
            body = self.src[self.i:end] if end >= 0 else ""
            lo, sep, hi = body.partition(",")
            if not lo.isdigit() or (hi and not hi.isdigit()) or not lo.isascii() \
                    or not hi.isascii():
                raise _Unsafe("a brace that is not a counted repetition")
            low = int(lo)
            if low > 1000 or (hi and (int(hi) > 1000 or int(hi) < low)):
                raise _Unsafe("a repetition count over 1000")
            q = "{" + body + "}"
            self.i = end + 1
        if self._peek() == "?":
            self.i += 1
            q += "?"
        if self._peek() in ("*", "+", "?", "{"):
            raise _Unsafe("a repeated repetition")
        return f"(?:{atom}){q}", n * low

    def _atom(self) -> tuple[str, int, bool]:
        ch = self._next()
        if ch == "(":
            if self._peek() == "?":
                if self.src[self.i:self.i + 2] != "?:":
                    raise _Unsafe("group flags and named groups")
                self.i += 2
                inner, n = self._alt()
                opening = "(?:"
            else:
                self.groups += 1
                inner, n = self._alt()
                opening = "("
            if self._next() != ")":
                raise _Unsafe("unbalanced parenthesis")
            return f"{opening}{inner})", n, True
        if ch == "[":
            return self._class(), 1, True
        if ch == ".":
            return ".", 1, True
        if ch in ("^", "$"):
            return ch, 0, False
        if ch == "\\":
            return self._escape()
        if ch in ("*", "+", "?", "{", "}", ")", "]"):
            raise _Unsafe(f"a bare {ch!r}")
        return _esc(ch), 1, True

    def _escape(self) -> tuple[str, int, bool]:
        ch = self._next()
        if ch in _PERL:
            return _class(_PERL[ch]), 1, True
        if ch.lower() in _PERL:
            return _class(_PERL[ch.lower()], negate=True), 1, True
        if ch in ("A", "z"):
            return "\\" + ch, 0, False
        char = self._escaped_char(ch)
        return _esc(char), 1, True

    def _escaped_char(self, ch: str) -> str:
        if ch in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[ch]
        if ch == "x":
            if self._peek() == "{":
                end = self.src.find("}", self.i)
                digits = self.src[self.i + 1:end] if end > 0 else ""
                self.i = end + 1
            else:
                digits = self.src[self.i:self.i + 2]
                self.i += 2
            try:
                value = int(digits, 16)
                if not digits.isascii() or 0xD800 <= value <= 0xDFFF:
                    raise ValueError
                return chr(value)
            except ValueError:
                raise _Unsafe("a malformed hexadecimal escape") from None
        if ch.isascii() and not ch.isalnum():
            return ch  # an escaped punctuation character is itself
        raise _Unsafe(f"the escape \\{ch}")

    def _class(self) -> str:
        negate = self._peek() == "^"
        if negate:
            self.i += 1
        items: list[tuple[int, int]] = []
        first = True
        while True:
            ch = self._next()
            if ch == "]" and not first:
                break
            first = False
            if ch in ("[", "]", "&", "~") or (ch == "-" and self._peek() != "]" and items
                                                and False):
                raise _Unsafe(f"{ch!r} inside a class")
            if ch == "\\":
                esc = self._next()
                if esc in _PERL:
                    items.extend(_PERL[esc])
                    continue
                if esc.lower() in _PERL or esc in ("A", "z", "b", "B"):
                    raise _Unsafe(f"\\{esc} inside a class")
                low = self._escaped_char(esc)
            elif ch == "-":
                raise _Unsafe("a bare '-' inside a class")
            else:
                low = ch
            if self._peek() == "-" and self.src[self.i + 1:self.i + 2] not in ("]", ""):
                self.i += 1
                hi = self._next()
                if hi == "\\":
                    hi = self._escaped_char(self._next())
                elif hi in ("[", "]", "&", "~", "-"):
                    raise _Unsafe(f"{hi!r} ending a range")
                if ord(hi) < ord(low):
                    raise _Unsafe("a reversed range")
                items.append((ord(low), ord(hi)))
            else:
                items.append((ord(low), ord(low)))
        return _class(items, negate)


def _regex_plan(backend: str, name: str, pattern: Any, case_flag: Any, *,
                nonempty: bool = False) -> Any:
    """(rendered pattern, _Regex, RE2 pattern, case-sensitive) for a literal pattern; or "bad"
    when the scalar engine answers #VALUE! on every row (a flag that is not 0/1, a pattern
    RE2 rejects)."""
    from ._textsearch import compile_regex, options

    src = _const(backend, pattern)
    if not isinstance(src, str):
        _refuse(backend, name, "the pattern must be a literal (only a checked common subset of "
                "RE2 and the engine's regex syntax is translated)")
    ignore_case = _literal_flag(backend, name, case_flag, "case_sensitivity")
    if ignore_case is None:
        return "bad"
    valid = []
    for latin1 in ([True, False] if src.isascii() else [False]):
        try:
            compile_regex(src.encode("ascii") if latin1 else src,
                          options(not ignore_case, False, latin1), name)
            valid.append(True)
        except XLError:
            valid.append(False)
    if not any(valid):
        return "bad"
    if not all(valid):
        _refuse(backend, name, "RE2 reads this pattern differently on ASCII and other texts")
    _check_regex_work(backend, name, src, not ignore_case, dot_nl=False)
    try:
        parsed = _Regex(src)
    except _Unsafe as exc:
        _refuse(backend, name, f"the pattern uses {exc.args[0]}, outside the subset RE2 and the "
                "engine's regex read alike")
    if ignore_case and not parsed.ascii:
        _refuse(backend, name, "ignoring case with non-ASCII pattern characters (the engines' "
                "Unicode case-folding tables differ)")
    if nonempty and parsed.minlen == 0:
        _refuse(backend, name, "the pattern can match an empty text (engines differ on where "
                "the next match may start)")
    rendered = ("(?i)" if ignore_case else "") + parsed.rendered
    if backend == "polars":
        try:
            pl.select(pl.lit("").str.contains(rendered))
        except Exception:
            _refuse(backend, name, "polars' regex engine rejects the translated pattern")
    return rendered, parsed


def polars_regextest(text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan("polars", "REGEXTEST", pattern, case_flag)
    if plan == "bad":
        return pl.lit(None, dtype=pl.Boolean), [(pl.lit(True), "#VALUE!")]
    return text.str.contains(plan[0])


def sql_regextest(text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan("sql", "REGEXTEST", pattern, case_flag)
    if plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    return exp.RegexpLike(this=text.copy(), expression=L.string(plan[0]))


def polars_regexextract(text: Any, pattern: Any, mode: Any, case_flag: Any) -> Any:
    bad_mode = mode != 0
    plan = _regex_plan("polars", "REGEXEXTRACT", pattern, case_flag)
    if plan == "bad":
        return pl.lit(None, dtype=pl.Utf8), [(pl.lit(True), "#VALUE!")]
    value = text.str.extract(plan[0], 0)
    return value, [(bad_mode, "#VALUE!"), (value.is_null(), "#N/A")]


def sql_regexextract(text: Any, pattern: Any, mode: Any, case_flag: Any) -> Any:
    bad_mode = exp.NEQ(this=_p(mode), expression=L.number(0))
    plan = _regex_plan("sql", "REGEXEXTRACT", pattern, case_flag)
    if plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    found = exp.RegexpLike(this=text.copy(), expression=L.string(plan[0]))
    value = exp.RegexpExtract(this=text.copy(), expression=L.string(plan[0]), group=L.number(0))
    return _case([(found, value)]), [(bad_mode, "#VALUE!"),
                                     (exp.Not(this=exp.Paren(this=found.copy())), "#N/A")]


def polars_regexextractall(text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan("polars", "REGEXEXTRACTALL", pattern, case_flag, nonempty=True)
    if plan == "bad":
        return pl.lit(None, dtype=pl.List(pl.Utf8)), [(pl.lit(True), "#VALUE!")]
    return text.str.extract_all(plan[0])


def sql_regexextractall(text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan("sql", "REGEXEXTRACTALL", pattern, case_flag, nonempty=True)
    if plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    return _f("REGEXP_EXTRACT_ALL", text.copy(), L.string(plan[0]))


def polars_regexgroups(text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan("polars", "REGEXGROUPS", pattern, case_flag)
    if plan == "bad":
        return pl.lit(None, dtype=pl.List(pl.Utf8)), [(pl.lit(True), "#VALUE!")]
    rendered, parsed = plan
    found = text.str.contains(rendered)
    if parsed.groups == 0:
        value = pl.when(found).then(pl.lit(pl.Series([[]], dtype=pl.List(pl.Utf8))))
    else:
        groups = text.str.extract_groups(rendered)
        value = pl.when(found).then(pl.concat_list(
            [groups.struct.field(str(g)).fill_null("") for g in range(1, parsed.groups + 1)]))
    return value, [(~found, "#N/A")]


def sql_regexgroups(text: Any, pattern: Any, case_flag: Any) -> Any:
    plan = _regex_plan("sql", "REGEXGROUPS", pattern, case_flag)
    if plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    rendered, parsed = plan
    found = exp.RegexpLike(this=text.copy(), expression=L.string(rendered))
    items = [exp.RegexpExtract(this=text.copy(), expression=L.string(rendered),
                               group=L.number(g)) for g in range(1, parsed.groups + 1)]
    value = exp.cast(exp.Array(expressions=items), exp.DataType.build("VARCHAR[]"))
    return _case([(found, value)]), [(exp.Not(this=exp.Paren(this=found.copy())), "#N/A")]


def _replace_template(backend: str, pattern: str, replacement: Any, ignore_case: bool,
                      parsed: _Regex) -> list[str | int] | None:
    """The replacement's pieces (texts and group numbers), None when the scalar engine says
    #VALUE! (a group the pattern lacks)."""
    from ._textsearch import Regex, replacement_template

    rep = _const(backend, replacement)
    if not isinstance(rep, str):
        _refuse(backend, "REGEXREPLACE", "the replacement must be a literal")
    try:
        regex = Regex(pattern, "", "REGEXREPLACE", case_sensitive=not ignore_case)
        return replacement_template(rep, regex, "REGEXREPLACE")
    except XLError:
        return None


def _regexreplace_plan(backend: str, args: Sequence[Any]) -> Any:
    folded = _fold(backend, "REGEXREPLACE", args)
    if folded is not _NOT:
        return _Folded(folded)
    text, pattern, replacement, occurrence, case_flag = args
    plan = _regex_plan(backend, "REGEXREPLACE", pattern, case_flag, nonempty=True)
    if plan == "bad":
        return "bad"
    rendered, parsed = plan
    nth = _const(backend, occurrence)
    if nth is _NOT or nth is None or _int(nth) not in (0, 1):
        _refuse(backend, "REGEXREPLACE", "occurrence must be a literal 0 (all) or 1 (the first)")
    ignore_case = rendered.startswith("(?i)")
    template = _replace_template(backend, _const(backend, pattern), replacement, ignore_case,
                                 parsed)
    if template is None:
        return "bad"
    if any(isinstance(part, int) for part in template):
        _refuse(backend, "REGEXREPLACE", "a replacement that inserts groups can grow the text: "
                + _grows())
    literal = "".join(part for part in template if isinstance(part, str))
    if len(literal) > parsed.minlen:
        _refuse(backend, "REGEXREPLACE", "the replacement can be longer than a match: "
                + _grows())
    return rendered, literal, _int(nth)


def polars_regexreplace(*args: Any) -> Any:
    plan = _regexreplace_plan("polars", args)
    if isinstance(plan, _Folded):
        return plan.result
    if isinstance(plan, str) and plan == "bad":
        return pl.lit(None, dtype=pl.Utf8), [(pl.lit(True), "#VALUE!")]
    if not isinstance(plan, tuple) or len(plan) != 3:
        return plan
    rendered, literal, nth = plan
    value = literal.replace("$", "$$")
    if nth == 0:
        return args[0].str.replace_all(rendered, value)
    return args[0].str.replace(rendered, value, n=1)


def sql_regexreplace(*args: Any) -> Any:
    plan = _regexreplace_plan("sql", args)
    if isinstance(plan, _Folded):
        return plan.result
    if isinstance(plan, str) and plan == "bad":
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    if not isinstance(plan, tuple) or len(plan) != 3:
        return plan
    rendered, literal, nth = plan
    value = L.string(literal.replace("\\", "\\\\"))
    if nth == 0:
        return exp.RegexpReplace(this=args[0].copy(), expression=L.string(rendered),
                                 replacement=value, modifiers=L.string("g"))
    # the first match only (sqlglot would add DuckDB's 'g' to a RegexpReplace node)
    return exp.Anonymous(this="REGEXP_REPLACE", expressions=[
        args[0].copy(), L.string(rendered), value])


# ========================================================================== TEXT


class _Format:
    """A number format TEXT reproduces natively: ``0``, ``#,##0``, with 1-9 decimals and an
    optional ``%`` (``0.00``, ``#,##0.00``, ``0.0%``...), or ``General``."""

    def __init__(self, fmt: str) -> None:
        import re

        self.general = fmt.lower() == "general"
        m = re.fullmatch(r"(#,##)?0(?:\.(0{1,9}))?(%)?", fmt)
        if not self.general and not m:
            raise ValueError(fmt)
        self.grouping = bool(m and m.group(1))
        self.decimals = len(m.group(2) or "") if m else 0
        self.percent = bool(m and m.group(3))


def _format_plan(backend: str, args: Sequence[Any], sig: int = 0) -> Any:
    folded = _fold(backend, "TEXT", args, sig=sig)
    if folded is not _NOT:
        return folded
    fmt = _const(backend, args[1])
    if not isinstance(fmt, str):
        _refuse(backend, "TEXT", "format_text must be a literal")
    try:
        return _Format(fmt)
    except ValueError:
        _refuse(backend, "TEXT", f"the format {fmt!r} is not one of those reproduced natively "
                "(0, #,##0, with up to 9 decimals, optionally %; General)")


_ZEROS = "0" * 400


def _pl_scaled_digits(value: Any, f: _Format) -> tuple[Any, Any]:
    """(integer digits, decimals) of |value|, rounded as the scalar engine rounds: to 15
    significant digits (half up), times 100 for %, then to the format's decimals (half up),
    all on the value's exact decimal text (a float's shortest repr)."""
    text = value.abs().cast(pl.Utf8)
    parts = text.str.split_exact("e", 1)
    shift = parts.struct.field("field_1").str.strip_chars_start("+") \
        .cast(pl.Int64, strict=False).fill_null(0)
    halves = parts.struct.field("field_0").str.split_exact(".", 1)
    whole = halves.struct.field("field_0")
    digits = whole + halves.struct.field("field_1").fill_null("")
    sig = digits.str.strip_chars_start("0")
    # |value| = 0.<sig> x 10^point
    point = whole.str.len_chars().cast(pl.Int64) + shift \
        - (digits.str.len_chars().cast(pl.Int64) - sig.str.len_chars().cast(pl.Int64))
    head = sig.str.slice(0, 15).str.pad_end(15, "0").cast(pl.Int64, strict=False).fill_null(0)
    mant = head + (sig.str.slice(15, 1) >= pl.lit("5")).cast(pl.Int64)
    carry = mant >= 10 ** 15
    mant = pl.when(carry).then(mant // 10).otherwise(mant)
    point = point + carry.cast(pl.Int64) + (2 if f.percent else 0)
    # value x 10^decimals = mant x 10^s
    s = point - 15 + f.decimals
    up = s.clip(lower_bound=0)
    big = mant.cast(pl.Utf8) + pl.lit(_ZEROS).str.slice(0, up)
    d = (-s).clip(1, 17)
    kept = mant // pl.lit(10, dtype=pl.Int64).pow(d)
    first_dropped = (mant // pl.lit(10, dtype=pl.Int64).pow(d - 1)) % 10
    small = (kept + (first_dropped >= 5).cast(pl.Int64)).cast(pl.Utf8)
    scaled = pl.when(sig.str.len_chars() == 0).then(pl.lit("0")) \
        .when(s >= 0).then(big).otherwise(small)
    if not f.decimals:
        return scaled.str.strip_chars_start("0"), None
    padded = scaled.str.pad_start(f.decimals + 1, "0")
    n = padded.str.len_chars().cast(pl.Int64)
    return (padded.str.slice(0, n - f.decimals).str.strip_chars_start("0"),
            padded.str.slice(n - f.decimals))


def _pl_group(int_digits: Any) -> Any:
    reversed_ = int_digits.str.reverse()  # ASCII digits: graphemes are characters here
    return reversed_.str.replace_all("([0-9]{3})", "${1},").str.strip_chars_end(",") \
        .str.reverse()


def polars_text(value: Any, fmt: Any) -> Any:
    plan = _format_plan("polars", [value, fmt])
    if not isinstance(plan, _Format):
        return plan
    if plan.general:
        return _vp.general_text(value)
    int_digits, decimals = _pl_scaled_digits(value, plan)
    int_digits = pl.when(int_digits == "").then(pl.lit("0")).otherwise(int_digits)
    if plan.grouping:
        int_digits = _pl_group(int_digits)
    parts = [pl.when(value < 0).then(pl.lit("-")).otherwise(pl.lit("")), int_digits]
    if decimals is not None:
        parts += [pl.lit("."), decimals]
    if plan.percent:
        parts.append(pl.lit("%"))
    return pl.concat_str(parts)


def _sql_scaled_digits(value: Any, f: _Format,
                       finish: Callable[[Any, Any], Any]) -> Any:
    """`_pl_scaled_digits` in SQL (a DOUBLE's VARCHAR is its shortest repr, a DECIMAL's its
    own digits): ``finish(integer digits, decimals or None)`` builds the text; the steps
    bind their intermediate values once (`_let`)."""
    big_int = exp.DataType.build("BIGINT")
    varchar = exp.DataType.build("VARCHAR")
    text = exp.cast(exp.Abs(this=value.copy()), varchar)

    def on_text(t: Any) -> Any:
        mantissa = _f("SPLIT_PART", t.copy(), L.string("e"), L.number(1))
        exponent = _f("SPLIT_PART", t.copy(), L.string("e"), L.number(2))
        shift = _f("COALESCE", exp.TryCast(this=_f("LTRIM", exponent, L.string("+")),
                                           to=big_int), L.number(0))
        whole = _f("SPLIT_PART", mantissa.copy(), L.string("."), L.number(1))
        digits = _cat(whole.copy(), _f("SPLIT_PART", mantissa.copy(), L.string("."),
                                       L.number(2)))
        # |value| = 0.<sig> x 10^point
        point = _add(_length(whole), shift)
        return _let(digits, lambda d: _let(_f("LTRIM", d.copy(), L.string("0")),
                                           lambda sig: on_sig(d, sig, point)))

    def on_sig(d: Any, sig: Any, point: Any) -> Any:
        point = _sub(point, _sub(_length(d), _length(sig)))
        head = _f("COALESCE", exp.TryCast(this=_f("RPAD", _substr(sig, L.number(1), L.number(15)),
                                                  L.number(15), L.string("0")), to=big_int),
                  L.number(0))
        round_up = _case([(_ge(_substr(sig, L.number(16), L.number(1)), L.string("5")),
                           L.number(1))], L.number(0))
        empty = _eq(_length(sig), L.number(0))
        return _let(_add(head, round_up), lambda m0: on_mant(m0, point, empty))

    def on_mant(m0: Any, point: Any, empty: Any) -> Any:
        carry = _ge(m0.copy(), L.number(10 ** 15))
        mant = _case([(carry.copy(), exp.IntDiv(this=_p(m0.copy()), expression=L.number(10)))],
                     m0.copy())
        s = _add(_add(point, _case([(carry, L.number(1))], L.number(0))),
                 L.number(f.decimals - 15 + (2 if f.percent else 0)))
        return _let(mant, lambda m: _let(s, lambda sv: on_scale(m, sv, empty)))

    def on_scale(m: Any, sv: Any, empty: Any) -> Any:
        # value x 10^decimals = m x 10^sv
        big = _cat(exp.cast(m.copy(), varchar),
                   _substr(L.string(_ZEROS), L.number(1), _f("GREATEST", sv.copy(), L.number(0))))
        d = _f("LEAST", _f("GREATEST", exp.Neg(this=_p(sv.copy())), L.number(1)), L.number(17))
        scale = exp.cast(_f("POW", L.number(10), d.copy()), big_int)
        scale1 = exp.cast(_f("POW", L.number(10), _sub(d.copy(), L.number(1))), big_int)
        kept = exp.IntDiv(this=_p(m.copy()), expression=scale)
        dropped = exp.Mod(this=_p(exp.IntDiv(this=_p(m.copy()), expression=scale1)),
                          expression=L.number(10))
        small = exp.cast(_add(kept, _case([(_ge(dropped, L.number(5)), L.number(1))],
                                           L.number(0))), varchar)
        scaled = _case([(empty, L.string("0")), (_ge(sv.copy(), L.number(0)), big)], small)
        if not f.decimals:
            return finish(_f("LTRIM", scaled, L.string("0")), None)
        return _let(scaled, on_scaled)

    def on_scaled(scaled: Any) -> Any:
        width = exp.cast(_f("GREATEST", _length(scaled), L.number(f.decimals + 1)),
                         exp.DataType.build("INT"))
        return _let(_f("LPAD", scaled.copy(), width, L.string("0")), on_padded)

    def on_padded(padded: Any) -> Any:
        n = _length(padded)
        return finish(_f("LTRIM", _substr(padded, L.number(1), _sub(n, L.number(f.decimals))),
                         L.string("0")),
                      _f("RIGHT", padded.copy(), L.number(f.decimals)))

    return _let(text, on_text)


def sql_text(value: Any, fmt: Any) -> Any:
    plan = _format_plan("sql", [value, fmt])
    if not isinstance(plan, _Format):
        return plan
    if plan.general:
        _refuse("sql", "TEXT", "the General format has no portable SQL form")

    def finish(int_digits: Any, decimals: Any) -> Any:
        def build(digits: Any) -> Any:
            shown = _case([(_eq(digits, L.string("")), L.string("0"))], digits.copy())
            if plan.grouping:
                grouped = exp.RegexpReplace(this=_f("REVERSE", shown), expression=L.string(
                    "([0-9]{3})"), replacement=L.string("\\1,"), modifiers=L.string("g"))
                shown = _f("REVERSE", _f("RTRIM", grouped, L.string(",")))
            parts = [shown]
            if decimals is not None:
                parts += [L.string("."), decimals]
            if plan.percent:
                parts.append(L.string("%"))
            return _cat(*parts)
        return _let(int_digits, build)

    sign = _case([(_lt(value, L.number(0)), L.string("-"))], L.string(""))
    return _cat(sign, _sql_scaled_digits(value, plan, finish))


def _boolean_plan(backend: str, args: Sequence[Any]) -> Any:
    return _format_plan(backend, args, sig=4)


def polars_text_boolean(value: Any, fmt: Any) -> Any:
    """A logical through a number format (no text section) shows as TRUE or FALSE."""
    plan = _boolean_plan("polars", [value, fmt])
    if not isinstance(plan, _Format):
        return plan
    return pl.when(value).then(pl.lit("TRUE")).otherwise(pl.lit("FALSE"))


def sql_text_boolean(value: Any, fmt: Any) -> Any:
    plan = _boolean_plan("sql", [value, fmt])
    if not isinstance(plan, _Format):
        return plan
    return _case([(value.copy(), L.string("TRUE"))], L.string("FALSE"))


_TEXT_OF_TEXT = ("a text that reads as a number is formatted as that number (Excel's reading "
                 "of numbers in text has no exact native equivalent); literal arguments are "
                 "folded")


def polars_text_of_text(value: Any, fmt: Any) -> Any:
    return _folded_or("polars", "TEXT", [value, fmt], _TEXT_OF_TEXT, sig=5)


def sql_text_of_text(value: Any, fmt: Any) -> Any:
    return _folded_or("sql", "TEXT", [value, fmt], _TEXT_OF_TEXT, sig=5)
