"""Lines mypy --strict and pyright must both reject (`tests/test_typing.py`): each line ending
in ``# expect-error`` must have an error, and no other line may. If the result types degraded
to ``Any``, these lines would pass and the test would fail.
"""

from __future__ import annotations

from decimal import Decimal

import formulane

SCHEMA = {"price": "Number", "qty": "Number"}


def untyped_is_a_union() -> None:
    total: Decimal = formulane.compile("price * qty", SCHEMA).evaluate({})  # expect-error
    also: Decimal = formulane.evaluate("1 + 1")  # expect-error
    del total, also


def typed_is_that_type() -> None:
    program = formulane.compile("price * qty", SCHEMA, returns=Decimal)
    text: str = program.evaluate({"price": 1, "qty": 2})  # expect-error
    fine: Decimal = program.evaluate({"price": 1, "qty": 2})
    del text, fine


def returns_takes_a_type() -> None:
    formulane.compile("price", SCHEMA, returns="Number")  # expect-error
