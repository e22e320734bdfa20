"""The public surface is typed (issue 16, item 4): mypy --strict and pyright on the package.

Both checkers run as subprocesses from the project root over ``src/formulane`` and
``examples``, so they read the one configuration in ``pyproject.toml`` ([tool.mypy]: strict,
the pydantic plugin; [tool.pyright]: standard mode). Both are in the ``test`` extra; a missing
checker is a failure, not a skip, so CI cannot go green without having checked.

The package is being cleaned file by file (issue 16 item 4 is shared between helpers), so
``typing_debt.txt`` lists, per checker and file, how many errors that file still has. A file
with more errors than its entry, or with errors and no entry, fails (with the checker's lines
for it); a file with fewer fails too, asking for its entry to be lowered: the list only
shrinks, as ``test_layering.DEBT`` does, and the goal is an empty file. After fixing,
``python tests/test_typing.py --update`` rewrites the list from a fresh run.

Slow (about two minutes per checker on a small machine): listed in ``conftest.SLOW_PATHS``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEBT_FILE = Path(__file__).resolve().parent / "typing_debt.txt"
TARGETS = ("src/formulane", "examples")

#: checker -> command (run from ROOT); both resolve ``formulane`` from ``src/``
COMMANDS: dict[str, list[str]] = {
    "mypy": [sys.executable, "-m", "mypy", "--strict", *TARGETS],
    "pyright": [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, *TARGETS],
}
#: an error line of either checker: the path (group 1)
_ERROR = {
    "mypy": re.compile(r"^(\S+?\.py):\d+: error: "),
    "pyright": re.compile(r"^\s*(\S+?\.py):\d+:\d+ - error: "),
}


def run_checker(checker: str) -> tuple[Counter[str], dict[str, list[str]], str]:
    """Errors per file (paths relative to the project root), their lines, and the raw output."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(COMMANDS[checker], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800, check=False)
    report = done.stdout + done.stderr
    counts: Counter[str] = Counter()
    lines: dict[str, list[str]] = {}
    for line in report.splitlines():
        m = _ERROR[checker].match(line)
        if m:
            path = Path(m.group(1))
            rel = (path.relative_to(ROOT) if path.is_absolute() else path).as_posix()
            counts[rel] += 1
            lines.setdefault(rel, []).append(line.strip())
    return counts, lines, report


def read_debt() -> dict[str, Counter[str]]:
    debt: dict[str, Counter[str]] = {name: Counter() for name in COMMANDS}
    for raw in DEBT_FILE.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            checker, path, count = line.split()
            debt[checker][path] = int(count)
    return debt


@pytest.mark.parametrize("checker", sorted(COMMANDS))
def test_checker_is_clean_beyond_the_listed_debt(checker: str) -> None:
    try:
        __import__(checker)
    except ImportError:
        pytest.fail(f"{checker} is not installed (it is in the `test` extra)")
    counts, lines, report = run_checker(checker)
    if not counts:  # no error line: the checker itself must have succeeded
        # mypy says "Success: no issues found"; pyright's summary line starts "0 errors, ..."
        clean = "error" not in report.lower() or re.search(r"(^|\s)0 errors\b", report)
        assert clean, report[-3000:]
    allowed = read_debt()[checker]
    worse = {f: n for f, n in counts.items() if n > allowed.get(f, 0)}
    better = {f: (allowed[f], counts.get(f, 0)) for f in allowed if counts.get(f, 0) < allowed[f]}
    messages = []
    for f, n in sorted(worse.items()):
        messages.append(f"{f}: {n} {checker} error(s), {allowed.get(f, 0)} allowed")
        messages.extend("    " + line for line in lines[f][:40])
    for f, (was, now) in sorted(better.items()):
        messages.append(f"{f}: {now} error(s), the list allows {was}: lower its entry in "
                        "tests/typing_debt.txt (or run python tests/test_typing.py --update)")
    assert not messages, "\n".join(messages)


CASES = Path(__file__).resolve().parent / "typing_cases"
#: checker -> a line of its output with an error: (file name, line number)
_ERROR_LINE = {
    "mypy": re.compile(r"^(?:\S*/)?(\w+\.py):(\d+): error: "),
    "pyright": re.compile(r"^\s*(?:\S*/)?(\w+\.py):(\d+):\d+ - error: "),
}


@pytest.mark.parametrize("checker", sorted(COMMANDS))
def test_program_result_types(checker: str) -> None:
    """`Program` is generic in its result (`typing_cases/program_returns.py`: every
    ``assert_type`` holds, no error) and a wrong use is an error on exactly the lines marked
    ``# expect-error`` in `program_returns_errors.py`, under both checkers."""
    files = sorted(CASES.glob("program_returns*.py"))
    command = COMMANDS[checker][:-len(TARGETS)] + [str(f) for f in files]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1800, check=False)
    report = done.stdout + done.stderr
    found = set()
    for line in report.splitlines():
        m = _ERROR_LINE[checker].match(line)
        if m:
            found.add((m.group(1), int(m.group(2))))
    expected = {(f.name, n) for f in files
                for n, text in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
                if text.rstrip().endswith("# expect-error")}
    assert expected, "the error cases file lost its markers"
    assert found == expected, (f"missing errors: {sorted(expected - found)}; unexpected: "
                               f"{sorted(found - expected)}\n{report[-3000:]}")


def _update() -> None:
    out = ["# Errors each file still has under each checker (tests/test_typing.py); only shrinks.",
           "# checker  path  count"]
    for checker in sorted(COMMANDS):
        counts, _, _ = run_checker(checker)
        out += [f"{checker} {path} {n}" for path, n in sorted(counts.items())]
    DEBT_FILE.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"wrote {DEBT_FILE.name}: {len(out) - 2} entries")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        _update()
    else:
        sys.exit("usage: python tests/test_typing.py --update")
