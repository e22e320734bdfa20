"""Text forms of the case mapping and character-level functions: UPPER LOWER PROPER, LEN LEFT
RIGHT MID TRIM CLEAN EXACT STARTSWITH ENDSWITH CONTAINS, CHAR UNICHAR UNICODE CODE.

Contract: case maps one character to one character with Python's own tables (`case_table`),
as the scalar engine does, whatever the engine's Unicode version: the engine's own mapping
(polars ``to_uppercase``/``to_lowercase``/``to_titlecase``, SQL ``UPPER``/``LOWER``) on every
text without a character it maps differently (`casefix`, derived over every code point by the
tests), the one-to-one table only on the others; lengths and positions count code points.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

from sqlglot import exp

from ...sql.kit import dtype
from ...call import MISSING, FormCall
from ._base import (
    _CLAMP, L, _bind, _case, _cat, _eq, _f, _ge, _int, _length, _lt, _pl_int,
    _pl_number, _pl_text, _sql_int, _substr, pl,
)
from .casefix import FIX, literal_class, sql_fix


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


# ---------------------------------------------------------------------- case mapping


def _fix_pairs(kind: str, ranges: Iterable[tuple[int, int]]) -> tuple[str, str]:
    """(from, to) for TRANSLATE: the scalar engine's mapping of the characters of ``ranges``
    that it changes (most it keeps: the engines are the ones that change them)."""
    src, dst = [], []
    fn = str.upper if kind == "upper" else str.lower
    for a, b in ranges:
        for c in range(a, b + 1):
            mapped = fn(chr(c))
            if len(mapped) == 1 and mapped != chr(c):
                src.append(chr(c))
                dst.append(mapped)
    return "".join(src), "".join(dst)


def pl_case(e: Any, kind: str) -> Any:
    """Excel's UPPER/LOWER on polars: polars' own mapping, except on the texts holding a
    character it maps differently (`casefix.FIX`, checked over every code point by the tests),
    which are cut into those characters (mapped by our table, `_fix_pairs`) and runs without
    them (polars' mapping), and joined again (no table of every cased character: building
    one for ``replace_many`` costs more than the whole mapping). ASCII texts (byte length =
    character length, a constant-time test) are never searched."""
    fix = FIX[("polars", kind)]
    src, dst = _fix_pairs(kind, fix)
    cls = literal_class(fix)

    def native(x: Any) -> Any:
        return x.str.to_uppercase() if kind == "upper" else x.str.to_lowercase()

    wide = pl.when(e.str.len_bytes() != e.str.len_chars()).then(e)
    rare = pl.when(wide.str.contains(cls)).then(e)
    w = pl.element()
    one = w.str.replace_many(list(src), list(dst)) if src else w
    piece = pl.when(w.str.contains(cls)).then(one).otherwise(native(w))
    pieces = rare.str.extract_all(f"{literal_class(fix, negate=True)}+|(?s:.)")
    return pl.coalesce(pieces.list.eval(piece).list.join(""), native(e))


def sql_case(e: Any, kind: str, guard: bool = True) -> Any:
    """Excel's UPPER/LOWER in SQL: the engine's own UPPER/LOWER on the texts without a
    character some engine maps differently (`casefix.sql_fix`), the pass (`_sql_case_pass`)
    on the others, the text bound once (`_bind`). The guard writes the fix set's class a
    second time: without it every text takes the pass, which on DuckDB is about 8x slower on
    non-ASCII texts (an ASCII-only guard, byte length = length, leaves every accented text to
    the pass). ``guard=False`` inside a form's own lambda (whose parameter no query-level
    binding can read): the pass alone, the text written once."""
    if not guard:
        return _sql_case_pass(e, kind)
    fn = "UPPER" if kind == "upper" else "LOWER"
    cls = literal_class(_guard_ranges(kind))

    def build(v: Any) -> Any:
        return _case([(exp.RegexpLike(this=v.copy(), expression=L.string(cls)),
                       _sql_case_pass(v, kind))], _f(fn, v.copy()))

    return _bind(e, build)


#: The guard's class joins fix ranges at most this many code points apart (the pass itself
#: keeps the exact set): a text with a character between them takes the pass, which maps it
#: exactly too, only slower. The gaps so joined are within polytonic Greek (U+1F50-U+1FFC),
#: Latin Extended-D (U+A7CB-U+A7DC) and the ligatures (U+FB00-U+FB17, the gap unassigned):
#: rare texts; the guard is about half as long (65 -> 32 characters for UPPER).
_GUARD_GAP = 16


@lru_cache(maxsize=None)
def _guard_ranges(kind: str) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for a, b in sql_fix(kind):
        if out and a - out[-1][1] <= _GUARD_GAP:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return tuple(out)


def _sql_case_pass(e: Any, kind: str) -> Any:
    """One regular-expression pass: the text behind a sentinel character is cut into pieces
    that each start with one character (the sentinel, or one some engine maps differently,
    `casefix.sql_fix`) followed by the longest run without such characters; the first
    character of a piece is mapped by the scalar engine's table (`_fix_pairs`, TRANSLATE),
    the run by the engine's own UPPER/LOWER; the pieces are joined and the sentinel dropped.
    The fix set's class is written once, the text once."""
    fix = sql_fix(kind)
    fn = "UPPER" if kind == "upper" else "LOWER"
    src, dst = _fix_pairs(kind, fix)
    w = exp.column("_c")
    head = _f("LEFT", w.copy(), L.number(1))
    if src:
        head = _f("TRANSLATE", head, L.string(src), L.string(dst))
    piece = _cat(head, _f(fn, _substr(w, L.number(2))))
    # every piece starts with exactly one character: RE2's leftmost-first match of "(?s:.)"
    # takes the sentinel or a fix character, "[^...]*" the longest run after it
    pieces = _f("REGEXP_EXTRACT_ALL", _cat(L.string(" "), e.copy()),
                L.string(f"(?s:.){literal_class(fix, negate=True)}*"))
    joined = _f("ARRAY_TO_STRING", _f("LIST_TRANSFORM", pieces, exp.Lambda(
        this=piece, expressions=[exp.to_identifier("_c")])), L.string(""))
    return _substr(joined, L.number(2))


