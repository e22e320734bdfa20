"""List forms of the statistics pack: MODE.SNGL GEOMEAN HARMEAN AVEDEV DEVSQ QUARTILE.INC
RANK.EQ/AVG CORREL RSQ COVARIANCE.P/S SLOPE INTERCEPT NORM.DIST NORM.S.DIST.

Contract: moments compute in float64 (DOUBLE in SQL) on lists scaled by their largest
magnitude; "no spread" is decided exactly (min = max), so the error values match the scalar's.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable, cast

from sqlglot import exp

from ...sql.kit import dtype
from ._base import (
    FormCall, _at, _case, _coalesce, _e, _f, _known_count, _known_items, _known_len,
    _known_number, _lam, _len, _MISSING, _n, _not_null, _num, _op, _or, _p, pl, _pl_empty_like,
    _pl_int, _pl_items, _pl_range_errors, _pl_with, _sql_checked, _sql_count, _sql_errors,
    _sql_items, _sql_let, _sql_present, _sql_range_errors, _trunc,
)
from ._sql_decimal import (
    _sql_checking, _sql_picking, _sql_reading_doubles, _sql_reading_interpolated,
)
from .aggregates import _pl_percentile, _sql_percentile


# ------------------------------------------------------------------------ statistics pack


def polars_mode_sngl(c: FormCall, *values: Any) -> Any:
    items = _pl_items(c, values)
    e = _e()
    count = pl.len().over(e)
    value = items.list.agg(e.filter(count == count.max()).first())
    best = items.list.agg(pl.len().over(e).max()).fill_null(0)
    return _num(value), [(best < 2, "#N/A")]


@_sql_picking
def sql_mode_sngl(c: FormCall, *values: Any) -> Any:
    items = c.let(_sql_present(_sql_items(c, values)))  # read by the value and the error

    def counts(xs: exp.Expr) -> exp.Expr:
        """How often each item occurs in the list."""
        def occurrences(x: exp.Expr) -> exp.Expr:
            same = _f("LIST_FILTER", xs, _lam(lambda y: exp.EQ(this=y, expression=x)))
            return _len(same)

        return _f("LIST_TRANSFORM", xs, _lam(occurrences))

    def first_mode(s: dict[str, exp.Expr]) -> exp.Expr:
        position = _f("LIST_POSITION", s["n"], _f("LIST_MAX", s["n"]))
        return _at(s["xs"], position)

    value = _sql_let({"xs": items}, lambda s: _sql_let({"xs": s["xs"], "n": counts(s["xs"])},
                                                       first_mode))
    best = _sql_let({"xs": items}, lambda s: _f("LIST_MAX", counts(s["xs"])))
    return value, [(exp.LT(this=_coalesce(best, _n(0)), expression=_n(2)), "#N/A")]


def _pl_positive(items: Any) -> list[tuple[Any, str]]:
    n = items.list.len().fill_null(0)
    return [((n == 0) | (items.list.min() <= 0), "#NUM!")]


def _sql_positive(items: exp.Expr) -> list[tuple[Any, str]]:
    return [(_or(exp.EQ(this=_sql_count(items), expression=_n(0)),
                 exp.LTE(this=_f("LIST_MIN", items), expression=_n(0))), "#NUM!")]


def polars_geomean(c: FormCall, *values: Any) -> Any:
    items = _pl_items(c, values)
    logs = items.list.eval(pl.when(_e() > 0).then(_e().cast(pl.Float64).log()))
    return _num(logs.list.mean().exp()), _pl_positive(items)


@_sql_reading_doubles
def sql_geomean(c: FormCall, *values: Any) -> Any:
    items = _sql_items(c, values)
    logs = _f("LIST_TRANSFORM", items, _lam(lambda x: _case(
        [(exp.GT(this=x, expression=_n(0)), _f("LN", exp.cast(x, dtype("DOUBLE"))))])))
    return _f("EXP", _f("LIST_AVG", logs)), _sql_positive(items)


def polars_harmean(c: FormCall, *values: Any) -> Any:
    items = _pl_items(c, values)
    inverse = items.list.eval(pl.when(_e() > 0).then(1.0 / _e().cast(pl.Float64))).list.sum()
    return _num(items.list.len().cast(pl.Float64) / inverse), _pl_positive(items)


@_sql_reading_doubles
def sql_harmean(c: FormCall, *values: Any) -> Any:
    items = _sql_items(c, values)
    inverse = _f("LIST_SUM", _f("LIST_TRANSFORM", items, _lam(lambda x: _case(
        [(exp.GT(this=x, expression=_n(0)),
          _op("/", _n(1), exp.cast(x, dtype("DOUBLE"))))]))))
    return _op("/", _sql_count(items), _f("NULLIF", inverse, _n(0))), _sql_positive(items)


def _pl_deviations(c: FormCall, *values: Any, squares: bool) -> Any:
    items = _pl_items(c, values)
    e = _e().cast(pl.Float64)
    if squares:
        raw = items.list.agg(((e - e.mean()) ** 2).sum())
    else:
        raw = items.list.agg((e - e.mean()).abs().mean())
    flat = items.list.min() == items.list.max()
    value = pl.when(flat).then(pl.lit(0.0)).otherwise(raw)
    n = items.list.len().fill_null(0)
    return _num(value), [(n == 0, "#NUM!"), *_pl_range_errors(value)]


@_sql_reading_doubles
def _sql_deviations(c: FormCall, *values: Any, squares: bool) -> Any:
    items = c.let(_sql_items(c, values))

    def body(s: dict[str, exp.Expr]) -> exp.Expr:
        def dev(x: exp.Expr) -> exp.Expr:
            d = _op("-", exp.cast(x, dtype("DOUBLE")), s["m"])
            return _op("*", d, d) if squares else _f("ABS", d)

        each = _f("LIST_TRANSFORM", s["xs"], _lam(dev))
        return _f("LIST_SUM", each) if squares else _f("LIST_AVG", each)

    raw = _sql_let({"xs": items, "m": _f("LIST_AVG", exp.cast(
        items, dtype("DOUBLE[]")))}, body)
    flat = exp.EQ(this=_f("LIST_MIN", items), expression=_f("LIST_MAX", items))
    return _sql_checked(c, _case([(flat, _n(0))], raw), [
        (exp.EQ(this=_sql_count(items), expression=_n(0)), "#NUM!")])


def polars_quartile_inc(c: FormCall, values: Any, quart: Any) -> Any:
    q = _pl_int(quart)
    bad = (q < 0) | (q > 4)
    return _pl_percentile(values, q.cast(pl.Float64) / 4, [(bad, "#NUM!")])


@_sql_reading_interpolated
def sql_quartile_inc(c: FormCall, values: Any, quart: Any) -> Any:
    known = _known_number(c, 1)
    if known is not None:  # decided here: the quartile is a literal
        q = int(known)
        return _sql_percentile(c, values, _n(Decimal(q) / 4), [(not 0 <= q <= 4, "#NUM!")],
                               Decimal(q) / 4)
    q = c.let(_trunc(quart))
    bad = _or(exp.LT(this=q, expression=_n(0)), exp.GT(this=q, expression=_n(4)))
    return _sql_percentile(c, values, _op("/", exp.cast(q, dtype("DOUBLE")), _n(4)),
                           [(bad, "#NUM!")])


def _pl_rank(c: FormCall, number: Any, values: Any, order: Any, *, average: bool) -> Any:
    def count(test: Callable[[Any, Any], Any]) -> Any:
        return _pl_with(values, [number], lambda items, got: test(items, got[0]).sum(),
                        agg=True).cast(pl.Float64)

    equal = count(lambda x, v: x == v)
    below = count(lambda x, v: x < v)
    above = count(lambda x, v: x > v)
    ahead = pl.when(order != 0).then(below).otherwise(above)
    value = (2 * ahead + equal + 1) / 2 if average else ahead + 1
    value = pl.when(equal == 1).then(ahead + 1).otherwise(value)
    return _num(value), [(equal.fill_null(0) == 0, "#N/A")]


@_sql_checking
def _sql_rank(c: FormCall, number: Any, values: Any, order: Any, *, average: bool) -> Any:
    def count(op: str) -> exp.Expr:
        return _len(_f("LIST_FILTER", values, _lam(lambda x: _op(op, x, number))))

    equal = c.let(count("="))  # read by the value and the error
    ahead = _case([(exp.NEQ(this=order, expression=_n(0)), count("<"))], count(">"))
    if average:
        value = _op("/", exp.cast(_op("+", _op("+", _op("*", _n(2), ahead), equal), _n(1)),
                              dtype("DOUBLE")), _n(2))
    else:
        value = _op("+", ahead, _n(1))
    return value, [(exp.EQ(this=_coalesce(equal, _n(0)), expression=_n(0)), "#N/A")]


# Paired data: positions where both lists hold a number; #N/A for lists of different lengths.
# Each list is scaled by its largest magnitude first (the moments of numbers past 1e154 do not
# overflow then), and "no spread" is min = max of the paired numbers, exactly.


def _pl_moments(first: Any, second: Any) -> dict[str, Any]:
    ok = first.list.len() == second.list.len()
    a = pl.when(ok).then(first).otherwise(_pl_empty_like(first)).cast(pl.List(pl.Float64))
    b = pl.when(ok).then(second).otherwise(_pl_empty_like(second)).cast(pl.List(pl.Float64))
    px, py = a + b * 0.0, b + a * 0.0  # blank where either is blank
    n = px.list.drop_nulls().list.len().fill_null(0)

    def scale(p: Any) -> Any:
        m = pl.max_horizontal(p.list.min().abs(), p.list.max().abs())
        return pl.when(m > 0).then(m).otherwise(pl.lit(1.0))

    sx, sy = scale(px), scale(py)
    ux, uy = px / sx, py / sy
    dx, dy = ux - ux.list.mean(), uy - uy.list.mean()
    return {
        "ok": ok, "n": n, "sx": sx, "sy": sy, "mux": ux.list.mean(),
        "mx": px.list.mean(), "my": py.list.mean(),
        "sxx": (dx * dx).list.sum(), "syy": (dy * dy).list.sum(), "sxy": (dx * dy).list.sum(),
        "flat_x": px.list.min() == px.list.max(), "flat_y": py.list.min() == py.list.max(),
    }


def _sql_paired(first: Any, second: Any) -> tuple[exp.Expr, exp.Expr]:
    px = _f("LIST_TRANSFORM", first, _lam(
        lambda x, i: _case([(_not_null(_at(second, i)), exp.cast(
            x, dtype("DOUBLE")))]), 2))
    py = _f("LIST_TRANSFORM", second, _lam(
        lambda y, i: _case([(_not_null(_at(first, i)), exp.cast(
            y, dtype("DOUBLE")))]), 2))
    return px, py


def _sql_moments(c: FormCall, first: Any, second: Any, minimum: int, flat: str,
                 body: Callable[[dict[str, exp.Expr]], exp.Expr], swap: bool = False) -> Any:
    """``(value, errors)``: ``body`` of the moments of the pairs of ``first`` and ``second``
    where both are numbers (each read once per row: `_sql_let`), and the errors every
    two-list statistic checks: lists of different lengths (#N/A), fewer than ``minimum``
    pairs, no spread in x or y (``flat``, #DIV/0!). ``swap``: ``first`` is the call's second
    argument. Lengths and pair counts the compiler knows are decided here."""
    i, j = (1, 0) if swap else (0, 1)
    n1, n2 = _known_len(c, i), _known_len(c, j)
    pairs = n1 if n1 is not None and n1 == n2 and _known_count(c, i, i + 1) == n1 \
        and _known_count(c, j, j + 1) == n2 else None  # no blank item on either side
    mismatch = n1 != n2 if n1 is not None and n2 is not None \
        else exp.NEQ(this=_len(first), expression=_len(second))
    flats: dict[str, Any] = {}
    for which, k in (("x", i), ("y", j)):
        known = _known_items(c, k) if pairs is not None and which in flat else None
        if known is not None:  # no blank item: the pairs are these items
            flats[which] = len(set(known)) <= 1
    if mismatch is True or (pairs is not None and pairs < minimum) or True in flats.values():
        return exp.Null(), _sql_errors([(mismatch, "#N/A"), (True, "#DIV/0!")])
    px, py = _sql_paired(first, second)
    px, py = c.let(px), c.let(py)  # read by the moments and by the errors
    errors: list[tuple[Any, str]] = _sql_errors([
        (mismatch, "#N/A"),
        (False if pairs is not None else exp.LT(this=_sql_count(px), expression=_n(minimum)),
         "#DIV/0!")])
    for which, p in (("x", px), ("y", py)):
        if which in flat and which not in flats:
            errors.append((exp.EQ(this=_f("LIST_MIN", p), expression=_f("LIST_MAX", p)),
                           "#DIV/0!"))

    def scale(p: exp.Expr) -> exp.Expr:
        m = _f("GREATEST", _f("ABS", _f("LIST_MIN", p)), _f("ABS", _f("LIST_MAX", p)))
        # the largest magnitude, 1 when it is 0 or there is none
        return _coalesce(_f("NULLIF", m, _n(0)), exp.cast(_n(1), dtype("DOUBLE")))

    def level2(s: dict[str, exp.Expr]) -> exp.Expr:
        ux = _f("LIST_TRANSFORM", s["px"], _lam(lambda x: _op("/", x, s["sx"])))
        uy = _f("LIST_TRANSFORM", s["py"], _lam(lambda y: _op("/", y, s["sy"])))

        def level3(u: dict[str, exp.Expr]) -> exp.Expr:
            def level4(m: dict[str, exp.Expr]) -> exp.Expr:
                def dev(x: exp.Expr, mean: exp.Expr) -> exp.Expr:
                    return _op("-", x, mean)

                sxx = _f("LIST_SUM", _f("LIST_TRANSFORM", u["ux"], _lam(
                    lambda x: _op("*", dev(x, m["ux"]), dev(x, m["ux"])))))
                syy = _f("LIST_SUM", _f("LIST_TRANSFORM", u["uy"], _lam(
                    lambda y: _op("*", dev(y, m["uy"]), dev(y, m["uy"])))))
                sxy = _f("LIST_SUM", _f("LIST_TRANSFORM", u["ux"], _lam(
                    lambda x, i: _op("*", dev(x, m["ux"]), dev(_at(u["uy"], i), m["uy"])), 2)))
                return body({"n": s["n"], "sx": s["sx"], "sy": s["sy"], "mx": m["mx"],
                             "my": m["my"], "mux": m["ux"], "sxx": sxx, "syy": syy,
                             "sxy": sxy})

            return _sql_let({"ux": _f("LIST_AVG", u["ux"]), "uy": _f("LIST_AVG", u["uy"]),
                                 "mx": _f("LIST_AVG", s["px"]), "my": _f("LIST_AVG", s["py"])},
                             level4)

        return _sql_let({"ux": ux, "uy": uy}, level3)

    value = _sql_let({"px": px, "py": py}, lambda s: _sql_let(
        {"px": s["px"], "py": s["py"], "sx": scale(s["px"]), "sy": scale(s["py"]),
         "n": _f("LIST_COUNT", s["px"])}, level2))
    return value, errors


def _pl_pair_errors(m: dict[str, Any], minimum: int, flat: str) -> list[tuple[Any, str]]:
    errors = [(~m["ok"], "#N/A"), (m["n"] < minimum, "#DIV/0!")]
    if "x" in flat:
        errors.append((m["flat_x"], "#DIV/0!"))
    if "y" in flat:
        errors.append((m["flat_y"], "#DIV/0!"))
    return errors


def polars_correl(c: FormCall, first: Any, second: Any) -> Any:
    m = _pl_moments(first, second)
    value = m["sxy"] / (m["sxx"].sqrt() * m["syy"].sqrt())
    return _num(value), _pl_pair_errors(m, 1, "xy")


@_sql_reading_doubles
def sql_correl(c: FormCall, first: Any, second: Any) -> Any:
    return _sql_moments(c, first, second, 1, "xy", lambda m: _op("/", m["sxy"], _op(
        "*", _f("SQRT", m["sxx"]), _f("SQRT", m["syy"]))))


def polars_rsq(c: FormCall, ys: Any, xs: Any) -> Any:
    m = _pl_moments(xs, ys)
    r = m["sxy"] / (m["sxx"].sqrt() * m["syy"].sqrt())
    return _num(r * r), _pl_pair_errors(m, 1, "xy")


@_sql_reading_doubles
def sql_rsq(c: FormCall, ys: Any, xs: Any) -> Any:
    def body(m: dict[str, exp.Expr]) -> exp.Expr:
        r = _op("/", m["sxy"], _op("*", _f("SQRT", m["sxx"]), _f("SQRT", m["syy"])))
        return _op("*", r, r)

    return _sql_moments(c, xs, ys, 1, "xy", body, swap=True)


def _pl_covariance(c: FormCall, first: Any, second: Any, *, sample: bool) -> Any:
    m = _pl_moments(first, second)
    divisor = (m["n"] - 1 if sample else m["n"]).cast(pl.Float64)
    value = m["sxy"] * m["sx"] * m["sy"] / divisor
    return _num(value), [*_pl_pair_errors(m, 2 if sample else 1, ""), *_pl_range_errors(value)]


@_sql_reading_doubles
def _sql_covariance(c: FormCall, first: Any, second: Any, *, sample: bool) -> Any:
    def body(m: dict[str, exp.Expr]) -> exp.Expr:
        divisor = _op("-", m["n"], _n(1)) if sample else m["n"]
        return _op("/", _op("*", _op("*", m["sxy"], m["sx"]), m["sy"]), _f("NULLIF", divisor, _n(0)))

    value, errors = _sql_moments(c, first, second, 2 if sample else 1, "", body)
    if not isinstance(errors, list):
        return value, errors
    return _sql_checked(c, value, errors)


def _pl_fit(c: FormCall, ys: Any, xs: Any, *, intercept: bool) -> Any:
    m = _pl_moments(xs, ys)
    scaled = m["sxy"] / m["sxx"]  # the slope in scaled units
    if intercept:  # my - slope * mx, with mx = sx * mean(x / sx): no overflow on the way
        value = m["my"] - scaled * m["mux"] * m["sy"]
    else:
        value = scaled * (m["sy"] / m["sx"])
    return _num(value), [*_pl_pair_errors(m, 1, "x"), *_pl_range_errors(value)]


@_sql_reading_doubles
def _sql_fit(c: FormCall, ys: Any, xs: Any, *, intercept: bool) -> Any:
    def body(m: dict[str, exp.Expr]) -> exp.Expr:
        scaled = _op("/", m["sxy"], _f("NULLIF", m["sxx"], _n(0)))
        if intercept:
            return _op("-", m["my"], _op("*", _op("*", scaled, m["mux"]), m["sy"]))
        return _op("*", scaled, _op("/", m["sy"], m["sx"]))

    value, errors = _sql_moments(c, xs, ys, 1, "x", body, swap=True)
    if not isinstance(errors, list):
        return value, errors
    return _sql_checked(c, value, errors)


# The normal distribution. erfc has no native form in polars or SQL engines: it is computed
# from two classical expansions, both evaluated here as plain arithmetic (relative error below
# 1e-12 against the C library's erfc over the whole range):
#   |t| < 2: erf(t) = 2/sqrt(pi) e^(-t^2) * sum_n 2^n t^(2n+1) / (1*3*...*(2n+1)), a series of
#            positive terms (no cancellation), in Horner form; erfc = 1 - erf;
#   t >= 2:  erfc(t) = e^(-t^2)/sqrt(pi) / (t + (1/2)/(t + 1/(t + (3/2)/(t + ...)))), the
#            continued fraction, evaluated from its 40th level up; erfc(-t) = 2 - erfc(t).
_SERIES_TERMS = 40
_FRACTION_LEVELS = 40
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2 = math.sqrt(2)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _erfc(t: Any, ops: Any) -> Any:
    """erfc(t) built with ``ops`` (polars or SQL arithmetic); ``t`` is already clamped to
    [-40, 40], where erfc is 2 or 0 to double precision beyond."""
    small = ops.clamp(t, -2.0, 2.0)
    u = ops.mul(ops.mul(small, small), 2.0)
    horner: Any = 1.0
    for n in range(_SERIES_TERMS, 0, -1):
        horner = ops.add(1.0, ops.mul(ops.div(u, float(2 * n + 1)), horner))
    erf = ops.mul(ops.mul(ops.expo(ops.neg(ops.mul(small, small))), 2.0 / _SQRT_PI),
                  ops.mul(small, horner))
    x = ops.clamp(ops.abs(t), 2.0, 40.0)
    fraction: Any = x
    for k in range(_FRACTION_LEVELS, 0, -1):
        fraction = ops.add(x, ops.div(k / 2, fraction))
    tail = ops.div(ops.div(ops.expo(ops.neg(ops.mul(x, x))), _SQRT_PI), fraction)
    return ops.pick(t, ops.sub(1.0, erf), tail, ops.sub(2.0, tail))


class _PlMath:
    def add(self, a: Any, b: Any) -> Any:
        return pl.lit(a) + b if isinstance(a, float) else a + b

    def sub(self, a: Any, b: Any) -> Any:
        return pl.lit(a) - b if isinstance(a, float) else a - b

    def mul(self, a: Any, b: Any) -> Any:
        return a * b

    def div(self, a: Any, b: Any) -> Any:
        return pl.lit(a) / b if isinstance(a, float) else a / b

    def neg(self, a: Any) -> Any:
        return -a

    def abs(self, a: Any) -> Any:
        return a.abs()

    def expo(self, a: Any) -> Any:
        return a.exp()

    def clamp(self, a: Any, lo: float, hi: float) -> Any:
        return a.clip(lo, hi)

    def pick(self, t: Any, middle: Any, right: Any, left: Any) -> Any:
        return pl.when(t >= 2.0).then(right).when(t <= -2.0).then(left).otherwise(middle)


def _d(v: Any) -> exp.Expr:
    if isinstance(v, float):
        return exp.cast(exp.Literal.number(repr(v)), dtype("DOUBLE"))
    return cast(exp.Expr, v)


class _SqlMath:
    def add(self, a: Any, b: Any) -> exp.Expr:
        return _op("+", _d(a), _d(b))

    def sub(self, a: Any, b: Any) -> exp.Expr:
        return _op("-", _d(a), _d(b))

    def mul(self, a: Any, b: Any) -> exp.Expr:
        return _op("*", _d(a), _d(b))

    def div(self, a: Any, b: Any) -> exp.Expr:
        return _op("/", _d(a), _d(b))

    def neg(self, a: Any) -> exp.Expr:
        return exp.Neg(this=_p(_d(a)))

    def abs(self, a: Any) -> exp.Expr:
        return _f("ABS", a)

    def expo(self, a: Any) -> exp.Expr:
        return _f("EXP", a)

    def clamp(self, a: Any, lo: float, hi: float) -> exp.Expr:
        return _f("LEAST", _f("GREATEST", a, _d(lo)), _d(hi))

    def pick(self, t: Any, middle: Any, right: Any, left: Any) -> exp.Expr:
        return _case([(exp.GTE(this=t, expression=_d(2.0)), right),
                      (exp.LTE(this=t, expression=_d(-2.0)), left)], middle)


def _pl_standard(z: Any, cumulative: Any, scale: Any, c: FormCall, i_cumulative: int) -> Any:
    """As `statistics._standard`: 0.5 * erfc(-z / sqrt 2), or the density."""
    density = (pl.lit(-0.5) * z * z).exp() / (scale * _SQRT_2PI)
    t = (-z / _SQRT_2).clip(-40.0, 40.0)
    probability = pl.lit(0.5) * _erfc(t, _PlMath())
    literal = c.const(i_cumulative)
    if literal is _MISSING:
        value = pl.when(cumulative).then(probability).otherwise(density)
    else:
        value = probability if literal else density
    return value


def _sql_standard(z: Any, cumulative: Any, scale: Any, c: FormCall, i_cumulative: int) -> Any:
    def body(s: dict[str, exp.Expr]) -> exp.Expr:
        zz = s["z"]
        density = _op("/", _f("EXP", _op("*", _op("*", _d(-0.5), zz), zz)), _op("*", s["sd"], _d(_SQRT_2PI)))
        t = _f("LEAST", _f("GREATEST", _op("/", exp.Neg(this=_p(zz)), _d(_SQRT_2)), _d(-40.0)),
               _d(40.0))
        probability = _sql_let({"t": t}, lambda u: _op("*", _d(0.5), _erfc(u["t"], _SqlMath())))
        literal = c.const(i_cumulative)
        if literal is _MISSING:
            return _case([(cumulative, probability)], density)
        return probability if literal else density

    return _sql_let({"z": exp.cast(z, dtype("DOUBLE")),
                     "sd": exp.cast(scale, dtype("DOUBLE"))}, body)


def polars_norm_dist(c: FormCall, x: Any, mean: Any, sd: Any, cumulative: Any) -> Any:
    xf, mf, sf = (v.cast(pl.Float64) for v in (x, mean, sd))
    safe = pl.when(sf > 0).then(sf).otherwise(pl.lit(1.0))
    value = _pl_standard((xf - mf) / safe, cumulative, safe, c, 3)
    return _num(value), [(sf <= 0, "#NUM!"), *_pl_range_errors(value)]


def sql_norm_dist(c: FormCall, x: Any, mean: Any, sd: Any, cumulative: Any) -> Any:
    sdd = exp.cast(sd, dtype("DOUBLE"))
    safe = _case([(exp.GT(this=sdd, expression=_n(0)), sdd)], _d(1.0))
    z = _op("/", _op("-", exp.cast(x, dtype("DOUBLE")),
                  exp.cast(mean, dtype("DOUBLE"))), safe)
    value = _sql_standard(z, cumulative, safe, c, 3)
    return value, [(exp.LTE(this=sd, expression=_n(0)), "#NUM!"), *_sql_range_errors(value)]


def polars_norm_s_dist(c: FormCall, z: Any, cumulative: Any) -> Any:
    value = _pl_standard(z.cast(pl.Float64), cumulative, pl.lit(1.0), c, 1)
    return _num(value), _pl_range_errors(value)


def sql_norm_s_dist(c: FormCall, z: Any, cumulative: Any) -> Any:
    value = _sql_standard(z, cumulative, _d(1.0), c, 1)
    return value, _sql_range_errors(value)
