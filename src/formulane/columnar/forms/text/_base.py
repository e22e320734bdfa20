"""Shared tools of the text forms: refusals, literal folding through the scalar
implementation, and the polars and SQL building blocks (one place; the submodules import them).

Contract: nothing here imports polars at import time (``pl`` is a deferred import, `_lazy`); a
folded result over the text limit is refused, never truncated.
"""

from __future__ import annotations

import datetime as dt
import decimal
from decimal import Decimal
from typing import Any, Callable, NoReturn, Sequence

from sqlglot import exp

from ....errors import LimitExceeded, Unsupported
from ....limits import DEFAULT_LIMITS
from ....values import CONTEXT, ErrorValue, XLError
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
_NOT = object()  # not a literal
L = exp.Literal


def _refuse(backend: str, name: str, reason: str) -> NoReturn:
    verb = "polars cannot evaluate" if backend == "polars" else "SQL cannot express"
    raise Unsupported(f"{verb} {name}: {reason}", function=name, backend=backend,
                      reason=reason)


# ------------------------------------------------------------------------------- constants


def pl_const(e: Any) -> Any:
    """The value of a polars literal expression (lists as tuples), else `_NOT`."""
    try:
        # a literal, or an expression of literals only (``-1`` is a negation of one)
        if not e.meta.is_literal() and (e.meta.root_names() or _reads_elements(e)):
            return _NOT
        value = pl.select(e).to_series()
    except Exception:
        return _NOT
    if len(value) != 1:
        return _NOT
    v = value[0]
    if isinstance(v, pl.Series):
        return tuple(v.to_list())
    return v


def _reads_elements(e: Any) -> bool:
    try:
        return "element()" in str(e) or "col(" in str(e)
    except Exception:
        return True


def sql_const(e: Any) -> Any:
    """The value of a SQL literal (numbers as Decimal, arrays as tuples), else `_NOT`."""
    if isinstance(e, exp.Paren):
        return sql_const(e.this)
    if isinstance(e, exp.Literal):
        return e.this if e.is_string else Decimal(e.this)
    if isinstance(e, exp.Neg):
        inner = sql_const(e.this)
        return -inner if isinstance(inner, Decimal) else _NOT
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    if isinstance(e, exp.Array):
        items = [sql_const(i) for i in e.expressions]
        return _NOT if any(i is _NOT for i in items) else tuple(items)
    return _NOT


def _const(backend: str, e: Any) -> Any:
    return pl_const(e) if backend == "polars" else sql_const(e)


def _engine_value(v: Any) -> Any:
    """A literal as the scalar engine holds it (floats by their shortest repr)."""
    if isinstance(v, float):
        return Decimal(int(v)) if v.is_integer() and abs(v) < 2**53 else Decimal(repr(v))
    if isinstance(v, tuple):
        return tuple(_engine_value(i) for i in v)
    if isinstance(v, list):
        return tuple(_engine_value(i) for i in v)
    return v


def _int(v: Any) -> int:
    """Excel's truncation of a literal count or position."""
    return int(Decimal(v)) if not isinstance(v, int) else v


# ----------------------------------------------------------------------------- folding


def _scalar(name: str) -> Any:
    from ....functions import registry

    return registry.default_registry().get(name)


def _fold(backend: str, name: str, args: Sequence[Any], *, sig: int = 0) -> Any:
    """Every argument a literal: the scalar implementation's answer, computed once when
    compiling (a literal value, or an error code); a result over the text limit is refused
    (the scalar engine stops there). Not all literal: `_NOT`."""
    values = [_const(backend, a) for a in args]
    if any(v is _NOT for v in values):
        return _NOT
    spec = _scalar(name)
    impl = spec.signatures[sig].impl or spec.impl
    values = [_engine_value(v) for v in values]
    from ....runtime import EvalContext, activate, deactivate

    # Folding runs the scalar implementation when compiling: it is metered like a run (the
    # call's price charged first, loops polled, the deadline and memory budget), so a literal
    # TEXT(1, REPT("0", 32767)) cannot make to_sql take seconds.
    ctx = EvalContext(DEFAULT_LIMITS, dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc), True)
    per_char = spec.cost.per_char or (1 / 16 if spec.category == "text" else 0.0)
    token = activate(ctx)
    try:
        ctx.charge(1 + spec.cost.base + int(per_char * sum(len(v) for v in values if isinstance(v, str))))
        with decimal.localcontext(CONTEXT):
            if spec.needs_ctx:
                result = impl(ctx, *values)
            else:
                result = impl(*values)
    except XLError as exc:
        return _error_literal(backend, exc.code if hasattr(exc, "code") else str(exc),
                              spec.signatures[sig].returns)
    except LimitExceeded as exc:
        _refuse(backend, name, f"computing it when compiling would exceed a limit ({exc.message})")
    except (ArithmeticError, ValueError):
        return _error_literal(backend, "#NUM!", spec.signatures[sig].returns)
    except (TypeError, AttributeError):
        # a constant the implementation never receives (the null value of an argument that
        # is always an error): not folded, the form's own expression handles it
        return _NOT
    finally:
        deactivate(token)
    if isinstance(result, ErrorValue):
        return _error_literal(backend, result.code, spec.signatures[sig].returns)
    return _literal(backend, result)


class _Folded:
    """A plan's answer when every argument was a literal: the form's whole result (a literal,
    or a (null, error code) pair), kept apart from the plan tuples the forms unpack."""

    __slots__ = ("result",)

    def __init__(self, result: Any) -> None:
        self.result = result


def _error_literal(backend: str, code: Any, returns: Any = None) -> Any:
    """A null of the function's result type (a Number's null must stay numeric: the backend
    tests numbers for #NUM!) with the error code."""
    code = getattr(code, "code", code)
    if backend == "polars":
        dtype = pl.Utf8 if returns is None or returns.kind in ("Any", "Var") \
            else _vp.dtype_of(returns)
        return pl.lit(None, dtype=dtype), pl.lit(code)
    return exp.Null(), L.string(code)


def _literal(backend: str, value: Any) -> Any:
    if backend == "polars":
        if isinstance(value, bool):
            return pl.lit(value)
        if isinstance(value, (int, Decimal)):
            return _pl_number(pl.lit(float(value)) if _vp.numbers() == "float"
                              else pl.lit(Decimal(value), dtype=_vp.DECIMAL_DTYPE))
        if isinstance(value, tuple):
            return pl.lit(pl.Series([list(value)], dtype=pl.List(pl.Utf8)))
        return pl.lit(value, dtype=pl.Utf8)
    if isinstance(value, tuple):
        return exp.cast(exp.Array(expressions=[L.string(v) for v in value]),
                        exp.DataType.build("VARCHAR[]"))
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, Decimal)):
        return L.number(format(Decimal(value), "f"))
    return L.string(value)


def _folded_or(backend: str, name: str, args: Sequence[Any], reason: str, sig: int = 0) -> Any:
    out = _fold(backend, name, args, sig=sig)
    if out is _NOT:
        _refuse(backend, name, reason)
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
    return exp.cast(_f("TRUNC", clamped), exp.DataType.build("BIGINT"))


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
