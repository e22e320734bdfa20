"""Hyperbolic and reciprocal trigonometric functions, and SQRTPI.

Contract: as the math family's SIN and COS, these compute in binary floating point (as Excel
does) and return the float's shortest repr as a Decimal (`_numeric.from_float`); a result that
is not finite or reaches 1e308 is ``#NUM!``. Excel's domains: COT, CSC, SEC, COTH, CSCH and SECH
refuse arguments of 2^27 or more in magnitude (``#NUM!``), a reciprocal of 0 is ``#DIV/0!``,
ACOSH needs x >= 1, ATANH |x| < 1, ACOTH |x| > 1. Every function has a polars and a SQL form
(`columnar/forms/math/elementwise*`) with the same errors, computed in float64.
"""

from __future__ import annotations

import math
from typing import Callable

from ..types import NUMBER
from ..values import DIV0, NUM, XLError
from . import _numeric as nm
from ._numeric import Number
from .spec import Cost, FunctionSpec, builtin, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "trig"

_TRIG_LIMIT = 2**27


def _reciprocal(x: float, f: Callable[[float], float], what: str) -> float:
    value = f(x)
    if value == 0:
        raise XLError(DIV0, f"{what} of this angle divides by zero")
    return 1.0 / value


def _csch(x: float) -> float:
    if x == 0:
        raise XLError(DIV0, "CSCH(0) divides by zero")
    e = math.exp(-abs(x))  # 2e^-|x| / (1 - e^-2|x|): finite for every x
    return math.copysign(2 * e / (1 - e * e), x) if abs(x) > 1 else 1 / math.sinh(x)


def _acot(x: float) -> float:
    if x == 0:
        return math.pi / 2
    value = math.atan(1 / x)  # pi/2 - atan(x) would cancel for large x
    return value + math.pi if x < 0 else value


def _sech(x: float) -> float:
    e = math.exp(-abs(x))
    return 2 * e / (1 + e * e)


def _declare(name: str, f: Callable[[float], float], doc: str, examples: list[str],
             domain: Callable[[float], str | None] = lambda x: None, limit: bool = False,
             errors: tuple[str, ...] = ("#NUM!",)) -> FunctionSpec:
    """One unary float function: domain check (a message means #NUM!), 2^27 limit, float."""

    def impl(number: Number) -> object:
        if limit and nm.magnitude(number) >= _TRIG_LIMIT:
            raise XLError(NUM, f"{name} needs |number| < 2^27")
        x = float(number)
        problem = domain(x)
        if problem:
            raise XLError(NUM, f"{name} {problem}")
        try:
            return nm.from_float(f(x))
        except (OverflowError, ValueError):
            raise XLError(NUM, f"{name} is out of range for this number") from None

    impl.__name__ = name.lower()
    impl.__module__ = __name__
    return builtin(name, sig(p("number", NUMBER), returns=NUMBER), doc=doc, examples=examples,
                   cost=Cost.const(4), errors=errors)(impl)


SINH = _declare("SINH", math.sinh, "The hyperbolic sine of a number; #NUM! when it overflows.",
                ["SINH(0) -> 0", "ROUND(SINH(1), 9) -> 1.175201194", "SINH(1000) -> #NUM!"])
COSH = _declare("COSH", math.cosh, "The hyperbolic cosine of a number; #NUM! when it overflows.",
                ["COSH(0) -> 1", "ROUND(COSH(4), 6) -> 27.308233", "COSH(-1000) -> #NUM!"])
TANH = _declare("TANH", math.tanh, "The hyperbolic tangent of a number (between -1 and 1).",
                ["TANH(0) -> 0", "ROUND(TANH(-2), 6) -> -0.964028", "TANH(1000) -> 1"], errors=())
ASINH = _declare("ASINH", math.asinh, "The inverse hyperbolic sine of a number.",
                 ["ASINH(0) -> 0", "ROUND(ASINH(-2.5), 6) -> -1.647231",
                  "ROUND(ASINH(10), 6) -> 2.998223"], errors=())
ACOSH = _declare("ACOSH", math.acosh, "The inverse hyperbolic cosine of a number >= 1.",
                 ["ACOSH(1) -> 0", "ROUND(ACOSH(10), 6) -> 2.993223", "ACOSH(0.5) -> #NUM!"],
                 domain=lambda x: "needs number >= 1" if x < 1 else None)
