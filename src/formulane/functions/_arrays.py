"""List shaping and higher-order functions (category "lists", re-exported by `lists`):
UNIQUE SORT SORTBY FILTER MAP REDUCE SEQUENCE TAKE DROP FLATTEN, and the 2-D array functions
ROWS COLUMNS TRANSPOSE (a 2-D array is a list of equal-length rows).

Contract: lists are tuples in and out, never mutated. Lambdas arrive as Python callables that
return engine values, possibly an `ErrorValue`: MAP keeps such an error as an item, FILTER,
SORTBY and REDUCE return it (the first one, left to right). Sorting follows Excel: numbers,
then text ignoring case, then logicals, blanks last in either direction; sorts are stable.
Lists can be empty here, so an empty result is ``[]`` where Excel, whose grids cannot hold an
empty array, answers ``#CALC!`` (FILTER with nothing kept, TAKE 0, SEQUENCE 0). Functions
that can grow a list (SEQUENCE, FLATTEN) check the size against the limit before building.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
from decimal import Decimal
from typing import Any, Callable, Mapping, Sequence

from ..runtime import EvalContext
from ..types import ANY, BOOLEAN, NUMBER, T, U, fn, list_of, optional, var
from ..values import VALUE, ErrorValue, XLError
from ._criteria import eq_key, sort_positions, sort_values, to_int, truthy
from ._grids import (GRID_REFUSED, GRID_TYPE, Grid, empty_grid, filter_grid, grid_rows, sort_grid,
                     sortby_grid, unique_grid)
from ._listnum import WIDE, finish
from .spec import Cost, Refuse, builtin, family, p, sig


#: These specs belong to the "lists" category (the module name would say "_arrays").
_lists_builtin = functools.partial(builtin, category="lists")
_V = var("V")
#: Kinds whose values are their own equality keys (bool is absent: TRUE must not equal 1).
_HASHABLE_AS_IS = frozenset((int, Decimal, type(None), dt.date, dt.datetime, dt.timedelta))
_LIST = list_of(T)
#: A 2-D array: a list of equal-length rows (Excel's {1,2;3,4} is [[1, 2], [3, 4]]).
_GRID = GRID_TYPE
_GRID_REFUSED = GRID_REFUSED
#: ROWS, COLUMNS, TRANSPOSE: 2-D arrays, which have no columnar form.
_grid = family(category="lists", polars=_GRID_REFUSED, sql=_GRID_REFUSED,
               cost=Cost.linear(1, 1), errors=("#VALUE!",))


def _order(value: Any) -> bool:
    """Excel's sort_order argument: 1 ascending, -1 descending; returns ``descending``."""
    n = to_int(value, "sort order")
    if n not in (1, -1):
        raise XLError(VALUE, "the sort order must be 1 (ascending) or -1 (descending)")
    return n == -1


# ------------------------------------------------------------------------------------ UNIQUE


@_lists_builtin(
    "UNIQUE",
    sig(p("array", _GRID), p("by_col", BOOLEAN, False, "TRUE: compare columns, not rows"),
        p("exactly_once", BOOLEAN, False, "TRUE: only the rows (columns) that occur once"),
        returns=_GRID, impl=unique_grid, polars=_GRID_REFUSED, sql=_GRID_REFUSED),
    sig(p("list", _LIST), p("by_col", BOOLEAN, False, "ignored: lists have one dimension"),
        p("exactly_once", BOOLEAN, False, "TRUE: only the items that occur once"),
        returns=_LIST),
    doc="The distinct items of a list in first-seen order; text compares ignoring case (as "
        "Excel's UNIQUE does) and the first spelling is kept. Of a 2-D array: its distinct "
        "rows (columns with by_col).",
    examples=['UNIQUE([3, 1, 3, 2, 1]) -> [3, 1, 2]', 'UNIQUE(["a", "A", "b"]) -> ["a", "b"]',
              'UNIQUE([1, 2, 1], FALSE, TRUE) -> [2]',
              'UNIQUE([1, BLANK(), BLANK()]) -> [1, BLANK()]',
              'UNIQUE([["x", "a"], ["X", "A"], ["y", "b"]]) -> [["x", "a"], ["y", "b"]]',
              'UNIQUE([[1, 1, 2], [3, 3, 4]], TRUE) -> [[1, 2], [3, 4]]',
              'UNIQUE([[1], [2], [1]], FALSE, TRUE) -> [[2]]'],
    keeps_items=True,  # its list is some of the first argument's items
    cost=Cost.linear(6, 2),
    errors=("#VALUE!",),  # a ragged 2-D array
)
def unique(values: tuple[Any, ...], by_col: bool = False,
           exactly_once: bool = False) -> tuple[Any, ...]:
    kinds = set(map(type, values))
    if kinds <= _HASHABLE_AS_IS:
        keys: Sequence[Any] = values  # numbers (1 = 1.0 hash alike), dates...: their own keys
    elif kinds == {str}:
        keys = [v.lower() for v in values]
    else:
        keys = [eq_key(v) for v in values]
    if exactly_once:
        counts: dict[Any, int] = {}
        for k in keys:
            counts[k] = counts.get(k, 0) + 1
        return tuple(v for v, k in zip(values, keys) if counts[k] == 1)
    seen: set[Any] = set()
    out = []
    for v, k in zip(values, keys):
        if k not in seen:
            seen.add(k)
            out.append(v)
    return tuple(out)


