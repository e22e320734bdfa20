"""Polars and SQL forms of the elementwise float functions added for Excel fidelity (private):
the hyperbolic and reciprocal trigonometric functions, SQRTPI, SLN, SYD, DELTA, GESTEP,
STANDARDIZE, FISHER and FISHERINV (``polars_<name>`` / ``sql_<name>``).

Contract: each form mirrors its scalar twin (`trig`, `depreciation`, `engineering`,
`distributions`): the same domain errors, tested on the arguments before the float formula
runs (the formula sees NULL outside its domain), and a float64 result that is ``#NUM!`` when
it is not finite or reaches 1e308, as the scalar engine's `_numeric.from_float`. Decimal mode
comes back through the math family's `_number` (results of 1e20 or more are ``#NUM!``). The
helpers are the math family's (`_math_forms`), so both backends keep one numeric policy.
Importing this imports neither polars nor sqlglot until a form is called.
"""

from __future__ import annotations

import math
from typing import Any

from ._lazy_forms import LazyModule

pl: Any = LazyModule("polars")
_pf: Any = LazyModule("formulane.functions._math_forms.polars_forms")
_sf: Any = LazyModule("formulane.functions._math_forms.sql_forms")
_ex: Any = LazyModule("sqlglot.expressions")

_TRIG_LIMIT = float(2**27)
_SINH_LIMIT = 710.0  # sinh/cosh reach 1e308 just below this; the result test decides
_BIG = 1e308


# ---------------------------------------------------------------------------------- polars


def _pl_out(value: Any, errors: list[tuple[Any, str]]) -> Any:
    bad = value.is_nan() | (value.abs() >= _BIG)
    return _pf._with(errors + [(bad, "#NUM!")], _pf._number(value))


def _pl_unary(name: str, x: Any) -> Any:
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
    return _pl_out(value, errors)


def _unary_pair(name: str) -> tuple[Any, Any]:
    return (lambda x: _pl_unary(name, x)), (lambda x: _sql_unary(name, x))


def polars_sqrtpi(x: Any) -> Any:
    v = _pf._float_of(x)
    return _pl_out((pl.when(v >= 0).then(v) * math.pi).sqrt(), [(v < 0, "#NUM!")])


def polars_sln(cost: Any, salvage: Any, life: Any) -> Any:
    c, s, n = (_pf._float_of(a) for a in (cost, salvage, life))
    return _pl_out((c - s) / pl.when(n != 0).then(n), [(n == 0, "#DIV/0!")])


def polars_syd(cost: Any, salvage: Any, life: Any, per: Any) -> Any:
    c, s, n, p = (_pf._float_of(a) for a in (cost, salvage, life, per))
    bad = (n <= 0) | (p <= 0) | (p > n)
    m = pl.when(~bad).then(n)
    return _pl_out((c - s) * (m - p + 1) * 2 / (m * (m + 1)), [(bad, "#NUM!")])


def polars_delta(a: Any, b: Any) -> Any:
    return _pf._with([], _pf._number(pl.when(a == b).then(1.0).otherwise(0.0)))


def polars_gestep(a: Any, b: Any) -> Any:
    return _pf._with([], _pf._number(pl.when(a >= b).then(1.0).otherwise(0.0)))


def polars_standardize(x: Any, mean: Any, sd: Any) -> Any:
    v, m, s = (_pf._float_of(a) for a in (x, mean, sd))
    return _pl_out((v - m) / pl.when(s > 0).then(s), [(s <= 0, "#NUM!")])


def polars_fisher(x: Any) -> Any:
    v = _pf._float_of(x)
    bad = v.abs() >= 1
    return _pl_out(pl.when(~bad).then(v).arctanh(), [(bad, "#NUM!")])


def polars_fisherinv(y: Any) -> Any:
    return _pl_out(_pf._float_of(y).tanh(), [])


# ------------------------------------------------------------------------------------- SQL


def _sql_out(value: Any, errors: list[tuple[Any, str]]) -> Any:
    return _sf._guarded(value, errors)


