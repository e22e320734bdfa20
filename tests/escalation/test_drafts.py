"""The drafting room on the real bubblewrap backend: promote, known-answer cases, approve, pin.

A promoted tool runs its pinned code in the sandbox with no model in the loop; a draft that
fails a known-answer case is refused (E605) and the pinned version stays. Approval compares the
job's declared result, so the tests that pin need the sandbox's result channel (a ``result``
field on `Receipt`); the refusals hold with or without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from formulane.errors import EscalationError
from formulane.escalation import Escalation, EscalationSettings, Principal, default
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Receipt
from formulane.escalation.policy import PolicyBook, PolicyRule

from .conftest import UID_COUNT, UID_FIRST

CODE = ("total = 0\nfor row in rows:\n    total += row['qty'] * row['price']\n"
        "result = round(total, 2)\nprint(result)\n")
BUGGY = CODE.replace("row['qty'] * row['price']", "row['qty'] + row['price']")
SAME = CODE.replace("total = 0", "total = 0.0")
ROWS = [{"qty": 2, "price": 1.25}, {"qty": 1, "price": 10.0}]
CASES = [([{"qty": 2, "price": 1.25}, {"qty": 1, "price": 10.0}], 12.5),
         ([{"qty": 3, "price": 2.0}], 6.0),
         ([], 0)]
ANA = Principal(subject="ana", tenant="acme", scopes=frozenset({"orders:read"}))
has_result_channel = pytest.mark.skipif(
    "result" not in Receipt.model_fields,
    reason="the sandbox backend's result channel (Receipt.result) has not landed yet")


@pytest.fixture(scope="module")
def esc(sandbox: BubblewrapBackend, state_dir: Path) -> Iterator[Escalation]:
    settings = EscalationSettings(data_dir=state_dir / "drafts", uid_first=UID_FIRST,
                                  uid_count=UID_COUNT)
    with default(settings, backend=sandbox,
                 policies=PolicyBook(tenants={"acme": PolicyRule(may_escalate=True)})) as opened:
        yield opened


def _promoted(esc: Escalation, tool: str) -> str:
    job = esc.run(code=CODE, inputs={"rows": ROWS}, principal=ANA)
    assert job.lane == "sandbox" and job.outcome == "succeeded", job.receipt.outcome_detail
    draft = esc.drafts.promote(job.job_id, tool=tool, by="dev",  # type: ignore[arg-type]
                               scopes=["orders:read"])
    assert draft.arguments == {"rows": "array"} and draft.status == "draft"
    assert draft.code == CODE and draft.environment_digest == job.receipt.environment_digest
    return draft.draft_id


def test_a_draft_failing_a_known_answer_case_is_refused(esc: Escalation) -> None:
    draft_id = _promoted(esc, "order_total_wrong")
    for rows, answer in CASES[:2]:
        esc.drafts.add_case("order_total_wrong", {"rows": rows}, answer, by="rita")
    with pytest.raises(EscalationError, match="approval needs 3") as err:
        esc.drafts.approve(draft_id, by="rita")
    assert err.value.code == "E605"
    esc.drafts.add_case("order_total_wrong", {"rows": [{"qty": 1, "price": 1.0}]}, 99.0,
                        by="rita", note="deliberately wrong answer")
    with pytest.raises(EscalationError, match="promoted"):
        esc.drafts.approve(draft_id, by="dev")  # the promoter may not approve
    with pytest.raises(EscalationError, match="fails") as err:
        esc.drafts.approve(draft_id, by="rita")
    assert err.value.code == "E605"
    assert esc.drafts.pinned("order_total_wrong") is None
    assert "order_total_wrong" not in esc.catalog.names()


def test_a_case_with_wrong_arguments_fails_before_running(esc: Escalation) -> None:
    draft_id = _promoted(esc, "order_total_args")
    esc.drafts.add_case("order_total_args", {"rows": "not a list"}, 1, by="rita")
    verdicts = esc.drafts.check(draft_id)
    assert [v.outcome for v in verdicts] == ["refused"]
    assert "rows must be a array" in verdicts[0].detail


@has_result_channel
def test_promote_approve_pin_and_replace(esc: Escalation) -> None:
    draft_id = _promoted(esc, "order_total")
    for rows, answer in CASES:
        esc.drafts.add_case("order_total", {"rows": rows}, answer, by="rita")
    pinned = esc.drafts.approve(draft_id, by="rita")
    assert pinned.status == "pinned" and pinned.version == 1
    assert "order_total" in esc.catalog.names()

    # From now on: the tool lane, that exact code in the sandbox, no model in the loop.
    call = esc.run(tool_call={"name": "order_total", "args": {"rows": ROWS}}, principal=ANA)
    assert call.lane == "tool" and call.outcome == "succeeded", call.receipt.outcome_detail
    assert call.value == 12.5
    assert call.receipt.tool_version == pinned.pinned_name
    assert call.receipt.sandbox is not None
    assert call.receipt.sandbox.code_sha256 == pinned.code_sha256
    assert call.receipt.environment_digest == pinned.environment_digest

    # Code that only calls the tool routes there too.
    again = esc.run(code="order_total(rows=orders)", inputs={"orders": ROWS}, principal=ANA)
    assert again.lane == "tool" and again.value == 12.5

    # Scopes and argument types are checked before anything runs.
    outsider = Principal(subject="eve", tenant="acme")
    denied = esc.run(tool_call={"name": "order_total", "args": {"rows": ROWS}},
                     principal=outsider)
    assert denied.outcome == "refused" and "orders:read" in denied.receipt.outcome_detail
    bad = esc.run(tool_call={"name": "order_total", "args": {"rows": 3}}, principal=ANA)
    assert bad.outcome == "user_error" and bad.job_id is None

    # A new draft must pass the same cases before it replaces the pinned version.
    buggy = esc.drafts.new_draft("order_total", BUGGY, by="dev")
    with pytest.raises(EscalationError, match="known-answer"):
        esc.drafts.approve(buggy.draft_id, by="rita")
    assert esc.drafts.pinned("order_total").version == 1  # type: ignore[union-attr]
    better = esc.drafts.new_draft("order_total", SAME, by="dev")
    v2 = esc.drafts.approve(better.draft_id, by="rita")
    assert v2.version == 2 and esc.drafts.pinned("order_total").code == SAME  # type: ignore
    statuses = {d.draft_id: d.status for d in esc.drafts.history("order_total")}
    assert statuses[draft_id] == "superseded" and statuses[buggy.draft_id] == "draft"
    after = esc.run(tool_call={"name": "order_total", "args": {"rows": ROWS}}, principal=ANA)
    assert after.receipt.tool_version == v2.pinned_name and after.value == 12.5
