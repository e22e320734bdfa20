"""Every golden case (tests/cases/*.yaml) on the columnar and SQL backends.

Each case's variables are laid out as a one-row table and the formula runs on:

- ``polars-float``: Number columns Float64 (`formulane.apply` float mode);
- ``polars-decimal``: Number columns Decimal(38, 18) (decimal mode);
- ``duckdb-decimal``: the generated SQL on DuckDB, Number columns DECIMAL fitted to the data;
- ``duckdb-float``: the same with DOUBLE columns;
- ``spark``: the generated Spark SQL on pyspark in local mode, for the operator and logic cases
  DuckDB runs (`SPARK_FILES`; skipped, with the reason, only when pyspark or Java is missing).

The outcome is compared with the case's expected value and error code. Numbers: polars decimal
mode exactly (to 18 decimal places, its scale; a true result of magnitude >= 1e20 must be
#NUM!), float columns and SQL values within a relative 1e-12 (SQL divides in DOUBLE). A float
layout that misses a case its decimal twin gets right is "inexact" (float64 cannot hold the
answer, as in SUM([1E20, 1, -1E20])) and listed; so is a decimal layout's #NUM! for a value
beyond Decimal(38, 18) ("range"), and a polars decimal result within a relative 1e-15 from a
function documented to compute through float64 ("float64"). A case a
backend refuses at compile time (`formulane.Unsupported`) or cannot lay out (a compile error
case, a value outside Decimal(38, 18), an input type the table cannot hold) is recorded with
its reason, never skipped in silence: `test_refusals_are_the_checked_in_list` compares the set
with tests/backend_refusals.txt, so a new refusal or a newly supported case is noticed.
Regenerate the list with ``FORMULANE_UPDATE_REFUSALS=1 pytest tests/test_backends.py``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import re
import time
from collections import Counter
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import sqlglot

import formulane
from formulane import ErrorValue, Unsupported
from formulane.types import Type

from case_runner import Case, expected_value, same

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

from formulane.columnar.sql.select import to_sql_form  # noqa: E402

from backend_runner import CASES, NotApplicable, attempt, sql_number_type  # noqa: E402
from backend_runner import program_for as _program  # noqa: E402
from backend_runner import row_for as _row  # noqa: E402

REFUSALS_FILE = Path(__file__).parent / "backend_refusals.txt"
BACKENDS = ("polars-float", "polars-decimal", "duckdb-decimal", "duckdb-float")
#: Relative tolerance for float columns and SQL values (documented in docs/columnar.md).
REL_TOL = Decimal("1e-12")
_WIDE = decimal.Context(prec=80)
_QUANTUM = Decimal("1e-18")
#: Decimal mode: relative agreement where a quotient was rounded at 18 places.
DECIMAL_TOL = Decimal("1e-17")
#: Decimal mode: functions documented to compute through float64 agree within this.
FLOAT64_TOL = Decimal("1e-15")


# ------------------------------------------------------------------------------- outcomes


def _expected(case: Case) -> Any:
    return ErrorValue(case.error) if case.error else expected_value(case)


def check(case: Case, backend: str, actual: Any) -> str | None:
    """None when the backend's outcome matches the case, else what differs."""
    expected = _expected(case)
    if backend == "polars-decimal" and isinstance(expected, Decimal) \
            and not abs(expected) < Decimal("1e20"):
        expected = ErrorValue("#NUM!")  # documented: Decimal(38, 18) holds |x| < 1e20
    if isinstance(expected, ErrorValue) or isinstance(actual, ErrorValue):
        if isinstance(expected, ErrorValue) and isinstance(actual, ErrorValue) \
                and actual.code == expected.code:
            return None
        return f"got {actual!r}, expected {expected!r}"
    if _close(actual, expected, backend):
        return None
    return f"got {actual!r}, expected {expected!r}"


def _close(actual: Any, expected: Any, backend: str) -> bool:
    if isinstance(expected, Decimal) and isinstance(actual, Decimal):
        if actual == expected:
            return True
        if backend == "polars-decimal":
            # exact at its 18 decimal places; a quotient is rounded there, so what is derived
            # from one may differ in the last place or so
            return actual == expected.quantize(_QUANTUM, context=_WIDE) or \
                abs(actual - expected) <= DECIMAL_TOL * max(abs(expected), Decimal(1))
        return abs(actual - expected) <= REL_TOL * max(abs(expected), Decimal(1))
    if isinstance(expected, list) and isinstance(actual, list):
        return len(actual) == len(expected) and all(
            _close(a, e, backend) for a, e in zip(actual, expected))
    return same(actual, expected)


