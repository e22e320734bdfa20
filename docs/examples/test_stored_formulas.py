"""An application testing the formulas it stores, with formulane's Hypothesis strategies.

The shop below keeps its pricing rules as formulas (in a database, a YAML file...). Property
tests state what must hold for *every* valid order, and Hypothesis searches for a
counterexample: `values(SCHEMA)` draws inputs (blanks and edge values included), narrowed here
to what the shop accepts; `formulas(SCHEMA, ...)` draws arbitrary well-typed formulas, to test
the code that runs rules written by users. Run it with pytest; formulane's own test suite runs
it too (tests/authoring/test_docs_example.py).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import formulane
from formulane import ErrorValue, FormulaError
from formulane.testing import formulas, values

SCHEMA = {"price": "Number", "qty": "Number", "tier": "Text", "ordered": "Date",
          "coupon": "Number?"}

DISCOUNT = 'IF(qty >= 100, 0.15, IF(qty >= 10, 0.05, 0)) + IF(LOWER(tier) = "gold", 0.1, 0)'
RULES = {
    "gross": "price * qty",
    "subtotal": "ROUND(price * qty, 2)",
    "discount_rate": DISCOUNT,
    "total": f"LET(rate, {DISCOUNT}, ROUND(price * qty * (1 - rate), 2))",
    "shipping": "IF(price * qty >= 50, 0, 4.99)",
    "coupon_value": "MIN(coupon ?? 0, price * qty)",
    "label": 'UPPER(LEFT(tier & "?", 1)) & "-" & TEXT(ordered, "yyyy-mm-dd")',
    "due": "WORKDAY(ordered, 3)",
}


def valid_order(order: dict[str, Any]) -> bool:
    """What the shop accepts: no negative price, at least one item, a non-negative coupon."""
    return order["price"] >= 0 and order["qty"] >= 1 and (order["coupon"] or 0) >= 0


ORDERS = values(SCHEMA).filter(valid_order)


def run_rule(source: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """The shop's rule endpoint: a result or a structured error, never an exception."""
    try:
        value = formulane.compile(source, SCHEMA).evaluate(inputs)
    except FormulaError as exc:
        return {"ok": False, "error": exc.to_dict(source)}
    if isinstance(value, ErrorValue):
        return {"ok": False, "error": value.to_dict()}
    return {"ok": True, "value": value}


def test_stored_rules_check() -> None:
    for name, source in RULES.items():
        formulane.compile(source, SCHEMA)  # raises if a rule no longer checks


@settings(max_examples=200, deadline=None)
@given(ORDERS)
def test_never_an_error_value_for_valid_orders(order: dict[str, Any]) -> None:
    for name, source in RULES.items():
        result = formulane.evaluate(source, order, schema=SCHEMA)
        assert not isinstance(result, ErrorValue), (name, result, order)


@settings(max_examples=200, deadline=None)
@given(ORDERS)
def test_results_within_bounds(order: dict[str, Any]) -> None:
    result = {name: formulane.evaluate(source, order, schema=SCHEMA)
              for name, source in RULES.items()}
    assert Decimal(0) <= result["discount_rate"] <= Decimal("0.25")
    assert 0 <= result["total"] <= result["subtotal"] + Decimal("0.01")
    assert result["shipping"] in (0, Decimal("4.99"))
    assert 0 <= result["coupon_value"] <= result["gross"]
    assert result["due"] > order["ordered"]


@settings(max_examples=100, deadline=None)
@given(formulas(SCHEMA, returns="Number", max_depth=2), values(SCHEMA))
def test_user_written_rules_never_crash_the_endpoint(source: str, inputs: dict[str, Any]) -> None:
    response = run_rule(source, inputs)
    assert response["ok"] or "error" in response
    if response["ok"]:
        assert isinstance(response["value"], Decimal)


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=30), values(SCHEMA))
def test_even_nonsense_gets_a_structured_answer(source: str, inputs: dict[str, Any]) -> None:
    response = run_rule(source, inputs)
    assert response["ok"] or response["error"]["message"]
