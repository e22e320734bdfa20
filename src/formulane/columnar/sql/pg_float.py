"""PostgreSQL's float8 range: `+`, `-`, `*`, `/` and POWER that answer a row instead of failing
the query.

Contract: `guard(node)` returns a PostgreSQL sum, difference, product, quotient or power
(`exp.Add`, `exp.Sub`, `exp.Mul`, `exp.Div`, `exp.Pow` over float8) rewritten so that no row
raises "value out of range"; `guardable(node)` says whether the node is one to rewrite (not
both sides exact, both sides cheap to repeat, a sum's sides numbers); `exact(e)` whether
PostgreSQL types ``e`` NUMERIC or an integer. Read by `dialects.adapt` for PostgreSQL only;
every other dialect's SQL is unchanged (docs/columnar.md, "Engine notes"). No float8
aggregate (SUM, AVG over a list) reaches PostgreSQL: the forms' LIST_SUM, LIST_AVG... are
DuckDB's and refused there (E213), so none is guarded here."""

from __future__ import annotations

import functools
import math
import operator
import struct
import sys
from collections.abc import Callable
from contextvars import ContextVar

from sqlglot import exp

# PostgreSQL's float8 `+`, `-`, `*`, `/` and POWER raise "value out of range" where IEEE answers
# inf (overflow) or 0 (underflow: a nonzero result that rounds to 0; never a sum's), and an
# infinite operand never raises (`'Infinity' + 1` is inf there), so one row failed the whole
# query where DuckDB, Spark and the scalar engine answer that row (the forms then read inf as
# #NUM!). On PostgreSQL each is rewritten into a CASE that answers inf or 0 itself where the
# engine would raise and computes the operation elsewhere; every test in it is itself safe on
# any row (a scale or divisor chosen so that it cannot leave the range), and NaN reaches the
# engine's own operation (which answers NaN): PostgreSQL sorts NaN above every number, so a
# test that NaN must fail is written as `-ABS(x) < -bound` or as a quotient compared.
# Exactness: inf is answered where the result is at least 1.5e308 (the forms read every
# result from 1e308 on as #NUM!, so a finite result there and inf answer alike; with a literal
# operand, where IEEE itself answers inf, a bound found when compiling); 0 where IEEE
# answers 0, and in a band of relative width 1e-15 above that bound (a product or quotient)
# or below 1e-323 (a power), where IEEE's answer is the smallest subnormal, 5e-324.

#: |x| from which a result is answered as inf (below DBL_MAX by far more than any rounding).
_HUGE = 1.5e308
#: IEEE rounds a nonzero result to 0 at or below 2 ** -1075; scaled by the `_UP` factor the
#: tests multiply by, with a margin of 1e-15 over the roundings of the test itself.
_UP = 1e300
_TINY_PRODUCT = exp.Literal.number("2.470328229206235e-24")  # 2 ** -1075 * 1e300 * (1 + 1e-15)
_UP_QUOTIENT = 1e308
_TINY_QUOTIENT = exp.Literal.number("2.470328229206235e-16")  # 2 ** -1075 * 1e308 * (1 + ...)
#: A power below this is answered 0 (IEEE's is 0 or 5e-324 there; at or above it never 0).
_TINY_POWER = 1e-323
#: ln(1.5e308) and ln(1e-323), the bounds of a power's b * ln|a| (read in NUMERIC, which
#: neither overflows nor underflows; its 15 digits' error is far inside the margins).
_LN_HUGE = exp.Literal.number("709.6")
_LN_TINY = exp.Literal.number("-743.7")


def _pg_inf(negative: bool = False) -> exp.Expr:
    """An infinity typed NUMERIC. A bare 'Infinity' takes the type of what it meets, and an
    operand the compiler reads as float8 may be an INTEGER or BIGINT column (its engine type is
    not known): `"b" * 'Infinity'` then fails to parse ("invalid input syntax for type
    integer") on every row, although no integer row ever takes that branch. NUMERIC has an
    infinity (PostgreSQL 14 on) and joins every number type: with a float8 it is float8 (a
    CASE's branches, a product), with an integer or a NUMERIC it is NUMERIC."""
    return exp.cast(exp.Literal.string("-Infinity" if negative else "Infinity"), "NUMERIC")


