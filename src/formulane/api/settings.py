"""Settings of `formulane serve`: every knob, its default, and its environment variable.

Contract: `Settings` is a pydantic-settings model read from ``FORMULANE_*`` environment
variables (``FORMULANE_HOST``, ``FORMULANE_PORT``, ``FORMULANE_DATA_DIR``,
``FORMULANE_DATABASE_URL``, ``FORMULANE_TOOLS``...) and overridden by command-line flags. The
defaults are a zero-configuration local service: loopback only, SQLite under the data
directory, the local sandbox backend when the machine has one. Every limit the service applies
is a field here (and documented in docs/api.md), so none is a magic number in a route.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_PORT = 8421


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FORMULANE_", extra="ignore", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    data_dir: Path = Path(".formulane")
    #: SQLAlchemy URL of the shared database; default: SQLite in the data directory.
    database_url: str | None = None
    #: ``module:attr`` of a `ToolRegistry` (or a function returning one) to serve; default: the
    #: built-in formula tools plus a small, clearly labelled demo registry.
    tools: str | None = None
    #: Bind addresses other than loopback are refused unless this is set (the service has no
    #: TLS of its own: put it behind a proxy that terminates TLS first).
    allow_remote: bool = False
    #: Sandbox for jobs: ``auto`` is bubblewrap when usable, else the process backend.
    sandbox: Literal["auto", "bubblewrap", "process", "none"] = "auto"
    #: Whether a key with ``jobs:run`` may send code to the sandbox under the safe defaults
    #: (read-only, no network, default limits); ``policies`` (module:attr of a PolicyBook)
    #: replaces this with your own rules per tenant and subject.
    sandbox_policy: Literal["allow", "deny"] = "allow"
    policies: str | None = None
    job_workers: int = Field(default=2, ge=0, le=64)
    #: A job whose worker stops renewing its lease for this long is lost (then ``unknown``).
    job_lease_s: float = Field(default=10.0, gt=0)

    # -- limits -----------------------------------------------------------------------------
    max_body_bytes: int = Field(default=1 << 20, ge=1024)          # JSON requests
    max_batch_body_bytes: int = Field(default=64 << 20, ge=1024)   # Arrow IPC / Parquet batches
    max_formula_chars: int = Field(default=8192, ge=1)
    max_json_batch_rows: int = Field(default=10_000, ge=1)
    max_batch_rows: int = Field(default=2_000_000, ge=1)
    max_cases: int = Field(default=200, ge=0)
    #: Per API key, in each process: sustained requests per second and burst.
    rate_per_s: float = Field(default=200.0, gt=0)
    rate_burst: int = Field(default=400, ge=1)
    #: Longest life of a key minted through POST /v1/keys.
    max_minted_key_ttl_s: int = Field(default=86_400, ge=60)
    #: Longest an SSE stream of one job stays open.
    stream_max_s: float = Field(default=300.0, gt=0)
    #: Longest ``POST /v1/jobs?wait=`` may hold a request for a sandbox job to finish.
    job_wait_max_s: float = Field(default=30.0, ge=0, le=600)
    #: How long a process trusts what it read of a key or a formula's live version: a
    #: revocation, publish or rollback in another process is seen within this time.
    live_cache_s: float = Field(default=1.0, ge=0, le=60)
    log_level: str = "info"

    def resolved_database_url(self) -> str:
        if self.database_url:
            url = self.database_url
            # psycopg 3 is the driver the rest of formulane uses.
            if url.startswith("postgresql://"):
                url = "postgresql+psycopg://" + url[len("postgresql://"):]
            return url
        return f"sqlite:///{(self.data_dir / 'formulane.db').resolve()}"

    def plain_database_url(self) -> str | None:
        """The libpq URL for the tool and job stores (None: SQLite files in the data dir)."""
        if not self.database_url:
            return None
        url = self.database_url
        if url.startswith("postgresql+psycopg://"):
            url = "postgresql://" + url[len("postgresql+psycopg://"):]
        return url

    def loopback(self) -> bool:
        if self.host in ("localhost",):
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False
