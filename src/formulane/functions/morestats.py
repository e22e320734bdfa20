"""More of the statistics pack: PERCENTILE.EXC, QUARTILE.EXC, PERCENTRANK.INC/EXC, KURT,
SKEW, SKEW.P, TRIMMEAN, MODE.MULT, AVERAGEA, MAXA, MINA, STEYX, FORECAST.LINEAR and PROB.

Contract: as the statistics module: blanks are skipped, sums are exact decimals in the wide
context rounded once (`_listnum`), paired lists use the positions where both hold a number
and answer ``#N/A`` when their lengths differ. The ...A functions read logicals as 1 and 0
and texts inside lists as 0 (a text given directly must read as a number, else ``#VALUE!``),
as Excel does. PERCENTRANK truncates to ``significance`` digits (3 by default), as Excel.
One or two passes over the numbers (plus one sort where ranks are needed): cost linear.
"""

from __future__ import annotations

import bisect
import decimal
from decimal import Decimal
from typing import Any

from ..types import ANY, NUMBER, list_of, many, optional
from ..values import DIV0, NA, NUM, VALUE, XLError
from . import _criteria as cr
from . import _listnum as ln
from . import _numeric as nm
from .moremath import percentile_exc
from .spec import Cost, Refuse, builtin, p, sig
from .statistics import _fit, _moments, _pairs

_N = NUMBER
_NUMS = many(NUMBER)
_NUMLIST = list_of(optional(NUMBER))
_PACK = "statistics"
_REFUSE = Refuse("an order statistic or moment over the items of a list argument; the list "
                 "forms of the statistics pack cover MEDIAN, PERCENTILE.INC and friends only")
_COMMON: dict[str, Any] = dict(pack=_PACK, category="statistics", polars=_REFUSE, sql=_REFUSE)


def _result(x: Decimal | int) -> Decimal | int:
    return ln.tidy(ln.finish(x))


@builtin("PERCENTILE.EXC", sig(p("list", _NUMLIST), p("k", _N, doc="strictly between 0 and 1"),
                               returns=_N),
         doc="The k-th percentile with Excel's exclusive method (rank k (n + 1)); #NUM! when "
             "that rank falls outside 1..n.",
         examples=["PERCENTILE.EXC([1, 2, 3, 6, 6, 6, 7, 8, 9], 0.25) -> 2.5",
                   "PERCENTILE.EXC([1, 2, 3, 6, 6, 6, 7, 8, 9], 0.5) -> 6",
                   "PERCENTILE.EXC([1, 2, 3], 0.1) -> #NUM!"],
         cost=Cost.linear(25, 2), errors=("#NUM!",), **_COMMON)
def percentile_exc_(values: tuple[Any, ...], k: Any) -> Decimal | int:
    return percentile_exc(ln.list_numbers(values), k)


@builtin("QUARTILE.EXC", sig(p("list", _NUMLIST), p("quart", _N, doc="1, 2 or 3"), returns=_N),
         doc="A quartile with Excel's exclusive method (PERCENTILE.EXC at quart / 4).",
         examples=["QUARTILE.EXC([6, 7, 15, 36, 39, 40, 41, 42, 43, 47, 49], 1) -> 15",
                   "QUARTILE.EXC([6, 7, 15, 36, 39, 40, 41, 42, 43, 47, 49], 3) -> 43",
                   "QUARTILE.EXC([1, 2], 4) -> #NUM!"],
         cost=Cost.linear(25, 2), errors=("#NUM!",), **_COMMON)
def quartile_exc(values: tuple[Any, ...], quart: Any) -> Decimal | int:
    q = cr.to_int(quart, "quart")
    if q not in (1, 2, 3):
        raise XLError(NUM, "quart must be 1, 2 or 3")
    return percentile_exc(ln.list_numbers(values), Decimal(q) / 4)


def _percentrank(values: tuple[Any, ...], x: Any, significance: Any, exclusive: bool) -> Decimal | int:
    xs = sorted(ln.list_numbers(values))
    digits = cr.to_int(significance, "significance")
    if digits < 1:
        raise XLError(NUM, "significance must be at least 1")
    n = len(xs)
    if not n or x < xs[0] or x > xs[-1]:
        raise XLError(NA, "x is outside the numbers")
    if n == 1 and not exclusive:
        return 1

    def rank_at(value: Any) -> Decimal:
        below = bisect.bisect_left(xs, value)
        return Decimal(below + 1) / (n + 1) if exclusive else Decimal(below) / (n - 1)

    with decimal.localcontext(ln.WIDE):
        i = bisect.bisect_left(xs, x)
        if xs[i] == x:
            rank = rank_at(x)
        else:
            lo, hi = xs[i - 1], xs[i]
            rank = rank_at(lo) + (rank_at(hi) - rank_at(lo)) * (Decimal(x) - lo) / (hi - lo)
    return _result(nm.round_digits(rank, min(digits, 30), "down"))


