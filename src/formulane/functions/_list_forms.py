"""Polars and SQL forms of the list, lookup and statistics functions (see `_arrays.list_form`).

Each ``polars_<name>`` / ``sql_<name>`` mirrors its scalar twin (same errors, in the same order;
blanks skipped where the scalar skips them) and receives a `Call` first: the IR call being
translated, whose argument types and constant arguments decide the form (a ``many(NUMBER)``
argument may be a number or a list; a criteria text is translated when it is a literal). A form
that cannot be faithful for this call raises `Unsupported` through ``call.refuse(reason)``, so
the refusal happens at compile time, with the reason, never a wrong answer.

Polars: per-row lists are ``List`` columns; work inside a list runs in ``list.eval``/
``list.agg``, which see only the list's elements, so a per-row scalar that an item must meet
(XLOOKUP's value, a criteria column) is appended to the list and read back as its last item
(`_pl_with`), and lists walked in step (SUMPRODUCT) are concatenated and cut back into equal
slices (`_pl_zip`); both work for every dtype, decimals included.
SQL: DuckDB list functions (``list_filter``, ``list_transform`` with the element index as a
second lambda parameter, ``list_sort``...); they are written with their DuckDB names, so a
dialect without them fails loudly rather than answering differently (Spark's index lambdas
count from 0). Lists are 1-based in SQL, 0-based in polars.

Numbers: Float64 columns compute in float64 with the backends' float-policy tolerance; "no
spread" (STDEV of equal numbers, CORREL of a constant list) is decided exactly by comparing the
minimum and the maximum, never by a rounded variance, so the error values match the scalar's.
Decimal columns: sums, counts, extremes, sorting and lookups stay exact; moments, roots,
logarithms and products of two lists in SQL compute in DOUBLE (DuckDB's DECIMAL(38, 18) product
overflows from 100 on), as division does in the core.

Refused, with the reason: binary searches (XLOOKUP/XMATCH search modes 2 and -2, approximate
MATCH, vector LOOKUP: on unsorted data their answer depends on the probe order); criteria texts
that are not literals (they are parsed when compiling; a literal ``">=" & 2`` is folded);
numeric criteria over text items (Excel also reads numbers written as text); SEQUENCE whose size
is read from the data (the list limit is decided when compiling); REDUCE and two-list MAP in
polars (list.eval binds one element); Duration totals and, in SQL, Duration ordering.
"""

from __future__ import annotations

import datetime as dt
import decimal
import importlib
import itertools
import math
from decimal import Decimal
from typing import Any, Callable, NoReturn, Sequence

from sqlglot import exp

from ..errors import Unsupported
from ..interpreter import ir
from ..types import Type
from ..values import CONTEXT, ErrorValue, XLError, display_text
from ._criteria import Criterion, criterion, to_int


class _Lazy:
    """A module imported on first attribute access (polars is optional: SQL forms never
    import it)."""

    def __init__(self, name: str) -> None:
        self.__dict__["_name"] = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__dict__["_name"]), attr)


pl: Any = _Lazy("polars")
_vp: Any = _Lazy("formulane.vectorized.polars")
_vs: Any = _Lazy("formulane.vectorized.sql")

_MISSING: Any = object()
_EPOCH = dt.date(1899, 12, 30)  # Excel serial day 0 (see `_criteria.serial`)
_BIG = 1e308  # the engine's numbers stay below this magnitude (#NUM! beyond)


# ------------------------------------------------------------------------------ dispatch


class Call:
    """The IR call a form translates: its arguments' types and literal values."""

    def __init__(self, node: ir.Call, backend: str) -> None:
        self.node = node
        self.backend = backend
        self.args = node.args
        self.name = node.spec.name

    def type(self, i: int) -> Type:
        return self.args[i].type

    def kind(self, i: int) -> str:
        return self.args[i].type.kind

    def elem(self, i: int) -> Type:
        t = self.args[i].type
        if t.kind != "List" or t.elem is None:
            self.refuse(f"argument {i + 1} is not a list")
        return t.elem

    def const(self, i: int) -> Any:
        """The argument's value when it is a literal (not an error), else `_MISSING`."""
        if i >= len(self.args):
            return _MISSING
        return _constant(self.args[i])

    def omitted(self, i: int) -> bool:
        """An optional argument left out (or given as a literal blank)."""
        return i >= len(self.args) or self.const(i) is None

    def const_int(self, i: int, what: str) -> int:
        """A literal whole-number argument (Excel truncates), else a refusal."""
        v = self.const(i)
        if v is _MISSING or v is None or isinstance(v, (str, tuple)):
            self.refuse(f"{what} must be a literal number")
        return to_int(v, what)

    def lambda_body(self, i: int) -> ir.IR:
        a = self.args[i]
        assert isinstance(a, ir.Lambda)
        return a.body

    def refuse(self, reason: str) -> NoReturn:
        backend = "polars" if self.backend == "polars" else "SQL"
        verb = "evaluate" if self.backend == "polars" else "express"
        raise Unsupported(f"{backend} cannot {verb} {self.name}: {reason}", function=self.name,
                          backend=self.backend, reason=reason, span=self.node.span)


def _constant(node: ir.IR, depth: int = 0) -> Any:
    """A literal, or a call of literals folded as the scalar engine folds it (``-1``,
    ``1 / 4``); `_MISSING` otherwise or when folding gives an error value."""
    if isinstance(node, ir.Const):
        return _MISSING if isinstance(node.value, ErrorValue) else node.value
    if isinstance(node, ir.Coerce) and depth <= 8:  # the excel profile's COUNTIF(xs, 5)
        from ..interpreter.compile import _COERCIONS

        inner = _constant(node.node, depth + 1)
        convert = _COERCIONS.get(node.mode)
        if inner is _MISSING or convert is None:
            return _MISSING
        try:
            with decimal.localcontext(CONTEXT):
                return convert(inner)
        except (XLError, ArithmeticError, ValueError, TypeError):
            return _MISSING
    if not isinstance(node, ir.Call) or depth > 8:
        return _MISSING
    spec = node.spec
    args = [_constant(a, depth + 1) for a in node.args]
    if any(a is _MISSING or a is None for a in args):
        return _MISSING
    if spec.name == "&" and len(args) == 2:  # ">=" & 2: criteria are built this way
        text = display_text(args[0]) + display_text(args[1])
        return text if len(text) <= 255 else _MISSING  # Excel's own bound on criteria
    impl = node.sig.impl or spec.impl
    if impl is None or spec.lazy or spec.volatile or spec.needs_ctx or spec.accepts_errors:
        return _MISSING
    try:
        with decimal.localcontext(CONTEXT):
            value = impl(*args)
    except (XLError, ArithmeticError, ValueError, TypeError):
        return _MISSING
    return _MISSING if isinstance(value, ErrorValue) else value


def run(backend: str, name: str, form: Any, args: Sequence[Any], call: Any) -> Any:
    """Applies ``<backend>_<name>`` to the values; ``call`` is the `ir.Call` being translated,
    which the backends pass to every form that declares ``wants_call`` (`_arrays.list_form`)."""
    if not isinstance(call, ir.Call):
        raise Unsupported(f"the {backend} form of {name} needs the call's argument types",
                          function=name, backend=backend,
                          reason="the backend did not pass the call being translated (call=)")
    return globals()[f"{backend}_{name}"](Call(call, backend), *args)


def _references(body: ir.IR, slot: int) -> bool:
    stack = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Var) and n.slot == slot:
            return True
        stack.extend(ir.ir_children(n))
    return False


# ---------------------------------------------------------------------------- polars tools


def _e() -> Any:
    return pl.element()


def _float() -> bool:
    return _vp.numbers() == "float"


def _num(x: Any) -> Any:
    """A number in the program's numeric dtype."""
    return x.cast(pl.Float64) if _float() else x.cast(_vp.DECIMAL_DTYPE)


def _pl_lit(v: Any) -> Any:
    if isinstance(v, (int, Decimal)) and not isinstance(v, bool):
        return _vp.literal(v, Type("Number"))
    return pl.lit(v)


def _pl_range_errors(value: Any) -> list[tuple[Any, str]]:
    """#NUM! for a float result the engine cannot hold (non-finite, or 1e308 and beyond)."""
    if not _float():
        return []
    v = value.cast(pl.Float64)
    return [(v.is_nan() | (v.abs() >= _BIG), "#NUM!")]


def _pl_int(x: Any) -> Any:
    """Excel's integer argument: truncated toward zero (huge magnitudes clipped, harmlessly)."""
    return x.cast(pl.Float64).clip(-1e15, 1e15).cast(pl.Int64)


def _pl_empty_like(lst: Any) -> Any:
    return lst.list.head(0)


def _pl_items(c: Call, values: Sequence[Any], start: int = 0) -> Any:
    """``many(...)`` arguments as one list (numbers given directly and list items, in order;
    blanks dropped; a blank list counts as empty)."""
    parts = []
    only_list = None
    for i in range(start, len(values)):
        t = c.type(i)
        v = values[i]
        if t.kind == "List":
            if t.elem is not None and t.elem.kind == "List":
                c.refuse("nested lists")
            if t.elem is None or t.elem.kind in ("Number", "Never", "Blank"):
                v = v.cast(pl.List(_vp.dtype_of(Type("Number"))))  # [] is a list of nulls
            v = v.fill_null([]) if t.nullable else v
            only_list = v
        parts.append(v)
    if len(parts) == 1 and only_list is not None:
        return only_list.list.drop_nulls()
    return pl.concat_list(parts).list.drop_nulls()


def _pl_bcast(body: Any, c: Call, i: int) -> Any:
    """A lambda body made element-wise even when it ignores its parameter (x => TRUE)."""
    lam = c.args[i]
    assert isinstance(lam, ir.Lambda)
    if _references(lam.body, lam.slots[0]):
        return body
    e = _e()
    return pl.when(e.is_null() | e.is_not_null()).then(body)


def _pl_positions(mask: Any) -> Any:
    """0-based positions where a list of booleans is TRUE (blank is FALSE)."""
    e = _e()
    return mask.list.eval(pl.int_range(pl.len()).filter(e.fill_null(False)))


def _pl_zip(lists: Sequence[Any], build: Callable[..., Any]) -> Any:
    """``list.agg`` of ``build(*items)`` over lists of one length, item by item: the lists are
    concatenated and cut back into equal slices inside (any dtype, decimals included)."""
    e = _e()
    k = len(lists)
    n = pl.len() // k
    slices = [e.slice(n * j, n) for j in range(k)]
    return pl.concat_list(list(lists)).list.agg(build(*slices))


def _pl_with(lst: Any, extras: Sequence[Any], build: Callable[[Any, list[Any]], Any],
             agg: bool = False) -> Any:
    """``list.eval`` (or ``list.agg``) of ``build(items, extras)`` where the per-row scalars
    ``extras`` are appended to the list and read back inside (list.eval sees only the list)."""
    e = _e()
    if not extras:
        body = build(e, [])
        return lst.list.agg(body) if agg else lst.list.eval(body)
    k = len(extras)
    n = pl.len() - k
    items = e.head(n)
    got = [e.get(n + j) for j in range(k)]
    body = build(items, got)
    base = pl.concat_list([lst, *extras])
    return base.list.agg(body) if agg else base.list.eval(body)


# ------------------------------------------------------------------------------- SQL tools

_names = itertools.count(1)


