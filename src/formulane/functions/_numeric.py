"""Exact numeric helpers shared by the math, info and finance families (private).

Numbers arrive as `Decimal` or `int`. Everything here is exact where Excel's answer is a
multiple of a decimal step (rounding to digits or to a multiple, MOD, QUOTIENT): both operands
are scaled to integers over a common power of ten and divided with Python's integer division,
so no intermediate is ever rounded and no quotient ever exceeds the decimal precision.
Transcendental results (POWER, LN, EXP...) use the decimal module at 34 digits, after an
estimate of the result's magnitude so that ``9^9^9`` fails at once instead of computing.
Every result leaves through `finish`: rounded to the context, |x| < 1e308 (else ``#NUM!``),
no negative zero, no exponent noise (``1.2E+3`` becomes ``1200``, ``2.000`` becomes ``2``).
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from typing import Iterable, Literal

from ..values import CONTEXT, DIV0, NUM, XLError
from .spec import Cost

Number = Decimal | int
Mode = Literal["floor", "ceil", "down", "up", "half_up"]

ZERO = Decimal(0)
ONE = Decimal(1)
#: pi to 34 significant digits (the context precision).
PI = Decimal("3.141592653589793238462643383279503")
#: Wide exponent range, few digits: for magnitude estimates that must never trap.
#: Extra digits for intermediates that are rounded once at the end (LOG, IRR, RATE...).
WIDE = decimal.Context(prec=CONTEXT.prec + 16, rounding=decimal.ROUND_HALF_EVEN, Emax=10**6,
                       Emin=-(10**6), traps=[decimal.InvalidOperation, decimal.DivisionByZero])
#: The engine context, but any inexact result traps: the fast paths below run in it and fall
#: back to exact integer arithmetic when it objects (so they never round silently).
_EXACT = CONTEXT.copy()
_EXACT.traps[decimal.Inexact] = True
_EXACT.traps[decimal.Rounded] = True
_EXACT.traps[decimal.Underflow] = True
#: Digits arguments beyond this are clamped: no Number has a digit further than 10^±400.
_DIGITS_CAP = 400
_ARITH = (decimal.Overflow, decimal.InvalidOperation)
_ROUNDING = {"floor": decimal.ROUND_FLOOR, "ceil": decimal.ROUND_CEILING,
             "down": decimal.ROUND_DOWN, "up": decimal.ROUND_UP, "half_up": decimal.ROUND_HALF_UP}
_STEPS = {n: Decimal(f"1E{-n}") for n in range(-30, 31)}


def magnitude(x: Number) -> Number:
    """``abs(x)``, typed: the checkers cannot solve abs()'s type variable over the
    ``Decimal | int`` union (each branch is the plain abs of its type)."""
    return abs(x) if isinstance(x, int) else abs(x)


def dec(x: Number) -> Decimal:
    """A Number as a Decimal inside the context's range (exponent between -373 and 307)."""
    if type(x) is int:
        if -(10**34) < x < 10**34:
            return Decimal(x)
        x = Decimal(x)
    try:
        return CONTEXT.plus(x)
    except _ARITH:
        raise XLError(NUM, "number out of range") from None


def finish(x: Decimal | int) -> Decimal:
    """The engine form of a numeric result (see the module docstring); ``#NUM!`` if too big."""
    try:
        r = CONTEXT.plus(Decimal(x) if type(x) is int else x)
    except _ARITH:
        raise XLError(NUM, "the result is too large (|x| >= 1e308)") from None
    if not r.is_finite():
        raise XLError(NUM, "the result is not a finite number")
    if not r:
        return ZERO
    if r.adjusted() < CONTEXT.prec and r == r.to_integral_value():
        return r.quantize(ONE, context=CONTEXT)  # 1.2E+3 -> 1200, 3.00 -> 3
    return r.normalize(CONTEXT)  # 2.50 -> 2.5


def from_float(x: float) -> Decimal:
    """A float algorithm's result (SIN, ATAN...) as a Decimal, by its shortest repr."""
    if not math.isfinite(x) or abs(x) >= 1e308:
        raise XLError(NUM, "the result is not a finite number")
    if x.is_integer():
        return finish(int(x))
    return finish(Decimal(repr(x)))


