"""More of Excel's math: counting (MULTINOMIAL, FACTDOUBLE, COMBINA, PERMUT, PERMUTATIONA),
series and paired sums (SERIESSUM, SUMX2MY2, SUMX2PY2, SUMXMY2), the .PRECISE roundings, and
SUBTOTAL and AGGREGATE over lists.

Contract: exact integer or decimal arithmetic, results rounded once (`_numeric.finish`, so
1e308 or more is ``#NUM!``). Counts are truncated toward zero as Excel does, and every
factorial-like result is estimated with ``math.lgamma`` before it is computed, so
``PERMUT(1E9, 1E6)`` is ``#NUM!`` at once instead of a million multiplications. SUBTOTAL and
AGGREGATE run the list functions' own implementations (one definition of SUM, STDEV.S...);
AGGREGATE's options 2, 3, 6 and 7 skip error values inside its lists (it sees them: the spec
accepts errors), the other options return the first one, as Excel does. Lists are walked once:
cost linear in their items. No polars or SQL form (see the refusal reasons).
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from typing import Any, Callable

from ..types import ANY, NUMBER, list_of, many, optional
from ..values import NA, NUM, VALUE, ErrorValue, XLError
from . import _listnum as ln
from . import _numeric as nm
from . import lists, statistics
from ._numeric import Number
from .spec import Cost, Refuse, builtin, p, sig

_N = NUMBER
_NUMS = many(NUMBER)
_NUMLIST = list_of(optional(NUMBER))
_COUNTING = Refuse("exact big-integer counting (factorials of a data-dependent size) has no "
                   "float64 or SQL form that keeps the scalar engine's exact digits")
_LISTS = Refuse("its arguments are lists walked item by item (with Excel's skip rules and, for "
                "AGGREGATE, error values); a column expression receives no such list")
_PRECISE = Refuse("kept with the scalar engine's exact decimal multiples; the math family's "
                  "CEILING.MATH/FLOOR.MATH forms are the columnar route for the same rounding")
_LOG10_LIMIT = 308


def _count(x: Number, what: str) -> int:
    n = nm.trunc_int(x)
    if n < 0:
        raise XLError(NUM, f"{what} must be 0 or more")
    return n


def _log10_factorial(n: int) -> float:
    return math.lgamma(n + 1) / math.log(10)


def _guard(log10: float) -> None:
    if log10 >= _LOG10_LIMIT:
        raise XLError(NUM, "the result is 1e308 or more")


@builtin(
    "MULTINOMIAL",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The multinomial coefficient (n1 + n2 + ...)! / (n1! n2! ...); #NUM! for a negative "
        "number.",
    examples=["MULTINOMIAL(2, 3, 4) -> 1260", "MULTINOMIAL([1, 1]) -> 2", "MULTINOMIAL(5) -> 1",
              "MULTINOMIAL(-1, 2) -> #NUM!"],
    cost=Cost.linear(200, 200), errors=("#NUM!",), polars=_COUNTING, sql=_COUNTING, category="math",
)
def multinomial(*args: Any) -> Decimal:
    parts = [_count(x, "each number") for x in ln.array_integers(args)]
    total = sum(parts)
    _guard(_log10_factorial(total) - sum(_log10_factorial(k) for k in parts) - 1e-9)
    result, running = 1, 0
    for k in parts:  # product of binomials: each factor stays below the (bounded) result
        running += k
        result *= math.comb(running, k)
    return nm.finish(result)


@builtin(
    "FACTDOUBLE",
    sig(p("number", _N, doc="truncated to an integer, -1 or more"), returns=_N),
    doc="The double factorial n!! = n (n - 2) (n - 4) ...; 1 for 0 and -1, #NUM! below -1.",
    examples=["FACTDOUBLE(6) -> 48", "FACTDOUBLE(7) -> 105", "FACTDOUBLE(-1) -> 1",
              "FACTDOUBLE(-2) -> #NUM!", "FACTDOUBLE(1000) -> #NUM!"],
    cost=Cost.const(1000), errors=("#NUM!",), polars=_COUNTING, sql=_COUNTING, category="math",
)
def factdouble(number: Number) -> Decimal:
    n = nm.trunc_int(number)
    if n < -1:
        raise XLError(NUM, "FACTDOUBLE needs a number of -1 or more")
    if n > 400:  # 301!! is already beyond 1e308
        raise XLError(NUM, "the result is 1e308 or more")
    result = 1
    for k in range(n, 1, -2):
        result *= k
    return nm.finish(result)


def _binomial_like(n: int, k: int, permutations: bool) -> Decimal:
    log10 = _log10_factorial(n) - _log10_factorial(n - k)
    if not permutations:
        log10 -= _log10_factorial(k)
    _guard(log10 - 1e-9)
    return nm.finish(math.perm(n, k) if permutations else math.comb(n, k))


@builtin(
    "COMBINA",
    sig(p("number", _N), p("number_chosen", _N), returns=_N),
    doc="The number of combinations with repetitions: COMBIN(n + k - 1, k); #NUM! for "
        "negative arguments.",
    examples=["COMBINA(4, 3) -> 20", "COMBINA(10, 3) -> 220", "COMBINA(0, 0) -> 1",
              "COMBINA(-1, 2) -> #NUM!", "COMBINA(0, 5) -> #NUM!"],
    cost=Cost.const(2000), errors=("#NUM!",), polars=_COUNTING, sql=_COUNTING, category="math",
)
def combina(number: Number, number_chosen: Number) -> Decimal:
    n, k = _count(number, "number"), _count(number_chosen, "number_chosen")
    if n == 0 and k == 0:
        return nm.finish(1)
    if n == 0:  # Excel: COMBINA(0, 5) is #NUM! (no item to repeat), COMBINA(0, 0) is 1
        raise XLError(NUM, "COMBINA needs at least one item to choose from")
    return _binomial_like(n + k - 1, k, False)


@builtin(
    "PERMUT",
    sig(p("number", _N), p("number_chosen", _N), returns=_N),
    doc="The number of ordered arrangements of k items out of n: n! / (n - k)!; #NUM! unless "
        "n >= k >= 0.",
    examples=["PERMUT(100, 3) -> 970200", "PERMUT(3, 2) -> 6", "PERMUT(2, 3) -> #NUM!",
              "PERMUT(1E9, 1E6) -> #NUM!"],
    cost=Cost.const(2000), errors=("#NUM!",), polars=_COUNTING, sql=_COUNTING, category="math",
)
def permut(number: Number, number_chosen: Number) -> Decimal:
    n, k = _count(number, "number"), _count(number_chosen, "number_chosen")
    if k > n:
        raise XLError(NUM, "number_chosen cannot exceed number")
    return _binomial_like(n, k, True)


@builtin(
    "PERMUTATIONA",
    sig(p("number", _N), p("number_chosen", _N), returns=_N),
    doc="The number of ordered arrangements of k items out of n with repetitions: n^k.",
    examples=["PERMUTATIONA(3, 2) -> 9", "PERMUTATIONA(2, 2) -> 4", "PERMUTATIONA(0, 0) -> 1",
              "PERMUTATIONA(-1, 2) -> #NUM!"],
    cost=Cost.const(50), errors=("#NUM!",), polars=_COUNTING, sql=_COUNTING, category="math",
)
def permutationa(number: Number, number_chosen: Number) -> Decimal:
    n, k = _count(number, "number"), _count(number_chosen, "number_chosen")
    if k == 0:
        return nm.finish(1)
    return nm.power(n, k)


# ------------------------------------------------------------------------- series and pairs


@builtin(
    "SERIESSUM",
    sig(p("x", _N), p("n", _N, doc="the first power"), p("m", _N, doc="the step of the powers"),
        p("coefficients", _NUMLIST), returns=_N),
    doc="The power series a1 x^n + a2 x^(n+m) + a3 x^(n+2m) + ... (blank coefficients "
        "skipped).",
    examples=["SERIESSUM(2, 0, 1, [1, 1, 1]) -> 7", "SERIESSUM(10, 1, 2, [1, 2]) -> 2010",
              "ROUND(SERIESSUM(PI()/4, 0, 2, [1, -1/2, 1/24, -1/720]), 9) -> 0.707103215",
              "SERIESSUM(0, -1, 1, [1]) -> #DIV/0!"],
    cost=Cost.linear(1000, 10), errors=("#NUM!", "#DIV/0!"), polars=_LISTS, sql=_LISTS,
    category="math",
)
def seriessum(x: Number, n: Number, m: Number, coefficients: tuple[Any, ...]) -> Decimal:
    total = Decimal(0)
    for i, a in enumerate(coefficients):
        if a is None:
            continue
        with decimal.localcontext(nm.WIDE):
            power = nm.dec(n) + i * nm.dec(m)
        total += a * nm.power(x, power)
    return nm.finish(total)


def _pairs(first: tuple[Any, ...], second: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    if len(first) != len(second):
        raise XLError(NA, f"the lists have different lengths ({len(first)} and {len(second)})")
    return [(a, b) for a, b in zip(first, second)
            if type(a) in (int, Decimal) and type(b) in (int, Decimal)]


def _paired(name: str, term: Callable[[Any, Any], Any], doc: str, examples: list[str]) -> Any:
    def impl(array_x: tuple[Any, ...], array_y: tuple[Any, ...]) -> Decimal | int:
        with decimal.localcontext(ln.WIDE):
            total = sum((term(a, b) for a, b in _pairs(array_x, array_y)), Decimal(0))
        return ln.tidy(ln.finish(total))

    impl.__name__ = name.lower()
    impl.__module__ = __name__
    return builtin(name, sig(p("array_x", _NUMLIST), p("array_y", _NUMLIST), returns=_N),
                   doc=doc, examples=examples, cost=Cost.linear(6, 4), errors=("#N/A", "#NUM!"),
                   polars=_LISTS, sql=_LISTS, category="math")(impl)


SUMX2MY2 = _paired("SUMX2MY2", lambda a, b: a * a - b * b,
                   "The sum of x^2 - y^2 over pairs of numbers; #N/A for lists of different "
                   "lengths.",
                   ["SUMX2MY2([2, 3, 9, 1, 8, 7, 5], [6, 5, 11, 7, 5, 4, 4]) -> -55",
                    "SUMX2MY2([1, BLANK()], [1, 5]) -> 0", "SUMX2MY2([1], [1, 2]) -> #N/A"])
SUMX2PY2 = _paired("SUMX2PY2", lambda a, b: a * a + b * b,
                   "The sum of x^2 + y^2 over pairs of numbers; #N/A for lists of different "
                   "lengths.",
                   ["SUMX2PY2([2, 3, 9, 1, 8, 7, 5], [6, 5, 11, 7, 5, 4, 4]) -> 521",
                    "SUMX2PY2([], []) -> 0", "SUMX2PY2([1], []) -> #N/A"])
SUMXMY2 = _paired("SUMXMY2", lambda a, b: (a - b) * (a - b),
                  "The sum of (x - y)^2 over pairs of numbers; #N/A for lists of different "
                  "lengths.",
                  ["SUMXMY2([2, 3, 9, 1, 8, 7, 5], [6, 5, 11, 7, 5, 4, 4]) -> 79",
                   "SUMXMY2([1.5], [1]) -> 0.25", "SUMXMY2([1, 2], [1]) -> #N/A"])


# -------------------------------------------------------------------------- .PRECISE roundings


def _precise(number: Number, significance: Number, mode: str) -> Decimal:
    if not significance:
        return nm.finish(0)
    return nm.round_multiple(number, abs(significance), mode)  # type: ignore[arg-type]


_SIGNIFICANCE = p("significance", _N, 1, "the multiple (its sign is ignored; 0 gives 0)")


@builtin("CEILING.PRECISE", sig(p("number", _N), _SIGNIFICANCE, returns=_N),
         doc="A number rounded up (toward +infinity) to a multiple of |significance|.",
         examples=["CEILING.PRECISE(4.3) -> 5", "CEILING.PRECISE(-4.3) -> -4",
                   "CEILING.PRECISE(4.3, -2) -> 6", "CEILING.PRECISE(4.3, 0) -> 0"],
         cost=Cost.const(30), errors=("#NUM!",), polars=_PRECISE, sql=_PRECISE, category="math",
         aliases=("ISO.CEILING",))
def ceiling_precise(number: Number, significance: Number = 1) -> Decimal:
    return _precise(number, significance, "ceil")


@builtin("FLOOR.PRECISE", sig(p("number", _N), _SIGNIFICANCE, returns=_N),
         doc="A number rounded down (toward -infinity) to a multiple of |significance|.",
         examples=["FLOOR.PRECISE(-3.2, -1) -> -4", "FLOOR.PRECISE(3.2) -> 3",
                   "FLOOR.PRECISE(-3.2) -> -4", "FLOOR.PRECISE(3.2, 0) -> 0"],
         cost=Cost.const(30), errors=("#NUM!",), polars=_PRECISE, sql=_PRECISE, category="math")
def floor_precise(number: Number, significance: Number = 1) -> Decimal:
    return _precise(number, significance, "floor")


# --------------------------------------------------------------------- SUBTOTAL and AGGREGATE


def percentile_exc(xs: list[Decimal | int], k: Any) -> Decimal | int:
    """Excel PERCENTILE.EXC: rank k*(n+1), #NUM! outside 1..n."""
    if not xs:
        raise XLError(NUM, "no numbers")
    n = len(xs)
    with decimal.localcontext(ln.WIDE):
        position = Decimal(k) * (n + 1)
    if k <= 0 or k >= 1 or position < 1 or position > n:
        raise XLError(NUM, "k is outside the range PERCENTILE.EXC can interpolate")
    xs = sorted(xs)
    lower = int(position)
    frac = position - lower
    if not frac or lower >= n:
        return xs[lower - 1]
    with decimal.localcontext(ln.WIDE):
        return ln.tidy(ln.finish(xs[lower - 1] + frac * (xs[lower] - xs[lower - 1])))


