"""Differential property: decimal mode over DOUBLE columns whose engine type is not given.

DuckDB's and PostgreSQL's default ``numbers`` is "decimal"; a table read from CSV or Parquet
has DOUBLE columns, and a caller who passes no ``column_types`` leaves the compiler unable to
tell them from DECIMAL ones (docs/columnar.md, "SQL"). The answers must still be the scalar
engine's over each value's shortest decimal, as tests/test_differential.py compares the float
mode runner (DOUBLE columns, ``numbers="float"``): error codes exactly, numbers within a
relative 1e-9; a row whose scalar evaluation passed 1e20 may be #NUM! (DECIMAL(38, 18)'s
range), and one that passed a nonzero below 5e-19 may differ there (it rounds to 0), counted.

The draws are tests/test_differential.py's (its formulas over the functions with a polars and
a SQL form, its rows, its comparison `_close`), by import; two thirds of them call a
function of the decimal grid first (ROUND, MOD, FLOOR...; half of those with literal digits
or steps, of a column or a simple expression of columns), over numbers that include ties
whose binary expansion sits below their decimal (2.675, -2.2). DuckDB always; PostgreSQL (DOUBLE
PRECISION) when ``FORMULANE_TEST_POSTGRES_URL`` is set. ``FORMULANE_EXAMPLES`` /
``FORMULANE_EXPLORE`` as tests/test_differential.py reads them.
"""

from __future__ import annotations

import os
from collections import Counter
from decimal import Decimal
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import formulane
from formulane import ErrorValue, FormulaError, Unsupported
from formulane.testing import formulas

from test_differential import (_NUMBERS, _PG_TYPES, REGISTRY, SCHEMA, SQL_TOL,
                               _beyond_decimal, _close, _column_type, _examples, _FIXED,
                               _read_columns, _sql_answers, _types, duckdb_select, rows,
                               scalar_rows)

duckdb = pytest.importorskip("duckdb")
pytestmark = pytest.mark.slow

from formulane.columnar.sql.select import to_sql_form  # noqa: E402

COUNTS: Counter[str] = Counter()
POSTGRES_URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")

#: Numbers as a DOUBLE column holds them: test_differential's, and ties whose binary expansion
#: sits below (or above) their decimal, which a DOUBLE-to-DECIMAL cast or a DECIMAL ROUND of
#: a DOUBLE gets wrong (2.675 is 2.67499999999999982 in binary; DuckDB casts -2.2 to
#: -2.200000000000000178). Each is exactly a DOUBLE's shortest decimal.
_TIES = st.sampled_from([Decimal(t) for t in (
    "2.675", "-2.675", "1.005", "0.285", "2.715", "-2.275", "1.15", "-2.2", "2.3", "12345.675",
    "-0.07", "0.29", "4.35", "2.5", "-0.5", "0.3", "1.0", "2.0")])
#: (ties first: two draws in three, so CI's 40 examples meet them)
NUMBERS = st.one_of(_TIES, _TIES, _NUMBERS).map(lambda d: Decimal(repr(float(d))))

#: The functions of the decimal grid, called first by half of the draws.
GRID = ["ROUND", "ROUNDUP", "ROUNDDOWN", "TRUNC", "INT", "MOD", "QUOTIENT", "FLOOR", "CEILING",
        "MROUND", "EVEN", "ODD", "FLOOR.MATH", "CEILING.MATH"]
#: A grid function of a column or a simple expression of one, with literal digits or steps:
#: the calls whose SQL has a short exact form for a DECIMAL (`formulas` draws computed digits
#: and steps too often for 40 draws to reach them).
_OPERANDS = st.sampled_from(["a", "b", "-a", "ABS(b)", "a * 10", "a + b", "IF(a > b, a, b)",
                             "MAX(a, 0)", "a * b"])
_GRID_CALLS = st.one_of(
    st.tuples(st.sampled_from(["ROUND", "ROUNDUP", "ROUNDDOWN", "TRUNC"]), _OPERANDS,
              st.integers(-2, 17)).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
    st.tuples(st.sampled_from(["FLOOR", "CEILING", "MOD", "QUOTIENT", "FLOOR.MATH",
                               "CEILING.MATH"]), _OPERANDS,
              st.sampled_from(["0.01", "0.05", "0.1", "1", "7", "-0.5"])).map(
        lambda t: f"{t[0]}({t[1]}, {t[2]})"),
    st.tuples(st.sampled_from(["INT", "EVEN", "ODD", "TRUNC"]), _OPERANDS).map(
        lambda t: f"{t[0]}({t[1]})"))
