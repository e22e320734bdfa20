"""Durable storage for receipts, approvals and idempotency records (SQLAlchemy Core).

Contract: one `SQLStore` on a SQLAlchemy engine serves SQLite (`SQLiteStore`, the default: a
file or `:memory:`) and PostgreSQL (`PostgresStore`, psycopg 3, for several servers); the
statements are Core expressions, so both dialects run the same code. Receipts of reads and
refusals are buffered and written in batches by one background thread (`flush()` forces it;
`close()` and interpreter exit flush). Everything a write depends on is durable before the call
returns: the idempotency reservation is committed *before* the tool runs, and the result, the
receipt and the approval's use are committed in one transaction after it. A reservation left in
state `started` therefore means "may have run": the next call with that key gets outcome
`unknown` and the tool never runs again. `open_store(spec)` builds a store from a path or URL.

What stays dialect-specific, because no portable form exists: `INSERT ... ON CONFLICT DO
NOTHING` (each dialect's own `insert`), SQLite's `BEGIN IMMEDIATE` (a writer takes the lock up
front, so two processes cannot deadlock on an upgrade), its pragmas (WAL, synchronous=FULL: a
receipt is on disk when the call returns), and PostgreSQL's advisory lock around table creation
(servers starting together do not race). The tables follow the service's conventions
(`api/db.py`) but are declared per store, not in its one `MetaData`: their names carry the
store's prefix and PostgreSQL schema, which are constructor arguments. They are created with
`create_all` (existing tables, including those made by earlier versions, are kept as they are).
"""

from __future__ import annotations

import atexit
import logging
import re
import sqlite3
import threading
import weakref
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import (
    BigInteger, Column, Double, Index, MetaData, PrimaryKeyConstraint, Table, Text, create_engine,
    event, func, select, text, update,
)
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import StaticPool
from sqlalchemy.schema import CreateSchema
from sqlalchemy.sql.dml import Insert

from ..errors import ToolError
from .approvals import APPROVAL_COLUMNS, ApprovalRequest
from .receipts import RECEIPT_COLUMNS, Receipt

log = logging.getLogger("formulane.tools")

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")

ReservationState = Literal["new", "started", "done", "conflict", "approval_unavailable"]


@dataclass(frozen=True, slots=True)
class Reservation:
    """What `reserve` found for (tenant, tool, idempotency key)."""

    state: ReservationState
    args_hash: str | None = None
    receipt_id: str | None = None
    outcome: str | None = None
    result: str | None = None
    error: str | None = None


_STORES: "weakref.WeakSet[SQLStore]" = weakref.WeakSet()


@atexit.register
def _flush_all_at_exit() -> None:  # pragma: no cover - exercised by process exit
    for store in list(_STORES):
        try:
            store.flush()
        except Exception:  # noqa: BLE001 - nothing can be raised at exit
            log.exception("could not flush tool receipts at exit")


def _tables(metadata: MetaData, prefix: str) -> tuple[Table, Table, Table]:
    # Times are epoch seconds (DOUBLE PRECISION): cheap to write for every receipt, and readable
    # with datetime(x, 'unixepoch') / to_timestamp(x). Index names are never schema-qualified.
    receipts = Table(
        f"{prefix}receipts", metadata,
        Column("id", Text, primary_key=True),
        *(Column(name, Text, nullable=False) for name in
          ("tool", "version", "schema_hash", "effect", "principal", "principal_kind", "tenant", "outcome")),
        Column("started_at", Double, nullable=False),
        Column("finished_at", Double, nullable=False),
        *(Column(name, BigInteger) for name in ("validate_us", "authorize_us", "execute_us", "total_us")),
        *(Column(name, Text) for name in ("args_hash", "args", "result_hash", "error_code", "error_message",
                                          "approval_id", "idempotency_key", "call_id", "replay_of")),
        Index(f"{prefix}receipts_by_tool", "tool", "started_at"),
        Index(f"{prefix}receipts_by_key", "tenant", "idempotency_key"),
    )
    approvals = Table(
        f"{prefix}approvals", metadata,
        Column("id", Text, primary_key=True),
        *(Column(name, Text, nullable=False) for name in
          ("tool", "version", "args_hash", "args", "requester", "requester_kind", "tenant", "status")),
        Column("created_at", Double, nullable=False),
        Column("expires_at", Double, nullable=False),
        Column("approver", Text),
        Column("decided_at", Double),
        Column("reason", Text),
        Column("idempotency_key", Text),
        Index(f"{prefix}approvals_by_args", "tenant", "tool", "args_hash"),
    )
    idempotency = Table(
        f"{prefix}idempotency", metadata,
        *(Column(name, Text, nullable=False) for name in
          ("tenant", "tool", "key", "args_hash", "state", "receipt_id")),
        *(Column(name, Text) for name in ("approval_id", "outcome", "result", "error")),
        Column("started_at", Double, nullable=False),
        Column("finished_at", Double),
        PrimaryKeyConstraint("tenant", "tool", "key"),
    )
    assert tuple(c.name for c in receipts.columns) == RECEIPT_COLUMNS
    assert tuple(c.name for c in approvals.columns) == APPROVAL_COLUMNS
    return receipts, approvals, idempotency


