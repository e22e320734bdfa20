"""Jobs (the escalation lane) over HTTP: route, run, poll or stream, cancel, receipts, artifacts,
settle.

Contract: the request is an `EscalationRequest` without ``principal``: the server sets it from
the key, so a caller cannot act for another tenant. ``POST /v1/jobs/route`` returns the router's
decision and runs nothing. ``POST /v1/jobs`` routes and runs: the tool and formula lanes answer
at once with their `LaneResult`; a sandbox job is queued (202) in the shared job store through
`Router.submit` and run by one worker; its state is polled (``GET``) or streamed (server-sent
events), and once it has ended ``GET`` carries its `LaneResult` too (`Router.finish`, which
writes the sandbox lane receipt once), so every lane answers one result shape. ``?wait=`` holds
the submit for at most ``job_wait_max_s`` so a short job answers its `LaneResult` at once. Artifacts are fetched
by their content id (``sha256:<hex>``) and only when this job recorded them, never by path. A
job whose worker died is ``unknown`` and never runs again; ``settle`` records a person's
verdict with a reason. A job of another tenant is not found (404).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, AsyncIterator, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ..errors import EscalationError, ServiceError
from ..escalation import EscalationRequest, Outcome
from ..escalation.contract import Principal as JobPrincipal
from ..escalation.jobs import ResultTimeout
from .auth import ApiPrincipal
from .deps import need, rid
from .envelope import ERROR_RESPONSES
from .job_list import list_jobs
from .values import to_json

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=ERROR_RESPONSES)

JobId = Path(pattern=r"^[0-9a-fA-F-]{32,36}$", examples=["5f0c6f0e-4a53-4c1e-9d7b-6f1f4bb1b1aa"])


class JobIn(EscalationRequest):
    """An `EscalationRequest`; ``principal`` is set by the server from the API key."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra={"examples": [
        {"ask": "total of the order", "formula": "ROUND(price * qty, 2)",
         "inputs": {"price": 9.99, "qty": 3}},
        {"ask": "sum of squares", "code": "print(sum(i * i for i in range(10)))",
         "idempotency_key": "order-42-squares"}]})
    principal: None = Field(default=None, description="must be absent: the key's principal is used")  # type: ignore[assignment]


class DecisionOut(BaseModel):
    lane: str
    reasons: list[dict[str, Any]]
    formula: str | None = None
    tool_call: dict[str, Any] | None = None
    sandbox: dict[str, Any] | None = Field(default=None, description="the job the sandbox would run")


class SubmitOut(BaseModel):
    lane: str
    decision: DecisionOut
    outcome: str | None = Field(default=None, description="the lane's outcome (tool, formula, refuse, "
                                                  "postpone answer at once)")
    value: Any = None
    result: dict[str, Any] | None = Field(
        None, description="the `LaneResult` (with its lane receipt) of the lane that ran: at once "
                          "for tool, formula, refuse and postpone; for a sandbox job when it "
                          "ended within `wait` (else null: `GET /v1/jobs/{id}` has it later)")
    job: dict[str, Any] | None = Field(default=None, description="the sandbox job")


class JobOut(BaseModel):
    job_id: str
    status: str
    attempt: int
    backend: str
    created_at: str
    updated_at: str
    cancel_requested: str | None = None
    side_effects_possible: bool
    outcome: str | None = None
    receipt: dict[str, Any] | None = None
    lane: str = "sandbox"
    value: Any = Field(default=None, description="the job's declared result value, once finished")
    result: dict[str, Any] | None = Field(
        None, description="once finished: the same `LaneResult` the other lanes answer at once "
                          "(without `decision`, which `POST /v1/jobs` answered)")


class JobItem(BaseModel):
    id: str = Field(description="the sandbox job's id, or the lane receipt's id of a lane that "
                                "answered at once")
    lane: str
    state: str = Field(description="a sandbox job's status; another lane's outcome")
    created_at: str
    job_id: str | None = Field(default=None, description="set for sandbox jobs: GET /v1/jobs/{job_id}")
    request_id: str | None = None
    ask: str | None = None


