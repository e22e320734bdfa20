"""Moved to `formulane.columnar.sql` (issue 10): this module re-exports it for the modules
that still import it here (the forms, tests), until they switch."""

from __future__ import annotations

from typing import Any

from ..columnar.sql import compiler as _compiler
from ..columnar.sql import kit as _kit
from ..columnar.sql.compiler import *  # noqa: F401,F403
from ..columnar.sql.kit import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    """Private names too (``_BINDER``...)."""
    for module in (_compiler, _kit):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(name)
