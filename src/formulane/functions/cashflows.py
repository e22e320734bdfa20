"""More of the finance pack: the parts of an annuity payment (IPMT, PPMT, CUMIPMT, CUMPRINC,
ISPMT), NPER, PDURATION, RRI, EFFECT, NOMINAL, dated and modified cash flows (XNPV, XIRR,
MIRR), FVSCHEDULE, DOLLARDE and DOLLARFR.

Contract: Excel's argument order, defaults, sign convention and errors, in decimal arithmetic
through the finance family's own PMT and FV (one definition of the annuity). Cumulative sums
use closed forms (balance differences), never a loop over periods. XIRR solves by Newton's
method (capped, ``#NUM!`` if it does not
converge) in binary floating point, as Excel does, like XNPV; both walk their lists once per
step (XIRR at most `XIRR_STEPS` steps). No polars or SQL form (see the reasons).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from decimal import Decimal
from typing import Any, Callable, cast

from ..types import DATE, NUMBER, list_of, optional
from ..values import DIV0, NUM, VALUE, XLError
from . import _calendar as cal
from . import _numeric as nm
from . import _special as sp
from . import finance
from ._criteria import is_number
from ._numeric import Number
from .spec import Cost, FunctionSpec, Refuse, builtin, p, sig

_N = NUMBER
_PACK = "finance"
_W = nm.WIDE
_ARITH = (decimal.Overflow, decimal.InvalidOperation, decimal.DivisionByZero, ZeroDivisionError)
_ANNUITY = Refuse("kept with the finance family's decimal annuity (PMT, FV): the math "
                  "family's float forms of those are the columnar route, and a second "
                  "float copy here would drift from it")
_FLOWS = Refuse("its cash flows (and dates) are lists walked item by item, and XIRR solves by "
                "Newton's method for a data-dependent number of steps: no column expression")


def _impl(spec: FunctionSpec) -> Callable[..., Any]:
    assert spec.impl is not None  # PMT and FV are declared with their implementations
    return spec.impl


_PMT = _impl(finance.pmt)
_FV = _impl(finance.fv)
_RATE = p("rate", _N, doc="interest rate per period")
_TYPE = p("type", _N, 0, "0: pay at period end, nonzero: at period start")


def _guarded(compute: Any) -> Decimal:
    try:
        return nm.finish(compute())
    except _ARITH:
        raise XLError(NUM, "the computation overflowed or divided by zero") from None


def _period(per: Number, nper: Number) -> None:
    if per < 1 or per > nper:
        raise XLError(NUM, "per must be between 1 and nper")


def _ipmt(rate: Number, per: Number, nper: Number, pv: Number, fv: Number, type_: Number
          ) -> Decimal:
    r = nm.dec(rate)
    payment = _PMT(rate, nper, pv, fv, type_)
    if type_ and per == 1:
        return Decimal(0)
    balance = _FV(rate, nm.dec(per) - 1, payment, pv, type_)
    interest = balance * r
    return _guarded(lambda: interest / (1 + r) if type_ else interest)


@builtin("IPMT", sig(_RATE, p("per", _N, doc="the period, 1 to nper"), p("nper", _N),
                     p("pv", _N), p("fv", _N, 0), _TYPE, returns=_N),
         doc="The interest part of an annuity's payment in period per.",
         examples=["ROUND(IPMT(0.1/12, 1, 3*12, 8000), 2) -> -66.67",
                   "ROUND(IPMT(0.1, 3, 3, 8000), 2) -> -292.45", "IPMT(0.1, 4, 3, 8000) -> #NUM!"],
         cost=Cost.const(6000), errors=("#NUM!", "#DIV/0!"), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def ipmt(rate: Number, per: Number, nper: Number, pv: Number, fv: Number = 0,
         type: Number = 0) -> Decimal:
    _period(per, nper)
    return _ipmt(rate, per, nper, pv, fv, type)


@builtin("PPMT", sig(_RATE, p("per", _N, doc="the period, 1 to nper"), p("nper", _N),
                     p("pv", _N), p("fv", _N, 0), _TYPE, returns=_N),
         doc="The principal part of an annuity's payment in period per.",
         examples=["ROUND(PPMT(0.1/12, 1, 2*12, 2000), 2) -> -75.62",
                   "ROUND(PPMT(0.08, 10, 10, 200000), 2) -> -27598.05",
                   "PPMT(0.08, 0, 10, 200000) -> #NUM!"],
         cost=Cost.const(8000), errors=("#NUM!", "#DIV/0!"), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def ppmt(rate: Number, per: Number, nper: Number, pv: Number, fv: Number = 0,
         type: Number = 0) -> Decimal:
    _period(per, nper)
    payment = _PMT(rate, nper, pv, fv, type)
    return _guarded(lambda: payment - _ipmt(rate, per, nper, pv, fv, type))


def _cumulative(rate: Number, nper: Number, pv: Number, start: Number, end: Number,
                type_: Number) -> tuple[Decimal, Decimal, int, int]:
    """(payment, principal paid in periods start..end, start, end) with Excel's checks.
    Excel counts the whole periods inside [start, end] (CUMPRINC(r, n, pv, 1.5, 9.7, t) covers
    periods 2 to 9, as its computed answers show). With payments at the start of each period
    (type 1) the first payment is all principal and payment k repays the balance left after
    payment k - 1: the principal of periods first..last telescopes to a difference of two
    future values, as it does at the end of each period (type 0)."""
    first, last = math.ceil(start), math.floor(end)
    if rate <= 0 or nper <= 0 or pv <= 0 or first < 1 or last < 1 or first > last \
            or last > nper or type_ not in (0, 1):
        raise XLError(NUM, "needs rate, nper, pv > 0, 1 <= start <= end <= nper, type 0 or 1")
    fv = cast(Callable[..., Decimal], _FV)
    payment = cast(Callable[..., Decimal], _PMT)(rate, nper, pv, 0, type_)
    if not type_:
        principal = fv(rate, first - 1, payment, pv, 0) - fv(rate, last, payment, pv, 0)
    elif first >= 2:
        principal = fv(rate, first - 2, payment, pv, 1) - fv(rate, last - 1, payment, pv, 1)
    else:
        principal = payment + fv(rate, 0, payment, pv, 1) - fv(rate, last - 1, payment, pv, 1)
    return payment, principal, first, last


@builtin("CUMIPMT", sig(_RATE, p("nper", _N), p("pv", _N), p("start_period", _N),
                        p("end_period", _N), p("type", _N, doc="0 end of period, 1 start"),
                        returns=_N),
         doc="The interest paid on a loan between start_period and end_period (inclusive).",
         examples=["ROUND(CUMIPMT(0.09/12, 30*12, 125000, 13, 24, 0), 4) -> -11135.2321",
                   "ROUND(CUMIPMT(0.09/12, 30*12, 125000, 1, 1, 0), 4) -> -937.5",
                   "CUMIPMT(0.09/12, 360, 125000, 13, 12, 0) -> #NUM!",
                   "ROUND(CUMIPMT(0.1, 36, 8000, 3, 10, 1), 6) -> -5676.255397"],
         cost=Cost.const(10000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def cumipmt(rate: Number, nper: Number, pv: Number, start_period: Number, end_period: Number,
            type: Number) -> Decimal:
    payment, principal, first, last = _cumulative(rate, nper, pv, start_period, end_period, type)
    return _guarded(lambda: payment * (last - first + 1) - principal)


@builtin("CUMPRINC", sig(_RATE, p("nper", _N), p("pv", _N), p("start_period", _N),
                         p("end_period", _N), p("type", _N, doc="0 end of period, 1 start"),
                         returns=_N),
         doc="The principal repaid on a loan between start_period and end_period (inclusive).",
         examples=["ROUND(CUMPRINC(0.09/12, 30*12, 125000, 13, 24, 0), 4) -> -934.1071",
                   "ROUND(CUMPRINC(0.09/12, 30*12, 125000, 1, 1, 0), 4) -> -68.2783",
                   "CUMPRINC(0, 360, 125000, 1, 1, 0) -> #NUM!",
                   "ROUND(CUMPRINC(0.1, 36, 8000, 1.5, 10, 1), 6) -> -363.176463"],
         cost=Cost.const(10000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def cumprinc(rate: Number, nper: Number, pv: Number, start_period: Number, end_period: Number,
             type: Number) -> Decimal:
    return _guarded(lambda: _cumulative(rate, nper, pv, start_period, end_period, type)[1])


@builtin("ISPMT", sig(_RATE, p("per", _N), p("nper", _N), p("pv", _N), returns=_N),
         doc="The interest of period per on a loan repaid in equal principal parts "
             "(Lotus-compatible; periods counted from 0).",
         examples=["ROUND(ISPMT(0.1/12, 1, 36, 8000000), 6) -> -64814.814815",
                   "ISPMT(0.1, 0, 3, 8000000) -> -800000", "ISPMT(0.1, 1, 0, 8000) -> #DIV/0!"],
         cost=Cost.const(10), errors=("#DIV/0!",), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def ispmt(rate: Number, per: Number, nper: Number, pv: Number) -> Decimal:
    if not nper:
        raise XLError(DIV0, "ISPMT with nper 0")
    return _guarded(lambda: nm.dec(pv) * nm.dec(rate) * (nm.dec(per) / nm.dec(nper) - 1))


@builtin("NPER", sig(_RATE, p("pmt", _N), p("pv", _N), p("fv", _N, 0), _TYPE, returns=_N),
         doc="The number of periods of an annuity; #NUM! when no number of periods fits.",
         examples=["ROUND(NPER(0.12/12, -100, -1000, 10000, 1), 5) -> 59.67387",
                   "ROUND(NPER(0.12/12, -100, -1000), 5) -> -9.57859", "NPER(0, -100, 1000) -> 10",
                   "NPER(0.1, 100, -10000) -> #NUM!"],
         cost=Cost.const(2000), errors=("#NUM!", "#DIV/0!"), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def nper(rate: Number, pmt: Number, pv: Number, fv: Number = 0, type: Number = 0) -> Decimal:
    r, payment, present, future = nm.dec(rate), nm.dec(pmt), nm.dec(pv), nm.dec(fv)
    if not r:
        if not payment:
            raise XLError(DIV0, "NPER with no rate and no payment")
        return _guarded(lambda: -(present + future) / payment)
    timing = payment * (1 + r * (1 if type else 0))
    top, bottom = timing - future * r, timing + present * r
    if bottom == 0 or top / bottom <= 0 or r <= -1:
        raise XLError(NUM, "no number of periods fits these arguments")
    with decimal.localcontext(_W):
        return _guarded(lambda: (top / bottom).ln() / (1 + r).ln())


@builtin("PDURATION", sig(_RATE, p("pv", _N), p("fv", _N), returns=_N),
         doc="The number of periods for an investment to grow from pv to fv at rate.",
         examples=["PDURATION(0.025, 2000, 2200) = LN(1.1) / LN(1.025) -> TRUE",
                   "ROUND(PDURATION(0.025/12, 1000, 1200), 1) -> 87.6",
                   "PDURATION(0, 1000, 1200) -> #NUM!"],
         cost=Cost.const(2000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def pduration(rate: Number, pv: Number, fv: Number) -> Decimal:
    if rate <= 0 or pv <= 0 or fv <= 0:
        raise XLError(NUM, "rate, pv and fv must be greater than 0")
    with decimal.localcontext(_W):
        return _guarded(lambda: (nm.dec(fv).ln() - nm.dec(pv).ln()) / (1 + nm.dec(rate)).ln())


@builtin("RRI", sig(p("nper", _N), p("pv", _N), p("fv", _N), returns=_N),
         doc="The equivalent interest rate per period for pv to grow to fv in nper periods.",
         examples=["ROUND(RRI(96, 10000, 11000), 7) -> 0.0009933", "RRI(1, 100, 110) -> 0.1",
                   "RRI(0, 100, 110) -> #NUM!"],
         cost=Cost.const(3000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def rri(nper: Number, pv: Number, fv: Number) -> Decimal:
    if nper <= 0 or not pv:
        raise XLError(NUM, "nper must be greater than 0 and pv not 0")
    return _guarded(lambda: nm.power(nm.dec(fv) / nm.dec(pv), 1 / nm.dec(nper)) - 1)


@builtin("EFFECT", sig(p("nominal_rate", _N), p("npery", _N, doc="compounding periods per "
                                                                 "year (truncated)"), returns=_N),
         doc="The effective annual interest rate of a nominal rate compounded npery times.",
         examples=["ROUND(EFFECT(0.0525, 4), 9) -> 0.053542667", "EFFECT(0.1, 1) -> 0.1",
                   "EFFECT(0.1, 0) -> #NUM!"],
         cost=Cost.const(2000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def effect(nominal_rate: Number, npery: Number) -> Decimal:
    n = nm.trunc_int(npery)
    if nominal_rate <= 0 or n < 1:
        raise XLError(NUM, "nominal_rate must be > 0 and npery >= 1")
    return _guarded(lambda: nm.power(1 + nm.dec(nominal_rate) / n, n) - 1)


@builtin("NOMINAL", sig(p("effect_rate", _N), p("npery", _N, doc="compounding periods per "
                                                                 "year (truncated)"), returns=_N),
         doc="The nominal annual interest rate of an effective rate compounded npery times.",
         examples=["ROUND(NOMINAL(0.053543, 4), 7) -> 0.0525003", "NOMINAL(0.1, 1) -> 0.1",
                   "NOMINAL(-0.1, 4) -> #NUM!"],
         cost=Cost.const(3000), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def nominal(effect_rate: Number, npery: Number) -> Decimal:
    n = nm.trunc_int(npery)
    if effect_rate <= 0 or n < 1:
        raise XLError(NUM, "effect_rate must be > 0 and npery >= 1")
    return _guarded(lambda: n * (nm.power(1 + nm.dec(effect_rate), Decimal(1) / n) - 1))


@builtin("FVSCHEDULE", sig(p("principal", _N), p("schedule", list_of(optional(_N))),
                           returns=_N),
         doc="The future value of principal after a schedule of interest rates (blanks are "
             "0%).",
         examples=["ROUND(FVSCHEDULE(1, [0.09, 0.11, 0.1]), 5) -> 1.33089",
                   "FVSCHEDULE(100, []) -> 100", "FVSCHEDULE(100, [BLANK(), 0.5]) -> 150"],
         cost=Cost.linear(4, 4), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_FLOWS, sql=_FLOWS)
def fvschedule(principal: Number, schedule: tuple[Any, ...]) -> Decimal:
    def compute() -> Decimal:
        value = nm.dec(principal)
        with decimal.localcontext(_W):
            for r in schedule:
                if r is not None:
                    value *= 1 + r
        return value

    return _guarded(compute)


def _dated(values: tuple[Any, ...], dates: tuple[Any, ...], odd: str
           ) -> list[tuple[Decimal, int]]:
    """(value, days from the first date) pairs; ``odd`` is the error a text or a logical among
    the values gives (an array constant of mixed types, excel profile): #VALUE! for XIRR,
    #NUM! for XNPV, as Excel answers."""
    if len(values) != len(dates) or not values:
        raise XLError(NUM, "values and dates must be non-empty lists of the same length")
    if any(v is None for v in values) or any(d is None for d in dates):
        raise XLError(NUM, "values and dates cannot hold blanks")
    if not all(is_number(v) for v in values):
        raise XLError(odd, "the values must all be numbers")
    first = _ordinal(dates[0])
    out = []
    for v, d in zip(values, dates):
        days = _ordinal(d) - first
        if days < 0:
            raise XLError(NUM, "no date may precede the first date")
        out.append((nm.dec(v), days))
    return out


