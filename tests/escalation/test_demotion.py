"""Demotion: the translated formula gives the same answer as running the Python would.

Data-driven from ``data/demotion_cases.yaml``; every demoted case is also run for real in the
bubblewrap sandbox (one job evaluating all of them) and compared, and a property test checks
random arithmetic against the trusted host interpreter.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import formulane
from formulane.errors import EscalationError
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Outcome
from formulane.escalation.demotion import _expression, _same, demote, translate

from .conftest import make_job

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "demotion_cases.yaml").read_text())
DEMOTED = [c for c in CASES if "refused" not in c]
REFUSED = [c for c in CASES if "refused" in c]
needs_engine = pytest.mark.skipif(not hasattr(formulane, "compile"),
                                  reason="the formula engine has not landed yet")


def _host_eval(code: str, inputs: dict[str, Any]) -> tuple[str, Any]:
    """Trusted harness: our own test expressions, evaluated by the host interpreter."""
    expr = ast.unparse(_expression(code))
    try:
        return "ok", eval(expr, {"__builtins__": __builtins__}, dict(inputs))  # noqa: S307
    except Exception as exc:  # the failure is the answer
        return "raise", type(exc).__name__


@needs_engine
@pytest.mark.parametrize("case", DEMOTED, ids=[c["code"] for c in DEMOTED])
def test_demoted_code_matches_python(case: dict[str, Any]) -> None:
    demoted = demote(case["code"], case["inputs"])
    if "formula" in case:
        assert demoted.formula == case["formula"]
    status, value = _host_eval(case["code"], case["inputs"])
    if case.get("fails"):
        assert demoted.equivalence == "both_fail" and status == "raise"
        assert demoted.python_value == value
    else:
        assert status == "ok", value
        assert _same(value, demoted.value) is not None, (value, demoted.value)
    # The formula text stands on its own: compiling and running it again gives the same value.
    again = formulane.compile(demoted.formula, demoted.schema).evaluate(demoted.variables)
    assert again == demoted.value


@needs_engine
@pytest.mark.parametrize("case", REFUSED, ids=[c["code"] for c in REFUSED])
def test_refused_demotions_say_why(case: dict[str, Any]) -> None:
    with pytest.raises(EscalationError) as err:
        demote(case["code"], case["inputs"])
    assert err.value.code == "E604" and case["refused"] in err.value.message


def test_translation_alone_needs_no_engine() -> None:
    formula, schema, used = translate("round(price * qty * 1.2, 2)", {"price": 1.5, "qty": 2})
    assert formula == "ROUND(price * qty * 1.2, 2)"
    assert schema == {"price": "Number", "qty": "Number"} and used == ("price", "qty")
    with pytest.raises(EscalationError, match="not one of the job's inputs"):
        translate("os.system('x')", {})


@needs_engine
def test_demoted_answers_match_real_python_in_the_sandbox(sandbox: BubblewrapBackend) -> None:
    batch = [[ast.unparse(_expression(c["code"])), c["inputs"]] for c in DEMOTED]
    code = ("import json\nout = []\nfor expr, env in cases:\n    try:\n"
            "        out.append(['ok', repr(eval(expr, {}, dict(env)))])\n"
            "    except Exception as e:\n        out.append(['raise', type(e).__name__])\n"
            "print(json.dumps(out))\n")
    receipt = sandbox.run(make_job(code, inputs={"cases": batch}))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    results = json.loads(receipt.stdout.text)
    for case, (status, shown) in zip(DEMOTED, results):
        demoted = demote(case["code"], case["inputs"])
        if status == "raise":
            assert demoted.equivalence == "both_fail" and demoted.python_value == shown, case
        else:
            value = ast.literal_eval(shown)
            assert _same(value, demoted.value) is not None, (case["code"], value, demoted.value)


# -- property: random arithmetic over random inputs ---------------------------------------------

_leaf = st.sampled_from(["a", "b", "c", "2", "3", "0.5", "1.25", "10"])


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/", "//", "%"]), children).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})")
    calls = st.one_of(
        children.map(lambda x: f"abs({x})"),
        st.tuples(children, st.integers(0, 3)).map(lambda t: f"round({t[0]}, {t[1]})"),
        st.tuples(children, children).map(lambda t: f"max({t[0]}, {t[1]})"),
        children.map(lambda x: f"({x}) ** 2"),
        st.tuples(children, children, children).map(
            lambda t: f"({t[0]} if {t[1]} > {t[2]} else {t[2]})"))
    return st.one_of(binary, calls)


_exprs = st.recursive(_leaf, _combine, max_leaves=6)
_number = st.one_of(st.integers(-1000, 1000),
                    st.floats(-1000, 1000, allow_nan=False, allow_infinity=False).map(
                        lambda f: round(f, 3)))


@needs_engine
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expr=_exprs, a=_number, b=_number, c=_number)
def test_whenever_demotion_succeeds_python_agrees(expr: str, a: float, b: float,
                                                  c: float) -> None:
    inputs = {"a": a, "b": b, "c": c}
    try:
        demoted = demote(expr, inputs)
    except EscalationError as err:
        assert err.code == "E604"
        return
    status, value = _host_eval(expr, inputs)
    if status == "raise":
        assert demoted.equivalence == "both_fail" and demoted.python_value == value
    else:
        assert _same(value, demoted.value) is not None, (expr, inputs, value, demoted.value)
