"""The golden cases DuckDB runs, and the function families over columns, as PostgreSQL SQL on a
real PostgreSQL server.

docs/columnar.md offers the SQL backend for PostgreSQL; this runs it there. Every golden case
that passes on DuckDB with DECIMAL columns is compiled with ``dialect="postgres"`` and laid out
as a one-row temporary table (Number columns ``NUMERIC(38, s)`` fitted to the value, Text
``TEXT``, lists as arrays); the query's value and error are compared with the case's expected
answer as the DuckDB layout is (`test_backends.check`). A case is either refused when compiling,
with a reason naming what PostgreSQL lacks (`columnar/sql/dialects.py`: array lambdas, DuckDB's
list functions), or it runs and agrees: a query PostgreSQL rejects is a failure ("no foreign
exception"), except the cases of `KNOWN`, each with its reason, checked both ways (a known
failure that starts passing must leave the list).

The second test runs the function families' formulas over columns of tricky rows
(`family_cases`: the rows and formulas of tests/functions/test_*_backends.py) in both numeric
modes (DOUBLE PRECISION and NUMERIC(38, 18) columns), row by row against the scalar engine;
`FAMILY_KNOWN` lists what PostgreSQL itself refuses to compute, with the reason.

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
from family_cases import FamilyCase, family_cases
from functions import _engines as E
from test_backends import check, outcome

psycopg = pytest.importorskip("psycopg")
URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not URL, reason="FORMULANE_TEST_POSTGRES_URL is not set (a PostgreSQL "
                                       "server URL; .ci/run starts one)"),
]

from formulane.columnar.polars.frame import from_polars_value  # noqa: E402
from formulane.columnar.sql.select import to_sql_form  # noqa: E402

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


# ------------------------------------------------------------- the families over columns

#: (formula, numbers) -> why PostgreSQL fails the query (kept exact: a formula that starts
#: running fails the test until it leaves this list). PostgreSQL's float8 arithmetic raises
#: where a double leaves its range ("value out of range: overflow/underflow") instead of
#: answering inf or 0 as IEEE and the other engines do. The SQL guards EXP, LN, and `*`, `/`
#: and POWER whose operands are columns, bindings or literals (dialects.adapt: POWER(d, x)
#: past 1e308 now runs); a step over a larger operand (the forms' inline expressions below)
#: is not guarded yet (docs/columnar.md, known gap).
FAMILY_KNOWN: dict[tuple[str, str], str] = {
    (formula, numbers): why
    for numbers in ("float", "decimal")
    for formula, why in {
        "SECH(x)": "float8 underflow raises (SECH of a large x: a product of inline steps)",
        "NORM.S.DIST(x, FALSE)": "float8 underflow raises (the density far out)",
        **{f"{name}({args})": "float8 underflow raises (POWER(1 + r, n) at r = -1.5, "
                              "n = 1e6, inside a product of inline steps)"
           for name in ("PMT", "PV", "FV") for args in ("r, n, p", "r, n, p, f, t")},
    }.items()
}


def _family_column(t: Type, numbers: str) -> str | None:
    if t.kind == "Number":
        return "NUMERIC(38, 18)" if numbers == "decimal" else "DOUBLE PRECISION"
    if t.kind == "List":
        inner = None if t.elem is None else _family_column(t.elem, numbers)
        return None if inner is None else inner + "[]"
    return {"Text": "TEXT", "Boolean": "BOOLEAN", "Date": "DATE",
            "DateTime": "TIMESTAMPTZ"}.get(t.kind)


def _holdable(value: Any) -> bool:
    """PostgreSQL shows no instant of year 1 in a zone west of UTC (the session's is New
    York's, as DuckDB's in the families' own tests): such rows are left out."""
    import datetime as dt

    return not (isinstance(value, dt.datetime) and value.year == 1)


def _laid_out(case: FamilyCase) -> bool:
    """Whether every column has a PostgreSQL type here (records and nested lists do not)."""
    from formulane.schema import normalize_schema

    return all(_family_column(t, "float") is not None
               for t in normalize_schema(case.schema).values())


@pytest.mark.parametrize("numbers", ["float", "decimal"])
@pytest.mark.parametrize("case", [c for c in family_cases() if _laid_out(c)], ids=lambda c: c.id)
def test_postgres_agrees_with_the_scalar_engine_over_columns(case: FamilyCase,
                                                             numbers: str) -> None:
    from formulane import sql_select
    from formulane.schema import normalize_schema

    types = normalize_schema(case.schema)
    columns = {n: _family_column(t, numbers) for n, t in types.items()}
    rows = [r for r in E.rows_for(numbers, case.rows) if all(map(_holdable, r.values()))]
    try:
        query = sql_select("t", {"out": case.formula}, case.schema, dialect="postgres",
                           profile=case.profile, registry=case.registry, numbers=numbers)
    except Unsupported as exc:
        assert "PostgreSQL has no" in exc.reason or "SQL cannot express" in str(exc), exc.reason
        return
    names = list(types)
    with psycopg.connect(URL, autocommit=True) as con:
        con.execute("SET TimeZone = 'America/New_York'")  # results must not depend on it
        con.execute('CREATE TEMP TABLE t ("__row" INTEGER'
                    + "".join(f', "{n}" {columns[n]}' for n in names) + ")")
        try:
            with con.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO t VALUES ({', '.join(['%s'] * (len(names) + 1))})",
                    [[i] + [r[n] for n in names] for i, r in enumerate(rows)])
        except psycopg.Error as exc:  # ragged arrays, a text in a Number column...
            pytest.skip(f"PostgreSQL cannot hold these rows: {str(exc).splitlines()[0]}")
        known = FAMILY_KNOWN.get((case.formula, numbers))
        try:
            cursor = con.execute(f'SELECT * FROM ({query}) AS q ORDER BY "__row"')
        except psycopg.Error as exc:
            if known is not None:
                pytest.xfail(known)
            raise AssertionError(f"PostgreSQL rejected it: {exc}") from None
        assert known is None, f"now runs on PostgreSQL, remove from FAMILY_KNOWN: {known}"
        labels = [d.name for d in cursor.description]
        got = [dict(zip(labels, r)) for r in cursor.fetchall()]
    actual = [(g["out"], g.get("out__error")) for g in got]
    expected = E.run_scalar(case.formula, case.schema, rows, profile=case.profile,
                            registry=case.registry)
    E.assert_agree(f"{case.formula} on PostgreSQL ({numbers})", rows, expected, actual)