# -------------------------------------------------------------------------------------- SORT


def _sort(values: tuple[Any, ...], order: Any = 1) -> tuple[Any, ...]:
    return tuple(sort_values(values, _order(order)))


def _sort_excel(values: tuple[Any, ...], sort_index: Any, order: Any,
                by_col: bool = False) -> tuple[Any, ...]:
    if to_int(sort_index, "sort_index") != 1:
        raise XLError(VALUE, "a list has one column: sort_index must be 1")
    return _sort(values, order)


@_lists_builtin(
    "SORT",
    sig(p("array", _GRID), p("sort_index", NUMBER, 1, "the column (row with by_col) to sort by"),
        p("order", NUMBER, 1, "1 ascending, -1 descending"),
        p("by_col", BOOLEAN, False, "TRUE: sort the columns by a row"),
        returns=_GRID, impl=sort_grid, polars=_GRID_REFUSED, sql=_GRID_REFUSED),
    sig(p("array", _GRID), p("sort_index", list_of(NUMBER), doc="several columns: by the "
                                                               "first, then the next..."),
        p("order", list_of(NUMBER), doc="one order per sort index"),
        p("by_col", BOOLEAN, False), returns=_GRID, impl=sort_grid, polars=_GRID_REFUSED,
        sql=_GRID_REFUSED),
    sig(p("array", _GRID), p("sort_index", list_of(NUMBER)), p("order", NUMBER, 1),
        p("by_col", BOOLEAN, False), returns=_GRID, impl=sort_grid, polars=_GRID_REFUSED,
        sql=_GRID_REFUSED),
    sig(p("list", _LIST), p("order", NUMBER, 1, "1 ascending, -1 descending"), returns=_LIST),
    sig(p("list", _LIST), p("sort_index", NUMBER, doc="must be 1 (Excel's form)"),
        p("order", NUMBER, doc="1 ascending, -1 descending"),
        p("by_col", BOOLEAN, False, "ignored: lists have one dimension"),
        returns=_LIST, impl=_sort_excel),
    doc="A list sorted (stable): numbers, then text ignoring case, then logicals, blanks last; "
        "Excel's SORT(list, 1, order) form works too. A 2-D array's rows are sorted by their "
        "sort_index-th item (its columns by a row with by_col), as Excel's SORT.",
    examples=['SORT([3, 1, 2]) -> [1, 2, 3]', 'SORT(["b", "C", "a"], -1) -> ["C", "b", "a"]',
              'SORT([2, BLANK(), 1], -1) -> [2, 1, BLANK()]', 'SORT([3, 1, 2], 1, -1) -> [3, 2, 1]',
              'SORT([1, 2], 0) -> #VALUE!', 'SORT(["b", "A", "a"]) -> ["A", "a", "b"]',
              'SORT([[3, 30], [1, 10], [2, 20]]) -> [[1, 10], [2, 20], [3, 30]]',
              'SORT([[1, 9], [2, 8]], 2) -> [[2, 8], [1, 9]]',
              'SORT([[3, 1, 2], [6, 4, 5]], 1, -1, TRUE) -> [[3, 2, 1], [6, 5, 4]]',
              'SORT([[1, 2]], 3) -> #VALUE!',
              'SORT([[1, 2], [0, 9], [1, 1]], [1, 2], [1, -1]) -> [[0, 9], [1, 2], [1, 1]]',
              'SORT([[1, 2]], [1, 2], [1]) -> #VALUE!'],
    keeps_items=True,  # its list is some of the first argument's items
    cost=Cost.linear(25, 2),
    errors=("#VALUE!",),
)
def sort(values: tuple[Any, ...], order: Any = 1) -> tuple[Any, ...]:
    return _sort(values, order)


