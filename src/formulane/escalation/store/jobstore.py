"""The job store's operations: one implementation in SQLAlchemy Core for SQLite and PostgreSQL.

Contract (the package's opening states the whole store's): every method is one short
transaction on a pooled connection; the two hot writes (`append`, `append_lane`) go through
`chain.ChainWriter`, the same statements compiled once and run on held driver connections in
two round trips, concurrent ones committed together (see there why). Writes that extend a hash chain run under that chain's
writer lock, taken up front: ``BEGIN IMMEDIATE`` on SQLite (the database's one writer), ``LOCK
TABLE ... IN EXCLUSIVE MODE`` on PostgreSQL (readers go on, a second writer on any server
waits); inside it the last link is read and the new row inserted, so two writers never fork a
chain. The chain itself is hand-written (``sha256(previous chain + receipt hash)``, walked in
``seq`` order by `_verify`): it is this project's record format, not something a library
offers, and a verifier elsewhere must be able to recompute it from this one line
(`chain.link_hash`). `execute` and `fetch` run Core statements over the package's other tables
(the drafting room's, the service's job list) in the same transactions as everything else.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Insert, Row, Table, bindparam, exists, insert, null, select, update
from sqlalchemy.engine import Connection, Engine, RowMapping
from sqlalchemy.sql import Executable
from sqlalchemy.exc import SQLAlchemyError

from ...errors import EscalationError
from ..contract import ArtifactRecord, Receipt, SandboxJob
from . import schema as s
from .chain import GENESIS as GENESIS
from .chain import ChainWriter, link_hash

if TYPE_CHECKING:
    from ..lanes import LaneReceipt

ACTIVE = ("queued", "running", "lost")
#: Rows of one ``IN (...)`` list: far below SQLite's and PostgreSQL's parameter limits.
IN_CHUNK = 500
#: Characters of a review note kept (a note is a sentence, not a document).
MAX_NOTE = 4000
#: Rows fetched at a time while a chain is verified: memory stays flat in the chain's length.
VERIFY_BATCH = 1000


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


# The statements of frequent calls, built once: SQLAlchemy then finds each compiled form in its
# cache by the statement alone (and `ChainWriter` compiles its own once per store).
def _insert_once(table: Table, *keys: str) -> Insert:
    """``INSERT INTO table SELECT :columns WHERE NOT EXISTS (a row with the same keys)``;
    the keys' values are bound as ``once_<key>``."""
    columns = [c for c in table.c if c.name != "seq"]
    source = select(*[bindparam(c.name, type_=c.type).label(c.name) for c in columns]).where(
        ~exists().where(*[table.c[k] == bindparam(f"once_{k}") for k in keys]))
    # The rowcount of an INSERT is only kept when asked for (psycopg's would read -1).
    return insert(table).from_select([c.name for c in columns], source) \
        .execution_options(preserve_rowcount=True)


_LANE_ONCE = ("lane once", lambda: _insert_once(s.lane_receipts, "job_id", "lane"))
_ARTIFACT_COLUMNS = ("job_id", "attempt", "path", "sha256", "size", "stored_ref", "complete",
                     "mime", "created_at")
_PENDING_ONCE = _insert_once(s.lane_pending, "job_id")
_GET = select(s.jobs).where(s.jobs.c.job_id == bindparam("b_job_id"))
_SETTLE = update(s.jobs).where(s.jobs.c.job_id == bindparam("b_job_id")).values(
    status=bindparam("b_status"), owner=null(), lease_until=null(),
    updated_at=bindparam("b_now"))


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


def _record(row: Row[Any]) -> JobRecord:
    m = row._mapping
    return JobRecord(
        job_id=m["job_id"], tenant=m["tenant"], idempotency_key=m["idempotency_key"],
        fingerprint=m["fingerprint"], job=SandboxJob.model_validate_json(m["job_json"]),
        backend=m["backend"], status=m["status"], attempt=int(m["attempt"]), owner=m["owner"],
        lease_until=m["lease_until"], provider_ids=json.loads(m["provider_ids"]),
        side_effects_possible=bool(m["side_effects_possible"]),
        cancel_requested=m["cancel_requested"], created_at=m["created_at"],
        updated_at=m["updated_at"])


