"""Router golden decisions (``data/router_golden.yaml``) and lane execution.

Formula-lane and tool-lane cases must never build or run a sandbox job; the sandbox-lane
decisions are checked against the real backend's capabilities.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

import formulane
from formulane.errors import EscalationError
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.broker import StaticCatalog
from formulane.escalation.contract import Outcome, Principal
from formulane.escalation.policy import PolicyBook, PolicyRule, ReasonCode
from formulane.escalation.router import EscalationRequest, Router

GOLDEN: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "router_golden.yaml").read_text())
needs_engine = pytest.mark.skipif(not hasattr(formulane, "compile"),
                                  reason="the formula engine has not landed yet")

POLICIES = PolicyBook(principals={
    ("acme", "analyst"): PolicyRule(may_escalate=True),
    ("acme", "trusted"): PolicyRule(may_escalate=True, max_network="open",
                                    side_effects=("read_only", "proposes_change"),
                                    broker_tools=("invoice_total",)),
})


def _catalog() -> StaticCatalog:
    catalog = StaticCatalog()
    catalog.register("invoice_total",
                     lambda *, principal, invoice_id: {"A1": 99.5}.get(invoice_id, 0.0))
    catalog.register("send_email", lambda *, principal, to, subject: "queued", read_only=False)
    return catalog


@pytest.fixture
def router(sandbox: BubblewrapBackend) -> Router:
    return Router(policies=POLICIES, catalog=_catalog(), backend=sandbox)


def _request(case: dict[str, Any]) -> EscalationRequest:
    principal = Principal(subject=case["profile"], tenant="acme")
    return EscalationRequest.model_validate({"principal": principal, **case["request"]})


@needs_engine
@pytest.mark.parametrize("case", GOLDEN, ids=[c["id"] for c in GOLDEN])
def test_golden_decision(router: Router, sandbox: BubblewrapBackend, case: dict[str, Any],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    expect = case["expect"]
    request = _request(case)
    decision = router.route(request)
    assert decision.lane == expect["lane"], [r.message for r in decision.reasons]
    assert [c.value for c in decision.codes] == expect["reasons"], \
        [r.message for r in decision.reasons]
    if "formula" in expect:
        assert decision.formula == expect["formula"]
    if decision.lane in ("formula", "tool", "refuse"):
        assert decision.sandbox_job is None

        def never(*args: object, **kwargs: object) -> None:
            raise AssertionError("a formula-expressible job reached the sandbox")

        monkeypatch.setattr(sandbox, "run", never)
        resolution = router.execute(request, decision)
        if "value" in expect:
            value = resolution.value  # JSON data: a Decimal result arrives as its exact number
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert Decimal(repr(value)) == Decimal(str(expect["value"]))
            else:
                assert value == expect["value"]
    if decision.lane == "sandbox":
        job = decision.sandbox_job
        assert job is not None and job.tenant == "acme" and job.principal == case["profile"]
        assert "formula lane escalated" in job.purpose
    for reason in decision.reasons:
        assert reason.message


@needs_engine
def test_escalated_job_runs_in_the_sandbox(router: Router) -> None:
    case = next(c for c in GOLDEN if c["id"] == "a loop over files needs the sandbox")
    request = _request(case)
    resolution = router.execute(request)
    assert resolution.decision.lane == "sandbox"
    sandbox = resolution.sandbox_receipt
    assert sandbox is not None and sandbox.outcome is Outcome.SUCCEEDED
    assert resolution.outcome == "succeeded" and resolution.job_id == sandbox.job_id
    assert sandbox.stdout.text == "{'data/a.csv': 2}\n"


def test_refusal_is_a_value_not_an_exception(sandbox: BubblewrapBackend) -> None:
    router = Router(backend=sandbox)  # default policy: nobody may escalate
    request = EscalationRequest(principal=Principal(subject="x", tenant="t"), ask="run it",
                                code="import os\nprint(os.getcwd())")
    decision = router.route(request)
    assert decision.lane == "refuse"
    assert ReasonCode.ESCALATION_NOT_ALLOWED in decision.codes
    result = router.execute(request, decision)
    assert result.outcome == "refused" and result.sandbox_receipt is None
    assert result.receipt.decision.reasons == decision.reasons


def test_a_request_must_propose_something() -> None:
    with pytest.raises(ValueError, match="propose at least one"):
        EscalationRequest(principal=Principal(subject="x", tenant="t"), ask="nothing")


def test_bad_requests_get_a_clear_error() -> None:
    with pytest.raises(EscalationError) as err:
        EscalationRequest.parse({"principal": {"subject": "", "tenant": "t"}, "ask": "x",
                                 "code": "1"})
    assert err.value.code == "E603" and "principal.subject" in err.value.message


def test_policy_layers_override_knob_by_knob() -> None:
    book = PolicyBook(PolicyRule(may_escalate=True, max_network="none"),
                      tenants={"acme": PolicyRule(max_network="open")},
                      principals={("acme", "bob"): PolicyRule(may_escalate=False)})
    bob = book.resolve(Principal(subject="bob", tenant="acme"))
    ana = book.resolve(Principal(subject="ana", tenant="acme"))
    eve = book.resolve(Principal(subject="eve", tenant="other"))
    assert (bob.may_escalate, bob.max_network) == (False, "open")
    assert (ana.may_escalate, ana.max_network) == (True, "open")
    assert (eve.may_escalate, eve.max_network) == (True, "none")
    assert eve.input_classes == ("public", "internal") and eve.environments == ("default",)


def test_backend_refusal_is_an_exception_at_the_api(sandbox: BubblewrapBackend) -> None:
    from .conftest import make_job

    with pytest.raises(EscalationError) as err:
        sandbox.run(make_job("print(1)", min_isolation="kernel"))
    assert err.value.code == "E601" and "kernel isolation" in err.value.message