def _ordinal(d: Any) -> int:
    """The date's Excel serial number: Excel counts days between serials, so a span across
    its phantom 1900-02-29 is one day longer than the calendar's."""
    return cal.to_serial(d.date() if isinstance(d, dt.datetime) else d)


def _xnpv(rate: float, flows: list[tuple[float, float]]) -> tuple[float, float]:
    """(XNPV, its derivative in rate) in binary floating point, as Excel computes them."""
    base = 1.0 + rate
    value = slope = 0.0
    for v, years in flows:
        discounted = v / base ** years
        value += discounted
        slope -= years * discounted / base
    return value, slope


def _float_flows(flows: list[tuple[Decimal, int]]) -> list[tuple[float, float]]:
    return [(float(v), days / 365.0) for v, days in flows]


@builtin("XNPV", sig(_RATE, p("values", list_of(optional(_N))), p("dates", list_of(optional(DATE))),
                     returns=_N),
         doc="The net present value of cash flows at given dates (years of 365 days from the "
             "first date).",
         examples=["ROUND(XNPV(0.09, [-10000, 2750, 4250, 3250, 2750], [DATE(2008, 1, 1), "
                   "DATE(2008, 3, 1), DATE(2008, 10, 30), DATE(2009, 2, 15), DATE(2009, 4, 1)]), 2)"
                   " -> 2086.65",
                   "XNPV(0.1, [100], [DATE(2024, 1, 1)]) -> 100",
                   "XNPV(0.1, [1, 2], [DATE(2024, 1, 1)]) -> #NUM!"],
         cost=Cost.linear(150, 50), errors=("#NUM!",), pack=_PACK, category="finance",
         polars=_FLOWS, sql=_FLOWS)
