"""SQL decimal mode: the grid functions of a quotient answer on the exact quotient.

Division computes in DOUBLE on every dialect (docs/columnar.md, "SQL decimal policy"), and
the DOUBLE of an exact quotient on the grid lies a hair beside it: -826.80 / 3 is
-275.59999999999997, so TRUNC(a / 3, 2) answered -275.59 (the scalar engine, exact decimals:
-275.6), FLOOR(0.30 / 3, 0.01) 0.09, MOD(a / 3, 0.01) 3e-14 or 0.00999999999999999 for 0, and
ROUND(0.045 / 3, 2) fell below its half step. Each grid function of a quotient of decimals
(`math.sql._quotient_grid`: the DOUBLE's count of steps corrected by an exact DECIMAL
remainder) now answers the scalar engine's number on DuckDB and PostgreSQL, over columns
whose types are given (`column_types`) or not, with a column or a constant divisor; a zero
divisor is #DIV/0!, a blank operand a blank. Float mode is unchanged.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

import formulane
from formulane import ErrorValue

duckdb = pytest.importorskip("duckdb")

SCHEMA = {"a": "Number", "b": "Number"}
TYPES = {"a": "DECIMAL(18,3)", "b": "DECIMAL(18,3)"}
#: (a, b): quotients on the grids below (negative, positive, a half step of ROUND(., 2)),
#: off them, a zero divisor, blanks; and a divisor that is not whole (0.3)
ROWS: list[tuple[Decimal | None, Decimal | None]] = [
    (Decimal("-826.80"), Decimal(3)), (Decimal("0.30"), Decimal(3)),
    (Decimal("1.05"), Decimal(3)), (Decimal("0.045"), Decimal(3)),
    (Decimal("-0.045"), Decimal(3)), (Decimal("1.00"), Decimal(3)),
    (Decimal("-2.00"), Decimal(3)), (Decimal("0.09"), Decimal("0.3")),
    (Decimal("-82.68"), Decimal("0.3")), (Decimal("5"), Decimal(0)),
    (None, Decimal(3)), (Decimal("7"), None), (Decimal(0), Decimal(3))]
#: each grid function of a quotient (by a column, and by a constant)
FORMULAS = [
    "TRUNC(a / b, 2)", "ROUNDDOWN(a / b, 2)", "ROUND(a / b, 2)", "ROUNDUP(a / b, 2)",
    "ROUND(a / b, -1)", "TRUNC(a / 3, 2)", "ROUNDUP(a / 3, 1)", "ROUND(a / 3, 3)",
    "FLOOR(a / b, 0.01)", "CEILING(a / b, 0.01)", "FLOOR(a / 3, 0.05)", "CEILING(a / 3, -0.01)",
    "MROUND(a / b, 0.01)", "FLOOR.MATH(a / b, 0.01)", "CEILING.MATH(a / b, 0.01, 1)",
    "FLOOR.MATH(a / 3, 0.01, 1)", "INT(a / b)", "INT(a / 0.3)", "EVEN(a / 0.03)",
    "ODD(a / b)", "MOD(a / b, 0.01)", "MOD(a / 3, -0.01)", "MOD(a / b, 0.1)",
    "QUOTIENT(a / b, 0.01)", "QUOTIENT(a / 3, -0.02)",
]


def _expected(formula: str) -> list[Any]:
    """The scalar engine's answers; a blank operand (which it refuses as input, E303) is a
    blank on SQL, as every operator passes NULL on."""
    reads_b = "/ b" in formula
    return [None if a is None or (b is None and reads_b)
            else formulane.evaluate(formula, {"a": a, "b": Decimal(1) if b is None else b},
                                    schema=SCHEMA) for a, b in ROWS]


def _check(formula: str, got: list[tuple[Any, Any]]) -> None:
    """Each row's (value, error code) against the scalar engine: error codes exactly, blanks
    as blanks, numbers exactly (their DOUBLE's shortest decimal is the scalar's number), a MOD
    that is not 0 within a relative 1e-12 (the remainder of an inexact quotient)."""
    problems = []
    for (a, b), want, (value, error) in zip(ROWS, _expected(formula), got):
        if isinstance(want, ErrorValue):
            ok = error == want.code
        elif want is None:
            ok = value is None and error is None
        elif error is not None or value is None:
            ok = False
        else:
            diff = abs(Decimal(str(value)) - Decimal(want))
            ok = diff == 0 or (formula.startswith("MOD") and want != 0
                               and diff <= Decimal("1e-12") * abs(Decimal(want)))
        if not ok:
            problems.append(f"a={a} b={b}: got {value!r} {error!r}, scalar {want!r}")
    assert not problems, f"{formula}: " + "; ".join(problems)


@pytest.fixture(scope="module")
def duck() -> Any:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (i INTEGER, a DECIMAL(18, 3), b DECIMAL(18, 3))")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", [(i, a, b) for i, (a, b) in enumerate(ROWS)])
    yield con
    con.close()


def _run_duckdb(con: Any, formula: str, types: dict[str, str] | None) -> list[tuple[Any, Any]]:
    sql = formulane.sql_select("t", {"o": formula}, SCHEMA, column_types=types)
    cursor = con.execute(f'SELECT * FROM ({sql}) ORDER BY "i"')
    names = [d[0] for d in cursor.description]
    return [(r[names.index("o")], r[names.index("o__error")] if "o__error" in names else None)
            for r in cursor.fetchall()]


@pytest.mark.parametrize("typed", [False, True], ids=["untyped", "typed"])
@pytest.mark.parametrize("formula", FORMULAS)
def test_duckdb_answers_the_exact_quotient(duck: Any, formula: str, typed: bool) -> None:
    _check(formula, _run_duckdb(duck, formula, TYPES if typed else None))


def test_duckdb_over_double_columns_reads_their_shortest_decimal() -> None:
    """A DOUBLE column in decimal mode (its type not given) holds 0.3 as 0.29999999999999999:
    read through its text, the quotient of its shortest decimal is on the grid as well."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (i INTEGER, a DOUBLE, b DOUBLE)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                    [(i, None if a is None else float(a), None if b is None else float(b))
                     for i, (a, b) in enumerate(ROWS)])
    for formula in ("TRUNC(a / b, 2)", "FLOOR(a / b, 0.01)", "MOD(a / b, 0.01)",
                    "ROUND(a / b, 2)", "INT(a / 0.3)"):
        _check(formula, _run_duckdb(con, formula, None))


