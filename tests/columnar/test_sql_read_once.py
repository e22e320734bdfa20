"""A Number column of unknown engine type is read as a DECIMAL once per query (SQL decimal mode).

Decimal mode reads a column whose engine type the caller did not give (it may be a DOUBLE, a
DECIMAL or an integer) through `sql_arith.shortest_decimal`: DuckDB's TYPEOF settles, when
planning, whether the value goes through its text (a DOUBLE's shortest decimal, as the scalar
engine reads it) or is cast as it is. That reading is over 100 characters of SQL, so:

- a reading under its range test is one CASE with the test outside it (the test was written
  inside both of the reading's casts), and a branch of COALESCE read again by the error
  chain's blank test is bound once (`let`: a guarded reading is total, so it may be bound);
- the ROUND family's text reading of such a column is built by that same helper (its text
  alone: there the TYPEOF test did not pay for its 84 characters);
- an error chain of range tests is one CASE, and IF's branches of known types give the
  joined DECIMAL type, so arithmetic on the IF knows its range.

And the answers, on DuckDB and on PostgreSQL when ``FORMULANE_TEST_POSTGRES_URL`` is set, are
the scalar engine's over DOUBLE, DECIMAL, INTEGER and BIGINT columns with blanks and values past
DECIMAL(38, 18)'s range (where decimal mode answers #NUM! for a result of 1e20 or more:
docs/columnar.md, "SQL decimal policy").
"""

from __future__ import annotations

import os
from decimal import Decimal
from typing import Any, Callable

import duckdb
import pytest

import formulane
from formulane import ErrorValue

SCHEMA = {"x": "Number?", "y": "Number?"}
PG_URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")

#: (x, y) rows per engine type: blanks on either side, ties, values a DOUBLE-to-DECIMAL cast
#: moves (-2.2, 2.675), and (for the wide types) values past DECIMAL(38, 18)'s 1e20.
ROWS: dict[str, list[tuple[Any, Any]]] = {
    "DOUBLE": [(1.005, 2.0), (None, -2.2), (2.675, None), (None, None), (-2.2, 0.1),
               (1e25, 1.5), (None, -3e21), (1e-7, 1e300), (123456.785, 7.0), (0.0, -0.5)],
    "DECIMAL(38, 4)": [(Decimal("1.0050"), Decimal("2")), (None, Decimal("-2.2")),
                       (Decimal("2.675"), None), (None, None), (Decimal("-2.2"), Decimal("0.1")),
                       (Decimal("1e25"), Decimal("1.5")), (None, Decimal("-3e21")),
                       (Decimal("123456.785"), Decimal("7")), (Decimal("0"), Decimal("-0.5"))],
    "INTEGER": [(1, 2), (None, -2), (3, None), (None, None), (-7, 0), (2147483647, 5)],
    "BIGINT": [(1, 2), (None, -2), (3, None), (None, None), (9000000000000000000, 1),
               (None, -9000000000000000000), (3037000499, 4)],
}
#: PostgreSQL's names of the same types.
PG_TYPES = {"DOUBLE": "DOUBLE PRECISION", "DECIMAL(38, 4)": "NUMERIC(38, 4)",
            "INTEGER": "INTEGER", "BIGINT": "BIGINT"}

FORMULAS = ["IF(ISBLANK(x), 100000, 1) * 100000", "COALESCE(x, y)", "x ?? y", "COALESCE(x, y, 0)", "COALESCE(x, y, 0) + 1",
            "ROUND(x ?? 0, 2)", "ROUND(x ?? 0, 2) + (y ?? 0)", "(x ?? 0) * (x ?? 0)",
            "IF(ISBLANK(x), 0, x * 2)"]

#: Decimal mode's range: a result this large may be #NUM! where the scalar engine answers it.
_RANGE = Decimal("1e20")


def _sql(formula: str) -> str:
    return formulane.compile(formula, SCHEMA).to_sql("duckdb").select("t")


# ------------------------------------------------------------------------------ the SQL


@pytest.mark.parametrize("formula", ["COALESCE(x, y)", "x ?? y", "COALESCE(x, y, 0)"])
def test_a_branch_of_coalesce_is_read_once(formula: str) -> None:
    """x's reading is read by the value and by the error chain's blank test: written once
    (it was written twice, each time with its range test inside both casts)."""
    sql = _sql(formula)
    assert sql.count('TYPEOF("x")') == 1 and sql.count('TYPEOF("y")') == 1, sql
    assert sql.count('CAST("x" AS TEXT)') == 1, sql


def test_a_guarded_reading_has_its_test_outside() -> None:
    """The range test around the reading, once, not inside each of its two casts."""
    sql = _sql("COALESCE(x, y)")
    assert sql.count('ABS("y") < 1e20') == 1, sql
    assert 'CAST(CASE WHEN' not in sql, sql


@pytest.mark.parametrize("formula", ["ROUND(x ?? 0, 2)", "ROUNDUP(x ?? 0, 1)",
                                     "ROUNDDOWN(x ?? 0, 3)"])
