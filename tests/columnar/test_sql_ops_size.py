"""The SQL of the operators and math forms: what a literal settles is decided when compiling,
and the smaller SQL gives the scalar engine's answers (issue 10, 40 characters per IR node).

`CEILINGS` holds formulas with the length their whole query (`Program.to_sql(...).select`)
may reach in each numeric mode: measured after the change (bench/columnar_sql_size.py) with
a little room (float mode: the compiler adds its own non-finite test of DOUBLE results);
before it, ``x*2+1`` was 1,310 characters and ``x ^ 2`` 473. `SETTLED` says
what must not be written for a literal operand. `ROWS` runs every formula on DuckDB in both
modes, boundary values included (zero, negative, halves, beyond DECIMAL(38, 18)'s range), against `formulane.evaluate`.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest

import formulane

duckdb = pytest.importorskip("duckdb")

SCHEMA = {"x": "Number", "y": "Number"}

#: (formula, decimal-mode ceiling, float-mode ceiling), in characters of the whole query
CEILINGS: list[tuple[str, int, int]] = [
    ("x * 2 + 1", 600, 340),
    # float: 195 -> 225, one operand widened (an untyped column may be INTEGER or DECIMAL)
    ("x + y", 590, 230),  # 500 -> 584: the untyped columns' TYPEOF reading
    ("x * y", 720, 230),  # 620 -> 717 (TYPEOF)
    ("x * 1.5", 440, 250),
    ("x - 1", 340, 245),
    ("x / 2", 55, 245),
    ("x / y", 120, 320),
    ("x ^ 2", 255, 255),
    ("POWER(x, 2)", 260, 345),
    ("x ^ y", 415, 415),
    ("CLAMP(x, 0, 10)", 90, 320),
    ("MOD(x, 3)", 655, 990),  # 565 -> 650 (TYPEOF)
    ("SIN(x)", 280, 405),
    ("LOG(x, 10)", 335, 445),
    ("ROUND(x, 2)", 730, 895),
    ("ROUND(x * 1.1, 2)", 1_260, 1_100),
]

#: (formula, texts the SQL must not contain: tests of a literal decided when compiling)
SETTLED: list[tuple[str, tuple[str, ...]]] = [
    ("x * 2 + 1", ("CAST(2 AS DOUBLE)", "CAST(1 AS DOUBLE)", "ABS(2)", "ABS(1)")),
    ("x ^ 2", ("FLOOR(", "= 0 AND", "'#DIV/0!'")),
    ("CLAMP(x, 0, 10)", ("0 > 10",)),
    ("MOD(x, 3)", ("NULLIF(3", "'#DIV/0!'", "CAST(3 AS TEXT)")),
    ("LOG(x, 10)", ("'#DIV/0!'",)),
    ("x / 2", ("NULLIF", "'#DIV/0!'")),
    ("SIN(x)", ("NOT ABS(SIN(",)),
]

ROWS: list[dict[str, Any]] = [
    {"x": Decimal("0"), "y": Decimal("0")},
    {"x": Decimal("-1.5"), "y": Decimal("0.5")},
    {"x": Decimal("2.675"), "y": Decimal("-3")},
    {"x": Decimal("7"), "y": Decimal("1")},
    {"x": Decimal("123456789.123456789"), "y": Decimal("0.000000001")},
    {"x": Decimal("60000000000000000000"), "y": Decimal("2")},
    {"x": Decimal("-99999999999999999999"), "y": Decimal("99999999999999999999")},
]

FORMULAS = sorted({f for f, _, _ in CEILINGS} | {f for f, _ in SETTLED}
                  | {"ROUND(x, -1)", "ROUNDUP(x, 1)", "ROUNDDOWN(x * y, 0)", "x * y - x",
                     "QUOTIENT(x, 2)", "SQRT(x)", "EXP(y)", "(x + 1) * (y - 1)"})


def _sql(formula: str, numbers: str) -> str:
    return formulane.compile(formula, SCHEMA).to_sql("duckdb", numbers).select("t")


@pytest.mark.parametrize("numbers", ["decimal", "float"])
@pytest.mark.parametrize("formula,decimal_max,float_max", CEILINGS,
                         ids=[c[0] for c in CEILINGS])
def test_sql_within_its_ceiling(formula: str, decimal_max: int, float_max: int,
                                numbers: str) -> None:
    sql = _sql(formula, numbers)
    assert len(sql) <= (decimal_max if numbers == "decimal" else float_max), sql


@pytest.mark.parametrize("numbers", ["decimal", "float"])
@pytest.mark.parametrize("formula,absent", SETTLED, ids=[s[0] for s in SETTLED])
def test_literal_tests_are_decided_when_compiling(formula: str, absent: tuple[str, ...],
                                                  numbers: str) -> None:
    sql = _sql(formula, numbers)
    for text in absent:
        assert text not in sql, (text, sql)


def _expected(formula: str, row: dict[str, Any], numbers: str) -> Any:
    if numbers == "float":  # what a DOUBLE column holds of the row
        row = {k: Decimal(repr(float(v))) for k, v in row.items()}
    value = formulane.evaluate(formula, row, schema=SCHEMA)
    return value.code if isinstance(value, formulane.ErrorValue) else value


@pytest.mark.parametrize("numbers", ["decimal", "float"])
@pytest.mark.parametrize("formula", FORMULAS)
def test_duckdb_gives_the_scalar_answers(formula: str, numbers: str) -> None:
    query = formulane.sql_select("t", {"out": formula}, SCHEMA, numbers=numbers)
    column = "DECIMAL(38, 18)" if numbers == "decimal" else "DOUBLE"
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE t (i INTEGER, x {column}, y {column})")
        con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                        [(i, r["x"], r["y"]) for i, r in enumerate(ROWS)])
        got = con.execute(f"SELECT * FROM ({query}) ORDER BY i").fetchall()
        names = [d[0] for d in con.description]
    finally:
        con.close()
    for row, result in zip(ROWS, got):
        out = dict(zip(names, result))
        expected = _expected(formula, row, numbers)
        error = out.get("out__error")
        if isinstance(expected, str) and expected.startswith("#"):
            if numbers == "float" or error is not None:
                assert error == expected, (row, out, expected)
            continue
        if error is not None:
            # the SQL decimal policy: operands and results |x| < 1e20, else #NUM!
            # (docs/columnar.md)
            assert error == "#NUM!" and numbers == "decimal", (row, out, expected)
            assert isinstance(expected, Decimal) and max(
                abs(expected), *(abs(v) for v in row.values())) >= Decimal("1e19"), \
                (row, out, expected)
            continue
        if expected is None:
            assert out["out"] is None, (row, out)
            continue
        got_value = Decimal(str(out["out"]))
        if numbers == "float":
            assert math.isclose(float(got_value), float(expected), rel_tol=1e-12,
                                abs_tol=1e-12), (row, out, expected)
        else:
            assert abs(got_value - expected) <= Decimal("1e-9") * max(1, abs(expected)), \
                (row, out, expected)
