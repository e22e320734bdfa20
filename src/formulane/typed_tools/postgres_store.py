"""PostgreSQL store for receipts, approvals and idempotency records (psycopg 3).

Contract: the same tables and semantics as `SQLiteStore`, for several servers sharing one
database: the idempotency claim is an `INSERT ... ON CONFLICT DO NOTHING` inside a
transaction, so exactly one server runs a given write. `schema=` puts the tables in a
PostgreSQL schema (created if missing); table creation is serialized with an advisory lock so
servers starting together do not race. Requires the `postgres` extra (`psycopg[binary]`).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..errors import ToolError
from .store import _IDENT, SQLStore


class PostgresStore(SQLStore):
    placeholder = "%s"
    dialect = "postgresql"

    def __init__(self, url: str, *, schema: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ToolError("PostgreSQL receipts need psycopg 3", code="E506",
                            hint="pip install 'formulane[postgres]'") from exc
        if schema is not None and not _IDENT.match(schema):
            raise ToolError(f"invalid PostgreSQL schema name {schema!r}", code="E506")
        self.schema = schema
        try:
            # autocommit: transactions are opened explicitly, exactly where the protocol needs them.
            self._conn = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            raise ToolError(f"cannot connect to the PostgreSQL receipt store: {exc}", code="E505") from exc
        with self._transaction():
            self._conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"formulane:{self.prefix}",))
            if schema is not None:
                self._conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            for statement in self._ddl():
                self._conn.execute(statement)

    def table(self, name: str) -> str:
        bare = f"{self.prefix}{name}"
        return f'"{self.schema}".{bare}' if self.schema else bare

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            cursor = self._conn.execute(sql, tuple(params))
            return cursor.fetchall() if cursor.description is not None else []

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._lock, self._conn.cursor() as cursor:
            cursor.executemany(sql, list(rows))

    def _rowcount(self, sql: str, params: Sequence[Any]) -> int:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).rowcount

    def _begin(self) -> None:
        self._conn.execute("BEGIN")

    def _commit(self) -> None:
        self._conn.execute("COMMIT")

    def _rollback(self) -> None:
        self._conn.execute("ROLLBACK")

    def _close_connection(self) -> None:
        self._conn.close()
