"""Conformance suites: facts from outside sources, each run on the scalar engine.

Every case in tests/conformance/*.yaml (format in README.md) is one pytest item named by its id.
The expected values were taken from the cited source (cel-spec, Power Fx OpMatrix files,
Microsoft's function pages), never from running this engine. A case marked `divergence:` states
where this language deliberately differs (see LANGUAGE.md) and expects our documented answer; a
case marked `bug:` expects the source's answer and is xfailed with strict=True, so it starts
failing the day the bug is fixed and someone must remove the mark (FINDINGS.md lists them).

`python tests/conformance/test_conformance.py` prints the per-suite counts.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

import formulane
from formulane import ErrorValue, FormulaError
from formulane.functions.dates import serial as _serial_spec

HERE = Path(__file__).parent
KEYS = {"id", "source", "profile", "formula", "vars", "schema", "expect", "type", "packs", "now",
        "divergence", "bug", "note", "cel", "cel_result", "match", "excel", "heldout",
        "tolerance"}
ERROR_CODES = {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#CALC!",
               "#ERROR!"}
_DURATION = re.compile(
    r"^(?P<sign>-)?P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>[\d.]+)S)?)?$")


def suite_of(path: Path) -> str:
    return path.stem.split("_")[0]


def load(skip_marks: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    cases = []
    for path in sorted(HERE.glob("*.yaml")):
        for i, raw in enumerate(yaml.safe_load(path.read_text(encoding="utf-8")) or []):
            where = f"{path.name} case {i}"
            if not isinstance(raw, dict):
                raise TypeError(f"{where}: a case is a mapping")
            unknown = set(raw) - KEYS
            missing = {"id", "source", "formula", "expect"} - set(raw)
            if unknown or missing:
                raise ValueError(f"{where} ({raw.get('id')}): unknown keys {sorted(unknown)}, "
                                 f"missing {sorted(missing)}")
            if raw.get("profile", "strict") not in ("strict", "excel"):
                raise ValueError(f"{where}: profile is strict or excel")
            if "bug" in raw and "divergence" in raw:
                raise ValueError(f"{where}: a case is a bug or a divergence, not both")
            cases.append({**raw, "suite": suite_of(path), "file": path.name})
    return _apply_marks(cases, skip_marks)


MARK_KEYS = {"bug", "divergence", "note", "expect"}
STALE_MARKS: list[str] = []


def _apply_marks(cases: list[dict[str, Any]], skip: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Generated suites (ironcalc) keep their marks beside them, so that regenerating a suite
    keeps them: marks/<suite>_divergence.yaml (written by hand: `divergence:` with our
    documented `expect`, or a `note:`) and marks/<suite>.yaml (`bug:` per failing case,
    rewritten by bench/conformance_report.py --mark); each maps a case id to the keys to add."""
    by_id = {c["id"]: c for c in cases}
    for path in sorted((HERE / "marks").glob("*.yaml")):
        if path.name in skip:
            continue
        for cid, keys in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            if cid not in by_id:
                STALE_MARKS.append(f"{path.name}: {cid}")  # test_no_stale_marks fails
                continue
            if not isinstance(keys, dict) or set(keys) - MARK_KEYS:
                raise ValueError(f"{path.name}: {cid}: marks are {sorted(MARK_KEYS)}")
            if "expect" in keys and "divergence" not in keys:
                raise ValueError(f"{path.name}: {cid}: only a divergence changes the expectation")
            case = by_id[cid]
            if "divergence" in keys:
                case.pop("bug", None)  # a decision replaces a generated bug mark
            if "expect" in keys:
                case["source_expect"] = case["expect"]
            case.update(keys)
            if "bug" in case and "divergence" in case:
                raise ValueError(f"{path.name}: {cid}: a case is a bug or a divergence, not both")
    return cases


def expected(value: Any) -> Any:
    """The YAML expectation in the form `Program.evaluate` returns."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, (dt.date, str)):
        return value
    if isinstance(value, list):
        return [expected(v) for v in value]
    if isinstance(value, dict) and len(value) == 1:
        (kind, raw), = value.items()
        if kind == "error":
            if raw not in ERROR_CODES:
                raise ValueError(f"unknown error value {raw!r}")
            return ErrorValue(raw)
        if kind == "number":
            return Decimal(str(raw))
        if kind == "date":
            return dt.date.fromisoformat(str(raw))
        if kind == "datetime":
            return dt.datetime.fromisoformat(str(raw))
        if kind == "duration":
            m = _DURATION.match(str(raw))
            if not m:
                raise ValueError(f"bad duration {raw!r}")
            span = dt.timedelta(days=int(m["d"] or 0), hours=int(m["h"] or 0),
                                minutes=int(m["m"] or 0), seconds=float(m["s"] or 0))
            return -span if m["sign"] else span
    raise ValueError(f"cannot read expectation {value!r}")


def same(actual: Any, want: Any) -> bool:
    """Exact equality: True is not 1, text is case-sensitive, errors compare by code."""
    if isinstance(want, ErrorValue):
        return isinstance(actual, ErrorValue) and actual.code == want.code
    if isinstance(want, bool) or isinstance(actual, bool):
        return type(actual) is type(want) and actual == want
    if isinstance(want, Decimal):
        return isinstance(actual, Decimal) and actual == want
    if isinstance(want, list):
        return isinstance(actual, list) and len(actual) == len(want) and all(
            same(a, w) for a, w in zip(actual, want))
    if want is None:
        return actual is None
    return type(actual) is type(want) and actual == want


def _excel_number(value: Any) -> Decimal | None:
    """What Excel holds for an answer: a number, or a date, time or duration as its serial."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Decimal):
        return value
    if isinstance(value, (dt.date, dt.timedelta)):
        return Decimal(str(_serial_spec.impl(value)))
    return None


