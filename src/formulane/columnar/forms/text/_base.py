"""Shared tools of the text forms: folding a constant call into the backend's literal, and the
polars and SQL building blocks (one place; the submodules import them).

Contract: every form takes the call first (`columnar.call.FormCall`) and reads its constant
arguments through ``call.const`` (`interpreter.fold`, the one reader of constants), never from
the built polars or SQL expressions; it refuses through ``call.refuse``. Nothing here imports
polars at import time (``pl`` is a deferred import, `_lazy`); a folded result over the text
limit is refused, never truncated.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable

from sqlglot import exp

from ...sql.kit import dtype
from ....interpreter.fold import fold_call
from ....limits import DEFAULT_LIMITS
from ....values import ErrorValue
from ...call import MISSING, FormCall
from ...names import fresh
from .. import _lazy

# the text modules import these from here: polars and its compiler, on first use
pl: Any = _lazy.pl
_vp: Any = _lazy.vp


# the SQL forms never import polars (nor the polars backend)

#: The text limit the forms bound results by (the default `Limits.max_text_length`).
LIMIT = DEFAULT_LIMITS.max_text_length
#: Counts and positions are clamped to this before becoming integers (no cast can overflow;
#: any larger count acts as "all of the text").
_CLAMP = (1 << 31) - 1
_NOT: Any = MISSING  # not a constant (`FormCall.const`'s answer)
L = exp.Literal


# ----------------------------------------------------------------------------- folding


def _fold(call: FormCall) -> Any:
    """The call's value when every argument is a constant (`interpreter.fold.fold_call`, the
    one reader of constants, computing it with the scalar implementation under the program's
    limits) as the backend's literal (or a (null, error code) pair); `_NOT` otherwise. The
    walk folds every constant call whose value a backend holds as a literal before any form
    runs, so a form sees this only for a value no `Const` holds (a list of texts:
    TEXTSPLIT, REGEXGROUPS) or a call folding would not compute (a limit passed)."""
    value = fold_call(call.node, call.limits)
    if value is MISSING:
        return _NOT
    if isinstance(value, ErrorValue):
        return _error_literal(call, value.code)
    if isinstance(value, tuple) and not all(isinstance(v, str) for v in value):
        return _NOT  # a list holding an error value: left to the form
    return _literal(call.backend, value)


def _int(v: Any) -> int:
    """Excel's truncation of a constant count or position."""
    return int(Decimal(v)) if not isinstance(v, int) else v


def _all_const(call: FormCall) -> bool:
    return all(call.const(i) is not MISSING for i in range(len(call.args)))


class _Folded:
    """A plan's answer when every argument was a literal: the form's whole result (a literal,
    or a (null, error code) pair), kept apart from the plan tuples the forms unpack."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result


def _error_literal(call: FormCall, code: str) -> Any:
    """A null of the call's result type (a Number's null must stay numeric: the backend
    tests numbers for #NUM!) with the error code."""
    returns = call.node.type
    if call.backend == "polars":
        pl_type = pl.Utf8 if returns.kind in ("Any", "Var") else _vp.dtype_of(returns)
        return pl.lit(None, dtype=pl_type), pl.lit(code)
    return exp.Null(), L.string(code)


def _literal(backend: str, value: Any) -> Any:
    if backend == "polars":
        if isinstance(value, bool):
            return pl.lit(value)
        if isinstance(value, (int, Decimal)):
            return _pl_number(pl.lit(float(value)) if _vp.numbers() == "float"
                              else pl.lit(Decimal(value), dtype=_vp.DECIMAL_DTYPE))
        if isinstance(value, tuple):
            # a one-row Series taken as a scalar, so it broadcasts over the frame (as the
            # kit's list literals): REGEXGROUPS("00", "") folded to [] failed a 2-row frame
            return pl.lit(pl.Series([list(value)], dtype=pl.List(pl.Utf8))).first()
        return pl.lit(value, dtype=pl.Utf8)
    if isinstance(value, tuple):
        return exp.cast(exp.Array(expressions=[L.string(v) for v in value]),
                        dtype("VARCHAR[]"))
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, Decimal)):
        return L.number(format(Decimal(value), "f"))
    return L.string(value)


