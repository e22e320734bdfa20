"""The scalar backend's fast path: checked IR -> one Python function, built node by node.

`compile.py` turns the IR into nested closures; this module turns the same IR into a single
Python function whose body is an `ast` tree built node by node, then compiled with
``compile(<ast.Module>)``. No source text is ever produced or parsed: every literal is an
`ast.Constant` (str, int, bool, None) or a closed-over object, every Python name is one we
generate (`NAME_PATTERN`), and a user's variable names and texts appear only as constant
strings (dictionary keys, text literals). The function runs against a globals dict holding
only our helper objects, with empty builtins.

The semantics are those of the closure backend, node for node:

* inputs are bound as `Program.evaluate` binds them (the same fast checks, the same converters,
  the same errors: E301/E302/E303), in slot order;
* constants are folded by the closure compiler itself (`Compiler.build`), so folding is the same;
* eager calls evaluate their arguments left to right; a call of at most two arguments without
  the context or list arguments stops at the first argument that is an error value (as the
  closures' ``call2e``/``call1e``); other shapes evaluate every argument, then return the first
  error value (list items included, `_first_error`); implementations' exceptions become error
  values at the call's span through `compile.to_error`;
* error propagation is compiled, not scanned: a call whose parent would only pass its error
  value up writes the error straight into the result of the outermost such ancestor (the
  "region") and continues in the ``else`` of its ``try`` or ``if``, so a chain like
  ``a * b + c / 2 - d`` has no type test at all;
* IF, IFERROR, IFNA, ??, IFBLANK, COALESCE, AND, OR and the operators ``and``/``or`` are
  inlined (Python ``if`` and conditional expressions, short-circuit kept); other lazy functions
  (IFS, SWITCH, CHOOSE, host functions) get generated thunks; lambdas become nested Python
  functions of engine values, LET names local variables;
* Number arithmetic: outside a decimal-context swap, ``+ - * /``, unary minus/plus and ``%`` call
  the bound methods of `values.CONTEXT` (``CONTEXT.add``...), so the caller's decimal context is
  never touched; ints stay ints exactly where the closures keep them (int + int). When the
  program calls an implementation that needs the engine context, or when the arithmetic is long
  enough that Python's operators under one context swap are cheaper (`_SWAP_PENALTY`), the
  function sets `CONTEXT` once per call, as `Program.evaluate` does, and uses the operators.

Metered programs (static cost bound over budget) are not generated: `generate` returns None and
the caller keeps the closures, whose meter charges every call.
"""

from __future__ import annotations

import ast
import contextvars
import datetime as dt
import decimal
import itertools
import operator
import re
import types
from decimal import Decimal
from typing import Any, Callable, Mapping

from ..errors import EvalError, FormulaError, InternalError, LimitExceeded
from ..limits import Limits
from ..types import Type
from ..values import CONTEXT, ZERO, ErrorValue, to_external
from . import ir
from ._codegen_ops import _EPOCH, _Operators
from ._pyast import _N, _V, _assign, _atom, _call, _cmp, _const, _function, _load
from .compile import (_CAUGHT, _COERCIONS, _NOT_CONST, Compiler, _first_error, item_at,
                      to_error)
from .ir import IR
from ..runtime import EvalContext

#: Every Python identifier in a generated module matches this (tests walk the AST to prove it).
NAME_PATTERN = re.compile(r"_[a-z][0-9]+\Z")

#: Generated functions take (variables, now) and return the engine value.
Generated = Callable[[Any, Any], Any]

#: Arithmetic steps that would cost a CONTEXT method call more than an operator under a swapped
#: context; above this many, one swap per call is cheaper (measured with bench/formula_bench.py).
_SWAP_PENALTY = 3
#: Nesting of routed error continuations before a region is cut (keeps the AST shallow).
_CAP = 24
_UTC = dt.timezone.utc
_FREE_COERCIONS = frozenset(("blank_to_number", "blank_to_text", "blank_to_boolean",
                             "boolean_to_number", "number_to_boolean", "text_to_boolean"))


# ---------------------------------------------------------------------------- known functions