def xnpv(rate: Number, values: tuple[Any, ...], dates: tuple[Any, ...]) -> Decimal:
    r = nm.dec(rate)
    if r < 0:
        # Excel's XNPV takes no negative rate (XNPV(-0.3, ...) is #NUM! in Excel: IronCalc's
        # Excel-computed FINANCIAL/XIRR.xlsx, cell Q14), though XIRR may answer one
        raise XLError(NUM, "XNPV's rate must not be negative")
    flows = _float_flows(_dated(values, dates, NUM))
    try:
        return nm.from_float(_xnpv(float(r), flows)[0])
    except (OverflowError, ZeroDivisionError):
        raise XLError(NUM, "XNPV is out of range for these arguments") from None


#: Newton steps XIRR takes at most (#NUM! if it has not converged by then).
XIRR_STEPS = 100


#: Rates XIRR's fallback tries for a change of sign of XNPV when Newton's method fails.
_XIRR_GRID = (-0.999999, -0.9999, -0.999, -0.99, -0.95, -0.9, -0.8, -0.7, -0.6, -0.5, -0.4,
              -0.3, -0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0,
              5.0, 10.0, 20.0, 50.0, 100.0, 1000.0)


def _xirr(flows: list[tuple[float, float]], guess: float) -> float:
    """Newton's method from guess; where it fails (it runs away, past -100% or out of
    range), the root of the bracket nearest the guess among `_XIRR_GRID`'s sign changes, as
    Excel still finds one (XIRR of -100, -10, 10, 100 over 13 years is 0 from a guess of 0.5,
    where Newton's first step lands at 403)."""
    try:
        return _xirr_newton(flows, guess)
    except (XLError, OverflowError, ZeroDivisionError):
        pass
    found = _xirr_bracketed(flows, guess)
    if found is None:
        raise XLError(NUM, f"XIRR did not converge in {XIRR_STEPS} steps; try another guess")
    return found


