"""Constant folding, once, on the checked IR: a pass from checked IR to folded IR, and the one
reader of constants (`constant`) every columnar form reads its literal arguments through.

What is a constant is decided here, by the scalar engine's own rules (`interpreter.compile`),
so the columnar backends give the scalar engine's answer exactly where they would otherwise
compute it on every row in DOUBLE or Decimal(38, 18):

- a literal; a list of constants (a tuple, as the scalar engine builds it); a coercion of a
  constant (the scalar coercion table, its failure an error value);
- a call of a pure function whose arguments are all constants, computed by the function's own
  implementation (an implementation that fails with an error value folds to that error
  value). Lazy functions too (``IFERROR(1/0, 1)``), given their constant arguments as the
  closures the scalar engine would give them, and functions that inspect error values
  (``ERROR.TYPE(NA())``) given them. Functions that need the evaluation context run
  in a folding context holding the compile-time `Limits`. Folding is metered as one
  evaluation (one context per pass: every folded call's price charged first, the functions'
  loops polled, the cost and memory budgets; no wall-clock deadline, so that what folds does
  not depend on the load), so a constant cannot
  make compiling slow: a limit passed is not folded (the backend reports it as before), and
  reading the clock is not folding (volatile functions never fold, nor does any call
  reading ``now``/``today``);
- a call given lambdas (``MAP``, ``ALL``, ``REDUCE``...) whose other arguments are constants
  and whose lambdas are closed: each reads only its own parameters and the names bound inside
  it (a LET name outside bound to a constant is that constant; a schema variable or any other
  outer name is not), and calls nothing volatile nor anything the backend refuses (``keep``).
  Each lambda is compiled by the scalar engine, metered on the same folding context, and
  given to the function as the scalar engine gives it; whatever fails (a limit, the clock)
  leaves the call to the backend;
- an eager call that does not inspect errors whose argument is a constant error value while
  every argument before it cannot be an error (the checker's ``may_error``, no LET name or
  lambda parameter, no context-reading call that could stop the evaluation): the scalar engine
  returns the first error left to right, so ``ROUND(x, 1/0)`` is ``#DIV/0!`` for every ``x``.

A value is computed through intermediate values the backends could not hold (a DateTime, a
Duration, a number past Decimal(38, 18): ``SERIAL(DATETIME(...))`` is a number); only the node
that becomes a `Const` must be held exactly by every columnar backend: whole numbers below
1e38 and other numbers below 1e20, rounded at 18 decimal places (a smaller number to its first
17 digits, where 18 places would blur it: ``1E-10 * 1E-10``), texts, booleans, dates and
error values; a list of such values (no blank, no error value) is written out as a list of
them (`ir.ListOf`) when a call gives it and it has no more items than the call has nodes. A backend passes
``keep`` to leave the calls it refuses in place (and every call above them), so that its
refusal (with the reason) is still reported.

The output is new immutable nodes (``Const.folded`` is true on each folded value); the input is
not changed, and a subtree with nothing to fold is returned as it is. The compile-time limits
are passed in (``limits``): the columnar walk passes its program's (`columnar.walk.Walker`,
and its forms' `FormCall.const`), from every entry point (`Program.to_polars`, `apply`,
`Program.to_sql`); without them folding uses `DEFAULT_LIMITS`, the limits the columnar forms
bound their results by.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import replace
from decimal import Decimal
from typing import Any, Callable

from ..errors import FormulaError
from ..limits import DEFAULT_LIMITS, Limits
from ..runtime import EvalContext, activate, deactivate
from ..values import CONTEXT, ErrorValue
from . import ir
from .compile import _CAUGHT, _COERCIONS, _FUSED, to_error
from .overloads import per_char_cost

#: What `constant` answers (and `fold_call` returns) for a node that is not a constant.
MISSING: Any = object()
NOT_FOLDED: Any = MISSING
_WHOLE_LIMIT = Decimal("1e38")
_FRACTION_LIMIT = Decimal("1e20")
_EXACT = decimal.Context(prec=60)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
#: Result types a folded `Const` may have (a Never-typed error call such as NA() stays a call:
#: the forms type its NULL by the call's own type).
_CONST_KINDS = frozenset({"Number", "Text", "Boolean", "Date"})


class _ReadsClock(Exception):
    """A call read the clock: not a constant."""


class _FoldContext(EvalContext):
    """The evaluation context of folding: the limits, metered like one evaluation (each call's
    price charged first, loops polled, the cost budget and the memory budget),
    and no clock (reading it stops the fold of that call); no wall-clock deadline."""

    __slots__ = ()

    def __init__(self, limits: Limits) -> None:
        # No wall-clock deadline: what folds must not depend on the machine's load (the
        # compiled program would differ from run to run). The cost, loop and memory budgets
        # are deterministic and bound folding as they bound one evaluation.
        super().__init__(replace(limits, deadline_ms=None), _EPOCH, metered=True)

    @property
    def now(self) -> dt.datetime:
        raise _ReadsClock()

    @now.setter
    def now(self, value: dt.datetime) -> None:
        pass

    @property
    def today(self) -> dt.date:
        raise _ReadsClock()


def fold(root: ir.IR, keep: Callable[[ir.Call], bool] | None = None,
         limits: Limits | None = None) -> ir.IR:
    """``root`` with every foldable constant replaced by its value (see the module docs).
    ``keep(call)`` true leaves that call (and so every call above it) unfolded."""
    return _Folder(keep, limits).fold(root)[0]


def constant(node: ir.IR, limits: Limits | None = None, memo: FoldMemo | None = None) -> Any:
    """The node's value when it is a constant (see the module docs: an error value is a
    constant too), else `MISSING`. The one reader of constants: forms read their literal
    arguments through it (`columnar.call.FormCall.const`). ``memo``: the walk's `FoldMemo`
    (one per walk), so that reading the operands of nested calls one by one does not fold
    each subtree again (the same answer, see `FoldMemo`)."""
    kind = type(node)
    if kind is ir.Const:
        return node.value  # type: ignore[union-attr]
    if kind is ir.Var or kind is ir.Lambda:
        return MISSING
    return _Folder(None, limits, memo).fold(node)[1]


def fold_call(node: ir.Call, limits: Limits | None = None, memo: FoldMemo | None = None
              ) -> Any:
    """The value (or `ErrorValue`) of a constant call (its arguments folded first), or
    `MISSING`; unlike `fold`, also a value no backend holds as a literal."""
    return constant(node, limits, memo)


class FoldMemo:
    """What `constant` learnt about the subtrees of one program, for one walk over it (the
    columnar walk holds one, `columnar.walk.Walker`): a walk asks for the constant of each
    call's operands, and without it every question folds the operand's whole subtree again,
    quadratic in the nesting depth (IF nested 49 deep spent a third of its compile there).

    Only answers that cannot depend on where the question is asked are kept: a subtree's fold
    (folded node and value) is kept when it was folded with no LET name or lambda parameter
    in scope (so every name inside is bound as a fresh fold binds it) and it computed no call
    (so it charged nothing to the folding meter: the same fold inside a bigger one, whose
    earlier calls have charged the budget, takes the same path). Keyed by node identity, each
    entry holding its node so that the identity cannot be reused while the memo lives; it
    must not outlive the program's walk (a new walk, a new memo)."""

    __slots__ = ("folds", "quiet")

    def __init__(self) -> None:
        self.folds: dict[int, tuple[ir.IR, ir.IR, Any]] = {}
        self.quiet: dict[int, tuple[ir.IR, bool]] = {}


