"""A decimal-mode quotient placed exactly on a grid: what the SQL grid functions (ROUND,
TRUNC, FLOOR, MOD... of `math.sql`) answer on when their number is a quotient of decimals.

Contract: `quotient_grid(call, i, step)` returns a `Grid` for argument ``i`` of a SQL form call
when it is a quotient marked by the division form (`kit.quotient_of`), whose operands are
exact (DECIMAL or integer, or of unknown engine type, read through their text), in decimal
mode, outside a lambda body; else None, and the form keeps its own algorithm. Every
expression written is total on every row (bound once, `let`): casts and products sit under
their range tests. Importing this imports sqlglot, never polars.
"""

from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple

from sqlglot import exp

from ...call import FormCall
from ...sql.dialects import DOUBLE, marked
from ...sql.kit import SqlColumn, not_null, quotient_of
from ...sql.let import let
from ..operators.sql_arith import (IN_LAMBDA, all_of, cast_to, decimal_cast, double, floating,
                                   p, when)
from ..operators.sql_arith import add as _add, div as _div, eq as _eq, ge as _ge, lt as _lt
from ..operators.sql_arith import mul as _mul, ne as _ne, num as _n, sub as _sub

_and, _case, _double = all_of, when, double


def _neg(a: exp.Expr) -> exp.Expr:
    return exp.Neg(this=p(a))


def _abs(a: exp.Expr) -> exp.Expr:
    return exp.Abs(this=a)


def _floor(x: exp.Expr) -> exp.Expr:
    """FLOOR of a DOUBLE (marked: Spark's answers a BIGINT, `dialects.DOUBLE`)."""
    return marked(exp.Floor(this=x), DOUBLE)


class Grid(NamedTuple):
    """A decimal-mode quotient q = x / y of exact operands (`kit.quotient_of`) placed on the
    grid of a positive ``step`` (`quotient_grid`), exactly: |q| / step = k + rest / unit, a
    whole ``k`` (DECIMAL(38, 0)) and 0 <= rest < unit (DECIMAL(38, 18), in the units of the
    scaled divisor ``unit``), so q is on the grid where rest = 0 and at or past the half step
    where 2 * rest >= unit. ``ok``: the row is placed so (else the caller's DOUBLE algorithm
    answers); ``negative``: q < 0."""

    ok: exp.Expr
    k: exp.Expr
    rest: exp.Expr
    unit: exp.Expr
    negative: exp.Expr
    step: Decimal

    def off(self) -> exp.Expr:
        """q is not on the grid."""
        return _ne(self.rest, _n(0))

    def half(self) -> exp.Expr:
        """|q| is at or past the half step above ``k`` steps (ties away from zero)."""
        return _ge(_mul(self.rest, _n(2)), self.unit)

    def steps(self, more: exp.Expr | None = None) -> exp.Expr:
        """(k, plus one where ``more``) * step: a magnitude on the grid, a DECIMAL."""
        k = self.k if more is None else _case([(more, _add(self.k, _n(1)))], self.k)
        return k if self.step == 1 else _mul(k, _n(self.step))

    def signed(self, magnitude: exp.Expr) -> exp.Expr:
        return _case([(self.negative, _neg(magnitude))], magnitude)

    def floor(self) -> exp.Expr:
        """The grid point at or below q."""
        return _case([(self.negative, _neg(self.steps(self.off())))], self.steps())

    def ceiling(self) -> exp.Expr:
        """The grid point at or above q."""
        return _case([(self.negative, _neg(self.steps()))], self.steps(self.off()))


#: |x| * 10^places and |y| * whole stay below this (DECIMAL(38, 18) holds 1e20).
_GRID_READ = Decimal("1e19")
#: Below this many steps the DOUBLE quotient's count is off by at most one.
_GRID_COUNT = Decimal("1e15")


