"""PostgreSQL's float8 range: one row out of range answers that row, never fails the query.

PostgreSQL's float8 `+`, `-`, `*`, `/` and POWER raise "value out of range:
overflow/underflow" where IEEE (DuckDB, Spark, the scalar engine) answers inf or 0, so a single
row with 1e200 * 1e200 or 1e308 + 1e308 failed the whole query. `dialects.adapt` guards them
on PostgreSQL (docs/columnar.md, "Engine notes"); and ROUND to digits, which PostgreSQL has for NUMERIC only, reads a float8 operand as
NUMERIC (a decimal-mode query over a table's DOUBLE PRECISION columns). Each test runs on a
real server, over a table whose rows reach the edges (overflow, underflow, 0, negatives, NaN
and infinities) beside ordinary rows, and compares every row with DuckDB over the same DOUBLE
table and with the scalar engine where it reads the row.

Needs ``FORMULANE_TEST_POSTGRES_URL`` (`.ci/run` starts a server and sets it) and psycopg.
"""

from __future__ import annotations

import math
import os
import sys
from decimal import Decimal
from typing import Any

import duckdb
import pytest

import formulane
from functions import _engines as E

psycopg = pytest.importorskip("psycopg")
URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")

pytestmark = pytest.mark.skipif(not URL, reason="FORMULANE_TEST_POSTGRES_URL is not set (a "
                                                "PostgreSQL server URL; .ci/run starts one)")

SCHEMA = {"x": "Number", "y": "Number"}

#: Rows where one operation or another leaves the double range, beside ordinary ones: only
#: those rows answer #NUM! or 0, the others keep their answers.
EDGES: list[tuple[float, float]] = [
    (2.0, 3.0), (1e200, 1e200), (1e-200, 1e-200), (-1e200, 1e200), (-1e-200, 1e-200),
    (0.0, -1.0), (1e300, 1e-300), (1e-300, 1e300), (1.5, -2.5), (1e308, 10.0), (-7.0, 0.5),
    (5e-324, 0.25), (1e-310, 1e10), (3.0, 1e-320), (-0.5, 1e6), (1.7e308, 0.5),
    # sums and differences: past the double range (PostgreSQL raised), at 1e308 and over
    # (finite: #NUM! too), back inside it, at a literal's bound (x + 1e292 overflows from
    # the largest double on, not from the one below it)
    (1e308, 1e308), (-1.7e308, -1e308), (1e308, -1e308), (8e307, 8e307), (9e307, -9e307),
    (1.7976931348623157e308, 1e292), (1.7976931348623155e308, -1e292), (1e292, -1e308),
]
#: NaN and the infinities (a DOUBLE column can hold them; every engine answers #NUM!).
NOT_FINITE: list[tuple[float, float]] = [(math.nan, 1.0), (2.0, math.inf), (-math.inf, 0.5),
                                        (math.inf, 0.0)]

FLOAT_FORMULAS = [
    "x * y", "x / y", "x ^ y", "POWER(x, 3)", "POWER(x, -2)", "POWER(x, 0.5)", "POWER(10, y)",
    "POWER(0.5, y)", "x * 2", "x * 0.25", "x * -3", "x / 3", "x / 0.5", "y / -1e-10",
    "SQRT(ABS(x)) * y", "x * y / (x / y)", "IF(x * y > 1, 1, 0)", "ABS(x * y) * 2",
    "x + y", "x - y", "x + 1", "x + 1e292", "x - 1e292", "1e300 - x", "-1e300 - x",
    "y - -1e300", "(x + y) / 2", "x + y - 1", "IF(x + y > 0, 1, 2)", "ISERROR(x - y)",
]


def _postgres(formula: str, numbers: str, rows: list[tuple[float, float]]) -> list[Any]:
    query = formulane.sql_select("t", {"out": formula}, SCHEMA, dialect="postgres",
                                 numbers=numbers)
    with psycopg.connect(URL, autocommit=True) as con:
        con.execute('CREATE TEMP TABLE t ("__row" INTEGER, x DOUBLE PRECISION, '
                    'y DOUBLE PRECISION)')
        with con.cursor() as cursor:
            cursor.executemany("INSERT INTO t VALUES (%s, %s, %s)",
                               [(i, x, y) for i, (x, y) in enumerate(rows)])
        cursor = con.execute(f'SELECT * FROM ({query}) AS q ORDER BY "__row"')
        names = [d.name for d in cursor.description]
        return [(r["out"], r.get("out__error")) for r in
                (dict(zip(names, row)) for row in cursor.fetchall())]