# ------------------------------------------------------------------------------------ SORTBY


def _sortby_multi(values: tuple[Any, ...], *pairs: Any) -> tuple[Any, ...]:
    """Excel's SORTBY(list, by1, order1, by2, order2, ...): stable passes, last key first."""
    n = len(values)
    keyed = []
    for j in range(0, len(pairs), 2):
        keys = pairs[j]
        if type(keys) is not tuple or len(keys) != n:
            raise XLError(VALUE, f"each sort key list must have {n} items")
        order = pairs[j + 1] if j + 1 < len(pairs) else 1
        keyed.append((keys, _order(order)))
    positions = list(range(n))
    for keys, descending in reversed(keyed):
        positions = sort_positions(positions, keys, descending)
    return tuple(values[i] for i in positions)


_SEVERAL_KEYS = Refuse("several (keys, order) pairs: each pass would need every key list inside "
                       "one list evaluation")


def _sortby_list(values: tuple[Any, ...], keys: tuple[Any, ...], order: Any = 1) -> tuple[Any, ...]:
    return _sortby_multi(values, keys, order)


def _sortby_grid(rows: tuple[Any, ...], keys: tuple[Any, ...], order: Any = 1) -> Grid:
    return sortby_grid(rows, keys, order)


@_lists_builtin(
    "SORTBY",
    sig(p("array", _GRID), p("by_array", list_of(list_of(U)), doc="one column (sorts the "
                                                                   "rows) or one row (the "
                                                                   "columns)"),
        p("order", NUMBER, 1, "1 ascending, -1 descending"), returns=_GRID, impl=_sortby_grid,
        polars=_GRID_REFUSED, sql=_GRID_REFUSED),
    sig(p("array", _GRID), p("by_list", list_of(U), doc="sort keys along the rows, or along "
                                                        "the columns when the array is that wide"),
        p("order", NUMBER, 1, "1 ascending, -1 descending"), returns=_GRID, impl=_sortby_grid,
        polars=_GRID_REFUSED, sql=_GRID_REFUSED),
    sig(p("array", _GRID), p("by_list", list_of(ANY)), p("order", NUMBER), returns=_GRID,
        repeat=2, impl=sortby_grid, polars=_GRID_REFUSED, sql=_GRID_REFUSED),
    sig(p("list", _LIST), p("by", fn([T], U), doc="a lambda giving each item's sort key"),
        p("order", NUMBER, 1, "1 ascending, -1 descending"), returns=_LIST),
    sig(p("list", _LIST), p("by_list", list_of(U), doc="the sort keys, position by position"),
        p("order", NUMBER, 1, "1 ascending, -1 descending"), returns=_LIST, impl=_sortby_list),
    sig(p("list", _LIST), p("by_list", list_of(ANY)), p("order", NUMBER),
        returns=_LIST, repeat=2, impl=_sortby_multi, polars=_SEVERAL_KEYS, sql=_SEVERAL_KEYS),
    doc="A list sorted (stable) by keys from a lambda or from a list of the same length; "
        "several (keys, order) pairs sort by each in turn. A 2-D array's rows are sorted by "
        "keys as long as its columns (its columns, by keys as long as its rows, when the "
        "keys match its width instead).",
    examples=['SORTBY(["bb", "a", "ccc"], s => LEN(s)) -> ["a", "bb", "ccc"]',
              'SORTBY(["x", "y", "z"], [3, 1, 2]) -> ["y", "z", "x"]',
              'SORTBY(["x", "y", "z"], [3, 1, 2], -1) -> ["x", "z", "y"]',
              'SORTBY([1, 2, 3, 4], ["b", "a", "b", "a"], 1, [1, 2, 3, 4], -1) -> [4, 2, 3, 1]',
              'SORTBY([1, 2], [1]) -> #VALUE!', 'SORTBY([1, 2], x => 1 / (x - 1)) -> #DIV/0!',
              'SORTBY([["a", "x"], ["b", "y"]], [2, 1]) -> [["b", "y"], ["a", "x"]]',
              'SORTBY([[1, 2, 3], [4, 5, 6]], [3, 1, 2]) -> [[2, 3, 1], [5, 6, 4]]',
              'SORTBY([[1], [2]], [1, 2, 3]) -> #VALUE!'],
    keeps_items=True,  # its list is some of the first argument's items
    cost=Cost.higher_order(25, 2),
    errors=("#VALUE!",),
)
def sortby(values: tuple[Any, ...], by: Callable[[Any], Any],
           order: Any = 1) -> tuple[Any, ...] | ErrorValue:
    descending = _order(order)
    keys = []
    for v in values:
        k = by(v)
        if type(k) is ErrorValue:
            return k
        keys.append(k)
    positions = sort_positions(list(range(len(values))), keys, descending)
    return tuple(values[i] for i in positions)


