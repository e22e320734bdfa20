"""Constant folding, once, on the checked IR: a pass from checked IR to folded IR.

A call of an eager, pure function whose arguments are all literal numbers, texts, booleans or
dates is replaced by its value, computed by the function's own scalar implementation (so the
columnar backends give the scalar engine's answer, exactly, where they would otherwise
compute it in DOUBLE or Decimal(38, 18) on every row). An implementation that fails with an
error value folds to that error value. Folding runs bottom-up, so a constant sub-expression
of any depth becomes one `Const` (``ROUND(1, 1/0)`` is ``#DIV/0!``).

What is folded is what every columnar backend holds exactly: whole numbers below 1e38 and
other numbers below 1e20, rounded at 18 decimal places (Decimal(38, 18)); DateTimes are left
to the backends (a zone's reading). Volatile functions, functions that need the evaluation
context (limits, clock, meter), lazy functions (IF decides what to evaluate) and functions
that inspect error values are never folded. A backend passes ``keep`` to leave the calls it
refuses in place, so that its refusal (with the reason) is still reported.

The output is new immutable nodes (``Const.folded`` is true on each folded value); the input is
not changed, and a subtree with nothing to fold is returned as it is.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import replace
from decimal import Decimal
from typing import Any, Callable

from ..values import CONTEXT, ErrorValue, XLError
from . import ir

#: Returned by `fold_call` when the call is not folded.
NOT_FOLDED: Any = object()
_WHOLE_LIMIT = Decimal("1e38")
_FRACTION_LIMIT = Decimal("1e20")
_EXACT = decimal.Context(prec=60)


def fold(root: ir.IR, keep: Callable[[ir.Call], bool] | None = None) -> ir.IR:
    """``root`` with every foldable constant call replaced by its value (see the module docs).
    ``keep(call)`` true leaves that call (and so every call above it) unfolded."""
    return _fold(root, keep)


def _fold(node: ir.IR, keep: Callable[[ir.Call], bool] | None) -> ir.IR:
    kind = type(node)
    if kind is ir.Const or kind is ir.Var:
        return node
    if kind is ir.Call:
        call: ir.Call = node  # type: ignore[assignment]
        args = tuple(_fold(a, keep) for a in call.args)
        if any(a is not b for a, b in zip(args, call.args)):
            call = replace(call, args=args)
        if keep is not None and keep(call):
            return call
        value = fold_call(call)
        if value is NOT_FOLDED:
            return call
        return ir.Const(value, call.type, call.span, may_error=type(value) is ErrorValue,
                        folded=True)
    if kind is ir.Lambda:
        lam: ir.Lambda = node  # type: ignore[assignment]
        body = _fold(lam.body, keep)
        return lam if body is lam.body else replace(lam, body=body)
    if kind is ir.Let:
        let: ir.Let = node  # type: ignore[assignment]
        values = tuple(_fold(v, keep) for v in let.values)
        body = _fold(let.body, keep)
        if body is let.body and all(a is b for a, b in zip(values, let.values)):
            return let
        return replace(let, values=values, body=body)
    if kind is ir.ListOf:
        lst: ir.ListOf = node  # type: ignore[assignment]
        items = tuple(_fold(i, keep) for i in lst.items)
        if all(a is b for a, b in zip(items, lst.items)):
            return lst
        return replace(lst, items=items)
    if kind is ir.IndexOf:
        idx: ir.IndexOf = node  # type: ignore[assignment]
        obj, index = _fold(idx.obj, keep), _fold(idx.index, keep)
        if obj is idx.obj and index is idx.index:
            return idx
        return replace(idx, obj=obj, index=index)
    if kind is ir.FieldOf:
        fld: ir.FieldOf = node  # type: ignore[assignment]
        obj = _fold(fld.obj, keep)
        return fld if obj is fld.obj else replace(fld, obj=obj)
    if kind is ir.Coerce:
        co: ir.Coerce = node  # type: ignore[assignment]
        inner = _fold(co.node, keep)
        return co if inner is co.node else replace(co, node=inner)
    raise TypeError(kind.__name__)


def fold_call(node: ir.Call) -> Any:
    """The value (or `ErrorValue`) of an eager, pure call whose arguments are all literal
    numbers, texts, booleans or dates, by the scalar implementation; `NOT_FOLDED` otherwise
    (and for a value the columnar backends could not hold exactly)."""
    spec = node.spec
    if spec.lazy or spec.volatile or spec.needs_ctx or spec.accepts_errors or not node.args:
        return NOT_FOLDED
    values = []
    for a in node.args:
        if type(a) is not ir.Const or isinstance(a.value, (ErrorValue, tuple)) or a.value is None:
            return NOT_FOLDED
        values.append(a.value)
    impl = node.sig.impl or spec.impl
    if impl is None:
        return NOT_FOLDED
    try:
        with decimal.localcontext(CONTEXT):
            value = impl(*values)
    except XLError as exc:
        code = getattr(exc, "code", None)
        return ErrorValue(code) if isinstance(code, str) else NOT_FOLDED
    except Exception:  # noqa: BLE001 - not foldable: left to the backend, which reports it
        return NOT_FOLDED
    return _held(value)


def _held(value: Any) -> Any:
    """``value`` as a constant the columnar backends hold exactly, else `NOT_FOLDED`."""
    if isinstance(value, ErrorValue):
        return value
    if isinstance(value, dt.datetime):
        return NOT_FOLDED  # a DateTime keeps its zone's reading: left to the forms
    if isinstance(value, (bool, str, dt.date)):
        return value
    if isinstance(value, (int, Decimal)):
        number = Decimal(value)
        if number == number.to_integral_value() and abs(number) < _WHOLE_LIMIT:
            return number.quantize(Decimal(1), context=_EXACT)
        if not abs(number) < _FRACTION_LIMIT:
            return NOT_FOLDED  # left to the engine's own arithmetic and range tests
        return number.quantize(Decimal("1e-18"), context=_EXACT).normalize()
    return NOT_FOLDED


__all__ = ["NOT_FOLDED", "fold", "fold_call"]
