"""The start-up and teardown shortcuts of the local runner keep what a job and its receipt see.

Pinned here, on the real bubblewrap backend, cold and through the warm pool:

* the bootstrap freezes its start-up heap (``gc.freeze``) before the job, so the exit-time
  collection looks at the job's objects only; the job's own reference cycles are still
  collected at exit (``__del__`` runs, a file held only by a cycle is flushed whole);
* the compiler's one-time set-up happens before the job: a syntax error found inside the
  sandbox (the host only parses) still reads as Python reports it;
* the input values travel in the configuration frame (no file): values and files, read-write
  and read-only, reach the job;
* a sandbox that fails before it is ready is killed and its control pipes are closed once
  (E602, nothing leaked, the next job runs);
* the receipt's parts built while the job runs are the ones computed at the end.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from formulane.errors import EscalationError
from formulane.escalation.backends import BubblewrapBackend, supervisor
from formulane.escalation.backends import workspace as workspaces
from formulane.escalation.backends.runner import Resources
from formulane.escalation.contract import Outcome

from .conftest import cold_or_pooled, make_job


@pytest.fixture(params=["cold", "pooled"])
def backend(request: pytest.FixtureRequest, sandbox: BubblewrapBackend,
            state_dir: Path) -> Iterator[BubblewrapBackend]:
    with cold_or_pooled(request.param, sandbox,
                        state_dir / f"fast-{request.node.name[-16:]}") as chosen:
        yield chosen


def test_the_jobs_reference_cycles_are_still_collected_at_exit(
        backend: BubblewrapBackend) -> None:
    code = ("import gc\n"
            "class Node:\n"
            "    def __init__(self, name):\n        self.name = name\n        self.peer = None\n"
            "    def __del__(self):\n        print('del', self.name, flush=True)\n"
            "a, b = Node('a'), Node('b')\n"
            "a.peer, b.peer = b, a\n"          # a cycle: only the collector can free it
            "a.log = open('cycle.txt', 'w')\n"  # held only through the cycle, never closed
            "a.log.write('y' * 50000 + 'END')\n"
            "print('frozen', gc.get_freeze_count() > 0)\n"
            "del a, b\n")
    receipt = backend.run(make_job(code, artifact_globs=("cycle.txt",)))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    lines = receipt.stdout.text.splitlines()
    assert lines[0] == "frozen True"
    assert sorted(lines[1:]) == ["del a", "del b"], lines
    [artifact] = receipt.artifacts
    data = backend.artifacts.get(artifact.stored_ref or "")
    assert len(data) == 50003 and data.endswith(b"END")


def test_a_syntax_error_found_in_the_sandbox_reads_as_python_reports_it(
        backend: BubblewrapBackend) -> None:
    # Parses on the host (which never compiles), fails when the sandbox compiles it.
    receipt = backend.run(make_job("def f():\n    pass\nreturn 1\n"))
    assert receipt.outcome is not Outcome.SUCCEEDED
    assert "SyntaxError: 'return' outside function" in receipt.stderr.text
    assert 'File "/job/main.py", line 3' in receipt.stderr.text


def test_files_and_values_reach_the_job_whichever_way_they_are_staged(
        backend: BubblewrapBackend) -> None:
    code = ("print(open('data/rw.txt').read(), n * 2)\n"
            "open('data/rw.txt', 'a').write('+')\n")
    rw_only = backend.run(make_job(code, inputs={"n": 21}, files=[
        {"path": "data/rw.txt", "content": b"rw", "mode": "rw"}]))
    assert rw_only.outcome is Outcome.SUCCEEDED, rw_only.stderr.text
    assert rw_only.stdout.text == "rw 42\n"
    with_ro = backend.run(make_job(code + "print(open('ro.txt').read())\n", inputs={"n": 1},
                                   files=[{"path": "data/rw.txt", "content": b"rw2", "mode": "rw"},
                                          {"path": "ro.txt", "content": b"ro", "mode": "ro"}]))
    assert with_ro.outcome is Outcome.SUCCEEDED, with_ro.stderr.text
    assert with_ro.stdout.text == "rw2 2\nro\n"


def test_a_sandbox_that_never_reports_ready_is_killed_and_its_pipes_closed_once(
        sandbox: BubblewrapBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox.run(make_job("pass"))  # settles the spare and the launch group
    assert sandbox.spare is not None and sandbox.spare.wait_ready(timeout=30)
    before = _open_fds()
    # The interpreter is "never found": `spawn` kills the sandbox and closes the control
    # pipes it had handed to the `Running`; the runner must not close them a second time
    # (that raised EBADF, or closed a descriptor another thread had opened meanwhile).
    monkeypatch.setattr(supervisor.Running, "adopt", lambda self, *a, **k: False)
    with pytest.raises(EscalationError) as info:
        sandbox.run(make_job("print('never')"))
    assert info.value.code == "E602"
    monkeypatch.undo()
    receipt = sandbox.run(make_job("print('next')"))
    assert receipt.outcome is Outcome.SUCCEEDED and receipt.stdout.text == "next\n"
    assert receipt.cleanup.survivors == 0
    assert sandbox.spare.wait_ready(timeout=30)
    leaked = _open_fds() - before
    assert not leaked, leaked


def _open_fds() -> Counter[str]:
    """How many descriptors of each kind this process holds (numbers masked: the spare may
    hold another uid slot's lock, a pipe another inode), without the listing's own."""
    out: Counter[str] = Counter()
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[re.sub(r"\d+", "N", os.readlink(f"/proc/self/fd/{fd}"))] += 1
        except OSError:
            continue  # the directory descriptor listdir used, closed already
    return out


def test_the_receipt_parts_built_during_the_run_match_the_end(
        sandbox: BubblewrapBackend) -> None:
    job = make_job("print(1)", inputs={"x": [1, 2]}, files=[
        {"path": "f.txt", "content": b"f", "mode": "rw"}])
    receipt = sandbox.run(job)
    assert receipt.outcome is Outcome.SUCCEEDED
    res = Resources(uid=190_000, used_cgroup=sandbox.cg_support.version is not None)
    res.workspace = workspaces.Workspace(Path("/nonexistent"), 0, 0,
                                         mounted=sandbox.use_tmpfs)
    parts = sandbox.receipt_parts(job, res)
    assert receipt.inputs == parts["inputs"]
    assert receipt.limits_enforced == parts["limits_enforced"]
    assert receipt.network_enforcement == parts["network_enforcement"]
    assert receipt.capabilities == parts["capabilities"]
