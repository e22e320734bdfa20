"""Excel's array shaping functions over 2-D arrays (category "lists", re-exported by `lists`):
CHOOSEROWS CHOOSECOLS VSTACK HSTACK TOCOL TOROW WRAPROWS WRAPCOLS.

Contract: a 2-D array is a list of equal-length rows (`_grids`); a flat list is one column, as
everywhere in this language, so VSTACK of lists makes a longer list and HSTACK of lists puts
them side by side as the columns of a 2-D array. Positions are 1-based, negative from the end,
and 0 or past the end is #VALUE! (Excel). Where Excel pads a ragged result with #N/A (VSTACK
of arrays of different widths, HSTACK of different heights, WRAPROWS/WRAPCOLS without
pad_with), a typed list cannot hold an error in one cell: VSTACK and HSTACK answer #VALUE!,
WRAPROWS and WRAPCOLS pad with blanks. Every result's size is checked against the list limit
(`EvalContext.check_list`) before it is built and its cells charged; no polars or SQL form (a
2-D array is not a column).
"""

from __future__ import annotations

from typing import Any

from ..runtime import EvalContext
from ..types import BOOLEAN, NUMBER, T, list_of, optional
from ..values import NUM, VALUE, ErrorValue, XLError
from ._criteria import to_int, truthy
from ._grids import GRID_REFUSED, GRID_TYPE, Grid, grid_rows, transposed
from .spec import Cost, family, p, sig

_GRID = GRID_TYPE
_LIST = list_of(T)
_REFUSED = GRID_REFUSED
#: Every shaping function: no columnar form (a 2-D array is not a column); the result's size
#: is checked and charged (`_build`).
_shaping = family(category="lists", polars=_REFUSED, sql=_REFUSED, cost=Cost.linear(1, 2),
                  needs_ctx=True)


def _build(ctx: EvalContext, cells: int) -> None:
    ctx.check_list(cells)  # before allocating
    ctx.charge(cells + 1)


def _positions(picks: tuple[Any, ...], size: int, what: str) -> list[int]:
    out = []
    for n in picks:
        i = to_int(n, what)
        if i == 0 or abs(i) > size:
            raise XLError(VALUE, f"{what} {i} is outside 1..{size} (or -{size}..-1)")
        out.append(i - 1 if i > 0 else size + i)
    return out


def _chooserows_list(ctx: EvalContext, values: tuple[Any, ...], *picks: Any) -> tuple[Any, ...]:
    _build(ctx, len(picks))
    return tuple(values[i] for i in _positions(picks, len(values), "row"))


@_shaping(
    "CHOOSEROWS",
    sig(p("array", _GRID), p("row_num", NUMBER, doc="1-based; negative counts from the end"),
        returns=_GRID, repeat=1),
    sig(p("list", _LIST), p("row_num", NUMBER), returns=_LIST, repeat=1,
        impl=_chooserows_list),
    doc="The given rows of a 2-D array (items of a list, a column), in the order given; "
        "negative numbers count from the end; 0 or past the end is #VALUE!.",
    examples=["CHOOSEROWS([[1, 2], [3, 4], [5, 6]], 3, 1) -> [[5, 6], [1, 2]]",
              "CHOOSEROWS([[1, 2], [3, 4]], -1) -> [[3, 4]]",
              "CHOOSEROWS([10, 20, 30], 2, 2) -> [20, 20]",
              "CHOOSEROWS([[1, 2]], 2) -> #VALUE!"],
    errors=("#VALUE!",),
)
def chooserows(ctx: EvalContext, rows: tuple[Any, ...], *picks: Any) -> Grid:
    grid = grid_rows(rows)
    _build(ctx, len(picks) * (len(grid[0]) if grid else 0))
    return tuple(grid[i] for i in _positions(picks, len(grid), "row"))


@_shaping(
    "CHOOSECOLS",
    sig(p("array", _GRID), p("col_num", NUMBER, doc="1-based; negative counts from the end"),
        returns=_GRID, repeat=1),
    doc="The given columns of a 2-D array, in the order given; negative numbers count from "
        "the end; 0 or past the last column is #VALUE!.",
    examples=["CHOOSECOLS([[1, 2, 3], [4, 5, 6]], 3, 1) -> [[3, 1], [6, 4]]",
              "CHOOSECOLS([[1, 2, 3], [4, 5, 6]], -1) -> [[3], [6]]",
              "CHOOSECOLS([[1, 2]], 0) -> #VALUE!"],
    errors=("#VALUE!",),
)
def choosecols(ctx: EvalContext, rows: tuple[Any, ...], *picks: Any) -> Grid:
    grid = grid_rows(rows)
    width = len(grid[0]) if grid else 0
    _build(ctx, len(picks) * len(grid))
    cols = _positions(picks, width, "column")
    return tuple(tuple(row[c] for c in cols) for row in grid)


