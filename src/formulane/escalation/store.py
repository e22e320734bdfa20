"""Durable job records and append-only receipts: SQLite by default, PostgreSQL by URL.

Contract: `open_store(url)` returns a `JobStore` (``None`` or a path: SQLite; ``postgresql://``:
PostgreSQL through psycopg 3, optional ``?schema=name``). A job row is created once per
(tenant, idempotency key); creating it again returns the existing row, and reusing a key for a
*different* job is refused (E603). `claim` moves a queued row to running atomically, so two
workers or two servers never run one job twice. Receipts are append-only (database triggers
refuse UPDATE and DELETE) and hash-chained: each row stores ``sha256(previous chain + receipt
hash)``, and `verify_chain` recomputes it. Rows carry the owner instance and a lease, so a
restarted manager can tell which running jobs lost their supervisor. The same store holds every
lane's history: `append_lane` stores a `LaneReceipt` (table ``lane_receipts``, append-only and
hash-chained the same way, `verify_lane_chain`),
`review` appends a review state (``lane_reviews``, append-only; reads return the latest), and
the drafting room keeps its drafts and known-answer cases in ``lane_drafts`` and
``lane_draft_cases``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence
from urllib.parse import parse_qs, urlparse, urlunparse

from pydantic import BaseModel, ConfigDict

from ..errors import EscalationError
from .contract import ArtifactRecord, Receipt, SandboxJob

if TYPE_CHECKING:
    from .lanes import LaneReceipt

GENESIS = "0" * 64
ACTIVE = ("queued", "running", "lost")

_TABLES = """
CREATE TABLE IF NOT EXISTS escalation_jobs (
    job_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    job_json TEXT NOT NULL,
    backend TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    owner TEXT,
    lease_until DOUBLE PRECISION,
    provider_ids TEXT NOT NULL,
    side_effects_possible INTEGER NOT NULL,
    cancel_requested TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (tenant, idempotency_key)
);
CREATE TABLE IF NOT EXISTS escalation_receipts (
    seq {serial},
    job_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    receipt_json TEXT NOT NULL,
    receipt_sha256 TEXT NOT NULL,
    prev_chain TEXT NOT NULL,
    chain_sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS escalation_receipts_job ON escalation_receipts (job_id);
CREATE TABLE IF NOT EXISTS escalation_artifacts (
    job_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    stored_ref TEXT,
    complete INTEGER,
    mime TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lane_receipts (
    seq {serial},
    receipt_id TEXT NOT NULL UNIQUE,
    request_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    lane TEXT NOT NULL,
    job_kind TEXT NOT NULL,
    outcome TEXT NOT NULL,
    job_id TEXT,
    created_at TEXT NOT NULL,
    receipt_json TEXT NOT NULL,
    receipt_sha256 TEXT NOT NULL,
    prev_chain TEXT NOT NULL,
    chain_sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS lane_receipts_created ON lane_receipts (created_at);
CREATE INDEX IF NOT EXISTS lane_receipts_request ON lane_receipts (request_id);
CREATE TABLE IF NOT EXISTS lane_reviews (
    seq {serial},
    receipt_id TEXT NOT NULL,
    state TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    note TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS lane_reviews_receipt ON lane_reviews (receipt_id);
CREATE TABLE IF NOT EXISTS lane_pending (
    job_id TEXT PRIMARY KEY,
    request_id TEXT NOT NULL,
    request_json TEXT NOT NULL,
    decision_json TEXT NOT NULL,
    review TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lane_drafts (
    draft_id TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    version INTEGER,
    status TEXT NOT NULL,
    source_job_id TEXT,
    tenant TEXT NOT NULL,
    code TEXT NOT NULL,
    code_sha256 TEXT NOT NULL,
    runtime_json TEXT NOT NULL,
    environment_digest TEXT,
    arguments_json TEXT NOT NULL,
    effect TEXT NOT NULL,
    scopes_json TEXT NOT NULL,
    created_by TEXT NOT NULL,
    approved_by TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lane_draft_cases (
    seq {serial},
    case_id TEXT NOT NULL UNIQUE,
    tool TEXT NOT NULL,
    inputs_json TEXT NOT NULL,
    expected_json TEXT NOT NULL,
    added_by TEXT NOT NULL,
    note TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

_SQLITE_TRIGGERS = """
CREATE TRIGGER IF NOT EXISTS escalation_receipts_no_update BEFORE UPDATE ON escalation_receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
CREATE TRIGGER IF NOT EXISTS escalation_receipts_no_delete BEFORE DELETE ON escalation_receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
CREATE TRIGGER IF NOT EXISTS lane_receipts_no_update BEFORE UPDATE ON lane_receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
CREATE TRIGGER IF NOT EXISTS lane_receipts_no_delete BEFORE DELETE ON lane_receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only'); END;
CREATE TRIGGER IF NOT EXISTS lane_reviews_no_update BEFORE UPDATE ON lane_reviews
BEGIN SELECT RAISE(ABORT, 'reviews are append-only'); END;
CREATE TRIGGER IF NOT EXISTS lane_reviews_no_delete BEFORE DELETE ON lane_reviews
BEGIN SELECT RAISE(ABORT, 'reviews are append-only'); END;
"""

_PG_TRIGGERS = [
    """CREATE OR REPLACE FUNCTION escalation_append_only() RETURNS trigger AS $$
       BEGIN RAISE EXCEPTION 'receipts are append-only'; END $$ LANGUAGE plpgsql""",
    "DROP TRIGGER IF EXISTS escalation_receipts_append_only ON escalation_receipts",
    """CREATE TRIGGER escalation_receipts_append_only BEFORE UPDATE OR DELETE
       ON escalation_receipts FOR EACH ROW EXECUTE FUNCTION escalation_append_only()""",
    "DROP TRIGGER IF EXISTS lane_receipts_append_only ON lane_receipts",
    """CREATE TRIGGER lane_receipts_append_only BEFORE UPDATE OR DELETE
       ON lane_receipts FOR EACH ROW EXECUTE FUNCTION escalation_append_only()""",
    "DROP TRIGGER IF EXISTS lane_reviews_append_only ON lane_reviews",
    """CREATE TRIGGER lane_reviews_append_only BEFORE UPDATE OR DELETE
       ON lane_reviews FOR EACH ROW EXECUTE FUNCTION escalation_append_only()""",
]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class JobRecord(BaseModel):
    """One job's durable row (the job itself plus where it stands)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job_id: str
    tenant: str
    idempotency_key: str
    fingerprint: str
    job: SandboxJob
    backend: str
    status: str
    attempt: int
    owner: str | None
    lease_until: float | None
    provider_ids: dict[str, str]
    side_effects_possible: bool
    cancel_requested: str | None
    created_at: str
    updated_at: str

    @property
    def terminal(self) -> bool:
        return self.status not in ACTIVE


_COLUMNS = ("job_id, tenant, idempotency_key, fingerprint, job_json, backend, status, attempt, "
            "owner, lease_until, provider_ids, side_effects_possible, cancel_requested, "
            "created_at, updated_at")


def _record(row: Sequence[Any]) -> JobRecord:
    return JobRecord(
        job_id=row[0], tenant=row[1], idempotency_key=row[2], fingerprint=row[3],
        job=SandboxJob.model_validate_json(row[4]), backend=row[5], status=row[6],
        attempt=int(row[7]), owner=row[8], lease_until=row[9],
        provider_ids=json.loads(row[10]), side_effects_possible=bool(row[11]),
        cancel_requested=row[12], created_at=row[13], updated_at=row[14])


class JobStore(ABC):
    """SQL shared by both databases; subclasses provide connections and placeholders."""

    placeholder = "?"

    @abstractmethod
    def _run(self, sql: str, params: Sequence[Any] = (), *, fetch: str = "none",
             lock_receipts: bool = False) -> Any: ...

    @abstractmethod
    def _transaction(self, steps: list[tuple[str, Sequence[Any]]], *,
                     lock_receipts: bool = False, chain: tuple[str, str, int, str, str] | None
                     = None) -> None: ...

    def close(self) -> None:
        """Release the connection."""

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    # -- jobs --------------------------------------------------------------------------------

    def create(self, job: SandboxJob, backend: str) -> tuple[JobRecord, bool]:
        existing = self.by_key(job.tenant, job.idempotency_key)
        fingerprint = job.fingerprint()
        if existing is None:
            now = _now()
            try:
                self._run(f"INSERT INTO escalation_jobs ({_COLUMNS}) VALUES "
                          "(?, ?, ?, ?, ?, ?, 'queued', 1, NULL, NULL, '{}', ?, NULL, ?, ?)",
                          (str(job.job_id), job.tenant, job.idempotency_key, fingerprint,
                           job.model_dump_json(), backend, int(job.side_effects_possible), now,
                           now))
                record = self.get(str(job.job_id))
                assert record is not None
                return record, True
            except Exception as exc:  # a concurrent insert of the same key: read it back
                existing = self.by_key(job.tenant, job.idempotency_key)
                if existing is None:
                    raise EscalationError(f"could not store job: {exc}", code="E901") from None
        if existing.fingerprint != fingerprint:
            raise EscalationError(
                f"idempotency key {job.idempotency_key!r} was already used for a different "
                f"job ({existing.job_id})", code="E603",
                hint="one key, one job: use a new key for new work")
        return existing, False

    def get(self, job_id: str) -> JobRecord | None:
        row = self._run(f"SELECT {_COLUMNS} FROM escalation_jobs WHERE job_id = ?", (job_id,),
                        fetch="one")
        return _record(row) if row else None

    def by_key(self, tenant: str, key: str) -> JobRecord | None:
        row = self._run(f"SELECT {_COLUMNS} FROM escalation_jobs WHERE tenant = ? AND "
                        "idempotency_key = ?", (tenant, key), fetch="one")
        return _record(row) if row else None

    def jobs(self, statuses: Iterable[str] | None = None) -> list[JobRecord]:
        if statuses is None:
            rows = self._run(f"SELECT {_COLUMNS} FROM escalation_jobs ORDER BY created_at",
                             fetch="all")
        else:
            wanted = list(statuses)
            marks = ", ".join("?" for _ in wanted)
            rows = self._run(f"SELECT {_COLUMNS} FROM escalation_jobs WHERE status IN ({marks}) "
                             "ORDER BY created_at", wanted, fetch="all")
        return [_record(r) for r in rows]

    def claim(self, job_id: str, owner: str, lease_s: float) -> JobRecord | None:
        count = self._run("UPDATE escalation_jobs SET status = 'running', owner = ?, "
                          "lease_until = ?, updated_at = ? WHERE job_id = ? AND status = 'queued'"
                          " AND cancel_requested IS NULL",
                          (owner, time.time() + lease_s, _now(), job_id), fetch="rowcount")
        return self.get(job_id) if count == 1 else None

    def renew(self, owner: str, lease_s: float) -> None:
        self._run("UPDATE escalation_jobs SET lease_until = ? WHERE owner = ? AND status = "
                  "'running'", (time.time() + lease_s, owner))

    def set_provider_ids(self, job_id: str, ids: dict[str, str]) -> None:
        self._run("UPDATE escalation_jobs SET provider_ids = ?, updated_at = ? WHERE job_id = ?",
                  (json.dumps(ids, sort_keys=True), _now(), job_id))

    def request_cancel(self, job_id: str, reason: str) -> None:
        self._run("UPDATE escalation_jobs SET cancel_requested = ?, updated_at = ? WHERE job_id "
                  "= ? AND status IN ('queued', 'running', 'lost')", (reason, _now(), job_id))

    def mark(self, job_id: str, status: str, *, expect: str | None = None) -> bool:
        sql = "UPDATE escalation_jobs SET status = ?, updated_at = ? WHERE job_id = ?"
        params: list[Any] = [status, _now(), job_id]
        if expect is not None:
            sql += " AND status = ?"
            params.append(expect)
        return self._run(sql, params, fetch="rowcount") == 1

    def requeue(self, job_id: str) -> None:
        self._run("UPDATE escalation_jobs SET status = 'queued', attempt = attempt + 1, owner = "
                  "NULL, lease_until = NULL, updated_at = ? WHERE job_id = ?", (_now(), job_id))

    # -- receipts ----------------------------------------------------------------------------

    def append(self, receipt: Receipt, *, status: str | None = None) -> str:
        """Append one receipt (and set the job's status). Returns the new chain hash."""
        digest = receipt.sha256
        now = _now()
        steps: list[tuple[str, Sequence[Any]]] = []
        if status is not None:
            steps.append(("UPDATE escalation_jobs SET status = ?, owner = NULL, lease_until = "
                          "NULL, updated_at = ? WHERE job_id = ?",
                          (status, now, receipt.job_id)))
        for art in receipt.artifacts:
            steps.append(("INSERT INTO escalation_artifacts (job_id, attempt, path, sha256, size, "
                          "stored_ref, complete, mime, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, "
                          "?, ?)", (receipt.job_id, receipt.attempt, art.path, art.sha256,
                                    art.size, art.stored_ref,
                                    None if art.complete is None else int(art.complete),
                                    art.mime, now)))
        self._transaction(steps, lock_receipts=True, chain=(
            receipt.job_id, receipt.outcome.value, receipt.attempt,
            receipt.model_dump_json(), digest))
        return self.last_chain()

    def _chain_insert(self) -> str:
        return ("INSERT INTO escalation_receipts (job_id, attempt, outcome, receipt_json, "
                "receipt_sha256, prev_chain, chain_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, "
                "?, ?)")

    def last_chain(self) -> str:
        row = self._run("SELECT chain_sha256 FROM escalation_receipts ORDER BY seq DESC LIMIT 1",
                        fetch="one")
        return row[0] if row else GENESIS

    def receipts(self, job_id: str) -> list[Receipt]:
        rows = self._run("SELECT receipt_json FROM escalation_receipts WHERE job_id = ? ORDER BY "
                         "seq", (job_id,), fetch="all")
        return [Receipt.model_validate_json(r[0]) for r in rows]

    def latest(self, job_id: str) -> Receipt | None:
        found = self.receipts(job_id)
        return found[-1] if found else None

    def artifacts(self, job_id: str) -> list[ArtifactRecord]:
        rows = self._run("SELECT path, size, sha256, mime, complete, stored_ref FROM "
                         "escalation_artifacts WHERE job_id = ? ORDER BY attempt, path",
                         (job_id,), fetch="all")
        return [ArtifactRecord(path=r[0], size=r[1], sha256=r[2], mime=r[3],
                               complete=None if r[4] is None else bool(r[4]), stored_ref=r[5])
                for r in rows]

    # -- lane receipts (every lane's history) and their review states --------------------------

    def append_lane(self, receipt: "LaneReceipt") -> str:
        """Append one lane receipt (any lane), hash-chained like the sandbox receipts. Its
        review state is the receipt's own until a `review` appends a newer one. Returns the
        new chain hash."""
        chain = self._append_lane(receipt, once=False)
        assert chain is not None
        return chain

    def append_lane_once(self, receipt: "LaneReceipt") -> bool:
        """Append a receipt unless its job already has one in that lane (checked and written
        under the chain's lock, so two callers finishing the same job do not both write).
        True when this call wrote."""
        return self._append_lane(receipt, once=True) is not None

    def _append_lane(self, receipt: "LaneReceipt", *, once: bool) -> str | None:
        digest = receipt.sha256
        with self._exclusive("lane_receipts") as execute:
            if once and execute("SELECT 1 FROM lane_receipts WHERE job_id = ? AND lane = ?",
                                (receipt.job_id, receipt.lane)).fetchone() is not None:
                return None
            row = execute("SELECT chain_sha256 FROM lane_receipts ORDER BY seq DESC LIMIT 1",
                          ()).fetchone()
            prev = row[0] if row else GENESIS
            chain = _link(prev, digest)
            execute("INSERT INTO lane_receipts (receipt_id, request_id, tenant, lane, job_kind, "
                    "outcome, job_id, created_at, receipt_json, receipt_sha256, prev_chain, "
                    "chain_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (receipt.receipt_id, receipt.request_id, receipt.tenant, receipt.lane,
                     receipt.job_kind, receipt.outcome, receipt.job_id,
                     receipt.created_at.astimezone(timezone.utc).isoformat(),
                     receipt.model_dump_json(), digest, prev, chain))
            return chain

    def verify_lane_chain(self) -> bool:
        """Recompute every lane receipt's hash and the chain over them."""
        from .lanes import LaneReceipt

        return self._verify("lane_receipts", LaneReceipt)

    def _verify(self, table: str, model: Any) -> bool:
        """Recompute each stored receipt's hash (``model.sha256``) and the chain over ``table``."""
        rows = self._run("SELECT receipt_json, receipt_sha256, prev_chain, chain_sha256 FROM "
                         f"{table} ORDER BY seq", fetch="all")
        prev = GENESIS
        for body, digest, stored_prev, chain in rows:
            if model.model_validate_json(body).sha256 != digest:
                return False
            if stored_prev != prev or chain != _link(prev, digest):
                return False
            prev = chain
        return True

    @abstractmethod
    def _exclusive(self, table: str) -> Any:
        """A context manager: one transaction holding ``table`` exclusively (across servers on
        PostgreSQL), yielding ``execute(sql, params) -> cursor``."""

    def lane_receipt_for_job(self, job_id: str, lane: str = "sandbox") -> "LaneReceipt | None":
        row = self._run("SELECT receipt_id FROM lane_receipts WHERE job_id = ? AND lane = ? "
                        "ORDER BY seq LIMIT 1", (job_id, lane), fetch="one")
        return self.lane_receipt(row[0]) if row else None

    def save_pending(self, job_id: str, request_id: str, request_json: str, decision_json: str,
                     review: str) -> None:
        """Remember what a submitted sandbox job was asked for, to write its lane receipt when
        it ends (a second submit of the same job keeps the first)."""
        if self._run("SELECT 1 FROM lane_pending WHERE job_id = ?", (job_id,),
                     fetch="one") is not None:
            return
        try:
            self._run("INSERT INTO lane_pending (job_id, request_id, request_json, decision_json, "
                      "review, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                      (job_id, request_id, request_json, decision_json, review, _now()))
        except Exception:  # a concurrent submit of the same job stored it first
            if self._run("SELECT 1 FROM lane_pending WHERE job_id = ?", (job_id,),
                         fetch="one") is None:
                raise

    def pending(self, job_id: str) -> tuple[str, str, str, str] | None:
        """(request_id, request_json, decision_json, review) of a submitted sandbox job."""
        row = self._run("SELECT request_id, request_json, decision_json, review FROM "
                        "lane_pending WHERE job_id = ?", (job_id,), fetch="one")
        return tuple(row) if row else None  # type: ignore[return-value]

    def unsettled(self) -> list[str]:
        """Submitted sandbox jobs that have ended but have no lane receipt yet."""
        rows = self._run("SELECT p.job_id FROM lane_pending p JOIN escalation_jobs j ON "
                         "j.job_id = p.job_id WHERE j.status NOT IN ('queued', 'running', "
                         "'lost') AND NOT EXISTS (SELECT 1 FROM lane_receipts l WHERE l.job_id "
                         "= p.job_id AND l.lane = 'sandbox') ORDER BY p.created_at", fetch="all")
        return [r[0] for r in rows]

    def lane_receipts(self, *, since: datetime | None = None, until: datetime | None = None,
                      tenant: str | None = None, request_id: str | None = None,
                      limit: int | None = None) -> list["LaneReceipt"]:
        """Lane receipts oldest first, each with its current review state."""
        from .lanes import LaneReceipt

        where, params = [], []
        for column, op, value in (("created_at", ">=", since), ("created_at", "<", until),
                                  ("tenant", "=", tenant), ("request_id", "=", request_id)):
            if value is not None:
                where.append(f"{column} {op} ?")
                params.append(value.astimezone(timezone.utc).isoformat()
                              if isinstance(value, datetime) else value)
        sql = "SELECT receipt_json FROM lane_receipts"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at, seq"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        found = [LaneReceipt.model_validate_json(r[0]) for r in self._run(sql, params,
                                                                           fetch="all")]
        states = self._review_states([r.receipt_id for r in found])
        return [r.model_copy(update={"review_state": states[r.receipt_id]})
                if r.receipt_id in states else r for r in found]

    def lane_receipt(self, receipt_id: str) -> "LaneReceipt | None":
        from .lanes import LaneReceipt

        row = self._run("SELECT receipt_json FROM lane_receipts WHERE receipt_id = ?",
                        (receipt_id,), fetch="one")
        if row is None:
            return None
        receipt = LaneReceipt.model_validate_json(row[0])
        state = self._review_states([receipt_id]).get(receipt_id)
        return receipt.model_copy(update={"review_state": state}) if state else receipt

    def review(self, receipt_id: str, state: str, *, by: str, note: str = "") -> "LaneReceipt":
        """Record a review (``accepted``, ``rejected``, ``needs_review``) by the application or
        a person; appended, so the history of reviews stays."""
        from .lanes import REVIEW_STATES

        if state not in REVIEW_STATES:
            raise EscalationError(f"review state {state!r} is not one of "
                                  f"{', '.join(REVIEW_STATES)}", code="E603")
        if not by.strip():
            raise EscalationError("a review names who made it", code="E603")
        if self.lane_receipt(receipt_id) is None:
            raise EscalationError(f"no lane receipt {receipt_id!r}", code="E603")
        self._run("INSERT INTO lane_reviews (receipt_id, state, reviewer, note, created_at) "
                  "VALUES (?, ?, ?, ?, ?)", (receipt_id, state, by, note[:4000], _now()))
        found = self.lane_receipt(receipt_id)
        assert found is not None
        return found

    def reviews(self, receipt_id: str) -> list[tuple[str, str, str, str]]:
        """(state, reviewer, note, created_at) of every review of one receipt, oldest first."""
        rows = self._run("SELECT state, reviewer, note, created_at FROM lane_reviews WHERE "
                         "receipt_id = ? ORDER BY seq", (receipt_id,), fetch="all")
        return [tuple(r) for r in rows]  # type: ignore[misc]

    def _review_states(self, ids: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            if not chunk:
                continue
            marks = ", ".join("?" for _ in chunk)
            rows = self._run(f"SELECT receipt_id, state FROM lane_reviews WHERE receipt_id IN "
                             f"({marks}) ORDER BY seq", chunk, fetch="all")
            for receipt_id, state in rows:
                out[receipt_id] = state
        return out

    def verify_chain(self) -> bool:
        return self._verify("escalation_receipts", Receipt)


def _link(prev: str, digest: str) -> str:
    return hashlib.sha256((prev + digest).encode()).hexdigest()


class SQLiteJobStore(JobStore):
    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                                     timeout=30)
        self._lock = threading.RLock()
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.executescript(_TABLES.format(serial="INTEGER PRIMARY KEY AUTOINCREMENT")
                                     + _SQLITE_TRIGGERS)

    def _run(self, sql: str, params: Sequence[Any] = (), *, fetch: str = "none",
             lock_receipts: bool = False) -> Any:
        with self._lock:
            cur = self._conn.execute(sql, tuple(params))
            if fetch == "one":
                return cur.fetchone()
            if fetch == "all":
                return cur.fetchall()
            if fetch == "rowcount":
                return cur.rowcount
            return None

    def _transaction(self, steps: list[tuple[str, Sequence[Any]]], *,
                     lock_receipts: bool = False, chain: tuple[str, str, int, str, str] | None
                     = None) -> None:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                if chain is not None:
                    row = self._conn.execute("SELECT chain_sha256 FROM escalation_receipts ORDER "
                                             "BY seq DESC LIMIT 1").fetchone()
                    prev = row[0] if row else GENESIS
                    job_id, outcome, attempt, body, digest = chain
                    self._conn.execute(self._chain_insert(), (job_id, attempt, outcome, body,
                                                              digest, prev, _link(prev, digest),
                                                              _now()))
                for sql, params in steps:
                    self._conn.execute(sql, tuple(params))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def _exclusive(self, table: str) -> Iterator[Any]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")  # the database's one writer lock
            try:
                yield lambda sql, params: self._conn.execute(sql, tuple(params))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class PostgresJobStore(JobStore):
    placeholder = "%s"

    def __init__(self, url: str, *, schema: str | None = None) -> None:
        try:
            import psycopg
        except ImportError:
            raise EscalationError("PostgreSQL job store needs psycopg 3", code="E602",
                                  hint="pip install 'formulane[postgres]'") from None
        parsed = urlparse(url)
        query = parse_qs(parsed.query)
        schema = schema or (query.pop("schema", [None])[0])
        clean = urlunparse(parsed._replace(query="&".join(
            f"{k}={v[0]}" for k, v in query.items())))
        if schema is not None and not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", schema):
            raise EscalationError(f"schema name {schema!r} is not a plain identifier", code="E603")
        self.schema = schema
        self._conn = psycopg.connect(clean, autocommit=True)
        self._lock = threading.RLock()
        with self._lock:
            if schema:
                self._conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
                self._conn.execute(f"SET search_path TO {schema}")
            with self._conn.transaction():
                self._conn.execute("SELECT pg_advisory_xact_lock(7203117)")
                for statement in _TABLES.format(serial="BIGSERIAL PRIMARY KEY").split(";"):
                    if statement.strip():
                        self._conn.execute(statement)
                for statement in _PG_TRIGGERS:
                    self._conn.execute(statement)

    def _run(self, sql: str, params: Sequence[Any] = (), *, fetch: str = "none",
             lock_receipts: bool = False) -> Any:
        with self._lock:
            cur = self._conn.execute(self._sql(sql), tuple(params))
            if fetch == "one":
                return cur.fetchone()
            if fetch == "all":
                return cur.fetchall()
            if fetch == "rowcount":
                return cur.rowcount
            return None

    def _transaction(self, steps: list[tuple[str, Sequence[Any]]], *,
                     lock_receipts: bool = False, chain: tuple[str, str, int, str, str] | None
                     = None) -> None:
        with self._lock, self._conn.transaction():
            if chain is not None:
                # One writer at a time extends the chain, across every server sharing the table.
                self._conn.execute("LOCK TABLE escalation_receipts IN EXCLUSIVE MODE")
                row = self._conn.execute("SELECT chain_sha256 FROM escalation_receipts ORDER BY "
                                         "seq DESC LIMIT 1").fetchone()
                prev = row[0] if row else GENESIS
                job_id, outcome, attempt, body, digest = chain
                self._conn.execute(self._sql(self._chain_insert()),
                                   (job_id, attempt, outcome, body, digest, prev,
                                    _link(prev, digest), _now()))
            for sql, params in steps:
                self._conn.execute(self._sql(sql), tuple(params))

    @contextlib.contextmanager
    def _exclusive(self, table: str) -> Iterator[Any]:
        if table not in ("lane_receipts",):
            raise EscalationError(f"no exclusive lock on {table!r}", code="E901")
        with self._lock, self._conn.transaction():
            self._conn.execute(f"LOCK TABLE {table} IN EXCLUSIVE MODE")
            yield lambda sql, params: self._conn.execute(self._sql(sql), tuple(params))

    def drop_schema(self) -> None:
        """Tests only: remove this store's schema and everything in it."""
        if self.schema:
            with self._lock:
                self._conn.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def open_store(url: str | Path | None = None) -> JobStore:
    """SQLite for None, ':memory:' or a path; PostgreSQL for postgres:// URLs."""
    if url is None:
        return SQLiteJobStore(":memory:")
    text = str(url)
    if text.startswith(("postgresql://", "postgres://")):
        return PostgresJobStore(text)
    if "://" in text and not text.startswith("sqlite://"):
        raise EscalationError(f"unsupported job store URL {text!r}", code="E603",
                              hint="use a file path, sqlite:///path or postgresql://...")
    return SQLiteJobStore(text.removeprefix("sqlite://") or ":memory:")