class JobListOut(BaseModel):
    jobs: list[JobItem]
    next_cursor: str | None = Field(default=None, description="pass as `cursor` for the next page")


MAX_PAGE = 100  # rows per page of GET /v1/jobs: a bounded answer, whatever is asked


class ReceiptsOut(BaseModel):
    receipts: list[dict[str, Any]]


class ArtifactOut(BaseModel):
    id: str = Field(description="content id, sha256:<hex>")
    name: str = Field(description="the file name in the job's workspace (information only)")
    size: int
    mime: str
    attempt: int


class ArtifactsOut(BaseModel):
    artifacts: list[ArtifactOut]


class CancelIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"reason": "the customer withdrew the request"}]})
    reason: str = Field(default="cancelled by request", min_length=1, max_length=2000)


class SettleIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"outcome": "succeeded", "reason": "the file was written; checked by hand"}]})
    outcome: str = Field(description="a terminal outcome other than unknown")
    reason: str = Field(min_length=1, max_length=2000)


def _svc(request: Request) -> Any:
    return request.app.state.service


def _request(body: JobIn, who: ApiPrincipal, request_id: str) -> EscalationRequest:
    data = body.model_dump(exclude={"principal"})
    if "request_id" not in body.model_fields_set:
        data["request_id"] = request_id  # the HTTP request id goes into the lane receipt
    principal = JobPrincipal(subject=who.subject, tenant=who.tenant, scopes=who.scopes,
                             kind=who.kind)  # type: ignore[arg-type]
    return EscalationRequest.model_validate({**data, "principal": principal})


def _decision_out(decision: Any) -> dict[str, Any]:
    job = decision.sandbox_job
    return {"lane": decision.lane,
            "reasons": [r.model_dump(mode="json") for r in decision.reasons],
            "formula": decision.formula,
            "tool_call": decision.tool_call.model_dump(mode="json") if decision.tool_call else None,
            "sandbox": None if job is None else {
                "runtime": job.runtime.model_dump(mode="json"),
                "limits": job.limits.model_dump(mode="json"),
                "network": job.network.model_dump(mode="json"),
                "idempotency_key": job.idempotency_key}}


def _lane_result(svc: Any, record: Any) -> Any:
    """The finished job's `LaneResult` (None while it runs, while it is ``unknown`` and waits
    for a person, or for a job not submitted through the router)."""
    if not record.terminal or record.status == "unknown":
        return None
    try:
        return svc.router().finish(record.job_id, store=svc.job_store)
    except (EscalationError, ResultTimeout):
        return None


def _result_json(result: Any) -> dict[str, Any]:
    return result.model_dump(mode="json", exclude={"decision"})  # type: ignore[no-any-return]


def _job_out(svc: Any, record: Any) -> dict[str, Any]:
    receipt = svc.job_store.latest(record.job_id) if record.terminal else None
    result = _lane_result(svc, record)
    return {"lane": "sandbox",
            "value": None if result is None else to_json(result.value),
            "result": None if result is None else _result_json(result),
            "job_id": record.job_id, "status": record.status, "attempt": record.attempt,
            "backend": record.backend, "created_at": record.created_at,
            "updated_at": record.updated_at, "cancel_requested": record.cancel_requested,
            "side_effects_possible": record.side_effects_possible,
            "outcome": receipt.outcome.value if receipt is not None else None,
            "receipt": receipt.model_dump(mode="json") if receipt is not None else None}


def _record(request: Request, who: ApiPrincipal, job_id: str) -> Any:
    svc = _svc(request)
    if svc.job_store is None:
        raise ServiceError("no such job in this tenant", code="E703")
    record = svc.job_store.get(job_id.lower())
    if record is None or record.tenant != who.tenant:
        raise ServiceError("no such job in this tenant", code="E703")
    return record


def _route(request: Request, body: JobIn, who: ApiPrincipal) -> tuple[Any, Any]:
    svc = _svc(request)
    escalation = _request(body, who, rid(request))
    decision = svc.router().route(escalation)
    return escalation, decision


@router.post("/route", response_model=DecisionOut, summary="The router's decision (nothing runs)")
def route(body: JobIn, request: Request, who: ApiPrincipal = need("jobs:read")) -> dict[str, Any]:
    _, decision = _route(request, body, who)
    return _decision_out(decision)