_SIGNIFICANCE = p("significance", _N, 3, "digits kept (truncated), 3 by default")


@builtin("PERCENTRANK.INC", sig(p("list", _NUMLIST), p("x", _N), _SIGNIFICANCE, returns=_N),
         doc="The rank of x in the numbers as a fraction 0..1 (inclusive), interpolated "
             "between neighbours; #N/A when x is outside them.",
         examples=["PERCENTRANK.INC([13, 12, 11, 8, 4, 3, 2, 1, 1, 1], 2) -> 0.333",
                   "PERCENTRANK.INC([13, 12, 11, 8, 4, 3, 2, 1, 1, 1], 5) -> 0.583",
                   "PERCENTRANK.INC([1, 2], 3) -> #N/A"],
         cost=Cost.linear(25, 4), errors=("#N/A", "#NUM!"), aliases=("PERCENTRANK",), **_COMMON)
def percentrank_inc(values: tuple[Any, ...], x: Any, significance: Any = 3) -> Decimal | int:
    return _percentrank(values, x, significance, False)


@builtin("PERCENTRANK.EXC", sig(p("list", _NUMLIST), p("x", _N), _SIGNIFICANCE, returns=_N),
         doc="The rank of x in the numbers as a fraction strictly between 0 and 1 (exclusive).",
         examples=["PERCENTRANK.EXC([1, 2, 3, 6, 6, 6, 7, 8, 9], 7) -> 0.7",
                   "PERCENTRANK.EXC([1, 2, 3, 6, 6, 6, 7, 8, 9], 5.43) -> 0.381",
                   "PERCENTRANK.EXC([1, 2, 3, 6, 6, 6, 7, 8, 9], 5.43, 0) -> #NUM!"],
         cost=Cost.linear(25, 4), errors=("#N/A", "#NUM!"), **_COMMON)
def percentrank_exc(values: tuple[Any, ...], x: Any, significance: Any = 3) -> Decimal | int:
    return _percentrank(values, x, significance, True)


def _standardized_sums(xs: list[Any], power: int, sample: bool) -> Decimal:
    n = len(xs)
    with decimal.localcontext(ln.WIDE):
        m = Decimal(ln.wide_sum(xs)) / n
        ss = sum(((x - m) ** 2 for x in xs), Decimal(0))
        var = ss / (n - 1 if sample else n)
        if not var:
            raise XLError(DIV0, "the numbers have no spread")
        sd = var.sqrt()
        return sum((((x - m) / sd) ** power for x in xs), Decimal(0))


@builtin("KURT", sig(p("number", _NUMS), returns=_N, repeat=1),
         doc="The sample excess kurtosis; #DIV/0! for fewer than four numbers or no spread.",
         examples=["ROUND(KURT(3, 4, 5, 2, 3, 4, 5, 6, 4, 7), 9) -> -0.151799637",
                   "KURT(1, 2, 3) -> #DIV/0!", "KURT([1, 1, 1, 1]) -> #DIV/0!"],
         cost=Cost.linear(12, 4), errors=("#DIV/0!",), **_COMMON)
def kurt(*args: Any) -> Decimal | int:
    xs = ln.numbers(args)
    n = len(xs)
    if n < 4:
        raise XLError(DIV0, "KURT needs at least four numbers")
    s4 = _standardized_sums(xs, 4, True)
    with decimal.localcontext(ln.WIDE):
        value = (Decimal(n * (n + 1)) / ((n - 1) * (n - 2) * (n - 3)) * s4
                 - Decimal(3 * (n - 1) ** 2) / ((n - 2) * (n - 3)))
    return _result(value)


@builtin("SKEW", sig(p("number", _NUMS), returns=_N, repeat=1),
         doc="The sample skewness; #DIV/0! for fewer than three numbers or no spread.",
         examples=["ROUND(SKEW(3, 4, 5, 2, 3, 4, 5, 6, 4, 7), 9) -> 0.359543071",
                   "SKEW(1, 2) -> #DIV/0!", "SKEW([1, 2, 3]) -> 0"],
         cost=Cost.linear(12, 4), errors=("#DIV/0!",), **_COMMON)
def skew(*args: Any) -> Decimal | int:
    xs = ln.numbers(args)
    n = len(xs)
    if n < 3:
        raise XLError(DIV0, "SKEW needs at least three numbers")
    s3 = _standardized_sums(xs, 3, True)
    with decimal.localcontext(ln.WIDE):
        return _result(Decimal(n) / ((n - 1) * (n - 2)) * s3)


