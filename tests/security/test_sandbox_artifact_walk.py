"""Artifact collection walks any tree iteratively, with bounds (issue 15 item 7).

Family: artifact walk (cases/sandbox_artifact_walk.yaml), on the real bubblewrap backend with
a walk bound of 64 levels and 1,000 entries, run directly and under a `JobManager`: no
RecursionError, the job keeps its own outcome (not ``sandbox_error``), the receipt lists what
was collected and says in its events what was cut.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Outcome, Receipt
from formulane.escalation.jobs import JobManager
from formulane.escalation.store import SQLiteJobStore

from .sandbox_support import (  # noqa: F401  (fixtures)
    case_ids, load_cases, make_job, new_backend, no_job_process_survives,
)

CASES = load_cases("sandbox_artifact_walk.yaml")


@pytest.fixture(scope="module")
def bounded() -> Iterator[BubblewrapBackend]:
    path = Path(tempfile.mkdtemp(prefix="formulane-sec-walk-", dir="/tmp"))
    os.chmod(path, 0o711)
    backend = new_backend(path, artifact_max_depth=64, artifact_max_entries=1000)
    if not backend.capabilities().available:
        backend.close()
        pytest.skip("bubblewrap cannot build a sandbox here")
    try:
        yield backend
    finally:
        backend.close()


def _check(case: dict[str, Any], receipt: Receipt) -> None:
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.outcome_detail
    paths = [a.path for a in receipt.artifacts]
    if "collected" in case:
        assert len(paths) == len(case["collected"]), paths[:5]
        for want, got in zip(sorted(case["collected"]), sorted(paths)):
            if want.startswith(".../"):
                assert got.endswith("/" + want[4:]) and got.startswith("d/"), got[:80]
            else:
                assert got == want
    if "collected_count_at_most" in case:
        assert len(paths) <= case["collected_count_at_most"]
    events = "\n".join(receipt.events)
    for text in case["cut"]:
        assert text in events, events[:2000]
    assert len(receipt.events) <= 25


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_walk_is_bounded_and_says_what_was_cut(case: dict[str, Any],
                                               bounded: BubblewrapBackend) -> None:
    receipt = bounded.run(make_job(case["code"], artifact_globs=("**",)))
    _check(case, receipt)
    assert receipt.cleanup.survivors == 0


@pytest.mark.parametrize("case", CASES[:1], ids=case_ids(CASES[:1]))
def test_under_a_job_manager_the_job_keeps_its_outcome(case: dict[str, Any],
                                                       bounded: BubblewrapBackend,
                                                       tmp_path: Path) -> None:
    with JobManager(SQLiteJobStore(tmp_path / "jobs.db"), bounded, workers=1) as manager:
        result = manager.run(make_job(case["code"], artifact_globs=("**",)), timeout=60)
    _check(case, result.receipt)
