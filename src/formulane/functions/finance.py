"""Finance pack (off by default; ``Registry.with_packs("finance")``): PMT, PV, FV, NPV, IRR, RATE.

Contract: Excel's argument order, defaults and sign convention (money paid out is negative),
computed in decimal arithmetic. ``type`` is 0 (payments at the end of each period, the default)
or any nonzero value (at the beginning), as in Excel. ``(1 + rate)^nper`` goes through the
math family's checked power, so a huge nper is ``#NUM!`` without computing. IRR and RATE solve
by Newton's method from ``guess`` (0.1 by default), in 50-digit arithmetic, for at most
`MAX_ITERATIONS` steps; if the step has not shrunk to ``1e-10`` relative by then (Excel's own
tolerance is 1e-7), the answer is ``#NUM!``, as it is when an iterate leaves rate > -1.
"""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Any, Callable

from ..types import NUMBER, list_of, many, optional
from ..values import DIV0, NUM, XLError
from . import _numeric as nm
from ._criteria import is_number
from ._numeric import Number
from .spec import Cost, Refuse, builtin, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "finance"

_N = NUMBER
_ZERO = Decimal(0)
_ONE = Decimal(1)
#: Newton steps allowed to IRR and RATE before they give up with #NUM!.
MAX_ITERATIONS = 50
_CONVERGED = Decimal("1e-28")  # relative step: as exact as 34 digits can show
_ACCEPTABLE = Decimal("1e-10")  # relative step still accepted when the cap is reached
_TINY = Decimal("1e-30")
_W = nm.WIDE
_ARITH = (decimal.Overflow, decimal.InvalidOperation, decimal.DivisionByZero, ZeroDivisionError)

# Columnar and SQL decisions (forms in `columnar/forms/math`: PMT, PV, FV and NPV in float64).
_ITERATIVE = (
    "Newton's method in 50-digit decimals for up to 50 steps, stopping at a data-dependent "
    "step: a fixed number of float steps unrolled into an expression would give other "
    "answers and other #NUM! rows than the scalar engine")
_LISTS_SQL = (
    "its cash flows may be lists or numbers, and a SQL form receives them without their "
    "types, so it cannot flatten them into one series")


def _timing(type_: Number) -> Decimal:
    return _ONE if type_ else _ZERO


def _growth(rate: Decimal, nper: Number) -> Decimal:
    """(1 + rate)^nper with Excel's errors (a negative base needs a whole nper...)."""
    return nm.power(nm.finish(_ONE + rate), nper)


def _guarded(compute: Callable[[], Decimal]) -> Decimal:
    try:
        return nm.finish(compute())
    except _ARITH:
        raise XLError(NUM, "the computation overflowed or divided by zero") from None


# ------------------------------------------------------------------------------- annuities


@builtin(
    "PMT",
    sig(p("rate", _N, doc="interest rate per period"), p("nper", _N, doc="number of periods"),
        p("pv", _N, doc="present value (the loan)"), p("fv", _N, 0, "future value left"),
        p("type", _N, 0, "0: pay at period end, nonzero: at period start"), returns=_N),
    doc="The payment per period of a loan or annuity at a constant rate (negative: paid out).",
    examples=["ROUND(PMT(0.05/12, 60, 10000), 7) -> -188.7123364", "PMT(0, 10, 1000) -> -100",
              "ROUND(PMT(0.08/12, 10, 10000, 0, 1), 2) -> -1030.16", "PMT(0, 0, 1000) -> #DIV/0!"],
    cost=Cost.const(500),
    pack="finance",
    errors=("#NUM!", "#DIV/0!"),
)
def pmt(rate: Number, nper: Number, pv: Number, fv: Number = 0, type: Number = 0) -> Decimal:
    r, t = nm.dec(rate), _timing(type)
    if not r:
        if not nper:
            raise XLError(DIV0, "PMT with no periods")
        return _guarded(lambda: -(nm.dec(pv) + nm.dec(fv)) / nm.dec(nper))
    g = _growth(r, nper)
    denominator = (_ONE + r * t) * (g - _ONE)
    if not denominator:
        raise XLError(NUM, "PMT has no solution for these arguments")
    return _guarded(lambda: -(r * (nm.dec(pv) * g + nm.dec(fv))) / denominator)


