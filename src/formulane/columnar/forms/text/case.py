"""Text forms of the case mapping and character-level functions: UPPER LOWER PROPER, LEN LEFT
RIGHT MID TRIM CLEAN EXACT STARTSWITH ENDSWITH CONTAINS, CHAR UNICHAR UNICODE CODE.

Contract: case maps one character to one character with Python's own tables (`case_table`),
as the scalar engine does, whatever the engine's Unicode version; lengths and positions count
code points.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any, Iterable

from sqlglot import exp

from ._base import (
    L, _case, _cat, _eq, _f, _ge, _length, _let, _lt, _pl_int, _pl_number, _pl_text, _sql_int,
    _substr, pl,
)


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


@lru_cache(maxsize=None)
def polars_unsafe_class(kind: str) -> str:
    """Characters for which polars' own case mapping (Rust's full Unicode mapping) may differ
    from the scalar engine's one-to-one table: everything outside `engine_case_safe_class`,
    plus capital sigma for LOWER (Rust writes a final sigma as U+03C2 at a word's end)."""
    safe = [ord(c) for c in _code_points(_FAST_LIMIT)
            if unicodedata.category(c) != "Cn" and len(c.upper()) == 1 and len(c.lower()) == 1
            and not (unicodedata.category(c) in ("Lu", "Ll", "Lt")
                     and c.upper() == c and c.lower() == c)
            and not (kind == "lower" and c == "\u03a3")]
    return _class(_ranges(safe), negate=True)


def pl_case(e: Any, kind: str) -> Any:
    """Excel's UPPER/LOWER: polars' native mapping on the rows made only of characters both
    map alike (Latin, Greek, Cyrillic, no multi-character mapping), the one-to-one table
    (``replace_many`` over every cased character, about 3x slower) only on the other rows:
    nulls elsewhere, which ``replace_many`` skips, so most rows never pay for it."""
    src, dst = case_table(kind)
    rare = pl.when(e.str.contains(polars_unsafe_class(kind))).then(e)
    native = e.str.to_uppercase() if kind == "upper" else e.str.to_lowercase()
    return pl.coalesce(rare.str.replace_many(list(src), list(dst)), native)


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