def _impl(spec: Any) -> Callable[..., Any]:
    return spec.impl  # type: ignore[no-any-return]


_SUBTOTAL: dict[int, Callable[..., Any]] = {
    1: _impl(lists.average), 2: _impl(lists.count), 3: _impl(lists.counta),
    4: _impl(lists.max_), 5: _impl(lists.min_), 6: _impl(lists.product),
    7: _impl(lists.STDEV_S), 8: _impl(lists.STDEV_P), 9: _impl(lists.sum_),
    10: _impl(lists.VAR_S), 11: _impl(lists.VAR_P),
}


@builtin(
    "SUBTOTAL",
    sig(p("function_num", _N, doc="1 AVERAGE, 2 COUNT, 3 COUNTA, 4 MAX, 5 MIN, 6 PRODUCT, "
                                  "7 STDEV.S, 8 STDEV.P, 9 SUM, 10 VAR.S, 11 VAR.P (or 101-111)"),
        p("ref", many(ANY)), returns=_N, repeat=1),
    doc="An aggregate of lists chosen by number (1-11, or 101-111: there are no hidden rows "
        "here, so both ranges mean the same); #VALUE! for another number.",
    examples=["SUBTOTAL(9, [120, 10, 150, 23]) -> 303", "SUBTOTAL(1, [120, 10, 150, 23]) -> 75.75",
              'SUBTOTAL(3, ["a", "b", BLANK()]) -> 2', "SUBTOTAL(104, [1, 5], 3) -> 5",
              "SUBTOTAL(12, [1]) -> #VALUE!"],
    cost=Cost.linear(10, 4), errors=("#VALUE!", "#DIV/0!", "#NUM!"), polars=_LISTS, sql=_LISTS,
    category="lists",
)
def subtotal(function_num: Number, *refs: Any) -> Any:
    code = nm.trunc_int(function_num)
    f = _SUBTOTAL.get(code % 100 if 101 <= code <= 111 else code)
    if f is None:
        raise XLError(VALUE, "function_num must be 1-11 or 101-111")
    return f(*refs)


