"""The shared harness of the ``test_*_backends.py`` files: one formula, three engines, same rows.

Contract. Rows are dicts (column name -> Python value) described by a schema of type texts
(``{"x": "Number?", "xs": "List<Date?>"}``); a numeric ``mode`` is "float" (Float64 / DOUBLE
Number columns) or "decimal" (Decimal(38, 18) / DECIMAL(38, 18), with ``numbers="decimal"``).

* `rows_for` turns rows into a mode's rows (decimal: floats become their shortest-repr Decimal,
  rows Decimal(38, 18) cannot hold are left out); `frame` and `duckdb_table` build the polars
  frame and the DuckDB table of those rows, typed from the schema.
* `run_scalar` evaluates row by row (the reference): values, `ErrorValue`s, or the
  `LimitExceeded` raised where a budget ran out (which no backend outcome ever matches).
  `run_polars` (`formulane.apply`) and `run_duckdb` (`formulane.sql_select`, compiled before
  any table is built, run in a New York session zone that must not change a result) give one
  ``(value, error code)`` per row, in row order. `run` picks one of them from a label such as
  "polars-decimal" or "duckdb-double".
* `agrees` is the one comparison of an expected value with a backend outcome; its keyword
  parameters are the legitimate differences between the families (float tolerance, decimal
  exactness, the Decimal(38, 18) magnitude limit, numbers inside lists, wall clocks).
  `differing` lists the rows that disagree, `report` formats them, `assert_agree` does both.
* `assert_refused` checks a backend refuses when compiling, with its name and reason.
* `table_cases`, `source_of`, `family_specs` and `decisions` read case tables and specs for
  the parametrization and the every-function-is-decided checks.

The test files keep their case tables and family-specific tests; only this machinery is here.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

import formulane
from formulane.errors import LimitExceeded, Unsupported
from formulane.types import Type, parse_type
from formulane.values import CONTEXT, ErrorValue

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

#: The result column (no test table has a column of these names) and the row-order column.
OUT = "fx"
ERR = OUT + "__error"
ROW = "__row"
UTC = dt.UTC
#: Relative tolerance of the float policy of the columnar backends (docs/columnar.md).
REL = 1e-9
#: engine of a label -> the `Unsupported.backend` of its refusals
BACKEND = {"polars": "polars", "duckdb": "sql"}

Outcome = tuple[Any, Any]  # (value, error code or None) of one row on a backend


# ------------------------------------------------------------------------------------ rows


def fits_decimal(value: Any) -> bool:
    """A value Decimal(38, 18) holds exactly (under 1e18, at most 18 places); non-numbers fit,
    lists fit when every item does."""
    if isinstance(value, list):
        return all(fits_decimal(v) for v in value)
    if not isinstance(value, (int, float, Decimal)) or isinstance(value, bool):
        return True
    d = value if isinstance(value, Decimal) else Decimal(repr(value))
    wide = decimal.Context(prec=80)
    return abs(d) < Decimal("1e18") and d == d.quantize(Decimal("1e-18"), context=wide)


def _as_decimal(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, int) and not isinstance(value, bool):
        return Decimal(value)
    if isinstance(value, list):
        return [_as_decimal(v) for v in value]
    return value


def rows_for(mode: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as a mode reads them: float keeps them; decimal keeps the rows that fit
    Decimal(38, 18), floats (also inside lists) as their shortest-repr Decimal, ints as
    Decimals."""
    if mode == "float":
        return rows
    assert mode == "decimal", mode
    out = [{k: _as_decimal(v) for k, v in row.items()} for row in rows
           if all(fits_decimal(v) for v in row.values())]
    assert out or not rows, "every row set keeps rows in decimal mode"
    return out


def _parsed(schema: dict[str, str]) -> dict[str, Type]:
    return {name: parse_type(text) for name, text in schema.items()}


def polars_dtype(t: Type, mode: str) -> Any:
    k = t.kind
    if k == "Number":
        return pl.Decimal(38, 18) if mode == "decimal" else pl.Float64
    if k == "List":
        assert t.elem is not None
        return pl.List(polars_dtype(t.elem, mode))
    return {"Text": pl.Utf8, "Boolean": pl.Boolean, "Date": pl.Date,
            "DateTime": pl.Datetime("us", "UTC"), "Duration": pl.Duration("us")}[k]


def sql_type(t: Type, mode: str) -> str:
    k = t.kind
    if k == "Number":
        return "DECIMAL(38, 18)" if mode == "decimal" else "DOUBLE"
    if k == "List":
        assert t.elem is not None
        return sql_type(t.elem, mode) + "[]"
    return {"Text": "VARCHAR", "Boolean": "BOOLEAN", "Date": "DATE",
            "DateTime": "TIMESTAMPTZ", "Duration": "INTERVAL"}[k]


