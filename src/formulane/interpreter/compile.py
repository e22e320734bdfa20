"""The scalar backend: checked IR -> nested Python closures over a frame.

No source text is ever compiled: each IR node becomes a small closure chosen for its shape
(arity, whether its arguments may be error values, whether it needs the context or metering),
so the common case pays for nothing it does not use. A frame is a list: slot 0 holds the
`EvalContext` (or None when no node needs it), then schema variables, then LET and lambda
slots. Constant sub-expressions are folded at compile time. Error values propagate left to
right; exceptions a function raises on purpose (`XLError`, decimal traps) become error values
at the call's span; `LimitExceeded` passes through untouched (no formula can catch it).
"""

from __future__ import annotations

import decimal
import operator
from typing import Any, Callable

from ..errors import FormulaError
from ..source import Span
from ..values import (
    CONTEXT, DIV0, NUM, REF, VALUE, ErrorValue, XLError, display_text, general_text,
)
from . import ir
from .overloads import per_char_cost
from ..functions._excel_arrays import ARRAY_COERCIONS
from ..functions._listnum import number_cells
from ..functions._serial import SERIAL_COERCIONS
from .ir import IR

Closure = Callable[[list[Any]], Any]
_CAUGHT = (XLError, ArithmeticError, ValueError, OverflowError)


def to_error(exc: BaseException, span: Span) -> ErrorValue:
    """The error value an implementation's exception stands for."""
    if isinstance(exc, XLError):
        return ErrorValue(exc.code, exc.message, span)
    if isinstance(exc, ZeroDivisionError):
        return ErrorValue(DIV0, "division by zero", span)
    if isinstance(exc, (ArithmeticError, OverflowError)):
        return ErrorValue(NUM, "number out of range or undefined", span)
    return ErrorValue(VALUE, str(exc) or "invalid value", span)


def item_at(xs: Any, i: Any, span: Span | None) -> Any:
    """``xs[i]`` of evaluated operands (1-based; #REF! outside the list; an operand's error
    first, left to right; a blank list is blank). The closures' and the generated code's one
    definition of indexing."""
    if type(xs) is ErrorValue:
        return xs
    if type(i) is ErrorValue:
        return i
    if xs is None:
        return None
    n = int(i)
    if 1 <= n <= len(xs):
        return xs[n - 1]
    return ErrorValue(REF, f"index {n} is outside 1..{len(xs)}", span)