def _sql_unary(name: str, x: Any) -> Any:
    s = _sf
    a = s._abs(x)
    big = s._ge(a, s._n(_TRIG_LIMIT))
    zero = s._eq(x, s._n(0))
    if name in ("sinh", "cosh"):
        errors, ok = [(s._gt(a, s._n(_SINH_LIMIT)), "#NUM!")], s._le(a, s._n(_SINH_LIMIT))
    elif name == "acosh":
        errors, ok = [(s._lt(x, s._n(1)), "#NUM!")], s._ge(x, s._n(1))
    elif name == "atanh":
        errors, ok = [(s._ge(a, s._n(1)), "#NUM!")], s._lt(a, s._n(1))
    elif name == "acoth":
        errors, ok = [(s._le(a, s._n(1)), "#NUM!")], s._gt(a, s._n(1))
    elif name in ("cot", "csc", "coth", "csch"):
        errors = [(big, "#NUM!"), (s._and(s._not(big), zero), "#DIV/0!")]
        ok = s._and(s._not(big), s._not(zero))
    elif name in ("sec", "sech"):
        errors, ok = [(big, "#NUM!")], s._not(big)
    else:
        errors, ok = [], None
    u = s._only(ok, x) if ok is not None else s._double(x)
    one = s._n(1.0)
    e = _ex.Exp(this=s._neg(s._abs(u)))

    def f(fn: str, arg: Any = u) -> Any:
        return s._fn(fn, arg)

    value = {
        "sinh": lambda: f("SINH"), "cosh": lambda: f("COSH"), "tanh": lambda: f("TANH"),
        "asinh": lambda: f("ASINH"), "acosh": lambda: f("ACOSH"), "atanh": lambda: f("ATANH"),
        "cot": lambda: s._div(_ex.Cos(this=u), _ex.Sin(this=u)),
        "acot": lambda: s._case(
            [(s._eq(u, s._n(0)), s._n(math.pi / 2)),
             (s._lt(u, s._n(0)), s._add(_ex.Atan(this=s._div(one, u)), s._n(math.pi)))],
            _ex.Atan(this=s._div(one, s._nullif_zero(u)))),
        "coth": lambda: s._div(one, f("TANH")),
        "acoth": lambda: s._mul(s._n(0.5), _ex.Ln(this=s._div(s._add(u, one), s._sub(u, one)))),
        "csc": lambda: s._div(one, _ex.Sin(this=u)),
        "sec": lambda: s._div(one, _ex.Cos(this=u)),
        "csch": lambda: s._case(
            [(s._le(a, one), s._div(one, s._nullif_zero(f("SINH"))))],
            s._mul(_ex.Sign(this=u), s._div(s._mul(s._n(2.0), e), s._sub(one, s._mul(e, e))))),
        "sech": lambda: s._div(s._mul(s._n(2.0), e), s._add(one, s._mul(e, e))),
    }[name]()
    return _sql_out(value, errors)


def sql_sqrtpi(x: Any) -> Any:
    s = _sf
    return _sql_out(_ex.Sqrt(this=s._mul(s._only(s._ge(x, s._n(0)), x), s._n(math.pi))),
                    [(s._lt(x, s._n(0)), "#NUM!")])


def sql_sln(cost: Any, salvage: Any, life: Any) -> Any:
    s = _sf
    n = s._double(life)
    return _sql_out(s._div(s._sub(s._double(cost), s._double(salvage)), s._nullif_zero(n)),
                    [(s._eq(life, s._n(0)), "#DIV/0!")])


def sql_syd(cost: Any, salvage: Any, life: Any, per: Any) -> Any:
    s = _sf
    bad = s._or(s._le(life, s._n(0)), s._le(per, s._n(0)), s._gt(per, life))
    n = s._only(s._not(bad), life)
    p = s._double(per)
    top = s._mul(s._mul(s._sub(s._double(cost), s._double(salvage)),
                        s._add(s._sub(n, p), s._n(1.0))), s._n(2.0))
    return _sql_out(s._div(top, s._mul(n, s._add(n, s._n(1.0)))), [(bad, "#NUM!")])


def sql_delta(a: Any, b: Any) -> Any:
    s = _sf
    return s._case([(s._eq(a, b), s._n(1.0))], s._n(0.0)), []


def sql_gestep(a: Any, b: Any) -> Any:
    s = _sf
    return s._case([(s._ge(a, b), s._n(1.0))], s._n(0.0)), []


def sql_standardize(x: Any, mean: Any, sd: Any) -> Any:
    s = _sf
    return _sql_out(s._div(s._sub(s._double(x), s._double(mean)),
                           s._only(s._gt(sd, s._n(0)), sd)), [(s._le(sd, s._n(0)), "#NUM!")])


def sql_fisher(x: Any) -> Any:
    s = _sf
    bad = s._ge(s._abs(x), s._n(1))
    return _sql_out(s._fn("ATANH", s._only(s._not(bad), x)), [(bad, "#NUM!")])


def sql_fisherinv(y: Any) -> Any:
    return _sql_out(_sf._fn("TANH", _sf._double(y)), [])


for _name in ("sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cot", "acot", "coth", "acoth",
              "csc", "sec", "csch", "sech"):
    globals()[f"polars_{_name}"], globals()[f"sql_{_name}"] = _unary_pair(_name)
del _name
