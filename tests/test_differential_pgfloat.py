"""Differential property for PostgreSQL in float mode: random formulas over DOUBLE PRECISION
columns whose numbers reach the edges of the double range answer, row by row, what DuckDB
answers over the same DOUBLE table (both IEEE doubles), and never fail the query.

PostgreSQL's float8 `+`, `-`, `*`, `/` and POWER raise where IEEE answers inf or 0;
`dialects.adapt` guards them (docs/columnar.md, "Engine notes"). The draws
(tests/test_differential.py's formulas over the functions with a polars and a SQL form, its
comparison `_close`) mix ordinary numbers with 1e150..1e300, 5e307..1.8e308 and
1e-300..1e-150, of either sign, so sums, products, quotients and powers leave the range on
some rows only. A query PostgreSQL rejects fails the draw; a
formula refused for PostgreSQL (`Unsupported`) is skipped, counted. The scalar engine is the
reference where it reads the row (numbers below 1e308) and the answer is no subnormal.

Needs ``FORMULANE_TEST_POSTGRES_URL`` (`.ci/run` starts a server and sets it) and psycopg;
``FORMULANE_EXAMPLES`` / ``FORMULANE_EXPLORE`` as tests/test_differential.py reads them.
"""

from __future__ import annotations

import math
import os
import sys
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import formulane
from formulane import ErrorValue, FormulaError, Unsupported
from formulane.testing import formulas

from test_differential import REGISTRY, SQL_TOL, _close, _examples, _FIXED, _sql_answers

psycopg = pytest.importorskip("psycopg")
duckdb = pytest.importorskip("duckdb")
URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not URL, reason="FORMULANE_TEST_POSTGRES_URL is not set (a PostgreSQL "
                                       "server URL; .ci/run starts one)"),
]

from formulane.columnar.sql.select import to_sql_form  # noqa: E402

SCHEMA = {"a": "Number", "b": "Number", "c": "Number"}
COUNTS: Counter[str] = Counter()


def _signed(magnitudes: st.SearchStrategy[float]) -> st.SearchStrategy[float]:
    return st.tuples(magnitudes, st.booleans()).map(lambda p: -p[0] if p[1] else p[0])


#: Numbers that reach the edges: huge (1e150..1e300) and tiny (1e-300..1e-150) of either sign,
#: beside zero and ordinary numbers, so only some rows leave the range.
NUMBERS = st.one_of(
    st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0, -2.5, 3.0, 10.0, 1e200, -1e250, 1e300, 1e-200,
                     -3e-250, 1e-300]),
    _signed(st.floats(1e150, 1e300)),
    _signed(st.floats(1e-300, 1e-150)),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)
ROWS = st.lists(st.fixed_dictionaries({n: NUMBERS for n in SCHEMA}), min_size=1, max_size=6)
#: The sums' rows: those numbers and, as often, 5e307 up to the largest double of either sign
#: (two of them: a sum out of range; beside a small one: back inside it).
SUM_NUMBERS = st.one_of(
    NUMBERS,
    st.sampled_from([1e308, -1e308, -1.7e308, 9e307, 1.7976931348623157e308,
                     -1.7976931348623157e308]),
    _signed(st.floats(5e307, 1.7976931348623157e308)))
SUM_ROWS = st.lists(st.fixed_dictionaries({n: SUM_NUMBERS for n in SCHEMA}), min_size=1,
                    max_size=6)

#: What the formula calls first, half of the draws: the operators and math functions whose
#: float8 steps leave the range (the other half calls anything, as tests/test_differential.py).
ARITHMETIC = ["*", "/", "^", "POWER", "PRODUCT", "SQRT", "SECH", "CSCH", "EXP", "QUOTIENT",
              "MOD", "ROUND", "MROUND", "DEGREES", "RADIANS", "AVERAGE", "IF"]
#: Products, quotients and powers of the columns themselves, nested (a grammar of its own:
#: `formulas` reaches two columns multiplied too rarely for 40 draws to leave the range).
_LEAVES = st.sampled_from(["a", "b", "c", "2", "0.5", "3", "1E-10", "-1"])
_NESTED = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["*", "/", "^", "*", "+"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["SQRT(ABS({}))", "SECH({})", "ROUND({}, 2)", "-{}",
                                   "POWER({}, 3)", "EXP({})", "IF({} > 1, a, b)"]),
                  inner).map(lambda t: t[0].format(t[1]))),
    max_leaves=6)
#: Sums and differences of two columns, or of a column and a large literal, in an ordinary
#: step: a property of their own (40 draws of the grammars above reach a sum of two numbers
#: near the largest double too rarely).
_SUMS = st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["+", "-"]),
                  st.sampled_from(["b", "c", "1E+300", "-1E+300", "1"]),
                  st.sampled_from(["{}", "ROUND({}, 2)", "IF({} > 0, 1, -1)", "({}) / 2"])).map(
    lambda t: t[3].format(f"{t[0]} {t[1]} {t[2]}"))
SOURCES = st.one_of(
    _NESTED,
    formulas(SCHEMA, returns="Number", registry=REGISTRY, max_depth=3, functions=ARITHMETIC),
    formulas(SCHEMA, returns="Number", registry=REGISTRY, max_depth=3))

