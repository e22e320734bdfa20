"""Moved to `formulane.columnar.sql` (issue 10): this module re-exports it for the modules
that still import it here (the forms, tests), until they switch."""

from __future__ import annotations

from typing import Any

from ..columnar.sql import spark as _spark
from ..columnar.sql.spark import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    """Private names too (``_BINDER``...)."""
    for module in (_spark,):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(name)
