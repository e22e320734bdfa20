"""Engineering functions: base conversions, bitwise operations, DELTA, GESTEP, ERF, ERFC and
CONVERT (units in `_units`).

Contract (Excel's rules): binary, octal and hexadecimal numbers are texts of at most 10 digits
(case-insensitive, no sign, no spaces); ten digits with the top bit set are negative in two's
complement (binary -512..511, octal -2^29..2^29-1, hexadecimal -2^39..2^39-1). A decimal input
is truncated to an integer. ``places`` pads with zeros and is ignored for a negative result; a
result longer than ``places``, places <= 0 or > 10, a digit outside the base and a number
outside the range are ``#NUM!``. The bit functions take integers 0 <= n < 2^48 (``#NUM!``
otherwise; a fraction is ``#NUM!`` too), shifts up to 53 places, and results below 2^48. ERF and
ERFC compute in binary floating point (``math.erf``), as NORM.DIST does. Everything here is
integer or single float arithmetic on bounded inputs: constant cost.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable

from ..types import NUMBER, TEXT
from ..values import NA, NUM, XLError
from . import _numeric as nm
from . import _units
from ._numeric import Number
from .spec import Cost, Param, Refuse, builtin, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "engineering"

_N = NUMBER
_BITS = {2: 10, 8: 30, 16: 40}  # two's-complement width of ten digits in each base
_NAMES = {2: "binary", 8: "octal", 16: "hexadecimal", 10: "decimal"}
_BIT_LIMIT = 2**48
_TEXT_SQL = ("a base conversion parses and formats digit texts of a data-dependent length "
             "with two's complement; the SQL dialects share no faithful form of it")
_TEXT_POLARS = ("polars has no conversion of integers to or from base-2/8/16 text with "
                "Excel's two's complement and padding rules")
_BIT_REFUSE = ("bitwise operations need an exact 48-bit integer check and shift of each row; "
               "the float and decimal columns have no faithful bitwise form")
_ERF_REFUSE = ("polars and the SQL dialects have no error function (erf), and a series "
               "unrolled into an expression would not match math.erf's float result")
_PLACES = p("places", _N, None, "digits to pad to (ignored for negative numbers)")


# ------------------------------------------------------------------------------ conversions


def _parse(text: str, base: int) -> int:
    """A base-2/8/16 text of at most 10 digits as a signed integer (two's complement)."""
    if len(text) > 10:
        raise XLError(NUM, f"a {_NAMES[base]} number has at most 10 digits")
    if text == "":
        return 0
    try:
        value = int(text, base)
    except ValueError:
        raise XLError(NUM, f"{text!r} is not a {_NAMES[base]} number") from None
    if not all(c.isalnum() and c.isascii() for c in text):  # int() accepts '_', '+', spaces
        raise XLError(NUM, f"{text!r} is not a {_NAMES[base]} number")
    bits = _BITS[base]
    if len(text) == 10 and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _places(places: Any) -> int | None:
    if places is None:
        return None
    n = nm.trunc_int(places)
    if n <= 0 or n > 10:
        raise XLError(NUM, "places must be between 1 and 10")
    return n


def _format(value: int, base: int, places: Any) -> str:
    bits = _BITS[base]
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not low <= value <= high:
        raise XLError(NUM, f"{value} is outside the {_NAMES[base]} range {low}..{high}")
    width = _places(places)
    if value < 0:
        return _digits(value + (1 << bits), base)
    text = _digits(value, base)
    if width is not None:
        if len(text) > width:
            raise XLError(NUM, f"the result needs {len(text)} digits, more than places")
        text = text.rjust(width, "0")
    return text


def _digits(value: int, base: int) -> str:
    return {2: format(value, "b"), 8: format(value, "o"), 16: format(value, "X")}[base]


def _from_decimal(number: Number) -> int:
    return nm.trunc_int(number)


def _conversion(name: str, source: int, target: int, examples: list[str]) -> Any:
    """Declare one of the twelve conversions between bases 2, 8, 10 and 16."""
    if source == 10:
        params: tuple[Param, ...] = (p("number", _N, doc="a decimal integer (truncated)"),
                                     _PLACES)
        returns = TEXT
    elif target == 10:
        params = (p("number", TEXT, doc=f"a {_NAMES[source]} number, at most 10 digits"),)
        returns = _N
    else:
        params = (p("number", TEXT, doc=f"a {_NAMES[source]} number, at most 10 digits"),
                  _PLACES)
        returns = TEXT

    def impl(number: Any, places: Any = None) -> Any:
        value = _from_decimal(number) if source == 10 else _parse(number, source)
        if target == 10:
            return value
        return _format(value, target, places)

    impl.__name__ = name.lower()
    impl.__module__ = __name__
    return builtin(name, sig(*params, returns=returns),
                   doc=f"A {_NAMES[source]} number as {_NAMES[target]}"
                       + (" text" if target != 10 else "")
                       + " (ten-digit two's complement for negative numbers); #NUM! outside "
                         "the range or for a bad digit.",
                   examples=examples, cost=Cost.const(20), errors=("#NUM!",),
                   polars=Refuse(_TEXT_POLARS), sql=Refuse(_TEXT_SQL))(impl)


DEC2BIN = _conversion("DEC2BIN", 10, 2, ['DEC2BIN(9, 4) -> "1001"', 'DEC2BIN(-100) -> "1110011100"',
                                         'DEC2BIN(512) -> #NUM!', 'DEC2BIN(9, 2) -> #NUM!'])
DEC2OCT = _conversion("DEC2OCT", 10, 8, ['DEC2OCT(58, 3) -> "072"', 'DEC2OCT(-100) -> "7777777634"',
                                         'DEC2OCT(2^29) -> #NUM!'])
DEC2HEX = _conversion("DEC2HEX", 10, 16, ['DEC2HEX(100, 4) -> "0064"',
                                          'DEC2HEX(-54) -> "FFFFFFFFCA"', 'DEC2HEX(28) -> "1C"',
                                          'DEC2HEX(64, 1) -> #NUM!'])
BIN2DEC = _conversion("BIN2DEC", 2, 10, ['BIN2DEC("1100100") -> 100',
                                         'BIN2DEC("1111111111") -> -1', 'BIN2DEC("102") -> #NUM!'])
OCT2DEC = _conversion("OCT2DEC", 8, 10, ['OCT2DEC("54") -> 44', 'OCT2DEC("7777777533") -> -165',
                                         'OCT2DEC("8") -> #NUM!'])
HEX2DEC = _conversion("HEX2DEC", 16, 10, ['HEX2DEC("A5") -> 165', 'HEX2DEC("FFFFFFFF5B") -> -165',
                                          'HEX2DEC("3DA408B9") -> 1034160313',
                                          'HEX2DEC("G") -> #NUM!'])
BIN2OCT = _conversion("BIN2OCT", 2, 8, ['BIN2OCT("1001", 3) -> "011"',
                                        'BIN2OCT("1111111111") -> "7777777777"',
                                        'BIN2OCT("1100100", 1) -> #NUM!'])
BIN2HEX = _conversion("BIN2HEX", 2, 16, ['BIN2HEX("11111011", 4) -> "00FB"',
                                         'BIN2HEX("1110") -> "E"',
                                         'BIN2HEX("1111111111") -> "FFFFFFFFFF"',
                                         'BIN2HEX("12") -> #NUM!'])
OCT2BIN = _conversion("OCT2BIN", 8, 2, ['OCT2BIN("3", 3) -> "011"',
                                        'OCT2BIN("7777777000") -> "1000000000"',
                                        'OCT2BIN("1000") -> #NUM!'])
OCT2HEX = _conversion("OCT2HEX", 8, 16, ['OCT2HEX("100", 4) -> "0040"',
                                         'OCT2HEX("7777777533") -> "FFFFFFFF5B"',
                                         'OCT2HEX("9") -> #NUM!'])
HEX2BIN = _conversion("HEX2BIN", 16, 2, ['HEX2BIN("F", 8) -> "00001111"', 'HEX2BIN("B7") -> "10110111"',
                                         'HEX2BIN("FFFFFFFE00") -> "1000000000"',
                                         'HEX2BIN("200") -> #NUM!'])
HEX2OCT = _conversion("HEX2OCT", 16, 8, ['HEX2OCT("F", 3) -> "017"', 'HEX2OCT("3B4E") -> "35516"',
                                         'HEX2OCT("FFFFFFFF00") -> "7777777400"',
                                         'HEX2OCT("FFDFFFFFFF") -> #NUM!'])


# ----------------------------------------------------------------------------------- bits


def _bit_operand(x: Number, what: str) -> int:
    if x < 0 or x >= _BIT_LIMIT:
        raise XLError(NUM, f"{what} must be between 0 and 2^48 - 1")
    if isinstance(x, Decimal) and x != x.to_integral_value():
        raise XLError(NUM, f"{what} must be a whole number")
    return int(x)


def _bitwise(name: str, op: Callable[[int, int], int], doc: str, examples: list[str]) -> Any:
    def impl(number1: Number, number2: Number) -> int:
        return op(_bit_operand(number1, "number1"), _bit_operand(number2, "number2"))

    impl.__name__ = name.lower()
    impl.__module__ = __name__
    return builtin(name, sig(p("number1", _N), p("number2", _N), returns=_N), doc=doc,
                   examples=examples, cost=Cost.const(3), errors=("#NUM!",),
                   polars=Refuse(_BIT_REFUSE), sql=Refuse(_BIT_REFUSE))(impl)


BITAND = _bitwise("BITAND", lambda a, b: a & b,
                  "The bitwise AND of two integers between 0 and 2^48 - 1.",
                  ["BITAND(1, 5) -> 1", "BITAND(13, 25) -> 9", "BITAND(-1, 5) -> #NUM!",
                   "BITAND(1.5, 1) -> #NUM!"])
BITOR = _bitwise("BITOR", lambda a, b: a | b,
                 "The bitwise OR of two integers between 0 and 2^48 - 1.",
                 ["BITOR(23, 10) -> 31", "BITOR(0, 0) -> 0", "BITOR(2^48, 1) -> #NUM!"])
BITXOR = _bitwise("BITXOR", lambda a, b: a ^ b,
                  "The bitwise exclusive OR of two integers between 0 and 2^48 - 1.",
                  ["BITXOR(5, 3) -> 6", "BITXOR(7, 7) -> 0", "BITXOR(5, -3) -> #NUM!"])


def _shift(number: Number, amount: Number, left: bool) -> int:
    n = _bit_operand(number, "number")
    k = nm.trunc_int(amount)
    if abs(k) > 53:
        raise XLError(NUM, "shift_amount must be between -53 and 53")
    k = k if left else -k
    value = n << k if k >= 0 else n >> -k
    if value >= _BIT_LIMIT:
        raise XLError(NUM, "the result is 2^48 or more")
    return value


_SHIFT = sig(p("number", _N), p("shift_amount", _N, doc="places (negative shifts the other "
                                                      "way)"), returns=_N)


@builtin("BITLSHIFT", _SHIFT,
         doc="An integer shifted left by shift_amount bits (right when negative); #NUM! when "
             "the result reaches 2^48.",
         examples=["BITLSHIFT(4, 2) -> 16", "BITLSHIFT(4, -1) -> 2", "BITLSHIFT(1, 48) -> #NUM!"],
         cost=Cost.const(3), errors=("#NUM!",), polars=Refuse(_BIT_REFUSE), sql=Refuse(_BIT_REFUSE))
def bitlshift(number: Number, shift_amount: Number) -> int:
    return _shift(number, shift_amount, True)


@builtin("BITRSHIFT", _SHIFT,
         doc="An integer shifted right by shift_amount bits (left when negative).",
         examples=["BITRSHIFT(13, 2) -> 3", "BITRSHIFT(1, -3) -> 8", "BITRSHIFT(-1, 1) -> #NUM!"],
         cost=Cost.const(3), errors=("#NUM!",), polars=Refuse(_BIT_REFUSE), sql=Refuse(_BIT_REFUSE))
def bitrshift(number: Number, shift_amount: Number) -> int:
    return _shift(number, shift_amount, False)


# ------------------------------------------------------------------------- DELTA and GESTEP


@builtin("DELTA", sig(p("number1", _N), p("number2", _N, 0), returns=_N),
         doc="One when the two numbers are equal, else 0 (number2 defaults to 0).",
         examples=["DELTA(5, 4) -> 0", "DELTA(5, 5) -> 1", "DELTA(0.5, 0) -> 0", "DELTA(0) -> 1"],
         cost=Cost.const(1), can_error=False)
def delta(number1: Number, number2: Number = 0) -> int:
    return int(number1 == number2)


@builtin("GESTEP", sig(p("number", _N), p("step", _N, 0), returns=_N),
         doc="One when number >= step, else 0 (step defaults to 0).",
         examples=["GESTEP(5, 4) -> 1", "GESTEP(5, 5) -> 1", "GESTEP(-4, -5) -> 1",
                   "GESTEP(-1) -> 0"],
         cost=Cost.const(1), can_error=False)
def gestep(number: Number, step: Number = 0) -> int:
    return int(number >= step)


# ---------------------------------------------------------------------------- error function


def _erf_value(x: Number) -> float:
    return math.erf(float(x))


@builtin("ERF", sig(p("lower_limit", _N), p("upper_limit", _N, None, "integrate up to here "
                                                                    "instead of from 0"),
                    returns=_N),
         doc="The error function integrated from 0 to lower_limit, or from lower_limit to "
             "upper_limit when given.",
         examples=["ROUND(ERF(0.745), 8) -> 0.70792892", "ROUND(ERF(1), 9) -> 0.842700793",
                   "ROUND(ERF(1, 2), 9) -> 0.152621472", "ERF(0) -> 0"],
         cost=Cost.const(4), polars=Refuse(_ERF_REFUSE), sql=Refuse(_ERF_REFUSE), errors=("#NUM!",))
def erf(lower_limit: Number, upper_limit: Number | None = None) -> Decimal:
    if upper_limit is None:
        return nm.from_float(_erf_value(lower_limit))
    return nm.from_float(_erf_value(upper_limit) - _erf_value(lower_limit))


@builtin("ERF.PRECISE", sig(p("x", _N), returns=_N),
         doc="The error function integrated from 0 to x.",
         examples=["ROUND(ERF.PRECISE(0.745), 8) -> 0.70792892",
                   "ROUND(ERF.PRECISE(1), 9) -> 0.842700793", "ERF.PRECISE(-10) -> -1"],
         cost=Cost.const(4), polars=Refuse(_ERF_REFUSE), sql=Refuse(_ERF_REFUSE), errors=("#NUM!",))
def erf_precise(x: Number) -> Decimal:
    return nm.from_float(_erf_value(x))


@builtin("ERFC", sig(p("x", _N), returns=_N),
         doc="The complementary error function, 1 - ERF(x), integrated from x to infinity.",
         examples=["ROUND(ERFC(1), 9) -> 0.157299207", "ERFC(0) -> 1",
                   "ROUND(ERFC(-1), 9) -> 1.842700793"],
         cost=Cost.const(4), polars=Refuse(_ERF_REFUSE), sql=Refuse(_ERF_REFUSE), errors=("#NUM!",))
def erfc(x: Number) -> Decimal:
    return nm.from_float(math.erfc(float(x)))


@builtin("ERFC.PRECISE", sig(p("x", _N), returns=_N),
         doc="The complementary error function integrated from x to infinity.",
         examples=["ROUND(ERFC.PRECISE(1), 9) -> 0.157299207", "ERFC.PRECISE(30) -> 0"],
         cost=Cost.const(4), polars=Refuse(_ERF_REFUSE), sql=Refuse(_ERF_REFUSE), errors=("#NUM!",))
def erfc_precise(x: Number) -> Decimal:
    return nm.from_float(math.erfc(float(x)))


# ----------------------------------------------------------------------------------- CONVERT


_CONVERT_REFUSE = ("unit names are parsed per value (prefixes, squared and cubed units, "
                   "affine temperatures); a constant-unit form would need the unit texts to "
                   "be literals, which a column form cannot require")


@builtin("CONVERT",
         sig(p("number", _N), p("from_unit", TEXT, doc='an Excel unit name, e.g. "mi", "kg", '
                                                      '"ft^2", "C"'),
             p("to_unit", TEXT), returns=_N),
         doc="A number converted between units of the same quantity (mass, distance, time, "
             "pressure, force, energy, power, magnetism, temperature, volume, area, "
             "information, speed), with Excel's unit names and prefixes; #N/A for an unknown "
             "unit or units of different quantities.",
         examples=['CONVERT(1, "lbm", "kg") -> 0.45359237', 'CONVERT(68, "F", "C") -> 20',
                   'CONVERT(2.5, "ft", "sec") -> #N/A', 'CONVERT(1, "km", "m") -> 1000',
                   'CONVERT(100, "ft2", "m2") -> 9.290304', 'CONVERT(1, "kibyte", "bit") -> 8192',
                   'CONVERT(1, "gal", "l") -> 3.785411784'],
         cost=Cost.const(300), errors=("#N/A", "#NUM!"),
         polars=Refuse(_CONVERT_REFUSE), sql=Refuse(_CONVERT_REFUSE))
def convert(number: Number, from_unit: str, to_unit: str) -> Decimal:
    x = nm.dec(number)
    if _units.is_temperature(from_unit) and _units.is_temperature(to_unit):
        return nm.finish(_units.from_kelvin(_units.to_kelvin(x, from_unit), to_unit))
    source, target = _units.factor(from_unit), _units.factor(to_unit)
    if source is None or target is None:
        raise XLError(NA, f"unknown unit {(to_unit if source else from_unit)!r}")
    if source[0] != target[0]:
        raise XLError(NA, f"{from_unit!r} ({source[0]}) and {to_unit!r} ({target[0]}) measure "
                          "different quantities")
    return nm.finish(x * source[1] / target[1])