@lru_cache(maxsize=None)
def outcome(index: int, backend: str) -> tuple[str, str]:
    """("pass" | "fail" | "refused" | "n/a", detail) for one case on one backend."""
    case = CASES[index]
    tried = attempt(index, backend)
    if tried.kind in ("refused", "n/a"):
        return tried.kind, tried.detail
    if tried.kind == "typed":
        return "fail", f"raised {tried.code}: {tried.detail}"
    if tried.kind == "foreign":  # a backend crash is a failure, never a skip
        return "fail", f"crashed: {tried.detail}"
    actual = tried.value
    problem = check(case, backend, actual)
    if problem is None:
        return "pass", ""
    expected = _expected(case)
    if backend == "polars-decimal" and isinstance(actual, Decimal) \
            and isinstance(expected, Decimal) \
            and abs(actual - expected) <= FLOAT64_TOL * max(abs(expected), Decimal(1)):
        # a function documented to compute through float64 in decimal mode (SQRT, POWER with
        # a fractional exponent, LN...): listed, so it stays visible
        return "float64", problem
    if backend in ("polars-decimal", "duckdb-decimal") and isinstance(actual, ErrorValue) \
            and actual.code == "#NUM!" and not case.error:
        # a literal, an input or an intermediate result does not fit Decimal(38, 18)
        return "range", problem
    if backend in ("polars-decimal", "duckdb-decimal") and _huge_literal(case.expr):
        # a literal beyond Decimal(38, 18) is #NUM! there, which IFERROR may then catch
        # (IFERROR(7.9e28 * 7.9e28, 1) is 1 in decimal mode)
        return "range", problem
    twin = {"polars-float": "polars-decimal", "duckdb-float": "duckdb-decimal"}.get(backend)
    if twin and outcome(index, twin)[0] in ("pass", "range", "float64"):
        # float64 cannot hold the exact answer (SUM([1E20, 1, -1E20])): the decimal layout of
        # the same backend gets it right. Listed with the refusals, so it stays visible.
        return "inexact", problem
    return "fail", problem


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d*)?(?:[eE][+-]?\d+)?")


def _huge_literal(expr: str) -> bool:
    """Whether the formula writes a number of magnitude 1e20 or more (outside text)."""
    code = re.sub(r'"(?:[^"]|"")*"', '""', expr)
    return any(Decimal(m) >= Decimal("1e20") for m in _NUMBER.findall(code))


PARAMS = [(i, b) for b in BACKENDS for i in range(len(CASES))]


@pytest.mark.parametrize("index,backend", PARAMS,
                         ids=[f"{b}:{CASES[i].id}" for i, b in PARAMS])
def test_golden_case(index: int, backend: str) -> None:
    status, detail = outcome(index, backend)
    assert status != "fail", f"{CASES[index].expr}: {detail}"


# ------------------------------------------------------------------------------- refusals


def _refusal_lines(backends: tuple[str, ...]) -> list[str]:
    lines = []
    for backend in backends:
        for i, case in enumerate(CASES):
            status, detail = outcome(i, backend)
            if status in ("refused", "n/a", "inexact", "range", "float64"):
                lines.append(f"{backend}\t{status}\t{case.id}\t{detail}")
    return lines


def summary(backends: tuple[str, ...]) -> str:
    counts = {b: Counter(outcome(i, b)[0] for i in range(len(CASES))) for b in backends}
    out = [f"{len(CASES)} golden cases"]
    for b, c in counts.items():
        out.append(f"  {b:15} pass {c['pass']:4}  refused {c['refused']:4}  n/a {c['n/a']:4}  "
                   f"float-inexact {c['inexact']:3}  decimal-range {c['range']:3}  "
                   f"via-float64 {c['float64']:3}  fail {c['fail']:4}")
    return "\n".join(out)


