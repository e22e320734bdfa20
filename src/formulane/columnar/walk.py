"""The IR walk both columnar backends share: checked (and folded) IR -> backend columns.

A backend compiler subclasses `Walker` with its own column type (a value expression, an
optional error-code expression and what the backend tracks beside them) and implements the
hooks for what really differs: literals and column reads (polars decimal scales and bounds,
SQL DOUBLE/DECIMAL typing), coercions, lists, records, lambdas, the decimal arithmetic, how a
form is applied and what its result's flags are (polars bounds, SQL strict/double tracking).
The walk itself is here, once:

- constant folding first (`interpreter.fold`), keeping the calls the backend refuses so that
  the refusal is reported with its reason;
- slots: a LET value is compiled once, bound (`bound`: computed once by the backend's `let`)
  and read by its name; a LET name bound to a constant stays known as that constant;
- calls, in order: the form (or the refusal, raised at compile time), an argument that is
  always an error (the first error left to right is the result), lambdas, the arguments,
  the backend's native decimal arithmetic, lazy forms (full control), eager forms (errors
  combined left to right, a non-finite float carried by + - * to its consumer);
- error plumbing dropped where the checker proved a call error-free (``may_error``);
- a form that takes the call (``wants_call``) receives a `FormCall` carrying the numeric mode
  (`numbers_mode`) and its arguments' compiled columns (`with_call`), so it reads their
  exactness, errors and dtypes from the walk, never back out of the built values.

Function-specific behaviour comes from the declaration's flags (`FunctionSpec.arithmetic`,
``carries_nonfinite``...), never from a function's name.
"""

from __future__ import annotations

from typing import Any, Generic, Mapping, Sequence, TypeVar

from ..errors import Unsupported
from ..functions.spec import Refuse
from ..interpreter import ir
from ..interpreter.fold import FoldMemo, fold
from ..limits import Limits
from .names import numbered
from ..types import Type
from ..values import ErrorValue
from .forms import form_for

C = TypeVar("C")


