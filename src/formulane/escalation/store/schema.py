"""The job store's tables (SQLAlchemy Core), its engines and the statements no library writes.

Contract: `METADATA` declares every table of the escalation lane's store, column for column
what the store created before it moved to SQLAlchemy (same names, types, indexes and
``seq INTEGER PRIMARY KEY AUTOINCREMENT`` on SQLite), so a database file or schema written by
the older hand-written SQL opens unchanged. `create(engine)` creates what is missing (the store
still creates its own tables, as before; the service's Alembic migrations cover only the
service's tables) and (re)installs the append-only triggers. `sqlite_engine(path)` and
`postgres_engine(url, schema)` build the engines: SQLite in WAL with a busy timeout and
SQLAlchemy emitting ``BEGIN`` itself, so a writing transaction can ask for ``BEGIN IMMEDIATE``
(the database's one writer lock, taken up front) with the ``formulane_writer`` execution
option; PostgreSQL through psycopg 3 with the store's schema on the search path.

What stays hand-written, and why: the triggers (SQLAlchemy has no trigger construct; each
dialect's body is its own language), ``BEGIN IMMEDIATE`` (pysqlite's own BEGIN is deferred and
SQLAlchemy has no option for it; the dialect's documented recipe is this ``begin`` event), and
the PostgreSQL advisory lock around creation (no portable construct; two servers starting at
once must not both create the tables).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger, Column, Double, Index, Integer, MetaData, Table, Text, UniqueConstraint,
    create_engine, event, text,
)
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.pool import StaticPool

from ...errors import EscalationError

METADATA = MetaData()
#: The advisory lock key the store has always taken while creating its tables on PostgreSQL
#: (kept, so a server running the older code and one running this code still take turns).
CREATE_LOCK = 7203117
WRITER = "formulane_writer"

# BIGSERIAL on PostgreSQL; on SQLite the rowid alias (with sqlite_autoincrement below), as before.
_SEQ = BigInteger().with_variant(Integer(), "sqlite")


def _seq() -> Column[int]:
    return Column("seq", _SEQ, primary_key=True, autoincrement=True)


jobs = Table(
    "escalation_jobs", METADATA,
    Column("job_id", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("idempotency_key", Text, nullable=False),
    Column("fingerprint", Text, nullable=False),
    Column("job_json", Text, nullable=False),
    Column("backend", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("owner", Text),
    Column("lease_until", Double),
    Column("provider_ids", Text, nullable=False),
    Column("side_effects_possible", Integer, nullable=False),
    Column("cancel_requested", Text),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    UniqueConstraint("tenant", "idempotency_key"),
)

receipts = Table(
    "escalation_receipts", METADATA,
    _seq(),
    Column("job_id", Text, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("outcome", Text, nullable=False),
    Column("receipt_json", Text, nullable=False),
    Column("receipt_sha256", Text, nullable=False),
    Column("prev_chain", Text, nullable=False),
    Column("chain_sha256", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Index("escalation_receipts_job", "job_id"),
    sqlite_autoincrement=True,
)

artifacts = Table(
    "escalation_artifacts", METADATA,
    Column("job_id", Text, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("path", Text, nullable=False),
    Column("sha256", Text, nullable=False),
    Column("size", Integer, nullable=False),
    Column("stored_ref", Text),
    Column("complete", Integer),
    Column("mime", Text, nullable=False),
    Column("created_at", Text, nullable=False),
)

lane_receipts = Table(
    "lane_receipts", METADATA,
    _seq(),
    Column("receipt_id", Text, nullable=False, unique=True),
    Column("request_id", Text, nullable=False),
    Column("tenant", Text, nullable=False),
    Column("lane", Text, nullable=False),
    Column("job_kind", Text, nullable=False),
    Column("outcome", Text, nullable=False),
    Column("job_id", Text),
    Column("created_at", Text, nullable=False),
    Column("receipt_json", Text, nullable=False),
    Column("receipt_sha256", Text, nullable=False),
    Column("prev_chain", Text, nullable=False),
    Column("chain_sha256", Text, nullable=False),
    Index("lane_receipts_created", "created_at"),
    Index("lane_receipts_request", "request_id"),
    sqlite_autoincrement=True,
)

lane_reviews = Table(
    "lane_reviews", METADATA,
    _seq(),
    Column("receipt_id", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("reviewer", Text, nullable=False),
    Column("note", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Index("lane_reviews_receipt", "receipt_id"),
    sqlite_autoincrement=True,
)

lane_pending = Table(
    "lane_pending", METADATA,
    Column("job_id", Text, primary_key=True),
    Column("request_id", Text, nullable=False),
    Column("request_json", Text, nullable=False),
    Column("decision_json", Text, nullable=False),
    Column("review", Text, nullable=False),
    Column("created_at", Text, nullable=False),
)

lane_drafts = Table(
    "lane_drafts", METADATA,
    Column("draft_id", Text, primary_key=True),
    Column("tool", Text, nullable=False),
    Column("version", Integer),
    Column("status", Text, nullable=False),
    Column("source_job_id", Text),
    Column("tenant", Text, nullable=False),
    Column("code", Text, nullable=False),
    Column("code_sha256", Text, nullable=False),
    Column("runtime_json", Text, nullable=False),
    Column("environment_digest", Text),
    Column("arguments_json", Text, nullable=False),
    Column("effect", Text, nullable=False),
    Column("scopes_json", Text, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("approved_by", Text),
    Column("created_at", Text, nullable=False),
)

lane_draft_cases = Table(
    "lane_draft_cases", METADATA,
    _seq(),
    Column("case_id", Text, nullable=False, unique=True),
    Column("tool", Text, nullable=False),
    Column("inputs_json", Text, nullable=False),
    Column("expected_json", Text, nullable=False),
    Column("added_by", Text, nullable=False),
    Column("note", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    sqlite_autoincrement=True,
)

#: Tables whose rows are never updated or deleted (the database refuses both).
APPEND_ONLY = (("escalation_receipts", "receipts"), ("lane_receipts", "receipts"),
               ("lane_reviews", "reviews"))


def _sqlite_triggers() -> list[str]:
    out = []
    for table, what in APPEND_ONLY:
        for verb in ("update", "delete"):
            out.append(f"CREATE TRIGGER IF NOT EXISTS {table}_no_{verb} BEFORE {verb.upper()} "
                       f"ON {table} BEGIN SELECT RAISE(ABORT, '{what} are append-only'); END")
    return out


def _postgres_triggers() -> list[str]:
    # One function for the three tables, so its message says "receipts" for reviews too, as
    # it always has (callers match on "append-only").
    out = ["CREATE OR REPLACE FUNCTION escalation_append_only() RETURNS trigger AS $$ "
           "BEGIN RAISE EXCEPTION 'receipts are append-only'; END $$ LANGUAGE plpgsql"]
    for table, _ in APPEND_ONLY:
        out += [f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}",
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION escalation_append_only()"]
    return out


def create(engine: Engine, schema: str | None = None) -> None:
    """Create the missing tables, indexes and triggers (idempotent; safe from two processes)."""
    with engine.connect() as conn:
        conn.execution_options(**{WRITER: True})
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CREATE_LOCK})
                if schema:
                    conn.exec_driver_sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
                statements = _postgres_triggers()
            else:
                statements = _sqlite_triggers()
            METADATA.create_all(conn, checkfirst=True)
            for statement in statements:
                conn.exec_driver_sql(statement)


def _begin(conn: Connection) -> None:
    # pysqlite's isolation_level is None (set on connect), so SQLAlchemy's BEGIN is the only
    # one: IMMEDIATE for a writer takes SQLite's single writer lock before the first read.
    immediate = conn.get_execution_options().get(WRITER, False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def sqlite_engine(path: str) -> Engine:
    """An engine on one SQLite file (a pool of connections, WAL) or a private in-memory
    database (one connection, which the store serializes)."""
    memory = path in ("", ":memory:")
    if not memory:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(URL.create("sqlite", database=":memory:" if memory else path),
                           connect_args={"timeout": 30, "check_same_thread": False},
                           **({"poolclass": StaticPool} if memory else {}))

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi: sqlite3.Connection, _record: Any) -> None:
        dbapi.isolation_level = None
        dbapi.execute("PRAGMA journal_mode=WAL")
        dbapi.execute("PRAGMA busy_timeout=30000")

    event.listen(engine, "begin", _begin)
    return engine


def postgres_engine(url: str, schema: str | None = None, *,
                    autocommit: bool = False) -> tuple[Engine, str | None]:
    """An engine on PostgreSQL through psycopg 3 (``autocommit``: for single-query reads);
    the schema comes from the argument or the URL's ``?schema=name`` and must be a plain
    identifier. Returns (engine, schema)."""
    try:
        import psycopg  # noqa: F401  (SQLAlchemy loads it; a clear error if it is missing)
    except ImportError:
        raise EscalationError("PostgreSQL job store needs psycopg 3", code="E602",
                              hint="pip install 'formulane[postgres]'") from None
    parsed = make_url(url)
    schema = schema or _one(parsed.query.get("schema"))
    parsed = parsed.difference_update_query(["schema"]).set(drivername="postgresql+psycopg")
    connect_args: dict[str, Any] = {}
    if schema is not None:
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", schema):
            raise EscalationError(f"schema name {schema!r} is not a plain identifier",
                                  code="E603")
        connect_args["options"] = f"-csearch_path={schema}"
    # No pre-ping: it is one more round trip on every call (the store's calls are short and
    # many); a connection the server dropped fails that one call, and SQLAlchemy then
    # discards it and the pool's other connections of that age.
    engine = create_engine(parsed, pool_size=5, max_overflow=10, connect_args=connect_args,
                           **({"isolation_level": "AUTOCOMMIT"} if autocommit else {}))
    return engine, schema


def _one(value: str | tuple[str, ...] | None) -> str | None:
    return value[0] if isinstance(value, tuple) else value
