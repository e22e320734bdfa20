"""Moved to `formulane.columnar.polars` (issue 10): this module re-exports the compiler and
its kit for the modules that still import it here (the forms,
`columnar/call.py`, tests), until they switch."""

from __future__ import annotations

from typing import Any

from ..columnar.polars import compiler as _compiler
from ..columnar.polars import kit as _kit
from ..columnar.polars.compiler import *  # noqa: F401,F403
from ..columnar.polars.kit import *  # noqa: F401,F403
from ..columnar.polars.kit import _BINDER as _BINDER  # noqa: F401
from ..columnar.polars.kit import _ELEMENT as _ELEMENT  # noqa: F401
from ..columnar.polars.kit import _MODE as _MODE  # noqa: F401
from ..columnar.polars.kit import _literal_value as _literal_value  # noqa: F401


def __getattr__(name: str) -> Any:
    """Private names too (``_literal_value``, ``_ELEMENT``...), from the kit or the compiler."""
    for module in (_kit, _compiler):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(name)