SOURCES = st.one_of(
    _GRID_CALLS,
    formulas(SCHEMA, returns="Number", registry=REGISTRY, max_depth=3, functions=GRID),
    formulas(SCHEMA, returns="Number", registry=REGISTRY, max_depth=3))
ROWS = rows(SCHEMA, nulls=False, by_type={"Number": NUMBERS})


def _double(value: Any) -> Any:
    """A row's number as the DOUBLE the table holds."""
    return float(value) if isinstance(value, Decimal) else value


def duckdb_double_rows(program: Any, data: list[dict[str, Any]]) -> list[Any]:
    """DuckDB, Number columns DOUBLE, ``numbers="decimal"``, no ``column_types``."""
    form = to_sql_form(program.root, "duckdb", "decimal")
    return _sql_answers(program, form, duckdb_select(form, SCHEMA, data, "DOUBLE", _double))


_PG: list[Any] = []


def postgres_double_rows(program: Any, source: str, data: list[dict[str, Any]]) -> list[Any]:
    """PostgreSQL, Number columns DOUBLE PRECISION, ``numbers="decimal"``, no types given."""
    import psycopg

    form = to_sql_form(program.root, "postgres", "decimal")
    if any("\x00" in v for r in data for v in r.values() if isinstance(v, str)):
        raise Unsupported("PostgreSQL text holds no NUL character", function="(rows)",
                          backend="sql", reason="a NUL in a text")
    if not _PG:
        _PG.append(psycopg.connect(POSTGRES_URL, autocommit=True, prepare_threshold=None))
    con = _PG[0]
    names = _read_columns(source, SCHEMA)
    types = _types(SCHEMA)
    cols = "".join(f', "{n}" {_column_type(types[n], _PG_TYPES, "DOUBLE PRECISION")}'
                   for n in names)
    with con.transaction():
        con.execute("DROP TABLE IF EXISTS t")
        con.execute(f"CREATE TEMP TABLE t (__i INTEGER{cols})")
        with con.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO t VALUES ({', '.join(['%s'] * (len(names) + 1))})",
                [[i, *[_double(r[n]) for n in names]] for i, r in enumerate(data)])
        result = con.execute(form.select("t", "v", "e", keep_columns=True)
                             + ' ORDER BY "__i"').fetchall()
    return _sql_answers(program, form, result)


@settings(max_examples=_examples(40), derandomize=_FIXED, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(source=SOURCES, data=ROWS)
def test_decimal_mode_over_double_columns_agrees_with_the_scalar_engine(
        source: str, data: list[dict[str, Any]]) -> None:
    note(f"formula: {source}")
    note(f"rows: {data}")
    try:
        program = formulane.compile(source, SCHEMA, registry=REGISTRY)
    except FormulaError:
        COUNTS["does not compile"] += 1
        assume(False)
        return
    expected = scalar_rows(program, data)
    runs: list[tuple[str, Callable[[], list[Any]]]] = [
        ("duckdb", lambda: duckdb_double_rows(program, data))]
    if POSTGRES_URL:
        runs.append(("postgres", lambda: postgres_double_rows(program, source, data)))
    ran = 0
    for backend, run in runs:
        try:
            actual = run()
        except Unsupported as exc:
            COUNTS[f"{backend} refused: {exc.function}"] += 1
            continue
        ran += 1
        COUNTS[f"{backend} ran"] += 1
        for i, (a, e) in enumerate(zip(actual, expected)):
            if not _close(a, e, SQL_TOL, False):
                outside = _beyond_decimal(program, data[i])
                if outside == "big" and isinstance(a, ErrorValue) and a.code == "#NUM!":
                    COUNTS[f"{backend} #NUM! beyond Decimal(38, 18)"] += 1
                    continue
                if outside == "tiny":
                    COUNTS[f"{backend} past Decimal(38, 18) (tiny)"] += 1
                    continue
            assert _close(a, e, SQL_TOL, False), \
                f"{backend} row {i}: got {a!r}, scalar gave {e!r}\n  {source}\n  {data[i]}"
    assume(ran > 0)


def test_most_draws_ran() -> None:
    """The property ran (not every draw refused); its counts, with ``-s``."""
    print("\ndecimal-over-double differential:", dict(COUNTS))
    if COUNTS:
        assert COUNTS["duckdb ran"] >= 10, dict(COUNTS)
    for con in _PG:
        con.close()
    _PG.clear()
