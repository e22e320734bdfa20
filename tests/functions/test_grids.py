"""2-D arrays (functions/_grids.py and the 2-D overloads of SORT, SORTBY, FILTER, UNIQUE,
SEQUENCE, XLOOKUP, LOOKUP): Hypothesis laws that tie the row and column forms together and to
the 1-D functions, through the engine where the profile matters, and the typed refusal of
VLOOKUP over a list of records."""

from __future__ import annotations

from decimal import Decimal as D
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import formulane
from formulane.functions import _grids
from formulane.functions._criteria import eq_key
from formulane.values import XLError

cells = st.one_of(st.integers(-3, 3).map(D), st.sampled_from(["a", "A", "b", "B", "c"]),
                  st.booleans(), st.none())
number_cells = st.integers(-5, 5).map(D)


@st.composite
def grids(draw: st.DrawFn, items: st.SearchStrategy[Any] = cells, min_rows: int = 0) -> tuple:
    height = draw(st.integers(min_rows, 6))
    width = draw(st.integers(1, 5))
    return tuple(tuple(draw(items) for _ in range(width)) for _ in range(height))


def T(grid: tuple) -> tuple:
    return _grids.transposed(grid)


@given(grids(min_rows=1), st.integers(1, 5), st.sampled_from([1, -1]))
def test_sort_by_col_is_sort_of_the_transpose(grid: tuple, index: int, order: int) -> None:
    width = len(grid[0])
    if index > width:
        with pytest.raises(XLError):
            _grids.sort_grid(grid, index, order)
        return
    rows = _grids.sort_grid(grid, index, order)
    assert sorted(map(repr, rows)) == sorted(map(repr, grid))  # a permutation of the rows
    assert T(_grids.sort_grid(T(grid), index, order, True)) == rows


@given(grids(number_cells, min_rows=1), st.sampled_from([1, -1]))
def test_sorted_rows_are_ordered_and_stable(grid: tuple, order: int) -> None:
    rows = _grids.sort_grid(grid, 1, order)
    keys = [r[0] for r in rows]
    assert keys == sorted(keys, reverse=order == -1)
    for k in set(keys):  # equal keys keep their first-seen order
        assert [r for r in rows if r[0] == k] == [r for r in grid if r[0] == k]


@given(grids(), st.booleans())
def test_unique_rows_and_columns(grid: tuple, once: bool) -> None:
    rows = _grids.unique_grid(grid, False, once)
    keys = [eq_key(r) for r in rows]
    assert len(keys) == len(set(keys))
    if not once:
        assert {eq_key(r) for r in grid} == set(keys)
    assert _grids.unique_grid(grid, True, once) == T(_grids.unique_grid(T(grid), False, once))


@given(grids(min_rows=1), st.data())
def test_filter_keeps_rows_or_columns(grid: tuple, data: st.DataObject) -> None:
    height, width = len(grid), len(grid[0])
    mask = tuple(data.draw(st.lists(st.booleans(), min_size=height, max_size=height)))
    kept = _grids.filter_grid(grid, mask)
    assert kept == tuple(r for r, m in zip(grid, mask) if m)
    if width != height:
        cmask = tuple(data.draw(st.lists(st.booleans(), min_size=width, max_size=width)))
        assert _grids.filter_grid(grid, cmask) == T(_grids.filter_grid(T(grid), cmask))


@given(grids(number_cells, min_rows=1), st.data())
def test_sortby_a_key_column_is_sort_by_that_column(grid: tuple, data: st.DataObject) -> None:
    keys = tuple(data.draw(st.lists(number_cells, min_size=len(grid), max_size=len(grid))))
    with_keys = tuple(r + (k,) for r, k in zip(grid, keys))
    expected = tuple(r[:-1] for r in _grids.sort_grid(with_keys, len(with_keys[0]), -1))
    assert _grids.sortby_grid(grid, keys, -1) == expected  # keys as long as the rows: rows


def run(expr: str, profile: str = "excel") -> Any:
    return formulane.compile(expr, {}, profile=profile).evaluate({})


@given(st.integers(0, 6), st.integers(1, 6), st.integers(-3, 3), st.integers(-2, 2))
def test_sequence_grid_reads_as_the_strict_list(rows: int, cols: int, start: int,
                                                step: int) -> None:
    expr = f"SEQUENCE({rows}, {cols}, {start}, {step})"
    grid = run(expr)
    assert all(len(r) == cols for r in grid) and len(grid) == rows
    assert [x for r in grid for x in r] == list(run(expr, "strict"))


@given(grids(number_cells, min_rows=1), st.integers(0, 6))
def test_xlookup_row_is_the_row_at_xmatch(grid: tuple, key: int) -> None:
    keys = [r[0] for r in grid]
    got = _xlookup(grid, key)
    if D(key) in keys:
        assert got == grid[keys.index(D(key))]
    else:
        assert got is None


def _xlookup(grid: tuple, key: int) -> Any:
    program = formulane.compile("XLOOKUP(k, MAP(t, r => INDEX(r, 1)), t)",
                                {"t": "List[List[Number]]", "k": "Number"}, profile="excel")
    out = program.evaluate({"t": [list(r) for r in grid], "k": key})
    return None if isinstance(out, formulane.ErrorValue) else tuple(out)


@pytest.mark.parametrize("profile", ["strict", "excel"])
@pytest.mark.parametrize("name", ["VLOOKUP", "HLOOKUP"])
def test_table_lookups_refuse_records_with_a_hint(profile: str, name: str) -> None:
    with pytest.raises(formulane.FormulaError) as info:
        formulane.compile(f"{name}(9, orders, 2, FALSE)",
                          {"orders": "List[Record{id: Number, item: Text}]"}, profile=profile)
    assert info.value.code == "E202"
    assert "XLOOKUP(key, MAP(records, r => r.id), records)" in (info.value.hint or "")
    assert "no field order" in (info.value.hint or "")
