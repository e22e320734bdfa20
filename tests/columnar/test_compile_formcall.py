"""The `FormCall` a form receives from the walk (`columnar.walk.Walker.with_call`): the numeric
mode on both backends and what only the compiled argument columns know (SQL DECIMAL vs DOUBLE,
whether an argument may be an error, the polars dtype), for ``style="call"`` and
``style="columns"`` forms.

A spy form replaces one function's table entry; it records what its `FormCall` reports and
computes the function's own answer, so the compiled program still runs and is checked.
"""

from __future__ import annotations

import sys
import types
from decimal import Decimal
from typing import Any

import duckdb
import polars as pl
import pytest
from sqlglot import exp

import formulane
from formulane.columnar import walk
from formulane.columnar.call import FormCall
from formulane.columnar.forms.form import Form, info_sql

SCHEMA = {"x": "number", "t": "text?"}

SEEN: list[dict[str, Any]] = []


def _record(call: FormCall, n: int) -> None:
    SEEN.append({"numbers": call.numbers,
                 "exact": [call.exact(i) for i in range(n)],
                 "sql_type": [call.sql_type(i) for i in range(n)],
                 "dtype": [call.dtype(i) for i in range(n)],
                 "may_error": [call.may_error(i) for i in range(n)],
                 "strict": [call.strict(i) for i in range(n)],
                 "nullable": [call.nullable(i) for i in range(n)],
                 "known": [call.column(i) is not None for i in range(n)]})


def sql_abs(call: FormCall, value: Any) -> Any:
    _record(call, 1)
    return exp.Abs(this=value)


def polars_abs(call: FormCall, value: Any) -> Any:
    _record(call, 1)
    return value.abs()


def sql_isblank(call: FormCall, col: Any) -> Any:
    _record(call, 1)
    return info_sql().sql_isblank(call, col)


_SPIES = types.ModuleType("formulane_test_formcall_spies")
_SPIES.sql_abs = sql_abs  # type: ignore[attr-defined]
_SPIES.polars_abs = polars_abs  # type: ignore[attr-defined]
_SPIES.sql_isblank = sql_isblank  # type: ignore[attr-defined]
SPY_FORMS = {("ABS", "sql"): Form("sql", lambda: _SPIES, "sql_abs", style="call"),
             ("ABS", "polars"): Form("polars", lambda: _SPIES, "polars_abs", style="call"),
             ("ISBLANK", "sql"): Form("sql", lambda: _SPIES, "sql_isblank",
                                      style="columns")}


@pytest.fixture(autouse=True)
def spies(monkeypatch: pytest.MonkeyPatch) -> None:
    real = walk.form_for

    def form_for(node: Any, backend: Any) -> Any:
        return SPY_FORMS.get((node.spec.name, backend)) or real(node, backend)

    monkeypatch.setattr(walk, "form_for", form_for)
    SEEN.clear()


def run_sql(src: str, numbers: str, rows: list[tuple[Any, Any]]) -> list[Any]:
    form = formulane.compile(src, SCHEMA).to_sql("duckdb", numbers=numbers)
    con = duckdb.connect()
    kind = "DOUBLE" if numbers == "float" else "DECIMAL(38, 10)"
    con.execute(f'CREATE TABLE t ("x" {kind}, "t" TEXT)')
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    return [r[0] for r in con.execute(form.select("t")).fetchall()]


# (formula, numbers mode, what the spy's FormCall reports for argument 1)
SQL_CASES = [
    # (an untyped column in decimal mode may be a DOUBLE: not surely exact, typed DECIMAL)
    ("ABS(x)", "decimal", {"numbers": "decimal", "exact": False, "sql_type": "DECIMAL",
                           "may_error": False, "strict": True}),
    ("ABS(x)", "float", {"numbers": "float", "exact": False, "sql_type": "DOUBLE",
                         "may_error": False, "strict": True}),
    ("ABS(x * 2)", "decimal", {"numbers": "decimal", "exact": True, "sql_type": "DECIMAL"}),
    ("ABS(x * 2)", "float", {"numbers": "float", "exact": False, "sql_type": "DOUBLE"}),
    ("ABS(1 / x)", "decimal", {"numbers": "decimal", "exact": False, "sql_type": "DOUBLE",
                               "may_error": True}),
    ("ABS(x ^ 2)", "decimal", {"exact": False, "sql_type": "DOUBLE"}),
    ("ABS(LEN(t ?? \"\"))", "float", {"may_error": False, "nullable": False}),
]


