"""Securities (finance pack): coupon dates and counts (COUPPCD, COUPNCD, COUPNUM, COUPDAYS,
COUPDAYBS, COUPDAYSNC), coupon bonds (PRICE, YIELD, DURATION, MDURATION, ACCRINT), securities
paying at maturity (ACCRINTM, PRICEMAT, YIELDMAT), discounted securities (PRICEDISC,
YIELDDISC, DISC, INTRATE, RECEIVED), Treasury bills (TBILLPRICE, TBILLYIELD, TBILLEQ), and
DAYS360.

Contract: Excel's arguments and errors: settlement must precede maturity, frequency is 1, 2
or 4, basis 0 (US 30/360), 1 (actual/actual), 2 (actual/360), 3 (actual/365) or 4 (European
30/360), all truncated; otherwise ``#NUM!``. Coupon dates step back from maturity by 12 /
frequency months, keeping the month's end when maturity is one. Day counts per basis follow
Excel's coupon functions (30/360 US with its February rule for basis 0). Prices and yields are
computed in binary floating point as Excel does (closed-form geometric sums, never a loop over
coupons); YIELD solves by the bracketed regula falsi of `_special` (capped). ACCRINT walks the
quasi-coupon periods of first_interest's schedule back to issue, as Excel does (a negative
slice with calc_method FALSE before first_interest), at most `ACCRINT_PERIODS`. No polars or SQL
form: coupon schedules are calendar walks with no column expression.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

from ..types import BOOLEAN, DATE, NUMBER
from ..values import DIV0, NUM, XLError
from . import _calendar as cal
from . import _numeric as nm
from . import _special as sp
from ._numeric import Number
from .spec import Cost, Refuse, builtin, p, sig

_N = NUMBER
_PACK = "finance"
#: Quasi-coupon periods ACCRINT walks at most (#NUM! beyond).
ACCRINT_PERIODS = 1000
_REFUSE = Refuse("coupon schedules and day counts are calendar walks per basis (month ends, "
                 "30/360 February rules) with no faithful column or SQL expression")
_SETTLE = p("settlement", DATE)
_MATURITY = p("maturity", DATE)
_FREQ = p("frequency", _N, doc="coupons per year: 1, 2 or 4")
_BASIS = p("basis", _N, 0, "day count: 0 US 30/360, 1 actual/actual, 2 actual/360, "
                           "3 actual/365, 4 European 30/360")


def _date(d: Any) -> dt.date:
    return d.date() if isinstance(d, dt.datetime) else d


def _basis(basis: Number) -> int:
    b = nm.trunc_int(basis)
    if b not in (0, 1, 2, 3, 4):
        raise XLError(NUM, "basis must be 0, 1, 2, 3 or 4")
    return b


def _frequency(frequency: Number) -> int:
    f = nm.trunc_int(frequency)
    if f not in (1, 2, 4):
        raise XLError(NUM, "frequency must be 1, 2 or 4")
    return f


def _ordered(settlement: Any, maturity: Any) -> tuple[dt.date, dt.date]:
    s, m = _date(settlement), _date(maturity)
    if s >= m:
        raise XLError(NUM, "settlement must be before maturity")
    return s, m


def _days360(a: dt.date, b: dt.date, european: bool) -> int:
    if european:
        d1, d2 = min(a.day, 30), min(b.day, 30)
    else:
        d1, d2 = a.day, b.day
        if d1 == cal.days_in_month(a.year, a.month):
            d1 = 30  # the last day of the month (February included) counts as the 30th
        if d2 == 31 and d1 >= 30:
            d2 = 30
    return (b.year - a.year) * 360 + (b.month - a.month) * 30 + d2 - d1


def _day_count(a: dt.date, b: dt.date, basis: int) -> int:
    """Days from a to b (negative when b is earlier) on the basis, as the securities functions
    count them (30/360 US by `_us360`'s rules, which differ from DAYS360's at February's end:
    COUPDAYBS(DATE(1993,12,31), DATE(2000,2,28), 1, 0) is 301 in Excel)."""
    if basis == 0:
        return _us360(a, b, False)
    if basis == 4:
        return _days360(a, b, True)
    return b.toordinal() - a.toordinal()


def _step(d: dt.date, months: int, end_of_month: bool) -> dt.date:
    return cal.end_of_month(d, months) if end_of_month else cal.add_months(d, months)


def _coupons(settlement: dt.date, maturity: dt.date, frequency: int) -> tuple[dt.date, dt.date, int]:
    """(previous coupon date, next coupon date, coupons from next to maturity)."""
    eom = maturity.day == cal.days_in_month(maturity.year, maturity.month)
    months = 12 // frequency
    # jump close first (no loop over centuries of coupons): k coupons back from maturity
    # lands in the year after settlement's; then a few single steps settle it
    k = max(0, (maturity.year - settlement.year - 1) * frequency)
    nxt = _step(maturity, -months * k, eom)
    while nxt <= settlement:  # pragma: no cover - k is a lower bound; at most a few steps
        k -= 1
        nxt = _step(maturity, -months * k, eom)
    prev = _step(maturity, -months * (k + 1), eom)
    while prev > settlement:
        k += 1
        nxt, prev = prev, _step(maturity, -months * (k + 1), eom)
    return prev, nxt, k + 1


def _period_days(prev: dt.date, nxt: dt.date, basis: int, frequency: int) -> float:
    if basis == 1:
        return float(nxt.toordinal() - prev.toordinal())
    return (365.0 if basis == 3 else 360.0) / frequency


#: (prev, next, N, A days since prev, E days of the period, DSC days to next, frequency)
_Facts = tuple[dt.date, dt.date, int, float, float, float, int]


def _coupon_facts(settlement: Any, maturity: Any, frequency: Number, basis: Number
                  ) -> _Facts:
    """(prev, next, N, A days since prev, E days of the period, DSC days to next, freq)."""
    s, m = _ordered(settlement, maturity)
    f, b = _frequency(frequency), _basis(basis)
    prev, nxt, n = _coupons(s, m, f)
    e = _period_days(prev, nxt, b, f)
    a = float(_day_count(prev, s, b))
    if b == 0:  # the period's own 30/360 length less A (a 31st or February's end moves it)
        dsc = _us360(prev, nxt, True) - a
    else:
        dsc = float(_day_count(s, nxt, b))
    return prev, nxt, n, a, e, dsc, f


def _bond_facts(settlement: Any, maturity: Any, frequency: Number, basis: Number) -> _Facts:
    """The coupon facts PRICE, YIELD and DURATION discount with: DSC is E - A on every basis
    (Excel's pricing; with actual/360 and actual/365 it is not COUPDAYSNC's actual count:
    YIELD(45748, 46825, 0.22, 62.736929069290866, 15, 1, 2) is 0.12 in Excel only so)."""
    prev, nxt, n, a, e, _, f = _coupon_facts(settlement, maturity, frequency, basis)
    return prev, nxt, n, a, e, e - a, f


def _out(x: float) -> Decimal:
    return nm.from_float(x)


_COUP: dict[str, Any] = dict(cost=Cost.const(1000), errors=("#NUM!",), pack=_PACK, category="finance",
             polars=_REFUSE, sql=_REFUSE)
_SIG = sig(_SETTLE, _MATURITY, _FREQ, _BASIS, returns=_N)
_DSIG = sig(_SETTLE, _MATURITY, _FREQ, _BASIS, returns=DATE)
_S, _M = "DATE(2011, 1, 25)", "DATE(2011, 11, 15)"


@builtin("COUPPCD", _DSIG, doc="The coupon date on or before settlement.",
         examples=[f"COUPPCD({_S}, {_M}, 2, 1) -> DATE(2010, 11, 15)",
                   "COUPPCD(DATE(2024, 3, 31), DATE(2025, 8, 31), 4) -> DATE(2024, 2, 29)",
                   f"COUPPCD({_M}, {_S}, 2) -> #NUM!"], **_COUP)
def couppcd(settlement: Any, maturity: Any, frequency: Number, basis: Number = 0) -> dt.date:
    return _coupon_facts(settlement, maturity, frequency, basis)[0]


@builtin("COUPNCD", _DSIG, doc="The first coupon date after settlement.",
         examples=[f"COUPNCD({_S}, {_M}, 2, 1) -> DATE(2011, 5, 15)",
                   f"COUPNCD({_S}, {_M}, 1) -> DATE(2011, 11, 15)",
                   f"COUPNCD({_S}, {_M}, 3) -> #NUM!"], **_COUP)
def coupncd(settlement: Any, maturity: Any, frequency: Number, basis: Number = 0) -> dt.date:
    return _coupon_facts(settlement, maturity, frequency, basis)[1]


@builtin("COUPNUM", _SIG, doc="The number of coupons payable between settlement and maturity.",
         examples=["COUPNUM(DATE(2007, 1, 25), DATE(2008, 11, 15), 2, 1) -> 4",
                   f"COUPNUM({_S}, {_M}, 4) -> 4", f"COUPNUM({_S}, {_M}, 2, 5) -> #NUM!"], **_COUP)
def coupnum(settlement: Any, maturity: Any, frequency: Number, basis: Number = 0) -> int:
    return _coupon_facts(settlement, maturity, frequency, basis)[2]


@builtin("COUPDAYS", _SIG, doc="The number of days in the coupon period of settlement.",
         examples=[f"COUPDAYS({_S}, {_M}, 2, 1) -> 181", f"COUPDAYS({_S}, {_M}, 2, 0) -> 180",
                   f"COUPDAYS({_S}, {_M}, 4, 3) -> 91.25"], **_COUP)
def coupdays(settlement: Any, maturity: Any, frequency: Number, basis: Number = 0) -> Decimal:
    return _out(_coupon_facts(settlement, maturity, frequency, basis)[4])


@builtin("COUPDAYBS", _SIG, doc="The number of days from the coupon period's start to "
                                "settlement.",
         examples=[f"COUPDAYBS({_S}, {_M}, 2, 1) -> 71", f"COUPDAYBS({_S}, {_M}, 2) -> 70",
                   f"COUPDAYBS({_M}, {_M}, 2) -> #NUM!"], **_COUP)
def coupdaybs(settlement: Any, maturity: Any, frequency: Number, basis: Number = 0) -> Decimal:
    return _out(_coupon_facts(settlement, maturity, frequency, basis)[3])


@builtin("COUPDAYSNC", _SIG, doc="The number of days from settlement to the next coupon date.",
         examples=[f"COUPDAYSNC({_S}, {_M}, 2, 1) -> 110", f"COUPDAYSNC({_S}, {_M}, 2) -> 110",
                   f"COUPDAYSNC({_S}, {_M}, 0) -> #NUM!"], **_COUP)
def coupdaysnc(settlement: Any, maturity: Any, frequency: Number, basis: Number = 0) -> Decimal:
    return _out(_coupon_facts(settlement, maturity, frequency, basis)[5])


# --------------------------------------------------------------------------- coupon bonds


def _sums(v: float, n: int, d: float) -> tuple[float, float]:
    """(sum of v^(k+d), sum of (k+d) v^(k+d)) for k = 0..n-1, in closed form."""
    if v == 1.0:
        s0, s1 = float(n), n * (n - 1) / 2
    else:
        vn = v ** n
        s0 = (1 - vn) / (1 - v)
        s1 = v * (1 - n * v ** (n - 1) + (n - 1) * vn) / (1 - v) ** 2
    front = v ** d
    return front * s0, front * (s1 + d * s0)


def _price(facts: _Facts, rate: float, yld: float, redemption: float) -> float:
    _, _, n, a, e, dsc, f = facts
    coupon = 100 * rate / f
    if n == 1:
        return (redemption + coupon) / (1 + dsc / e * yld / f) - coupon * a / e
    base = 1 + yld / f
    if base <= 0:
        raise XLError(NUM, "the yield must be greater than -frequency")
    v = 1 / base
    flows, _ = _sums(v, n, dsc / e)
    discount: float = v ** (n - 1 + dsc / e)  # v > 0: a real power (typeshed says Any)
    return redemption * discount + coupon * flows - coupon * a / e


def _bond_args(rate: Number, yld: Number, redemption: Number | None = None) -> None:
    if rate < 0 or yld < 0 or (redemption is not None and redemption <= 0):
        raise XLError(NUM, "rate and yld must be >= 0 and redemption > 0")


@builtin("PRICE", sig(_SETTLE, _MATURITY, p("rate", _N, doc="annual coupon rate"),
                      p("yld", _N, doc="annual yield"), p("redemption", _N, doc="per 100 face"),
                      _FREQ, _BASIS, returns=_N),
         doc="The price per 100 face value of a bond paying periodic interest.",
         examples=["ROUND(PRICE(DATE(2008, 2, 15), DATE(2017, 11, 15), 0.0575, 0.065, 100, 2, 0), 5)"
                   " -> 94.63436",
                   "ROUND(PRICE(DATE(2024, 1, 1), DATE(2024, 6, 1), 0.05, 0.05, 100, 1, 0), 6) -> 99.940476",
                   "PRICE(DATE(2008, 2, 15), DATE(2017, 11, 15), -0.01, 0.065, 100, 2) -> #NUM!"],
         cost=Cost.const(5000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def price(settlement: Any, maturity: Any, rate: Number, yld: Number, redemption: Number,
          frequency: Number, basis: Number = 0) -> Decimal:
    _bond_args(rate, yld, redemption)
    facts = _bond_facts(settlement, maturity, frequency, basis)
    return _out(_price(facts, float(rate), float(yld), float(redemption)))


@builtin("YIELD", sig(_SETTLE, _MATURITY, p("rate", _N), p("pr", _N, doc="price per 100 face"),
                      p("redemption", _N), _FREQ, _BASIS, returns=_N),
         doc="The yield of a bond paying periodic interest, from its price (solved "
             "numerically; closed form within the last coupon period).",
         examples=["ROUND(YIELD(DATE(2008, 2, 15), DATE(2016, 11, 15), 0.0575, 95.04287, 100, 2, 0), 6)"
                   " -> 0.065",
                   "ROUND(YIELD(DATE(2024, 1, 1), DATE(2024, 6, 1), 0.05, 99.940476, 100, 1, 0), 6) -> 0.05",
                   "YIELD(DATE(2008, 2, 15), DATE(2016, 11, 15), 0.0575, 0, 100, 2) -> #NUM!"],
         cost=Cost.const(60_000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def yield_(settlement: Any, maturity: Any, rate: Number, pr: Number, redemption: Number,
           frequency: Number, basis: Number = 0) -> Decimal:
    if rate < 0 or pr <= 0 or redemption <= 0:
        raise XLError(NUM, "rate must be >= 0, pr and redemption > 0")
    facts = _bond_facts(settlement, maturity, frequency, basis)
    _, _, n, a, e, dsc, f = facts
    r, target, red = float(rate), float(pr), float(redemption)
    if n == 1:
        paid = target / 100 + a / e * r / f
        return _out(((red / 100 + r / f) - paid) / paid * f * e / dsc)
    # price falls as the yield rises: solve -price(y) = -pr from y = 0 upward (or below 0)
    def g(y: float) -> float:
        return -_price(facts, r, y, red)
    if g(0.0) >= -target:
        return _out(sp.bisect(g, -target, -f * (1 - 1e-9), 0.0))
    return _out(sp.bisect(g, -target, 0.0, 1.0, grow=True))


def _duration(settlement: Any, maturity: Any, coupon: Number, yld: Number, frequency: Number,
              basis: Number) -> tuple[float, float, int]:
    _bond_args(coupon, yld)
    _, _, n, _, e, dsc, f = _bond_facts(settlement, maturity, frequency, basis)
    y = float(yld)
    v = 1 / (1 + y / f)
    c = 100 * float(coupon) / f
    d = dsc / e
    flows, weighted = _sums(v, n, d)
    t_last = n - 1 + d
    last = 100 * v ** t_last
    value = c * flows + last
    if not value:
        raise XLError(DIV0, "the bond has no value at this yield")
    return (c * weighted + t_last * last) / value / f, y, f


@builtin("DURATION", sig(_SETTLE, _MATURITY, p("coupon", _N), p("yld", _N), _FREQ, _BASIS,
                         returns=_N),
         doc="The Macaulay duration in years of a bond with periodic interest (100 face).",
         examples=["ROUND(DURATION(DATE(2018, 7, 1), DATE(2048, 1, 1), 0.08, 0.09, 2, 1), 7)"
                   " -> 10.9191453",
                   "ROUND(DURATION(DATE(2024, 1, 1), DATE(2026, 1, 1), 0, 0.05, 1), 9) -> 2",
                   "DURATION(DATE(2018, 7, 1), DATE(2048, 1, 1), -0.08, 0.09, 2) -> #NUM!"],
         cost=Cost.const(5000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def duration(settlement: Any, maturity: Any, coupon: Number, yld: Number, frequency: Number,
             basis: Number = 0) -> Decimal:
    return _out(_duration(settlement, maturity, coupon, yld, frequency, basis)[0])


@builtin("MDURATION", sig(_SETTLE, _MATURITY, p("coupon", _N), p("yld", _N), _FREQ, _BASIS,
                          returns=_N),
         doc="The modified duration of a bond: DURATION / (1 + yld / frequency).",
         examples=["ROUND(MDURATION(DATE(2008, 1, 1), DATE(2016, 1, 1), 0.08, 0.09, 2, 1), 6)"
                   " -> 5.73567",
                   "ROUND(MDURATION(DATE(2024, 1, 1), DATE(2026, 1, 1), 0, 0.05, 1), 9) -> 1.904761905",
                   "MDURATION(DATE(2016, 1, 1), DATE(2008, 1, 1), 0.08, 0.09, 2) -> #NUM!"],
         cost=Cost.const(5000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def mduration(settlement: Any, maturity: Any, coupon: Number, yld: Number, frequency: Number,
              basis: Number = 0) -> Decimal:
    d, y, f = _duration(settlement, maturity, coupon, yld, frequency, basis)
    return _out(d / (1 + y / f))


@builtin("ACCRINT",
         sig(p("issue", DATE), p("first_interest", DATE), _SETTLE, p("rate", _N),
             p("par", _N, Decimal(1000)), _FREQ, _BASIS,
             p("calc_method", BOOLEAN, True, "TRUE: from issue; FALSE: from first_interest "
                                             "once settlement is past it"), returns=_N),
         doc="The interest accrued by a security paying periodic interest, up to settlement.",
         examples=["ROUND(ACCRINT(DATE(2008, 3, 1), DATE(2008, 8, 31), DATE(2008, 5, 1), 0.1, "
                   "1000, 2, 0), 6) -> 16.666667",
                   "ROUND(ACCRINT(DATE(2008, 3, 5), DATE(2008, 8, 31), DATE(2008, 5, 1), 0.1, "
                   "1000, 2, 0, FALSE), 6) -> 15.555556",
                   "ROUND(ACCRINT(DATE(2008, 4, 5), DATE(2008, 8, 31), DATE(2008, 5, 1), 0.1, "
                   "1000, 2, 0, TRUE), 6) -> 7.222222",
                   "ACCRINT(DATE(2008, 5, 1), DATE(2008, 8, 31), DATE(2008, 3, 1), 0.1, 1000, 2)"
                   " -> #NUM!"],
         cost=Cost.const(200 * ACCRINT_PERIODS), errors=("#NUM!",), pack=_PACK,
         category="finance", polars=_REFUSE, sql=_REFUSE)
def accrint(issue: Any, first_interest: Any, settlement: Any, rate: Number,
            par: Number = Decimal(1000), frequency: Number = 1, basis: Number = 0,
            calc_method: bool = True) -> Decimal:
    start, first, settle = _date(issue), _date(first_interest), _date(settlement)
    f, b = _frequency(frequency), _basis(basis)
    if start >= settle or rate <= 0 or par <= 0:
        raise XLError(NUM, "issue must precede settlement, rate and par be > 0")
    return _out(float(par) * float(rate) / f * _accrued_periods(start, first, settle, f, b,
                                                                calc_method))


def _us360(a: dt.date, b: dt.date, both: bool) -> int:
    """30/360 US as ACCRINT counts it: an end on February's last day is the 30th when the
    start is one too (or always, `both`); a 31st end is the 30th when the start is the 30th
    or later (or always, `both`); a 31st or February's-last-day start is the 30th."""
    d1, d2 = a.day, b.day
    if _feb_end(b) and (_feb_end(a) or both):
        d2 = 30
    if d2 == 31 and (d1 >= 30 or both):
        d2 = 30
    if d1 == 31 or _feb_end(a):
        d1 = 30
    return (b.year - a.year) * 360 + (b.month - a.month) * 30 + d2 - d1


