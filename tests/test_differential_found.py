"""The differential test's findings, over tables of several rows.

tests/cases/differential_found.yaml holds what tests/test_differential.py found, as golden
cases: each runs on every backend as a one-row table (tests/test_backends.py). Some faults show
only when a value varies by row (polars folds a one-row frame's expressions differently), so
here the cases that share a formula, schema and profile run together as one table, one row
per case, on the differential's backends (polars float and decimal, DuckDB, SQLite, and
PostgreSQL when ``FORMULANE_TEST_POSTGRES_URL`` is set), through its runners and comparison
rules (`test_differential._close`), each row against its case's expected value. A backend
that refuses the formula (`Unsupported`) is skipped there; at least one must run it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

pytest.importorskip("polars")
pytest.importorskip("duckdb")
pytestmark = pytest.mark.slow  # real engines, as tests/test_differential.py

from formulane import ErrorValue, Unsupported  # noqa: E402

from case_runner import Case, expected_value, load_cases  # noqa: E402
from test_differential import FLOAT_TOL, Unholdable, _close, runners  # noqa: E402


def _groups() -> list[list[Case]]:
    by: dict[tuple[str, str, str], list[Case]] = defaultdict(list)
    for case in load_cases():
        if case.file == "differential_found.yaml" and not case.raises:
            by[case.expr, repr(sorted((case.schema or {}).items())), case.profile].append(case)
    return [cases for cases in by.values() if len(cases) > 1]


GROUPS = _groups()


def _schema(cases: list[Case]) -> dict[str, str]:
    from formulane.schema import infer_schema

    if cases[0].schema is not None:
        return dict(cases[0].schema)
    return {n: str(t) for n, t in infer_schema(cases[0].vars).items()}


def _expected(case: Case) -> Any:
    return ErrorValue(case.error) if case.error else expected_value(case)


@pytest.mark.parametrize("cases", GROUPS, ids=[g[0].expr for g in GROUPS])
def test_found_cases_agree_over_several_rows(cases: list[Case]) -> None:
    schema = _schema(cases)
    data = [dict(c.vars) for c in cases]
    source, profile = cases[0].expr, cases[0].profile
    backends = runners(source, schema, data, profile, FLOAT_TOL)
    ran = []
    for backend, run, tol, exact in backends:
        try:
            actual = run()
        except (Unsupported, Unholdable):
            continue
        ran.append(backend)
        for case, got in zip(cases, actual):
            want = _expected(case)
            assert _close(got, want, tol, exact), \
                f"{backend}: {source} with {case.vars}: got {got!r}, expected {want!r}"
    assert ran, f"no backend runs {source}"
