"""The service's own tables (SQLAlchemy Core) and their migrations (Alembic).

Contract: `METADATA` declares every table of the service: API keys (hashed), stored formulas,
their immutable versions, aliases (``live``) and an audit trail of formula events. The schema
is created and changed only by Alembic migrations in ``api/migrations`` (`upgrade` runs them;
``formulane db upgrade`` and the service's start call it), so SQLite and PostgreSQL get the same
tables. The typed-tool store (receipts, approvals, idempotency) and the job store keep their own
tables, created by those stores in the same database.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column, Float, Index, Integer, MetaData, String, Table, Text, UniqueConstraint, create_engine,
    event, text,
)
from sqlalchemy.engine import Engine

METADATA = MetaData()
VERSION_TABLE = "formulane_api_alembic_version"

api_keys = Table(
    "formulane_api_keys", METADATA,
    Column("key_id", String(32), primary_key=True),
    # sha256 of the secret part: keys are 256-bit random, so a fast hash is enough (no
    # dictionary to attack), and checking one costs microseconds on every request.
    Column("secret_hash", String(64), nullable=False),
    Column("tenant", String(256), nullable=False),
    Column("subject", String(256), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("scopes", Text, nullable=False),          # JSON list
    Column("label", String(200), nullable=False, server_default=""),
    Column("parent_key_id", String(32)),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float),
    Column("revoked_at", Float),
    Index("ix_formulane_api_keys_tenant", "tenant"),
)

formulas = Table(
    "formulane_api_formulas", METADATA,
    Column("formula_id", String(40), primary_key=True),
    Column("tenant", String(256), nullable=False),
    Column("name", String(200), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("created_by", String(256), nullable=False),
    Column("deleted_at", Float),
    Column("deleted_by", String(256)),
    UniqueConstraint("tenant", "name", name="uq_formulane_api_formulas_tenant_name"),
)

formula_versions = Table(
    "formulane_api_formula_versions", METADATA,
    Column("formula_id", String(40), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("source", Text, nullable=False),
    Column("schema_json", Text, nullable=False),
    Column("profile", String(16), nullable=False),
    Column("cases_json", Text, nullable=False),
    Column("program_json", Text, nullable=False),    # Program.to_json(): reload without a reparse
    Column("language_version", String(16), nullable=False),
    Column("type", String(200), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("created_by", String(256), nullable=False),
    Column("status", String(16), nullable=False),    # draft | published
    Column("published_at", Float),
    Column("published_by", String(256)),
    Column("note", Text, nullable=False, server_default=""),
)

formula_aliases = Table(
    "formulane_api_formula_aliases", METADATA,
    Column("formula_id", String(40), primary_key=True),
    Column("alias", String(40), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("updated_by", String(256), nullable=False),
)

formula_events = Table(
    "formulane_api_formula_events", METADATA,
    Column("event_id", String(40), primary_key=True),
    Column("formula_id", String(40), nullable=False),
    Column("at", Float, nullable=False),
    Column("actor", String(256), nullable=False),
    Column("action", String(32), nullable=False),    # create, version, publish, rollback, delete
    Column("version", Integer),
    Column("reason", Text, nullable=False, server_default=""),
    Column("request_id", String(64), nullable=False, server_default=""),
    Index("ix_formulane_api_formula_events_formula", "formula_id", "at"),
)


def make_engine(url: str) -> Engine:
    """An engine for the service's tables. SQLite gets WAL and a busy timeout so several
    processes on one machine can share the file; PostgreSQL a small pool per process."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _pragmas(conn: sqlite3.Connection, _record: Any) -> None:
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    return create_engine(url, pool_size=5, max_overflow=10, pool_pre_ping=True)


_UPGRADE_LOCK = threading.Lock()


def upgrade(engine: Engine, revision: str = "head") -> str:
    """Run the Alembic migrations up to ``revision``; returns the revision now current."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext

    config = Config()
    config.set_main_option("script_location", "formulane.api:migrations")
    with _UPGRADE_LOCK, engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            # Two processes starting at once must not both create the tables.
            conn.execute(text("SELECT pg_advisory_xact_lock(7130013)"))
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        ctx = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        return ctx.get_current_revision() or ""


def ping(engine: Engine) -> None:
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))