ATANH = _declare("ATANH", math.atanh,
                 "The inverse hyperbolic tangent of a number strictly between -1 and 1.",
                 ["ATANH(0) -> 0", "ROUND(ATANH(0.76159416), 6) -> 1",
                  "ROUND(ATANH(-0.1), 6) -> -0.100335", "ATANH(1) -> #NUM!"],
                 domain=lambda x: "needs -1 < number < 1" if abs(x) >= 1 else None)
COT = _declare("COT", lambda x: _reciprocal(x, math.tan, "COT"),
               "The cotangent of an angle in radians; #DIV/0! at 0, #NUM! from |x| >= 2^27.",
               ["ROUND(COT(30), 9) -> -0.156119952", "ROUND(COT(45), 9) -> 0.617369624",
                "COT(0) -> #DIV/0!", "COT(2^27) -> #NUM!"], limit=True,
               errors=("#NUM!", "#DIV/0!"))
ACOT = _declare("ACOT", lambda x: _acot(x),
                "The arccotangent of a number, in radians between 0 and pi.",
                ["ROUND(ACOT(2), 6) -> 0.463648", "ROUND(ACOT(0), 9) -> 1.570796327",
                 "ROUND(ACOT(-1), 6) -> 2.356194"], errors=())
COTH = _declare("COTH", lambda x: _reciprocal(x, math.tanh, "COTH"),
                "The hyperbolic cotangent of a number; #DIV/0! at 0, #NUM! from |x| >= 2^27.",
                ["ROUND(COTH(2), 6) -> 1.037315", "COTH(0) -> #DIV/0!", "COTH(2^27) -> #NUM!"],
                limit=True, errors=("#NUM!", "#DIV/0!"))
ACOTH = _declare("ACOTH", lambda x: 0.5 * math.log((x + 1) / (x - 1)),
                 "The inverse hyperbolic cotangent of a number with |number| > 1.",
                 ["ROUND(ACOTH(6), 6) -> 0.168236", "ROUND(ACOTH(-2), 6) -> -0.549306",
                  "ACOTH(1) -> #NUM!"],
                 domain=lambda x: "needs |number| > 1" if abs(x) <= 1 else None)
CSC = _declare("CSC", lambda x: _reciprocal(x, math.sin, "CSC"),
               "The cosecant of an angle in radians; #DIV/0! at 0, #NUM! from |x| >= 2^27.",
               ["ROUND(CSC(15), 9) -> 1.537780562", "ROUND(CSC(PI() / 2), 9) -> 1", "CSC(0) -> #DIV/0!"],
               limit=True, errors=("#NUM!", "#DIV/0!"))
SEC = _declare("SEC", lambda x: 1.0 / math.cos(x),
               "The secant of an angle in radians; #NUM! from |x| >= 2^27.",
               ["ROUND(SEC(45), 6) -> 1.903594", "SEC(0) -> 1", "SEC(2^27) -> #NUM!"],
               limit=True)
CSCH = _declare("CSCH", _csch,
                "The hyperbolic cosecant of a number; #DIV/0! at 0, #NUM! from |x| >= 2^27.",
                ["ROUND(CSCH(1.5), 6) -> 0.469642", "CSCH(0) -> #DIV/0!",
                 "ROUND(CSCH(-1), 6) -> -0.850918"], limit=True, errors=("#NUM!", "#DIV/0!"))
SECH = _declare("SECH", _sech, "The hyperbolic secant of a number; #NUM! from |x| >= 2^27.",
                ["SECH(45) < 1E-19 -> TRUE", "SECH(0) -> 1", "ROUND(SECH(1), 6) -> 0.648054"],
                limit=True)
SQRTPI = _declare("SQRTPI", lambda x: math.sqrt(x * math.pi),
                  "The square root of number * pi; #NUM! for a negative number.",
                  ["ROUND(SQRTPI(1), 9) -> 1.772453851", "ROUND(SQRTPI(2), 9) -> 2.506628275",
                   "SQRTPI(0) -> 0", "SQRTPI(-1) -> #NUM!"],
                  domain=lambda x: "needs number >= 0" if x < 0 else None)
