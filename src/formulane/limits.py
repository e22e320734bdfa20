"""Every budget the formula lane enforces, in one immutable, documented place.

Static limits are checked before any recursive pass (so no RecursionError can happen); the
cost budget is checked statically when the checker can bound the cost, and by a runtime meter
otherwise; sizes are checked *before* allocating. ``Limits`` is hashable because compiled
programs are cached by it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

#: Nesting past this would put Python's own stack at risk in the recursive passes.
HARD_MAX_DEPTH = 200


@dataclass(frozen=True, slots=True)
class Limits:
    """Budgets for parsing, checking and evaluating one formula.

    Attributes:
        max_source_length: characters in the formula text (E401).
        max_nodes: AST nodes (E402).
        max_depth: nesting depth of the AST (E403); at most ``HARD_MAX_DEPTH``.
        max_arguments: arguments in one call or items in one list literal (E404).
        max_cost: cost units for one evaluation (E405); one unit is roughly one node visit or
            one list element touched (1,000,000 is about 50 ms here).
        max_text_length: code points in any text value built during evaluation (E406).
        max_list_length: items in any list built during evaluation (E407).
        deadline_ms: wall-clock milliseconds for one metered evaluation (E408); None disables
            it. Programs whose static cost bound fits the budget run unmetered and need no
            clock.
        max_diagnostics: how many check problems are collected before stopping (E410).
        max_memory_bytes: bytes of texts and lists one evaluation may build (E413), counted
            before each is allocated and never credited back, so it bounds what is alive from
            above (a text counts one byte per code point, a list 8 bytes per item).
        max_explain_nodes: steps an explanation may record (E414); its text is bounded by
            this times the step's shown size.
        max_sql_length: characters of SQL generated for one `sql_select` or
            `Program.to_sql` (E411); SQL grows linearly with the formula, this bounds it.
    """

    max_source_length: int = 8_192
    max_nodes: int = 2_000
    max_depth: int = 100
    max_arguments: int = 255
    max_cost: int = 1_000_000
    max_text_length: int = 32_767
    max_list_length: int = 100_000
    deadline_ms: float | None = 100.0
    max_diagnostics: int = 20
    max_memory_bytes: int = 32 * 1024 * 1024
    max_explain_nodes: int = 2_000
    max_sql_length: int = 1_000_000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name == "deadline_ms":
                continue
            if f.name == "deadline_ms":
                ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and math.isfinite(value) and value > 0
            else:  # every other budget is a whole number: NaN or infinity would turn it off
                ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
            if not ok:
                raise ValueError(f"Limits.{f.name} must be a positive "
                                 f"{'finite number' if f.name == 'deadline_ms' else 'whole number'}, "
                                 f"got {value!r}")
        if self.max_depth > HARD_MAX_DEPTH:
            raise ValueError(f"Limits.max_depth may be at most {HARD_MAX_DEPTH}")


DEFAULT_LIMITS = Limits()