def _known() -> dict[str, Any]:
    """The implementations this module recognises by identity (never by user text)."""
    from ..functions import logic, operators

    known: dict[str, Any] = {
        "add": operator.add, "sub": operator.sub, "mul": operators._multiply,
        "div": operators._divide, "neg": operator.neg, "pos": operator.pos,
        "percent": operators.percent.impl, "not": operators.not_.impl,
        "concat": operators.concat.impl,
        "lazy": {logic.if_.impl: "if_", logic.iferror.impl: "iferror", logic.ifna.impl: "ifna",
                 logic.coalesce.impl: "coalesce", logic.ifblank.impl: "coalesce",
                 logic.and_.impl: "all_and", logic.or_.impl: "all_or",
                 operators.and_op.impl: "lazy_and", operators.or_op.impl: "lazy_or",
                 operators.coalesce_op.impl: "coalesce"},
        "free": set(),
    }
    try:  # text functions audited to use no decimal context
        from ..functions import text

        known["free"] = {text.upper.impl, text.lower.impl, text.trim.impl, text.len_.impl}
    except (ImportError, AttributeError):
        pass
    return known


class _Folder(Compiler):
    """The closure compiler, memoised per node: folds constants exactly as the closures do."""

    def __init__(self, limits: Limits) -> None:
        super().__init__(False, limits)
        self.memo: dict[int, tuple[Any, Any]] = {}

    def build(self, node: IR) -> tuple[Any, Any]:
        key = id(node)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = super().build(node)
        return hit


class _Unsupported(Exception):
    """This program is left to the closures (never raised for checked, unmetered programs)."""


# ----------------------------------------------------------------------------- the generator