class _Folder:
    """One folding pass: each node -> (folded node, its constant value or MISSING)."""

    def __init__(self, keep: Callable[[ir.Call], bool] | None, limits: Limits | None,
                 memo: FoldMemo | None = None) -> None:
        self.keep = keep
        self.limits = limits or DEFAULT_LIMITS
        self._ctx: _FoldContext | None = None
        #: LET names whose value folded to a constant: that constant (read in their place)
        self.slots: dict[int, ir.Const] = {}
        #: LET names and lambda parameters in scope (a kept fold must see none)
        self.scoped = 0
        self.memo = memo
        #: `_quiet` of the subtrees met (a property of the node alone: kept for the whole
        #: pass, and in the walk's memo when there is one)
        self.quiet: dict[int, tuple[ir.IR, bool]] = {} if memo is None else memo.quiet
        #: calls computed so far (each charged to the meter): a kept fold computed none
        self.computed = 0

    def fold(self, node: ir.IR) -> tuple[ir.IR, Any]:
        memo = self.memo
        kind = type(node)
        if memo is None or self.scoped or kind is ir.Const or kind is ir.Var:
            return self._fold(node)
        hit = memo.folds.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        computed = self.computed
        folded, value = self._fold(node)
        if self.computed == computed:
            memo.folds[id(node)] = (node, folded, value)
        return folded, value

    def context(self) -> _FoldContext:
        if self._ctx is None:
            self._ctx = _FoldContext(self.limits)
        return self._ctx

    def _fold(self, node: ir.IR) -> tuple[ir.IR, Any]:
        kind = type(node)
        if kind is ir.Const:
            return node, node.value  # type: ignore[union-attr]
        if kind is ir.Var:
            named = self.slots.get(node.slot)  # type: ignore[union-attr]
            return (node, MISSING) if named is None else (named, named.value)
        if kind is ir.Call:
            return self.call(node)  # type: ignore[arg-type]
        if kind is ir.Coerce:
            return self.coerce(node)  # type: ignore[arg-type]
        if kind is ir.ListOf:
            lst: ir.ListOf = node  # type: ignore[assignment]
            folded = [self.fold(i) for i in lst.items]
            items = tuple(f[0] for f in folded)
            if any(a is not b for a, b in zip(items, lst.items)):
                lst = replace(lst, items=items)
            values = tuple(f[1] for f in folded)
            known = all(v is not MISSING and _clean(v) for v in values)
            return lst, (values if known else MISSING)
        if kind is ir.Lambda:
            lam: ir.Lambda = node  # type: ignore[assignment]
            outer = dict(self.slots)
            for slot in lam.slots:  # a parameter is never a LET name's constant
                self.slots.pop(slot, None)
            self.scoped += 1
            body = self.fold(lam.body)[0]
            self.scoped -= 1
            self.slots = outer
            return (lam if body is lam.body else replace(lam, body=body)), MISSING
        if kind is ir.Let:
            # a name bound to a constant is read as that constant (its uses fold further:
            # LET(x, 2, y, x * 3, x + y) is 8) and leaves the LET; an unused value was never
            # part of the result (the walk binds a value only for its readers)
            let: ir.Let = node  # type: ignore[assignment]
            outer = dict(self.slots)  # the names are known in this LET only
            self.scoped += 1
            slots: list[int] = []
            names: list[str] = []
            values_: list[ir.IR] = []
            for slot, name, v in zip(let.slots, let.names, let.values):
                folded_v = self.fold(v)[0]
                if type(folded_v) is ir.Const and folded_v.type == v.type:
                    self.slots[slot] = folded_v
                else:
                    self.slots.pop(slot, None)
                    slots.append(slot)
                    names.append(name)
                    values_.append(folded_v)
            body, value = self.fold(let.body)
            self.slots = outer
            self.scoped -= 1
            if not slots:
                return body, value
            if body is let.body and len(slots) == len(let.slots) \
                    and all(a is b for a, b in zip(values_, let.values)):
                return let, MISSING
            return replace(let, slots=tuple(slots), names=tuple(names), values=tuple(values_),
                           body=body), MISSING
        if kind is ir.IndexOf:
            idx: ir.IndexOf = node  # type: ignore[assignment]
            obj, index = self.fold(idx.obj)[0], self.fold(idx.index)[0]
            if obj is idx.obj and index is idx.index:
                return idx, MISSING
            return replace(idx, obj=obj, index=index), MISSING
        if kind is ir.FieldOf:
            fld: ir.FieldOf = node  # type: ignore[assignment]
            obj = self.fold(fld.obj)[0]
            return (fld if obj is fld.obj else replace(fld, obj=obj)), MISSING
        raise TypeError(kind.__name__)

    def coerce(self, node: ir.Coerce) -> tuple[ir.IR, Any]:
        inner, value = self.fold(node.node)
        if inner is not node.node:
            node = replace(node, node=inner)
        convert = _COERCIONS.get(node.mode)
        if value is MISSING or convert is None:
            return node, MISSING
        if type(value) is not ErrorValue:  # build_coerce: an error passes through
            try:
                with decimal.localcontext(CONTEXT):
                    value = convert(value)
            except _CAUGHT as exc:
                value = to_error(exc, node.span)
            except Exception:  # noqa: BLE001 - not a constant: left to the backend
                return node, MISSING
        return self.result(node, value)

    def call(self, node: ir.Call) -> tuple[ir.IR, Any]:
        folded = [self.fold(a) for a in node.args]
        args = tuple(f[0] for f in folded)
        if any(a is not b for a, b in zip(args, node.args)):
            node = replace(node, args=args)
        if self.keep is not None and self.keep(node):
            return node, MISSING
        value = self.value(node, [f[1] for f in folded])
        if value is MISSING:
            return node, MISSING
        return self.result(node, value)

    def result(self, node: ir.Call | ir.Coerce, value: Any) -> tuple[ir.IR, Any]:
        """A `Const` for ``value`` when every backend holds it exactly, else the node (whose
        value its parents still use)."""
        if type(value) is tuple and type(node) is ir.Call and node.type.kind == "List":
            # (a coercion stays: ``array_mixed`` marks a list no typed column holds)
            return self.written(node, value), value
        held = _held(value)
        if held is MISSING or node.type.kind not in _CONST_KINDS:
            return node, value
        return ir.Const(held, node.type, node.span, may_error=type(held) is ErrorValue,
                        folded=True), held

    def written(self, node: ir.Call, value: tuple[Any, ...]) -> ir.IR:
        """A constant list as a list written out (`ir.ListOf` of folded `Const` items) when
        every item is held exactly, none is blank or an error, and it has no more items than
        ``node`` has nodes (the written list is never the larger program: ``SEQUENCE(1000)``
        stays a call); else ``node``."""
        elem = node.type.elem
        if elem is None or elem.kind not in _CONST_KINDS or elem.nullable or not value \
                or len(value) > sum(1 for _ in ir.ir_walk(node)):
            return node
        items = []
        for v in value:
            held = _held(v)
            if held is MISSING or type(held) is ErrorValue:
                return node
            items.append(ir.Const(held, elem, node.span, folded=True))
        return ir.ListOf(tuple(items), node.type, node.span, cost=len(items) + 1,
                         size=len(items))

    def value(self, node: ir.Call, values: list[Any]) -> Any:
        spec = node.spec
        if spec.volatile:
            return MISSING
        impl = node.sig.impl or spec.impl
        if impl is None:
            return MISSING
        lambdas = [i for i, a in enumerate(node.args) if type(a) is ir.Lambda]
        if lambdas:
            return self.higher_order(node, impl, values, lambdas)
        if not spec.lazy and not spec.accepts_errors:
            first = _first_error(node, values, self.quiet)
            if first is not MISSING:
                return first
        if any(v is MISSING for v in values):
            return MISSING
        if not spec.lazy and not spec.accepts_errors and not all(_clean(v) for v in values):
            return MISSING  # an error value the scalar engine passes on to the function
        self.computed += 1
        ctx = self.context()
        token = activate(ctx)  # the functions' inner loops poll the meter
        try:
            _charge(ctx, node, values)
            with decimal.localcontext(CONTEXT):
                if spec.lazy:
                    frame: list[Any] = [ctx]
                    given = [_given(v) for v in values]
                    if spec.name in _FUSED and not any(a.may_error for a in node.args):
                        return _FUSED[spec.name](*given)(frame)  # as compile.build_call runs it
                    return impl(frame, *given)
                if spec.needs_ctx:
                    return impl(ctx, *values)
                return impl(*values)
        except _CAUGHT as exc:
            return to_error(exc, node.span)
        except (FormulaError, _ReadsClock):
            return MISSING  # a limit passed, or the clock read: the backend decides
        except Exception:  # noqa: BLE001 - not a constant: left to the backend, which reports it
            return MISSING
        finally:
            deactivate(token)


    def higher_order(self, node: ir.Call, impl: Callable[..., Any], values: list[Any],
                     lambdas: list[int]) -> Any:
        """A call given lambdas (`MAP`, `ALL`...): computed when its other arguments are
        constants and each lambda is closed (`_closed`: it reads only its own parameters and
        names bound inside it, and no volatile call; nothing a backend refuses), each lambda
        compiled by the scalar engine (metered: its calls charge this pass's meter) and given
        as the scalar engine gives it, over a frame of its own."""
        for i, (a, v) in enumerate(zip(node.args, values)):
            if i in lambdas:
                if not _closed(a, self.keep):  # type: ignore[arg-type]
                    return MISSING
            elif v is MISSING or not (node.spec.lazy or node.spec.accepts_errors or _clean(v)):
                return MISSING  # an error value: the function (or the backend) decides
        from .compile import Compiler  # the scalar engine builds the lambdas' closures

        ctx = self.context()
        compiler = Compiler(metered=True, limits=self.limits)
        frame: list[Any] = [ctx] + [None] * max(
            (s for i in lambdas for s in _bound_slots(node.args[i])), default=0)
        built = {i: compiler.compile(node.args[i]) for i in lambdas}
        self.computed += 1
        token = activate(ctx)
        try:
            _charge(ctx, node, values)
            with decimal.localcontext(CONTEXT):
                if node.spec.lazy:
                    return impl(frame, *[built[i] if i in built else _given(v)
                                         for i, v in enumerate(values)])
                given = [built[i](frame) if i in built else v for i, v in enumerate(values)]
                return impl(ctx, *given) if node.spec.needs_ctx else impl(*given)
        except _CAUGHT as exc:
            return to_error(exc, node.span)
        except (FormulaError, _ReadsClock):
            return MISSING  # a limit passed, or the clock read: the backend decides
        except Exception:  # noqa: BLE001 - not a constant: left to the backend
            return MISSING
        finally:
            deactivate(token)


