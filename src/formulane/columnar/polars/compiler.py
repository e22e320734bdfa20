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
- a table entry gets its `FormCall` (argument types, constant arguments, the arguments'
  columns) bound by the walk (`columnar.walk.Walker.with_call`), then is called as above.

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

The walk itself (folding, slots, LET, calls, error plumbing left to right) is shared with the
SQL backend (`columnar.walk`); `PolarsCompiler` holds the polars hooks, `kit` the expression
builders the forms use too.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any, Callable, Mapping, Sequence

import polars as pl

from ...errors import Unsupported
from ...limits import Limits
from ...interpreter import ir
from ...types import Type
from ...values import ErrorValue
from ..walk import Walker, magnitude_bound
from .zones import refuse_mixed_zones
from .kit import (_BINDER, _ELEMENT, _MODE, _TEXT_FORMS, DECIMAL_DTYPE, DECIMAL_LIMIT,
                  FLOAT_LIMIT, MAX_SCALE, Column, _fits_decimal, _plain, column, concat_any,
                  dtype_of, error_when, first_error, let, literal, not_finite, number_dtype_cast, numbers,
                  own_errors, special_name, to_text)

#: The arithmetic computed natively in decimal mode, with scales and bounds (`decimal_op`).
_DECIMAL_OPS = frozenset({"+", "-", "*", "/"})


def _decimal_fit(scale: int) -> float:
    """Decimal(38, scale) holds |x| < 10^(38 - scale); estimates are tested with a margin."""
    return 10.0 ** (38 - scale) * (1 - 1e-12)


def _literal_scale(value: Any) -> int:
    exponent = Decimal(value).normalize().as_tuple().exponent
    return min(max(0, -int(exponent)), MAX_SCALE)


def _decimal_column(expr: pl.Expr, dtype: Any) -> Column:
    """A Number column read in decimal mode: a Decimal keeps its scale (widened to precision
    38), an integer becomes Decimal(38, 0), a float the Decimal(38, 18) of its shortest decimal
    text, anything else Decimal(38, 18)."""
    bound = None
    if dtype is not None and dtype.is_float():
        # A float read as the number its text shows (2.3, as the scalar engine reads it): a
        # direct cast expands the binary value (2.29999999999999982) and truncates it, which
        # made ROUNDDOWN(2.3, 2) 2.29 and INT(-2.2 * 10) -23. A value Decimal(38, 18) cannot
        # hold (|x| >= 1e20, inf, NaN) is that row's #NUM! (docs/columnar.md), where the
        # strict cast failed the whole query.
        value = expr.cast(pl.String).cast(DECIMAL_DTYPE, strict=False)
        return Column(value, error_when(expr.is_not_null() & value.is_null(), "#NUM!"),
                      estimate=_estimate(value, MAX_SCALE), scale=MAX_SCALE)
    if isinstance(dtype, pl.Decimal) and dtype.scale is not None and dtype.scale <= MAX_SCALE:
        scale = dtype.scale
        value = expr.cast(pl.Decimal(38, scale)) if dtype.precision != 38 else expr
        if dtype.precision is not None:
            bound = 10.0 ** (dtype.precision - scale)
    elif dtype is not None and dtype.is_integer():
        scale, value = 0, expr.cast(pl.Decimal(38, 0), strict=False)
        bound = 2.0 ** (8 * _INT_BYTES.get(str(dtype), 16))
    else:
        scale, value = MAX_SCALE, expr.cast(DECIMAL_DTYPE)
    if dtype is not None and (bound is None or bound > DECIMAL_LIMIT):
        # A column that may hold 1e20 or more (Decimal(38, 10), Decimal(38, 0), Int128):
        # such a value is that row's #NUM! here, at the read, as Decimal(38, 18) cannot hold
        # it (the documented decimal range); left in, the first cast to scale 18 (a branch
        # join, a sum) failed the whole query ("conversion from decimal[38,10] to
        # decimal[38,18] failed"). The test is on the exact integer behind the decimal. (A
        # frame not known when compiling, `to_polars`, is read as Decimal(38, 18).)
        limit = pl.lit(10 ** (20 + scale), dtype=pl.Int128)
        fits = value.to_physical().cast(pl.Int128).is_between(-limit, limit, closed="none")
        value = pl.when(fits).then(value)
        return Column(value, error_when(expr.is_not_null() & ~fits.fill_null(False), "#NUM!"),
                      estimate=_estimate(value, scale), scale=scale, bound=DECIMAL_LIMIT)
    return Column(value, estimate=_estimate(value, scale), scale=scale, bound=bound)


