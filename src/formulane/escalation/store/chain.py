"""The store's two hot writes, a hash-chain link with what goes with it, on held connections.

Contract: `ChainWriter.link(table, digest, row, once=..., then=...)` appends one link to a
hash-chained table (``receipt_sha256``, ``prev_chain``, ``chain_sha256`` filled in here) and
runs the ``then`` statements (the job's status, the artifacts' rows) in the same transaction,
under that chain's writer lock; with ``once``, the row is written only if no row has the same
keys, and None is returned when one was already there. Everything `jobstore` guarantees holds:
the lock is taken before the last link is read (``BEGIN IMMEDIATE`` on SQLite; ``LOCK TABLE ...
IN EXCLUSIVE MODE`` on PostgreSQL, a statement of its own so the read after it sees every
committed link), the chain is `link_hash`, and the append-only triggers and the creation lock
are the database's, untouched here.

Why not a SQLAlchemy ``Connection`` per call, as every other method does: a receipt is written
per job, and SQLAlchemy's per-statement work (pool checkout and reset, events, result objects,
about 1 ms of CPU per write) plus six round trips made it 3x slower than the hand-written store
it replaced (bench/JOBSTORE.md). Here the statements are still built from the declared tables
(`schema`), compiled once per store into each driver's SQL, and run on driver connections taken
from the engine's pool once and kept, one per chain, each behind a Python lock (writers of one
chain take turns anyway, and a lock handed over inside the process is quicker than the server's
lock queue or SQLite's busy handler, which sleeps); other processes and servers still queue on
the database's lock:

Writes that queue up behind the lock are committed together (group commit, at most
`MAX_BATCH`): whoever holds the lock writes every queued link in order in one transaction, each
link computed from the one before it, so N threads pay for one commit (on this disk a durable
commit is most of a write's time); each call still returns only after its own link is
committed. If that transaction fails, its requests are written one at a time, so only the one
at fault raises.

- SQLite: one writer connection for the file (it has one writer), ``BEGIN IMMEDIATE``.
- PostgreSQL (psycopg 3): two round trips instead of six. The first sends ``BEGIN; LOCK TABLE;
  SELECT last link`` as one simple query; the second pipelines the INSERTs, the ``then``
  statements and ``COMMIT`` (psycopg's pipeline mode; a once-only INSERT followed by another
  syncs first, since whether it wrote decides the next link), the statements prepared on the server after their first
  uses (psycopg's automatic preparation).

A failure rolls the transaction back (a PostgreSQL connection left inside a transaction is
dropped rather than reused); the error is raised as SQLAlchemy's (``DBAPIError.instance``), as from the store's other methods.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from typing import Any, Callable, Sequence

from sqlalchemy import Insert, Table, insert, select
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement

GENESIS = "0" * 64
_PG_IDLE = 0  # psycopg.pq.TransactionStatus.IDLE
#: Links written in one transaction at most (group commit: see the module doc).
MAX_BATCH = 64


def link_hash(prev: str, digest: str) -> str:
    """The chain: ``sha256(previous chain + receipt hash)``, hex (the record format)."""
    return hashlib.sha256((prev + digest).encode()).hexdigest()


class ChainWriter:
    """Chain writes of one store (see the module doc)."""

    def __init__(self, engine: Engine, *, lock: contextlib.AbstractContextManager[Any],
                 autocommit: Engine | None = None) -> None:
        self._postgres = engine.dialect.name == "postgresql"
        # SQLite's driver takes ``:name`` marks with a dict; the engine's dialect writes ``?``.
        self._dialect = engine.dialect if self._postgres else sqlite_dialect.dialect(
            paramstyle="named")
        self._dbapi_error: type[Exception] = engine.dialect.loaded_dbapi.Error
        # PostgreSQL: connections from the autocommit engine (the transaction is spelled out);
        # SQLite: from the engine itself (in memory, its one connection).
        self._source = autocommit if self._postgres and autocommit is not None else engine
        self._lock = lock  # the store's (an in-memory SQLite store serializes every call)
        # One held connection per chain (PostgreSQL) or for the file (SQLite), each behind a
        # Python lock: writers of one chain take turns anyway, and handing over a lock inside
        # the process is quicker than the server's lock queue (or SQLite's busy handler).
        self._slots: dict[str, _Slot] = {}
        self._slots_lock = threading.Lock()
        self._sql: dict[Any, str] = {}

    def sql(self, key: str, build: Callable[[], ClauseElement], *columns: str,
            literal: bool = False) -> str:
        """The statement ``build()`` makes, compiled once per store into this driver's SQL
        (``columns``: an INSERT's; ``literal``: constants inline, as LIMIT 1)."""
        found = self._sql.get(key)
        if found is None:
            compiled = build().compile(dialect=self._dialect, column_keys=list(columns) or None,
                                       compile_kwargs={"literal_binds": literal})
            found = self._sql[key] = str(compiled)
        return found

    def close(self) -> None:
        with self._slots_lock:
            slots, self._slots = list(self._slots.values()), {}
        for slot in slots:
            with slot.lock:
                if slot.conn is not None:
                    slot.conn.close()  # back to the engine's pool, which the store disposes of
                    slot.conn = None

    def _slot(self, chain: str) -> _Slot:
        key = chain if self._postgres else ""
        with self._slots_lock:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = _Slot()
            return slot

    def link(self, table: Table, digest: str, row: dict[str, Any], *,
             once: tuple[str, Callable[[], Insert]] | None = None,
             then: Sequence[tuple[str, dict[str, Any] | list[dict[str, Any]]]] = ()) -> str | None:
        """Append one link (see the module doc); the new chain hash, or None when ``once``
        (a key and the builder of an `_insert_once` statement) found a row with the same keys,
        and nothing was written. ``then``: (SQL from `sql`, parameters or a list of them)."""
        if once is not None and then:
            raise ValueError("a once-only link carries no statements after it")
        name = table.name
        last = self.sql(f"last {name}", lambda: select(table.c.chain_sha256)
                        .order_by(table.c.seq.desc()).limit(1), literal=True)
        if once is not None:
            add = self.sql(once[0], once[1])
        else:
            columns = tuple(sorted({*row, "receipt_sha256", "prev_chain", "chain_sha256"}))
            add = self.sql(f"insert {name} {columns}", lambda: insert(table).inline(), *columns)
        request = _Request(name, last, add, digest, row, once is not None, then)
        slot = self._slot(name)
        with self._lock:
            with slot.queue_lock:
                slot.queue.append(request)
            # Group commit: whoever holds the slot writes every request queued so far (its own
            # among them) in one transaction; the others find theirs done when they get in.
            while True:
                with slot.lock:
                    if request.done:
                        break
                    with slot.queue_lock:
                        batch, slot.queue = slot.queue[:MAX_BATCH], slot.queue[MAX_BATCH:]
                    self._write(slot, batch)
        if request.error is not None:
            raise request.error
        return request.result

    def _write(self, slot: _Slot, batch: list[_Request]) -> None:
        """Write ``batch`` in one transaction; if that fails, each request alone, so that only
        the request at fault gets the error. Every request ends done."""
        try:
            if slot.conn is None:
                slot.conn = self._source.raw_connection()
            run = self._postgres_batch if self._postgres else self._sqlite_batch
            for request, result in zip(batch, run(slot.conn, batch), strict=True):
                request.result = result
        except BaseException as exc:
            if self._postgres and slot.conn is not None and _pg_status(slot.conn) != _PG_IDLE:
                with contextlib.suppress(Exception):
                    slot.conn.invalidate()  # a transaction left open: never reused
                slot.conn = None
            if len(batch) > 1 and isinstance(exc, self._dbapi_error):
                for request in batch:
                    self._write(slot, [request])
                return
            for request in batch:  # one request's database error, or a fault of every one
                request.error = (DBAPIError.instance(request.add, None, exc, self._dbapi_error)
                                 if isinstance(exc, self._dbapi_error) else exc)
        for request in batch:
            request.done = True

    @staticmethod
    def _row(prev: str | None, digest: str, row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        prev = prev or GENESIS
        chain = link_hash(prev, digest)
        return chain, {**row, "receipt_sha256": digest, "prev_chain": prev, "chain_sha256": chain}

    def _sqlite_batch(self, conn: Any, batch: list[_Request]) -> list[str | None]:
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE")  # the database's one writer lock, before the read
        try:
            prev: dict[str, str | None] = {}
            out: list[str | None] = []
            for r in batch:
                if r.chain not in prev:
                    found = cur.execute(r.last).fetchone()
                    prev[r.chain] = found[0] if found else None
                chain, values = self._row(prev[r.chain], r.digest, r.row)
                cur.execute(r.add, values)
                if cur.rowcount != 1:  # the once check kept it out: nothing written
                    out.append(None)
                    continue
                for sql, params in r.then:
                    (cur.executemany if isinstance(params, list) else cur.execute)(sql, params)
                prev[r.chain] = chain
                out.append(chain)
            cur.execute("COMMIT")
            return out
        except BaseException:
            with contextlib.suppress(Exception):
                cur.execute("ROLLBACK")
            raise
        finally:
            cur.close()

    def _postgres_batch(self, conn: Any, batch: list[_Request]) -> list[str | None]:
        pg = conn.driver_connection  # psycopg's Connection, in autocommit mode
        cursors = [pg.cursor() for _ in range(len(batch) + 1)]
        head, tail = cursors[0], cursors[-1]
        try:
            # One round trip: each statement of a simple query reads its own snapshot, so the
            # SELECT, after the lock is held, sees every link committed before it. (A slot
            # serves one chain, so the batch is of one table.)
            head.execute(f"BEGIN; LOCK TABLE {batch[0].chain} IN EXCLUSIVE MODE; "
                         f"{batch[0].last}")
            while head.description is None and head.nextset():
                pass
            found = head.fetchone()
            prev: str | None = found[0] if found else None
            out: list[str | None] = []
            # The second: the rows, what goes with them and COMMIT, pipelined (a once-only
            # row syncs first: whether it was written decides the next link).
            with pg.pipeline() as pipeline:
                for r, cur in zip(batch, cursors):
                    chain, values = self._row(prev, r.digest, r.row)
                    cur.execute(r.add, values)
                    if r.once and r is not batch[-1]:
                        pipeline.sync()
                        if cur.rowcount != 1:
                            out.append(None)
                            continue
                    for sql, params in r.then:
                        (tail.executemany if isinstance(params, list) else tail.execute)(
                            sql, params)
                    prev = chain
                    out.append(chain)
                tail.execute("COMMIT")
            if batch[-1].once and cursors[len(batch) - 1].rowcount != 1:
                out[-1] = None  # the last row, kept out: its (empty) part committed nothing
            return out
        except BaseException:
            with contextlib.suppress(Exception):
                pg.execute("ROLLBACK")
            raise
        finally:
            for cur in cursors:
                cur.close()


def _pg_status(conn: Any) -> int:
    driver: Any = conn.driver_connection
    return int(driver.info.transaction_status)


class _Slot:
    """A held driver connection, the lock its writers take turns on, and their queue."""

    __slots__ = ("conn", "lock", "queue", "queue_lock")

    def __init__(self) -> None:
        self.conn: Any = None
        self.lock = threading.Lock()
        self.queue: list[_Request] = []
        self.queue_lock = threading.Lock()


class _Request:
    """One link to write, and once written (``done``) its chain hash or its error."""

    __slots__ = ("add", "chain", "digest", "done", "error", "last", "once", "result", "row",
                 "then")

    def __init__(self, chain: str, last: str, add: str, digest: str, row: dict[str, Any],
                 once: bool, then: Sequence[tuple[str, Any]]) -> None:
        self.chain, self.last, self.add, self.digest = chain, last, add, digest
        self.row, self.once, self.then = row, once, then
        self.done = False
        self.result: str | None = None
        self.error: BaseException | None = None
