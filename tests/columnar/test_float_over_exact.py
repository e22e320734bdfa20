"""Float-mode SQL over Number columns that are not DOUBLE: the engine never computes in them.

`sql_select(..., numbers="float")` reads a Number column as a DOUBLE. Given no
``column_types``, the column may be an INTEGER, BIGINT, SMALLINT, DECIMAL(p, s) or REAL in the
engine, which computes `+ - *` in that type: an integer or DECIMAL overflow aborted the whole
query on DuckDB (INTEGER 2e9 * 3, DECIMAL(18, 2) 1e15 * 1e15, SMALLINT 300 ** 4) and a REAL
product overflowed float4 (3.4e38 squared was #NUM!), where the scalar engine answers the
number. The compiler widens such operands to DOUBLE (`compiler._narrow`, `SqlCompiler.eager`),
and only there: comparisons and values passed on read the column as it is. Each formula runs on
DuckDB over tables of each type, rows that aborted beside ordinary ones, and is compared row
by row with the scalar engine given the values the table holds (a REAL's float32 value, as
DuckDB and polars' float mode read it). `ROWS` and `FORMULAS` are shared with the PostgreSQL
module (test_pg_float_exact.py).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import duckdb
import pytest

import formulane
from functions import _engines as E

SCHEMA = {"a": "Number", "b": "Number"}

#: Rows per column type: ordinary ones beside ones whose `+ - *` leave the type's range (each
#: of those aborted a query over the type before).
ROWS: dict[str, list[tuple[Any, Any]]] = {
    "INTEGER": [(3, -4), (2_000_000_000, 3), (-2_000_000_000, 2_000_000_000), (46341, 46341),
                (2_147_483_647, 1)],
    "BIGINT": [(3, -4), (9_000_000_000_000_000_000, 9_000_000_000_000_000_000),
               (-9_000_000_000_000_000_000, 2), (3_037_000_500, 3_037_000_500)],
    "SMALLINT": [(3, -4), (300, 300), (-32768, 2), (182, 181)],
    "DECIMAL(18, 2)": [(Decimal("3.25"), Decimal("-4.5")), (Decimal("1e15"), Decimal("1e15")),
                       (Decimal("9999999999999999.99"), Decimal("9999999999999999.99")),
                       (Decimal("-5e14"), Decimal("123.45"))],
    "DECIMAL(38, 0)": [(3, -4), (Decimal("1e37"), Decimal("1e37")),
                       (Decimal("9e37"), Decimal("9e37"))],
    "REAL": [(3.0, -4.0), (3.4e38, 3.4e38), (-3.0e38, 2.0), (1e-30, 1e-30), (51.71, 0.1)],
    "DOUBLE": [(3.0, -4.0), (1e200, 1e200), (-1e300, 2.0), (2.0e9, 3.0)],
}

#: Formulas whose operations the engine computed in the column's type (+ - *, their chains,
#: values passed on from a column: ABS, IF, MAX, unary minus), and ones that only compare or
#: pass a column on (read as it is).
FORMULAS = [
    "a * b", "a + b", "a - b", "a * a * a * a", "a * b + 1", "-a * b", "ABS(a) * ABS(b)",
    "IF(a > 0, a, b) * b", "MAX(a, b) * MIN(a, b)", "(a + a) * (b + b)", "a ^ 2", "a / b",
    "SUM(a, b)", "PRODUCT(a, b)", "AVERAGE(a, b)", "a > b", "IF(a > b, a, b)",
]


def duckdb_rows(formula: str, column_type: str, rows: list[tuple[Any, Any]],
                column_types: dict[str, str] | None = None) -> tuple[list[Any], list[Any]]:
    """(each row's (value, error) from DuckDB, the values the table holds as read back)."""
    query = formulane.sql_select("t", {"out": formula}, SCHEMA, numbers="float",
                                 column_types=column_types)
    con = duckdb.connect()
    con.execute(f'CREATE TABLE t ("__row" INTEGER, a {column_type}, b {column_type})')
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, a, b) for i, (a, b) in
                                                       enumerate(rows)])
    held = con.execute('SELECT a, b FROM t ORDER BY "__row"').fetchall()
    cursor = con.execute(f'SELECT * FROM ({query}) ORDER BY "__row"')
    names = [d[0] for d in cursor.description]
    return [(r["out"], r.get("out__error")) for r in
            (dict(zip(names, row)) for row in cursor.fetchall())], held


