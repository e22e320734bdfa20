"""Shared fixtures for the escalation lane: a real bubblewrap backend and suite-wide hygiene.

The hygiene fixtures are the suite's own containment check: after every test no process may run
under the test job uids, and at the end of the session no formulane thread, job cgroup or
workspace mount may be left behind. The backend fixtures are package-scoped
so that they are torn down (pools, sessions, threads closed) before the hygiene check runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.backends.cgroups import ROOT_NAME, discover, instance_name
from formulane.escalation.capabilities import probe
from formulane.escalation.contract import Outcome, SandboxJob
from formulane.escalation.environments import EnvironmentStore

# Two suites running at once on one machine (two engineers, or CI shards) each need their own
# range: the hygiene checks below count every process of the range as a leftover.
UID_FIRST = int(os.environ.get("FORMULANE_TEST_UID_FIRST", "191000"))
UID_COUNT = 48
_UIDS = range(UID_FIRST, UID_FIRST + UID_COUNT)


def sdk_thread(thread: threading.Thread) -> bool:
    """A thread a third-party SDK keeps for the life of the process, by what it runs: the Modal
    SDK's synchronicity event loop (started on first use, never stopped by design). Anything
    else alive after the suite is a hung harness thread."""
    target = getattr(thread, "_target", None)
    return (getattr(target, "__module__", "") == "synchronicity.synchronizer"
            and getattr(target, "__qualname__", "").endswith("thread_inner"))


def job_processes() -> list[tuple[int, int]]:
    """(pid, uid) of every live, non-zombie process owned by a test job uid."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            uid = entry.stat(follow_symlinks=False).st_uid
            if uid not in _UIDS:
                continue
            state = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append((int(entry.name), uid))
    return found


def shared_environments() -> EnvironmentStore:
    """Environments are content-addressed, so test sessions may share one store (faster)."""
    root = Path(os.environ.get("FORMULANE_TEST_ENV_CACHE", "/tmp/formulane-test-environments"))
    return EnvironmentStore(root)


#: (code, outcome) every managed adapter must classify exactly like the local backend.
MANAGED_STORIES = [
    ("raise ValueError('bad column')", Outcome.USER_ERROR),
    ("import definitely_not_installed_pkg", Outcome.MISSING_PACKAGE),
    ("input('name? ')", Outcome.INPUT_REQUIRED),
    ("import os\nos.abort()", Outcome.CRASHED),
]


@contextlib.contextmanager
def cold_or_pooled(kind: str, sandbox: BubblewrapBackend,
                   directory: Path) -> Iterator[BubblewrapBackend]:
    """The package's cold backend (``kind == "cold"``), or a fresh backend in ``directory``
    whose warm pool runs the test's job (checked when the test passes), closed afterwards."""
    if kind == "cold":
        yield sandbox
        return
    pooled = BubblewrapBackend(directory, uid_first=UID_FIRST, uid_count=UID_COUNT,
                               environments=shared_environments())
    try:
        pool = pooled.enable_pool(2)
        assert pool.wait_ready(timeout=180), pool.errors
        yield pooled
        assert pool.taken >= 1, "the job did not run in a pooled sandbox"
    finally:
        pooled.close()


def make_job(code: str, **kw: Any) -> SandboxJob:
    base: dict[str, Any] = dict(idempotency_key=kw.pop("key", f"k-{os.urandom(6).hex()}"),
                                tenant="acme", principal="ana", purpose="test: " + code[:40])
    base.update(kw)
    return SandboxJob(code=code, **base)


@pytest.fixture(scope="package")
def state_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="formulane-test-", dir="/tmp"))
    os.chmod(path, 0o711)
    yield path
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
              if line.split()[4].startswith(str(path))]
    shutil.rmtree(path, ignore_errors=True)
    assert not mounts, f"workspace mounts left behind: {mounts}"


@pytest.fixture(scope="package")
def sandbox(state_dir: Path) -> Iterator[BubblewrapBackend]:
    caps = probe()
    if not caps.bwrap:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    backend = BubblewrapBackend(state_dir / "bwrap", uid_first=UID_FIRST, uid_count=UID_COUNT,
                                environments=shared_environments())
    available = backend.capabilities()
    if not available.available:
        backend.close()
        if os.geteuid() != 0:
            pytest.skip(f"bubblewrap cannot build a sandbox here: {available.unavailable_reason}")
        pytest.fail(f"bubblewrap is installed but unusable as root: {available.unavailable_reason}")
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture(autouse=True)
def _no_job_processes_after_each_test() -> Iterator[None]:
    yield
    left = job_processes()
    assert not left, f"processes of sandbox job uids survived the test: {left}"


# Package scope: the check covers the escalation suite only, not threads that other suites
# (typed tools' receipt writers) start later in the same pytest session.
@pytest.fixture(scope="package", autouse=True)
def _suite_hygiene() -> Iterator[None]:
    # Thread objects, not idents: an ident is reused once its thread ends, which could hide a
    # hung thread behind one that existed before the suite.
    before = set(threading.enumerate())
    yield
    threads = [t for t in threading.enumerate()
               if t not in before and t.is_alive() and not sdk_thread(t)]
    for thread in threads:
        # A thread finishing its last step right after its owner closed is not hung: give
        # each a bounded moment, then report whatever is still running.
        thread.join(timeout=5)
    hung = [t.name for t in threads if t.is_alive()]
    assert not hung, f"harness threads still alive after the suite: {hung}"
    assert not job_processes(), f"orphans after the suite: {job_processes()}"
    leftovers = []
    for mount in set(discover().paths.values()):
        inst = mount / ROOT_NAME / instance_name()
        if inst.is_dir():
            leftovers += [p.name for p in inst.iterdir() if p.is_dir()]
    assert not leftovers, f"job cgroups left behind: {leftovers}"
