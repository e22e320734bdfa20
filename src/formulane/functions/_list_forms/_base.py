"""Shared tools of the list forms: the `Call` a form translates, literal folding, and the
polars and SQL building blocks every list form uses (one place; the submodules import them).

Contract: nothing here imports polars at import time (``pl`` is a `LazyModule`); the SQL
helpers build sqlglot trees with the DuckDB list functions the package docstring names.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import itertools
from decimal import Decimal
from typing import Any, Callable, NoReturn, Sequence, cast

from sqlglot import exp

from ...errors import Unsupported
from ...interpreter import ir
from ...types import Type
from ...values import CONTEXT, ErrorValue, XLError, display_text
from .._criteria import to_int
from .._lazy_forms import LazyModule


# polars is optional: the SQL forms never import it (nor the polars backend).
pl: Any = LazyModule("polars")
_vp: Any = LazyModule("formulane.vectorized.polars")
_vs: Any = LazyModule("formulane.vectorized.sql")

_MISSING: Any = object()
_EPOCH = dt.date(1899, 12, 30)  # Excel serial day 0 (see `_criteria.serial`)
_BIG = 1e308  # the engine's numbers stay below this magnitude (#NUM! beyond)


# ------------------------------------------------------------------------------ dispatch


class Call:
    """The IR call a form translates: its arguments' types and literal values."""

    def __init__(self, node: ir.Call, backend: str) -> None:
        self.node = node
        self.backend = backend
        self.args: Sequence[ir.IR] = node.args  # a Sequence: pyright narrows a tuple by len()
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
        from ...interpreter.compile import _COERCIONS

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
    return bool(_vp.numbers() == "float")


def _num(x: Any) -> Any:
    """A number in the program's numeric dtype. In decimal mode a float the Decimal(38, 18)
    cannot hold (NaN, an infinity, 1e20 or more: an error row's value, or a result
    `_pl_range_errors` names #NUM!) becomes null first: polars aborts the whole query on a
    strict cast that fails."""
    if _float():
        return x.cast(pl.Float64)
    return pl.when(x.cast(pl.Float64).abs() < _vp.DECIMAL_LIMIT).then(x).cast(_vp.DECIMAL_DTYPE)


def _pl_lit(v: Any) -> Any:
    if isinstance(v, (int, Decimal)) and not isinstance(v, bool):
        return _vp.literal(v, Type("Number"))
    return pl.lit(v)


def _pl_range_errors(value: Any) -> list[tuple[Any, str]]:
    """#NUM! for a float result the engine cannot hold (non-finite, or 1e308 and beyond; in
    decimal mode 1e20 and beyond, which Decimal(38, 18) cannot hold)."""
    v = value.cast(pl.Float64)
    if not _float():
        return [(~(v.abs() < _vp.DECIMAL_LIMIT), "#NUM!")]
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


def _f(name: str, *args: Any) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _p(e: exp.Expr) -> exp.Expr:
    """Parenthesized when it is an operator expression (sqlglot prints the tree as built)."""
    if isinstance(e, (exp.Binary, exp.Unary, exp.Connector, exp.Escape)) and not isinstance(
            e, exp.Paren):
        return exp.Paren(this=e)
    return e


def _n(v: Any) -> exp.Expr:
    return cast(exp.Expr, _vs.literal(v))


def _lam(build: Callable[..., exp.Expr], arity: int = 1) -> exp.Lambda:
    """A SQL lambda with fresh parameter names (``LAMBDA _l1, _l2 : ...`` in DuckDB)."""
    names = [f"_l{next(_names)}" for _ in range(arity)]
    body = build(*[exp.column(n) for n in names])
    return exp.Lambda(this=body, expressions=[exp.to_identifier(n) for n in names])


def _apply(lam: exp.Lambda, *args: exp.Expr) -> exp.Expr:
    """A lambda's body with its parameters replaced by expressions."""
    names = [i.name for i in lam.expressions]
    subst = dict(zip(names, args))

    def swap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in subst:
            return _p(subst[node.name].copy())
        return node

    return cast(exp.Expr, lam.this.copy().transform(swap))


def _at(lst: exp.Expr, i: exp.Expr) -> exp.Expr:
    """The i-th item (1-based; NULL outside)."""
    return exp.Bracket(this=_p(lst), expressions=[i], offset=1)