def frame(schema: dict[str, str], rows: list[dict[str, Any]], mode: str,
          dtypes: dict[str, Any] | None = None) -> Any:
    """A polars frame of the rows; ``dtypes`` overrides a column's dtype (a zoned column)."""
    types = {n: (dtypes or {}).get(n) or polars_dtype(t, mode) for n, t in _parsed(schema).items()}
    return pl.DataFrame({n: [row[n] for row in rows] for n in types}, schema=types)


def duckdb_table(schema: dict[str, str], rows: list[dict[str, Any]], mode: str) -> Any:
    """A DuckDB connection holding table ``t`` of the rows (and their order in ``__row``)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'America/New_York'")  # results must not depend on it
    names = list(schema)
    columns = ", ".join(f'"{n}" {sql_type(t, mode)}' for n, t in _parsed(schema).items())
    con.execute(f'CREATE TABLE t ("{ROW}" INTEGER, {columns})')
    marks = ", ".join("?" for _ in range(len(names) + 1))
    con.executemany(f"INSERT INTO t VALUES ({marks})",
                    [[i] + [row[n] for n in names] for i, row in enumerate(rows)])
    return con


# ------------------------------------------------------------------------------- engines


def run_scalar(formula: str, schema: dict[str, str], rows: list[dict[str, Any]], *,
               profile: str, registry: Any = None, limits: Any = None) -> list[Any]:
    program = formulane.compile(formula, schema, profile=profile, registry=registry,
                                limits=limits)
    out: list[Any] = []
    for row in rows:
        try:
            out.append(program.evaluate(row))
        except LimitExceeded as exc:  # a budget, not a value: only refusing backends meet it
            out.append(exc)
    return out


def run_polars(formula: str, schema: dict[str, str], rows: list[dict[str, Any]], mode: str, *,
               profile: str, registry: Any = None, dtypes: dict[str, Any] | None = None
               ) -> list[Outcome]:
    out = formulane.apply(frame(schema, rows, mode, dtypes), {OUT: formula}, schema,
                          profile=profile, registry=registry, numbers=mode)
    errors = out[ERR].to_list() if ERR in out.columns else [None] * len(rows)
    return list(zip(out[OUT].to_list(), errors))


def run_duckdb(formula: str, schema: dict[str, str], rows: list[dict[str, Any]], mode: str, *,
               profile: str, registry: Any = None) -> list[Outcome]:
    query = formulane.sql_select("t", {OUT: formula}, schema, profile=profile,
                                 registry=registry, numbers=mode)  # a refusal raises here
    con = duckdb_table(schema, rows, mode)
    cursor = con.execute(f'SELECT * FROM ({query}) ORDER BY "{ROW}"')
    names = [d[0] for d in cursor.description]
    out = []
    datetime_result: bool | None = None
    for row in cursor.fetchall():
        got = dict(zip(names, row))
        value = got[OUT]
        if isinstance(value, str):
            if datetime_result is None:
                datetime_result = formulane.compile(formula, schema, profile=profile,
                                                    registry=registry).type.kind == "DateTime"
            if datetime_result:
                # DuckDB's client hands a TIMESTAMPTZ it cannot show in the session's zone
                # (year 1 read in New York is year 0) back as its text, offset included
                value = dt.datetime.fromisoformat(value)
        out.append((value, got.get(ERR)))
    return out


def engine_mode(label: str) -> tuple[str, str]:
    """("polars" or "duckdb", "float" or "decimal") of a label such as "duckdb-double"."""
    engine, mode = label.split("-")
    assert engine in BACKEND, label
    return engine, {"double": "float"}.get(mode, mode)


def run(label: str, formula: str, schema: dict[str, str], rows: list[dict[str, Any]], *,
        profile: str, registry: Any = None, dtypes: dict[str, Any] | None = None
        ) -> list[Outcome]:
    """The formula on the engine and mode of ``label``, on rows already in that mode."""
    engine, mode = engine_mode(label)
    if engine == "polars":
        return run_polars(formula, schema, rows, mode, profile=profile, registry=registry,
                          dtypes=dtypes)
    return run_duckdb(formula, schema, rows, mode, profile=profile, registry=registry)


def assert_refused(backend: str, reason: str, call: Callable[..., Any], *args: Any,
                   **kwargs: Any) -> Unsupported:
    """``call(*args, **kwargs)`` raises `Unsupported` for ``backend`` ("polars" or "sql") with
    ``reason`` in its reason."""
    with pytest.raises(Unsupported) as info:
        call(*args, **kwargs)
    assert info.value.backend == backend, (backend, info.value.backend, info.value.reason)
    assert reason in info.value.reason, (reason, info.value.reason)
    return info.value


# ---------------------------------------------------------------------------- comparison


def _number(v: Any) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def _instant(v: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    aware = v if v.tzinfo else v.replace(tzinfo=UTC)  # a naive result is read at UTC
    return aware.astimezone(UTC), aware.replace(tzinfo=None)


def same_value(want: Any, have: Any, *, rel: float = REL, abs_tol: float = 0.0,
               exact: bool = False, wall_clock: bool = False, list_tolerance: bool = False
               ) -> bool:
    """``have`` is ``want``: numbers within ``rel`` relative or ``abs_tol`` absolute (exactly,
    up to the scalar's 34 digits, when ``exact`` and both are Decimal); texts, booleans and
    other values of the same type and equal; date-times the same instant (and the same wall
    clock when ``wall_clock``); lists item by item (numbers in them exactly unless
    ``list_tolerance``)."""
    options: dict[str, Any] = {"rel": rel, "abs_tol": abs_tol, "exact": exact, "wall_clock": wall_clock,
                               "list_tolerance": list_tolerance}
    if want is None or have is None:
        return want is None and have is None
    if isinstance(want, (list, tuple)):
        if not list_tolerance:
            options.update(rel=0.0, abs_tol=0.0)
        return isinstance(have, (list, tuple)) and len(want) == len(have) and all(
            same_value(w, h, **options) for w, h in zip(want, have))
    if _number(want) and _number(have):
        if exact and isinstance(want, Decimal) and isinstance(have, Decimal):
            return CONTEXT.plus(have) == want
        a, b = float(want), float(have)
        return a == b or abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_tol)
    if isinstance(want, dt.datetime) and isinstance(have, dt.datetime):
        (w_at, w_wall), (h_at, h_wall) = _instant(want), _instant(have)
        return w_at == h_at and (not wall_clock or w_wall == h_wall)
    return type(want) is type(have) and want == have


def agrees(want: Any, outcome: Outcome, *, decimal_limit: Decimal | None = None,
           **options: Any) -> bool:
    """A backend's ``(value, error)`` is the scalar's ``want``: the same error code and no
    value, or no error and `same_value`. With ``decimal_limit``, a scalar number that large
    must be #NUM! (the Decimal(38, 18) policy of decimal polars). A `LimitExceeded` row never
    agrees: the form should have refused when compiling."""
    value, error = outcome
    if isinstance(want, LimitExceeded):
        return False
    if type(want) is ErrorValue:
        return error == want.code and value is None
    if decimal_limit is not None and _number(want) and abs(want) >= decimal_limit:
        return error == "#NUM!" and value is None
    return error is None and same_value(want, value, **options)


def differing(expected: list[Any], actual: list[Outcome], **options: Any) -> list[int]:
    """The indexes of the rows where `agrees` fails (the lengths must be equal)."""
    assert len(expected) == len(actual), (len(expected), len(actual))
    return [i for i, (want, got) in enumerate(zip(expected, actual))
            if not agrees(want, got, **options)]


def report(title: str, rows: list[Any], expected: list[Any], actual: list[Outcome],
           bad: list[int], limit: int = 12) -> str:
    """``title``: how many rows differ, then the first ``limit`` of them, one a line."""
    lines = [f"{title}: {len(bad)} of {len(rows)} rows differ:"]
    for i in bad[:limit]:
        value, error = actual[i]
        lines.append(f"row {i} {rows[i]}: scalar {expected[i]!r}, backend {value!r} / {error!r}")
    return "\n".join(lines)


def assert_agree(title: str, rows: list[Any], expected: list[Any], actual: list[Outcome],
                 **options: Any) -> None:
    bad = differing(expected, actual, **options)
    assert not bad, report(title, rows, expected, actual, bad)


# ------------------------------------------------------------------------- case tables


def source_of(formula: Any) -> str:
    """The formula text of a case-table entry: a text, or an object with ``.source``."""
    return formula if isinstance(formula, str) else formula.source


def table_cases(tables: list[Any]) -> list[Any]:
    """One pytest param ``(table, formula)`` per formula of each table (``.name`` and
    ``.formulas``), with the id "<table name>: <formula>"."""
    return [pytest.param(table, formula, id=f"{table.name}: {source_of(formula)}")
            for table in tables for formula in table.formulas]


def family_specs(registry: Any, categories: tuple[str, ...]) -> list[Any]:
    """The registry's function specs of those categories, once each, by name."""
    seen = {id(spec): spec for spec in registry if spec.category in categories}
    return sorted(seen.values(), key=lambda s: s.name)


def decisions(spec: Any) -> list[Any]:
    """A spec's polars and SQL decisions, then those its signatures set themselves."""
    from formulane.columnar.forms import declared_form

    out = [declared_form(spec, "polars"), declared_form(spec, "sql")]
    for s in spec.signatures:
        out += [declared_form(spec, "polars", s), declared_form(spec, "sql", s)]
    return out
