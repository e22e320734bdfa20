"""Lazy access to the polars and SQL forms of the function families (lists, text, math, dates).

Contract: declaring a function never imports polars, sqlglot or a forms package. A spec names
its form with `lazy_form`, which returns a small callable labelled ``"<backend>:<name>"``; the
forms package is imported on the first call only, and the attribute is looked up on every call
(the lookup is a dict read; forms run when a formula is compiled for a backend, not per row).
`LazyModule` gives the forms packages the same deferral for polars itself, so the SQL forms
never import it, and `family_getattr` lets a forms package split into modules keep answering
``<package>.<name>`` for every name of those modules.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Callable, Sequence


def lazy_form(module: str, backend: str, name: str, *bound: Any, dispatch: bool = False,
              wants_call: bool = False, wants_columns: bool = False) -> Callable[..., Any]:
    """The ``backend`` form of ``name`` in the forms package ``module``, imported on first use.

    Without ``dispatch`` a call runs ``module.<backend>_<name>(*bound, *args)``; with it,
    ``module.run(backend, name, *bound, *args)`` (a family whose forms share one entry point,
    such as the dates' ops objects). ``wants_call`` asks the backends to pass the `ir.Call`
    being translated as ``call=`` (see `vectorized.polars` and `vectorized.sql`); keyword
    arguments are handed on unchanged. ``wants_columns`` asks them to pass each argument's
    compiled column (value, error code, static type), as to a lazy form, instead of its value
    with its error already combined: the form of an eager function that sees error values
    (``accepts_errors``: ISERROR, ISBLANK...).
    """
    attribute = "run" if dispatch else f"{backend}_{name}"
    lead = (backend, name, *bound) if dispatch else bound

    def form(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), attribute)(*lead, *args, **kwargs)

    form.__name__ = form.__qualname__ = f"{backend}:{name}"
    if wants_call:
        form.wants_call = True  # type: ignore[attr-defined]
    if wants_columns:
        form.wants_columns = True  # type: ignore[attr-defined]
    return form


class LazyModule:
    """A module imported on its first attribute access (``pl = LazyModule("polars")``)."""

    def __init__(self, name: str) -> None:
        self.__dict__["_name"] = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__dict__["_name"]), attr)


def family_getattr(package: dict[str, Any], modules: Sequence[ModuleType]
                   ) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` (PEP 562) for a forms package split into ``modules``:
    ``<package>.polars_<name>`` (and any other name of those modules, such as the helpers the
    tests read) is looked up in the modules in order and kept in ``package`` (its globals)
    after the first lookup, so every form keeps one definition and one name."""

    def __getattr__(name: str) -> Any:
        if not name.startswith("__"):
            for module in modules:
                found = vars(module)
                if name in found:
                    package[name] = found[name]
                    return found[name]
        raise AttributeError(f"module {package['__name__']!r} has no attribute {name!r}")

    return __getattr__
