"""SQL forms of the elementwise float functions added for Excel fidelity: the twins of
`elementwise` (the polars forms), with the same domain errors tested before the formula runs
and the math family's SQL helpers (`math.sql`: ``_guarded``, ``_only``...).

Contract: each form takes sqlglot expressions and returns ``(value, errors)``; importing this
imports sqlglot, never polars.
"""

from __future__ import annotations

import math
from typing import Any

from sqlglot import expressions as _ex

from ...call import FormCall
from . import sql as _sf
from .elementwise import _SINH_LIMIT, _TRIG_LIMIT


def _sql_out(value: Any, errors: list[tuple[Any, str]]) -> Any:
    return _sf._guarded(value, errors)


def sql_unary(call: FormCall, name: str, x: Any) -> Any:
    """The SQL twin of `elementwise.polars_unary`."""
    s: Any = _sf  # the table of lambdas below is indexed by name, then called
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


def sql_sqrtpi(call: FormCall, x: Any) -> Any:
    s = _sf
    return _sql_out(_ex.Sqrt(this=s._mul(s._only(s._ge(x, s._n(0)), x), s._n(math.pi))),
                    [(s._lt(x, s._n(0)), "#NUM!")])


def sql_sln(call: FormCall, cost: Any, salvage: Any, life: Any) -> Any:
    s = _sf
    n = s._double(life)
    return _sql_out(s._div(s._sub(s._double(cost), s._double(salvage)), s._nullif_zero(n)),
                    [(s._eq(life, s._n(0)), "#DIV/0!")])


def sql_syd(call: FormCall, cost: Any, salvage: Any, life: Any, per: Any) -> Any:
    s = _sf
    bad = s._or(s._le(life, s._n(0)), s._le(per, s._n(0)), s._gt(per, life))
    n = s._only(s._not(bad), life)
    p = s._double(per)
    top = s._mul(s._mul(s._sub(s._double(cost), s._double(salvage)),
                        s._add(s._sub(n, p), s._n(1.0))), s._n(2.0))
    return _sql_out(s._div(top, s._mul(n, s._add(n, s._n(1.0)))), [(bad, "#NUM!")])


def sql_delta(call: FormCall, a: Any, b: Any) -> Any:
    s = _sf
    return s._case([(s._eq(a, b), s._n(1.0))], s._n(0.0)), []


def sql_gestep(call: FormCall, a: Any, b: Any) -> Any:
    s = _sf
    return s._case([(s._ge(a, b), s._n(1.0))], s._n(0.0)), []


def sql_standardize(call: FormCall, x: Any, mean: Any, sd: Any) -> Any:
    s = _sf
    return _sql_out(s._div(s._sub(s._double(x), s._double(mean)),
                           s._only(s._gt(sd, s._n(0)), sd)), [(s._le(sd, s._n(0)), "#NUM!")])


def sql_fisher(call: FormCall, x: Any) -> Any:
    s = _sf
    bad = s._ge(_ex.Abs(this=x), s._n(1))
    return _sql_out(s._fn("ATANH", s._only(s._not(bad), x)), [(bad, "#NUM!")])


def sql_fisherinv(call: FormCall, y: Any) -> Any:
    return _sql_out(_sf._fn("TANH", _sf._double(y)), [])