def polars_upper(call: FormCall, text: Any) -> Any:
    return pl_case(text, "upper")


def polars_lower(call: FormCall, text: Any) -> Any:
    return pl_case(text, "lower")


def sql_upper(call: FormCall, text: Any) -> Any:
    return sql_case(text, "upper")


def sql_lower(call: FormCall, text: Any) -> Any:
    return sql_case(text, "lower")


def polars_proper(call: FormCall, text: Any) -> Any:
    """polars' ``str.to_titlecase``, except on the texts holding a character where its rule
    differs from Excel's (`casefix`; ASCII texts never do): those take `_polars_proper_runs`."""
    wide = pl.when(text.str.len_bytes() != text.str.len_chars()).then(text)
    rare = pl.when(wide.str.contains(literal_class(FIX[("polars", "proper")]))).then(text)
    return pl.coalesce(_polars_proper_runs(rare), text.str.to_titlecase())


def _polars_proper_runs(text: Any) -> Any:
    """Letter runs get their first letter upper, the rest lower; other runs stay."""
    letters = letter_class()
    runs = text.str.extract_all(f"{letters}+|{letters[0]}^{letters[1:]}+")
    w = pl.element()
    head = pl_case(w.str.slice(0, 1), "upper")
    rest = pl_case(w.str.slice(1), "lower")
    fixed = pl.when(w.str.contains(f"^{letters}")).then(head + rest).otherwise(w)
    return pl.when(text == "").then(_pl_text("")).otherwise(
        runs.list.eval(fixed).list.join(""))