def _pg_value(e: exp.Expr) -> float | None:
    """The finite value of a number literal (negated, parenthesized, cast; a string cast to a
    number type), else None."""
    numeric = False  # (under a cast to a number type: '1E+300', as the forms write 1e300)
    negative = False
    while isinstance(e, (exp.Paren, exp.Cast, exp.Neg)) and not isinstance(e, exp.TryCast):
        numeric = numeric or isinstance(e, exp.Cast) and e.to.is_type(*_NUMBER_TYPES)
        negative ^= isinstance(e, exp.Neg)
        e = e.this
    if not (isinstance(e, exp.Literal) and (numeric or not e.is_string)):
        return None
    try:
        value = float(e.this)
    except ValueError:
        return None
    return (-value if negative else value) if math.isfinite(value) else None


#: Types a cast of a number literal may name (`_pg_value`).
_NUMBER_TYPES = (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT, exp.DataType.Type.DECIMAL,
                 exp.DataType.Type.INT, exp.DataType.Type.BIGINT)

#: Types whose arithmetic PostgreSQL does exactly (NUMERIC) or in integers: never float8.
_EXACT_TYPES = (exp.DataType.Type.DECIMAL, exp.DataType.Type.INT, exp.DataType.Type.BIGINT,
                exp.DataType.Type.SMALLINT)


