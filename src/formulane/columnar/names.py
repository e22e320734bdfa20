"""Names every columnar backend shares (the forms themselves live in `columnar.forms`).

Contract: the error-column suffix, and `fresh(prefix)`: a name for a lambda parameter or a
struct field a form writes into the generated code, unique within one compiled program and
numbered from 1 in each (`numbered()`, entered by the walk), so that the SQL and the polars
plan of a program do not depend on what the process compiled before. Importing this imports
neither polars nor sqlglot.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

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
