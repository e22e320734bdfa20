"""Names every columnar backend shares (the forms themselves live in `columnar.forms`).

Contract: the error-column suffix, `check_output_names` (every output column named once, for
`apply` and `sql_select` alike), and `fresh(prefix)`: a name for a lambda parameter or a
struct field a form writes into the generated code, unique within one compiled program and
numbered from 1 in each (`numbered()`, entered by the walk), so that the SQL and the polars
plan of a program do not depend on what the process compiled before. Importing this imports
neither polars nor sqlglot.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Mapping

from ..errors import CheckError

#: The suffix of an output's error-code column (`total` -> `total__error`), for every backend.
ERROR_SUFFIX = "__error"

_COUNTER: ContextVar["itertools.count[int] | None"] = ContextVar("formulane_fresh_names",
                                                                 default=None)
#: Outside a walk (a form called directly, as some tests do): still unique, process-wide.
_PROCESS = itertools.count(1)


def fresh(prefix: str) -> str:
    """``prefix`` and a number unique within the program being compiled."""
    counter = _COUNTER.get()
    return f"{prefix}{next(counter if counter is not None else _PROCESS)}"


@contextmanager
def numbered() -> Iterator[None]:
    """Number `fresh` names from 1 inside the block (one compiled program); a nested block
    (a program compiled while compiling another) keeps the outer numbering."""
    if _COUNTER.get() is not None:
        yield
        return
    token = _COUNTER.set(itertools.count(1))
    try:
        yield
    finally:
        _COUNTER.reset(token)


def check_output_names(formulas: Mapping[str, str], error_suffix: str) -> None:
    """Every output column (a formula's and its error column) is named once: ``{"a": ...,
    "a__error": ...}`` would write two columns of one name (polars' DuplicateError, or a SQL
    result whose second column shadows the first)."""
    if not isinstance(formulas, Mapping):
        raise CheckError("formulas must be a mapping of output names to formula texts",
                         code="E209")
    seen: dict[str, str] = {}
    for name in formulas:
        if not isinstance(name, str) or not name:
            raise CheckError(f"an output name must be non-empty text, got {name!r}",
                             code="E209")
        for out in (name, name + error_suffix):
            if out in seen:
                raise CheckError(f"output column {out!r} would be written twice (by {seen[out]!r} "
                                 f"and {name!r}); rename one of the formulas", code="E209",
                                 hint=f"error columns are named <output>{error_suffix}")
            seen[out] = name
