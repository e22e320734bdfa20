"""Modules the forms use, imported on first use: polars and the compilers' helpers.

Contract: the forms of one family (text, lists, dates) sit in the same modules for both
backends, and compiling to SQL must never import polars; so those modules reach polars and the
polars compiler through the proxies here, each a plain ``import`` statement inside a function
(followed by grep, an IDE and the layering test), run on the first attribute read.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable


class _Deferred:
    """A module imported on the first attribute read (``pl.col`` imports polars then)."""

    __slots__ = ("_load",)

    def __init__(self, load: Callable[[], ModuleType]) -> None:
        self._load = load

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(), attr)


def _polars() -> ModuleType:
    import polars

    return polars


def _polars_backend() -> ModuleType:
    from ..polars import kit

    return kit


def _sql_backend() -> ModuleType:
    from ..sql import kit

    return kit


#: ``polars``, imported on first use.
pl: Any = _Deferred(_polars)
#: The polars kit (`columnar.polars.kit`: ``numbers()``, ``Column``, ``let``...).
vp: Any = _Deferred(_polars_backend)
#: The SQL kit (`columnar.sql.kit`: ``SqlColumn``, ``first_error``...).
vs: Any = _Deferred(_sql_backend)
