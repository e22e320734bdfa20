"""A job cannot forge its outcome (issue 15 item 6).

Family: outcome forgery (cases/sandbox_outcome_forgery.yaml), on the real bubblewrap backend.
Exit codes that look like signals, signals sent to itself or to the monitor, writes into the
monitor's descriptors or memory, and fake traceback lines never yield an ``observed`` timeout,
limit or signal; the controls show the real limits still are observed. The rule checked on
every case: an outcome that names a limit or a timeout is ``observed`` only when the host saw it.
"""

from __future__ import annotations

from typing import Any

import pytest

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Limits, Outcome

from .sandbox_support import (  # noqa: F401  (fixtures)
    bwrap, case_ids, load_cases, make_job, no_job_process_survives, sbx_dir,
)

CASES = load_cases("sandbox_outcome_forgery.yaml")
LIMITS = {Outcome.TIMEOUT_CPU, Outcome.TIMEOUT_WALL, Outcome.OOM_KILLED, Outcome.FS_LIMIT,
          Outcome.PIDS_LIMIT, Outcome.OUTPUT_LIMIT, Outcome.NETWORK_DENIED}


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_outcome_comes_from_what_the_host_saw(case: dict[str, Any],
                                              bwrap: BubblewrapBackend) -> None:
    limits = Limits(**case.get("limits", {}))
    receipt = bwrap.run(make_job(case["code"], limits=limits))
    expect = case["expect"]
    detail = f"{receipt.outcome.value}/{receipt.outcome_basis}: {receipt.outcome_detail}"
    assert receipt.outcome is Outcome(expect["outcome"]), detail
    assert receipt.outcome_basis == expect["basis"], detail
    for key in ("exit_code", "signal"):
        if key in expect:
            assert getattr(receipt, key) == expect[key], detail
    if "stdout" in expect:
        assert receipt.stdout.text == expect["stdout"], receipt.stderr.text[-500:]
    forged = not case["id"].startswith("control_")
    if forged and receipt.outcome in LIMITS:
        assert receipt.outcome_basis != "observed", detail
    assert receipt.cleanup.survivors == 0
