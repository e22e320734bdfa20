"""Regenerate the figures in docs/security.md: `python -m tests.security.report [--fuzz-seconds N]`.

Three measurements, written between the figure markers of docs/security.md:
1. the security suite (pytest over tests/security, JUnit XML): cases per family, passed;
2. every formula case of the case files, compiled and evaluated once more outside pytest: the
   slowest time and the largest traced allocation peak, against the 100 ms / 50 MB target;
3. fuzzing: atheris (coverage-guided, when installed) for `--fuzz-seconds` per target, else
   the deterministic mutator; executions and failures per target.
Times depend on the machine; the run records its date, Python and CPU count beside them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import tracemalloc
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
DOC = ROOT / "docs" / "security.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"
TARGET_MS, TARGET_MB = 100.0, 50.0


def suite() -> list[tuple[str, int, int, int]]:
    """(family file, cases, passed, skipped) from one pytest run of tests/security."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "junit.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE),
                        f"--junitxml={xml}"], cwd=ROOT, check=False, capture_output=True)
        tree = ET.parse(xml)
    rows: dict[str, list[int]] = {}
    for case in tree.iter("testcase"):
        family = case.get("classname", "").rsplit(".", 1)[-1]
        row = rows.setdefault(family, [0, 0, 0])
        row[0] += 1
        if case.find("skipped") is not None:
            row[2] += 1
        elif case.find("failure") is None and case.find("error") is None:
            row[1] += 1
    return [(name, *row) for name, row in sorted(rows.items())]  # type: ignore[misc]


def formula_cases() -> list[dict[str, Any]]:
    from .test_formula_inputs import value_of

    out = []
    for path in sorted((HERE / "cases").glob("*.yaml")):
        for case in yaml.safe_load(path.read_text()) or []:
            if isinstance(case, dict) and isinstance(case.get("expr"), str):
                out.append({**case, "file": path.stem,
                            "vars": {k: value_of(v) for k, v in (case.get("vars") or {}).items()}})
    return out


def measure() -> tuple[int, int, tuple[float, str], tuple[float, str]]:
    """Cases, cases inside the target, slowest (ms, id), largest peak (MB, id)."""
    import formulane

    slowest, largest, inside, cases = (0.0, ""), (0.0, ""), 0, formula_cases()
    formulane.evaluate("SUM(MAP(SEQUENCE(3), x => x))", {})  # warm: grammar, registry, imports
    outside = []
    for case in cases:
        kwargs = {"now": case["now"]} if "now" in case else {}

        def once() -> None:
            try:
                formulane.evaluate(case["expr"], case["vars"], **kwargs)
            except formulane.FormulaError:
                pass

        t0 = time.perf_counter()  # time without tracing (tracemalloc slows Python code down)
        once()
        ms = (time.perf_counter() - t0) * 1000
        tracemalloc.start()
        once()
        mb = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        label = f"{case['file']}:{case['id']}"
        slowest = max(slowest, (ms, label))
        largest = max(largest, (mb, label))
        inside += ms <= TARGET_MS and mb <= TARGET_MB
        if ms > TARGET_MS or mb > TARGET_MB:
            outside.append(f"{label} {ms:.0f} ms {mb:.1f} MB")
    if outside:
        print("outside the target:", *outside, sep="\n  ", file=sys.stderr)
    return len(cases), inside, slowest, largest


def fuzz(seconds: int) -> list[tuple[str, str, int, str]]:
    """(target, driver, executions, outcome) per target."""
    from .fuzz import TARGETS, mutation_run

    rows = []
    try:
        import atheris  # noqa: F401
    except ImportError:
        atheris_ok = False
    else:
        atheris_ok = True
    for name in TARGETS:
        if atheris_ok:
            # The working directory keeps the corpus, libFuzzer's crash/timeout files and the log.
            work = ROOT / "bench" / "out" / f"fuzz-{name}"
            work.mkdir(parents=True, exist_ok=True)
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
            done = subprocess.run([sys.executable, "-m", "tests.security.fuzz", name,
                                   f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048",
                                   f"-artifact_prefix={work}/"],
                                  cwd=work, env=env, capture_output=True, text=True, check=False)
            log = done.stderr + done.stdout
            (work / "fuzz.log").write_text(log)
            runs = re.findall(r"Done (\d+) runs", log)
            last = re.findall(r"#(\d+)\s", log)
            executions = int(runs[-1]) if runs else int(last[-1]) if last else 0
            outcome = "no failure" if done.returncode == 0 else (
                "TIMEOUT (an input ran over 10 s)" if "ALARM" in log or "timeout" in log.lower()
                else f"FAILED (exit {done.returncode})")
            cov = re.findall(r"cov: (\d+)", log)
            driver = f"atheris, {seconds} s" + (f", {cov[-1]} coverage edges" if cov else "")
            rows.append((name, driver, executions, outcome))
        else:
            stats = mutation_run(name, 2_000)
            rows.append((name, "mutator", stats.executions,
                         "no failure" if not stats.failures else f"{len(stats.failures)} failures"))
    return rows


def render(families: list[tuple[str, int, int, int]], measured: tuple[int, int, Any, Any],
           fuzzed: list[tuple[str, str, int, str]]) -> str:
    lines = [START, "",
             f"Generated by `python -m tests.security.report` on {dt.date.today().isoformat()} "
             f"(Python {platform.python_version()}, {os.cpu_count()} CPUs, shared).", "",
             "| family (tests/security/…) | cases | passed | skipped |", "|---|---:|---:|---:|"]
    total = [0, 0, 0]
    for name, cases, passed, skipped in families:
        lines.append(f"| {name} | {cases} | {passed} | {skipped} |")
        total = [total[0] + cases, total[1] + passed, total[2] + skipped]
    lines.append(f"| **all** | **{total[0]}** | **{total[1]}** | **{total[2]}** |")
    cases, inside, slowest, largest = measured
    lines += ["", f"Formula cases from the case files, evaluated once more outside pytest: **{inside} of "
              f"{cases}** inside {TARGET_MS:g} ms and {TARGET_MB:g} MB (compile + evaluate, time untraced, "
              f"memory as tracemalloc's peak); slowest {slowest[0]:.1f} ms "
              f"(`{slowest[1]}`), largest traced peak {largest[0]:.1f} MB (`{largest[1]}`).", "",
              "| fuzz target | driver | executions | outcome |", "|---|---|---:|---|"]
    for name, driver, executions, outcome in fuzzed:
        lines.append(f"| {name} | {driver} | {executions:,} | {outcome} |")
    lines += ["", END]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.security.report")
    parser.add_argument("--fuzz-seconds", type=int, default=300, help="atheris time per target")
    args = parser.parse_args(argv)
    block = render(suite(), measure(), fuzz(args.fuzz_seconds))
    text = DOC.read_text()
    if START in text and END in text:
        text = text[: text.index(START)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    DOC.write_text(text)
    print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