def _vstack_lists(ctx: EvalContext, *lists: tuple[Any, ...]) -> tuple[Any, ...]:
    _build(ctx, sum(len(v) for v in lists))
    return tuple(x for v in lists for x in v)


@_shaping(
    "VSTACK",
    sig(p("array", _GRID), returns=_GRID, repeat=1),
    sig(p("list", _LIST), returns=_LIST, repeat=1, impl=_vstack_lists),
    doc="Stacks 2-D arrays vertically: the rows of each in turn (lists, which are columns, "
        "joined into one); arrays of different widths are #VALUE! (Excel pads with #N/A).",
    examples=["VSTACK([[1, 2]], [[3, 4], [5, 6]]) -> [[1, 2], [3, 4], [5, 6]]",
              "VSTACK([1, 2], [3]) -> [1, 2, 3]",
              "VSTACK([[1, 2]], [[3]]) -> #VALUE!"],
    errors=("#VALUE!",),
)
def vstack(ctx: EvalContext, *arrays: tuple[Any, ...]) -> Grid:
    grids = [grid_rows(a) for a in arrays]
    widths = {len(g[0]) for g in grids if g}
    if len(widths) > 1:
        raise XLError(VALUE, f"the arrays have different widths ({sorted(widths)}); Excel "
                             "would pad them with #N/A")
    _build(ctx, sum(len(g) for g in grids) * (widths.pop() if widths else 0))
    return tuple(row for g in grids for row in g)


def _hstack(ctx: EvalContext, columns: list[Grid]) -> Grid:
    heights = {len(g) for g in columns if g}
    if len(heights) > 1:
        raise XLError(VALUE, f"the arrays have different heights ({sorted(heights)}); Excel "
                             "would pad them with #N/A")
    height = heights.pop() if heights else 0
    _build(ctx, height * sum(len(g[0]) for g in columns if g))
    return tuple(tuple(x for g in columns if g for x in g[r]) for r in range(height))


def _hstack_lists(ctx: EvalContext, *lists: tuple[Any, ...]) -> Grid:
    return _hstack(ctx, [tuple((x,) for x in v) for v in lists])


@_shaping(
    "HSTACK",
    sig(p("array", _GRID), returns=_GRID, repeat=1),
    sig(p("list", _LIST), returns=_GRID, repeat=1, impl=_hstack_lists),
    doc="Puts 2-D arrays side by side: each row joined across the arrays (lists, which are "
        "columns, become the columns of a 2-D array); different heights are #VALUE! (Excel "
        "pads with #N/A).",
    examples=["HSTACK([[1], [2]], [[3, 4], [5, 6]]) -> [[1, 3, 4], [2, 5, 6]]",
              "HSTACK([1, 2], [3, 4]) -> [[1, 3], [2, 4]]",
              "HSTACK([[1], [2]], [[3]]) -> #VALUE!"],
    errors=("#VALUE!",),
)
def hstack(ctx: EvalContext, *arrays: tuple[Any, ...]) -> Grid:
    return _hstack(ctx, [grid_rows(a) for a in arrays])


_IGNORE = p("ignore", NUMBER, 0, "0 keep all, 1 skip blanks, 2 skip errors, 3 skip both")
_SCAN = p("scan_by_column", BOOLEAN, False, "TRUE: read column by column")


def _flat(ctx: EvalContext, rows: tuple[Any, ...], ignore: Any, by_column: Any) -> tuple[Any, ...]:
    grid = grid_rows(rows)
    mode = to_int(ignore, "ignore")
    if mode not in (0, 1, 2, 3):
        raise XLError(VALUE, "ignore must be 0, 1, 2 or 3")
    lines = transposed(grid) if by_column is not None and truthy(by_column) else grid
    _build(ctx, sum(len(r) for r in lines))
    skip_blank, skip_error = mode in (1, 3), mode in (2, 3)
    return tuple(x for line in lines for x in line
                 if not (skip_blank and x is None) and not (skip_error and type(x) is ErrorValue))


def _column(values: tuple[Any, ...]) -> Grid:
    return tuple((x,) for x in values)  # a list is a column


def _tocol_list(ctx: EvalContext, values: tuple[Any, ...], ignore: Any = 0,
                scan_by_column: Any = False) -> tuple[Any, ...]:
    return _flat(ctx, _column(values), ignore, scan_by_column)


def _torow_list(ctx: EvalContext, values: tuple[Any, ...], ignore: Any = 0,
                scan_by_column: Any = False) -> Grid:
    return (_flat(ctx, _column(values), ignore, scan_by_column),)


