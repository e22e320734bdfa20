"""Excel has no negative zero: a Number result that is zero comes out as 0, never -0.

Decimal arithmetic keeps the sign of a zero (`Decimal(0) * -1` is `Decimal('-0')`), so
`0 * -1`, `x / -5` with x = 0 or `qty * -price` with qty = 0 came out as -0: `formulane eval`
printed "-0" and the JSON said "-0". Checked on the closure interpreter and on the generated
code a program tiers up to, at the top level and inside lists and records.
"""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal

import pytest

import formulane
from formulane.interpreter.codegen import generate
from formulane.interpreter.program import TIER_UP_CALLS

FORMULAS = ["x * -1", "x / -5", "IF(x > 0, 1 / 0, x * -1)", "IF(x > 0, 3, x * -1)",
            "LET(a, x * -1, a)", "SUM([x * -1])", "-x", "ROUND(x - 0.001, 2)", "x * -1 + 0"]


def _positive_zero(value: object) -> bool:
    return isinstance(value, Decimal) and value == 0 and not value.is_signed()


@pytest.mark.parametrize("source", FORMULAS)
def test_a_zero_result_is_unsigned(source: str) -> None:
    program = formulane.compile(source, {"x": "Number"})
    first = program.evaluate({"x": 0})
    for _ in range(TIER_UP_CALLS + 2):  # past the tier-up to generated code
        last = program.evaluate({"x": 0})
    assert _positive_zero(first), repr(first)
    assert _positive_zero(last), repr(last)
    # the generated code itself (strict: a generation failure raises, not falls back)
    fast = generate(program.root, variables=program.variables, limits=program.limits,
                    metered=False, source=source, external=True, strict=True)
    assert fast is not None
    assert _positive_zero(fast({"x": 0}, None))
    assert program.evaluate({"x": 2}) != 0  # nonzero results keep their sign


def test_inside_lists() -> None:
    out = formulane.evaluate("[x * -1, 2]", {"x": 0}, schema={"x": "Number"})
    assert _positive_zero(out[0])
    out = formulane.evaluate("MAP(r.xs, v => v * -1)", {"r": {"xs": [0, 1]}},
                             schema={"r": "Record{xs: List[Number]}"})
    assert _positive_zero(out[0]) and out[1] == -1


def test_cli_prints_zero() -> None:
    run = subprocess.run([sys.executable, "-m", "formulane", "eval", "0 * -1", "--json"],
                         capture_output=True, text=True, check=True)
    assert json.loads(run.stdout)["value"] == "0"