@builtin(
    "PV",
    sig(p("rate", _N, doc="interest rate per period"), p("nper", _N, doc="number of periods"),
        p("pmt", _N, doc="payment per period"), p("fv", _N, 0, "future value"),
        p("type", _N, 0, "0: pay at period end, nonzero: at period start"), returns=_N),
    doc="The present value of a series of equal payments at a constant rate.",
    examples=["ROUND(PV(0.08/12, 12*20, 500), 2) -> -59777.15", "PV(0, 10, -100) -> 1000",
              "PV(-1, 10, 100) -> #DIV/0!"],
    cost=Cost.const(500),
    pack="finance",
    errors=("#NUM!", "#DIV/0!"),
)
def pv(rate: Number, nper: Number, pmt: Number, fv: Number = 0, type: Number = 0) -> Decimal:
    r, t = nm.dec(rate), _timing(type)
    payment, future = nm.dec(pmt), nm.dec(fv)
    if not r:
        return _guarded(lambda: -(future + payment * nm.dec(nper)))
    g = _growth(r, nper)
    if not g:
        raise XLError(DIV0, "PV with a rate of -1")
    return _guarded(lambda: -(future + payment * (_ONE + r * t) * (g - _ONE) / r) / g)


@builtin(
    "FV",
    sig(p("rate", _N, doc="interest rate per period"), p("nper", _N, doc="number of periods"),
        p("pmt", _N, doc="payment per period"), p("pv", _N, 0, "present value"),
        p("type", _N, 0, "0: pay at period end, nonzero: at period start"), returns=_N),
    doc="The future value of an investment of equal payments at a constant rate.",
    examples=["ROUND(FV(0.06/12, 10, -200, -500, 1), 2) -> 2581.4", "FV(0, 12, -100) -> 1200",
              "FV(0.1, 1E9, -1) -> #NUM!"],
    cost=Cost.const(500),
    pack="finance",
    errors=("#NUM!",),
)
def fv(rate: Number, nper: Number, pmt: Number, pv: Number = 0, type: Number = 0) -> Decimal:
    r, t = nm.dec(rate), _timing(type)
    payment, present = nm.dec(pmt), nm.dec(pv)
    if not r:
        return _guarded(lambda: -(present + payment * nm.dec(nper)))
    g = _growth(r, nper)
    return _guarded(lambda: -(present * g + payment * (_ONE + r * t) * (g - _ONE) / r))


# ------------------------------------------------------------------------------- cash flows


@builtin(
    "NPV",
    sig(p("rate", _N, doc="discount rate per period"), p("value1", many(_N)), returns=_N,
        repeat=1),
    doc="The net present value of cash flows at the ends of periods 1, 2, ... (blanks skipped).",
    examples=["ROUND(NPV(0.1, -10000, 3000, 4200, 6800), 2) -> 1188.44", "NPV(0, [1, 2], 3) -> 6",
              "NPV(-1, 5) -> #DIV/0!"],
    sql=Refuse(_LISTS_SQL),
    cost=Cost.linear(25, 50),
    pack="finance",
    errors=("#NUM!", "#DIV/0!"),
)
def npv(rate: Number, *values: Any) -> Decimal:
    factor = _ONE + nm.dec(rate)
    if not factor:
        raise XLError(DIV0, "NPV with a rate of -1")
    flows = [nm.dec(v) for v in nm.flatten_numbers(values)]

    def horner() -> Decimal:
        acc = _ZERO
        for v in reversed(flows):  # ((v_n / f + v_{n-1}) / f + ...) / f
            acc = _W.divide(_W.add(acc, v), factor)
        return acc

    return _guarded(horner)