# ------------------------------------------------------------------------------------ FILTER


def _kind(v: Any) -> Any:
    t = type(v)
    if t is int or t is Decimal:
        return Decimal
    if isinstance(v, Mapping):
        return frozenset(v)  # records: the same fields
    return t


def _fallback(values: tuple[Any, ...], if_empty: Any) -> tuple[Any, ...]:
    """FILTER's answer when nothing is kept: [if_empty] when it has the items' type, else []
    (Excel's FILTER(..., "") idiom over numbers just means "show nothing")."""
    if if_empty is None:
        return ()
    sample = next((v for v in values if v is not None), None)
    if type(sample) is tuple:  # the rows of a 2-D array: one cell, or a row
        return empty_grid(values, if_empty)
    if sample is not None and _kind(sample) == _kind(if_empty):
        return (if_empty,)
    return ()


def _filter_mask(values: tuple[Any, ...], include: tuple[Any, ...],
                 if_empty: Any = None) -> tuple[Any, ...]:
    if len(include) != len(values):
        raise XLError(VALUE, f"include must have {len(values)} items, like the list")
    kept = tuple(v for v, keep in zip(values, include) if truthy(keep, "include"))
    return kept or _fallback(values, if_empty)


# if_empty is untyped on purpose: Excel formulas pass "" or "None found" whatever the items
# are; it is used only when it has the items' type (checked at run time), so lists stay typed.
_IF_EMPTY = p("if_empty", ANY, None, "the single item returned when nothing is kept, if it "
              "has the items' type (otherwise, e.g. Excel's \"\", the result is [])")


@_lists_builtin(
    "FILTER",
    sig(p("list", _LIST), p("include", fn([T], BOOLEAN)), _IF_EMPTY, returns=_LIST),
    sig(p("array", _GRID), p("include", list_of(optional(BOOLEAN))), _IF_EMPTY, returns=_GRID,
        impl=filter_grid, polars=_GRID_REFUSED, sql=_GRID_REFUSED),
    sig(p("array", _GRID), p("include", list_of(optional(NUMBER))), _IF_EMPTY, returns=_GRID,
        impl=filter_grid, polars=_GRID_REFUSED, sql=_GRID_REFUSED),
    sig(p("list", _LIST), p("include", list_of(optional(BOOLEAN))), _IF_EMPTY, returns=_LIST,
        impl=_filter_mask),
    sig(p("list", _LIST), p("include", list_of(optional(NUMBER))), _IF_EMPTY, returns=_LIST,
        impl=_filter_mask),
    doc="The items a lambda accepts (or whose include entry is TRUE / non-zero), in order; [] "
        "when none are (Excel: #CALC!), or [if_empty] if it has the items' type. Of a 2-D "
        "array: its rows (columns, when include is as long as a row); if_empty is a cell or a "
        "row.",
    examples=['FILTER([1, 5, 10], x => x > 3) -> [5, 10]',
              'FILTER(["a", "b", "c"], [TRUE, FALSE, TRUE]) -> ["a", "c"]',
              'FILTER([1, 2], x => x > 5) -> []', 'FILTER([1, 2], x => x > 5, 0) -> [0]',
              'FILTER([1, 2], x => x > 5, "none") -> []', 'FILTER([1, 2], [TRUE]) -> #VALUE!',
              'FILTER([1, 0], x => 1 / x > 0) -> #DIV/0!',
              'FILTER([[1, 10], [2, 20], [3, 30]], [TRUE, FALSE, TRUE]) -> [[1, 10], [3, 30]]',
              'FILTER([[1, 2, 3], [4, 5, 6]], [1, 0, 1]) -> [[1, 3], [4, 6]]',
              'FILTER([[1, 2], [3, 4]], [FALSE, FALSE], 0) -> [[0]]',
              'FILTER([[1, 2], [3, 4]], [FALSE, FALSE], ["none", "-"]) -> []',
              'FILTER([[1, 2], [3, 4]], [FALSE, FALSE], [0, 0]) -> [[0, 0]]',
              'FILTER([[1, 2], [3, 4]], [TRUE]) -> #VALUE!'],
    keeps_items=True,  # its list is some of the first argument's items
    cost=Cost.higher_order(2, 1),
    errors=("#VALUE!",),
)
def filter_(values: tuple[Any, ...], include: Callable[[Any], Any], if_empty: Any = None) -> Any:
    kept = []
    for v in values:
        r = include(v)
        if type(r) is ErrorValue:
            return r
        if truthy(r):
            kept.append(v)
    return tuple(kept) or _fallback(values, if_empty)


