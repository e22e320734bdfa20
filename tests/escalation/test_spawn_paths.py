"""How a sandbox is started: the interpreter's move into its cgroup and the compiled bootstrap.

The interpreter is moved into the job's cgroup while it starts (`Running._join_early`, after the
wrapper was moved into the backend's launch group to start the kernel's grace period early),
or, when it was not found in time, after its ``R`` as before. Either way it must be in every
leaf of the job's group before the configuration is sent, so every process the job starts is
born inside. Both paths are run here on the real bubblewrap backend, and the job checks from
the inside that a process it forks is counted by the pids limit. The bootstrap runs from a
``.pyc`` compiled for the sandbox's path when the environment is this interpreter's version,
and from its source otherwise; tracebacks read the same either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from formulane.escalation.backends import BubblewrapBackend, supervisor
from formulane.escalation.backends.bubblewrap import _bootstrap_file
from formulane.escalation.backends.runner import Resources
from formulane.escalation.contract import Outcome

from .conftest import UID_COUNT, UID_FIRST, make_job, shared_environments


@pytest.fixture(params=["early", "after-ready"])
def backend(request: pytest.FixtureRequest, sandbox: BubblewrapBackend, state_dir: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[BubblewrapBackend]:
    if request.param == "after-ready":
        # The starting interpreter is "not found": the join happens after its R, as it does
        # when the sandbox is slower to fork it than the status pipe is to speak.
        monkeypatch.setattr(supervisor.Running, "_join_early", lambda self, *a, **k: None)
    b = BubblewrapBackend(state_dir / f"spawn-{request.param}", uid_first=UID_FIRST,
                          uid_count=UID_COUNT, environments=shared_environments())
    try:
        yield b
    finally:
        b.close()


def test_the_waiting_interpreter_is_in_every_leaf_of_its_group(backend: BubblewrapBackend
                                                                ) -> None:
    if backend.cg_support.version is None:
        pytest.skip("no cgroups on this machine")
    env = backend.environments.get()
    res = Resources()
    running = None
    try:
        backend._allocate(None, 0, res, name="spawn-check")
        template = make_job("pass")
        running = backend._spawn(template, env, res)
        chain = running._chain()
        assert chain is not None and len(chain) == 3, chain  # bwrap, its init, the interpreter
        interpreter = chain[-1]
        assert res.cgroup is not None
        for leaf in res.cgroup._leaves():
            members = (leaf / "cgroup.procs").read_text().split()
            assert str(interpreter) in members, (leaf, members)
        # The wrapper and the namespace's init stay outside the job's groups.
        assert not {chain[0], chain[1]} & res.cgroup.pids()
    finally:
        if running is not None:
            running.close()
            running.sweep()
        res.release(backend.uids)


def test_a_forked_child_counts_against_the_pids_limit(backend: BubblewrapBackend) -> None:
    # With max_processes=2 the interpreter and one child fit, a second child does not: only
    # true if the interpreter was in the pids group before it forked anything.
    code = ("import os, time\n"
            "kids = []\n"
            "for i in range(2):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except OSError as exc:\n"
            "        print('refused', i, exc.errno)\n"
            "        break\n"
            "    if pid == 0:\n"
            "        time.sleep(0.5)\n"  # still alive when the parent forks again
            "        os._exit(0)\n"
            "    kids.append(pid)\n"
            "for pid in kids:\n"
            "    os.waitpid(pid, 0)\n")
    receipt = backend.run(make_job(code, limits={"max_processes": 2}))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    assert "refused 1" in receipt.stdout.text, receipt.stdout.text
    assert receipt.cleanup.survivors == 0


def test_the_compiled_bootstrap_runs_and_tracebacks_read_as_from_source(
        backend: BubblewrapBackend) -> None:
    env = backend.environments.get()
    assert _bootstrap_file(env) == "bootstrap.pyc"
    assert _bootstrap_file(env.model_copy(update={"version": "3.0.0"})) == "bootstrap.py"
    receipt = backend.run(make_job("def f():\n    return 1 / 0\nf()\n"))
    assert receipt.outcome is Outcome.USER_ERROR
    text = receipt.stderr.text
    # The job's last statement is an expression, evaluated for the result channel.
    assert 'File "/job/bootstrap.py", line' in text and "eval(expr, g)" in text, text
    assert "ZeroDivisionError: division by zero" in text


def test_a_cold_job_takes_the_prepared_spare_once_and_finds_it_empty(
        sandbox: BubblewrapBackend, state_dir: Path) -> None:
    b = BubblewrapBackend(state_dir / "spare", uid_first=UID_FIRST, uid_count=UID_COUNT,
                          environments=shared_environments())
    try:
        assert b.spare is not None
        first = b.run(make_job("open('left.txt', 'w').write('x')\nprint('wrote')"))
        assert first.outcome is Outcome.SUCCEEDED and b.spare.taken == 0  # none before a run
        assert b.spare.wait_ready(timeout=60), b.spare.errors
        second = b.run(make_job("import os\nprint(sorted(os.listdir('.')))\nprint(inputs['n'])",
                                inputs={"n": 7}))
        assert second.outcome is Outcome.SUCCEEDED, second.stderr.text
        assert b.spare.taken == 1
        assert second.stdout.text == "['.formulane']\n7\n"  # nothing of the first job
        assert second.cleanup.survivors == 0 and second.cleanup.workspace_removed
        # Another workspace size cannot use the tmpfs mounted for the default: it waits.
        assert b.spare.wait_ready(timeout=60), b.spare.errors
        third = b.run(make_job("print(3)", limits={"workspace_bytes": 32 * 1024 * 1024}))
        assert third.outcome is Outcome.SUCCEEDED and b.spare.taken == 1
    finally:
        b.close()


def test_a_kept_spare_workspace_is_found_by_its_job_for_salvage(
        sandbox: BubblewrapBackend, state_dir: Path) -> None:
    b = BubblewrapBackend(state_dir / "spare-kept", uid_first=UID_FIRST, uid_count=UID_COUNT,
                          environments=shared_environments(), keep_workspaces=True)
    try:
        assert b.spare is not None
        warmup = make_job("pass")
        b.run(warmup)
        assert b.salvage(warmup, 1) == ()  # deletes its kept workspace
        assert b.spare.wait_ready(timeout=60), b.spare.errors
        job = make_job("open('out.txt', 'w').write('kept')", artifact_globs=("out.txt",))
        b.run(job)
        assert b.spare.taken == 1
        [artifact] = b.salvage(job, 1)  # as after a crash: found by job id and attempt
        assert b.artifacts.get(artifact.stored_ref or "") == b"kept"
    finally:
        b.close()
