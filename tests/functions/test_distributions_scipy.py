"""The SciPy-free distributions (`functions/distributions`, `functions/_special`) against SciPy.

Each row names a formula with variables, a SciPy reference and a grid of arguments; every grid
point must agree within ``REL`` relative or ``ABS`` absolute (the engine computes in doubles as
Excel does, with its own series, continued fractions and bisection, so a few ulps of difference
are expected and tails below 1e-15 compare absolutely). Domain errors are compared too: where
SciPy answers NaN or the argument is outside Excel's domain, the engine must give #NUM!.
"""

from __future__ import annotations

import itertools
import math
from decimal import Decimal
from typing import Any, Callable

import pytest

st = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")

import formulane  # noqa: E402
from formulane import ErrorValue  # noqa: E402

REGISTRY = formulane.default_registry().with_packs("statistics")
#: Stated tolerances: relative for ordinary values, absolute for tails near 0.
REL = 1e-9
ABS = 1e-14
#: Inverses solve by bisection to ~1e-15 relative of the argument: same REL.

X = [0.0, 0.1, 0.5, 1.0, 2.5, 7.0, 30.0]
P = [0.001, 0.05, 0.3, 0.5, 0.9, 0.999]
DF = [1, 2, 5, 30, 200]

TABLE: list[tuple[str, Callable[..., float], dict[str, list[Any]]]] = [
    ("NORM.INV(p, m, s)", lambda p, m, s: st.norm.ppf(p, m, s),
     {"p": P, "m": [0, -3], "s": [1, 2.5]}),
    ("NORM.S.INV(p)", lambda p: st.norm.ppf(p), {"p": P}),
    ("LOGNORM.DIST(x, m, s, TRUE)", lambda x, m, s: st.lognorm.cdf(x, s, scale=math.exp(m)),
     {"x": X[1:], "m": [0, 1.5], "s": [0.5, 2]}),
    ("LOGNORM.DIST(x, m, s, FALSE)", lambda x, m, s: st.lognorm.pdf(x, s, scale=math.exp(m)),
     {"x": X[1:], "m": [0, 1.5], "s": [0.5, 2]}),
    ("LOGNORM.INV(p, m, s)", lambda p, m, s: st.lognorm.ppf(p, s, scale=math.exp(m)),
     {"p": P, "m": [0, 1.5], "s": [0.5, 2]}),
    ("T.DIST(x, d, TRUE)", lambda x, d: st.t.cdf(x, d), {"x": X + [-2.5, -30.0], "d": DF}),
    ("T.DIST(x, d, FALSE)", lambda x, d: st.t.pdf(x, d), {"x": X + [-2.5], "d": DF}),
    ("T.DIST.RT(x, d)", lambda x, d: st.t.sf(x, d), {"x": X + [-1.0], "d": DF}),
    ("T.DIST.2T(x, d)", lambda x, d: 2 * st.t.sf(x, d), {"x": X, "d": DF}),
    ("T.INV(p, d)", lambda p, d: st.t.ppf(p, d), {"p": P, "d": DF}),
    ("T.INV.2T(p, d)", lambda p, d: st.t.isf(p / 2, d), {"p": P + [1.0], "d": DF}),
    ("CHISQ.DIST(x, d, TRUE)", lambda x, d: st.chi2.cdf(x, d), {"x": X, "d": DF}),
    ("CHISQ.DIST(x, d, FALSE)", lambda x, d: st.chi2.pdf(x, d), {"x": X[1:], "d": DF}),
    ("CHISQ.DIST.RT(x, d)", lambda x, d: st.chi2.sf(x, d), {"x": X, "d": DF}),
    ("CHISQ.INV(p, d)", lambda p, d: st.chi2.ppf(p, d), {"p": P, "d": DF}),
    ("CHISQ.INV.RT(p, d)", lambda p, d: st.chi2.isf(p, d), {"p": P, "d": DF}),
    ("F.DIST(x, a, b, TRUE)", lambda x, a, b: st.f.cdf(x, a, b),
     {"x": X, "a": [1, 4, 30], "b": [2, 10, 200]}),
    ("F.DIST(x, a, b, FALSE)", lambda x, a, b: st.f.pdf(x, a, b),
     {"x": X[1:], "a": [1, 4, 30], "b": [2, 10, 200]}),
    ("F.DIST.RT(x, a, b)", lambda x, a, b: st.f.sf(x, a, b),
     {"x": X, "a": [1, 4, 30], "b": [2, 10, 200]}),
    ("F.INV(p, a, b)", lambda p, a, b: st.f.ppf(p, a, b),
     {"p": P, "a": [1, 4, 30], "b": [2, 10, 200]}),
    ("F.INV.RT(p, a, b)", lambda p, a, b: st.f.isf(p, a, b),
     {"p": P, "a": [1, 4, 30], "b": [2, 10, 200]}),
    ("GAMMA.DIST(x, a, b, TRUE)", lambda x, a, b: st.gamma.cdf(x, a, scale=b),
     {"x": X, "a": [0.5, 1, 9, 100], "b": [0.5, 2]}),
    ("GAMMA.DIST(x, a, b, FALSE)", lambda x, a, b: st.gamma.pdf(x, a, scale=b),
     {"x": X[1:], "a": [0.5, 1, 9, 100], "b": [0.5, 2]}),
    ("GAMMA.INV(p, a, b)", lambda p, a, b: st.gamma.ppf(p, a, scale=b),
     {"p": P, "a": [0.5, 1, 9, 100], "b": [0.5, 2]}),
    ("GAMMA(x)", lambda x: special.gamma(x), {"x": [0.1, 0.5, 1.5, 4.5, 20.5, -0.5, -2.5]}),
    ("GAMMALN(x)", lambda x: special.gammaln(x), {"x": [0.1, 0.5, 1.5, 4.5, 100.0, 1e5]}),
    ("BETA.DIST(x, a, b, TRUE)", lambda x, a, b: st.beta.cdf(x, a, b),
     {"x": [0.0, 0.01, 0.3, 0.5, 0.9, 1.0], "a": [0.5, 1, 8, 50], "b": [0.5, 2, 10]}),
    ("BETA.DIST(x, a, b, FALSE)", lambda x, a, b: st.beta.pdf(x, a, b),
     {"x": [0.01, 0.3, 0.5, 0.9], "a": [0.5, 1, 8, 50], "b": [0.5, 2, 10]}),
    ("BETA.INV(p, a, b)", lambda p, a, b: st.beta.ppf(p, a, b),
     {"p": P, "a": [0.5, 1, 8, 50], "b": [0.5, 2, 10]}),
    ("EXPON.DIST(x, r, TRUE)", lambda x, r: st.expon.cdf(x, scale=1 / r),
     {"x": X, "r": [0.1, 1, 10]}),
    ("EXPON.DIST(x, r, FALSE)", lambda x, r: st.expon.pdf(x, scale=1 / r),
     {"x": X, "r": [0.1, 1, 10]}),
    ("WEIBULL.DIST(x, a, b, TRUE)", lambda x, a, b: st.weibull_min.cdf(x, a, scale=b),
     {"x": X, "a": [0.5, 1, 20], "b": [1, 100]}),
    ("WEIBULL.DIST(x, a, b, FALSE)", lambda x, a, b: st.weibull_min.pdf(x, a, scale=b),
     {"x": X[1:], "a": [0.5, 1, 20], "b": [1, 100]}),
    ("BINOM.DIST(k, n, q, FALSE)", lambda k, n, q: st.binom.pmf(k, n, q),
     {"k": [0, 1, 5, 10], "n": [10, 40, 1000], "q": [0.0, 0.01, 0.5, 0.97, 1.0]}),
    ("BINOM.DIST(k, n, q, TRUE)", lambda k, n, q: st.binom.cdf(k, n, q),
     {"k": [0, 1, 5, 10], "n": [10, 40, 1000], "q": [0.0, 0.01, 0.5, 0.97, 1.0]}),
    ("BINOM.INV(n, q, a)", lambda n, q, a: st.binom.ppf(a, n, q),
     {"n": [10, 40, 1000], "q": [0.01, 0.5, 0.97], "a": [0.01, 0.5, 0.99]}),
    ("POISSON.DIST(k, m, FALSE)", lambda k, m: st.poisson.pmf(k, m),
     {"k": [0, 1, 5, 40], "m": [0.5, 5, 50]}),
    ("POISSON.DIST(k, m, TRUE)", lambda k, m: st.poisson.cdf(k, m),
     {"k": [0, 1, 5, 40], "m": [0.5, 5, 50]}),
    ("HYPGEOM.DIST(s, n, m, t, FALSE)", lambda s, n, m, t: st.hypergeom.pmf(s, t, m, n),
     {"s": [0, 1, 3], "n": [4, 10], "m": [8, 30], "t": [40, 500]}),
    ("HYPGEOM.DIST(s, n, m, t, TRUE)", lambda s, n, m, t: st.hypergeom.cdf(s, t, m, n),
     {"s": [0, 1, 3], "n": [4, 10], "m": [8, 30], "t": [40, 500]}),
    ("NEGBINOM.DIST(f, s, q, FALSE)", lambda f, s, q: st.nbinom.pmf(f, s, q),
     {"f": [0, 3, 10, 100], "s": [1, 5], "q": [0.05, 0.25, 0.9]}),
    ("NEGBINOM.DIST(f, s, q, TRUE)", lambda f, s, q: st.nbinom.cdf(f, s, q),
     {"f": [0, 3, 10, 100], "s": [1, 5], "q": [0.05, 0.25, 0.9]}),
    ("CONFIDENCE.T(a, s, n)", lambda a, s, n: st.t.ppf(1 - a / 2, n - 1) * s / math.sqrt(n),
     {"a": [0.01, 0.05, 0.5], "s": [1, 2.5], "n": [2, 5, 50]}),
    ("PHI(x)", lambda x: st.norm.pdf(x), {"x": X + [-2.5]}),
    ("GAUSS(x)", lambda x: st.norm.cdf(x) - 0.5, {"x": X + [-2.5]}),
    ("ERF(x)", lambda x: special.erf(x), {"x": X + [-2.5]}),
    ("ERFC(x)", lambda x: special.erfc(x), {"x": X + [-2.5]}),
]


def _grid(params: dict[str, list[Any]]) -> list[dict[str, Any]]:
    names = list(params)
    return [dict(zip(names, values)) for values in itertools.product(*params.values())]


@pytest.mark.parametrize("formula,reference,params", TABLE, ids=[t[0] for t in TABLE])
def test_agrees_with_scipy(formula: str, reference: Callable[..., float],
                           params: dict[str, list[Any]]) -> None:
    schema = {name: "Number" for name in params}
    program = formulane.compile(formula, schema, registry=REGISTRY)
    bad = []
    for point in _grid(params):
        want = float(reference(**point))
        got = program.evaluate({k: Decimal(repr(float(v))) for k, v in point.items()})
        if not math.isfinite(want):
            if not isinstance(got, ErrorValue):
                bad.append(f"{point}: scipy {want}, engine {got}")
            continue
        if isinstance(got, ErrorValue):
            bad.append(f"{point}: scipy {want!r}, engine {got.code}")
            continue
        have = float(got)
        if abs(have - want) > max(REL * abs(want), ABS):
            bad.append(f"{point}: scipy {want!r}, engine {have!r}")
    assert not bad, f"{formula}: {len(bad)} points differ:\n" + "\n".join(bad[:10])
