"""The dates family's shorter SQL read at the edges of the range the scalar accepts.

The SQL forms write a difference of two ordinals as the engine's own ``DATE_DIFF`` and a
comparison of two ordinals as a comparison of the dates (`sqlops._ordinal_date`), and leave out
parentheses the standard's precedence makes redundant. This runs DAYS, YEARFRAC (every basis)
and NETWORKDAYS on DuckDB over every pair of the range's edge dates (0001-01-01, 9999-12-31, the
leap days and month ends around them, Excel's 1900 boundary) and compares with the scalar engine.
"""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from typing import Any

import pytest

duckdb = pytest.importorskip("duckdb")

import formulane  # noqa: E402

EDGES = [dt.date(1, 1, 1), dt.date(1, 12, 31), dt.date(4, 2, 29), dt.date(100, 3, 1),
         dt.date(1899, 12, 31), dt.date(1900, 2, 28), dt.date(1900, 3, 1), dt.date(2000, 2, 29),
         dt.date(2024, 2, 29), dt.date(2024, 3, 1), dt.date(9999, 2, 28), dt.date(9999, 12, 31)]

FORMULAS = ["DAYS(a, b)", "YEARFRAC(a, b, 0)", "YEARFRAC(a, b, 1)", "YEARFRAC(a, b, 2)",
            "YEARFRAC(a, b, 3)", "YEARFRAC(a, b, 4)", "YEARFRAC(a, b, k)", "NETWORKDAYS(a, b)"]


def _same(sql_value: Any, scalar: Any) -> bool:
    if isinstance(scalar, (Decimal, float, int)) and sql_value is not None:
        # (YEARFRAC's quotient is a DOUBLE on SQL, as before: within its precision)
        x = Decimal(str(scalar))
        return abs(Decimal(str(sql_value)) - x) <= Decimal("1e-12") * max(Decimal(1), abs(x))
    return bool(sql_value == scalar)


@pytest.mark.parametrize("formula", FORMULAS)
def test_edges_agree_with_the_scalar_engine(formula: str) -> None:
    schema = {"a": "Date", "b": "Date", "k": "Number"}
    program = formulane.compile(formula, schema)
    pairs = list(itertools.product(EDGES, EDGES))
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a DATE, b DATE, k DECIMAL(38, 18))")
    con.executemany("INSERT INTO t VALUES (?, ?, 1)", [list(p) for p in pairs])
    sql = program.to_sql("duckdb", "decimal").select("t")
    rows = con.execute(sql).fetchall()
    assert len(rows) == len(pairs)
    for (a, b), row in zip(pairs, rows):
        expected = program.evaluate({"a": a, "b": b, "k": 1})
        assert _same(row[0], expected), (formula, a, b, row, expected)