def test_float_mode_is_unchanged() -> None:
    """Float mode computes in IEEE doubles, as the scalar engine's float mode: the quotient is
    not placed on the grid (no count of steps, a DECIMAL(38, 0), is written)."""
    sql = formulane.sql_select("t", {"o": "TRUNC(a / 3, 2)"}, SCHEMA, numbers="float")
    assert "DECIMAL(38, 0)" not in sql


def test_a_quotient_of_a_double_operand_keeps_its_double_algorithm() -> None:
    """A divisor the caller typed DOUBLE is read as one (docs/columnar.md): no exact path."""
    sql = formulane.sql_select("t", {"o": "TRUNC(a / b, 2)"}, SCHEMA,
                               column_types={"a": "DECIMAL(18,2)", "b": "DOUBLE"})
    assert "DECIMAL(38, 0)" not in sql


@pytest.mark.parametrize("typed", [False, True], ids=["untyped", "typed"])
def test_postgres_answers_the_exact_quotient(postgres: Any, typed: bool) -> None:
    con = postgres
    con.execute('CREATE TEMP TABLE t ("i" INTEGER, a NUMERIC(18, 3), b NUMERIC(18, 3))')
    with con.cursor() as cursor:
        cursor.executemany("INSERT INTO t VALUES (%s, %s, %s)",
                           [(i, a, b) for i, (a, b) in enumerate(ROWS)])
    for formula in FORMULAS:
        sql = formulane.sql_select("t", {"o": formula}, SCHEMA, dialect="postgres",
                                   column_types=TYPES if typed else None)
        cursor = con.execute(f'SELECT * FROM ({sql}) AS q ORDER BY "i"')
        names = [d.name for d in cursor.description or []]
        got = [(r[names.index("o")],
                r[names.index("o__error")] if "o__error" in names else None)
               for r in cursor.fetchall()]
        _check(formula, got)