def _xirr_newton(flows: list[tuple[float, float]], guess: float) -> float:
    rate = guess
    for _ in range(XIRR_STEPS):
        if not rate > -1:
            raise XLError(NUM, "XIRR did not converge (the rate fell to -100% or below)")
        value, slope = _xnpv(rate, flows)
        if not slope or not math.isfinite(value) or not math.isfinite(slope):
            break
        step = value / slope
        if rate - step <= -1:
            # A Newton step past -100% (where XNPV is undefined) goes halfway to -1 instead,
            # so steep negative rates converge as Excel finds them (-0.9978 on IronCalc's cases).
            step = (rate + 1) / 2
        rate -= step
        if not math.isfinite(rate):
            break  # ran away (XNPV flattens out at huge rates)
        if abs(step) <= 1e-12 * max(1.0, abs(rate)):
            if rate + 1 < 1e-9:  # pressed against -100%: no rate, as Excel answers #NUM!
                break
            return rate
    raise XLError(NUM, f"XIRR did not converge in {XIRR_STEPS} steps; try another guess")


def _xirr_bracketed(flows: list[tuple[float, float]], guess: float) -> float | None:
    """The root between the two grid rates (guess included) around a change of sign of
    XNPV whose midpoint is nearest the guess, by `_special.bisect`; None without one."""
    points: list[tuple[float, float]] = []
    for r in sorted({*_XIRR_GRID, guess} if guess > -1 else set(_XIRR_GRID)):
        try:
            value = _xnpv(r, flows)[0]
        except (OverflowError, ZeroDivisionError):
            continue
        if math.isfinite(value):
            points.append((r, value))
    best: tuple[float, float, float] | None = None
    for (a, fa), (b, fb) in zip(points, points[1:]):
        if fa == 0:
            return a
        if (fa < 0) != (fb < 0):
            distance = abs((a + b) / 2 - guess)
            if best is None or distance < best[0]:
                best = (distance, a, b)
    if best is None:
        return points[-1][0] if points and points[-1][1] == 0 else None
    _, lo, hi = best
    sign = 1.0 if _xnpv(lo, flows)[0] < 0 else -1.0
    return sp.bisect(lambda r: sign * _xnpv(r, flows)[0], 0.0, lo, hi)


