"""Shared fixtures for the security suite: receipt stores on real SQLite and PostgreSQL."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

PG_URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from formulane.typed_tools import SQLiteStore

        opened = SQLiteStore(str(tmp_path / "receipts.sqlite3"))
        yield opened
        opened.close()
        return
    if not PG_URL:
        pytest.skip("FORMULANE_TEST_POSTGRES_URL is not set: no PostgreSQL server to test against")
    from formulane.typed_tools.postgres_store import PostgresStore

    schema = f"sec_{uuid.uuid4().hex[:12]}"
    opened = PostgresStore(PG_URL, schema=schema)
    yield opened
    opened.close()
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def dump_database(store: Any) -> str:
    """Every row of every table the store writes, as one string to search for leaks."""
    rows = []
    for table in ("receipts", "approvals", "idempotency"):
        rows.extend(store._execute(f"SELECT * FROM {store.table(table)}"))
    return repr(rows)
