"""The golden cases DuckDB runs, as PostgreSQL SQL on a real PostgreSQL server.

docs/columnar.md offers the SQL backend for PostgreSQL; this runs it there. Every golden case
that passes on DuckDB with DECIMAL columns is compiled with ``dialect="postgres"`` and laid out
as a one-row temporary table (Number columns ``NUMERIC(38, s)`` fitted to the value, Text
``TEXT``, lists as arrays); the query's value and error are compared with the case's expected
answer as the DuckDB layout is (`test_backends.check`). A case is either refused when compiling,
with a reason naming what PostgreSQL lacks (`columnar/sql/dialects.py`: array lambdas, DuckDB's
list functions), or it runs and agrees: a query PostgreSQL rejects is a failure ("no foreign
exception"), except the cases of `KNOWN`, each with its reason, checked both ways (a known
failure that starts passing must leave the list).

Needs ``FORMULANE_TEST_POSTGRES_URL`` (`.ci/run` starts a server and sets it) and psycopg.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from formulane import ErrorValue, Unsupported
from formulane.types import Type

from backend_runner import CASES, NotApplicable, program_for, row_for, sql_number_type
from test_backends import check, outcome

psycopg = pytest.importorskip("psycopg")
URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not URL, reason="FORMULANE_TEST_POSTGRES_URL is not set (a PostgreSQL "
                                       "server URL; .ci/run starts one)"),
]

from formulane.columnar.polars.frame import from_polars_value, to_sql_form  # noqa: E402

#: Golden cases PostgreSQL rejects today, by case id, with the reason (kept exact: a case
#: that starts passing fails the test until it leaves this list).
KNOWN: dict[str, str] = {
}


def pg_type(t: Type, value: Any) -> str:
    if t.kind == "Number":
        return sql_number_type(value, "decimal").replace("DECIMAL", "NUMERIC")
    if t.kind == "List":
        assert t.elem is not None
        return ("NUMERIC" if t.elem.kind == "Number" else pg_type(t.elem, None)) + "[]"
    if t.kind == "Record":
        raise NotApplicable("a record column (PostgreSQL has composite types, not this layout)")
    return {"Text": "TEXT", "Boolean": "BOOLEAN", "Date": "DATE",
            "DateTime": "TIMESTAMPTZ"}[t.kind]


def test_postgres_runs_the_sql_golden_cases() -> None:
    started = time.monotonic()
    con = psycopg.connect(URL, autocommit=True)
    ran = over_columns = 0
    refused: list[str] = []
    problems: dict[str, str] = {}
    try:
        for i, case in enumerate(CASES):
            if outcome(i, "duckdb-decimal")[0] != "pass":
                continue
            try:
                program, types = program_for(case)
                row = row_for(case, types)
                form = to_sql_form(program.root, "postgres", "decimal")
                columns = ", ".join(f'%s::{pg_type(t, row[n])} AS "{n}"'
                                    for n, t in types.items()) or "1 AS __row"
            except Unsupported as exc:
                refused.append(f"{case.id}: {exc.reason}")
                continue
            except NotApplicable:
                continue
            try:
                with con.transaction():
                    con.execute("DROP TABLE IF EXISTS t")
                    con.execute(f"CREATE TEMP TABLE t AS SELECT {columns}",
                                [row[n] for n in types])
                    result = con.execute(form.select("t", "v", "e")).fetchone()
            except psycopg.Error as exc:
                problems[case.id] = f"PostgreSQL rejected it: {str(exc).splitlines()[0]}"
                continue
            assert result is not None
            ran += 1
            over_columns += bool(program.uses)
            if len(result) > 1 and result[1] is not None:
                actual: Any = ErrorValue(result[1])
            else:
                actual = from_polars_value(result[0], program.type)
            problem = check(case, "duckdb-decimal", actual)
            if problem:
                problems[case.id] = problem
    finally:
        con.close()
    print(f"\npostgres: {ran} golden cases ran ({over_columns} over columns), {len(refused)} "
          f"refused, {len(problems)} failed ({len(KNOWN)} known), "
          f"{time.monotonic() - started:.1f}s")
    assert ran >= 1000 and over_columns >= 100, (ran, over_columns)
    unknown = {k: v for k, v in problems.items() if k not in KNOWN}
    assert not unknown, "\n".join(f"{k}: {v}" for k, v in list(unknown.items())[:30])
    assert set(KNOWN) <= set(problems), f"now passing, remove from KNOWN: " \
                                        f"{sorted(set(KNOWN) - set(problems))}"
    # every refusal names what PostgreSQL lacks (columnar/sql/dialects.py), nothing else
    assert all("PostgreSQL has no" in r for r in refused), refused
