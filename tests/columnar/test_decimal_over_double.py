"""Decimal mode over DOUBLE columns whose engine type the caller did not give.

DuckDB's and PostgreSQL's default ``numbers`` is "decimal", and a CSV or Parquet file read into
the engine has DOUBLE columns: `formulane.sql_select(..., column_types=None)` cannot tell them
from DECIMAL ones (`columnar.sql.kit.SqlColumn.maybe_double`). The forms whose SQL is exact for
a DECIMAL only (ROUND to places as ``ROUND(a - SIGN(a) * 0.005, 2)``, the multiples and MOD
through ``CAST(a AS DECIMAL(38, 18))``, ``+ - *`` casting their operands) answered wrong over
such a DOUBLE: ROUNDDOWN(1.0, 2) = 0.99, ROUNDUP(1e-200, 2) = 0, TRUNC(2.0, 1) = 1.9,
FLOOR(-2.2, 0.01) = -2.21, INT(-2.2 * 10) = -23 (DuckDB casts -2.2 to -2.200000000000000178).

Here, on real engines: a DOUBLE table (ties, values whose binary expansion sits below their
decimal, tiny values, blanks) answers as the scalar engine does over each value's shortest
decimal (``Decimal(repr(a))``), without ``column_types``, with ``column_types`` saying DOUBLE,
and in float mode; a DECIMAL(38, 18) table answers exactly (equal to the scalar engine's
answer as the engine's type shows it), without ``column_types`` and with them, and with them
the rounding family keeps its short exact SQL. PostgreSQL (DOUBLE PRECISION and
NUMERIC(38, 18)) too when ``FORMULANE_TEST_POSTGRES_URL`` is set.
"""

from __future__ import annotations

import os
from decimal import Decimal
from typing import Any

import duckdb
import pytest

import formulane
from formulane import ErrorValue

#: DOUBLE values: ties at 1 to 3 places (2.675 is 2.67499999999999982 in binary), whole
#: numbers (ROUNDDOWN(1.0, 2) answered 0.99), values a DOUBLE-to-DECIMAL cast moves (-2.2,
#: 12345.675), tiny ones (more than 18 places: the exact reading rounds them), a blank.
DOUBLES: list[float | None] = [
    0.0, 1.0, 2.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1.15, -1.15, 2.675, -2.675, 1.005, 0.285,
    2.715, -2.275, -0.245, 0.29, 0.07, -0.07, 2.2, -2.2, 2.3, -2.3, 0.1, 0.3, -0.7,
    0.30000000000000004, 12345.675, -12345.675, 123456789.125, 4.35, 1e-7, 0.05, -0.05,
    1e-200, -1e-300, 5e-324, 0.0012345678901234567, None,
]

#: The rounding family and the other forms that compute on the decimal grid.
FORMULAS = [
    "ROUND(a, 2)", "ROUNDUP(a, 2)", "ROUNDDOWN(a, 2)", "TRUNC(a, 1)", "TRUNC(a)",
    "ROUND(a, 0)", "ROUNDUP(a, 0)", "ROUNDDOWN(a, -1)", "ROUND(a, -1)", "ROUNDUP(a, 17)",
    "FLOOR(a, 0.01)", "CEILING(a, 0.05)", "MROUND(ABS(a), 0.05)", "CEILING.MATH(a, 0.05)",
    "FLOOR.MATH(a, 0.1)", "CEILING.MATH(a, 0.1, 1)", "INT(a)", "INT(a * 10)", "INT(a * 100)",
    "MOD(a, 0.1)", "MOD(a, 1)", "MOD(a * 1000, 7)", "QUOTIENT(a, 0.1)", "ODD(a)", "EVEN(a)",
    "ROUND(ABS(a), 2)", "ROUND(-a, 2)", "ROUNDDOWN(IF(a > 0, a, 0), 2)", "ROUND(MAX(a, 0), 2)",
    "ROUND(a + 0, 2)", "ROUND(a * 3, 2)", "ROUND(a, 2) * 3", "TRUNC(a - 0.001, 2)",
    "IF(a = 12345.675, 1, 0)", "IF(a > 2.675, 1, 0)", "COALESCE(a, 1.5)",
]
SCHEMA = {"a": "Number?"}
#: Formulas whose grid function reads a DOUBLE sum or product where the column is read as a
#: DOUBLE (float mode, or ``column_types`` saying DOUBLE): IEEE's 1.15 * 100 is
#: 114.99999999999999, whose INT is 114 (docs/columnar.md, float mode), not the scalar
#: engine's decimal answer; decimal mode computes them in DECIMAL.
DOUBLE_ARITHMETIC_FIRST = {"INT(a * 10)", "INT(a * 100)", "MOD(a * 1000, 7)", "ROUND(a + 0, 2)",
                           "ROUND(a * 3, 2)", "TRUNC(a - 0.001, 2)"}