def _irr_step(flows: list[Decimal], rate: Decimal) -> Decimal:
    """The Newton step for NPV(rate) = sum v_i * x^i with x = 1/(1+rate), in 50 digits."""
    x = _W.divide(_ONE, _W.add(_ONE, rate))
    value = _ZERO  # P(x) by Horner
    slope = _ZERO  # P'(x) alongside
    for v in reversed(flows):
        slope = _W.add(_W.multiply(slope, x), value)
        value = _W.add(_W.multiply(value, x), v)
    # d/d(rate) = P'(x) * dx/d(rate) = -x^2 P'(x), so rate -= P / (-x^2 P').
    derivative = _W.multiply(_W.minus(_W.multiply(x, x)), slope)
    return _W.divide(value, derivative)


def _snap(rate: Decimal) -> Decimal:
    """A converged rate; below 1e-30 it is 0 (1 + rate is the same Number either way, and
    Newton only approaches an exact 0 without reaching it)."""
    return _ZERO if abs(rate) < _TINY else nm.finish(rate)


def _newton(step: Callable[[Decimal], Decimal], guess: Decimal, what: str) -> Decimal:
    """Newton's iteration from guess, capped; the rate must stay above -1."""
    rate = guess
    last = None
    try:
        for _ in range(MAX_ITERATIONS):
            if rate <= -1:
                raise XLError(NUM, f"{what} did not converge (the rate fell to -100% or below)")
            delta = step(rate)
            if rate - delta <= -1:
                # A step past -100% goes halfway to -1 instead (IRR({-5, 1}) is -0.8 in Excel)
                delta = (rate + 1) / 2
            rate = _W.subtract(rate, delta)
            last = abs(delta)
            if last <= _CONVERGED * max(_ONE, abs(rate)):
                if rate + 1 < Decimal("1e-9"):  # pressed against -100%: no rate
                    raise XLError(NUM, f"{what} did not converge (no rate above -100%)")
                return _snap(rate)
    except _ARITH:
        raise XLError(NUM, f"{what} did not converge") from None
    if last is not None and last <= _ACCEPTABLE * max(_ONE, abs(rate)) \
            and rate + 1 >= Decimal("1e-9"):
        return _snap(rate)
    raise XLError(NUM, f"{what} did not converge in {MAX_ITERATIONS} steps; try another guess")


@builtin(
    "IRR",
    sig(p("values", list_of(optional(_N)), doc="cash flows, one per period, at least one "
                                                "negative and one positive"),
        p("guess", _N, Decimal("0.1"), "a starting rate, 0.1 when omitted"), returns=_N),
    doc="The internal rate of return of periodic cash flows (Newton's method from guess).",
    examples=["ROUND(IRR([-70000, 12000, 15000, 18000, 21000, 26000]), 6) -> 0.086631",
              "ROUND(IRR([-100, 110]), 12) -> 0.1", "IRR([100, 200]) -> #NUM!"],
    polars=Refuse(_ITERATIVE), sql=Refuse(_ITERATIVE),
    cost=Cost.linear(3 * MAX_ITERATIONS, 500),
    pack="finance",
    errors=("#NUM!",),
)
def irr(values: tuple[Any, ...], guess: Number = Decimal("0.1")) -> Decimal:
    flows = [nm.dec(v) for v in values if is_number(v)]  # texts, logicals, blanks skipped
    if not any(v > 0 for v in flows) or not any(v < 0 for v in flows):
        raise XLError(NUM, "IRR needs at least one positive and one negative cash flow")
    return _newton(lambda r: _irr_step(flows, r), nm.dec(guess), "IRR")