def _f(name: str, *args: Any) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _p(e: exp.Expression) -> exp.Expression:
    """Parenthesized when it is an operator expression (sqlglot prints the tree as built)."""
    if isinstance(e, (exp.Binary, exp.Unary, exp.Connector, exp.Escape)) and not isinstance(
            e, exp.Paren):
        return exp.Paren(this=e)
    return e


def _n(v: Any) -> exp.Expression:
    return _vs.literal(v)


def _lam(build: Callable[..., exp.Expression], arity: int = 1) -> exp.Lambda:
    """A SQL lambda with fresh parameter names (``LAMBDA _l1, _l2 : ...`` in DuckDB)."""
    names = [f"_l{next(_names)}" for _ in range(arity)]
    body = build(*[exp.column(n) for n in names])
    return exp.Lambda(this=body, expressions=[exp.to_identifier(n) for n in names])


def _apply(lam: exp.Lambda, *args: exp.Expression) -> exp.Expression:
    """A lambda's body with its parameters replaced by expressions."""
    names = [i.name for i in lam.expressions]
    subst = dict(zip(names, args))

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table and node.name in subst:
            return _p(subst[node.name].copy())
        return node

    return lam.this.copy().transform(swap)


def _at(lst: exp.Expression, i: exp.Expression) -> exp.Expression:
    """The i-th item (1-based; NULL outside)."""
    return exp.Bracket(this=_p(lst), expressions=[i], offset=1)


def _len(lst: exp.Expression) -> exp.Expression:
    return _f("LEN", lst)


def _and(*xs: exp.Expression) -> exp.Expression:
    out = _p(xs[0])
    for x in xs[1:]:
        out = exp.And(this=out, expression=_p(x))
    return out


def _or(*xs: exp.Expression) -> exp.Expression:
    out = _p(xs[0])
    for x in xs[1:]:
        out = exp.Or(this=out, expression=_p(x))
    return out


def _not(x: exp.Expression) -> exp.Expression:
    return exp.Not(this=_p(x))


def _is_null(x: exp.Expression) -> exp.Expression:
    return exp.Is(this=_p(x), expression=exp.Null())


def _not_null(x: exp.Expression) -> exp.Expression:
    return exp.Not(this=exp.Is(this=_p(x), expression=exp.Null()))


_CMP: dict[str, Any] = {"=": exp.EQ, "<>": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}


