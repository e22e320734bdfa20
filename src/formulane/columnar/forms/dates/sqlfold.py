"""What the SQL date forms know when compiling: literal arguments and literal intermediate
values computed now, with the engine's semantics (`constant`, `_fold_binary`).

Contract: `constant` reads a sqlglot expression as a Python value where it is a literal (an
int or Decimal, a bool, NULL, a text, a date, an instant, a list of them, a Duration a form
made), through the compiler's bindings (`let`); `_fold_binary` is the literal result of a binary
operator over two literals (integer ``//`` and ``%`` truncate toward zero, NULL propagates,
AND/OR are three-valued), else `_NOT_CONSTANT`. Used by `sqlops.Q`'s operators.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Callable

from sqlglot import exp

from ...sql.let import _BINDER

# Folding: what the compiler knows (literal arguments, literal intermediate values) is computed
# now, with the engine's semantics (integer `//` and `%` truncate toward zero, NULL propagates,
# AND/OR are three-valued), so a literal year or a literal date costs no SQL at all.

_NOT_CONSTANT: Any = object()


def constant(e: exp.Expr) -> tuple[bool, Any]:
    """(True, value) when ``e`` is a literal: an int or Decimal, a bool, NULL (None), a text,
    a date (``CAST('...' AS DATE)``) or an instant (``CAST('...+00:00' AS TIMESTAMPTZ)``)."""
    while isinstance(e, exp.Paren):
        e = e.this
    if type(e) is exp.Column and not e.table:
        # an argument the compiler bound (`let`) may be a literal another form folded to
        binder = _BINDER.get()
        bound = None if binder is None else binder.exprs.get(e.name)
        return (False, None) if bound is None else constant(bound)
    if isinstance(e, exp.Neg):
        known, v = constant(e.this)
        if known and isinstance(v, (int, Decimal)) and not isinstance(v, bool):
            return True, -v
        return False, None
    if isinstance(e, exp.Literal):
        if e.is_string:
            return True, e.this
        text = e.this
        try:
            number = Decimal(text)
        except ArithmeticError:
            return False, None
        if not number.is_finite():
            return False, None
        if number == number.to_integral_value() and "." not in text and "e" not in text.lower():
            return True, int(number)
        return True, number
    if isinstance(e, exp.Boolean):
        return True, bool(e.this)
    if isinstance(e, exp.Case) and e.this is None:
        # a CASE of literal conditions (the compiler's coercion of a literal, TRUE to 1)
        for branch in e.args.get("ifs") or []:
            known, truth = constant(branch.this)
            if not known or not (truth is None or isinstance(truth, bool)):
                return False, None
            if truth:
                return constant(branch.args["true"])
        default = e.args.get("default")
        return (True, None) if default is None else constant(default)
    if isinstance(e, exp.Array):
        items = [constant(i) for i in e.expressions]
        if all(k for k, _ in items):
            return True, tuple(v for _, v in items)
        return False, None
    if isinstance(e, exp.Null):
        return True, None
    if isinstance(e, exp.Anonymous) and e.name == "TO_MICROSECONDS" and len(e.expressions) == 1:
        known, v = constant(e.expressions[0])
        if known and type(v) is int:
            return True, dt.timedelta(microseconds=v)  # `SqlOps.make_duration`
        return False, None
    if isinstance(e, exp.Cast) and isinstance(e.this, exp.Null):
        return True, None
    if isinstance(e, exp.Cast) and isinstance(e.this, exp.Literal) and e.this.is_string:
        to = e.to.this
        try:
            if to == exp.DataType.Type.DATE:
                return True, dt.date.fromisoformat(e.this.this)
            if to == exp.DataType.Type.TIMESTAMPTZ:
                v = dt.datetime.fromisoformat(e.this.this)
                if v.tzinfo is not None:
                    return True, v
        except ValueError:
            return False, None
    return False, None


def _number(v: Any) -> bool:
    return isinstance(v, (int, Decimal)) and not isinstance(v, bool)


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    exp.LT: lambda a, b: a < b, exp.LTE: lambda a, b: a <= b, exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b, exp.EQ: lambda a, b: a == b, exp.NEQ: lambda a, b: a != b,
}


def _fold_binary(cls: type, x: exp.Expr, y: exp.Expr) -> Any:
    """The literal result of ``x <op> y`` when both are literals, else `_NOT_CONSTANT`."""
    kx, a = constant(x)
    ky, b = constant(y)
    if cls is exp.And or cls is exp.Or:
        # three-valued: FALSE AND anything is FALSE, TRUE OR anything is TRUE (the other
        # operand is total: it cannot fail, so leaving it out changes nothing)
        decisive = cls is exp.Or
        if (kx and a is decisive) or (ky and b is decisive):
            return decisive
        if ky and b is (not decisive):  # x AND TRUE is x, x OR FALSE is x
            return x
        if kx and a is (not decisive):
            return y
        if not (kx and ky):
            return _NOT_CONSTANT
        if not all(v is None or isinstance(v, bool) for v in (a, b)):
            return _NOT_CONSTANT
        return None if a is None or b is None else a
    if not (kx and ky):
        # x + 0, x - 0, 0 + x and x * 1 are x (integers: the type stays the engine's)
        if ky and type(b) is int and ((b == 0 and cls in (exp.Add, exp.Sub))
                                      or (b == 1 and cls is exp.Mul)):
            return x
        if kx and type(a) is int and ((a == 0 and cls is exp.Add)
                                      or (a == 1 and cls is exp.Mul)):
            return y
        return _NOT_CONSTANT
    if a is None or b is None:
        return None
    if cls in _COMPARE:
        same = (_number(a) and _number(b)) or type(a) is type(b)
        return _COMPARE[cls](a, b) if same else _NOT_CONSTANT
    if not (type(a) is int and type(b) is int):
        return _NOT_CONSTANT  # decimal arithmetic keeps the engine's typing
    if cls is exp.Add:
        return a + b
    if cls is exp.Sub:
        return a - b
    if cls is exp.Mul:
        return a * b
    if cls is exp.IntDiv and b:
        return _tdiv(a, b)
    if cls is exp.Mod and b:
        return a - b * _tdiv(a, b)
    return _NOT_CONSTANT
