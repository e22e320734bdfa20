"""The SQL backend's SQLite dialect, executed on the standard library's SQLite.

docs/columnar.md offers SQL for SQLite; this runs it there, two ways:

- every golden case DuckDB passes with DOUBLE columns, as SQLite SQL (``numbers="float"``:
  SQLite stores numbers as REAL) over a one-row table of the case's variables;
- the function families' cases over columns (the rows and formulas of
  tests/functions/test_{math,text,excelfns,dates,lists}_backends.py: month ends, leap days,
  ties, huge and tiny numbers, blanks...), compared row by row with the scalar engine through
  the families' own comparison (`_engines.differing`).

SQLite has no DATE, BOOLEAN or DECIMAL type: a Date column holds ISO text, a Boolean 0/1, a
Number REAL, and a result is read back by the program's type (`_read`). Each formula is either
refused when compiling (E213, naming what SQLite lacks: `columnar/sql/dialects.py`) or runs and
agrees; a query SQLite rejects is a failure ("no foreign exception"), except the entries of
`KNOWN`, each with its reason and checked both ways (a known difference that disappears must
leave the list).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

import pytest

import formulane
from formulane import ErrorValue, Unsupported
from formulane.schema import normalize_schema
from formulane.types import Type

from backend_runner import CASES, NotApplicable, program_for, row_for
from family_cases import FamilyCase, family_cases
from test_backends import check, outcome
from functions import _engines as E

pytestmark = pytest.mark.slow

from formulane.columnar.polars.frame import from_polars_value  # noqa: E402
from formulane.columnar.sql.select import to_sql_form  # noqa: E402

#: (module, formula) -> why SQLite differs there (docs/columnar.md says so too).
KNOWN: dict[tuple[str, str], str] = {
    ("test_dates_backends", "d + n"):
        "SQLite's date functions answer NULL past 9999-12-31, so the range test of a date "
        "pushed past it reads NULL (blank) where Excel says #NUM!",
}

_COLUMN = {"Number": "REAL", "Text": "TEXT", "Boolean": "INTEGER", "Date": "TEXT",
           "DateTime": "TEXT"}


def _column(t: Type) -> str | None:
    return _COLUMN.get(t.kind)


def _write(value: Any) -> Any:
    """A Python value as SQLite stores it (dates as ISO text, booleans 0/1, numbers REAL)."""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, (int, float, str)):
        return value
    return float(value)


def _read(value: Any, t: Type) -> Any:
    """What SQLite answered, as the program's type."""
    if value is None:
        return None
    if t.kind == "Boolean":
        return bool(value)
    if t.kind == "Date":
        return dt.date.fromisoformat(value)
    if t.kind == "DateTime":
        return dt.datetime.fromisoformat(value)
    return value


def test_sqlite_runs_the_golden_cases() -> None:
    con = sqlite3.connect(":memory:")
    ran = 0
    refused: list[str] = []
    problems: dict[str, str] = {}
    for i, case in enumerate(CASES):
        if outcome(i, "duckdb-float")[0] != "pass":
            continue
        try:
            program, types = program_for(case)
            if any(_column(t) is None for t in types.values()):
                continue  # a list or record column: SQLite has no such type
            row = row_for(case, types)
            form = to_sql_form(program.root, "sqlite", "float")
        except Unsupported as exc:
            refused.append(f"{case.id}: {exc.reason}")
            continue
        except NotApplicable:
            continue
        columns = ", ".join(f'? AS "{n}"' for n in types) or "1 AS __row"
        try:
            con.execute("DROP TABLE IF EXISTS t")
            con.execute(f"CREATE TEMP TABLE t AS SELECT {columns}",
                        [_write(row[n]) for n in types])
            result = con.execute(form.select("t", "v", "e")).fetchone()
        except sqlite3.Error as exc:
            problems[case.id] = f"SQLite rejected it: {exc}"
            continue
        ran += 1
        if len(result) > 1 and result[1] is not None:
            actual: Any = ErrorValue(result[1])
        else:
            actual = from_polars_value(_read(result[0], program.type), program.type)
        problem = check(case, "duckdb-float", actual)
        if problem:
            problems[case.id] = problem
    print(f"\nsqlite {sqlite3.sqlite_version}: {ran} golden cases ran, {len(refused)} refused, "
          f"{len(problems)} failed")
    assert ran >= 900, ran
    assert not problems, "\n".join(f"{k}: {v}" for k, v in list(problems.items())[:30])
    assert all("SQLite has no" in r for r in refused), refused


# ------------------------------------------------------------- the families over columns


def _unfit(schema: dict[str, str]) -> bool:
    """A list, record or duration column: SQLite has no such type (its list forms are
    refused anyway: no arrays)."""
    return any(_column(t) is None for t in normalize_schema(schema).values())


@pytest.mark.parametrize("case", [c for c in family_cases() if not _unfit(c.schema)],
                         ids=lambda c: c.id)
def test_sqlite_agrees_with_the_scalar_engine_over_columns(case: FamilyCase) -> None:
    module, formula, schema, rows = case.module, case.formula, case.schema, case.rows
    profile, registry = case.profile, case.registry
    types = normalize_schema(schema)
    try:
        query = formulane.sql_select("t", {"out": formula}, schema, dialect="sqlite",
                                     profile=profile, registry=registry, numbers="float")
    except Unsupported as exc:
        assert "SQLite has no" in exc.reason or "SQL cannot express" in str(exc), exc.reason
        return
    program = formulane.compile(formula, schema, profile=profile, registry=registry)
    con = sqlite3.connect(":memory:")
    names = list(types)
    con.execute('CREATE TABLE t ("__row" INTEGER, '
                + ", ".join(f'"{n}" {_column(t)}' for n, t in types.items()) + ")")
    con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * (len(names) + 1))})",
                    [[i] + [_write(row[n]) for n in names] for i, row in enumerate(rows)])
    cursor = con.execute(f'SELECT * FROM ({query}) ORDER BY "__row"')  # a rejection fails
    labels = [d[0] for d in cursor.description]
    actual = []
    for row in cursor.fetchall():
        got = dict(zip(labels, row))
        actual.append((_read(got["out"], program.type), got.get("out__error")))
    expected = E.run_scalar(formula, schema, rows, profile=profile, registry=registry)
    bad = E.differing(expected, actual)
    known = KNOWN.get((module, formula))
    if known is not None:
        assert bad, f"now agrees on SQLite, remove from KNOWN: {known}"
        pytest.xfail(known)
    assert not bad, E.report(f"{formula} on SQLite", rows, expected, actual, bad)
