"""The binder's SQL (`columnar/sql/let.py`): what it names and what it binds (issue 10's 40
characters per IR node).

- The names it makes (``_t``, ``_fl1``, ``_f1``) are written unquoted: they are ours, plain
  lower-case ASCII, valid unquoted in every dialect with lateral subqueries, and folded the
  same way on both sides where a dialect folds case. A reference stays qualified by its
  lateral subquery, so a column of the table with a binding's name is never read in its
  place: checked on DuckDB over a table with such columns that the formula does not read.
- A value read twice is inlined when a lateral subquery of its own costs more characters than
  repeating it (SUMIF's one length test), and still bound when repeating costs more.
"""

from __future__ import annotations

from typing import Any

import pytest

import formulane
from formulane.values import ErrorValue

duckdb = pytest.importorskip("duckdb")


def _rows(sql: str, setup: list[str]) -> list[tuple[Any, ...]]:
    con = duckdb.connect()
    try:
        for statement in setup:
            con.execute(statement)
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_internal_names_unquoted_and_references_qualified() -> None:
    sql = formulane.compile("ROUND(ROUND(x * 1.2, 2) * 1.1, 2)", {"x": "Number"}) \
        .to_sql("duckdb").select("t")
    assert "LATERAL" in sql
    assert '"_f' not in sql and '"_t"' not in sql
    assert "_fl1._f" in sql and " AS _t " in sql


def test_a_table_column_named_like_a_binding_is_not_read_in_its_place() -> None:
    formula = "ROUND(ROUND(x * 1.2, 2) * 1.1, 2)"
    program = formulane.compile(formula, {"x": "Number"})
    sql = program.to_sql("duckdb").select("t", "v", "e", keep_columns=True)
    names = sorted({n for n in sql.replace("(", " ").replace(")", " ").replace(",", " ")
                    .replace(".", " ").split() if n.startswith("_f")})
    assert names  # the decoys below are the very names the SQL uses
    decoys = ", ".join(f"{n} DOUBLE" for n in names)
    values = ", ".join("-1e6" for _ in names)
    got = _rows(sql + " ORDER BY x", [
        f"CREATE TABLE t (x DECIMAL(38, 9), {decoys})",
        f"INSERT INTO t VALUES (1.5, {values}), (-2.25, {values}), (0.125, {values})"])
    for row in got:
        expected = program.evaluate({"x": row[0]})
        value, error = row[-2], row[-1]
        if type(expected) is ErrorValue:
            assert error == expected.code
        else:
            assert error is None and value == expected


def test_a_small_value_read_twice_is_inlined_not_given_a_lateral_subquery() -> None:
    formula = 'SUMIF(xs, "Fruits", [2300, 5500, 800])'
    program = formulane.compile(formula, {"xs": "List<Text>"})
    sql = program.to_sql("duckdb").select("t", "v", "e")
    assert "LATERAL" not in sql
    got = _rows(sql, ["CREATE TABLE t (xs VARCHAR[])",
                      "INSERT INTO t VALUES (['fruits', 'veg', 'FRUITS']), (['a'])"])
    assert got[0] == (3100, None)  # 2300 + 800
    assert got[1][1] == "#VALUE!"


def test_a_large_value_read_twice_stays_bound() -> None:
    # the nested ROUND's inner value, repeated, would cost more than its subquery
    sql = formulane.compile("ROUND(ROUND(ROUND(x * 1.2, 2) * 1.1, 2) * 1.3, 2)",
                            {"x": "Number"}).to_sql("duckdb").select("t")
    assert sql.count("LATERAL") >= 1


def test_binding_names_differ_in_any_case_from_the_columns_read() -> None:
    # unquoted, _f1 is _F1 on Snowflake: a column "_F1" the formula reads must not be shadowed
    from formulane.columnar.sql.let import Binder

    assert Binder.for_names(["_F1", "x"]).prefix == "__f"
    assert Binder.for_names(["_FL2"]).prefix == "__f"
    assert Binder.for_names(["x", "_g1"]).prefix == "_f"