class Compiler:
    """Builds closures. ``observe(node, closure) -> closure`` wraps every node's closure (the
    explainer records values this way); with it, nothing is constant-folded, so every node is
    seen evaluating exactly as it would run."""

    def __init__(self, metered: bool, limits: Any = None,
                 observe: Callable[[IR, Closure], Closure] | None = None) -> None:
        self.metered = metered
        self.uses_ctx = metered
        self.limits = limits
        self.observe = observe
        self.fold = observe is None

    # Each compile_* returns (closure, constant) where constant is _NOT_CONST unless the node
    # folded to a value.

    def compile(self, node: IR) -> Closure:
        closure, _ = self.build(node)
        return closure

    def build(self, node: IR) -> tuple[Closure, Any]:
        closure, const = self.build_node(node)
        if self.observe is not None:
            return self.observe(node, closure), _NOT_CONST
        return closure, const

    def build_node(self, node: IR) -> tuple[Closure, Any]:
        kind = type(node)
        if kind is ir.Const:
            value = node.value  # type: ignore[union-attr]
            return (lambda f: value), value
        if kind is ir.Var:
            return operator.itemgetter(node.slot), _NOT_CONST  # type: ignore[union-attr]
        if kind is ir.Call:
            return self.build_call(node)  # type: ignore[arg-type]
        if kind is ir.Let:
            return self.build_let(node), _NOT_CONST  # type: ignore[arg-type]
        if kind is ir.Lambda:
            return self.build_lambda(node), _NOT_CONST  # type: ignore[arg-type]
        if kind is ir.ListOf:
            return self.build_list(node)  # type: ignore[arg-type]
        if kind is ir.IndexOf:
            return self.build_index(node), _NOT_CONST  # type: ignore[arg-type]
        if kind is ir.FieldOf:
            return self.build_field(node), _NOT_CONST  # type: ignore[arg-type]
        if kind is ir.Coerce:
            return self.build_coerce(node)  # type: ignore[arg-type]
        raise TypeError(f"cannot compile {kind.__name__}")

    # --------------------------------------------------------------------------------- calls

    def build_call(self, node: ir.Call) -> tuple[Closure, Any]:
        spec = node.spec
        built = [self.build(a) for a in node.args]
        closures = [b[0] for b in built]
        span = node.span
        impl = node.sig.impl or spec.impl
        assert impl is not None
        if spec.needs_ctx:
            self.uses_ctx = True
        if spec.name in _FUSED and not any(a.may_error for a in node.args):
            # `and`/`or` over values that cannot be errors: Python's own short circuit.
            run = _FUSED[spec.name](*closures)
        elif spec.lazy:
            run = _lazy(impl, closures, span)
        else:
            scan = tuple(a.may_error and not spec.accepts_errors for a in node.args)
            lists = tuple(a.type.kind in ("List", "Many") for a in node.args)
            consts = tuple(c for _, c in built)
            run = _eager(impl, closures, span, scan, lists, spec.needs_ctx, consts)
        if self.metered:
            run = _metered(run, node, closures)
        foldable = (self.fold and not spec.volatile and not spec.needs_ctx
                    and all(c is not _NOT_CONST for _, c in built)
                    and not any(isinstance(a, ir.Lambda) for a in node.args))
        if foldable:
            try:
                with decimal.localcontext(CONTEXT):
                    value = run(self.folding_frame())
            except FormulaError:
                return run, _NOT_CONST
            return (lambda f: value), value
        return run, _NOT_CONST

    def folding_frame(self) -> list[Any]:
        """A frame for constant folding: an unmetered context (folded work is compile work,
        bounded by the static limits), never the clock."""
        from ..limits import DEFAULT_LIMITS
        from ..runtime import EvalContext
        import datetime as _dt

        epoch = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        return [EvalContext(self.limits or DEFAULT_LIMITS, epoch, metered=False)]

    def build_let(self, node: ir.Let) -> Closure:
        slots = node.slots
        values = [self.compile(v) for v in node.values]
        body = self.compile(node.body)
        pairs = tuple(zip(slots, values))

        def let(f: list[Any]) -> Any:
            for slot, value in pairs:
                f[slot] = value(f)
            return body(f)

        return let

    def build_lambda(self, node: ir.Lambda) -> Closure:
        body = self.compile(node.body)
        slots = node.slots
        if len(slots) == 1:
            (s0,) = slots

            def make1(f: list[Any]) -> Callable[..., Any]:
                def call(x: Any) -> Any:
                    f[s0] = x
                    return body(f)

                return call

            return make1
        if len(slots) == 2:
            s0, s1 = slots

            def make2(f: list[Any]) -> Callable[..., Any]:
                def call(x: Any, y: Any) -> Any:
                    f[s0] = x
                    f[s1] = y
                    return body(f)

                return call

            return make2

        def make(f: list[Any]) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                for slot, value in zip(slots, args):
                    f[slot] = value
                return body(f)

            return call

        return make

    def build_list(self, node: ir.ListOf) -> tuple[Closure, Any]:
        built = [self.build(i) for i in node.items]
        if self.fold and all(c is not _NOT_CONST for _, c in built):
            value = tuple(c for _, c in built)
            return (lambda f: value), value
        items = tuple(b[0] for b in built)
        return (lambda f: tuple([item(f) for item in items])), _NOT_CONST

    def build_index(self, node: ir.IndexOf) -> Closure:
        obj = self.compile(node.obj)
        index = self.compile(node.index)
        span = node.span

        def index_of(f: list[Any]) -> Any:
            return item_at(obj(f), index(f), span)

        return index_of

    def build_field(self, node: ir.FieldOf) -> Closure:
        obj = self.compile(node.obj)
        name = node.name

        def field_of(f: list[Any]) -> Any:
            record = obj(f)
            if record is None or type(record) is ErrorValue:
                return record
            try:
                return record[name]
            except (KeyError, TypeError):
                return None  # untyped (Any) records may lack the field: blank

        return field_of

    def build_coerce(self, node: ir.Coerce) -> tuple[Closure, Any]:
        inner, const = self.build(node.node)
        convert = _COERCIONS[node.mode]
        span = node.span

        def coerce(f: list[Any]) -> Any:
            v = inner(f)
            if type(v) is ErrorValue:
                return v
            try:
                return convert(v)
            except _CAUGHT as exc:
                return to_error(exc, span)

        if self.fold and const is not _NOT_CONST:
            value = coerce(self.folding_frame())
            return (lambda f: value), value
        return coerce, _NOT_CONST