class JobStore:
    """The store over one SQLAlchemy engine (`SQLiteJobStore`, `PostgresJobStore` open one)."""

    def __init__(self, engine: Engine, *, reader: Engine | None = None,
                 schema: str | None = None, serialize: bool = False) -> None:
        self._engine = engine
        # Plain reads may go through a second engine (PostgreSQL: autocommit connections, one
        # round trip per query instead of BEGIN, the query and ROLLBACK).
        self._reader = reader or engine
        self.schema = schema
        # An in-memory SQLite database is one connection: calls from several threads take turns.
        self._lock: contextlib.AbstractContextManager[Any] = (
            threading.RLock() if serialize else contextlib.nullcontext())
        s.create(engine, schema)
        self._chains = ChainWriter(engine, lock=self._lock, autocommit=reader)

    def close(self) -> None:
        """Release the connections."""
        self._chains.close()
        self._engine.dispose()
        self._reader.dispose()

    @property
    def dialect(self) -> str:
        return self._engine.dialect.name

    # -- transactions ------------------------------------------------------------------------

    @contextlib.contextmanager
    def _read(self, *, snapshot: bool = False) -> Iterator[Connection]:
        """A connection for reading; with ``snapshot``, inside one transaction (which a
        PostgreSQL server-side cursor needs)."""
        with self._lock, (self._engine if snapshot else self._reader).connect() as conn:
            yield conn

    @contextlib.contextmanager
    def _write(self) -> Iterator[Connection]:
        """One writing transaction (SQLite: ``BEGIN IMMEDIATE``, the writer lock up front)."""
        with self._lock, self._engine.connect() as conn:
            conn.execution_options(**{s.WRITER: True})
            with conn.begin():
                yield conn

    def execute(self, *statements: Executable) -> list[int]:
        """Run Core statements (INSERT, UPDATE...) in one writing transaction; their row
        counts. For the package's own tables (`schema`), not for the hash-chained ones."""
        with self._write() as conn:
            return [conn.execute(statement).rowcount for statement in statements]

    def fetch(self, query: Executable) -> list[RowMapping]:
        """The rows of a Core query (each a mapping by column name), read in one short call."""
        with self._read() as conn:
            return list(conn.execute(query).mappings().all())

    # -- jobs --------------------------------------------------------------------------------

    def create(self, job: SandboxJob, backend: str) -> tuple[JobRecord, bool]:
        existing = self.by_key(job.tenant, job.idempotency_key)
        fingerprint = job.fingerprint()
        if existing is None:
            now = _now()
            try:
                with self._write() as conn:
                    conn.execute(insert(s.jobs).values(
                        job_id=str(job.job_id), tenant=job.tenant,
                        idempotency_key=job.idempotency_key, fingerprint=fingerprint,
                        job_json=job.model_dump_json(), backend=backend, status="queued",
                        attempt=1, owner=None, lease_until=None, provider_ids="{}",
                        side_effects_possible=int(job.side_effects_possible),
                        cancel_requested=None, created_at=now, updated_at=now))
                record = self.get(str(job.job_id))
                assert record is not None
                return record, True
            except SQLAlchemyError as exc:  # a concurrent insert of the same key: read it back
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
        with self._read() as conn:
            row = conn.execute(_GET, {"b_job_id": job_id}).first()
        return _record(row) if row else None

    def by_key(self, tenant: str, key: str) -> JobRecord | None:
        with self._read() as conn:
            row = conn.execute(select(s.jobs).where(s.jobs.c.tenant == tenant,
                                                    s.jobs.c.idempotency_key == key)).first()
        return _record(row) if row else None

    def jobs(self, statuses: Iterable[str] | None = None) -> list[JobRecord]:
        query = select(s.jobs).order_by(s.jobs.c.created_at)
        if statuses is not None:
            query = query.where(s.jobs.c.status.in_(list(statuses)))
        with self._read() as conn:
            return [_record(r) for r in conn.execute(query)]

    def _update_job(self, job_id: str, *conditions: Any, **values: Any) -> int:
        query = update(s.jobs).where(s.jobs.c.job_id == job_id, *conditions).values(**values)
        with self._write() as conn:
            return conn.execute(query).rowcount

    def claim(self, job_id: str, owner: str, lease_s: float) -> JobRecord | None:
        count = self._update_job(job_id, s.jobs.c.status == "queued",
                                 s.jobs.c.cancel_requested.is_(None), status="running",
                                 owner=owner, lease_until=time.time() + lease_s,
                                 updated_at=_now())
        return self.get(job_id) if count == 1 else None

    def renew(self, owner: str, lease_s: float) -> None:
        with self._write() as conn:
            conn.execute(update(s.jobs).where(s.jobs.c.owner == owner,
                                              s.jobs.c.status == "running")
                         .values(lease_until=time.time() + lease_s))

    def set_provider_ids(self, job_id: str, ids: dict[str, str]) -> None:
        self._update_job(job_id, provider_ids=json.dumps(ids, sort_keys=True), updated_at=_now())

    def request_cancel(self, job_id: str, reason: str) -> None:
        self._update_job(job_id, s.jobs.c.status.in_(ACTIVE), cancel_requested=reason,
                         updated_at=_now())

    def mark(self, job_id: str, status: str, *, expect: str | None = None) -> bool:
        conditions = [] if expect is None else [s.jobs.c.status == expect]
        return self._update_job(job_id, *conditions, status=status, updated_at=_now()) == 1

    def requeue(self, job_id: str) -> None:
        self._update_job(job_id, status="queued", attempt=s.jobs.c.attempt + 1, owner=None,
                         lease_until=None, updated_at=_now())

    # -- sandbox receipts --------------------------------------------------------------------

    def append(self, receipt: Receipt, *, status: str | None = None) -> str:
        """Append one receipt (and set the job's status and store its artifacts) in one
        transaction. Returns the new chain hash."""
        now = _now()
        chains = self._chains
        then: list[tuple[str, Any]] = []
        if status is not None:
            then.append((chains.sql("settle", lambda: _SETTLE),
                         {"b_job_id": receipt.job_id, "b_status": status, "b_now": now}))
        if receipt.artifacts:
            then.append((chains.sql("insert artifacts", lambda: insert(s.artifacts).inline(),
                                    *_ARTIFACT_COLUMNS), [
                {"job_id": receipt.job_id, "attempt": receipt.attempt, "path": a.path,
                 "sha256": a.sha256, "size": a.size, "stored_ref": a.stored_ref,
                 "complete": None if a.complete is None else int(a.complete),
                 "mime": a.mime, "created_at": now} for a in receipt.artifacts]))
        chain = chains.link(s.receipts, receipt.sha256, {
            "job_id": receipt.job_id, "attempt": receipt.attempt,
            "outcome": receipt.outcome.value, "receipt_json": receipt.model_dump_json(),
            "created_at": now}, then=then)
        assert chain is not None
        return chain

    def last_chain(self) -> str:
        with self._read() as conn:
            found = conn.execute(select(s.receipts.c.chain_sha256)
                                 .order_by(s.receipts.c.seq.desc()).limit(1)).scalar()
        return found or GENESIS

    def receipts(self, job_id: str) -> list[Receipt]:
        with self._read() as conn:
            rows = conn.execute(select(s.receipts.c.receipt_json)
                                .where(s.receipts.c.job_id == job_id)
                                .order_by(s.receipts.c.seq)).scalars().all()
        return [Receipt.model_validate_json(r) for r in rows]

    def latest(self, job_id: str) -> Receipt | None:
        found = self.receipts(job_id)
        return found[-1] if found else None

    def artifacts(self, job_id: str) -> list[ArtifactRecord]:
        a = s.artifacts.c
        with self._read() as conn:
            rows = conn.execute(select(a.path, a.size, a.sha256, a.mime, a.complete,
                                       a.stored_ref).where(a.job_id == job_id)
                                .order_by(a.attempt, a.path)).all()
        return [ArtifactRecord(path=r.path, size=r.size, sha256=r.sha256, mime=r.mime,
                               complete=None if r.complete is None else bool(r.complete),
                               stored_ref=r.stored_ref) for r in rows]

    def verify_chain(self) -> bool:
        return self._verify(s.receipts, Receipt)

    def _verify(self, table: Table, model: Any) -> bool:
        """Recompute each stored receipt's hash (``model.sha256``) and the chain over ``table``."""
        c = table.c
        query = select(c.receipt_json, c.receipt_sha256, c.prev_chain, c.chain_sha256) \
            .order_by(c.seq).execution_options(yield_per=VERIFY_BATCH)
        prev = GENESIS
        with self._read(snapshot=True) as conn:
            for body, digest, stored_prev, chain in conn.execute(query):
                if model.model_validate_json(body).sha256 != digest:
                    return False
                if stored_prev != prev or chain != link_hash(prev, digest):
                    return False
                prev = chain
        return True

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
        in one statement under the chain's lock, so two callers finishing the same job do not
        both write). True when this call wrote."""
        return self._append_lane(receipt, once=True) is not None

    def _append_lane(self, receipt: "LaneReceipt", *, once: bool) -> str | None:
        values: dict[str, Any] = {"receipt_id": receipt.receipt_id, "request_id": receipt.request_id,
                  "tenant": receipt.tenant, "lane": receipt.lane, "job_kind": receipt.job_kind,
                  "outcome": receipt.outcome, "job_id": receipt.job_id,
                  "created_at": receipt.created_at.astimezone(timezone.utc).isoformat(),
                  "receipt_json": receipt.model_dump_json()}
        if once:
            values.update(once_job_id=receipt.job_id, once_lane=receipt.lane)
        return self._chains.link(s.lane_receipts, receipt.sha256, values,
                                 once=_LANE_ONCE if once else None)

    def verify_lane_chain(self) -> bool:
        """Recompute every lane receipt's hash and the chain over them."""
        from ..lanes import LaneReceipt

        return self._verify(s.lane_receipts, LaneReceipt)

    def lane_receipt_for_job(self, job_id: str, lane: str = "sandbox") -> "LaneReceipt | None":
        c = s.lane_receipts.c
        with self._read() as conn:
            found = conn.execute(select(c.receipt_id).where(c.job_id == job_id, c.lane == lane)
                                 .order_by(c.seq).limit(1)).scalar()
        return self.lane_receipt(found) if found else None

    def save_pending(self, job_id: str, request_id: str, request_json: str, decision_json: str,
                     review: str) -> None:
        """Remember what a submitted sandbox job was asked for, to write its lane receipt when
        it ends (a second submit of the same job keeps the first)."""
        row = {"job_id": job_id, "request_id": request_id, "request_json": request_json,
               "decision_json": decision_json, "review": review, "created_at": _now(),
               "once_job_id": job_id}
        try:
            with self._write() as conn:
                conn.execute(_PENDING_ONCE, row)
        except SQLAlchemyError:  # a concurrent submit of the same job stored it first
            if self.pending(job_id) is None:
                raise

    def pending(self, job_id: str) -> tuple[str, str, str, str] | None:
        """(request_id, request_json, decision_json, review) of a submitted sandbox job."""
        p = s.lane_pending.c
        with self._read() as conn:
            row = conn.execute(select(p.request_id, p.request_json, p.decision_json, p.review)
                               .where(p.job_id == job_id)).first()
        return None if row is None else (row[0], row[1], row[2], row[3])

    def unsettled(self) -> list[str]:
        """Submitted sandbox jobs that have ended but have no lane receipt yet."""
        p, j, lane = s.lane_pending.c, s.jobs.c, s.lane_receipts.c
        query = (select(p.job_id).join_from(s.lane_pending, s.jobs, j.job_id == p.job_id)
                 .where(j.status.not_in(ACTIVE),
                        ~exists().where(lane.job_id == p.job_id, lane.lane == "sandbox"))
                 .order_by(p.created_at))
        with self._read() as conn:
            return list(conn.execute(query).scalars())

    def lane_receipts(self, *, since: datetime | None = None, until: datetime | None = None,
                      tenant: str | None = None, request_id: str | None = None,
                      limit: int | None = None) -> list["LaneReceipt"]:
        """Lane receipts oldest first, each with its current review state."""
        from ..lanes import LaneReceipt

        c = s.lane_receipts.c
        query = select(c.receipt_json).order_by(c.created_at, c.seq)
        if since is not None:
            query = query.where(c.created_at >= since.astimezone(timezone.utc).isoformat())
        if until is not None:
            query = query.where(c.created_at < until.astimezone(timezone.utc).isoformat())
        if tenant is not None:
            query = query.where(c.tenant == tenant)
        if request_id is not None:
            query = query.where(c.request_id == request_id)
        if limit is not None:
            query = query.limit(int(limit))
        with self._read() as conn:
            found = [LaneReceipt.model_validate_json(r) for r in conn.execute(query).scalars()]
        states = self._review_states([r.receipt_id for r in found])
        return [r.model_copy(update={"review_state": states[r.receipt_id]})
                if r.receipt_id in states else r for r in found]

    def lane_receipt(self, receipt_id: str) -> "LaneReceipt | None":
        from ..lanes import LaneReceipt

        c = s.lane_receipts.c
        with self._read() as conn:
            body = conn.execute(select(c.receipt_json).where(c.receipt_id == receipt_id)).scalar()
        if body is None:
            return None
        receipt = LaneReceipt.model_validate_json(body)
        state = self._review_states([receipt_id]).get(receipt_id)
        return receipt.model_copy(update={"review_state": state}) if state else receipt

    def review(self, receipt_id: str, state: str, *, by: str, note: str = "") -> "LaneReceipt":
        """Record a review (``accepted``, ``rejected``, ``needs_review``) by the application or
        a person; appended, so the history of reviews stays."""
        from ..lanes import REVIEW_STATES

        if state not in REVIEW_STATES:
            raise EscalationError(f"review state {state!r} is not one of "
                                  f"{', '.join(REVIEW_STATES)}", code="E603")
        if not by.strip():
            raise EscalationError("a review names who made it", code="E603")
        if self.lane_receipt(receipt_id) is None:
            raise EscalationError(f"no lane receipt {receipt_id!r}", code="E603")
        with self._write() as conn:
            conn.execute(insert(s.lane_reviews).values(
                receipt_id=receipt_id, state=state, reviewer=by, note=note[:MAX_NOTE],
                created_at=_now()))
        found = self.lane_receipt(receipt_id)
        assert found is not None
        return found

    def reviews(self, receipt_id: str) -> list[tuple[str, str, str, str]]:
        """(state, reviewer, note, created_at) of every review of one receipt, oldest first."""
        r = s.lane_reviews.c
        with self._read() as conn:
            rows = conn.execute(select(r.state, r.reviewer, r.note, r.created_at)
                                .where(r.receipt_id == receipt_id).order_by(r.seq)).all()
        return [(row[0], row[1], row[2], row[3]) for row in rows]

    def _review_states(self, ids: list[str]) -> dict[str, str]:
        r = s.lane_reviews.c
        out: dict[str, str] = {}
        with self._read() as conn:
            for start in range(0, len(ids), IN_CHUNK):
                chunk = ids[start:start + IN_CHUNK]
                rows = conn.execute(select(r.receipt_id, r.state)
                                    .where(r.receipt_id.in_(chunk)).order_by(r.seq))
                for receipt_id, state in rows:
                    out[receipt_id] = state  # the latest review wins
        return out


class SQLiteJobStore(JobStore):
    """The store on one SQLite file (WAL: several processes on one machine), or in memory."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        memory = self.path in ("", ":memory:")
        super().__init__(s.sqlite_engine(self.path), serialize=memory)


class PostgresJobStore(JobStore):
    """The store on PostgreSQL (psycopg 3), optionally in its own schema (``schema=`` or the
    URL's ``?schema=name``); any number of servers may share it."""

    def __init__(self, url: str, *, schema: str | None = None) -> None:
        engine, chosen = s.postgres_engine(url, schema)
        reader, _ = s.postgres_engine(url, chosen, autocommit=True)
        super().__init__(engine, reader=reader, schema=chosen)

    def drop_schema(self) -> None:
        """Tests only: remove this store's schema and everything in it."""
        if self.schema:
            with self._write() as conn:
                conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")

