"""Names every columnar backend shares (the forms themselves live in `columnar.forms`).

Contract: constants only; importing this imports neither polars nor sqlglot.
"""

from __future__ import annotations

#: The suffix of an output's error-code column (`total` -> `total__error`), for every backend.
ERROR_SUFFIX = "__error"
