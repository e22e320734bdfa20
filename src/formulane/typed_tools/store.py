"""Durable storage for receipts, approvals and idempotency records (SQL, two dialects).

Contract: `SQLStore` holds the SQL both backends share; `SQLiteStore` (stdlib `sqlite3`, the
default) and `PostgresStore` (psycopg 3, for several servers; in `postgres_store.py`) add the
connection. Receipts of reads and refusals are buffered and written in batches by one
background thread (`flush()` forces it; `close()` and interpreter exit flush). Everything a
write depends on is durable before the call returns: the idempotency reservation is committed
*before* the tool runs, and the result, the receipt and the approval's use are committed in one
transaction after it. A reservation left in state `started` therefore means "may have run":
the next call with that key gets outcome `unknown` and the tool never runs again.
`open_store(spec)` builds a store from a path or URL.
"""

from __future__ import annotations

import atexit
import logging
import re
import sqlite3
import threading
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Sequence

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


class SQLStore:
    """Shared SQL; subclasses provide `_execute`, `_transaction` and the placeholder style."""

    placeholder = "?"
    dialect = "sqlite"

    def __init__(self, *, prefix: str = "formulane_tool_", flush_interval: float = 0.05,
                 batch_size: int = 512, max_buffer: int = 100_000) -> None:
        if not _IDENT.match(prefix):
            raise ToolError(f"invalid table prefix {prefix!r}", code="E506",
                            hint="letters, digits and '_' only, starting with a letter")
        self.prefix = prefix
        self.flush_interval = flush_interval
        self.batch_size = batch_size
        self.max_buffer = max_buffer
        self._lock = threading.RLock()
        self._buffer: deque[Receipt] = deque()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        _STORES.add(self)

    # -- names ------------------------------------------------------------------------------

    def table(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def _ddl(self) -> list[str]:
        r, a, i = self.table("receipts"), self.table("approvals"), self.table("idempotency")
        p = self.prefix  # index names are never schema-qualified
        return [
            # Times are epoch seconds (DOUBLE PRECISION): cheap to write for every receipt, and
            # readable with datetime(x, 'unixepoch') / to_timestamp(x).
            f"""CREATE TABLE IF NOT EXISTS {r} (
                id TEXT PRIMARY KEY, tool TEXT NOT NULL, version TEXT NOT NULL,
                schema_hash TEXT NOT NULL, effect TEXT NOT NULL, principal TEXT NOT NULL,
                principal_kind TEXT NOT NULL, tenant TEXT NOT NULL, outcome TEXT NOT NULL,
                started_at DOUBLE PRECISION NOT NULL, finished_at DOUBLE PRECISION NOT NULL,
                validate_us BIGINT, authorize_us BIGINT, execute_us BIGINT, total_us BIGINT,
                args_hash TEXT, args TEXT, result_hash TEXT, error_code TEXT, error_message TEXT,
                approval_id TEXT, idempotency_key TEXT, call_id TEXT, replay_of TEXT)""",
            f"CREATE INDEX IF NOT EXISTS {p}receipts_by_tool ON {r} (tool, started_at)",
            f"CREATE INDEX IF NOT EXISTS {p}receipts_by_key ON {r} (tenant, idempotency_key)",
            f"""CREATE TABLE IF NOT EXISTS {a} (
                id TEXT PRIMARY KEY, tool TEXT NOT NULL, version TEXT NOT NULL,
                args_hash TEXT NOT NULL, args TEXT NOT NULL, requester TEXT NOT NULL,
                requester_kind TEXT NOT NULL, tenant TEXT NOT NULL, status TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL,
                approver TEXT, decided_at DOUBLE PRECISION, reason TEXT, idempotency_key TEXT)""",
            f"CREATE INDEX IF NOT EXISTS {p}approvals_by_args ON {a} (tenant, tool, args_hash)",
            f"""CREATE TABLE IF NOT EXISTS {i} (
                tenant TEXT NOT NULL, tool TEXT NOT NULL, key TEXT NOT NULL,
                args_hash TEXT NOT NULL, state TEXT NOT NULL, receipt_id TEXT NOT NULL,
                approval_id TEXT, outcome TEXT, result TEXT, error TEXT,
                started_at DOUBLE PRECISION NOT NULL, finished_at DOUBLE PRECISION,
                PRIMARY KEY (tenant, tool, key))""",
        ]

    def _sql(self, text: str) -> str:
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)

    # -- backend hooks ----------------------------------------------------------------------

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    def _rowcount(self, sql: str, params: Sequence[Any]) -> int:
        raise NotImplementedError

    def _begin(self) -> None:
        raise NotImplementedError

    def _commit(self) -> None:
        raise NotImplementedError

    def _rollback(self) -> None:
        raise NotImplementedError

    def _close_connection(self) -> None:
        raise NotImplementedError

    def _transaction(self) -> "_Tx":
        return _Tx(self)

    # -- receipts ---------------------------------------------------------------------------

    def _insert_receipts_sql(self) -> str:
        cols = ", ".join(RECEIPT_COLUMNS)
        marks = ", ".join("?" for _ in RECEIPT_COLUMNS)
        return self._sql(f"INSERT INTO {self.table('receipts')} ({cols}) VALUES ({marks}) "
                         "ON CONFLICT (id) DO NOTHING")

    def record(self, receipt: Receipt, *, durable: bool = False) -> None:
        """Store a receipt: now and durably, or in the next batch."""
        if self._closed:
            raise ToolError("the receipt store is closed", code="E505")
        if durable:
            with self._transaction():
                self._execute(self._insert_receipts_sql(), receipt.to_row())
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
            with self._transaction():
                self._executemany(self._insert_receipts_sql(), [r.to_row() for r in batch])
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
        rows = self._execute(self._sql(f"SELECT {', '.join(RECEIPT_COLUMNS)} FROM {self.table('receipts')} "
                                       "WHERE id = ?"), (receipt_id,))
        return Receipt.from_row(rows[0]) if rows else None

    def receipts(self, *, tool: str | None = None, tenant: str | None = None, outcome: str | None = None,
                 idempotency_key: str | None = None, limit: int = 1000) -> list[Receipt]:
        """Receipts, oldest first, filtered by the given fields."""
        self.flush()
        where, params = [], []
        for column, value in (("tool", tool), ("tenant", tenant), ("outcome", outcome),
                              ("idempotency_key", idempotency_key)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        rows = self._execute(
            self._sql(f"SELECT {', '.join(RECEIPT_COLUMNS)} FROM {self.table('receipts')}{clause} "
                      f"ORDER BY started_at, id LIMIT {int(limit)}"),
            params,
        )
        return [Receipt.from_row(row) for row in rows]

    # -- approvals --------------------------------------------------------------------------

    def add_approval(self, request: ApprovalRequest) -> None:
        cols = ", ".join(APPROVAL_COLUMNS)
        marks = ", ".join("?" for _ in APPROVAL_COLUMNS)
        with self._transaction():
            self._execute(self._sql(f"INSERT INTO {self.table('approvals')} ({cols}) VALUES ({marks})"),
                          _approval_row(request))

    def approval(self, approval_id: str) -> ApprovalRequest | None:
        rows = self._execute(self._sql(f"SELECT {', '.join(APPROVAL_COLUMNS)} FROM {self.table('approvals')} "
                                       "WHERE id = ?"), (approval_id,))
        return _approval_from_row(rows[0]) if rows else None

    def open_approval(self, *, tool: str, version: str, tenant: str, requester: str,
                      args_hash: str, now: float) -> ApprovalRequest | None:
        """A pending or approved, unexpired request for exactly these arguments, if any."""
        rows = self._execute(
            self._sql(f"SELECT {', '.join(APPROVAL_COLUMNS)} FROM {self.table('approvals')} "
                      "WHERE tenant = ? AND tool = ? AND version = ? AND requester = ? AND args_hash = ? "
                      "AND status IN ('pending', 'approved') ORDER BY created_at DESC, id DESC"),
            (tenant, tool, version, requester, args_hash),
        )
        for row in rows:
            request = _approval_from_row(row)
            if not request.expired(now):
                return request
        return None

    def approvals(self, *, tenant: str, status: str | None = None, tool: str | None = None,
                  limit: int = 100) -> list[ApprovalRequest]:
        """One tenant's approval requests, newest first (the HTTP service lists pending ones)."""
        where, params = ["tenant = ?"], [tenant]
        for column, value in (("status", status), ("tool", tool)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        rows = self._execute(
            self._sql(f"SELECT {', '.join(APPROVAL_COLUMNS)} FROM {self.table('approvals')} "
                      f"WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC "
                      f"LIMIT {int(limit)}"), params)
        return [_approval_from_row(row) for row in rows]

    def count_approvals(self, status: str = "pending") -> int:
        rows = self._execute(self._sql(f"SELECT COUNT(*) FROM {self.table('approvals')} "
                                       "WHERE status = ?"), (status,))
        return int(rows[0][0]) if rows else 0

    def decide_approval(self, approval_id: str, *, status: str, approver: str, reason: str | None,
                        now: float) -> bool:
        """Move a pending request to approved/denied; False if it was no longer pending."""
        with self._transaction():
            count = self._rowcount(
                self._sql(f"UPDATE {self.table('approvals')} SET status = ?, approver = ?, decided_at = ?, "
                          "reason = ? WHERE id = ? AND status = 'pending'"),
                (status, approver, now, reason, approval_id),
            )
        return count == 1

    # -- idempotency ------------------------------------------------------------------------

    def reserve(self, *, tenant: str, tool: str, key: str, args_hash: str, receipt_id: str,
                approval_id: str | None, now: float) -> Reservation:
        """Claim (tenant, tool, key) durably before running a write, and use the approval.

        Exactly one caller wins the claim, across threads, processes and servers.
        """
        idem = self.table("idempotency")
        with self._transaction() as tx:
            won = self._rowcount(
                self._sql(f"INSERT INTO {idem} (tenant, tool, key, args_hash, state, receipt_id, approval_id, "
                          "started_at) VALUES (?, ?, ?, ?, 'started', ?, ?, ?) "
                          "ON CONFLICT (tenant, tool, key) DO NOTHING"),
                (tenant, tool, key, args_hash, receipt_id, approval_id, now),
            )
            if won == 1:
                if approval_id is not None:
                    used = self._rowcount(
                        self._sql(f"UPDATE {self.table('approvals')} SET status = 'used', idempotency_key = ? "
                                  "WHERE id = ? AND status = 'approved'"),
                        (key, approval_id),
                    )
                    if used != 1:
                        tx.rollback()
                        return Reservation("approval_unavailable")
                return Reservation("new")
            rows = self._execute(
                self._sql(f"SELECT args_hash, state, receipt_id, outcome, result, error FROM {idem} "
                          "WHERE tenant = ? AND tool = ? AND key = ?"),
                (tenant, tool, key),
            )
        if not rows:  # deleted between the two statements: treat as a conflict, never run
            return Reservation("conflict")
        stored_hash, state, stored_receipt, outcome, result, error = rows[0]
        if stored_hash != args_hash:
            return Reservation("conflict", args_hash=stored_hash, receipt_id=stored_receipt)
        return Reservation(state, stored_hash, stored_receipt, outcome, result, error)

    def complete(self, *, tenant: str, tool: str, key: str, outcome: str, result: str | None,
                 error: str | None, receipt: Receipt, now: float) -> None:
        """Record a write's outcome and its receipt in one durable transaction."""
        with self._transaction():
            self._execute(
                self._sql(f"UPDATE {self.table('idempotency')} SET state = 'done', outcome = ?, result = ?, "
                          "error = ?, finished_at = ? WHERE tenant = ? AND tool = ? AND key = ?"),
                (outcome, result, error, now, tenant, tool, key),
            )
            self._execute(self._insert_receipts_sql(), receipt.to_row())

    def unresolved_writes(self) -> list[dict[str, Any]]:
        """Writes whose outcome is unknown (reserved, never completed): for an operator."""
        rows = self._execute(
            f"SELECT tenant, tool, key, args_hash, receipt_id, approval_id, started_at "
            f"FROM {self.table('idempotency')} WHERE state = 'started' ORDER BY started_at"
        )
        keys = ("tenant", "tool", "key", "args_hash", "receipt_id", "approval_id", "started_at")
        return [dict(zip(keys, row)) for row in rows]

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
            self._close_connection()
        _STORES.discard(self)

    def __enter__(self) -> "SQLStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Tx:
    """A transaction on the store's single connection, holding the store's lock."""

    def __init__(self, store: SQLStore) -> None:
        self.store = store
        self.done = False

    def __enter__(self) -> "_Tx":
        self.store._lock.acquire()
        try:
            self.store._begin()
        except BaseException:
            self.store._lock.release()
            raise
        return self

    def rollback(self) -> None:
        if not self.done:
            self.store._rollback()
            self.done = True

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if not self.done:
                if exc_type is None:
                    self.store._commit()
                else:
                    self.store._rollback()
                self.done = True
        finally:
            self.store._lock.release()


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
        super().__init__(**options)
        self.path = path
        try:
            # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE), so a writer
            # takes the lock up front and two processes cannot deadlock on an upgrade.
            self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        except sqlite3.Error as exc:
            raise ToolError(f"cannot open the receipt store {path!r}: {exc}", code="E505") from exc
        if path != ":memory:":
            self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA busy_timeout=30000")
        with self._transaction():
            for statement in self._ddl():
                self._conn.execute(statement)

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._lock:
            self._conn.executemany(sql, rows)

    def _rowcount(self, sql: str, params: Sequence[Any]) -> int:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).rowcount

    def _begin(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def _commit(self) -> None:
        self._conn.execute("COMMIT")

    def _rollback(self) -> None:
        self._conn.execute("ROLLBACK")

    def _close_connection(self) -> None:
        self._conn.close()


def open_store(spec: "str | SQLStore | None" = None, **options: Any) -> SQLStore:
    """A store from a spec: None or ':memory:', a file path, 'sqlite:///path', or a PostgreSQL URL."""
    if isinstance(spec, SQLStore):
        return spec
    if spec is None or spec == ":memory:":
        return SQLiteStore(":memory:", **options)
    if not isinstance(spec, str) or not spec:
        raise ToolError(f"store must be a path, a URL or a store object, got {spec!r}", code="E506")
    if spec.startswith(("postgresql://", "postgres://")):
        from .postgres_store import PostgresStore

        return PostgresStore(spec, **options)
    if spec.startswith("sqlite:///"):
        return SQLiteStore(spec[len("sqlite:///"):] or ":memory:", **options)
    if "://" in spec:
        raise ToolError(f"unsupported store URL {spec.split('://')[0]!r}://", code="E506",
                        hint="use a file path, sqlite:///path or postgresql://...")
    return SQLiteStore(spec, **options)