#: A constant call that folding would not compute: its value would exceed a program limit.
_PAST_A_LIMIT = ("its constant arguments could not be computed when compiling (the value "
                 "would exceed a limit)")


def _folded_or(call: FormCall, reason: str) -> Any:
    """The folded call (`_fold`), else a refusal with ``reason``."""
    out = _fold(call)
    if out is _NOT:
        if _all_const(call):
            call.refuse(_PAST_A_LIMIT + "; " + reason)
        call.refuse(reason)
    return out


# --------------------------------------------------------------------------- polars tools


def _pl_number(e: Any) -> Any:
    """An integer or float expression as the program's Number dtype."""
    return e.cast(pl.Float64) if _vp.numbers() == "float" else e.cast(_vp.DECIMAL_DTYPE)


def _pl_int(n: Any) -> Any:
    """A Number truncated toward zero to Int64 (clamped first: never an overflow)."""
    return n.clip(-_CLAMP, _CLAMP).cast(pl.Int64, strict=False)


def _pl_text(v: str) -> Any:
    return pl.lit(v, dtype=pl.Utf8)


# ------------------------------------------------------------------------------ SQL tools


def _f(name: str, *args: Any) -> Any:
    return exp.func(name, *args, dialect="duckdb")


def _p(e: Any) -> Any:
    return exp.Paren(this=e) if not isinstance(e, (exp.Column, exp.Literal, exp.Func,
                                                   exp.Paren)) else e


def _sql_int(n: Any) -> Any:
    """A Number truncated toward zero to BIGINT (clamped first)."""
    clamped = _f("LEAST", _f("GREATEST", n.copy(), L.number(-_CLAMP)), L.number(_CLAMP))
    return exp.cast(_f("TRUNC", clamped), dtype("BIGINT"))


def _lt(a: Any, b: Any) -> Any:
    return exp.LT(this=_p(a), expression=_p(b))


def _gt(a: Any, b: Any) -> Any:
    return exp.GT(this=_p(a), expression=_p(b))


def _ge(a: Any, b: Any) -> Any:
    return exp.GTE(this=_p(a), expression=_p(b))


def _eq(a: Any, b: Any) -> Any:
    return exp.EQ(this=_p(a), expression=_p(b))


def _add(a: Any, b: Any) -> Any:
    return exp.Add(this=_p(a), expression=_p(b))


def _sub(a: Any, b: Any) -> Any:
    return exp.Sub(this=_p(a), expression=_p(b))


def _case(pairs: list[tuple[Any, Any]], default: Any = None) -> Any:
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=default)


def _cat(*parts: Any) -> Any:
    out = parts[0]
    for p in parts[1:]:
        out = exp.DPipe(this=out, expression=p, safe=True)
    return out


def _length(e: Any) -> Any:
    return exp.Length(this=e.copy())


def _substr(e: Any, start: Any, length: Any = None) -> Any:
    args = [e.copy(), start] + ([length] if length is not None else [])
    return _f("SUBSTRING", *args)


def _let(value: Any, build: Callable[[Any], Any]) -> Any:
    """``build(v)`` with v bound to ``value`` once (DuckDB: a one-item LIST_TRANSFORM), so a
    large sub-expression used several times is written once."""
    if isinstance(value, (exp.Column, exp.Literal)):
        return build(value)
    name = fresh("_tx")
    body = build(exp.column(name))
    mapped = _f("LIST_TRANSFORM", exp.Array(expressions=[value]),
                exp.Lambda(this=body, expressions=[exp.to_identifier(name)]))
    return exp.Bracket(this=mapped, expressions=[L.number(1)], offset=1)


_GROWS = ("the result's length is not bounded when compiling (the scalar engine stops a text "
          "over {limit:,} characters, which a column expression cannot do for one row); "
          "literal arguments are folded")


def _grows() -> str:
    return _GROWS.format(limit=LIMIT)



def _bind(value: Any, build: Callable[[Any], Any]) -> Any:
    """`_let` for a text expression (total on every row, so safe to evaluate eagerly): the
    query's own binding (`columnar.sql.let`, a lateral column) when the compiler has a binder
    active, else (a lambda body, a dialect without lateral subqueries) `_let`."""
    from ...sql.let import _trivial, let

    if _trivial(value):
        return build(value)
    bound = let(value)
    return build(bound) if bound is not value else _let(value, build)