_NOT_CONST: Any = object()


# ------------------------------------------------------------------------------ call shapes


def _lazy(impl: Callable[..., Any], closures: list[Closure], span: Span) -> Closure:
    args = tuple(closures)

    def lazy(f: list[Any]) -> Any:
        try:
            return impl(f, *args)
        except _CAUGHT as exc:
            return to_error(exc, span)

    return lazy


def _first_error(values: tuple[Any, ...] | list[Any], scan: tuple[bool, ...],
                 lists: tuple[bool, ...]) -> ErrorValue | None:
    for v, check, is_list in zip(values, scan, lists):
        if not check:
            continue
        if type(v) is ErrorValue:
            return v
        if is_list and type(v) is tuple:
            for item in v:
                if type(item) is ErrorValue:
                    return item
    return None


def _fused_and(a: Closure, b: Closure) -> Closure:
    return lambda f: a(f) and b(f)


def _fused_or(a: Closure, b: Closure) -> Closure:
    return lambda f: a(f) or b(f)


_FUSED = {"OP_AND": _fused_and, "OP_OR": _fused_or}


def _eager(impl: Callable[..., Any], closures: list[Closure], span: Span,
           scan: tuple[bool, ...], lists: tuple[bool, ...], needs_ctx: bool,
           consts: tuple[Any, ...]) -> Closure:
    n = len(closures)
    if n == 2 and not any(scan) and not needs_ctx and (consts[1] is not _NOT_CONST) \
            and consts[0] is _NOT_CONST:
        # `x > 10`, `a * 2`: the constant is captured, not called.
        a = closures[0]
        k = consts[1]

        def call2k(f: list[Any]) -> Any:
            try:
                return impl(a(f), k)
            except _CAUGHT as exc:
                return to_error(exc, span)
        return call2k
    if not any(scan) and not needs_ctx:
        # Fast paths: no argument can be an error value.
        if n == 0:
            def call0(f: list[Any]) -> Any:
                try:
                    return impl()
                except _CAUGHT as exc:
                    return to_error(exc, span)
            return call0
        if n == 1:
            (a,) = closures

            def call1(f: list[Any]) -> Any:
                try:
                    return impl(a(f))
                except _CAUGHT as exc:
                    return to_error(exc, span)
            return call1
        if n == 2:
            a, b = closures

            def call2(f: list[Any]) -> Any:
                try:
                    return impl(a(f), b(f))
                except _CAUGHT as exc:
                    return to_error(exc, span)
            return call2
    if n == 2 and not needs_ctx and not any(lists):
        a, b = closures
        scan_a, scan_b = scan

        def call2e(f: list[Any]) -> Any:
            x = a(f)
            if scan_a and type(x) is ErrorValue:
                return x
            y = b(f)
            if scan_b and type(y) is ErrorValue:
                return y
            try:
                return impl(x, y)
            except _CAUGHT as exc:
                return to_error(exc, span)
        return call2e
    if n == 1 and not needs_ctx and not lists[0]:
        (a,) = closures

        def call1e(f: list[Any]) -> Any:
            x = a(f)
            if type(x) is ErrorValue:
                return x
            try:
                return impl(x)
            except _CAUGHT as exc:
                return to_error(exc, span)
        return call1e
    args = tuple(closures)
    check = any(scan)

    def call(f: list[Any]) -> Any:
        values = [c(f) for c in args]
        if check:
            err = _first_error(values, scan, lists)
            if err is not None:
                return err
        try:
            if needs_ctx:
                return impl(f[0], *values)
            return impl(*values)
        except _CAUGHT as exc:
            return to_error(exc, span)

    return call


