"""List forms of the shaping functions: SORT SORTBY FILTER MAP REDUCE SEQUENCE TAKE DROP
FLATTEN UNIQUE (scalar twins in `_arrays`).

Contract: sorts are stable, text ignores case, blanks sort last in either direction; a list's
size that is read from the data (SEQUENCE) is refused, so the list limit is decided when
compiling.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable

from sqlglot import exp

from ...sql.kit import dtype
from ....interpreter import ir
from ....types import Type
from ....functions._criteria import to_int
from ._base import (
    FormCall, _and, _apply, _at, _BIG, _case, _coalesce, _e, _f, _float, _is_null, _known_len,
    _known_number, _lam, _len, _MISSING, _n, _not_null, _num, _op, _p, pl, _pl_bcast, _pl_int,
    _pl_with, _sql_count, _sql_errors, _sql_int_arg, _sql_lengths_differ, _sql_range_errors,
    _trunc, _vp,
)
from ._sql_decimal import _sql_reading, _sql_checking


# ------------------------------------------------------------------------ shaping: arrays

_ORDERABLE = ("Number", "Text", "Boolean", "Date", "DateTime", "Duration", "Never", "Blank")


def _orderable(c: FormCall, t: Type | None, what: str) -> str:
    kind = t.kind if t is not None else "Never"
    if kind not in _ORDERABLE:
        c.refuse(f"{what} of type {kind} (lists and records cannot be ordered)")
    if kind == "Duration" and c.backend == "sql":
        c.refuse("Duration ordering: SQL intervals are not compared as plain lengths of time "
                 "in every engine")
    return kind


def _pl_key(x: Any, kind: str) -> Any:
    return x.str.to_lowercase() if kind == "Text" else x


def _sql_key(x: exp.Expr, kind: str) -> exp.Expr:
    return exp.Lower(this=x) if kind == "Text" else x


def _pl_order(c: FormCall, i: int, order: Any) -> tuple[Any, Any, list[tuple[Any, str]]]:
    """(descending: bool | None, descending expression, errors) for a sort-order argument:
    1 ascending, -1 descending (truncated), anything else #VALUE!."""
    literal = c.const(i)
    if literal is not _MISSING and literal is not None and not isinstance(literal, str):
        n = to_int(literal, "sort order")
        if n not in (1, -1):
            return None, None, [(pl.lit(True), "#VALUE!")]
        return n == -1, None, []
    n = _pl_int(order)
    return None, n == -1, [((n != 1) & (n != -1), "#VALUE!")]


def _sql_order(c: FormCall, i: int, order: Any) -> tuple[Any, Any, list[tuple[Any, str]]]:
    literal = c.const(i)
    if literal is not _MISSING and literal is not None and not isinstance(literal, str):
        n = to_int(literal, "sort order")
        if n not in (1, -1):
            return None, None, [(exp.Boolean(this=True), "#VALUE!")]
        return n == -1, None, []
    whole = _trunc(order)
    return None, exp.EQ(this=whole, expression=_n(-1)), [
        (_and(exp.NEQ(this=whole, expression=_n(1)), exp.NEQ(this=whole, expression=_n(-1))),
         "#VALUE!")]


def _pl_sorted(lst: Any, key: Callable[[Any], Any], descending: bool) -> Any:
    """Stable sort of a list by key(item), blank keys last in either direction."""
    e = _e()
    return lst.list.eval(e.sort_by(key(e), descending=descending, maintain_order=True,
                                   nulls_last=True))


def _pl_both_orders(build: Callable[[bool], Any], fixed: Any, flag: Any) -> Any:
    if fixed is not None:
        return build(fixed)
    if flag is None:
        return build(False)  # the order is an error anyway
    return pl.when(flag).then(build(True)).otherwise(build(False))


def _sql_both_orders(build: Callable[[bool], exp.Expr], fixed: Any, flag: Any
                     ) -> exp.Expr:
    if fixed is not None:
        return build(fixed)
    if flag is None:
        return build(False)
    return _case([(flag, build(True))], build(False))


