"""What a type checker sees of `formulane.compile` and `evaluate` (issue 16 item 4).

Not run by pytest: `tests/test_typing.py::test_program_result_types` checks this file with
mypy --strict and pyright and requires no error; each ``assert_type`` is an expectation. What
must be an error is in `program_returns_errors.py`, checked line by line.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from typing_extensions import assert_type

import formulane
from formulane import ErrorValue, Program, Value

SCHEMA = {"price": "Number", "qty": "Number", "name": "Text", "due": "Date"}


def untyped() -> None:
    program = formulane.compile("price * qty", SCHEMA)
    assert_type(program, Program[Value])
    assert_type(program.evaluate({"price": 1, "qty": 2}), Value)
    assert_type(formulane.evaluate("1 + 1"), Value)
    value = program.evaluate({"price": 1, "qty": 2})
    if isinstance(value, Decimal):  # a Value is a union: a check narrows it
        assert_type(value, Decimal)


def typed() -> None:
    program = formulane.compile("price * qty", SCHEMA, returns=Decimal)
    assert_type(program, Program[Decimal])
    total = program.evaluate({"price": 1, "qty": 2})
    assert_type(total, Decimal)
    print(total.quantize(Decimal("0.01")))  # Decimal's own methods, no narrowing
    assert_type(formulane.compile("UPPER(name)", SCHEMA, returns=str).evaluate(
        {"name": "a"}), str)
    assert_type(formulane.compile("price > 1", SCHEMA, returns=bool), Program[bool])
    assert_type(formulane.compile("due", SCHEMA, returns=dt.date), Program[dt.date])
    assert_type(formulane.evaluate("1 + 1", returns=Decimal), Decimal)
    assert_type(formulane.evaluate("[1, 2]", returns=list), list[Any])


def covariant(program: Program[Decimal]) -> Program[Value]:
    # a Program[Decimal] is a Program[Value]: its results are Values
    return program


def returning(program: Program[Value]) -> None:
    assert_type(program.returning(Decimal), Program[Decimal])
    assert_type(program.returns, type | None)


def error_values(program: Program[Value]) -> None:
    value = program.evaluate({})
    if isinstance(value, ErrorValue):
        assert_type(value.code, str)