def _duckdb(formula: str, numbers: str, rows: list[tuple[float, float]]) -> list[Any]:
    query = formulane.sql_select("t", {"out": formula}, SCHEMA, dialect="duckdb",
                                 numbers=numbers)
    con = duckdb.connect()
    con.execute('CREATE TABLE t ("__row" INTEGER, x DOUBLE, y DOUBLE)')
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, x, y) for i, (x, y) in enumerate(rows)])
    cursor = con.execute(f'SELECT * FROM ({query}) ORDER BY "__row"')
    names = [d[0] for d in cursor.description]
    return [(r["out"], r.get("out__error")) for r in
            (dict(zip(names, row)) for row in cursor.fetchall())]


def _same(a: Any, b: Any) -> bool:
    (va, ea), (vb, eb) = a, b
    if ea != eb:
        return False
    if isinstance(va, float) and isinstance(vb, float) and math.isnan(va) and math.isnan(vb):
        return True
    return E.same_value(va, vb) if va is not None and vb is not None else va is vb is None


@pytest.mark.parametrize("formula", FLOAT_FORMULAS)
def test_float_rows_out_of_range_answer_as_duckdb_and_the_scalar_engine(formula: str) -> None:
    rows = EDGES + NOT_FINITE
    got = _postgres(formula, "float", rows)  # failed the whole query before
    duck = _duckdb(formula, "float", rows)
    bad = [(rows[i], got[i], duck[i]) for i in range(len(rows)) if not _same(got[i], duck[i])]
    assert not bad, f"{formula}: PostgreSQL / DuckDB differ on {bad}"
    # the scalar engine reads numbers below 1e308 (E301 past it), as decimals: a subnormal
    # double's few digits are not its value there
    held = [i for i, row in enumerate(EDGES)
            if all(v == 0 or sys.float_info.min <= abs(v) < 1e308 for v in row)]
    dicts = [{"x": EDGES[i][0], "y": EDGES[i][1]} for i in held]
    expected = E.run_scalar(formula, SCHEMA, dicts, profile="strict")
    E.assert_agree(f"{formula} on PostgreSQL (float)", dicts, expected, [got[i] for i in held])


def test_one_row_out_of_range_leaves_the_others_their_answers() -> None:
    rows = [(2.0, 3.0), (1e200, 1e200), (-4.0, 0.5), (1e-200, 1e-200), (10.0, -1.0)]
    assert _postgres("x * y", "float", rows) == [
        (6.0, None), (None, "#NUM!"), (-2.0, None), (0.0, None), (-10.0, None)]
    assert _postgres("x ^ y", "float", rows) == [
        (8.0, None), (None, "#NUM!"), (None, "#NUM!"), (1.0, None), (0.1, None)]


def test_one_sum_out_of_range_leaves_the_others_their_answers() -> None:
    # PostgreSQL raised "value out of range: overflow" for the whole query (1e308 + 1e308)
    rows = [(2.0, 3.0), (1e308, 1e308), (-1e308, 1e308), (-1.7e308, -1e308), (4.0, -0.5)]
    assert _postgres("x + y", "float", rows) == [
        (5.0, None), (None, "#NUM!"), (0.0, None), (None, "#NUM!"), (3.5, None)]
    assert _postgres("x - y", "float", rows) == [
        (-1.0, None), (0.0, None), (None, "#NUM!"), (-6.999999999999999e307, None), (4.5, None)]
    # a literal operand: the bound on x is settled when compiling
    assert _postgres("x - 1e300", "float", [(-1.7976931348623157e308, 0.0), (5.0, 0.0)]) == [
        (None, "#NUM!"), (-1e300, None)]


def test_sums_in_decimal_mode_over_double_precision_columns() -> None:
    # decimal mode tests the float8 sum for its range first (`x + CAST(y AS DOUBLE
    # PRECISION)`), which raised on PostgreSQL past the double range
    rows = [(2.5, 3.25), (1e308, 1e308), (-1.7e308, -1e308), (1.5, -0.25)]
    assert _postgres("x + y", "decimal", rows) == [
        (Decimal("5.75"), None), (None, "#NUM!"), (None, "#NUM!"), (Decimal("1.25"), None)]


#: The float8 aggregates of numbers (PostgreSQL's SUM and AVG raise "value out of range" where
#: DuckDB's answer inf): on PostgreSQL each is refused today (the forms call DuckDB's LIST_SUM,
#: LIST_AVG...), so none reaches the engine; one that compiles there must run these rows.
AGGREGATES = ["SUM(x, y)", "SUM(x)", "AVERAGE(x, y)", "AVERAGE(x)", "STDEV(x, y)",
              "STDEV.P(x, y)", "VAR(x, y)", "PRODUCT(x, y)", "MEDIAN(x, y)", "MAX(x, y)"]