def _feb_end(d: dt.date) -> bool:
    return d.month == 2 and d.day == cal.days_in_month(d.year, 2)


def _accrued_periods(issue: dt.date, first: dt.date, settle: dt.date, f: int, basis: int,
                     from_issue: bool) -> float:
    """Excel's ACCRINT sum of A_i / NL_i over the quasi-coupon periods, in coupons.

    The schedule steps by 12/f months from first_interest (each step from the previous date,
    month ends kept when first_interest is one). Settlement's slice runs from the coupon date
    before it (walked forward from first_interest when settlement is later and calc_method
    is TRUE; otherwise the regular date before first_interest, so that with calc_method
    FALSE a settlement before first_interest accrues a negative slice) and is divided by the
    regular period's length. Walking back from that date to issue, a whole period counts 1
    (0 with calc_method FALSE) and the period holding issue counts its stub. This is the
    behaviour Excel's cached values show (IronCalc's Excel-computed workbooks; the algorithm
    was reverse-engineered in fsprojects/ExcelFinancialFunctions, bonds.fs).
    """
    months = 12 // f
    eom = first.day == cal.days_in_month(first.year, first.month)
    regular = _step(first, -months, eom)
    pcd = regular
    if settle > first and from_issue:
        pcd, front = first, _step(first, months, eom)
        for _ in range(ACCRINT_PERIODS):
            if front >= settle:
                break
            pcd, front = front, _step(front, months, eom)
        else:
            raise XLError(NUM, f"ACCRINT walks at most {ACCRINT_PERIODS} periods")
    if basis == 1:
        length = float(first.toordinal() - regular.toordinal())
    else:
        length = (365.0 if basis == 3 else 360.0) / f
    total = _day_count(max(issue, pcd), settle, basis) / length
    whole = 1.0 if from_issue else 0.0
    end = pcd
    for _ in range(ACCRINT_PERIODS):
        if end <= issue:
            return total
        begin = _step(end, -months, eom)
        if issue <= begin:
            total += whole
        elif basis == 0:
            total += _us360(issue, end, False) / _us360(begin, end, True)
        else:
            total += _day_count(issue, end, basis) / _stub_length(begin, end, f, basis)
        end = begin
    raise XLError(NUM, f"ACCRINT walks at most {ACCRINT_PERIODS} periods")


