"""`formulane.apply` reads and writes polars columns by exact name (issue 15, item 8).

`pl.col` takes ``*`` as every column and ``^...$`` as a regular expression over the names: a
column named ``^price.*$`` once made a formula silently compute on ``price_secret``. Each row of
`CASES` is a frame, a formula set and the outcome on an eager and a lazy frame:

- a dict: the output columns' first-row values (the exact column was read);
- an error code: a clear `FormulaError` with that code, never polars' own exception and never
  a regex expansion.
"""

from __future__ import annotations

from typing import Any

import pytest

import formulane
from formulane import FormulaError

pl = pytest.importorskip("polars")

BASE = {"^price.*$": [2.0], "price_secret": [1000.0], "*": [3.0], "^.*$": [5.0],
        "qty": [4.0], "a.b": [7.0], "name": ["ann"]}

#: (case id, extra columns, formulas, expected outputs or an error code)
CASES: list[tuple[str, dict[str, list[Any]], dict[str, str], Any]] = [
    ("regex-looking column read exactly", {}, {"out": "{^price.*$} * qty"}, {"out": 8.0}),
    ("star column read exactly", {}, {"out": "{*} + 1"}, {"out": 4.0}),
    ("match-all regex column read exactly", {}, {"out": "{^.*$} * 2"}, {"out": 10.0}),
    ("dotted column name", {}, {"out": "{a.b} + 1"}, {"out": 8.0}),
    ("output named star", {}, {"*": "qty * 2"}, {"*": 8.0}),
    ("output named like a regex", {}, {"^q.*$": "qty / 2"}, {"^q.*$": 2.0}),
    ("output with an error column named star", {}, {"*": "1 / (qty - 4)"},
     {"*": None, "*__error": "#DIV/0!"}),
    ("output named like a regex with an error column", {}, {"^.*$": "qty / (qty - 4)"},
     {"^.*$": None, "^.*$__error": "#DIV/0!"}),
    ("regex output reads regex input", {}, {"^.*$": "{^.*$} / {*}"}, {"^.*$": 5.0 / 3.0}),
    ("error column collides with another output", {},
     {"a": "1 / qty", "a__error": "qty"}, "E209"),
    ("output collides with an error column declared first", {},
     {"a__error": "qty", "a": "1 / qty"}, "E209"),
    ("empty output name", {}, {"": "qty"}, "E209"),
    ("output replaces an input column", {}, {"qty": "qty + 1"}, {"qty": 5.0}),
    ("missing column", {}, {"out": "{nope} + 1"}, "E201"),
    ("record field named star",
     {"r": [{"*": 1.0, "b": 2.0}]}, {"out": "r.b"}, "E213"),
    ("record field named like a regex",
     {"r": [{"^b.*$": 1.0, "bx": 2.0}]}, {"out": "r.{^b.*$}"}, "E213"),
]


def _frame(extra: dict[str, list[Any]]) -> Any:
    return pl.DataFrame({**BASE, **extra})


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("case_id,extra,formulas,expected", CASES, ids=[c[0] for c in CASES])
def test_columns_by_exact_name(case_id: str, extra: dict[str, list[Any]],
                               formulas: dict[str, str], expected: Any, lazy: bool) -> None:
    frame = _frame(extra)
    if lazy:
        frame = frame.lazy()
    if isinstance(expected, str):
        with pytest.raises(FormulaError) as info:
            out = formulane.apply(frame, formulas)
            if lazy:
                out.collect()
        assert info.value.code == expected, info.value.message
        return
    out = formulane.apply(frame, formulas)
    if lazy:
        out = out.collect()
    row = out.row(0, named=True)
    for name, value in expected.items():
        got = row[name]
        if isinstance(value, float):
            assert got == pytest.approx(value), (name, got)
        else:
            assert got == value, (name, got)
    # the input columns are untouched (except one a formula replaces on purpose)
    for name, values in BASE.items():
        if name not in formulas:
            assert row[name] == values[0], name
    assert row["price_secret"] == 1000.0


def test_blank_count_reads_columns_by_exact_name(tmp_path: Any) -> None:
    """`formulane apply`'s blank count (`reading.file_types`) counts the column named
    ``^price.*$``, not the columns the pattern matches: a blank there makes it ``Number?``, and a
    declared non-blank column holding one names its own first blank row."""
    from formulane.columnar.polars.reading import file_types
    from formulane.types import NUMBER, optional

    path = tmp_path / "t.parquet"
    pl.DataFrame({"^price.*$": [1.0, None, 3.0], "price_secret": [1.0, 2.0, 3.0],
                  "qty": [1.0, 2.0, None]}).write_parquet(path)
    frame = pl.scan_parquet(path)
    types = file_types(frame, path, "parquet", {}, only={"^price.*$", "price_secret"})
    assert types["^price.*$"] == optional(NUMBER)
    assert types["price_secret"] == NUMBER
    with pytest.raises(FormulaError) as info:
        file_types(frame, path, "parquet", {"^price.*$": NUMBER})
    assert info.value.code == "E303" and "row 2" in info.value.message, info.value.message
