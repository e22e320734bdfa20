"""The Daytona adapter against the real Daytona SDK classes, with the network boundary replaced.

`FakeDaytona` answers on 127.0.0.1 as the Daytona API and toolbox; the SDK's urllib3 stack is
untouched. Commands really run in the local bubblewrap sandbox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from formulane.escalation.artifacts import ArtifactStore
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Outcome

from .conftest import MANAGED_STORIES as STORIES
from .conftest import make_job

pytest.importorskip("daytona", reason="the daytona SDK is not installed (pip install daytona)")

from formulane.escalation.backends.daytona import DaytonaClient  # noqa: E402
from formulane.escalation.backends.managed import (  # noqa: E402
    JOB_LABEL, OWNER_LABEL, ManagedBackend,
)

from .daytona_fake import DayBox, DayExec, FakeDaytona  # noqa: E402
from .managed_support import run_staged  # noqa: E402


@pytest.fixture
def fake(sandbox: BubblewrapBackend) -> Iterator[FakeDaytona]:
    def execute(box: DayBox, command: str, cwd: str) -> DayExec:
        code = box.files["/tmp/formulane-job/main.py"].decode()
        if "# fake: timeout" in code:
            return DayExec(behaviour="timeout")
        if "# fake: drop" in code:
            return DayExec(behaviour="drop")
        exit_code, stdout, stderr = run_staged(sandbox, box.files)
        return DayExec(exit_code, stdout, stderr)

    server = FakeDaytona(execute)
    yield server
    server.close()


@pytest.fixture
def backend(fake: FakeDaytona, tmp_path: Path) -> Iterator[ManagedBackend]:
    managed = ManagedBackend(DaytonaClient(api_key="dtn_test", api_url=fake.url),
                             owner="formulane-tests", artifacts=ArtifactStore(tmp_path / "a"),
                             kill_confirm_s=5)
    yield managed
    managed.close()


def test_a_job_runs_and_the_sandbox_is_deleted(backend: ManagedBackend,
                                               fake: FakeDaytona) -> None:
    job = make_job("print(sum(inputs['xs']))\nopen('report.txt', 'w').write('ok')",
                   inputs={"xs": [1, 2, 3]}, artifact_globs=("*.txt",))
    receipt = backend.run(job)
    assert receipt.outcome is Outcome.SUCCEEDED, (receipt.outcome_detail, fake.log)
    assert receipt.stdout.text == "6\n"
    [box] = fake.boxes.values()
    assert box.labels[OWNER_LABEL] == "formulane-tests" and box.labels[JOB_LABEL] == str(job.job_id)
    assert box.network_block_all is True and box.auto_stop >= 1
    assert not box.alive and receipt.cleanup.sandbox_destroyed
    assert [(a.path, a.complete) for a in receipt.artifacts] == [("report.txt", True)]


@pytest.mark.parametrize("code,outcome", STORIES, ids=[s[1].value for s in STORIES])
def test_stderr_is_recovered_for_classification(backend: ManagedBackend, code: str,
                                                outcome: Outcome) -> None:
    receipt = backend.run(make_job(code))
    assert receipt.outcome is outcome, receipt.stderr.text


def test_a_provider_timeout_deletes_the_sandbox(backend: ManagedBackend,
                                                fake: FakeDaytona) -> None:
    receipt = backend.run(make_job("# fake: timeout\nimport time\ntime.sleep(999)",
                                   limits={"wall_timeout_s": 2}))
    assert receipt.outcome is Outcome.TIMEOUT_WALL and receipt.cleanup.sandbox_destroyed
    assert all(not b.alive for b in fake.boxes.values())


def test_a_dropped_connection_is_never_a_success(backend: ManagedBackend,
                                                 fake: FakeDaytona) -> None:
    receipt = backend.run(make_job("# fake: drop\nprint(1)", network={"mode": "open"}))
    assert receipt.outcome is Outcome.UNKNOWN, receipt.outcome_detail  # network open: effects
    assert all(not b.alive for b in fake.boxes.values())
    [box] = fake.boxes.values()
    assert box.network_block_all is False


def test_reaper_and_reconcile(fake: FakeDaytona, tmp_path: Path) -> None:
    fake.boxes["stale"] = DayBox("stale", {OWNER_LABEL: "formulane-tests",
                                           "formulane-expires": "2000-01-01T00:00:00+00:00"},
                                 False, 1, {})
    fake.boxes["mine"] = DayBox("mine", {OWNER_LABEL: "formulane-tests",
                                         "formulane-expires": "2999-01-01T00:00:00+00:00"},
                                False, 1, {})
    managed = ManagedBackend(DaytonaClient(api_key="k", api_url=fake.url),
                             owner="formulane-tests", artifacts=ArtifactStore(tmp_path / "a"))
    try:
        assert managed.reaped == ["stale"] and fake.boxes["mine"].alive
        managed.reconcile(make_job("print(1)"), 1, {"sandbox_id": "mine"})
        assert not fake.boxes["mine"].alive
    finally:
        managed.close()