@pytest.mark.parametrize("formula", AGGREGATES)
def test_aggregates_refused_or_answered_never_a_failed_query(formula: str) -> None:
    rows = [(1e308, 1e308), (2.0, 3.0), (-1.7e308, -1e308), (1e308, -1e308)]
    try:
        got = _postgres(formula, "float", rows)
    except formulane.Unsupported as exc:
        assert exc.code == "E213" and "PostgreSQL" in str(exc), exc
        return
    duck = _duckdb(formula, "float", rows)
    assert all(_same(g, d) for g, d in zip(got, duck)), (got, duck)


#: Decimal mode over a user's DOUBLE PRECISION columns (ROUND to digits is NUMERIC's only on
#: PostgreSQL): the rows a DECIMAL(38, 18) holds, beside rows it does not (#NUM!). PostgreSQL
#: reads a float8 as NUMERIC by its 15 significant digits, as the scalar engine reads a float
#: (2.675 rounds to 2.68 there; DuckDB's ROUND of the DOUBLE answers 2.67).
DECIMAL_FORMULAS = ["x * y", "SQRT(ABS(x)) * y", "ROUND(x, 2)", "ROUND(x * y, 1)", "x * 0.9",
                    "x / y", "x ^ 2"]
DECIMAL_ROWS: list[tuple[float, float]] = [
    (2.0, 3.0), (2.675, 1.5), (-1.25, 4.0), (0.1, 0.2), (123456.789, -0.001), (0.0, 7.0),
    (1e9, -1e9), (0.333333333333333, 3.0),
]
#: Rows no DECIMAL(38, 18) holds, or whose products leave the double range: the query runs
#: (#NUM! or the decimal policy's answer on those rows), the rows above keep theirs.
DECIMAL_EDGES: list[tuple[float, float]] = [(1e200, 1e200), (1e-200, 1e-200), (1e300, 1e-300)]


@pytest.mark.parametrize("formula", DECIMAL_FORMULAS)
def test_decimal_mode_over_double_precision_columns(formula: str) -> None:
    # "function round(double precision, integer) does not exist" failed the query before
    got = _postgres(formula, "decimal", DECIMAL_ROWS + DECIMAL_EDGES)[:len(DECIMAL_ROWS)]
    dicts = [{"x": x, "y": y} for x, y in DECIMAL_ROWS]
    expected = E.run_scalar(formula, SCHEMA, dicts, profile="strict")
    E.assert_agree(f"{formula} on PostgreSQL (decimal over float8)", dicts, expected, got,
                   decimal_limit=Decimal("1e20"))


#: Formulas whose guards meet an integer column (`"b" * 'Infinity'` failed to parse there:
#: "invalid input syntax for type integer", on every row, in decimal mode too).
INTEGER_FORMULAS = ["x + y", "x - y * 1000", "x * 3", "x / y", "POWER(x, 2)", "x - 1e300"]


@pytest.mark.parametrize("column_type", ["INTEGER", "BIGINT", "SMALLINT", "NUMERIC(18, 2)"])
@pytest.mark.parametrize("formula", INTEGER_FORMULAS)
def test_the_guards_parse_over_integer_and_numeric_columns(formula: str,
                                                           column_type: str) -> None:
    # decimal mode (the default) over a table of integers whose engine type the compiler is
    # not told: the guards' infinity is a NUMERIC one, which joins any number type
    rows = [(2, 3), (-7, 5), (300, -1), (0, 4)]
    query = formulane.sql_select("t", {"out": formula}, SCHEMA, dialect="postgres")
    with psycopg.connect(URL, autocommit=True) as con:
        con.execute(f'CREATE TEMP TABLE t ("__row" INTEGER, x {column_type}, y {column_type})')
        with con.cursor() as cursor:
            cursor.executemany("INSERT INTO t VALUES (%s, %s, %s)",
                               [(i, x, y) for i, (x, y) in enumerate(rows)])
        got = [r[0] for r in con.execute(
            f'SELECT q.out FROM ({query}) AS q ORDER BY "__row"').fetchall()]
    for (x, y), answer in zip(rows, got):
        want = formulane.evaluate(formula, {"x": Decimal(x), "y": Decimal(y)}, schema=SCHEMA)
        assert answer is not None and math.isclose(float(answer), float(want), rel_tol=1e-12), \
            (formula, x, y, answer, want)
