"""Differential property: grid functions of a quotient in SQL decimal mode, against the scalar
engine (exact decimals), on DuckDB.

Division computes in DOUBLE in SQL (docs/columnar.md, "SQL decimal policy"); a grid function of
the quotient (ROUNDDOWN, TRUNC, FLOOR, MOD...) must still answer on the exact quotient, where
the DOUBLE lies a hair beside a quotient on the grid (`math.sql._quotient_grid`). Draws:
DECIMAL(18, 2) columns whose values are often multiples of the divisor times the step (so the
quotient lands on the grid: the case the DOUBLE misses), divisors small (a column, or a
constant), digits and steps literal; with and without ``column_types``. Answers compare
exactly (error codes too), but an off-grid MOD within a relative 1e-12 (its remainder is of an
inexact quotient).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import formulane
from formulane import ErrorValue

duckdb = pytest.importorskip("duckdb")

SCHEMA = {"x": "Number", "y": "Number"}
TYPES = {"x": "DECIMAL(18,2)", "y": "DECIMAL(18,2)"}
CENT = Decimal("0.01")

#: divisors: small whole numbers and a few of two places, both signs, and zero
DIVISORS = st.sampled_from([Decimal(d) for d in (
    "3", "7", "-3", "6", "12", "0.3", "-0.7", "1.5", "0.25", "9", "0")])
STEPS = st.sampled_from(["0.01", "0.05", "0.1", "1", "-0.02"])


@st.composite
def rows(draw: Any) -> list[tuple[Decimal, Decimal]]:
    out = []
    for _ in range(draw(st.integers(1, 12))):
        y = draw(DIVISORS)
        if y != 0 and draw(st.booleans()):
            # x = y * a multiple of a cent: x / y on the grid of 0.01, if x has 2 places
            x = (y * Decimal(draw(st.integers(-10**7, 10**7))) * CENT).quantize(CENT)
        else:
            x = Decimal(draw(st.integers(-10**9, 10**9))) * CENT
        out.append((x, y))
    return out


FORMULAS = st.one_of(
    st.tuples(st.sampled_from(["ROUNDDOWN", "TRUNC"]), st.sampled_from(["y", "3", "0.3"]),
              st.integers(-1, 4)).map(lambda t: f"{t[0]}(x / {t[1]}, {t[2]})"),
    st.tuples(st.sampled_from(["FLOOR", "MOD"]), st.sampled_from(["y", "3", "0.3"]),
              STEPS).map(lambda t: f"{t[0]}(x / {t[1]}, {t[2]})"))


def _answers(formula: str, data: list[tuple[Decimal, Decimal]], typed: bool) -> list[Any]:
    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE t (i INTEGER, x DECIMAL(18, 2), y DECIMAL(18, 2))")
        con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                        [(i, x, y) for i, (x, y) in enumerate(data)])
        sql = formulane.sql_select("t", {"o": formula}, SCHEMA,
                                   column_types=TYPES if typed else None)
        cursor = con.execute(f'SELECT * FROM ({sql}) ORDER BY "i"')
        names = [d[0] for d in cursor.description]
        out = []
        for r in cursor.fetchall():
            error = r[names.index("o__error")] if "o__error" in names else None
            out.append(ErrorValue(error) if error is not None else r[names.index("o")])
        return out
    finally:
        con.close()


def _same(formula: str, got: Any, want: Any) -> bool:
    if isinstance(want, ErrorValue) or isinstance(got, ErrorValue):
        return isinstance(want, ErrorValue) and isinstance(got, ErrorValue) \
            and got.code == want.code
    if got is None or want is None:
        return got is None and want is None
    diff = abs(Decimal(str(got)) - Decimal(want))
    if formula.startswith("MOD") and want != 0:
        return diff <= Decimal("1e-12") * abs(Decimal(want))
    return diff == 0


@given(formula=FORMULAS, data=rows(), typed=st.booleans())
def test_grid_functions_of_a_quotient_match_the_scalar_engine(
        formula: str, data: list[tuple[Decimal, Decimal]], typed: bool) -> None:
    note(f"{formula} typed={typed} rows={data}")
    got = _answers(formula, data, typed)
    for (x, y), g in zip(data, got):
        want = formulane.evaluate(formula, {"x": x, "y": y}, schema=SCHEMA)
        assert _same(formula, g, want), (formula, typed, x, y, g, want)
