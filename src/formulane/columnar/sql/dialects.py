"""What each SQL dialect can run of what the forms write; a program that needs more is refused.

The SQL compiler writes one sqlglot tree for every dialect and sqlglot renders it; most of it
transpiles (CASE, CAST, arithmetic, string and date functions sqlglot knows). Two kinds of
construct do not: array lambdas (`LIST_FILTER(xs, x -> ...)`: DuckDB, Spark, Trino and
Snowflake have them; PostgreSQL, SQLite and BigQuery do not) and engine functions sqlglot does
not know, which it passes through by name (`exp.Anonymous`: DuckDB's `LIST_SUM`, `RANGE`,
`TO_MICROSECONDS`...). Rendered for an engine that lacks them, the query would fail in the
engine, which the columnar contract forbids ("no foreign exception", docs/columnar.md); so
`refuse_unportable` walks the finished trees and raises `Unsupported` (E213) naming the
construct. What each dialect has is data here, one table: PostgreSQL's entry is checked by
executing every golden case on a PostgreSQL server (tests/test_backends_postgres.py); DuckDB
and Spark are executed too; Trino, Snowflake, BigQuery and SQLite are rendered, not executed,
and their entries say only what their documentation says they lack.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from ...errors import Unsupported
from ...source import Span

#: Dialects with array lambdas (sqlglot renders `exp.Lambda` for them).
LAMBDA_DIALECTS = frozenset({"duckdb", "spark", "trino", "snowflake"})

#: Engine functions the forms call by name (sqlglot passes them through unchanged), and the
#: dialects that have them with the meaning the forms rely on. A name missing here is DuckDB's
#: only: the forms are written for DuckDB first.
NAMED_FUNCTIONS: dict[str, frozenset[str]] = {
    "ABS": frozenset({"duckdb", "postgres", "spark", "trino", "bigquery", "snowflake",
                      "sqlite"}),
    "TRUNC": frozenset({"duckdb", "postgres", "spark", "snowflake"}),
}

#: Functions sqlglot knows but renders, for these dialects, under a name the engine lacks.
UNRENDERED: dict[str, dict[type[exp.Expr], str]] = {
    "postgres": {exp.DateFromParts: "DATE_FROM_PARTS", exp.RegexpExtractAll: "REGEXP_EXTRACT_ALL"},
}

#: Dialects that cannot type an empty array literal (`ARRAY[]` needs a cast there).
UNTYPED_EMPTY_ARRAY = frozenset({"postgres"})

_NAMES = {"postgres": "PostgreSQL", "sqlite": "SQLite", "bigquery": "BigQuery",
          "spark": "Spark", "trino": "Trino", "snowflake": "Snowflake", "duckdb": "DuckDB"}


def lacking(trees: Iterable[exp.Expr | None], dialect: str) -> str | None:
    """The first construct of ``trees`` that ``dialect`` lacks, described, or None."""
    if dialect == "duckdb":
        return None
    for tree in trees:
        if tree is None:
            continue
        for node in tree.walk():
            if isinstance(node, exp.Lambda) and dialect not in LAMBDA_DIALECTS:
                return "array lambdas (the list forms filter and map arrays with them)"
            unrendered = UNRENDERED.get(dialect, {}).get(type(node))
            if unrendered is not None:
                return f"function {unrendered}"
            if isinstance(node, exp.Array) and not node.expressions \
                    and dialect in UNTYPED_EMPTY_ARRAY:
                return "way to type an empty list (an empty ARRAY needs a declared type)"
            if isinstance(node, exp.Anonymous):
                name = node.name.upper()
                if dialect not in NAMED_FUNCTIONS.get(name, frozenset({"duckdb"})):
                    return f"function {name} (DuckDB's; the form calls it by name)"
    return None


def refuse_unportable(trees: Iterable[exp.Expr | None], dialect: str, span: Span | None = None
                      ) -> None:
    """Raise `Unsupported` when the finished SQL needs something ``dialect`` lacks."""
    what = lacking(trees, dialect)
    if what is None:
        return
    name = _NAMES.get(dialect, dialect)
    raise Unsupported(f"SQL for {name} cannot express this formula: {name} has no {what}",
                      function=what, backend="sql", span=span,
                      reason=f"{name} has no {what}",
                      hint="run it on DuckDB, on polars (formulane.apply) or on the scalar "
                           "engine, which take it")
