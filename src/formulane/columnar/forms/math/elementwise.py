"""Polars and SQL forms of the elementwise float functions added for Excel fidelity (private):
the hyperbolic and reciprocal trigonometric functions, SQRTPI, SLN, SYD, DELTA, GESTEP,
STANDARDIZE, FISHER and FISHERINV (this module: the polars forms; `elementwise_sql`: the SQL forms).

Contract: each form mirrors its scalar twin (`trig`, `depreciation`, `engineering`,
`distributions`): the same domain errors, tested on the arguments before the float formula runs
(the formula sees NULL outside its domain), and a float64 result that is ``#NUM!`` when it is
not finite or reaches 1e308, as the scalar engine's `_numeric.from_float`. Decimal mode comes
back through the math family's `_number` (results of 1e20 or more are ``#NUM!``). The helpers
are the math family's (`math.polars`, `math.sql`), so both backends keep one numeric policy.
Importing this imports neither polars nor sqlglot until a form is called.
"""

from __future__ import annotations

import math
from typing import Any

from ...call import FormCall
from .. import _lazy
from . import polars as _pf

pl: Any = _lazy.pl

_TRIG_LIMIT = float(2**27)
_SINH_LIMIT = 710.0  # sinh/cosh reach 1e308 just below this; the result test decides
_BIG = 1e308


def _pl_out(call: FormCall, value: Any, errors: list[tuple[Any, str]]) -> Any:
    bad = value.is_nan() | (value.abs() >= _BIG)
    return _pf._with(errors + [(bad, "#NUM!")], _pf._number(call, value))


def polars_unary(call: FormCall, name: str, x: Any) -> Any:
    """The hyperbolic or reciprocal trigonometric function ``name`` (the table binds it)."""
    v = _pf._float_of(x)
    a = v.abs()
    big = a >= _TRIG_LIMIT
    zero = v == 0
    ok = pl.lit(True)
    if name in ("sinh", "cosh"):
        errors = [(a > _SINH_LIMIT, "#NUM!")]
        ok = a <= _SINH_LIMIT
    elif name == "acosh":
        errors, ok = [(v < 1, "#NUM!")], v >= 1
    elif name == "atanh":
        errors, ok = [(a >= 1, "#NUM!")], a < 1
    elif name == "acoth":
        errors, ok = [(a <= 1, "#NUM!")], a > 1
    elif name in ("cot", "csc", "coth", "csch"):
        errors, ok = [(big, "#NUM!"), (~big & zero, "#DIV/0!")], ~big & ~zero
    elif name in ("sec", "sech"):
        errors, ok = [(big, "#NUM!")], ~big
    else:
        errors = []
    u = pl.when(ok).then(v)
    e = (-u.abs()).exp()  # e^-|x| keeps csch and sech finite for large |x|
    value = {
        "sinh": lambda: u.sinh(), "cosh": lambda: u.cosh(), "tanh": lambda: u.tanh(),
        "asinh": lambda: u.arcsinh(), "acosh": lambda: u.arccosh(),
        "atanh": lambda: u.arctanh(),
        "cot": lambda: u.cos() / u.sin(), "acot": lambda: pl.when(u == 0).then(math.pi / 2).when(u < 0)
        .then((1 / u).arctan() + math.pi).otherwise((1 / u).arctan()),
        "coth": lambda: 1 / u.tanh(), "acoth": lambda: 0.5 * ((u + 1) / (u - 1)).log(),
        "csc": lambda: 1 / u.sin(), "sec": lambda: 1 / u.cos(),
        "csch": lambda: pl.when(a <= 1).then(1 / u.sinh())
        .otherwise(u.sign() * 2 * e / (1 - e * e)),
        "sech": lambda: 2 * e / (1 + e * e),
    }[name]()
    return _pl_out(call, value, errors)


def polars_sqrtpi(call: FormCall, x: Any) -> Any:
    v = _pf._float_of(x)
    return _pl_out(call, (pl.when(v >= 0).then(v) * math.pi).sqrt(), [(v < 0, "#NUM!")])


def polars_sln(call: FormCall, cost: Any, salvage: Any, life: Any) -> Any:
    c, s, n = (_pf._float_of(a) for a in (cost, salvage, life))
    return _pl_out(call, (c - s) / pl.when(n != 0).then(n), [(n == 0, "#DIV/0!")])


def polars_syd(call: FormCall, cost: Any, salvage: Any, life: Any, per: Any) -> Any:
    c, s, n, p = (_pf._float_of(a) for a in (cost, salvage, life, per))
    bad = (n <= 0) | (p <= 0) | (p > n)
    m = pl.when(~bad).then(n)
    return _pl_out(call, (c - s) * (m - p + 1) * 2 / (m * (m + 1)), [(bad, "#NUM!")])


def polars_delta(call: FormCall, a: Any, b: Any) -> Any:
    return _pf._with([], _pf._number(call, pl.when(a == b).then(1.0).otherwise(0.0)))


def polars_gestep(call: FormCall, a: Any, b: Any) -> Any:
    return _pf._with([], _pf._number(call, pl.when(a >= b).then(1.0).otherwise(0.0)))


def polars_standardize(call: FormCall, x: Any, mean: Any, sd: Any) -> Any:
    v, m, s = (_pf._float_of(a) for a in (x, mean, sd))
    return _pl_out(call, (v - m) / pl.when(s > 0).then(s), [(s <= 0, "#NUM!")])


def polars_fisher(call: FormCall, x: Any) -> Any:
    v = _pf._float_of(x)
    bad = v.abs() >= 1
    return _pl_out(call, pl.when(~bad).then(v).arctanh(), [(bad, "#NUM!")])


def polars_fisherinv(call: FormCall, y: Any) -> Any:
    return _pl_out(call, _pf._float_of(y).tanh(), [])