def _bound_slots(node: ir.IR) -> set[int]:
    """The frame slots bound inside ``node``: its lambdas' parameters and its LET names."""
    bound: set[int] = set()
    for n in ir.ir_walk(node):
        if type(n) is ir.Lambda or type(n) is ir.Let:
            bound.update(n.slots)
    return bound


def _closed(lam: ir.Lambda, keep: Callable[[ir.Call], bool] | None) -> bool:
    """Whether a lambda's value depends on nothing but its arguments: every name it reads is
    bound inside it (no schema variable, no outer LET name or parameter), no call is volatile,
    and no call is one the backend refuses (``keep``: its refusal must still be reported)."""
    bound = _bound_slots(lam)
    for n in ir.ir_walk(lam):
        kind = type(n)
        if kind is ir.Var and n.slot not in bound:  # type: ignore[union-attr]
            return False
        if kind is ir.Call and (n.spec.volatile  # type: ignore[union-attr]
                                or (keep is not None and keep(n))):  # type: ignore[arg-type]
            return False
    return True


def _charge(ctx: EvalContext, node: ir.Call, values: list[Any]) -> None:
    """Charge a folded call's price as a metered run does (`compile._metered`): its base cost,
    and for an eager call its list items and text characters."""
    spec = node.spec
    cost = spec.cost
    units = 1 + cost.base
    if not spec.lazy:
        items = sum(len(v) for a, v in zip(node.args, values)
                    if a.type.kind in ("List", "Many") and type(v) is tuple)
        per_char = per_char_cost(spec)
        chars = sum(len(v) for a, v in zip(node.args, values)
                    if a.type.kind == "Text" and type(v) is str) if per_char else 0
        if per_char and cost.list_chars:
            chars += sum(len(x) for a, v in zip(node.args, values)
                         if a.type.kind in ("List", "Many") and type(v) is tuple
                         for x in v if type(x) is str)
        units += cost.per_item * items + (items if cost.per_call else 0) + int(per_char * chars)
    ctx.charge(units)


