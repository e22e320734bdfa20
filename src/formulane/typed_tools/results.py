"""What a call returns: `ToolResult`, a value or an error envelope, always with its receipt.

Contract: `status` is "ok", "error", "approval_required" or "unknown"; `ok` is True only for
"ok". `value` is the tool's Python return value (unwrapped from `{"result": ...}`), `data` the
JSON-able structured content, `text()` what a model reads. A replayed write (same idempotency
key) is "ok" or "error" like the original with `replayed=True`, its own receipt, and the
stored receipt of the execution it repeats in `original`. Rendering
into a provider's tool-result message lives in `providers.py`; `to_mcp()` is here because the
MCP server and tests share it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from .approvals import ApprovalRequest
from .envelope import ErrorEnvelope
from .receipts import Receipt

Status = Literal["ok", "error", "approval_required", "unknown"]


@dataclass(slots=True)  # not frozen: a frozen dataclass costs a setattr per field on the hot path
class ToolResult:
    tool: str
    status: Status
    receipt: Receipt
    output: BaseModel | None = None
    error: ErrorEnvelope | None = None
    replayed: bool = False
    approval: ApprovalRequest | None = None
    wraps_output: bool = False
    result_json: str | None = field(default=None, repr=False)
    #: For a replay: the stored receipt of the execution being repeated.
    original: Receipt | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def value(self) -> Any:
        if self.output is None:
            return None
        return getattr(self.output, "result") if self.wraps_output else self.output

    @property
    def data(self) -> Any:
        """Structured content: the output as JSON values, or the error envelope."""
        if self.error is not None:
            return self.error.to_dict()
        if self.result_json is not None:
            return json.loads(self.result_json)
        if self.output is not None:
            return self.output.model_dump(mode="json")
        return None

    def text(self) -> str:
        if self.error is not None:
            return self.error.to_text()
        if self.result_json is not None:
            return self.result_json
        return json.dumps(self.data, ensure_ascii=False)

    def to_mcp(self) -> dict[str, Any]:
        """An MCP `CallToolResult` as a dict (camelCase keys, as on the wire)."""
        if self.error is not None:
            # Error results carry no structuredContent: clients validate it against outputSchema.
            return {"content": [{"type": "text", "text": self.text()}], "isError": True}
        return {
            "content": [{"type": "text", "text": self.text()}],
            "structuredContent": self.data,
            "isError": False,
        }