def _len(lst: exp.Expr) -> exp.Expr:
    return _f("LEN", lst)


def _and(*xs: exp.Expr) -> exp.Expr:
    out = _p(xs[0])
    for x in xs[1:]:
        out = exp.And(this=out, expression=_p(x))
    return out


def _or(*xs: exp.Expr) -> exp.Expr:
    out = _p(xs[0])
    for x in xs[1:]:
        out = exp.Or(this=out, expression=_p(x))
    return out


def _not(x: exp.Expr) -> exp.Expr:
    return exp.Not(this=_p(x))


def _is_null(x: exp.Expr) -> exp.Expr:
    return exp.Is(this=_p(x), expression=exp.Null())


def _not_null(x: exp.Expr) -> exp.Expr:
    return exp.Not(this=exp.Is(this=_p(x), expression=exp.Null()))


_CMP: dict[str, type[exp.Binary]] = {"=": exp.EQ, "<>": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}


def _cmp(op: str, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return _CMP[op](this=_p(a), expression=_p(b))


def _add(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.Add(this=_p(a), expression=_p(b))


def _sub(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.Sub(this=_p(a), expression=_p(b))


def _mul(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.Mul(this=_p(a), expression=_p(b))


def _div(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.Div(this=_p(a), expression=_p(b), typed=False, safe=False)


def _case(pairs: Sequence[tuple[exp.Expr, exp.Expr]],
          default: exp.Expr | None = None) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=default)


def _coalesce(a: exp.Expr, *rest: exp.Expr) -> exp.Expr:
    return exp.Coalesce(this=a, expressions=list(rest))


def _trunc(x: exp.Expr) -> exp.Expr:
    return _f("TRUNC", x)


def _sql_int(x: exp.Expr) -> exp.Expr:
    """Excel's integer argument as BIGINT: truncated, clamped far beyond any list length."""
    clamped = _f("LEAST", _f("GREATEST", _trunc(x), _n(-(10**15))), _n(10**15))
    return exp.cast(clamped, exp.DataType.build("BIGINT"))


def _sql_range_errors(value: exp.Expr) -> list[tuple[exp.Expr, str]]:
    # NaN compares above every number in DuckDB, so this also catches inf - inf.
    return [(exp.GTE(this=_f("ABS", value), expression=exp.Literal.number("1e308")), "#NUM!")]


def _sql_items(c: Call, values: Sequence[Any], start: int = 0) -> exp.Expr:
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


def _sql_present(lst: exp.Expr) -> exp.Expr:
    return _f("LIST_FILTER", lst, _lam(lambda x: _not_null(x)))


def _sql_count(lst: exp.Expr) -> exp.Expr:
    """The non-blank items of a list (0 for a blank list)."""
    return _coalesce(_f("LIST_COUNT", lst), _n(0))


def _sql_let(values: dict[str, exp.Expr],
             body: Callable[[dict[str, exp.Expr]], exp.Expr]) -> exp.Expr:
    """Bind expressions once per row (``list_transform([{...}], s -> ...)[1]``), so a lambda
    that needs a list's mean does not recompute it for every item."""
    name = f"_s{next(_names)}"
    struct = exp.Struct(expressions=[
        exp.PropertyEQ(this=exp.to_identifier(k), expression=v) for k, v in values.items()])
    fields: dict[str, exp.Expr] = {
        k: exp.Dot(this=exp.column(name), expression=exp.to_identifier(k)) for k in values}
    lam = exp.Lambda(this=body(fields), expressions=[exp.to_identifier(name)])
    return _at(_f("LIST_TRANSFORM", exp.Array(expressions=[struct]), lam), _n(1))



# ------------------------------------------------------------------------------- variants


def variants(table: dict[str, tuple[Callable[..., Any], Callable[..., Any], dict[str, Any]]]
             ) -> dict[str, Callable[..., Any]]:
    """``polars_<name>`` and ``sql_<name>`` of forms that are one builder per backend called
    with fixed keyword flags (MIN and MAX: `_pl_extreme`/`_sql_extreme`, largest or not): one
    table row per function names both backends' forms."""
    forms: dict[str, Callable[..., Any]] = {}
    for name, (polars, sql, flags) in table.items():
        forms[f"polars_{name}"] = functools.partial(polars, **flags)
        forms[f"sql_{name}"] = functools.partial(sql, **flags)
    return forms