def _cmp(op: str, a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return _CMP[op](this=_p(a), expression=_p(b))


def _add(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Add(this=_p(a), expression=_p(b))


def _sub(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Sub(this=_p(a), expression=_p(b))


def _mul(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Mul(this=_p(a), expression=_p(b))


def _div(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Div(this=_p(a), expression=_p(b), typed=False, safe=False)


def _case(pairs: Sequence[tuple[exp.Expression, exp.Expression]],
          default: exp.Expression | None = None) -> exp.Expression:
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=default)


def _coalesce(a: exp.Expression, *rest: exp.Expression) -> exp.Expression:
    return exp.Coalesce(this=a, expressions=list(rest))


def _trunc(x: exp.Expression) -> exp.Expression:
    return _f("TRUNC", x)


def _sql_int(x: exp.Expression) -> exp.Expression:
    """Excel's integer argument as BIGINT: truncated, clamped far beyond any list length."""
    clamped = _f("LEAST", _f("GREATEST", _trunc(x), _n(-(10**15))), _n(10**15))
    return exp.cast(clamped, exp.DataType.build("BIGINT"))


def _sql_range_errors(value: exp.Expression) -> list[tuple[exp.Expression, str]]:
    # NaN compares above every number in DuckDB, so this also catches inf - inf.
    return [(exp.GTE(this=_f("ABS", value), expression=exp.Literal.number("1e308")), "#NUM!")]


def _sql_items(c: Call, values: Sequence[Any], start: int = 0) -> exp.Expression:
    """``many(...)`` arguments as one list (blanks kept: list aggregates skip them)."""
    parts = []
    only_list = None
    for i in range(start, len(values)):
        t = c.type(i)
        v = values[i]
        if t.kind == "List":
            if t.elem is not None and t.elem.kind == "List":
                c.refuse("nested lists")
            v = _coalesce(v, exp.Array(expressions=[])) if t.nullable else v
            only_list = v
            parts.append(v)
        else:
            parts.append(exp.Array(expressions=[v]))
    if len(parts) == 1 and only_list is not None:
        return only_list
    if len(parts) == 1:
        return parts[0]
    return _f("LIST_CONCAT", *parts)


def _sql_present(lst: exp.Expression) -> exp.Expression:
    return _f("LIST_FILTER", lst, _lam(lambda x: _not_null(x)))


def _sql_count(lst: exp.Expression) -> exp.Expression:
    """The non-blank items of a list (0 for a blank list)."""
    return _coalesce(_f("LIST_COUNT", lst), _n(0))


def _sql_let(values: dict[str, exp.Expression],
             body: Callable[[dict[str, exp.Expression]], exp.Expression]) -> exp.Expression:
    """Bind expressions once per row (``list_transform([{...}], s -> ...)[1]``), so a lambda
    that needs a list's mean does not recompute it for every item."""
    name = f"_s{next(_names)}"
    struct = exp.Struct(expressions=[
        exp.PropertyEQ(this=exp.to_identifier(k), expression=v) for k, v in values.items()])
    fields: dict[str, exp.Expression] = {
        k: exp.Dot(this=exp.column(name), expression=exp.to_identifier(k)) for k in values}
    lam = exp.Lambda(this=body(fields), expressions=[exp.to_identifier(name)])
    return _at(_f("LIST_TRANSFORM", exp.Array(expressions=[struct]), lam), _n(1))


# ------------------------------------------------------------------------------ aggregates


def polars_sum(c: Call, *values: Any) -> Any:
    total = _num(_pl_items(c, values).list.sum()).fill_null(0)
    return total, _pl_range_errors(total)


def sql_sum(c: Call, *values: Any) -> Any:
    total = _coalesce(_f("LIST_SUM", _sql_items(c, values)), _n(0))
    return total, _sql_range_errors(total)


def polars_product(c: Call, *values: Any) -> Any:
    items = _pl_items(c, values)
    product = _num(items.list.agg(_e().product()))
    value = pl.when(items.list.len() == 0).then(_num(pl.lit(0))).otherwise(product)
    return value, _pl_range_errors(value)


def sql_product(c: Call, *values: Any) -> Any:
    items = _sql_items(c, values)
    value = _case([(exp.EQ(this=_sql_count(items), expression=_n(0)), _n(0))],
                  _f("LIST_PRODUCT", items))
    return value, _sql_range_errors(value)


def _pl_mean(items: Any) -> Any:
    """The mean of each list: float64 in float mode; in decimal mode the decimal sum divided by
    the count (rounded at 18 places), never through float64 (a null for an empty list)."""
    if _float():
        return _num(items.list.mean())
    n = items.list.len()
    total = items.cast(pl.List(_vp.DECIMAL_DTYPE)).list.sum()
    # (a zero divisor is masked: polars aborts the whole query on a decimal division by zero)
    return total / pl.when(n > 0).then(n).cast(_vp.DECIMAL_DTYPE)


def polars_average(c: Call, *values: Any) -> Any:
    items = _pl_items(c, values)
    return _pl_mean(items), [(items.list.len().fill_null(0) == 0, "#DIV/0!")]


def sql_average(c: Call, *values: Any) -> Any:
    items = _sql_items(c, values)
    return _f("LIST_AVG", items), [(exp.EQ(this=_sql_count(items), expression=_n(0)),
                                    "#DIV/0!")]


def _pl_extreme(c: Call, values: Sequence[Any], largest: bool) -> Any:
    items = _pl_items(c, values)
    value = items.list.max() if largest else items.list.min()
    if c.node.type.kind == "Number":
        return _num(value).fill_null(0)  # Excel: 0 when there are no numbers
    return value, [(items.list.len().fill_null(0) == 0, "#CALC!")]


def _sql_extreme(c: Call, values: Sequence[Any], largest: bool) -> Any:
    items = _sql_items(c, values)
    value = _f("LIST_MAX" if largest else "LIST_MIN", items)
    if c.node.type.kind == "Number":
        return _coalesce(value, _n(0))
    return value, [(exp.EQ(this=_sql_count(items), expression=_n(0)), "#CALC!")]


def polars_min(c: Call, *values: Any) -> Any:
    return _pl_extreme(c, values, False)


def polars_max(c: Call, *values: Any) -> Any:
    return _pl_extreme(c, values, True)


def sql_min(c: Call, *values: Any) -> Any:
    return _sql_extreme(c, values, False)


def sql_max(c: Call, *values: Any) -> Any:
    return _sql_extreme(c, values, True)


_SERIAL_KINDS = ("Number", "Date", "DateTime", "Duration")


def _count_plan(c: Call, nonblank: bool) -> list[tuple[int, str]]:
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


def _pl_count(c: Call, values: Sequence[Any], nonblank: bool) -> Any:
    total = pl.lit(0, dtype=pl.Int64)
    for i, how in _count_plan(c, nonblank):
        v = values[i]
        if how == "list":
            total = total + v.list.drop_nulls().list.len().cast(pl.Int64).fill_null(0)
        elif how == "scalar":
            total = total + v.is_not_null().cast(pl.Int64)
    return _num(total)


def _sql_count_args(c: Call, values: Sequence[Any], nonblank: bool) -> Any:
    total: exp.Expression = _n(0)
    for i, how in _count_plan(c, nonblank):
        v = values[i]
        if how == "list":
            total = _add(total, _sql_count(v))
        elif how == "scalar":
            total = _add(total, _case([(_not_null(v), _n(1))], _n(0)))
    return total


def polars_count(c: Call, *values: Any) -> Any:
    return _pl_count(c, values, False)


def sql_count(c: Call, *values: Any) -> Any:
    return _sql_count_args(c, values, False)


def polars_counta(c: Call, *values: Any) -> Any:
    return _pl_count(c, values, True)


def sql_counta(c: Call, *values: Any) -> Any:
    return _sql_count_args(c, values, True)


def polars_countblank(c: Call, values: Any) -> Any:
    e = _e()
    blank = e.is_null() | (e == "") if c.elem(0).kind == "Text" else e.is_null()
    return _num(values.list.agg(blank.sum()).fill_null(0))


def sql_countblank(c: Call, values: Any) -> Any:
    if c.elem(0).kind == "Text":
        test = _lam(lambda x: _or(_is_null(x), exp.EQ(this=x, expression=exp.Literal.string(""))))
    else:
        test = _lam(lambda x: _is_null(x))
    return _coalesce(_len(_f("LIST_FILTER", values, test)), _n(0))


# ------------------------------------------------------------------------ order statistics


def polars_median(c: Call, *values: Any) -> Any:
    items = _pl_items(c, values)
    return _num(items.list.median()), [(items.list.len().fill_null(0) == 0, "#NUM!")]


def sql_median(c: Call, *values: Any) -> Any:
    items = _sql_items(c, values)
    return _f("LIST_MEDIAN", items), [(exp.EQ(this=_sql_count(items), expression=_n(0)),
                                       "#NUM!")]


def _pl_spread(c: Call, values: Sequence[Any], sample: bool, root: bool) -> Any:
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
    masked = pl.when(safe).then(items.cast(pl.List(_vp.DECIMAL_DTYPE)))
    total = masked.list.sum()
    squares = masked.list.eval(pl.element() * pl.element()).list.sum()
    count = pl.when(safe).then(n).cast(_vp.DECIMAL_DTYPE)
    exact = (squares - total * total / count) / pl.when(safe).then(n - ddof).cast(
        _vp.DECIMAL_DTYPE)
    return pl.when(safe).then(exact).otherwise(_num(estimate))


def _sql_spread(c: Call, values: Sequence[Any], sample: bool, root: bool) -> Any:
    items = _sql_items(c, values)
    name = ("LIST_STDDEV_" if root else "LIST_VAR_") + ("SAMP" if sample else "POP")
    flat = exp.EQ(this=_f("LIST_MIN", items), expression=_f("LIST_MAX", items))
    if root:  # scaled, as in the polars form
        scale = _f("GREATEST", _f("ABS", _f("LIST_MIN", items)), _f("ABS", _f("LIST_MAX", items)))
        raw = _sql_let({"xs": items, "m": exp.cast(scale, exp.DataType.build("DOUBLE"))},
                       lambda s: _mul(_f(name, _f("LIST_TRANSFORM", s["xs"], _lam(
                           lambda x: _div(x, s["m"])))), s["m"]))
    else:
        raw = _f(name, items)
    value = _case([(flat, _n(0))], raw)
    return value, [(exp.LT(this=_sql_count(items), expression=_n(2 if sample else 1)),
                    "#DIV/0!"), *_sql_range_errors(value)]


def polars_stdev_s(c: Call, *values: Any) -> Any:
    return _pl_spread(c, values, True, True)


def polars_stdev_p(c: Call, *values: Any) -> Any:
    return _pl_spread(c, values, False, True)


def polars_var_s(c: Call, *values: Any) -> Any:
    return _pl_spread(c, values, True, False)


def polars_var_p(c: Call, *values: Any) -> Any:
    return _pl_spread(c, values, False, False)


def sql_stdev_s(c: Call, *values: Any) -> Any:
    return _sql_spread(c, values, True, True)


def sql_stdev_p(c: Call, *values: Any) -> Any:
    return _sql_spread(c, values, False, True)


def sql_var_s(c: Call, *values: Any) -> Any:
    return _sql_spread(c, values, True, False)


def sql_var_p(c: Call, *values: Any) -> Any:
    return _sql_spread(c, values, False, False)


def _pl_kth(c: Call, values: Any, k: Any, largest: bool) -> Any:
    items = values.list.drop_nulls()
    kf = k.cast(pl.Float64)
    position = kf.ceil() if largest else kf.floor()
    n = items.list.len().fill_null(0)
    bad = (n == 0) | (position < 1) | (position > n)
    index = pl.when(bad).then(pl.lit(1.0)).otherwise(position).cast(pl.Int64) - 1
    value = items.list.sort(descending=largest).list.get(index, null_on_oob=True)
    return _num(value), [(bad, "#NUM!")]


def _sql_kth(c: Call, values: Any, k: Any, largest: bool) -> Any:
    items = _sql_present(values)
    position = _f("CEIL" if largest else "FLOOR", k)
    n = _sql_count(values)
    bad = _or(exp.EQ(this=n, expression=_n(0)), exp.LT(this=position, expression=_n(1)),
              exp.GT(this=position, expression=n))
    index = exp.cast(_case([(bad, _n(1))], position), exp.DataType.build("BIGINT"))
    ordered = _f("LIST_SORT", items, exp.Literal.string("DESC" if largest else "ASC"))
    return _at(ordered, index), [(bad, "#NUM!")]


def polars_large(c: Call, values: Any, k: Any) -> Any:
    return _pl_kth(c, values, k, True)


def polars_small(c: Call, values: Any, k: Any) -> Any:
    return _pl_kth(c, values, k, False)


def sql_large(c: Call, values: Any, k: Any) -> Any:
    return _sql_kth(c, values, k, True)


def sql_small(c: Call, values: Any, k: Any) -> Any:
    return _sql_kth(c, values, k, False)


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


def _sql_percentile(values: Any, k: Any, errors: list[tuple[Any, str]]) -> Any:
    items = _f("LIST_SORT", _sql_present(values))
    n = _sql_count(values)
    bad = _or(exp.EQ(this=n, expression=_n(0)), exp.LT(this=k, expression=_n(0)),
              exp.GT(this=k, expression=_n(1)))
    kd = exp.cast(k, exp.DataType.build("DOUBLE"))
    position = _case([(bad, _n(0))], _mul(kd, _sub(n, _n(1))))
    lower = _f("FLOOR", position)
    frac = _sub(position, lower)
    lo_i = exp.cast(lower, exp.DataType.build("BIGINT"))
    lo = _at(items, _add(lo_i, _n(1)))
    hi = _at(items, _f("LEAST", _add(lo_i, _n(2)), n))
    value = _case([(exp.EQ(this=frac, expression=_n(0)), lo)],
                  _add(lo, _mul(frac, _sub(hi, lo))))
    return value, [*errors, (bad, "#NUM!")]


def polars_percentile_inc(c: Call, values: Any, k: Any) -> Any:
    return _pl_percentile(values, k, [])


def sql_percentile_inc(c: Call, values: Any, k: Any) -> Any:
    return _sql_percentile(values, k, [])


def polars_sumproduct(c: Call, *lists: Any) -> Any:
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
        return out.sum()

    total = _num(_pl_zip(guarded, products)).fill_null(0)
    return total, [(~ok, "#VALUE!"), *_pl_range_errors(total)]


def sql_sumproduct(c: Call, *lists: Any) -> Any:
    first = lists[0]

    def term(x: exp.Expression, i: exp.Expression) -> exp.Expression:
        # In DOUBLE: a product of two DECIMAL(38, 18) overflows DuckDB from 100 on (its scale
        # would be 36), so decimal columns get the float product here, as LIST_PRODUCT does.
        def factor(v: exp.Expression) -> exp.Expression:
            return exp.cast(_coalesce(v, _n(0)), exp.DataType.build("DOUBLE"))

        out = factor(x)
        for lst in lists[1:]:
            out = _mul(out, factor(_at(lst, i)))
        return out

    total = _coalesce(_f("LIST_SUM", _f("LIST_TRANSFORM", first, _lam(term, 2))), _n(0))
    mismatch = [exp.NEQ(this=_len(lst), expression=_len(first)) for lst in lists[1:]]
    errors = [(_or(*mismatch), "#VALUE!")] if mismatch else []
    return total, [*errors, *_sql_range_errors(total)]


# -------------------------------------------------------------------------------- criteria


def _wildcard_atoms(pattern: str) -> list[tuple[str, str]]:
    """Excel wildcard atoms of a pattern, lowercased as `_criteria.Wildcard` reads them:
    ("lit", char), ("any", "") for ``?`` and ("star", "") for a run of ``*``."""
    low = pattern.lower()
    atoms: list[tuple[str, str]] = []
    i = 0
    while i < len(low):
        ch = low[i]
        if ch == "~" and i + 1 < len(low) and low[i + 1] in "*?~":
            atoms.append(("lit", low[i + 1]))
            i += 2
            continue
        if ch == "*":
            if not atoms or atoms[-1][0] != "star":
                atoms.append(("star", ""))
        elif ch == "?":
            atoms.append(("any", ""))
        else:
            atoms.append(("lit", ch))
        i += 1
    return atoms


def _regex(atoms: list[tuple[str, str]]) -> str:
    """A whole-text regular expression (Rust regex and RE2 syntax alike)."""
    out = ["(?s)^"]
    for kind, ch in atoms:
        if kind == "star":
            out.append(".*")
        elif kind == "any":
            out.append(".")
        elif ch.isalnum() or ch == " ":
            out.append(ch)
        else:
            out.append(f"\\x{{{ord(ch):x}}}")
    out.append("$")
    return "".join(out)


def _like(atoms: list[tuple[str, str]]) -> str:
    out = []
    for kind, ch in atoms:
        if kind == "star":
            out.append("%")
        elif kind == "any":
            out.append("_")
        elif ch in "%_\\":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


_WILD_TOKENS = r"~[*?~]|\*|\?|[^*?~]+|~"


def _pl_wild_regex(text: Any) -> Any:
    """A wildcard pattern read from the data as a whole-text regular expression, row by row:
    the lowercased text cut into tokens (``~x`` escapes, ``*``, ``?``, literal runs), each
    translated, then joined (as `_wildcard_atoms` and `_regex` do for a literal)."""
    e = _e()
    tokens = text.str.to_lowercase().str.extract_all(_WILD_TOKENS)
    piece = (pl.when(e == "*").then(pl.lit(".*"))
             .when(e == "?").then(pl.lit("."))
             .when((e.str.len_chars() == 2) & e.str.starts_with("~"))
             .then(e.str.slice(1).str.escape_regex())
             .otherwise(e.str.escape_regex()))
    return pl.lit("(?s)^") + tokens.list.eval(piece).list.join("") + pl.lit("$")


def _sql_wild_regex(text: exp.Expression) -> exp.Expression:
    tokens = _f("REGEXP_EXTRACT_ALL", exp.Lower(this=text), exp.Literal.string(_WILD_TOKENS))

    def piece(t: exp.Expression) -> exp.Expression:
        escaped = _and(exp.EQ(this=_f("LENGTH", t), expression=_n(2)),
                       _f("STARTS_WITH", t, exp.Literal.string("~")))
        return _case([(exp.EQ(this=t, expression=exp.Literal.string("*")),
                       exp.Literal.string(".*")),
                      (exp.EQ(this=t, expression=exp.Literal.string("?")),
                       exp.Literal.string(".")),
                      (escaped, _f("REGEXP_ESCAPE", _f("SUBSTRING", t, _n(2))))],
                     _f("REGEXP_ESCAPE", t))

    body = _f("ARRAY_TO_STRING", _f("LIST_TRANSFORM", tokens, _lam(piece)),
              exp.Literal.string(""))
    return exp.DPipe(this=exp.Literal.string("(?s)"), expression=body, safe=True)


class _PlOps:
    """Predicate building blocks over polars expressions (see `_crit_pred`)."""

    def true(self) -> Any:
        return pl.lit(True)

    def false(self) -> Any:
        return pl.lit(False)

    def is_null(self, x: Any) -> Any:
        return x.is_null()

    def not_null(self, x: Any) -> Any:
        return x.is_not_null()

    def and_(self, a: Any, b: Any) -> Any:
        return a & b

    def or_(self, a: Any, b: Any) -> Any:
        return a | b

    def not_(self, a: Any) -> Any:
        return ~a

    def lit(self, v: Any) -> Any:
        return _pl_lit(v)

    def cmp(self, op: str, a: Any, b: Any) -> Any:
        return {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                ">=": a >= b}[op]

    def lower(self, x: Any) -> Any:
        return x.str.to_lowercase()

    def matches(self, x: Any, pattern: str) -> Any:
        atoms = _wildcard_atoms(pattern)
        low = x.str.to_lowercase()
        stars = [i for i, (k, _) in enumerate(atoms) if k == "star"]
        if all(k != "any" for k, _ in atoms):
            text = "".join(ch for k, ch in atoms if k == "lit")
            if not stars:
                return low == pl.lit(text)
            if stars == [len(atoms) - 1]:
                return low.str.starts_with(text)
            if stars == [0] and len(atoms) > 1:
                return low.str.ends_with(text)
            if stars == [0, len(atoms) - 1] and len(atoms) > 1:
                return low.str.contains(text, literal=True)
            if atoms == [("star", "")]:
                return x.is_not_null()
        return low.str.contains(_regex(atoms))

    def serial(self, x: Any) -> Any:
        return (x - pl.lit(_EPOCH)).dt.total_days()


class _SqlOps:
    def true(self) -> exp.Expression:
        return exp.Boolean(this=True)

    def false(self) -> exp.Expression:
        return exp.Boolean(this=False)

    def is_null(self, x: exp.Expression) -> exp.Expression:
        return _is_null(x)

    def not_null(self, x: exp.Expression) -> exp.Expression:
        return _not_null(x)

    def and_(self, a: exp.Expression, b: exp.Expression) -> exp.Expression:
        return _and(a, b)

    def or_(self, a: exp.Expression, b: exp.Expression) -> exp.Expression:
        return _or(a, b)

    def not_(self, a: exp.Expression) -> exp.Expression:
        return _not(a)

    def lit(self, v: Any) -> exp.Expression:
        return _vs.literal(v)

    def cmp(self, op: str, a: exp.Expression, b: exp.Expression) -> exp.Expression:
        return _cmp(op, a, b)

    def lower(self, x: exp.Expression) -> exp.Expression:
        return exp.Lower(this=x)

    def text_eq(self, x: exp.Expression, text: str) -> exp.Expression:
        return exp.EQ(this=exp.Lower(this=x), expression=exp.Literal.string(text.lower()))

    def matches(self, x: exp.Expression, pattern: str) -> exp.Expression:
        atoms = _wildcard_atoms(pattern)
        if all(k == "lit" for k, _ in atoms):
            return self.text_eq(x, "".join(ch for _, ch in atoms))
        like = exp.Like(this=exp.Lower(this=x), expression=exp.Literal.string(_like(atoms)))
        return exp.Escape(this=like, expression=exp.Literal.string("\\"))

    def serial(self, x: exp.Expression) -> exp.Expression:
        return exp.DateDiff(this=x, expression=_vs.literal(_EPOCH), unit=exp.var("DAY"))


def _crit_pred(c: Call, o: Any, crit: Criterion, kind: str, x: Any) -> Any:
    """The criteria as a predicate over one item ``x`` of type ``kind``: `Criterion.__call__`
    decided at compile time for the list's item type (blanks never equal a value, so ``<>``
    accepts them)."""
    if crit.op == "<>":
        return o.not_(_crit_equal(c, o, crit, kind, x, True))
    if crit.op in ("", "="):
        return _crit_equal(c, o, crit, kind, x, crit.op == "=")
    return o.and_(o.not_null(x), _crit_order(c, o, crit, kind, x))


def _crit_equal(c: Call, o: Any, crit: Criterion, kind: str, x: Any, explicit: bool) -> Any:
    ck = crit.kind
    if ck == "empty":
        if kind == "Text" and not explicit:
            return o.or_(o.is_null(x), o.cmp("=", x, o.lit("")))
        return o.is_null(x)
    if kind in ("Never", "Blank"):
        return o.false()
    if kind == "Text":
        if ck == "number":
            c.refuse("a numeric criteria over text items (Excel also reads numbers written "
                     "as text; no exact form)")
        if ck != "text" or crit.pattern is None:
            return o.false()
        match = o.matches(x, crit.pattern.pattern)
    elif kind == "Number":
        if ck != "number":
            return o.false()
        match = o.cmp("=", x, o.lit(crit.number))
    elif kind == "Date":
        if ck == "number":
            match = o.cmp("=", o.serial(x), o.lit(crit.number))
        elif ck == "value" and type(crit.value) is dt.date:
            match = o.cmp("=", x, o.lit(crit.value))
        else:
            return o.false()
    elif kind == "Boolean":
        if ck != "bool":
            return o.false()
        match = o.cmp("=", x, o.lit(crit.flag))
    else:
        c.refuse(f"criteria over {kind} items")
    return o.and_(o.not_null(x), match)


def _crit_order(c: Call, o: Any, crit: Criterion, kind: str, x: Any) -> Any:
    ck = crit.kind
    op = crit.op
    if kind in ("Never", "Blank"):
        return o.false()
    if ck == "number":
        if kind == "Number":
            return o.cmp(op, x, o.lit(crit.number))
        if kind == "Date":
            return o.cmp(op, o.serial(x), o.lit(crit.number))
        if kind in ("Text", "Boolean"):
            return o.false()
        c.refuse(f"a numeric criteria over {kind} items")
    if ck == "bool":
        return o.cmp(op, x, o.lit(crit.flag)) if kind == "Boolean" else o.false()
    if ck in ("text", "empty"):
        return o.cmp(op, o.lower(x), o.lit(crit.text.lower())) if kind == "Text" else o.false()
    c.refuse("this criteria")


_VALUE_CRITERIA = ("Number", "Boolean", "Date")


def _criteria(c: Call, i: int, list_index: int) -> Criterion | str:
    """The literal criteria of argument ``i`` (parsed now), or "column" for a number, logical or
    date criteria read from the data (equality; a blank criteria matches blanks)."""
    kind = c.kind(i)
    if kind in ("List", "Record"):
        c.refuse("a list or record as criteria (#VALUE! in the scalar engine)")
    value = c.const(i)
    if value is not _MISSING:
        return criterion(value)
    if kind == "Text":
        c.refuse("a criteria text that is not a literal (it is parsed when compiling)")
    if kind not in _VALUE_CRITERIA or kind != c.elem(list_index).kind:
        c.refuse(f"a {kind} criteria read from the data over {c.elem(list_index).kind} items")
    return "column"


def _pl_crit_mask(c: Call, i_list: int, i_crit: int, values: Sequence[Any]) -> Any:
    """A List(Boolean) as long as the list: the items meeting the criteria."""
    lst, crit_value = values[i_list], values[i_crit]
    crit = _criteria(c, i_crit, i_list)
    kind = c.elem(i_list).kind
    if crit == "column":
        # Equality with the row's value; a blank criteria ("") matches the blank items.
        return _pl_with(lst, [crit_value], lambda items, got: items.eq_missing(got[0]))
    assert isinstance(crit, Criterion)
    return lst.list.eval(_crit_pred(c, _PlOps(), crit, kind, _e()))


def _sql_crit_pred(c: Call, i_list: int, i_crit: int, values: Sequence[Any]
                   ) -> Callable[[exp.Expression], exp.Expression]:
    crit_value = values[i_crit]
    crit = _criteria(c, i_crit, i_list)
    kind = c.elem(i_list).kind
    if crit == "column":
        return lambda x: exp.NullSafeEQ(this=_p(x), expression=_p(crit_value))
    return lambda x: _crit_pred(c, _SqlOps(), crit, kind, x)  # type: ignore[arg-type]


def _pl_lambda_mask(c: Call, lst: Any, body: Any, i: int) -> Any:
    return lst.list.eval(_pl_bcast(body, c, i).fill_null(False))


def _pl_pick(target: Any, positions: Any) -> Any:
    """The numbers of ``target`` at the positions (blanks dropped)."""
    return target.list.gather(positions, null_on_oob=True).list.drop_nulls()


def _pl_if_family(c: Call, values: Sequence[Any], how: str) -> Any:
    lst, crit = values[0], values[1]
    if isinstance(c.args[1], ir.Lambda):
        mask = _pl_lambda_mask(c, lst, crit, 1)
    else:
        mask = _pl_crit_mask(c, 0, 1, values)
    if how == "count":
        return _num(mask.list.agg(_e().fill_null(False).sum()))
    errors: list[tuple[Any, str]] = []
    if c.omitted(2):
        if c.elem(0).kind != "Number":
            target = None  # only numbers are totalled: none here
        else:
            target = lst
    else:
        target = values[2]
        errors.append((target.list.len() != lst.list.len(), "#VALUE!"))
    if target is None:
        picked = pl.concat_list([pl.lit(None, dtype=pl.Float64)]).list.drop_nulls()
    else:
        picked = _pl_pick(target, _pl_positions(mask))
    if how == "sum":
        value = _num(picked.list.sum()).fill_null(0)
        return value, [*errors, *_pl_range_errors(value)]
    value = _pl_mean(picked)
    return value, [*errors, (picked.list.len().fill_null(0) == 0, "#DIV/0!")]


def _sql_if_family(c: Call, values: Sequence[Any], how: str) -> Any:
    lst, crit = values[0], values[1]
    pred: Callable[[exp.Expression], exp.Expression]
    if isinstance(crit, exp.Lambda):
        lam = crit
        pred = lambda x: _apply(lam, x)
    else:
        pred = _sql_crit_pred(c, 0, 1, values)
    if how == "count":
        return _coalesce(_len(_f("LIST_FILTER", lst, _lam(pred))), _n(0))
    errors: list[tuple[Any, str]] = []
    if c.omitted(2):
        if c.elem(0).kind != "Number":
            picked: exp.Expression = exp.cast(exp.Array(expressions=[]),
                                              exp.DataType.build("DOUBLE[]"))
        else:
            picked = _f("LIST_FILTER", lst, _lam(pred))
    else:
        target = values[2]
        errors.append((exp.NEQ(this=_len(target), expression=_len(lst)), "#VALUE!"))
        picked = _f("LIST_FILTER", target, _lam(lambda t, i: pred(_at(lst, i)), 2))
    if how == "sum":
        value = _coalesce(_f("LIST_SUM", picked), _n(0))
        return value, [*errors, *_sql_range_errors(value)]
    return _f("LIST_AVG", picked), [
        *errors, (exp.EQ(this=_sql_count(picked), expression=_n(0)), "#DIV/0!")]


def polars_countif(c: Call, *values: Any) -> Any:
    return _pl_if_family(c, values, "count")


def polars_sumif(c: Call, *values: Any) -> Any:
    return _pl_if_family(c, values, "sum")


def polars_averageif(c: Call, *values: Any) -> Any:
    return _pl_if_family(c, values, "average")


def sql_countif(c: Call, *values: Any) -> Any:
    return _sql_if_family(c, values, "count")


def sql_sumif(c: Call, *values: Any) -> Any:
    return _sql_if_family(c, values, "sum")


def sql_averageif(c: Call, *values: Any) -> Any:
    return _sql_if_family(c, values, "average")


def _ifs_layout(c: Call, target_first: bool) -> tuple[int | None, list[tuple[int, int]]]:
    start = 1 if target_first else 0
    pairs = [(j, j + 1) for j in range(start, len(c.args), 2)]
    if any(j + 1 >= len(c.args) for j, _ in pairs):
        c.refuse("criteria come in pairs")
    return (0 if target_first else None), pairs


def _pl_ifs(c: Call, values: Sequence[Any], how: str) -> Any:
    target_i, pairs = _ifs_layout(c, how != "count")
    first = values[target_i if target_i is not None else pairs[0][0]]
    n = first.list.len()
    ok = pl.all_horizontal([values[j].list.len() == n for j, _ in pairs])
    mask = None
    for j, k in pairs:
        m = _pl_crit_mask(c, j, k, values).list.eval(_e().fill_null(False).cast(pl.UInt8))
        m = pl.when(ok).then(m).otherwise(_pl_empty_like(m))
        mask = m if mask is None else mask * m
    errors = [(~ok, "#VALUE!")]
    assert mask is not None
    if how == "count":
        return _num(mask.list.sum().fill_null(0)), errors
    positions = mask.list.eval(pl.int_range(pl.len()).filter(_e() == 1))
    picked = _pl_pick(values[0], positions)
    if how == "sum":
        value = _num(picked.list.sum()).fill_null(0)
        return value, [*errors, *_pl_range_errors(value)]
    if how == "average":
        return _pl_mean(picked), [
            *errors, (picked.list.len().fill_null(0) == 0, "#DIV/0!")]
    extreme = picked.list.max() if how == "max" else picked.list.min()
    return _num(extreme).fill_null(0), errors


def _sql_ifs(c: Call, values: Sequence[Any], how: str) -> Any:
    target_i, pairs = _ifs_layout(c, how != "count")
    first = values[target_i if target_i is not None else pairs[0][0]]
    preds = [(values[j], _sql_crit_pred(c, j, k, values)) for j, k in pairs]
    errors = [(_or(*[exp.NEQ(this=_len(values[j]), expression=_len(first)) for j, _ in pairs]),
               "#VALUE!")]

    def every(i: exp.Expression) -> exp.Expression:
        return _and(*[pred(_at(lst, i)) for lst, pred in preds])

    if how == "count":
        hits = _f("LIST_FILTER", first, _lam(lambda x, i: every(i), 2))
        return _coalesce(_len(hits), _n(0)), errors
    picked = _f("LIST_FILTER", values[0], _lam(lambda x, i: every(i), 2))
    if how == "sum":
        value = _coalesce(_f("LIST_SUM", picked), _n(0))
        return value, [*errors, *_sql_range_errors(value)]
    if how == "average":
        return _f("LIST_AVG", picked), [
            *errors, (exp.EQ(this=_sql_count(picked), expression=_n(0)), "#DIV/0!")]
    extreme = _f("LIST_MAX" if how == "max" else "LIST_MIN", picked)
    return _coalesce(extreme, _n(0)), errors


def polars_countifs(c: Call, *values: Any) -> Any:
    return _pl_ifs(c, values, "count")


def polars_sumifs(c: Call, *values: Any) -> Any:
    return _pl_ifs(c, values, "sum")


def polars_averageifs(c: Call, *values: Any) -> Any:
    return _pl_ifs(c, values, "average")


def polars_maxifs(c: Call, *values: Any) -> Any:
    return _pl_ifs(c, values, "max")


def polars_minifs(c: Call, *values: Any) -> Any:
    return _pl_ifs(c, values, "min")


def sql_countifs(c: Call, *values: Any) -> Any:
    return _sql_ifs(c, values, "count")


def sql_sumifs(c: Call, *values: Any) -> Any:
    return _sql_ifs(c, values, "sum")


def sql_averageifs(c: Call, *values: Any) -> Any:
    return _sql_ifs(c, values, "average")


def sql_maxifs(c: Call, *values: Any) -> Any:
    return _sql_ifs(c, values, "max")


def sql_minifs(c: Call, *values: Any) -> Any:
    return _sql_ifs(c, values, "min")


# ------------------------------------------------------------------------ shaping: arrays

_ORDERABLE = ("Number", "Text", "Boolean", "Date", "DateTime", "Duration", "Never", "Blank")


def _orderable(c: Call, t: Type | None, what: str) -> str:
    kind = t.kind if t is not None else "Never"
    if kind not in _ORDERABLE:
        c.refuse(f"{what} of type {kind} (lists and records cannot be ordered)")
    if kind == "Duration" and c.backend == "sql":
        c.refuse("Duration ordering: SQL intervals are not compared as plain lengths of time "
                 "in every engine")
    return kind


def _pl_key(x: Any, kind: str) -> Any:
    return x.str.to_lowercase() if kind == "Text" else x


def _sql_key(x: exp.Expression, kind: str) -> exp.Expression:
    return exp.Lower(this=x) if kind == "Text" else x


def _pl_order(c: Call, i: int, order: Any) -> tuple[Any, Any, list[tuple[Any, str]]]:
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


def _sql_order(c: Call, i: int, order: Any) -> tuple[Any, Any, list[tuple[Any, str]]]:
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


def _sql_both_orders(build: Callable[[bool], exp.Expression], fixed: Any, flag: Any
                     ) -> exp.Expression:
    if fixed is not None:
        return build(fixed)
    if flag is None:
        return build(False)
    return _case([(flag, build(True))], build(False))


def _sql_sorted(lst: exp.Expression, key: Callable[[exp.Expression], exp.Expression],
                descending: bool) -> exp.Expression:
    """Stable sort by key(item), blank keys last: the items with a key, as {k, i, v} structs
    sorted (k then position; the position negated when descending, so ties keep their order),
    then the items whose key is blank, in order."""
    def record(x: exp.Expression, i: exp.Expression) -> exp.Expression:
        position = exp.Neg(this=_p(i)) if descending else i
        return exp.Struct(expressions=[
            exp.PropertyEQ(this=exp.to_identifier("k"), expression=key(x)),
            exp.PropertyEQ(this=exp.to_identifier("i"), expression=position),
            exp.PropertyEQ(this=exp.to_identifier("v"), expression=x)])

    keyed = _f("LIST_FILTER", _f("LIST_TRANSFORM", lst, _lam(record, 2)),
               _lam(lambda r: _not_null(exp.Dot(this=r, expression=exp.to_identifier("k")))))
    ordered = _f("LIST_SORT", keyed, exp.Literal.string("DESC" if descending else "ASC"))
    values = _f("LIST_TRANSFORM", ordered,
                _lam(lambda r: exp.Dot(this=r, expression=exp.to_identifier("v"))))
    blanks = _f("LIST_FILTER", lst, _lam(lambda x: _is_null(key(x))))
    return _f("LIST_CONCAT", values, blanks)


def polars_sort(c: Call, values: Any, *rest: Any) -> Any:
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


def sql_sort(c: Call, values: Any, *rest: Any) -> Any:
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

    def build(descending: bool) -> exp.Expression:
        if kind == "Text":
            return _sql_sorted(values, lambda x: _sql_key(x, kind), descending)
        return _f("LIST_SORT", values, exp.Literal.string("DESC" if descending else "ASC"),
                  exp.Literal.string("NULLS LAST"))

    return _sql_both_orders(build, fixed, flag), [*errors, *order_errors]


def polars_sortby(c: Call, values: Any, by: Any, *rest: Any) -> Any:
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


def sql_sortby(c: Call, values: Any, by: Any, *rest: Any) -> Any:
    if len(c.args) > 3:
        c.refuse("several sort keys")
    fixed, flag, errors = _sql_order(c, 2, rest[0]) if rest else (False, None, [])
    if isinstance(by, exp.Lambda):
        kind = _orderable(c, c.lambda_body(1).type, "sort keys")
        lam = by
        value = _sql_both_orders(
            lambda d: _sql_sorted(values, lambda x: _sql_key(_apply(lam, x), kind), d),
            fixed, flag)
        return value, errors
    kind = _orderable(c, c.elem(1), "sort keys")
    # Sort the positions by the keys at those positions, then read the items there.
    positions = _f("RANGE", _n(1), _add(_len(values), _n(1)))

    def build(descending: bool) -> exp.Expression:
        order = _sql_sorted(positions, lambda i: _sql_key(_at(by, i), kind), descending)
        return _f("LIST_TRANSFORM", order, _lam(lambda i: _at(values, i)))

    mismatch = exp.NEQ(this=_len(by), expression=_len(values))
    return _sql_both_orders(build, fixed, flag), [(mismatch, "#VALUE!"), *errors]


def _fallback_kind(c: Call, i: int) -> bool:
    """FILTER's if_empty is used when it has the items' type (decided statically here)."""
    if c.omitted(i):
        return False
    item, fallback = c.elem(0).kind, c.kind(i)
    if item in ("List", "Record", "Any") or fallback in ("List", "Record"):
        c.refuse("if_empty with list or record items")
    return item == fallback


def polars_filter(c: Call, values: Any, include: Any, if_empty: Any = None) -> Any:
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


def sql_filter(c: Call, values: Any, include: Any, if_empty: Any = None) -> Any:
    errors: list[tuple[Any, str]] = []
    if isinstance(include, exp.Lambda):
        kept = _f("LIST_FILTER", values, include)
    else:
        def keep(x: exp.Expression, i: exp.Expression) -> exp.Expression:
            flag = _at(include, i)
            if c.elem(1).kind == "Boolean":
                return _coalesce(flag, exp.Boolean(this=False))
            return _coalesce(exp.NEQ(this=flag, expression=_n(0)), exp.Boolean(this=False))

        kept = _f("LIST_FILTER", values, _lam(keep, 2))
        errors.append((exp.NEQ(this=_len(include), expression=_len(values)), "#VALUE!"))
    if _fallback_kind(c, 2):
        use = _and(exp.EQ(this=_len(kept), expression=_n(0)),
                   exp.GT(this=_sql_count(values), expression=_n(0)), _not_null(if_empty))
        kept = _case([(use, exp.Array(expressions=[if_empty]))], kept)
    return kept, errors


def polars_map(c: Call, values: Any, body: Any) -> Any:
    return values.list.eval(_pl_bcast(body, c, 1))


def sql_map(c: Call, values: Any, *rest: Any) -> Any:
    if len(rest) == 1:
        return exp.Transform(this=values, expression=rest[0])
    second, lam = rest
    body = _lam(lambda x, i: _apply(lam, x, _at(second, i)), 2)
    return _f("LIST_TRANSFORM", values, body), [
        (exp.NEQ(this=_len(second), expression=_len(values)), "#VALUE!")]


def sql_reduce(c: Call, initial: Any, values: Any, lam: Any) -> Any:
    return _f("LIST_REDUCE", values, lam, initial)


def _sequence_size(c: Call) -> int:
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


def polars_sequence(c: Call, rows: Any, columns: Any = None, start: Any = None,
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


def sql_sequence(c: Call, rows: Any, columns: Any = None, start: Any = None,
                 step: Any = None) -> Any:
    n = _sequence_size(c)
    start = _n(1) if start is None else start
    step = _n(1) if step is None else step
    if n < 0:
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    if n == 0:
        return exp.cast(exp.Array(expressions=[]), exp.DataType.build("DOUBLE[]"))
    value = _f("LIST_TRANSFORM", _f("RANGE", _n(n)), _lam(lambda i: _add(start, _mul(step, i))))
    last = _add(start, _mul(step, _n(n - 1)))
    return value, _sql_range_errors(exp.cast(last, exp.DataType.build("DOUBLE")))


def polars_take(c: Call, values: Any, count: Any) -> Any:
    if not _float() and type(c.args[0]) in (ir.ListOf, ir.Const):
        c.refuse("polars 2.1 reads the Decimal items of a sliced list literal at the wrong "
                 "scale (0.001 comes back as 1e15); list columns are fine")
    n = _pl_int(count)
    front = values.list.head(n.clip(0, None))
    back = values.list.tail((-n).clip(0, None))
    return pl.when(n >= 0).then(front).otherwise(back)


def sql_take(c: Call, values: Any, count: Any) -> Any:
    n = _sql_int(count)
    size = _len(values)
    front = _f("LIST_SLICE", values, _n(1), _f("GREATEST", n, _n(0)))
    back = _f("LIST_SLICE", values, _f("GREATEST", _add(_add(size, n), _n(1)), _n(1)), size)
    return _case([(exp.GTE(this=n, expression=_n(0)), front)], back)


def polars_drop(c: Call, values: Any, count: Any) -> Any:
    if not _float() and type(c.args[0]) in (ir.ListOf, ir.Const):
        c.refuse("polars 2.1 reads the Decimal items of a sliced list literal at the wrong "
                 "scale (0.001 comes back as 1e15); list columns are fine")
    n = _pl_int(count)
    size = values.list.len().cast(pl.Int64)
    rest = values.list.slice(n.clip(0, None))
    front = values.list.head((size + n).clip(0, None))
    return pl.when(n >= 0).then(rest).otherwise(front)


def sql_drop(c: Call, values: Any, count: Any) -> Any:
    n = _sql_int(count)
    size = _len(values)
    rest = _f("LIST_SLICE", values, _add(_f("LEAST", n, size), _n(1)), size)
    front = _f("LIST_SLICE", values, _n(1), _f("GREATEST", _add(size, n), _n(0)))
    return _case([(exp.GTE(this=n, expression=_n(0)), rest)], front)


def polars_flatten(c: Call, values: Any) -> Any:
    elem = c.elem(0)
    if elem.kind != "List":
        return values
    return values.list.eval(_e().explode(keep_nulls=False))


def sql_flatten(c: Call, values: Any) -> Any:
    if c.elem(0).kind != "List":
        return values
    return _f("FLATTEN", values)


def polars_unique(c: Call, values: Any, by_col: Any = None, exactly_once: Any = None) -> Any:
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


def sql_unique(c: Call, values: Any, by_col: Any = None, exactly_once: Any = None) -> Any:
    kind = c.elem(0).kind
    if kind in ("List", "Record", "Any"):
        c.refuse(f"{kind} items")

    def build(keys: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
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


# ---------------------------------------------------------------------------------- lookup


class _Search:
    """A search decided at compile time: exact (0), next smaller (-1) or larger (1), or a
    wildcard pattern; forwards or backwards. ``invalid``: the modes themselves are #VALUE!."""

    def __init__(self, c: Call, i_value: int, i_keys: int, match_mode: int, search_mode: int
                 ) -> None:
        self.invalid = False
        self.pattern: str | None = None
        self.dynamic = False  # a wildcard pattern read from the data (translated per row)
        self.kind = c.elem(i_keys).kind
        mm, sm = match_mode, search_mode
        if mm not in (0, -1, 1, 2) or sm not in (1, -1, 2, -2):
            self.invalid = True
            mm, sm = 0, 1
        if mm == 2:
            if c.kind(i_value) == "Text":
                pattern = c.const(i_value)
                if isinstance(pattern, str):
                    self.pattern = pattern
                else:
                    self.dynamic = True
                sm = -1 if sm < 0 else 1  # a wildcard search is always a scan
            else:
                mm = 0
        if sm in (2, -2):
            c.refuse("binary search (search_mode 2 or -2): on a list that is not sorted its "
                     "answer depends on the probe order")
        if self.kind in ("List", "Record", "Any"):
            c.refuse(f"a search among {self.kind} items")
        if mm != 0 and self.kind == "Duration" and c.backend == "sql":
            c.refuse("Duration ordering: SQL intervals are not compared as plain lengths of "
                     "time in every engine")
        self.mm = mm
        self.backwards = sm < 0


def _search_modes(c: Call, i_mm: int, i_sm: int | None) -> tuple[int, int]:
    mm = c.const_int(i_mm, "match_mode")
    sm = 1 if i_sm is None else c.const_int(i_sm, "search_mode")
    return mm, sm


def _pl_find(s: _Search, keys: Any, value: Any) -> Any:
    """The 0-based position found (null when not found)."""
    kind = s.kind

    def pick(hit: Any) -> Any:
        found = hit.arg_true()
        return found.last() if s.backwards else found.first()

    if s.pattern is not None:
        hit = _PlOps().matches(_e(), s.pattern)
        return keys.list.agg(pick(hit.fill_null(False))).cast(pl.Int64)
    if s.dynamic:
        return _pl_with(keys, [_pl_wild_regex(value)], lambda items, got: pick(
            items.str.to_lowercase().str.contains(got[0]).fill_null(False)),
            agg=True).cast(pl.Int64)

    def build(items: Any, got: list[Any]) -> Any:
        k, v = _pl_key(items, kind), _pl_key(got[0], kind)
        exact = pick((k == v).fill_null(False))
        if s.mm == 0:
            return exact
        candidates = k.filter(k < v if s.mm == -1 else k > v)
        best = candidates.max() if s.mm == -1 else candidates.min()
        near = pick((k == best).fill_null(False))
        return pl.coalesce([exact, near])

    return _pl_with(keys, [value], build, agg=True).cast(pl.Int64)


def _sql_find(s: _Search, keys: Any, value: Any) -> exp.Expression:
    """The 1-based position found (NULL when not found)."""
    kind = s.kind
    pick = "LIST_MAX" if s.backwards else "LIST_MIN"

    def first(pred: Callable[[exp.Expression], exp.Expression]) -> exp.Expression:
        return _f(pick, _f("LIST_TRANSFORM", keys, _lam(
            lambda k, i: _case([(pred(k), i)]), 2)))

    if s.pattern is not None:
        return first(lambda k: _SqlOps().matches(k, s.pattern))  # type: ignore[arg-type]
    if s.dynamic:
        regex = _sql_wild_regex(value)
        return first(lambda k: _f("REGEXP_FULL_MATCH", exp.Lower(this=k), regex))
    v = _sql_key(value, kind)
    exact = first(lambda k: exp.EQ(this=_sql_key(k, kind), expression=v))
    if s.mm == 0:
        return exact
    op = "<" if s.mm == -1 else ">"
    candidates = _f("LIST_FILTER", keys, _lam(lambda k: _cmp(op, _sql_key(k, kind), v)))
    best = _f("LIST_MAX" if s.mm == -1 else "LIST_MIN",
              _f("LIST_TRANSFORM", candidates, _lam(lambda k: _sql_key(k, kind))))
    near = _sql_let({"b": best}, lambda b: first(
        lambda k: exp.EQ(this=_sql_key(k, kind), expression=b["b"])))
    return _coalesce(exact, near)


def polars_xlookup(c: Call, value: Any, keys: Any, results: Any, if_not_found: Any,
                   match_mode: Any, search_mode: Any) -> Any:
    s = _Search(c, 0, 1, *_search_modes(c, 4, 5))
    errors: list[tuple[Any, str]] = [(results.list.len() != keys.list.len(), "#VALUE!")]
    if s.invalid:
        return pl.lit(None, dtype=_vp.dtype_of(c.node.type)), [*errors, (pl.lit(True),
                                                                         "#VALUE!")]
    position = _pl_find(s, keys, value)
    found = results.list.get(position, null_on_oob=True)
    missing = position.is_null()
    if c.omitted(3):
        return found, [*errors, (missing, "#N/A")]
    value_out = pl.when(missing).then(if_not_found).otherwise(found)
    return value_out, [*errors, (missing & if_not_found.is_null(), "#N/A")]


def sql_xlookup(c: Call, value: Any, keys: Any, results: Any, if_not_found: Any,
                match_mode: Any, search_mode: Any) -> Any:
    s = _Search(c, 0, 1, *_search_modes(c, 4, 5))
    errors: list[tuple[Any, str]] = [(exp.NEQ(this=_len(results), expression=_len(keys)),
                                      "#VALUE!")]
    if s.invalid:
        return exp.Null(), [*errors, (exp.Boolean(this=True), "#VALUE!")]
    position = _sql_find(s, keys, value)
    missing = _is_null(position)
    found = _at(results, position)
    if c.omitted(3):
        return found, [*errors, (missing, "#N/A")]
    return _case([(missing, if_not_found)], found), [
        *errors, (_and(missing, _is_null(if_not_found)), "#N/A")]


def polars_xmatch(c: Call, value: Any, keys: Any, match_mode: Any, search_mode: Any) -> Any:
    s = _Search(c, 0, 1, *_search_modes(c, 2, 3))
    if s.invalid:
        return _num(pl.lit(None)), [(pl.lit(True), "#VALUE!")]
    position = _pl_find(s, keys, value)
    return _num(position + 1), [(position.is_null(), "#N/A")]


def sql_xmatch(c: Call, value: Any, keys: Any, match_mode: Any, search_mode: Any) -> Any:
    s = _Search(c, 0, 1, *_search_modes(c, 2, 3))
    if s.invalid:
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    position = _sql_find(s, keys, value)
    return position, [(_is_null(position), "#N/A")]


def _match_search(c: Call) -> _Search:
    mt = c.const_int(2, "match_type")
    if mt != 0:
        c.refuse("approximate MATCH (match_type 1 or -1) is a binary search whose answer on "
                 "unsorted lists depends on the probe order")
    return _Search(c, 0, 1, 2, 1)


def polars_match(c: Call, value: Any, keys: Any, match_type: Any) -> Any:
    position = _pl_find(_match_search(c), keys, value)
    return _num(position + 1), [(position.is_null(), "#N/A")]


def sql_match(c: Call, value: Any, keys: Any, match_type: Any) -> Any:
    position = _sql_find(_match_search(c), keys, value)
    return position, [(_is_null(position), "#N/A")]


def polars_index(c: Call, values: Any, row: Any, column: Any = None) -> Any:
    size = values.list.len().cast(pl.Int64)
    r = _pl_int(row)
    if column is None:  # INDEX(list, position)
        index = pl.when((r >= 1) & (r <= size)).then(r - 1)
        return values.list.get(index, null_on_oob=True), [
            (r < 0, "#VALUE!"), ((r == 0) | (r > size), "#REF!")]
    col = _pl_int(column)
    if c.node.sig is c.node.spec.signatures[0]:  # a list of lists: row, then column
        line = values.list.get(pl.when((r >= 1) & (r <= size)).then(r - 1), null_on_oob=True)
        width = line.list.len().cast(pl.Int64)
        value = line.list.get(pl.when((col >= 1) & (col <= width)).then(col - 1),
                              null_on_oob=True)
        return value, [(r < 0, "#VALUE!"), ((r == 0) | (r > size), "#REF!"),
                       (line.is_null(), "#REF!"), (col < 0, "#VALUE!"),
                       ((col == 0) | (col > width), "#REF!")]
    # One dimension: INDEX(list, n, 1) reads a column, INDEX(list, 1, n) a row.
    position = pl.when(((col == 0) | (col == 1)) & (r >= 1)).then(r) \
        .when(((r == 0) | (r == 1)) & (col >= 1)).then(col)
    index = pl.when(position <= size).then(position - 1)
    return values.list.get(index, null_on_oob=True), [
        (position.is_null() & ((r < 0) | (col < 0)), "#VALUE!"),
        (position.is_null() | (position > size), "#REF!")]


def sql_index(c: Call, values: Any, row: Any, column: Any = None) -> Any:
    size = _len(values)
    r = _sql_int(row)

    def within(i: exp.Expression, n: exp.Expression) -> exp.Expression:
        return _and(exp.GTE(this=i, expression=_n(1)), exp.LTE(this=i, expression=n))

    def out_of(i: exp.Expression, n: exp.Expression) -> exp.Expression:
        return _or(exp.EQ(this=i, expression=_n(0)), exp.GT(this=i, expression=n))

    negative = exp.LT(this=r, expression=_n(0))
    if column is None:
        return _at(values, _case([(within(r, size), r)])), [
            (negative, "#VALUE!"), (out_of(r, size), "#REF!")]
    col = _sql_int(column)
    if c.node.sig is c.node.spec.signatures[0]:  # a list of lists
        line = _at(values, _case([(within(r, size), r)]))
        width = _len(line)
        value = _at(line, _case([(within(col, width), col)]))
        return value, [(negative, "#VALUE!"), (out_of(r, size), "#REF!"),
                       (_is_null(line), "#REF!"), (exp.LT(this=col, expression=_n(0)), "#VALUE!"),
                       (out_of(col, width), "#REF!")]
    first = _or(exp.EQ(this=col, expression=_n(0)), exp.EQ(this=col, expression=_n(1)))
    second = _or(exp.EQ(this=r, expression=_n(0)), exp.EQ(this=r, expression=_n(1)))
    position = _case([(_and(first, exp.GTE(this=r, expression=_n(1))), r),
                      (_and(second, exp.GTE(this=col, expression=_n(1))), col)])
    value = _at(values, _case([(exp.LTE(this=position, expression=size), position)]))
    return value, [
        (_and(_is_null(position), _or(negative, exp.LT(this=col, expression=_n(0)))),
         "#VALUE!"),
        (_or(_is_null(position), exp.GT(this=position, expression=size)), "#REF!")]


def polars_lookup(c: Call, values: Any, predicate: Any, result: Any = None) -> Any:
    kept = values.list.filter(_pl_bcast(predicate, c, 1).fill_null(False))
    errors = [(kept.list.len() == 0, "#N/A")]
    if result is None:
        return kept.list.first(), errors
    return kept.list.head(1).list.eval(_pl_bcast(result, c, 2)).list.first(), errors


def sql_lookup(c: Call, values: Any, predicate: Any, result: Any = None) -> Any:
    kept = _f("LIST_FILTER", values, predicate)
    errors = [(exp.EQ(this=_len(kept), expression=_n(0)), "#N/A")]
    if result is None:
        return _at(kept, _n(1)), errors
    return _at(_f("LIST_TRANSFORM", kept, result), _n(1)), errors


def _pl_flags(c: Call, values: Any, predicate: Any) -> Any:
    if predicate is None:
        return values.list.eval(_e().fill_null(False))
    return values.list.eval(_pl_bcast(predicate, c, 1).fill_null(False))


def polars_any(c: Call, values: Any, predicate: Any = None) -> Any:
    return _pl_flags(c, values, predicate).list.any()


def polars_all(c: Call, values: Any, predicate: Any = None) -> Any:
    return _pl_flags(c, values, predicate).list.all()


def _sql_flag(predicate: Any) -> Callable[[exp.Expression], exp.Expression]:
    if predicate is None:
        return lambda x: _coalesce(x, exp.Boolean(this=False))
    return lambda x: _coalesce(_apply(predicate, x), exp.Boolean(this=False))


def sql_any(c: Call, values: Any, predicate: Any = None) -> Any:
    flag = _sql_flag(predicate)
    return exp.GT(this=_len(_f("LIST_FILTER", values, _lam(flag))), expression=_n(0))


def sql_all(c: Call, values: Any, predicate: Any = None) -> Any:
    flag = _sql_flag(predicate)
    return exp.EQ(this=_len(_f("LIST_FILTER", values, _lam(lambda x: _not(flag(x))))),
                  expression=_n(0))


# ------------------------------------------------------------------------ statistics pack


def polars_mode_sngl(c: Call, *values: Any) -> Any:
    items = _pl_items(c, values)
    e = _e()
    count = pl.len().over(e)
    value = items.list.agg(e.filter(count == count.max()).first())
    best = items.list.agg(pl.len().over(e).max()).fill_null(0)
    return _num(value), [(best < 2, "#N/A")]


def sql_mode_sngl(c: Call, *values: Any) -> Any:
    items = _sql_present(_sql_items(c, values))

    def counts(xs: exp.Expression) -> exp.Expression:
        """How often each item occurs in the list."""
        def occurrences(x: exp.Expression) -> exp.Expression:
            same = _f("LIST_FILTER", xs, _lam(lambda y: exp.EQ(this=y, expression=x)))
            return _len(same)

        return _f("LIST_TRANSFORM", xs, _lam(occurrences))

    def first_mode(s: dict[str, exp.Expression]) -> exp.Expression:
        position = _f("LIST_POSITION", s["n"], _f("LIST_MAX", s["n"]))
        return _at(s["xs"], position)

    value = _sql_let({"xs": items}, lambda s: _sql_let({"xs": s["xs"], "n": counts(s["xs"])},
                                                       first_mode))
    best = _sql_let({"xs": items}, lambda s: _f("LIST_MAX", counts(s["xs"])))
    return value, [(exp.LT(this=_coalesce(best, _n(0)), expression=_n(2)), "#N/A")]


def _pl_positive(items: Any) -> list[tuple[Any, str]]:
    n = items.list.len().fill_null(0)
    return [((n == 0) | (items.list.min() <= 0), "#NUM!")]


def _sql_positive(items: exp.Expression) -> list[tuple[Any, str]]:
    return [(_or(exp.EQ(this=_sql_count(items), expression=_n(0)),
                 exp.LTE(this=_f("LIST_MIN", items), expression=_n(0))), "#NUM!")]


def polars_geomean(c: Call, *values: Any) -> Any:
    items = _pl_items(c, values)
    logs = items.list.eval(pl.when(_e() > 0).then(_e().cast(pl.Float64).log()))
    return _num(logs.list.mean().exp()), _pl_positive(items)


def sql_geomean(c: Call, *values: Any) -> Any:
    items = _sql_items(c, values)
    logs = _f("LIST_TRANSFORM", items, _lam(lambda x: _case(
        [(exp.GT(this=x, expression=_n(0)), _f("LN", exp.cast(x, exp.DataType.build("DOUBLE"))))])))
    return _f("EXP", _f("LIST_AVG", logs)), _sql_positive(items)


def polars_harmean(c: Call, *values: Any) -> Any:
    items = _pl_items(c, values)
    inverse = items.list.eval(pl.when(_e() > 0).then(1.0 / _e().cast(pl.Float64))).list.sum()
    return _num(items.list.len().cast(pl.Float64) / inverse), _pl_positive(items)


def sql_harmean(c: Call, *values: Any) -> Any:
    items = _sql_items(c, values)
    inverse = _f("LIST_SUM", _f("LIST_TRANSFORM", items, _lam(lambda x: _case(
        [(exp.GT(this=x, expression=_n(0)),
          _div(_n(1), exp.cast(x, exp.DataType.build("DOUBLE"))))]))))
    return _div(_sql_count(items), _f("NULLIF", inverse, _n(0))), _sql_positive(items)


def _pl_deviations(c: Call, values: Sequence[Any], squares: bool) -> Any:
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


def _sql_deviations(c: Call, values: Sequence[Any], squares: bool) -> Any:
    items = _sql_items(c, values)

    def body(s: dict[str, exp.Expression]) -> exp.Expression:
        def dev(x: exp.Expression) -> exp.Expression:
            d = _sub(exp.cast(x, exp.DataType.build("DOUBLE")), s["m"])
            return _mul(d, d) if squares else _f("ABS", d)

        each = _f("LIST_TRANSFORM", s["xs"], _lam(dev))
        return _f("LIST_SUM", each) if squares else _f("LIST_AVG", each)

    raw = _sql_let({"xs": items, "m": _f("LIST_AVG", exp.cast(
        items, exp.DataType.build("DOUBLE[]")))}, body)
    flat = exp.EQ(this=_f("LIST_MIN", items), expression=_f("LIST_MAX", items))
    value = _case([(flat, _n(0))], raw)
    return value, [(exp.EQ(this=_sql_count(items), expression=_n(0)), "#NUM!"),
                   *_sql_range_errors(value)]


def polars_avedev(c: Call, *values: Any) -> Any:
    return _pl_deviations(c, values, False)


def sql_avedev(c: Call, *values: Any) -> Any:
    return _sql_deviations(c, values, False)


def polars_devsq(c: Call, *values: Any) -> Any:
    return _pl_deviations(c, values, True)


def sql_devsq(c: Call, *values: Any) -> Any:
    return _sql_deviations(c, values, True)


def polars_quartile_inc(c: Call, values: Any, quart: Any) -> Any:
    q = _pl_int(quart)
    bad = (q < 0) | (q > 4)
    return _pl_percentile(values, q.cast(pl.Float64) / 4, [(bad, "#NUM!")])


def sql_quartile_inc(c: Call, values: Any, quart: Any) -> Any:
    q = _trunc(quart)
    bad = _or(exp.LT(this=q, expression=_n(0)), exp.GT(this=q, expression=_n(4)))
    return _sql_percentile(values, _div(exp.cast(q, exp.DataType.build("DOUBLE")), _n(4)),
                           [(bad, "#NUM!")])


def _pl_rank(c: Call, number: Any, values: Any, order: Any, average: bool) -> Any:
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


def _sql_rank(c: Call, number: Any, values: Any, order: Any, average: bool) -> Any:
    def count(op: str) -> exp.Expression:
        return _len(_f("LIST_FILTER", values, _lam(lambda x: _cmp(op, x, number))))

    equal = count("=")
    ahead = _case([(exp.NEQ(this=order, expression=_n(0)), count("<"))], count(">"))
    if average:
        value = _div(exp.cast(_add(_add(_mul(_n(2), ahead), equal), _n(1)),
                              exp.DataType.build("DOUBLE")), _n(2))
    else:
        value = _add(ahead, _n(1))
    return value, [(exp.EQ(this=_coalesce(equal, _n(0)), expression=_n(0)), "#N/A")]


def polars_rank_eq(c: Call, number: Any, values: Any, order: Any) -> Any:
    return _pl_rank(c, number, values, order, False)


def polars_rank_avg(c: Call, number: Any, values: Any, order: Any) -> Any:
    return _pl_rank(c, number, values, order, True)


def sql_rank_eq(c: Call, number: Any, values: Any, order: Any) -> Any:
    return _sql_rank(c, number, values, order, False)


def sql_rank_avg(c: Call, number: Any, values: Any, order: Any) -> Any:
    return _sql_rank(c, number, values, order, True)


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


def _sql_paired(first: Any, second: Any) -> tuple[exp.Expression, exp.Expression]:
    px = _f("LIST_TRANSFORM", first, _lam(
        lambda x, i: _case([(_not_null(_at(second, i)), exp.cast(
            x, exp.DataType.build("DOUBLE")))]), 2))
    py = _f("LIST_TRANSFORM", second, _lam(
        lambda y, i: _case([(_not_null(_at(first, i)), exp.cast(
            y, exp.DataType.build("DOUBLE")))]), 2))
    return px, py


def _sql_moments(first: Any, second: Any, body: Callable[[dict[str, exp.Expression]],
                                                         exp.Expression]) -> exp.Expression:
    px, py = _sql_paired(first, second)

    def scale(p: exp.Expression) -> exp.Expression:
        m = _f("GREATEST", _f("ABS", _f("LIST_MIN", p)), _f("ABS", _f("LIST_MAX", p)))
        return _case([(exp.GT(this=m, expression=_n(0)), m)], exp.cast(
            _n(1), exp.DataType.build("DOUBLE")))

    def level2(s: dict[str, exp.Expression]) -> exp.Expression:
        ux = _f("LIST_TRANSFORM", s["px"], _lam(lambda x: _div(x, s["sx"])))
        uy = _f("LIST_TRANSFORM", s["py"], _lam(lambda y: _div(y, s["sy"])))

        def level3(u: dict[str, exp.Expression]) -> exp.Expression:
            def level4(m: dict[str, exp.Expression]) -> exp.Expression:
                def dev(x: exp.Expression, mean: exp.Expression) -> exp.Expression:
                    return _sub(x, mean)

                sxx = _f("LIST_SUM", _f("LIST_TRANSFORM", u["ux"], _lam(
                    lambda x: _mul(dev(x, m["ux"]), dev(x, m["ux"])))))
                syy = _f("LIST_SUM", _f("LIST_TRANSFORM", u["uy"], _lam(
                    lambda y: _mul(dev(y, m["uy"]), dev(y, m["uy"])))))
                sxy = _f("LIST_SUM", _f("LIST_TRANSFORM", u["ux"], _lam(
                    lambda x, i: _mul(dev(x, m["ux"]), dev(_at(u["uy"], i), m["uy"])), 2)))
                return body({"n": s["n"], "sx": s["sx"], "sy": s["sy"], "mx": m["mx"],
                             "my": m["my"], "mux": m["ux"], "sxx": sxx, "syy": syy,
                             "sxy": sxy})

            return _sql_let({"ux": _f("LIST_AVG", u["ux"]), "uy": _f("LIST_AVG", u["uy"]),
                             "mx": _f("LIST_AVG", s["px"]), "my": _f("LIST_AVG", s["py"])},
                            level4)

        return _sql_let({"ux": ux, "uy": uy}, level3)

    return _sql_let({"px": px, "py": py}, lambda s: _sql_let(
        {"px": s["px"], "py": s["py"], "sx": scale(s["px"]), "sy": scale(s["py"]),
         "n": _f("LIST_COUNT", s["px"])}, level2))


def _sql_pair_errors(first: Any, second: Any, minimum: int, flat: str
                     ) -> list[tuple[exp.Expression, str]]:
    px, py = _sql_paired(first, second)
    errors: list[tuple[exp.Expression, str]] = [
        (exp.NEQ(this=_len(first), expression=_len(second)), "#N/A"),
        (exp.LT(this=_sql_count(px), expression=_n(minimum)), "#DIV/0!")]
    for which, p in (("x", px), ("y", py)):
        if which in flat:
            errors.append((exp.EQ(this=_f("LIST_MIN", p), expression=_f("LIST_MAX", p)),
                           "#DIV/0!"))
    return errors


def _pl_pair_errors(m: dict[str, Any], minimum: int, flat: str) -> list[tuple[Any, str]]:
    errors = [(~m["ok"], "#N/A"), (m["n"] < minimum, "#DIV/0!")]
    if "x" in flat:
        errors.append((m["flat_x"], "#DIV/0!"))
    if "y" in flat:
        errors.append((m["flat_y"], "#DIV/0!"))
    return errors


def polars_correl(c: Call, first: Any, second: Any) -> Any:
    m = _pl_moments(first, second)
    value = m["sxy"] / (m["sxx"].sqrt() * m["syy"].sqrt())
    return _num(value), _pl_pair_errors(m, 1, "xy")


def sql_correl(c: Call, first: Any, second: Any) -> Any:
    value = _sql_moments(first, second, lambda m: _div(m["sxy"], _mul(
        _f("SQRT", m["sxx"]), _f("SQRT", m["syy"]))))
    return value, _sql_pair_errors(first, second, 1, "xy")


def polars_rsq(c: Call, ys: Any, xs: Any) -> Any:
    m = _pl_moments(xs, ys)
    r = m["sxy"] / (m["sxx"].sqrt() * m["syy"].sqrt())
    return _num(r * r), _pl_pair_errors(m, 1, "xy")


def sql_rsq(c: Call, ys: Any, xs: Any) -> Any:
    def body(m: dict[str, exp.Expression]) -> exp.Expression:
        r = _div(m["sxy"], _mul(_f("SQRT", m["sxx"]), _f("SQRT", m["syy"])))
        return _mul(r, r)

    return _sql_moments(xs, ys, body), _sql_pair_errors(xs, ys, 1, "xy")


def _pl_covariance(first: Any, second: Any, sample: bool) -> Any:
    m = _pl_moments(first, second)
    divisor = (m["n"] - 1 if sample else m["n"]).cast(pl.Float64)
    value = m["sxy"] * m["sx"] * m["sy"] / divisor
    return _num(value), [*_pl_pair_errors(m, 2 if sample else 1, ""), *_pl_range_errors(value)]


def _sql_covariance(first: Any, second: Any, sample: bool) -> Any:
    def body(m: dict[str, exp.Expression]) -> exp.Expression:
        divisor = _sub(m["n"], _n(1)) if sample else m["n"]
        return _div(_mul(_mul(m["sxy"], m["sx"]), m["sy"]), _f("NULLIF", divisor, _n(0)))

    value = _sql_moments(first, second, body)
    return value, [*_sql_pair_errors(first, second, 2 if sample else 1, ""),
                   *_sql_range_errors(value)]


def polars_covariance_p(c: Call, first: Any, second: Any) -> Any:
    return _pl_covariance(first, second, False)


def polars_covariance_s(c: Call, first: Any, second: Any) -> Any:
    return _pl_covariance(first, second, True)


def sql_covariance_p(c: Call, first: Any, second: Any) -> Any:
    return _sql_covariance(first, second, False)


def sql_covariance_s(c: Call, first: Any, second: Any) -> Any:
    return _sql_covariance(first, second, True)


def _pl_fit(ys: Any, xs: Any, intercept: bool) -> Any:
    m = _pl_moments(xs, ys)
    scaled = m["sxy"] / m["sxx"]  # the slope in scaled units
    if intercept:  # my - slope * mx, with mx = sx * mean(x / sx): no overflow on the way
        value = m["my"] - scaled * m["mux"] * m["sy"]
    else:
        value = scaled * (m["sy"] / m["sx"])
    return _num(value), [*_pl_pair_errors(m, 1, "x"), *_pl_range_errors(value)]


def _sql_fit(ys: Any, xs: Any, intercept: bool) -> Any:
    def body(m: dict[str, exp.Expression]) -> exp.Expression:
        scaled = _div(m["sxy"], _f("NULLIF", m["sxx"], _n(0)))
        if intercept:
            return _sub(m["my"], _mul(_mul(scaled, m["mux"]), m["sy"]))
        return _mul(scaled, _div(m["sy"], m["sx"]))

    value = _sql_moments(xs, ys, body)
    return value, [*_sql_pair_errors(xs, ys, 1, "x"), *_sql_range_errors(value)]


def polars_slope(c: Call, ys: Any, xs: Any) -> Any:
    return _pl_fit(ys, xs, False)


def polars_intercept(c: Call, ys: Any, xs: Any) -> Any:
    return _pl_fit(ys, xs, True)


def sql_slope(c: Call, ys: Any, xs: Any) -> Any:
    return _sql_fit(ys, xs, False)


def sql_intercept(c: Call, ys: Any, xs: Any) -> Any:
    return _sql_fit(ys, xs, True)


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


def _d(v: Any) -> exp.Expression:
    if isinstance(v, float):
        return exp.cast(exp.Literal.number(repr(v)), exp.DataType.build("DOUBLE"))
    return v


class _SqlMath:
    def add(self, a: Any, b: Any) -> exp.Expression:
        return _add(_d(a), _d(b))

    def sub(self, a: Any, b: Any) -> exp.Expression:
        return _sub(_d(a), _d(b))

    def mul(self, a: Any, b: Any) -> exp.Expression:
        return _mul(_d(a), _d(b))

    def div(self, a: Any, b: Any) -> exp.Expression:
        return _div(_d(a), _d(b))

    def neg(self, a: Any) -> exp.Expression:
        return exp.Neg(this=_p(_d(a)))

    def abs(self, a: Any) -> exp.Expression:
        return _f("ABS", a)

    def expo(self, a: Any) -> exp.Expression:
        return _f("EXP", a)

    def clamp(self, a: Any, lo: float, hi: float) -> exp.Expression:
        return _f("LEAST", _f("GREATEST", a, _d(lo)), _d(hi))

    def pick(self, t: Any, middle: Any, right: Any, left: Any) -> exp.Expression:
        return _case([(exp.GTE(this=t, expression=_d(2.0)), right),
                      (exp.LTE(this=t, expression=_d(-2.0)), left)], middle)


def _pl_standard(z: Any, cumulative: Any, scale: Any, c: Call, i_cumulative: int) -> Any:
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


def _sql_standard(z: Any, cumulative: Any, scale: Any, c: Call, i_cumulative: int) -> Any:
    def body(s: dict[str, exp.Expression]) -> exp.Expression:
        zz = s["z"]
        density = _div(_f("EXP", _mul(_mul(_d(-0.5), zz), zz)), _mul(s["sd"], _d(_SQRT_2PI)))
        t = _f("LEAST", _f("GREATEST", _div(exp.Neg(this=_p(zz)), _d(_SQRT_2)), _d(-40.0)),
               _d(40.0))
        probability = _sql_let({"t": t}, lambda u: _mul(_d(0.5), _erfc(u["t"], _SqlMath())))
        literal = c.const(i_cumulative)
        if literal is _MISSING:
            return _case([(cumulative, probability)], density)
        return probability if literal else density

    return _sql_let({"z": exp.cast(z, exp.DataType.build("DOUBLE")),
                     "sd": exp.cast(scale, exp.DataType.build("DOUBLE"))}, body)


def polars_norm_dist(c: Call, x: Any, mean: Any, sd: Any, cumulative: Any) -> Any:
    xf, mf, sf = (v.cast(pl.Float64) for v in (x, mean, sd))
    safe = pl.when(sf > 0).then(sf).otherwise(pl.lit(1.0))
    value = _pl_standard((xf - mf) / safe, cumulative, safe, c, 3)
    return _num(value), [(sf <= 0, "#NUM!"), *_pl_range_errors(value)]


def sql_norm_dist(c: Call, x: Any, mean: Any, sd: Any, cumulative: Any) -> Any:
    sdd = exp.cast(sd, exp.DataType.build("DOUBLE"))
    safe = _case([(exp.GT(this=sdd, expression=_n(0)), sdd)], _d(1.0))
    z = _div(_sub(exp.cast(x, exp.DataType.build("DOUBLE")),
                  exp.cast(mean, exp.DataType.build("DOUBLE"))), safe)
    value = _sql_standard(z, cumulative, safe, c, 3)
    return value, [(exp.LTE(this=sd, expression=_n(0)), "#NUM!"), *_sql_range_errors(value)]


def polars_norm_s_dist(c: Call, z: Any, cumulative: Any) -> Any:
    value = _pl_standard(z.cast(pl.Float64), cumulative, pl.lit(1.0), c, 1)
    return _num(value), _pl_range_errors(value)


def sql_norm_s_dist(c: Call, z: Any, cumulative: Any) -> Any:
    value = _sql_standard(z, cumulative, _d(1.0), c, 1)
    return value, _sql_range_errors(value)