@router.post("", response_model=SubmitOut, summary="Route and run an escalation request",
             responses={202: {"model": SubmitOut, "description": "a sandbox job was queued"}})
def submit(body: JobIn, request: Request, who: ApiPrincipal = need("jobs:run"),
           wait: float = Query(0, ge=0, description="seconds to wait for a sandbox job to end "
                               "(at most the service's job_wait_max_s)")) -> Any:
    svc = _svc(request)
    escalation, decision = _route(request, body, who)
    m = svc.metrics
    m.escalations.labels(decision.lane).inc()
    m.series.add_escalation(who.tenant, decision.lane)
    out: dict[str, Any] = {"lane": decision.lane, "decision": _decision_out(decision),
                           "outcome": None, "value": None, "result": None, "job": None}
    if decision.lane == "refuse":
        for reason in decision.reasons:
            m.refusals.labels("sandbox", str(getattr(reason.code, "value", reason.code))).inc()
    if decision.lane != "sandbox":
        # Tool, formula, refuse and postpone answer at once, as a LaneResult whose lane
        # receipt is stored with the jobs' receipts.
        result = svc.router().execute(escalation, decision, store=svc.job_store)
        m.count(who.tenant, decision.lane, result.outcome)
        out["outcome"] = result.outcome
        out["value"] = to_json(result.value)
        out["result"] = _result_json(result)
        return out
    if svc.jobs is None:
        raise ServiceError("no sandbox backend is configured", code="E709",
                           hint=svc.backend_note or "start the service with a sandbox")
    try:
        # Router.submit remembers the request and decision, so Router.finish can answer the
        # same LaneResult (and write the sandbox lane receipt once) when the job ends.
        submitted = svc.router().submit(escalation, decision, jobs=svc.jobs, store=svc.job_store)
    except EscalationError as exc:
        m.refusals.labels("sandbox", exc.code).inc()
        raise
    m.count(who.tenant, "sandbox", "submitted")
    job_id = submitted.job_id
    limit = min(wait, svc.settings.job_wait_max_s)
    if limit > 0:
        try:
            svc.router().finish(job_id, jobs=svc.jobs, store=svc.job_store, timeout=limit)
        except ResultTimeout:
            pass
    job = _job_out(svc, svc.job_store.get(job_id))
    out["job"] = job
    if job["result"] is not None:
        out["outcome"], out["value"] = job["result"]["outcome"], job["value"]
        out["result"] = job["result"]
        return out
    return JSONResponse(out, status_code=202)


@router.get("", response_model=JobListOut, summary="This tenant's jobs over every lane, newest first")
def jobs_list(request: Request, who: ApiPrincipal = need("jobs:read"),
              limit: int = Query(20, ge=1, le=MAX_PAGE),
              cursor: str | None = Query(None, max_length=400),
              state: str | None = Query(None, max_length=40, pattern=r"^[a-z_]+$",
                                        examples=["succeeded"]),
              lane: Literal["sandbox", "tool", "formula", "refuse", "postpone"] | None = None
              ) -> dict[str, Any]:
    svc = _svc(request)
    if svc.job_store is None:
        return {"jobs": [], "next_cursor": None}
    return list_jobs(svc.job_store, who.tenant, limit=limit, cursor=cursor, state=state,
                     lane=lane)


@router.get("/{job_id}", response_model=JobOut, summary="A job's state (and receipt when done)")
def get_job(request: Request, job_id: str = JobId,
            who: ApiPrincipal = need("jobs:read")) -> dict[str, Any]:
    return _job_out(_svc(request), _record(request, who, job_id))


@router.get("/{job_id}/events", summary="Stream a job's state (server-sent events)",
            response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}}})
