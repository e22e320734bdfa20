"""Texts read as numbers where a number is expected (excel profile, scalar engine).

Excel reads a text in arithmetic as VALUE reads it, and a date text as its serial number
(Microsoft's "Calculation operators and precedence", section "Using text in formulas":
="1"+"2" is 3, ="1"+"$4.00" is 5, ="6/1/2001"-"5/1/2001" is 31). The scalar engine does so
(functions/_serial.py, text_to_number); the columnar and SQL forms of the conversion read plain
numbers only, so these cases are not golden cases of every backend. The strict profile has no
such conversion.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

import formulane
from formulane import ErrorValue, FormulaError

PAGE = ("https://support.microsoft.com/en-us/office/calculation-operators-and-precedence-in-"
        "excel-48be406d-4975-4d31-b2b8-7af9e0e2878a")

CASES: list[tuple[str, Any]] = [
    ('"1" + "2"', 3),                                   # PAGE
    ('"1" + "$4.00"', 5),                               # PAGE
    ('"2001-06-01" - "2001-05-01"', 31),                # PAGE, the dates written in ISO
    ('"2020-01-01" + 1', 43832),                        # a date text is its serial number
    ('"2020-01-01 12:00" * 1', Decimal("43831.5")),     # with a time of day
    ('"1 March 2024" + 0', 45352),
    ('"12:00" + 0', Decimal("0.5")),                    # a time alone is a fraction of a day
    ('"50%" * 2', 1),
    ('"(5)" + 0', -5),
    ('"1 1/2" * 2', 3),
    ('SUM("2020-01-01", 1)', 43832),                    # a text given directly to SUM
    ('"abc" + 1', "#VALUE!"),
    ('"1,2,3" + 0', "#VALUE!"),                         # commas only in groups of three
    ('"1800-01-01" + 0', "#VALUE!"),                    # before Excel's first date
    ('"1/2/2020" + 0', "#VALUE!"),                      # day/month order left to the locale
]


def run(formula: str, profile: str = "excel") -> Any:
    try:
        return formulane.compile(formula, {}, profile=profile).evaluate({})
    except FormulaError as exc:
        return exc.code


@pytest.mark.parametrize("formula, expected", CASES, ids=[c[0] for c in CASES])
def test_text_read_as_number(formula: str, expected: Any) -> None:
    got = run(formula)
    if isinstance(expected, str):
        assert isinstance(got, ErrorValue) and got.code == expected, got
    else:
        assert got == Decimal(expected), got


def test_strict_profile_keeps_texts_apart() -> None:
    assert run('"2020-01-01" + 1', "strict") == "E202"
