"""The code generator's inline forms: operators, lazy functions and the binding of inputs.

`_Operators` is a mixin of `codegen._Gen` (it uses the generator's names, helpers, blocks and
error routing); each method mirrors the closure backend's implementation it names, so the
generated function keeps the closures' semantics node for node (see `codegen`'s module doc).
The runtime helpers at the end are what the generated code calls for these forms.
"""

from __future__ import annotations

import ast
import datetime as dt
import operator
from decimal import Decimal
from typing import Any, Callable, Mapping

from ..types import Type
from ..values import CONTEXT, DIV0, NA, XLError
from . import ir
from ._pyast import _N, _V, _assign, _call, _cmp, _const, _function, _join, _load, _store
from .compile import _CAUGHT, _NOT_CONST, to_error
from ..runtime import EvalContext

_SMALL = 10**15  # as program._SMALL: small ints are taken as they are
_COMPARE = {operator.eq: ast.Eq, operator.ne: ast.NotEq, operator.lt: ast.Lt,
            operator.le: ast.LtE, operator.gt: ast.Gt, operator.ge: ast.GtE}
_HUNDRED = Decimal(100)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


class _Operators:
    """Inline operators, lazy functions and input binding (a mixin of `codegen._Gen`)."""

    # Provided by codegen._Gen (declared for readers and type checkers).
    known: dict[str, Any]
    swap: bool
    limits: Any
    block: list[ast.stmt]
    slots: dict[int, _V]
    input_slots: set[int]
    needs_swap: bool
    TYPE: ast.Name
    name: Callable[..., str]
    helper: Callable[..., ast.Name]
    impl: Callable[..., ast.Name]
    ctx: Callable[..., ast.Name]
    charge: Callable[..., None]
    materialize: Callable[..., _V]
    into_temp: Callable[..., str]
    sub: Callable[..., Any]
    gen: Callable[..., _V]
    function_body: Callable[..., list[ast.stmt]]
    is_error: Callable[..., ast.Compare]
    not_error: Callable[..., ast.Compare]

    def inline(self, node: ir.Call, impl: Any,
               vals: list[_V]) -> tuple[ast.expr, str | None, bool] | None:
        """The expression of a known operator (by implementation identity), its Number kind
        and whether it may raise; None for any other implementation."""
        k = self.known
        if len(vals) == 2 and any(impl is op for op in _COMPARE):
            a, b = (self.int_const(v) for v in vals)
            return _cmp(a, _COMPARE[impl](), b), None, False
        if impl is k["not"] and len(vals) == 1:
            return _N.UnaryOp(op=ast.Not(), operand=vals[0].expr), None, False
        if impl is k["concat"] and len(vals) == 2 and not any(v.maybe for v in vals) and all(
                a.type.kind == "Text" and not a.type.nullable for a in node.args):
            return self.concat(vals)
        if not all(a.type.kind == "Number" and not a.type.nullable for a in node.args):
            return None
        if len(vals) == 2:
            if impl is k["add"]:
                return self.add_sub(vals, ast.Add(), CONTEXT.add)
            if impl is k["sub"]:
                return self.add_sub(vals, ast.Sub(), CONTEXT.subtract)
            if impl is k["mul"]:
                return self.mul(vals)
            if impl is k["div"]:
                return self.div(vals)
        elif len(vals) == 1:
            if impl is k["neg"]:
                return self.unary(vals[0], ast.USub(), CONTEXT.minus)
            if impl is k["pos"]:
                return self.unary(vals[0], ast.UAdd(), CONTEXT.plus)
            if impl is k["percent"]:
                v0 = vals[0]
                if self.swap:
                    return _N.BinOp(left=v0.expr, op=ast.Div(),
                                     right=self.helper(_HUNDRED)), "dec", True
                self.charge(1)
                return _call(self.helper(CONTEXT.divide), v0.expr, self.helper(_HUNDRED)), \
                    "dec", True
        return None

    def int_const(self, v: _V) -> ast.expr:
        """An integral Decimal constant compared as an int (comparisons are exact either way;
        int against int is the fast path for small-int inputs)."""
        value = v.value
        if type(value) is Decimal and value.is_finite() and abs(value) < _SMALL \
                and value == value.to_integral_value(context=CONTEXT):
            return _const(int(value))
        return v.expr

    def add_sub(self, vals: list[_V], op: ast.operator,
                method: Callable[..., Any]) -> tuple[ast.expr, str | None, bool]:
        a, b = vals
        if a.kind == "int" and b.kind == "int":
            return _N.BinOp(left=a.expr, op=op, right=b.expr), "int", False
        dec = "dec" in (a.kind, b.kind)
        if self.swap:  # operator.add itself, under CONTEXT
            return _N.BinOp(left=a.expr, op=op, right=b.expr), "dec" if dec else None, True
        self.charge(1)
        if dec:
            return _call(self.helper(method), a.expr, b.expr), "dec", True
        # int + int stays an exact int, as operator.add keeps it; anything else in CONTEXT.
        vals[0] = a = self.materialize(a)
        vals[1] = b = self.materialize(b)
        both: list[ast.expr] = [_cmp(_call(self.TYPE, x.expr), ast.Is(), self.helper(int)) for x in (a, b)
                if x.kind != "int"]
        test = both[0] if len(both) == 1 else _N.BoolOp(op=ast.And(), values=both)
        return _N.IfExp(test=test, body=_N.BinOp(left=a.expr, op=op, right=b.expr),
                         orelse=_call(self.helper(method), a.expr, b.expr)), None, True

    def mul(self, vals: list[_V]) -> tuple[ast.expr, str | None, bool]:
        a, b = vals
        # operators._multiply: int * int goes through Decimal, anything else is a * b; both are
        # CONTEXT.multiply exactly.
        dec = "dec" in (a.kind, b.kind)
        if self.swap and dec:
            return _N.BinOp(left=a.expr, op=ast.Mult(), right=b.expr), "dec", True
        if dec:
            self.charge(1)
        return _call(self.helper(CONTEXT.multiply), a.expr, b.expr), "dec", True

    def div(self, vals: list[_V]) -> tuple[ast.expr, str | None, bool]:
        a, b = vals
        dec = "dec" in (a.kind, b.kind)
        if dec and not self.swap:
            self.charge(1)
        if b.value is not _NOT_CONST and type(b.value) in (int, Decimal) and b.value:
            if self.swap and dec:
                return _N.BinOp(left=a.expr, op=ast.Div(), right=b.expr), "dec", True
            return _call(self.helper(CONTEXT.divide), a.expr, b.expr), "dec", True
        # operators._divide: a zero divisor is #DIV/0! "division by zero" (0/0 included).
        vals[0] = a = self.materialize(a)
        vals[1] = b = self.materialize(b)
        quotient: ast.expr = _N.BinOp(left=a.expr, op=ast.Div(), right=b.expr) \
            if self.swap and dec else _call(self.helper(CONTEXT.divide), a.expr, b.expr)
        return _N.IfExp(test=b.expr, body=quotient,
                         orelse=_call(self.helper(_divide_by_zero))), "dec", True

    def unary(self, a: _V, op: ast.unaryop,
              method: Callable[..., Any]) -> tuple[ast.expr, str | None, bool]:
        if a.kind == "int":
            return _N.UnaryOp(op=op, operand=a.expr), "int", False
        if self.swap:
            return _N.UnaryOp(op=op, operand=a.expr), a.kind, True
        self.charge(1)
        if a.kind == "dec":
            return _call(self.helper(method), a.expr), "dec", True
        a = self.materialize(a)
        test = _cmp(_call(self.TYPE, a.expr), ast.Is(), self.helper(int))
        return _N.IfExp(test=test, body=_N.UnaryOp(op=op, operand=a.expr),
                         orelse=_call(self.helper(method), a.expr)), None, True

    def concat(self, vals: list[_V]) -> tuple[ast.expr, str | None, bool]:
        """`&` of two texts: operators.concat without the context (the length is checked
        before joining, by the same check_text)."""
        a, b = (self.materialize(v) for v in vals)
        lengths = [_const(len(v.value)) if type(v.value) is str
                   else _call(self.helper(len), v.expr) for v in (a, b)]
        n = self.name("t")
        self.block.append(_assign(n, _N.BinOp(left=lengths[0], op=ast.Add(), right=lengths[1])))
        check = EvalContext(self.limits, _EPOCH, False).check_text
        self.block.append(_N.If(
            test=_cmp(_load(n), ast.Gt(), _const(self.limits.max_text_length)),
            body=[_N.Expr(value=_call(self.helper(check), _load(n)))], orelse=[]))
        return _N.BinOp(left=a.expr, op=ast.Add(), right=b.expr), None, False

    # ----------------------------------------------------------------------- lazy functions

    def lazy_generic(self, node: ir.Call, impl: Any) -> _V:
        """Call the lazy implementation with generated thunks (IFS, SWITCH, CHOOSE...)."""
        spec = node.spec
        if not (spec.category == "logic" or spec.decimal_free):
            self.needs_swap = True
        thunks = []
        for arg in node.args:
            name = self.name("l")
            body = self.function_body(lambda arg=arg: self.gen(arg))
            self.block.append(_function(name, [self.name("p")], body))
            thunks.append(_load(name))
        # The frame a lazy implementation receives: only slot 0 (the context) is defined.
        frame = _N.List(elts=[self.ctx()], ctx=ast.Load()) if spec.needs_ctx else _const(None)
        t, e = self.name("t"), self.name("e")
        self.block.append(_N.Try(
            body=[_assign(t, _call(self.impl(impl), frame, *thunks))],
            handlers=[_N.ExceptHandler(type=self.helper(_CAUGHT), name=e, body=[_assign(
                t, _call(self.helper(to_error), _load(e), self.helper(node.span)))])],
            orelse=[], finalbody=[]))
        return _V(_load(t), True)

    def if_(self, node: ir.Call) -> _V:
        args = node.args
        if len(args) not in (2, 3):
            return self.lazy_generic(node, node.sig.impl or node.spec.impl)
        cond = args[0]
        c = self.gen(cond)
        clean = not c.maybe and cond.type.kind == "Boolean" and not cond.type.nullable
        then_stmts, tv = self.sub(lambda: self.gen(args[1]))
        if len(args) == 3:
            else_stmts, ev = self.sub(lambda: self.gen(args[2]))
        else:
            else_stmts, ev = [], _V(_const(None), False)
        kind = _join(tv.kind, ev.kind)
        maybe = tv.maybe or ev.maybe or (not clean and c.maybe)
        if clean and not then_stmts and not else_stmts:
            return _V(_N.IfExp(test=c.expr, body=tv.expr, orelse=ev.expr), maybe, kind)
        t = self.name("t")
        then_body = then_stmts + [_assign(t, tv.expr)]
        else_body = else_stmts + [_assign(t, ev.expr)]
        if clean:
            self.block.append(_N.If(test=c.expr, body=then_body, orelse=else_body))
        else:
            # logic.if_: True -> then, False -> else, anything else (an error value) is the value.
            c = self.materialize(c)
            self.block.append(_N.If(
                test=_cmp(c.expr, ast.Is(), _const(True)), body=then_body,
                orelse=[_N.If(test=_cmp(c.expr, ast.Is(), _const(False)), body=else_body,
                               orelse=[_assign(t, c.expr)])]))
        return _V(_load(t), maybe, kind)

    def iferror(self, node: ir.Call) -> _V:
        v = self.gen(node.args[0])
        if not v.maybe:
            return v  # never an error value: the fallback never runs
        t = self.into_temp(v)
        stmts, fb = self.sub(lambda: self.gen(node.args[1]))
        self.block.append(_N.If(test=self.is_error(_load(t)),
                                 body=stmts + [_assign(t, fb.expr)], orelse=[]))
        return _V(_load(t), fb.maybe, _join(v.kind, fb.kind))

    def ifna(self, node: ir.Call) -> _V:
        v = self.gen(node.args[0])
        if not v.maybe:
            return v
        t = self.into_temp(v)
        stmts, fb = self.sub(lambda: self.gen(node.args[1]))
        test = _N.BoolOp(op=ast.And(), values=[
            self.is_error(_load(t)),
            _cmp(_call(self.helper(_code_of), _load(t)), ast.Eq(), _const(NA))])
        self.block.append(_N.If(test=test, body=stmts + [_assign(t, fb.expr)], orelse=[]))
        return _V(_load(t), True, _join(v.kind, fb.kind))

    def coalesce(self, node: ir.Call) -> _V:
        """COALESCE, ?? and IFBLANK: the first value that is not blank, left to right."""
        first = self.gen(node.args[0])
        if len(node.args) == 1:
            return first
        t = self.into_temp(first)
        maybe, kind = first.maybe, first.kind
        for arg in node.args[1:]:
            stmts, v = self.sub(lambda arg=arg: self.gen(arg))
            self.block.append(_N.If(test=_cmp(_load(t), ast.Is(), _const(None)),
                                     body=stmts + [_assign(t, v.expr)], orelse=[]))
            maybe, kind = maybe or v.maybe, _join(kind, v.kind)
        return _V(_load(t), maybe, kind)

    def chain(self, node: ir.Call, stop: bool, finish: bool) -> _V:
        """logic._all_true and operators._lazy_and/_lazy_or: stop at `stop` or an error value.
        The test is repeated after each step (flat, not nested): a value that stopped the
        chain keeps failing it."""
        first = self.gen(node.args[0])
        t = self.into_temp(first)

        def go() -> ast.expr:
            return _N.BoolOp(op=ast.And(), values=[
                _cmp(_load(t), ast.IsNot(), _const(stop)), self.not_error(_load(t))])

        for arg in node.args[1:]:
            stmts, v = self.sub(lambda arg=arg: self.gen(arg))
            self.block.append(_N.If(test=go(), body=stmts + [_assign(t, v.expr)], orelse=[]))
        if finish:
            self.block.append(_N.If(test=go(), body=[_assign(t, _const(not stop))], orelse=[]))
        return _V(_load(t), True)

    def all_and(self, node: ir.Call) -> _V:
        return self.chain(node, False, True)

    def all_or(self, node: ir.Call) -> _V:
        return self.chain(node, True, True)

    def lazy_and(self, node: ir.Call) -> _V:
        if len(node.args) != 2:
            return self.lazy_generic(node, node.sig.impl or node.spec.impl)
        return self.chain(node, False, False)

    def lazy_or(self, node: ir.Call) -> _V:
        if len(node.args) != 2:
            return self.lazy_generic(node, node.sig.impl or node.spec.impl)
        return self.chain(node, True, False)

    # ------------------------------------------------------------------------------- inputs

    def bind_inputs(self, inputs: list[tuple[int, str, Type]]) -> list[ast.stmt]:
        """Program.evaluate's binding: every value fetched (a KeyError takes the ordered slow
        path of converters, which words E302), then the fast checks in slot order, with the
        same converters for anything else."""
        from ..values import to_internal
        from .program import _bind, _converter

        out: list[ast.stmt] = [_N.If(
            test=_cmp(_call(self.TYPE, _load("_x0")), ast.IsNot(), self.helper(dict)),
            body=[_assign("_x0", _call(self.helper(_as_mapping), _load("_x0")))], orelse=[])]
        if not inputs:
            return out
        names = [f"_v{slot}" for slot, _, _ in inputs]
        for slot, _, _ in inputs:
            self.slots[slot] = _V(_load(f"_v{slot}"), False)
            self.input_slots.add(slot)
        fetch: list[ast.stmt] = [
            _assign(v, _N.Subscript(value=_load("_x0"), slice=_const(name), ctx=ast.Load()))
            for v, (_, name, _) in zip(names, inputs)]
        converters = tuple(_converter(name, slot, t) for slot, name, t in inputs)
        slow = _call(self.helper(_slow_inputs), _load("_x0"), self.helper(converters),
                     self.helper(tuple(slot for slot, _, _ in inputs)))
        unpack = _N.Tuple(elts=[_store(v) for v in names], ctx=ast.Store())
        checks: list[ast.stmt] = []
        for v, (slot, name, t) in zip(names, inputs):
            x = _load(v)
            again: list[ast.stmt] = [_assign(v, _call(self.helper(_bind(to_internal, t, name)), x))]
            if t.nullable or t.kind not in ("Number", "Text", "Boolean"):
                checks += again
            elif t.kind == "Number":
                k = self.name("t")
                small = _N.Compare(left=_const(-_SMALL), ops=[ast.Lt(), ast.Lt()],
                                    comparators=[x, _const(_SMALL)])
                # values.number_in for a finite Decimal: CONTEXT.plus, which overflows exactly
                # where number_in refuses (|x| >= 1e308); the converter then words the error.
                fits = _N.BoolOp(op=ast.And(), values=[
                    _cmp(_load(k), ast.Is(), self.helper(Decimal)),
                    _call(self.helper(Decimal.is_finite), x)])
                rounded = _N.Try(
                    body=[_assign(v, _call(self.helper(CONTEXT.plus), x))],
                    handlers=[_N.ExceptHandler(type=self.helper(ArithmeticError), name=None,
                                                body=list(again))], orelse=[], finalbody=[])
                # values.number_in for a float: by its shortest repr, integral ones exactly; a
                # small whole float is the small int it is (as an int input). The range tests
                # also refuse inf and NaN (every comparison with NaN is false).
                small_whole = _N.BoolOp(op=ast.And(), values=[
                    _N.Compare(left=_const(-float(_SMALL)), ops=[ast.Lt(), ast.Lt()],
                               comparators=[x, _const(float(_SMALL))]),
                    _call(self.helper(float.is_integer), x)])
                whole = _N.BoolOp(op=ast.And(), values=[
                    _call(self.helper(float.is_integer), x),
                    _N.Compare(left=_const(-2.0 ** 53), ops=[ast.Lt(), ast.Lt()],
                                comparators=[x, _const(2.0 ** 53)])])
                floating = _N.If(
                    test=_cmp(_load(k), ast.Is(), self.helper(float)),
                    body=[_N.If(
                        test=small_whole, body=[_assign(v, _call(self.helper(int), x))],
                        orelse=[_N.If(
                            test=_N.Compare(left=_const(-1e308), ops=[ast.Lt(), ast.Lt()],
                                            comparators=[x, _const(1e308)]),
                            body=[_N.If(test=whole,
                                        body=[_assign(v, _call(self.helper(Decimal),
                                                               _call(self.helper(int), x)))],
                                        orelse=[_assign(v, _call(self.helper(Decimal),
                                                                 _call(self.helper(repr), x)))])],
                            orelse=list(again))])],
                    orelse=list(again))
                checks += [_assign(k, _call(self.TYPE, x)), _N.If(
                    test=_cmp(_load(k), ast.Is(), self.helper(int)),
                    body=[_N.If(test=_N.UnaryOp(op=ast.Not(), operand=small), body=again,
                                 orelse=[])],
                    orelse=[_N.If(test=fits, body=[rounded], orelse=[floating])])]
            elif t.kind == "Text":
                test = _N.BoolOp(op=ast.Or(), values=[
                    _cmp(_call(self.TYPE, x), ast.IsNot(), self.helper(str)),
                    _N.UnaryOp(op=ast.Not(), operand=_call(self.helper(str.isascii), x))])
                checks.append(_N.If(test=test, body=again, orelse=[]))
            else:
                checks.append(_N.If(test=_cmp(_call(self.TYPE, x), ast.IsNot(),
                                               self.helper(bool)), body=again, orelse=[]))
        out.append(_N.Try(
            body=fetch,
            handlers=[_N.ExceptHandler(type=self.helper(KeyError), name=None,
                                        body=[_N.Assign(targets=[unpack], value=slow)])],
            orelse=checks, finalbody=[]))
        return out


# -------------------------------------------------------------------------- runtime helpers


def _as_mapping(variables: Any) -> Mapping[str, Any]:
    from .program import _as_mapping as as_mapping

    return as_mapping(variables)


def _slow_inputs(variables: Mapping[str, Any], converters: tuple[Any, ...],
                 slots: tuple[int, ...]) -> tuple[Any, ...]:
    """Program.evaluate after a KeyError: each converter in slot order (E302 for a missing
    variable that is not nullable, blank for one that is)."""
    frame: dict[int, Any] = {}
    for convert in converters:
        convert(variables, frame)
    return tuple(frame[s] for s in slots)


def _divide_by_zero() -> Any:
    raise XLError(DIV0, "division by zero")  # operators._divide's words


_code_of = operator.attrgetter("code")