class Walker(Generic[C]):
    """The shared walk over one program (see the module docs); ``C`` is the column type."""

    backend = ""

    def __init__(self, limits: Limits | None = None) -> None:
        #: the program's limits: constants fold under them (`interpreter.fold`), in the walk
        #: and in its forms' `FormCall.const` (None: the defaults)
        self.limits = limits
        self.slots: dict[int, C] = {}
        #: LET names bound to a constant: the constant (forms specialise on constants)
        self.constants: dict[int, ir.IR] = {}
        #: what constant folding learnt of this program's subtrees, for this walk only (the
        #: operands' constants are read call by call: `interpreter.fold.FoldMemo`)
        self.memo = FoldMemo()

    # ---------------------------------------------------------------- hooks (per backend)

    def numbers_mode(self) -> str | None:
        """The program's numeric mode ("float" or "decimal") as the forms' `FormCall` reports
        it; None: the backend's own (polars reads its kit's)."""
        return None

    def refuse(self, node: ir.IR, name: Any, reason: str) -> Unsupported:
        raise NotImplementedError

    #: How refusals name the backend ("no polars form is declared").
    label = ""
    #: Whether an argument that is a constant error value (a folded ``1/0``) short-cuts its
    #: eager call like an argument typed Never; else only Never does, and the form is applied
    #: to the error's NULL as to any value (SQL: its NULL needs no typed cast then).
    constant_errors_shortcut = True

    def form_of(self, node: ir.Call) -> Any:
        """The call's form (`columnar.forms.form_for`), or the `Unsupported` saying why the
        backend has none."""
        spec = node.spec
        form = form_for(node, self.backend)  # type: ignore[arg-type]
        if spec.joins_text:
            return self.join_form(form)
        if isinstance(form, Refuse):
            return self.refuse(node, spec.name, form.reason)
        if not callable(form):
            return self.refuse(node, spec.name, f"no {self.label} form is declared")
        if spec.check is not None and not spec.lazy and concrete_mismatch(node):
            return self.refuse(node, spec.name, "only the declared operand types vectorize "
                               f"({', '.join(str(p.type) for p in node.sig.params)})")
        return form

    def join_form(self, form: Any) -> Any:
        """The form of a call flagged ``joins_text`` (operands shown as text first)."""
        return form

    def error_of(self, col: C) -> Any:
        raise NotImplementedError

    def reads_erring_column(self, node: ir.IR) -> bool:
        """Whether ``node`` reads a column whose read is an error on some row (polars decimal
        mode: a value Decimal(38, 18) cannot hold): the checker proves calls error-free
        assuming a column read never is one."""
        return False

    def without_error(self, col: C) -> C:
        """``col`` with no error plumbing (the checker proved the node error-free)."""
        raise NotImplementedError

    def typed(self, col: C, t: Type) -> C:
        raise NotImplementedError

    def checked(self, col: C) -> C:
        """``col`` with its pending non-finite test applied (#NUM!, after its own errors)."""
        raise NotImplementedError

    def unchecked(self, col: C) -> bool:
        raise NotImplementedError

    def bound(self, col: C) -> C:
        """``col`` computed once (the backend's `let`), when a binder is active."""
        raise NotImplementedError

    def const(self, node: ir.Const) -> C:
        raise NotImplementedError

    def var(self, node: ir.Var) -> C:
        """A schema variable or lambda parameter (LET names are the walk's own slots)."""
        raise NotImplementedError

    def coerce(self, node: ir.Coerce) -> C:
        raise NotImplementedError

    def field(self, node: ir.FieldOf) -> C:
        raise NotImplementedError

    def list_of(self, node: ir.ListOf) -> C:
        raise NotImplementedError

    def index(self, node: ir.IndexOf) -> C:
        raise NotImplementedError

    def concat(self, node: ir.Call) -> C | None:
        """A call flagged ``joins_text`` compiled by the backend's text rules, or None to
        apply its form as an eager call."""
        return None

    def always_error(self, node: ir.Call, before: list[C]) -> C:
        """The call's result when argument ``len(before) - 1`` is always an error: no value,
        the first error of ``before`` (checked) left to right."""
        raise NotImplementedError

    def higher_order(self, node: ir.Call, form: Any) -> C:
        raise NotImplementedError

    def call_args(self, node: ir.Call) -> list[C]:
        """The compiled arguments of an eager or lazy call (bound where worth it)."""
        raise NotImplementedError

    def arithmetic(self, node: ir.Call, args: list[C], nodes: Sequence[ir.IR]) -> C | None:
        """The backend's native arithmetic for a call flagged ``arithmetic``, else None."""
        return None

    def prepare(self, node: ir.Call, args: list[C], nodes: Sequence[ir.IR]) -> list[C]:
        """The arguments as the forms take them (polars: decimal scale 18)."""
        return args

    def lazy(self, node: ir.Call, form: Any, args: list[C]) -> C:
        raise NotImplementedError

    def eager(self, node: ir.Call, form: Any, args: list[C]) -> tuple[Any, Any, bool, Any]:
        """Apply an eager form: (value, own error or None, whether the result is a float
        that may be non-finite, backend state passed on to `finish`)."""
        raise NotImplementedError

    def first_error(self, errors: list[Any]) -> Any:
        raise NotImplementedError

    def finish(self, node: ir.Call, args: list[C], value: Any, error: Any, own: Any,
               floats: bool, carried: bool, state: Any) -> C:
        """An eager call's column from its value and its errors combined left to right;
        ``floats``: the value is a float that may be non-finite; ``carried``: an operand's
        non-finite test was left pending for the consumer."""
        raise NotImplementedError

    # ------------------------------------------------------------------------- the walk

    def with_call(self, form: Any, node: ir.Call, columns: Sequence[C] | None) -> Any:
        """``form`` called with its `FormCall` (mode and ``columns``, the compiled arguments)
        when it declares ``wants_call``; any other form as it is."""
        if not getattr(form, "wants_call", False):
            return form
        from .call import FormCall

        return WithCall(form, FormCall(node, self.backend, self.numbers_mode(), columns,
                                       self.limits, self.memo))

    def run(self, root: ir.IR) -> C:
        """The program's column, its pending tests applied (folding first)."""
        self.memo = FoldMemo()  # one walk, one memo
        with numbered():
            return self.checked(self.compile(fold(root, self.refuses, self.limits)))

    def refuses(self, node: ir.Call) -> bool:
        """Whether folding must keep this call, so that its refusal is reported."""
        return isinstance(self.form_of(node), Unsupported)

    def resolved(self, node: ir.IR) -> ir.IR:
        """A LET name bound to a constant as that constant; any other node as it is."""
        if type(node) is ir.Var:
            return self.constants.get(node.slot, node)
        return node

    def compile(self, node: ir.IR) -> C:
        col = self._compile(node)
        if self.error_of(col) is not None and not node.may_error and type(node) is ir.Call \
                and not ir.reads_locals(node) and not self.reads_erring_column(node):
            # The checker proved this node error-free: no error plumbing above it. (Its proof
            # does not see through LET names and lambda parameters, so those keep theirs;
            # nor does it know a backend whose column read can be an error.)
            col = self.without_error(col)
        if not isinstance(node, ir.Lambda):
            col = self.typed(col, node.type)
        return col

    def _compile(self, node: ir.IR) -> C:
        kind = type(node)
        if kind is ir.Const:
            return self.const(node)  # type: ignore[arg-type]
        if kind is ir.Var:
            slot = node.slot  # type: ignore[union-attr]
            if slot in self.slots:
                return self.slots[slot]
            return self.var(node)  # type: ignore[arg-type]
        if kind is ir.Let:
            for slot, value in zip(node.slots, node.values):  # type: ignore[union-attr]
                self.slots[slot] = self.bound(self.checked(self.compile(value)))
                if type(value) is ir.Const:
                    self.constants[slot] = value
            return self.compile(node.body)  # type: ignore[union-attr]
        if kind is ir.Call:
            return self.call(node)  # type: ignore[arg-type]
        if kind is ir.Coerce:
            return self.coerce(node)  # type: ignore[arg-type]
        if kind is ir.FieldOf:
            return self.field(node)  # type: ignore[arg-type]
        if kind is ir.ListOf:
            return self.list_of(node)  # type: ignore[arg-type]
        if kind is ir.IndexOf:
            return self.index(node)  # type: ignore[arg-type]
        raise self.unknown(node)

    def unknown(self, node: ir.IR) -> Unsupported:
        """The refusal of a construct the backend has no form for."""
        return self.refuse(node, type(node).__name__, f"{type(node).__name__} nodes")

    def call(self, node: ir.Call) -> C:
        spec = node.spec
        form = self.form_of(node)
        if isinstance(form, Unsupported):
            raise form
        if spec.joins_text:
            joined = self.concat(node)
            if joined is not None:
                return joined
        never = always_error_arg(node, self.constants if self.constant_errors_shortcut
                                 else None)
        if never is not None:
            # an argument that is always an error (NA(), a folded 1/0): an eager call returns
            # the first error left to right, and its form never sees a value of no type
            return self.always_error(node, [self.checked(self.compile(a))
                                            for a in node.args[:never + 1]])
        if any(isinstance(a, ir.Lambda) for a in node.args):
            return self.higher_order(node, self.with_call(form, node, None))
        args = self.call_args(node)
        nodes = [self.resolved(a) for a in node.args]
        if spec.arithmetic:
            native = self.arithmetic(node, args, nodes)
            if native is not None:
                return native
        args = self.prepare(node, args, nodes)
        form = self.with_call(form, node, args)
        if spec.lazy or getattr(form, "wants_columns", False):
            return self.lazy(node, form, args)
        value, own, floats, state = self.eager(node, form, args)
        carrier = floats and spec.carries_nonfinite
        errors: list[Any] = []
        pending = False
        for i, a in enumerate(args):
            later = own is not None or any(self.error_of(b) is not None for b in args[i + 1:])
            if self.unchecked(a) and carrier and not later:
                pending = True  # carried to the consumer: inf + x is still not finite
                errors.append(self.error_of(a))
            else:
                errors.append(self.error_of(self.checked(a)))
        return self.finish(node, args, value, self.first_error([*errors, own]), own, floats,
                           pending, state)


