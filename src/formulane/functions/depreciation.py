"""Depreciation (finance pack): SLN, SYD, DB, DDB and VDB.

Contract: Excel's arguments, defaults and errors (``#NUM!`` for a negative cost or salvage, a
life or period <= 0, a period beyond the life), in decimal arithmetic. DB rounds its rate to
three places as Excel does; DDB and VDB use the declining-balance rate factor / life with
book value never below salvage; VDB switches to straight line for the remaining life when
that depreciates more (unless no_switch), and prorates a fractional first or last period.
Closed forms except VDB, which walks the periods up to end_period: at most `VDB_PERIODS`
(``#NUM!`` beyond), so its cost is bounded. SLN and SYD have polars and SQL forms
(`columnar/forms/math/elementwise*`, float64); the others are refused.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal

from ..types import BOOLEAN, NUMBER
from ..values import DIV0, NUM, XLError
from . import _numeric as nm
from ._numeric import Number
from .spec import Cost, Refuse, builtin, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "depreciation"

_N = NUMBER
_PACK = "finance"
#: Periods VDB walks at most (1,200: a century of months).
VDB_PERIODS = 1200
_SCHEDULE = Refuse("the declining-balance schedule compounds a rate rounded per Excel's rules "
                   "(and VDB walks the periods): no float64 column form would match the "
                   "scalar engine's decimal result")
_COST = p("cost", _N, doc="initial cost")
_SALVAGE = p("salvage", _N, doc="value at the end of the life")
_LIFE = p("life", _N, doc="number of periods of the life")


def _finish(x: Decimal | int) -> Decimal:
    try:
        return nm.finish(x)
    except (decimal.Overflow, decimal.InvalidOperation):  # pragma: no cover - trapped earlier
        raise XLError(NUM, "the result is out of range") from None


def _non_negative(cost: Number, salvage: Number) -> None:
    if cost < 0 or salvage < 0:
        raise XLError(NUM, "cost and salvage must be 0 or more")


@builtin("SLN", sig(_COST, _SALVAGE, _LIFE, returns=_N),
         doc="The straight-line depreciation per period: (cost - salvage) / life.",
         examples=["SLN(30000, 7500, 10) -> 2250", "SLN(1000, 0, 4) -> 250",
                   "SLN(1000, 100, 0) -> #DIV/0!"],
         cost=Cost.const(10), errors=("#DIV/0!",), pack=_PACK, category="depreciation")
def sln(cost: Number, salvage: Number, life: Number) -> Decimal:
    if not life:
        raise XLError(DIV0, "SLN with a life of 0")
    return _finish((nm.dec(cost) - nm.dec(salvage)) / nm.dec(life))


@builtin("SYD", sig(_COST, _SALVAGE, _LIFE, p("per", _N, doc="the period, 1 to life"),
                    returns=_N),
         doc="The sum-of-years'-digits depreciation of one period.",
         examples=["ROUND(SYD(30000, 7500, 10, 1), 2) -> 4090.91",
                   "ROUND(SYD(30000, 7500, 10, 10), 2) -> 409.09", "SYD(30000, 7500, 10, 11) -> #NUM!"],
         cost=Cost.const(10), errors=("#NUM!",), pack=_PACK, category="depreciation")
def syd(cost: Number, salvage: Number, life: Number, per: Number) -> Decimal:
    if life <= 0 or per <= 0 or per > life:
        raise XLError(NUM, "SYD needs life > 0 and 0 < per <= life")
    n = nm.dec(life)
    return _finish((nm.dec(cost) - nm.dec(salvage)) * (n - nm.dec(per) + 1) * 2 / (n * (n + 1)))


@builtin("DB", sig(_COST, _SALVAGE, _LIFE, p("period", _N, doc="the period (truncated)"),
                   p("month", _N, 12, "months in the first year"), returns=_N),
         doc="The fixed-declining-balance depreciation of a period (rate rounded to three "
             "places, a first year of month months).",
         examples=["ROUND(DB(1000000, 100000, 6, 1, 7), 2) -> 186083.33",
                   "ROUND(DB(1000000, 100000, 6, 2, 7), 2) -> 259639.42",
                   "ROUND(DB(1000000, 100000, 6, 7, 7), 2) -> 15845.1",
                   "DB(1000000, 100000, 6, 8, 7) -> #NUM!"],
         cost=Cost.const(2000), errors=("#NUM!",), pack=_PACK, category="depreciation",
         polars=_SCHEDULE, sql=_SCHEDULE)
def db(cost: Number, salvage: Number, life: Number, period: Number, month: Number = 12
       ) -> Decimal:
    _non_negative(cost, salvage)
    n, m = nm.dec(life), nm.trunc_int(month)
    if n <= 0 or period <= 0 or not 1 <= m <= 12:
        raise XLError(NUM, "DB needs life > 0, period > 0 and month between 1 and 12")
    # A period below 1 is the first (Excel: DB(100, 10, 1, 0.3, 1) is 7.5, as for period 1).
    per = max(1, nm.trunc_int(period))
    last = n + (1 if m < 12 else 0)
    if per > last:
        raise XLError(NUM, "the period is beyond the life")
    if not cost:
        return Decimal(0)
    c = nm.dec(cost)
    rate = nm.round_digits(1 - nm.power(nm.dec(salvage) / c, 1 / n), 3, "half_up")
    first = c * rate * m / 12
    if per == 1:
        return _finish(first)
    # what is left after the first year and the full years between (with a rate of 1,
    # salvage 0, the second year takes all the rest: DB(100, 0, 13, 2, 1) is 91.67 in Excel)
    book = c - first if per == 2 else (c - first) * nm.power(1 - rate, per - 2)
    if per > n:  # the partial last year
        return _finish(book * rate * (12 - m) / 12)
    return _finish(book * rate)


def _ddb_amount(c: Decimal, s: Decimal, n: Decimal, per: Decimal, f: Decimal) -> Decimal:
    rate = f / n
    if rate >= 1:
        rate = Decimal(1)
        old = c if per == 1 else Decimal(0)
    else:
        old = c * nm.power(1 - rate, per - 1)
    new = c * nm.power(1 - rate, per) if rate < 1 else Decimal(0)
    amount = old - s if new < s else old - new
    return max(amount, Decimal(0))


@builtin("DDB", sig(_COST, _SALVAGE, _LIFE, p("period", _N),
                    p("factor", _N, 2, "rate of decline (2: double declining)"), returns=_N),
         doc="The declining-balance depreciation of a period (double by default), never "
             "below salvage.",
         examples=["ROUND(DDB(2400, 300, 10 * 365, 1), 2) -> 1.32", "DDB(2400, 300, 10, 1, 2) -> 480",
                   "DDB(2400, 300, 10, 2, 1.5) -> 306", "ROUND(DDB(2400, 300, 10, 10), 2) -> 22.12",
                   "DDB(2400, 300, 10, 11) -> #NUM!"],
         cost=Cost.const(4000), errors=("#NUM!",), pack=_PACK, category="depreciation",
         polars=_SCHEDULE, sql=_SCHEDULE)
def ddb(cost: Number, salvage: Number, life: Number, period: Number, factor: Number = 2
        ) -> Decimal:
    _non_negative(cost, salvage)
    if life <= 0 or period <= 0 or factor <= 0 or period > life:
        raise XLError(NUM, "DDB needs life, period and factor > 0 and period <= life")
    if period < 1:
        # Excel answers a period below 1 with the first period's depreciation (DDB(100, 10,
        # 13, 0.3, 3) is 100 * 3 / 13), not a fraction of it
        c, s, f = nm.dec(cost), nm.dec(salvage), nm.dec(factor)
        return _finish(max(min(c * f / nm.dec(life), c - s), Decimal(0)))
    return _finish(_ddb_amount(nm.dec(cost), nm.dec(salvage), nm.dec(life), nm.dec(period),
                               nm.dec(factor)))


@builtin("VDB",
         sig(_COST, _SALVAGE, _LIFE, p("start_period", _N), p("end_period", _N),
             p("factor", _N, 2, "rate of decline"),
             p("no_switch", BOOLEAN, False, "TRUE: never switch to straight line"), returns=_N),
         doc="The declining-balance depreciation between two periods (fractions prorated), "
             "switching to straight line when that is larger unless no_switch.",
         examples=["ROUND(VDB(2400, 300, 10 * 365, 0, 1), 2) -> 1.32",
                   "VDB(2400, 300, 10, 0, 1) -> 480", "ROUND(VDB(2400, 300, 10, 0, 0.875, 1.5), 2) -> 315",
                   "ROUND(VDB(2400, 300, 10 * 12, 6, 18), 2) -> 396.31",
                   "VDB(2400, 300, 10, 2, 1) -> #NUM!"],
         cost=Cost.const(200 * VDB_PERIODS), errors=("#NUM!",), pack=_PACK,
         category="depreciation", polars=_SCHEDULE, sql=_SCHEDULE)
def vdb(cost: Number, salvage: Number, life: Number, start_period: Number, end_period: Number,
        factor: Number = 2, no_switch: bool = False) -> Decimal:
    _non_negative(cost, salvage)
    c, s, n = nm.dec(cost), nm.dec(salvage), nm.dec(life)
    start, end, f = nm.dec(start_period), nm.dec(end_period), nm.dec(factor)
    if n <= 0 or start < 0 or end < start or end > n or f <= 0:
        raise XLError(NUM, "VDB needs 0 <= start_period <= end_period <= life and factor > 0")
    periods = math.ceil(end)
    if periods > VDB_PERIODS:
        raise XLError(NUM, f"VDB walks at most {VDB_PERIODS} periods")
    whole = f >= n  # a rate of 100%: the first period takes everything above salvage
    book, total = c, Decimal(0)
    straight: Decimal | None = None
    for i in range(1, periods + 1):
        if straight is not None:
            amount = straight
        else:
            declining = book if whole else book * f / n  # multiply first: 2400 * 2 / 120 = 40
            amount = min(declining, max(book - s, Decimal(0)))
            if not no_switch:
                remaining = n - (i - 1)
                line = (book - s) / remaining if remaining > 0 else Decimal(0)
                if line > amount:
                    straight = amount = line
        amount = min(amount, max(book - s, Decimal(0)))
        overlap = min(end, Decimal(i)) - max(start, Decimal(i - 1))
        if overlap > 0:
            total += amount * overlap
        book -= amount
    return _finish(total)
