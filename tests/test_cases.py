"""Every golden case in tests/cases/*.yaml, on the scalar backend."""

import pytest

from case_runner import load_cases, run_scalar, verify

CASES = load_cases()


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 300, f"only {len(CASES)} golden cases"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_scalar(case) -> None:
    program, result = run_scalar(case)
    verify(case, program, result)