# ------------------------------------------------------------------------------- MAP, REDUCE


def _map2(first: tuple[Any, ...], second: tuple[Any, ...],
          f: Callable[[Any, Any], Any]) -> tuple[Any, ...]:
    if len(first) != len(second):
        raise XLError(VALUE, f"MAP over lists of different lengths ({len(first)}, {len(second)})")
    return tuple(f(a, b) for a, b in zip(first, second))


@_lists_builtin(
    "MAP",
    sig(p("list", _LIST), p("fn", fn([T], U), doc="a lambda such as x => x * 2"),
        returns=list_of(U)),
    sig(p("list1", _LIST), p("list2", list_of(U)), p("fn", fn([T, U], _V)),
        returns=list_of(_V), impl=_map2,
        polars=Refuse("a two-parameter lambda: list.eval binds one element at a time")),
    doc="Each item transformed by a lambda (two lists of one length: pairs of items); an "
        "error value from the lambda stays in its place.",
    examples=['MAP([1, 2, 3], x => x * 2) -> [2, 4, 6]',
              'MAP([1, 2], [10, 20], LAMBDA(a, b, a + b)) -> [11, 22]',
              'MAP(["a", "b"], s => UPPER(s)) -> ["A", "B"]',
              'MAP([1, 2], [1], LAMBDA(a, b, a + b)) -> #VALUE!',
              'SUM(MAP([1, 0], x => 1 / x)) -> #DIV/0!'],
    cost=Cost.higher_order(2, 1),
    errors=("#VALUE!",),
)
def map_(values: tuple[Any, ...], f: Callable[[Any], Any]) -> tuple[Any, ...]:
    return tuple(f(v) for v in values)


@_lists_builtin(
    "REDUCE",
    sig(p("initial", U), p("list", _LIST),
        p("fn", fn([U, T], U), doc="a lambda (accumulator, item) => next accumulator"),
        returns=U),
    doc="Folds a list from the left: the lambda gets the running value and each item; the "
        "first error value it returns is the result.",
    polars=Refuse("a fold: list.eval has no running accumulator"), 
    examples=['REDUCE(0, [1, 2, 3], LAMBDA(acc, x, acc + x)) -> 6',
              'REDUCE(1, [2, 3, 4], LAMBDA(acc, x, acc * x)) -> 24',
              'REDUCE("", ["a", "b"], LAMBDA(acc, s, acc & s)) -> "ab"',
              'REDUCE(5, DROP([1], 1), LAMBDA(acc, x, acc + x)) -> 5',
              'REDUCE(1, [1, 0, 2], LAMBDA(acc, x, acc / x)) -> #DIV/0!'],
    cost=Cost.higher_order(1, 1),
    can_error=False,
)
def reduce_(initial: Any, values: tuple[Any, ...], f: Callable[[Any, Any], Any]) -> Any:
    acc = initial
    for v in values:
        acc = f(acc, v)
        if type(acc) is ErrorValue:
            return acc
    return acc


# ----------------------------------------------------------------------------------- SEQUENCE


