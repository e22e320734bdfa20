"""Resource bombs stop with a limit error, before they spend the time or the memory (issue 15,
items 3 and 4): cost priced by measurement including text and list sizes, the meter polled
inside function loops, and a memory budget counted before allocating. Cases:
cases/resource_bombs.yaml; the time and memory each takes are measured by
`python -m tests.security.report`, not asserted here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import formulane
from formulane import FormulaError, LimitExceeded

CASES = yaml.safe_load((Path(__file__).parent / "cases" / "resource_bombs.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_bomb_stops_with_a_limit(case: dict[str, Any]) -> None:
    if "stops" in case:
        with pytest.raises(FormulaError) as caught:
            formulane.evaluate(case["expr"], {})
        assert isinstance(caught.value, LimitExceeded) or caught.value.code == "E409", caught.value
        assert caught.value.code in case["stops"], caught.value
    else:
        assert formulane.evaluate(case["expr"], {}) == case["value"]


def test_memory_budget_is_a_limit() -> None:
    small = formulane.Limits(max_memory_bytes=1_000_000)
    with pytest.raises(LimitExceeded) as caught:
        formulane.evaluate('COUNTA(MAP(SEQUENCE(100), x => REPT("a", 20000)))', {}, limits=small)
    assert caught.value.code == "E413"
    assert formulane.evaluate('COUNTA(MAP(SEQUENCE(10), x => REPT("a", 20000)))', {}, limits=small) == 10


@pytest.mark.parametrize("field,value", [
    ("max_cost", float("nan")), ("max_cost", float("inf")), ("max_cost", 1.5), ("max_cost", -1),
    ("max_cost", True), ("deadline_ms", float("nan")), ("deadline_ms", float("inf")), ("deadline_ms", 0),
    ("max_memory_bytes", 0), ("max_text_length", float("nan")), ("max_list_length", "10"),
])
def test_limits_are_validated(field: str, value: Any) -> None:
    # issue 15 item 11: Limits(max_cost=nan) turned metering off
    with pytest.raises(ValueError):
        formulane.Limits(**{field: value})


@pytest.mark.parametrize("backend", ["to_sql", "to_polars"])
def test_backend_folding_is_metered(backend: str) -> None:
    # Found by the formula fuzz target (atheris, 2026-12-03): to_sql folded literal TEXT calls
    # with a 32,767-character format unmetered, over 10 s for three of them.
    program = formulane.compile('LEN(TEXT(1, REPT("0", 32767))) + LEN(TEXT(2, REPT("0", 32767)))', {})
    with pytest.raises(FormulaError) as caught:
        getattr(program, backend)()
    assert caught.value.code == "E213" and "exceed a limit" in str(caught.value)
