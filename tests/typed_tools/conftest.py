"""Fixtures for the typed-tool tests: principals, and receipt stores on real databases.

`store_factory` is parametrized over SQLite (a file in tmp_path) and PostgreSQL (the server in
FORMULANE_TEST_POSTGRES_URL, one fresh schema per test, dropped afterwards). Calling the
factory twice opens a second, independent connection to the same data: a restart.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

HERE = Path(__file__).parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # zoo.py and the MCP fixture app live next to the tests

from formulane.typed_tools import Principal, SQLStore, SQLiteStore  # noqa: E402
from write_app import open_spec  # noqa: E402,F401 - re-exported for the tests

PG_URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")
PG_SKIP = "FORMULANE_TEST_POSTGRES_URL is not set: no PostgreSQL server to test against"


@pytest.fixture
def alice() -> Principal:
    return Principal("alice", "acme", ["billing:write", "orders:read"])


@pytest.fixture
def bob_approver() -> Principal:
    return Principal("bob", "acme", ["tools:approve"])


class StoreFactory:
    """Opens stores on one database; `spec()` says how a subprocess can open it too."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.opened: list[SQLStore] = []
        self.path = tmp_path / "receipts.sqlite3"
        self.schema = f"ft_{uuid.uuid4().hex[:12]}"

    def __call__(self, **options: Any) -> SQLStore:
        if self.kind == "sqlite":
            store: SQLStore = SQLiteStore(str(self.path), **options)
        else:
            from formulane.typed_tools.postgres_store import PostgresStore

            store = PostgresStore(PG_URL or "", schema=self.schema, **options)
        self.opened.append(store)
        return store

    def spec(self) -> list[str]:
        return [self.kind, str(self.path) if self.kind == "sqlite" else (PG_URL or ""), self.schema]

    def close(self) -> None:
        for store in self.opened:
            try:
                store.close()
            except Exception:  # noqa: BLE001 - a test may have closed it already
                pass
        if self.kind == "postgres":
            import psycopg

            with psycopg.connect(PG_URL or "", autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')


@pytest.fixture(params=["sqlite", "postgres"])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    if request.param == "postgres" and not PG_URL:
        pytest.skip(PG_SKIP)
    factory = StoreFactory(request.param, tmp_path)
    yield factory
    factory.close()


Factory = Callable[..., SQLStore]