def _pg_exact(e: exp.Expr) -> bool:
    """Whether PostgreSQL types ``e`` NUMERIC or an integer (a literal, a cast to one, a ROUND
    to digits, arithmetic of those): an operation of two such never raises for range."""
    while isinstance(e, (exp.Paren, exp.Neg)):
        e = e.this
    if isinstance(e, exp.Literal):
        return not e.is_string
    if isinstance(e, exp.Cast) and not isinstance(e, exp.TryCast):
        return e.to.is_type(*_EXACT_TYPES)
    if isinstance(e, exp.Round):
        return e.args.get("decimals") is not None
    if isinstance(e, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        return _pg_exact(e.this) and _pg_exact(e.expression)
    if isinstance(e, exp.Case):  # (a date form's integer arithmetic: months, days)
        return all(_pg_exact(i.args["true"]) for i in e.args["ifs"]) and (
            e.args.get("default") is None or _pg_exact(e.args["default"]))
    if isinstance(e, (exp.Coalesce, exp.Greatest, exp.Least)):
        return all(_pg_exact(i) for i in (e.this, *e.expressions))
    if isinstance(e, (exp.Length, exp.ArraySize, exp.Extract, exp.Null)):
        return True
    if isinstance(e, exp.Column) and e.table:
        # a binding's reference (`_fl1._f1`, the binder's lateral join): its expression's type
        # (`CAST(TRUNC(h) AS BIGINT)` in TIME: an integer, whose product with 'Infinity' would
        # not parse); a table's column is of a type only the table knows: float8 in float mode
        return _binding_exact(e)
    return isinstance(e, exp.Anonymous) and e.name.upper() in _EXACT_CALLS


#: The binder's bindings of the query being rewritten (name -> expression, `select.py` sets
#: it around `dialects.adapt`), and per name, once asked, whether it is exact.
BINDINGS: ContextVar[tuple[dict[str, exp.Expr], dict[str, bool]] | None] = ContextVar(
    "pg_float_bindings", default=None)


def _binding_exact(column: exp.Column) -> bool:
    entry = BINDINGS.get()
    if entry is None:
        return False
    named, known = entry
    name = column.name
    if name not in known:
        known[name] = False  # (a reference to itself is no proof)
        bound = named.get(name)
        known[name] = bound is not None and _pg_exact(bound)
    return known[name]


#: Functions the forms call by name that answer NUMERIC or integers on PostgreSQL.
_EXACT_CALLS = frozenset({"MOD", "STRPOS", "CARDINALITY", "LENGTH"})


def _cheap(e: exp.Expr) -> bool:
    """An operand a guard may repeat (a column, a binding's reference, a literal, a cast or
    ABS of one, a NULLIF divisor): no guard inside, so repeating it cannot compound. The
    binder has bound what the forms read more than once; an operation over a larger operand
    is left unguarded (a scalar subquery binding it made PostgreSQL's planner blow up)."""
    while isinstance(e, (exp.Paren, exp.Neg, exp.Cast, exp.Abs)):
        e = e.this
    if isinstance(e, exp.Nullif):
        return _cheap(e.this) and isinstance(e.expression, exp.Literal)
    return isinstance(e, (exp.Column, exp.Literal, exp.Null))


def _div(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    """``a / b`` of the guards' own (a float8 or NUMERIC one: sqlglot casts an untyped
    division's numerator to DOUBLE PRECISION on PostgreSQL, needlessly here)."""
    return exp.Div(this=a, expression=b, typed=True, safe=False)


def _abs(e: exp.Expr) -> exp.Expr:
    """``ABS(e)``; of a table's column through float8: float mode widens one operand of a
    step (`compiler.SqlCompiler.eager`), and the other may be a SMALLINT, INTEGER or BIGINT
    whose least value has no ABS there ("smallint out of range"). (The cast of a float8
    column costs nothing: PostgreSQL drops it when planning.)"""
    inner = e
    while isinstance(inner, (exp.Paren, exp.Neg)):
        inner = inner.this
    if isinstance(inner, exp.Column) and not inner.table:
        return exp.Abs(this=exp.cast(e.copy(), "DOUBLE"))
    return exp.Abs(this=e.copy())


def _lit(value: float) -> exp.Expr:
    """A float literal by its shortest repr (negated as a `Neg`, as the forms write one)."""
    text = exp.Literal.number(repr(abs(value)).replace("e+", "e"))
    return exp.Neg(this=text) if value < 0 else text


def _double_bits(x: float) -> int:
    return int(struct.unpack("<q", struct.pack("<d", x))[0])


def _bits_double(n: int) -> float:
    return float(struct.unpack("<d", struct.pack("<q", n))[0])


def _last(holds: Callable[[float], bool]) -> float:
    """The largest positive finite double where ``holds`` (monotone: true up to a point)
    is true, or 0.0 where it holds for none (a bisection over the doubles' bit patterns)."""
    lo, hi = 0, _double_bits(sys.float_info.max)
    if holds(sys.float_info.max):
        return sys.float_info.max
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if holds(_bits_double(mid)):
            lo = mid
        else:
            hi = mid - 1
    return _bits_double(lo)


@functools.lru_cache(maxsize=4096)
def _bound(operation: str, k: float) -> float:
    """`_last` of the test ``operation`` names for the literal operand ``k`` (its magnitude,
    or the exponent itself for a power's): each bisects ~64 doubles, and the same literal
    recurs in every compile (1.1, 2, 100), so the answers are kept (a few thousand floats)."""
    return _last(_TESTS[operation](k))


def _ieee(op: Callable[[float, float], float], a: float, b: float) -> float:
    """``op(a, b)`` as IEEE answers it (Python raises where IEEE overflows)."""
    try:
        return op(a, b)
    except OverflowError:
        return math.inf
    except ZeroDivisionError:
        return math.inf


def _pg_sum(a: exp.Expr, b: exp.Expr, node: exp.Expr) -> exp.Expr:
    """``a + b`` or ``a - b`` (the engine's ``node``, an `exp.Add` or `exp.Sub`) safe from
    PostgreSQL's overflow (a sum never underflows; an infinite operand never raises). With a
    literal k, the overflow bound on the other operand x is IEEE's own, found when compiling
    (the largest |x| whose sum with |k| is finite: every double for |k| < 2 ** 970, so `x + 1`
    stays as it is). Else inf is answered where the operands' signs agree (a difference: differ)
    and |a| >= 1.5e308 - |b|, each step of the test safe on any row and false for NaN (SIGN(NaN)
    is 0 there); the engine's sum is finite wherever the test fails."""
    minus = isinstance(node, exp.Sub)
    k, x, flipped = _pg_value(b), a, False
    if k is not None:
        k = -k if minus else k
    else:
        k, x, flipped = _pg_value(a), b, minus
    if k is not None:
        big = _bound("sum_finite", abs(k))
        if big == sys.float_info.max or k == 0:
            return node
        # overflow where (-x if flipped else x) passes big toward k's sign; written as a
        # `<` test, which NaN fails (PostgreSQL sorts NaN above every number)
        side = exp.Neg(this=x.copy()) if (k > 0) != flipped else x.copy()
        return exp.Case(ifs=[exp.If(this=exp.LT(this=side, expression=_lit(-big)),
                                    true=_pg_inf(k < 0))], default=node)
    agree = exp.EQ(this=exp.Mul(this=exp.Sign(this=a.copy()), expression=exp.Sign(this=b.copy())),
                   expression=exp.Neg(this=exp.Literal.number(1)) if minus
                   else exp.Literal.number(1))
    far = exp.GTE(this=_abs(a), expression=exp.Sub(this=_lit(_HUGE), expression=_abs(b)))
    # (a is nonzero there, and inf times it never raises: its sign, the sum's)
    inf = exp.Mul(this=a.copy(), expression=_pg_inf())
    return exp.Case(ifs=[exp.If(this=exp.and_(agree, far, copy=False), true=inf)], default=node)


def _pg_times(a: exp.Expr, b: exp.Expr, node: exp.Expr) -> exp.Expr:
    """``a * b`` (the engine's ``node``) safe from PostgreSQL's range errors."""
    k = _pg_value(b)
    x = a
    if k is None:
        k, x = _pg_value(a), b
    if k is not None:
        size = abs(k)
        if size == 0 or 0.5 < size <= 1:  # never out of range
            return node
        pairs: list[tuple[exp.Expr, exp.Expr]] = []
        if size > 1:  # overflow from the largest |x| whose product is finite on
            big = _bound("times_finite", size)
            pairs.append((exp.GT(this=_abs(x), expression=_lit(big)),
                          exp.Mul(this=x.copy(), expression=_pg_inf(k < 0))))
        else:  # underflow up to the largest |x| whose product is 0
            small = _bound("times_zero", size)
            pairs.append((exp.LTE(this=_abs(x), expression=_lit(small)),
                          exp.Literal.number(0)))
        return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=node)
    one = exp.Literal.number(1)
    over = exp.and_(exp.GT(this=_abs(a), expression=one.copy()),
                    exp.GT(this=_abs(b), expression=_div(_lit(_HUGE), _abs(a))), copy=False)
    under = exp.and_(exp.LT(this=_abs(a), expression=one.copy()),
                     exp.LT(this=_abs(b), expression=one.copy()),
                     exp.NEQ(this=a.copy(), expression=exp.Literal.number(0)),
                     exp.LTE(this=exp.Mul(this=_abs(b), expression=_lit(_UP)),
                             expression=_div(_TINY_PRODUCT.copy(), _abs(a))), copy=False)
    inf = exp.Mul(this=exp.Mul(this=exp.Sign(this=a.copy()), expression=b.copy()),
                  expression=_pg_inf())
    return exp.Case(ifs=[exp.If(this=over, true=inf),
                         exp.If(this=under, true=exp.Literal.number(0))], default=node)


def _pg_quotient(a: exp.Expr, b: exp.Expr, node: exp.Expr) -> exp.Expr:
    """``a / b`` (the engine's ``node``) safe from PostgreSQL's range errors (a zero divisor
    is the forms' own #DIV/0!, NULLIF'd before it reaches here)."""
    k = _pg_value(b)
    if k is not None and k != 0:
        size = abs(k)
        if size < 1:  # overflow: |a| / |k| past the double range
            big = _bound("quotient_finite", size)
            return exp.Case(ifs=[exp.If(this=exp.GT(this=_abs(a), expression=_lit(big)),
                                        true=exp.Mul(this=a.copy(),
                                                     expression=_pg_inf(k < 0)))],
                            default=node)
        if size >= 2:  # underflow: |a| / |k| rounds to 0
            small = _bound("quotient_zero", size)
            return exp.Case(ifs=[exp.If(this=exp.LTE(this=_abs(a), expression=_lit(small)),
                                        true=exp.Literal.number(0))], default=node)
        return node
    one = exp.Literal.number(1)
    over = exp.and_(exp.LT(this=_abs(b), expression=one.copy()),
                    exp.GT(this=_abs(a), expression=exp.Mul(this=_lit(_HUGE),
                                                            expression=_abs(b))),
                    copy=False)
    # |a| * 1e308 / |b|: NaN (b NaN) fails the test; at least 5e-324 (|a| < 1 < |b|)
    under = exp.and_(exp.LT(this=_abs(a), expression=one.copy()),
                     exp.GT(this=_abs(b), expression=one.copy()),
                     exp.LTE(this=_div(exp.Mul(this=_abs(a), expression=_lit(_UP_QUOTIENT)),
                                       _abs(b)),
                             expression=_TINY_QUOTIENT.copy()), copy=False)
    inf = exp.Mul(this=exp.Mul(this=exp.Sign(this=b.copy()), expression=a.copy()),
                  expression=_pg_inf())
    return exp.Case(ifs=[exp.If(this=over, true=inf),
                         exp.If(this=under, true=exp.Literal.number(0))], default=node)


def _pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


def _rises(size: float, v: float) -> float:
    """``|base| ** v`` for a base of magnitude ``size``, rising with v (its exponent negated
    where ``size`` < 1)."""
    return _pow(size, v if size > 1 else -v)


#: The monotone tests `_bound` bisects, by name: each, given the literal, a test of the other
#: operand's magnitude v (true up to the bound it finds).
_TESTS: dict[str, Callable[[float], Callable[[float], bool]]] = {
    "sum_finite": lambda k: lambda v: math.isfinite(v + k),
    "times_finite": lambda k: lambda v: math.isfinite(v * k),
    "times_zero": lambda k: lambda v: v * k == 0,
    "quotient_finite": lambda k: lambda v: math.isfinite(_ieee(operator.truediv, v, k)),
    "quotient_zero": lambda k: lambda v: v / k == 0,
    "power_below_huge": lambda k: lambda v: _pow(v, k) < _HUGE,
    "power_below_tiny": lambda k: lambda v: _pow(v, k) < _TINY_POWER,
    "power_huge": lambda k: lambda v: _pow(v, k) >= _HUGE,
    "power_tiny": lambda k: lambda v: not _pow(v, k) < _TINY_POWER,
    "base_below_huge": lambda k: lambda v: _rises(k, v) < _HUGE,
    "base_tiny": lambda k: lambda v: _rises(k, -v) >= _TINY_POWER,
}


def _pg_power(a: exp.Expr, b: exp.Expr, node: exp.Expr) -> exp.Expr:
    """``POWER(a, b)`` (the engine's ``node``) safe from PostgreSQL's range errors. A known
    exponent or base settles the bounds on the other operand when compiling (by bisection
    over the doubles); else they are read from b * ln|a| in NUMERIC. (0 to a negative power
    and a negative base to a fraction, which PostgreSQL also refuses, are the forms' #DIV/0!
    and #NUM!, tested before the power is computed.)"""
    k, base = _pg_value(b), _pg_value(a)
    if k is not None:
        if k == 0 or k == 1:
            return node
        odd = k == int(k) and int(k) % 2 == 1
        x = a
        pairs: list[tuple[exp.Expr, exp.Expr]] = []
        # (for k < 0, |a|^k falls as |a| grows: the bounds are on the other side)
        big = _bound("power_below_huge" if k > 0 else "power_huge", k)
        small = _bound("power_below_tiny" if k > 0 else "power_tiny", k)
        inf = exp.Mul(this=exp.Sign(this=a.copy()), expression=_pg_inf()) \
            if odd and k > 0 else _pg_inf()
        if k > 0 and big < sys.float_info.max:  # -ABS(a) < -big: NaN fails it
            pairs.append((exp.LT(this=exp.Neg(this=_abs(x)), expression=_lit(-big)), inf))
        if k < 0 and big > 0:
            pairs.append((exp.LTE(this=_abs(x), expression=_lit(big)), inf))
        if k > 0 and small > 0:
            pairs.append((exp.LTE(this=_abs(x), expression=_lit(small)),
                          exp.Literal.number(0)))
        if k < 0 and small < sys.float_info.max:
            pairs.append((exp.LT(this=exp.Neg(this=_abs(x)), expression=_lit(-small)),
                          exp.Literal.number(0)))
        if not pairs:
            return node
        return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=node)
    if base is not None and base != 0 and abs(base) != 1:
        size = abs(base)
        big = _bound("base_below_huge", size)
        small = _bound("base_tiny", size)
        sign = 1 if size > 1 else -1
        over = exp.LT(this=exp.Neg(this=b.copy()) if sign > 0 else b.copy(),
                      expression=_lit(-big))
        under = exp.LT(this=b.copy() if sign > 0 else exp.Neg(this=b.copy()),
                       expression=_lit(-small))
        return exp.Case(ifs=[exp.If(this=over, true=_pg_inf()),
                             exp.If(this=under, true=exp.Literal.number(0))], default=node)
    t = exp.Mul(this=exp.cast(b.copy(), "NUMERIC"), expression=exp.cast(exp.Ln(
        this=exp.Nullif(this=_abs(a), expression=exp.Literal.number(0))), "NUMERIC"))
    return exp.Case(ifs=[
        exp.If(this=exp.LT(this=t, expression=_LN_TINY.copy()), true=exp.Literal.number(0)),
        exp.If(this=exp.LT(this=exp.Neg(this=t.copy()), expression=exp.Neg(
            this=_LN_HUGE.copy())), true=_pg_inf())], default=node)


