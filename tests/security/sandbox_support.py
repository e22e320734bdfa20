"""Fixtures of the sandbox families of the security suite: the real bubblewrap backend, job
stores on SQLite and PostgreSQL, and a check that no job process outlives a test.

The sandbox families use their own range of job uids (193000-193015), apart from the
escalation suite's, so the two suites may run at once on one machine. Test files import
the fixtures they use from here (``from .sandbox_support import ...``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.capabilities import probe
from formulane.escalation.contract import SandboxJob
from formulane.escalation.environments import EnvironmentStore
from formulane.escalation.store import JobStore, PostgresJobStore, SQLiteJobStore

UID_FIRST = 193_000
UID_COUNT = 16
PG_URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")
CASES_DIR = Path(__file__).parent / "cases"


def load_cases(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load((CASES_DIR / name).read_text())


def case_ids(cases: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for c in cases]


def make_job(code: str, **kw: Any) -> SandboxJob:
    base: dict[str, Any] = dict(idempotency_key=kw.pop("key", f"k-{os.urandom(6).hex()}"),
                                tenant="acme", principal="ana", purpose="security: " + code[:40])
    base.update(kw)
    return SandboxJob(code=code, **base)


def job_uid_processes() -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid not in range(UID_FIRST,
                                                                    UID_FIRST + UID_COUNT):
                continue
            state = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def new_backend(directory: Path, **kwargs: Any) -> BubblewrapBackend:
    env_root = Path(os.environ.get("FORMULANE_TEST_ENV_CACHE", "/tmp/formulane-test-environments"))
    return BubblewrapBackend(directory, uid_first=UID_FIRST, uid_count=UID_COUNT,
                             environments=EnvironmentStore(env_root), **kwargs)


@pytest.fixture(scope="module")
def sbx_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="formulane-sec-", dir="/tmp"))
    os.chmod(path, 0o711)
    yield path
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
              if line.split()[4].startswith(str(path))]
    shutil.rmtree(path, ignore_errors=True)
    assert not mounts, f"mounts left behind: {mounts}"


@pytest.fixture(scope="module")
def bwrap(sbx_dir: Path) -> Iterator[BubblewrapBackend]:
    if not probe().bwrap:
        pytest.skip("bubblewrap is not installed")
    backend = new_backend(sbx_dir / "bwrap")
    if not backend.capabilities().available:
        reason = backend.capabilities().unavailable_reason
        backend.close()
        pytest.skip(f"bubblewrap cannot build a sandbox here: {reason}")
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture(params=["sqlite", "postgres"])
def job_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobStore]:
    if request.param == "sqlite":
        opened: JobStore = SQLiteJobStore(tmp_path / "jobs.db")
        yield opened
        opened.close()
        return
    if not PG_URL:
        pytest.skip("FORMULANE_TEST_POSTGRES_URL is not set: PostgreSQL store not tested")
    pg = PostgresJobStore(PG_URL, schema=f"sec_sbx_{uuid.uuid4().hex[:12]}")
    try:
        yield pg
    finally:
        pg.drop_schema()
        pg.close()


@pytest.fixture(autouse=True)
def no_job_process_survives() -> Iterator[None]:
    yield
    left = job_uid_processes()
    assert not left, f"processes of sandbox job uids survived the test: {left}"