@builtin("XIRR", sig(p("values", list_of(optional(_N))), p("dates", list_of(optional(DATE))),
                     p("guess", _N, Decimal("0.1"), "a starting rate"), returns=_N),
         doc="The internal rate of return of cash flows at given dates (Newton's method from "
             "guess in binary floating point, as Excel; XNPV at the answer is 0).",
         examples=["ROUND(XIRR([-10000, 2750, 4250, 3250, 2750], [DATE(2008, 1, 1), "
                   "DATE(2008, 3, 1), DATE(2008, 10, 30), DATE(2009, 2, 15), DATE(2009, 4, 1)]), 6)"
                   " -> 0.373363",
                   "ROUND(XIRR([-100, 110], [DATE(2023, 1, 1), DATE(2024, 1, 1)]), 9) -> 0.1",
                   "XIRR([100, 200], [DATE(2023, 1, 1), DATE(2024, 1, 1)]) -> #NUM!"],
         cost=Cost.linear(XIRR_STEPS * 20, 500), errors=("#NUM!",), pack=_PACK,
         category="finance", polars=_FLOWS, sql=_FLOWS)
def xirr(values: tuple[Any, ...], dates: tuple[Any, ...], guess: Number = Decimal("0.1")) -> Decimal:
    flows = _dated(values, dates, VALUE)
    if not any(v > 0 for v, _ in flows) or not any(v < 0 for v, _ in flows):
        raise XLError(NUM, "XIRR needs at least one positive and one negative cash flow")
    try:
        return nm.from_float(_xirr(_float_flows(flows), float(guess)))
    except (OverflowError, ZeroDivisionError):
        raise XLError(NUM, "XIRR did not converge") from None


