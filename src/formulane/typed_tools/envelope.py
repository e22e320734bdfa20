"""The error envelope a model receives when a call cannot run as asked.

Contract: one shape for every refusal (unknown tool, invalid arguments, not authorized,
approval required, tool failed, outcome unknown): a stable `code` from `errors.CODES`, a
message, per-field `issues` (path, message, expected type, an example value, what was
received unless the field is secret), `retryable`, `attempts_left` and free `details`
(approval id, args hash, close tool names). `to_dict()` is JSON-able with a fixed key order;
`to_text()` is the instructive text sent as OpenAI tool output and inside Anthropic/MCP
error results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..errors import CODES


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem with one argument."""

    path: str
    message: str
    expected: str = ""
    example: Any = None
    received: str | None = None
    kind: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "message": self.message,
            "expected": self.expected,
            "example": self.example,
            "received": self.received,
            "kind": self.kind,
        }

    def to_text(self) -> str:
        where = self.path or "(arguments)"
        parts: list[str] = []
        if self.expected:
            parts.append(f"expected {self.expected}")
        if self.received is not None:
            parts.append(f"got {self.received}")
        if self.example is not None:
            parts.append("example: " + json.dumps(self.example, ensure_ascii=False))
        tail = f" ({'; '.join(parts)})" if parts else ""
        return f"- {where}: {self.message}{tail}"


@dataclass(frozen=True, slots=True)
class ErrorEnvelope:
    code: str
    tool: str
    message: str
    retryable: bool
    issues: tuple[Issue, ...] = ()
    hint: str = ""
    attempts_left: int | None = None
    details: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def title(self) -> str:
        return CODES.get(self.code, "tool error")

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": {
                "code": self.code,
                "title": self.title,
                "tool": self.tool,
                "message": self.message,
                "issues": [issue.to_dict() for issue in self.issues],
                "hint": self.hint,
                "retryable": self.retryable,
                "attempts_left": self.attempts_left,
                "details": self.details,
            }
        }

    def to_text(self) -> str:
        lines = [f"error[{self.code}] {self.title}: {self.message}"]
        lines.extend(issue.to_text() for issue in self.issues)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        for key in sorted(self.details):
            value = self.details[key]
            rendered = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
            lines.append(f"{key}: {rendered}")
        if self.retryable:
            left = "" if self.attempts_left is None else f" ({self.attempts_left} attempts left)"
            lines.append(f"retryable: yes, correct the call and try again{left}")
        else:
            lines.append("retryable: no, do not call this tool again with the same request")
        return "\n".join(lines)

    def with_attempts(self, attempts_left: int | None, *, exhausted: bool) -> "ErrorEnvelope":
        if not exhausted:
            return ErrorEnvelope(self.code, self.tool, self.message, self.retryable, self.issues,
                                 self.hint, attempts_left, self.details)
        return ErrorEnvelope(
            self.code,
            self.tool,
            self.message,
            False,
            self.issues,
            (self.hint + " " if self.hint else "")
            + "The retry limit for this call is reached: stop calling it and tell the user what failed.",
            0,
            self.details,
        )
