"""The decimal reading and the rounding algorithms of the SQL math forms (`math.sql`): how a
number is read on the decimal grid and how ROUND, ROUNDUP and ROUNDDOWN place it there.

Contract: `_sql_exact` and `_text_reading` read a number as DECIMAL(38, 18) the way the
scalar engine reads it (`operators.sql_arith.shortest_decimal`, the one reading: through its
text, a DOUBLE's shortest decimal, a DECIMAL's own digits), under the range tests that make
the reading total (so it may be bound, `let`), with whether it is exactly the number; `_sql_round_places` rounds an exact number in the engine's DECIMAL ROUND,
`_sql_round_unknown` a number of unknown engine type through its reading, `_sql_round_float`
a DOUBLE in DOUBLE (`_near_grid`: where the two may differ). `math.sql`'s forms choose among
them; this module builds expressions only and holds no form. The small builders both modules
share (`_abs`, `_floor`...) are here, one place. Importing this imports sqlglot, never polars.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Callable

from sqlglot import exp

from ...sql.dialects import DOUBLE, marked
from ...sql.kit import dtype
from ...sql.let import let
from ..operators.sql_arith import (add, all_of, any_of, div, double, eq, ge, gt, le, lt, mul,
                                   num, p, shortest_decimal, sub, when)
from ._base import _EXACT_LIMIT, _GRID_LIMIT

_n, _p = num, p
_add, _sub, _mul, _div = add, sub, mul, div
_eq, _lt, _le, _gt, _ge = eq, lt, le, gt, ge
_and, _or, _case, _double = all_of, any_of, when, double

#: Below half a unit of the 18th place a number reads as 0 in DECIMAL(38, 18).
_HALF_UNIT_18 = Decimal("5e-19")


def _neg(a: exp.Expr) -> exp.Expr:
    return exp.Neg(this=p(a))


def _floor(x: exp.Expr, double: bool = True) -> exp.Expr:
    """FLOOR(x); ``double``: x is a DOUBLE, whose floor some engines answer as a BIGINT that
    a huge x overflows (Spark: `dialects.DOUBLE`)."""
    return marked(exp.Floor(this=x), DOUBLE) if double else exp.Floor(this=x)


def _ceil(x: exp.Expr, double: bool = True) -> exp.Expr:
    """CEIL(x), as `_floor`."""
    return marked(exp.Ceil(this=x), DOUBLE) if double else exp.Ceil(this=x)


def _abs(a: exp.Expr) -> exp.Expr:
    return exp.Abs(this=a)


def _is_null(a: exp.Expr) -> exp.Expr:
    return exp.Is(this=p(a), expression=exp.Null())


def _sql_exact(x: exp.Expr, k: Decimal | None, exact: bool = False,
               near: exp.Expr | None = None) -> tuple[exp.Expr, exp.Expr]:
    """(x as DECIMAL(38, 18) through its text, whether that decimal is exactly x); ``k``: x's
    value when it is a constant (`_known`): one of at most 18 places below the bound is that
    decimal, exactly, when compiling (written from the value, whatever type x was built as);
    ``exact``: x is exact already (`FormCall.exact`: a DECIMAL or an integer), so below the
    bound it is that decimal, cast without its text and no test of the reading. ``near``: the
    text is read only on the rows where it holds (`_near_grid`: elsewhere the DOUBLE algorithm
    gives the same answer), the others reading NULL ("not exact")."""
    if k is not None and abs(k) < Decimal(_EXACT_LIMIT) and -int(k.as_tuple().exponent) <= 18:
        return exp.Cast(this=_n(k), to=dtype("DECIMAL(38, 18)")), exp.true()
    if k is not None and k != 0 and abs(k) < _HALF_UNIT_18:
        # a constant that reads as 0 at 18 places (1E-25) is not that decimal: never the
        # exact path (it divided by that 0: QUOTIENT(x, 1E-25) answered a blank, no error)
        return exp.Cast(this=exp.Null(), to=dtype("DECIMAL(38, 18)")), exp.false()
    if exact:
        ok = let(_lt(_abs(x), _n(_EXACT_LIMIT)))  # NULL for a blank: "no", as below
        # under its guard the cast cannot fail: a plain CAST, which every dialect has
        return let(_case([(ok, exp.Cast(this=x.copy(), to=dtype("DECIMAL(38, 18)")))])), ok
    guarded = _text_reading(x, near)
    # NULL where the cast failed: "no" too, as every reader tests it as a CASE condition
    ok = let(_eq(_double(guarded), _double(x)))
    return guarded, ok


def _text_reading(x: exp.Expr, near: exp.Expr | None = None) -> exp.Expr:
    """x as DECIMAL(38, 18) through its text (`sql_arith.shortest_decimal`, the one reading of
    a number that may be a DOUBLE, its text alone: a DOUBLE's shortest decimal rounded to 18
    places, a DECIMAL's or an integer's own digits), below 1e18 (NULL from there on, and for a
    blank, NaN or an infinity); with ``near``, only where it holds (a CASE evaluates the text
    on those rows alone). The text alone, not the reading's TYPEOF test that + - * write:
    over a DECIMAL(18, 2) column of unknown type ROUND(a, 2) measured no faster with it
    (about 0.9 s per million rows either way, DuckDB: the rounding's own steps dominate),
    and its SQL 84 characters longer."""
    d = shortest_decimal(_p(x), "DECIMAL(38, 18)", text=True)
    guard = _lt(_abs(x), _n(_EXACT_LIMIT))
    return let(_case([(guard if near is None else _and(guard, near), d)]))


def _near_grid(mode: str, x: exp.Expr, n: int) -> tuple[exp.Expr, exp.Expr]:
    """Whether a DOUBLE x may be a decimal on which ROUND (``mode`` "half_up"), ROUNDUP or
    ROUNDDOWN to ``n`` >= 0 places turns (a half step, a step): y = |x| * 10^n within a relative
    1e-15 of a half-integer or an integer. Elsewhere the DOUBLE algorithm (`_sql_round_float`)
    and the shortest decimal's rounding agree: x is within half a unit in the last place of
    its shortest decimal D, and y within 2.2e-16 * y of D * 10^n, well inside the margin. So
    the per-row text reading (DuckDB: a string a row, most of float ROUND's cost) is read on
    those rows only. Returned with y, bound once, which the DOUBLE algorithm reads too."""
    y = let(_mul(_abs(_double(x)), _double(_n(10.0 ** n))))
    frac = _sub(y, _floor(y))
    eps = _mul(y, _n(1e-15))
    if mode == "half_up":
        return _le(_abs(_sub(frac, _n(0.5))), eps), y
    return _or(_le(frac, eps), _ge(frac, _sub(_n(1), eps))), y


def _sql_sign_apply(x: exp.Expr, magnitude: exp.Expr) -> exp.Expr:
    return _case([(_lt(x, _n(0)), _neg(magnitude))], magnitude)


# ------------------------------------------------------------------------ sign and size


def _sql_round_float(x: exp.Expr, n: int | None, nn: exp.Expr | None,
                     mode: str, scaled: exp.Expr | None = None) -> exp.Expr:
    """The float algorithm of `_round_float`, in DOUBLE (for values no DECIMAL(38, 18) holds
    exactly: beyond 1e18, or with more than 18 decimal places); ``scaled``: |x| * 10^n
    already bound (`_near_grid`'s)."""
    # (DOUBLE steps never fail in SQL engines: each is bound once, `sql_let`)
    xf = _double(x)
    a = let(_abs(xf))
    scale: Callable[[exp.Expr], exp.Expr]
    unscale: Callable[[exp.Expr], exp.Expr]
    if n is not None and n >= 0:
        s_lit = _double(_n(10.0 ** n))
        scale, unscale = (lambda v: _mul(v, s_lit)), (lambda k: _div(k, s_lit))
    elif n is not None:
        m_lit = _double(_n(10.0 ** -n))
        scale, unscale = (lambda v: _div(v, m_lit)), (lambda k: _mul(k, m_lit))
    else:
        assert nn is not None
        s_e = exp.Pow(this=_n(10.0), expression=exp.Greatest(this=nn, expressions=[_n(0)]))
        m_e = exp.Pow(this=_n(10.0), expression=exp.Greatest(this=_neg(nn), expressions=[_n(0)]))
        scale = lambda v: _div(_mul(v, s_e), m_e)  # noqa: E731
        unscale = lambda k: _div(_mul(k, m_e), s_e)  # noqa: E731
    y = scaled if scaled is not None else let(scale(a))
    one = _n(1)
    if mode == "half_up":
        k = let(_floor(y))
        r = _add(k, _case([(_ge(a, unscale(_add(k, _n(0.5)))), one)], _n(0)))
    elif mode == "down":
        k0 = let(_floor(y))
        k = let(_case([(_lt(a, unscale(k0)), _sub(k0, one))], k0))
        r = _case([(_ge(a, unscale(_add(k, one))), _add(k, one))], k)
    else:
        k0 = let(_ceil(y))
        k = let(_case([(_and(_ge(k0, one), _le(a, unscale(_sub(k0, one)))), _sub(k0, one))],
                      k0))
        r = _case([(_gt(a, unscale(k)), _add(k, one))], k)
    return _case([(_ge(y, _n(_GRID_LIMIT)), xf)], _mul(exp.Sign(this=xf), unscale(r)))


def _sql_round_places(mode: str, x: exp.Expr, n: int) -> exp.Expr:
    """ROUND/ROUNDUP/ROUNDDOWN of an exact number x to 0 <= n < 18 places, in the engine's
    DECIMAL ROUND (half away from zero on DuckDB, PostgreSQL, Spark, Trino, Snowflake and
    BigQuery alike): toward zero is the rounding of x moved half a step toward zero (a tie
    there is the grid point below, which ROUND keeps), away from zero adds a step to that
    where it is not x itself. Exact: the half step has n + 1 <= 18 places and moving toward
    zero never overflows; every result is a DECIMAL(38, n) (1e20 fits at n <= 17)."""
    places = _n(n)
    if mode == "half_up":
        return exp.Round(this=x, decimals=places)
    # the sign as an INT: Spark's SIGN is a DOUBLE, which would make the move inexact
    sign = let(exp.Cast(this=exp.Sign(this=x), to=dtype("INT")))
    half = _mul(sign, _n(Decimal(5).scaleb(-n - 1)))
    down = exp.Round(this=_sub(x, half), decimals=places)
    if mode == "down":
        return down
    t = let(down)
    return _add(t, _mul(_case([(_eq(t, x), _n(0))], sign.copy()), _n(Decimal(1).scaleb(-n))))


def _sql_round_unknown(mode: str, x: exp.Expr, n: int) -> exp.Expr:
    """ROUND/ROUNDUP/ROUNDDOWN to 0 <= n < 18 places of a number that may be a DECIMAL or a
    DOUBLE (`FormCall.exact` and `FormCall.double` both False: a column whose engine type the
    caller did not give): `_sql_round_places` of its text reading ``xd`` (`_text_reading`),
    of x itself from 1e18 on (a DOUBLE there is whole; a DECIMAL is exact). ``xd`` is x
    exactly unless x is a DOUBLE of more than 18 places (|x| < 0.1: 1e-200), which ``xd``
    rounds by less than 5e-19: no point of the grid (n <= 17 places) lies strictly between
    x and ``xd``, so only where ``xd`` is itself the grid point (down, up) or the tie (half
    up) that decides, and x lies on its other side (compared in DOUBLE, where x differs from
    ``xd``'s DOUBLE), is the answer the next grid point (ROUNDUP(1e-200, 2) = 0.01, where
    ``xd`` is 0). No DOUBLE algorithm: a third of `_sql_round`'s general form."""
    xd = _text_reading(x)
    r = let(_sql_round_places(mode, xd, n))
    step = _n(Decimal(1).scaleb(-n))
    beyond = (_gt if mode == "up" else _lt)(_abs(_double(x)), _abs(_double(xd)))
    hit = _eq(r, xd) if mode != "half_up" else _eq(_mul(_abs(_sub(xd, r)), _n(2)), step)
    sign = exp.Cast(this=exp.Sign(this=x), to=dtype("INT"))
    moved = (_add if mode == "up" else _sub)(r, _mul(sign, step))
    return _case([(_is_null(xd), _sql_round_places(mode, x, n)), (_and(hit, beyond), moved)],
                 r)
