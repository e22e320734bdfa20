"""The dates family's SQL: literals folded with the engine's semantics, values bound once.

- `_fold_binary` (what `Q`'s operators compute when both operands are literals) agrees with
  DuckDB evaluating the same operator, for integers of either sign and for three-valued
  booleans (Hypothesis);
- formulas with column arguments bind their intermediate values through the SQL `let` kit
  (lateral subqueries), never through list lambdas, and stay within the sizes recorded in
  tests/data/sql_dates_sizes.csv;
- inside a formula's lambda (no binder) the forms fall back to list-lambda bindings and still
  give the scalar engine's answer.
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

duckdb = pytest.importorskip("duckdb")
from sqlglot import exp  # noqa: E402

import formulane  # noqa: E402
from formulane.columnar.forms.dates.sqlops import Q, _fold_binary, _sql_lit, constant  # noqa: E402

SIZES = Path(__file__).resolve().parent.parent / "data" / "sql_dates_sizes.csv"

_CON = duckdb.connect()

_INT_OPS = [exp.Add, exp.Sub, exp.Mul, exp.IntDiv, exp.Mod, exp.LT, exp.LTE, exp.GT, exp.GTE,
            exp.EQ, exp.NEQ]
_INTS = st.one_of(st.integers(-10**9, 10**9), st.sampled_from([0, 1, -1, 7, -7]))


def _duckdb(e: exp.Expr) -> Any:
    row = _CON.execute(f"SELECT {e.sql('duckdb')}").fetchone()
    assert row is not None
    return row[0]


@settings(max_examples=300, deadline=None)
@given(a=_INTS, b=_INTS, op=st.sampled_from(_INT_OPS))
def test_integer_folding_is_the_engines(a: int, b: int, op: type) -> None:
    folded = _fold_binary(op, _sql_lit(a), _sql_lit(b))
    if op in (exp.IntDiv, exp.Mod) and b == 0:
        return  # not folded: the engine's
    # the forms' integers are BIGINTs (ordinals, truncated numbers, microseconds)
    big = exp.DataType.build("BIGINT")
    engine = _duckdb(op(this=exp.cast(_sql_lit(a), big), expression=exp.cast(_sql_lit(b), big)))
    assert folded == engine, (op.__name__, a, b)


_BOOLS = st.sampled_from([True, False, None])


@settings(max_examples=60, deadline=None)
@given(a=_BOOLS, b=_BOOLS, op=st.sampled_from([exp.And, exp.Or]))
def test_three_valued_folding_is_the_engines(a: Any, b: Any, op: type) -> None:
    folded = constant(Q(_fold_binary(op, _sql_lit(a), _sql_lit(b))).e)  # a value or an operand
    assert folded == (True, _duckdb(op(this=_sql_lit(a), expression=_sql_lit(b))))
    assert constant((~Q(a)).e)[1] == _duckdb(exp.Not(this=exp.Paren(this=_sql_lit(a))))


_DOUBLES = st.sampled_from(["1", "2", "-1", "'nan'", "'inf'", "NULL"])


@settings(max_examples=80, deadline=None)
@given(a=_DOUBLES, b=_DOUBLES, op=st.sampled_from([exp.LT, exp.LTE, exp.GT, exp.GTE, exp.EQ,
                                                    exp.NEQ]))
def test_a_negated_comparison_is_the_opposite_comparison(a: str, b: str, op: type) -> None:
    x, y = (exp.cast(exp.Literal.string(v.strip("'")) if v.startswith("'") else
                     (exp.Null() if v == "NULL" else exp.Literal.number(v)),
                     exp.DataType.build("DOUBLE")) for v in (a, b))
    compared = op(this=x, expression=y)
    negated = (~Q(compared)).e
    assert not isinstance(negated, exp.Not)
    assert _duckdb(negated) == _duckdb(exp.Not(this=exp.Paren(this=compared.copy())))


def test_an_operand_known_to_decide_drops_the_other() -> None:
    column = exp.column("c")
    assert _fold_binary(exp.And, column, _sql_lit(False)) is False
    assert _fold_binary(exp.Or, _sql_lit(True), column) is True
    assert _fold_binary(exp.And, column, _sql_lit(True)) is column
    assert _fold_binary(exp.Add, column, _sql_lit(0)) is column


@pytest.mark.parametrize("literal,value", [
    (exp.Literal.number("12"), 12),
    (exp.Paren(this=exp.Neg(this=exp.Literal.number("3"))), -3),
    (exp.Literal.number("2.50"), __import__("decimal").Decimal("2.50")),
    (exp.cast(exp.Literal.string("2024-02-29"), exp.DataType.build("DATE")), dt.date(2024, 2, 29)),
    (exp.cast(exp.Null(), exp.DataType.build("DATE")), None),
    (exp.Array(expressions=[exp.Literal.number("1"), exp.Null()]), (1, None)),
])
def test_literals_are_read(literal: exp.Expr, value: Any) -> None:
    assert constant(literal) == (True, value)


def _sizes() -> list[dict[str, str]]:
    with SIZES.open(encoding="utf-8") as f:
        return [row for row in csv.DictReader(f) if not row["formula"].startswith("#")]


@pytest.mark.parametrize("row", _sizes(), ids=lambda r: r["formula"])
def test_column_arguments_bind_through_lateral_subqueries(row: dict[str, str]) -> None:
    schema = dict(item.split(":") for item in row["schema"].split())
    program = formulane.compile(row["formula"], schema)
    for numbers in ("decimal", "float"):
        sql = program.to_sql("duckdb", numbers).select("t")
        assert "LAMBDA _v" not in sql, sql  # the let kit binds, not list lambdas
        assert len(sql) <= int(row["max_chars"]), (numbers, len(sql), sql)


def test_a_lambda_body_falls_back_to_list_bindings() -> None:
    # (a body that may error is refused by the compiler: NETWORKDAYS without a weekend cannot)
    source = "MAP(xs, LAMBDA(x, NETWORKDAYS(x, DATE(2024, 12, 31))))"
    program = formulane.compile(source, {"xs": "List[Date]"})
    days = [dt.date(2024, 1, 1), dt.date(2025, 3, 3), dt.date(2024, 12, 28)]
    _CON.execute("CREATE OR REPLACE TABLE t AS SELECT ?::DATE[] AS xs", [days])
    sql = program.to_sql("duckdb", "decimal").select("t")
    assert "LAMBDA _v" in sql  # no binder inside a lambda body: list-lambda bindings
    row = _CON.execute(sql).fetchone()
    expected = program.evaluate({"xs": days})
    assert row is not None and isinstance(expected, list)
    assert [int(v) for v in row[0]] == [int(str(v)) for v in expected]