PG_URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")


def _want(formula: str, value: Decimal | None) -> Any:
    return formulane.evaluate(formula, {"a": value}, schema=SCHEMA, profile="excel")


def _same(got: Any, error: Any, want: Any, exact: bool) -> bool:
    """The engine's answer (value, error) against the scalar engine's: error codes exactly;
    numbers within a relative 1e-9 (``exact``: equal, as the engine's type shows it)."""
    if isinstance(want, ErrorValue):
        return error == want.code
    if error is not None:
        return False
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, bool) or isinstance(got, bool):
        return bool(got == want)
    w = Decimal(want)
    g = Decimal(repr(got)) if isinstance(got, float) else Decimal(got)
    if exact:
        # a DOUBLE result is the nearest DOUBLE to the answer
        return g == w if not isinstance(got, float) else got == float(w)
    return abs(g - w) <= Decimal("1e-9") * max(Decimal(1), abs(w))


def _answers(run: Any, formula: str, **options: Any) -> list[tuple[Any, Any, Any]]:
    """(a, value, error) per row of ``sql_select`` over table t (ordered by ``i``)."""
    sql = formulane.sql_select("t", {"o": formula}, SCHEMA, keep_columns=True,
                               profile="excel", **options)
    rows = run(f'{sql} ORDER BY "i"')
    return [(r[1], r[2], r[3] if len(r) > 3 else None) for r in rows]


def _reading(value: Any) -> Decimal | None:
    """The value as the scalar engine reads it: a DOUBLE's shortest decimal."""
    if value is None:
        return None
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _rounds_to_zero(formula: str, value: Decimal | None) -> bool:
    """Whether the scalar evaluation's ``+``, ``-`` or ``*`` made a number below 5e-19 but
    not 0, which DECIMAL(38, 18) holds as 0 (docs/columnar.md, decimal mode: INT(-1e-300 * 10)
    is 0 there, the scalar engine's -1)."""
    from formulane.interpreter.explain import explain

    program = formulane.compile(formula, SCHEMA, profile="excel")
    stack = [explain(program, {"a": value}).root]
    while stack:
        node = stack.pop()
        if node.kind == "call" and node.label in ("+", "-", "*") and any(
                isinstance(v, Decimal) and v and abs(v) < Decimal("5e-19") for v in node.values):
            return True
        stack.extend(node.children)
    return False


def _check(run: Any, formula: str, exact: bool, **options: Any) -> None:
    wrong = []
    for a, value, error in _answers(run, formula, **options):
        want = _want(formula, _reading(a))
        if options.get("numbers") == "decimal" and _rounds_to_zero(formula, _reading(a)):
            continue
        if not _same(value, error, want, exact):
            wrong.append((a, value, error, want))
    assert not wrong, (formula, options, wrong[:5], len(wrong))


@pytest.fixture(scope="module")
def duck_double() -> Any:
    con = duckdb.connect()
    con.execute('CREATE TABLE t ("i" INTEGER, "a" DOUBLE)')
    con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(DOUBLES)))
    yield lambda sql: con.execute(sql).fetchall()
    con.close()


