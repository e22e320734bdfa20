"""Operations: health, readiness, Prometheus metrics, the caller's identity, minted keys, and the
per-tenant lanes time series for the playground's dashboard.

Contract: ``/healthz`` answers while the process runs; ``/readyz`` is 200 only when the
database answers and the sandbox backend is usable (503 with what failed otherwise);
``/metrics`` is the Prometheus text format (no auth: bind to loopback or scrape through your
proxy; it holds counts only, no tenant names); ``/v1/metrics/lanes`` is one tenant's own counts.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from .auth import ApiPrincipal
from .deps import need
from .envelope import ERROR_RESPONSES

router = APIRouter(responses=ERROR_RESPONSES)


class Health(BaseModel):
    status: str = Field(examples=["ok"])


class Ready(BaseModel):
    ready: bool
    checks: dict[str, dict[str, Any]]


class WhoAmI(BaseModel):
    key_id: str
    tenant: str = Field(examples=["acme"])
    subject: str
    scopes: list[str]
    kind: str
    expires_at: float | None = None


class MintIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"scopes": ["formulas:read"], "ttl_s": 900, "subject": "end-user-42",
         "kind": "user", "label": "checkout widget"}]})
    scopes: list[str] | None = Field(default=None, max_length=64,
                                     description="a subset of this key's scopes (default: all)")
    ttl_s: int = Field(default=900, ge=1, description="seconds until it expires")
    subject: str | None = Field(default=None, min_length=1, max_length=200)
    kind: str = Field(default="workload", pattern="^(user|workload)$")
    label: str = Field(default="", max_length=200)


class MintOut(BaseModel):
    key: str = Field(description="the new key; shown once, store it now")
    principal: WhoAmI


class LanesOut(BaseModel):
    tenant: str
    bucket_s: int
    series: list[dict[str, Any]] = Field(
        description='per bucket: {"t": epoch seconds, "lanes": {lane: {outcome: count}}}')
    totals: dict[str, dict[str, int]]


@router.get("/healthz", response_model=Health, tags=["operations"], summary="Liveness")
async def healthz() -> Health:
    return Health(status="ok")


@router.get("/readyz", response_model=Ready, tags=["operations"], summary="Readiness",
            responses={503: {"model": Ready, "description": "database or sandbox not ready"}})
def readyz(request: Request) -> Any:
    checks = request.app.state.service.readiness()
    ready = all(c.get("ok") for c in checks.values())
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)


@router.get("/metrics", tags=["operations"], summary="Prometheus metrics",
            response_class=Response,
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}})
def metrics(request: Request) -> Response:
    from prometheus_client import CONTENT_TYPE_LATEST

    return Response(request.app.state.service.metrics.render(), media_type=CONTENT_TYPE_LATEST)


@router.get("/v1/whoami", response_model=WhoAmI, tags=["keys"], summary="The caller's principal")
async def whoami(who: ApiPrincipal = need(None)) -> dict[str, Any]:
    return _who(who)


def _who(who: ApiPrincipal) -> dict[str, Any]:
    return {**who.to_dict(), "scopes": sorted(who.scopes)}


@router.post("/v1/keys", response_model=MintOut, status_code=201, tags=["keys"],
             summary="Mint a short-lived, down-scoped key",
             description="For one end user or one agent task: same tenant, a subset of the "
                         "caller's scopes, an expiry (at most max_minted_key_ttl_s).")
def mint(body: MintIn, request: Request, who: ApiPrincipal = need("keys:mint")) -> dict[str, Any]:
    svc = request.app.state.service
    key, child = svc.keys.mint(who, scopes=body.scopes, ttl_s=body.ttl_s, subject=body.subject,
                               kind=body.kind, label=body.label,
                               max_ttl_s=svc.settings.max_minted_key_ttl_s)
    return {"key": key, "principal": _who(child)}


@router.get("/v1/metrics/lanes", response_model=LanesOut, tags=["operations"],
            summary="This tenant's lane counts over time (this process)")
def lanes(request: Request, since_s: int = Query(3600, ge=10, le=3600),
          who: ApiPrincipal = need("metrics:read")) -> dict[str, Any]:
    from .metrics import BUCKET_S

    series = request.app.state.service.metrics.series.series(who.tenant, since_s)
    totals: dict[str, dict[str, int]] = {}
    for row in series:
        for lane, outcomes in row["lanes"].items():
            for outcome, n in outcomes.items():
                totals.setdefault(lane, {}).setdefault(outcome, 0)
                totals[lane][outcome] += n
    return {"tenant": who.tenant, "bucket_s": BUCKET_S, "series": series, "totals": totals}
