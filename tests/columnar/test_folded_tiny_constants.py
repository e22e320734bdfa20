"""A constant call whose value is below the 18th place (``1E-10 * 1E-10``) folds to its digits.

Before: folding rounded every constant to 18 places, so ``1E-10 * 1E-10`` became 0 and
``x / (1E-10 * 1E-10)`` was #DIV/0! on every backend, in float mode too, where the scalar
engine answers 2.5E20 for x = 2.5 (`interpreter.fold`, tests/fold/cases.yaml). Now the folded
constant is the literal ``1E-20``, read as the same literal written in the formula is: float
mode answers the scalar engine's number on DuckDB and polars.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

import formulane

duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")

VALUES = [2.5, -7.25, 0.0]
FORMULAS = ["x / (1E-10 * 1E-10)", "x * (1E-10 * 1E-10) * 1E20", "x + 1E-10 * 1E-10",
            "ROUND(x / (3E-10 * 1E-10), 0)"]
SCHEMA = {"x": "Number"}


def _want(formula: str, value: float) -> float:
    return float(formulane.evaluate(formula, {"x": Decimal(repr(value))}, schema=SCHEMA))


def _check(formula: str, got: list[tuple[object, object]]) -> None:
    for value, (answer, error) in zip(VALUES, got):
        assert error is None and answer is not None, (formula, value, answer, error)
        assert math.isclose(float(answer), _want(formula, value),  # type: ignore[arg-type]
                            rel_tol=1e-12, abs_tol=1e-30), (formula, value, answer)


@pytest.mark.parametrize("formula", FORMULAS)
def test_duckdb_float_mode(formula: str) -> None:
    con = duckdb.connect()
    con.execute('CREATE TABLE t ("i" INTEGER, x DOUBLE)')
    con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(VALUES)))
    sql = formulane.sql_select("t", {"o": formula}, SCHEMA, numbers="float")
    rows = con.execute(f'SELECT "o", "o__error" FROM ({sql}) ORDER BY "i"').fetchall()
    _check(formula, rows)


@pytest.mark.parametrize("formula", FORMULAS)
def test_polars_float_mode(formula: str) -> None:
    out = formulane.apply(pl.DataFrame({"x": VALUES}), {"o": formula}, schema=SCHEMA,
                          numbers="float")
    errors = out["o__error"].to_list() if "o__error" in out.columns else [None] * len(VALUES)
    _check(formula, list(zip(out["o"].to_list(), errors)))


def test_duckdb_decimal_mode_divides_by_the_literal() -> None:
    """Decimal mode divides in DOUBLE (docs/columnar.md): by 1E-20, as by the literal."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (x DECIMAL(18, 2))")
    con.execute("INSERT INTO t VALUES (2.5)")
    for formula in ("x / (1E-10 * 1E-10)", "x / 0.00000000000000000001"):
        sql = formulane.sql_select("t", {"o": formula}, SCHEMA, keep_columns=False)
        (answer,) = con.execute(sql).fetchone()[:1]  # type: ignore[index]
        assert math.isclose(float(answer), 2.5e20, rel_tol=1e-12), (formula, answer)
