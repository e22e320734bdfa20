"""Moved to `formulane.columnar.sql` (issue 10): this module re-exports it for the modules
that still import it here (the forms, tests), until they switch."""

from __future__ import annotations

from typing import Any

from ..columnar.sql import let as _let
from ..columnar.sql.let import *  # noqa: F401,F403
from ..columnar.sql.let import _BINDER as _BINDER  # noqa: F401


def __getattr__(name: str) -> Any:
    """Private names too (``_BINDER``...)."""
    for module in (_let,):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(name)
