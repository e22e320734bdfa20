"""Probability distributions (statistics pack): normal, lognormal, Student's t, chi-squared,
F, binomial, Poisson, exponential, gamma, beta, Weibull, hypergeometric and negative binomial,
DIST and INV forms, plus GAMMA, GAMMALN, STANDARDIZE, CONFIDENCE.NORM/T, FISHER, FISHERINV,
PHI and GAUSS.

Contract: Excel's argument order and domains (``#NUM!`` outside them; counts and degrees of
freedom truncated to integers as Excel does). Computed in binary floating point with the
capped, SciPy-free algorithms of `_special` (as Excel computes these in doubles), converted by
the float's shortest repr; an answer that is not finite is ``#NUM!``, as is a series that has
not converged within its cap. Costs are priced from measurements of the worst case allowed by
the caps (one unit ~ 50 ns). STANDARDIZE, FISHER and FISHERINV have polars and SQL forms
(`columnar/forms/math/elementwise*`); the others are refused: no engine has these special
functions.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from typing import Any, Callable

from ..types import BOOLEAN, NUMBER
from ..values import DIV0, NUM, XLError
from . import _numeric as nm
from . import _special as sp
from ._numeric import Number
from .spec import UNDECIDED, Cost, Refuse, builtin, p, sig

_N = NUMBER
_PACK = "statistics"
_REFUSE = Refuse("the distribution needs special functions (incomplete gamma or beta, their "
                 "inverses) that neither polars nor the SQL dialects provide")
#: Priced from measured worst cases within the caps of `_special` (one unit ~ 50 ns here):
#: a closed form ~0.5 us; one capped series or continued fraction (2,000 terms) ~1-2 ms; an
#: inverse (bracketed regula falsi, BINOM.INV's binary search) ~7 ms at its slowest
#: (BETA.INV(p, 10^6, 10^6), BINOM.INV(10^7, ...)); HYPGEOM.DIST's 10,000-term sum ~6 ms.
_CLOSED = Cost.const(50)
_SERIES = Cost.const(40_000)
_INVERSE = Cost.const(200_000)
_DISCRETE = Cost.const(130_000)
_HYPGEOM_TERMS = 10_000


def _f(x: Number) -> float:
    value = float(x)
    if not math.isfinite(value):
        raise XLError(NUM, "the argument is out of range")
    return value


def _out(x: float) -> Decimal:
    try:
        return nm.from_float(x)
    except OverflowError:  # pragma: no cover - from_float checks finiteness first
        raise XLError(NUM, "the result is out of range") from None


def _check(condition: bool, message: str) -> None:
    if condition:
        raise XLError(NUM, message)


def _prob(x: Number, what: str = "probability", low_open: bool = True,
          high_open: bool = True) -> float:
    v = _f(x)
    _check(v < 0 or v > 1 or (low_open and v == 0) or (high_open and v == 1),
           f"{what} must be between 0 and 1")
    return v


def _df(x: Number, what: str = "deg_freedom", low: int = 1) -> int:
    n = nm.trunc_int(x)
    _check(n < low or n > 10**10, f"{what} must be between {low} and 10^10")
    return n


def _stat(name: str, *params: Any, doc: str, examples: list[str], cost: Cost = _SERIES,
          errors: tuple[str, ...] = ("#NUM!",), aliases: tuple[str, ...] = (),
          has_form: bool = False) -> Callable[[Callable[..., Any]], Any]:
    # with a form in the columnar tables (`columnar.forms`), else refused there
    polars = sql = UNDECIDED if has_form else _REFUSE
    return builtin(name, sig(*params, returns=_N), doc=doc, examples=examples, cost=cost,
                   errors=errors, pack=_PACK, category="statistics", aliases=aliases,
                   polars=polars, sql=sql)


_CUM = p("cumulative", BOOLEAN, doc="TRUE: the distribution function; FALSE: the density "
                                     "(or probability mass)")


# ----------------------------------------------------------------------------- normal family


@_stat("NORM.INV", p("probability", _N), p("mean", _N), p("standard_dev", _N),
       doc="The x at which the normal distribution function reaches probability; #NUM! "
           "unless 0 < probability < 1 and standard_dev > 0.",
       examples=["ROUND(NORM.INV(0.908789, 40, 1.5), 6) -> 42.000002", "NORM.INV(0.5, 3, 2) -> 3",
                 "NORM.INV(1, 0, 1) -> #NUM!"], cost=_CLOSED, aliases=("NORMINV",))
def norm_inv(probability: Number, mean: Number, standard_dev: Number) -> Decimal:
    q = _prob(probability)
    _check(standard_dev <= 0, "standard_dev must be greater than 0")
    return _out(_f(mean) + _f(standard_dev) * sp.norm_inv(q))


@_stat("NORM.S.INV", p("probability", _N),
       doc="The z at which the standard normal distribution function reaches probability.",
       examples=["ROUND(NORM.S.INV(0.908789), 6) -> 1.333335", "NORM.S.INV(0.5) -> 0",
                 "NORM.S.INV(0) -> #NUM!"], cost=_CLOSED, aliases=("NORMSINV",))
def norm_s_inv(probability: Number) -> Decimal:
    return _out(sp.norm_inv(_prob(probability)))


@_stat("LOGNORM.DIST", p("x", _N), p("mean", _N, doc="mean of ln(x)"),
       p("standard_dev", _N, doc="standard deviation of ln(x)"), _CUM,
       doc="The lognormal distribution of x (ln(x) normal with mean and standard_dev); #NUM! "
           "for x <= 0 or standard_dev <= 0.",
       examples=["ROUND(LOGNORM.DIST(4, 3.5, 1.2, TRUE), 7) -> 0.0390836",
                 "ROUND(LOGNORM.DIST(4, 3.5, 1.2, FALSE), 7) -> 0.0176176",
                 "LOGNORM.DIST(0, 3.5, 1.2, TRUE) -> #NUM!"], cost=_CLOSED)
def lognorm_dist(x: Number, mean: Number, standard_dev: Number, cumulative: bool) -> Decimal:
    _check(x <= 0 or standard_dev <= 0, "x and standard_dev must be greater than 0")
    v, sd = _f(x), _f(standard_dev)
    z = (math.log(v) - _f(mean)) / sd
    return _out(sp.norm_cdf(z) if cumulative else sp.norm_pdf(z) / (v * sd))


@_stat("LOGNORM.INV", p("probability", _N), p("mean", _N), p("standard_dev", _N),
       doc="The inverse of the lognormal distribution function.",
       examples=["ROUND(LOGNORM.INV(0.039084, 3.5, 1.2), 4) -> 4",
                 "LOGNORM.INV(0.5, 0, 1) -> 1", "LOGNORM.INV(0.5, 0, 0) -> #NUM!"],
       cost=_CLOSED, aliases=("LOGINV",))
def lognorm_inv(probability: Number, mean: Number, standard_dev: Number) -> Decimal:
    q = _prob(probability)
    _check(standard_dev <= 0, "standard_dev must be greater than 0")
    return _out(math.exp(_f(mean) + _f(standard_dev) * sp.norm_inv(q)))


@_stat("STANDARDIZE", p("x", _N), p("mean", _N), p("standard_dev", _N),
       doc="The z-score (x - mean) / standard_dev; #NUM! for standard_dev <= 0.",
       examples=["ROUND(STANDARDIZE(42, 40, 1.5), 9) -> 1.333333333", "STANDARDIZE(5, 5, 2) -> 0",
                 "STANDARDIZE(1, 0, 0) -> #NUM!"], cost=_CLOSED, has_form=True)
def standardize(x: Number, mean: Number, standard_dev: Number) -> Decimal:
    _check(standard_dev <= 0, "standard_dev must be greater than 0")
    return _out((_f(x) - _f(mean)) / _f(standard_dev))


@_stat("PHI", p("x", _N), doc="The standard normal density at x.",
       examples=["ROUND(PHI(0.75), 9) -> 0.301137432", "ROUND(PHI(0), 9) -> 0.39894228",
                 "PHI(100) -> 0"], cost=_CLOSED)
def phi(x: Number) -> Decimal:
    return _out(sp.norm_pdf(_f(x)))


@_stat("GAUSS", p("z", _N),
       doc="The probability that a standard normal value lies between the mean and z "
           "(NORM.S.DIST(z, TRUE) - 0.5).",
       examples=["ROUND(GAUSS(2), 9) -> 0.477249868", "GAUSS(0) -> 0",
                 "ROUND(GAUSS(-1), 9) -> -0.341344746"], cost=_CLOSED)
def gauss(z: Number) -> Decimal:
    return _out(0.5 * math.erf(_f(z) / math.sqrt(2)))


@_stat("CONFIDENCE.NORM", p("alpha", _N), p("standard_dev", _N), p("size", _N),
       doc="Half the width of a confidence interval for a mean, with a normal distribution; "
           "#NUM! unless 0 < alpha < 1, standard_dev > 0 and size >= 1.",
       examples=["ROUND(CONFIDENCE.NORM(0.05, 2.5, 50), 9) -> 0.692951912",
                 "CONFIDENCE.NORM(0, 1, 5) -> #NUM!", "CONFIDENCE.NORM(0.05, 1, 0) -> #NUM!"],
       cost=_CLOSED, aliases=("CONFIDENCE",))
def confidence_norm(alpha: Number, standard_dev: Number, size: Number) -> Decimal:
    a = _prob(alpha, "alpha")
    _check(standard_dev <= 0, "standard_dev must be greater than 0")
    n = nm.trunc_int(size)
    _check(n < 1, "size must be at least 1")
    return _out(sp.norm_inv(1 - a / 2) * _f(standard_dev) / math.sqrt(n))


@_stat("CONFIDENCE.T", p("alpha", _N), p("standard_dev", _N), p("size", _N),
       doc="Half the width of a confidence interval for a mean, with Student's t "
           "distribution; #DIV/0! for size 1.",
       examples=["ROUND(CONFIDENCE.T(0.05, 1, 50), 9) -> 0.284196855",
                 "CONFIDENCE.T(0.05, 1, 1) -> #DIV/0!", "CONFIDENCE.T(1, 1, 5) -> #NUM!"],
       cost=_INVERSE, errors=("#NUM!", "#DIV/0!"))
def confidence_t(alpha: Number, standard_dev: Number, size: Number) -> Decimal:
    a = _prob(alpha, "alpha")
    _check(standard_dev <= 0, "standard_dev must be greater than 0")
    n = nm.trunc_int(size)
    _check(n < 1, "size must be at least 1")
    if n == 1:
        raise XLError(DIV0, "CONFIDENCE.T needs a size of at least 2")
    return _out(sp.student_t_inv(1 - a / 2, n - 1) * _f(standard_dev) / math.sqrt(n))


@_stat("FISHER", p("x", _N), doc="The Fisher transformation atanh(x), for -1 < x < 1.",
       examples=["ROUND(FISHER(0.75), 9) -> 0.972955075", "FISHER(0) -> 0", "FISHER(1) -> #NUM!"],
       cost=_CLOSED, has_form=True)
def fisher(x: Number) -> Decimal:
    _check(nm.magnitude(x) >= 1, "x must be between -1 and 1 (exclusive)")
    return _out(math.atanh(_f(x)))


@_stat("FISHERINV", p("y", _N), doc="The inverse of the Fisher transformation, tanh(y).",
       examples=["ROUND(FISHERINV(0.972955), 6) -> 0.75", "FISHERINV(0) -> 0",
                 "FISHERINV(1000) -> 1"], cost=_CLOSED, errors=(), has_form=True)
def fisherinv(y: Number) -> Decimal:
    return _out(math.tanh(_f(y)))


# --------------------------------------------------------------------------- Student's t


def _t_args(x: Number, df: Number) -> tuple[float, int]:
    return _f(x), _df(df)


@_stat("T.DIST", p("x", _N), p("deg_freedom", _N), _CUM,
       doc="Student's left-tailed t distribution (deg_freedom truncated, at least 1).",
       examples=["ROUND(T.DIST(60, 1, TRUE), 9) -> 0.994695326",
                 "ROUND(T.DIST(8, 3, FALSE), 9) -> 0.000736907", "T.DIST(1, 0, TRUE) -> #NUM!"])
def t_dist(x: Number, deg_freedom: Number, cumulative: bool) -> Decimal:
    t, df = _t_args(x, deg_freedom)
    return _out(sp.student_t_cdf(t, df) if cumulative else sp.student_t_pdf(t, df))


@_stat("T.DIST.2T", p("x", _N), p("deg_freedom", _N),
       doc="Student's two-tailed t distribution: P(|T| >= x); #NUM! for x < 0.",
       examples=["ROUND(T.DIST.2T(1.959999998, 60), 9) -> 0.05464493",
                 "T.DIST.2T(0, 5) -> 1", "T.DIST.2T(-1, 5) -> #NUM!"])
def t_dist_2t(x: Number, deg_freedom: Number) -> Decimal:
    t, df = _t_args(x, deg_freedom)
    _check(t < 0, "x must be 0 or more")
    return _out(2 * (1 - sp.student_t_cdf(t, df)) if t < 1 else
                sp.beta_i(df / (df + t * t), df / 2, 0.5))


@_stat("T.DIST.RT", p("x", _N), p("deg_freedom", _N),
       doc="Student's right-tailed t distribution: P(T >= x).",
       examples=["ROUND(T.DIST.RT(1.959999998, 60), 9) -> 0.027322465", "T.DIST.RT(0, 3) -> 0.5",
                 "T.DIST.RT(1, 0) -> #NUM!"])
def t_dist_rt(x: Number, deg_freedom: Number) -> Decimal:
    t, df = _t_args(x, deg_freedom)
    return _out(sp.student_t_cdf(-t, df))


@_stat("T.INV", p("probability", _N), p("deg_freedom", _N),
       doc="The left-tailed inverse of Student's t distribution.",
       examples=["ROUND(T.INV(0.75, 2), 9) -> 0.816496581", "T.INV(0.5, 7) -> 0",
                 "T.INV(1, 2) -> #NUM!"], cost=_INVERSE)
def t_inv(probability: Number, deg_freedom: Number) -> Decimal:
    return _out(sp.student_t_inv(_prob(probability), _df(deg_freedom)))


@_stat("T.INV.2T", p("probability", _N), p("deg_freedom", _N),
       doc="The two-tailed inverse of Student's t distribution (0 < probability <= 1).",
       examples=["ROUND(T.INV.2T(0.546449, 60), 6) -> 0.606533", "T.INV.2T(1, 3) -> 0",
                 "T.INV.2T(0, 3) -> #NUM!"], cost=_INVERSE, aliases=("TINV",))
def t_inv_2t(probability: Number, deg_freedom: Number) -> Decimal:
    q = _prob(probability, high_open=False)
    return _out(abs(sp.student_t_inv(q / 2, _df(deg_freedom))))


# ---------------------------------------------------------------------------- chi-squared


@_stat("CHISQ.DIST", p("x", _N), p("deg_freedom", _N), _CUM,
       doc="The chi-squared distribution (left tail); #NUM! for x < 0.",
       examples=["ROUND(CHISQ.DIST(0.5, 1, TRUE), 9) -> 0.520499878",
                 "ROUND(CHISQ.DIST(2, 3, FALSE), 9) -> 0.207553749",
                 "CHISQ.DIST(-1, 2, TRUE) -> #NUM!"])
def chisq_dist(x: Number, deg_freedom: Number, cumulative: bool) -> Decimal:
    v, k = _f(x), _df(deg_freedom)
    _check(v < 0, "x must be 0 or more")
    if cumulative:
        return _out(sp.gamma_p(k / 2, v / 2))
    if v == 0:
        _check(k == 1, "the density is infinite at 0 for 1 degree of freedom")
        return _out(0.5 if k == 2 else 0.0)
    return _out(math.exp((k / 2 - 1) * math.log(v) - v / 2 - k / 2 * math.log(2)
                         - math.lgamma(k / 2)))


@_stat("CHISQ.DIST.RT", p("x", _N), p("deg_freedom", _N),
       doc="The right-tailed probability of the chi-squared distribution.",
       examples=["ROUND(CHISQ.DIST.RT(18.307, 10), 9) -> 0.050000589",
                 "CHISQ.DIST.RT(0, 4) -> 1", "CHISQ.DIST.RT(1, 0) -> #NUM!"], aliases=("CHIDIST",))
def chisq_dist_rt(x: Number, deg_freedom: Number) -> Decimal:
    v, k = _f(x), _df(deg_freedom)
    _check(v < 0, "x must be 0 or more")
    return _out(sp.gamma_q(k / 2, v / 2))


@_stat("CHISQ.INV", p("probability", _N), p("deg_freedom", _N),
       doc="The inverse of the left-tailed chi-squared distribution (0 <= probability < 1).",
       examples=["ROUND(CHISQ.INV(0.93, 1), 9) -> 3.283020287",
                 "ROUND(CHISQ.INV(0.6, 2), 9) -> 1.832581464", "CHISQ.INV(0, 3) -> 0",
                 "CHISQ.INV(1, 2) -> #NUM!"], cost=_INVERSE)
def chisq_inv(probability: Number, deg_freedom: Number) -> Decimal:
    q = _prob(probability, low_open=False)
    return _out(2 * sp.gamma_p_inv(q, _df(deg_freedom) / 2))


@_stat("CHISQ.INV.RT", p("probability", _N), p("deg_freedom", _N),
       doc="The inverse of the right-tailed chi-squared distribution (0 < probability <= 1).",
       examples=["ROUND(CHISQ.INV.RT(0.050001, 10), 6) -> 18.306973", "CHISQ.INV.RT(1, 3) -> 0",
                 "CHISQ.INV.RT(0, 3) -> #NUM!"], cost=_INVERSE, aliases=("CHIINV",))
def chisq_inv_rt(probability: Number, deg_freedom: Number) -> Decimal:
    q = _prob(probability, high_open=False)
    return _out(2 * sp.gamma_p_inv(1 - q, _df(deg_freedom) / 2))


# ------------------------------------------------------------------------------------- F


def _f_args(x: Number, d1: Number, d2: Number) -> tuple[float, int, int]:
    v = _f(x)
    _check(v < 0, "x must be 0 or more")
    return v, _df(d1, "deg_freedom1"), _df(d2, "deg_freedom2")


def _f_cdf(v: float, a: int, b: int) -> float:
    return sp.beta_i(a * v / (a * v + b), a / 2, b / 2)


@_stat("F.DIST", p("x", _N), p("deg_freedom1", _N), p("deg_freedom2", _N), _CUM,
       doc="The F distribution (left tail) with deg_freedom1 and deg_freedom2.",
       examples=["ROUND(F.DIST(15.2069, 6, 4, TRUE), 6) -> 0.99",
                 "ROUND(F.DIST(15.2069, 6, 4, FALSE), 9) -> 0.001223792",
                 "F.DIST(-1, 6, 4, TRUE) -> #NUM!"])
def f_dist(x: Number, deg_freedom1: Number, deg_freedom2: Number, cumulative: bool) -> Decimal:
    v, a, b = _f_args(x, deg_freedom1, deg_freedom2)
    if cumulative:
        return _out(_f_cdf(v, a, b))
    if v == 0:
        _check(a == 1, "the density is infinite at 0 for deg_freedom1 = 1")
        return _out(1.0 if a == 2 else 0.0)
    log_pdf = (0.5 * (a * math.log(a * v) + b * math.log(b) - (a + b) * math.log(a * v + b))
               - math.log(v) - (math.lgamma(a / 2) + math.lgamma(b / 2) - math.lgamma((a + b) / 2)))
    return _out(math.exp(log_pdf))


@_stat("F.DIST.RT", p("x", _N), p("deg_freedom1", _N), p("deg_freedom2", _N),
       doc="The right-tailed F distribution: P(F >= x).",
       examples=["ROUND(F.DIST.RT(15.2069, 6, 4), 6) -> 0.01", "F.DIST.RT(0, 2, 3) -> 1",
                 "F.DIST.RT(1, 0, 3) -> #NUM!"], aliases=("FDIST",))
def f_dist_rt(x: Number, deg_freedom1: Number, deg_freedom2: Number) -> Decimal:
    v, a, b = _f_args(x, deg_freedom1, deg_freedom2)
    return _out(sp.beta_i(b / (b + a * v), b / 2, a / 2))


def _f_inv(q: float, a: int, b: int) -> float:
    y = sp.beta_i_inv(q, a / 2, b / 2)
    _check(y >= 1, "the inverse is infinite")
    return b * y / (a * (1 - y))


@_stat("F.INV", p("probability", _N), p("deg_freedom1", _N), p("deg_freedom2", _N),
       doc="The inverse of the left-tailed F distribution (0 <= probability < 1).",
       examples=["ROUND(F.INV(0.01, 6, 4), 6) -> 0.10931", "F.INV(0, 6, 4) -> 0",
                 "F.INV(1, 6, 4) -> #NUM!"], cost=_INVERSE)
def f_inv(probability: Number, deg_freedom1: Number, deg_freedom2: Number) -> Decimal:
    q = _prob(probability, low_open=False)
    return _out(_f_inv(q, _df(deg_freedom1, "deg_freedom1"), _df(deg_freedom2, "deg_freedom2")))


@_stat("F.INV.RT", p("probability", _N), p("deg_freedom1", _N), p("deg_freedom2", _N),
       doc="The inverse of the right-tailed F distribution (0 < probability <= 1).",
       examples=["ROUND(F.INV.RT(0.01, 6, 4), 4) -> 15.2069", "F.INV.RT(1, 6, 4) -> 0",
                 "F.INV.RT(0, 6, 4) -> #NUM!"], cost=_INVERSE, aliases=("FINV",))
def f_inv_rt(probability: Number, deg_freedom1: Number, deg_freedom2: Number) -> Decimal:
    q = _prob(probability, high_open=False)
    return _out(_f_inv(1 - q, _df(deg_freedom1, "deg_freedom1"),
                       _df(deg_freedom2, "deg_freedom2")))


# ------------------------------------------------------------------------ gamma and beta


@_stat("GAMMA", p("number", _N),
       doc="The gamma function; #NUM! at 0, at negative integers and when it overflows.",
       examples=["ROUND(GAMMA(2.5), 9) -> 1.329340388", "GAMMA(5) -> 24",
                 "ROUND(GAMMA(-0.75), 9) -> -4.834146544", "GAMMA(0) -> #NUM!",
                 "GAMMA(-1) -> #NUM!"], cost=_CLOSED)
def gamma(number: Number) -> Decimal:
    v = _f(number)
    _check(v <= 0 and v == int(v), "GAMMA is undefined at 0 and negative integers")
    try:
        return _out(math.gamma(v))
    except OverflowError:
        raise XLError(NUM, "the result is too large") from None


@_stat("GAMMALN", p("x", _N), doc="The natural logarithm of the gamma function, for x > 0.",
       examples=["ROUND(GAMMALN(4.5), 9) -> 2.453736571", "GAMMALN(1) -> 0",
                 "GAMMALN(0) -> #NUM!"], cost=_CLOSED, aliases=("GAMMALN.PRECISE",))
def gammaln(x: Number) -> Decimal:
    _check(x <= 0, "x must be greater than 0")
    return _out(math.lgamma(_f(x)))


def _gamma_args(x: Number, alpha: Number, beta: Number) -> tuple[float, float, float]:
    _check(alpha <= 0 or beta <= 0, "alpha and beta must be greater than 0")
    return _f(x), _f(alpha), _f(beta)


@_stat("GAMMA.DIST", p("x", _N), p("alpha", _N), p("beta", _N, doc="the scale"), _CUM,
       doc="The gamma distribution with shape alpha and scale beta; #NUM! for x < 0 or "
           "alpha, beta <= 0.",
       examples=["ROUND(GAMMA.DIST(10.00001131, 9, 2, TRUE), 9) -> 0.068094004",
                 "ROUND(GAMMA.DIST(10.00001131, 9, 2, FALSE), 9) -> 0.03263913",
                 "GAMMA.DIST(-1, 9, 2, TRUE) -> #NUM!"], aliases=("GAMMADIST",))
def gamma_dist(x: Number, alpha: Number, beta: Number, cumulative: bool) -> Decimal:
    v, a, b = _gamma_args(x, alpha, beta)
    _check(v < 0, "x must be 0 or more")
    if cumulative:
        return _out(sp.gamma_p(a, v / b))
    if v == 0:
        _check(a < 1, "the density is infinite at 0 for alpha < 1")
        return _out(1 / b if a == 1 else 0.0)
    return _out(math.exp((a - 1) * math.log(v) - v / b - math.lgamma(a) - a * math.log(b)))


@_stat("GAMMA.INV", p("probability", _N), p("alpha", _N), p("beta", _N),
       doc="The inverse of the gamma distribution function (0 <= probability < 1).",
       examples=["ROUND(GAMMA.INV(0.068094, 9, 2), 5) -> 10.00001", "GAMMA.INV(0, 9, 2) -> 0",
                 "GAMMA.INV(1, 9, 2) -> #NUM!"], cost=_INVERSE, aliases=("GAMMAINV",))
def gamma_inv(probability: Number, alpha: Number, beta: Number) -> Decimal:
    q = _prob(probability, low_open=False)
    _, a, b = _gamma_args(0, alpha, beta)
    return _out(b * sp.gamma_p_inv(q, a))


def _beta_bounds(a_: Number | None, b_: Number | None) -> tuple[float, float]:
    low = 0.0 if a_ is None else _f(a_)
    high = 1.0 if b_ is None else _f(b_)
    _check(low >= high, "A must be less than B")
    return low, high


@builtin("BETA.DIST",
         sig(p("x", _N), p("alpha", _N), p("beta", _N), _CUM, p("A", _N, None, "lower bound"),
             p("B", _N, None, "upper bound"), returns=_N),
         doc="The beta distribution on [A, B] (default [0, 1]); #NUM! for alpha, beta <= 0 "
             "or x outside [A, B].",
         examples=["ROUND(BETA.DIST(2, 8, 10, TRUE, 1, 3), 9) -> 0.685470581",
                   "ROUND(BETA.DIST(2, 8, 10, FALSE, 1, 3), 9) -> 1.483764648",
                   "BETA.DIST(0.5, 1, 1, TRUE) -> 0.5", "BETA.DIST(4, 8, 10, TRUE, 1, 3) -> #NUM!"],
         cost=_SERIES, errors=("#NUM!",), pack=_PACK, category="statistics",
         polars=_REFUSE, sql=_REFUSE)
def beta_dist(x: Number, alpha: Number, beta: Number, cumulative: bool, A: Number | None = None,
              B: Number | None = None) -> Decimal:
    _check(alpha <= 0 or beta <= 0, "alpha and beta must be greater than 0")
    low, high = _beta_bounds(A, B)
    v, a, b = _f(x), _f(alpha), _f(beta)
    _check(v < low or v > high, "x must be between A and B")
    y = (v - low) / (high - low)
    if cumulative:
        return _out(sp.beta_i(y, a, b))
    if y in (0.0, 1.0):
        _check((y == 0 and a < 1) or (y == 1 and b < 1), "the density is infinite there")
        edge = a == 1 if y == 0 else b == 1
        return _out(math.exp(-_log_beta(a, b)) / (high - low) if edge else 0.0)
    return _out(math.exp((a - 1) * math.log(y) + (b - 1) * math.log1p(-y) - _log_beta(a, b))
                / (high - low))


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


@builtin("BETA.INV",
         sig(p("probability", _N), p("alpha", _N), p("beta", _N), p("A", _N, None, "lower bound"),
             p("B", _N, None, "upper bound"), returns=_N),
         doc="The inverse of the beta distribution function on [A, B] (0 < probability <= 1).",
         examples=["ROUND(BETA.INV(0.685470581, 8, 10, 1, 3), 6) -> 2", "ROUND(BETA.INV(0.5, 1, 1), 12) -> 0.5",
                   "BETA.INV(0, 8, 10) -> #NUM!"],
         cost=_INVERSE, errors=("#NUM!",), pack=_PACK, category="statistics",
         polars=_REFUSE, sql=_REFUSE, aliases=("BETAINV",))
def beta_inv(probability: Number, alpha: Number, beta: Number, A: Number | None = None,
             B: Number | None = None) -> Decimal:
    q = _prob(probability, high_open=False)
    _check(alpha <= 0 or beta <= 0, "alpha and beta must be greater than 0")
    low, high = _beta_bounds(A, B)
    return _out(low + (high - low) * sp.beta_i_inv(q, _f(alpha), _f(beta)))


@_stat("EXPON.DIST", p("x", _N), p("lambda", _N), _CUM,
       doc="The exponential distribution with rate lambda; #NUM! for x < 0 or lambda <= 0.",
       examples=["ROUND(EXPON.DIST(0.2, 10, TRUE), 9) -> 0.864664717",
                 "ROUND(EXPON.DIST(0.2, 10, FALSE), 9) -> 1.353352832",
                 "EXPON.DIST(-1, 10, TRUE) -> #NUM!"], cost=_CLOSED, aliases=("EXPONDIST",))
def expon_dist(x: Number, lambda_: Number, cumulative: bool) -> Decimal:
    _check(x < 0 or lambda_ <= 0, "x must be 0 or more and lambda greater than 0")
    v, r = _f(x), _f(lambda_)
    return _out(-math.expm1(-r * v) if cumulative else r * math.exp(-r * v))


@_stat("WEIBULL.DIST", p("x", _N), p("alpha", _N), p("beta", _N), _CUM,
       doc="The Weibull distribution with shape alpha and scale beta.",
       examples=["ROUND(WEIBULL.DIST(105, 20, 100, TRUE), 6) -> 0.929581",
                 "ROUND(WEIBULL.DIST(105, 20, 100, FALSE), 9) -> 0.035588864",
                 "WEIBULL.DIST(-1, 20, 100, TRUE) -> #NUM!"], cost=_CLOSED, aliases=("WEIBULL",))
def weibull_dist(x: Number, alpha: Number, beta: Number, cumulative: bool) -> Decimal:
    _check(x < 0 or alpha <= 0 or beta <= 0, "x must be >= 0, alpha and beta > 0")
    v, a, b = _f(x), _f(alpha), _f(beta)
    u = (v / b) ** a
    if cumulative:
        return _out(-math.expm1(-u))
    if v == 0:
        _check(a < 1, "the density is infinite at 0 for alpha < 1")
        return _out(1 / b if a == 1 else 0.0)
    return _out(a / b * (v / b) ** (a - 1) * math.exp(-u))


# ------------------------------------------------------------------------------- discrete


def _binom_pmf(k: int, n: int, q: float) -> float:
    if q in (0.0, 1.0):
        return 1.0 if k == (n if q == 1.0 else 0) else 0.0
    return math.exp(sp.log_comb(n, k) + sp.xlogy(k, q) + sp.xlogy(n - k, 1 - q))


def _binom_cdf(k: int, n: int, q: float) -> float:
    if k >= n:
        return 1.0
    if q == 0.0:
        return 1.0
    if q == 1.0:
        return 0.0
    return sp.beta_i(1 - q, n - k, k + 1)


#: Up to this many trials the binomial sums are exact decimals (1,000 terms at most), so
#: BINOM.DIST(6, 10, 0.5, TRUE) is exactly 0.828125 as Excel shows it.
_EXACT_TRIALS = 1000


def _binom_exact(lo: int, hi: int, n: int, q: Number) -> Decimal:
    """P(lo <= X <= hi) for X ~ Binomial(n, q), summed exactly in the wide context."""
    p_ = Decimal(q)
    with decimal.localcontext(nm.WIDE):
        term = math.comb(n, lo) * _pow(p_, lo) * _pow(1 - p_, n - lo)
        if p_ in (0, 1):  # a single outcome has all the probability
            return nm.finish(Decimal(int(lo <= (n if p_ == 1 else 0) <= hi)))
        ratio = p_ / (1 - p_)
        total = term
        for k in range(lo, hi):  # term(k + 1) = term(k) (n - k) / (k + 1) p / (1 - p)
            term = term * (n - k) / (k + 1) * ratio
            total += term
    return nm.finish(total)


def _pow(base: Decimal, k: int) -> Decimal:
    return base ** k if k else Decimal(1)  # 0^0 is 1 here (the decimal module refuses it)


def _binom_args(n: Number, q: Number) -> tuple[int, float]:
    trials = nm.trunc_int(n)
    _check(trials < 0, "trials must be 0 or more")
    return trials, _prob(q, "probability_s", low_open=False, high_open=False)


@_stat("BINOM.DIST", p("number_s", _N), p("trials", _N), p("probability_s", _N), _CUM,
       doc="The binomial distribution: the probability of number_s successes (or at most "
           "number_s) in trials.",
       examples=["ROUND(BINOM.DIST(6, 10, 0.5, FALSE), 9) -> 0.205078125",
                 "ROUND(BINOM.DIST(6, 10, 0.5, TRUE), 9) -> 0.828125",
                 "BINOM.DIST(11, 10, 0.5, TRUE) -> #NUM!"], aliases=("BINOMDIST",))
def binom_dist(number_s: Number, trials: Number, probability_s: Number, cumulative: bool
               ) -> Decimal:
    n, q = _binom_args(trials, probability_s)
    k = nm.trunc_int(number_s)
    _check(k < 0 or k > n, "number_s must be between 0 and trials")
    if n <= _EXACT_TRIALS:
        return _binom_exact(0 if cumulative else k, k, n, probability_s)
    return _out(_binom_cdf(k, n, q) if cumulative else _binom_pmf(k, n, q))


@_stat("BINOM.DIST.RANGE", p("trials", _N), p("probability_s", _N), p("number_s", _N),
       p("number_s2", _N, None, "the upper end of the range of successes"),
       doc="The probability of between number_s and number_s2 successes (exactly number_s "
           "when number_s2 is omitted).",
       examples=["ROUND(BINOM.DIST.RANGE(60, 0.75, 48), 9) -> 0.083974967",
                 "ROUND(BINOM.DIST.RANGE(60, 0.75, 45, 50), 9) -> 0.523629793",
                 "BINOM.DIST.RANGE(60, 0.75, 50, 45) -> #NUM!"])
def binom_dist_range(trials: Number, probability_s: Number, number_s: Number,
                     number_s2: Number | None = None) -> Decimal:
    n, q = _binom_args(trials, probability_s)
    lo = nm.trunc_int(number_s)
    hi = lo if number_s2 is None else nm.trunc_int(number_s2)
    _check(lo < 0 or lo > n or hi < lo or hi > n, "the successes must satisfy 0 <= s <= s2 <= "
                                                  "trials")
    if n <= _EXACT_TRIALS:
        return _binom_exact(lo, hi, n, probability_s)
    if lo == hi:
        return _out(_binom_pmf(lo, n, q))
    below = _binom_cdf(lo - 1, n, q) if lo > 0 else 0.0
    return _out(_binom_cdf(hi, n, q) - below)


@_stat("BINOM.INV", p("trials", _N), p("probability_s", _N), p("alpha", _N),
       doc="The smallest number of successes whose cumulative binomial probability is at "
           "least alpha.",
       examples=["BINOM.INV(6, 0.5, 0.75) -> 4", "BINOM.INV(10, 0.5, 0) -> 0",
                 "BINOM.INV(10, 1.5, 0.5) -> #NUM!"], cost=_INVERSE, aliases=("CRITBINOM",))
def binom_inv(trials: Number, probability_s: Number, alpha: Number) -> int:
    n, q = _binom_args(trials, probability_s)
    a = _prob(alpha, "alpha", low_open=False, high_open=False)
    lo, hi = 0, n
    while lo < hi:  # at most 35 steps: trials < 2^34 in practice, 64 for any int
        mid = (lo + hi) // 2
        if _binom_cdf(mid, n, q) >= a:
            hi = mid
        else:
            lo = mid + 1
    return lo


@_stat("POISSON.DIST", p("x", _N), p("mean", _N), _CUM,
       doc="The Poisson distribution: the probability of x events (or at most x) at a mean "
           "rate; #NUM! for x < 0 or mean < 0.",
       examples=["ROUND(POISSON.DIST(2, 5, TRUE), 9) -> 0.124652019",
                 "ROUND(POISSON.DIST(2, 5, FALSE), 9) -> 0.084224337",
                 "POISSON.DIST(-1, 5, TRUE) -> #NUM!"], aliases=("POISSON",))
def poisson_dist(x: Number, mean: Number, cumulative: bool) -> Decimal:
    k = nm.trunc_int(x)
    _check(k < 0 or mean < 0, "x and mean must be 0 or more")
    m = _f(mean)
    if m == 0:
        return _out(1.0 if cumulative or k == 0 else 0.0)
    if cumulative:
        return _out(sp.gamma_q(k + 1, m))
    return _out(math.exp(sp.xlogy(k, m) - m - math.lgamma(k + 1)))


@_stat("HYPGEOM.DIST", p("sample_s", _N), p("number_sample", _N), p("population_s", _N),
       p("number_pop", _N), _CUM,
       doc="The hypergeometric distribution: sample_s successes in a sample drawn without "
           "replacement (cumulative sums at most 10,000 terms, else #NUM!).",
       examples=["ROUND(HYPGEOM.DIST(1, 4, 8, 20, TRUE), 9) -> 0.465428277",
                 "ROUND(HYPGEOM.DIST(1, 4, 8, 20, FALSE), 9) -> 0.363261094",
                 "HYPGEOM.DIST(5, 4, 8, 20, TRUE) -> #NUM!"], cost=_DISCRETE)
def hypgeom_dist(sample_s: Number, number_sample: Number, population_s: Number,
                 number_pop: Number, cumulative: bool) -> Decimal:
    s, n, m, big = (nm.trunc_int(v) for v in (sample_s, number_sample, population_s,
                                              number_pop))
    _check(big <= 0 or n <= 0 or n > big or m <= 0 or m > big, "the sizes are inconsistent")
    low = max(0, n - big + m)
    _check(s < low or s > min(n, m), "sample_s is impossible for these sizes")

    def pmf(k: int) -> float:
        return math.exp(sp.log_comb(m, k) + sp.log_comb(big - m, n - k) - sp.log_comb(big, n))

    if not cumulative:
        return _out(pmf(s))
    _check(s - low >= _HYPGEOM_TERMS, "the cumulative sum would need more than 10,000 terms")
    total, term = 0.0, pmf(low)
    for k in range(low, s + 1):
        total += term  # pmf(k+1) / pmf(k) = (m-k)(n-k) / ((k+1)(big-m-n+k+1))
        term *= (m - k) * (n - k) / ((k + 1) * (big - m - n + k + 1))
    return _out(min(total, 1.0))


@_stat("NEGBINOM.DIST", p("number_f", _N), p("number_s", _N), p("probability_s", _N), _CUM,
       doc="The negative binomial distribution: the probability of number_f failures before "
           "the number_s-th success.",
       examples=["ROUND(NEGBINOM.DIST(10, 5, 0.25, TRUE), 9) -> 0.313514058",
                 "ROUND(NEGBINOM.DIST(10, 5, 0.25, FALSE), 9) -> 0.05504866",
                 "NEGBINOM.DIST(10, 0, 0.25, TRUE) -> #NUM!"])
def negbinom_dist(number_f: Number, number_s: Number, probability_s: Number, cumulative: bool
                  ) -> Decimal:
    f, s = nm.trunc_int(number_f), nm.trunc_int(number_s)
    q = _prob(probability_s, "probability_s", low_open=False, high_open=False)
    _check(f < 0 or s < 1, "number_f must be >= 0 and number_s >= 1")
    if q == 1.0:
        return _out(1.0 if cumulative or f == 0 else 0.0)
    if q == 0.0:
        return _out(0.0)
    if cumulative:
        return _out(sp.beta_i(q, s, f + 1))
    return _out(math.exp(sp.log_comb(f + s - 1, s - 1) + s * math.log(q) + sp.xlogy(f, 1 - q)))
