"""List forms of the aggregates and order statistics: SUM PRODUCT AVERAGE MIN MAX COUNT
COUNTA COUNTBLANK MEDIAN STDEV.S/P VAR.S/P LARGE SMALL PERCENTILE.INC SUMPRODUCT.

Contract: as the package docstring says (same values and errors as the scalar twins; blanks
skipped where the scalar skips them); forms that are one builder with a flag (MIN/MAX:
``largest``) are named once per function in the form tables, with the flag.
"""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Any

from sqlglot import exp

from ...sql.dialects import DOUBLE, marked
from ...sql.kit import dtype
from ....types import Type
from ..math._base import _DECIMAL_FIT  # a float estimate below it fits Decimal(38, 18)
from ._base import (
    FormCall, _any, _at, _case, _coalesce, _e, _f, _float, _is_null, _known_count,
    _known_number, _lam, _len, _n, _not_null, _num, _op, _or, pl, _pl_decimal_mean,
    _pl_empty_like, _pl_items, _pl_range_errors, _pl_sum, _pl_zip, _BIND_NODES, _sql_checked,
    _sql_count, _sql_errors, _sql_items, _sql_let, _sql_nodes, _sql_none, _sql_present,
    _sql_in_range, _sql_range_errors, _tracked, _vp,
)
from ._sql_decimal import (
    _sql_mean, _sql_picking, _sql_reading, _sql_reading_doubles, _sql_reading_interpolated,
    _sql_source, _sql_sum,
)


# ------------------------------------------------------------------------------ aggregates


def polars_sum(c: FormCall, *values: Any) -> Any:
    return _pl_sum(_pl_items(c, values))


@_sql_reading
def sql_sum(c: FormCall, *values: Any) -> Any:
    return _sql_sum(c, _sql_items(c, values), tracked=_tracked(c), mark=_doubles, span=(0, None))


def _doubles(c: FormCall, call: exp.Expr) -> exp.Expr:
    """A DuckDB list aggregate marked as summing DOUBLEs in float mode, where the items are:
    Spark folds those in order as DuckDB does (`sql.spark_lists`); a DECIMAL sum it would
    retype, so unmarked it stays refused there."""
    return marked(call, DOUBLE) if c.numbers == "float" else call


def polars_product(c: FormCall, *values: Any) -> Any:
    items = _pl_items(c, values)
    empty = items.list.len() == 0
    product = items.list.agg(_e().product())
    if _float():
        value = pl.when(empty).then(_num(pl.lit(0))).otherwise(_num(product))
        return value, _pl_range_errors(value)
    # Decimal mode: polars' decimal product is null where it (or a partial product) passes
    # Decimal(38, 18), so the range test reads a float64 estimate (with a margin); where the
    # product fits but a partial one did not, the estimate is the answer (relative 1e-15).
    estimate = items.cast(pl.List(pl.Float64)).list.agg(_e().product())
    fits = estimate.abs() < _DECIMAL_FIT
    value = pl.when(~fits).then(None).when(empty).then(_num(pl.lit(0))).otherwise(
        pl.coalesce(product, _num(estimate)))
    return value, [(~fits, "#NUM!")]


@_sql_reading_doubles
def sql_product(c: FormCall, *values: Any) -> Any:
    known = _known_count(c)
    if known == 0:
        return _n(0)
    product = _f("LIST_PRODUCT", _sql_items(c, values))  # a DOUBLE, NULL for no numbers
    if c.numbers == "float" and _tracked(c):
        # the compiler tests the DOUBLE result (a float column is read)
        return product if known else _coalesce(product, _n(0))
    # DECIMAL items: the DOUBLE product may still pass 1e308; NULL there, where the range
    # test fires (the table flags PRODUCT null_on_error: no wrapper around the value)
    product = product if known else _coalesce(product, _n(0))
    if _sql_nodes(product) > _BIND_NODES:
        product = c.let(product)
    return _sql_in_range(product), _sql_range_errors(product)


def _pl_mean(items: Any) -> tuple[Any, list[tuple[Any, str]]]:
    """The mean of each list and its errors: #DIV/0! for no numbers; float64 in float mode; in
    decimal mode the exact sum divided by the count (rounded at 18 places), never through
    float64 nor a polars decimal sum (`_pl_decimal_mean`: a sum past 1e20 would abort the
    query), #NUM! where the mean itself passes 1e20."""
    empty = (items.list.len().fill_null(0) == 0, "#DIV/0!")
    if _float():
        return _num(items.list.mean()), [empty]
    value, fits = _pl_decimal_mean(items)
    return value, [empty, (~fits, "#NUM!")]