@builtin("SKEW.P", sig(p("number", _NUMS), returns=_N, repeat=1),
         doc="The population skewness; #DIV/0! for no numbers or no spread.",
         examples=["ROUND(SKEW.P(3, 4, 5, 2, 3, 4, 5, 6, 4, 7), 9) -> 0.303193339",
                   "SKEW.P([1, 2, 3]) -> 0", "SKEW.P(5, 5) -> #DIV/0!"],
         cost=Cost.linear(12, 4), errors=("#DIV/0!",), **_COMMON)
def skew_p(*args: Any) -> Decimal | int:
    xs = ln.numbers(args)
    if not xs:
        raise XLError(DIV0, "SKEW.P of no numbers")
    s3 = _standardized_sums(xs, 3, False)
    with decimal.localcontext(ln.WIDE):
        return _result(s3 / len(xs))


@builtin("TRIMMEAN", sig(p("list", _NUMLIST), p("percent", _N, doc="the fraction excluded, "
                                                                    "0 <= percent < 1"),
                         returns=_N),
         doc="The mean of the numbers without a fraction of the largest and smallest (rounded "
             "down to an even count, half from each end).",
         examples=["TRIMMEAN([4, 5, 6, 7, 2, 3, 4, 5, 1, 2, 3], 0.2) -> 3.777777777777777777777777777777778",
                   "TRIMMEAN([1, 2, 100], 0.7) -> 2", "TRIMMEAN([1, 2], 1) -> #NUM!"],
         cost=Cost.linear(25, 4), errors=("#NUM!",), **_COMMON)
def trimmean(values: tuple[Any, ...], percent: Any) -> Decimal | int:
    xs = sorted(ln.list_numbers(values))
    if percent < 0 or percent >= 1 or not xs:
        raise XLError(NUM, "percent must be in 0..1 (1 excluded) and the list hold numbers")
    k = int(Decimal(len(xs)) * Decimal(percent) / 2)
    kept = xs[k:len(xs) - k]
    return ln.mean(kept)


@builtin("MODE.MULT", sig(p("number", _NUMS), returns=list_of(_N), repeat=1),
         doc="Every most frequent number, in the order they first occur; #N/A when no number "
             "repeats.",
         examples=["MODE.MULT([1, 2, 3, 4, 3, 2, 1, 2, 3, 5, 6, 1]) -> [1, 2, 3]",
                   "MODE.MULT(1, [2, 2]) -> [2]", "MODE.MULT([1, 2]) -> #N/A"],
         cost=Cost.linear(6, 2), errors=("#N/A",), **_COMMON)
def mode_mult(*args: Any) -> tuple[Any, ...]:
    counts: dict[Any, int] = {}
    first: dict[Any, Any] = {}
    for x in ln.numbers(args):
        counts[x] = counts.get(x, 0) + 1
        first.setdefault(x, x)
    best = max(counts.values(), default=0)
    if best < 2:
        raise XLError(NA, "no number occurs more than once")
    return tuple(first[k] for k, c in counts.items() if c == best)


def _values_a(args: tuple[Any, ...]) -> list[Any]:
    """Excel's ...A reading: logicals 1/0, texts in lists 0, direct texts must be numbers."""
    out: list[Any] = []
    for arg in args:
        if type(arg) is tuple:
            stack = [arg]
            while stack:
                for v in stack.pop():
                    if type(v) is tuple:
                        stack.append(v)
                    elif v is not None:
                        out.append(_one_a(v, False))
        elif arg is not None:
            out.append(_one_a(arg, True))
    return out


def _one_a(v: Any, direct: bool) -> Any:
    if type(v) is bool:
        return int(v)
    if cr.is_number(v):
        return v
    if type(v) is str:
        if not direct:
            return 0
        n = cr.parse_number(v)
        if n is None:
            raise XLError(VALUE, f"{v!r} is not a number")
        return n
    serial = cr.serial(v)
    if serial is None:
        raise XLError(VALUE, "expected numbers, logicals or text")
    return serial


_ANYS = p("value", many(ANY))


@builtin("AVERAGEA", sig(_ANYS, returns=_N, repeat=1),
         doc="The mean of values counting logicals as 1 or 0 and texts in lists as 0 (blanks "
             "skipped); #DIV/0! when there are none.",
         examples=['AVERAGEA([10, 7, 9, 2], ["n/a"]) -> 5.6', "AVERAGEA(TRUE, 3) -> 2",
                   "AVERAGEA([]) -> #DIV/0!"],
         cost=Cost.linear(4, 2), errors=("#DIV/0!", "#VALUE!"), **_COMMON)
def averagea(*args: Any) -> Decimal | int:
    return ln.mean(_values_a(args))