def _first_error(node: ir.Call, values: list[Any],
                 quiet: dict[int, tuple[ir.IR, bool]] | None = None) -> Any:
    """The first error left to right of an eager call when it is sure (see the module docs),
    else MISSING."""
    for a, v in zip(node.args, values):
        if type(v) is ErrorValue:
            return v if a.may_error else MISSING  # an unscanned error reaches the function
        if v is not MISSING and _clean(v):
            continue
        if a.may_error or not _quiet(a, quiet):
            return MISSING
    return MISSING


def _quiet(node: ir.IR, known: dict[int, tuple[ir.IR, bool]] | None = None) -> bool:
    """Whether evaluating ``node`` can neither give an error value (the checker's proof) nor
    stop the evaluation (a context-reading call may pass a limit)."""
    return not node.may_error and _calm(node, {} if known is None else known)


def _calm(node: ir.IR, known: dict[int, tuple[ir.IR, bool]]) -> bool:
    """No LET name, lambda parameter, lambda or context-reading call in ``node``'s subtree.
    Each subtree's answer is kept in ``known`` (by node identity, each entry holding its
    node): every call of a nested chain asks it of its operand, which would otherwise walk
    the whole subtree each time (quadratic in the depth)."""
    hit = known.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    kind = type(node)
    if kind is ir.Var and node.local:  # type: ignore[union-attr]
        calm = False  # the checker's proof does not see through LET names and parameters
    elif kind is ir.Lambda:
        calm = False
    elif kind is ir.Call and (node.spec.needs_ctx or node.spec.volatile):  # type: ignore[union-attr]
        calm = False
    else:
        calm = all(_calm(child, known) for child in ir.ir_children(node))
    known[id(node)] = (node, calm)
    return calm