def test_refusals_are_the_checked_in_list() -> None:
    lines = _refusal_lines(BACKENDS)
    text = "".join(line + "\n" for line in lines)
    print("\n" + summary(BACKENDS))
    if os.environ.get("FORMULANE_UPDATE_REFUSALS"):
        header = ("# Golden cases a backend refuses (Unsupported) or cannot lay out (n/a), with\n"
                  "# the reason. Generated: FORMULANE_UPDATE_REFUSALS=1 pytest "
                  "tests/test_backends.py\n")
        REFUSALS_FILE.write_text(header + text, encoding="utf-8")
    assert REFUSALS_FILE.exists(), "generate tests/backend_refusals.txt (see module docs)"
    recorded = [line for line in REFUSALS_FILE.read_text(encoding="utf-8").splitlines()
                if line and not line.startswith("#")]
    new = sorted(set(lines) - set(recorded))
    gone = sorted(set(recorded) - set(lines))
    assert not new and not gone, (
        "the backends' refusals changed; check them and regenerate with "
        "FORMULANE_UPDATE_REFUSALS=1 pytest tests/test_backends.py\n"
        + "".join(f"  new:  {line}\n" for line in new[:40])
        + "".join(f"  gone: {line}\n" for line in gone[:40]))


def test_every_backend_runs_a_fair_share() -> None:
    """Operators and logic have forms on every backend: those families must run."""
    for backend in BACKENDS:
        ran = [c for i, c in enumerate(CASES) if outcome(i, backend)[0] == "pass"
               and c.file in ("operators.yaml", "logic.yaml")]
        assert len(ran) >= 120, f"{backend}: only {len(ran)} operator/logic cases ran"


# ---------------------------------------------------------------------------------- Spark


def _spark_literal(value: Any, t: Type) -> str:
    from sqlglot import exp

    from formulane.columnar.sql.kit import literal

    if value is None:
        return f"CAST(NULL AS {_spark_type(t, None)})"
    if t.kind == "Number":
        return f"CAST({format(Decimal(value), 'f')} AS {_spark_type(t, value)})"
    if t.kind == "List":
        items = ", ".join(_spark_literal(v, t.elem) for v in value)  # type: ignore[arg-type]
        return f"CAST(ARRAY({items}) AS {_spark_type(t, value)})"
    if t.kind == "Record":
        fields = ", ".join(f"'{n}', {_spark_literal(value.get(n), ft)}" for n, ft in t.fields)
        return f"NAMED_STRUCT({fields})"
    if t.kind == "DateTime":
        return f"TIMESTAMP '{value.astimezone(dt.timezone.utc).isoformat()}'"
    return literal(value).sql("spark") if not isinstance(value, dt.date) else \
        exp.cast(exp.Literal.string(value.isoformat()), "DATE").sql("spark")


def _spark_type(t: Type, value: Any) -> str:
    if t.kind == "Number":
        return sql_number_type(value, "decimal")
    if t.kind == "List":
        widest = "DECIMAL(38, 18)"
        if t.elem is not None and t.elem.kind == "Number" and value:
            scale = max((max(0, -int(Decimal(v).normalize(_WIDE).as_tuple().exponent))
                         for v in value if v is not None), default=0)
            widest = f"DECIMAL({min(38, 20 + scale)}, {scale})"
        inner = widest if t.elem is not None and t.elem.kind == "Number" else \
            _spark_type(t.elem, None)  # type: ignore[arg-type]
        return f"ARRAY<{inner}>"
    if t.kind == "Record":
        return "STRUCT<" + ", ".join(f"{n}: {_spark_type(ft, None)}" for n, ft in t.fields) + ">"
    return {"Text": "STRING", "Boolean": "BOOLEAN", "Date": "DATE",
            "DateTime": "TIMESTAMP"}[t.kind]


SPARK_BATCH = 1
#: The golden subset run on Spark: the core's operators and logic (Spark analyses each query in
#: about a second, so all ~900 cases DuckDB runs would take a quarter of an hour).
SPARK_FILES = ("operators.yaml", "logic.yaml")


def spark_select(case: Case, index: int) -> tuple[str, Any]:
    """One case as a Spark SELECT of (case index, value as JSON, error code)."""
    program, types = _program(case)
    row = _row(case, types)
    form = to_sql_form(program.root, "spark", "decimal")
    if types:
        columns = ", ".join(f"{_spark_literal(row[n], t)} AS `{n}`" for n, t in types.items())
    else:
        columns = "1 AS __row"
    error = form.error_sql if form.error is not None else "CAST(NULL AS STRING)"
    # the row as a subquery; the form's bindings (if any) join it laterally
    source, joins = form.from_clause(sqlglot.parse_one(f"(SELECT {columns})", read="spark"))
    from_sql = source.sql("spark") + "".join(" " + j.sql("spark") for j in joins)
    if not joins:
        from_sql += " AS t"
    select = (f"SELECT {index} AS i, TO_JSON(NAMED_STRUCT('v', {form.value_sql})) AS j, "
              f"{error} AS e FROM {from_sql}")
    return select, program


