"""Durable jobs on the real bubblewrap backend: submit, idempotency, cancel, caller timeouts,
and a supervisor killed mid-job (lost → unknown, never retried, when a write was possible)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterator

import pytest

from formulane.errors import EscalationError
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Outcome
from formulane.escalation.jobs import JobManager, ResultTimeout
from formulane.escalation.store import SQLiteJobStore

from .conftest import UID_COUNT, UID_FIRST, job_processes, make_job, shared_environments


@pytest.fixture
def manager(sandbox: BubblewrapBackend, tmp_path: Path) -> Iterator[JobManager]:
    with JobManager(SQLiteJobStore(tmp_path / "jobs.db"), sandbox, workers=2,
                    lease_s=5) as mgr:
        yield mgr


def test_submit_returns_at_once_and_result_waits(manager: JobManager) -> None:
    record = manager.submit(make_job("import time\ntime.sleep(3)\nprint('done')"))
    # No clock needed: the job cannot finish in less than 3 s, so if submit had waited for the
    # run the job would be terminal by now.
    assert record.status == "queued"
    assert manager.status(record.job_id).status in ("queued", "running")
    result = manager.result(record.job_id, timeout=60)
    assert result.outcome is Outcome.SUCCEEDED and result.receipt.stdout.text == "done\n"
    assert manager.status(record.job_id).status == "succeeded"


def test_same_key_same_receipt_no_second_run(manager: JobManager) -> None:
    job = make_job("import os\nprint(os.urandom(8).hex())", key="report-2026-05")
    first = manager.result(manager.submit(job).job_id, timeout=20)
    second_record = manager.submit(job)
    second = manager.result(second_record.job_id, timeout=20)
    assert second_record.job_id == first.record.job_id
    assert second.receipt.sha256 == first.receipt.sha256
    assert len(manager.store.receipts(first.record.job_id)) == 1
    with pytest.raises(EscalationError) as err:
        manager.submit(make_job("print('other work')", key="report-2026-05"))
    assert err.value.code == "E603"


def test_refused_at_submit_when_the_machine_cannot_isolate_enough(manager: JobManager) -> None:
    with pytest.raises(EscalationError) as err:
        manager.submit(make_job("print(1)", min_isolation="microvm"))
    assert err.value.code == "E601" and "microvm isolation" in err.value.message


def test_cancel_a_running_job(manager: JobManager) -> None:
    record = manager.submit(make_job("import time\ntime.sleep(60)"))
    deadline = time.monotonic() + 10
    while manager.status(record.job_id).status != "running" and time.monotonic() < deadline:
        time.sleep(0.02)
    manager.cancel(record.job_id, "user pressed stop")
    result = manager.result(record.job_id, timeout=10)
    assert result.outcome is Outcome.CANCELLED and "user pressed stop" in result.receipt.outcome_detail
    assert result.receipt.cleanup.survivors == 0


def test_cancel_a_queued_job_never_starts_it(sandbox: BubblewrapBackend, tmp_path: Path) -> None:
    with JobManager(SQLiteJobStore(tmp_path / "j.db"), sandbox, start=False) as idle:
        record = idle.submit(make_job("print('must not run')"))
        idle.cancel(record.job_id)
        result = idle.result(record.job_id, timeout=1)
    assert result.outcome is Outcome.CANCELLED and "before it started" in result.receipt.outcome_detail
    assert result.receipt.stdout.total_bytes == 0


def test_caller_timeout_kills_the_job_and_confirms_it(manager: JobManager) -> None:
    t0 = time.monotonic()
    result = manager.run(make_job("import time\nwhile True:\n    time.sleep(0.01)",
                                  limits={"wall_timeout_s": 300}), timeout=0.8)
    assert result.outcome is Outcome.CANCELLED and result.receipt.outcome_basis == "observed"
    assert "caller timed out" in result.receipt.outcome_detail
    assert result.receipt.cleanup.survivors == 0 and not job_processes()
    # Functional: the job loops forever under a 300 s deadline, so only the caller's 0.8 s
    # timeout can end it sooner; 60 s leaves room for a loaded machine.
    assert time.monotonic() - t0 < 60


def test_caller_may_also_leave_the_job_running(manager: JobManager) -> None:
    record = manager.submit(make_job("import time\ntime.sleep(0.6)\nprint('finished')"))
    with pytest.raises(ResultTimeout):
        manager.result(record.job_id, timeout=0.1, on_timeout="leave")
    assert manager.result(record.job_id, timeout=20).receipt.stdout.text == "finished\n"


CHILD = textwrap.dedent("""
    import sys, time
    from formulane.escalation.backends import BubblewrapBackend
    from formulane.escalation.environments import EnvironmentStore
    from formulane.escalation.jobs import JobManager
    from formulane.escalation.store import SQLiteJobStore
    from formulane.escalation.contract import SandboxJob
    state, db, envs, uid_first, uid_count = sys.argv[1:6]
    backend = BubblewrapBackend(state, uid_first=int(uid_first), uid_count=int(uid_count),
                                environments=EnvironmentStore(envs), reap_stale_workspaces=False)
    mgr = JobManager(SQLiteJobStore(db), backend, workers=2, lease_s=60)
    common = dict(tenant="acme", principal="ana", purpose="restart test")
    a = mgr.submit(SandboxJob(idempotency_key="may-write", side_effect_class="proposes_change",
        code="open('partial.txt', 'w').write('half')\\nimport time\\ntime.sleep(60)",
        artifact_globs=("*.txt",), **common))
    b = mgr.submit(SandboxJob(idempotency_key="read-only",
        code="import time\\ntime.sleep(2.5)\\nprint('second attempt done')", **common))
    while True:
        states = [mgr.status(x.job_id).status for x in (a, b)]
        if states == ["running", "running"]:
            break
        time.sleep(0.02)
    time.sleep(0.3)
    print("READY", a.job_id, b.job_id, flush=True)
    time.sleep(120)