def test_the_round_family_reads_its_number_once(formula: str) -> None:
    """The ROUND family's reading of a column of unknown type (`shortest_decimal`'s text
    alone, `round_sql._text_reading`): one text, bound once however often the algorithm reads
    it."""
    sql = _sql(formula)
    assert sql.count("AS TEXT") == 1 and "TYPEOF" not in sql, sql


def test_an_error_chain_of_range_tests_is_one_case() -> None:
    """COALESCE's errors, x's range test or, where x is blank, y's: one CASE (`kit.cases`
    merges a last nested CASE on a plain test; the binder merges the neighbours' one code)."""
    sql = _sql("COALESCE(x, y)")
    assert sql.count("'#NUM!'") == 1 and "'#NUM!' END END" not in sql, sql


def test_branches_of_known_types_bound_a_product() -> None:
    """IF(f, 100000, 1) is at most 100000 (its branches' joined type, DECIMAL(6, 0)): its
    product with 100000 fits DECIMAL(38, 18) on every row, with no range test and no error."""
    sql = formulane.compile("IF(f, 100000, 1) * 100000", {"f": "Boolean"}).to_sql(
        "duckdb").select("t")
    assert "ABS(" not in sql and "#NUM!" not in sql, sql


def test_a_surely_double_column_is_read_through_its_text_alone() -> None:
    """A column float mode reads as a DOUBLE: its text alone (a TRY_CAST), no TYPEOF."""
    sql = formulane.compile("ROUND(x, 2)", {"x": "Number"}).to_sql("duckdb", "float").select("t")
    assert "TYPEOF" not in sql and "TRY_CAST(CAST(" in sql, sql


# ------------------------------------------------------------------------------ answers


def _reading(value: Any) -> Decimal | None:
    """The value as the scalar engine reads it: a DOUBLE's shortest decimal."""
    if value is None:
        return None
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _agrees(got: Any, error: Any, want: Any) -> bool:
    """The engine's (value, error) against the scalar engine's answer: codes exactly, numbers
    exactly (a DOUBLE result: the nearest DOUBLE); #NUM! allowed for a result past 1e20."""
    if isinstance(want, ErrorValue):
        return bool(error == want.code)
    if want is not None and abs(Decimal(want)) >= _RANGE and error == "#NUM!":
        return got is None
    if error is not None:
        return False
    if want is None or got is None:
        return want is None and got is None
    if isinstance(got, float):
        return got == float(want)
    return Decimal(got) == Decimal(want)


def _check(run: Callable[[str], list[Any]], engine_type: str, formula: str,
           dialect: str = "duckdb") -> None:
    sql = formulane.sql_select("t", {"o": formula}, SCHEMA, keep_columns=True, dialect=dialect)
    rows = run(f'{sql} ORDER BY "i"')
    wrong = []
    for (x, y), row in zip(ROWS[engine_type], rows):
        value, error = row[3], row[4] if len(row) > 4 else None
        want = formulane.evaluate(formula, {"x": _reading(x), "y": _reading(y)}, schema=SCHEMA)
        if not _agrees(value, error, want):
            wrong.append((x, y, value, error, want))
    assert not wrong, (formula, engine_type, wrong[:4], len(wrong))


@pytest.fixture(scope="module", params=list(ROWS))
def duck(request: Any) -> Any:
    engine_type = request.param
    con = duckdb.connect()
    con.execute(f'CREATE TABLE t ("i" INTEGER, "x" {engine_type}, "y" {engine_type})')
    con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                    [(i, x, y) for i, (x, y) in enumerate(ROWS[engine_type])])
    yield engine_type, (lambda sql: con.execute(sql).fetchall())
    con.close()


@pytest.mark.parametrize("formula", FORMULAS)
def test_duckdb_answers_as_the_scalar_engine(duck: Any, formula: str) -> None:
    engine_type, run = duck
    _check(run, engine_type, formula)


@pytest.fixture(scope="module", params=list(ROWS))
def pg(request: Any) -> Any:
    if not PG_URL:
        pytest.skip("FORMULANE_TEST_POSTGRES_URL is not set")
    psycopg = pytest.importorskip("psycopg")
    engine_type = request.param
    con = psycopg.connect(PG_URL, autocommit=True, prepare_threshold=None)
    con.execute("DROP TABLE IF EXISTS t")
    con.execute(f'CREATE TEMP TABLE t ("i" INTEGER, "x" {PG_TYPES[engine_type]}, '
                f'"y" {PG_TYPES[engine_type]})')
    with con.cursor() as cursor:
        cursor.executemany("INSERT INTO t VALUES (%s, %s, %s)",
                           [(i, x, y) for i, (x, y) in enumerate(ROWS[engine_type])])

    yield engine_type, (lambda sql: con.execute(sql).fetchall())
    con.close()


@pytest.mark.parametrize("formula", FORMULAS)
def test_postgres_answers_as_the_scalar_engine(pg: Any, formula: str) -> None:
    engine_type, run = pg
    _check(run, engine_type, formula, "postgres")
