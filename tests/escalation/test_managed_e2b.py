"""The E2B adapter against the real E2B SDK classes, with the network boundary replaced.

The SDK's pyqwest transport hook is pointed at `FakeE2B`, an in-process WSGI E2B API + envd
whose commands really run in the local bubblewrap sandbox. No request leaves the process.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pytest

from formulane.escalation.artifacts import ArtifactStore
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Outcome

from .conftest import MANAGED_STORIES as STORIES
from .conftest import make_job

e2b = pytest.importorskip("e2b", reason="the e2b SDK is not installed (pip install e2b)")

from formulane.escalation.backends.e2b import E2BClient  # noqa: E402
from formulane.escalation.backends.managed import (  # noqa: E402
    EXPIRES_LABEL, JOB_DIR, JOB_LABEL, OWNER_LABEL, WORK_DIR, ManagedBackend,
)

from .e2b_fake import Exec, FakeBox, FakeE2B  # noqa: E402
from .managed_support import run_staged  # noqa: E402


def _run_for_real(sandbox: BubblewrapBackend):  # type: ignore[no-untyped-def]
    def execute(box: FakeBox, command: str, cwd: str) -> Exec:
        code = box.files[f"{JOB_DIR}/main.py"].decode()
        if "# fake: hang" in code:
            return Exec(behaviour="hang")
        if "# fake: drop" in code:
            return Exec(behaviour="drop")
        assert command == f"python3 {JOB_DIR}/run.py" and cwd == WORK_DIR
        exit_code, stdout, stderr = run_staged(sandbox, box.files)
        return Exec(exit_code, stdout.encode(), stderr.encode())

    return execute


@pytest.fixture
def fake(sandbox: BubblewrapBackend, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeE2B]:
    import e2b.api.client_sync as api_sync
    import e2b.envd.client_sync as envd_sync
    from pyqwest.testing import WSGITransport

    from concurrent.futures import ThreadPoolExecutor

    fake_api = FakeE2B(_run_for_real(sandbox))
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="fake-e2b")
    transport = WSGITransport(fake_api, executor=executor)
    monkeypatch.setattr(api_sync, "get_pyqwest_transport", lambda *a, **k: transport)
    monkeypatch.setattr(envd_sync, "get_pyqwest_transport", lambda *a, **k: transport)
    api_sync._httpx_transports.clear()
    yield fake_api
    api_sync._httpx_transports.clear()
    executor.shutdown(wait=True)


@pytest.fixture
def backend(fake: FakeE2B, tmp_path: Path) -> ManagedBackend:
    ids: list[tuple[str, dict[str, str], int]] = []
    managed = ManagedBackend(
        E2BClient(api_key="e2b_test_key", template="base"), owner="formulane-tests",
        artifacts=ArtifactStore(tmp_path / "artifacts"),
        on_provider_ids=lambda job_id, pid: ids.append((job_id, pid, len(fake.log))))
    managed.recorded_ids = ids  # type: ignore[attr-defined]
    return managed


def test_a_job_runs_labelled_with_a_ttl_and_the_sandbox_is_destroyed(
        backend: ManagedBackend, fake: FakeE2B) -> None:
    job = make_job("print('total', inputs['a'] + inputs['b'])\nopen('out.csv', 'w').write('1')",
                   inputs={"a": 2, "b": 3}, artifact_globs=("*.csv",),
                   limits={"wall_timeout_s": 20})
    receipt = backend.run(job)
    assert receipt.outcome is Outcome.SUCCEEDED, (receipt.outcome_detail, fake.log)
    assert receipt.stdout.text == "total 5\n"
    [box] = fake.boxes.values()
    assert box.metadata[OWNER_LABEL] == "formulane-tests"
    assert box.metadata[JOB_LABEL] == str(job.job_id)
    expires = datetime.fromisoformat(box.metadata[EXPIRES_LABEL])
    assert expires > datetime.now(timezone.utc) + timedelta(seconds=20)
    assert box.timeout >= 20 + 60 and box.internet is False
    assert not box.alive and receipt.cleanup.sandbox_destroyed
    assert receipt.provider_ids["sandbox_id"] == box.sandbox_id
    [(job_id, ids, log_at)] = backend.recorded_ids  # type: ignore[attr-defined]
    start_at = fake.log.index(("POST", "/process.Process/Start"))
    assert ids["sandbox_id"] == box.sandbox_id and log_at <= start_at, \
        "provider ids must be stored before the job starts"
    [artifact] = receipt.artifacts
    assert artifact.path == "out.csv" and artifact.complete is True
    assert backend.artifacts.get(artifact.stored_ref or "") == b"1"


@pytest.mark.parametrize("code,outcome", STORIES, ids=[s[1].value for s in STORIES])
def test_outcomes_are_classified_from_the_provider_result(backend: ManagedBackend, code: str,
                                                          outcome: Outcome) -> None:
    receipt = backend.run(make_job(code))
    assert receipt.outcome is outcome, receipt.stderr.text


def test_client_timeout_kills_the_whole_sandbox_and_confirms(backend: ManagedBackend,
                                                             fake: FakeE2B) -> None:
    receipt = backend.run(make_job("# fake: hang\nimport time\ntime.sleep(3600)",
                                   limits={"wall_timeout_s": 1}))
    [box] = fake.boxes.values()
    assert box.alive is False and box.running == [], "the remote process must not live on"
    assert receipt.outcome is Outcome.TIMEOUT_WALL, receipt.outcome_detail
    assert receipt.outcome_basis == "observed"
    assert receipt.cleanup.sandbox_destroyed
    assert ("DELETE", f"/sandboxes/{box.sandbox_id}") in fake.log


@pytest.mark.parametrize("effect,outcome", [("read_only", Outcome.LOST),
                                            ("proposes_change", Outcome.UNKNOWN)])
def test_a_dropped_connection_is_lost_or_unknown_never_success(
        backend: ManagedBackend, fake: FakeE2B, effect: str, outcome: Outcome) -> None:
    receipt = backend.run(make_job("# fake: drop\nprint('x')", side_effect_class=effect))
    assert receipt.outcome is outcome and receipt.outcome_basis == "unknown"
    assert "dropped" in receipt.outcome_detail
    assert all(not b.alive for b in fake.boxes.values())


def test_output_is_capped_on_the_host(backend: ManagedBackend) -> None:
    receipt = backend.run(make_job("import sys\nsys.stdout.write('y' * (3 << 20))",
                                   limits={"stream_kill_bytes": 1 << 20}))
    assert receipt.outcome is Outcome.OUTPUT_LIMIT
    assert receipt.stdout.kept_bytes <= 1 << 20 and receipt.cleanup.sandbox_destroyed


def test_the_startup_reaper_kills_only_our_expired_sandboxes(fake: FakeE2B,
                                                             tmp_path: Path) -> None:
    now = datetime.now(timezone.utc)
    for sid, owner, expires in [("old", "formulane-tests", now - timedelta(hours=1)),
                                ("fresh", "formulane-tests", now + timedelta(hours=1)),
                                ("theirs", "someone-else", now - timedelta(hours=1))]:
        fake.boxes[sid] = FakeBox(sid, {OWNER_LABEL: owner, EXPIRES_LABEL: expires.isoformat()},
                                  60, {}, False)
    managed = ManagedBackend(E2BClient(api_key="e2b_test_key"), owner="formulane-tests",
                             artifacts=ArtifactStore(tmp_path / "a"))
    assert managed.reaped == ["old"]
    assert {s: b.alive for s, b in fake.boxes.items()} == {"old": False, "fresh": True,
                                                            "theirs": True}


def test_reconcile_after_a_restart_kills_what_is_left(backend: ManagedBackend,
                                                      fake: FakeE2B) -> None:
    fake.boxes["left"] = FakeBox("left", {OWNER_LABEL: "formulane-tests"}, 60, {}, False)
    job = make_job("print(1)")
    assert backend.reconcile(job, 1, {"sandbox_id": "left"}) is None
    assert fake.boxes["left"].alive is False


def test_network_open_is_translated(backend: ManagedBackend, fake: FakeE2B) -> None:
    backend.run(make_job("print(1)", network={"mode": "open"}))
    [box] = fake.boxes.values()
    assert box.internet is True


def test_isolation_is_declared_and_checked(backend: ManagedBackend) -> None:
    caps = backend.capabilities()
    assert caps.isolation.value == "microvm" and "Firecracker" in caps.mechanism
    assert not backend.refusals(make_job("print(1)", min_isolation="microvm"))
    assert backend.refusals(make_job("print(1)", network={"mode": "allowlist",
                                                          "allow": ["10.0.0.0/8"]}))
