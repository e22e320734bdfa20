"""Request dependencies: the service, and the caller's principal for a scope.

Contract: `need(scope)` is a FastAPI dependency that reads ``Authorization: Bearer <key>``,
resolves the key (E701), charges the key's rate limit (E704 with ``Retry-After``) and checks the
scope (E702); it returns the `ApiPrincipal`, whose tenant every route then applies to every
read and write. The principal's key id and tenant go into the request's log line.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from ..errors import ServiceError
from .auth import ApiPrincipal
from .service import Service

#: The OpenAPI security scheme every /v1 operation declares (added in app.py).
SECURITY_SCHEME = {"type": "http", "scheme": "bearer",
                   "description": "an API key: fk_<id>_<secret>"}


def service(request: Request) -> Service:
    return request.app.state.service  # type: ignore[no-any-return]


async def authenticate(request: Request, scope: str | None) -> ApiPrincipal:
    """`need` without FastAPI's dependency machinery, for the hottest routes."""
    return await _principal(request, scope)


def need(scope: str | None) -> Any:
    async def principal(request: Request) -> ApiPrincipal:
        return await _principal(request, scope)

    principal.__name__ = f"need_{(scope or 'key').replace(':', '_')}"
    principal.__doc__ = f"scope: {scope or 'any valid key'}"
    return Depends(principal)


async def _principal(request: Request, scope: str | None) -> ApiPrincipal:
    # The header is read here rather than through a security dependency: one dependency
    # level less on every request (the OpenAPI document declares the scheme, see app.py).
    svc: Service = request.app.state.service
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ServiceError("missing or invalid API key", code="E701",
                           hint="send 'Authorization: Bearer <key>'")
    token = token.strip()
    # A cached key costs no I/O; a miss reads the database off the event loop.
    who = svc.keys.resolve_cached(token)
    if who is None:
        who = await run_in_threadpool(svc.keys.resolve, token)
    state = request.scope.setdefault("state", {})
    state["key_id"] = who.key_id
    state["tenant"] = who.tenant
    wait = svc.limiter.take(who.key_id)
    if wait:
        exc = ServiceError(f"rate limit of {svc.settings.rate_per_s:g} requests/s for this "
                           "key exceeded", code="E704", hint="retry after Retry-After seconds")
        exc.headers = {"Retry-After": str(max(1, math.ceil(wait)))}  # type: ignore[attr-defined]
        raise exc
    if scope is not None:
        who.require(scope)
    return who


def rid(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", ""))


Check = Callable[..., Any]
