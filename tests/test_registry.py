"""The registry is complete and honest: every function is documented, has examples that run
and hold, declares a cost, and the generated references are up to date."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import formulane
from formulane import ErrorValue, FormulaError
from formulane.functions.registry import default_registry
from formulane.reference import _all_packs, errors_markdown, functions_markdown, prompt

REGISTRY = _all_packs(default_registry())
SPECS = sorted(REGISTRY, key=lambda s: s.name)
EXAMPLES = [(spec, ex) for spec in SPECS for ex in spec.examples]
DOC = Path(__file__).parent.parent / "docs" / "functions.md"
ERRORS_DOC = Path(__file__).parent.parent / "docs" / "errors.md"


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_spec_is_complete(spec) -> None:
    assert spec.doc and spec.doc[0].isupper(), f"{spec.name}: doc must be a sentence"
    assert len(spec.examples) >= 2, f"{spec.name}: at least two examples"
    assert spec.signatures, f"{spec.name}: no signature"
    assert spec.cost.base >= 0 and spec.cost.per_item >= 0
    assert spec.impl is not None


def _same(actual, expected) -> bool:
    if isinstance(expected, ErrorValue):
        return isinstance(actual, ErrorValue) and actual.code == expected.code
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    return actual == expected and type(actual) is type(expected)


@pytest.mark.parametrize("spec,example", EXAMPLES,
                         ids=[f"{s.name}:{e.expr[:40]}" for s, e in EXAMPLES])
def test_example_holds(spec, example) -> None:
    import datetime as dt

    now = dt.datetime(2024, 3, 1, 12, 0, tzinfo=dt.timezone.utc)
    variables = dict(example.variables)
    try:
        actual = formulane.evaluate(example.expr, variables, registry=REGISTRY, now=now)
    except FormulaError as exc:
        if example.result.startswith("E") and example.result[1:].isdigit():
            assert exc.code == example.result
            return
        raise AssertionError(f"{example.expr} raised {exc.render(example.expr)}") from None
    if example.result.startswith("#"):
        assert isinstance(actual, ErrorValue), f"{example.expr} gave {actual!r}"
        assert actual.code == example.result
        return
    expected = formulane.evaluate(example.result, registry=REGISTRY, now=now)
    assert _same(actual, expected), f"{example.expr} gave {actual!r}, expected {expected!r}"


def test_functions_doc_is_current() -> None:
    text = functions_markdown()
    if os.environ.get("FORMULANE_UPDATE_DOCS"):
        DOC.write_text(text, encoding="utf-8")
    assert DOC.exists(), "run with FORMULANE_UPDATE_DOCS=1 to generate docs/functions.md"
    assert DOC.read_text(encoding="utf-8") == text, \
        "docs/functions.md is stale: regenerate with FORMULANE_UPDATE_DOCS=1 pytest tests/test_registry.py"


def test_prompt_is_bounded_and_names_the_schema() -> None:
    text = prompt({"price": "Number", "note": "Text?"}, max_tokens=1500)
    assert len(text) <= 1500 * 4
    assert "price: Number" in text and "note: Text? (may be blank)" in text
    assert "IF(" in text
    full = prompt(max_tokens=100_000)
    assert all(spec.name in full for spec in default_registry().functions())


def test_errors_doc_is_current() -> None:
    text = errors_markdown()
    if os.environ.get("FORMULANE_UPDATE_DOCS"):
        ERRORS_DOC.write_text(text, encoding="utf-8")
    assert ERRORS_DOC.read_text(encoding="utf-8") == text, \
        "docs/errors.md is stale: regenerate with FORMULANE_UPDATE_DOCS=1"
