"""The statistics pack (off by default; ``registry.with_packs("statistics")``): MODE.SNGL,
GEOMEAN, HARMEAN, AVEDEV, DEVSQ, QUARTILE.INC, RANK.EQ, RANK.AVG, CORREL, COVARIANCE.P/S,
SLOPE, INTERCEPT, RSQ, NORM.DIST, NORM.S.DIST.

Contract: like the core aggregates, blanks are skipped and sums are exact decimals rounded once
(`_listnum`); paired functions (CORREL, SLOPE...) use the positions where both lists hold a
number and answer ``#N/A`` when the lists differ in length, as Excel does. Roots and logarithms
run at 80 digits before rounding, so GEOMEAN(2, 8) is exactly 4. NORM.DIST uses binary floating
point (``math.erf``), as Excel does, converted by the float's shortest repr.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from typing import Any, Sequence

from ..types import BOOLEAN, NUMBER, list_of, many, optional
from ..values import DIV0, NA, NUM, XLError
from . import _listnum as ln
from ._criteria import to_int
from .spec import Cost, builtin, family, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "statistics"

_N = NUMBER
_NUMS = many(NUMBER)
_NUMLIST = list_of(optional(NUMBER))
_PACK = "statistics"


def _result(x: Decimal | int) -> Decimal | int:
    return ln.tidy(ln.finish(x))


def _positive(args: Sequence[Any], name: str) -> list[Decimal | int]:
    xs = ln.numbers(args)
    if not xs:
        raise XLError(NUM, f"{name} of no numbers")
    if any(x <= 0 for x in xs):
        raise XLError(NUM, f"{name} needs numbers greater than 0")
    return xs


@builtin(
    "MODE.SNGL",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The most frequent number (the first one in the data on ties); #N/A when no number "
        "repeats.",
    examples=['MODE.SNGL([1, 2, 2, 3, 3]) -> 2', 'MODE.SNGL(5, [4, 4, 5]) -> 5',
              'MODE.SNGL([1, 2, 3]) -> #N/A'],
    cost=Cost.linear(4, 2),
    errors=("#N/A",),
    pack=_PACK,
    aliases=("MODE",),
)
def mode_sngl(*args: Any) -> Decimal | int:
    counts: dict[Any, int] = {}
    first: dict[Any, Decimal | int] = {}
    for x in ln.numbers(args):
        counts[x] = counts.get(x, 0) + 1
        first.setdefault(x, x)
    best = max(counts.values(), default=0)
    if best < 2:
        raise XLError(NA, "no number occurs more than once")
    for key, n in counts.items():  # dicts keep first-seen order: the first mode in the data
        if n == best:
            return first[key]
    raise AssertionError("unreachable")  # pragma: no cover


@builtin(
    "GEOMEAN",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The geometric mean of positive numbers; #NUM! for none or any number <= 0.",
    examples=['GEOMEAN(2, 8) -> 4', 'GEOMEAN([1, 3, 9]) -> 3', 'GEOMEAN(1, 0) -> #NUM!'],
    cost=Cost.linear(2, 20),
    errors=("#NUM!",),
    pack=_PACK,
)
def geomean(*args: Any) -> Decimal | int:
    xs = _positive(args, "GEOMEAN")
    # The product of mantissas in [1, 10) and the sum of exponents, kept apart: 100,000 tiny or
    # huge numbers neither underflow nor overflow, and only one logarithm is taken.
    exponent = 0
    with decimal.localcontext(ln.WIDE) as ctx:
        mantissas = Decimal(1)
        for x in xs:
            d = Decimal(x)
            e = d.adjusted()
            exponent += e
            mantissas *= d.scaleb(-e)
        log = ctx.ln(mantissas) + exponent * ctx.ln(Decimal(10))
        value = ctx.exp(log / len(xs))
    return _result(value)


#: HARMEAN, AVEDEV, DEVSQ: one number from a list's spread (#NUM! when it has no numbers).
_spread = family(sig(p("number", _NUMS), returns=_N, repeat=1), cost=Cost.linear(6, 2),
                 errors=("#NUM!",), pack=_PACK)


@_spread(
    "HARMEAN",
    doc="The harmonic mean of positive numbers; #NUM! for none or any number <= 0.",
    examples=['HARMEAN(1, 4, 4) -> 2', 'HARMEAN([2, 6]) -> 3', 'HARMEAN(-1, 2) -> #NUM!'],
)
def harmean(*args: Any) -> Decimal | int:
    xs = _positive(args, "HARMEAN")
    with decimal.localcontext(ln.WIDE):
        inverse = sum((Decimal(1) / x for x in xs), Decimal(0))
        value = len(xs) / inverse
    return _result(value)


@_spread(
    "AVEDEV",
    doc="The mean absolute deviation from the mean; #NUM! when there are no numbers.",
    examples=['AVEDEV(2, 4, 6) -> 4 / 3', 'AVEDEV([5, 5]) -> 0', 'AVEDEV([]) -> #NUM!'],
)
def avedev(*args: Any) -> Decimal | int:
    xs = ln.numbers(args)
    if not xs:
        raise XLError(NUM, "AVEDEV of no numbers")
    with decimal.localcontext(ln.WIDE):
        m = Decimal(ln.wide_sum(xs)) / len(xs)
        value = sum((abs(x - m) for x in xs), Decimal(0)) / len(xs)
    return _result(value)


@_spread(
    "DEVSQ",
    doc="The sum of squared deviations from the mean; #NUM! when there are no numbers.",
    examples=['DEVSQ(1, 2, 3) -> 2', 'DEVSQ([4, BLANK(), 4]) -> 0', 'DEVSQ([]) -> #NUM!'],
)
def devsq(*args: Any) -> Decimal | int:
    xs = ln.numbers(args)
    if not xs:
        raise XLError(NUM, "DEVSQ of no numbers")
    return _result(ln.sum_squares(xs))


@builtin(
    "QUARTILE.INC",
    sig(p("list", _NUMLIST), p("quart", _N, doc="0 min, 1 first quartile, 2 median, 3, 4 max"),
        returns=_N),
    doc="A quartile of the numbers (PERCENTILE.INC at quart / 4); #NUM! when quart is outside "
        "0..4 (truncated) or there are no numbers.",
    examples=['QUARTILE.INC([1, 2, 3, 4], 1) -> 1.75', 'QUARTILE.INC([1, 2, 3, 4], 4) -> 4',
              'QUARTILE.INC([1, 2], 5) -> #NUM!'],
    cost=Cost.linear(25, 2),
    errors=("#NUM!",),
    pack=_PACK,
    aliases=("QUARTILE",),
)
def quartile_inc(values: tuple[Any, ...], quart: Any) -> Decimal | int:
    q = to_int(quart, "quart")
    if not 0 <= q <= 4:
        raise XLError(NUM, "quart must be 0, 1, 2, 3 or 4")
    return ln.percentile_inc(ln.list_numbers(values), Decimal(q) / 4)


def _rank(number: Any, values: tuple[Any, ...], order: Any, average: bool) -> Decimal | int:
    xs = ln.list_numbers(values)
    equal = sum(1 for x in xs if x == number)
    if not equal:
        raise XLError(NA, "the number is not in the list")
    ahead = sum(1 for x in xs if (x < number if order else x > number))
    if not average or equal == 1:
        return ahead + 1
    return _result(Decimal(2 * ahead + equal + 1) / 2)


_ORDER = p("order", _N, 0, "0 descending (largest is 1), non-zero ascending")


@builtin(
    "RANK.EQ",
    sig(p("number", _N), p("list", _NUMLIST), _ORDER, returns=_N),
    doc="The rank of a number in a list (ties share the best rank); #N/A when it is not there.",
    examples=['RANK.EQ(7, [3, 7, 9, 7]) -> 2', 'RANK.EQ(7, [3, 7, 9, 7], 1) -> 2',
              'RANK.EQ(3, [3, 7, 9], 1) -> 1', 'RANK.EQ(4, [3, 7]) -> #N/A'],
    cost=Cost.linear(3, 2),
    errors=("#N/A",),
    pack=_PACK,
    aliases=("RANK",),
)
def rank_eq(number: Any, values: tuple[Any, ...], order: Any = 0) -> Decimal | int:
    return _rank(number, values, order, False)


@builtin(
    "RANK.AVG",
    sig(p("number", _N), p("list", _NUMLIST), _ORDER, returns=_N),
    doc="The rank of a number in a list (ties share their average rank); #N/A when absent.",
    examples=['RANK.AVG(7, [3, 7, 9, 7]) -> 2.5', 'RANK.AVG(9, [3, 7, 9]) -> 1',
              'RANK.AVG(4, [3, 7]) -> #N/A'],
    cost=Cost.linear(3, 2),
    errors=("#N/A",),
    pack=_PACK,
)
def rank_avg(number: Any, values: tuple[Any, ...], order: Any = 0) -> Decimal | int:
    return _rank(number, values, order, True)


# ------------------------------------------------------------------------------ paired data


def _pairs(first: tuple[Any, ...], second: tuple[Any, ...]) -> tuple[list[Decimal | int], list[Decimal | int]]:
    if len(first) != len(second):
        raise XLError(NA, f"the lists have different lengths ({len(first)} and {len(second)})")
    xs, ys = [], []
    for a, b in zip(first, second):
        if type(a) in (int, Decimal) and type(b) in (int, Decimal):
            xs.append(a)
            ys.append(b)
    return xs, ys


def _moments(xs: list[Decimal | int], ys: list[Decimal | int]) -> tuple[Decimal, ...]:
    """(mean x, mean y, Sxx, Syy, Sxy) in the wide context."""
    n = len(xs)
    if not n:
        raise XLError(DIV0, "no pairs of numbers")
    with decimal.localcontext(ln.WIDE):
        mx = Decimal(ln.wide_sum(xs)) / n
        my = Decimal(ln.wide_sum(ys)) / n
        sxx = syy = sxy = Decimal(0)
        for x, y in zip(xs, ys):
            dx, dy = x - mx, y - my
            sxx += dx * dx
            syy += dy * dy
            sxy += dx * dy
    return mx, my, sxx, syy, sxy


_PAIR_ERRORS = ("#N/A", "#DIV/0!")


@builtin(
    "CORREL",
    sig(p("list1", _NUMLIST), p("list2", _NUMLIST), returns=_N),
    doc="The Pearson correlation of two lists (positions where both hold numbers); #DIV/0! "
        "when either has no spread, #N/A for lists of different lengths.",
    examples=['CORREL([1, 2, 3], [2, 4, 6]) -> 1', 'CORREL([1, 2, 3], [3, 2, 1]) -> -1',
              'CORREL([1, 1], [2, 3]) -> #DIV/0!', 'CORREL([1, 2], [1]) -> #N/A'],
    cost=Cost.linear(10, 10),
    errors=_PAIR_ERRORS,
    pack=_PACK,
    aliases=("PEARSON",),
)
def correl(first: tuple[Any, ...], second: tuple[Any, ...]) -> Decimal | int:
    _, _, sxx, syy, sxy = _moments(*_pairs(first, second))
    if not sxx or not syy:
        raise XLError(DIV0, "a list has no spread")
    with decimal.localcontext(ln.WIDE):
        value = sxy / (sxx * syy).sqrt()
    return _result(value)


@builtin(
    "RSQ",
    sig(p("known_ys", _NUMLIST), p("known_xs", _NUMLIST), returns=_N),
    doc="The square of the Pearson correlation (the R² of a linear fit).",
    examples=['RSQ([2, 4, 6], [1, 2, 3]) -> 1', 'RSQ([1, 3, 2], [1, 2, 3]) -> 0.25',
              'RSQ([1, 2], [5, 5]) -> #DIV/0!'],
    cost=Cost.linear(10, 10),
    errors=_PAIR_ERRORS,
    pack=_PACK,
)
def rsq(ys: tuple[Any, ...], xs: tuple[Any, ...]) -> Decimal | int:
    _, _, sxx, syy, sxy = _moments(*_pairs(xs, ys))
    if not sxx or not syy:
        raise XLError(DIV0, "a list has no spread")
    with decimal.localcontext(ln.WIDE):
        value = sxy * sxy / (sxx * syy)
    return _result(value)


def _covariance(first: tuple[Any, ...], second: tuple[Any, ...], sample: bool) -> Decimal | int:
    xs, ys = _pairs(first, second)
    if len(xs) < (2 if sample else 1):
        raise XLError(DIV0, "too few pairs of numbers")
    _, _, _, _, sxy = _moments(xs, ys)
    with decimal.localcontext(ln.WIDE):
        value = sxy / (len(xs) - 1 if sample else len(xs))
    return _result(value)


@builtin(
    "COVARIANCE.P",
    sig(p("list1", _NUMLIST), p("list2", _NUMLIST), returns=_N),
    doc="The population covariance of two lists (divides by n).",
    examples=['COVARIANCE.P([1, 2, 3], [2, 4, 6]) -> 4 / 3', 'COVARIANCE.P([1], [5]) -> 0',
              'COVARIANCE.P([1, 2], [1]) -> #N/A'],
    cost=Cost.linear(10, 4),
    errors=_PAIR_ERRORS,
    pack=_PACK,
    aliases=("COVAR",),
)
def covariance_p(first: tuple[Any, ...], second: tuple[Any, ...]) -> Decimal | int:
    return _covariance(first, second, False)


@builtin(
    "COVARIANCE.S",
    sig(p("list1", _NUMLIST), p("list2", _NUMLIST), returns=_N),
    doc="The sample covariance of two lists (divides by n - 1); #DIV/0! below two pairs.",
    examples=['COVARIANCE.S([1, 2, 3], [2, 4, 6]) -> 2', 'COVARIANCE.S([1], [5]) -> #DIV/0!'],
    cost=Cost.linear(10, 4),
    errors=_PAIR_ERRORS,
    pack=_PACK,
)
def covariance_s(first: tuple[Any, ...], second: tuple[Any, ...]) -> Decimal | int:
    return _covariance(first, second, True)


def _fit(ys: tuple[Any, ...], xs: tuple[Any, ...]) -> tuple[Decimal, Decimal]:
    mx, my, sxx, _, sxy = _moments(*_pairs(xs, ys))
    if not sxx:
        raise XLError(DIV0, "the x values have no spread")
    with decimal.localcontext(ln.WIDE):
        slope = sxy / sxx
        return slope, my - slope * mx


#: SLOPE and INTERCEPT: the least-squares line through pairs of numbers.
_line = family(sig(p("known_ys", _NUMLIST), p("known_xs", _NUMLIST), returns=_N),
               cost=Cost.linear(10, 4), errors=_PAIR_ERRORS, pack=_PACK)


@_line(
    "SLOPE",
    doc="The slope of the least-squares line through the (x, y) points.",
    examples=['SLOPE([3, 5, 7], [1, 2, 3]) -> 2', 'SLOPE([1, 2], [4, 4]) -> #DIV/0!',
              'SLOPE([1, 2], [1]) -> #N/A'],
)
def slope(ys: tuple[Any, ...], xs: tuple[Any, ...]) -> Decimal | int:
    return _result(_fit(ys, xs)[0])


@_line(
    "INTERCEPT",
    doc="Where the least-squares line through the (x, y) points crosses x = 0.",
    examples=['INTERCEPT([3, 5, 7], [1, 2, 3]) -> 1', 'INTERCEPT([1, 2], [4, 4]) -> #DIV/0!'],
)
def intercept(ys: tuple[Any, ...], xs: tuple[Any, ...]) -> Decimal | int:
    return _result(_fit(ys, xs)[1])


# ------------------------------------------------------------------------- normal distribution


def _from_float(x: float) -> Decimal:
    if not math.isfinite(x):
        raise XLError(NUM, "the result is not a finite number")
    return ln.tidy(ln.finish(Decimal(repr(x)))) if x else Decimal(0)  # type: ignore[return-value]


def _standard(z: float, cumulative: bool, scale: float = 1.0) -> Decimal:
    if cumulative:
        return _from_float(0.5 * math.erfc(-z / math.sqrt(2)))
    return _from_float(math.exp(-0.5 * z * z) / (scale * math.sqrt(2 * math.pi)))


@builtin(
    "NORM.DIST",
    sig(p("x", _N), p("mean", _N), p("standard_dev", _N), p("cumulative", BOOLEAN), returns=_N),
    doc="The normal distribution at x: the cumulative probability, or the density when "
        "cumulative is FALSE; #NUM! for a standard deviation <= 0.",
    examples=['NORM.DIST(0, 0, 1, TRUE) -> 0.5',
              'ROUND(NORM.DIST(42, 40, 1.5, TRUE), 6) -> 0.908789',
              'ROUND(NORM.DIST(42, 40, 1.5, FALSE), 6) -> 0.10934',
              'NORM.DIST(1, 0, 0, TRUE) -> #NUM!'],
    cost=Cost.const(4),
    errors=("#NUM!",),
    pack=_PACK,
)
def norm_dist(x: Any, mean: Any, standard_dev: Any, cumulative: bool) -> Decimal:
    if standard_dev <= 0:
        raise XLError(NUM, "the standard deviation must be greater than 0")
    sd = float(standard_dev)
    with decimal.localcontext(ln.WIDE):
        offset = float(x - mean)  # may be inf past 1e308: the tails handle it
    return _standard(offset / sd, cumulative, sd)


@builtin(
    "NORM.S.DIST",
    sig(p("z", _N), p("cumulative", BOOLEAN), returns=_N),
    doc="The standard normal distribution at z (mean 0, standard deviation 1).",
    examples=['NORM.S.DIST(0, TRUE) -> 0.5', 'ROUND(NORM.S.DIST(1.333333, TRUE), 6) -> 0.908789',
              'ROUND(NORM.S.DIST(0, FALSE), 6) -> 0.398942'],
    cost=Cost.const(4),
    errors=("#NUM!",),
    pack=_PACK,
)
def norm_s_dist(z: Any, cumulative: bool) -> Decimal:
    return _standard(float(z), cumulative)