_CONNECTION: list[Any] = []


def _table_rows(con: Any, query: str, data: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    con.execute("DROP TABLE IF EXISTS t")
    con.execute('CREATE TEMP TABLE t (__i INTEGER, "a" DOUBLE PRECISION, "b" DOUBLE PRECISION, '
                '"c" DOUBLE PRECISION)')
    with con.cursor() as cursor:
        cursor.executemany("INSERT INTO t VALUES (%s, %s, %s, %s)",
                           [[i, r["a"], r["b"], r["c"]] for i, r in enumerate(data)])
    rows: list[tuple[Any, ...]] = con.execute(query + ' ORDER BY "__i"').fetchall()
    return rows


def postgres_rows(program: Any, data: list[dict[str, Any]]) -> list[Any]:
    form = to_sql_form(program.root, "postgres", "float")  # Unsupported: skipped by the caller
    if not _CONNECTION:
        _CONNECTION.append(psycopg.connect(URL, autocommit=True, prepare_threshold=None))
    con = _CONNECTION[0]
    try:
        with con.transaction():
            result = _table_rows(con, form.select("t", "v", "e", keep_columns=True), data)
    except psycopg.Error as exc:
        raise AssertionError(f"PostgreSQL failed the query: {str(exc).splitlines()[0]}") \
            from None
    return _sql_answers(program, form, result)


def duckdb_rows(program: Any, data: list[dict[str, Any]]) -> list[Any]:
    form = to_sql_form(program.root, "duckdb", "float")
    con = duckdb.connect()
    try:
        con.execute('CREATE TABLE t (__i INTEGER, "a" DOUBLE, "b" DOUBLE, "c" DOUBLE)')
        con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)",
                        [[i, r["a"], r["b"], r["c"]] for i, r in enumerate(data)])
        result = con.execute(form.select("t", "v", "e", keep_columns=True)
                             + ' ORDER BY "__i"').fetchall()
    finally:
        con.close()
    return _sql_answers(program, form, result)


def _as_number(v: Any) -> Any:
    """A float answer as the comparison reads numbers (Decimal), NaN and inf left as they are."""
    if isinstance(v, float) and math.isfinite(v):
        return Decimal(repr(v))
    return v


def _agree(a: Any, e: Any) -> bool:
    if isinstance(a, float) and isinstance(e, float) and math.isnan(a) and math.isnan(e):
        return True
    return bool(_close(_as_number(a), _as_number(e), SQL_TOL, False))


def _subnormal_or_huge(row: dict[str, Any]) -> bool:
    return any(v != 0 and not sys.float_info.min <= abs(v) < 1e308 for v in row.values())


@settings(max_examples=_examples(40), derandomize=_FIXED, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(source=SOURCES, data=ROWS)
def test_postgres_float_mode_agrees_with_duckdb_at_the_range_edges(
        source: str, data: list[dict[str, Any]]) -> None:
    _check(source, data)


@settings(max_examples=_examples(40), derandomize=_FIXED, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(source=_SUMS, data=SUM_ROWS)
def test_postgres_sums_agree_with_duckdb_at_the_range_edges(
        source: str, data: list[dict[str, Any]]) -> None:
    # PostgreSQL's float8 `+` and `-` raised "value out of range: overflow" for the query
    _check(source, data)


def _check(source: str, data: list[dict[str, Any]]) -> None:
    """The draw's formula over the draw's rows: PostgreSQL runs it, answers as DuckDB row by
    row, and as the scalar engine where it reads the row."""
    note(f"formula: {source}")
    note(f"rows: {data}")
    try:
        program = formulane.compile(source, SCHEMA, registry=REGISTRY)
    except FormulaError:
        COUNTS["does not compile"] += 1
        assume(False)
        return
    try:
        postgres = postgres_rows(program, data)
        duck = duckdb_rows(program, data)
    except Unsupported as exc:
        COUNTS[f"refused: {exc.function}"] += 1
        assume(False)
        return
    COUNTS["ran"] += 1
    for i, (p, d) in enumerate(zip(postgres, duck)):
        assert _agree(p, d), f"row {i}: PostgreSQL {p!r}, DuckDB {d!r}\n  {source}\n  {data[i]}"
    for i, row in enumerate(data):
        if _subnormal_or_huge(row):
            continue
        try:
            want = program.evaluate(row)
        except FormulaError:
            continue  # a limit: not a value any backend reproduces
        if isinstance(want, Decimal) and want != 0 and abs(want) < Decimal("2.3e-308"):
            continue  # a subnormal double holds few of its digits
        if isinstance(want, ErrorValue) or isinstance(postgres[i], ErrorValue):
            COUNTS["rows with an error value"] += 1
        assert _agree(postgres[i], want), \
            f"row {i}: PostgreSQL {postgres[i]!r}, scalar {want!r}\n  {source}\n  {row}"


def test_most_draws_ran() -> None:
    """The property ran (not every draw skipped as refused); its counts, with ``-s``."""
    print("\npgfloat differential:", dict(COUNTS))
    if COUNTS:
        assert COUNTS["ran"] >= 10, dict(COUNTS)
