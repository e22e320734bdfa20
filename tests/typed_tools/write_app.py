"""A registry with a real side effect (appending to a file) shared by the authority tests and
the crash subprocess, so both run the very same tool."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Annotated

from formulane.typed_tools import Principal, Secret, SQLiteStore, SQLStore, TenantKey, ToolRegistry

ACME_ALICE = Principal("alice", "acme", ["payments:write"])


def build_registry(store: SQLStore, *, effect_file: Path, die_after: bool = False, **options: object) -> ToolRegistry:
    registry = ToolRegistry(store=store, **options)  # type: ignore[arg-type]

    @registry.tool(effect="write", scopes=["payments:write"])
    def transfer(tenant: Annotated[str, TenantKey], to: str, cents: int, api_key: Annotated[str, Secret]) -> dict[str, int]:
        """Move money: appends one line per execution to the side-effect file."""
        with open(effect_file, "a") as handle:
            handle.write(f"{tenant} -> {to}: {cents}\n")
            handle.flush()
            os.fsync(handle.fileno())
        if die_after:
            os.kill(os.getpid(), signal.SIGKILL)  # the crash between execute and receipt
        return {"cents": cents}

    return registry


def open_spec(spec: list[str]) -> SQLStore:
    """The store described by `StoreFactory.spec()`: how a subprocess reopens the test's data."""
    kind, where, schema = spec
    if kind == "sqlite":
        return SQLiteStore(where)
    from formulane.typed_tools.postgres_store import PostgresStore

    return PostgresStore(where, schema=schema)