def _sequence(ctx: EvalContext, rows: Any, columns: Any = 1, start: Any = 1,
              step: Any = 1) -> tuple[Any, ...]:
    r, c = to_int(rows, "rows"), to_int(columns, "columns")
    if r < 0 or c < 0:
        raise XLError(VALUE, "SEQUENCE needs rows and columns of 0 or more")
    n = r * c
    ctx.check_list(n)  # before allocating: SEQUENCE(10^8) stops here
    ctx.charge(n)
    if n == 0:
        return ()
    with decimal.localcontext(WIDE):
        last = start + step * (n - 1)
    finish(last)  # the last item bounds them all: #NUM! past 1e308
    if type(start) is int and type(step) is int:
        return tuple(range(start, start + n * step, step)) if step else (start,) * n
    first, delta = Decimal(start), Decimal(step)
    return tuple(first + delta * i for i in range(n))


def _sequence_grid(ctx: EvalContext, rows: Any, columns: Any, start: Any = 1,
                   step: Any = 1) -> Grid:
    """Excel's SEQUENCE(rows, columns, ...) as a 2-D array (the excel profile): the numbers
    counted row by row, then cut into rows of ``columns`` items."""
    flat = _sequence(ctx, rows, columns, start, step)
    width = to_int(columns, "columns")
    return tuple(flat[i:i + width] for i in range(0, len(flat), width)) if flat else ()


@_lists_builtin(
    "SEQUENCE",
    sig(p("rows", NUMBER), p("columns", NUMBER, doc="the width of each row"),
        p("start", NUMBER, 1), p("step", NUMBER, 1), returns=list_of(list_of(NUMBER)),
        impl=_sequence_grid, polars=_GRID_REFUSED, sql=_GRID_REFUSED, profile="excel"),
    sig(p("rows", NUMBER), p("columns", NUMBER, 1, "the items are rows * columns, row by row"),
        p("start", NUMBER, 1), p("step", NUMBER, 1), returns=list_of(NUMBER)),
    doc="A list of rows * columns numbers counting from start by step (Excel's argument order; "
        "the grid is read row by row into one list); 0 rows gives []. In the excel profile, "
        "SEQUENCE(rows, columns, ...) is Excel's 2-D array: rows lists of columns numbers.",
    examples=['SEQUENCE(4) -> [1, 2, 3, 4]', 'SEQUENCE(3, 1, 10, 5) -> [10, 15, 20]',
              'SEQUENCE(2, 2, 0, 0.5) -> [0, 0.5, 1, 1.5]', 'SEQUENCE(0) -> []',
              'SEQUENCE(-1) -> #VALUE!', 'SEQUENCE(2.9) -> [1, 2]'],
    cost=Cost.const(2),
    needs_ctx=True,
    errors=("#VALUE!", "#NUM!"),
)
def sequence(ctx: EvalContext, rows: Any, columns: Any = 1, start: Any = 1,
             step: Any = 1) -> tuple[Any, ...]:
    return _sequence(ctx, rows, columns, start, step)


# --------------------------------------------------------------------------------- TAKE, DROP


@_lists_builtin(
    "TAKE",
    sig(p("list", _LIST), p("count", NUMBER, doc="negative: from the end"), returns=_LIST),
    doc="The first count items (the last -count when negative); the whole list when count is "
        "larger; [] for 0 (Excel says #CALC!).",
    examples=['TAKE([1, 2, 3, 4], 2) -> [1, 2]', 'TAKE([1, 2, 3, 4], -1) -> [4]',
              'TAKE([1, 2], 10) -> [1, 2]', 'TAKE([1, 2], 0) -> []'],
    keeps_items=True,  # its list is some of the first argument's items
    cost=Cost.linear(1, 1),
    can_error=False,
)
def take(values: tuple[Any, ...], count: Any) -> tuple[Any, ...]:
    n = to_int(count, "count")
    if n >= 0:
        return values[:n]
    return values[max(len(values) + n, 0):]


@_lists_builtin(
    "DROP",
    sig(p("list", _LIST), p("count", NUMBER, doc="negative: from the end"), returns=_LIST),
    doc="The list without its first count items (its last -count when negative); [] when all "
        "are dropped (Excel says #CALC!).",
    examples=['DROP([1, 2, 3, 4], 1) -> [2, 3, 4]', 'DROP([1, 2, 3, 4], -2) -> [1, 2]',
              'DROP([1, 2], 5) -> []', 'DROP([1, 2], 0) -> [1, 2]'],
    keeps_items=True,  # its list is some of the first argument's items
    cost=Cost.linear(1, 1),
    can_error=False,
)
def drop(values: tuple[Any, ...], count: Any) -> tuple[Any, ...]:
    n = to_int(count, "count")
    if n >= 0:
        return values[n:]
    return values[:max(len(values) + n, 0)]


