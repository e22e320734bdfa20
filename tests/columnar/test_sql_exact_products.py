"""A product of DECIMAL columns of at most 9 places is exact on DuckDB, whatever their scale.

The SQL multiplies exactly (two DECIMAL(38, 9) readings, a product of scale 18) on the rows
where both operands have at most 9 decimal places, and in DOUBLE elsewhere (docs/columnar.md).
The test of "at most 9 places" was ``v % 0.000000001 = 0``, which DuckDB computes in DOUBLE for
a column of another scale: 2.675 in a DECIMAL(38, 3) failed it, and ``x * 1.5`` answered
4.012499999999999488. Checked here exactly (Decimal equality, no tolerance) against the scalar
engine, over DuckDB columns of several scales.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

import formulane

duckdb = pytest.importorskip("duckdb")

VALUES = ["2.675", "-0.1", "123456.789", "0.001", "99999999.99", "7"]  # held by every scale
SCALES = [3, 4, 9, 10, 18]
FORMULAS = ["x * 1.5", "x * y", "x * x", "x * 1.1 * y", "(x + y) * 0.25"]


def _column_type(scale: int) -> str:
    return f"DECIMAL(38, {scale})"


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("formula", FORMULAS)
def test_products_of_short_decimals_are_exact_on_duckdb(formula: str, scale: int) -> None:
    program = formulane.compile(formula, {"x": "Number", "y": "Number"})
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE t (i INTEGER, x {_column_type(scale)}, y DECIMAL(38, 2))")
        rows = [(i, Decimal(v), Decimal("1.25")) for i, v in enumerate(VALUES)]
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        query = program.to_sql("duckdb").select("t", "v", "e")
        got = con.execute(f"SELECT v, e FROM ({query})").fetchall()
    finally:
        con.close()
    assert len(got) == len(rows)
    for (_, x, y), (value, error) in zip(rows, got):
        expected = formulane.evaluate(formula, {"x": x, "y": y})
        assert error is None, (x, error)
        # exact: a DOUBLE detour shows in the 16th-18th places
        assert value == expected, (formula, scale, x, value, expected)