def _sql_sorted(lst: exp.Expr, key: Callable[[exp.Expr], exp.Expr],
                descending: bool, blank_keys: bool = True) -> exp.Expr:
    """Stable sort by key(item), blank keys last: the items with a key, as {k, i, v} structs
    sorted (k then position; the position negated when descending, so ties keep their order),
    then the items whose key is blank, in order. ``blank_keys`` False: no key can be blank
    (its type says so), so nothing is set aside."""
    def record(x: exp.Expr, i: exp.Expr) -> exp.Expr:
        position = exp.Neg(this=_p(i)) if descending else i
        return exp.Struct(expressions=[
            exp.PropertyEQ(this=exp.to_identifier("k"), expression=key(x)),
            exp.PropertyEQ(this=exp.to_identifier("i"), expression=position),
            exp.PropertyEQ(this=exp.to_identifier("v"), expression=x)])

    keyed = _f("LIST_TRANSFORM", lst, _lam(record, 2))
    if blank_keys:
        keyed = _f("LIST_FILTER", keyed, _lam(
            lambda r: _not_null(exp.Dot(this=r, expression=exp.to_identifier("k")))))
    ordered = _f("LIST_SORT", keyed, exp.Literal.string("DESC" if descending else "ASC"))
    values = _f("LIST_TRANSFORM", ordered,
                _lam(lambda r: exp.Dot(this=r, expression=exp.to_identifier("v"))))
    if not blank_keys:
        return values
    blanks = _f("LIST_FILTER", lst, _lam(lambda x: _is_null(key(x))))
    return _f("LIST_CONCAT", values, blanks)


def polars_sort(c: FormCall, values: Any, *rest: Any) -> Any:
    kind = _orderable(c, c.elem(0), "items")
    errors: list[tuple[Any, str]] = []
    order_i = 1
    if len(rest) >= 2:  # SORT(list, sort_index, order, [by_col])
        errors.append((_pl_int(rest[0]) != 1, "#VALUE!"))
        order_i = 2
    order = rest[order_i - 1] if rest else pl.lit(1)
    fixed, flag, order_errors = _pl_order(c, order_i, order) if rest else (False, None, [])
    value = _pl_both_orders(lambda d: _pl_sorted(values, lambda x: _pl_key(x, kind), d),
                            fixed, flag)
    return value, [*errors, *order_errors]


@_sql_reading
def sql_sort(c: FormCall, values: Any, *rest: Any) -> Any:
    kind = _orderable(c, c.elem(0), "items")
    errors: list[tuple[Any, str]] = []
    order_i = 1
    if len(rest) >= 2:
        errors.append((exp.NEQ(this=_trunc(rest[0]), expression=_n(1)), "#VALUE!"))
        order_i = 2
    if rest:
        fixed, flag, order_errors = _sql_order(c, order_i, rest[order_i - 1])
    else:
        fixed, flag, order_errors = False, None, []

    def build(descending: bool) -> exp.Expr:
        if kind == "Text":
            return _sql_sorted(values, lambda x: _sql_key(x, kind), descending,
                               c.elem(0).nullable)
        return _f("LIST_SORT", values, exp.Literal.string("DESC" if descending else "ASC"),
                  exp.Literal.string("NULLS LAST"))

    return _sql_both_orders(build, fixed, flag), [*errors, *order_errors]


def polars_sortby(c: FormCall, values: Any, by: Any, *rest: Any) -> Any:
    if len(c.args) > 3:
        c.refuse("several sort keys")
    order = rest[0] if rest else pl.lit(1)
    fixed, flag, errors = _pl_order(c, 2, order)
    if isinstance(c.args[1], ir.Lambda):
        kind = _orderable(c, c.lambda_body(1).type, "sort keys")
        key_expr = _pl_bcast(by, c, 1)
        value = _pl_both_orders(
            lambda d: _pl_sorted(values, lambda x: _pl_key(key_expr, kind), d), fixed, flag)
        return value, errors
    kind = _orderable(c, c.elem(1), "sort keys")
    ok = by.list.len() == values.list.len()
    e = _e()

    def build(descending: bool) -> Any:
        positions = by.list.eval(pl.int_range(pl.len()).sort_by(
            _pl_key(e, kind), descending=descending, maintain_order=True, nulls_last=True))
        return values.list.gather(positions, null_on_oob=True)

    return _pl_both_orders(build, fixed, flag), [(~ok, "#VALUE!"), *errors]