@pytest.fixture(scope="module")
def duck_decimal() -> Any:
    con = duckdb.connect()
    con.execute('CREATE TABLE t ("i" INTEGER, "a" DECIMAL(38, 18))')
    # the values a DECIMAL(38, 18) holds (the tiny ones read as 0 there), by their decimals
    con.executemany("INSERT INTO t VALUES (?, ?)",
                    [(i, None if v is None else Decimal(repr(v)).quantize(Decimal("1e-18")))
                     for i, v in enumerate(DOUBLES)])
    yield lambda sql: con.execute(sql).fetchall()
    con.close()


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_double_column_of_unknown_type_answers_as_the_scalar_engine(
        duck_double: Any, formula: str) -> None:
    """Decimal mode, no ``column_types``: the table's DOUBLE is read as its shortest decimal
    (ROUNDDOWN(1.0, 2) = 1, TRUNC(2.0, 1) = 2, INT(-2.2 * 10) = -22, ROUNDUP(1e-200, 2) =
    0.01). Each of the rounding and grid formulas failed before."""
    _check(duck_double, formula, exact=False, numbers="decimal")


@pytest.mark.parametrize("formula", [f for f in FORMULAS if f not in DOUBLE_ARITHMETIC_FIRST])
@pytest.mark.parametrize("options", [{"numbers": "decimal", "column_types": {"a": "DOUBLE"}},
                                     {"numbers": "float"}], ids=["typed-double", "float"])
def test_a_double_column_given_as_double_answers_as_before(
        duck_double: Any, formula: str, options: dict[str, Any]) -> None:
    _check(duck_double, formula, exact=False, **options)


@pytest.mark.parametrize("formula", FORMULAS)
@pytest.mark.parametrize("types", [None, {"a": "DECIMAL(38, 18)"}], ids=["untyped", "typed"])
def test_a_decimal_column_answers_exactly(duck_decimal: Any, formula: str,
                                          types: dict[str, str] | None) -> None:
    """A DECIMAL(38, 18) column, typed or not: the answers are the scalar engine's, exactly."""
    _check(duck_decimal, formula, exact=True, numbers="decimal", column_types=types)


@pytest.mark.parametrize("formula", ["ROUND(a, 2)", "ROUNDDOWN(a, 2)", "ROUNDUP(a, 3)",
                                     "TRUNC(a, 1)", "INT(a * 10)", "a * 10 + 1"])
def test_the_decimal_type_given_keeps_the_short_exact_sql(formula: str) -> None:
    """With ``column_types`` saying DECIMAL the rounding family is the engine's decimal ROUND
    and + - * cast the column itself; without them the column may be a DOUBLE, read through
    its text (its shortest decimal)."""
    typed = formulane.sql_select("t", {"o": formula}, {"a": "Number"},
                                 column_types={"a": "DECIMAL(38, 4)"})
    untyped = formulane.sql_select("t", {"o": formula}, {"a": "Number"})
    assert "AS TEXT" not in typed and "AS TEXT" in untyped, (typed, untyped)
    assert len(typed) < len(untyped)


# ------------------------------------------------------------------------------ PostgreSQL


def _pg_table(number: str) -> Any:
    psycopg = pytest.importorskip("psycopg")
    con = psycopg.connect(PG_URL, autocommit=True, prepare_threshold=None)
    con.execute("DROP TABLE IF EXISTS t")
    con.execute(f'CREATE TEMP TABLE t ("i" INTEGER, "a" {number})')
    with con.cursor() as cursor:
        if number == "DOUBLE PRECISION":
            rows: list[tuple[int, Any]] = list(enumerate(DOUBLES))
        else:
            rows = [(i, None if v is None else Decimal(repr(v)).quantize(Decimal("1e-18")))
                    for i, v in enumerate(DOUBLES)]
        cursor.executemany("INSERT INTO t VALUES (%s, %s)", rows)
    return con


@pytest.mark.skipif(not PG_URL, reason="FORMULANE_TEST_POSTGRES_URL is not set")
@pytest.mark.parametrize("number", ["DOUBLE PRECISION", "NUMERIC(38, 18)"])
def test_postgres_double_and_numeric_columns_of_unknown_type(number: str) -> None:
    """PostgreSQL: a float8 column (decimal mode, no ``column_types``) answers as the scalar
    engine; a NUMERIC(38, 18) one exactly."""
    from formulane import Unsupported

    con = _pg_table(number)
    try:
        run = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        ran = 0
        for formula in FORMULAS:
            try:
                _check(run, formula, exact=number != "DOUBLE PRECISION", numbers="decimal",
                       dialect="postgres")
            except Unsupported:
                continue
            ran += 1
        assert ran >= len(FORMULAS) - 3
    finally:
        con.close()