def polars_average(c: FormCall, *values: Any) -> Any:
    return _pl_mean(_pl_items(c, values))


@_sql_reading
def sql_average(c: FormCall, *values: Any) -> Any:
    items = _sql_items(c, values)
    value = _doubles(c, _sql_mean(c, items))
    # a list read as it is (`_sql_read`): "no numbers" from the list as stored, not from
    # the mean, which would read the items again
    source = _sql_source(items)
    present = value if source is None else _f("LIST_MAX", source)
    return value, _sql_errors([(_sql_none(c, present), "#DIV/0!")])


def _pl_extreme(c: FormCall, *values: Any, largest: bool) -> Any:
    items = _pl_items(c, values)
    value = items.list.max() if largest else items.list.min()
    if c.node.type.kind == "Number":
        return _num(value).fill_null(0)  # Excel: 0 when there are no numbers
    return value, [(items.list.len().fill_null(0) == 0, "#CALC!")]


@_sql_picking
def _sql_extreme(c: FormCall, *values: Any, largest: bool) -> Any:
    items = _sql_items(c, values)
    value = _f("LIST_MAX" if largest else "LIST_MIN", items)
    if c.node.type.kind == "Number":
        return _coalesce(value, _n(0))
    return value, _sql_errors([(_sql_none(c, value), "#CALC!")])


_SERIAL_KINDS = ("Number", "Date", "DateTime", "Duration")


def _count_plan(c: FormCall, nonblank: bool) -> list[tuple[int, str]]:
    """Per argument: "scalar" (1 when not blank), "list" (its non-blank items), "none" (0).

    COUNT counts numbers (dates, datetimes and durations are numbers in Excel); given directly
    also logicals; COUNTA counts every non-blank value."""
    plan = []
    for i in range(len(c.args)):
        t = c.type(i)
        if t.kind == "List":
            elem = t.elem
            if elem is not None and elem.kind in ("List", "Any", "Var"):
                c.refuse("nested or untyped lists")
            if nonblank or (elem is not None and elem.kind in _SERIAL_KINDS):
                plan.append((i, "list"))
            else:
                plan.append((i, "none"))
        elif t.kind in ("Any", "Var"):
            c.refuse("an untyped argument")
        elif nonblank or t.kind in _SERIAL_KINDS + ("Boolean",):
            plan.append((i, "scalar"))
        elif t.kind == "Text":
            c.refuse("a text argument (COUNT reads numbers written as text; no exact form)")
        else:
            plan.append((i, "none"))  # blanks, records
    return plan


def _pl_count(c: FormCall, *values: Any, nonblank: bool) -> Any:
    total = pl.lit(0, dtype=pl.Int64)
    for i, how in _count_plan(c, nonblank):
        v = values[i]
        if how == "list":
            total = total + v.list.drop_nulls().list.len().cast(pl.Int64).fill_null(0)
        elif how == "scalar":
            total = total + v.is_not_null().cast(pl.Int64)
    return _num(total)


def _sql_count_args(c: FormCall, *values: Any, nonblank: bool) -> Any:
    total: exp.Expr = _n(0)
    for i, how in _count_plan(c, nonblank):
        v = values[i]
        if how == "list":
            total = _op("+", total, _sql_count(v))
        elif how == "scalar":
            total = _op("+", total, _case([(_not_null(v), _n(1))], _n(0)))
    return total


def polars_countblank(c: FormCall, values: Any) -> Any:
    e = _e()
    blank = e.is_null() | (e == "") if c.elem(0).kind == "Text" else e.is_null()
    return _num(values.list.agg(blank.sum()).fill_null(0))


def sql_countblank(c: FormCall, values: Any) -> Any:
    if c.elem(0).kind == "Text":
        # the items less the non-empty texts (a blank item is not > ''; FILTER is DuckDB's
        # shorter name of LIST_FILTER, and LEN keeps this form DuckDB's alone)
        count = _op("-", _len(values), _len(_f("FILTER", values, _lam(
            lambda x: exp.GT(this=x, expression=exp.Literal.string(""))))))
    else:  # the items less the non-blank ones
        count = _op("-", _len(values), _f("LIST_COUNT", values))
    return _coalesce(count, _n(0)) if c.type(0).nullable else count  # 0 for a blank list


# ------------------------------------------------------------------------ order statistics


def polars_median(c: FormCall, *values: Any) -> Any:
    items = _pl_items(c, values)
    return _num(items.list.median()), [(items.list.len().fill_null(0) == 0, "#NUM!")]


