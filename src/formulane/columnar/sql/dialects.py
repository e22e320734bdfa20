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

#: Functions the forms call by name (sqlglot passes them through unchanged) that only DuckDB
#: has: refused on every other dialect. (`LIST_*` too, by prefix.)
DUCKDB_ONLY = frozenset({"RANGE", "TO_MICROSECONDS", "STRING_SPLIT", "REGEXP_FULL_MATCH",
                         "NFC_NORMALIZE", "REGEXP_ESCAPE", "LEN", "FLATTEN", "UNICODE"})

#: Dialects whose functions are listed exhaustively: a name called by a form and missing from
#: the list is refused. PostgreSQL's is what its catalog (`pg_proc`) and grammar (GREATEST,
#: LEAST, COALESCE, NULLIF are keywords there) have among the names the forms call, checked
#: against a server by tests/test_backends_postgres.py.
KNOWN_FUNCTIONS: dict[str, frozenset[str]] = {
    "postgres": frozenset({
        "ABS", "ARRAY_TO_STRING", "CHR", "COALESCE", "EXP", "FLOOR", "GREATEST", "LEAST", "LEFT",
        "LENGTH", "LN", "LOG10", "LPAD", "LTRIM", "NULLIF", "POW", "REGEXP_REPLACE", "REPLACE",
        "REVERSE", "RIGHT", "RPAD", "RTRIM", "SIGN", "SPLIT_PART", "SQRT", "STARTS_WITH",
        "STRPOS", "SUBSTRING", "TANH", "TRANSLATE", "TRUNC"}),
}

#: Functions sqlglot knows but renders, for these dialects, under a name the engine lacks.
UNRENDERED: dict[str, dict[type[exp.Expr], str]] = {
    "postgres": {exp.DateFromParts: "DATE_FROM_PARTS", exp.RegexpExtractAll: "REGEXP_EXTRACT_ALL"},
}

#: Dialects without TRY_CAST (sqlglot writes CAST, which fails the query where the form
#: expects NULL). A TRY_CAST of a number's own text (`CAST(x AS VARCHAR)`, which the forms
#: guard by magnitude) cannot fail and is kept; one of any other text (Excel's reading of a
#: number in a text, `"12" + 1` in the excel profile) is refused there.
NO_TRY_CAST = frozenset({"postgres"})

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
            if isinstance(node, exp.TryCast) and dialect in NO_TRY_CAST \
                    and not _number_text(node.this):
                return "TRY_CAST (a text that is not a number would fail the query)"
            if isinstance(node, exp.Array) and not node.expressions \
                    and dialect in UNTYPED_EMPTY_ARRAY:
                return "way to type an empty list (an empty ARRAY needs a declared type)"
            if isinstance(node, exp.Anonymous):
                name = node.name.upper()
                known = KNOWN_FUNCTIONS.get(dialect)
                if name.startswith("LIST_") or name in DUCKDB_ONLY or \
                        (known is not None and name not in known):
                    return f"function {name} (DuckDB's; the form calls it by name)"
    return None


def _number_text(e: exp.Expr) -> bool:
    """Whether ``e`` is a value cast to text by the form itself (a number's digits)."""
    return isinstance(e, exp.Cast) and not isinstance(e, exp.TryCast) and e.to.is_type(
        exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT)


def refuse_unportable(trees: Iterable[exp.Expr | None], dialect: str, span: Span | None = None
                      ) -> None:
    """Raise `Unsupported` when the finished SQL needs something ``dialect`` lacks."""
    what = lacking(trees, dialect)
    if what is not None:
        name = _NAMES.get(dialect, dialect)
        raise _refusal(dialect, f"{name} has no {what}", what, span)


def unwritable(exc: Exception, dialect: str, span: Span | None = None) -> Unsupported:
    """The refusal for what sqlglot reports it cannot write for ``dialect`` (its
    ``UnsupportedError``, raised while rendering)."""
    name = _NAMES.get(dialect, dialect)
    reason = f"sqlglot cannot write it for {name}: {str(exc).splitlines()[0]}"
    return _refusal(dialect, reason, "sql", span)


def _refusal(dialect: str, reason: str, function: str, span: Span | None) -> Unsupported:
    name = _NAMES.get(dialect, dialect)
    return Unsupported(f"SQL for {name} cannot express this formula: {reason}",
                       function=function, backend="sql", span=span, reason=reason,
                       hint="run it on DuckDB, on polars (formulane.apply) or on the scalar "
                            "engine, which take it")
