"""Numbers to and from text in other notations: ROMAN, ARABIC, BASE, DECIMAL, FIXED, DOLLAR.

Contract: Excel's rules. ROMAN takes 0..3999 (truncated) and Excel's five forms (0 classic to
4 most concise; TRUE is 0, FALSE 4); ARABIC reads any roman numeral of at most 255 characters,
case-insensitive, with an optional leading minus, adding or subtracting each symbol by its
right neighbour. BASE writes 0 <= n < 2^53 in a radix 2..36 (upper-case digits), padded to
min_length (0..255); DECIMAL reads such text (at most 255 characters). FIXED and DOLLAR round
half away from zero exactly (decimals may be negative, at most 127) and group thousands with
commas (en-US; DOLLAR writes a negative amount in parentheses, as Microsoft's page shows).
Work is bounded by the 255-character limits: constant cost. No polars or SQL form: the
dialects have no faithful digit-text formatting for these notations.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..types import BOOLEAN, NUMBER, TEXT
from ..values import NUM, VALUE, XLError
from . import _numeric as nm
from ._numeric import Number
from .spec import Cost, Refuse, builtin, p, sig

_N = NUMBER
_REFUSE = Refuse("formatting a number as digit text in another notation (roman numerals, "
                 "radix 2..36, grouped thousands) has no faithful native form in polars or SQL")
_SYMBOLS = "MDCLXVI"
_VALUES = (1000, 500, 100, 50, 10, 5, 1)
_ROMAN_VALUE = dict(zip(_SYMBOLS, _VALUES))
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _roman(value: int, form: int) -> str:
    """Excel's ROMAN: per decimal digit; a 4 or 9 is written subtractively, and each step of
    ``form`` lets the subtracted symbol move one symbol smaller while the pair still fits."""
    out: list[str] = []
    for index in range(0, 7, 2):  # M, C, X, I: the powers of ten
        digit = value // _VALUES[index]
        if digit % 5 == 4:
            big = index - 1 if digit == 4 else index - 2
            small = index
            for _ in range(form):
                if small < 6 and _VALUES[big] - _VALUES[small + 1] <= value:
                    small += 1
                else:
                    break
            out.append(_SYMBOLS[small] + _SYMBOLS[big])
            value -= _VALUES[big] - _VALUES[small]
        else:
            if digit > 4:
                out.append(_SYMBOLS[index - 1])
            out.append(_SYMBOLS[index] * (digit % 5))
            value %= _VALUES[index]
    return "".join(out)


@builtin(
    "ROMAN",
    sig(p("number", _N, doc="0 to 3999, truncated"),
        p("form", _N, 0, "0 classic ... 4 most concise (TRUE 0, FALSE 4)"), returns=TEXT),
    sig(p("number", _N), p("form", BOOLEAN), returns=TEXT),
    doc="A number as a roman numeral (0 gives empty text); #VALUE! outside 0..3999 or for a "
        "form outside 0..4.",
    examples=['ROMAN(499, 0) -> "CDXCIX"', 'ROMAN(499, 1) -> "LDVLIV"', 'ROMAN(499, 2) -> "XDIX"',
              'ROMAN(499, 3) -> "VDIV"', 'ROMAN(499, 4) -> "ID"', 'ROMAN(2024) -> "MMXXIV"',
              'ROMAN(4000) -> #VALUE!'],
    cost=Cost.const(10),
    errors=("#VALUE!",),
    polars=_REFUSE, sql=_REFUSE, category="info",
)
def roman(number: Number, form: Any = 0) -> str:
    n = nm.trunc_int(number)
    if type(form) is bool:
        mode = 0 if form else 4
    else:
        mode = nm.trunc_int(form)
    if not 0 <= n <= 3999:
        raise XLError(VALUE, "ROMAN takes numbers from 0 to 3999")
    if not 0 <= mode <= 4:
        raise XLError(VALUE, "ROMAN's form is 0, 1, 2, 3 or 4")
    return _roman(n, mode)


@builtin(
    "ARABIC",
    sig(p("text", TEXT, doc="a roman numeral, at most 255 characters"), returns=_N),
    doc="The number a roman numeral stands for (empty text is 0, a leading minus negates); "
        "#VALUE! for anything else.",
    examples=['ARABIC("LVII") -> 57', 'ARABIC("mcmxii") -> 1912', 'ARABIC("") -> 0',
              'ARABIC("-IV") -> -4', 'ARABIC("ABC") -> #VALUE!'],
    cost=Cost.const(20),
    errors=("#VALUE!",),
    polars=_REFUSE, sql=_REFUSE, category="info",
)
def arabic(text: str) -> int:
    if len(text) > 255:
        raise XLError(VALUE, "ARABIC takes at most 255 characters")
    body = text.strip(" ").upper()
    sign = 1
    if body.startswith("-"):
        sign, body = -1, body[1:]
    total = 0
    for i, c in enumerate(body):
        v = _ROMAN_VALUE.get(c)
        if v is None:
            raise XLError(VALUE, f"{c!r} is not a roman numeral symbol")
        nxt = _ROMAN_VALUE.get(body[i + 1], 0) if i + 1 < len(body) else 0
        total += -v if v < nxt else v
    return sign * total


@builtin(
    "BASE",
    sig(p("number", _N, doc="an integer 0 <= n < 2^53 (truncated)"),
        p("radix", _N, doc="2 to 36"), p("min_length", _N, 0, "pad with zeros to this length"),
        returns=TEXT),
    doc="A number written in another radix (digits 0-9 then A-Z); #NUM! outside the ranges.",
    examples=['BASE(7, 2) -> "111"', 'BASE(100, 16) -> "64"', 'BASE(15, 2, 10) -> "0000001111"',
              'BASE(-1, 2) -> #NUM!', 'BASE(10, 37) -> #NUM!'],
    cost=Cost.const(20),
    errors=("#NUM!",),
    polars=_REFUSE, sql=_REFUSE, category="info",
)
def base(number: Number, radix: Number, min_length: Number = 0) -> str:
    n, r, width = nm.trunc_int(number), nm.trunc_int(radix), nm.trunc_int(min_length)
    if not 0 <= n < 2**53:
        raise XLError(NUM, "BASE takes numbers from 0 to 2^53 - 1")
    if not 2 <= r <= 36:
        raise XLError(NUM, "the radix must be between 2 and 36")
    if not 0 <= width <= 255:
        raise XLError(NUM, "min_length must be between 0 and 255")
    digits = []
    while n:
        n, d = divmod(n, r)
        digits.append(_DIGITS[d])
    return "".join(reversed(digits)).rjust(width, "0") or "0" * max(width, 1)


@builtin(
    "DECIMAL",
    sig(p("text", TEXT, doc="digits in the radix, at most 255 characters"),
        p("radix", _N, doc="2 to 36"), returns=_N),
    doc="The number that text stands for in a radix 2..36 (case-insensitive); #NUM! for a "
        "digit outside the radix or a radix outside 2..36.",
    examples=['DECIMAL("FF", 16) -> 255', 'DECIMAL("111", 2) -> 7',
              'DECIMAL("zap", 36) -> 45745', 'DECIMAL("12", 2) -> #NUM!'],
    cost=Cost.const(20),
    errors=("#NUM!", "#VALUE!"),
    polars=_REFUSE, sql=_REFUSE, category="info",
)
def decimal_(text: str, radix: Number) -> Decimal | int:
    r = nm.trunc_int(radix)
    if not 2 <= r <= 36:
        raise XLError(NUM, "the radix must be between 2 and 36")
    if len(text) > 255:
        raise XLError(VALUE, "DECIMAL takes at most 255 characters")
    value = 0
    for c in text.upper():
        d = _DIGITS.find(c)
        if d < 0 or d >= r:
            raise XLError(NUM, f"{c!r} is not a digit in radix {r}")
        value = value * r + d
    return value if value < 10**34 else nm.finish(value)


# ------------------------------------------------------------------------- FIXED and DOLLAR


def _grouped(number: Number, decimals: Number, commas: bool) -> tuple[bool, str]:
    """(negative, digits with a point and optional thousands commas), rounded exactly."""
    places = nm.trunc_int(decimals)
    if places > 127:
        raise XLError(VALUE, "decimals can be at most 127")
    rounded = nm.round_digits(number, places, "half_up")
    negative = rounded < 0
    text = format(abs(rounded), f"{',' if commas else ''}.{max(places, 0)}f")
    return negative, text


@builtin(
    "FIXED",
    sig(p("number", _N), p("decimals", _N, 2, "places after the point (negative rounds to "
                                              "tens, hundreds...)"),
        p("no_commas", BOOLEAN, False, "TRUE leaves out the thousands separators"),
        returns=TEXT),
    doc="A number rounded to decimals places and written as text with thousands commas.",
    examples=['FIXED(1234.567, 1) -> "1,234.6"', 'FIXED(1234.567, -1) -> "1,230"',
              'FIXED(-1234.567, -1, TRUE) -> "-1230"', 'FIXED(44.332) -> "44.33"',
              'FIXED(1, 128) -> #VALUE!'],
    cost=Cost.const(30),
    errors=("#VALUE!", "#NUM!"),
    polars=_REFUSE, sql=_REFUSE, category="info",
)
def fixed(number: Number, decimals: Number = 2, no_commas: bool = False) -> str:
    negative, text = _grouped(number, decimals, not no_commas)
    return "-" + text if negative else text


@builtin(
    "DOLLAR",
    sig(p("number", _N), p("decimals", _N, 2, "places after the point (negative rounds to "
                                              "tens, hundreds...)"), returns=TEXT),
    doc="A number as currency text: rounded to decimals places, a dollar sign, thousands "
        "commas, and parentheses around a negative amount.",
    examples=['DOLLAR(1234.567, 2) -> "$1,234.57"', 'DOLLAR(1234.567, -2) -> "$1,200"',
              'DOLLAR(-1234.567, -2) -> "($1,200)"', 'DOLLAR(-0.123, 4) -> "($0.1230)"',
              'DOLLAR(99.888) -> "$99.89"'],
    cost=Cost.const(30),
    errors=("#VALUE!", "#NUM!"),
    polars=_REFUSE, sql=_REFUSE, category="info",
)
def dollar(number: Number, decimals: Number = 2) -> str:
    negative, text = _grouped(number, decimals, True)
    return f"(${text})" if negative else f"${text}"