def always_error_arg(node: ir.Call, constants: Mapping[int, ir.IR] | None) -> int | None:
    """The position of the first argument that is always an error (typed Never, or, unless
    ``constants`` is None, a constant error value such as a folded ``1/0``) of an eager call
    that does not inspect errors, else None."""
    spec = node.spec
    if spec.lazy or spec.accepts_errors:
        return None
    for i, a in enumerate(node.args):
        if isinstance(a, ir.Lambda):
            continue
        if a.type.kind == "Never":
            return i
        if constants is None:
            continue
        if type(a) is ir.Var:
            a = constants.get(a.slot, a)
        if type(a) is ir.Const and type(a.value) is ErrorValue:
            return i
    return None


def concrete_mismatch(node: ir.Call) -> bool:
    """A custom-typed call whose arguments are not the declared concrete types."""
    for arg, prm in zip(node.args, node.sig.params):
        if prm.type.kind in ("Var", "Any", "Many", "Fn"):
            continue
        if arg.type.kind != prm.type.kind:
            return True
    return False


class WithCall:
    """A form bound to its `FormCall` by the walk (`Walker.with_call`): the backends call it
    with the values or columns only, as a form that needs nothing from the call."""

    __slots__ = ("form", "call")

    def __init__(self, form: Any, call: Any) -> None:
        self.form = form
        self.call = call

    @property
    def wants_columns(self) -> bool:
        return bool(getattr(self.form, "wants_columns", False))

    @property
    def null_on_error(self) -> bool:
        return null_on_error(self.form)

    @property
    def __name__(self) -> str:  # noqa: PLW3201 - messages name the form
        return str(getattr(self.form, "__name__", self.form))

    def __call__(self, *args: Any) -> Any:
        return self.form(*args, call=self.call)


def null_on_error(form: Any) -> bool:
    """Whether ``form`` (a table entry, bound or not) declares ``null_on_error``: given
    arguments whose values are NULL wherever their errors are set, its SQL value is NULL
    wherever its error is set (`forms.form.Form.null_on_error`)."""
    return bool(getattr(form, "null_on_error", False))


def magnitude_bound(arithmetic: str, bounds: Sequence[float | None]) -> float | None:
    """An upper bound of |result| of the declared ``arithmetic`` (+ - * % neg pos) from upper
    bounds of its operands' magnitudes (None: unknown)."""
    if any(b is None for b in bounds):
        return None
    known = [b for b in bounds if b is not None]
    if arithmetic in ("+", "-"):
        return known[0] + known[1]
    if arithmetic == "*":
        return known[0] * known[1]
    if arithmetic == "%":
        return known[0] / 100
    return known[0]


__all__ = ["Walker", "WithCall", "always_error_arg", "concrete_mismatch", "magnitude_bound",
           "null_on_error"]
