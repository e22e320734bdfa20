"""The sandbox's result channel on the real bubblewrap backend (issue 12 item 1).

Cases: data/result_cases.yaml. A job's declared result (``result = ...`` or a final expression)
is serialised as JSON by the bootstrap into the runner's own file, read back by the host with a
bound, and returned in `Receipt.result`; the receipt survives a store round trip; a pooled
sandbox returns it too.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Outcome, Receipt
from formulane.escalation.store import SQLiteJobStore

from .conftest import UID_COUNT, UID_FIRST, cold_or_pooled, make_job, shared_environments

CASES = yaml.safe_load((Path(__file__).parent / "data" / "result_cases.yaml").read_text())


@pytest.fixture(scope="module")
def bounded() -> Iterator[BubblewrapBackend]:
    path = Path(tempfile.mkdtemp(prefix="formulane-result-", dir="/tmp"))
    os.chmod(path, 0o711)
    backend = BubblewrapBackend(path, uid_first=UID_FIRST, uid_count=UID_COUNT,
                                environments=shared_environments(), result_max_bytes=1000)
    if not backend.capabilities().available:
        backend.close()
        pytest.skip("bubblewrap cannot build a sandbox here")
    try:
        yield backend
    finally:
        backend.close()


def _check(case: dict[str, Any], receipt: Receipt) -> None:
    expect = case["expect"]
    assert receipt.outcome is Outcome(expect["outcome"]), receipt.stderr.text[-600:]
    assert receipt.result is not None
    assert receipt.result.declared is expect["declared"], receipt.result
    if "how" in expect:
        assert receipt.result.how == expect["how"]
    if "value" in expect:
        assert receipt.result.value == expect["value"] and not receipt.result.error
        assert type(receipt.result.value) is type(expect["value"])
    if "error" in expect:
        assert expect["error"] in receipt.result.error and receipt.result.value is None
    if "stdout" in expect:
        assert receipt.stdout.text == expect["stdout"]
    if "stderr" in expect:
        assert expect["stderr"] in receipt.stderr.text


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_declared_result_comes_back_as_json(case: dict[str, Any], bounded: BubblewrapBackend,
                                            tmp_path: Path) -> None:
    receipt = bounded.run(make_job(case["code"], inputs=case.get("inputs", {})))
    _check(case, receipt)
    store = SQLiteJobStore(tmp_path / "jobs.db")
    try:
        store.append(receipt)
        again = store.latest(receipt.job_id)
        assert again is not None and again.sha256 == receipt.sha256 and again.result == receipt.result
    finally:
        store.close()


def test_a_pooled_sandbox_returns_the_result_too(sandbox: BubblewrapBackend,
                                                state_dir: Path) -> None:
    with cold_or_pooled("pooled", sandbox, state_dir / "pooled-result") as pooled:
        receipt = pooled.run(make_job("sum(v * v for v in values)", inputs={"values": [1, 2, 3]}))
    assert receipt.outcome is Outcome.SUCCEEDED and receipt.result is not None
    assert receipt.result.value == 14 and receipt.result.how == "expression"


def test_a_job_that_never_started_has_no_result(bounded: BubblewrapBackend) -> None:
    receipt = bounded.run(make_job("def broken(:\n    pass"))
    assert receipt.outcome is Outcome.SYNTAX_ERROR and receipt.result is None