def _metered(run: Closure, node: ir.Call, closures: list[Closure]) -> Closure:
    """Charge the call's cost before running it (only when the static bound is over budget)."""
    spec = node.spec
    base = 1 + spec.cost.base
    per_item = spec.cost.per_item
    per_call = spec.cost.per_call
    list_args = [i for i, a in enumerate(node.args) if a.type.kind in ("List", "Many")]
    per_char = per_char_cost(spec)
    text_args = [i for i, a in enumerate(node.args) if a.type.kind == "Text"] if per_char else []
    list_chars = bool(per_char and spec.cost.list_chars and list_args)
    if spec.lazy or ((not list_args or (not per_item and not per_call and not list_chars)) and not text_args):
        def charged(f: list[Any]) -> Any:
            f[0].charge(base)
            return run(f)
        return charged
    # Sizes are known only once the arguments are evaluated, so this shape evaluates them
    # itself, charges, then calls the implementation with the values.
    impl = node.sig.impl or spec.impl
    assert impl is not None
    span = node.span
    scan = tuple(a.may_error and not spec.accepts_errors for a in node.args)
    lists = tuple(a.type.kind in ("List", "Many") for a in node.args)
    args = tuple(closures)
    needs_ctx = spec.needs_ctx

    def charged_sized(f: list[Any]) -> Any:
        values = [c(f) for c in args]
        err = _first_error(values, scan, lists)
        if err is not None:
            return err
        items = sum(len(values[i]) for i in list_args if type(values[i]) is tuple)
        chars = sum(len(values[i]) for i in text_args if type(values[i]) is str)
        listed = 0
        if list_chars:
            for i in list_args:
                if type(values[i]) is tuple:
                    listed += sum(len(x) for x in values[i] if type(x) is str)
        # Each call inside a lambda body charges itself when it runs (the whole program is
        # metered), so a lambda invocation costs one unit here, not its static bound.
        f[0].charge(base + per_item * items + (items if per_call else 0)
                    + int(per_char * (chars + listed)))
        try:
            if needs_ctx:
                return impl(f[0], *values)
            return impl(*values)
        except _CAUGHT as exc:
            return to_error(exc, span)

    return charged_sized


# ------------------------------------------------------------------------------- coercions


def _text_to_boolean(text: str | None) -> bool | None:
    if text is None:  # a blank passes on (the checker follows with blank_to_boolean)
        return None
    upper = text.strip().upper()
    if upper == "TRUE":
        return True
    if upper == "FALSE":
        return False
    raise XLError(VALUE, f"cannot read {text!r} as TRUE or FALSE")


def _each_to_text(items: Any) -> tuple[Any, ...]:
    """A list of scalars as texts, item by item (Excel's CONCAT/TEXTJOIN over numbers): blanks
    stay blank (TEXTJOIN may skip them) and error values stay (the function reports them)."""
    return tuple(x if x is None or type(x) is ErrorValue else display_text(x) for x in items)


_COERCIONS: dict[str, Callable[[Any], Any]] = {
    "blank_to_number": lambda v: 0 if v is None else v,
    "blank_to_text": lambda v: "" if v is None else v,
    "blank_to_boolean": lambda v: False if v is None else v,
    "boolean_to_number": lambda v: 1 if v else 0,
    "number_to_boolean": lambda v: v != 0,
    "text_to_boolean": _text_to_boolean,
    "to_text": display_text,
    "each_to_text": _each_to_text,
}
_COERCIONS.update(SERIAL_COERCIONS)  # excel profile: serial numbers, texts read as numbers
_COERCIONS.update(ARRAY_COERCIONS)  # excel profile: Excel's skip rules inside arrays

_COERCIONS["array_number_cells"] = number_cells  # excel profile: an array as a number range

__all__ = ["Compiler", "to_error", "general_text"]
