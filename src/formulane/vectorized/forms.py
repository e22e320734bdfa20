"""Backend forms that need more than one line: lazy special forms and operator families.

Specs refer to these by name through `polars_form(name)` / `sql_form(name)` (resolved on first
use, so declaring a function never imports polars). Each polars form mirrors its scalar
implementation: same order of evaluation, same error values; each SQL form likewise with CASE.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

#: The suffix of an output's error-code column (`total` -> `total__error`), for every backend.
ERROR_SUFFIX = "__error"


def polars_form(name: str) -> Callable[..., Any]:
    def form(*args: Any) -> Any:
        module = importlib.import_module("formulane.vectorized._polars_forms")
        return getattr(module, name)(*args)

    form.__name__ = f"polars:{name}"
    return form


def sql_form(name: str) -> Callable[..., Any]:
    def form(*args: Any) -> Any:
        module = importlib.import_module("formulane.vectorized._sql_forms")
        return getattr(module, name)(*args)

    form.__name__ = f"sql:{name}"
    return form
