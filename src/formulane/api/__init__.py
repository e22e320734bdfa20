"""`formulane serve`: the HTTP service over every lane (see docs/api.md).

Needs the ``api`` extra (FastAPI, uvicorn, pydantic-settings, SQLAlchemy, Alembic,
prometheus-client). `create_app(settings)` builds the ASGI app; `Settings` reads
``FORMULANE_*`` environment variables.
"""

from .app import create_app
from .settings import Settings

__all__ = ["Settings", "create_app"]