# ------------------------------------------------------------------------------------ FLATTEN


@_lists_builtin(
    "FLATTEN",
    sig(p("list", list_of(list_of(T))), returns=_LIST),
    sig(p("list", list_of(optional(list_of(T)))), returns=_LIST),
    sig(p("list", _LIST), returns=_LIST, impl=lambda ctx, values: values),
    doc="A list of lists joined into one list, one level deep (blank inner lists skipped; a "
        "flat list is returned as it is).",
    examples=['FLATTEN([[1, 2], [3], []]) -> [1, 2, 3]',
              'FLATTEN([["a"], ["b", "c"]]) -> ["a", "b", "c"]', 'FLATTEN([1, 2]) -> [1, 2]',
              'FLATTEN([[[1], [2]], [[3]]]) -> [[1], [2], [3]]'],
    cost=Cost.linear(2, 1),
    needs_ctx=True,
    can_error=False,
)
def flatten(ctx: EvalContext, values: tuple[Any, ...]) -> tuple[Any, ...]:
    size = sum(len(v) if type(v) is tuple else (v is not None) for v in values)
    ctx.check_list(size)  # before allocating: 1,000 lists of 1,000 items may be too many
    ctx.charge(size)
    out: list[Any] = []
    for v in values:
        if type(v) is tuple:
            out.extend(v)
        elif v is not None:
            out.append(v)
    return tuple(out)


# ----------------------------------------------------------------------------- 2-D arrays
# A 2-D array is a list of rows of equal length, row-major ([[1, 2], [3, 4]] is Excel's
# {1,2;3,4}); a flat list is one column (as INDEX(list, n, 1) reads it). MMULT, MINVERSE and
# the other matrix functions take the same shape.



@_grid(
    "ROWS",
    sig(p("array", list_of(list_of(T))), returns=NUMBER, impl=lambda rows: len(grid_rows(rows))),
    sig(p("array", list_of(T)), returns=NUMBER),
    doc="The number of rows of an array: of a 2-D array (a list of rows), its rows; of a flat "
        "list (a column), its items.",
    examples=["ROWS([[1, 2, 3], [4, 5, 6]]) -> 2", "ROWS([1, 2, 3]) -> 3", "ROWS([]) -> 0",
              "ROWS([[1, 2], [3]]) -> #VALUE!"],
)
def rows_(values: tuple[Any, ...]) -> int:
    return len(values)


@_grid(
    "COLUMNS",
    sig(p("array", list_of(list_of(T))), returns=NUMBER,
        impl=lambda rows: len(grid_rows(rows)[0]) if rows else 0),
    sig(p("array", list_of(T)), returns=NUMBER),
    doc="The number of columns of an array: of a 2-D array (a list of rows), the length of its "
        "rows; a flat list is one column.",
    examples=["COLUMNS([[1, 2, 3], [4, 5, 6]]) -> 3", "COLUMNS([1, 2, 3]) -> 1",
              "COLUMNS([[1, 2], [3]]) -> #VALUE!"],
)
def columns_(values: tuple[Any, ...]) -> int:
    return 1 if values else 0


def _transpose_grid(ctx: EvalContext, rows: tuple[Any, ...]) -> tuple[Any, ...]:
    grid = grid_rows(rows)
    ctx.charge(sum(len(r) for r in grid))
    return tuple(zip(*grid)) if grid else ()


@_grid(
    "TRANSPOSE",
    sig(p("array", list_of(list_of(T))), returns=list_of(list_of(T)), impl=_transpose_grid),
    sig(p("array", list_of(T)), returns=list_of(list_of(T))),
    doc="Rows become columns: a 2-D array (a list of rows) flipped; a flat list (a column) "
        "becomes one row.",
    examples=["TRANSPOSE([[1, 2, 3], [4, 5, 6]]) -> [[1, 4], [2, 5], [3, 6]]",
              "TRANSPOSE([1, 2, 3]) -> [[1, 2, 3]]", "TRANSPOSE([[1, 2], [3]]) -> #VALUE!"],
    needs_ctx=True,
)
def transpose(ctx: EvalContext, values: tuple[Any, ...]) -> tuple[Any, ...]:
    return (values,) if values else ()