@builtin("MIRR", sig(p("values", list_of(optional(_N))), p("finance_rate", _N),
                     p("reinvest_rate", _N), returns=_N),
         doc="The modified internal rate of return: payments financed at finance_rate, "
             "receipts reinvested at reinvest_rate; #DIV/0! without both signs.",
         examples=["ROUND(MIRR([-120000, 39000, 30000, 21000, 37000, 46000], 0.1, 0.12), 6)"
                   " -> 0.126094",
                   "ROUND(MIRR([-120000, 39000, 30000, 21000], 0.1, 0.12), 6) -> -0.048045",
                   "MIRR([1, 2, 3], 0.1, 0.1) -> #DIV/0!"],
         cost=Cost.linear(40, 400), errors=("#DIV/0!", "#NUM!"), pack=_PACK, category="finance",
         polars=_FLOWS, sql=_FLOWS)
def mirr(values: tuple[Any, ...], finance_rate: Number, reinvest_rate: Number) -> Decimal:
    flows = [nm.dec(v) for v in values if is_number(v)]  # texts, logicals, blanks skipped
    n = len(flows)
    fr, rr = 1 + nm.dec(finance_rate), 1 + nm.dec(reinvest_rate)

    def compute() -> Decimal:
        # Receipts grown to the last period at the reinvestment rate, payments discounted to
        # the first at the finance rate; written without dividing by (1 + rate), so a rate of
        # -1 gives Excel's answer (a payment in the first period only: 0^0 is 1).
        grown = discounted = Decimal(0)
        with decimal.localcontext(_W):
            for i, v in enumerate(flows):
                if v > 0:
                    grown += v * rr ** (n - 1 - i)
                elif v < 0:
                    if not fr and i:
                        raise XLError(DIV0, "a finance rate of -1 with a later payment")
                    discounted += v / fr ** i if i else v
            if not grown or not discounted or n < 2:
                raise XLError(DIV0, "MIRR needs a positive and a negative cash flow")
            ratio = -grown / discounted
        return nm.power(ratio, Decimal(1) / (n - 1)) - 1

    return _guarded(compute)


