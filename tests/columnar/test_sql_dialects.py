"""A program whose SQL needs what a dialect lacks is refused when compiling (E213), naming it.

`columnar/sql/dialects.py` holds what each dialect lacks of what the forms write (array
lambdas, DuckDB's list functions passed through by name, functions sqlglot renders under a name
the engine lacks). The PostgreSQL entries are checked against a server by
tests/test_backends_postgres.py; here the decisions themselves, without an engine.
"""

from __future__ import annotations

import pytest
from sqlglot import exp

import formulane
from formulane.columnar.sql.dialects import lacking

LIST = {"xs": "List[Number]"}
DATES = {"s": "Date", "e": "Date"}


@pytest.mark.parametrize("dialect,formula,schema,lacks", [
    ("postgres", "SUM(xs)", LIST, "function LIST_SUM"),
    ("spark", "SUM(xs)", LIST, "function LIST_SUM"),
    ("trino", "MAX(xs)", LIST, "function LIST_MAX"),
    ("postgres", "YEARFRAC(s, e, 1)", DATES, "function DATE_FROM_PARTS"),
    ("sqlite", "YEARFRAC(s, e, 1)", DATES, "array"),
    ("bigquery", "YEARFRAC(s, e, 1)", DATES, "array lambdas"),
    ("postgres", "t + 1", {"t": "Text"}, "TRY_CAST"),  # excel profile: the text read as VALUE
    # what sqlglot itself reports it cannot write (TRIM's REGEXP_REPLACE flags on BigQuery)
    ("bigquery", "TRIM(t)", {"t": "Text"}, "sqlglot cannot write it for BigQuery"),
    # the server rejects these queries (found by tests/test_differential.py)
    ("postgres", '"a\x00b" & t', {"t": "Text"}, "NUL characters"),
    ("postgres", "[[1, 2], [3]]", {}, "rectangular"),
])
def test_refused_naming_what_the_dialect_lacks(dialect: str, formula: str, schema: dict,
                                               lacks: str) -> None:
    program = formulane.compile(formula, schema=schema, profile="excel")
    with pytest.raises(formulane.Unsupported) as info:
        program.to_sql(dialect)
    assert info.value.code == "E213"
    assert lacks in info.value.reason
    assert info.value.backend == "sql"
    assert info.value.diagnostics[0].hint  # says where it runs instead
    program.to_sql("duckdb")  # the same program compiles for DuckDB


@pytest.mark.parametrize("dialect", ["postgres", "spark", "trino", "snowflake", "sqlite",
                                     "bigquery"])
def test_portable_formulas_compile_everywhere(dialect: str) -> None:
    numbers = "float" if dialect == "sqlite" else "decimal"  # SQLite has no DECIMAL
    program = formulane.compile('IF(x > 2, ROUND(x * 1.5, 2), -x)', schema={"x": "Number"})
    assert "ROUND" in program.to_sql(dialect, numbers=numbers).select("t")
    # functions PostgreSQL has (its list), a TRY_CAST of a number's own text (ROUNDUP's step)
    formulas = ['LEN(t) + ROUNDUP(x, n)', 'SUBSTITUTE(t, "b", "x")', "MOD(x, n)"]
    if dialect == "sqlite":  # ROUNDUP's and MOD's exact decimal paths need DECIMAL
        formulas = ['LEN(t) + ROUND(x, 2)', 'SUBSTITUTE(t, "b", "x")', "ABS(x - n) / 2"]
    for formula in formulas:
        formulane.compile(formula, schema={"x": "Number", "n": "Number", "t": "Text"}
                          ).to_sql(dialect, numbers=numbers)


@pytest.mark.parametrize("formula,schema,lacks", [
    ("YEARFRAC(s, e, 1)", DATES, "array"),
    ('REGEXTEST(t, "a+")', {"t": "Text"}, "regular expressions"),
    ("ROUND(x, n)", {"x": "Number", "n": "Number"}, "SQLite has no"),
    ("ROUNDDOWN(x, 2)", {"x": "Number"}, "DECIMAL type"),  # its decimal-grid path
    ("IF(x > 0, DATETIME(2024, 3, 1, 12, 0, 0), t)", {"x": "Number", "t": "DateTime"},
     "time zones"),
])
def test_sqlite_refuses_what_it_lacks_in_float_mode(formula: str, schema: dict,
                                                   lacks: str) -> None:
    program = formulane.compile(formula, schema=schema)
    with pytest.raises(formulane.Unsupported) as info:
        program.to_sql("sqlite", numbers="float")
    assert info.value.code == "E213" and lacks in info.value.reason, info.value.reason


