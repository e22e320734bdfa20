"""Runs one golden case (tests/cases/*.yaml) on one named backend, and classifies what happened.

The case's variables are laid out as a one-row table and the formula runs on:

- ``scalar``: the row-by-row engine (`Program.evaluate`);
- ``polars-float`` / ``polars-decimal``: `formulane.apply` with Number columns Float64 or
  Decimal(38, 18);
- ``duckdb-decimal`` / ``duckdb-float``: the generated SQL on DuckDB, Number columns DECIMAL
  fitted to the data or DOUBLE.

`attempt` returns an `Attempt`: the backend's value (or error value), a typed refusal
(`formulane.Unsupported`), a layout the table cannot hold ("n/a", with the reason), another
`FormulaError` raised, or a *foreign* exception: anything else (a polars ``ComputeError``, a
DuckDB ``ConversionException``, a Python ``TypeError``...), which no backend may ever raise.
Attempts are cached per (case, layout, backend), so test modules that share a session share
the work (tests/test_backends.py compares values, tests/test_differential_backends.py hunts
foreign exceptions).

Layouts: ``golden`` (the case as written), ``blank`` (every variable of the case blank, its
schema made nullable: the same formula over a row of nulls, where untyped null literals and
null-only columns meet every form), ``nullable`` (the case's own values, its schema made
nullable: the forms' nullable paths) and ``example`` (not a golden case: every function's
documented example, `EXAMPLES`, as a case of its own).
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Any, Callable

import duckdb

import formulane
from formulane import ErrorValue, FormulaError, Unsupported
from formulane.schema import infer_schema, normalize_schema
from formulane.types import Type, optional
from formulane.values import to_external, to_internal
from formulane.columnar.polars.frame import frame_from_rows, from_polars_value
from formulane.columnar.sql.select import to_sql_form

from case_runner import Case, load_cases, run_scalar

CASES = load_cases()
BACKENDS = ("scalar", "polars-float", "polars-decimal", "duckdb-decimal", "duckdb-float")
LAYOUTS = ("golden", "blank", "nullable", "example")
_WIDE = decimal.Context(prec=80)


class NotApplicable(Exception):
    """The case cannot be laid out for this backend (recorded with the reason)."""


# ------------------------------------------------------------------------------- layouts


def program_for(case: Case) -> tuple[Any, dict[str, Type]]:
    if case.raises:
        raise NotApplicable(f"the case expects {case.raises} (raised before any backend runs)")
    schema = case.schema if case.schema is not None else infer_schema(case.vars)
    types = normalize_schema(schema)
    for name, t in types.items():
        if not tabular(t):
            raise NotApplicable(f"variable {name}: {t} has no column type")
    registry = formulane.default_registry()
    if case.packs:
        registry = registry.with_packs(*case.packs)
    program = formulane.compile(case.expr, schema, profile=case.profile, registry=registry)
    if program.uses and any(n not in case.vars and not types[n].nullable for n in program.uses):
        raise NotApplicable("a variable has no value")
    return program, types


def tabular(t: Type) -> bool:
    if t.kind in ("Number", "Text", "Boolean", "Date", "DateTime"):
        return True
    if t.kind == "List":
        return t.elem is not None and t.elem.kind in ("Number", "Text", "Boolean", "Date")
    if t.kind == "Record":
        return all(tabular(ft) and ft.kind != "Record" for _, ft in t.fields)
    return False


def row_for(case: Case, types: dict[str, Type]) -> dict[str, Any]:
    row = {n: to_external(to_internal(case.vars.get(n), t, n)) for n, t in types.items()}
    for name, value in row.items():
        if isinstance(value, dt.datetime) and value.utcoffset() != dt.timedelta(0):
            # its fields are read in its own zone; a table column holds instants at UTC (SQL)
            # or one zone per column (polars), not a zone per value
            raise NotApplicable(f"variable {name}: a DateTime in zone {value.tzname()} "
                                "(table columns hold UTC instants)")
    return row


def blank_twin(case: Case, values: bool = False) -> Case | None:
    """The case over a row of blanks (its schema made nullable), or None without variables;
    with ``values``, over its own values (only the schema made nullable)."""
    if case.raises:
        return None
    try:
        schema = case.schema if case.schema is not None else infer_schema(case.vars)
        types = normalize_schema(schema)
    except FormulaError:
        return None
    if not types:
        return None
    return replace(case, vars=case.vars if values else {n: None for n in types},
                   schema={n: optional(t) for n, t in types.items()})  # type: ignore[misc]


# ------------------------------------------------------------------------------- runners


def run_polars(case: Case, numbers: str) -> Any:
    program, types = program_for(case)
    row = row_for(case, types)
    try:
        frame = frame_from_rows([row], types, numbers)
    except ValueError as exc:
        raise NotApplicable(f"input outside the {numbers} layout: {exc}") from None
    out = formulane.apply(frame, {"out": case.expr}, types, profile=case.profile,
                          numbers=numbers, registry=program.registry)
    error = out["out__error"][0] if "out__error" in out.columns else None
    if error is not None:
        return ErrorValue(error)
    return from_polars_value(out["out"][0], program.type)


def sql_number_type(value: Any, numbers: str) -> str:
    if numbers == "float":
        return "DOUBLE"
    if value is None:
        return "DECIMAL(18, 4)"
    d = Decimal(value).normalize(_WIDE)
    sign, digits, exponent = d.as_tuple()
    scale = max(0, -int(exponent))
    whole = max(1, len(digits) + int(exponent))
    if whole + scale > 38:
        raise NotApplicable(f"{value} does not fit a DECIMAL(38)")
    # precision 38: DuckDB keeps the operands' precision for a product (docs/columnar.md)
    return f"DECIMAL(38, {scale})"


def sql_type(t: Type, value: Any, numbers: str) -> str:
    if t.kind == "Number":
        return sql_number_type(value, numbers)
    if t.kind == "List":
        widest = "DECIMAL(38, 18)" if numbers == "decimal" else "DOUBLE"
        if t.elem is not None and t.elem.kind == "Number" and numbers == "decimal" and value:
            scale = max((max(0, -int(Decimal(v).normalize(_WIDE).as_tuple().exponent))
                         for v in value if v is not None), default=0)
            widest = f"DECIMAL({min(38, 20 + scale)}, {scale})"
        inner = widest if t.elem is not None and t.elem.kind == "Number" else \
            sql_type(t.elem, None, numbers)  # type: ignore[arg-type]
        return inner + "[]"
    if t.kind == "Record":
        return "STRUCT(" + ", ".join(
            f'"{n}" {sql_type(ft, (value or {}).get(n), numbers)}' for n, ft in t.fields) + ")"
    return {"Text": "VARCHAR", "Boolean": "BOOLEAN", "Date": "DATE",
            "DateTime": "TIMESTAMPTZ"}[t.kind]


def _duckdb_param(value: Any) -> Any:
    if isinstance(value, list):
        return [_duckdb_param(v) for v in value]
    if isinstance(value, dict):
        return {k: _duckdb_param(v) for k, v in value.items()}
    return value


def golden_column_types(case: Case, numbers: str) -> dict[str, str]:
    """The SQL types of the table `run_duckdb` builds for the case (column name -> type text,
    as written in its CREATE TABLE): what a caller would pass as ``column_types``."""
    program, types = program_for(case)
    row = row_for(case, types)
    return {n: sql_type(t, row[n], numbers) for n, t in types.items()}


def run_duckdb(case: Case, numbers: str, with_types: bool = False) -> Any:
    """The case on DuckDB; ``with_types``: the SQL compiled knowing the table's column types
    (`golden_column_types`)."""
    program, types = program_for(case)
    row = row_for(case, types)
    form = to_sql_form(program.root, "duckdb", numbers,
                       column_types=golden_column_types(case, numbers) if with_types else None)
    con = duckdb.connect()
    try:
        if types:
            columns = ", ".join(f'?::{sql_type(t, row[n], numbers)} AS "{n}"'
                                for n, t in types.items())
            con.execute(f"CREATE TABLE t AS SELECT {columns}",
                        [_duckdb_param(row[n]) for n in types])
        else:
            con.execute("CREATE TABLE t AS SELECT 1 AS __row")
        result = con.execute(form.select("t", "v", "e")).fetchone()
    finally:
        con.close()
    assert result is not None
    if len(result) > 1 and result[1] is not None:
        return ErrorValue(result[1])
    return from_polars_value(result[0], program.type)


def postgres_table(pg: Any, table: dict[str, tuple[str, Any]], name: str = "t"
                   ) -> dict[str, str]:
    """A temporary one-row PostgreSQL table from ``{column: (SQL type, value)}`` (DECIMAL
    written NUMERIC); its column types as PostgreSQL names them (for ``column_types``)."""
    types = {n: t.replace("DECIMAL", "NUMERIC") for n, (t, _) in table.items()}
    pg.execute(f'CREATE TEMPORARY TABLE "{name}" (' + ", ".join(
        f'"{n}" {t}' for n, t in types.items()) + ")")
    pg.execute(f'INSERT INTO "{name}" VALUES (' + ", ".join("%s" for _ in table) + ")",
               [v for _, v in table.values()])
    return types


def run_scalar_backend(case: Case) -> Any:
    """The scalar engine: its value, or the `FormulaError` it raised, re-raised."""
    program, result = run_scalar(case)
    if isinstance(result, FormulaError):
        raise result
    return result


RUNNERS: dict[str, Callable[[Case], Any]] = {
    "scalar": run_scalar_backend,
    "polars-float": lambda c: run_polars(c, "float"),
    "polars-decimal": lambda c: run_polars(c, "decimal"),
    "duckdb-decimal": lambda c: run_duckdb(c, "decimal"),
    "duckdb-float": lambda c: run_duckdb(c, "float"),
}


# ------------------------------------------------------------------------------- attempts


@dataclass(frozen=True)
class Attempt:
    """What one backend did with one case: ``kind`` is "value" (``value`` holds the value or
    `ErrorValue`), "refused" (`Unsupported`), "n/a" (no table layout), "typed" (another
    `FormulaError`) or "foreign" (any other exception); ``detail`` says which and why."""

    kind: str
    value: Any = None
    detail: str = ""
    code: str = ""


def _example_cases() -> list[Case]:
    from formulane.reference import _all_packs

    cases = []
    for spec in sorted(_all_packs(formulane.default_registry()), key=lambda s: s.name):
        for k, example in enumerate(spec.examples):
            cases.append(Case(file=f"example:{spec.name}", index=k, expr=example.expr,
                              vars=dict(example.variables),
                              packs=(spec.pack,) if spec.pack else ()))
    return cases


#: Every function's documented examples (`FunctionSpec.examples`) as cases.
EXAMPLES = _example_cases()


def cases_of(layout: str) -> list[Case]:
    """The cases a layout runs over (indexed as `attempt` indexes them)."""
    return EXAMPLES if layout == "example" else CASES


def case_for(index: int, layout: str) -> Case | None:
    if layout == "example":
        return EXAMPLES[index]
    case = CASES[index]
    return case if layout == "golden" else blank_twin(case, values=layout == "nullable")


@lru_cache(maxsize=None)
def attempt(index: int, backend: str, layout: str = "golden") -> Attempt:
    case = case_for(index, layout)
    if case is None:
        return Attempt("n/a", detail="no variables to blank")
    try:
        value = RUNNERS[backend](case)
    except Unsupported as exc:
        return Attempt("refused", detail=exc.reason, code=exc.code)
    except NotApplicable as exc:
        return Attempt("n/a", detail=str(exc))
    except FormulaError as exc:
        return Attempt("typed", detail=exc.message, code=exc.code)
    except Exception as exc:  # noqa: BLE001 - the point: any other exception is foreign
        return Attempt("foreign", detail=f"{type(exc).__module__}.{type(exc).__name__}: "
                                         f"{str(exc)[:300]}")
    return Attempt("value", value=value)