@_sql_reading
def sql_sortby(c: FormCall, values: Any, by: Any, *rest: Any) -> Any:
    if len(c.args) > 3:
        c.refuse("several sort keys")
    fixed, flag, errors = _sql_order(c, 2, rest[0]) if rest else (False, None, [])
    if isinstance(c.args[1], ir.Lambda):
        kind = _orderable(c, c.lambda_body(1).type, "sort keys")
        lam = by
        blank = c.lambda_body(1).type.nullable
        value = _sql_both_orders(
            lambda d: _sql_sorted(values, lambda x: _sql_key(_apply(lam, x), kind), d, blank),
            fixed, flag)
        return value, errors
    kind = _orderable(c, c.elem(1), "sort keys")
    mismatch = _sql_lengths_differ(c, 1, 0, by, values)
    if mismatch is True:
        return exp.Null(), exp.Literal.string("#VALUE!")
    # Sort the positions by the keys at those positions, then read the items there (the
    # lists have one length when no error is set: a key is blank only where its type allows)
    length = _known_len(c, 0)
    positions = _f("RANGE", _n(1), _n(length + 1) if length is not None
                   else _op("+", _len(values), _n(1)))

    def build(descending: bool) -> exp.Expr:
        order = _sql_sorted(positions, lambda i: _sql_key(_at(by, i), kind), descending,
                            c.elem(1).nullable)
        return _f("LIST_TRANSFORM", order, _lam(lambda i: _at(values, i)))

    return _sql_both_orders(build, fixed, flag), _sql_errors([(mismatch, "#VALUE!"), *errors])


def _fallback_kind(c: FormCall, i: int) -> bool:
    """FILTER's if_empty is used when it has the items' type (decided statically here)."""
    if c.omitted(i):
        return False
    item, fallback = c.elem(0).kind, c.kind(i)
    if item in ("List", "Record", "Any") or fallback in ("List", "Record"):
        c.refuse("if_empty with list or record items")
    return item == fallback


def polars_filter(c: FormCall, values: Any, include: Any, if_empty: Any = None) -> Any:
    errors: list[tuple[Any, str]] = []
    if isinstance(c.args[1], ir.Lambda):
        kept = values.list.filter(_pl_bcast(include, c, 1).fill_null(False))
    else:
        e = _e()
        keep = e if c.elem(1).kind == "Boolean" else e != 0
        positions = include.list.eval(pl.int_range(pl.len()).filter(keep.fill_null(False)))
        kept = values.list.gather(positions, null_on_oob=True)
        errors.append((include.list.len() != values.list.len(), "#VALUE!"))
    if _fallback_kind(c, 2):
        use = ((kept.list.len() == 0) & (values.list.drop_nulls().list.len() > 0)
               & if_empty.is_not_null())
        kept = pl.when(use).then(pl.concat_list([if_empty])).otherwise(kept)
    return kept, errors


@_sql_reading
def sql_filter(c: FormCall, values: Any, include: Any, if_empty: Any = None) -> Any:
    errors: list[tuple[Any, str]] = []
    if isinstance(c.args[1], ir.Lambda):
        kept = _f("LIST_FILTER", values, include)
    else:
        mismatch = _sql_lengths_differ(c, 1, 0, include, values)
        if mismatch is True:
            return exp.Null(), exp.Literal.string("#VALUE!")

        def keep(x: exp.Expr, i: exp.Expr) -> exp.Expr:
            flag = _at(include, i)
            if c.elem(1).kind == "Boolean":
                return _coalesce(flag, exp.Boolean(this=False))
            return _coalesce(exp.NEQ(this=flag, expression=_n(0)), exp.Boolean(this=False))

        kept = _f("LIST_FILTER", values, _lam(keep, 2))
        if mismatch is not False:
            errors.append((mismatch, "#VALUE!"))
    if _fallback_kind(c, 2):
        use = _and(exp.EQ(this=_len(kept), expression=_n(0)),
                   exp.GT(this=_sql_count(values), expression=_n(0)), _not_null(if_empty))
        kept = _case([(use, exp.Array(expressions=[if_empty]))], kept)
    return kept, errors


def polars_map(c: FormCall, values: Any, body: Any) -> Any:
    return values.list.eval(_pl_bcast(body, c, 1))


def _sql_typed(c: FormCall, i: int, value: Any) -> Any:
    """Argument ``i`` with its SQL type when its value is a bare NULL (a list that is always an
    error, such as a folded SORTBY([TRUE], [1, 2])): DuckDB types an untyped NULL list from
    what it meets first, so MAP(["abc"], <that>, (x, y) => y) came out VARCHAR[] and a lookup
    in it failed the query (LIST_POSITION(VARCHAR[], BOOLEAN))."""
    if not isinstance(value, exp.Null):
        return value
    text = c.sql_type(i)
    return value if text is None else exp.cast(value, dtype(text))


@_sql_reading
def sql_map(c: FormCall, values: Any, *rest: Any) -> Any:
    if len(rest) == 1:
        return exp.Transform(this=values, expression=rest[0])
    values, second, lam = _sql_typed(c, 0, values), _sql_typed(c, 1, rest[0]), rest[1]
    body = _lam(lambda x, i: _apply(lam, x, _at(second, i)), 2)
    return _f("LIST_TRANSFORM", values, body), [
        (exp.NEQ(this=_len(second), expression=_len(values)), "#VALUE!")]