def scalar_rows(formula: str, held: list[Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    """The scalar engine's answers for the values the table holds (a REAL's float32 value as
    a float, as DuckDB and polars' float mode widen it)."""
    dicts = [{"a": a, "b": b} for a, b in held]
    return dicts, E.run_scalar(formula, SCHEMA, dicts, profile="strict")


@pytest.mark.parametrize("column_type", list(ROWS))
@pytest.mark.parametrize("formula", FORMULAS)
def test_float_mode_over_each_column_type_answers_as_the_scalar_engine(
        formula: str, column_type: str) -> None:
    got, held = duckdb_rows(formula, column_type, ROWS[column_type])  # aborted before
    dicts, expected = scalar_rows(formula, held)
    E.assert_agree(f"{formula} over {column_type} columns (DuckDB, float)", dicts, expected,
                   got)


@pytest.mark.parametrize("column_type", ["INTEGER", "DECIMAL(18, 2)", "REAL"])
@pytest.mark.parametrize("formula", ["a * b", "a * a * a * a", "ABS(a) * ABS(b)"])
def test_given_column_types_widen_alike(formula: str, column_type: str) -> None:
    """With ``column_types`` the exact types were widened already; a REAL one was read as a
    DOUBLE and multiplied in float4 (3.4e38 squared: #NUM!)."""
    rows = ROWS[column_type]
    got, held = duckdb_rows(formula, column_type, rows,
                            column_types={"a": column_type, "b": column_type})
    dicts, expected = scalar_rows(formula, held)
    E.assert_agree(f"{formula} over typed {column_type} columns", dicts, expected, got)


def test_the_widening_sits_at_arithmetic_only() -> None:
    """A comparison, a value passed on and a DOUBLE typed column read the column as it is;
    + - * read it through one cast (free on a DOUBLE: DuckDB and PostgreSQL drop it when
    planning)."""
    def sql(formula: str, **options: Any) -> str:
        return formulane.sql_select("t", {"out": formula}, SCHEMA, numbers="float",
                                    keep_columns=False, **options)

    assert sql("a > b") == 'SELECT "a" > "b" AS "out" FROM "t"'
    assert "CAST" not in sql("IF(a > b, a, b)")
    # one DOUBLE operand makes the step DOUBLE: one cast, none beside a DOUBLE column
    assert 'CAST("a" AS DOUBLE) * "b"' in sql("a * b")
    assert 'CAST("a" AS DOUBLE) * 2' in sql("a * 2")
    assert "CAST" not in sql("a * b", column_types={"a": "DOUBLE", "b": "DOUBLE"})
    assert "CAST" not in sql("a * b", column_types={"a": "REAL", "b": "DOUBLE"})
    assert 'CAST("a" AS DOUBLE) * "b"' in sql("a * b", column_types={"a": "REAL", "b": "FLOAT"})


def test_a_real_column_is_read_as_its_float32_value_as_polars_float_mode_reads_it() -> None:
    """A REAL 51.71 is the float32 51.709999084...: widened by its value, as polars' float
    mode casts a Float32 column and as the scalar engine reads the value the row holds
    (ROUNDDOWN to 2 places is 51.7 on all three)."""
    import polars as pl

    got, held = duckdb_rows("ROUNDDOWN(a, 2)", "REAL", [(51.71, 1.0)])
    frame = pl.DataFrame({"a": pl.Series([51.71], dtype=pl.Float32), "b": [1.0]})
    polars_out = formulane.apply(frame, {"out": "ROUNDDOWN(a, 2)"}, SCHEMA, numbers="float")
    _, expected = scalar_rows("ROUNDDOWN(a, 2)", held)
    assert got == [(51.7, None)]
    assert [float(v) for v in polars_out["out"].to_list()] == [51.7]
    assert [float(v) for v in expected] == [51.7]


@pytest.mark.parametrize("column_type", list(ROWS))
def test_a_form_reads_a_narrow_column_as_its_value(column_type: str) -> None:
    """ROUND of a column passes it to the form, which reads it through DOUBLE and text."""
    rows = [r for r in ROWS[column_type] if r[0] not in _LEAST]
    got, held = duckdb_rows("ROUND(a, 1) + ROUNDDOWN(b, 2)", column_type, rows)
    dicts, expected = scalar_rows("ROUND(a, 1) + ROUNDDOWN(b, 2)", held)
    E.assert_agree(f"ROUND over {column_type} columns", dicts, expected, got)


#: An integer type's least value, whose ABS overflows the type.
_LEAST = (-32768, -2_147_483_648, -9_223_372_036_854_775_808)


@pytest.mark.xfail(strict=True, reason="known gap: the ROUND forms test ABS(x) of the column "
                   "as it is, which overflows at an integer type's least value")
def test_round_of_an_integer_types_least_value() -> None:
    got, held = duckdb_rows("ROUND(a, 1)", "SMALLINT", [(-32768, 1)])
    assert got == [(-32768.0, None)]
