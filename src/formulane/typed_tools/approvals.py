"""Approvals for `write` tools: a pending request names the exact arguments hash.

Contract: a write call that validates and is authorized, but carries no usable approval,
creates (or reuses) an `ApprovalRequest` in status `pending`. `refusal_for_approver` and
`refusal_for_call` return a sentence saying why an approver may not decide, or why an approval
does not cover a call, or None. An approval covers exactly one tool, version, tenant, requester
and arguments hash, is used by one idempotency key, and expires.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from .principal import Principal
from .receipts import iso

ApprovalStatus = Literal["pending", "approved", "denied", "used"]

APPROVAL_COLUMNS: tuple[str, ...] = (
    "id",
    "tool",
    "version",
    "args_hash",
    "args",
    "requester",
    "requester_kind",
    "tenant",
    "status",
    "created_at",
    "expires_at",
    "approver",
    "decided_at",
    "reason",
    "idempotency_key",
)


@dataclass(slots=True)
class ApprovalRequest:
    id: str
    tool: str
    version: str
    args_hash: str
    args: str
    requester: str
    requester_kind: str
    tenant: str
    status: str
    created_at: float
    expires_at: float
    approver: str | None = None
    decided_at: float | None = None
    reason: str | None = None
    idempotency_key: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("created_at", "expires_at", "decided_at"):
            out[key] = iso(out[key])
        return out

    def expired(self, now: float) -> bool:
        return now >= self.expires_at


def refusal_for_approver(
    request: ApprovalRequest,
    approver: Principal,
    *,
    approval_scope: str,
    approver_kinds: frozenset[str],
    four_eyes: bool,
    now: float,
) -> str | None:
    if request.status != "pending":
        return f"approval {request.id} is {request.status}, not pending"
    if request.expired(now):
        return f"approval {request.id} expired at {iso(request.expires_at)}"
    if approver.tenant != request.tenant:
        return f"approver tenant {approver.tenant!r} is not the request's tenant"
    if approval_scope not in approver.scopes:
        return f"approver {approver.subject!r} lacks the scope {approval_scope!r}"
    if approver.kind not in approver_kinds:
        return (f"a {approver.kind} cannot approve this tool; approvers must be "
                + " or ".join(sorted(approver_kinds)))
    if four_eyes and approver.subject == request.requester:
        return "the requester cannot approve their own request (four-eyes rule)"
    return None


def refusal_for_call(
    request: ApprovalRequest,
    *,
    tool: str,
    version: str,
    args_hash: str,
    principal: Principal,
    idempotency_key: str,
    now: float,
) -> str | None:
    if request.tool != tool or request.version != version:
        return f"approval {request.id} is for tool {request.tool!r} version {request.version}, not this call"
    if request.tenant != principal.tenant:
        return f"approval {request.id} belongs to another tenant"
    if request.requester != principal.subject:
        return f"approval {request.id} was requested by another principal"
    if request.args_hash != args_hash:
        return (f"approval {request.id} was granted for arguments {request.args_hash}, "
                f"not for these arguments ({args_hash})")
    if request.status == "used":
        if request.idempotency_key == idempotency_key:
            return None  # the same execution asked again: the replay path answers it
        return f"approval {request.id} was already used by another idempotency key"
    if request.status != "approved":
        return f"approval {request.id} is {request.status}, not approved"
    if request.expired(now):
        return f"approval {request.id} expired at {iso(request.expires_at)}"
    return None
