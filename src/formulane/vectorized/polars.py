"""The columnar backend: checked IR -> native polars expressions (no per-row Python).

Each sub-expression becomes a `Column`: a value expression and an error-code expression (Utf8,
null where the row is fine), or no error expression at all when the checker proved the node
cannot produce an error value (``may_error``). Errors combine left to right, as in the scalar
engine; lazy forms (IF, IFERROR, and, or...) select both value and error with the condition, so
polars computing both branches never leaks an error or a different answer. A function whose
spec has no polars form (or an explicit `Refuse`) makes `to_polars` raise `Unsupported` at
compile time, with the reason; nothing falls back to Python silently.

Form protocol (the ``polars=`` slot of a spec or signature):
- eager functions: ``form(*values: pl.Expr) -> pl.Expr | (pl.Expr, error_expr | None)``; the
  arguments' errors are combined for you, your error expression (if any) is added last; the
  error list form ``[(condition, code), ...]`` is checked in order;
- lazy functions (``lazy=True``): ``form(*columns: Column) -> Column``, full control;
- a form may read `numbers()` ("float" or "decimal") to pick the arithmetic;
- a form whose ``wants_call`` attribute is true also gets ``call=node``, the `ir.Call` being
  translated (argument types, constant arguments), as a keyword.

Numeric policy (see docs/columnar.md):
- float mode (Float64 and integer columns): IEEE float64. Division by zero is #DIV/0!; a result
  that is not finite or whose magnitude reaches 1e308 (the scalar engine's bound) is #NUM!. The
  finiteness test is placed where a non-finite value could stop propagating (a comparison, a
  function argument, a divisor, the result), never repeated along a chain of + - * that carries
  it anyway. Input NaN/inf are not validated (fill them to null first: they are not values of
  the formula lane).
- decimal mode (any Decimal input column): every Number is Decimal(38, 18). +, - and * are exact
  while the exact result has at most 18 decimal places; otherwise (and for /) the result is
  rounded half-even at 18 places. A result of magnitude 1e20 or more does not fit and is #NUM!
  (polars would abort the whole query: the operands of that row are masked first).
Literals take the mode of the program.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Callable, Mapping, cast

import polars as pl

from ..columnar.forms import form_for
from ..errors import Unsupported
from ..functions.spec import Refuse
from ..interpreter import ir
from ..types import Type
from ..values import ErrorValue

_MODE: contextvars.ContextVar[str] = contextvars.ContextVar("formulane_polars_numbers",
                                                           default="float")
#: True while a lambda body is compiled for ``list.eval`` (pl.element() context).
_ELEMENT: contextvars.ContextVar[bool] = contextvars.ContextVar("formulane_polars_element",
                                                               default=False)
DECIMAL_DTYPE = pl.Decimal(38, 18)
#: Decimal(38, 18) holds magnitudes below 1e20.
DECIMAL_LIMIT = 1e20
#: The scalar engine's bound on numbers (|x| < 1e308); float results beyond it are #NUM!.
FLOAT_LIMIT = 1e308
NULL_TEXT = pl.lit(None, dtype=pl.Utf8)


class Binder:
    """Sub-expressions computed once, as temporary columns (`formulane.apply` adds them level by
    level before the outputs and drops them after). Forms read an argument several times and
    polars expands a shared expression into a tree when it plans, so without binding nested
    calls grew the plan exponentially (eight levels per ROUND: depth 4 took 19 s to plan)."""

    def __init__(self, taken: Any) -> None:
        taken = set(taken)
        prefix = "_f"
        while any(n.startswith(prefix) for n in taken):
            prefix = "_" + prefix
        self.prefix = prefix
        self.bindings: list[tuple[str, pl.Expr]] = []

    def bind(self, e: pl.Expr) -> pl.Expr:
        name = f"{self.prefix}{len(self.bindings) + 1}"
        self.bindings.append((name, e.alias(name)))
        return pl.col(name)

    def stages(self) -> list[list[pl.Expr]]:
        """The bindings grouped so each group reads only the frame and earlier groups."""
        level: dict[str, int] = {}
        groups: list[list[pl.Expr]] = []
        for name, e in self.bindings:
            deps = [level[r] for r in e.meta.root_names() if r in level]
            level[name] = 1 + max(deps, default=0)
            while len(groups) < level[name]:
                groups.append([])
            groups[level[name] - 1].append(e)
        return groups

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.bindings]


_BINDER: contextvars.ContextVar[Binder | None] = contextvars.ContextVar(
    "formulane_polars_binder", default=None)


def let(e: pl.Expr) -> pl.Expr:
    """``e`` computed once (a temporary column) while `apply` binds, else ``e`` itself.
    Literals and plain columns are never bound; nor is anything inside ``list.eval``."""
    binder = _BINDER.get()
    if binder is None or _ELEMENT.get():
        return e
    meta = e.meta
    if meta.is_column() or meta.is_literal(allow_aliasing=True) or not meta.root_names():
        return e
    return binder.bind(e)


def special_name(name: str) -> bool:
    """True for a name `pl.col` would not take literally: ``*`` (every column) or ``^...$``
    (a regular expression over the column names)."""
    return name == "*" or (name.startswith("^") and name.endswith("$"))


def column(name: str) -> pl.Expr:
    """The column called exactly ``name``: never a regex or wildcard expansion (a column named
    ``^price.*$`` must not read ``price_secret``). A missing column is polars' own
    ColumnNotFoundError at collect time, as for `pl.col`."""
    if not special_name(name):
        return pl.col(name)
    import polars.selectors as cs

    return cs.by_name(name, require_all=True).as_expr()

#: Operators through which a non-finite float propagates (inf stays inf or becomes NaN): the
#: #NUM! test can wait until the value reaches something that could hide it.
_CARRIERS = frozenset({"+", "-", "*", "NEG", "POS", "%"})
_DECIMAL_OPS = frozenset({"+", "-", "*", "/"})
#: The largest decimal scale: quotients and long products round half-even there.
MAX_SCALE = 18


def _decimal_fit(scale: int) -> float:
    """Decimal(38, scale) holds |x| < 10^(38 - scale); estimates are tested with a margin."""
    return 10.0 ** (38 - scale) * (1 - 1e-12)


def _literal_scale(value: Any) -> int:
    exponent = Decimal(value).normalize().as_tuple().exponent
    return min(max(0, -int(exponent)), MAX_SCALE)


def _decimal_column(expr: pl.Expr, dtype: Any) -> Column:
    """A Number column read in decimal mode: a Decimal keeps its scale (widened to precision
    38), an integer becomes Decimal(38, 0), anything else Decimal(38, 18)."""
    bound = None
    if isinstance(dtype, pl.Decimal) and dtype.scale is not None and dtype.scale <= MAX_SCALE:
        scale = dtype.scale
        value = expr.cast(pl.Decimal(38, scale)) if dtype.precision != 38 else expr
        if dtype.precision is not None:
            bound = 10.0 ** (dtype.precision - scale)
    elif dtype is not None and dtype.is_integer():
        scale, value = 0, expr.cast(pl.Decimal(38, 0))
        bound = 2.0 ** (8 * _INT_BYTES.get(str(dtype), 16))
    else:
        scale, value = MAX_SCALE, expr.cast(DECIMAL_DTYPE)
    return Column(value, estimate=_estimate(value, scale), scale=scale, bound=bound)


_INT_BYTES = {"Int8": 1, "Int16": 2, "Int32": 4, "Int64": 8, "UInt8": 1, "UInt16": 2,
              "UInt32": 4, "UInt64": 8}


def _estimate(value: pl.Expr, scale: int) -> pl.Expr:
    # the raw integer of a Decimal(38, s) to float, scaled: a cast of the decimal itself to
    # Float64 is an order of magnitude slower in polars
    return value.to_physical().cast(pl.Float64) * (10.0 ** -scale)


_SELECTING = frozenset({"IF", "IFS", "SWITCH", "CHOOSE", "IFERROR", "IFNA", "COALESCE", "??",
                        "IFBLANK", "OP_AND", "OP_OR", "AND", "OR", "NOT", "=", "<>", "<", "<=",
                        ">", ">="})


def _as_scale18(col: Column) -> Column:
    if col.scale is None or col.scale == MAX_SCALE:
        return col
    if col.value.meta.is_literal():
        # a literal stays a literal (forms specialise on constants: a weekend code...)
        constant = _literal_value(col.value)
        if isinstance(constant, Decimal):
            return replace(col, value=pl.lit(constant, dtype=DECIMAL_DTYPE), scale=MAX_SCALE)
    return replace(col, value=col.value.cast(DECIMAL_DTYPE), scale=MAX_SCALE)


def _as_decimal(col: Column) -> Column:
    """A decimal Column with its scale and estimate known (a form's result is re-read)."""
    if col.scale is not None and col.estimate is not None:
        return col
    value = col.value.cast(DECIMAL_DTYPE)
    return Column(value, col.error, col.unchecked, col.type, _estimate(value, MAX_SCALE),
                  MAX_SCALE)


def numbers() -> str:
    """The numeric mode of the program being translated: "float" or "decimal"."""
    return _MODE.get()


@dataclass(frozen=True)
class Column:
    """A compiled sub-expression. ``unchecked``: a float value that may be non-finite and has
    not been tested yet (float mode only; see the module docs)."""

    value: pl.Expr
    error: pl.Expr | None = None
    unchecked: bool = False
    type: Type | None = None  # the node's static type (set by the compiler)
    #: decimal mode: a float64 estimate of the value, carried alongside so overflow guards
    #: never have to repeat (and so re-expand) the decimal expression itself
    estimate: pl.Expr | None = None
    #: decimal mode: the scale of the value's Decimal(38, scale) dtype, when known
    scale: int | None = None
    #: decimal mode: an upper bound of |value| known from the dtypes (None: unknown)
    bound: float | None = None

    def error_or_null(self) -> pl.Expr:
        return self.error if self.error is not None else NULL_TEXT


def first_error(*errors: pl.Expr | None) -> pl.Expr | None:
    """The first non-null error code, left to right (None when no part can error)."""
    present = [e for e in errors if e is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return pl.coalesce(present)


def error_when(condition: pl.Expr, code: str) -> pl.Expr:
    return pl.when(condition).then(pl.lit(code)).otherwise(NULL_TEXT)


def not_finite(value: pl.Expr) -> pl.Expr:
    """Float values the scalar engine could not hold: NaN, infinities, |x| >= 1e308."""
    return error_when(~(value.abs() < FLOAT_LIMIT), "#NUM!")


def own_errors(spec: Any) -> pl.Expr | None:
    """A form's errors: an error-code expression, or ``[(condition, code), ...]`` checked in
    order (the first true condition names the error)."""
    if spec is None or isinstance(spec, pl.Expr):
        return spec
    chain: Any = None
    for condition, code in spec:
        chain = (pl.when(condition) if chain is None else chain.when(condition)).then(pl.lit(code))
    return None if chain is None else chain.otherwise(NULL_TEXT)


def literal(value: Any, t: Type) -> pl.Expr:
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        if numbers() == "decimal":
            return pl.lit(Decimal(value), dtype=DECIMAL_DTYPE)
        return pl.lit(float(value), dtype=pl.Float64)
    if value is None:
        return pl.lit(None, dtype=dtype_of(t))
    if isinstance(value, tuple):
        # a one-row Series literal, taken as a scalar so it broadcasts over the frame
        return pl.lit(pl.Series([[_plain(v) for v in value]], dtype=dtype_of(t))).first()
    return pl.lit(value)


def _literal_value(e: pl.Expr) -> Any:
    """The value of a literal expression (for forms that specialise on constants), else None."""
    try:
        if not e.meta.is_literal():
            return None
        return pl.select(e).item()
    except Exception:
        return None


def _fits_decimal(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_fits_decimal(v) for v in value)
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        magnitude = cast("Decimal | int", abs(value))  # abs() of the union is object to mypy
        return magnitude < DECIMAL_LIMIT
    return True


def _plain(value: Any) -> Any:
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        return Decimal(value) if numbers() == "decimal" else float(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def dtype_of(t: Type) -> pl.DataType:
    kind = t.kind
    if kind == "Number":
        return DECIMAL_DTYPE if numbers() == "decimal" else pl.Float64()
    if kind == "Text":
        return pl.Utf8()
    if kind == "Boolean":
        return pl.Boolean()
    if kind == "Date":
        return pl.Date()
    if kind == "DateTime":
        return pl.Datetime("us", "UTC")
    if kind == "Duration":
        return pl.Duration("us")
    if kind == "List":
        return pl.List(dtype_of(t.elem))  # type: ignore[arg-type]
    if kind == "Record":
        return pl.Struct({name: dtype_of(ft) for name, ft in t.fields})
    return pl.Null()


def number_dtype_cast(expr: pl.Expr, t: Type) -> pl.Expr:
    """A column read as the program's numbers (integers and other widths cast; a no-op when
    the column already has the dtype)."""
    if t.kind == "Number":
        return expr.cast(dtype_of(t))
    if t.kind == "List" and t.elem is not None and t.elem.kind == "Number":
        return expr.cast(pl.List(dtype_of(t.elem)))
    return expr


class PolarsCompiler:
    def __init__(self, columns: Mapping[str, str],
                 dtypes: Mapping[str, pl.DataType] | None = None) -> None:
        self.columns = columns  # variable name -> column name
        self.dtypes = dtypes or {}  # column name -> dtype, when the frame is known
        self.slots: dict[int, Column] = {}
        self.element_slot: int | None = None

    def compile(self, node: ir.IR) -> Column:
        col = self._compile(node)
        if col.error is not None and not node.may_error and type(node) is ir.Call \
                and not ir.reads_locals(node):
            # The checker proved this node error-free: no error plumbing above it. (Its proof
            # does not see through LET names and lambda parameters, so those keep theirs.)
            col = replace(col, error=None, unchecked=False)
        if not isinstance(node, ir.Lambda):
            col = replace(col, type=node.type)
        return col

    def _compile(self, node: ir.IR) -> Column:
        kind = type(node)
        if kind is ir.Const:
            value = node.value  # type: ignore[union-attr]
            if type(value) is ErrorValue:
                return Column(pl.lit(None, dtype=dtype_of(node.type)), pl.lit(value.code))
            if numbers() == "decimal" and not _fits_decimal(value):
                # Decimal(38, 18) cannot hold it: #NUM!, as for a result that large
                return Column(pl.lit(None, dtype=dtype_of(node.type)), pl.lit("#NUM!"))
            if isinstance(value, (Decimal, int)) and not isinstance(value, bool) \
                    and numbers() == "float":
                return Column(literal(value, node.type), bound=abs(float(value)))
            if numbers() == "decimal" and isinstance(value, (Decimal, int)) \
                    and not isinstance(value, bool):
                scale = _literal_scale(value)
                return Column(pl.lit(Decimal(value), dtype=pl.Decimal(38, scale)),
                              estimate=pl.lit(float(value)), scale=scale,
                              bound=abs(float(value)))
            return Column(literal(value, node.type))
        if kind is ir.Var:
            slot = node.slot  # type: ignore[union-attr]
            if slot == self.element_slot:
                return Column(pl.element())
            if slot in self.slots:
                return self.slots[slot]
            name = self.columns.get(node.name, node.name)  # type: ignore[union-attr]
            dtype = self.dtypes.get(name)
            _refuse_special_fields(self, node, node.type)
            if numbers() == "decimal" and node.type.kind == "Number":
                return _decimal_column(column(name), dtype)
            bound = None
            if node.type.kind == "Number":
                # the lane's numbers are below 1e308 in magnitude (the scalar engine refuses
                # others); an integer column's dtype bounds it further
                bound = 2.0 ** (8 * _INT_BYTES[str(dtype)]) if str(dtype) in _INT_BYTES \
                    else FLOAT_LIMIT
            return Column(number_dtype_cast(column(name), node.type), bound=bound)
        if kind is ir.Let:
            for slot, value in zip(node.slots, node.values):  # type: ignore[union-attr]
                self.slots[slot] = self.bound(self.checked(self.compile(value)))
            return self.compile(node.body)  # type: ignore[union-attr]
        if kind is ir.Call:
            return self.call(node)  # type: ignore[arg-type]
        if kind is ir.Coerce:
            return self.coerce(node)  # type: ignore[arg-type]
        if kind is ir.FieldOf:
            obj = self.compile(node.obj)  # type: ignore[union-attr]
            _refuse_special_fields(self, node, node.obj.type)  # type: ignore[union-attr]
            return Column(obj.value.struct.field(node.name), obj.error)  # type: ignore[union-attr]
        if kind is ir.IndexOf:
            if type(node.obj) is ir.ListOf and node.obj.items:  # type: ignore[union-attr]
                return self.index_literal(node)  # type: ignore[arg-type]
            obj = self.compile(node.obj)  # type: ignore[union-attr]
            index = self.checked(self.compile(node.index))  # type: ignore[union-attr]
            position = index.value.cast(pl.Int64, strict=False) - 1
            value = obj.value.list.get(position, null_on_oob=True)
            oob = (position < 0) | (position >= obj.value.list.len())
            return Column(value, first_error(obj.error, index.error, error_when(oob, "#REF!")))
        if kind is ir.ListOf:
            items = [self.checked(self.compile(i)) for i in node.items]  # type: ignore[union-attr]
            if not items:
                return Column(literal((), node.type))
            values = [i.value for i in items]
            elem = node.type.elem
            constant = _constant_list(node)
            if elem is not None and elem.kind == "List" and constant is not None:
                # a nested literal: one typed Series literal (polars mis-scales decimals read
                # back from the struct-wrapped form below once the list is sliced)
                return Column(pl.lit(pl.Series([constant], dtype=dtype_of(node.type))).first())
            if elem is not None and elem.kind == "List":
                # concat_list splices list operands into one flat list: wrap each item in a
                # one-field struct (kept whole) and unwrap inside the result
                # (each item cast to the list's dtype first: polars mis-scales Decimal fields
                # of different scales when it unifies the structs)
                values = [pl.struct(_item=v.cast(dtype_of(elem))) for v in values]
                return Column(pl.concat_list(values).list.eval(
                    pl.element().struct.field("_item")), first_error(*[i.error for i in items]))
            if elem is not None and elem.kind == "Number":
                # one scale for all items: polars 2.1's concat_list misreads Decimals of
                # different scales (0.001 and 2 as 1 and 2000)
                values = [v.cast(dtype_of(elem)) for v in values]
            return Column(pl.concat_list(values), first_error(*[i.error for i in items]))
        raise self.refuse(node, getattr(node, "type", "?"), f"{kind.__name__} nodes")

    def index_literal(self, node: ir.IndexOf) -> Column:
        """``[a, b, c][i]``: a list literal holds its items' errors one by one (as the scalar
        engine does), so only the selected item's error reaches the result."""
        items = [self.checked(self.compile(i)) for i in node.obj.items]  # type: ignore[union-attr]
        index = self.checked(self.compile(node.index))
        position = index.value.cast(pl.Int64, strict=False)
        value: Any = None
        error: Any = None
        for n, item in enumerate(items, start=1):
            value = (pl.when(position == n) if value is None else value.when(position == n)) \
                .then(item.value)
            error = (pl.when(position == n) if error is None else error.when(position == n)) \
                .then(item.error_or_null())
        return Column(value, first_error(index.error, error.otherwise(pl.lit("#REF!"))))

    @staticmethod
    def checked(col: Column) -> Column:
        """The column with its pending non-finite test applied (#NUM!, after its own errors)."""
        if not col.unchecked:
            return col
        return Column(col.value, first_error(col.error, not_finite(col.value)), False, col.type)

    def refuse(self, node: ir.IR, name: Any, reason: str) -> Unsupported:
        return Unsupported(f"polars cannot evaluate {name}: {reason}", function=str(name),
                           backend="polars", reason=reason, span=node.span)

    @staticmethod
    def bound(col: Column) -> Column:
        if _BINDER.get() is None or _ELEMENT.get():
            return col
        return replace(col, value=let(col.value),
                       error=None if col.error is None else let(col.error),
                       estimate=None if col.estimate is None else let(col.estimate))

    def call(self, node: ir.Call) -> Column:
        spec = node.spec
        # any declared form (a Refuse, or a callable taking and returning columns, expressions
        # or tuples, each its own way); pyright would narrow it to concat_any's signature below
        form: Any = form_for(node, "polars")
        if spec.name == "&":
            form = concat_any
        elif isinstance(form, Refuse):
            raise self.refuse(node, spec.name, form.reason)
        elif not callable(form):
            raise self.refuse(node, spec.name, "no polars form is declared")
        elif spec.check is not None and not spec.lazy and _concrete_mismatch(node):
            raise self.refuse(node, spec.name, "only the declared operand types vectorize "
                              f"({', '.join(str(p.type) for p in node.sig.params)})")
        never = _never_arg(node)
        if never is not None:
            # an argument that is always an error (NA(), ERROR(...)): an eager call returns
            # the first error left to right, and its form never sees a value of no type
            before = [self.checked(self.compile(a)) for a in node.args[:never + 1]]
            return Column(pl.lit(None, dtype=dtype_of(node.type)),
                          first_error(*[c.error for c in before]))
        if any(isinstance(a, ir.Lambda) for a in node.args):
            return self.higher_order(node, form)
        # an argument that is itself a nested call is bound once (`let`): the forms read their
        # arguments several times, and each level would multiply the plan
        args = [self.bound(c) if _nested_call(a) else c
                for a, c in zip(node.args, [self.compile(a) for a in node.args])]
        args = [_typed_null(c, a, _param_type(node.sig, i), node.type)
                for i, (a, c) in enumerate(zip(node.args, args))]
        if not spec.lazy and not spec.accepts_errors:
            failing = next((i for i, c in enumerate(args) if _always_error(c)), None)
            if failing is not None:
                # an argument that is an error on every row (``1/0``, folded to a null literal
                # with its code): as for a Never argument, the first error left to right is
                # the result, and the form never sees a null constant it cannot type
                before = [self.checked(c) for c in args[:failing + 1]]
                return Column(pl.lit(None, dtype=dtype_of(node.type)),
                              first_error(*[c.error for c in before]))
        if numbers() == "decimal" and spec.name in _DECIMAL_OPS and node.type.kind == "Number" \
                and all(a.type is not None and a.type.kind == "Number" for a in args):
            return self.decimal_op(spec.name, args[0], args[1])
        if numbers() == "decimal" and spec.name not in _SELECTING:
            # forms compute on Decimal(38, 18) (their contract); only the selecting forms and
            # comparisons take any scale as it is
            args = [_as_scale18(a) for a in args]
        if spec.lazy or getattr(form, "wants_columns", False):
            out: Any = form(*[self.checked(a) for a in args], **_call_kw(form, node))
            return out if isinstance(out, Column) else Column(out)
        if spec.name == "&":
            args = [self.checked(a) for a in args]
            return Column(form(*[to_text(a.value, n.type) for a, n in zip(args, node.args)]),
                          first_error(*[a.error for a in args]))
        out = form(*[a.value for a in args], **_call_kw(form, node))
        own_error = None
        if isinstance(out, tuple):
            out, own_error = out[0], own_errors(out[1])
        floats = numbers() == "float" and node.type.kind == "Number"
        carrier = floats and spec.name in _CARRIERS
        errors: list[pl.Expr | None] = []
        pending = False
        for i, a in enumerate(args):
            later = own_error is not None or any(b.error is not None for b in args[i + 1:])
            if a.unchecked and carrier and not later:
                pending = True  # carried to the consumer: inf + x is still not finite
                errors.append(a.error)
            else:
                errors.append(self.checked(a).error)
        # A float result may be non-finite (overflow, or a function's NaN) unless the checker
        # proved the call error-free, or the operands' bounds prove it finite (x * 0.9 when
        # |x| < 1e308); + - * defer the test to the consumer.
        bound = _float_bound(spec.name, args) if carrier else None
        unchecked = floats and (node.may_error or pending) and not (
            bound is not None and not pending and bound * (1 + 1e-12) < FLOAT_LIMIT)
        return Column(out, first_error(*errors, own_error), unchecked, bound=bound)

    @staticmethod
    def decimal_op(op: str, a: Column, b: Column) -> Column:
        """+ - * / in decimal mode. Values keep the scale they need (a sum the larger of its
        operands', a product the sum of theirs, a quotient 18; at most 18, rounded half-even
        there), so ``price * qty`` on Decimal(38, 2) and Decimal(38, 0) columns is one native
        multiplication. A row whose result would not fit Decimal(38, scale) is #NUM! and its
        operand masked before polars computes it (polars aborts the whole query on a decimal
        overflow or division by zero); the test runs on float64 estimates carried beside the
        values, with a margin, so the decimal expressions are never repeated."""
        a, b = _as_decimal(a), _as_decimal(b)
        sa, sb = a.scale, b.scale
        assert sa is not None and sb is not None
        ea, eb = a.estimate, b.estimate
        left, right = a.value, b.value
        if op in ("+", "-"):
            scale = max(sa, sb)
            estimate = ea + eb if op == "+" else ea - eb  # type: ignore[operator]
        elif op == "*":
            scale = min(sa + sb, MAX_SCALE)
            estimate = ea * eb  # type: ignore[operator]
            # polars gives a product the larger operand scale: widen one side to the exact one
            if max(sa, sb) < scale:
                if sa >= sb:
                    left = left.cast(pl.Decimal(38, scale))
                else:
                    right = right.cast(pl.Decimal(38, scale))
        else:
            scale = MAX_SCALE
            estimate = ea / eb  # type: ignore[operator]
            left = left.cast(pl.Decimal(38, MAX_SCALE))
        ba, bb = a.bound, b.bound
        bound = None
        if ba is not None and bb is not None and op != "/":
            bound = ba + bb if op in ("+", "-") else ba * bb
        if bound is not None and bound * (1 + 1e-9) < _decimal_fit(scale):
            # the dtypes prove the result fits: no guard, no error (e.g. Decimal(12, 2) *
            # Decimal(10, 0) cannot reach 1e36)
            value = {"+": left + right, "-": left - right, "*": left * right}[op]
            return Column(value, first_error(a.error, b.error), estimate=estimate, scale=scale,
                          bound=bound)
        over = ~(estimate.abs() < _decimal_fit(scale))
        if op == "/":
            zero = eb == 0
            value = left / pl.when(~(zero | over)).then(right)
            own = own_errors([(zero, "#DIV/0!"), (over, "#NUM!")])
        else:
            masked = pl.when(~over).then(right)
            value = {"+": left + masked, "-": left - masked, "*": left * masked}[op]
            own = error_when(over, "#NUM!")
        return Column(value, first_error(a.error, b.error, own), estimate=estimate, scale=scale,
                      bound=bound if bound is not None and bound < _decimal_fit(scale) else None)

    def higher_order(self, node: ir.Call, form: Callable[..., Any]) -> Column:
        """MAP/FILTER-style calls: the lambda body runs inside ``list.eval`` on pl.element()."""
        args: list[Any] = []
        errors = []
        for a in node.args:
            if isinstance(a, ir.Lambda):
                if len(a.slots) != 1:
                    raise self.refuse(node, node.spec.name, "lambdas with several parameters")
                if _references_columns(a.body, a.slots[0]):
                    raise self.refuse(node, node.spec.name,
                                      "a lambda that reads other columns (list.eval sees only "
                                      "the element)")
                inner = PolarsCompiler(self.columns, self.dtypes)
                inner.slots = dict(self.slots)
                inner.element_slot = a.slots[0]
                token = _ELEMENT.set(True)
                try:
                    body = inner.checked(inner.compile(a.body))
                finally:
                    _ELEMENT.reset(token)
                if body.error is not None:
                    raise self.refuse(node, node.spec.name, "a lambda whose body may error")
                args.append(body.value)
            else:
                col = self.checked(self.compile(a))
                args.append(col.value)
                errors.append(col.error)
        out = form(*args, **_call_kw(form, node))
        own_error = None
        if isinstance(out, tuple):
            out, own_error = out[0], own_errors(out[1])
        return Column(out, first_error(*errors, own_error))

    def coerce(self, node: ir.Coerce) -> Column:
        inner = self.checked(self.compile(node.node))
        v = inner.value
        mode = node.mode
        if mode == "blank_to_number":
            return Column(v.fill_null(literal(0, node.type)), inner.error)
        if mode == "blank_to_text":
            return Column(v.fill_null(pl.lit("")), inner.error)
        if mode == "blank_to_boolean":
            return Column(v.fill_null(pl.lit(False)), inner.error)
        if mode == "boolean_to_number":
            return Column(v.cast(pl.Int8).cast(dtype_of(node.type)), inner.error)
        if mode == "number_to_boolean":
            return Column(v != 0, inner.error)
        if mode == "to_text":
            if node.node.type.kind not in _TEXT_FORMS:
                raise self.refuse(node, mode, f"{node.node.type} to text has no polars form")
            return Column(to_text(v, node.node.type), inner.error)
        if mode == "text_to_number":
            cleaned = v.str.strip_chars().str.replace_all(",", "")
            number = cleaned.cast(pl.Float64, strict=False)
            if numbers() == "decimal":
                number = cleaned.cast(DECIMAL_DTYPE, strict=False)
            else:
                number = pl.when(number.abs() < FLOAT_LIMIT).then(number)
            # A blank passes on as blank (the checker follows with blank_to_number).
            bad = number.is_null() & v.is_not_null() if node.node.type.nullable \
                else number.is_null()
            return Column(number, first_error(inner.error, error_when(bad, "#VALUE!")))
        if mode == "text_to_boolean":
            upper = v.str.strip_chars().str.to_uppercase()
            value = pl.when(upper == "TRUE").then(True).when(upper == "FALSE").then(False)
            bad = value.is_null() & v.is_not_null() if node.node.type.nullable \
                else value.is_null()
            return Column(value, first_error(inner.error, error_when(bad, "#VALUE!")))
        raise self.refuse(node, mode, "this coercion has no polars form")


# ------------------------------------------------------------------------------- text forms

_TEXT_FORMS = ("Text", "Number", "Boolean", "Date")
_ZEROS = "0" * 40


def concat_any(*parts: pl.Expr) -> pl.Expr:
    return pl.concat_str(list(parts))


def to_text(value: pl.Expr, t: Type) -> pl.Expr:
    """A value as `&` and text coercions show it (`values.display_text`)."""
    kind = t.kind
    if kind == "Text":
        return value
    if kind == "Boolean":
        shown = pl.when(value).then(pl.lit("TRUE")).otherwise(pl.lit("FALSE"))
    elif kind == "Number":
        shown = general_text(value)
    elif kind == "Date":
        return value.dt.to_string("%Y-%m-%d")
    else:
        shown = None
    if shown is not None:
        # A blank stays blank (the checker follows with blank_to_text where it joins as "").
        return shown if not t.nullable else pl.when(value.is_not_null()).then(shown)
    raise Unsupported(f"polars cannot show {t} as text", function="&", backend="polars",
                      reason=f"{t} to text is not vectorized")


def general_text(value: pl.Expr) -> pl.Expr:
    """Excel's General format natively: 15 significant digits rounded half up, no exponent for
    magnitudes 1e-9 .. <1e15, else ``d.dddE+XX`` (as `values.general_text`).

    The digits come from the value's exact decimal text: a Decimal column's own digits, and for
    a float its shortest round-trip representation (the digits Python's ``repr`` shows), so the
    rounding is decimal rounding, never a binary approximation of it."""
    text = value.abs().cast(pl.Utf8)
    parts = text.str.split_exact("e", 1)
    mantissa = parts.struct.field("field_0")
    shift = parts.struct.field("field_1").cast(pl.Int64, strict=False).fill_null(0)
    halves = mantissa.str.split_exact(".", 1)
    int_part = halves.struct.field("field_0").str.strip_chars_start("0")
    frac_part = halves.struct.field("field_1").fill_null("")
    frac_digits = frac_part.str.strip_chars_start("0")
    has_int = int_part.str.len_chars() > 0
    exponent = pl.when(has_int).then(int_part.str.len_chars().cast(pl.Int64) - 1).otherwise(
        frac_digits.str.len_chars().cast(pl.Int64) - frac_part.str.len_chars().cast(pl.Int64) - 1
    ) + shift
    digits = pl.when(has_int).then(int_part + frac_part).otherwise(frac_digits) \
        .str.strip_chars_end("0")
    # (strict=False: a non-finite float's "inf" reaches here on rows already flagged #NUM!)
    head = digits.str.slice(0, 15).str.pad_end(15, "0").cast(pl.Int64, strict=False)
    round_up = digits.str.slice(15) >= pl.lit("5")
    mant = head + round_up.cast(pl.Int64)
    carry = mant >= 10**15
    mant = pl.when(carry).then(mant // 10).otherwise(mant)
    exponent = exponent + carry.cast(pl.Int64)
    sig = mant.cast(pl.Utf8).str.strip_chars_end("0")
    n = sig.str.len_chars().cast(pl.Int64)
    # Fixed notation.
    whole = pl.when(exponent >= 0).then(
        sig.str.slice(0, (exponent + 1).clip(lower_bound=0))
        + pl.lit(_ZEROS).str.slice(0, (exponent + 1 - n).clip(lower_bound=0))
    ).otherwise(pl.lit("0"))
    fraction = pl.when(exponent >= 0).then(sig.str.slice((exponent + 1).clip(lower_bound=0))) \
        .otherwise(pl.lit(_ZEROS).str.slice(0, (-exponent - 1).clip(lower_bound=0)) + sig)
    fixed = pl.when(fraction.str.len_chars() > 0).then(whole + pl.lit(".") + fraction) \
        .otherwise(whole)
    # Scientific notation.
    sci_mantissa = pl.when(n > 1).then(sig.str.slice(0, 1) + pl.lit(".") + sig.str.slice(1)) \
        .otherwise(sig)
    sci = sci_mantissa + pl.when(exponent < 0).then(pl.lit("E-")).otherwise(pl.lit("E+")) \
        + exponent.abs().cast(pl.Utf8).str.pad_start(2, "0")
    body = pl.when((exponent > -10) & (exponent < 15)).then(fixed).otherwise(sci)
    signed = pl.when(value < 0).then(pl.lit("-") + body).otherwise(body)
    return pl.when(digits.str.len_chars() == 0).then(pl.lit("0")).otherwise(signed)


def _float_bound(op: str, args: list[Column]) -> float | None:
    """An upper bound of |result| for + - * NEG POS % from the operands' bounds."""
    bounds = [a.bound for a in args]
    if any(b is None for b in bounds):
        return None
    if op in ("+", "-"):
        return bounds[0] + bounds[1]  # type: ignore[operator]
    if op == "*":
        return bounds[0] * bounds[1]  # type: ignore[operator]
    if op == "%":
        return bounds[0] / 100  # type: ignore[operator]
    return bounds[0]


def _references_columns(body: ir.IR, element_slot: int) -> bool:
    stack = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Var) and n.slot != element_slot:
            return True
        stack.extend(ir.ir_children(n))
    return False


#: Calls whose float form is plain polars arithmetic, comparison or boolean logic: computing
#: them on a row that errs gives a number (inf, NaN) or a boolean, never a raised exception.
_RAW_SAFE_CALLS = frozenset({"+", "-", "*", "/", "NEG", "POS", "=", "<>", "<", ">", "<=", ">=",
                             "OP_AND", "OP_OR", "NOT", "IF"})


def raw_is_safe(root: ir.IR, numbers_mode: str,
                dtypes: Mapping[str, pl.DataType] | None) -> bool:
    """Whether the program's value may be computed on every row, errored rows included, without
    polars raising. Polars masks a when/then's inputs, so a form may rely on the error mask to
    keep, say, a strict cast away from a NaN; a value computed outside that mask is safe only
    for float arithmetic, comparisons and logic over numeric or boolean columns."""
    if numbers_mode != "float":
        return False
    stack = [root]
    while stack:
        node = stack.pop()
        kind = type(node)
        if node.type.kind not in ("Number", "Boolean"):
            return False
        if kind is ir.Var:
            dtype = (dtypes or {}).get(node.name)  # type: ignore[union-attr]
            if dtype is None or not (dtype.is_numeric() or dtype == pl.Boolean) \
                    or isinstance(dtype, pl.Decimal):
                return False
        elif kind is ir.Call:
            if node.spec.name not in _RAW_SAFE_CALLS:  # type: ignore[union-attr]
                return False
        elif kind is not ir.Const:
            return False
        stack.extend(ir.ir_children(node))
    return True


def _nested_call(node: ir.IR) -> bool:
    """A call three levels deep or more: worth binding once. Shallower arguments stay inline,
    so polars fuses everyday arithmetic and conditionals (`price * qty * 1.2 + 5` binds
    nothing) while the copies a form makes of an unbound argument stay a constant factor."""
    return _depth(node, 3) >= 3


def _depth(node: ir.IR, cap: int) -> int:
    if type(node) in (ir.Const, ir.Var) or cap <= 0:
        return 0
    return 1 + max((_depth(c, cap - 1) for c in ir.ir_children(node)), default=0)


def _refuse_special_fields(compiler: "PolarsCompiler", node: ir.IR, t: Type | None) -> None:
    """Polars reads a struct field named ``*`` or ``^...$`` as a pattern (or panics): a record
    with such a field name is refused rather than read from the wrong field."""
    while t is not None and t.kind == "List":
        t = t.elem
    if t is None or t.kind != "Record":
        return
    for name, ft in t.fields:
        if special_name(name):
            raise compiler.refuse(node, "a record field", f"the field name {name!r} is a "
                                  "pattern to polars, which cannot select it exactly")
        _refuse_special_fields(compiler, node, ft)


def to_polars(root: ir.IR, *, numbers_mode: str = "float",
              columns: Mapping[str, str] | None = None,
              dtypes: Mapping[str, pl.DataType] | None = None
              ) -> tuple[pl.Expr, pl.Expr | None]:
    """(value expression, error-code expression or None) for a checked program. The value is
    as computed, also on rows that err: the caller nulls it there (`frame.to_polars_form`)."""
    if numbers_mode not in ("float", "decimal"):
        raise ValueError("numbers_mode must be 'float' or 'decimal'")
    token = _MODE.set(numbers_mode)
    try:
        compiler = PolarsCompiler(columns or {}, dtypes)
        col = compiler.checked(compiler.compile(root))
    finally:
        _MODE.reset(token)
    return col.value, col.error


def _constant_list(node: ir.IR) -> Any:
    """The Python value of a list literal made only of number, text and boolean constants
    (nested lists included), else None."""
    if type(node) is ir.ListOf:
        items = [_constant_list(i) for i in node.items]
        return None if any(i is None for i in items) else items
    if type(node) is ir.Const and isinstance(node.value, (Decimal, int, str, bool)):
        return _plain(node.value)
    return None


def _never_arg(node: ir.Call) -> int | None:
    """The position of the first argument typed Never (always an error) of an eager call that
    does not inspect errors, else None."""
    spec = node.spec
    if spec.lazy or spec.accepts_errors:
        return None
    for i, a in enumerate(node.args):
        if not isinstance(a, ir.Lambda) and a.type.kind == "Never":
            return i
    return None


def _always_error(col: Column) -> bool:
    """True when the column's error reads no column and is set: an error on every row."""
    if col.error is None or _ELEMENT.get() or col.error.meta.root_names():
        return False
    try:
        return pl.select(col.error).item() is not None
    except Exception:  # noqa: BLE001 - not a plain constant: not known to fail
        return False


def _param_type(sig: Any, i: int) -> Type:
    """The declared type of a call's ``i``-th argument (repeated parameters cycle)."""
    params = sig.params
    if i >= len(params) and sig.repeat:
        first = len(params) - sig.repeat
        i = first + (i - first) % sig.repeat
    return params[min(i, len(params) - 1)].type  # type: ignore[no-any-return]


_VALUE_KINDS = ("Number", "Text", "Boolean", "Date", "DateTime", "Duration")


def _typed_null(col: Column, arg: ir.IR, param: Type, result: Type) -> Column:
    """An argument that is always blank (``BLANK()``) or always an error (``NA()``) has no
    value type: polars gives its null literal the Null dtype, which most expressions refuse
    (``not``, ``abs``, a Boolean ``when``...) and abort the query. Its value is cast to the
    parameter's type (or, for a type variable, the call's result type) when that is concrete;
    its error column is unchanged. An empty list literal likewise takes the parameter's item
    type."""
    if isinstance(arg, ir.Lambda):
        return col
    if arg.type.kind == "List" and (arg.type.elem is None or arg.type.elem.kind == "Never") \
            and param.kind in ("Many", "List") and param.elem is not None \
            and param.elem.kind in _VALUE_KINDS:
        # an empty list literal (List[Never]): a list of the parameter's items
        return replace(col, value=col.value.cast(pl.List(dtype_of(param.elem))))
    if arg.type.kind not in ("Blank", "Never"):
        return col
    target = param.elem if param.kind == "Many" else param
    if target is None or target.kind not in _VALUE_KINDS:
        target = result if result.kind in _VALUE_KINDS else None
    if target is None:
        return col
    return replace(col, value=col.value.cast(dtype_of(target)))


def _call_kw(form: Any, node: ir.Call) -> dict[str, Any]:
    """``{"call": node}`` for a form that declares ``wants_call`` (see the module docs)."""
    return {"call": node} if getattr(form, "wants_call", False) else {}


def _concrete_mismatch(node: ir.Call) -> bool:
    """A custom-typed call whose arguments are not the declared concrete types."""
    for arg, prm in zip(node.args, node.sig.params):
        if prm.type.kind in ("Var", "Any", "Many", "Fn"):
            continue
        if arg.type.kind != prm.type.kind:
            return True
    return False