@_shaping(
    "TOCOL",
    sig(p("array", _GRID), _IGNORE, _SCAN, returns=_LIST),
    sig(p("list", _LIST), _IGNORE, _SCAN, returns=_LIST, impl=_tocol_list),
    doc="A 2-D array as one list (a column), read row by row (column by column with "
        "scan_by_column); ignore skips blanks (1), error values (2) or both (3).",
    examples=["TOCOL([[1, 2], [3, 4]]) -> [1, 2, 3, 4]",
              "TOCOL([[1, 2], [3, 4]], 0, TRUE) -> [1, 3, 2, 4]",
              "TOCOL([[1, BLANK()], [3, 4]], 1) -> [1, 3, 4]",
              "TOCOL([1, BLANK(), 2], 1) -> [1, 2]", "TOCOL([[1]], 4) -> #VALUE!"],
    errors=("#VALUE!",),
)
def tocol(ctx: EvalContext, rows: tuple[Any, ...], ignore: Any = 0,
          scan_by_column: Any = False) -> tuple[Any, ...]:
    return _flat(ctx, rows, ignore, scan_by_column)


@_shaping(
    "TOROW",
    sig(p("array", _GRID), _IGNORE, _SCAN, returns=_GRID),
    sig(p("list", _LIST), _IGNORE, _SCAN, returns=_GRID, impl=_torow_list),
    doc="A 2-D array as one row (a 2-D array of one row), read row by row (column by column "
        "with scan_by_column); ignore skips blanks (1), error values (2) or both (3).",
    examples=["TOROW([[1, 2], [3, 4]]) -> [[1, 2, 3, 4]]",
              "TOROW([[1, 2], [3, 4]], 0, TRUE) -> [[1, 3, 2, 4]]",
              "TOROW([1, 2, 3]) -> [[1, 2, 3]]", "TOROW([[1]], -1) -> #VALUE!"],
    errors=("#VALUE!",),
)
def torow(ctx: EvalContext, rows: tuple[Any, ...], ignore: Any = 0,
          scan_by_column: Any = False) -> Grid:
    return (_flat(ctx, rows, ignore, scan_by_column),)


def _wrap(ctx: EvalContext, values: tuple[Any, ...], count: Any, pad: Any) -> Grid:
    n = to_int(count, "wrap_count")
    if n < 1:
        raise XLError(NUM, "wrap_count must be 1 or more")
    lines = -(-len(values) // n)
    _build(ctx, lines * n)
    padded = values + (pad,) * (lines * n - len(values))
    return tuple(padded[i:i + n] for i in range(0, len(padded), n))


_PAD = p("pad_with", T, None, "fills the last line (blank when omitted; Excel shows #N/A)")


@_shaping(
    "WRAPROWS",
    sig(p("vector", _LIST), p("wrap_count", NUMBER, doc="items per row"), _PAD,
        returns=list_of(list_of(optional(T)))),
    doc="A list cut into rows of wrap_count items (a 2-D array); the last row is filled with "
        "pad_with, or blanks (Excel: #N/A).",
    examples=["WRAPROWS([1, 2, 3, 4], 2) -> [[1, 2], [3, 4]]",
              "WRAPROWS([1, 2, 3], 2, 0) -> [[1, 2], [3, 0]]",
              "WRAPROWS([1, 2, 3], 2) -> [[1, 2], [3, BLANK()]]",
              "WRAPROWS([1], 0) -> #NUM!"],
    errors=("#NUM!",),
)
def wraprows(ctx: EvalContext, values: tuple[Any, ...], wrap_count: Any,
             pad_with: Any = None) -> Grid:
    return _wrap(ctx, values, wrap_count, pad_with)


@_shaping(
    "WRAPCOLS",
    sig(p("vector", _LIST), p("wrap_count", NUMBER, doc="items per column"), _PAD,
        returns=list_of(list_of(optional(T)))),
    doc="A list cut into columns of wrap_count items (a 2-D array of wrap_count rows); the "
        "last column is filled with pad_with, or blanks (Excel: #N/A).",
    examples=["WRAPCOLS([1, 2, 3, 4], 2) -> [[1, 3], [2, 4]]",
              "WRAPCOLS([1, 2, 3], 2, 0) -> [[1, 3], [2, 0]]",
              "WRAPCOLS([1], 0) -> #NUM!"],
    errors=("#NUM!",),
)
def wrapcols(ctx: EvalContext, values: tuple[Any, ...], wrap_count: Any,
             pad_with: Any = None) -> Grid:
    return transposed(_wrap(ctx, values, wrap_count, pad_with))
