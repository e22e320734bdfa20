"""Alembic environment of the service: runs on the connection `formulane.api.db.upgrade` gives."""

from __future__ import annotations

from alembic import context

from formulane.api.db import METADATA, VERSION_TABLE

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - always called through db.upgrade
    raise RuntimeError("run migrations with `formulane db upgrade`")
context.configure(connection=connection, target_metadata=METADATA, version_table=VERSION_TABLE,
                  render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