async def job_events(request: Request, job_id: str = JobId,
                     who: ApiPrincipal = need("jobs:read")) -> StreamingResponse:
    svc = _svc(request)
    record = _record(request, who, job_id)
    limit = svc.settings.stream_max_s

    async def stream() -> AsyncIterator[bytes]:
        deadline = time.monotonic() + limit
        last = None
        current = record
        while True:
            state = (current.status, current.attempt, current.cancel_requested)
            if state != last:
                last = state
                data = await asyncio.to_thread(_job_out, svc, current)
                yield f"event: state\ndata: {json.dumps(data)}\n\n".encode()
            if current.terminal or time.monotonic() > deadline or await request.is_disconnected():
                yield b"event: end\ndata: {}\n\n"
                return
            await asyncio.sleep(0.2)
            current = await asyncio.to_thread(svc.job_store.get, current.job_id) or current

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store"})


@router.post("/{job_id}/cancel", response_model=JobOut, summary="Cancel a job")
def cancel(request: Request, body: CancelIn | None = None, job_id: str = JobId,
           who: ApiPrincipal = need("jobs:run")) -> dict[str, Any]:
    svc = _svc(request)
    record = _record(request, who, job_id)
    if svc.jobs is None:
        raise ServiceError("no sandbox backend is configured", code="E709")
    svc.jobs.cancel(record.job_id, (body.reason if body else "cancelled by request"))
    svc.metrics.cancellations.labels("sandbox").inc()
    return _job_out(svc, svc.job_store.get(record.job_id))


@router.get("/{job_id}/receipts", response_model=ReceiptsOut, summary="Every receipt of a job")
def job_receipts(request: Request, job_id: str = JobId,
                 who: ApiPrincipal = need("jobs:read")) -> dict[str, Any]:
    record = _record(request, who, job_id)
    return {"receipts": [r.model_dump(mode="json")
                         for r in _svc(request).job_store.receipts(record.job_id)]}


def _artifacts(request: Request, record: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for receipt in _svc(request).job_store.receipts(record.job_id):
        for a in receipt.artifacts:
            ref = a.stored_ref or f"sha256:{a.sha256}"
            out.append({"id": ref, "name": a.path.rsplit("/", 1)[-1], "size": a.size,
                        "mime": a.mime, "attempt": receipt.attempt})
    return out


@router.get("/{job_id}/artifacts", response_model=ArtifactsOut, summary="A job's artifacts")
def artifacts(request: Request, job_id: str = JobId,
              who: ApiPrincipal = need("jobs:read")) -> dict[str, Any]:
    return {"artifacts": _artifacts(request, _record(request, who, job_id))}


@router.get("/{job_id}/artifacts/{artifact_id}", summary="One artifact's bytes, by its id",
            response_class=Response,
            responses={200: {"content": {"application/octet-stream": {}}}})
def artifact(request: Request, job_id: str = JobId,
             artifact_id: str = Path(pattern=r"^sha256:[0-9a-f]{64}$"),
             who: ApiPrincipal = need("jobs:read")) -> Response:
    record = _record(request, who, job_id)
    listed = {a["id"]: a for a in _artifacts(request, record)}
    if artifact_id not in listed:
        raise ServiceError("no such artifact for this job", code="E703")
    backend = _svc(request).backend
    store = getattr(backend, "artifacts", None)
    if store is None:
        raise ServiceError("artifact storage is not available", code="E709")
    data = store.get(artifact_id)
    return Response(data, media_type=listed[artifact_id]["mime"],
                    headers={"Content-Disposition": "attachment"})


@router.post("/{job_id}/settle", response_model=JobOut,
             summary="Settle an unknown job by hand, with a reason")
def settle(body: SettleIn, request: Request, job_id: str = JobId,
           who: ApiPrincipal = need("jobs:settle")) -> dict[str, Any]:
    svc = _svc(request)
    record = _record(request, who, job_id)
    try:
        outcome = Outcome(body.outcome)
    except ValueError:
        raise ServiceError(f"unknown outcome {body.outcome!r}", code="E706",
                           hint=", ".join(o.value for o in Outcome if o.terminal
                                          and o is not Outcome.UNKNOWN)) from None
    if svc.jobs is None:
        raise ServiceError("no sandbox backend is configured", code="E709")
    svc.jobs.resolve(record.job_id, outcome, by=who.subject, note=body.reason)
    return _job_out(svc, svc.job_store.get(record.job_id))
