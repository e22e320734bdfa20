"""Typed tools over HTTP: list (per provider format), call, approvals, receipts.

Contract: the caller's principal is the key's (tenant, subject, scopes, kind); a call runs
through `ToolRegistry.call`, so strict validation, the tool's scopes, approvals for writes,
idempotency (``Idempotency-Key`` header: one key runs once, across processes sharing the
database) and receipts are the typed-tool lane's own. A call answers 200 with the value, 202
with the approval a write needs, or the error envelope (the tool's own envelope under
``extra.tool_error``). Approvals and receipts of another tenant are not found (404).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Header, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from ..errors import ServiceError
from .approval_view import describe
from .auth import ApiPrincipal
from .deps import need, rid
from .envelope import ERROR_RESPONSES

router = APIRouter(prefix="/v1", tags=["tools"], responses=ERROR_RESPONSES)

Target = Literal["openai_strict", "openai", "anthropic", "anthropic_strict", "gemini", "mcp"]


class ToolsOut(BaseModel):
    format: str
    tools: list[dict[str, Any]] = Field(description="the provider's `tools` payload")
    names: list[str]
    demo: bool = Field(description="true when the demo registry is served")


class CallIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"args": {"formula": "ROUND(1/3, 2)"}},
        {"args": {"text": "hello"}, "approval": "auto"}]})
    args: dict[str, Any] = Field(default_factory=dict[str, Any])
    approval: str | None = Field(default=None, max_length=100,
                                 description='an approval id, or "auto" to use an approved '
                                             'request for exactly these arguments')
    call_id: str | None = Field(default=None, max_length=200)


class CallOut(BaseModel):
    tool: str
    status: Literal["ok", "approval_required", "unknown", "error"]
    value: Any = None
    approval: dict[str, Any] | None = None
    receipt_id: str
    replayed: bool = False
    text: str = Field(description="what a model reads")


class ApprovalOut(BaseModel):
    id: str
    tool: str
    version: str
    args_hash: str
    args: str
    requester: str
    requester_kind: str
    tenant: str
    status: str
    created_at: str | None
    expires_at: str | None
    approver: str | None = None
    decided_at: str | None = None
    reason: str | None = None
    idempotency_key: str | None = None
    policy: dict[str, Any] = Field(description="why it waits: rule, effect, who may approve, "
                                               "four-eyes, status, expiry")
    summary: dict[str, str] = Field(description="what will run, to what, for whom, in words "
                                                "(`what`, `to_what`, `for_whom`, `text`)")


class ApprovalList(BaseModel):
    approvals: list[ApprovalOut]


class DecideIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"reason": "checked with the customer"}]})
    reason: str = Field(min_length=1, max_length=2000)


class ReceiptOut(BaseModel):
    id: str
    tool: str
    version: str
    schema_hash: str
    effect: str
    principal: str
    principal_kind: str
    tenant: str
    outcome: str
    started_at: str | None
    finished_at: str | None
    timings: dict[str, int] = Field(default_factory=dict[str, int])
    args_hash: str | None = None
    args: str | None = None
    result_hash: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    approval_id: str | None = None
    idempotency_key: str | None = None
    call_id: str | None = None
    replay_of: str | None = None


class ReceiptList(BaseModel):
    receipts: list[ReceiptOut]


def _svc(request: Request) -> Any:
    return request.app.state.service


@router.get("/tools", response_model=ToolsOut, summary="The tools, in a provider's format")
def list_tools(request: Request, format: Target = "openai_strict",  # noqa: A002
               who: ApiPrincipal = need("tools:read")) -> dict[str, Any]:
    svc = _svc(request)
    export = svc.tools.export(format, skip_unexportable=True)
    return {"format": format, "tools": export.payload(), "names": svc.tools.names(),
            "demo": svc.demo_tools}


@router.post("/tools/{name}/call", response_model=CallOut, summary="Call a tool",
             responses={202: {"model": CallOut, "description": "a write waits for approval"}})
def call_tool(body: CallIn, request: Request, name: str = Path(max_length=128),
              idempotency_key: str | None = Header(None, max_length=200),
              who: ApiPrincipal = need("tools:call")) -> Any:
    svc = _svc(request)
    if svc.tools.resolve(name) is None:
        raise ServiceError(f"no tool {name!r}", code="E501",
                           hint=svc.tools.did_you_mean(name) or "GET /v1/tools lists them")
    result = svc.tools.call(name, body.args, principal=who.to_tool_principal(),
                            idempotency_key=idempotency_key, approval=body.approval,
                            call_id=body.call_id or rid(request))
    lane_outcome = result.status if result.status != "error" else (
        result.error.code if result.error is not None else "error")
    svc.metrics.count(who.tenant, "tool", lane_outcome)
    if result.status == "error" and result.error is not None:
        err = result.error
        if err.code in ("E503", "E504"):
            svc.metrics.refusals.labels("tool", err.code).inc()
        exc = ServiceError(err.message, code=err.code, hint=err.hint or "")
        exc.extra = {"tool_error": err.to_dict()["error"],  # type: ignore[attr-defined]
                     "receipt_id": result.receipt.id}
        raise exc
    out = {"tool": result.tool, "status": result.status, "receipt_id": result.receipt.id,
           "replayed": result.replayed, "text": result.text(),
           "value": result.data if result.status == "ok" else None,
           "approval": _approval_out(svc, result.approval) if result.approval is not None
           else None}
    return JSONResponse(out, status_code=202 if result.status == "approval_required" else 200)


def _approval_out(svc: Any, approval: Any) -> dict[str, Any]:
    """The approval with its policy result and plain summary (built here, from the tool's
    declaration and the exact arguments)."""
    return {**approval.to_dict(), **describe(svc.tools, approval)}


def _approval(request: Request, who: ApiPrincipal, approval_id: str) -> Any:
    found = _svc(request).tool_store.approval(approval_id)
    if found is None or found.tenant != who.tenant:
        raise ServiceError("no such approval in this tenant", code="E703")
    return found


@router.get("/approvals", response_model=ApprovalList, summary="This tenant's approvals")
def approvals(request: Request,
              status: Literal["pending", "approved", "denied", "used", "expired"] | None = "pending",
              tool: str | None = Query(None, max_length=128),
              limit: int = Query(100, ge=1, le=1000),
              who: ApiPrincipal = need("tools:read")) -> dict[str, Any]:
    rows = _svc(request).tool_store.approvals(tenant=who.tenant, status=status, tool=tool,
                                              limit=limit)
    svc = _svc(request)
    return {"approvals": [_approval_out(svc, r) for r in rows]}


@router.get("/approvals/{approval_id}", response_model=ApprovalOut, summary="One approval")
def get_approval(request: Request, approval_id: str = Path(max_length=100),
                 who: ApiPrincipal = need("tools:read")) -> dict[str, Any]:
    return _approval_out(_svc(request), _approval(request, who, approval_id))


def _decide(request: Request, who: ApiPrincipal, approval_id: str, verdict: str,
            reason: str) -> dict[str, Any]:
    svc = _svc(request)
    _approval(request, who, approval_id)
    decide = svc.tools.approve if verdict == "approve" else svc.tools.deny
    decided = decide(approval_id, approver=who.to_tool_principal(), reason=reason)
    return _approval_out(svc, decided)


@router.post("/approvals/{approval_id}/approve", response_model=ApprovalOut,
             summary="Approve a pending call (with a reason)")
def approve(body: DecideIn, request: Request, approval_id: str = Path(max_length=100),
            who: ApiPrincipal = need("tools:approve")) -> dict[str, Any]:
    return _decide(request, who, approval_id, "approve", body.reason)


@router.post("/approvals/{approval_id}/deny", response_model=ApprovalOut,
             summary="Deny a pending call (with a reason)")
def deny(body: DecideIn, request: Request, approval_id: str = Path(max_length=100),
         who: ApiPrincipal = need("tools:approve")) -> dict[str, Any]:
    return _decide(request, who, approval_id, "deny", body.reason)


@router.get("/receipts", response_model=ReceiptList, summary="Tool receipts, filtered")
def receipts(request: Request, tool: str | None = Query(None, max_length=128),
             outcome: str | None = Query(None, max_length=64),
             idempotency_key: str | None = Query(None, max_length=200),
             limit: int = Query(100, ge=1, le=1000),
             who: ApiPrincipal = need("tools:read")) -> dict[str, Any]:
    rows = _svc(request).tool_store.receipts(tenant=who.tenant, tool=tool, outcome=outcome,
                                             idempotency_key=idempotency_key, limit=limit)
    return {"receipts": [r.to_dict() for r in rows]}


@router.get("/receipts/{receipt_id}", response_model=ReceiptOut, summary="One tool receipt")
def receipt(request: Request, receipt_id: str = Path(max_length=100),
            who: ApiPrincipal = need("tools:read")) -> dict[str, Any]:
    found = _svc(request).tool_store.receipt(receipt_id)
    if found is None or found.tenant != who.tenant:
        raise ServiceError("no such receipt in this tenant", code="E703")
    return found.to_dict()  # type: ignore[no-any-return]