@_sql_reading_interpolated
def sql_median(c: FormCall, *values: Any) -> Any:
    value = _doubles(c, _f("LIST_MEDIAN", _sql_items(c, values)))
    return value, _sql_errors([(_sql_none(c, value), "#NUM!")])


def _pl_spread(c: FormCall, *values: Any, sample: bool, root: bool) -> Any:
    items = _pl_items(c, values)
    ddof = 1 if sample else 0
    if root:
        # Scaled by the largest magnitude, so squares of numbers past 1e154 do not overflow
        # where the standard deviation itself is in range.
        scale = pl.max_horizontal(items.list.min().abs(), items.list.max().abs()).cast(
            pl.Float64)
        raw = (items.cast(pl.List(pl.Float64)) / scale).list.std(ddof=ddof) * scale
    else:
        raw = items.list.var(ddof=ddof)
    flat = items.list.min() == items.list.max()  # exactly no spread: exactly 0
    value = pl.when(flat).then(pl.lit(0.0)).otherwise(raw.cast(pl.Float64))
    n = items.list.len().fill_null(0)
    errors = [(n < (2 if sample else 1), "#DIV/0!"), *_pl_range_errors(value)]
    if not _float():
        # Decimal(38, 18) holds |x| < 1e20: a larger spread is #NUM! (masked, so the cast
        # cannot abort the query)
        fits = value.abs() < 1e20 * (1 - 1e-12)
        errors.append((~fits, "#NUM!"))
        value = pl.when(fits).then(value)
        if not root:
            return _pl_decimal_var(items, value, ddof), errors
    return _num(value), errors


def _pl_decimal_var(items: Any, estimate: Any, ddof: int) -> Any:
    """Decimal mode VAR as (sum of x^2 - (sum of x)^2 / n) / (n - ddof), in decimal (squares
    and the quotient rounded at 18 places), where float64 shows the sum of squares and the
    squared sum below 1e19 (so Decimal(38, 18) holds every step); elsewhere the float64
    result (relative 1e-15)."""
    n = items.list.len()
    floats = items.cast(pl.List(pl.Float64))
    safe = (floats.list.eval(pl.element() * pl.element()).list.sum() < 1e19) \
        & (floats.list.sum() * floats.list.sum() < 1e19) & (n > ddof)
    # (an empty list where not safe, not a null one: a null list keeps its items, which
    # list.eval still multiplies, and a decimal overflow there aborts the query)
    decimals = items.cast(pl.List(_vp.DECIMAL_DTYPE))
    masked = pl.when(safe).then(decimals).otherwise(_pl_empty_like(decimals))
    total = masked.list.sum()
    squares = masked.list.eval(pl.element() * pl.element()).list.sum()
    count = pl.when(safe).then(n).cast(_vp.DECIMAL_DTYPE)
    exact = (squares - total * total / count) / pl.when(safe).then(n - ddof).cast(
        _vp.DECIMAL_DTYPE)
    return pl.when(safe).then(exact).otherwise(_num(estimate))


@_sql_reading_doubles
def _sql_spread(c: FormCall, *values: Any, sample: bool, root: bool) -> Any:
    items = c.let(_sql_items(c, values))
    name = ("LIST_STDDEV_" if root else "LIST_VAR_") + ("SAMP" if sample else "POP")
    low, high = _f("LIST_MIN", items), _f("LIST_MAX", items)
    if root:  # read twice each
        low, high = c.let(low), c.let(high)
    flat = exp.EQ(this=low, expression=high)
    if root:  # scaled, as in the polars form
        scale = _f("GREATEST", _f("ABS", low), _f("ABS", high))
        raw = _sql_let({"xs": items, "m": exp.cast(scale, dtype("DOUBLE"))},
                        lambda s: _op("*", _f(name, _f("LIST_TRANSFORM", s["xs"], _lam(
                            lambda x: _op("/", x, s["m"])))), s["m"]))
        value = _case([(flat, _n(0))], raw)  # an all-zero list scales by 0
    else:
        # no flat test: DuckDB's LIST_VAR_* (Welford's update) are exactly 0 for equal items
        # (each step adds (x - new mean) * (x - old mean) = 0), which the polars form has to
        # test for; NULL exactly where too few items make the error
        value = _f(name, items)
    known = _known_count(c)
    too_few: exp.Expr | bool
    if known is not None:
        too_few = known < (2 if sample else 1)
    else:  # NULL exactly for fewer than two numbers (one: the smallest is NULL for none)
        too_few = _is_null(_f("LIST_VAR_SAMP", items) if sample else low)
    if too_few is True:
        return exp.Null(), exp.Literal.string("#DIV/0!")
    tracked = _tracked(c)
    if not root and not tracked:
        # NULL where the range test fires too (the table flags VAR.S/VAR.P null_on_error)
        raw = c.let(value)
        value = _sql_in_range(raw)
        return value, _sql_errors([(too_few, "#DIV/0!"), *_sql_range_errors(raw)])
    return _sql_checked(c, value, _sql_errors([(too_few, "#DIV/0!")]), tracked=tracked)