def _sqlite_engine(path: str) -> Engine:
    if path == ":memory:":
        # One connection shared by every thread (the flusher included): the only way several
        # threads see the same in-memory database. The store's lock serialises its use.
        engine = create_engine("sqlite://", poolclass=StaticPool,
                               connect_args={"check_same_thread": False})
    else:
        engine = create_engine(URL.create("sqlite", database=path),
                               connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(conn: sqlite3.Connection, _record: Any) -> None:
        # Transactions are ours (BEGIN below), not the sqlite3 module's implicit ones.
        conn.isolation_level = None
        if path != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA busy_timeout=30000")

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get("formulane_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


class SQLStore:
    """Receipts, approvals and idempotency records in one database, through SQLAlchemy Core."""

    def __init__(self, engine: Engine, *, schema: str | None = None, prefix: str = "formulane_tool_",
                 flush_interval: float = 0.05, batch_size: int = 512, max_buffer: int = 100_000) -> None:
        if not _IDENT.match(prefix):
            raise ToolError(f"invalid table prefix {prefix!r}", code="E506",
                            hint="letters, digits and '_' only, starting with a letter")
        if schema is not None and not _IDENT.match(schema):
            raise ToolError(f"invalid schema name {schema!r}", code="E506")
        self.prefix = prefix
        self.schema = schema
        self.flush_interval = flush_interval
        self.batch_size = batch_size
        self.max_buffer = max_buffer
        self._engine = engine
        self.dialect = engine.dialect.name
        self._metadata = MetaData(schema=schema)
        self._receipts, self._approvals, self._idempotency = _tables(self._metadata, prefix)
        self._lock = threading.RLock()
        self._buffer: deque[Receipt] = deque()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        try:
            self._create_tables()
        except SQLAlchemyError as exc:
            engine.dispose()
            reason = getattr(exc, "orig", None) or exc  # the driver's words, not SQLAlchemy's wrapper
            where = engine.url.render_as_string(hide_password=True)
            raise ToolError(f"cannot open the receipt store {where!r}: {reason}", code="E505") from exc
        _STORES.add(self)

    def _create_tables(self) -> None:
        with self._write() as conn:
            if self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"),
                             {"key": f"formulane:{self.prefix}"})
                if self.schema is not None:
                    conn.execute(CreateSchema(self.schema, if_not_exists=True))
            self._metadata.create_all(conn, checkfirst=True)

    # -- names and connections --------------------------------------------------------------

    def table(self, name: str) -> str:
        """The quoted, schema-qualified name of one of the store's tables (for operators)."""
        table = self._metadata.tables[f"{self.schema}.{self.prefix}{name}" if self.schema
                                      else f"{self.prefix}{name}"]
        return self._engine.dialect.identifier_preparer.format_table(table)

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """A transaction holding the store's lock (SQLite: BEGIN IMMEDIATE)."""
        with self._lock, self._engine.connect() as conn:
            conn.execution_options(formulane_write=True)
            with conn.begin():
                yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._lock, self._engine.connect() as conn:
            yield conn

    def _execute(self, sql: str, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """Rows of a literal statement (tests and operators dump tables with it)."""
        with self._read() as conn:
            return [tuple(row) for row in conn.execute(text(sql), dict(params or {}))]

    def _insert_ignoring_duplicates(self, table: Table, *keys: str) -> Insert:
        # Each dialect's own insert (loaded here: only the one in use is imported).
        if self.dialect == "postgresql":
            from sqlalchemy.dialects import postgresql

            return postgresql.insert(table).on_conflict_do_nothing(index_elements=list(keys))
        from sqlalchemy.dialects import sqlite

        return sqlite.insert(table).on_conflict_do_nothing(index_elements=list(keys))

    def _insert_receipts(self, conn: Connection, receipts: Sequence[Receipt]) -> None:
        rows = [dict(zip(RECEIPT_COLUMNS, receipt.to_row())) for receipt in receipts]
        conn.execute(self._insert_ignoring_duplicates(self._receipts, "id"), rows)

    # -- receipts ---------------------------------------------------------------------------

    def record(self, receipt: Receipt, *, durable: bool = False) -> None:
        """Store a receipt: now and durably, or in the next batch."""
        if self._closed:
            raise ToolError("the receipt store is closed", code="E505")
        if durable:
            with self._write() as conn:
                self._insert_receipts(conn, [receipt])
            return
        self._buffer.append(receipt)
        if self._thread is None:
            self._start_flusher()
        pending = len(self._buffer)
        if pending >= self.batch_size:
            self._wake.set()
        if pending >= self.max_buffer:
            # The writer is not keeping up (or the database is down): push back on the caller
            # rather than grow without bound or drop receipts.
            try:
                self.flush()
            except Exception as exc:
                raise ToolError(f"the receipt store is not accepting receipts: {type(exc).__name__}",
                                code="E505", hint="calls stop until receipts can be written") from exc

    def _start_flusher(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run_flusher, name="formulane-receipts",
                                                daemon=True)
                self._thread.start()

    def _run_flusher(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.flush_interval)
            self._wake.clear()
            try:
                self._flush_buffer()
            except Exception:  # noqa: BLE001 - logged; the batch is kept for the next try
                log.exception("could not write tool receipts; will retry")

    def _flush_buffer(self) -> None:
        batch: list[Receipt] = []
        while self._buffer:
            try:
                batch.append(self._buffer.popleft())
            except IndexError:
                break
        if not batch:
            return
        try:
            with self._write() as conn:
                self._insert_receipts(conn, batch)
        except Exception:
            self._buffer.extendleft(reversed(batch))  # keep order; the next flush retries
            raise

    def flush(self) -> None:
        """Write every buffered receipt now."""
        with self._lock:
            self._flush_buffer()

    def pending_receipts(self) -> int:
        return len(self._buffer)

    def receipt(self, receipt_id: str) -> Receipt | None:
        self.flush()
        r = self._receipts
        with self._read() as conn:
            row = conn.execute(select(*r.columns).where(r.c.id == receipt_id)).first()
        return Receipt.from_row(tuple(row)) if row is not None else None

    def receipts(self, *, tool: str | None = None, tenant: str | None = None, outcome: str | None = None,
                 idempotency_key: str | None = None, limit: int = 1000) -> list[Receipt]:
        """Receipts, oldest first, filtered by the given fields."""
        self.flush()
        r = self._receipts
        query = select(*r.columns)
        for column, value in (("tool", tool), ("tenant", tenant), ("outcome", outcome),
                              ("idempotency_key", idempotency_key)):
            if value is not None:
                query = query.where(r.c[column] == value)
        query = query.order_by(r.c.started_at, r.c.id).limit(int(limit))
        with self._read() as conn:
            return [Receipt.from_row(tuple(row)) for row in conn.execute(query)]

    # -- approvals --------------------------------------------------------------------------

    def add_approval(self, request: ApprovalRequest) -> None:
        with self._write() as conn:
            conn.execute(self._approvals.insert().values(dict(zip(APPROVAL_COLUMNS, _approval_row(request)))))

    def approval(self, approval_id: str) -> ApprovalRequest | None:
        a = self._approvals
        with self._read() as conn:
            row = conn.execute(select(*a.columns).where(a.c.id == approval_id)).first()
        return _approval_from_row(tuple(row)) if row is not None else None

    def open_approval(self, *, tool: str, version: str, tenant: str, requester: str,
                      args_hash: str, now: float) -> ApprovalRequest | None:
        """A pending or approved, unexpired request for exactly these arguments, if any."""
        a = self._approvals
        query = (select(*a.columns)
                 .where(a.c.tenant == tenant, a.c.tool == tool, a.c.version == version,
                        a.c.requester == requester, a.c.args_hash == args_hash,
                        a.c.status.in_(("pending", "approved")))
                 .order_by(a.c.created_at.desc(), a.c.id.desc()))
        with self._read() as conn:
            rows = conn.execute(query).all()
        for row in rows:
            request = _approval_from_row(tuple(row))
            if not request.expired(now):
                return request
        return None

    def approvals(self, *, tenant: str, status: str | None = None, tool: str | None = None,
                  limit: int = 100) -> list[ApprovalRequest]:
        """One tenant's approval requests, newest first (the HTTP service lists pending ones)."""
        a = self._approvals
        query = select(*a.columns).where(a.c.tenant == tenant)
        if status is not None:
            query = query.where(a.c.status == status)
        if tool is not None:
            query = query.where(a.c.tool == tool)
        query = query.order_by(a.c.created_at.desc(), a.c.id.desc()).limit(int(limit))
        with self._read() as conn:
            return [_approval_from_row(tuple(row)) for row in conn.execute(query)]

    def count_approvals(self, status: str = "pending") -> int:
        a = self._approvals
        with self._read() as conn:
            count = conn.execute(select(func.count()).select_from(a).where(a.c.status == status)).scalar()
        return int(count or 0)

    def decide_approval(self, approval_id: str, *, status: str, approver: str, reason: str | None,
                        now: float) -> bool:
        """Move a pending request to approved/denied; False if it was no longer pending."""
        a = self._approvals
        with self._write() as conn:
            result = conn.execute(update(a).where(a.c.id == approval_id, a.c.status == "pending")
                                  .values(status=status, approver=approver, decided_at=now, reason=reason))
        return result.rowcount == 1

    # -- idempotency ------------------------------------------------------------------------

    def reserve(self, *, tenant: str, tool: str, key: str, args_hash: str, receipt_id: str,
                approval_id: str | None, now: float) -> Reservation:
        """Claim (tenant, tool, key) durably before running a write, and use the approval.

        Exactly one caller wins the claim, across threads, processes and servers.
        """
        i, a = self._idempotency, self._approvals
        claim = self._insert_ignoring_duplicates(i, "tenant", "tool", "key").values(
            tenant=tenant, tool=tool, key=key, args_hash=args_hash, state="started", receipt_id=receipt_id,
            approval_id=approval_id, started_at=now,
        ).execution_options(preserve_rowcount=True)  # an INSERT's rowcount is not kept otherwise
        with self._write() as conn:
            if conn.execute(claim).rowcount == 1:
                if approval_id is not None:
                    used = conn.execute(update(a).where(a.c.id == approval_id, a.c.status == "approved")
                                        .values(status="used", idempotency_key=key)).rowcount
                    if used != 1:
                        conn.rollback()
                        return Reservation("approval_unavailable")
                return Reservation("new")
            row = conn.execute(
                select(i.c.args_hash, i.c.state, i.c.receipt_id, i.c.outcome, i.c.result, i.c.error)
                .where(i.c.tenant == tenant, i.c.tool == tool, i.c.key == key)).first()
        if row is None:  # deleted between the two statements: treat as a conflict, never run
            return Reservation("conflict")
        stored_hash, state, stored_receipt, outcome, result, error = row
        if stored_hash != args_hash:
            return Reservation("conflict", args_hash=stored_hash, receipt_id=stored_receipt)
        return Reservation(state, stored_hash, stored_receipt, outcome, result, error)

    def complete(self, *, tenant: str, tool: str, key: str, outcome: str, result: str | None,
                 error: str | None, receipt: Receipt, now: float) -> None:
        """Record a write's outcome and its receipt in one durable transaction."""
        i = self._idempotency
        with self._write() as conn:
            conn.execute(update(i).where(i.c.tenant == tenant, i.c.tool == tool, i.c.key == key)
                         .values(state="done", outcome=outcome, result=result, error=error, finished_at=now))
            self._insert_receipts(conn, [receipt])

    def unresolved_writes(self) -> list[dict[str, Any]]:
        """Writes whose outcome is unknown (reserved, never completed): for an operator."""
        i = self._idempotency
        keys = ("tenant", "tool", "key", "args_hash", "receipt_id", "approval_id", "started_at")
        query = select(*(i.c[k] for k in keys)).where(i.c.state == "started").order_by(i.c.started_at)
        with self._read() as conn:
            return [dict(zip(keys, row)) for row in conn.execute(query)]

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            self._flush_buffer()
            self._closed = True
            self._engine.dispose()
        _STORES.discard(self)

    def __enter__(self) -> "SQLStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _approval_row(request: ApprovalRequest) -> tuple[Any, ...]:
    return (
        request.id, request.tool, request.version, request.args_hash, request.args, request.requester,
        request.requester_kind, request.tenant, request.status, request.created_at, request.expires_at,
        request.approver, request.decided_at, request.reason, request.idempotency_key,
    )


def _approval_from_row(row: Sequence[Any]) -> ApprovalRequest:
    return ApprovalRequest(
        id=row[0], tool=row[1], version=row[2], args_hash=row[3], args=row[4], requester=row[5],
        requester_kind=row[6], tenant=row[7], status=row[8], created_at=float(row[9]),
        expires_at=float(row[10]), approver=row[11], decided_at=None if row[12] is None else float(row[12]),
        reason=row[13], idempotency_key=row[14],
    )


class SQLiteStore(SQLStore):
    """The default store: one SQLite file (WAL, synchronous=FULL), or `:memory:`."""

    def __init__(self, path: str = ":memory:", **options: Any) -> None:
        self.path = path
        super().__init__(_sqlite_engine(path), **options)


class PostgresStore(SQLStore):
    """Several servers sharing one PostgreSQL database; `schema=` puts the tables in a schema
    (created if missing). The idempotency claim is an `INSERT ... ON CONFLICT DO NOTHING` inside
    a transaction, so exactly one server runs a given write. Needs the `postgres` extra."""

    def __init__(self, url: str, *, schema: str | None = None, **options: Any) -> None:
        try:
            import psycopg  # noqa: F401 - the driver SQLAlchemy loads; a clear error if missing
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ToolError("PostgreSQL receipts need psycopg 3", code="E506",
                            hint="pip install 'formulane[postgres]'") from exc
        try:
            parsed = make_url(url)
        except ArgumentError as exc:
            raise ToolError(f"invalid PostgreSQL URL: {exc}", code="E506") from exc
        if parsed.drivername in ("postgresql", "postgres"):
            parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3, not SQLAlchemy's default
        # The store's lock serialises its statements: one pooled connection is all it needs.
        engine = create_engine(parsed, pool_size=1, max_overflow=2, pool_pre_ping=True)
        super().__init__(engine, schema=schema, **options)


def open_store(spec: "str | SQLStore | None" = None, **options: Any) -> SQLStore:
    """A store from a spec: None or ':memory:', a file path, 'sqlite:///path', or a PostgreSQL URL."""
    if isinstance(spec, SQLStore):
        return spec
    if spec is None or spec == ":memory:":
        return SQLiteStore(":memory:", **options)
    if not isinstance(spec, str) or not spec:
        raise ToolError(f"store must be a path, a URL or a store object, got {spec!r}", code="E506")
    if spec.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        return PostgresStore(spec, **options)
    if spec.startswith("sqlite:///"):
        return SQLiteStore(spec[len("sqlite:///"):] or ":memory:", **options)
    if "://" in spec:
        raise ToolError(f"unsupported store URL {spec.split('://')[0]!r}://", code="E506",
                        hint="use a file path, sqlite:///path or postgresql://...")
    return SQLiteStore(spec, **options)