def spark_value(program: Any, row: Any) -> Any:
    import json

    if row["e"] is not None:
        return ErrorValue(row["e"])
    data = json.loads(row["j"], parse_float=Decimal, parse_int=Decimal)
    value = data.get("v")
    return _from_json(value, program.type)


def _from_json(value: Any, t: Type) -> Any:
    if value is None:
        return None
    if t.kind == "Number":
        return Decimal(value)
    if t.kind == "Date":
        return dt.date.fromisoformat(value)
    if t.kind == "List":
        return [_from_json(v, t.elem) for v in value]  # type: ignore[arg-type]
    if t.kind == "Record":
        return {n: _from_json(value.get(n), ft) for n, ft in t.fields}
    return value


def test_spark_runs_the_sql_golden_cases(spark) -> None:
    """The golden operator and logic cases DuckDB runs, as Spark SQL on pyspark in local mode
    (one session for the module), one query per case
    (UNION ALL batches analyse slower in Spark than single queries run: SPARK_BATCH = 1; a
    batch that fails is re-run case by case, to name the case)."""
    started = time.monotonic()
    selects: list[tuple[int, str, Any]] = []
    refused = []
    for i, case in enumerate(CASES):
        if case.file not in SPARK_FILES or outcome(i, "duckdb-decimal")[0] != "pass":
            continue
        try:
            select, program = spark_select(case, i)
        except Unsupported as exc:
            refused.append(f"{case.id}: {exc.reason}")
            continue
        except NotApplicable:
            continue
        selects.append((i, select, program))
    problems = []
    ran = 0
    for start in range(0, len(selects), SPARK_BATCH):
        batch = selects[start:start + SPARK_BATCH]
        try:
            rows = spark.sql(" UNION ALL ".join(s for _, s, _ in batch)).collect()
            results = {r["i"]: r for r in rows}
        except Exception:
            results = {}
            for i, select, _ in batch:
                try:
                    results[i] = spark.sql(select).collect()[0]
                except Exception as exc:
                    problems.append(f"{CASES[i].id}: crashed: {type(exc).__name__}: "
                                    f"{str(exc)[:200]}")
        for i, _, program in batch:
            if i not in results:
                continue
            ran += 1
            problem = check(CASES[i], "spark", spark_value(program, results[i]))
            if problem:
                problems.append(f"{CASES[i].id}: {problem}")
    elapsed = time.monotonic() - started
    print(f"\nspark: {ran} golden cases ran, {len(refused)} refused, {len(problems)} failed, "
          f"{elapsed:.1f}s")
    assert ran >= 100, f"only {ran} cases ran on Spark"
    assert not problems, "\n".join(problems[:30])
    assert not refused, refused  # a case DuckDB runs should run on Spark too


def test_spark_runs_sql_select_over_a_table(spark) -> None:
    """`sql_select` rendered for Spark runs over a real Spark table."""
    rows = [(Decimal("9.99"), 3, "Ann"), (Decimal("0.50"), 0, "bob"), (Decimal("2.00"), 7, "")]
    frame = spark.createDataFrame(rows, "price DECIMAL(12, 2), qty INT, name STRING")
    frame.createOrReplaceTempView("orders")
    schema = {"price": "Number", "qty": "Number", "name": "Text"}
    query = formulane.sql_select("orders", {
        "total": "ROUND(price * qty, 2)" if formulane.default_registry().get("ROUND") and
        _has_sql("ROUND") else "price * qty",
        "unit": "price / qty",
        "label": 'IF(name = "ann", "vip", "std")',
    }, schema, dialect="spark")
    out = {r["name"]: r.asDict() for r in spark.sql(query).collect()}
    # (the SQL ROUND form's CASE joins its exact DECIMAL branch with a DOUBLE fallback for
    # magnitudes no DECIMAL holds, so engines type it DOUBLE: compared by its shortest text)
    assert Decimal(str(out["Ann"]["total"])) == Decimal("29.97")
    assert out["bob"]["unit__error"] == "#DIV/0!" and out["bob"]["unit"] is None
    assert abs(out["Ann"]["unit"] - 3.33) < 1e-9
    assert out["Ann"]["label"] == "vip" and out[""]["label"] == "std"


def _has_sql(name: str) -> bool:
    spec = formulane.default_registry().get(name)
    return spec is not None and callable(spec.sql)