def guardable(node: exp.Expr) -> bool:
    """A float8 sum, difference, product, quotient or power whose operands are columns,
    bindings or literals (an inline expression would be repeated by the guard: not guarded,
    docs/columnar.md); a sum's operands numbers (not a date's, a text's, a NULL's)."""
    sides = (node.this, node.expression)
    if isinstance(node, (exp.Add, exp.Sub)) and not all(_number(side) for side in sides):
        return False
    return not (_pg_exact(node.this) and _pg_exact(node.expression)) and all(
        _cheap(side) for side in sides)


#: Types whose values are no float8 (their `+` and `-` are a date's, an interval's, a text's).
_OTHER_TYPES = (exp.DataType.Type.DATE, exp.DataType.Type.DATETIME,
                exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ,
                exp.DataType.Type.TIME, exp.DataType.Type.INTERVAL, exp.DataType.Type.TEXT,
                exp.DataType.Type.VARCHAR)


def _number(e: exp.Expr) -> bool:
    """Whether a `_cheap` operand of a sum may be a float8: not a NULL (SIGN(NULL) is
    ambiguous there), a string, a cast to a date, time, interval or text type, nor a binding
    holding one (a table's column in a `+` is a number: the forms cast a date's first)."""
    while isinstance(e, (exp.Paren, exp.Neg, exp.Abs)):
        e = e.this
    if isinstance(e, exp.Null) or isinstance(e, exp.Literal) and e.is_string:
        return False
    if isinstance(e, exp.Cast):
        return not e.to.is_type(*_OTHER_TYPES)
    if isinstance(e, exp.Column) and e.table:
        entry = BINDINGS.get()
        bound = None if entry is None else entry[0].get(e.name)
        return bound is None or not (isinstance(bound, (exp.Cast, exp.Interval)) and (
            isinstance(bound, exp.Interval) or bound.to.is_type(*_OTHER_TYPES)))
    return True


def guard(node: exp.Expr) -> exp.Expr:
    """``node`` (a `guardable` `exp.Add`, `exp.Sub`, `exp.Mul`, `exp.Div` or `exp.Pow`) safe
    from PostgreSQL's range
    errors. (The engine's own operation as a copy: the CASE holds it, and `adapt` replaces the
    node where its parent holds it.)"""
    build = _pg_sum if isinstance(node, (exp.Add, exp.Sub)) else \
        _pg_times if isinstance(node, exp.Mul) else \
        _pg_quotient if isinstance(node, exp.Div) else _pg_power
    return build(node.this, node.expression, node.copy())


def exact(e: exp.Expr) -> bool:
    """Whether PostgreSQL types ``e`` NUMERIC or an integer (`_pg_exact`)."""
    return _pg_exact(e)
