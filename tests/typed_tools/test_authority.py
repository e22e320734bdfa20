"""Authority on real stores (SQLite file and PostgreSQL): scopes, tenants, approvals bound to an
arguments hash, execute-once per idempotency key (also across a restart), and a crash between
execute and receipt giving `unknown`, never a second execution."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from formulane.errors import ToolError
from formulane.typed_tools import Principal, SQLStore, TenantKey, ToolRegistry
from write_app import ACME_ALICE, build_registry

HERE = Path(__file__).parent
ARGS = {"tenant": "acme", "to": "bob", "cents": 500, "api_key": "sk-live-123"}
APPROVER = Principal("carol", "acme", ["tools:approve"])


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def effect_file(tmp_path: Path) -> Path:
    return tmp_path / "transfers.log"


@pytest.fixture
def registry(store_factory: Any, effect_file: Path) -> ToolRegistry:
    return build_registry(store_factory(), effect_file=effect_file)


def approved(registry: ToolRegistry, args: dict[str, Any] = ARGS, who: Principal = ACME_ALICE) -> str:
    pending = registry.call("transfer", args, principal=who)
    assert pending.status == "approval_required", pending.text()
    registry.approve(pending.approval.id, approver=APPROVER)
    return pending.approval.id


def test_wrong_scope_is_denied_and_receipted(registry: ToolRegistry, effect_file: Path) -> None:
    intern = Principal("ivan", "acme", ["payments:read"])
    result = registry.call("transfer", ARGS, principal=intern, idempotency_key="k")
    assert result.status == "error" and result.error.code == "E503" and not result.error.retryable
    assert "payments:write" in result.error.message
    assert result.receipt.outcome == "denied" and lines(effect_file) == []
    assert [r.outcome for r in registry.receipts()] == ["denied"]


def test_wrong_tenant_is_denied(registry: ToolRegistry, effect_file: Path) -> None:
    result = registry.call("transfer", {**ARGS, "tenant": "globex"}, principal=ACME_ALICE, idempotency_key="k")
    assert result.error.code == "E503" and "argument 'tenant'" in result.error.message
    assert "globex" not in result.text()
    assert lines(effect_file) == []


class Account(BaseModel):
    tenant_id: Annotated[str, TenantKey]
    number: str


def test_nested_tenant_keys_are_checked_in_lists_too() -> None:
    registry = ToolRegistry()

    @registry.tool
    def balances(accounts: list[Account]) -> int:
        return len(accounts)

    me = Principal("u", "acme")
    ok = registry.call("balances", {"accounts": [{"tenant_id": "acme", "number": "1"}]}, principal=me)
    assert ok.ok
    bad = registry.call("balances", {"accounts": [{"tenant_id": "acme", "number": "1"},
                                                  {"tenant_id": "other", "number": "2"}]}, principal=me)
    assert bad.error.code == "E503" and "accounts[1].tenant_id" in bad.error.message


def test_write_without_approval_holds_a_pending_request(registry: ToolRegistry, effect_file: Path) -> None:
    first = registry.call("transfer", ARGS, principal=ACME_ALICE, idempotency_key="k1")
    assert first.status == "approval_required" and not first.ok
    assert first.error.code == "E504" and not first.error.retryable
    request = first.approval
    assert request.status == "pending" and request.args_hash == first.receipt.args_hash
    assert first.error.details["approval_id"] == request.id
    # Asking again for the same arguments does not pile up requests.
    again = registry.call("transfer", ARGS, principal=ACME_ALICE)
    assert again.approval.id == request.id
    assert lines(effect_file) == []
    assert [r.outcome for r in registry.receipts()] == ["approval_required", "approval_required"]


def test_approved_write_runs_once_and_replays(registry: ToolRegistry, effect_file: Path) -> None:
    approval_id = approved(registry)
    first = registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k1")
    assert first.ok and first.value == {"cents": 500} and not first.replayed
    assert first.receipt.approval_id == approval_id and first.receipt.idempotency_key == "k1"
    again = registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k1")
    assert again.ok and again.replayed and again.value == {"cents": 500}
    assert again.receipt.outcome == "replayed" and again.receipt.replay_of == first.receipt.id
    assert again.receipt.result_hash == first.receipt.result_hash
    assert again.original == first.receipt  # the stored receipt of the one execution
    assert lines(effect_file) == ["acme -> bob: 500"]
    assert registry.approval(approval_id).status == "used"


def test_replay_survives_a_restart(store_factory: Any, effect_file: Path) -> None:
    before = build_registry(store_factory(), effect_file=effect_file)
    approval_id = approved(before)
    first = before.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k1")
    assert first.ok
    before.close()
    after = build_registry(store_factory(), effect_file=effect_file)  # a new process would see this
    again = after.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k1")
    assert again.replayed and again.value == {"cents": 500} and again.original == first.receipt
    assert lines(effect_file) == ["acme -> bob: 500"]
    outcomes = [r.outcome for r in after.receipts(tool="transfer")]
    assert outcomes == ["approval_required", "succeeded", "replayed"]


def test_approval_for_other_arguments_is_refused(registry: ToolRegistry, effect_file: Path) -> None:
    approval_id = approved(registry)
    result = registry.call("transfer", {**ARGS, "cents": 50_000}, principal=ACME_ALICE, approval=approval_id,
                           idempotency_key="k1")
    assert result.error.code == "E504" and "not for these arguments" in result.error.message
    assert result.receipt.outcome == "denied" and lines(effect_file) == []
    assert registry.approval(approval_id).status == "approved"  # still usable for what it names


def test_approval_for_another_requester_or_tenant_is_refused(registry: ToolRegistry) -> None:
    approval_id = approved(registry)
    mallory = Principal("mallory", "acme", ["payments:write"])
    result = registry.call("transfer", ARGS, principal=mallory, approval=approval_id, idempotency_key="k")
    assert "requested by another principal" in result.error.message
    unknown = registry.call("transfer", ARGS, principal=ACME_ALICE, approval="apr_nope", idempotency_key="k")
    assert unknown.error.code == "E504" and "no approval" in unknown.error.message


def test_an_approval_is_used_by_one_idempotency_key(registry: ToolRegistry, effect_file: Path) -> None:
    approval_id = approved(registry)
    assert registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k1").ok
    second = registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k2")
    assert "already used by another idempotency key" in second.error.message
    assert lines(effect_file) == ["acme -> bob: 500"]


def test_a_key_reused_with_other_arguments_is_refused(registry: ToolRegistry, effect_file: Path) -> None:
    first = approved(registry)
    assert registry.call("transfer", ARGS, principal=ACME_ALICE, approval=first, idempotency_key="k1").ok
    other_args = {**ARGS, "cents": 7}
    second = approved(registry, other_args)
    result = registry.call("transfer", other_args, principal=ACME_ALICE, approval=second, idempotency_key="k1")
    assert result.error.code == "E502" and "different arguments" in result.error.message
    assert lines(effect_file) == ["acme -> bob: 500"]


def test_without_a_key_the_approval_id_is_the_key(registry: ToolRegistry, effect_file: Path) -> None:
    approval_id = approved(registry)
    first = registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id)
    again = registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id)
    assert first.ok and again.replayed and first.receipt.idempotency_key == f"approval:{approval_id}"
    assert lines(effect_file) == ["acme -> bob: 500"]


def test_auto_uses_an_approved_request_for_the_same_arguments(registry: ToolRegistry, effect_file: Path) -> None:
    pending = registry.call("transfer", ARGS, principal=ACME_ALICE, approval="auto")
    assert pending.status == "approval_required"
    registry.approve(pending.approval.id, approver=APPROVER)
    # Without "auto" an approved request is reported, not used.
    reported = registry.call("transfer", ARGS, principal=ACME_ALICE)
    assert reported.status == "approval_required" and reported.error.details["status"] == "approved"
    done = registry.call("transfer", ARGS, principal=ACME_ALICE, approval="auto")
    assert done.ok and lines(effect_file) == ["acme -> bob: 500"]


@pytest.mark.parametrize(
    ("approver", "message"),
    [
        (Principal("dave", "acme", ["payments:write"]), "lacks the scope 'tools:approve'"),
        (Principal("erin", "globex", ["tools:approve"]), "not the request's tenant"),
        (Principal("bot", "acme", ["tools:approve"], kind="workload"), "a workload cannot approve"),
    ],
)
def test_who_may_approve(registry: ToolRegistry, approver: Principal, message: str) -> None:
    pending = registry.call("transfer", ARGS, principal=ACME_ALICE)
    with pytest.raises(ToolError) as err:
        registry.approve(pending.approval.id, approver=approver)
    assert err.value.code == "E503" and message in str(err.value)
    assert registry.approval(pending.approval.id).status == "pending"


def test_four_eyes_and_denial(store_factory: Any, effect_file: Path) -> None:
    registry = build_registry(store_factory(), effect_file=effect_file, four_eyes=True)
    boss_alice = Principal("alice", "acme", ["payments:write", "tools:approve"])
    pending = registry.call("transfer", ARGS, principal=boss_alice)
    with pytest.raises(ToolError, match="four-eyes"):
        registry.approve(pending.approval.id, approver=boss_alice)
    denied = registry.deny(pending.approval.id, approver=APPROVER, reason="not today")
    assert denied.status == "denied" and denied.reason == "not today"
    result = registry.call("transfer", ARGS, principal=boss_alice, approval=pending.approval.id, idempotency_key="k")
    assert "is denied, not approved" in result.error.message
    with pytest.raises(ToolError, match="not pending"):
        registry.approve(pending.approval.id, approver=APPROVER)


def test_approvals_expire(store_factory: Any, effect_file: Path) -> None:
    now = [1_000_000.0]
    registry = build_registry(store_factory(), effect_file=effect_file, approval_ttl=60, clock=lambda: now[0])
    approval_id = approved(registry)
    now[0] += 61
    result = registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k")
    assert "expired" in result.error.message and lines(effect_file) == []


def test_secrets_never_reach_receipts_or_the_database(registry: ToolRegistry, store_factory: Any) -> None:
    approval_id = approved(registry)
    registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k1")
    registry.call("transfer", {**ARGS, "cents": "x"}, principal=ACME_ALICE)
    registry.flush()
    for receipt in registry.receipts():
        assert "sk-live-123" not in repr(receipt)
    assert '"api_key":"[redacted]"' in registry.receipts(outcome="succeeded")[0].args
    assert "sk-live-123" not in registry.approval(approval_id).args
    assert "sk-live-123" not in _dump_database(registry.store)


def _dump_database(store: SQLStore) -> str:
    rows = []
    for table in ("receipts", "approvals", "idempotency"):
        rows.extend(store._execute(f"SELECT * FROM {store.table(table)}"))
    return repr(rows)


def test_crash_between_execute_and_receipt_is_unknown_and_never_rerun(store_factory: Any,
                                                                      effect_file: Path) -> None:
    registry = build_registry(store_factory(), effect_file=effect_file)
    approval_id = approved(registry)
    registry.flush()
    child = subprocess.run(
        [sys.executable, str(HERE / "crash_child.py"), *store_factory.spec(), str(effect_file), approval_id, "k-crash"],
        cwd=HERE, capture_output=True, text=True, timeout=60,
    )
    assert child.returncode == -9, child.stdout + child.stderr  # killed by SIGKILL, not an orderly exit
    assert lines(effect_file) == ["acme -> bob: 500"]  # the side effect happened

    restarted = build_registry(store_factory(), effect_file=effect_file)
    for _ in range(2):
        result = restarted.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id,
                                idempotency_key="k-crash")
        assert result.status == "unknown" and result.receipt.outcome == "unknown"
        assert result.error.code == "E505" and not result.error.retryable
        assert "may or may not have taken effect" in result.error.message
    assert lines(effect_file) == ["acme -> bob: 500"]  # never run again
    unresolved = restarted.store.unresolved_writes()
    assert [(u["tool"], u["key"]) for u in unresolved] == [("transfer", "k-crash")]
    assert [r.outcome for r in restarted.receipts(tool="transfer")] == ["approval_required", "unknown", "unknown"]


class _LosesTheReceipt:
    """A real store whose `complete` fails after the side effect, like a database outage."""

    def __init__(self, inner: SQLStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete(self, **kwargs: Any) -> None:
        raise ConnectionError("the database went away")


def test_injected_fault_after_the_side_effect_is_unknown(store_factory: Any, effect_file: Path) -> None:
    store = store_factory()
    registry = build_registry(store, effect_file=effect_file)
    approval_id = approved(registry)
    registry.store = _LosesTheReceipt(store)  # type: ignore[assignment]
    lost = registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k")
    assert lost.status == "unknown" and "could not be recorded" in lost.error.message
    registry.store = store
    again = registry.call("transfer", ARGS, principal=ACME_ALICE, approval=approval_id, idempotency_key="k")
    assert again.status == "unknown"
    assert lines(effect_file) == ["acme -> bob: 500"]


def test_a_failing_write_is_recorded_and_replayed_not_rerun(store_factory: Any, tmp_path: Path) -> None:
    registry = ToolRegistry(store=store_factory())
    runs: list[int] = []

    @registry.tool(effect="write")
    def flaky(n: int) -> int:
        runs.append(n)
        raise RuntimeError("downstream 500")

    pending = registry.call("flaky", {"n": 1}, principal=ACME_ALICE)
    registry.approve(pending.approval.id, approver=APPROVER)
    first = registry.call("flaky", {"n": 1}, principal=ACME_ALICE, approval=pending.approval.id, idempotency_key="k")
    second = registry.call("flaky", {"n": 1}, principal=ACME_ALICE, approval=pending.approval.id, idempotency_key="k")
    assert first.error.code == "E505" and first.receipt.outcome == "tool_error"
    assert second.replayed and second.error.message == first.error.message
    assert runs == [1]


def test_markers_via_json_schema_extra_and_no_secret_in_logs(caplog: pytest.LogCaptureFixture) -> None:
    from pydantic import Field

    registry = ToolRegistry()

    @registry.tool
    def lookup(org: str = Field(json_schema_extra={"x-tenant-key": True}),
               token: str = Field(json_schema_extra={"x-secret": True})) -> str:
        raise RuntimeError(f"upstream rejected token {token}")

    me = Principal("u", "acme")
    with caplog.at_level("DEBUG", logger="formulane.tools"):
        denied = registry.call("lookup", {"org": "globex", "token": "tok-SECRET-1"}, principal=me)
        failed = registry.call("lookup", {"org": "acme", "token": "tok-SECRET-1"}, principal=me)
        invalid = registry.call("lookup", {"org": "acme", "token": 1234567}, principal=me)
    assert denied.error.code == "E503" and failed.error.code == "E505" and invalid.error.code == "E502"
    assert "RuntimeError" in caplog.text  # the failure is logged, with its traceback frames
    for text in (caplog.text, repr(registry.receipts()), failed.text(), invalid.text()):
        assert "tok-SECRET-1" not in text and "1234567" not in text
    assert '"token":"[redacted]"' in registry.receipts(outcome="tool_error")[0].args