def _stat_impl(name: str) -> Callable[..., Any]:
    return _impl(getattr(statistics, name))


def _aggregate_k(code: int, values: list[Any], k: Any) -> Any:
    xs = ln.list_numbers(values)
    if code == 14:
        return _impl(lists.large)(tuple(xs), k)
    if code == 15:
        return _impl(lists.small)(tuple(xs), k)
    if code == 16:
        return ln.percentile_inc(xs, k) if xs else _raise_num()
    if code == 17:
        return _stat_impl("quartile_inc")(tuple(xs), k)
    if code == 18:
        return percentile_exc(xs, k)
    q = nm.trunc_int(k)
    if q not in (1, 2, 3):
        raise XLError(NUM, "quart must be 1, 2 or 3 for QUARTILE.EXC")
    return percentile_exc(xs, Decimal(q) / 4)


def _raise_num() -> Any:
    raise XLError(NUM, "no numbers")


_AGGREGATE: dict[int, Callable[..., Any]] = {
    **{k: v for k, v in _SUBTOTAL.items() if k not in (6,)}, 6: _impl(lists.product),
    12: _impl(lists.median), 13: _stat_impl("mode_sngl"),
}


def _flat(values: Any, skip_errors: bool) -> list[Any]:
    out: list[Any] = []
    stack = [values]
    while stack:
        for v in stack.pop():
            if type(v) is tuple:
                stack.append(v)
            elif type(v) is ErrorValue:
                if not skip_errors:
                    raise _Found(v)
            else:
                out.append(v)
    return out


