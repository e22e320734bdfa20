"""The operators' forms give the scalar engine's answers whether an operand is a column or a
constant (issue 10: constants are read once, through `FormCall.const`; what a known operand
settles is decided when compiling, so the literal and column paths are different SQL and polars
expressions and must agree).

A Hypothesis property per family, on both columnar backends: for operands ``a`` and ``b`` the
formulas ``x OP y`` (two columns), ``x OP (b)`` and ``(a) OP y`` (one constant, the other a
column) on DuckDB (decimal mode, DECIMAL(38, 18) columns) and polars (float mode, Float64
columns) agree with `formulane.evaluate` of the same row. Values include zero, negatives,
halves and magnitudes at DECIMAL(38, 18)'s bound (1e20), where the SQL decimal policy
answers #NUM! (docs/columnar.md).
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import formulane

duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")

NUMBER_OPS = ["+", "-", "*", "/", "^", "=", "<>", "<", "<=", ">", ">="]
TEXT_OPS = ["=", "<>", "<", ">="]

_NUMBERS = st.one_of(
    st.sampled_from([Decimal(v) for v in ("0", "1", "-1", "2", "0.5", "-2.5", "3", "1.5",
                                          "4096", "-4097", "123456789.123456789",
                                          "60000000000000000000", "-99999999999999999999",
                                          "0.000000001")]),
    st.integers(-10**6, 10**6).map(Decimal),
    st.decimals(min_value=-1000, max_value=1000, places=3, allow_nan=False,
                allow_infinity=False))
_TEXTS = st.one_of(st.sampled_from(["abc", "ABC", "", "k", "\u212a", "a-1", "Straße", "b"]),
                   st.text(alphabet="aAbB-1 ", max_size=4))

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    if isinstance(value, dt.date):
        return f"DATE({value.year}, {value.month}, {value.day})"
    return f"({format(value, 'f')})"


def _variants(op: str, a: Any, b: Any) -> list[tuple[str, dict[str, Any]]]:
    """(formula, row) for two columns, a constant right and a constant left operand."""
    row = {"x": a, "y": b}
    return [(f"x {op} y", row), (f"x {op} {_literal(b)}", row), (f"{_literal(a)} {op} y", row)]


def _scalar(formula: str, row: dict[str, Any], schema: dict[str, str]) -> Any:
    value = formulane.evaluate(formula, row, schema=schema)
    return value.code if isinstance(value, formulane.ErrorValue) else value


def _duckdb(formula: str, row: dict[str, Any], schema: dict[str, str], column: str) -> Any:
    query = formulane.sql_select("t", {"out": formula}, schema, numbers="decimal")
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE t (x {column}, y {column})")
        con.execute("INSERT INTO t VALUES (?, ?)", [row["x"], row["y"]])
        got = con.execute(f"SELECT * FROM ({query})").fetchall()[0]
        return dict(zip([d[0] for d in con.description], got))
    finally:
        con.close()


def _polars(formula: str, row: dict[str, Any], schema: dict[str, str], dtype: Any) -> Any:
    frame = pl.DataFrame({"x": [row["x"]], "y": [row["y"]]},
                         schema={"x": dtype, "y": dtype})
    out = formulane.apply(frame, {"out": formula}, schema)
    return out.row(0, named=True)


def _same(got: Any, error: Any, expected: Any, row: dict[str, Any], decimal: bool) -> None:
    if isinstance(expected, str) and expected.startswith("#"):
        assert error == expected, (got, error, expected)
        return
    if error is not None:
        # the SQL decimal policy: operands and results |x| < 1e20, else #NUM!
        assert decimal and error == "#NUM!", (got, error, expected)
        big = [abs(v) for v in (*row.values(), expected)
               if isinstance(v, Decimal)]
        assert big and max(big) >= Decimal("1e19"), (got, error, expected, row)
        return
    if expected is None or got is None:
        assert got == expected, (got, expected)
        return
    if isinstance(expected, Decimal):
        if decimal:
            assert abs(Decimal(str(got)) - expected) <= Decimal("1e-9") * max(1, abs(expected)), \
                (got, expected)
        else:
            assert math.isclose(float(got), float(expected), rel_tol=1e-12, abs_tol=1e-12), \
                (got, expected)
        return
    assert got == expected, (got, expected)


NUMBERS = {"x": "Number", "y": "Number"}


@SETTINGS
@given(op=st.sampled_from(NUMBER_OPS), a=_NUMBERS, b=_NUMBERS)
def test_number_operators_on_duckdb(op: str, a: Decimal, b: Decimal) -> None:
    for formula, row in _variants(op, a, b):
        expected = _scalar(formula, row, NUMBERS)
        out = _duckdb(formula, row, NUMBERS, "DECIMAL(38, 18)")
        _same(out["out"], out.get("out__error"), expected, row, decimal=True)


def _as_float(row: dict[str, Any]) -> dict[str, Any]:
    """What a Float64 column holds of the row."""
    return {k: None if v is None else Decimal(repr(float(v))) for k, v in row.items()}


@SETTINGS
@given(op=st.sampled_from(NUMBER_OPS), a=_NUMBERS, b=_NUMBERS)
def test_number_operators_on_polars(op: str, a: Decimal, b: Decimal) -> None:
    for formula, row in _variants(op, a, b):
        floats = _as_float(row)
        # a constant operand is the formula's own literal: exact in the scalar engine and
        # read as the float it is in float mode
        expected = _scalar(formula, floats, NUMBERS)
        out = _polars(formula, {k: None if v is None else float(v) for k, v in row.items()},
                      NUMBERS, pl.Float64)
        got, error = out["out"], out.get("out__error")
        if op in ("=", "<>", "<", "<=", ">", ">=") and formula != f"x {op} y":
            # the literal path compares within 1e-15 of the literal's float, the scalar
            # engine of its exact value: equal unless the operands are that close
            if not isinstance(expected, str) and got != expected:
                x, y = (float(v) for v in (floats["x"] or 0, floats["y"] or 0))
                assert math.isclose(x, y, rel_tol=1e-14), (formula, row, got, expected)
                continue
        _same(got, error, expected, floats, decimal=False)


TEXTS = {"x": "Text", "y": "Text"}


@SETTINGS
@given(op=st.sampled_from(TEXT_OPS), a=_TEXTS, b=_TEXTS)
def test_text_comparisons_on_both_backends(op: str, a: str, b: str) -> None:
    for formula, row in _variants(op, a, b):
        expected = _scalar(formula, row, TEXTS)
        out = _polars(formula, row, TEXTS, pl.Utf8)
        _same(out["out"], out.get("out__error"), expected, row, decimal=False)
        out = _duckdb(formula, row, TEXTS, "TEXT")
        _same(out["out"], out.get("out__error"), expected, row, decimal=False)


DATES = {"x": "Date", "y": "Number"}
_DATES = st.one_of(st.sampled_from([dt.date(1, 1, 1), dt.date(1, 1, 31), dt.date(2024, 2, 29),
                                    dt.date(9999, 12, 1), dt.date(9999, 12, 31)]),
                   st.dates())
_DAYS = st.one_of(st.sampled_from([Decimal(v) for v in ("0", "30", "-30", "2.9", "-2.9",
                                                        "3652058", "-3652058", "3652059")]),
                  st.integers(-10**5, 10**5).map(Decimal))


@SETTINGS
@given(op=st.sampled_from(["+", "-"]), d=_DATES, n=_DAYS)
def test_date_plus_days_on_duckdb(op: str, d: dt.date, n: Decimal) -> None:
    row = {"x": d, "y": n}
    for formula in (f"x {op} y", f"x {op} {_literal(n)}"):
        expected = _scalar(formula, row, DATES)
        out = _duckdb_dates(formula, row)
        _same(out["out"], out.get("out__error"), expected, row, decimal=False)


def _duckdb_dates(formula: str, row: dict[str, Any]) -> Any:
    query = formulane.sql_select("t", {"out": formula}, DATES, numbers="decimal")
    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE t (x DATE, y DECIMAL(38, 18))")
        con.execute("INSERT INTO t VALUES (?, ?)", [row["x"], row["y"]])
        got = con.execute(f"SELECT * FROM ({query})").fetchall()[0]
        return dict(zip([d[0] for d in con.description], got))
    finally:
        con.close()


@pytest.mark.parametrize("formula", ["IF(x > 0, x * 2, 1)", "IFERROR(x / y, -1)",
                                     "SWITCH(x, 1, 10, 2, 20, 0)",
                                     "CHOOSE(2, x, y)", "AND(x > 1, y < 2)", "x ?? 5"])
def test_logic_forms_with_constants(formula: str) -> None:
    rows = [{"x": Decimal(v), "y": Decimal(w)} for v, w in
            (("0", "1"), ("1", "0"), ("2", "-3"), ("-1.5", "2"))]
    for row in rows:
        expected = _scalar(formula, row, NUMBERS)
        out = _duckdb(formula, row, NUMBERS, "DECIMAL(38, 18)")
        _same(out["out"], out.get("out__error"), expected, row, decimal=True)
        out = _polars(formula, {k: None if v is None else float(v) for k, v in row.items()},
                      NUMBERS, pl.Float64)
        _same(out["out"], out.get("out__error"), expected, _as_float(row), decimal=False)


@pytest.mark.parametrize("op", ["+", "-"])
@pytest.mark.parametrize("n", ["0", "1", "30", "-30", "2.9", "-2.9", "3652058", "-3652058"])
def test_date_plus_days_at_the_calendars_ends(op: str, n: str) -> None:
    """The dates just inside and just outside the calendar once moved by a constant count
    (the SQL decides the bounds of the date itself when compiling)."""
    days = int(Decimal(n)) * (1 if op == "+" else -1)
    first, last = dt.date(1, 1, 1).toordinal(), dt.date(9999, 12, 31).toordinal()
    ordinals = {first - days, first - days - 1, last - days, last - days + 1, first, last}
    for ordinal in sorted(o for o in ordinals if first <= o <= last):
        row = {"x": dt.date.fromordinal(ordinal), "y": Decimal(n)}
        for formula in (f"x {op} y", f"x {op} {_literal(Decimal(n))}"):
            expected = _scalar(formula, row, DATES)
            out = _duckdb_dates(formula, row)
            _same(out["out"], out.get("out__error"), expected, row, decimal=False)