class _Gen(_Operators):
    """The generator: IR nodes to statements and expressions (operators in `_Operators`)."""

    def __init__(self, *, limits: Limits, swap: bool, folder: _Folder, known: dict[str, Any],
                 consts: dict[int, Any]) -> None:
        self.limits = limits
        self.swap = swap
        self.folder = folder
        self.known = known
        self._consts = consts
        self.helpers: dict[str, Any] = {}
        self._helper_ids: dict[int, str] = {}
        self._count = itertools.count(1)
        self.block: list[ast.stmt] = []
        self.depth = 0
        self.slots: dict[int, _V] = {}
        self.input_slots: set[int] = set()
        self.regions: dict[str, tuple[list[ast.stmt], int]] = {}
        self.routed: set[str] = set()  # regions some error path writes to
        self.risky: set[str] = set()  # regions that may end holding an error value
        self.uses_ctx = False  # a needs_ctx call runs: Program.evaluate would build the context
        self.ctx_used = False  # the generated code reads _c0
        self.needs_swap = False  # some implementation reads the ambient decimal context
        self.penalty = 0
        self.weight = 1
        self.clock = False  # a volatile or foreign needs_ctx call may read ctx.now
        self.foreign = False  # a host function (not formulane's) runs: keep the caller's context
        self.EV = self.helper(ErrorValue)
        self.TYPE = self.helper(type)

    # ------------------------------------------------------------------------ names, helpers

    def name(self, prefix: str) -> str:
        return f"_{prefix}{next(self._count)}"

    def helper(self, obj: Any) -> ast.Name:
        """A closed-over object, as a global of the generated function."""
        key = id(obj)
        name = self._helper_ids.get(key)
        if name is None:
            name = self._helper_ids[key] = self.name("h")
            self.helpers[name] = obj
        return _load(name)

    def constant(self, value: Any) -> _V:
        tv = type(value)
        expr = _const(value) if tv in (str, int, bool) or value is None else self.helper(value)
        kind = "int" if tv is int else "dec" if tv is Decimal else None
        return _V(expr, tv is ErrorValue, kind, value)

    def impl(self, impl: Any) -> ast.Name:
        """An implementation we call (not inline): a host function's is noted."""
        module = getattr(impl, "__module__", "") or ""
        if not module.startswith("formulane."):
            self.foreign = True
        return self.helper(impl)

    def ctx(self) -> ast.Name:
        self.ctx_used = True
        return _load("_c0")

    def is_error(self, expr: ast.expr) -> ast.Compare:
        return _cmp(_call(self.TYPE, expr), ast.Is(), self.EV)

    def not_error(self, expr: ast.expr) -> ast.Compare:
        return _cmp(_call(self.TYPE, expr), ast.IsNot(), self.EV)

    def charge(self, units: int) -> None:
        self.penalty += units * self.weight

    # --------------------------------------------------------------------------- statements

    def materialize(self, v: _V) -> _V:
        if _atom(v.expr):
            return v
        t = self.name("t")
        self.block.append(_assign(t, v.expr))
        return v._replace(expr=_load(t))

    def into_temp(self, v: _V) -> str:
        t = self.name("t")
        self.block.append(_assign(t, v.expr))
        return t

    def mark(self) -> tuple[list[ast.stmt], int]:
        return self.block, len(self.block)

    def keep_order(self, vals: list[_V], mark: tuple[list[ast.stmt], int]) -> None:
        """Earlier arguments held as expressions are evaluated before a later argument's
        statements, so evaluation stays left to right and each runs once."""
        blk, at = mark
        if self.block is blk and len(blk) == at:
            return
        for i, v in enumerate(vals):
            if not _atom(v.expr):
                t = self.name("t")
                blk.insert(at, _assign(t, v.expr))
                at += 1
                vals[i] = v._replace(expr=_load(t))

    def sub(self, fn: Callable[[], _V]) -> tuple[list[ast.stmt], _V]:
        """Generate into a fresh nested block (a branch)."""
        saved, depth = self.block, self.depth
        self.block, self.depth = [], depth + 1
        try:
            v = fn()
            return self.block, v
        finally:
            self.block, self.depth = saved, depth

    def open(self, route: str | None) -> tuple[str, bool]:
        if route is not None:
            return route, False
        route = self.name("t")
        self.regions[route] = (self.block, self.depth)
        return route, True

    def close(self, route: str, own: bool, result: _V) -> _V:
        if not own:
            return result
        start, depth = self.regions.pop(route)
        if route not in self.routed:
            return result
        self.block.append(_assign(route, result.expr))
        self.block, self.depth = start, depth
        return _V(_load(route), route in self.risky or result.maybe, result.kind)

    def guard(self, v: _V, route: str) -> _V:
        """``if type(v) is ErrorValue: <region result> = v``, else continue (nested)."""
        if not v.maybe:
            return v
        v = self.materialize(v)
        branch = _N.If(test=self.is_error(v.expr), body=[_assign(route, v.expr)], orelse=[])
        self.block.append(branch)
        self.block = branch.orelse
        self.depth += 1
        self.routed.add(route)
        self.risky.add(route)
        return v._replace(maybe=False)

    def attempt(self, expr: ast.expr, span: Any, route: str, kind: str | None,
                maybe: bool, trusted: bool = False) -> _V:
        """``try: t = expr`` / ``except _CAUGHT: <region result> = to_error(exc, span)``,
        continuing in the ``else``. ``trusted``: a spec declared ``can_error=False`` called
        with clean arguments (the handler stays, as in the closures, but the region is not
        counted as possibly holding an error: the checker's may_error trusts it the same way)."""
        t, e = self.name("t"), self.name("e")
        handler = _N.ExceptHandler(
            type=self.helper(_CAUGHT), name=e,
            body=[_assign(route, _call(self.helper(to_error), _load(e), self.helper(span)))])
        node = _N.Try(body=[_assign(t, expr)], handlers=[handler], orelse=[], finalbody=[])
        self.block.append(node)
        self.block = node.orelse
        self.depth += 1
        self.routed.add(route)
        if not trusted:
            self.risky.add(route)
        return _V(_load(t), maybe, kind)

    def settle(self, route: str, vals: list[_V]) -> None:
        """Cut a region whose continuations nest too deep: the nesting ends with the region's
        result set to None (not an error), and one test resumes at the region's own depth."""
        start, depth = self.regions.get(route, (None, 0))
        if start is None or self.depth - depth <= _CAP:
            return
        for i, v in enumerate(vals):
            vals[i] = self.materialize(v)
        self.block.append(_assign(route, _const(None)))
        cont: list[ast.stmt] = []
        start.append(_N.If(test=self.not_error(_load(route)), body=cont, orelse=[]))
        self.block, self.depth = cont, depth + 1

    # --------------------------------------------------------------------------------- nodes

    def const(self, node: IR) -> Any:
        """The node's folded value (or _NOT_CONST), decided as Compiler.build decides it."""
        key = id(node)
        if key in self._consts:
            return self._consts[key]
        kind = type(node)
        value = _NOT_CONST
        if kind is ir.Const:
            value = node.value  # type: ignore[union-attr]
        elif kind is ir.Call:
            spec = node.spec  # type: ignore[union-attr]
            args = node.args  # type: ignore[union-attr]
            if not spec.volatile and not spec.needs_ctx \
                    and not any(isinstance(a, ir.Lambda) for a in args) \
                    and all(self.const(a) is not _NOT_CONST for a in args):
                value = self.folder.build(node)[1]
        elif kind is ir.ListOf:
            if all(self.const(i) is not _NOT_CONST for i in node.items):  # type: ignore[union-attr]
                value = self.folder.build(node)[1]
        elif kind is ir.Coerce:
            if self.const(node.node) is not _NOT_CONST:  # type: ignore[union-attr]
                value = self.folder.build(node)[1]
        self._consts[key] = value
        return value

    def gen(self, node: IR, route: str | None = None) -> _V:
        value = self.const(node)
        if value is not _NOT_CONST:
            return self.constant(value)
        kind = type(node)
        if kind is ir.Var:
            return self.slots[node.slot]  # type: ignore[union-attr]
        if kind is ir.Call:
            return self.call(node, route)  # type: ignore[arg-type]
        if kind is ir.Let:
            return self.let(node, route)  # type: ignore[arg-type]
        if kind is ir.Lambda:
            return self.lam(node)  # type: ignore[arg-type]
        if kind is ir.ListOf:
            return self.list_of(node)  # type: ignore[arg-type]
        if kind is ir.IndexOf:
            return self.index_of(node)  # type: ignore[arg-type]
        if kind is ir.FieldOf:
            return self.field_of(node)  # type: ignore[arg-type]
        if kind is ir.Coerce:
            return self.coerce(node, route)  # type: ignore[arg-type]
        raise _Unsupported(kind.__name__)

    def gen_all(self, nodes: tuple[IR, ...]) -> list[_V]:
        vals: list[_V] = []
        for node in nodes:
            mark = self.mark()
            v = self.gen(node)
            self.keep_order(vals, mark)
            vals.append(v)
        return vals

    # ------------------------------------------------------------------------------- LET, fn

    def let(self, node: ir.Let, route: str | None) -> _V:
        for slot, value in zip(node.slots, node.values):
            v = self.gen(value)
            if not _atom(v.expr):
                name = f"_v{slot}"
                self.block.append(_assign(name, v.expr))
                v = v._replace(expr=_load(name))
            self.slots[slot] = v
        return self.gen(node.body, route)

    def lam(self, node: ir.Lambda) -> _V:
        name = self.name("l")
        params = [f"_v{s}" for s in node.slots]
        for s in node.slots:
            self.slots[s] = _V(_load(f"_v{s}"), True)
        body = self.function_body(lambda: self.gen(node.body), weight=4)
        # The closures take 1 or 2 arguments exactly, and from 3 on ignore extra ones.
        extra = self.name("p") if len(params) >= 3 else None
        self.block.append(_function(name, params, body, vararg=extra))
        return _V(_load(name), False)

    def function_body(self, fn: Callable[[], _V], weight: int = 1) -> list[ast.stmt]:
        saved = self.block, self.depth
        self.block, self.depth = [], 0
        self.weight *= weight
        try:
            v = fn()
            return self.block + [_N.Return(value=v.expr)]
        finally:
            self.weight //= weight
            self.block, self.depth = saved

    # ------------------------------------------------------------------- lists, index, field

    def list_of(self, node: ir.ListOf) -> _V:
        vals = self.gen_all(node.items)
        return _V(_N.Tuple(elts=[v.expr for v in vals], ctx=ast.Load()), False)

    def index_of(self, node: ir.IndexOf) -> _V:
        xs, i = self.gen_all((node.obj, node.index))
        expr = _call(self.helper(item_at), xs.expr, i.expr, self.helper(node.span))
        return self.materialize(_V(expr, True))

    def field_of(self, node: ir.FieldOf) -> _V:
        obj = node.obj
        o = self.materialize(self.gen(obj))
        sure = (type(obj) is ir.Var and obj.slot in self.input_slots
                and obj.type.kind == "Record" and not obj.type.nullable and not o.maybe)
        t = self.name("t")
        lookup = _N.Subscript(value=o.expr if sure else _load(t), slice=_const(node.name),
                               ctx=ast.Load())
        attempt = _N.Try(body=[_assign(t, lookup)], handlers=[_N.ExceptHandler(
            type=self.helper((KeyError, TypeError)), name=None,
            body=[_assign(t, _const(None))])], orelse=[], finalbody=[])
        if sure:
            self.block.append(attempt)
        else:
            self.block.append(_assign(t, o.expr))
            test = _N.BoolOp(op=ast.And(), values=[
                _cmp(_load(t), ast.IsNot(), _const(None)), self.not_error(_load(t))])
            self.block.append(_N.If(test=test, body=[attempt], orelse=[]))
        return _V(_load(t), o.maybe or not sure)

    # ------------------------------------------------------------------------------- coerce

    def coerce(self, node: ir.Coerce, route: str | None) -> _V:
        mode = node.mode
        if mode not in _FREE_COERCIONS:
            self.needs_swap = True
        route, own = self.open(route)
        v = self.gen(node.node, route if self.depth < _CAP else None)
        v = self.materialize(self.guard(v, route))
        x = v.expr
        if mode == "blank_to_number":
            out = _V(_N.IfExp(test=_cmp(x, ast.Is(), _const(None)), body=_const(0), orelse=x),
                     False, "int" if v.kind == "int" else None)
        elif mode in ("blank_to_text", "blank_to_boolean"):
            fill = "" if mode == "blank_to_text" else False
            out = _V(_N.IfExp(test=_cmp(x, ast.Is(), _const(None)), body=_const(fill),
                               orelse=x), False)
        elif mode == "boolean_to_number":
            out = _V(_N.IfExp(test=x, body=_const(1), orelse=_const(0)), False, "int")
        elif mode == "number_to_boolean":
            out = _V(_cmp(x, ast.NotEq(), _const(0)), False)
        else:
            kind = "dec" if mode == "text_to_number" else None
            out = self.attempt(_call(self.helper(_COERCIONS[mode]), x), node.span, route, kind,
                               False)
        return self.close(route, own, out)

    # -------------------------------------------------------------------------------- calls

    def call(self, node: ir.Call, route: str | None) -> _V:
        spec = node.spec
        impl = node.sig.impl or spec.impl
        if impl is None:
            raise _Unsupported(spec.name)
        module = getattr(impl, "__module__", "") or ""
        if spec.needs_ctx:
            self.uses_ctx = True
            if spec.volatile or not module.startswith("formulane.functions"):
                self.clock = True
        if spec.name in ("OP_AND", "OP_OR") and not any(a.may_error for a in node.args):
            return self.fused(node, spec.name == "OP_AND")
        if spec.lazy:
            inline = next((m for f, m in self.known["lazy"].items() if f is impl), None)
            if inline is not None and not spec.needs_ctx:
                method: Callable[[ir.Call], _V] = getattr(self, inline)
                return method(node)
            return self.lazy_generic(node, impl)
        return self.eager(node, impl, route)

    def fused(self, node: ir.Call, is_and: bool) -> _V:
        """`a and b` over values that cannot be errors (compile._FUSED): Python's own."""
        a = self.gen(node.args[0])
        stmts, b = self.sub(lambda: self.gen(node.args[1]))
        if not stmts:
            return _V(_N.BoolOp(op=ast.And() if is_and else ast.Or(), values=[a.expr, b.expr]),
                      a.maybe or b.maybe)
        t = self.into_temp(a)
        test = _load(t) if is_and else _N.UnaryOp(op=ast.Not(), operand=_load(t))
        self.block.append(_N.If(test=test, body=stmts + [_assign(t, b.expr)], orelse=[]))
        return _V(_load(t), a.maybe or b.maybe)

    def eager(self, node: ir.Call, impl: Any, route: str | None) -> _V:
        spec = node.spec
        args = node.args
        n = len(args)
        scan = [a.may_error and not spec.accepts_errors for a in args]
        lists = [a.type.kind in ("List", "Many") for a in args]
        # compile._eager: at most two arguments, no context, no lists -> stop at the first
        # error value; otherwise evaluate every argument, then take the first error value.
        immediate = not spec.needs_ctx and not any(lists) and n <= 2
        route, own = self.open(route)
        vals: list[_V] = []
        if immediate:
            for i, a in enumerate(args):
                mark = self.mark()
                if scan[i]:
                    v = self.guard(self.gen(a, route if self.depth < _CAP else None), route)
                else:
                    v = self.gen(a)
                self.keep_order(vals, mark)
                vals.append(v)
                self.settle(route, vals)
        else:
            vals = self.gen_all(args)
            if any(scan):
                self.first_error(vals, scan, lists, route)
        result = self.apply(node, impl, vals, route)
        return self.close(route, own, result)

    def first_error(self, vals: list[_V], scan: list[bool], lists: list[bool],
                    route: str) -> None:
        for i, v in enumerate(vals):
            vals[i] = self.materialize(v)
        if any(s and is_list for s, is_list in zip(scan, lists)) or sum(scan) > 3:
            err = self.name("t")
            self.block.append(_assign(err, _call(
                self.helper(_first_error),
                _N.Tuple(elts=[v.expr for v in vals], ctx=ast.Load()),
                self.helper(tuple(scan)), self.helper(tuple(lists)))))
            branch = _N.If(test=_cmp(_load(err), ast.IsNot(), _const(None)),
                            body=[_assign(route, _load(err))], orelse=[])
            self.block.append(branch)
            self.block = branch.orelse
            self.depth += 1
            self.routed.add(route)
            self.risky.add(route)
        else:
            for i, v in enumerate(vals):
                if scan[i]:
                    vals[i] = self.guard(v, route)
        for i, v in enumerate(vals):
            if scan[i]:
                vals[i] = v._replace(maybe=False)

    def apply(self, node: ir.Call, impl: Any, vals: list[_V], route: str) -> _V:
        spec = node.spec
        built = self.inline(node, impl, vals)
        if built is not None:
            expr, kind, raises = built
            if not raises:
                return _V(expr, False, kind)
            return self.attempt(expr, node.span, route, kind, False)
        if not (spec.category == "logic" or spec.decimal_free
                or any(impl is f for f in self.known["free"])):
            self.needs_swap = True
        head = [self.ctx()] if spec.needs_ctx else []
        expr = _call(self.impl(impl), *head, *(v.expr for v in vals))
        # A lambda's value is a function, never an error, but what it returns may be one and
        # a higher-order function (REDUCE's accumulator, MAP's items) can hand it back.
        maybe = spec.can_error or spec.accepts_errors or any(v.maybe for v in vals) \
            or any(type(a) is ir.Lambda for a in node.args)
        return self.attempt(expr, node.span, route, None, maybe, trusted=not maybe)