def _fraction_digits(fraction: Number) -> tuple[int, int]:
    f = nm.trunc_int(fraction)
    if f < 0:
        raise XLError(NUM, "fraction must be 0 or more")
    if f == 0:
        raise XLError(DIV0, "fraction is 0")
    return f, len(str(f))  # 10^digits is the first power of ten >= f... (16 -> 100)


@builtin("DOLLARDE", sig(p("fractional_dollar", _N), p("fraction", _N), returns=_N),
         doc="A price written as whole.numerator (over fraction) as a decimal number.",
         examples=["DOLLARDE(1.02, 16) -> 1.125", "DOLLARDE(1.1, 32) -> 1.3125",
                   "DOLLARDE(1.02, 0) -> #DIV/0!", "DOLLARDE(1.02, -1) -> #NUM!"],
         cost=Cost.const(30), errors=("#NUM!", "#DIV/0!"), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def dollarde(fractional_dollar: Number, fraction: Number) -> Decimal:
    f, _ = _fraction_digits(fraction)
    x = nm.dec(fractional_dollar)
    whole = x.to_integral_value(rounding=decimal.ROUND_DOWN)
    scale = 10 ** len(str(f - 1)) if f > 1 else 1
    return _guarded(lambda: whole + (x - whole) * scale / f)


@builtin("DOLLARFR", sig(p("decimal_dollar", _N), p("fraction", _N), returns=_N),
         doc="A decimal price written as whole.numerator over fraction (the inverse of "
             "DOLLARDE).",
         examples=["DOLLARFR(1.125, 16) -> 1.02", "DOLLARFR(1.125, 32) -> 1.04",
                   "DOLLARFR(1.125, 0) -> #DIV/0!"],
         cost=Cost.const(30), errors=("#NUM!", "#DIV/0!"), pack=_PACK, category="finance",
         polars=_ANNUITY, sql=_ANNUITY)
def dollarfr(decimal_dollar: Number, fraction: Number) -> Decimal:
    f, _ = _fraction_digits(fraction)
    x = nm.dec(decimal_dollar)
    whole = x.to_integral_value(rounding=decimal.ROUND_DOWN)
    scale = 10 ** len(str(f - 1)) if f > 1 else 1
    return _guarded(lambda: whole + (x - whole) * f / scale)
