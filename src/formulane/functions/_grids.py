"""Rows and columns of 2-D arrays: the scalar work behind the 2-D overloads of SORT, SORTBY,
FILTER, UNIQUE, SEQUENCE, XLOOKUP and LOOKUP (declared in `_arrays` and `lookup`).

Contract: a 2-D array is a tuple of equal-length row tuples, row-major (Excel's {1,2;3,4} is
``((1, 2), (3, 4))``), checked rectangular by `grid_rows` (#VALUE! when ragged). A flat list
beside a 2-D array (an include list, sort keys, a lookup list) is matched to the array's rows
when it has as many items as the array has rows, else to its columns when it has as many items
as the array has columns (Excel's horizontal include or lookup array), else #VALUE!; a square
array takes the rows. Results are never larger than their input, except SEQUENCE's, whose size
is checked (`EvalContext.check_list`) before it is built. Work is charged per cell
(`runtime.poll`, free when the evaluation is not metered). Sorting and equality follow Excel as
the 1-D functions do (`_criteria`): numbers, then text ignoring case, then logicals, blanks
last; stable sorts.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Mapping, Sequence

from ..runtime import poll
from ..types import T, list_of
from ..values import VALUE, XLError
from ._criteria import eq_key, sort_positions, to_int, truthy
from .spec import Refuse

#: A 2-D array's type: a list of equal-length rows.
GRID_TYPE = list_of(list_of(T))
#: Why every 2-D overload is refused on polars and SQL (one text, in the refusals list).
GRID_REFUSED = Refuse("a 2-D array is a list of lists, which the columnar and SQL backends do "
                      "not hold as a column")

Grid = tuple[tuple[Any, ...], ...]


def grid_rows(rows: tuple[Any, ...]) -> Grid:
    """The rows of a 2-D array, checked rectangular (#VALUE! for ragged or blank rows)."""
    width = -1
    for row in rows:
        if type(row) is not tuple:
            raise XLError(VALUE, "a 2-D array's rows must all be lists")
        if width >= 0 and len(row) != width:
            raise XLError(VALUE, f"the rows of a 2-D array have {width} and {len(row)} items")
        width = len(row)
    return rows


def transposed(grid: Grid) -> Grid:
    return tuple(zip(*grid)) if grid else ()


def _checked(rows: tuple[Any, ...]) -> Grid:
    grid = grid_rows(rows)
    poll(sum(len(r) for r in grid) + 1)
    return grid


def along(grid: Grid, length: int, what: str) -> bool:
    """Whether a flat list of ``length`` items runs along the columns (True) or the rows."""
    height = len(grid)
    width = len(grid[0]) if grid else 0
    if length == height:
        return False
    if length == width:
        return True
    raise XLError(VALUE, f"{what} has {length} items; the array has {height} rows and "
                         f"{width} columns")


def _descending(order: Any) -> bool:
    n = to_int(order, "sort order")
    if n not in (1, -1):
        raise XLError(VALUE, "the sort order must be 1 (ascending) or -1 (descending)")
    return n == -1


def unique_grid(rows: tuple[Any, ...], by_col: Any = False, exactly_once: Any = False) -> Grid:
    """Excel's UNIQUE over a 2-D array: the distinct rows (columns with ``by_col``) in
    first-seen order, text compared ignoring case; with ``exactly_once``, the lines that occur
    once."""
    grid = _checked(rows)
    lines = transposed(grid) if by_col else grid
    keys = [eq_key(line) for line in lines]
    if exactly_once:
        counts: dict[Any, int] = {}
        for k in keys:
            counts[k] = counts.get(k, 0) + 1
        kept = tuple(line for line, k in zip(lines, keys) if counts[k] == 1)
    else:
        seen: set[Any] = set()
        out = []
        for line, k in zip(lines, keys):
            if k not in seen:
                seen.add(k)
                out.append(line)
        kept = tuple(out)
    return transposed(kept) if by_col else kept


def sort_grid(rows: tuple[Any, ...], sort_index: Any = 1, order: Any = 1,
              by_col: Any = False) -> Grid:
    """Excel's SORT over a 2-D array: the rows ordered by their ``sort_index``-th item (the
    columns by their ``sort_index``-th row with ``by_col``); #VALUE! for an index outside the
    array. ``sort_index`` may be a list of indexes (Excel's {1,2}: by the first, then the
    second), with one order for all or a list of orders of the same length."""
    grid = _checked(rows)
    indexes = sort_index if type(sort_index) is tuple else (sort_index,)
    orders = order if type(order) is tuple else (order,) * len(indexes)
    if not indexes or len(orders) != len(indexes):
        raise XLError(VALUE, f"{len(indexes)} sort indexes need as many sort orders, not "
                             f"{len(orders)}")
    keyed = [(to_int(i, "sort_index"), _descending(o)) for i, o in zip(indexes, orders)]
    if not grid:
        return grid
    lines = transposed(grid) if by_col else grid
    positions = list(range(len(lines)))
    for index, descending in reversed(keyed):  # stable passes, last key first
        if not 1 <= index <= len(lines[0]):
            raise XLError(VALUE, f"sort_index {index} is outside 1..{len(lines[0])}")
        keys = [line[index - 1] for line in lines]
        positions = sort_positions(positions, keys, descending)
    out = tuple(lines[i] for i in positions)
    return transposed(out) if by_col else out


def _keys(grid: Grid, keys: Any) -> tuple[tuple[Any, ...], bool]:
    """Sort keys and their direction (True: along the columns): a flat list by its length, a
    one-column 2-D array along the rows, a one-row 2-D array along the columns."""
    if type(keys) is not tuple:
        raise XLError(VALUE, "each sort key must be a list")
    if keys and all(type(k) is tuple for k in keys):
        if all(len(k) == 1 for k in keys) and len(keys) == len(grid):
            return tuple(k[0] for k in keys), False
        if len(keys) == 1:
            keys = keys[0]
        else:
            raise XLError(VALUE, "a 2-D sort key must be one row or one column")
    return keys, along(grid, len(keys), "a sort key list")


def sortby_grid(rows: tuple[Any, ...], *pairs: Any) -> Grid:
    """Excel's SORTBY over a 2-D array: ``pairs`` are (keys, order), keys a flat list along the
    rows (or, matching the array's width, along the columns); stable passes, last key first."""
    grid = _checked(rows)
    keyed: list[tuple[Sequence[Any], bool]] = []
    across: bool | None = None
    for j in range(0, len(pairs), 2):
        keys, side = _keys(grid, pairs[j])
        if across is not None and side != across:
            raise XLError(VALUE, "the sort key lists must all run along the rows or all along "
                                 "the columns")
        across = side
        order = pairs[j + 1] if j + 1 < len(pairs) else 1
        keyed.append((keys, _descending(order)))
    lines = transposed(grid) if across else grid
    positions = list(range(len(lines)))
    for keys, descending in reversed(keyed):
        positions = sort_positions(positions, keys, descending)
    out = tuple(lines[i] for i in positions)
    return transposed(out) if across else out


def _kind(v: Any) -> Any:
    t = type(v)
    if t is bool:
        return bool
    if t is int or t is Decimal:
        return "number"
    if isinstance(v, Mapping):
        return frozenset(v)
    return t


def empty_grid(grid: Grid, if_empty: Any) -> Grid:
    """FILTER's 2-D answer when nothing is kept: a row of the array's width and item type
    given as if_empty; one cell holding if_empty when it has the items' type (Excel shows the single value); else
    the empty array (Excel says #CALC!)."""
    if if_empty is None:
        return ()
    width = len(grid[0]) if grid else 0
    sample = next((x for row in grid for x in row if x is not None), None)
    if sample is None:
        return ()
    kind = _kind(sample)
    if type(if_empty) is tuple:
        fits = len(if_empty) == width and all(x is None or _kind(x) == kind for x in if_empty)
        return (if_empty,) if fits else ()
    return ((if_empty,),) if _kind(if_empty) == kind else ()


def filter_grid(rows: tuple[Any, ...], include: tuple[Any, ...],
                if_empty: Any = None) -> Grid:
    """Excel's FILTER over a 2-D array: the rows whose include entry is TRUE or non-zero (the
    columns, when include has as many items as the array has columns)."""
    grid = _checked(rows)
    across = along(grid, len(include), "include")
    lines = transposed(grid) if across else grid
    kept = tuple(line for line, keep in zip(lines, include) if truthy(keep, "include"))
    if not kept:
        return empty_grid(grid, if_empty)
    return transposed(kept) if across else kept


def pick_line(grid: Grid, position: int, across: bool) -> tuple[Any, ...]:
    """Row ``position`` of the array, or its column when ``across``."""
    if across:
        return tuple(row[position] for row in grid)
    return grid[position]