def _pl_kth(c: FormCall, values: Any, k: Any, *, largest: bool) -> Any:
    items = values.list.drop_nulls()
    kf = k.cast(pl.Float64)
    position = kf.ceil() if largest else kf.floor()
    n = items.list.len().fill_null(0)
    bad = (n == 0) | (position < 1) | (position > n)
    index = pl.when(bad).then(pl.lit(1.0)).otherwise(position).cast(pl.Int64) - 1
    value = items.list.sort(descending=largest).list.get(index, null_on_oob=True)
    return _num(value), [(bad, "#NUM!")]


@_sql_picking
def _sql_kth(c: FormCall, values: Any, k: Any, *, largest: bool) -> Any:
    known = _known_number(c, 1)
    count = _known_count(c, 0, 1)
    n = _n(count) if count is not None else c.let(_sql_count(values))
    ordered = _f("LIST_SORT", _sql_present(values),
                 exp.Literal.string("DESC" if largest else "ASC"))
    if known is not None:
        position = min(10**15, int(known.to_integral_value(
            decimal.ROUND_CEILING if largest else decimal.ROUND_FLOOR)))
        if position < 1 or (count is not None and count < position):
            return exp.Null(), exp.Literal.string("#NUM!")
        # (an empty list has fewer items than any position)
        return _at(ordered, _n(position)), _sql_errors([
            (False if count is not None else exp.LT(this=n, expression=_n(position)), "#NUM!")])
    position = c.let(_f("CEIL" if largest else "FLOOR", k))
    bad = c.let(_or(exp.EQ(this=n, expression=_n(0)), exp.LT(this=position, expression=_n(1)),
                    exp.GT(this=position, expression=n)))
    index = exp.cast(_case([(bad, _n(1))], position), dtype("BIGINT"))
    return _at(ordered, index), [(bad, "#NUM!")]


def _pl_percentile(values: Any, k: Any, errors: list[tuple[Any, str]]) -> Any:
    """PERCENTILE.INC: interpolation at rank k * (n - 1) over the sorted numbers."""
    items = values.list.drop_nulls().list.sort()
    n = items.list.len().fill_null(0)
    kf = k.cast(pl.Float64)
    bad = (n == 0) | (kf < 0) | (kf > 1)
    position = pl.when(bad).then(pl.lit(0.0)).otherwise(kf * (n - 1).cast(pl.Float64))
    lower = position.floor()
    frac = position - lower
    lo_i = lower.cast(pl.Int64)
    hi_i = pl.min_horizontal(lo_i + 1, (n - 1).cast(pl.Int64).clip(0, None))
    lo = items.list.get(lo_i, null_on_oob=True).cast(pl.Float64)
    hi = items.list.get(hi_i, null_on_oob=True).cast(pl.Float64)
    value = pl.when(frac == 0).then(lo).otherwise(lo + frac * (hi - lo))
    return _num(value), [*errors, (bad, "#NUM!")]


def _sql_percentile(c: FormCall, values: Any, k: Any, errors: list[tuple[Any, str]],
                    known: Decimal | None = None) -> Any:
    """PERCENTILE.INC in SQL; ``known``: k when the compiler knows it (its range is then
    decided here), else None. ``errors`` come first (conditions or Python booleans)."""
    if known is not None and not 0 <= known <= 1:
        return exp.Null(), _sql_errors([*errors, (True, "#NUM!")])
    count = _known_count(c, 0, 1)
    if count == 0:
        return exp.Null(), _sql_errors([*errors, (True, "#NUM!")])
    n = _n(count) if count is not None else c.let(_sql_count(values))
    bad = _any(False if count is not None else exp.EQ(this=n, expression=_n(0)),
               *(() if known is not None else (exp.LT(this=k, expression=_n(0)),
                                               exp.GT(this=k, expression=_n(1)))))
    items = c.let(_f("LIST_SORT", _sql_present(values)))
    double = dtype("DOUBLE")
    if known is not None and count is not None:  # the rank is known: exact, as the scalar's
        rank = known * (count - 1)
        whole = int(rank)
        lo = _at(items, _n(whole + 1))
        if rank != whole:
            hi = _at(items, _n(min(whole + 2, count)))
            lo = c.let(lo)
            lo = _op("+", lo, _op("*", exp.cast(_n(rank - whole), double), _op("-", hi, lo)))
        return lo, _sql_errors([*errors, (bad, "#NUM!")])
    else:
        spot = _op("*", exp.cast(k, double), _op("-", n, _n(1)))
        guarded = spot if isinstance(bad, bool) else _case([(bad, _n(0))], spot)
        position = c.let(guarded)
        lower = c.let(_f("FLOOR", position))
        frac = c.let(_op("-", position, lower))
        lo_i = exp.cast(lower, dtype("BIGINT"))
        lo = c.let(_at(items, _op("+", lo_i, _n(1))))
        hi = _at(items, _f("LEAST", _op("+", lo_i, _n(2)), n))
    value = _case([(exp.EQ(this=frac, expression=_n(0)), lo)],
                  _op("+", lo, _op("*", frac, _op("-", hi, lo))))
    return value, _sql_errors([*errors, (bad, "#NUM!")])


