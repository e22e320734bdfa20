"""The columnar backend: checked IR -> native polars expressions (no per-row Python).

Each sub-expression becomes a `Column`: a value expression and an error-code expression (Utf8,
null where the row is fine), or no error expression at all when the checker proved the node
cannot produce an error value. Errors combine left to right, as in the scalar engine; lazy forms
(IF, IFERROR, and, or...) select both value and error with the condition, so polars computing
both branches never leaks an error or a different answer. A function whose spec has no polars
form (or an explicit `Refuse`) makes `to_polars` raise `Unsupported` at compile time, with the
reason; nothing falls back to Python silently.

Form protocol (the ``polars=`` slot of a spec or signature):
- eager functions: ``form(*values: pl.Expr) -> pl.Expr | (pl.Expr, error_expr | None)``; the
  arguments' errors are combined for you, your error expression (if any) is added last;
- lazy functions (``lazy=True``): ``form(*columns: Column) -> Column``, full control;
- a form may read `numbers()` ("float" or "decimal") to pick the arithmetic.

Numeric policy: Number columns compute in their own dtype. Float64 (and integer) columns compute
in float64 with Excel's error rules (division by zero is #DIV/0!, a non-finite result #NUM!);
Decimal columns compute in polars' Decimal (sums and products exact; division carried to 18
decimal places). Literals take the mode of the program.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Mapping

import polars as pl

from ..errors import Unsupported
from ..functions.spec import Refuse
from ..interpreter import ir
from ..types import Type
from ..values import ErrorValue

_MODE: contextvars.ContextVar[str] = contextvars.ContextVar("formulane_polars_numbers",
                                                           default="float")
DECIMAL_DTYPE = pl.Decimal(38, 18)


def numbers() -> str:
    """The numeric mode of the program being translated: "float" or "decimal"."""
    return _MODE.get()


@dataclass(frozen=True)
class Column:
    value: pl.Expr
    error: pl.Expr | None = None

    def error_or_null(self) -> pl.Expr:
        return self.error if self.error is not None else pl.lit(None, dtype=pl.Utf8)


def first_error(*errors: pl.Expr | None) -> pl.Expr | None:
    """The first non-null error code, left to right (None when no part can error)."""
    present = [e for e in errors if e is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return pl.coalesce(present)


def error_when(condition: pl.Expr, code: str) -> pl.Expr:
    return pl.when(condition).then(pl.lit(code)).otherwise(pl.lit(None, dtype=pl.Utf8))


def own_errors(spec: Any) -> pl.Expr | None:
    """A form's errors: an error-code expression, or ``[(condition, code), ...]`` checked in
    order (the first true condition names the error)."""
    if spec is None or isinstance(spec, pl.Expr):
        return spec
    chain: Any = None
    for condition, code in spec:
        chain = (pl.when(condition) if chain is None else chain.when(condition)).then(pl.lit(code))
    return None if chain is None else chain.otherwise(pl.lit(None, dtype=pl.Utf8))


def literal(value: Any, t: Type) -> pl.Expr:
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        if numbers() == "decimal":
            return pl.lit(Decimal(value), dtype=DECIMAL_DTYPE)
        return pl.lit(float(value), dtype=pl.Float64)
    if value is None:
        return pl.lit(None, dtype=dtype_of(t))
    if isinstance(value, tuple):
        return pl.lit(pl.Series([list(value)], dtype=dtype_of(t)))
    return pl.lit(value)


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
    return pl.Null()


class PolarsCompiler:
    def __init__(self, columns: Mapping[str, str]) -> None:
        self.columns = columns  # variable name -> column name
        self.slots: dict[int, Column] = {}
        self.element_slot: int | None = None

    def compile(self, node: ir.IR) -> Column:
        kind = type(node)
        if kind is ir.Const:
            value = node.value  # type: ignore[union-attr]
            if type(value) is ErrorValue:
                return Column(pl.lit(None, dtype=dtype_of(node.type)), pl.lit(value.code))
            return Column(literal(value, node.type))
        if kind is ir.Var:
            slot = node.slot  # type: ignore[union-attr]
            if slot == self.element_slot:
                return Column(pl.element())
            if slot in self.slots:
                return self.slots[slot]
            return Column(pl.col(self.columns.get(node.name, node.name)))  # type: ignore[union-attr]
        if kind is ir.Let:
            for slot, value in zip(node.slots, node.values):  # type: ignore[union-attr]
                self.slots[slot] = self.compile(value)
            return self.compile(node.body)  # type: ignore[union-attr]
        if kind is ir.Call:
            return self.call(node)  # type: ignore[arg-type]
        if kind is ir.Coerce:
            return self.coerce(node)  # type: ignore[arg-type]
        if kind is ir.FieldOf:
            obj = self.compile(node.obj)  # type: ignore[union-attr]
            return Column(obj.value.struct.field(node.name), obj.error)  # type: ignore[union-attr]
        if kind is ir.IndexOf:
            obj = self.compile(node.obj)  # type: ignore[union-attr]
            index = self.compile(node.index)  # type: ignore[union-attr]
            position = index.value.cast(pl.Int64) - 1
            value = obj.value.list.get(position, null_on_oob=True)
            oob = (position < 0) | (position >= obj.value.list.len())
            return Column(value, first_error(obj.error, index.error, error_when(oob, "#REF!")))
        if kind is ir.ListOf:
            items = [self.compile(i) for i in node.items]  # type: ignore[union-attr]
            if not items:
                return Column(literal((), node.type))
            return Column(pl.concat_list([i.value for i in items]),
                          first_error(*[i.error for i in items]))
        raise self.refuse(node, getattr(node, "type", "?"), f"{kind.__name__} nodes")

    def refuse(self, node: ir.IR, name: Any, reason: str) -> Unsupported:
        return Unsupported(f"polars cannot evaluate {name}: {reason}", function=str(name),
                           backend="polars", reason=reason, span=node.span)

    def call(self, node: ir.Call) -> Column:
        spec = node.spec
        form = node.sig.polars or spec.polars
        if isinstance(form, Refuse):
            raise self.refuse(node, spec.name, form.reason)
        if not callable(form):
            raise self.refuse(node, spec.name, "no polars form is declared")
        if spec.check is not None and _concrete_mismatch(node):
            raise self.refuse(node, spec.name, "only the declared operand types vectorize "
                              f"({', '.join(str(p.type) for p in node.sig.params)})")
        if any(isinstance(a, ir.Lambda) for a in node.args):
            return self.higher_order(node, form)
        args = [self.compile(a) for a in node.args]
        if spec.lazy:
            out = form(*args)
            return out if isinstance(out, Column) else Column(out)
        out = form(*[a.value for a in args])
        own_error = None
        if isinstance(out, tuple):
            out, own_error = out[0], own_errors(out[1])
        return Column(out, first_error(*[a.error for a in args], own_error))

    def higher_order(self, node: ir.Call, form: Callable[..., Any]) -> Column:
        """MAP/FILTER-style calls: the lambda body runs inside ``list.eval`` on pl.element()."""
        args: list[Any] = []
        errors = []
        for a in node.args:
            if isinstance(a, ir.Lambda):
                if len(a.slots) != 1:
                    raise self.refuse(node, node.spec.name, "lambdas with several parameters")
                inner = PolarsCompiler(self.columns)
                inner.slots = dict(self.slots)
                inner.element_slot = a.slots[0]
                body = inner.compile(a.body)
                if _references_columns(a.body, a.slots[0]):
                    raise self.refuse(node, node.spec.name,
                                      "a lambda that reads other columns (list.eval sees only "
                                      "the element)")
                if body.error is not None:
                    raise self.refuse(node, node.spec.name, "a lambda whose body may error")
                args.append(body.value)
            else:
                col = self.compile(a)
                args.append(col.value)
                errors.append(col.error)
        out = form(*args)
        own_error = None
        if isinstance(out, tuple):
            out, own_error = out[0], own_errors(out[1])
        return Column(out, first_error(*errors, own_error))

    def coerce(self, node: ir.Coerce) -> Column:
        inner = self.compile(node.node)
        v = inner.value
        mode = node.mode
        if mode == "blank_to_number":
            return Column(v.fill_null(literal(0, node.type)), inner.error)
        if mode == "blank_to_text":
            return Column(v.fill_null(pl.lit("")), inner.error)
        if mode == "blank_to_boolean":
            return Column(v.fill_null(pl.lit(False)), inner.error)
        if mode == "boolean_to_number":
            return Column(v.cast(dtype_of(node.type)), inner.error)
        if mode == "number_to_boolean":
            return Column(v != 0, inner.error)
        if mode == "text_to_number":
            cleaned = v.str.strip_chars().str.replace_all(",", "")
            number = cleaned.cast(pl.Float64, strict=False)
            if numbers() == "decimal":
                number = cleaned.cast(DECIMAL_DTYPE, strict=False)
            return Column(number, first_error(inner.error, error_when(number.is_null(), "#VALUE!")))
        if mode == "text_to_boolean":
            upper = v.str.strip_chars().str.to_uppercase()
            value = pl.when(upper == "TRUE").then(True).when(upper == "FALSE").then(False)
            return Column(value, first_error(inner.error, error_when(value.is_null(), "#VALUE!")))
        raise self.refuse(node, mode, "this coercion has no polars form")


def _references_columns(body: ir.IR, element_slot: int) -> bool:
    stack = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Var) and n.slot != element_slot:
            return True
        stack.extend(ir.ir_children(n))
    return False


def to_polars(root: ir.IR, *, numbers_mode: str = "float",
              columns: Mapping[str, str] | None = None) -> tuple[pl.Expr, pl.Expr | None]:
    """(value expression, error-code expression or None) for a checked program."""
    if numbers_mode not in ("float", "decimal"):
        raise ValueError("numbers_mode must be 'float' or 'decimal'")
    token = _MODE.set(numbers_mode)
    try:
        col = PolarsCompiler(columns or {}).compile(root)
    finally:
        _MODE.reset(token)
    if col.error is None:
        return col.value, None
    # A row with an error has no value: never a half-computed number next to an error code.
    return pl.when(col.error.is_null()).then(col.value), col.error


def _concrete_mismatch(node: ir.Call) -> bool:
    """A custom-typed call (``&``) whose arguments are not the declared concrete types."""
    for arg, prm in zip(node.args, node.sig.params):
        if prm.type.kind in ("Var", "Any", "Many", "Fn"):
            continue
        if arg.type.kind != prm.type.kind:
            return True
    return False
