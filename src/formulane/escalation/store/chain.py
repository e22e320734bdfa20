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

- SQLite: one writer connection for the file (it has one writer), ``BEGIN IMMEDIATE``.
- PostgreSQL (psycopg 3): two round trips instead of six. The first sends ``BEGIN; LOCK TABLE;
  SELECT last link`` as one simple query; the second pipelines the INSERT, the ``then``
  statements and ``COMMIT`` (psycopg's pipeline mode), with the statements prepared on the
  server after their first uses (psycopg's automatic preparation).

A failure rolls the transaction back (a PostgreSQL connection left inside a transaction is
dropped rather than reused); the error is raised as SQLAlchemy's (``DBAPIError.instance``), as from the store's other methods.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from typing import Any, Callable, Iterator, Sequence

from sqlalchemy import Insert, Table, insert, select
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement

GENESIS = "0" * 64
_PG_IDLE = 0  # psycopg.pq.TransactionStatus.IDLE


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

    @contextlib.contextmanager
    def _connection(self, chain: str) -> Iterator[Any]:
        key = chain if self._postgres else ""
        with self._slots_lock:
            slot = self._slots.get(key)
            if slot is None:
                slot = self._slots[key] = _Slot()
        with slot.lock:
            if slot.conn is None:
                slot.conn = self._source.raw_connection()
            try:
                yield slot.conn
            except BaseException:
                if self._postgres and _pg_status(slot.conn) != _PG_IDLE:
                    with contextlib.suppress(Exception):
                        slot.conn.invalidate()  # a transaction left open: never reused
                    slot.conn = None
                raise

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
        run = self._postgres_link if self._postgres else self._sqlite_link
        with self._lock, self._connection(name) as conn:
            try:
                return run(conn, name, last, add, digest, row, then)
            except self._dbapi_error as exc:
                raise DBAPIError.instance(add, None, exc, self._dbapi_error) from exc

    @staticmethod
    def _row(prev: str | None, digest: str, row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        prev = prev or GENESIS
        chain = link_hash(prev, digest)
        return chain, {**row, "receipt_sha256": digest, "prev_chain": prev, "chain_sha256": chain}

    def _sqlite_link(self, conn: Any, name: str, last: str, add: str, digest: str,
                     row: dict[str, Any], then: Sequence[tuple[str, Any]]) -> str | None:
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE")  # the database's one writer lock, before the read
        try:
            found = cur.execute(last).fetchone()
            chain, values = self._row(found[0] if found else None, digest, row)
            cur.execute(add, values)
            if cur.rowcount != 1:
                cur.execute("ROLLBACK")
                return None
            for sql, params in then:
                (cur.executemany if isinstance(params, list) else cur.execute)(sql, params)
            cur.execute("COMMIT")
            return chain
        except BaseException:
            with contextlib.suppress(Exception):
                cur.execute("ROLLBACK")
            raise
        finally:
            cur.close()

    def _postgres_link(self, conn: Any, name: str, last: str, add: str, digest: str,
                       row: dict[str, Any], then: Sequence[tuple[str, Any]]) -> str | None:
        pg = conn.driver_connection  # psycopg's Connection, in autocommit mode
        cur, tail = pg.cursor(), pg.cursor()
        try:
            # One round trip: each statement of a simple query reads its own snapshot, so the
            # SELECT, after the lock is held, sees every link committed before it.
            cur.execute(f"BEGIN; LOCK TABLE {name} IN EXCLUSIVE MODE; {last}")
            while cur.description is None and cur.nextset():
                pass
            found = cur.fetchone()
            chain, values = self._row(found[0] if found else None, digest, row)
            # The second: the row, what goes with it and COMMIT, pipelined. A row the once
            # check kept out commits an empty transaction, which writes nothing.
            with pg.pipeline():
                cur.execute(add, values)
                for sql, params in then:
                    (tail.executemany if isinstance(params, list) else tail.execute)(sql, params)
                tail.execute("COMMIT")
            if cur.rowcount != 1:  # the once check kept it out (an empty commit, nothing written)
                return None
            return chain
        except BaseException:
            with contextlib.suppress(Exception):
                pg.execute("ROLLBACK")
            raise
        finally:
            cur.close()
            tail.close()


def _pg_status(conn: Any) -> int:
    driver: Any = conn.driver_connection
    return int(driver.info.transaction_status)


class _Slot:
    """A held driver connection and the lock its users take turns on."""

    __slots__ = ("conn", "lock")

    def __init__(self) -> None:
        self.conn: Any = None
        self.lock = threading.Lock()
