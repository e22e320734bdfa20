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
    ("sqlite", "YEARFRAC(s, e, 1)", DATES, "array lambdas"),
    ("bigquery", "YEARFRAC(s, e, 1)", DATES, "array lambdas"),
    ("postgres", "t + 1", {"t": "Text"}, "TRY_CAST"),  # excel profile: the text read as VALUE
    # what sqlglot itself reports it cannot write (TRIM's REGEXP_REPLACE flags on BigQuery)
    ("bigquery", "TRIM(t)", {"t": "Text"}, "sqlglot cannot write it for BigQuery"),
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
    program = formulane.compile('IF(x > 2, ROUND(x * 1.5, 2), -x)', schema={"x": "Number"})
    assert "ROUND" in program.to_sql(dialect).select("t")
    # functions PostgreSQL has (its list), a TRY_CAST of a number's own text (ROUNDUP's step)
    for formula in ('LEN(t) + ROUNDUP(x, n)', 'SUBSTITUTE(t, "b", "x")', "MOD(x, n)"):
        formulane.compile(formula, schema={"x": "Number", "n": "Number", "t": "Text"}
                          ).to_sql(dialect)


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