@_sql_reading
def sql_reduce(c: FormCall, initial: Any, values: Any, lam: Any) -> Any:
    return _f("LIST_REDUCE", values, lam, initial)


def _sequence_size(c: FormCall) -> int:
    rows = c.const_int(0, "SEQUENCE's rows (the list's size is decided when compiling)")
    columns = 1 if len(c.args) < 2 else c.const_int(
        1, "SEQUENCE's columns (the list's size is decided when compiling)")
    if rows < 0 or columns < 0:
        return -1
    n = rows * columns
    limit = c.node.size
    if limit and n > limit:
        c.refuse(f"SEQUENCE of {n} items is beyond the list limit ({limit})")
    return n


def polars_sequence(c: FormCall, rows: Any, columns: Any = None, start: Any = None,
                    step: Any = None) -> Any:
    n = _sequence_size(c)
    start = _num(pl.lit(1)) if start is None else start
    step = _num(pl.lit(1)) if step is None else step
    if n < 0:
        return pl.lit(None, dtype=pl.List(pl.Float64)), [(pl.lit(True), "#VALUE!")]
    number = _vp.dtype_of(Type("Number"))
    if n == 0:
        return pl.lit([], dtype=pl.List(number))
    index = pl.lit(list(range(n)), dtype=pl.List(number))
    value = _pl_with(index, [start.cast(number), step.cast(number)],
                     lambda items, got: items * got[1] + got[0])
    last = start.cast(pl.Float64) + step.cast(pl.Float64) * (n - 1)
    return value, [(last.is_nan() | (last.abs() >= _BIG), "#NUM!")]


def sql_sequence(c: FormCall, rows: Any, columns: Any = None, start: Any = None,
                 step: Any = None) -> Any:
    n = _sequence_size(c)
    start = _n(1) if start is None else start
    step = _n(1) if step is None else step
    if n < 0:
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    if n == 0:
        return exp.cast(exp.Array(expressions=[]), dtype("DOUBLE[]"))
    known = [_known_number(c, i) if i < len(c.args) else Decimal(1) for i in (2, 3)]
    if known[1] == 1:  # start + i
        value = _f("LIST_TRANSFORM", _f("RANGE", _n(n)), _lam(lambda i: _op("+", start, i)))
    else:
        value = _f("LIST_TRANSFORM", _f("RANGE", _n(n)), _lam(
            lambda i: _op("+", start, _op("*", step, i))))
    if known[0] is not None and known[1] is not None:  # the last item is known
        return value, _sql_errors([(abs(known[0] + known[1] * (n - 1)) >= Decimal("1e308"),
                                    "#NUM!")])
    last = _op("+", start, _op("*", step, _n(n - 1)))
    return value, _sql_range_errors(exp.cast(last, dtype("DOUBLE")))


def _numbers_in(t: Type | None) -> bool:
    """Whether a list holds numbers at some depth (the literals polars 2.1 slices at the
    wrong scale in decimal mode; dates, texts and booleans slice right)."""
    while t is not None and t.kind == "List":
        t = t.elem
    return t is None or t.kind not in ("Date", "DateTime", "Duration", "Text", "Boolean")


def _pl_sliced(c: FormCall, sliced: Any) -> Any:
    """A slice of argument 0 with its own dtype: polars 2.1 slices a list literal by a count
    that varies by row into its physical items (a List(Date) literal comes back as Int32 days
    since 1970 while the plan still says List(Date), so a plain cast back is dropped as a
    no-op); a list whose items are temporal goes through its physical dtype and back."""
    def physical(t: Type | None) -> Any:
        if t is not None and t.kind == "List":
            inner = physical(t.elem)
            return None if inner is None else pl.List(inner)
        if t is not None and t.kind in ("DateTime", "Duration"):
            return pl.Int64()
        return pl.Int32() if t is not None and t.kind == "Date" else None

    raw = physical(c.type(0))
    return sliced if raw is None else sliced.cast(raw).cast(c.dtype(0))


def polars_take(c: FormCall, values: Any, count: Any) -> Any:
    if not _float() and type(c.args[0]) in (ir.ListOf, ir.Const) and _numbers_in(c.type(0)):
        c.refuse("polars 2.1 reads the Decimal items of a sliced list literal at the wrong "
                 "scale (0.001 comes back as 1e15); list columns are fine")
    n = _pl_int(count)
    front = values.list.head(n.clip(0, None))
    back = values.list.tail((-n).clip(0, None))
    return _pl_sliced(c, pl.when(n >= 0).then(front).otherwise(back))