def trunc_int(x: Number) -> int:
    """Excel's truncation of count-like arguments (digits, FACT, COMBIN...) toward zero."""
    return x if type(x) is int else int(x)


def clamp_digits(x: Number) -> int:
    """A digits argument, truncated and clamped to where digits can exist at all."""
    n = x if type(x) is int else int(x)
    if -_DIGITS_CAP <= n <= _DIGITS_CAP:
        return n
    return -_DIGITS_CAP - 10 if n < 0 else _DIGITS_CAP + 10


def parts(x: Number) -> tuple[int, int]:
    """``x == n * 10**e`` with integers n, e (exact)."""
    if type(x) is int:
        return x, 0
    d = dec(x)
    sign, digits, exp = d.as_tuple()
    n = int("".join(map(str, digits))) if digits else 0
    return (-n if sign else n), int(exp)


def from_parts(n: int, e: int) -> Decimal:
    """``n * 10**e`` as a finished result (rounded to 34 digits, range-checked)."""
    if n == 0:
        return ZERO
    return finish(Decimal(f"{n}E{e}"))


def _round_quotient(a: int, b: int, mode: Mode) -> int:
    """The integer k approximating the exact quotient a/b (b != 0) per ``mode``:
    floor/ceil toward -inf/+inf, down toward zero, up away from zero, half_up nearest with
    ties away from zero."""
    q, r = divmod(a, b)  # q = floor(a/b); r has the sign of b
    if r == 0:
        return q
    positive = (a > 0) == (b > 0)  # sign of the true quotient (never zero here)
    if mode == "floor":
        return q
    if mode == "ceil":
        return q + 1
    if mode == "down":
        return q if positive else q + 1
    if mode == "up":
        return q + 1 if positive else q
    twice = 2 * abs(r)
    if twice > abs(b):
        return q + 1
    if twice < abs(b):
        return q
    return q + 1 if positive else q


def round_digits(x: Number, digits: Number, mode: Mode) -> Decimal:
    """x rounded to ``digits`` decimal places (negative: to tens, hundreds...), exactly."""
    n = clamp_digits(digits)
    step = _STEPS.get(n)
    if step is not None:
        d = dec(x)
        if d.adjusted() + n < CONTEXT.prec - 1:  # the rounded coefficient fits: quantize is exact
            return finish(d.quantize(step, rounding=_ROUNDING[mode], context=CONTEXT))
    m, e = parts(x)
    if e >= -n:
        return finish(x)  # already on the grid: nothing to drop
    if n < -_DIGITS_CAP:
        # The step 10^-n is beyond any Number: everything but ROUNDUP of a nonzero gives 0.
        if mode == "up" and m:
            raise XLError(NUM, "the result is too large (|x| >= 1e308)")
        return ZERO
    k = _round_quotient(m, 10 ** (-n - e), mode)
    return from_parts(k, -n)


def round_multiple(x: Number, step: Number, mode: Mode) -> Decimal:
    """``k * step`` for the integer k approximating x/step per ``mode`` (step != 0), exactly."""
    if not step:
        raise XLError(DIV0, "the multiple is zero")
    try:
        return _round_multiple_fast(dec(x), dec(step), mode)
    except decimal.DecimalException:
        pass  # a quotient beyond 34 digits or an inexact step: do it with integers
    a, ea = parts(x)
    b, eb = parts(step)
    if b == 0:
        raise XLError(DIV0, "the multiple is zero")
    e = min(ea, eb)
    a *= 10 ** (ea - e)
    b *= 10 ** (eb - e)
    return from_parts(_round_quotient(a, b, mode) * b, e)


def _round_multiple_fast(a: Decimal, s: Decimal, mode: Mode) -> Decimal:
    r = _EXACT.remainder(a, s)  # sign of a; a - r = trunc(a/s) * s
    if not r:
        return finish(a)
    t = _EXACT.subtract(a, r)
    positive = (a > 0) == (s > 0)
    away = _EXACT.add(t, s) if positive else _EXACT.subtract(t, s)
    if mode == "down":
        k = t
    elif mode == "up":
        k = away
    elif mode == "floor":
        k = t if positive else away
    elif mode == "ceil":
        k = away if positive else t
    else:
        k = t if _EXACT.multiply(2, r.copy_abs()) < s.copy_abs() else away
    return finish(k)