class _Found(Exception):
    def __init__(self, error: ErrorValue) -> None:
        self.error = error


@builtin(
    "AGGREGATE",
    sig(p("function_num", _N, doc="1-13 as SUBTOTAL plus 12 MEDIAN, 13 MODE.SNGL; with k: "
                                  "14 LARGE, 15 SMALL, 16 PERCENTILE.INC, 17 QUARTILE.INC, "
                                  "18 PERCENTILE.EXC, 19 QUARTILE.EXC"),
        p("options", _N, doc="2, 3, 6 or 7 skip error values; 0, 1, 4, 5 do not"),
        p("ref", many(ANY)), returns=_N, repeat=1),
    doc="An aggregate of lists chosen by number, optionally skipping error values; functions "
        "14-19 take a list and then k.",
    examples=["AGGREGATE(9, 6, [1, 1/0, 3]) -> 4", "AGGREGATE(9, 0, [1, 1/0, 3]) -> #DIV/0!",
              "AGGREGATE(14, 6, [4, NA(), 9, 7], 2) -> 7", "AGGREGATE(12, 6, [5, 1, 3]) -> 3",
              "AGGREGATE(4, 2, [1, SQRT(-1), 8]) -> 8", "AGGREGATE(20, 6, [1]) -> #VALUE!"],
    cost=Cost.linear(25, 4), errors=("#VALUE!", "#DIV/0!", "#NUM!", "#N/A"),
    polars=_LISTS, sql=_LISTS, accepts_errors=True, category="lists",
)
def aggregate(function_num: Any, options: Any, *refs: Any) -> Any:
    for head in (function_num, options):
        if type(head) is ErrorValue:
            return head
        if type(head) not in (int, Decimal):
            raise XLError(VALUE, "function_num and options must be numbers")
    code, option = nm.trunc_int(function_num), nm.trunc_int(options)
    if not 0 <= option <= 7:
        raise XLError(VALUE, "options must be between 0 and 7")
    skip = option in (2, 3, 6, 7)
    try:
        if 14 <= code <= 19:
            if len(refs) != 2:
                raise XLError(VALUE, "functions 14-19 take one list and k")
            k = refs[1]
            if type(k) is ErrorValue:
                return k
            if type(k) not in (int, Decimal):
                raise XLError(VALUE, "k must be a number")
            values = _flat((refs[0],), skip)
            return _aggregate_k(code, values, k)
        f = _AGGREGATE.get(code)
        if f is None:
            raise XLError(VALUE, "function_num must be between 1 and 19")
        cleaned = []
        for ref in refs:
            if type(ref) is tuple:
                cleaned.append(tuple(_flat((ref,), skip)))
            elif type(ref) is ErrorValue:
                if not skip:
                    return ref
            else:
                cleaned.append(ref)
        return f(*cleaned)
    except _Found as found:
        return found.error


__all__ = ["percentile_exc"]