def test_sqlite_refuses_decimal_numbers_and_defaults_to_float() -> None:
    program = formulane.compile("LEN(t) + 1", schema={"t": "Text"})
    with pytest.raises(formulane.Unsupported) as info:
        program.to_sql("sqlite", numbers="decimal")
    assert "numbers='float'" in info.value.diagnostics[0].hint
    assert "DECIMAL" in info.value.reason
    # by default SQLite's own mode (float), the same SQL as asking for it
    assert program.to_sql("sqlite").select("t") == \
        program.to_sql("sqlite", numbers="float").select("t")
    assert "LENGTH" in formulane.sql_select("t", {"n": "LEN(t) + 1"}, {"t": "Text"},
                                            dialect="sqlite")


@pytest.mark.parametrize("formula,schema,sqlite_sql", [
    ("WEEKDAY(d)", {"d": "Date"}, "MOD("),  # `%` is an integer remainder in SQLite
    ("YEAR(d)", {"d": "Date"}, "CAST(STRFTIME('%Y', \"d\") AS INTEGER)"),
    ("LEFT(t, 2)", {"t": "Text"}, "SUBSTR(\"t\", 1, "),
    ("CONTAINS(t, \"a\")", {"t": "Text"}, "INSTR("),
    ("ROUND(x, -2)", {"x": "Number"}, " / 1e2) * 1e2"),  # SQLite reads -2 digits as 0
])
def test_sqlite_writes_its_own_functions(formula: str, schema: dict, sqlite_sql: str) -> None:
    sql = formulane.compile(formula, schema=schema).to_sql("sqlite", numbers="float").select("t")
    assert sqlite_sql in sql, sql
    assert " % " not in sql and "EXTRACT(" not in sql and "LEFT(" not in sql


def test_the_table_decides_by_construct() -> None:
    lam = exp.Lambda(this=exp.column("x"), expressions=[exp.to_identifier("x")])
    assert lacking([lam], "spark") is None and lacking([lam], "duckdb") is None
    assert lacking([lam], "postgres") is not None
    absolute = exp.Anonymous(this="ABS", expressions=[exp.column("x")])
    assert lacking([absolute], "postgres") is None
    listed = exp.Anonymous(this="LIST_SUM", expressions=[exp.column("xs")])
    assert lacking([None, listed], "snowflake") == \
        "function LIST_SUM (DuckDB's; the form calls it by name)"
    assert lacking([listed], "duckdb") is None
    assert lacking([exp.Array(expressions=[])], "postgres") is not None
    assert lacking([exp.Array(expressions=[])], "duckdb") is None


def test_sqlite_runs_a_list_that_is_always_an_error() -> None:
    """`CAST(NULL AS ARRAY<TEXT>)` is a syntax error in SQLite (no ARRAY type): a list that is
    always an error is a plain NULL there, beside its error code (found by the differential)."""
    import sqlite3

    sql = formulane.sql_select("t", {"o": "REGEXEXTRACTALL(NA(), s, a)"},
                               {"s": "Text", "a": "Number"}, dialect="sqlite",
                               keep_columns=False)
    assert "ARRAY" not in sql, sql
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (s TEXT, a REAL)")
    con.execute("INSERT INTO t VALUES ('abc', 1)")
    assert con.execute(sql).fetchall() == [(None, "#N/A")]


def test_postgres_keeps_rectangular_lists_of_lists() -> None:
    sql = formulane.sql_select("t", {"o": "[[1, 2], [3, 4]]"}, {}, dialect="postgres",
                               keep_columns=False)
    assert "ARRAY[ARRAY[1, 2], ARRAY[3, 4]]" in sql, sql
