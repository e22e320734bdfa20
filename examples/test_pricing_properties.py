"""Property tests of your own formulas with `formulane.testing` (run: ``pytest examples/``).

Generated formulas over the pricing schema never crash the engine (they return a value or an
error value), and a stored customer formula holds its invariants for every generated input,
blanks and edge values included.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given, settings

import formulane
from formulane.testing import formulas, values

SCHEMA = {"price": "Number", "qty": "Number", "discount": "Number?"}
DISCOUNTED = "ROUND(price * qty * (1 - MIN(MAX(discount ?? 0, 0), 1)), 2)"


@settings(max_examples=40, deadline=None)
@given(formulas(SCHEMA, returns="Number", max_depth=2), values(SCHEMA))
def test_generated_formulas_never_crash(source: str, variables: dict[str, Any]) -> None:
    result = formulane.evaluate(source, variables, schema=SCHEMA)
    assert isinstance(result, (Decimal, formulane.ErrorValue)) or result is None


@settings(max_examples=200, deadline=None)
@given(values(SCHEMA))
def test_discount_never_raises_the_price(variables: dict[str, Any]) -> None:
    program = formulane.compile(DISCOUNTED, SCHEMA)
    full = formulane.evaluate("ROUND(price * qty, 2)", variables, schema=SCHEMA)
    got = program.evaluate(variables)
    if isinstance(full, Decimal) and isinstance(got, Decimal):
        assert abs(got) <= abs(full)
