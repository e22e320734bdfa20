"""MOD and QUOTIENT by a constant too small for DECIMAL(38, 18) (1E-25, 4E-19: 0 at 18 places).

Before: `MOD(x, 1E-25)` failed the whole query on DuckDB in both modes ("Division by zero":
the divisor's DECIMAL(38, 18) reading is 0, and a divisor known to be nonzero gets no NULLIF),
and `QUOTIENT(x, 1E-25)` in float mode answered a blank with no error (its exact path was
taken for that 0). Now such a divisor never takes the exact DECIMAL path: every row answers,
as the scalar engine does (MOD within 1e-18 of its 0: float mode's remainder is IEEE's).
"""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

import formulane

duckdb = pytest.importorskip("duckdb")

VALUES = [2.0, -7.5, 0.0, 123.25]


@pytest.mark.parametrize("column_type", ["DOUBLE", "DECIMAL(38, 18)"])
@pytest.mark.parametrize("numbers", ["decimal", "float"])
@pytest.mark.parametrize("formula", ["MOD(x, 1E-25)", "MOD(x, 4E-19)", "QUOTIENT(x, 1E-25)",
                                     "QUOTIENT(x, 4E-19)"])
def test_a_divisor_below_the_18th_place_answers_every_row(formula: str, numbers: str,
                                                         column_type: str) -> None:
    con = duckdb.connect()
    con.execute(f'CREATE TABLE t ("i" INTEGER, x {column_type})')
    con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(VALUES)))
    sql = formulane.sql_select("t", {"o": formula}, {"x": "Number"}, numbers=numbers)
    names = [d[0] for d in con.execute(f"SELECT * FROM ({sql}) LIMIT 0").description]
    rows = [dict(zip(names, r))
            for r in con.execute(f'SELECT * FROM ({sql}) ORDER BY "i"').fetchall()]
    for value, row in zip(VALUES, rows):
        want = formulane.evaluate(formula, {"x": Decimal(repr(value))}, schema={"x": "Number"})
        assert row.get("o__error") is None and row["o"] is not None, (value, row)
        if formula.startswith("MOD"):
            assert abs(float(row["o"])) < 1e-18, (value, row, want)
        else:
            assert math.isclose(float(row["o"]), float(want), rel_tol=1e-12), (value, row, want)
