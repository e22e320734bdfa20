"""Special functions for the distributions, in binary floating point, without SciPy (private).

Contract: pure Python floats; every loop is capped (`MAX_TERMS` terms of a series or continued
fraction, `MAX_STEPS` bisection steps) and a computation that has not converged by then raises
``XLError(NUM)`` rather than returning a poor value. Algorithms (textbook, written here):

- regularized incomplete gamma P(a, x) and Q(a, x): the power series below x < a + 1, the
  Legendre continued fraction (modified Lentz) above, each scaled by exp(a ln x - x - lgamma a);
- regularized incomplete beta I_x(a, b): the continued fraction of DLMF 8.17.22 by Lentz's
  method, on the side of the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where it converges fast;
- inverses by bisection on the monotone distribution function within a bracket that is grown
  first (the answer is the float where the function crosses p, to ~1e-15 relative);
- the standard normal quantile is the standard library's `statistics.NormalDist` (Wichura's
  AS241, accurate to about 1e-16); erf and erfc are `math.erf`/`math.erfc`, lgamma `math.lgamma`.

The tests compare every distribution with SciPy (tests/functions/test_distributions_scipy.py).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Callable

from ..values import NUM, XLError

#: Terms of a series or continued fraction before giving up (#NUM!).
MAX_TERMS = 2000
#: Bisection steps of an inverse before giving up (#NUM!).
MAX_STEPS = 200
_EPS = 1e-16
_TINY = 1e-300
_STANDARD = NormalDist()


def _not_converged(what: str) -> XLError:
    return XLError(NUM, f"{what} did not converge in {MAX_TERMS} terms for these arguments")


def norm_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def norm_pdf(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def norm_inv(p: float) -> float:
    return _STANDARD.inv_cdf(p)


# ------------------------------------------------------------------------ incomplete gamma


def _gamma_prefix(a: float, x: float) -> float:
    return math.exp(a * math.log(x) - x - math.lgamma(a))


def gamma_p(a: float, x: float) -> float:
    """The regularized lower incomplete gamma function P(a, x), a > 0, x >= 0."""
    if x <= 0:
        return 0.0
    if x < a + 1:
        return _gamma_series(a, x)
    return 1.0 - _gamma_fraction(a, x)


def gamma_q(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    if x <= 0:
        return 1.0
    if x < a + 1:
        return 1.0 - _gamma_series(a, x)
    return _gamma_fraction(a, x)


def _gamma_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    ap = a
    for _ in range(MAX_TERMS):
        ap += 1
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            return min(1.0, total * _gamma_prefix(a, x))
    raise _not_converged("the incomplete gamma series")


def _gamma_fraction(a: float, x: float) -> float:
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, MAX_TERMS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            return h * _gamma_prefix(a, x)
    raise _not_converged("the incomplete gamma continued fraction")


# ------------------------------------------------------------------------- incomplete beta


def beta_i(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b), 0 <= x <= 1, a, b > 0."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(1 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    qab, qap, qam = a + b, a + 1, a - 1
    c = 1.0
    d = 1 - qab * x / qap
    d = _TINY if abs(d) < _TINY else d
    d = 1 / d
    h = d
    for m in range(1, MAX_TERMS):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        d = _TINY if abs(d) < _TINY else d
        c = 1 + aa / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            return h
    raise _not_converged("the incomplete beta continued fraction")


# ---------------------------------------------------------------------------------- inverses


def bisect(f: Callable[[float], float], p: float, lo: float, hi: float,
           grow: bool = False) -> float:
    """The x in [lo, hi] where the increasing f crosses p; with ``grow`` hi doubles first until
    f(hi) >= p (at most 2000 times: floats end near 2^1024). Regula falsi with the Illinois
    modification (superlinear, about 10-20 evaluations), falling back to a halving whenever
    an interpolation step would not shrink the bracket by half: at most `MAX_STEPS` steps."""
    if grow:
        for _ in range(2000):
            if f(hi) >= p:
                break
            lo, hi = hi, hi * 2
        else:  # pragma: no cover - f never reached p
            raise XLError(NUM, "the inverse has no finite answer")
    g_lo, g_hi = f(lo) - p, f(hi) - p
    if g_lo >= 0:
        return lo
    if g_hi <= 0:
        return hi
    side = 0
    for _ in range(MAX_STEPS):
        width = hi - lo
        if width <= 1e-15 * max(abs(lo), abs(hi)) or width <= 5e-324:
            break
        x = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        g = f(x) - p
        if g == 0:
            return x
        if g < 0:
            lo, g_lo = x, g
            if side == -1:
                g_hi *= 0.5  # Illinois: the stale end loses weight
            side = -1
        else:
            hi, g_hi = x, g
            if side == 1:
                g_lo *= 0.5
            side = 1
        if hi - lo > 0.5 * width:  # slow progress: halve instead
            mid = 0.5 * (lo + hi)
            gm = f(mid) - p
            if gm < 0:
                lo, g_lo = mid, gm
            else:
                hi, g_hi = mid, gm
            side = 0
    return lo if abs(g_lo) <= abs(g_hi) else hi


def _around(f: Callable[[float], float], p: float, guess: float, step: float, low: float,
            high: float) -> float:
    """The crossing of p by the increasing f, bracketed around a close guess first (the
    bracket widens by doubling, at most 60 times each way), then solved by `bisect`: a tight
    bracket saves most evaluations when one evaluation is a long series."""
    lo, hi = max(low, guess - step), min(high, guess + step)
    for _ in range(60):
        if lo <= low or f(lo) <= p:
            break
        step *= 2
        lo = max(low, guess - step)
    for _ in range(60):
        if hi >= high or f(hi) >= p:
            break
        step *= 2
        hi = min(high, guess + step)
    return bisect(f, p, lo, hi, grow=hi >= high and high == math.inf)


def gamma_p_inv(p: float, a: float) -> float:
    """The x with P(a, x) = p (0 <= p < 1); the Wilson-Hilferty approximation brackets it."""
    if p <= 0:
        return 0.0
    if a < 1:
        return bisect(lambda x: gamma_p(a, x), p, 0.0, 1.0, grow=True)
    h = 1 / (9 * a)
    guess = a * max(1e-3, 1 - h + norm_inv(p) * math.sqrt(h)) ** 3
    return _around(lambda x: gamma_p(a, x), p, guess, 0.01 * guess + 1e-3, 0.0, math.inf)


def beta_i_inv(p: float, a: float, b: float) -> float:
    """The x in [0, 1] with I_x(a, b) = p; a normal approximation brackets it when a + b is
    large."""
    if p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    f = lambda x: beta_i(x, a, b)  # noqa: E731
    if a + b < 50:
        return bisect(f, p, 0.0, 1.0)
    mean = a / (a + b)
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    guess = min(1.0, max(0.0, mean + norm_inv(p) * sd))
    return _around(f, p, guess, 0.2 * sd, 0.0, 1.0)


# ------------------------------------------------------------------------- discrete helpers


def log_comb(n: int, k: int) -> float:
    """ln C(n, k), exactly rounded for moderate n, from lgamma beyond."""
    if k < 0 or k > n:
        return -math.inf
    if n <= 20000:
        return math.log(math.comb(n, k))
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def xlogy(x: float, y: float) -> float:
    """x ln y with 0 ln 0 = 0."""
    return 0.0 if x == 0 else x * math.log(y)


def student_t_cdf(t: float, df: float) -> float:
    if t * t < df:  # near the centre: 1/2 +- I_y(1/2, df/2)/2 with y = t^2/(df + t^2) small
        half = 0.5 * beta_i(t * t / (df + t * t), 0.5, df / 2)
        return 0.5 + half if t > 0 else 0.5 - half
    x = df / (df + t * t)
    tail = 0.5 * beta_i(x, df / 2, 0.5)
    return 1 - tail if t > 0 else tail


def student_t_pdf(t: float, df: float) -> float:
    return math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)
                    - 0.5 * math.log(df * math.pi) - (df + 1) / 2 * math.log1p(t * t / df))


def student_t_inv(p: float, df: float) -> float:
    """The t with CDF p (0 < p < 1), through the incomplete beta inverse."""
    if p == 0.5:
        return 0.0
    tail = min(p, 1 - p)
    if tail > 0.25:  # near the centre 1 - x would cancel: solve on the distribution itself
        t = bisect(lambda v: student_t_cdf(v, df), 1 - tail, 0.0, 1.0, grow=True)
        return t if p > 0.5 else -t
    x = beta_i_inv(2 * tail, df / 2, 0.5)
    t = math.sqrt(df * (1 - x) / x) if x > 0 else math.inf
    return t if p > 0.5 else -t


__all__ = [
    "MAX_STEPS", "MAX_TERMS", "beta_i", "beta_i_inv", "bisect", "gamma_p", "gamma_p_inv",
    "gamma_q", "log_comb", "norm_cdf", "norm_inv", "norm_pdf", "student_t_cdf", "student_t_inv",
    "student_t_pdf", "xlogy",
]