def quotient_grid(call: FormCall, i: int, step: Decimal) -> Grid | None:
    """Argument ``i`` placed exactly on the grid of ``step`` > 0 (`Grid`) when it is a
    decimal-mode quotient x / y of exact operands (`kit.quotient_of`), else None. The DOUBLE
    quotient lies a hair beside an exact quotient on the grid (-826.80 / 3 is
    -275.59999999999997), so a grid function of it was a step off (TRUNC(a / 3, 2) answered
    -275.59). With step = whole / 10^places, x' = |x| * 10^places and y' = |y| * whole as
    DECIMAL(38, 18) (exact: a value of at most 18 places times a whole literal), |q| / step is
    x' / y'. The DOUBLE's count of steps k (below 1e15) is off by at most one: the remainder
    x' - k * y', exact in DECIMAL, says which way (below 0: one less; y' or more: one more). Only products and sums: DuckDB's DECIMAL(38) % and / (and a DECIMAL(38) read as
    a DOUBLE) cost 20 times more per row. ``ok``: below 1e15 steps and both operands read
    (below 1e19 scaled; a DOUBLE through its text where that reads it back)."""
    if call.numbers != "decimal" or IN_LAMBDA.get() or not step.is_finite() or step <= 0:
        return None
    col = call.column(i)
    quotient = quotient_of(col)
    if quotient is None:
        return None
    places = max(0, -int(step.normalize().as_tuple().exponent))
    whole = step.scaleb(places)
    if places > 17 or whole >= _GRID_COUNT:
        return None
    x = _grid_reading(quotient.dividend, quotient.known_dividend, Decimal(1).scaleb(places))
    y = _grid_reading(quotient.divisor, quotient.known_divisor, whole)
    if x is None or y is None:
        return None
    q = col.value
    ok = let(_and(_lt(_abs(q), _e(_GRID_COUNT * step)), x[1], y[1]))
    xs, ys = x[0], y[0]
    # under ``ok``: the count's cast and product cannot overflow there
    guess = let(_case([(ok, cast_to(_floor(_div(_abs(q), _e(step))), "DECIMAL(38, 0)"))]))
    r0 = let(_sub(xs, _mul(guess, ys)))
    below, above = _lt(r0, _n(0)), _ge(r0, ys)
    count = let(_case([(below, _sub(guess, _n(1))), (above, _add(guess, _n(1)))], guess))
    rest = let(_case([(below, _add(r0, ys)), (above, _sub(r0, ys))], r0))
    if x[2] or y[2]:
        ok = _and(ok, not_null(r0))
    return Grid(ok, count, rest, ys, _lt(q, _n(0)), step)


def _e(value: Decimal) -> exp.Expr:
    """A DOUBLE literal written short (``1e13``, ``1e-2``; `double_literal` writes
    ``10000000000000.0e0``)."""
    return exp.Literal.number(format(value.normalize(), "e").replace("e+", "e"))


def _grid_reading(col: SqlColumn, k: Decimal | None, factor: Decimal
                  ) -> tuple[exp.Expr, exp.Expr, bool] | None:
    """An operand of a marked quotient (``k``: its known value) as |v| * ``factor`` (a whole
    number) in DECIMAL(38, 18), exactly: (that reading, the test that it is below 1e19,
    whether it may be NULL where that test passes: a DOUBLE of more than 18 places, whose
    text does not read it back). None where no row could be read (a constant out of range or
    of more than 18 places, a DECIMAL type of a larger scale)."""
    if k is not None:
        v = abs(k) * factor
        if v == 0 or v >= _GRID_READ or -int(v.normalize().as_tuple().exponent) > 18:
            return None
        return cast_to(_n(v), "DECIMAL(38, 18)"), exp.true(), False
    if col.double or (col.decimal is not None and col.decimal[1] > 18):
        return None
    bound = _GRID_READ / factor
    # |v| cast (ABS inside the cast: PostgreSQL's float8 guards, `dialects.adapt`, read a cast
    # to DECIMAL as exact, an ABS of one not)
    value = _abs(col.value.copy())
    fits: exp.Expr = exp.true()
    if not (col.decimal is not None and col.estimate is None
            and Decimal(10) ** (col.decimal[0] - col.decimal[1]) <= bound):
        size = col.estimate.copy() if col.estimate is not None else \
            col.value.copy() if isinstance(col.value, exp.Column) else _double(col.value.copy())
        fits = _lt(_abs(size), _e(bound))
        value = _case([(fits, value)])  # the cast under its guard
    reading = decimal_cast(col, "DECIMAL(38, 18)", value)
    if col.maybe_double:
        # a DOUBLE's text is its shortest decimal: NULL where that is not the number (more
        # than 18 places), tested where the engine says DOUBLE (DuckDB settles TYPEOF when
        # planning, as `decimal_cast`: a DECIMAL pays no DOUBLE cast, which costs)
        r = let(reading)
        back = _eq(_double(r), _abs(_double(col.value.copy())))
        reading = exp.Case(ifs=[exp.If(this=floating(col.value), true=_case([(back, r)]))],
                           default=r.copy())
    return (reading if factor == 1 else _mul(reading, _n(factor))), fits, col.maybe_double
