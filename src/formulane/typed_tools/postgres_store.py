"""The PostgreSQL receipt store's historical import path.

Contract: `PostgresStore` is the one SQLAlchemy Core store of `store.py` on a PostgreSQL engine
(psycopg 3); this module only keeps `from formulane.typed_tools.postgres_store import
PostgresStore` working.
"""

from __future__ import annotations

from .store import PostgresStore

__all__ = ["PostgresStore"]
