"""List functions: aggregates, conditional aggregates (COUNTIF family), and (re-exported from
`_arrays`) the higher-order and shaping functions MAP, FILTER, SORT, SEQUENCE...

Contract: aggregates take ``many(NUMBER)`` (numbers and lists of numbers, repeated) and skip
blanks, as Excel skips empty cells; AVERAGE of nothing is ``#DIV/0!``, MIN/MAX of nothing is 0
(Excel), PRODUCT of nothing is 0 (Excel), STDEV.S/VAR.S of fewer than two numbers ``#DIV/0!``.
Sums and moments are exact decimal arithmetic rounded once (`_listnum`). Error values inside
list arguments never arrive here (the interpreter propagates them first), except in the
conditional family (COUNTIF ... MINIFS), which in the excel profile sees them as Excel does:
an error in a criteria range is a value that matches only an error criterion, an error in the
summed range is the answer only when its position matches (the checker lets them through).
A lambda's error value propagates. Criteria (``">10"``, ``"<>x"``, ``"a*"``) follow Excel and
are parsed by `_criteria`; text compares ignoring case. A 2-D array (a list of rows) given as
a range is read row by row, as Excel reads ``{1,2;3,4}``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import heapq
import math
from decimal import Decimal
from typing import Any, Callable, Sequence

from ..types import (
    ANY, BOOLEAN, DATE, DATETIME, DURATION, NUMBER, TEXT, T, fn, list_of, many, optional,
)
from ..values import CALC, DIV0, NUM, VALUE, ErrorValue, XLError
from . import _listnum as ln
from ._arrays import (  # noqa: F401 - re-exported: the registry collects specs from this module
    columns_, drop, filter_, flatten, map_, reduce_, rows_, sequence, sort, sortby,
    take, transpose, unique,
)
from ._shaping import (  # noqa: F401 - re-exported: Excel's array shaping functions
    choosecols, chooserows, hstack, tocol, torow, vstack, wrapcols, wraprows,
)
from ._criteria import criterion, is_number, parse_number, serial, truthy
from .spec import Cost, FunctionSpec, Refuse, builtin, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "lists"

_N = NUMBER
_NUMS = many(NUMBER)
_NUMLIST = list_of(optional(NUMBER))
_DURATION_TOTAL = Refuse("Duration totals: the columnar engines hold durations as 64-bit "
                         "microseconds and overflow where the scalar engine answers #NUM!")
_DURATION_ORDER = Refuse("Duration ordering: SQL intervals are not compared as plain lengths "
                         "of time in every engine")


# ------------------------------------------------------------------------------ basic totals


def _sum_durations(*args: Any) -> dt.timedelta:
    total = dt.timedelta(0)
    try:
        for v in _flat(args):
            if isinstance(v, dt.timedelta):
                total += v
    except OverflowError:
        raise XLError(NUM, "the total duration is out of range") from None
    return total


def _flat(args: Sequence[Any]) -> list[Any]:
    """Every non-blank scalar of the arguments, lists flattened (iteratively)."""
    out: list[Any] = []
    stack = [tuple(args)]
    while stack:
        for x in stack.pop():
            if type(x) is tuple:
                stack.append(x)
            elif x is not None:
                out.append(x)
    return out


@builtin(
    "SUM",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    sig(p("duration", many(DURATION)), returns=DURATION, repeat=1, impl=_sum_durations,
        polars=_DURATION_TOTAL, sql=_DURATION_TOTAL),
    doc="The total of numbers and lists of numbers (blanks skipped); also totals durations.",
    examples=['SUM(1, 2, 3) -> 6', 'SUM([1, BLANK(), 3], 4) -> 8', 'SUM(0.1, 0.2) -> 0.3',
              'SUM([1E20, 1, -1E20]) -> 1', 'SUM([]) -> 0', 'SUM(9E307, 9E307) -> #NUM!'],
    cost=Cost.linear(2, 1),
    errors=("#NUM!",),
    sql_widens=True,
    total_on_floats=True,  # over numbers one by one: float arithmetic (forms.lists.across)
)
def sum_(*args: Any) -> Decimal | int:
    return ln.total(ln.numbers(args))


@builtin(
    "PRODUCT",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The product of numbers and lists of numbers (blanks skipped; 0 when there are none, "
        "as in Excel).",
    examples=['PRODUCT(2, 3, 4) -> 24', 'PRODUCT([1.5, BLANK(), 2]) -> 3', 'PRODUCT([]) -> 0',
              'PRODUCT(1E200, 1E200) -> #NUM!'],
    cost=Cost.linear(2, 1),
    errors=("#NUM!",),
    sql_widens=True,
    total_on_floats=True,  # over numbers one by one: float arithmetic (forms.lists.across)
)
def product(*args: Any) -> Decimal | int:
    xs = ln.numbers(args)
    if not xs:
        return 0
    try:
        with decimal.localcontext(ln.WIDE):
            result: Decimal | int = 1
            for x in xs:
                result *= x
                if type(result) is int and not -10**400 < result < 10**400:
                    result = Decimal(result)  # keep huge integer products cheap
    except decimal.Overflow:
        raise XLError(NUM, "the product is too large") from None
    return ln.finish(result)


@builtin(
    "AVERAGE",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The arithmetic mean of numbers and lists (blanks skipped); #DIV/0! when there are none.",
    examples=['AVERAGE(1, 2, 3, 4) -> 2.5', 'AVERAGE([1, BLANK(), 3]) -> 2',
              'AVERAGE([]) -> #DIV/0!', 'AVERAGE(1, 2) -> 1.5'],
    cost=Cost.linear(2, 2),
    errors=("#DIV/0!",),
    sql_widens=True,
    total_on_floats=True,  # over numbers one by one: float arithmetic (forms.lists.across)
)
def average(*args: Any) -> Decimal | int:
    return ln.mean(ln.numbers(args))


def _extreme(name: str, pick: Callable[..., Any], *, doc: str,
             examples: list[str]) -> FunctionSpec:
    """MIN and MAX: of numbers (0 when there are none, as in Excel), or of dates, datetimes or
    durations (#CALC! when there are none)."""

    def of_numbers(*args: Any) -> Decimal | int:
        xs = ln.numbers(args)
        return pick(xs) if xs else 0

    def of_others(*args: Any) -> Any:
        values = _flat(args)
        if not values:
            raise XLError(CALC, f"{name} of no values")
        return pick(values)

    return builtin(
        name,
        sig(p("number", _NUMS), returns=_N, repeat=1),
        sig(p("date", many(DATE)), returns=DATE, repeat=1, impl=of_others),
        sig(p("datetime", many(DATETIME)), returns=DATETIME, repeat=1, impl=of_others),
        sig(p("duration", many(DURATION)), returns=DURATION, repeat=1, impl=of_others,
            sql=_DURATION_ORDER),
        doc=doc, examples=examples, cost=Cost.linear(2, 1), errors=("#CALC!",),
        total_on_floats=True,  # over numbers one by one: a float comparison (lists.across)
    )(of_numbers)


min_ = _extreme(
    "MIN", min,
    doc="The smallest number (blanks skipped; 0 when there are none, as in Excel); also the "
        "earliest date or datetime, or the shortest duration (#CALC! when there are none).",
    examples=['MIN(3, [1, 2]) -> 1', 'MIN([5, BLANK(), -2]) -> -2', 'MIN([]) -> 0',
              'MIN([DATE(2024, 5, 1), DATE(2023, 1, 9)]) -> DATE(2023, 1, 9)'],
)
max_ = _extreme(
    "MAX", max,
    doc="The largest number (blanks skipped; 0 when there are none, as in Excel); also the "
        "latest date or datetime, or the longest duration (#CALC! when there are none).",
    examples=['MAX(3, [1, 7]) -> 7', 'MAX([-5, BLANK(), -2]) -> -2', 'MAX([]) -> 0',
              'MAX([DATE(2024, 5, 1), DATE(2023, 1, 9)]) -> DATE(2024, 5, 1)'],
)


# ---------------------------------------------------------------------------------- counting


_PLAIN_COUNT = frozenset((int, Decimal, type(None)))


def _is_countable(v: Any, direct: bool) -> bool:
    """COUNT's rule: numbers (and dates, datetimes, durations, which Excel stores as numbers);
    given directly, also logicals and text that reads as a number (Excel)."""
    if is_number(v) or serial(v) is not None:
        return True
    if direct:
        if type(v) is bool:
            return True
        if type(v) is str:
            return parse_number(v) is not None
    return False


@builtin(
    "COUNT",
    sig(p("value", many(ANY)), returns=_N, repeat=1),
    doc="How many numbers (and dates, datetimes, durations) the arguments and lists hold; "
        "text and logicals inside lists are not counted.",
    examples=['COUNT(1, [2, 3], "a") -> 3', 'COUNT([1, BLANK(), 3]) -> 2', 'COUNT(["a", "b"]) -> 0',
              'COUNT("12", TRUE) -> 2'],
    cost=Cost.linear(1, 1),
    can_error=False,
)
def count(*args: Any) -> int:
    n = 0
    for arg in args:
        if type(arg) is tuple:
            kinds = set(map(type, arg))
            if kinds <= _PLAIN_COUNT:  # numbers and blanks: the common case
                n += len(arg) - arg.count(None) if type(None) in kinds else len(arg)
            else:
                n += sum(1 for v in _flat((arg,)) if _is_countable(v, False))
        elif arg is not None and _is_countable(arg, True):
            n += 1
    return n


@builtin(
    "COUNTA",
    sig(p("value", many(ANY)), returns=_N, repeat=1),
    doc="How many values are not blank (empty text counts, as in Excel).",
    examples=['COUNTA(1, "a", [TRUE, BLANK()]) -> 3', 'COUNTA(["", BLANK()]) -> 1',
              'COUNTA([]) -> 0'],
    cost=Cost.linear(1, 1),
    can_error=False,
)
def counta(*args: Any) -> int:
    return len(_flat(args))


@builtin(
    "COUNTBLANK",
    sig(p("list", list_of(optional(T))), returns=_N),
    doc="How many items of a list are blank or empty text (Excel counts \"\" as blank here).",
    examples=['COUNTBLANK([1, BLANK(), 3]) -> 1', 'COUNTBLANK(["a", "", BLANK()]) -> 2',
              'COUNTBLANK([]) -> 0'],
    cost=Cost.linear(3, 1),
    can_error=False,
)
def countblank(values: tuple[Any, ...]) -> int:
    return sum(1 for v in values if v is None or v == "")


# ------------------------------------------------------------------- conditional aggregates


def _cells(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """A range's cells in Excel's order: a 2-D array (a list of rows) row by row."""
    if not any(type(x) is tuple for x in values):
        return values
    return tuple(_flat_cells(values))


def _flat_cells(values: tuple[Any, ...]) -> list[Any]:
    out: list[Any] = []
    stack = [iter(values)]
    while stack:
        for x in stack[-1]:
            if type(x) is tuple:
                stack.append(iter(x))
                break
            out.append(x)
        else:
            stack.pop()
    return out


def _predicate_matches(values: tuple[Any, ...],
                       pred: Callable[[Any], Any]) -> list[int] | ErrorValue:
    """Indices of the items the lambda accepts; an error item, or the lambda's first error
    value, propagates."""
    hits = []
    for i, v in enumerate(values):
        if type(v) is ErrorValue:
            return v
        r = pred(v)
        if type(r) is ErrorValue:
            return r
        if truthy(r):
            hits.append(i)
    return hits


def _criteria_matches(values: tuple[Any, ...], crit: Any) -> list[int]:
    return criterion(crit).select(values)


def _whole_error(args: Sequence[Any]) -> ErrorValue | None:
    """The first range that is itself an error value (it failed as a whole): the answer, as
    for any function. (An error value given as the criterion is a criterion: it matches the
    cells holding that error.)"""
    for a in args:
        if type(a) is ErrorValue:
            return a
    return None


def _is_lambda(crit: Any) -> bool:
    return callable(crit) and not isinstance(crit, (str, tuple))


def _matches(values: tuple[Any, ...], crit: Any) -> list[int] | ErrorValue:
    if _is_lambda(crit):
        return _predicate_matches(values, crit)
    return _criteria_matches(_cells(values), crit)


def _targets(values: tuple[Any, ...], hits: list[int], other: tuple[Any, ...] | None,
             cells: bool) -> list[Decimal | int] | ErrorValue:
    """The numbers at the matching positions of ``other`` (or of ``values`` itself), both
    read cell by cell when ``cells`` (criteria text, not a lambda); the first error value at a
    matching position is the answer (Excel: SUMIF's errors count only where the criteria
    match)."""
    if cells:
        values = _cells(values)
        other = None if other is None else _cells(other)
    source = values if other is None else other
    if len(source) != len(values):
        raise XLError(VALUE, f"the lists have different lengths ({len(values)} and "
                             f"{len(source)})")
    out = []
    for i in hits:
        x = source[i]
        tx = type(x)
        if tx is int or tx is Decimal:
            out.append(x)
        elif tx is ErrorValue:
            return x  # type: ignore[no-any-return]
    return out


_CRITERIA_DOC = ("criteria: a lambda (x => x > 10), an Excel criteria text (\">10\", \"<>x\", "
                 "\"a*\" with wildcards ? * ~, \"\" for blanks) or a value to equal")


@builtin(
    "COUNTIF",
    # Criteria text first: in the excel profile a number or date criterion is then read as
    # its text, as Excel does; the lambda form last, so a type error names the plain forms.
    sig(p("list", list_of(optional(T))), p("criteria", TEXT, doc=_CRITERIA_DOC), returns=_N),
    sig(p("list", list_of(optional(T))), p("criteria", T, doc=_CRITERIA_DOC), returns=_N),
    sig(p("list", list_of(T)), p("criteria", fn([T], BOOLEAN), doc=_CRITERIA_DOC), returns=_N),
    doc="How many items meet the criteria: a lambda, an Excel criteria text or a value.",
    examples=['COUNTIF([1, 5, 10, 15], ">=10") -> 2',
              'COUNTIF(["apple", "Avocado", "kiwi"], "a*") -> 2',
              'COUNTIF([1, 5, 10], x => x > 3) -> 2', 'COUNTIF([1, BLANK(), 3], "") -> 1',
              'COUNTIF([1, BLANK(), 3], "<>1") -> 2', 'COUNTIF([2, 2, 3], 2) -> 2'],
    cost=Cost.criteria(8, 4, per_call=True),
    errors=("#VALUE!",),
)
def countif(values: tuple[Any, ...], crit: Any) -> int | ErrorValue:
    err = _whole_error((values,))
    if err is not None:
        return err
    hits = _matches(values, crit)
    return hits if type(hits) is ErrorValue else len(hits)  # type: ignore[arg-type]


def _conditional(values: tuple[Any, ...], crit: Any,
                 other: tuple[Any, ...] | None) -> list[Decimal | int] | ErrorValue:
    err = _whole_error((values, other))
    if err is not None:
        return err
    hits = _matches(values, crit)
    if type(hits) is ErrorValue:
        return hits
    return _targets(values, hits, other, not _is_lambda(crit))  # type: ignore[arg-type]


def _sumif(values: tuple[Any, ...], crit: Any, sum_list: tuple[Any, ...] | None = None) -> Any:
    xs = _conditional(values, crit, sum_list)
    return xs if type(xs) is ErrorValue else ln.total(xs)  # type: ignore[arg-type]


def _averageif(values: tuple[Any, ...], crit: Any,
               average_list: tuple[Any, ...] | None = None) -> Any:
    xs = _conditional(values, crit, average_list)
    return xs if type(xs) is ErrorValue else ln.mean(xs)  # type: ignore[arg-type]


def _if_sigs(target: str) -> tuple[Any, ...]:
    tdoc = f"the numbers to {target}; the list itself when omitted"
    return (  # same order as COUNTIF's, for the same reasons
        sig(p("list", list_of(optional(T))), p("criteria", TEXT, doc=_CRITERIA_DOC),
            p(f"{target}_list", _NUMLIST, None, tdoc), returns=_N),
        sig(p("list", list_of(optional(T))), p("criteria", T, doc=_CRITERIA_DOC),
            p(f"{target}_list", _NUMLIST, None, tdoc), returns=_N),
        sig(p("list", list_of(T)), p("criteria", fn([T], BOOLEAN), doc=_CRITERIA_DOC),
            p(f"{target}_list", _NUMLIST, None, tdoc), returns=_N),
    )


@builtin(
    "SUMIF",
    *_if_sigs("sum"),
    doc="The total of the numbers whose items meet the criteria (of sum_list at the same "
        "positions when given; lists of different lengths are #VALUE!).",
    examples=['SUMIF([1, 5, 10], ">2") -> 15', 'SUMIF(["a", "b", "a"], "A", [1, 2, 3]) -> 4',
              'SUMIF([1, 2, 3], x => x <> 2) -> 4', 'SUMIF([1, 2], "a", [1]) -> #VALUE!',
              'SUMIF([1, 2], ">5") -> 0'],
    cost=Cost.criteria(8, 4, per_call=True),
    errors=("#VALUE!", "#NUM!"),
)
def sumif(values: tuple[Any, ...], crit: Any, sum_list: tuple[Any, ...] | None = None) -> Any:
    return _sumif(values, crit, sum_list)


@builtin(
    "AVERAGEIF",
    *_if_sigs("average"),
    doc="The mean of the numbers whose items meet the criteria (#DIV/0! when none do).",
    examples=['AVERAGEIF([1, 5, 10], ">2") -> 7.5',
              'AVERAGEIF(["a", "b", "a"], "a", [1, 2, 4]) -> 2.5',
              'AVERAGEIF([1, 2], ">5") -> #DIV/0!'],
    cost=Cost.criteria(8, 4, per_call=True),
    errors=("#VALUE!", "#DIV/0!"),
)
def averageif(values: tuple[Any, ...], crit: Any,
              average_list: tuple[Any, ...] | None = None) -> Any:
    return _averageif(values, crit, average_list)


def _multi_hits(pairs: Sequence[Any], length: int | None) -> list[int]:
    """Positions meeting every (list, criteria) pair; lists must share one length."""
    err = _whole_error(pairs[0::2])
    if err is not None:
        raise XLError(err.code, err.message)
    if len(pairs) % 2:
        raise XLError(VALUE, "criteria come in pairs of list and criteria")
    lists = [_cells(xs) if type(xs) is tuple else xs for xs in pairs[0::2]]
    for xs in lists:
        if type(xs) is not tuple:
            raise XLError(VALUE, "each criteria range must be a list")
    n = len(lists[0]) if length is None else length
    for xs in lists:
        if len(xs) != n:
            raise XLError(VALUE, f"the lists have different lengths ({n} and {len(xs)})")
    tests = [criterion(crit) for crit in pairs[1::2]]  # every criteria is checked, even late
    alive = tests[0].select(lists[0])
    for xs, test in zip(lists[1:], tests[1:]):
        if not alive:
            break
        alive = [i for i in alive if test(xs[i])]
    return alive


def _picked(numbers: tuple[Any, ...] | ErrorValue,
            pairs: Sequence[Any]) -> list[Decimal | int]:
    """The numbers of ``numbers`` at the positions meeting every pair; an error value at such
    a position is raised (only matching positions count, as in Excel)."""
    if isinstance(numbers, ErrorValue):  # the range failed as a whole
        raise XLError(numbers.code, numbers.message)
    numbers = _cells(numbers)
    hits = _multi_hits(pairs, len(numbers))
    out = []
    for i in hits:
        x = numbers[i]
        if is_number(x):
            out.append(x)
        elif type(x) is ErrorValue:
            raise XLError(x.code, x.message)
    return out


_PAIR = (p("criteria_list", list_of(ANY)),
         p("criteria", ANY, doc="an Excel criteria text or a value"))


@builtin(
    "COUNTIFS",
    sig(*_PAIR, returns=_N, repeat=2),
    doc="How many positions meet every criteria (pairs of a list and an Excel criteria text or "
        "value; the lists must have one length, else #VALUE!).",
    examples=['COUNTIFS([1, 2, 3], ">1", ["a", "b", "a"], "a") -> 1',
              'COUNTIFS([1, 2, 3], ">0") -> 3', 'COUNTIFS([1, 2], ">0", [1], ">0") -> #VALUE!'],
    cost=Cost.criteria(8, 4),
    errors=("#VALUE!",),
)
def countifs(*pairs: Any) -> int:
    return len(_multi_hits(pairs, None))


def _ifs_sig(target: str) -> Any:
    return sig(p(f"{target}_list", _NUMLIST), *_PAIR, returns=_N, repeat=2)


@builtin(
    "SUMIFS",
    _ifs_sig("sum"),
    doc="The total of sum_list at the positions meeting every criteria pair (Excel order: the "
        "numbers first).",
    examples=['SUMIFS([10, 20, 30], ["a", "b", "a"], "a") -> 40',
              'SUMIFS([10, 20, 30], [1, 2, 3], ">1", ["x", "y", "y"], "y") -> 50',
              'SUMIFS([10, 20], [1, 2, 3], ">1") -> #VALUE!'],
    cost=Cost.criteria(8, 4),
    errors=("#VALUE!", "#NUM!"),
)
def sumifs(numbers: tuple[Any, ...], *pairs: Any) -> Decimal | int:
    return ln.total(_picked(numbers, pairs))


@builtin(
    "AVERAGEIFS",
    _ifs_sig("average"),
    doc="The mean of average_list at the positions meeting every criteria pair (#DIV/0! when "
        "none do).",
    examples=['AVERAGEIFS([10, 20, 30], ["a", "b", "a"], "a") -> 20',
              'AVERAGEIFS([10, 20], [1, 2], ">5") -> #DIV/0!'],
    cost=Cost.criteria(8, 4),
    errors=("#VALUE!", "#DIV/0!"),
)
def averageifs(numbers: tuple[Any, ...], *pairs: Any) -> Decimal | int:
    return ln.mean(_picked(numbers, pairs))


@builtin(
    "MAXIFS",
    _ifs_sig("max"),
    doc="The largest of max_list at the positions meeting every criteria pair (0 when none "
        "do, as in Excel).",
    examples=['MAXIFS([10, 20, 30], ["a", "b", "a"], "a") -> 30',
              'MAXIFS([10, 20], [1, 2], ">5") -> 0', 'MAXIFS([10], [1, 2], ">0") -> #VALUE!'],
    cost=Cost.criteria(8, 4),
    errors=("#VALUE!",),
)
def maxifs(numbers: tuple[Any, ...], *pairs: Any) -> Decimal | int:
    xs = _picked(numbers, pairs)
    return max(xs) if xs else 0


@builtin(
    "MINIFS",
    _ifs_sig("min"),
    doc="The smallest of min_list at the positions meeting every criteria pair (0 when none "
        "do, as in Excel).",
    examples=['MINIFS([10, 20, 30], ["a", "b", "a"], "b") -> 20',
              'MINIFS([10, 20], [1, 2], ">5") -> 0', 'MINIFS([10], [1, 2], ">0") -> #VALUE!'],
    cost=Cost.criteria(8, 4),
    errors=("#VALUE!",),
)
def minifs(numbers: tuple[Any, ...], *pairs: Any) -> Decimal | int:
    xs = _picked(numbers, pairs)
    return min(xs) if xs else 0


@builtin(
    "SUMPRODUCT",
    sig(p("list", _NUMLIST), returns=_N, repeat=1),
    doc="The sum of the products of the lists' items at the same positions (blanks count as "
        "0); lists of different lengths are #VALUE!.",
    examples=['SUMPRODUCT([1, 2, 3], [4, 5, 6]) -> 32', 'SUMPRODUCT([1, BLANK()], [3, 4]) -> 3',
              'SUMPRODUCT([1, 2], [1]) -> #VALUE!', 'SUMPRODUCT([2, 3]) -> 5'],
    cost=Cost.linear(6, 1),
    errors=("#VALUE!", "#NUM!"),
)
def sumproduct(*lists: tuple[Any, ...]) -> Decimal | int:
    n = len(lists[0])
    for xs in lists:
        if len(xs) != n:
            raise XLError(VALUE, f"the lists have different lengths ({n} and {len(xs)})")
    try:
        with decimal.localcontext(ln.WIDE):
            total: Decimal | int = 0
            for items in zip(*lists):
                term: Decimal | int = 1
                for x in items:
                    if not is_number(x):
                        term = 0
                        break
                    term *= x
                total += term
    except decimal.Overflow:
        raise XLError(NUM, "the result is too large") from None
    return ln.finish(total)


# ------------------------------------------------------------------------- order statistics


@builtin(
    "MEDIAN",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The middle number (mean of the two middle ones for an even count); #NUM! when none.",
    examples=['MEDIAN(3, 1, 2) -> 2', 'MEDIAN([1, 2, 3, 4]) -> 2.5', 'MEDIAN([BLANK(), 5]) -> 5',
              'MEDIAN([]) -> #NUM!'],
    cost=Cost.linear(25, 2),
    errors=("#NUM!",),
)
def median(*args: Any) -> Decimal | int:
    return ln.median(ln.numbers(args))


def _stat(sample: bool, root: bool) -> Callable[..., Any]:
    def run(*args: Any) -> Decimal | int:
        var = ln.variance(ln.numbers(args), sample)
        return ln.tidy(ln.finish(ln.sqrt(var) if root else var))

    return run


_STAT_ERRORS = ("#DIV/0!", "#NUM!")
STDEV_S = builtin(
    "STDEV.S",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The sample standard deviation (n - 1); #DIV/0! with fewer than two numbers.",
    examples=['STDEV.S([1, 3, 5]) -> 2', 'ROUND(STDEV.S(1, 3), 10) -> 1.4142135624',
              'STDEV.S([5]) -> #DIV/0!'],
    cost=Cost.linear(10, 4),
    errors=_STAT_ERRORS,
    aliases=("STDEV",),
)(_stat(True, True))
STDEV_P = builtin(
    "STDEV.P",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The population standard deviation (n); #DIV/0! when there are no numbers.",
    examples=['STDEV.P([2, 4, 4, 4, 5, 5, 7, 9]) -> 2', 'STDEV.P([5]) -> 0',
              'STDEV.P([]) -> #DIV/0!'],
    cost=Cost.linear(10, 4),
    errors=_STAT_ERRORS,
    aliases=("STDEVP",),
)(_stat(False, True))
VAR_S = builtin(
    "VAR.S",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The sample variance (n - 1); #DIV/0! with fewer than two numbers.",
    examples=['VAR.S([1, 2, 3, 4]) -> 5 / 3', 'VAR.S(1, 2, 2) -> 1 / 3', 'VAR.S([1]) -> #DIV/0!'],
    cost=Cost.linear(10, 4),
    errors=_STAT_ERRORS,
    aliases=("VAR",),
)(_stat(True, False))
VAR_P = builtin(
    "VAR.P",
    sig(p("number", _NUMS), returns=_N, repeat=1),
    doc="The population variance (n); #DIV/0! when there are no numbers.",
    examples=['VAR.P([1, 2, 3, 4]) -> 1.25', 'VAR.P([1.5, 3.5]) -> 1', 'VAR.P([]) -> #DIV/0!'],
    cost=Cost.linear(10, 4),
    errors=_STAT_ERRORS,
    aliases=("VARP",),
)(_stat(False, False))


def _kth(values: tuple[Any, ...], k: Any, largest: bool) -> Decimal | int:
    xs = ln.list_numbers(values)
    # Excel rounds LARGE's k up and SMALL's k down (LibreOffice matches it: approxCeil/Floor).
    position: int = math.ceil(k) if largest else math.floor(k)
    if not xs or position < 1 or position > len(xs):
        raise XLError(NUM, f"k must be between 1 and the count of numbers ({len(xs)})")
    if position <= 64:  # a heap of k items beats sorting everything
        pick = heapq.nlargest if largest else heapq.nsmallest
        return pick(position, xs)[-1]
    xs.sort(reverse=largest)
    return xs[position - 1]


@builtin(
    "LARGE",
    sig(p("list", _NUMLIST), p("k", _N, doc="1 for the largest; a fraction rounds up"), returns=_N),
    doc="The k-th largest number of a list (blanks skipped); #NUM! when k is out of range.",
    examples=['LARGE([3, 9, 1, 7], 2) -> 7', 'LARGE([3, 9, 1, 7], 1.5) -> 7',
              'LARGE([3, 9], 3) -> #NUM!', 'LARGE([], 1) -> #NUM!'],
    cost=Cost.linear(25, 2),
    errors=("#NUM!",),
)
def large(values: tuple[Any, ...], k: Any) -> Decimal | int:
    return _kth(values, k, True)


@builtin(
    "SMALL",
    sig(p("list", _NUMLIST), p("k", _N, doc="1 for the smallest; a fraction rounds down"),
        returns=_N),
    doc="The k-th smallest number of a list (blanks skipped); #NUM! when k is out of range.",
    examples=['SMALL([3, 9, 1, 7], 2) -> 3', 'SMALL([3, 9, 1, 7], 2.9) -> 3',
              'SMALL([3, 9], 0) -> #NUM!'],
    cost=Cost.linear(25, 2),
    errors=("#NUM!",),
)
def small(values: tuple[Any, ...], k: Any) -> Decimal | int:
    return _kth(values, k, False)


@builtin(
    "PERCENTILE.INC",
    sig(p("list", _NUMLIST), p("k", _N, doc="between 0 and 1 inclusive"), returns=_N),
    doc="The k-th percentile, interpolating between the sorted numbers (Excel's inclusive "
        "method); #NUM! when k is outside 0..1 or the list has no numbers.",
    examples=['PERCENTILE.INC([1, 2, 3, 4], 0.3) -> 1.9', 'PERCENTILE.INC([1, 2, 3, 4], 1) -> 4',
              'PERCENTILE.INC([1, 2], 1.5) -> #NUM!', 'PERCENTILE.INC([], 0.5) -> #NUM!'],
    cost=Cost.linear(25, 2),
    errors=("#NUM!",),
    aliases=("PERCENTILE",),
)
def percentile_inc(values: tuple[Any, ...], k: Any) -> Decimal | int:
    return ln.percentile_inc(ln.list_numbers(values), k)