def sql_proper(call: FormCall, text: Any) -> Any:
    """Excel's PROPER in SQL, the letter class written once: the text behind a sentinel is cut
    into pieces of one character (the sentinel, or the non-letter after a run of letters)
    followed by the longest run of letters; the run's first letter goes through UPPER, the
    rest through LOWER (`sql_case`, the pass alone: inside this form's own lambda), the
    first character stays; the pieces are joined and the sentinel dropped."""
    w = exp.column("_w")
    fixed = _cat(_f("LEFT", w.copy(), L.number(1)),
                 sql_case(_substr(w, L.number(2), L.number(1)), "upper", guard=False),
                 sql_case(_substr(w, L.number(3)), "lower", guard=False))
    pieces = _f("REGEXP_EXTRACT_ALL", _cat(L.string(" "), text.copy()),
                L.string(f"(?s:.){sql_letter_class()}*"))
    mapped = _f("LIST_TRANSFORM", pieces, exp.Lambda(this=fixed,
                                                     expressions=[exp.to_identifier("_w")]))
    return _substr(_f("ARRAY_TO_STRING", mapped, L.string("")), L.number(2))


@lru_cache(maxsize=None)
def sql_letter_class() -> str:
    """`letter_class` with the letters written as themselves (no letter is a class
    metacharacter; RE2 reads UTF-8 literals): about a seventh of its length."""
    body = []
    for a, b in _ranges(ord(c) for c in _code_points() if c.isalpha()):
        body.append(chr(a) if a == b else f"{chr(a)}-{chr(b)}" if b > a + 1
                    else chr(a) + chr(b))
    return "[" + "".join(body) + "]"


# ------------------------------------------------------------------------- simple ones


def polars_len(call: FormCall, text: Any) -> Any:
    return _pl_number(text.str.len_chars())


def sql_len(call: FormCall, text: Any) -> Any:
    return _length(text)


def _count(call: FormCall, i: int, least: int = 0) -> int | None:
    """Argument ``i`` when it is a constant count (or position) of at least ``least``
    (`FormCall.const`, the one constant reader), truncated as Excel does and clamped like
    `_pl_int`, so its error test and clamping are decided here; else None (not a constant,
    or one the general form answers with its error)."""
    v = call.const(i)
    if v is MISSING or v is None or isinstance(v, (bool, str, tuple)):
        return None
    try:
        return min(_CLAMP, _int(v)) if v >= least else None
    except (ArithmeticError, ValueError, TypeError):
        return None


def polars_left(call: FormCall, text: Any, n: Any) -> Any:
    k = _count(call, 1)
    if k is not None:
        return text.str.head(k)
    return text.str.head(_pl_int(n.clip(lower_bound=0))), [(n < 0, "#VALUE!")]


def sql_left(call: FormCall, text: Any, n: Any) -> Any:
    k = _count(call, 1)
    if k is not None:
        return _f("LEFT", text.copy(), L.number(k))
    return _substr(text, L.number(1), _sql_int(n)), [(_lt(n, L.number(0)), "#VALUE!")]


def polars_right(call: FormCall, text: Any, n: Any) -> Any:
    k = _count(call, 1)
    if k is not None:
        return text.str.tail(k)
    return text.str.tail(_pl_int(n.clip(lower_bound=0))), [(n < 0, "#VALUE!")]


def sql_right(call: FormCall, text: Any, n: Any) -> Any:
    k = _count(call, 1)
    if k is not None:
        return _f("RIGHT", text.copy(), L.number(k))
    k_sql = _f("GREATEST", _sql_int(n), L.number(0))
    return _f("RIGHT", text.copy(), k_sql), [(_lt(n, L.number(0)), "#VALUE!")]


def polars_mid(call: FormCall, text: Any, start: Any, n: Any) -> Any:
    s0, k0 = _count(call, 1, 1), _count(call, 2)
    if s0 is not None and k0 is not None:
        return text.str.slice(s0 - 1, k0)
    s = _pl_int(start.clip(lower_bound=1))
    k = _pl_int(n.clip(lower_bound=0))
    return text.str.slice(s - 1, k), [(start < 1, "#VALUE!"), (n < 0, "#VALUE!")]


def sql_mid(call: FormCall, text: Any, start: Any, n: Any) -> Any:
    s0, k0 = _count(call, 1, 1), _count(call, 2)
    if s0 is not None and k0 is not None:
        return _substr(text, L.number(s0), L.number(k0))
    s = _f("GREATEST", _sql_int(start), L.number(1))
    k = _f("GREATEST", _sql_int(n), L.number(0))
    return _substr(text, s, k), [(_lt(start, L.number(1)), "#VALUE!"),
                                 (_lt(n, L.number(0)), "#VALUE!")]


