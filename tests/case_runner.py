"""Loads the golden cases in tests/cases/*.yaml and checks one case on one backend.

The format is documented in tests/cases/README.md. Expected values are compared exactly:
numbers as Decimal, text case-sensitively, lists element by element, error values by code.
Backends are named; a backend that refuses a case at compile time reports it as refused (a
list kept by the runner), never skipped in silence.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

import formulane
from formulane import ErrorValue, FormulaError

CASES_DIR = Path(__file__).parent / "cases"


@dataclass
class Case:
    file: str
    index: int
    expr: str
    vars: dict[str, Any] = field(default_factory=dict)
    schema: dict[str, str] | None = None
    profile: str = "strict"
    value: Any = None
    has_value: bool = False
    error: str | None = None
    raises: str | list[str] | None = None
    type: str | None = None
    now: dt.datetime | None = None
    note: str = ""
    packs: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.file}:{self.index}:{self.expr[:40]}"


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
        for i, raw in enumerate(data):
            if not isinstance(raw, dict) or "expr" not in raw:
                raise ValueError(f"{path.name} case {i}: each case needs an 'expr'")
            now = raw.get("now")
            if isinstance(now, str):
                now = dt.datetime.fromisoformat(now)
            elif isinstance(now, dt.datetime) and now.tzinfo is None:
                now = now.replace(tzinfo=dt.timezone.utc)
            cases.append(Case(
                file=path.name, index=i, expr=str(raw["expr"]), vars=raw.get("vars") or {},
                schema=raw.get("schema"), profile=raw.get("profile", "strict"),
                value=raw.get("value"), has_value="value" in raw, error=raw.get("error"),
                raises=raw.get("raises"), type=raw.get("type"), now=now,
                note=str(raw.get("note", "")), packs=tuple(raw.get("packs") or ()),
            ))
    return cases


_DURATION = re.compile(
    r"^(?P<sign>-)?P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>[\d.]+)S)?)?$")


def expected_value(case: Case) -> Any:
    """The case's expected value in the form `Program.evaluate` returns."""
    return _convert(case.value, case.type)


def _convert(value: Any, type_name: str | None) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    if isinstance(value, str):
        if type_name == "Number":
            return Decimal(value)
        if type_name == "DateTime":
            return dt.datetime.fromisoformat(value)
        if type_name == "Date":
            return dt.date.fromisoformat(value)
        if type_name == "Duration":
            m = _DURATION.match(value)
            if not m:
                raise ValueError(f"bad duration {value!r}")
            span = dt.timedelta(days=int(m["d"] or 0), hours=int(m["h"] or 0),
                                minutes=int(m["m"] or 0), seconds=float(m["s"] or 0))
            return -span if m["sign"] else span
        return value
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.date):
        return value
    if isinstance(value, list):
        inner = None
        if type_name and type_name.startswith("List[") and type_name.endswith("]"):
            inner = type_name[5:-1].rstrip("?")
        return [_convert(v, inner) for v in value]
    if isinstance(value, dict):
        return {k: _convert(v, None) for k, v in value.items()}
    return value


def same(actual: Any, expected: Any) -> bool:
    """Exact equality: types must agree (True is not 1), text case-sensitive."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, Decimal):
        return isinstance(actual, Decimal) and actual == expected
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            same(a, e) for a, e in zip(actual, expected))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and actual.keys() == expected.keys() and all(
            same(actual[k], expected[k]) for k in expected)
    if expected is None:
        return actual is None
    return type(actual) is type(expected) and actual == expected


def schema_and_registry(case: Case) -> tuple[Any, Any]:
    """The case's schema (inferred from its variables unless written) and registry (with its
    packs)."""
    schema = case.schema
    if schema is None:
        schema = formulane.schema.infer_schema(case.vars)
    registry = formulane.default_registry()
    if case.packs:
        registry = registry.with_packs(*case.packs)
    return schema, registry


def compile_case(case: Case) -> Any:
    """The case's program (raises the FormulaError compiling it raises)."""
    schema, registry = schema_and_registry(case)
    return formulane.compile(case.expr, schema, profile=case.profile, registry=registry)


@functools.lru_cache(maxsize=1)
def compiled_cases() -> tuple[Any, ...]:
    """The program of every case that compiles (cases expected to raise left out)."""
    programs = []
    for case in load_cases():
        if case.raises:
            continue
        try:
            programs.append(compile_case(case))
        except FormulaError:
            continue
    return tuple(programs)


def run_scalar(case: Case) -> Any:
    """Compile and evaluate on the scalar backend: the value, or the FormulaError raised."""
    try:
        program = compile_case(case)
        return program, program.evaluate(case.vars, now=case.now)
    except FormulaError as exc:
        return None, exc


def verify(case: Case, program: Any, result: Any) -> None:
    """Assert that one backend's outcome matches the case."""
    if case.raises:
        # A list names equally acceptable codes: the cost budget (E405) and the deadline
        # (E408) race on a busy machine, and either is the clean refusal asked for.
        allowed = case.raises if isinstance(case.raises, list) else [case.raises]
        assert isinstance(result, FormulaError), f"expected {case.raises}, got {result!r}"
        assert result.code in allowed, f"expected {case.raises}, got {result.code}: " \
                                       f"{result.render(case.expr)}"
        return
    if isinstance(result, FormulaError):
        raise AssertionError(f"unexpected error:\n{result.render(case.expr)}")
    if case.type is not None and program is not None:
        assert str(program.type) == case.type, f"type {program.type}, expected {case.type}"
    if case.error:
        assert isinstance(result, ErrorValue), f"expected {case.error}, got {result!r}"
        assert result.code == case.error, f"expected {case.error}, got {result.code}"
        return
    assert case.has_value, "a case needs value, error or raises"
    expected = expected_value(case)
    assert same(result, expected), f"got {result!r}, expected {expected!r}"