""")


def test_supervisor_killed_mid_job_lost_then_unknown_never_retried(
        state_dir: Path, tmp_path: Path) -> None:
    state = state_dir / "restart"
    db = tmp_path / "jobs.db"
    envs = shared_environments().root
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(state), str(db), str(envs), str(UID_FIRST),
         str(UID_COUNT)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline() if child.stdout else ""
        assert line.startswith("READY"), (line, child.stderr.read() if child.stderr else "")
        _, job_a, job_b = line.split()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        for stream in (child.stdout, child.stderr):
            if stream:
                stream.close()
    deadline = time.monotonic() + 5
    while job_processes() and time.monotonic() < deadline:
        time.sleep(0.02)  # the sandboxes die with their parent (--die-with-parent)
    assert not job_processes()

    backend = BubblewrapBackend(state, uid_first=UID_FIRST, uid_count=UID_COUNT,
                                environments=shared_environments(), reap_stale_workspaces=False)
    with JobManager(SQLiteJobStore(db), backend, workers=1, lease_s=5) as mgr:
        assert set(mgr.recovered) == {job_a, job_b}
        a = mgr.status(job_a)
        assert a.status == "unknown" and a.attempt == 1
        lost, unknown = mgr.store.receipts(job_a)
        assert lost.outcome is Outcome.LOST and lost.outcome_basis == "unknown"
        assert unknown.outcome is Outcome.UNKNOWN and unknown.side_effects_possible
        assert "not retried" in unknown.outcome_detail
        [partial] = unknown.artifacts
        assert partial.path == "partial.txt" and partial.complete is None
        assert backend.artifacts.get(partial.stored_ref or "") == b"half"

        b = mgr.result(job_b, timeout=30)
        assert b.outcome is Outcome.SUCCEEDED and b.record.attempt == 2, (
            b.outcome, b.receipt.outcome_detail, b.receipt.stderr.text)
        assert b.receipt.stdout.text == "second attempt done\n"
        assert mgr.status(job_a).status == "unknown"  # still not retried after all that
        assert len(mgr.store.receipts(job_a)) == 2

        settled = mgr.resolve(job_a, Outcome.CANCELLED, by="ops@acme",
                              note="checked: no proposal was sent")
        assert settled.outcome is Outcome.CANCELLED and settled.receipt.outcome_basis == "inferred"
        assert mgr.store.verify_chain()
    backend.close()
    leftovers = [p for p in (state / "workspaces").rglob("*") if p.is_dir()
                 and p.parent.name.startswith("i") and p.name.startswith(job_a)]
    assert not leftovers
