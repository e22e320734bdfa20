"""Lanes benchmark: a promoted tool's warm call next to the same code run as a sandbox job.

Usage (as root, on a machine with bubblewrap): ``python bench/lanes_bench.py [--runs 30]
[--pool 2] [--json out.json]``. One `escalation.default()` over a fresh data directory; the
code below runs once as a sandbox job and is promoted, given three known-answer cases and
approved (this needs the sandbox's result channel: without it, approval fails and only the
job figures are printed). Then, interleaved, ``--runs`` rounds of: the code as a sandbox job
through the job manager (``jobs.run``, today's path), the code through ``lanes.run`` (router,
job, lane receipt), and the pinned tool through ``lanes.run(tool_call=...)`` (catalog, scope and
type checks, the pinned code in the sandbox, lane receipt). The first call of each is a warm-up
and not counted. Target: the pinned tool's p50 within 2x of the sandbox job's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from formulane.errors import EscalationError
from formulane.escalation import EscalationSettings, Principal, default
from formulane.escalation.contract import SandboxJob
from formulane.escalation.policy import PolicyBook, PolicyRule

CODE = ("total = 0\nfor row in rows:\n    total += row['qty'] * row['price']\n"
        "result = round(total, 2)\nprint(result)\n")
ROWS = [{"qty": 2, "price": 1.25}, {"qty": 1, "price": 10.0}]
CASES = [(ROWS, 12.5), ([{"qty": 3, "price": 2.0}], 6.0), ([], 0)]
WHO = Principal(subject="bench", tenant="bench", scopes=frozenset({"orders:read"}))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--pool", type=int, default=0, help="warm pool size (0: cold sandboxes)")
    ap.add_argument("--json", help="write the raw figures here")
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="formulane-lanes-bench-", dir="/tmp"))
    os.chmod(data, 0o711)
    figures: dict[str, list[float]] = {"sandbox job (jobs.run)": [],
                                       "sandbox lane (lanes.run code)": [],
                                       "pinned tool (lanes.run tool_call)": []}
    try:
        settings = EscalationSettings(data_dir=data, warm_pool=args.pool)
        with default(settings, policies=PolicyBook(
                tenants={"bench": PolicyRule(may_escalate=True)})) as lanes:
            first = lanes.run(code=CODE, inputs={"rows": ROWS}, principal=WHO)
            assert first.outcome == "succeeded", first.receipt.outcome_detail
            draft = lanes.drafts.promote(first.job_id, tool="order_total",  # type: ignore
                                         by="dev", scopes=["orders:read"])
            for rows, answer in CASES:
                lanes.drafts.add_case("order_total", {"rows": rows}, answer, by="reviewer")
            try:
                lanes.drafts.approve(draft.draft_id, by="reviewer")
                pinned = True
            except EscalationError as exc:
                print(f"cannot pin the tool here ({exc.message[:160]}); job figures only")
                pinned = False

            def job() -> None:
                j = SandboxJob(idempotency_key=uuid.uuid4().hex, tenant="bench",
                               principal="bench", purpose="bench", code=CODE,
                               inputs={"rows": ROWS})
                assert lanes.jobs.run(j).receipt.succeeded

            def lane() -> None:
                assert lanes.run(code=CODE, inputs={"rows": ROWS}, principal=WHO).ok

            def tool() -> None:
                r = lanes.run(tool_call={"name": "order_total", "args": {"rows": ROWS}},
                              principal=WHO)
                assert r.ok and r.value == 12.5, r.receipt.outcome_detail

            steps = [("sandbox job (jobs.run)", job), ("sandbox lane (lanes.run code)", lane)]
            if pinned:
                steps.append(("pinned tool (lanes.run tool_call)", tool))
            for _, fn in steps:
                fn()  # warm-up
            for _ in range(args.runs):
                for name, fn in steps:
                    t0 = time.perf_counter()
                    fn()
                    figures[name].append((time.perf_counter() - t0) * 1000)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    print(f"{'path':38} {'p50 ms':>8} {'p90 ms':>8} {'mean ms':>8}  (runs={args.runs}, "
          f"pool={args.pool})")
    for name, values in figures.items():
        if values:
            print(f"{name:38} {_pct(values, .5):8.1f} {_pct(values, .9):8.1f} "
                  f"{statistics.fmean(values):8.1f}")
    base = figures["sandbox job (jobs.run)"]
    tool_ms = figures["pinned tool (lanes.run tool_call)"]
    if base and tool_ms:
        print(f"pinned tool / sandbox job, p50: {_pct(tool_ms, .5) / _pct(base, .5):.2f}x "
              "(target <= 2x)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
