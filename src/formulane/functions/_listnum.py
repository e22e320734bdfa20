"""Exact numeric helpers for the aggregate and statistics functions.

Contract: inputs are engine Numbers (`int` or `Decimal`); results are engine Numbers rounded
once to the engine's 34-digit context. Sums and moments are accumulated in a wide context (80
digits, unbounded exponent) and rounded at the end, so ``SUM(1e20, 1, -1e20)`` is 1 and the
variance of ``[1, 2, 2]`` is correctly rounded. A result beyond the engine's range raises
``XLError(#NUM!)`` here rather than leaking `decimal.Overflow`.
"""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Any, Iterable, Iterator, Sequence

from ..values import CONTEXT, DIV0, NUM, VALUE, ErrorValue, XLError

#: Intermediate precision: far beyond the 34 digits of the result, cheap for short numbers.
WIDE = decimal.Context(
    prec=80,
    rounding=decimal.ROUND_HALF_EVEN,
    Emax=999_999,
    Emin=-999_999,
    traps=[decimal.InvalidOperation, decimal.DivisionByZero, decimal.Overflow],
)
_ONE = Decimal(1)
_INT_LIMIT = 10**34


def finish(x: Decimal | int) -> Decimal | int:
    """Round a wide intermediate to the engine context; #NUM! past 1e308; no negative zero."""
    if type(x) is int:
        if -_INT_LIMIT < x < _INT_LIMIT:
            return x
        x = Decimal(x)
    try:
        r = CONTEXT.plus(x)
    except (decimal.Overflow, decimal.InvalidOperation):
        raise XLError(NUM, "the result is too large") from None
    if r.is_zero() and r.is_signed():
        r = r.copy_abs()
    return r


def tidy(x: Decimal | int) -> Decimal | int:
    """Drop the trailing zeros an inexact step left behind (``4.000...0`` -> ``4``,
    ``1.000...0E+300`` -> ``1E+300``); integers below 10^34 print without an exponent."""
    if type(x) is int:
        return x
    n = x.normalize(CONTEXT)  # type: ignore[union-attr]
    if n.as_tuple().exponent > 0 and n.adjusted() < 34:  # type: ignore[operator]
        n = n.quantize(_ONE, context=CONTEXT)
    return n


_NUM_TYPES = frozenset((int, Decimal))


def numbers(args: Iterable[Any]) -> list[Decimal | int]:
    """Flatten ``many(NUMBER)`` arguments: the numbers of every list (blanks, text and logicals
    inside lists are skipped, as Excel skips them in ranges); a logical given directly counts
    as 1 or 0 (Excel); nested lists are walked without recursion."""
    out: list[Decimal | int] = []
    for arg in args:
        ta = type(arg)
        if ta is int or ta is Decimal:
            out.append(arg)
        elif ta is tuple:
            kinds = set(map(type, arg))
            if kinds <= _NUM_TYPES:
                out.extend(arg)  # the common case: a plain list of numbers
            elif tuple not in kinds:
                out.extend([x for x in arg if type(x) in _NUM_TYPES])
            else:
                stack = [arg]
                while stack:
                    for x in stack.pop():
                        tx = type(x)
                        if tx is int or tx is Decimal:
                            out.append(x)
                        elif tx is tuple:
                            stack.append(x)
        elif ta is bool:
            out.append(int(arg))
        elif arg is None:
            continue
        else:
            raise XLError(VALUE, "expected numbers")
    return out


def list_numbers(values: Sequence[Any]) -> list[Decimal | int]:
    """The numbers of one list argument, blanks skipped."""
    if set(map(type, values)) <= _NUM_TYPES:
        return list(values)
    return [x for x in values if type(x) in _NUM_TYPES]


def number_cells(value: Any) -> tuple[Any, ...] | None:
    """The excel profile's ``array_number_cells`` coercion: an array read as a range of
    numbers where a function takes one (SMALL, LARGE, SUMPRODUCT, SUMIFS' sum range...). As
    Excel reads a range, a 2-D array's rows are read in order and every cell keeps its place:
    numbers stay, error values stay (the function decides: most answer the first one), texts
    and logicals become blanks (Microsoft's pages: "text and logical values in the range are
    ignored"; ``SMALL({1;"-1"}, 1)`` is 1, ``SUMPRODUCT`` counts them as 0)."""
    if value is None:
        return None
    out: list[Any] = []
    stack = [iter(value)]
    while stack:
        for x in stack[-1]:
            tx = type(x)
            if tx is tuple:
                stack.append(iter(x))
                break
            out.append(x if tx is int or tx is Decimal or tx is ErrorValue else None)
        else:
            stack.pop()
    return tuple(out)


