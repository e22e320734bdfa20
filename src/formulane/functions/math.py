"""Math functions: rounding, remainders, powers and logarithms, trigonometry, integer functions.

Contract: numbers arrive as `Decimal` or `int` and leave as `Decimal` or an exact `int`
(SIGN, GCD, ABS/INT/CLAMP of an int), never as floats. Rounding to digits or to a multiple, MOD
and QUOTIENT are exact (`_numeric`: decimal quantize/remainder when they are exact, integer
arithmetic over a common power of ten otherwise), with Excel's tie rule: half away from zero
(``ROUND(2.5, 0) = 3``, ``ROUND(-2.5, 0) = -3``, ``ROUND(2.675, 2) = 2.68`` because 2.675 is
exactly 2.675 here). Digits and counts are truncated toward zero, as Excel does. Powers,
roots, EXP and logarithms use the 34-digit decimal context, after estimating the magnitude so
``POWER(9, 9^9)`` is ``#NUM!`` at once; trigonometry runs in binary floating point (as Excel's
does) and converts back by the float's shortest repr. Results of 1e308 or more are ``#NUM!``.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from typing import Any, Callable

from ..types import NUMBER, many
from ..values import CONTEXT, DIV0, NUM, XLError
from . import _numeric as nm
from ._numeric import Number
from .spec import Cost, FunctionSpec, Refuse, builtin, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "math"

_N = NUMBER
_ZERO = Decimal(0)
_ONE = Decimal(1)
#: Excel refuses SIN/COS/TAN of arguments of 2^27 or more (#NUM!): reduction mod 2*pi has lost
#: too many digits by then.
_TRIG_LIMIT = 2**27
#: GCD and LCM take integers below 2^53 only (Excel documents #NUM! beyond).
_INT_LIMIT = 2**53
_DEGREES_DIGITS = decimal.Context(prec=32, Emax=10**6, Emin=-(10**6), traps=[])

# Columnar and SQL decisions (forms in `columnar/forms/math`; numeric policy in its docstring).
_NO_GCD = ("polars has no gcd primitive, and Euclid's algorithm runs a data-dependent number "
           "of steps (an unrolled form grows exponentially without intermediate columns)")
_LISTS_SQL = ("its arguments may be lists or numbers, and a SQL form receives them without "
              "their types, so it cannot flatten them (one array function per dialect would "
              "also be needed)")
_NO_COMBIN = ("no native binomial: the exact product has up to ~1000 factors and a log-gamma "
              "form (DuckDB lgamma; none in polars) loses more than the 1e-9 float tolerance "
              "for large numbers")


# ------------------------------------------------------------------------------- sign and size


@builtin(
    "ABS",
    sig(p("number", _N), returns=_N),
    doc="The absolute value of a number.",
    examples=["ABS(-2.5) -> 2.5", "ABS(3) -> 3", "ABS(0) -> 0"],
    cost=Cost.const(2),
    can_error=False,
    sql_widens=True,
)
def abs_(number: Number) -> Number:
    return abs(number) if isinstance(number, int) else number.copy_abs()


@builtin(
    "SIGN",
    sig(p("number", _N), returns=_N),
    doc="The sign of a number: 1 if positive, -1 if negative, 0 for zero.",
    examples=["SIGN(-0.001) -> -1", "SIGN(42) -> 1", "SIGN(0) -> 0"],
    cost=Cost.const(2),
    can_error=False,
)
def sign(number: Number) -> int:
    return (number > 0) - (number < 0)


@builtin(
    "CLAMP",
    sig(p("number", _N), p("low", _N), p("high", _N), returns=_N),
    doc="The number limited to the range low..high; #NUM! if low > high.",
    examples=["CLAMP(15, 0, 10) -> 10", "CLAMP(-3, 0, 10) -> 0", "CLAMP(5, 0, 10) -> 5",
              "CLAMP(5, 10, 0) -> #NUM!"],
    cost=Cost.const(3),
    errors=("#NUM!",),
)
def clamp(number: Number, low: Number, high: Number) -> Number:
    if low > high:
        raise XLError(NUM, "CLAMP needs low <= high")
    return low if number < low else high if number > high else number


# ------------------------------------------------------------------------------------ rounding


def _to_digits(name: str, mode: nm.Mode, *, doc: str, examples: list[str],
               digits_doc: str = "") -> FunctionSpec:
    """ROUND and its kin: `_numeric.round_digits` in one rounding mode."""

    def impl(number: Number, num_digits: Number = 0) -> Decimal:
        return nm.round_digits(number, num_digits, mode)

    return builtin(name, sig(p("number", _N), p("num_digits", _N, 0, digits_doc), returns=_N),
                   doc=doc, examples=examples, cost=Cost.const(30), errors=("#NUM!",),
                   # the float forms round by scaling: inf or NaN on a row that errs, never
                   # an exception, so polars need not compute them twice (inside and outside
                   # the error mask): ROUND(price * qty, 2) at 1M rows 19.8 -> 11.3 ms
                   total_on_floats=True)(impl)


round_ = _to_digits(
    "ROUND", "half_up",
    digits_doc="decimal places; negative rounds to tens, hundreds...",
    doc="A number rounded to num_digits decimal places, halves away from zero.",
    examples=["ROUND(2.5, 0) -> 3", "ROUND(-2.5, 0) -> -3", "ROUND(2.675, 2) -> 2.68",
              "ROUND(1234, -2) -> 1200", "ROUND(3.14159, 2.9) -> 3.14"],
)
roundup = _to_digits(
    "ROUNDUP", "up",
    doc="A number rounded away from zero to num_digits decimal places.",
    examples=["ROUNDUP(3.2, 0) -> 4", "ROUNDUP(-3.14159, 1) -> -3.2", "ROUNDUP(31415.9, -2) -> 31500"],
)
rounddown = _to_digits(
    "ROUNDDOWN", "down",
    doc="A number rounded toward zero to num_digits decimal places.",
    examples=["ROUNDDOWN(3.7, 0) -> 3", "ROUNDDOWN(-3.14159, 3) -> -3.141",
              "ROUNDDOWN(31415.9, -2) -> 31400"],
)
trunc = _to_digits(
    "TRUNC", "down",
    doc="A number with its decimals cut off after num_digits places (toward zero).",
    examples=["TRUNC(-3.5) -> -3", "TRUNC(8.97) -> 8", "TRUNC(3.14159, 2) -> 3.14"],
)


@builtin(
    "INT",
    sig(p("number", _N), returns=_N),
    doc="A number rounded down to the nearest integer (toward minus infinity).",
    examples=["INT(-3.5) -> -4", "INT(8.9) -> 8", "INT(-3) -> -3"],
    cost=Cost.const(20),
    can_error=False,
)
def int_(number: Number) -> Number:
    if type(number) is int:
        return number
    return nm.round_digits(number, 0, "floor")


@builtin(
    "MROUND",
    sig(p("number", _N), p("multiple", _N), returns=_N),
    doc="A number rounded to the nearest multiple, halves away from zero; #NUM! if the signs "
        "differ.",
    examples=["MROUND(10, 3) -> 9", "MROUND(-10, -3) -> -9", "MROUND(1.3, 0.2) -> 1.4",
              "MROUND(5, -2) -> #NUM!", "MROUND(7, 0) -> 0"],
    cost=Cost.const(30),
    errors=("#NUM!",),
)
def mround(number: Number, multiple: Number) -> Decimal:
    if not multiple:
        return _ZERO
    if (number > 0 and multiple < 0) or (number < 0 and multiple > 0):
        raise XLError(NUM, "MROUND needs number and multiple of the same sign")
    return nm.round_multiple(number, multiple, "half_up")


@builtin(
    "CEILING",
    sig(p("number", _N), p("significance", _N, 1, "the multiple; 1 when omitted"), returns=_N),
    doc="A number rounded up to a multiple of significance (negative numbers with a negative "
        "significance round away from zero).",
    examples=["CEILING(2.5, 1) -> 3", "CEILING(-2.5, -2) -> -4", "CEILING(-2.5, 2) -> -2",
              "CEILING(4.42, 0.05) -> 4.45", "CEILING(2.5, -2) -> #NUM!", "CEILING(5, 0) -> 0"],
    cost=Cost.const(30),
    errors=("#NUM!",),
)
def ceiling(number: Number, significance: Number = 1) -> Decimal:
    if number > 0 and significance < 0:
        raise XLError(NUM, "CEILING of a positive number needs a positive significance")
    if not significance:
        return _ZERO  # Excel 2010+: a zero significance gives 0
    return nm.round_multiple(number, significance, "ceil")


@builtin(
    "FLOOR",
    sig(p("number", _N), p("significance", _N, 1, "the multiple; 1 when omitted"), returns=_N),
    doc="A number rounded down to a multiple of significance (negative numbers with a negative "
        "significance round toward zero).",
    examples=["FLOOR(3.7, 2) -> 2", "FLOOR(-2.5, -2) -> -2", "FLOOR(-2.5, 2) -> -4",
              "FLOOR(2.5, -2) -> #NUM!", "FLOOR(5, 0) -> #DIV/0!"],
    cost=Cost.const(30),
    errors=("#NUM!", "#DIV/0!"),
)
def floor(number: Number, significance: Number = 1) -> Decimal:
    if number > 0 and significance < 0:
        raise XLError(NUM, "FLOOR of a positive number needs a positive significance")
    if not significance:
        if not number:
            return _ZERO
        raise XLError(DIV0, "FLOOR with a zero significance")
    return nm.round_multiple(number, significance, "floor")


def _to_multiple(name: str, up: nm.Mode, down: nm.Mode, mode_doc: str, *, doc: str,
                 examples: list[str]) -> FunctionSpec:
    """CEILING.MATH and FLOOR.MATH: a multiple of |significance|, rounding ``up`` (``down``
    for a negative number with a nonzero mode)."""

    def impl(number: Number, significance: Number = 1, mode: Number = 0) -> Decimal:
        if not significance:
            return _ZERO
        step = nm.magnitude(significance)
        return nm.round_multiple(number, step, down if number < 0 and mode else up)

    return builtin(name, sig(p("number", _N), p("significance", _N, 1, "its sign is ignored"),
                             p("mode", _N, 0, mode_doc), returns=_N),
                   doc=doc, examples=examples, cost=Cost.const(30), errors=("#NUM!",))(impl)


ceiling_math = _to_multiple(
    "CEILING.MATH", "ceil", "floor", "nonzero: negative numbers round away from zero",
    doc="A number rounded up to a multiple of |significance|; with a nonzero mode, negative "
        "numbers round away from zero.",
    examples=["CEILING.MATH(-8.1, 2) -> -8", "CEILING.MATH(-5.5, 2, -1) -> -6",
              "CEILING.MATH(24.3, 5) -> 25", "CEILING.MATH(6.7) -> 7", "CEILING.MATH(3, 0) -> 0"],
)
floor_math = _to_multiple(
    "FLOOR.MATH", "floor", "ceil", "nonzero: negative numbers round toward zero",
    doc="A number rounded down to a multiple of |significance|; with a nonzero mode, negative "
        "numbers round toward zero.",
    examples=["FLOOR.MATH(-8.1, 2) -> -10", "FLOOR.MATH(-5.5, 2, -1) -> -4",
              "FLOOR.MATH(24.3, 5) -> 20", "FLOOR.MATH(6.7) -> 6", "FLOOR.MATH(3, 0) -> 0"],
)


def _to_parity(name: str, odd: int, *, doc: str, examples: list[str]) -> FunctionSpec:
    """EVEN and ODD: away from zero to the next integer of the parity ``odd`` (0 or 1)."""

    def impl(number: Number) -> Decimal:
        n = int(nm.round_digits(nm.magnitude(number), 0, "ceil"))
        n += (n + odd) % 2
        return nm.finish(-n if number < 0 else n)

    return builtin(name, sig(p("number", _N), returns=_N), doc=doc, examples=examples,
                   cost=Cost.const(40), errors=("#NUM!",))(impl)


even = _to_parity(
    "EVEN", 0, doc="A number rounded away from zero to the nearest even integer.",
    examples=["EVEN(1.5) -> 2", "EVEN(3) -> 4", "EVEN(-1) -> -2", "EVEN(0) -> 0"],
)
odd = _to_parity(
    "ODD", 1, doc="A number rounded away from zero to the nearest odd integer.",
    examples=["ODD(1.5) -> 3", "ODD(3) -> 3", "ODD(-2) -> -3", "ODD(0) -> 1"],
)


# ---------------------------------------------------------------------------------- remainders


@builtin(
    "MOD",
    sig(p("number", _N), p("divisor", _N), returns=_N),
    doc="The remainder of number / divisor, with the sign of the divisor.",
    examples=["MOD(-7, 3) -> 2", "MOD(7, -3) -> -2", "MOD(5.5, 2) -> 1.5", "MOD(5, 0) -> #DIV/0!"],
    cost=Cost.const(30),
    errors=("#DIV/0!",),
)
def mod(number: Number, divisor: Number) -> Decimal:
    return nm.int_mod(number, divisor)


@builtin(
    "QUOTIENT",
    sig(p("numerator", _N), p("denominator", _N), returns=_N),
    doc="The integer part of a division, truncated toward zero.",
    examples=["QUOTIENT(-7, 2) -> -3", "QUOTIENT(5, 2) -> 2", "QUOTIENT(4.5, 3.1) -> 1",
              "QUOTIENT(1, 0) -> #DIV/0!"],
    cost=Cost.const(30),
    errors=("#DIV/0!", "#NUM!"),
)
def quotient(numerator: Number, denominator: Number) -> Decimal:
    return nm.int_quotient(numerator, denominator)


# ------------------------------------------------------------------- powers, roots, logarithms


@builtin(
    "POWER",
    sig(p("number", _N), p("power", _N), returns=_N),
    doc="A number raised to a power (like ^); 0^0 and too-large results are #NUM!.",
    examples=["POWER(2, 10) -> 1024", "POWER(4, 0.5) -> 2", "POWER(0, 0) -> #NUM!",
              "POWER(-8, 1/3) -> #NUM!", "POWER(0, -1) -> #DIV/0!", "POWER(9, POWER(9, 9)) -> #NUM!"],
    cost=nm.POWER_COST,
    errors=("#NUM!", "#DIV/0!"),
)
def power(number: Number, power: Number) -> Decimal:
    return nm.power(number, power)


@builtin(
    "SQRT",
    sig(p("number", _N), returns=_N),
    doc="The positive square root of a number; #NUM! for a negative number.",
    examples=["SQRT(16) -> 4", "SQRT(2.25) -> 1.5", "SQRT(-1) -> #NUM!"],
    cost=Cost.const(40),
    errors=("#NUM!",),
)
def sqrt(number: Number) -> Decimal:
    if number < 0:
        raise XLError(NUM, "SQRT of a negative number")
    return nm.finish(CONTEXT.sqrt(nm.dec(number)))


@builtin(
    "EXP",
    sig(p("number", _N), returns=_N),
    doc="The constant e raised to a power; #NUM! when the result reaches 1e308.",
    examples=["EXP(0) -> 1", "ROUND(EXP(1), 9) -> 2.718281828", "EXP(1000) -> #NUM!"],
    cost=Cost.const(120),
    errors=("#NUM!",),
)
def exp(number: Number) -> Decimal:
    if number > 710:  # e^710 > 1e308: refuse before computing
        raise XLError(NUM, "EXP result too large")
    if number < -900:  # e^-900 < 1e-390: below the smallest Number
        return _ZERO
    try:
        return nm.finish(CONTEXT.exp(nm.dec(number)))
    except ArithmeticError:  # e^709.8 and up overflow the context
        raise XLError(NUM, "EXP result too large") from None


def _logarithm(name: str, log: Callable[[Decimal], Decimal], cost: int, *, doc: str,
               examples: list[str]) -> FunctionSpec:
    """LN and LOG10: one logarithm of the 34-digit context, of a positive number."""

    def impl(number: Number) -> Decimal:
        if number <= 0:
            raise XLError(NUM, f"{name} of a number <= 0")
        return nm.finish(log(nm.dec(number)))

    return builtin(name, sig(p("number", _N), returns=_N), doc=doc, examples=examples,
                   cost=Cost.const(cost), errors=("#NUM!",))(impl)


ln = _logarithm(
    "LN", CONTEXT.ln, 450,  # ~21 µs measured
    doc="The natural logarithm of a positive number.",
    examples=["LN(1) -> 0", "ROUND(LN(86), 6) -> 4.454347", "LN(0) -> #NUM!", "LN(-1) -> #NUM!"],
)
log10 = _logarithm(
    "LOG10", CONTEXT.log10, 500,  # ~23 µs measured
    doc="The base-10 logarithm of a positive number (exact for powers of ten).",
    examples=["LOG10(1000) -> 3", "LOG10(0.01) -> -2", "LOG10(0) -> #NUM!"],
)


@builtin(
    "LOG",
    sig(p("number", _N), p("base", _N, 10, "10 when omitted"), returns=_N),
    doc="The logarithm of a positive number to a base (10 by default).",
    examples=["LOG(8, 2) -> 3", "LOG(100) -> 2", "ROUND(LOG(86, 2.7182818), 6) -> 4.454347",
              "LOG(10, 1) -> #DIV/0!", "LOG(-1, 2) -> #NUM!"],
    cost=Cost.const(900),
    errors=("#NUM!", "#DIV/0!"),
)
def log(number: Number, base: Number = 10) -> Decimal:
    if number <= 0 or base <= 0:
        raise XLError(NUM, "LOG needs a positive number and a positive base")
    if base == 1:
        raise XLError(DIV0, "LOG to base 1")
    x, b = nm.dec(number), nm.dec(base)
    if b == 10:
        return nm.finish(CONTEXT.log10(x))
    # 50 digits for the quotient, rounded once: LOG(8, 2) comes out as exactly 3.
    w = nm.WIDE
    return nm.finish(w.divide(w.ln(x), w.ln(b)))


@builtin(
    "PI",
    sig(returns=_N),
    doc="The number pi to 34 significant digits.",
    examples=["ROUND(PI(), 5) -> 3.14159", "PI() -> 3.141592653589793238462643383279503",
              "COS(PI()) -> -1"],
    cost=Cost.const(1),
    can_error=False,
)
def pi() -> Decimal:
    return nm.PI


# ------------------------------------------------------------------------------- trigonometry


def _from_trig(x: float) -> Decimal:
    return nm.from_float(x)


def _trig(name: str, fn: Callable[[float], float], *, doc: str,
          examples: list[str]) -> FunctionSpec:
    """SIN, COS, TAN: the float function of an angle below 2^27 in magnitude (Excel's limit)."""

    def impl(number: Number) -> Decimal:
        if nm.magnitude(number) >= _TRIG_LIMIT:
            raise XLError(NUM, f"{name} of a number of 2^27 or more")
        return _from_trig(fn(float(number)))

    return builtin(name, sig(p("number", _N, doc="an angle in radians"), returns=_N), doc=doc,
                   examples=examples, cost=Cost.const(30), errors=("#NUM!",))(impl)


def _arc(name: str, fn: Callable[[float], float], *, doc: str,
         examples: list[str]) -> FunctionSpec:
    """ASIN, ACOS: the float function of a number between -1 and 1."""

    def impl(number: Number) -> Decimal:
        if not -1 <= number <= 1:
            raise XLError(NUM, f"{name} needs a number between -1 and 1")
        return _from_trig(fn(float(number)))

    return builtin(name, sig(p("number", _N), returns=_N), doc=doc, examples=examples,
                   cost=Cost.const(30), errors=("#NUM!",))(impl)


sin = _trig(
    "SIN", math.sin,
    doc="The sine of an angle in radians (binary floating point, as in Excel).",
    examples=["SIN(0) -> 0", "ROUND(SIN(PI()/6), 12) -> 0.5", "SIN(2^27) -> #NUM!"],
)
cos = _trig(
    "COS", math.cos,
    doc="The cosine of an angle in radians (binary floating point, as in Excel).",
    examples=["COS(0) -> 1", "ROUND(COS(PI()/3), 12) -> 0.5", "COS(2^27) -> #NUM!"],
)
tan = _trig(
    "TAN", math.tan,
    doc="The tangent of an angle in radians (binary floating point, as in Excel).",
    examples=["TAN(0) -> 0", "ROUND(TAN(PI()/4), 12) -> 1", "TAN(-134217728) -> #NUM!"],
)
asin = _arc(
    "ASIN", math.asin,
    doc="The arcsine in radians of a number between -1 and 1.",
    examples=["ASIN(0) -> 0", "ROUND(ASIN(-0.5), 9) -> -0.523598776", "ASIN(2) -> #NUM!"],
)
acos = _arc(
    "ACOS", math.acos,
    doc="The arccosine in radians (0 to pi) of a number between -1 and 1.",
    examples=["ACOS(1) -> 0", "ROUND(ACOS(-0.5), 9) -> 2.094395102", "ACOS(-1.5) -> #NUM!"],
)


@builtin(
    "ATAN",
    sig(p("number", _N), returns=_N),
    doc="The arctangent in radians (-pi/2 to pi/2) of a number.",
    examples=["ATAN(0) -> 0", "ROUND(ATAN(1), 9) -> 0.785398163", "ROUND(ATAN(1E300), 9) -> 1.570796327"],
    cost=Cost.const(30),
    can_error=False,
)
def atan(number: Number) -> Decimal:
    return _from_trig(math.atan(float(number)))


@builtin(
    "ATAN2",
    sig(p("x_num", _N), p("y_num", _N), returns=_N),
    doc="The angle in radians (-pi to pi) of the point (x, y); note Excel's order: x first.",
    examples=["ROUND(ATAN2(1, 1), 9) -> 0.785398163", "ROUND(ATAN2(-1, -1), 9) -> -2.35619449",
              "ATAN2(1, 0) -> 0", "ATAN2(0, 0) -> #DIV/0!"],
    cost=Cost.const(30),
    errors=("#DIV/0!",),
)
def atan2(x_num: Number, y_num: Number) -> Decimal:
    if not x_num and not y_num:
        raise XLError(DIV0, "ATAN2 of the origin")
    return _from_trig(math.atan2(float(y_num), float(x_num)))


@builtin(
    "DEGREES",
    sig(p("angle", _N, doc="in radians"), returns=_N),
    doc="Radians converted to degrees (to 32 significant digits).",
    examples=["DEGREES(PI()) -> 180", "DEGREES(PI()/2) -> 90", "DEGREES(0) -> 0"],
    cost=Cost.const(30),
    errors=("#NUM!",),
)
def degrees(angle: Number) -> Decimal:
    w = nm.WIDE
    # Angles in radians come from PI(), good to 34 digits: the last two digits of the result
    # are that noise, so it is kept to 32 (DEGREES(PI()/2) is exactly 90, as in Excel).
    return nm.finish(_DEGREES_DIGITS.plus(w.divide(w.multiply(nm.dec(angle), 180), nm.PI)))


@builtin(
    "RADIANS",
    sig(p("angle", _N, doc="in degrees"), returns=_N),
    doc="Degrees converted to radians.",
    examples=["RADIANS(180) -> PI()", "ROUND(RADIANS(270), 9) -> 4.71238898", "RADIANS(0) -> 0"],
    cost=Cost.const(30),
    can_error=False,
)
def radians(angle: Number) -> Decimal:
    w = nm.WIDE
    return nm.finish(w.divide(w.multiply(nm.dec(angle), nm.PI), 180))


# ------------------------------------------------------------------------- integer functions


def _natural(value: Number, name: str) -> int:
    """An argument of GCD/LCM: truncated, 0 <= n < 2^53 (Excel's documented range)."""
    if value < 0:
        raise XLError(NUM, f"{name} needs numbers >= 0")
    if value >= _INT_LIMIT:
        raise XLError(NUM, f"{name} needs numbers below 2^53")
    return nm.trunc_int(value)


@builtin(
    "GCD",
    sig(p("number1", many(_N)), returns=_N, repeat=1),
    doc="The greatest common divisor of integers (decimals truncated, blanks skipped).",
    examples=["GCD(24, 36) -> 12", "GCD([5, 10], 15.9) -> 5", "GCD(0, 7) -> 7", "GCD(-2, 4) -> #NUM!"],
    polars=Refuse(_NO_GCD), sql=Refuse(_LISTS_SQL),
    cost=Cost.linear(10, 5),
    errors=("#NUM!",),
)
def gcd(*numbers: Any) -> int:
    from ._listnum import array_integers

    return math.gcd(*(_natural(v, "GCD") for v in array_integers(numbers)))


@builtin(
    "LCM",
    sig(p("number1", many(_N)), returns=_N, repeat=1),
    doc="The least common multiple of integers (decimals truncated, blanks skipped).",
    examples=["LCM(4, 6) -> 12", "LCM([2, 3], 5.5) -> 30", "LCM(0, 5) -> 0", "LCM(-1, 2) -> #NUM!"],
    polars=Refuse(_NO_GCD), sql=Refuse(_LISTS_SQL),
    cost=Cost.linear(10, 5),
    errors=("#NUM!",),
)
def lcm(*numbers: Any) -> Decimal:
    from ._listnum import array_integers

    values = [_natural(v, "LCM") for v in array_integers(numbers)]
    if 0 in values:
        return nm.finish(0)  # a multiple of 0 is 0, however large the others' LCM
    result = 1
    for v in values:
        result = math.lcm(result, v)
        if result >= 2**53:  # Excel: an LCM of 2^53 or more is #NUM! (and stays exact below)
            raise XLError(NUM, "the LCM is 2^53 or more")
    return nm.finish(result)


@builtin(
    "FACT",
    sig(p("number", _N), returns=_N),
    doc="The factorial of a number (decimals truncated); #NUM! for negatives and above 170.",
    examples=["FACT(5) -> 120", "FACT(1.9) -> 1", "FACT(0) -> 1", "FACT(-1) -> #NUM!",
              "FACT(171) -> #NUM!"],
    cost=Cost.const(40),
    errors=("#NUM!",),
)
def fact(number: Number) -> Decimal:
    if number < 0:
        raise XLError(NUM, "FACT of a negative number")
    if number >= 171:  # 171! > 1e308: refuse before computing
        raise XLError(NUM, "FACT result too large")
    return nm.finish(math.factorial(nm.trunc_int(number)))


@builtin(
    "COMBIN",
    sig(p("number", _N), p("number_chosen", _N), returns=_N),
    doc="The number of ways to choose number_chosen items from number (decimals truncated).",
    examples=["COMBIN(8, 2) -> 28", "COMBIN(10, 0) -> 1", "COMBIN(3, 4) -> #NUM!",
              "COMBIN(-1, 0) -> #NUM!", "COMBIN(2000, 1000) -> #NUM!"],
    polars=Refuse(_NO_COMBIN), sql=Refuse(_NO_COMBIN),
    cost=Cost.const(300),
    errors=("#NUM!",),
)
def combin(number: Number, number_chosen: Number) -> Decimal:
    n = nm.trunc_int(number)
    k = nm.trunc_int(number_chosen)
    if n < 0 or k < 0 or n < k:
        raise XLError(NUM, "COMBIN needs 0 <= number_chosen <= number")
    k = min(k, n - k)
    if k == 0:
        return _ONE
    # C(n, k) >= (n/k)^k: refuse before computing when even that bound reaches 1e308. Past
    # the check k <= 1024 (since n/k >= 2), so the exact product stays small.
    if k * (math.log10(n) - math.log10(k)) >= 308:
        raise XLError(NUM, "COMBIN result too large")
    return nm.finish(math.comb(n, k))


@builtin(
    "SUMSQ",
    sig(p("number1", many(_N)), returns=_N, repeat=1),
    doc="The sum of the squares of numbers and lists (blanks skipped).",
    examples=["SUMSQ(3, 4) -> 25", "SUMSQ([1, 2], -3) -> 14", "SUMSQ([]) -> 0",
              "SUMSQ(1E200) -> #NUM!"],
    sql=Refuse(_LISTS_SQL),
    cost=Cost.linear(8, 5),
    errors=("#NUM!",),
)
def sumsq(*numbers: Any) -> Decimal:
    total = _ZERO
    try:
        for v in nm.flatten_numbers(numbers):
            d = nm.dec(v)
            total = CONTEXT.fma(d, d, total)
    except ArithmeticError:
        raise XLError(NUM, "SUMSQ result too large") from None
    return nm.finish(total)
