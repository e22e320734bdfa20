"""The SQLAlchemy job store against what came before it and against other processes.

- A database written by the earlier hand-written SQL (its schema verbatim in
  data/store_schema_v1.sql, its rows written here the way that code wrote them) opens with the
  new store: rows read back, both chains verify and grow from their old last link, the old
  triggers still refuse UPDATE and DELETE. On SQLite, and on PostgreSQL when
  FORMULANE_TEST_POSTGRES_URL is set.
- Two processes writing the same store at once (SQLite file; PostgreSQL) never fork a chain, and
  `append_lane_once` writes exactly one lane receipt per job however many callers race.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import uuid
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterator, LiteralString, cast

import pytest
from sqlalchemy import text

from formulane.escalation.backends.base import static_receipt
from formulane.escalation.contract import BackendInfo, Isolation, Outcome, SandboxJob
from formulane.escalation.lanes import DecisionRecord, Lane, LaneReceipt, RequestRecord
from formulane.escalation.store import (
    GENESIS, JobStore, PostgresJobStore, SQLiteJobStore, open_store,
)

PG_URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")
INFO = BackendInfo(name="test", version="1", isolation=Isolation.NAMESPACE, mechanism="test")
SCHEMA_V1 = Path(__file__).parent / "data" / "store_schema_v1.sql"


def _sections() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current: list[str] = []
    lines: list[str] = []
    for line in SCHEMA_V1.read_text().splitlines():
        if line.startswith("-- @"):
            current = out.setdefault(line[4:].strip(), [])
        elif line == "/":
            current.append("\n".join(lines))
            lines = []
        elif not line.startswith("--"):
            lines.append(line)
    return out


def _job(i: int, tenant: str = "acme") -> SandboxJob:
    return SandboxJob.model_validate({"code": f"print({i})", "tenant": tenant,
                                      "idempotency_key": f"k-{uuid.uuid4().hex}",
                                      "principal": "ana", "purpose": "compat"})


def _lane(job: SandboxJob | None, lane: Lane = "sandbox") -> LaneReceipt:
    return LaneReceipt(request_id=uuid.uuid4().hex, lane=lane, tenant="acme", principal="ana",
                       request=RequestRecord(ask="a"), decision=DecisionRecord(lane=lane,
                                                                               reasons=()),
                       runtime="x", outcome="succeeded",
                       job_id=None if job is None else str(job.job_id))


def _link(prev: str, digest: str) -> str:
    return hashlib.sha256((prev + digest).encode()).hexdigest()


def _write_the_old_way(execute: Callable[[str, tuple[Any, ...]], None],
                       mark: str) -> tuple[SandboxJob, list[LaneReceipt]]:
    """Rows as the hand-written store wrote them (its INSERT statements, its chain)."""
    now = datetime.now(timezone.utc).isoformat()
    q: Callable[[str], str] = lambda sql: sql.replace("?", mark)  # noqa: E731
    job = _job(1)
    execute(q("INSERT INTO escalation_jobs (job_id, tenant, idempotency_key, fingerprint, "
              "job_json, backend, status, attempt, owner, lease_until, provider_ids, "
              "side_effects_possible, cancel_requested, created_at, updated_at) VALUES "
              "(?, ?, ?, ?, ?, ?, 'succeeded', 1, NULL, NULL, '{}', ?, NULL, ?, ?)"),
            (str(job.job_id), job.tenant, job.idempotency_key, job.fingerprint(),
             job.model_dump_json(), "bubblewrap", int(job.side_effects_possible), now, now))
    prev = GENESIS
    for outcome in (Outcome.LOST, Outcome.SUCCEEDED):
        receipt = static_receipt(job, backend=INFO, outcome=outcome, detail="old")
        execute(q("INSERT INTO escalation_receipts (job_id, attempt, outcome, receipt_json, "
                  "receipt_sha256, prev_chain, chain_sha256, created_at) VALUES (?, ?, ?, ?, ?, "
                  "?, ?, ?)"), (receipt.job_id, receipt.attempt, receipt.outcome.value,
                                receipt.model_dump_json(), receipt.sha256, prev,
                                _link(prev, receipt.sha256), now))
        prev = _link(prev, receipt.sha256)
    execute(q("INSERT INTO escalation_artifacts (job_id, attempt, path, sha256, size, "
              "stored_ref, complete, mime, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
            (str(job.job_id), 1, "out.csv", "ab" * 32, 12, None, 1, "text/csv", now))
    lanes, prev = [_lane(None, "formula"), _lane(job)], GENESIS
    for lr in lanes:
        execute(q("INSERT INTO lane_receipts (receipt_id, request_id, tenant, lane, job_kind, "
                  "outcome, job_id, created_at, receipt_json, receipt_sha256, prev_chain, "
                  "chain_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
                (lr.receipt_id, lr.request_id, lr.tenant, lr.lane, lr.job_kind, lr.outcome,
                 lr.job_id, lr.created_at.astimezone(timezone.utc).isoformat(),
                 lr.model_dump_json(), lr.sha256, prev, _link(prev, lr.sha256)))
        prev = _link(prev, lr.sha256)
    execute(q("INSERT INTO lane_reviews (receipt_id, state, reviewer, note, created_at) VALUES "
              "(?, ?, ?, ?, ?)"), (lanes[0].receipt_id, "accepted", "rita", "", now))
    execute(q("INSERT INTO lane_pending (job_id, request_id, request_json, decision_json, "
              "review, created_at) VALUES (?, ?, ?, ?, ?, ?)"),
            (str(job.job_id), lanes[1].request_id, json.dumps({"ask": "a"}), "{}", "none", now))
    return job, lanes


def _check_opened(store: JobStore, job: SandboxJob, lanes: list[LaneReceipt]) -> None:
    record = store.get(str(job.job_id))
    assert record is not None and record.status == "succeeded" and record.job == job
    assert [r.outcome for r in store.receipts(str(job.job_id))] == [Outcome.LOST,
                                                                    Outcome.SUCCEEDED]
    assert [a.path for a in store.artifacts(str(job.job_id))] == ["out.csv"]
    assert store.verify_chain() and store.verify_lane_chain()
    got = store.lane_receipts()
    assert [r.receipt_id for r in got] == [r.receipt_id for r in lanes]
    assert got[0].review_state == "accepted"
    assert store.pending(str(job.job_id)) is not None and store.unsettled() == []
    assert not store.append_lane_once(_lane(job))  # the old row counts as the job's receipt
    # The chains grow from the old last link.
    old_last = store.last_chain()
    new = store.append(static_receipt(job, backend=INFO, outcome=Outcome.SUCCEEDED,
                                      detail="new", attempt=2))
    assert new == _link(old_last, store.receipts(str(job.job_id))[-1].sha256)
    store.append_lane(_lane(None, "tool"))
    assert store.verify_chain() and store.verify_lane_chain()
    for statement in ("UPDATE escalation_receipts SET outcome = 'x'", "DELETE FROM lane_reviews",
                      "DELETE FROM lane_receipts"):
        with pytest.raises(Exception, match="append-only"):
            store.execute(text(statement))
    assert store.create(_job(2), "bubblewrap")[1]


def test_an_old_sqlite_database_opens(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite3"
    sections = _sections()
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("PRAGMA journal_mode=WAL")
    for statement in sections["tables"]:
        raw.execute(statement.format(serial="INTEGER PRIMARY KEY AUTOINCREMENT"))
    for statement in sections["sqlite_triggers"]:
        raw.execute(statement)
    def execute(sql: str, params: tuple[Any, ...]) -> None:
        raw.execute(sql, params)

    job, lanes = _write_the_old_way(execute, "?")
    raw.close()
    store = SQLiteJobStore(path)
    try:
        _check_opened(store, job, lanes)
    finally:
        store.close()
    raw = sqlite3.connect(path)  # the new store added nothing the old code would not know
    names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    raw.close()
    assert len(names) == 6


@pytest.mark.skipif(not PG_URL, reason="FORMULANE_TEST_POSTGRES_URL is not set")
def test_an_old_postgres_schema_opens() -> None:
    import psycopg

    assert PG_URL is not None
    schema = f"compat_{uuid.uuid4().hex[:10]}"
    sections = _sections()
    with psycopg.connect(PG_URL, autocommit=True) as raw:
        def execute(sql: str, params: tuple[Any, ...] = ()) -> None:
            raw.execute(cast(LiteralString, sql), params)  # type: ignore[redundant-cast]

        execute(f"CREATE SCHEMA {schema}")
        execute(f"SET search_path TO {schema}")
        for statement in sections["tables"]:
            execute(statement.format(serial="BIGSERIAL PRIMARY KEY"))
        for statement in sections["postgres_triggers"]:
            execute(statement)
        job, lanes = _write_the_old_way(execute, "%s")
    store = PostgresJobStore(PG_URL, schema=schema)
    try:
        _check_opened(store, job, lanes)
    finally:
        store.drop_schema()
        store.close()


# -- two processes -------------------------------------------------------------------------

def _writer(url: str, job_ids: list[str], n: int) -> tuple[int, int]:
    """One process: ``n`` new jobs with a receipt each, and a racing once-only lane receipt for
    each shared job. Returns (receipts written, lane receipts this process won)."""
    store = open_store(url)
    try:
        for i in range(n):
            record, _ = store.create(_job(i, tenant=f"t{os.getpid()}"), "bubblewrap")
            store.append(static_receipt(record.job, backend=INFO, outcome=Outcome.SUCCEEDED,
                                        detail="mp"), status="succeeded")
        won = 0
        for job_id in job_ids:
            found = store.get(job_id)
            assert found is not None
            won += store.append_lane_once(_lane(found.job))
        return n, won
    finally:
        store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "shared.sqlite3")
        return
    if not PG_URL:
        pytest.skip("FORMULANE_TEST_POSTGRES_URL is not set: PostgreSQL store not tested")
    schema = f"mp_{uuid.uuid4().hex[:10]}"
    url = PG_URL + ("&" if "?" in PG_URL else "?") + f"schema={schema}"
    yield url
    store = PostgresJobStore(url)
    store.drop_schema()
    store.close()


def test_two_processes_share_one_chain(shared_url: str) -> None:
    store = open_store(shared_url)
    try:
        shared = [store.create(_job(i), "bubblewrap")[0].job_id for i in range(12)]
        with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
            results = list(pool.map(_writer, [shared_url] * 2, [shared] * 2, [15] * 2))
        assert sum(written for written, _ in results) == 30
        assert sum(won for _, won in results) == len(shared)  # one winner per job
        assert store.verify_chain() and store.verify_lane_chain()
        assert len(store.jobs(["succeeded"])) == 30
        assert sorted(r.job_id or "" for r in store.lane_receipts()) == sorted(shared)
    finally:
        store.close()
