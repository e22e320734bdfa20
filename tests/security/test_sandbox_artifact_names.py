"""Artifact names a job makes never stop the escalation lane (issue 15 item 1).

Family: artifact names (cases/sandbox_artifact_names.yaml). On the real bubblewrap backend
under a `JobManager` with a real store (SQLite and PostgreSQL): every job ends with a stored
receipt, a name that is not valid UTF-8 is refused and shown escaped in the receipt's events,
the job's other artifacts are collected, and the worker goes on to run the next job. A worker
also survives a backend that raises anything at all.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import pytest

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import CancelToken, Outcome, Receipt, SandboxJob
from formulane.escalation.jobs import JobManager
from formulane.escalation.store import JobStore

from .sandbox_support import (  # noqa: F401  (fixtures)
    bwrap, case_ids, job_store, load_cases, make_job, no_job_process_survives, sbx_dir,
)

CASES = load_cases("sandbox_artifact_names.yaml")


def _paths(case: dict[str, Any]) -> list[bytes]:
    out = []
    for raw in case["files"]:
        count = case.get("count")
        for i in range(count) if count else [None]:
            text = raw.replace("{i}", str(i)) if i is not None else raw
            out.append(codecs.escape_decode(text.encode("ascii"))[0])
    return out


def _writer(paths: list[bytes]) -> str:
    return ("import os\n"
            f"for p in {paths!r}:\n"
            "    d = os.path.dirname(p)\n"
            "    if d:\n"
            "        os.makedirs(d, exist_ok=True)\n"
            "    with open(p, 'wb') as f:\n"
            "        f.write(b'x')\n"
            f"print('wrote', {len(paths)})\n")


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_any_artifact_name_ends_with_a_stored_receipt(case: dict[str, Any], bwrap: BubblewrapBackend,
                                                      job_store: JobStore) -> None:
    with JobManager(job_store, bwrap, workers=1, lease_s=10) as manager:
        result = manager.run(make_job(_writer(_paths(case)), artifact_globs=("**",)), timeout=60)
        stored = job_store.latest(result.record.job_id)
        assert stored is not None and stored.sha256 == result.receipt.sha256
        assert result.outcome is Outcome.SUCCEEDED, result.receipt.outcome_detail
        assert sorted(a.path for a in stored.artifacts) == sorted(case["collected"])
        events = "\n".join(stored.events)
        for text in case["refused"]:
            assert text in events
        assert len(stored.events) <= 25
        assert job_store.verify_chain()
        # The worker is alive: the next job runs.
        after = manager.run(make_job("print('next')"), timeout=60)
        assert after.outcome is Outcome.SUCCEEDED and after.receipt.stdout.text == "next\n"


class _Exploding:
    """Wraps the real backend; its run raises what the case names (a backend bug)."""

    def __init__(self, real: BubblewrapBackend, error: BaseException) -> None:
        self.real, self.error, self.name = real, error, real.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def run(self, job: SandboxJob, *, cancel: CancelToken | None = None,
            attempt: int = 1) -> Receipt:
        if "explode" in job.purpose:
            raise self.error
        return self.real.run(job, cancel=cancel, attempt=attempt)


BACKEND_ERRORS = [
    RecursionError("maximum recursion depth exceeded"),
    UnicodeEncodeError("utf-8", "bad\udcff", 3, 4, "surrogates not allowed"),
    KeyError("missing"),
    OSError(24, "Too many open files"),
    ValueError("bad\udcffname"),
]


@pytest.mark.parametrize("error", BACKEND_ERRORS, ids=lambda e: type(e).__name__)
def test_a_worker_survives_any_exception_from_one_job(error: BaseException, bwrap: BubblewrapBackend,
                                                      job_store: JobStore) -> None:
    backend = _Exploding(bwrap, error)
    with JobManager(job_store, {bwrap.name: backend}, workers=1, lease_s=10) as manager:  # type: ignore[dict-item]
        failed = manager.run(make_job("print(1)", purpose="explode"), timeout=60)
        assert failed.outcome is Outcome.SANDBOX_ERROR
        assert type(error).__name__ in failed.receipt.outcome_detail
        assert job_store.latest(failed.record.job_id) is not None
        later = [manager.submit(make_job(f"print({i})")) for i in range(3)]
        for i, record in enumerate(later):
            result = manager.result(record.job_id, timeout=60)
            assert result.outcome is Outcome.SUCCEEDED and result.receipt.stdout.text == f"{i}\n"


OUTPUT_BYTES = [
    ("nul_bytes", "import sys\nsys.stdout.buffer.write(b'a\\x00b')\nsys.stderr.buffer.write(b'\\x00')"),
    ("invalid_utf8", "import sys\nsys.stdout.buffer.write(b'bad\\xff\\xfe')"),
    ("lone_surrogate_text", "print('\\udcff')"),
    ("surrogate_in_result", "result = 'x\\udcffy'"),
]


@pytest.mark.parametrize("code", [c for _, c in OUTPUT_BYTES], ids=[i for i, _ in OUTPUT_BYTES])
def test_any_output_bytes_end_with_a_stored_receipt(code: str, bwrap: BubblewrapBackend,
                                                    job_store: JobStore) -> None:
    with JobManager(job_store, bwrap, workers=1, lease_s=10) as manager:
        result = manager.run(make_job(code), timeout=60)
        stored = job_store.latest(result.record.job_id)
        assert stored is not None and stored.sha256 == result.receipt.sha256
        assert job_store.verify_chain()
        assert result.outcome is Outcome.SUCCEEDED, result.receipt.outcome_detail
