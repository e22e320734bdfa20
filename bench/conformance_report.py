"""Regenerate bench/CONFORMANCE.md: pass rates of the conformance suites, by source and slice.

    python bench/conformance_report.py              # rewrite bench/CONFORMANCE.md (after section)
    python bench/conformance_report.py --failures   # list the failing development-slice cases

Every case of tests/conformance/*.yaml runs on the scalar engine as the pytest runner runs it
(`test_conformance.check`). A case passes when the engine gives the source's answer; a case
marked `divergence:` (our documented answer differs from the source) or `bug:` (known, xfailed)
counts as a failure here, and so does any exception that is not a FormulaError (a crash). The
`ironcalc` suite's held-out slice (`heldout: true`) is reported separately: it was generated
with the rest and never looked at while the engine was being fixed. `--failures` never prints a
held-out case.
"""

from __future__ import annotations

import sys
import traceback
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "conformance"))

import test_conformance as tc  # noqa: E402

from formulane import ErrorValue, FormulaError  # noqa: E402


def classify(case: dict[str, Any]) -> str:
    """'pass', or the kind of failure."""
    try:
        tc.check(case)
    except AssertionError:
        _, result = tc.run(case)
        want = case["expect"]
        if isinstance(result, FormulaError):
            return f"check or run error {result.code}"
        if isinstance(want, dict) and "error" in want:
            return "wrong error" if isinstance(result, ErrorValue) else "value where Excel errs"
        if isinstance(result, ErrorValue):
            return f"error {result.code} where Excel has a value"
        return "wrong value"
    except Exception:  # a crash: the figure must show it
        return "crash"
    if case.get("divergence"):
        return "documented divergence"
    return "pass"


def group_of(case: dict[str, Any]) -> str:
    return str(case["file"]).removesuffix(".yaml")


def measure() -> dict[str, dict[str, Counter[str]]]:
    table: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for case in tc.CASES:
        outcome = classify(case)
        if case.get("bug") and outcome == "pass":
            outcome = "pass"  # the bug is fixed; the xfail turns red and the mark must go
        slice_ = "held-out" if case.get("heldout") else "development"
        table[case["suite"]][f"{group_of(case)}|{slice_}"][outcome] += 1
    return table


def rate(c: Counter[str]) -> str:
    n = sum(c.values())
    return f"{c['pass']}/{n} ({100 * c['pass'] / n:.1f}%)" if n else "-"


def report() -> str:
    table = measure()
    lines = ["| suite | slice | cases | pass | failures by kind |", "|---|---|---|---|---|"]
    for suite in sorted(table):
        per_slice: dict[str, Counter[str]] = defaultdict(Counter)
        for key, c in table[suite].items():
            per_slice[key.split("|")[1]].update(c)
        for slice_, c in sorted(per_slice.items()):
            kinds = ", ".join(f"{k} {n}" for k, n in c.most_common() if k != "pass") or "none"
            lines.append(f"| {suite} | {slice_} | {sum(c.values())} | {rate(c)} | {kinds} |")
    lines += ["", "By file (ironcalc):", "", "| file | development | held-out |", "|---|---|---|"]
    files = sorted({k.split("|")[0] for k in table.get("ironcalc", {})})
    for f in files:
        dev = table["ironcalc"].get(f"{f}|development", Counter())
        held = table["ironcalc"].get(f"{f}|held-out", Counter())
        lines.append(f"| {f} | {rate(dev)} | {rate(held)} |")
    return "\n".join(lines)


def failures() -> None:
    for case in tc.CASES:
        if case.get("heldout"):
            continue
        outcome = classify(case)
        if outcome in ("pass",):
            continue
        try:
            _, result = tc.run(case)
            shown = result.code if isinstance(result, FormulaError) else repr(result)
        except Exception:
            shown = traceback.format_exc().splitlines()[-1]
        print(f"{case['id']}\t{outcome}\t{case['formula']}\twant={case['expect']!r}\tgot={shown}")


def remark(suite: str = "ironcalc") -> None:
    """Rewrite marks/<suite>.yaml: a `bug:` for every failing case (the kind of failure and the
    engine's answer; an existing bug text is kept), none for a passing one. Cases with a
    `divergence:` (marks/<suite>_divergence.yaml, written by hand) are left alone."""
    import yaml

    path = ROOT / "tests" / "conformance" / "marks" / f"{suite}.yaml"
    old = (yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None) or {}
    marks: dict[str, dict[str, Any]] = {}
    for case in tc.load(skip_marks=(path.name,)):
        if case["suite"] != suite or "divergence" in case:
            continue
        bare = case
        outcome = classify(bare)
        if outcome == "pass":
            continue
        _, result = tc.run(bare)
        got = result.code if isinstance(result, FormulaError) else (
            result.code if isinstance(result, ErrorValue) else repr(result))
        marks[case["id"]] = {"bug": old.get(case["id"], {}).get("bug") or f"{outcome}: {got}"[:160]}
    head = (f"# Known failures of the {suite} suite (xfailed strictly by test_conformance.py);\n"
            "# rewritten by `python bench/conformance_report.py --mark`, divergences kept.\n")
    path.write_text(head + yaml.safe_dump(marks, sort_keys=True, allow_unicode=True, width=100),
                    encoding="utf-8")
    print(f"{len(marks)} marks in {path.name}")


if __name__ == "__main__":
    if "--mark" in sys.argv:
        remark()
    elif "--failures" in sys.argv:
        failures()
    else:
        print(report())