def array_integers(args: Iterable[Any]) -> list[Decimal | int]:
    """The numbers of GCD/LCM/MULTINOMIAL arguments, arrays read item by item as Excel does:
    blanks skipped, rows in order, a numeric or date text read as its number (serial), any
    other text or a logical inside an array is #VALUE! (Microsoft's GCD page: "If any
    argument is nonnumeric, GCD returns the #VALUE! error value")."""
    from ._criteria import parse_number, serial_of_text

    out: list[Decimal | int] = []
    stack: list[Iterator[Any]] = [iter(args)]
    while stack:
        for v in stack[-1]:
            tv = type(v)
            if tv is tuple:
                stack.append(iter(v))
                break
            if tv is int or tv is Decimal:
                out.append(v)
            elif tv is str:
                n: Decimal | int | None = parse_number(v)
                if n is None:
                    n = serial_of_text(v)
                if n is None:
                    raise XLError(VALUE, f"cannot read {v!r} as a number")
                out.append(n)
            elif v is not None:
                raise XLError(VALUE, "a logical value in an array is not a number here")
        else:
            stack.pop()
    return out


def wide_sum(xs: Iterable[Decimal | int]) -> Decimal | int:
    """The sum in the wide context (exact for all but extreme exponent spreads)."""
    try:
        with decimal.localcontext(WIDE):
            return sum(xs)
    except decimal.Overflow:  # pragma: no cover - needs exponents near 1e999999
        raise XLError(NUM, "the sum is too large") from None


def total(xs: Iterable[Decimal | int]) -> Decimal | int:
    """The exact-as-possible sum, rounded once."""
    return finish(wide_sum(xs))


def mean(xs: Sequence[Decimal | int]) -> Decimal | int:
    if not xs:
        raise XLError(DIV0, "no numbers to average")
    with decimal.localcontext(WIDE):
        s = wide_sum(xs)
        return finish(Decimal(s) / len(xs))


def sum_squares(xs: Sequence[Decimal | int]) -> Decimal:
    """Sum of squared deviations from the mean (two-pass, in the wide context)."""
    with decimal.localcontext(WIDE):
        m = Decimal(wide_sum(xs)) / len(xs)
        return sum(((x - m) ** 2 for x in xs), Decimal(0))


def variance(xs: Sequence[Decimal | int], sample: bool) -> Decimal:
    """Raw (wide) variance; #DIV/0! with fewer than 2 (sample) or 1 (population) values."""
    n = len(xs)
    if n < (2 if sample else 1):
        raise XLError(DIV0, f"needs at least {2 if sample else 1} numbers")
    with decimal.localcontext(WIDE):
        return sum_squares(xs) / (n - 1 if sample else n)


def sqrt(x: Decimal) -> Decimal:
    with decimal.localcontext(WIDE):
        return Decimal(x).sqrt()


def median(xs: list[Decimal | int]) -> Decimal | int:
    if not xs:
        raise XLError(NUM, "no numbers")
    xs = sorted(xs)
    n = len(xs)
    mid = n // 2
    if n % 2:
        return xs[mid]
    with decimal.localcontext(WIDE):
        return finish((Decimal(xs[mid - 1]) + xs[mid]) / 2)


def percentile_inc(xs: list[Decimal | int], k: Decimal | int) -> Decimal | int:
    """Excel PERCENTILE.INC: linear interpolation at rank k*(n-1) over the sorted values."""
    if not xs:
        raise XLError(NUM, "no numbers")
    if k < 0 or k > 1:
        raise XLError(NUM, "k must be between 0 and 1")
    xs = sorted(xs)
    with decimal.localcontext(WIDE):
        position = Decimal(k) * (len(xs) - 1)
        lower = int(position)
        frac = position - lower
        if frac == 0 or lower + 1 >= len(xs):
            return xs[lower]
        return finish(xs[lower] + frac * (xs[lower + 1] - xs[lower]))


__all__ = [
    "WIDE", "array_integers", "finish", "list_numbers", "mean", "median", "number_cells",
    "numbers",
    "percentile_inc", "sqrt",
    "sum_squares", "tidy", "total", "variance", "wide_sum",
]