def polars_percentile_inc(c: FormCall, values: Any, k: Any) -> Any:
    return _pl_percentile(values, k, [])


@_sql_reading_interpolated
def sql_percentile_inc(c: FormCall, values: Any, k: Any) -> Any:
    return _sql_percentile(c, values, k, [], _known_number(c, 1))


def polars_sumproduct(c: FormCall, *lists: Any) -> Any:
    n = lists[0].list.len()
    ok = pl.all_horizontal([lst.list.len() == n for lst in lists[1:]]) if len(lists) > 1 \
        else pl.lit(True)
    number = pl.List(_vp.dtype_of(Type("Number")))
    guarded = [pl.when(ok).then(lst).otherwise(_pl_empty_like(lst)).cast(number)
               for lst in lists]

    def products(*items: Any) -> Any:
        out = items[0].fill_null(0)
        for item in items[1:]:
            out = out * item.fill_null(0)
        return out

    if _float():
        total = _num(_pl_zip(guarded, lambda *items: products(*items).sum())).fill_null(0)
        return total, [(~ok, "#VALUE!"), *_pl_range_errors(total)]
    # Decimal mode: polars aborts the whole query on a decimal product past Decimal(38, 18),
    # so the lists reach the exact products (summed by `_pl_sum`) only on the rows where a
    # float64 estimate shows every partial product below 1e20 (with a margin); the other rows
    # answer the float64 sum (relative 1e-15), #NUM! from 1e20 on.
    floats = [g.cast(pl.List(pl.Float64)) for g in guarded]

    def small(*items: Any) -> Any:
        out = items[0].fill_null(0).abs()
        fits = out < _DECIMAL_FIT
        for item in items[1:]:
            out = out * item.fill_null(0).abs()
            fits = fits & (out < _DECIMAL_FIT)
        return fits.all()

    exact = _pl_zip(floats, small)
    masked = [pl.when(exact).then(g).otherwise(_pl_empty_like(g)) for g in guarded]
    total, [(too_big, _)] = _pl_sum(_pl_zip(masked, products))
    estimate = _pl_zip(floats, lambda *items: products(*items).sum())
    near = estimate.abs() < _DECIMAL_FIT
    value = pl.when(exact).then(total).when(near).then(_num(estimate))
    return value, [(~ok, "#VALUE!"), (pl.when(exact).then(too_big).otherwise(~near), "#NUM!")]


@_sql_reading_doubles
def sql_sumproduct(c: FormCall, *lists: Any) -> Any:
    first = lists[0]

    def term(x: exp.Expr, i: exp.Expr) -> exp.Expr:
        # In DOUBLE: a product of two DECIMAL(38, 18) overflows DuckDB from 100 on (its scale
        # would be 36), so decimal columns get the float product here, as LIST_PRODUCT does.
        def factor(v: exp.Expr) -> exp.Expr:
            return exp.cast(_coalesce(v, _n(0)), dtype("DOUBLE"))

        out = factor(x)
        for lst in lists[1:]:
            out = _op("*", out, factor(_at(lst, i)))
        return out

    total = _coalesce(_f("LIST_SUM", _f("LIST_TRANSFORM", first, _lam(term, 2))), _n(0))
    mismatch = [exp.NEQ(this=_len(lst), expression=_len(first)) for lst in lists[1:]]
    errors = [(_or(*mismatch), "#VALUE!")] if mismatch else []
    return _sql_checked(c, total, errors)  # a DOUBLE sum: total
