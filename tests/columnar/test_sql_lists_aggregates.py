"""The SQL of the list aggregates, criteria, sorts and lookups: written once, decided early.

What this module checks (the forms in `columnar.forms.lists`):

- a sum, variance or deviation of data columns and literal numbers writes no #NUM! test of its
  own (`_base._tracked`): with float columns the compiler tests the result (once, not twice),
  with DECIMAL columns the test could never fire; a product keeps its test (a DOUBLE product of
  DECIMAL items can pass 1e308);
- "no numbers" errors read the aggregate itself (``LIST_AVG(xs) IS NULL``), not a second count;
- values given directly share one SQL list (``["x", 1]``); lengths the compiler knows (a list
  written out, ``MAP(xs, ...)`` beside ``xs``) decide the #VALUE! of mismatched lists; a date
  criteria compares dates; sorts whose keys cannot be blank set nothing aside; an exact
  XLOOKUP of numbers, dates or logicals is the engine's ``LIST_POSITION``.

`FORMULAS` run on DuckDB in both numeric modes and are compared row by row with the scalar
engine (`functions._engines`); the float rows include sums, products and spreads past 1e308
(#NUM!). `SIZES` bounds the characters of each DuckDB query (decimal mode) a little above what
they are now, so the copies removed here cannot come back unnoticed.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from functions import _engines as E

import formulane

duckdb = pytest.importorskip("duckdb")

SCHEMA = {"xs": "List<Number?>", "ys": "List<Number?>", "ks": "List<Number>", "n": "Number",
          "x": "Number?", "ts": "List<Text?>", "ws": "List<Text>", "ds": "List<Date?>",
          "nl": "List<Number>?"}
D = dt.date
ROWS: list[dict[str, Any]] = [
    {"xs": [3.0, 1.0, None, 2.0], "ys": [1.0, 2.0, 4.0, None], "ks": [2.0, 1.0, 2.0, 0.5],
     "n": 2.0, "x": 1.5, "ts": ["a", "B", None, ""], "ws": ["b", "A", "a", "B"],
     "ds": [D(2023, 12, 31), D(2024, 1, 2), None, D(2024, 1, 1)], "nl": [1.0, 2.0]},
    {"xs": [], "ys": [], "ks": [], "n": -1.0, "x": None, "ts": [], "ws": [], "ds": [],
     "nl": None},
    {"xs": [None, None], "ys": [5.0], "ks": [7.0], "n": 0.0, "x": -2.0, "ts": [None, None],
     "ws": ["z"], "ds": [None], "nl": []},
    {"xs": [4.0, 4.0, 4.0], "ys": [4.0, 5.0, 6.0], "ks": [3.0, 3.0, 1.0], "n": 4.0, "x": 0.0,
     "ts": ["a", "a", "b"], "ws": ["c", "b", "a"], "ds": [D(2024, 1, 1)] * 3,
     "nl": [0.5]},
    {"xs": [0.5, -2.0, 7.25, 3.0], "ys": [1.0, 1.0, 2.0, 8.0], "ks": [1.0, 2.0, 3.0, 4.0],
     "n": 7.25, "x": 2.5, "ts": ["Fruits", "fruits", "x", None], "ws": ["a", "b", "c", "d"],
     "ds": [D(2024, 1, 3), None, D(2023, 1, 1), D(2024, 1, 2)], "nl": [3.0, -1.0]},
    # past 1e308 in float mode (#NUM!); decimal mode cannot hold the row and leaves it out
    {"xs": [9e307, 9e307], "ys": [1e300, -1e300], "ks": [1e200, 1e200], "n": 9e307,
     "x": 9e307, "ts": ["a", "b"], "ws": ["a", "b"], "ds": [None, None], "nl": [9e307, 1e307]},
]

FORMULAS = [
    # sums, spreads: no #NUM! test of their own; the compiler's in float mode
    "SUM(xs)", "SUM(x, 1)", "SUM(x, 1, xs, 2)", "SUM(xs, n)", "SUM(nl)", "SUM(xs, ys)",
    "VAR.P(xs)", "VAR.S(xs)", "STDEV.P(xs)", "STDEV.S(xs)", "VAR.P(ys)", "STDEV.S(ks, n)",
    "VAR.S(x, 2)",
    # a product keeps its test; no numbers is 0
    "PRODUCT(xs)", "PRODUCT(ks)", "PRODUCT(x, 3)", "PRODUCT(nl)",
    # no numbers: the aggregate itself is NULL
    # (AVERAGE(xs) of the 9e307 row: DuckDB's DOUBLE mean overflows, the scalar's does not;
    # the same before this module, left for the float policy)
    "AVERAGE(ys)", "MEDIAN(xs)", "MIN(ds)", "MAX(ds)", "AVERAGE(nl)", "MEDIAN(x, 2)",
    # criteria: known lengths, date criteria compared as dates, sums without a test
    'SUMIF(ts, "fruits", [1, 2, 3, 4])', 'SUMIF(xs, ">1")', 'SUMIF(ts, "a", xs)',
    'SUMIFS(xs, ts, "a")', 'AVERAGEIF(ts, "a", [1, 2, 3, 4])',
    'COUNTIF(ds, ">2024-01-01")', 'COUNTIF(ds, "<=2024-01-01")', 'COUNTIF(ds, "2024-01-02")',
    'COUNTIF(ds, "<>2024-01-02")', 'COUNTIF(ds, ">45292.5")', 'COUNTIF(ds, "<45293")',
    'COUNTIF(ds, ">=" & 45292)', 'COUNTIF(ds, "=45292")',
    "COUNTBLANK(ts)", "COUNTBLANK(xs)", 'COUNTIF(ts, "a")', 'COUNTIF(ds, ">1E12")',
    'COUNTIF(ds, "<-5")', 'COUNTIF(ds, "=45292.5")',
    # sorts whose keys cannot be blank; known lengths
    "SORT(ws)", "SORT(ws, -1)", "SORT(ts)", 'SORT(["b", "A", "a", "B"])',
    "SORTBY(ws, ks)", "SORTBY(ws, ks, -1)", 'SORTBY(["p", "q", "r", "s"], xs)',
    'SORTBY(["p", "q", "r", "s"], ks)',
    # lookups: LIST_POSITION for exact searches of numbers; lengths a MAP keeps
    "XLOOKUP(n, xs, ys)", "XLOOKUP(n, ks, ys, 0)", "XLOOKUP(n, xs, ys, 0, 0, -1)",
    "XLOOKUP(x, xs, ys)", "XLOOKUP(n, xs, MAP(xs, v => v ?? 0))", "MATCH(n, ks, 0)",
    "XMATCH(n, xs)", "INDEX(xs, 2)", "INDEX(xs, n)", "INDEX(ks, 1)",
    # INDEX of a MATCH position: no guard but past the end of another list
    "INDEX(ys, MATCH(n, xs, 0))", "INDEX(xs, MATCH(n, xs, 0))", "INDEX(ws, XMATCH(n, ks, 0, -1))",
    "INDEX(ys, MATCH(n, MAP(xs, v => v ?? 0), 0))", 'INDEX(ws, MATCH("b", ws, 0))',
    # FILTER by a list of flags: known lengths decide #VALUE!
    "FILTER(ws, [TRUE, FALSE, TRUE, TRUE])", "FILTER([1, 2, 3], [TRUE, FALSE, TRUE])",
    "FILTER([1, 2, 3], [TRUE, FALSE])", "SUM(FILTER(ks, v => v > 1))",
]


@pytest.mark.parametrize("mode", ["decimal", "float"])
@pytest.mark.parametrize("formula", FORMULAS)
def test_list_forms_agree_with_the_scalar_engine(formula: str, mode: str) -> None:
    rows = E.rows_for(mode, ROWS)
    want = E.run_scalar(formula, SCHEMA, rows, profile="strict")
    have = E.run_duckdb(formula, SCHEMA, rows, mode, profile="strict")
    E.assert_agree(f"{formula} on DuckDB ({mode})", rows, want, have)


#: Date criteria are compared as dates on polars too (the predicate builders are shared).
DATE_CRITERIA = [f for f in FORMULAS if f.startswith("COUNTIF(ds")]


@pytest.mark.parametrize("mode", ["decimal", "float"])
@pytest.mark.parametrize("formula", DATE_CRITERIA)
def test_date_criteria_agree_on_polars(formula: str, mode: str) -> None:
    rows = E.rows_for(mode, ROWS)
    want = E.run_scalar(formula, SCHEMA, rows, profile="strict")
    have = E.run_polars(formula, SCHEMA, rows, mode, profile="strict")
    E.assert_agree(f"{formula} on polars ({mode})", rows, want, have)


def _sql(formula: str, mode: str = "decimal") -> str:
    sql: Any = formulane.compile(formula, SCHEMA).to_sql("duckdb", mode).select("t")
    return str(sql)


#: (formula, the most characters its DuckDB query may have in decimal mode; before this module)
SIZES = [
    ("SUM(xs)", 450),  # was 243; 60 before list items were read exactly (their text)
    ("SUM(x, 1)", 360),  # was 281; 64 before decimal sums ran under TRY
    ("VAR.P(xs)", 460),  # was 395; 290 before FLOAT[] items were read through their text
    ("PRODUCT(xs)", 470),  # was 345; 250 before the items' range test
    ("AVERAGE(xs)", 445),  # was 224; 220 before list items were read exactly
    ('SUMIF(ts, "fruits", [1, 2, 3, 4])', 300),  # was 441
    ("XLOOKUP(n, xs, ys)", 575),  # was 393; 300 before the item picked was read through its text
    ("COUNTBLANK(ts)", 90),  # was 104
    ('COUNTIF(ds, ">2024-01-01")', 100),  # was 134
    ('SORT(["b", "A", "a", "B"])', 210),  # was 302
    ("INDEX(ys, MATCH(n, xs, 0))", 610),  # was 680; 330 before the item picked was read through its text
]


@pytest.mark.parametrize("formula, most", SIZES, ids=[f for f, _ in SIZES])
def test_sql_of_list_aggregates_stays_small(formula: str, most: int) -> None:
    sql = _sql(formula)
    assert len(sql) <= most, f"{len(sql)} characters:\n{sql}"


def test_the_range_test_of_a_sum_is_written_once() -> None:
    # decimal: a DECIMAL sum cannot reach 1e308 (no test); float: the compiler's test only
    assert "1e308" not in _sql("SUM(xs)")
    assert _sql("SUM(xs)", "float").count("1e308") == 1
    assert _sql("VAR.P(xs)", "float").count("1e308") == 1
    # a product of DECIMAL items is a DOUBLE: its test stays, once; the value is NULL there
    # (the SQL table flags PRODUCT null_on_error: no wrapper reads the error instead)
    product = _sql("PRODUCT(xs)")
    assert product.count(">= 1e308") == 1 and product.count("< 1e308") == 1
    assert "IS NULL THEN" not in product


def test_a_sum_of_a_computed_list_keeps_its_range_test() -> None:
    # the compiler does not track whether a computed list holds DOUBLEs: the form tests
    assert "1e308" in _sql("SUM(MAP(xs, v => v ?? 0))", "float")
