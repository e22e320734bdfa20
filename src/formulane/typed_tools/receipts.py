"""Receipts: the audit record written for every call, refused ones included.

Contract: a `Receipt` names the tool, version and schema hash, the redacted arguments and
their hash, the principal and tenant, the effect class, the approval and idempotency key, the
result hash, per-phase timings and an `outcome` from `OUTCOMES`. `unknown` means a write may
have happened but its result was lost (a crash between execute and receipt): it is never
retried automatically. Receipts hold no secret values: arguments are redacted before they get
here and error messages never echo secret inputs.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

Outcome = Literal[
    "succeeded",
    "tool_error",
    "invalid_arguments",
    "unknown_tool",
    "denied",
    "approval_required",
    "replayed",
    "unknown",
]
OUTCOMES: tuple[str, ...] = (
    "succeeded",
    "tool_error",
    "invalid_arguments",
    "unknown_tool",
    "denied",
    "approval_required",
    "replayed",
    "unknown",
)


# Ids are unique across processes by a random per-process part, and within one by a counter:
# one os.urandom call per id costs a system call on the hot path.
_PROCESS = os.urandom(5).hex()
_COUNTER = itertools.count()


def new_id(prefix: str) -> str:
    """A sortable unique id: nanoseconds, a per-process random part, a per-process counter."""
    return f"{prefix}_{time.time_ns():016x}{_PROCESS}{next(_COUNTER) & 0xFFFFFF:06x}"


def sha256_ref(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(slots=True)
class Receipt:
    id: str
    tool: str
    version: str
    schema_hash: str
    effect: str
    principal: str
    principal_kind: str
    tenant: str
    outcome: str
    started_at: float
    finished_at: float
    timings: dict[str, int] = field(default_factory=dict[str, int])
    args_hash: str | None = None
    args: str | None = None
    result_hash: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    approval_id: str | None = None
    idempotency_key: str | None = None
    call_id: str | None = None
    replay_of: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["started_at"] = iso(self.started_at)
        out["finished_at"] = iso(self.finished_at)
        return out

    def to_row(self) -> tuple[Any, ...]:
        # Plain values only: this runs for every receipt, in the batch writer.
        timings = self.timings
        return (
            self.id, self.tool, self.version, self.schema_hash, self.effect, self.principal,
            self.principal_kind, self.tenant, self.outcome, self.started_at, self.finished_at,
            timings.get("validate_us"), timings.get("authorize_us"), timings.get("execute_us"),
            timings.get("total_us"), self.args_hash, self.args, self.result_hash, self.error_code,
            self.error_message, self.approval_id, self.idempotency_key, self.call_id, self.replay_of,
        )

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> "Receipt":
        v = list(row)
        timings = {key: value for key, value in zip(_TIMING_KEYS, v[11:15]) if value is not None}
        return cls(
            id=v[0], tool=v[1], version=v[2], schema_hash=v[3], effect=v[4], principal=v[5],
            principal_kind=v[6], tenant=v[7], outcome=v[8], started_at=float(v[9]), finished_at=float(v[10]),
            timings=timings, args_hash=v[15], args=v[16], result_hash=v[17], error_code=v[18],
            error_message=v[19], approval_id=v[20], idempotency_key=v[21], call_id=v[22], replay_of=v[23],
        )


_TIMING_KEYS = ("validate_us", "authorize_us", "execute_us", "total_us")

RECEIPT_COLUMNS: tuple[str, ...] = (
    "id", "tool", "version", "schema_hash", "effect", "principal", "principal_kind", "tenant", "outcome",
    "started_at", "finished_at", *_TIMING_KEYS, "args_hash", "args", "result_hash", "error_code",
    "error_message", "approval_id", "idempotency_key", "call_id", "replay_of",
)
