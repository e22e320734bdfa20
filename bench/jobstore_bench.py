"""Job store benchmark: receipt writes per second on SQLite and PostgreSQL.

Usage: ``python bench/jobstore_bench.py [--jobs 300] [--threads 4] [--postgres URL]``. For each
database: ``--jobs`` jobs are created, then each gets a sandbox receipt (`append`, one hash-chain
link under the writer lock, with the job's status) and a lane receipt (`append_lane_once`, the
once-only write under the lane chain's lock), first from one thread, then from ``--threads``
threads sharing the store. Prints writes per second of each kind and checks both chains at the
end (a benchmark that broke the chain would be measuring the wrong thing), and the load average
before and after (on a shared machine the figures move with it). Figures go to
bench/JOBSTORE.md by hand; nothing here is asserted in the test suite. To compare two versions
of the store, run this file with each one's ``src`` first on ``PYTHONPATH``, alternately.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Callable

from formulane.escalation.backends.base import static_receipt
from formulane.escalation.contract import BackendInfo, Isolation, Outcome, SandboxJob
from formulane.escalation.lanes import DecisionRecord, LaneReceipt, RequestRecord
from formulane.escalation.store import JobStore, PostgresJobStore, open_store

INFO = BackendInfo(name="bench", version="1", isolation=Isolation.NAMESPACE, mechanism="bench")


def _jobs(store: JobStore, n: int) -> list[SandboxJob]:
    jobs = [SandboxJob.model_validate({"code": f"print({i})", "tenant": "acme",
                                       "idempotency_key": f"k-{uuid.uuid4().hex}",
                                       "principal": "ana", "purpose": "bench"})
            for i in range(n)]
    for job in jobs:
        store.create(job, "bench")
    return jobs


def _lane(job: SandboxJob) -> LaneReceipt:
    return LaneReceipt(request_id=uuid.uuid4().hex, lane="sandbox", tenant=job.tenant,
                       principal="ana", request=RequestRecord(ask="bench"),
                       decision=DecisionRecord(lane="sandbox", reasons=()), runtime="x",
                       outcome="succeeded", job_id=str(job.job_id))


def _timed(work: list[Callable[[], object]], threads: int) -> float:
    """Writes per second of ``work`` spread over ``threads`` threads."""
    chunks = [work[i::threads] for i in range(threads)]
    start = time.perf_counter()
    runners = [threading.Thread(target=lambda c=c: [w() for w in c]) for c in chunks]
    for t in runners:
        t.start()
    for t in runners:
        t.join()
    return len(work) / (time.perf_counter() - start)


def run(store: JobStore, n: int, threads: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for label, count in (("1 thread", 1), (f"{threads} threads", threads)):
        jobs = _jobs(store, n)
        receipts = [static_receipt(j, backend=INFO, outcome=Outcome.SUCCEEDED, detail="bench")
                    for j in jobs]
        out[f"append, {label}"] = _timed(
            [functools.partial(store.append, r, status="succeeded") for r in receipts], count)
        lanes = [_lane(j) for j in jobs]
        out[f"append_lane_once, {label}"] = _timed(
            [functools.partial(store.append_lane_once, r) for r in lanes], count)
    assert store.verify_chain() and store.verify_lane_chain(), "a chain broke under the bench"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="median of this many rounds")
    parser.add_argument("--postgres", default=None, help="a postgresql:// URL (optional)")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    args = parser.parse_args()
    print("load average %.1f %.1f %.1f" % os.getloadavg())
    targets: list[tuple[str, Callable[[Path], JobStore]]] = [] if args.no_sqlite else [
        ("sqlite file", lambda d: open_store(d / "jobs.db"))]
    if args.postgres:
        targets.append(("postgresql", lambda d: PostgresJobStore(
            args.postgres, schema=f"bench_{uuid.uuid4().hex[:10]}")))
    for name, opener in targets:
        rounds: dict[str, list[float]] = {}
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                store = opener(Path(tmp))
                try:
                    for key, value in run(store, args.jobs, args.threads).items():
                        rounds.setdefault(key, []).append(value)
                finally:
                    if isinstance(store, PostgresJobStore):
                        store.drop_schema()
                    store.close()
        for key, values in rounds.items():
            print(f"{name:12} {key:28} {statistics.median(values):8.0f} writes/s")
    print("load average %.1f %.1f %.1f" % os.getloadavg())


if __name__ == "__main__":
    main()
