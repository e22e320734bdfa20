"""Decimal mode's zero divisors: #DIV/0! where the decimal divisor is 0, never an aborted query
(found by tests/test_differential.py; docs/columnar.md, "Decimal mode").

Decimal(38, 18) holds no magnitude below 5e-19: such a product rounds to 0 at 18 places
(`1e-12 * (1e-12 * a)`), so dividing by it meets a zero the scalar engine never sees (it answers
1e24 for `a / (1e-12 * (1e-12 * a))`). polars decimal aborted the whole query for a zero dividend
there (`z / ...`: "division by zero Decimal"), because it tested the divisor's float estimate
(not 0) instead of the decimal (0). Both engines answer #DIV/0! (the documented range), as for a
real zero; a float estimate cannot tell the two apart (`a * 0.1 + a * 0.2 - a * 0.3` is 0, its
estimate 1e-16). Float mode answers the scalar's numbers.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

import formulane
from formulane import ErrorValue

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

from formulane.columnar.sql.select import to_sql_form  # noqa: E402

SCHEMA = {"a": "Number", "z": "Number"}
ROWS = [{"a": Decimal(3), "z": Decimal(0)}, {"a": Decimal("-2.5"), "z": Decimal(0)}]
ROUNDED = ["a / (1e-12 * (1e-12 * a))", "z / (1e-12 * (1e-12 * a))",
           "QUOTIENT(a, 1e-12 * (1e-12 * a))", "MOD(a, 1e-12 * (1e-12 * a))"]
ZERO = ["a / (z * a)", "QUOTIENT(a, z * a)", "MOD(a, z * a)", "a / z", "QUOTIENT(a, z)"]
#: 0 in decimals, not in floats (0.30000000000000004 + 0.6000000000000001 - 0.8999999999999999)
SUMS_TO_ZERO = ["a / (a * 0.1 + a * 0.2 - a * 0.3)", "QUOTIENT(a, a * 0.1 + a * 0.2 - a * 0.3)",
                "MOD(a, a * 0.1 + a * 0.2 - a * 0.3)"]


def _polars(source: str, numbers: str) -> list[Any]:
    frame = pl.DataFrame(ROWS, schema={"a": pl.Decimal(38, 4), "z": pl.Decimal(38, 4)})
    out = formulane.apply(frame, {"o": source}, SCHEMA, numbers=numbers)
    return [ErrorValue(e) if e is not None else v
            for v, e in zip(out["o"].to_list(), out["o__error"].to_list())]


def _duckdb(source: str, numbers: str) -> list[Any]:
    form = to_sql_form(formulane.compile(source, SCHEMA).root, "duckdb", numbers)
    column = "DECIMAL(38, 4)" if numbers == "decimal" else "DOUBLE"
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE t (i INTEGER, a {column}, z {column})")
        con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                        [[i, r["a"], r["z"]] for i, r in enumerate(ROWS)])
        result = con.execute(form.select("t", "v", "e", keep_columns=True)
                             + " ORDER BY i").fetchall()
    finally:
        con.close()
    return [ErrorValue(r[-1]) if r[-1] is not None else r[-2] for r in result]


@pytest.mark.parametrize("source", ROUNDED)
@pytest.mark.parametrize("engine", [_polars, _duckdb], ids=["polars", "duckdb"])
def test_a_divisor_rounded_to_zero_is_div0_in_decimal_mode(engine: Any, source: str) -> None:
    program = formulane.compile(source, SCHEMA)
    assert all(not isinstance(program.evaluate(r), ErrorValue) for r in ROWS)
    assert engine(source, "decimal") == [ErrorValue("#DIV/0!")] * len(ROWS)
    floats = engine(source, "float")
    for got, row in zip(floats, ROWS):
        want = program.evaluate(row)
        assert not isinstance(got, ErrorValue), (source, row, got)
        assert abs(Decimal(repr(float(got))) - want) <= abs(want) * Decimal("1e-9") + \
            Decimal("1e-9"), (source, row, got, want)


@pytest.mark.parametrize("source", SUMS_TO_ZERO)
@pytest.mark.parametrize("engine", [_polars, _duckdb], ids=["polars", "duckdb"])
def test_a_divisor_that_sums_to_zero_is_div0(engine: Any, source: str) -> None:
    assert [formulane.compile(source, SCHEMA).evaluate(r) for r in ROWS] == \
        [ErrorValue("#DIV/0!")] * len(ROWS)
    assert engine(source, "decimal") == [ErrorValue("#DIV/0!")] * len(ROWS)


@pytest.mark.parametrize("source", ZERO)
@pytest.mark.parametrize("engine", [_polars, _duckdb], ids=["polars", "duckdb"])
def test_a_zero_divisor_stays_div0(engine: Any, source: str) -> None:
    assert [formulane.compile(source, SCHEMA).evaluate(r) for r in ROWS] == \
        [ErrorValue("#DIV/0!")] * len(ROWS)
    for numbers in ("decimal", "float"):
        assert engine(source, numbers) == [ErrorValue("#DIV/0!")] * len(ROWS), numbers
