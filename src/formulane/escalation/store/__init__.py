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
hash-chained the same way, `verify_lane_chain`; `append_lane_once` writes at most one per job
and lane), `review` appends a review state (``lane_reviews``, append-only; reads return the
latest), and the drafting room keeps its drafts and known-answer cases in ``lane_drafts`` and
``lane_draft_cases``.

One implementation serves both databases: the tables are declared once in SQLAlchemy Core
(`schema`) and every query is built from them (`jobstore`). What no library does faithfully
stays hand-written, each in one place: the hash chain (the project's record format), the writer
locks (``BEGIN IMMEDIATE``, ``LOCK TABLE``), the append-only triggers and the creation lock
(see `schema`). The store creates its own tables, as it always has; a database written by the
earlier hand-written SQL has the same tables and opens unchanged.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import EscalationError
from .jobstore import ACTIVE, GENESIS, JobRecord, JobStore, PostgresJobStore, SQLiteJobStore

__all__ = ["ACTIVE", "GENESIS", "JobRecord", "JobStore", "PostgresJobStore", "SQLiteJobStore",
           "open_store"]


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