def _decimal_float_list(expr: pl.Expr) -> Column:
    """A list of floats read in decimal mode: each item the Decimal(38, 18) of its shortest
    decimal text, as `_decimal_column` reads a float column (a direct cast summed
    [-855.127, -210.3] to -1065.426999999999901696, so ROUNDDOWN(SUM(xs), 1) was -1065.5 for
    -1065.4); a list holding an item Decimal(38, 18) cannot hold (|x| >= 1e20, inf, NaN) is
    that row's #NUM!, never a silently dropped item."""
    items = expr.list.eval(pl.element().cast(pl.String).cast(DECIMAL_DTYPE, strict=False))
    lost = items.list.eval(pl.element().is_null()).list.sum() \
        > expr.list.eval(pl.element().is_null()).list.sum()
    return Column(pl.when(~lost).then(items), error_when(lost, "#NUM!"))


_INT_BYTES = {"Int8": 1, "Int16": 2, "Int32": 4, "Int64": 8, "UInt8": 1, "UInt16": 2,
              "UInt32": 4, "UInt64": 8}
#: Integer dtypes whose every value is an int64 (UInt64's are not).
_INT64_VALUES = frozenset(_INT_BYTES) - {"UInt64"}


def _estimate(value: pl.Expr, scale: int) -> pl.Expr:
    # the raw integer of a Decimal(38, s) to float, scaled: a cast of the decimal itself to
    # Float64 is an order of magnitude slower in polars
    return value.to_physical().cast(pl.Float64) * (10.0 ** -scale)


def _as_scale18(col: Column, node: ir.IR) -> Column:
    if col.scale is None or col.scale == MAX_SCALE:
        return col
    if type(node) is ir.Const and isinstance(node.value, (Decimal, int)) \
            and not isinstance(node.value, bool):
        # a literal stays a literal (forms specialise on constants: a weekend code...)
        return replace(col, value=pl.lit(Decimal(node.value), dtype=DECIMAL_DTYPE),
                       scale=MAX_SCALE)
    return replace(col, value=col.value.cast(DECIMAL_DTYPE), scale=MAX_SCALE)


def _as_decimal(col: Column) -> Column:
    """A decimal Column with its scale and estimate known (a form's result is re-read)."""
    if col.scale is not None and col.estimate is not None:
        return col
    value = col.value.cast(DECIMAL_DTYPE)
    return Column(value, col.error, col.unchecked, col.type, _estimate(value, MAX_SCALE),
                  MAX_SCALE)