def _annuity(nper: Decimal, rate: Decimal) -> tuple[Decimal, Decimal, Decimal]:
    """(g, A, A') with g = (1+r)^n, A = (g - 1)/r and A' = dA/dr, in 50 digits.

    Near r = 0 the closed form cancels (g - 1 is tiny), so there A and A' come from the
    binomial series A = sum C(n, k) r^(k-1), which also gives A(0) = n exactly."""
    w = _W
    if abs(rate) < Decimal("1e-3") and abs(nper * rate) < Decimal("1e-3"):
        a = a_slope = _ZERO
        coef = nper  # C(n, k), starting at k = 1
        power_k1 = _ONE  # r^(k-1)
        power_k2 = _ZERO  # r^(k-2)
        for k in range(1, 60):
            term = w.multiply(coef, power_k1)
            a = w.add(a, term)
            if k > 1:
                a_slope = w.add(a_slope, w.multiply(w.multiply(coef, k - 1), power_k2))
            if not coef or abs(term) <= abs(a) * Decimal("1e-60"):
                break
            coef = w.divide(w.multiply(coef, w.subtract(nper, k)), k + 1)
            power_k2, power_k1 = power_k1, w.multiply(power_k1, rate)
        return w.add(_ONE, w.multiply(rate, a)), a, a_slope
    base = w.add(_ONE, rate)
    if nper == nper.to_integral_value() and abs(nper) <= 10**6:
        g = w.power(base, nper)
    else:
        g = w.exp(w.multiply(nper, w.ln(base)))
    if g.adjusted() > 300:
        raise XLError(NUM, "RATE did not converge (the growth factor overflowed)")
    a = w.divide(w.subtract(g, _ONE), rate)
    dg = w.divide(w.multiply(nper, g), base)  # d/dr (1+r)^n
    return g, a, w.divide(w.subtract(w.multiply(dg, rate), w.subtract(g, _ONE)),
                          w.multiply(rate, rate))


def _rate_step(nper: Decimal, pmt: Decimal, pv: Decimal, fv: Decimal, t: Decimal,
               rate: Decimal) -> Decimal:
    """The Newton step for f(r) = pv*(1+r)^n + pmt*(1+r*t)*((1+r)^n - 1)/r + fv, in 50 digits."""
    w = _W
    g, a, da = _annuity(nper, rate)
    timing = w.add(_ONE, w.multiply(rate, t))
    value = w.add(w.add(w.multiply(pv, g), w.multiply(w.multiply(pmt, timing), a)), fv)
    dg = w.add(a, w.multiply(rate, da))  # g = 1 + r*A
    slope = w.add(w.multiply(pv, dg), w.multiply(pmt, w.add(w.multiply(t, a),
                                                             w.multiply(timing, da))))
    return w.divide(value, slope)


@builtin(
    "RATE",
    sig(p("nper", _N, doc="number of periods"), p("pmt", _N, doc="payment per period"),
        p("pv", _N, doc="present value"), p("fv", _N, 0, "future value"),
        p("type", _N, 0, "0: pay at period end, nonzero: at period start"),
        p("guess", _N, Decimal("0.1"), "a starting rate, 0.1 when omitted"), returns=_N),
    doc="The interest rate per period of an annuity (Newton's method from guess).",
    examples=["ROUND(RATE(4*12, -200, 8000), 9) -> 0.007701472", "ROUND(RATE(10, -100, 1000), 12) -> 0",
              "RATE(10, 100, 1000) -> #NUM!", "RATE(0, -100, 1000) -> #NUM!"],
    polars=Refuse(_ITERATIVE), sql=Refuse(_ITERATIVE),
    cost=Cost.const(100 * MAX_ITERATIONS),
    pack="finance",
    errors=("#NUM!",),
)
def rate(nper: Number, pmt: Number, pv: Number, fv: Number = 0, type: Number = 0,
         guess: Number = Decimal("0.1")) -> Decimal:
    n = nm.dec(nper)
    if n <= 0:
        raise XLError(NUM, "RATE needs a positive number of periods")
    args = (n, nm.dec(pmt), nm.dec(pv), nm.dec(fv), _timing(type))
    return _newton(lambda r: _rate_step(*args, r), nm.dec(guess), "RATE")
