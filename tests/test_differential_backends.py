"""No foreign exception on any backend: every golden case and function example, on every
backend, in four layouts.

Each golden case (tests/cases/*.yaml) and function example runs on the scalar engine, polars
(float and decimal mode) and DuckDB SQL (DECIMAL and DOUBLE columns), through the runners of
tests/backend_runner.py:

- ``golden``: the case as written (its variables as a one-row table);
- ``blank``: the same formula with every variable blank and its schema made nullable, so
  untyped null literals and null-only columns meet every form;
- ``nullable``: the case's own values with its schema made nullable (the nullable paths);
- ``example``: every function's documented examples (``ISBLANK(BLANK()) -> TRUE``), each a
  case of its own.

A backend may answer with a value or an error value, refuse the formula when compiling
(`formulane.Unsupported`) or raise another `FormulaError` (a typed refusal: the blank twin of a
case may not type-check). Anything else it raises is a *foreign exception* (a polars
``ComputeError``/``InvalidOperationError``/``SchemaError``, a DuckDB ``ConversionException``/
``OutOfRangeException``, a Python ``TypeError``...) and fails the case: an error of one row must
be that row's error value, never an aborted query. Whether the values agree is
tests/test_backends.py's job (golden layout, same cached attempts).

``python -m pytest tests/test_differential_backends.py -s`` prints the counts
(`test_sweep_summary`).
"""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("polars")
pytest.importorskip("duckdb")

from backend_runner import BACKENDS, CASES, LAYOUTS, attempt, case_for, cases_of  # noqa: E402

PARAMS = [(i, layout) for layout in LAYOUTS for i in range(len(cases_of(layout)))]


def _foreign(index: int, layout: str) -> list[str]:
    return [f"{backend}: {tried.detail}" for backend in BACKENDS
            if (tried := attempt(index, backend, layout)).kind == "foreign"]


@pytest.mark.parametrize("index,layout", PARAMS,
                         ids=[f"{layout}:{cases_of(layout)[i].id}" for i, layout in PARAMS])
def test_no_foreign_exception(index: int, layout: str) -> None:
    foreign = _foreign(index, layout)
    case = case_for(index, layout)
    assert not foreign, f"{case.expr if case else '?'} ({layout}):\n" + "\n".join(foreign)


def test_sweep_summary() -> None:
    """Counts per layout and backend (printed with ``-s``); the sweep must really run: most
    golden cases reach a value on every backend, and none is foreign."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for layout in LAYOUTS:
        for backend in BACKENDS:
            counts[layout, backend] = Counter(
                attempt(i, backend, layout).kind for i in range(len(cases_of(layout))))
    lines = [f"{len(CASES)} golden cases (layouts golden, blank, nullable) and "
             f"{len(cases_of('example'))} function examples x {len(BACKENDS)} backends"]
    for (layout, backend), c in counts.items():
        lines.append(f"  {layout:6} {backend:15} value {c['value']:5}  refused {c['refused']:4}  "
                     f"typed {c['typed']:4}  n/a {c['n/a']:4}  foreign {c['foreign']:3}")
    print("\n" + "\n".join(lines))
    assert sum(c["foreign"] for c in counts.values()) == 0, "\n".join(lines)
    for backend in BACKENDS:
        ran = counts["golden", backend]["value"]
        assert ran >= len(CASES) // 2, f"{backend}: only {ran} golden cases reached a value"