@builtin("MAXA", sig(_ANYS, returns=_N, repeat=1),
         doc="The largest value counting logicals as 1 or 0 and texts in lists as 0 (0 when "
             "there are none).",
         examples=['MAXA([0, 0.2, 0.5, 0.4], TRUE) -> 1', 'MAXA([-1], ["a"]) -> 0', "MAXA([]) -> 0"],
         cost=Cost.linear(3, 2), errors=("#VALUE!",), **_COMMON)
def maxa(*args: Any) -> Decimal | int:
    xs = _values_a(args)
    return max(xs) if xs else 0


@builtin("MINA", sig(_ANYS, returns=_N, repeat=1),
         doc="The smallest value counting logicals as 1 or 0 and texts in lists as 0 (0 when "
             "there are none).",
         examples=['MINA(FALSE, [0.2, 0.5, 0.4, 0.8]) -> 0', 'MINA([5], ["a"]) -> 0',
                   "MINA(3, 2) -> 2"],
         cost=Cost.linear(3, 2), errors=("#VALUE!",), **_COMMON)
def mina(*args: Any) -> Decimal | int:
    xs = _values_a(args)
    return min(xs) if xs else 0


@builtin("STEYX", sig(p("known_ys", _NUMLIST), p("known_xs", _NUMLIST), returns=_N),
         doc="The standard error of the predicted y for each x of a least-squares line; "
             "#DIV/0! below three pairs.",
         examples=["ROUND(STEYX([2, 3, 9, 1, 8, 7, 5], [6, 5, 11, 7, 5, 4, 4]), 6) -> 3.305719",
                   "STEYX([1, 2], [3, 4]) -> #DIV/0!", "STEYX([1, 2], [3]) -> #N/A"],
         cost=Cost.linear(10, 10), errors=("#N/A", "#DIV/0!"), **_COMMON)
def steyx(known_ys: tuple[Any, ...], known_xs: tuple[Any, ...]) -> Decimal | int:
    xs, ys = _pairs(known_xs, known_ys)
    if len(xs) < 3:
        raise XLError(DIV0, "STEYX needs at least three pairs")
    _, _, sxx, syy, sxy = _moments(xs, ys)
    if not sxx:
        raise XLError(DIV0, "the x values have no spread")
    with decimal.localcontext(ln.WIDE):
        value = ((syy - sxy * sxy / sxx) / (len(xs) - 2)).sqrt()
    return _result(value)


@builtin("FORECAST.LINEAR", sig(p("x", _N), p("known_ys", _NUMLIST), p("known_xs", _NUMLIST),
                                returns=_N),
         doc="The y of the least-squares line through the (x, y) points at x.",
         examples=["ROUND(FORECAST.LINEAR(30, [6, 7, 9, 15, 21], [20, 28, 31, 38, 40]), 6)"
                   " -> 10.607253",
                   "FORECAST.LINEAR(4, [3, 5, 7], [1, 2, 3]) -> 9",
                   "FORECAST.LINEAR(1, [1, 2], [3, 3]) -> #DIV/0!"],
         cost=Cost.linear(10, 10), errors=("#N/A", "#DIV/0!"), aliases=("FORECAST",), **_COMMON)
def forecast_linear(x: Any, known_ys: tuple[Any, ...], known_xs: tuple[Any, ...]) -> Decimal | int:
    slope, intercept = _fit(known_ys, known_xs)
    with decimal.localcontext(ln.WIDE):
        return _result(intercept + slope * x)


@builtin("PROB", sig(p("x_range", _NUMLIST), p("prob_range", _NUMLIST), p("lower_limit", _N),
                     p("upper_limit", _N, None, "the upper bound; the lower one alone when "
                                                "omitted"), returns=_N),
         doc="The probability that a value of x_range lies between the limits, given the "
             "probabilities (which must lie in 0..1 and sum to 1, else #NUM!).",
         examples=["PROB([0, 1, 2, 3], [0.2, 0.3, 0.1, 0.4], 2) -> 0.1",
                   "PROB([0, 1, 2, 3], [0.2, 0.3, 0.1, 0.4], 1, 3) -> 0.8",
                   "PROB([0, 1], [0.2, 0.3], 1) -> #NUM!", "PROB([0, 1], [1], 1) -> #N/A"],
         cost=Cost.linear(6, 4), errors=("#N/A", "#NUM!"), **_COMMON)
def prob(x_range: tuple[Any, ...], prob_range: tuple[Any, ...], lower_limit: Any, upper_limit: Any = None
         ) -> Decimal | int:
    xs, ps = _pairs(x_range, prob_range)
    if any(q < 0 or q > 1 for q in ps) or ln.wide_sum(ps) != 1:
        raise XLError(NUM, "the probabilities must lie in 0..1 and sum to 1")
    upper = lower_limit if upper_limit is None else upper_limit
    return _result(ln.wide_sum(q for x, q in zip(xs, ps) if lower_limit <= x <= upper))


