"""Comparisons of two DECIMAL columns of different scales, on the real engines.

Spark compares a DECIMAL(38, 4) with a DECIMAL(38, 0) at the smaller scale (so
``CAST(0.1143 AS DECIMAL(38, 4)) = CAST(0 AS DECIMAL(38, 0))`` is TRUE on Spark 4), and DuckDB
casts the coarser one to the finer scale, aborting the whole query for a value that scale cannot
hold (1e36 in a DECIMAL(38, 0) beside a DECIMAL(38, 4)). The compiler compares two Number
operands whose types may differ as DECIMAL(38, 18), or in DOUBLE where a side is past 1e20
(`sql_join.compare_decimals`; docs/columnar.md, "Engine notes"): the answers are the scalar
engine's, never an abort. Run on
DuckDB always, on local Spark when pyspark and Java are here (else skipped with the reason),
on PostgreSQL when ``FORMULANE_TEST_POSTGRES_URL`` is set.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import duckdb
import pytest

import formulane
from formulane import ErrorValue

#: One row; the columns' scales differ, as a real table's do.
TABLE = {
    "a": ("DECIMAL(38, 4)", Decimal("0.1143")),
    "b": ("DECIMAL(38, 0)", Decimal("0")),
    "c": ("DECIMAL(38, 2)", Decimal("0.11")),
    "d": ("DECIMAL(38, 3)", Decimal("0.114")),
    "huge": ("DECIMAL(38, 0)", Decimal("1e36")),
}
SCHEMA = {name: "Number" for name in TABLE}
TYPES = {name: t for name, (t, _) in TABLE.items()}

#: Each answered wrong on Spark before the fix (the smaller scale: a = b, c = a, d = a TRUE).
FORMULAS = [
    "a = b", "a <> b", "a > b", "a >= b", "a < b", "a <= b", "b < a", "b = a",
    "a = c", "c = a", "c < a", "a > d", "d = a", "d < a",
    "IF(a > b, a, b)", "IF(a = b, 1, 2)", "IF(c < a, a, c)", "AND(a > b, d < a)",
    "SWITCH(a, b, 1, 2)", "SWITCH(a, c, 1, d, 2, 3)", "SWITCH(c, a, 1, 0.11, 2, 3)",
]

#: A value DECIMAL(38, 18) cannot hold, compared with a finer column (DuckDB aborted the query).
HUGE = ["huge > a", "a < huge", "huge = a", "huge <> a", "IF(huge > a, 1, 2)", "huge > huge",
        "SWITCH(huge, a, 1, 2)", "IF(huge < a, huge, a * 2)"]


def _scalar(formula: str) -> Any:
    return formulane.compile(formula, SCHEMA).evaluate({n: v for n, (_, v) in TABLE.items()})


def _sql(formula: str, dialect: str, types: Any) -> str:
    given = {} if types is None else {"column_types": types}
    return formulane.sql_select("t", {"v": formula}, SCHEMA, dialect=dialect,
                                keep_columns=False, **given)


def _answer(row: Any) -> Any:
    if len(row) > 1 and row[1] is not None:
        return ErrorValue(row[1])
    return row[0]


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, (bool, ErrorValue)) or want is None:
        return type(got) is type(want) and got == want
    return got is not None and not isinstance(got, (bool, ErrorValue)) \
        and Decimal(str(got)) == Decimal(str(want))


@pytest.fixture(scope="module")
def con() -> Any:
    c = duckdb.connect()
    columns = ", ".join(f'?::{t} AS "{n}"' for n, (t, _) in TABLE.items())
    c.execute(f"CREATE TABLE t AS SELECT {columns}", [v for _, v in TABLE.values()])
    yield c
    c.close()


@pytest.mark.parametrize("with_types", [False, True], ids=["untyped", "typed"])
@pytest.mark.parametrize("formula", FORMULAS)
def test_duckdb_compares_decimal_scales_exactly(con: Any, formula: str, with_types: bool) -> None:
    want = _scalar(formula)
    got = _answer(con.execute(_sql(formula, "duckdb", TYPES if with_types else None)).fetchone())
    assert _same(got, want), (formula, got, want)


@pytest.mark.parametrize("with_types", [False, True], ids=["untyped", "typed"])
@pytest.mark.parametrize("formula", HUGE)
def test_duckdb_comparison_past_the_scale_answers_not_aborts(con: Any, formula: str,
                                                             with_types: bool) -> None:
    want = _scalar(formula)
    got = _answer(con.execute(_sql(formula, "duckdb", TYPES if with_types else None)).fetchone())
    assert _same(got, want), (formula, got, want)


def test_one_scale_or_an_integer_literal_needs_no_cast() -> None:
    """Comparisons the engines already answer exactly are written as before."""
    assert "CAST" not in _sql("a > 0", "duckdb", None)
    assert "CAST" not in _sql("a > a", "duckdb", None)
    assert "CAST" not in _sql("a > b", "duckdb", {"a": "DECIMAL(18, 4)", "b": "DECIMAL(18, 0)"})
    assert "CAST" not in formulane.sql_select("t", {"v": "a > b"}, SCHEMA, numbers="float",
                                              keep_columns=False)


# ---------------------------------------------------------------------------------- Spark


@pytest.fixture(scope="module")
def spark(spark: Any) -> Any:
    """tests/conftest.py's local Spark session, with this module's table as the view ``t``."""
    columns = ", ".join(f"CAST({format(v, 'f')} AS {t.replace(' ', '')}) AS `{n}`"
                        for n, (t, v) in TABLE.items())
    spark.sql(f"SELECT {columns}").createOrReplaceTempView("t")
    return spark


def test_spark_itself_compares_at_the_smaller_scale(spark: Any) -> None:
    """The engine behaviour the fix stands on (if Spark changes, this says so)."""
    row = spark.sql("SELECT CAST(0.1143 AS DECIMAL(38,4)) = CAST(0 AS DECIMAL(38,0))").first()
    assert row[0] is True


@pytest.mark.parametrize("with_types", [False, True], ids=["untyped", "typed"])
def test_spark_compares_decimal_scales_exactly(spark: Any, with_types: bool) -> None:
    wrong = []
    for formula in [*FORMULAS, *HUGE]:
        want = _scalar(formula)
        got = _answer(spark.sql(_sql(formula, "spark", TYPES if with_types else None)).first())
        if not _same(got, want):
            wrong.append((formula, got, want))
    assert not wrong, wrong


# ------------------------------------------------------------------------------ PostgreSQL


@pytest.mark.parametrize("with_types", [False, True], ids=["untyped", "typed"])
def test_postgres_compares_decimal_scales_exactly(postgres: Any, with_types: bool) -> None:
    from backend_runner import postgres_table

    pg = postgres
    types = postgres_table(pg, TABLE)
    for formula in [*FORMULAS, *HUGE]:
        want = _scalar(formula)
        got = _answer(pg.execute(_sql(formula, "postgres",
                                      types if with_types else None)).fetchone())
        assert _same(got, want), (formula, got, want)


# ------------------------------------------------------------ a computed side, bound once


def _rounded_distance(name: str) -> Any:
    from sqlglot import exp

    return exp.Round(this=exp.Abs(this=exp.Sub(this=exp.column(name, quoted=True),
                                               expression=exp.column("c", quoted=True))),
                     decimals=exp.Literal.number(3))


def test_a_computed_side_is_bound_once(con: Any) -> None:
    """`compare_decimals` reads each side in its guarded DECIMAL(38, 18) cast (twice) and in
    the DOUBLE fallback: a computed value given to it (not a column the walk bound) is bound
    once, not written three times; and the query still answers as the scalar engine."""
    from sqlglot import exp

    from formulane.columnar.forms.operators.sql_join import compare_decimals
    from formulane.columnar.sql.kit import SqlColumn
    from formulane.columnar.sql.let import TABLE_ALIAS, Binder, lateral_joins

    binder = Binder()
    token = binder.activate()
    try:
        out = compare_decimals(exp.GT, SqlColumn(_rounded_distance("a")),
                               SqlColumn(_rounded_distance("b")), "decimal")
    finally:
        Binder.deactivate(token)
    assert out is not None
    [value] = binder.finish([out])
    assert value is not None
    bindings = binder.bindings()
    text = value.sql("duckdb") + " ".join(e.sql("duckdb") for _, e, _ in bindings)
    assert text.count('ABS("a" - "c")') == 1, text
    assert text.count('ABS("b" - "c")') == 1, text
    query = exp.select(exp.alias_(value, "v")).from_(
        exp.alias_(exp.to_table('"t"'), TABLE_ALIAS, table=True))
    query.set("joins", lateral_joins(bindings))
    got = con.execute(query.sql("duckdb")).fetchone()[0]
    want = _scalar("ROUND(ABS(a - c), 3) > ROUND(ABS(b - c), 3)")
    assert got is want
