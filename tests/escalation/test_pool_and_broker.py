"""The warm pool (one fresh sandbox per job) and the broker (read-only tools, receipted)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.broker import Broker, StaticCatalog, TypedToolCatalog
from formulane.escalation.contract import Outcome, Principal

from .conftest import UID_COUNT, UID_FIRST, job_processes, make_job, shared_environments


@pytest.fixture
def pooled(state_dir: Path, sandbox: BubblewrapBackend) -> Iterator[BubblewrapBackend]:
    backend = BubblewrapBackend(state_dir / "pooled", uid_first=UID_FIRST, uid_count=UID_COUNT,
                                environments=shared_environments())
    try:
        pool = backend.enable_pool(2)
        # Generous: on a heavily loaded machine a sandbox start can take seconds.
        assert pool.wait_ready(timeout=180), pool.errors
        yield backend
    finally:
        backend.close()  # also when the setup failed: never leave a pool running
    assert not job_processes()


def test_pooled_jobs_run_and_never_share_a_sandbox(pooled: BubblewrapBackend) -> None:
    pool = pooled.pool
    assert pool is not None
    first = pooled.run(make_job("open('/tmp/leftover', 'w').write('x')\n"
                                "open('mine.txt', 'w').write('x')\nprint('one')"))
    assert pool.wait_ready(timeout=180), pool.errors
    second = pooled.run(make_job("import os\nprint(os.path.exists('/tmp/leftover'), "
                                 "os.path.exists('mine.txt'), inputs['n'] * 2)",
                                 inputs={"n": 21}))
    assert first.outcome is second.outcome is Outcome.SUCCEEDED
    assert second.stdout.text == "False False 42\n"
    assert pool.taken == 2


def test_jobs_that_do_not_fit_the_pool_run_cold(pooled: BubblewrapBackend) -> None:
    pool = pooled.pool
    assert pool is not None
    receipt = pooled.run(make_job("print(open('in.txt').read())",
                                  files=[{"path": "in.txt", "content": b"ro", "mode": "ro"}]))
    assert receipt.stdout.text == "ro\n" and pool.taken == 0


def test_pooled_job_limits_still_hold(pooled: BubblewrapBackend) -> None:
    receipt = pooled.run(make_job("import time\ntime.sleep(30)",
                                  limits={"wall_timeout_s": 0.5, "kill_grace_s": 0.1}))
    assert receipt.outcome is Outcome.TIMEOUT_WALL and receipt.cleanup.survivors == 0
    assert pooled.pool is not None and pooled.pool.taken == 1


def test_a_job_that_finds_the_pool_empty_waits_for_the_sandbox_being_finished(
        state_dir: Path, sandbox: BubblewrapBackend) -> None:
    """Right after `enable_pool` the only sandbox is still starting: the job waits for it (up
    to ``take_wait_s``) instead of paying a cold start next to the filler."""
    backend = BubblewrapBackend(state_dir / "pooled-wait", uid_first=UID_FIRST,
                                uid_count=UID_COUNT, environments=shared_environments())
    try:
        # Generous: on a heavily loaded machine a sandbox start can take seconds.
        pool = backend.enable_pool(1, take_wait_s=180.0)
        receipt = backend.run(make_job("print(inputs['n'] + 1)", inputs={"n": 41}))
        assert receipt.outcome is Outcome.SUCCEEDED and receipt.stdout.text == "42\n"
        assert pool.taken == 1, pool.errors
    finally:
        backend.close()
    assert not job_processes()


def test_a_pooled_jobs_workspace_can_be_salvaged_by_its_job_name(
        state_dir: Path, sandbox: BubblewrapBackend) -> None:
    """A pooled box is named when it is built, before any job: the job that takes it records
    its name in the box, so crash recovery finds the workspace by job and attempt."""
    from formulane.escalation.backends import workspace as workspaces

    backend = BubblewrapBackend(state_dir / "pooled-kept", uid_first=UID_FIRST,
                                uid_count=UID_COUNT, environments=shared_environments(),
                                keep_workspaces=True)  # as if the supervisor died mid-job
    try:
        pool = backend.enable_pool(1)
        assert pool.wait_ready(timeout=180), pool.errors
        job = make_job("open('report.csv', 'w').write('half')", artifact_globs=("*.csv",))
        assert backend.run(job).outcome is Outcome.SUCCEEDED and pool.taken == 1
        box = workspaces.find(backend.workspaces_root, f"{job.job_id}-a1")
        assert box is not None and box.name.startswith("pool-")
        [artifact] = backend.salvage(job, 1)
        assert artifact.path == "report.csv" and artifact.complete is None
        assert backend.artifacts.get(artifact.stored_ref or "") == b"half"
        assert workspaces.find(backend.workspaces_root, f"{job.job_id}-a1") is None
    finally:
        backend.close()


# -- broker -----------------------------------------------------------------------------------

def _catalog() -> StaticCatalog:
    catalog = StaticCatalog()

    def revenue(*, principal: Principal, month: str) -> dict[str, Any]:
        return {"tenant": principal.tenant, "month": month, "revenue": 1250.5}

    def refund(*, principal: Principal, invoice: str) -> dict[str, Any]:
        raise AssertionError("a write tool must never be reached from a sandbox")

    def payroll(*, principal: Principal) -> int:
        return 1

    catalog.register("revenue", revenue)
    catalog.register("refund", refund, read_only=False)
    catalog.register("payroll", payroll, scopes=["hr:read"])
    return catalog


@pytest.fixture
def brokered(state_dir: Path, sandbox: BubblewrapBackend) -> Iterator[BubblewrapBackend]:
    backend = BubblewrapBackend(state_dir / "brokered", uid_first=UID_FIRST,
                                uid_count=UID_COUNT, environments=shared_environments(),
                                broker=Broker(_catalog(), max_calls=5))
    try:
        yield backend
    finally:
        backend.close()


CALLS = """
import json, formulane_job
out = {}
for name, args in [("revenue", {"month": "2026-05"}), ("refund", {"invoice": "A1"}),
                   ("payroll", {}), ("secrets", {})]:
    try:
        out[name] = formulane_job.call_tool(name, **args)
    except formulane_job.ToolCallError as e:
        out[name] = e.outcome