def polars_trim(call: FormCall, text: Any) -> Any:
    return text.str.replace_all(" {2,}", " ").str.strip_chars(" ")


def sql_trim(call: FormCall, text: Any) -> Any:
    squeezed = exp.RegexpReplace(this=text.copy(), expression=L.string(" {2,}"),
                                 replacement=L.string(" "), modifiers=L.string("g"))
    return exp.Trim(this=squeezed, expression=L.string(" "), position="BOTH")


_CONTROL = r"[\x{0}-\x{1F}]"


def polars_clean(call: FormCall, text: Any) -> Any:
    return text.str.replace_all(_CONTROL, "")


def sql_clean(call: FormCall, text: Any) -> Any:
    return exp.RegexpReplace(this=text.copy(), expression=L.string(_CONTROL),
                             replacement=L.string(""), modifiers=L.string("g"))


def polars_exact(call: FormCall, a: Any, b: Any) -> Any:
    return a == b


def sql_exact(call: FormCall, a: Any, b: Any) -> Any:
    return _eq(a, b)


def polars_startswith(call: FormCall, text: Any, prefix: Any) -> Any:
    return text.str.starts_with(prefix)


def sql_startswith(call: FormCall, text: Any, prefix: Any) -> Any:
    return _f("STARTS_WITH", text.copy(), prefix.copy())


def polars_endswith(call: FormCall, text: Any, suffix: Any) -> Any:
    return text.str.ends_with(suffix)


def sql_endswith(call: FormCall, text: Any, suffix: Any) -> Any:
    return _f("ENDS_WITH", text.copy(), suffix.copy())


def polars_contains(call: FormCall, text: Any, sub: Any) -> Any:
    return text.str.contains(sub, literal=True)


def sql_contains(call: FormCall, text: Any, sub: Any) -> Any:
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


def polars_char(call: FormCall, number: Any) -> Any:
    bad = (number < 1) | (number >= 256)
    n = pl.when(~bad).then(_pl_int(number))
    return _pl_chr(n), [(bad, "#VALUE!")]


def sql_char(call: FormCall, number: Any) -> Any:
    bad = exp.or_(_lt(number, L.number(1)), _ge(number, L.number(256)))
    n = _case([(exp.Not(this=exp.Paren(this=bad)), _sql_int(number))])
    return _f("CHR", exp.cast(n, dtype("INT"))), [(bad, "#VALUE!")]


def polars_unichar(call: FormCall, number: Any) -> Any:
    bad = (number < 1) | (number >= 0x110000)
    k = _pl_int(number)
    surrogate = (k >= 0xD800) & (k <= 0xDFFF)
    n = pl.when(~bad & ~surrogate).then(k)
    return _pl_chr(n).str.normalize("NFC"), [(bad, "#VALUE!"), (surrogate, "#N/A")]


def sql_unichar(call: FormCall, number: Any) -> Any:
    bad = exp.or_(_lt(number, L.number(1)), _ge(number, L.number(0x110000)))
    k = _sql_int(number)
    surrogate = exp.and_(_ge(k, L.number(0xD800)), exp.LTE(this=k.copy(),
                                                            expression=L.number(0xDFFF)))
    ok = exp.Not(this=exp.Paren(this=exp.or_(bad.copy(), surrogate.copy())))
    n = exp.cast(_case([(ok, k.copy())]), dtype("INT"))
    return _f("NFC_NORMALIZE", _f("CHR", n)), \
        [(bad, "#VALUE!"), (surrogate, "#N/A")]


def polars_unicode(call: FormCall, text: Any) -> Any:
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


def sql_unicode(call: FormCall, text: Any) -> Any:
    empty = _eq(text, L.string(""))
    return _f("UNICODE", text.copy()), [(empty, "#VALUE!")]


polars_code = polars_unicode
sql_code = sql_unicode


