"""Typed tools: the deterministic lane where a model fills typed arguments and reviewed code runs.

Public surface: `ToolRegistry` (declare with `@registry.tool`, `export(target)`, `call`/`acall`,
`approve`), `Tool`, `Principal`, the `TenantKey`/`Secret` field markers, `ToolResult`,
`ErrorEnvelope`, `Receipt`, the stores, and `ToolFailure` for model-facing tool errors.
Provider response parsing and result messages are in `typed_tools.providers`; the built-in
formula tools in `typed_tools.formula_tools`.
"""

from __future__ import annotations

from .approvals import ApprovalRequest
from .envelope import ErrorEnvelope, Issue
from .principal import CallContext, Principal, Secret, TenantKey
from .receipts import OUTCOMES, Receipt
from .registry import FormulaFunction, FormulaParam, ToolRegistry
from .results import ToolResult
from .store import SQLiteStore, SQLStore, open_store
from .tool import Tool, ToolFailure

__all__ = [
    "ApprovalRequest",
    "CallContext",
    "ErrorEnvelope",
    "FormulaFunction",
    "FormulaParam",
    "Issue",
    "OUTCOMES",
    "Principal",
    "Receipt",
    "SQLStore",
    "SQLiteStore",
    "Secret",
    "TenantKey",
    "Tool",
    "ToolFailure",
    "ToolRegistry",
    "ToolResult",
    "open_store",
]