def _clean(value: Any) -> bool:
    """No error value in ``value`` (a list's items included)."""
    if type(value) is ErrorValue:
        return False
    if type(value) is tuple:
        return all(_clean(v) for v in value)
    return True


def _given(value: Any) -> Callable[[list[Any]], Any]:
    return lambda f: value


def _held(value: Any) -> Any:
    """``value`` as a constant the columnar backends hold exactly, else `MISSING`."""
    if isinstance(value, ErrorValue):
        return value
    if isinstance(value, dt.datetime):
        return MISSING  # a DateTime keeps its zone's reading: left to the forms
    if isinstance(value, (bool, str, dt.date)):
        return value
    if isinstance(value, (int, Decimal)):
        number = Decimal(value)
        if not number.is_finite():
            return MISSING
        if number == number.to_integral_value() and abs(number) < _WHOLE_LIMIT:
            return number.quantize(Decimal(1), context=_EXACT)
        if not abs(number) < _FRACTION_LIMIT:
            return MISSING  # left to the engine's own arithmetic and range tests
        held = number.quantize(_PLACES_18, context=_EXACT)
        if abs(held - number) > abs(number) * _RELATIVE:
            # a small number that 18 places would blur or zero (1E-10 * 1E-10 is 1E-20, not
            # 0: float mode divides by it, as the scalar engine does): its first 17 digits,
            # as many as a DOUBLE holds, written as a literal of at most 38 places (what a SQL
            # DECIMAL literal holds; below that the 38th place rounds it). Decimal mode reads
            # it as it reads such a literal written in the formula.
            held = _SEVENTEEN.plus(number)
            if held.as_tuple().exponent < -38:  # type: ignore[operator]
                held = number.quantize(_PLACES_38, context=_EXACT)
        return held.normalize()
    return MISSING


_PLACES_18 = Decimal("1e-18")
_PLACES_38 = Decimal("1e-38")
#: A folded number's 18-place rounding is kept when it is this close (relative): as close as
#: a DOUBLE, and never a change for numbers from 0.01 up.
_RELATIVE = Decimal("1e-15")
_SEVENTEEN = decimal.Context(prec=17)


__all__ = ["MISSING", "NOT_FOLDED", "FoldMemo", "constant", "fold", "fold_call"]