print(json.dumps(out))
"""


def test_sandboxed_code_calls_read_only_tools_through_the_broker(
        brokered: BubblewrapBackend) -> None:
    receipt = brokered.run(make_job(CALLS, broker_tools=("revenue", "refund", "payroll")))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    out = json.loads(receipt.stdout.text)
    assert out == {"revenue": {"tenant": "acme", "month": "2026-05", "revenue": 1250.5},
                   "refund": "denied", "payroll": "failed", "secrets": "denied"}
    calls = {c.tool: c for c in receipt.broker_calls}
    assert [c.outcome for c in receipt.broker_calls] == ["ok", "denied", "failed", "denied"]
    assert calls["revenue"].principal == "ana" and calls["revenue"].result_sha256
    assert "not a registered read-only tool" in calls["refund"].error
    assert "did not declare" in calls["secrets"].error


def test_scopes_come_from_the_host_grant_not_from_the_sandbox(
        brokered: BubblewrapBackend) -> None:
    job = make_job("import formulane_job\nprint(formulane_job.call_tool('payroll'))",
                   broker_tools=("payroll",))
    assert brokered.broker is not None
    brokered.broker.grant(job, Principal(subject="ana", tenant="acme",  # type: ignore[attr-defined]
                                         scopes=frozenset({"hr:read"})))
    receipt = brokered.run(job)
    assert receipt.stdout.text == "1\n" and receipt.broker_calls[0].outcome == "ok"


def test_a_forged_token_is_denied_and_no_credential_is_inside(
        brokered: BubblewrapBackend) -> None:
    code = ("import json, os, socket\nticket = json.load(open('/job/broker.json'))\n"
            "print(sorted(ticket), any('TOKEN' in k for k in os.environ))\n"
            "s = socket.socket(socket.AF_UNIX)\ns.connect(ticket['socket'])\n"
            "s.sendall(json.dumps({'token': 'forged', 'tool': 'revenue', 'args': {}}).encode()"
            " + b'\\n')\nprint(s.recv(4096).decode().strip())\n")
    receipt = brokered.run(make_job(code, broker_tools=("revenue",)))
    keys_line, reply = receipt.stdout.text.strip().splitlines()
    assert keys_line == "['socket', 'timeout', 'token', 'tools'] False"
    assert json.loads(reply)["outcome"] == "denied"
    assert receipt.broker_calls[0].outcome == "denied"


def test_the_channel_expires_and_limits_calls(tmp_path: Path) -> None:
    broker = Broker(_catalog(), max_calls=1)
    job = make_job("pass", broker_tools=("revenue",))
    channel, ticket = broker.open_channel(job, socket_path=tmp_path / "b.sock", peer_uid=None,
                                          expires_in_s=0.3)
    token = json.loads(ticket)["token"]

    def call() -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(tmp_path / "b.sock"))
            s.sendall(json.dumps({"token": token, "tool": "revenue",
                                  "args": {"month": "m"}}).encode() + b"\n")
            return json.loads(s.recv(65536))

    try:
        assert call()["ok"]
        assert call()["outcome"] == "denied"  # max_calls=1
        time.sleep(0.4)
        assert call()["outcome"] == "expired"
    finally:
        calls = channel.close()
    assert [c.outcome for c in calls] == ["ok", "denied", "expired"]
    assert not (tmp_path / "b.sock").exists()


def test_typed_tool_registry_adapter(brokered: BubblewrapBackend) -> None:
    typed = pytest.importorskip("formulane.typed_tools")
    registry = typed.ToolRegistry()

    @registry.tool
    def invoice_total(invoice_id: str) -> float:
        """Total of one invoice.

        Args:
            invoice_id: the invoice number.
        """
        return {"A1": 99.5}.get(invoice_id, 0.0)

    catalog = TypedToolCatalog(registry)
    assert catalog.is_read_only("invoice_total")
    backend_broker = Broker(catalog)
    brokered.broker = backend_broker
    receipt = brokered.run(make_job(
        "import formulane_job\nprint(formulane_job.call_tool('invoice_total', invoice_id='A1'))\n"
        "try:\n    formulane_job.call_tool('invoice_total', invoice_id=5)\n"
        "except formulane_job.ToolCallError as e:\n    print(e.outcome)",
        broker_tools=("invoice_total",)))
    registry.close()
    assert receipt.stdout.text.split() == ["99.5", "failed"], receipt.stderr.text