@pytest.mark.parametrize("src,numbers,want", SQL_CASES)
def test_sql_form_sees_mode_and_exactness(src: str, numbers: str, want: dict[str, Any]) -> None:
    out = run_sql(src, numbers, [(Decimal("-2"), "ab"), (Decimal("4"), None)])
    assert out  # the spied program runs
    assert SEEN, "the spy form was not called"
    seen = SEEN[-1]
    for key, value in want.items():
        got = seen[key] if key == "numbers" else seen[key][0]
        assert got == value, (key, seen)
    assert seen["known"] == [True]
    assert seen["dtype"] == [None]


def test_sql_answers_unchanged_by_the_spy() -> None:
    assert run_sql("ABS(x * 2)", "decimal", [(Decimal("-2.5"), None)]) == [Decimal("5")]
    assert run_sql("ABS(1 / x)", "float", [(0.0, None), (-4.0, None)]) == [None, 0.25]


@pytest.mark.parametrize("numbers", ["float", "decimal"])
def test_call_columns_form_gets_call_and_columns(numbers: str) -> None:
    out = run_sql("ISBLANK(t)", numbers, [(Decimal(1), None), (Decimal(1), "a")])
    assert out == [True, False]
    seen = SEEN[-1]
    assert seen["numbers"] == numbers
    assert seen["nullable"] == [True] and seen["known"] == [True]
    assert seen["sql_type"] == ["TEXT"] and seen["exact"] == [False]


def test_call_columns_form_sees_errors() -> None:
    out = run_sql("ISBLANK(1 / x)", "decimal", [(Decimal(0), None), (Decimal(2), None)])
    assert out == [False, False]
    # the quotient is a DOUBLE that may be #DIV/0!, and NULL there (NULLIF): strict
    assert SEEN[-1]["may_error"] == [True] and SEEN[-1]["strict"] == [True]
    assert SEEN[-1]["exact"] == [False] and SEEN[-1]["sql_type"] == ["DOUBLE"]


@pytest.mark.parametrize("numbers,dtype", [("float", pl.Float64()),
                                           ("decimal", pl.Decimal(38, 18))])
def test_polars_form_sees_mode_and_dtype(numbers: str, dtype: Any) -> None:
    df = pl.DataFrame({"x": [-1.5, 2.0], "t": ["a", None]})
    if numbers == "decimal":
        df = df.with_columns(pl.col("x").cast(pl.Decimal(38, 18)))
    expr = formulane.compile("ABS(x)", SCHEMA).to_polars(numbers=numbers)
    out = df.select(expr.value if hasattr(expr, "value") else expr)
    assert out.height == 2
    seen = SEEN[-1]
    assert seen["numbers"] == numbers
    assert seen["exact"] == [numbers == "decimal"]
    assert seen["sql_type"] == [None]
    assert seen["dtype"] == [dtype]
    assert seen["may_error"] == [False]


def test_form_called_outside_the_walk_builds_a_plain_call() -> None:
    """A caller passing the bare `ir.Call` still works: mode from the backend, no columns."""
    program = formulane.compile("ABS(x)", SCHEMA)
    node = program.root
    while not hasattr(node, "spec"):
        node = node.body if hasattr(node, "body") else node.node  # type: ignore[attr-defined]
    SPY_FORMS[("ABS", "sql")](exp.column("x"), call=node)
    assert SEEN[-1]["known"] == [False] and SEEN[-1]["numbers"] == "decimal"


assert "formulane_test_formcall_spies" not in sys.modules  # the spies are never importable
