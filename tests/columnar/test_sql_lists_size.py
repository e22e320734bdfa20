"""The SQL of the lists family: small where the compiler knows, and the scalar's answers.

The SQL forms of the list, lookup and statistics functions decide at compile time what their
literal arguments fix (a known position, k, count or length; a literal list's blanks and
spread) and compute once what they read twice (`FormCall.let`). Two checks:

- `DECIDED`: formulas whose literal arguments take every decided branch (positions below 0, 0,
  inside and past the end; k out of range; empty, blank-only and flat literal lists), next to
  the same functions with the argument read from the data, run on DuckDB in both numeric modes
  and compared row by row with the scalar engine (`functions._engines`);
- `SIZES`: the characters of the whole DuckDB query (decimal mode) stay within a bound per
  formula, a little above what they are today (bench/columnar_sql_size.py shows the
  distribution over every golden case), so the growth this module removed cannot come back
  unnoticed.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from functions import _engines as E

import formulane

duckdb = pytest.importorskip("duckdb")

REGISTRY = formulane.default_registry().with_packs("statistics")
SCHEMA = {"xs": "List<Number?>", "ys": "List<Number?>", "n": "Number"}
Q = Decimal
ROWS = [
    {"xs": [Q(3), Q(1), Q(2), None, Q(5)], "ys": [Q(1), Q(2), None, Q(4), Q(5)], "n": Q(2)},
    {"xs": [], "ys": [], "n": Q(-1)},
    {"xs": [Q(4)], "ys": [Q(4)], "n": Q(0)},
    {"xs": [Q(1), Q(1), Q(1)], "ys": [Q(2), Q(3), Q(4)], "n": Q("3.5")},
    {"xs": [Q(2), None], "ys": [None, Q(2)], "n": Q(9)},
    {"xs": [Q("0.5"), Q(-2), Q("7.25"), Q(3)], "ys": [Q(1), Q(1), Q(2), Q(8)], "n": Q(1)},
]

DECIDED = [
    # INDEX: a known position reads the item directly; a known length decides #REF!
    "INDEX(xs, 2)", "INDEX(xs, -1)", "INDEX(xs, 0)", "INDEX(xs, 9)", "INDEX(xs, n)",
    "INDEX(xs, 2, 1)", "INDEX(xs, 1, 3)", "INDEX(xs, 2, 2)", "INDEX(xs, -1, 1)",
    "INDEX(xs, 0, 0)", "INDEX(xs, n, 1)", "INDEX(xs, 1, n)", "INDEX([10, 20, 30], 3, 1)",
    "INDEX([10, 20, 30], 4)", "INDEX([10, 20, 30], n)",
    # LARGE / SMALL: a known k
    "LARGE(xs, 1)", "LARGE(xs, 2.5)", "SMALL(xs, 0.5)", "SMALL(xs, 0)", "LARGE(xs, 1E15)",
    "SMALL([3, 1, BLANK(), 2], 3)", "LARGE([1, 2], 3)", "LARGE(xs, n)",
    # PERCENTILE.INC / QUARTILE.INC: a known k, a known count
    "PERCENTILE.INC(xs, 0.3)", "PERCENTILE.INC(xs, 1.5)", "PERCENTILE.INC(xs, -0.1)",
    "PERCENTILE.INC([1, 3, 2, 4], 0.3)", "PERCENTILE.INC([1, 2, 3], 1)",
    "PERCENTILE.INC([BLANK()], 0.5)", "PERCENTILE.INC(xs, n / 4)", "QUARTILE.INC(xs, 1)",
    "QUARTILE.INC(xs, 5)", "QUARTILE.INC([1, 2, 3, 4], 3)", "QUARTILE.INC(xs, n)",
    # TAKE / DROP: a known count, a known length
    "TAKE(xs, 2)", "TAKE(xs, -2)", "TAKE(xs, 0)", "TAKE([1, 2, 3], -5)", "TAKE(xs, n)",
    "DROP(xs, 1)", "DROP(xs, -1)", "DROP([1, 2, 3], 5)", "DROP([1, 2, 3], -5)", "DROP(xs, n)",
    # aggregates over literal lists whose count is known
    "STDEV.P(BLANK())", "STDEV.S([5])", "STDEV.S([5, n])", "AVERAGE([1, BLANK()])", "MEDIAN(BLANK())",
    "PRODUCT(BLANK())", "MEDIAN(xs)", "VAR.S(xs)", "STDEV.P(xs)", "SUM(xs, n)",
    # two-list statistics: known lengths, pair counts and spreads
    "CORREL([1, 1], [2, 3])", "CORREL([1, 2], [2, 3])", "SLOPE([1, 2], [1])",
    "COVARIANCE.S([1], [5])", "COVARIANCE.S(xs, ys)", "CORREL(xs, ys)", "INTERCEPT(xs, ys)",
    "RSQ(ys, xs)", "SLOPE([1, 2, 3], [n, 2, 4])",
    # lookups and criteria
    "XLOOKUP(n, xs, ys, 0)", "XLOOKUP(n, xs, ys)", "XMATCH(n, xs, 1)", "MODE.SNGL(xs)",
    "RANK.EQ(n, xs)", 'SUMIF(xs, ">1", ys)', 'AVERAGEIF(xs, "<>2")', 'COUNTIF(xs, "<>2")',
    'COUNTIFS(xs, ">1", ys, "<>4")', 'SUMIFS(ys, xs, "<=3")',
    "SEQUENCE(3, 1, 10, 5)", "SUM(SEQUENCE(4, 1, n, 2))", "AVEDEV(xs)", "DEVSQ([2, 2, 2])",
    "COUNTBLANK(xs)",
    # decimal mode: a filtered column's sum or deviation needs no range test of its own
    "SUM(FILTER(xs, x => (x ?? 0) > 1))", "STDEV.P(FILTER(xs, x => (x ?? 0) <> 2))",
    "PRODUCT(xs)", "PRODUCT(FILTER(xs, x => (x ?? 0) > 1))",
]


@pytest.mark.parametrize("mode", ["decimal", "float"])
@pytest.mark.parametrize("formula", DECIDED)
def test_decided_forms_agree_with_the_scalar_engine(formula: str, mode: str) -> None:
    rows = E.rows_for(mode, ROWS)
    want = E.run_scalar(formula, SCHEMA, rows, profile="strict", registry=REGISTRY)
    have = E.run_duckdb(formula, SCHEMA, rows, mode, profile="strict", registry=REGISTRY)
    E.assert_agree(f"{formula} on DuckDB ({mode})", rows, want, have)


#: (formula, the most characters its DuckDB query may have in decimal mode)
SIZES = [
    ("INDEX([10, 20, 30], 3, 1)", 60),  # was 4,056
    ("INDEX(xs, 2)", 355),  # 220 before the item picked was read through its text
    ("COVARIANCE.S([1], [5])", 70),  # was 2,665
    ("SLOPE([1, 2], [1])", 70),  # was 3,089
    ("PERCENTILE.INC([1, 2], 1.5)", 70),  # was 1,907
    ("PERCENTILE.INC([1, 3, 2, 4], 0.3)", 260),  # was 2,039
    ("STDEV.P(BLANK())", 70),  # was 777
    ("STDEV.S(xs)", 720),  # 650 before FLOAT[] items were read through their text
    ("CORREL(xs, ys)", 2280),  # 1850 before FLOAT[] items were read through their text
    ("TAKE([1, 2, 3, 4], 2)", 80),  # was 418
    ("DROP([1, 2], 9)", 80),  # was 399
    ('SUMIF(xs, "a", ys)', 820),  # 520 before summed items were read exactly
    ("LARGE(xs, 2)", 465),  # 330 before the item picked was read through its text
    ("SUM(FILTER(xs, x => (x ?? 0) > 100))", 590),  # was 348; 110 before list items were read exactly
]


@pytest.mark.parametrize("formula, most", SIZES, ids=[f for f, _ in SIZES])
def test_sql_of_lists_forms_stays_small(formula: str, most: int) -> None:
    program = formulane.compile(formula, SCHEMA, registry=REGISTRY)
    sql = program.to_sql("duckdb", "decimal").select("t")
    assert len(sql) <= most, f"{len(sql)} characters:\n{sql}"


def test_a_literal_position_reads_the_item_directly() -> None:
    sql: Any = formulane.compile("INDEX([10, 20, 30], 3, 1)", SCHEMA).to_sql(
        "duckdb", "decimal").select("t")
    assert "TRUNC" not in sql and "CASE" not in sql, sql