# -------------------------------------------------------------------------- runtime helpers


def _context_maker(limits: Limits, clock: bool) -> Callable[[Any], EvalContext]:
    """Program.evaluate's context: `now` checked, the clock read when none was given (only
    when a function may read it: every builtin that does is volatile)."""

    def make(now: Any) -> EvalContext:
        if now is None:
            now = dt.datetime.now(_UTC) if clock else _EPOCH
        elif not isinstance(now, dt.datetime) or now.tzinfo is None or now.utcoffset() is None:
            raise EvalError("now must be an aware datetime", code="E301")
        return EvalContext(limits, now, False)

    return make


def _now_checker(now: Any) -> None:
    if not isinstance(now, dt.datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise EvalError("now must be an aware datetime", code="E301")


def _fault_mapper(source: str) -> Callable[[Exception], Exception]:
    """Program.evaluate's mapping of what escapes a run: nothing but FormulaError leaves."""

    def fault(exc: Exception) -> Exception:
        if isinstance(exc, FormulaError):
            return exc.with_source(source)
        if isinstance(exc, RecursionError):
            err: Exception = LimitExceeded("evaluation nested too deeply", code="E403")
        elif isinstance(exc, MemoryError):
            err = LimitExceeded("evaluation ran out of memory", code="E407")
        else:
            err = InternalError(f"internal error while evaluating: {type(exc).__name__}: "
                                f"{exc}", source=source)
            err.__cause__ = exc
            return err
        err.__cause__ = None
        err.__suppress_context__ = True
        return err

    return fault


# ------------------------------------------------------------------------------ entry points


def _prepared_context() -> contextvars.Context:
    """An otherwise empty `contextvars.Context` whose decimal context is `CONTEXT`: entering a
    copy of it (``Context.run``) is the engine's context switch in ~30 ns instead of the
    ~150 ns of ``decimal.setcontext`` twice."""
    prepared = contextvars.Context()
    prepared.run(decimal.setcontext, CONTEXT)
    return prepared


_PREPARED = _prepared_context()  # never entered itself, only copied: nothing is shared


def _external(value: Any) -> Any:
    """Program.evaluate's conversion of the engine value out."""
    tv = type(value)
    if tv is bool or tv is str or value is None or tv is ErrorValue or (
            tv is Decimal and (value or not value.is_signed())):
        return value  # already the caller's form (a -0 is made 0 by `to_external`)
    return to_external(value)


def _returned(g: _Gen, v: _V, t: Type) -> ast.expr:
    """The value `Program.evaluate` would return for an engine value of static type t."""
    if t.kind in ("Boolean", "Text", "Date", "DateTime", "Duration", "Blank"):
        return v.expr  # bool, str, date, datetime, timedelta, None or an error value: as is
    if t.kind == "Number":
        v = g.materialize(v)
        # a Decimal, an error value (truthy) or a blank as it is, but a -0 (`0 * -1`): 0 to
        # the caller, as in Excel (`to_external`); a constant (an int or None) is never -0
        plain: ast.expr = v.expr if isinstance(v.expr, ast.Constant) else _N.IfExp(
            test=_N.BoolOp(op=ast.Or(), values=[
                v.expr, _cmp(v.expr, ast.Is(), _const(None)),
                _N.UnaryOp(op=ast.Not(), operand=_call(g.helper(Decimal.is_signed), v.expr))]),
            body=v.expr, orelse=g.helper(ZERO))
        if v.kind == "dec":
            return plain
        return _N.IfExp(test=_cmp(_call(g.TYPE, v.expr), ast.Is(), g.helper(int)),
                         body=_call(g.helper(Decimal), v.expr), orelse=plain)
    return _call(g.helper(_external), v.expr)


def _assemble(root: IR, *, variables: Mapping[str, tuple[int, Type]], limits: Limits,
              source: str, swap: str, external: bool, folder: _Folder, known: dict[str, Any],
              consts: dict[int, Any]) -> tuple[ast.Module, dict[str, Any], _Gen]:
    """``swap``: "no" (CONTEXT methods, no switch), "run" (the body runs in a copy of
    `_PREPARED`) or "set" (decimal.setcontext around the body, when a host function runs: it
    sees the caller's context variables)."""
    g = _Gen(limits=limits, swap=swap != "no", folder=folder, known=known, consts=consts)
    inputs = sorted((slot, name, t) for name, (slot, t) in variables.items())
    binding = g.bind_inputs(inputs)
    result = g.gen(root)
    out = _returned(g, result, root.type) if external else result.expr
    body: list[ast.stmt] = g.block + [_N.Return(value=out)]
    functions: list[ast.stmt] = []
    if swap == "run":
        params = [f"_v{slot}" for slot, _, _ in inputs] + (["_c0"] if g.ctx_used else [])
        functions.append(_function("_f1", params, body))
        body = [_N.Return(value=_call(
            g.helper(contextvars.Context.run),
            _call(g.helper(contextvars.Context.copy), g.helper(_PREPARED)), _load("_f1"),
            *(_load(p) for p in params)))]
    elif swap == "set":  # Program.evaluate's context switch, once per call
        body = [_assign("_s0", _call(g.helper(decimal.getcontext))),
                _N.Expr(value=_call(g.helper(decimal.setcontext), g.helper(CONTEXT))),
                _N.Try(body=body, handlers=[], orelse=[], finalbody=[_N.Expr(
                    value=_call(g.helper(decimal.setcontext), _load("_s0")))])]
    guarded = _N.Try(body=body, handlers=[_N.ExceptHandler(
        type=g.helper(Exception), name="_e0",
        body=[_N.Raise(exc=_call(g.helper(_fault_mapper(source)), _load("_e0")), cause=None)])],
        orelse=[], finalbody=[])
    prelude = list(binding)
    if g.ctx_used:
        prelude.append(_assign("_c0", _call(g.helper(_context_maker(limits, g.clock)),
                                            _load("_w0"))))
    elif g.uses_ctx:  # the closures would build a context: `now` is checked all the same
        prelude.append(_N.If(test=_cmp(_load("_w0"), ast.IsNot(), _const(None)),
                              body=[_N.Expr(value=_call(g.helper(_now_checker), _load("_w0")))],
                              orelse=[]))
    main = _function("_f0", ["_x0", "_w0"], prelude + [guarded], defaults=[_const(None)])
    module = ast.Module(body=functions + [main], type_ignores=[])
    return module, {"__builtins__": {}, **g.helpers}, g


def _plan(root: IR, *, variables: Mapping[str, tuple[int, Type]], limits: Limits,
          source: str, external: bool) -> tuple[ast.Module, dict[str, Any], _Gen]:
    folder, known = _Folder(limits), _known()
    consts: dict[int, Any] = {}
    kw = dict(variables=variables, limits=limits, source=source, external=external,
              folder=folder, known=known, consts=consts)
    with decimal.localcontext(CONTEXT):  # as Program.__init__ builds the closures
        plan = _assemble(root, swap="no", **kw)  # type: ignore[arg-type]
        g = plan[2]
        if g.needs_swap or g.penalty > _SWAP_PENALTY:
            plan = _assemble(root, swap="set" if g.foreign else "run", **kw)  # type: ignore[arg-type]
    return plan


def generate_ast(root: IR, *, variables: Mapping[str, tuple[int, Type]], limits: Limits,
                 source: str = "", external: bool = False) -> tuple[ast.Module, dict[str, Any]]:
    """The module `generate` compiles and the globals its functions run with (for tests, and
    for reading what a formula became: ``ast.unparse(module)``)."""
    module, namespace, _ = _plan(root, variables=variables, limits=limits, source=source,
                                 external=external)
    return module, namespace


def generate(root: IR, *, variables: Mapping[str, tuple[int, Type]], limits: Limits,
             metered: bool, source: str = "", external: bool = False,
             strict: bool = False) -> Generated | None:
    """One Python function ``f(variables, now=None)`` with the closure backend's semantics
    (see the module doc); None for a metered program (keep the closures: they meter) or when
    generation fails (``strict=True`` raises instead).

    ``variables`` is the checker's ``{name: (slot, type)}`` (`Program.variables`). Like
    `Program.evaluate`, the function accepts any mapping or None, raises E301/E302/E303 for
    bad inputs and E301 for a naive ``now`` (without the source, as evaluate does), and while
    running raises nothing but `FormulaError` (with the source). It returns the engine value;
    with ``external=True``, the value `Program.evaluate` returns (ints as Decimal, lists...)."""
    if metered:
        return None
    try:
        module, namespace, _ = _plan(root, variables=variables, limits=limits, source=source,
                                     external=external)
        code = compile(module, "<formulane>", "exec", dont_inherit=True)  # safe: compiled from an ast built node by node, no user text
        bodies = {c.co_name: c for c in code.co_consts if isinstance(c, types.CodeType)}
        for name in sorted(bodies):  # _f0, and _f1 (the body it runs in the engine context)
            defaults = (None,) if name == "_f0" else None
            namespace[name] = types.FunctionType(bodies[name], namespace, name, defaults)  # safe: our code object, globals = our helpers only, no builtins
        return namespace["_f0"]  # type: ignore[no-any-return]
    except Exception:  # RecursionError (too deep for Python's compiler) included
        if strict:
            raise
        return None  # the closures run it


__all__ = ["Generated", "NAME_PATTERN", "generate", "generate_ast"]