def int_mod(x: Number, d: Number) -> Decimal:
    """x - d*INT(x/d): the remainder with the sign of the divisor (Excel MOD), exactly."""
    if not d:
        raise XLError(DIV0, "MOD by zero")
    try:
        a, s = dec(x), dec(d)
        r = _EXACT.remainder(a, s)
        if r and (r < 0) != (s < 0):
            r = _EXACT.add(r, s)
        return finish(r)
    except decimal.DecimalException:
        pass
    n, ea = parts(x)
    m, eb = parts(d)
    if m == 0:
        raise XLError(DIV0, "MOD by zero")
    e = min(ea, eb)
    return from_parts((n * 10 ** (ea - e)) % (m * 10 ** (eb - e)), e)


def int_quotient(x: Number, d: Number) -> Decimal:
    """The integer part of x/d, truncated toward zero (Excel QUOTIENT), exactly."""
    if not d:
        raise XLError(DIV0, "QUOTIENT by zero")
    try:
        return finish(_EXACT.divide_int(dec(x), dec(d)))
    except decimal.DecimalException:
        pass
    a, ea = parts(x)
    b, eb = parts(d)
    if b == 0:
        raise XLError(DIV0, "QUOTIENT by zero")
    e = min(ea, eb)
    return from_parts(_round_quotient(a * 10 ** (ea - e), b * 10 ** (eb - e), "down"), 0)


#: The price of a power (POWER and ``^``): a fractional exponent is about 50 µs of 34-digit
#: decimal work (measured), an integral one far less; priced for the former.
POWER_COST = Cost.const(500)


def power(base: Number, exponent: Number) -> Decimal:
    """base^exponent with Excel's errors: 0^0 and a negative base with a fractional exponent
    are ``#NUM!``, 0^negative is ``#DIV/0!``, results of 1e308 or more are ``#NUM!``. The
    magnitude is estimated from logarithms first, so huge powers fail without computing."""
    b = dec(base)
    e = dec(exponent)
    if not b:
        if not e:
            raise XLError(NUM, "0^0 is undefined")
        if e < 0:
            raise XLError(DIV0, "0 raised to a negative power")
        return ZERO
    if not e:
        return ONE
    integral = e == e.to_integral_value()
    if b < 0 and not integral:
        raise XLError(NUM, "a negative number raised to a fractional power")
    if abs(b) == ONE:
        # (+-1)^e: exact, and parity decided on the integer (e may be 1e300).
        return ONE if b > 0 or int(e) % 2 == 0 else -ONE
    # log10|b| from the exponent and a float of the mantissa: within 1e-15 of Decimal's
    # log10 and ten times cheaper; the thresholds below have a decade of slack, and `finish`
    # checks the exact result anyway.
    a = b.adjusted()
    estimate = (a + math.log10(float(b.scaleb(-a).copy_abs()))) * float(e)
    if estimate > 309:
        raise XLError(NUM, "the result is too large (|x| >= 1e308)")
    if estimate < -400:
        return ZERO  # below the smallest Number: underflows to zero
    try:
        return finish(CONTEXT.power(b, e))
    except _ARITH:
        raise XLError(NUM, "the result is too large (|x| >= 1e308)") from None


def flatten_numbers(args: Iterable[object]) -> list[Number]:
    """The numbers of ``many(NUMBER)`` arguments in order, blanks skipped."""
    out: list[Number] = []
    for arg in args:
        if type(arg) is tuple:
            out.extend(v for v in arg if v is not None)
        elif arg is not None:
            out.append(arg)  # type: ignore[arg-type]
    return out


__all__ = [
    "Mode", "Number", "ONE", "PI", "WIDE", "ZERO", "clamp_digits", "dec", "finish",
    "flatten_numbers", "from_float", "from_parts", "int_mod", "int_quotient", "parts", "power",
    "POWER_COST",
    "round_digits", "round_multiple", "trunc_int",
]