class PolarsCompiler(Walker[Column]):
    """The polars hooks of the shared walk (`columnar.walk`): decimal scales, estimates and
    bounds, float bounds, ``list.eval`` lambdas."""

    backend = "polars"
    label = "polars"

    def __init__(self, columns: Mapping[str, str],
                 dtypes: Mapping[str, pl.DataType] | None = None,
                 limits: Limits | None = None) -> None:
        super().__init__(limits)
        self.columns = columns  # variable name -> column name
        self.dtypes = dtypes or {}  # column name -> dtype, when the frame is known
        self.element_slot: int | None = None
        #: the columns whose read is an error on some row (`reads_erring_column`)
        self.erring_reads: set[str] = set()

    # ------------------------------------------------------------------ column plumbing

    def error_of(self, col: Column) -> pl.Expr | None:
        return col.error

    def without_error(self, col: Column) -> Column:
        return replace(col, error=None, unchecked=False)

    def reads_erring_column(self, node: ir.IR) -> bool:
        return bool(self.erring_reads) and any(
            type(n) is ir.Var and n.name in self.erring_reads for n in ir.ir_walk(node))

    def typed(self, col: Column, t: Type) -> Column:
        return replace(col, type=t)

    def unchecked(self, col: Column) -> bool:
        return col.unchecked

    def checked(self, col: Column) -> Column:
        """The column with its pending non-finite test applied (#NUM!, after its own errors)."""
        if not col.unchecked:
            return col
        return Column(col.value, first_error(col.error, not_finite(col.value)), False, col.type)

    def first_error(self, errors: list[Any]) -> pl.Expr | None:
        return first_error(*errors)

    def refuse(self, node: ir.IR, name: Any, reason: str) -> Unsupported:
        return Unsupported(f"polars cannot evaluate {name}: {reason}", function=str(name),
                           backend="polars", reason=reason, span=node.span)

    def bound(self, col: Column) -> Column:
        if _BINDER.get() is None or _ELEMENT.get():
            return col
        return replace(col, value=let(col.value),
                       error=None if col.error is None else let(col.error),
                       estimate=None if col.estimate is None else let(col.estimate))

    # ------------------------------------------------------------------------- leaves

    def const(self, node: ir.Const) -> Column:
        value = node.value
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
                          estimate=pl.lit(float(value)), scale=scale, bound=abs(float(value)))
        return Column(literal(value, node.type))

    def var(self, node: ir.Var) -> Column:
        if node.slot == self.element_slot:
            return Column(pl.element())
        name = self.columns.get(node.name, node.name)
        dtype = self.dtypes.get(name)
        _refuse_special_fields(self, node, node.type)
        if numbers() == "decimal" and node.type.kind == "Number":
            col = _decimal_column(column(name), dtype)
            if col.error is not None:
                self.erring_reads.add(node.name)
            return col
        if numbers() == "decimal" and isinstance(dtype, pl.List) and dtype.inner.is_float() \
                and node.type.elem is not None and node.type.elem.kind == "Number":
            self.erring_reads.add(node.name)
            return _decimal_float_list(column(name))
        bound = None
        if node.type.kind == "Number":
            # the lane's numbers are below 1e308 in magnitude (the scalar engine refuses
            # others); an integer column's dtype bounds it further
            bound = 2.0 ** (8 * _INT_BYTES[str(dtype)]) if str(dtype) in _INT_BYTES \
                else FLOAT_LIMIT
        # (decimal mode returned above) a column of integers that are all int64 values:
        # comparisons with a constant may compare the integers (`kit.threshold_compare`)
        integers = column(name) if node.type.kind == "Number" and not _ELEMENT.get() \
            and str(dtype) in _INT64_VALUES else None
        return Column(number_dtype_cast(column(name), node.type), bound=bound,
                      integers=integers)

    def field(self, node: ir.FieldOf) -> Column:
        obj = self.compile(node.obj)
        _refuse_special_fields(self, node, node.obj.type)
        return Column(obj.value.struct.field(node.name), obj.error)

    def index(self, node: ir.IndexOf) -> Column:
        if type(node.obj) is ir.ListOf and node.obj.items:
            return self.index_literal(node)
        obj = self.compile(node.obj)
        index = self.checked(self.compile(node.index))
        position = index.value.cast(pl.Int64, strict=False) - 1
        value = obj.value.list.get(position, null_on_oob=True)
        oob = (position < 0) | (position >= obj.value.list.len())
        return Column(value, first_error(obj.error, index.error, error_when(oob, "#REF!")))

    def list_of(self, node: ir.ListOf) -> Column:
        items = [self.checked(self.compile(i)) for i in node.items]
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

    def unknown(self, node: ir.IR) -> Unsupported:
        return self.refuse(node, getattr(node, "type", "?"), f"{type(node).__name__} nodes")

    # -------------------------------------------------------------------------- calls

    def join_form(self, form: Any) -> Any:
        return concat_any

    def always_error(self, node: ir.Call, before: list[Column]) -> Column:
        return Column(pl.lit(None, dtype=dtype_of(node.type)),
                      first_error(*[c.error for c in before]))

    def call_args(self, node: ir.Call) -> list[Column]:
        # an argument that is itself a nested call is bound once (`let`): the forms read their
        # arguments several times, and each level would multiply the plan
        args = [self.bound(c) if _nested_call(a) else c
                for a, c in zip(node.args, [self.compile(a) for a in node.args])]
        return [_typed_null(c, a, _param_type(node.sig, i), node.type)
                for i, (a, c) in enumerate(zip(node.args, args))]

    def arithmetic(self, node: ir.Call, args: list[Column], nodes: Sequence[ir.IR]
                   ) -> Column | None:
        if numbers() == "decimal" and node.spec.arithmetic in _DECIMAL_OPS \
                and node.type.kind == "Number" \
                and all(a.type is not None and a.type.kind == "Number" for a in args):
            return self.decimal_op(node.spec.arithmetic, args[0], args[1])
        return None

    def prepare(self, node: ir.Call, args: list[Column], nodes: Sequence[ir.IR]
                ) -> list[Column]:
        if numbers() == "decimal" and not node.spec.any_decimal_scale:
            # forms compute on Decimal(38, 18) (their contract); only the selecting forms and
            # comparisons take any scale as it is
            return [_as_scale18(a, n) for a, n in zip(args, nodes)]
        return args

    def lazy(self, node: ir.Call, form: Any, args: list[Column]) -> Column:
        out: Any = form(*[self.checked(a) for a in args])
        return out if isinstance(out, Column) else Column(out)

    def eager(self, node: ir.Call, form: Any, args: list[Column]
              ) -> tuple[Any, Any, bool, Any]:
        if node.spec.joins_text:
            values = [to_text(self.checked(a).value, n.type) for a, n in zip(args, node.args)]
        else:
            values = [a.value for a in args]
        out = form(*values)
        own = None
        if isinstance(out, tuple):
            out, own = out[0], own_errors(out[1])
        return out, own, numbers() == "float" and node.type.kind == "Number", None

    def finish(self, node: ir.Call, args: list[Column], value: Any, error: Any, own: Any,
               floats: bool, carried: bool, state: Any) -> Column:
        # A float result may be non-finite (overflow, or a function's NaN) unless the checker
        # proved the call error-free, or the operands' bounds prove it finite (x * 0.9 when
        # |x| < 1e308); + - * defer the test to the consumer.
        bound = magnitude_bound(node.spec.arithmetic, [a.bound for a in args]) \
            if floats and node.spec.carries_nonfinite else None
        unchecked = floats and (node.may_error or carried) and not (
            bound is not None and not carried and bound * (1 + 1e-12) < FLOAT_LIMIT)
        return Column(value, error, unchecked, bound=bound)

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
            # the decimal divisor decides, not its float estimate: 0.1 + 0.2 - 0.3 is 0 (its
            # estimate 5.6e-17), and a value below 5e-19 is 0 at 18 places (docs/columnar.md);
            # masked, since polars aborts the whole query on a decimal division by zero (a
            # zero divisor with a nonzero estimate did: "division by zero Decimal")
            zero = right == 0
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
                inner.constants = dict(self.constants)
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
        out = form(*args)
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


def _references_columns(body: ir.IR, element_slot: int) -> bool:
    stack = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Var) and n.slot != element_slot:
            return True
        stack.extend(ir.ir_children(n))
    return False


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
            if not node.spec.total_on_floats:  # type: ignore[union-attr]
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
              dtypes: Mapping[str, pl.DataType] | None = None,
              limits: Limits | None = None) -> tuple[pl.Expr, pl.Expr | None]:
    """(value expression, error-code expression or None) for a checked program. The value is
    as computed, also on rows that err: the caller nulls it there (`frame.to_polars_form`).
    ``limits``: the program's, that its constants fold under (None: the defaults)."""
    if numbers_mode not in ("float", "decimal"):
        raise ValueError("numbers_mode must be 'float' or 'decimal'")
    refuse_mixed_zones(root, columns or {}, dtypes or {})
    token = _MODE.set(numbers_mode)
    compiler = PolarsCompiler(columns or {}, dtypes, limits)
    try:
        col = compiler.run(root)
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