def _stub_length(begin: dt.date, end: dt.date, f: int, basis: int) -> float:
    """NL of the period holding issue: actual days (basis 1), 365/f (basis 3), 30/360 US
    days (basis 2, Excel's denominator convention), European 30/360 days (basis 4)."""
    if basis == 1:
        return float(end.toordinal() - begin.toordinal())
    if basis == 3:
        return 365.0 / f
    if basis == 2:
        return float(_us360(begin, end, False))
    return float(_days360(begin, end, True))


# ---------------------------------------------------------------- at maturity and discounted


def _yearfrac(a: dt.date, b: dt.date, basis: int) -> float:
    return float(cal.yearfrac(a, b, basis))


def _simple(settlement: Any, maturity: Any, basis: Number) -> tuple[dt.date, dt.date, int, float]:
    s, m = _ordered(settlement, maturity)
    b = _basis(basis)
    return s, m, b, _yearfrac(s, m, b)


@builtin("ACCRINTM", sig(p("issue", DATE), _SETTLE, p("rate", _N), p("par", _N, Decimal(1000)),
                         _BASIS, returns=_N),
         doc="The interest accrued by a security paying interest at maturity.",
         examples=["ROUND(ACCRINTM(DATE(2008, 4, 1), DATE(2008, 6, 15), 0.1, 1000, 3), 6)"
                   " -> 20.547945",
                   "ACCRINTM(DATE(2024, 1, 1), DATE(2024, 7, 1), 0.1, 1000) -> 50",
                   "ACCRINTM(DATE(2024, 1, 1), DATE(2024, 7, 1), 0, 1000) -> #NUM!"],
         cost=Cost.const(100), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def accrintm(issue: Any, settlement: Any, rate: Number, par: Number = Decimal(1000),
             basis: Number = 0) -> Decimal:
    _, _, _, years = _simple(issue, settlement, basis)
    if rate <= 0 or par <= 0:
        raise XLError(NUM, "rate and par must be greater than 0")
    return _out(float(par) * float(rate) * years)


def _discounted(name: str, doc: str, examples: list[str], third: str, fourth: str,
                formula: Any) -> Any:
    def impl(settlement: Any, maturity: Any, a: Number, b: Number, basis: Number = 0) -> Decimal:
        _, _, _, years = _simple(settlement, maturity, basis)
        if a <= 0 or b <= 0:
            raise XLError(NUM, f"{third} and {fourth} must be greater than 0")
        return _out(formula(float(a), float(b), years))

    impl.__name__ = name.lower()
    impl.__module__ = __name__
    return builtin(name, sig(_SETTLE, _MATURITY, p(third, _N), p(fourth, _N), _BASIS,
                             returns=_N),
                   doc=doc, examples=examples, cost=Cost.const(100), errors=("#NUM!",),
                   pack=_PACK, category="finance", polars=_REFUSE, sql=_REFUSE)(impl)


_D1, _D2 = "DATE(2008, 2, 16)", "DATE(2008, 3, 1)"
PRICEDISC = _discounted(
    "PRICEDISC", "The price per 100 face value of a discounted security.",
    [f"ROUND(PRICEDISC({_D1}, {_D2}, 0.0525, 100, 2), 5) -> 99.79583",
     "PRICEDISC(DATE(2024, 1, 1), DATE(2025, 1, 1), 0.05, 100) -> 95",
     f"PRICEDISC({_D2}, {_D1}, 0.0525, 100) -> #NUM!"],
    "discount", "redemption", lambda d, r, t: r - d * r * t)
YIELDDISC = _discounted(
    "YIELDDISC", "The annual yield of a discounted security from its price.",
    [f"ROUND(YIELDDISC({_D1}, {_D2}, 99.795, 100, 2), 6) -> 0.052823",
     "ROUND(YIELDDISC(DATE(2024, 1, 1), DATE(2025, 1, 1), 95, 100), 9) -> 0.052631579",
     f"YIELDDISC({_D1}, {_D2}, 0, 100) -> #NUM!"],
    "pr", "redemption", lambda pr, r, t: (r - pr) / pr / t)
DISC = _discounted(
    "DISC", "The discount rate of a security from its price and redemption.",
    ["ROUND(DISC(DATE(2018, 7, 1), DATE(2048, 1, 1), 97.975, 100, 1), 6) -> 0.000686",
     "DISC(DATE(2024, 1, 1), DATE(2025, 1, 1), 95, 100) -> 0.05",
     "DISC(DATE(2024, 1, 1), DATE(2025, 1, 1), 95, 0) -> #NUM!"],
    "pr", "redemption", lambda pr, r, t: (r - pr) / r / t)
INTRATE = _discounted(
    "INTRATE", "The interest rate of a fully invested security.",
    ["ROUND(INTRATE(DATE(2008, 2, 15), DATE(2008, 5, 15), 1000000, 1014420, 2), 6) -> 0.05768",
     "INTRATE(DATE(2024, 1, 1), DATE(2025, 1, 1), 100, 105) -> 0.05",
     "INTRATE(DATE(2024, 1, 1), DATE(2025, 1, 1), 0, 105) -> #NUM!"],
    "investment", "redemption", lambda inv, r, t: (r - inv) / inv / t)
RECEIVED = _discounted(
    "RECEIVED", "The amount received at maturity for a fully invested discounted security.",
    ["ROUND(RECEIVED(DATE(2008, 2, 15), DATE(2008, 5, 15), 1000000, 0.0575, 2), 3) -> 1014584.654",
     "RECEIVED(DATE(2024, 1, 1), DATE(2025, 1, 1), 95, 0.05) -> 100",
     "RECEIVED(DATE(2024, 1, 1), DATE(2025, 1, 1), 95, 0) -> #NUM!"],
    "investment", "discount", lambda inv, d, t: _received(inv, d, t))


def _received(investment: float, discount: float, years: float) -> float:
    left = 1 - discount * years
    if left <= 0:
        raise XLError(NUM, "the discount consumes the whole amount")
    return investment / left


def _at_maturity(settlement: Any, maturity: Any, issue: Any, basis: Number
                 ) -> tuple[float, float, float]:
    """(DIM, A, DSM) in years, as Excel's PRICEMAT and YIELDMAT take them: days from issue to
    maturity and to settlement on the basis, DSM their difference (30/360 is not additive),
    over the year length from issue to settlement (basis 1: YEARFRAC's)."""
    s, m = _ordered(settlement, maturity)
    i = _date(issue)
    b = _basis(basis)
    if i >= s:
        raise XLError(NUM, "issue must precede settlement")
    year = _year_length(i, s, b)
    dim, a = _day_count(i, m, b), _day_count(i, s, b)
    return dim / year, a / year, (dim - a) / year


def _year_length(a: dt.date, b: dt.date, basis: int) -> float:
    if basis == 1:
        days, years = cal.actual_year_length(a, b)
        return days / years
    return 365.0 if basis == 3 else 360.0


@builtin("PRICEMAT", sig(_SETTLE, _MATURITY, p("issue", DATE), p("rate", _N), p("yld", _N),
                         _BASIS, returns=_N),
         doc="The price per 100 face value of a security paying interest at maturity.",
         examples=["ROUND(PRICEMAT(DATE(2008, 2, 15), DATE(2008, 4, 13), DATE(2007, 11, 11), "
                   "0.061, 0.061, 0), 6) -> 99.984499",
                   "ROUND(PRICEMAT(DATE(2024, 1, 1), DATE(2025, 1, 1), DATE(2023, 1, 1), 0, 0), 6)"
                   " -> 100",
                   "PRICEMAT(DATE(2024, 1, 1), DATE(2025, 1, 1), DATE(2024, 6, 1), 0.05, 0.05)"
                   " -> #NUM!"],
         cost=Cost.const(100), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def pricemat(settlement: Any, maturity: Any, issue: Any, rate: Number, yld: Number,
             basis: Number = 0) -> Decimal:
    _bond_args(rate, yld)
    dim, a, dsm = _at_maturity(settlement, maturity, issue, basis)
    r, y = float(rate), float(yld)
    return _out((100 + dim * r * 100) / (1 + dsm * y) - a * r * 100)


@builtin("YIELDMAT", sig(_SETTLE, _MATURITY, p("issue", DATE), p("rate", _N), p("pr", _N),
                         _BASIS, returns=_N),
         doc="The annual yield of a security paying interest at maturity, from its price.",
         examples=["ROUND(YIELDMAT(DATE(2008, 3, 15), DATE(2008, 11, 3), DATE(2007, 11, 8), "
                   "0.0625, 100.0123, 0), 6) -> 0.060954",
                   "ROUND(YIELDMAT(DATE(2024, 1, 1), DATE(2025, 1, 1), DATE(2023, 1, 1), 0, 100), 9)"
                   " -> 0",
                   "YIELDMAT(DATE(2024, 1, 1), DATE(2025, 1, 1), DATE(2023, 1, 1), 0, 0) -> #NUM!"],
         cost=Cost.const(100), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def yieldmat(settlement: Any, maturity: Any, issue: Any, rate: Number, pr: Number,
             basis: Number = 0) -> Decimal:
    if rate < 0 or pr <= 0:
        raise XLError(NUM, "rate must be >= 0 and pr > 0")
    dim, a, dsm = _at_maturity(settlement, maturity, issue, basis)
    r, price_ = float(rate), float(pr) / 100
    paid = price_ + a * r
    return _out(((1 + dim * r) - paid) / paid / dsm)


def _tbill(settlement: Any, maturity: Any) -> int:
    s, m = _ordered(settlement, maturity)
    days = m.toordinal() - s.toordinal()
    if m > cal.add_months(s, 12):
        raise XLError(NUM, "a Treasury bill matures within one year of settlement")
    return days


_T1, _T2 = "DATE(2008, 3, 31)", "DATE(2008, 6, 1)"


@builtin("TBILLPRICE", sig(_SETTLE, _MATURITY, p("discount", _N), returns=_N),
         doc="The price per 100 face value of a Treasury bill.",
         examples=[f"TBILLPRICE({_T1}, {_T2}, 0.09) -> 98.45", f"TBILLPRICE({_T1}, {_T2}, 0) -> #NUM!",
                   f"TBILLPRICE({_T1}, DATE(2009, 6, 1), 0.09) -> #NUM!"],
         cost=Cost.const(50), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def tbillprice(settlement: Any, maturity: Any, discount: Number) -> Decimal:
    days = _tbill(settlement, maturity)
    if discount <= 0:
        raise XLError(NUM, "discount must be greater than 0")
    value = 100 * (1 - nm.dec(discount) * days / 360)
    if value <= 0:
        raise XLError(NUM, "the price would be 0 or less")
    return nm.finish(value)


@builtin("TBILLYIELD", sig(_SETTLE, _MATURITY, p("pr", _N), returns=_N),
         doc="The yield of a Treasury bill from its price per 100 face value.",
         examples=[f"ROUND(TBILLYIELD({_T1}, {_T2}, 98.45), 6) -> 0.091417",
                   f"TBILLYIELD({_T1}, {_T2}, 100) -> 0", f"TBILLYIELD({_T1}, {_T2}, 0) -> #NUM!"],
         cost=Cost.const(50), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def tbillyield(settlement: Any, maturity: Any, pr: Number) -> Decimal:
    days = _tbill(settlement, maturity)
    if pr <= 0:
        raise XLError(NUM, "pr must be greater than 0")
    return nm.finish((100 - nm.dec(pr)) / nm.dec(pr) * 360 / days)


@builtin("TBILLEQ", sig(_SETTLE, _MATURITY, p("discount", _N), returns=_N),
         doc="The bond-equivalent yield of a Treasury bill.",
         examples=[f"ROUND(TBILLEQ({_T1}, {_T2}, 0.0914), 6) -> 0.094151",
                   "ROUND(TBILLEQ(DATE(2024, 1, 1), DATE(2024, 10, 1), 0.05), 6) -> 0.052244",
                   f"TBILLEQ({_T1}, {_T2}, 0) -> #NUM!"],
         cost=Cost.const(50), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_REFUSE, sql=_REFUSE)
def tbilleq(settlement: Any, maturity: Any, discount: Number) -> Decimal:
    days = _tbill(settlement, maturity)
    if discount <= 0:
        raise XLError(NUM, "discount must be greater than 0")
    d = float(discount)
    if days <= 182:
        return _out(365 * d / (360 - d * days))
    price_ = 100 * (1 - d * days / 360)
    if price_ <= 0:
        raise XLError(NUM, "the price would be 0 or less")
    t = days / 365
    root = t * t - (2 * t - 1) * (1 - 100 / price_)
    return _out((-2 * t + 2 * math.sqrt(root)) / (2 * t - 1))


@builtin("DAYS360", sig(p("start_date", DATE), p("end_date", DATE),
                        p("method", BOOLEAN, False, "FALSE US (NASD), TRUE European"),
                        returns=_N),
         doc="The days between two dates in a 360-day year of twelve 30-day months.",
         examples=["DAYS360(DATE(2011, 1, 30), DATE(2011, 2, 1)) -> 1",
                   "DAYS360(DATE(2011, 1, 1), DATE(2011, 12, 31)) -> 360",
                   "DAYS360(DATE(2011, 1, 1), DATE(2011, 2, 1)) -> 30",
                   "DAYS360(DATE(2024, 3, 31), DATE(2024, 1, 31), TRUE) -> -60"],
         cost=Cost.const(5), errors=(), can_error=False, category="dates",
         polars=_REFUSE, sql=_REFUSE)
def days360(start_date: Any, end_date: Any, method: bool = False) -> int:
    return _days360(_date(start_date), _date(end_date), method)