def same_excel(actual: Any, want: Any, tolerance: Any = None) -> bool:
    """`match: excel`: numbers agree to 9 significant digits (Excel's cached values are binary
    doubles, this engine computes in decimals), a date, time or duration answer is its serial
    number (Excel's cell holds the number; its format only displays it), the rest as `same`."""
    if isinstance(want, Decimal):
        got = _excel_number(actual)
        if got is None:
            return False
        if tolerance is not None:  # an iterated answer Excel documents to an accuracy
            return abs(got - want) <= Decimal(str(tolerance))
        return abs(got - want) <= max(abs(want) * Decimal("1e-9"), Decimal("1e-15"))
    if isinstance(want, list):
        return isinstance(actual, list) and len(actual) == len(want) and all(
            same_excel(a, w) for a, w in zip(actual, want))
    return same(actual, want)


def run(case: dict[str, Any]) -> tuple[Any, Any]:
    """Compile and evaluate on the scalar backend: (program, value) or (None, FormulaError)."""
    variables = case.get("vars") or {}
    schema = case.get("schema")
    if schema is None:
        schema = formulane.schema.infer_schema(variables)
    registry = formulane.default_registry()
    if case.get("packs"):
        registry = registry.with_packs(*case["packs"])
    now = case.get("now")
    if isinstance(now, str):
        now = dt.datetime.fromisoformat(now)
    try:
        program = formulane.compile(str(case["formula"]), schema,
                                    profile=case.get("profile", "strict"), registry=registry)
        return program, program.evaluate(variables, now=now)
    except FormulaError as exc:
        return None, exc


def check(case: dict[str, Any]) -> None:
    program, result = run(case)
    want = case["expect"]
    shown = result.render(str(case["formula"])) if isinstance(result, FormulaError) else repr(result)
    if isinstance(want, dict) and "raises" in want:
        allowed = want["raises"] if isinstance(want["raises"], list) else [want["raises"]]
        assert isinstance(result, FormulaError) and result.code in allowed, \
            f"expected a {allowed} check error, got {shown}"
        return
    assert not isinstance(result, FormulaError), f"unexpected FormulaError:\n{shown}"
    if "type" in case:
        assert str(program.type) == case["type"], f"type {program.type}, expected {case['type']}"
    value = expected(want)
    if case.get("match") == "excel":
        agree = same_excel(result, value, case.get("tolerance"))
    else:
        agree = same(result, value)
    assert agree, f"got {shown}, expected {value!r}"


CASES = load()


def _param(case: dict[str, Any]) -> Any:
    marks = []
    if case.get("bug"):
        marks.append(pytest.mark.xfail(strict=True, reason=f"bug: {case['bug']}"))
    return pytest.param(case, id=case["id"], marks=marks)


def test_ids_are_unique_and_sourced() -> None:
    ids = Counter(c["id"] for c in CASES)
    assert not [i for i, n in ids.items() if n > 1], "duplicate case ids"
    assert all(str(c["source"]).strip() for c in CASES)
    for c in CASES:
        assert not c["id"].startswith(("cel.", "opmatrix.", "excel.")) or \
            c["id"].split(".")[0] == c["suite"], f"{c['id']} sits in the {c['suite']} suite"


def test_no_stale_marks() -> None:
    """Every mark in marks/*.yaml names a case (regenerate the marks after regenerating a
    suite: python bench/conformance_report.py --mark)."""
    assert not STALE_MARKS, STALE_MARKS[:10]


def test_cel_cases_follow_their_source() -> None:
    """A CEL case without a divergence expects what cel-spec expects: the same value, or an error
    for an error. (Cases written `lhs == rhs` in CEL expect the literal rhs; their note says so.)"""
    checked = 0
    for c in CASES:
        if c["suite"] != "cel" or "divergence" in c:
            continue
        source = c["cel_result"]
        want = c["expect"]
        if "error" in source:
            assert isinstance(want, dict) and ({"error", "raises"} & set(want)), c["id"]
        elif "CEL asserts `lhs == rhs`" not in str(c.get("note", "")):
            assert same(expected(want), expected(source["value"])), c["id"]
        checked += 1
    assert checked >= 300, checked


def test_suite_sizes() -> None:
    sizes = Counter(c["suite"] for c in CASES)
    assert sizes["cel"] >= 150 and sizes["excel"] >= 250 and sizes["opmatrix"] >= 100, sizes


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    check(case)


def summary() -> str:
    rows = ["suite      cases  pass  divergence  bug  failing"]
    for suite in sorted({c["suite"] for c in CASES}):
        mine = [c for c in CASES if c["suite"] == suite]
        counts: Counter[str] = Counter()
        for c in mine:
            try:
                check(c)
                ok = True
            except AssertionError:
                ok = False
            if c.get("bug"):
                counts["bug"] += 1
                counts["failing"] += ok  # a bug case that passes: the bug is fixed, drop the mark
            elif not ok:
                counts["failing"] += 1
            elif c.get("divergence"):
                counts["divergence"] += 1
            else:
                counts["pass"] += 1
        rows.append(f"{suite:10} {len(mine):5} {counts['pass']:5} {counts['divergence']:11} "
                    f"{counts['bug']:4} {counts['failing']:8}")
    return "\n".join(rows)


if __name__ == "__main__":
    print(summary())
