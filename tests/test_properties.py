"""Properties of the whole pipeline over generated input: only FormulaError escapes, results
are deterministic, well-typed formulas check and evaluate."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

import formulane
from formulane import ErrorValue, FormulaError
from formulane.testing import formulas, values

SCHEMA = {"a": "Number", "b": "Number", "s": "Text", "flag": "Boolean", "d": "Date",
          "xs": "List[Number]", "maybe": "Number?"}

FORMULA_ALPHABET = string.ascii_letters + string.digits + " ()[]{},.+-*/^&=<>!?%\"';:_@$#\n\t"


@given(st.text(alphabet=FORMULA_ALPHABET, max_size=80) | st.text(max_size=40))
def test_arbitrary_text_raises_only_formula_errors(source: str) -> None:
    try:
        program = formulane.compile(source, SCHEMA)
    except FormulaError:
        return
    try:
        program.evaluate({"a": 1, "b": 0, "s": "x", "flag": True, "d": __import__("datetime").date(2024, 1, 31),
                          "xs": [1, 2], "maybe": None})
    except FormulaError:
        pass


@settings(max_examples=300)
@given(formulas(SCHEMA, max_depth=3), values(SCHEMA))
def test_well_typed_formulas_check_and_evaluate(source: str, variables: dict) -> None:
    try:
        program = formulane.compile(source, SCHEMA)
    except formulane.LimitExceeded:
        return
    first = program.evaluate(variables)
    second = program.evaluate(variables)
    if isinstance(first, ErrorValue):
        assert isinstance(second, ErrorValue) and first.code == second.code
    else:
        assert first == second


@given(formulas(SCHEMA, returns="Number", max_depth=2), values(SCHEMA))
def test_iferror_makes_numbers_total(source: str, variables: dict) -> None:
    try:
        program = formulane.compile(f"IFERROR({source}, -1)", SCHEMA)
    except formulane.LimitExceeded:
        return
    result = program.evaluate(variables)
    assert not isinstance(result, ErrorValue)