@_sql_reading
def sql_take(c: FormCall, values: Any, count: Any) -> Any:
    n, known = _sql_int_arg(c, 1, count)
    length = _known_len(c, 0)
    size = _n(length) if length is not None else c.let(_len(values))
    front = _f("LIST_SLICE", values, _n(1), n if known is not None and known >= 0
               else _f("GREATEST", n, _n(0)))
    if known is not None and known >= 0:
        return front
    first = _op("+", _op("+", size, n), _n(1))
    back = _f("LIST_SLICE", values, _n(max(length + known + 1, 1))
              if length is not None and known is not None
              else _f("GREATEST", first, _n(1)), size)
    if known is not None:
        return back
    return _case([(exp.GTE(this=n, expression=_n(0)), front)], back)


def polars_drop(c: FormCall, values: Any, count: Any) -> Any:
    if not _float() and type(c.args[0]) in (ir.ListOf, ir.Const) and _numbers_in(c.type(0)):
        c.refuse("polars 2.1 reads the Decimal items of a sliced list literal at the wrong "
                 "scale (0.001 comes back as 1e15); list columns are fine")
    n = _pl_int(count)
    size = values.list.len().cast(pl.Int64)
    rest = values.list.slice(n.clip(0, None))
    front = values.list.head((size + n).clip(0, None))
    return _pl_sliced(c, pl.when(n >= 0).then(rest).otherwise(front))


@_sql_reading
def sql_drop(c: FormCall, values: Any, count: Any) -> Any:
    n, known = _sql_int_arg(c, 1, count)
    length = _known_len(c, 0)
    size = _n(length) if length is not None else c.let(_len(values))
    if known is not None and length is not None:  # decided here: the slice is known
        if known >= 0:
            return _f("LIST_SLICE", values, _n(min(known, length) + 1), size)
        return _f("LIST_SLICE", values, _n(1), _n(max(length + known, 0)))
    rest = _f("LIST_SLICE", values, _op("+", _f("LEAST", n, size), _n(1)), size)
    front = _f("LIST_SLICE", values, _n(1), _f("GREATEST", _op("+", size, n), _n(0)))
    if known is not None:
        return rest if known >= 0 else front
    return _case([(exp.GTE(this=n, expression=_n(0)), rest)], front)


def polars_flatten(c: FormCall, values: Any) -> Any:
    elem = c.elem(0)
    if elem.kind != "List":
        return values
    return values.list.eval(_e().explode(keep_nulls=False))


@_sql_checking
def sql_flatten(c: FormCall, values: Any) -> Any:
    if c.elem(0).kind != "List":
        return values
    return _f("FLATTEN", values)


def polars_unique(c: FormCall, values: Any, by_col: Any = None, exactly_once: Any = None) -> Any:
    kind = c.elem(0).kind
    if kind in ("List", "Record", "Any"):
        c.refuse(f"{kind} items")
    e = _e()
    key = _pl_key(e, kind)
    first = values.list.eval(e.filter(key.is_first_distinct()))
    once = values.list.eval(e.filter(key.is_unique()))
    literal = c.const(2)
    if literal is _MISSING:
        return pl.when(exactly_once).then(once).otherwise(first)
    return once if literal else first


@_sql_reading
def sql_unique(c: FormCall, values: Any, by_col: Any = None, exactly_once: Any = None) -> Any:
    kind = c.elem(0).kind
    if kind in ("List", "Record", "Any"):
        c.refuse(f"{kind} items")

    def build(keys: exp.Expr) -> tuple[exp.Expr, exp.Expr]:
        first = _f("LIST_FILTER", values, _lam(lambda x, i: exp.EQ(
            this=_f("LIST_POSITION", keys, _sql_key(x, kind)), expression=i), 2))
        once = _f("LIST_FILTER", values, _lam(lambda x: exp.EQ(this=_len(_f(
            "LIST_FILTER", keys, _lam(lambda y: exp.NullSafeEQ(this=y, expression=_sql_key(
                x, kind))))), expression=_n(1))))
        return first, once

    keys = values if kind != "Text" else _f("LIST_TRANSFORM", values,
                                             _lam(lambda x: exp.Lower(this=x)))
    first, once = build(keys)
    literal = c.const(2)
    if literal is _MISSING:
        return _case([(exactly_once, once)], first)
    return once if literal else first


