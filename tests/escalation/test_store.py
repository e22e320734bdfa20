"""The durable job store, on SQLite and (when FORMULANE_TEST_POSTGRES_URL is set) PostgreSQL.

Every test runs against both databases through the ``store`` fixture.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path
from typing import Iterator

import pytest
from sqlalchemy import text

from formulane.errors import EscalationError
from formulane.escalation.backends.base import static_receipt
from formulane.escalation.contract import BackendInfo, Isolation, Outcome
from formulane.escalation.store import (
    GENESIS, JobStore, PostgresJobStore, SQLiteJobStore, open_store,
)

from .conftest import make_job

PG_URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")
INFO = BackendInfo(name="test", version="1", isolation=Isolation.NAMESPACE, mechanism="test")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobStore]:
    if request.param == "sqlite":
        s: JobStore = SQLiteJobStore(tmp_path / "jobs.db")
        yield s
        s.close()
        return
    if not PG_URL:
        pytest.skip("FORMULANE_TEST_POSTGRES_URL is not set: PostgreSQL store not tested")
    pg = PostgresJobStore(PG_URL, schema=f"esc_test_{uuid.uuid4().hex[:12]}")
    try:
        yield pg
    finally:
        pg.drop_schema()
        pg.close()


def receipt_for(record_job, outcome: Outcome = Outcome.SUCCEEDED, attempt: int = 1):  # type: ignore[no-untyped-def]
    return static_receipt(record_job, backend=INFO, outcome=outcome, detail="test",
                          attempt=attempt)


def test_create_is_idempotent_per_tenant_and_key(store: JobStore) -> None:
    job = make_job("print(1)", key="invoice-42")
    first, created = store.create(job, "bubblewrap")
    again, created_again = store.create(job.model_copy(update={"job_id": uuid.uuid4()}),
                                        "bubblewrap")
    assert created and not created_again and again.job_id == first.job_id
    other_tenant, created_other = store.create(make_job("print(1)", key="invoice-42",
                                                        tenant="globex"), "bubblewrap")
    assert created_other and other_tenant.job_id != first.job_id
    with pytest.raises(EscalationError) as err:
        store.create(make_job("print(2)", key="invoice-42"), "bubblewrap")
    assert err.value.code == "E603" and "different job" in err.value.message


def test_claim_is_exclusive(store: JobStore) -> None:
    record, _ = store.create(make_job("print(1)"), "bubblewrap")
    assert store.claim(record.job_id, "owner-a", 30) is not None
    assert store.claim(record.job_id, "owner-b", 30) is None
    current = store.get(record.job_id)
    assert current is not None and current.status == "running" and current.owner == "owner-a"


def test_cancel_request_blocks_claim(store: JobStore) -> None:
    record, _ = store.create(make_job("print(1)"), "bubblewrap")
    store.request_cancel(record.job_id, "user asked")
    assert store.claim(record.job_id, "owner-a", 30) is None


def test_receipts_are_chained_and_append_only(store: JobStore) -> None:
    record, _ = store.create(make_job("print(1)"), "bubblewrap")
    assert store.last_chain() == GENESIS
    store.append(receipt_for(record.job, Outcome.LOST).model_copy(
        update={"outcome_basis": "unknown"}), status="lost")
    store.append(receipt_for(record.job, Outcome.SUCCEEDED, attempt=2), status="succeeded")
    assert [r.outcome for r in store.receipts(record.job_id)] == [Outcome.LOST, Outcome.SUCCEEDED]
    assert store.verify_chain()
    current = store.get(record.job_id)
    assert current is not None and current.terminal and current.status == "succeeded"
    for statement in ("UPDATE escalation_receipts SET outcome = 'succeeded'",
                      "DELETE FROM escalation_receipts"):
        with pytest.raises(Exception, match="append-only"):
            store.execute(text(statement))
    assert len(store.receipts(record.job_id)) == 2


def test_tampering_is_detected_by_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "jobs.db"
    store = SQLiteJobStore(path)
    record, _ = store.create(make_job("print(1)"), "bubblewrap")
    store.append(receipt_for(record.job), status="succeeded")
    store.close()
    raw = sqlite3.connect(path)
    raw.execute("DROP TRIGGER escalation_receipts_no_update")  # an attacker with file access
    raw.execute("UPDATE escalation_receipts SET receipt_json = replace(receipt_json, "
                "'succeeded', 'crashed')")
    raw.commit()
    raw.close()
    assert not SQLiteJobStore(path).verify_chain()


def test_requeue_counts_attempts(store: JobStore) -> None:
    record, _ = store.create(make_job("print(1)"), "bubblewrap")
    store.claim(record.job_id, "a", 30)
    store.requeue(record.job_id)
    again = store.claim(record.job_id, "b", 30)
    assert again is not None and again.attempt == 2


def test_open_store_urls(tmp_path: Path) -> None:
    assert isinstance(open_store(None), SQLiteJobStore)
    assert isinstance(open_store(tmp_path / "a.db"), SQLiteJobStore)
    assert isinstance(open_store(f"sqlite://{tmp_path}/b.db"), SQLiteJobStore)
    with pytest.raises(EscalationError, match="unsupported job store URL"):
        open_store("mysql://x")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobStore]:
    if request.param == "memory":
        s: JobStore = open_store(None)
        yield s
        s.close()
        return
    yield from store.__wrapped__(request, tmp_path)  # type: ignore[attr-defined]


_BLOCK = {
    "sqlite": ["CREATE TRIGGER block_receipts BEFORE INSERT ON escalation_receipts "
               "BEGIN SELECT RAISE(ABORT, 'blocked by the test'); END"],
    "postgresql": ["CREATE FUNCTION block_receipts() RETURNS trigger AS $$ BEGIN RAISE "
                   "EXCEPTION 'blocked by the test'; END $$ LANGUAGE plpgsql",
                   "CREATE TRIGGER block_receipts BEFORE INSERT ON escalation_receipts "
                   "FOR EACH ROW EXECUTE FUNCTION block_receipts()"],
}
_UNBLOCK = {"sqlite": ["DROP TRIGGER block_receipts"],
            "postgresql": ["DROP TRIGGER block_receipts ON escalation_receipts",
                           "DROP FUNCTION block_receipts()"]}


def test_a_failed_append_writes_nothing_and_the_store_goes_on(any_store: JobStore) -> None:
    """The receipt and the job's status are one transaction: when the receipt cannot be
    written, the status stays, the error is SQLAlchemy's, and the next append works on the
    same held connection (an in-memory database survives it)."""
    from sqlalchemy.exc import DBAPIError

    record, _ = any_store.create(make_job("print(1)"), "bubblewrap")
    any_store.append(receipt_for(record.job), status="running")
    for statement in _BLOCK[any_store.dialect]:
        any_store.execute(text(statement))
    with pytest.raises(DBAPIError, match="blocked by the test"):
        any_store.append(receipt_for(record.job, attempt=2), status="succeeded")
    after = any_store.get(record.job_id)
    assert after is not None and after.status == "running"
    assert len(any_store.receipts(record.job_id)) == 1
    for statement in _UNBLOCK[any_store.dialect]:
        any_store.execute(text(statement))
    any_store.append(receipt_for(record.job, attempt=2), status="succeeded")
    done = any_store.get(record.job_id)
    assert done is not None and done.status == "succeeded"
    assert len(any_store.receipts(record.job_id)) == 2 and any_store.verify_chain()


def test_threads_share_the_chains(any_store: JobStore) -> None:
    """Eight threads append receipts and race for each job's one lane receipt: both chains
    verify, every receipt is there once, and exactly one lane receipt per job was written."""
    import threading

    from formulane.escalation.lanes import DecisionRecord, LaneReceipt, RequestRecord

    jobs = [any_store.create(make_job(f"print({i})"), "bubblewrap")[0].job for i in range(12)]
    won: list[bool] = []
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i, job in enumerate(jobs):
                if i % 4 == offset % 4:
                    any_store.append(receipt_for(job, attempt=1 + offset // 4),
                                     status="succeeded")
                lane = LaneReceipt(request_id=uuid.uuid4().hex, lane="sandbox",
                                   tenant=job.tenant, principal="ana",
                                   request=RequestRecord(ask="t"),
                                   decision=DecisionRecord(lane="sandbox", reasons=()),
                                   runtime="x", outcome="succeeded", job_id=str(job.job_id))
                won.append(any_store.append_lane_once(lane))
        except BaseException as exc:  # reported below, with the thread's own traceback
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert any_store.verify_chain() and any_store.verify_lane_chain()
    assert sum(won) == len(jobs) and len(won) == 8 * len(jobs)
    assert sorted(len(any_store.receipts(str(j.job_id))) for j in jobs) == [2] * len(jobs)
    assert all(any_store.lane_receipt_for_job(str(j.job_id)) is not None for j in jobs)


def test_one_failing_write_among_many_fails_alone(any_store: JobStore) -> None:
    """Writes queued together are committed together (group commit); when one of them fails,
    the others are written one by one and only that one raises."""
    import threading

    from sqlalchemy.exc import DBAPIError

    jobs = [any_store.create(make_job(f"print({i})"), "bubblewrap")[0].job for i in range(24)]
    bad = str(jobs[5].job_id)
    if any_store.dialect == "sqlite":
        block = [f"CREATE TRIGGER block_one BEFORE INSERT ON escalation_receipts WHEN "
                 f"NEW.job_id = '{bad}' BEGIN SELECT RAISE(ABORT, 'blocked by the test'); END"]
    else:
        block = [f"CREATE FUNCTION block_one() RETURNS trigger AS $$ BEGIN IF NEW.job_id = "
                 f"'{bad}' THEN RAISE EXCEPTION 'blocked by the test'; END IF; RETURN NEW; END "
                 "$$ LANGUAGE plpgsql",
                 "CREATE TRIGGER block_one BEFORE INSERT ON escalation_receipts FOR EACH ROW "
                 "EXECUTE FUNCTION block_one()"]
    for statement in block:
        any_store.execute(text(statement))
    failed: list[str] = []

    def work(mine: list) -> None:  # type: ignore[type-arg]
        for job in mine:
            try:
                any_store.append(receipt_for(job), status="succeeded")
            except DBAPIError as exc:
                assert "blocked by the test" in str(exc)
                failed.append(str(job.job_id))

    threads = [threading.Thread(target=work, args=(jobs[n::6],)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == [bad]
    assert any_store.verify_chain()
    for job in jobs:
        record = any_store.get(str(job.job_id))
        written = len(any_store.receipts(str(job.job_id)))
        assert record is not None
        assert (record.status, written) == (("queued", 0) if str(job.job_id) == bad
                                            else ("succeeded", 1))
