"""The registry is complete and honest: every function is documented, has examples that run
and hold, declares a cost and its category, decides on a polars and a SQL form for every
overload (a form in the tables of `columnar.forms` or a `Refuse` with its reason), and the
generated references are up to date."""

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


BACKENDS = ("polars", "sql")


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_every_overload_has_a_polars_and_a_sql_decision(spec) -> None:
    """A form (in the backend's table, or a host function's own) or a typed refusal, for each
    backend and each overload; a refusal says why. A declaration that a table entry would
    shadow, or a table entry a declaration shadows, is dead: it fails too."""
    from formulane.columnar.forms import declared_form, overload_key, table
    from formulane.functions.spec import UNDECIDED, Refuse

    for backend in BACKENDS:
        forms = table(backend)
        declared = getattr(spec, backend)
        assert declared is UNDECIDED or isinstance(declared, Refuse), \
            f"{spec.name}: its {backend} form belongs in the {backend} table, not the declaration"
        assert not (isinstance(declared, Refuse) and spec.name in forms), \
            f"{spec.name}: refused on {backend} and in the {backend} table"
        for sig in spec.signatures:
            own = getattr(sig, backend)
            assert own is None or isinstance(own, Refuse), (spec.name, backend, sig)
            assert not (isinstance(own, Refuse) and overload_key(spec.name, sig) in forms), \
                f"{overload_key(spec.name, sig)}: refused on {backend} and in the table"
            decision = declared_form(spec, backend, sig)
            assert isinstance(decision, Refuse) or callable(decision), \
                f"{sig.describe(spec.name)}: no {backend} decision (a table entry or a Refuse)"
            if isinstance(decision, Refuse):
                assert len(decision.reason) > 10, f"{spec.name}: a refusal says why"


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_table_entry_names_a_declared_function_and_resolves(backend) -> None:
    """Each key is a declared function (or one of its overloads, ``"NAME(Type, ...)"``), and
    each entry names a function of its family module."""
    from formulane.columnar.forms import overload_key, table

    keys = {spec.name for spec in SPECS}
    keys |= {overload_key(spec.name, sig) for spec in SPECS for sig in spec.signatures}
    forms = table(backend)
    assert forms, backend
    unknown = sorted(set(forms) - keys)
    assert not unknown, f"{backend} table entries for no declared function: {unknown}"
    for key, form in forms.items():
        assert form.backend == backend, key
        assert callable(getattr(form.family(), form.attr, None)), f"{key}: {form}"


def test_every_category_is_declared() -> None:
    """A category is declared (on the declaration, or by its module's ``CATEGORY``), never
    derived from a file name: no builtin falls back to "other"."""
    from formulane.functions.spec import OTHER_CATEGORY

    undeclared = sorted(s.name for s in SPECS if s.category in ("", OTHER_CATEGORY))
    assert not undeclared, f"no declared category: {undeclared}"


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
