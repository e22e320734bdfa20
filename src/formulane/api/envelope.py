"""One error envelope for every failure, request ids, body limits and JSON logs.

Contract: every non-2xx response body is an `ErrorEnvelope` (``code``, ``message``, ``span``,
``hint``, ``fixes``, ``rendered``, ``request_id``; ``detail`` keeps pydantic's list for a 422;
``diagnostics`` every problem of a formula). Codes are the library's (`formulane.errors.CODES`),
the HTTP status derives from the code in one table (`STATUS`). An unexpected exception becomes
E901 with the request id and nothing else: the stack trace goes to the log, never to a client.
`RequestMiddleware` (pure ASGI: no per-request task) gives every response an ``X-Request-ID``,
refuses bodies over the limit before reading them (E705, by Content-Length and while
streaming), and writes one JSON log line per request; `Redactor` removes API keys and bearer
tokens from every log record.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import secrets
import time
from typing import Any, Awaitable, Callable, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import CODES, FormulaError

log = logging.getLogger("formulane.api")

STATUS: dict[str, int] = {
    "E501": 404, "E502": 422, "E503": 403, "E504": 409, "E505": 502, "E506": 500, "E507": 422,
    "E601": 422, "E602": 503, "E603": 422, "E604": 422,
    "E701": 401, "E702": 403, "E703": 404, "E704": 429, "E705": 413, "E706": 422,
    "E707": 409, "E708": 409, "E709": 503, "E901": 500,
}


def status_for(code: str) -> int:
    if code in STATUS:
        return STATUS[code]
    return 422 if code[:2] in ("E1", "E2", "E3", "E4") else 400


class SpanOut(BaseModel):
    start: int
    end: int
    line: int | None = None
    column: int | None = None


class FixOut(BaseModel):
    span: SpanOut
    replacement: str
    description: str = ""


class ErrorEnvelope(BaseModel):
    """The body of every failed request."""

    code: str = Field(examples=["E202"])
    message: str = Field(examples=["UPPER expects Text, got Number"])
    span: SpanOut | None = None
    hint: str = ""
    fixes: list[FixOut] = Field(default_factory=list[FixOut])
    rendered: str = ""
    request_id: str = ""
    detail: list[dict[str, Any]] | None = Field(
        None, description="pydantic's validation errors, for a 422 on the request's shape")
    diagnostics: list[dict[str, Any]] | None = Field(
        None, description="every problem of a formula (the first is the envelope's own)")
    extra: dict[str, Any] | None = Field(
        None, description="data for this code, e.g. the failing known-answer cases of E708")


#: For the OpenAPI document: the envelope under every error status a route can answer.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorEnvelope, "description": text} for status, text in (
        (401, "no valid API key (E701)"), (403, "a scope is missing (E702)"),
        (404, "no such resource in this tenant (E703)"), (413, "request too large (E705)"),
        (422, "invalid request or formula"), (429, "rate limited (E704)"))
}


def request_id(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", "")) or "-"


def envelope(exc: FormulaError, rid: str, *, source: str | None = None,
             extra: dict[str, Any] | None = None) -> dict[str, Any]:
    data = exc.to_dict(source)
    diags: list[Any] = data.get("diagnostics") or []
    out: dict[str, Any] = {
        "code": data["code"], "message": data["message"], "span": data.get("span"),
        "hint": data.get("hint", ""), "fixes": data.get("fixes", []),
        "rendered": data.get("rendered", ""), "request_id": rid,
        "detail": None, "diagnostics": diags if len(diags) > 1 or source is not None else None,
        "extra": extra if extra is not None else getattr(exc, "extra", None),
    }
    return out


def error_response(exc: FormulaError, rid: str, *, source: str | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    body = envelope(exc, rid, source=source if source is not None else exc.source)
    return JSONResponse(body, status_code=status_for(exc.code),
                        headers={"X-Request-ID": rid, **(headers or {})})


def install(app: FastAPI) -> None:
    """Exception handlers that turn everything into the envelope."""

    @app.exception_handler(FormulaError)
    async def _formula_error(request: Request, exc: FormulaError) -> JSONResponse:
        headers = getattr(exc, "headers", None)
        return error_response(exc, request_id(request), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        detail: list[dict[str, Any]] = []
        for err in exc.errors():
            item = {k: v for k, v in err.items() if k in ("type", "loc", "msg")}
            item["loc"] = [str(p) for p in item.get("loc", ())]
            detail.append(item)
        first: dict[str, Any] = detail[0] if detail else {"loc": [], "msg": "invalid request"}
        where = ".".join(first["loc"][1:] if first["loc"][:1] in (["body"], ["query"], ["path"])
                         else first["loc"]) or "request"
        rid = request_id(request)
        hint = "see detail for every problem"
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json" and first["loc"] == ["body"]:
            hint = ("send the body as JSON with 'Content-Type: application/json' (curl -d sends "
                    "a form unless told)")
        body: dict[str, Any] = {"code": "E706", "message": f"{where}: {first['msg']}", "span": None,
                "hint": hint, "fixes": [],
                "rendered": f"error[E706]: {where}: {first['msg']}", "request_id": rid,
                "detail": detail, "diagnostics": None, "extra": None}
        return JSONResponse(body, status_code=422, headers={"X-Request-ID": rid})

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {401: "E701", 403: "E702", 404: "E703", 405: "E706", 413: "E705",
                429: "E704"}.get(exc.status_code, "E706")
        message = exc.detail if isinstance(cast(object, exc.detail), str) else CODES[code]
        if exc.status_code == 404:
            message = "no such route"
        if exc.status_code == 405:
            message = "method not allowed on this route"
        rid = request_id(request)
        return JSONResponse(
            {"code": code, "message": message, "span": None, "hint": "", "fixes": [],
             "rendered": f"error[{code}]: {message}", "request_id": rid, "detail": None,
             "diagnostics": None, "extra": None},
            status_code=exc.status_code, headers={"X-Request-ID": rid, **(exc.headers or {})})

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        rid = request_id(request)
        log.error("internal error", exc_info=exc, extra={"request_id": rid})
        return JSONResponse(
            {"code": "E901", "message": "internal error", "span": None,
             "hint": f"quote request id {rid} when reporting it", "fixes": [],
             "rendered": "error[E901]: internal error", "request_id": rid, "detail": None,
             "diagnostics": None, "extra": None},
            status_code=500, headers={"X-Request-ID": rid})


# -- middleware ------------------------------------------------------------------------------

_RID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
ASGIApp = Callable[[dict[str, Any], Callable[[], Awaitable[dict[str, Any]]],
                    Callable[[dict[str, Any]], Awaitable[None]]], Awaitable[None]]


_PROCESS = secrets.token_hex(4)
_COUNTER = itertools.count()


def _new_request_id() -> str:
    # Unique, not secret: a random part per process and a counter (no system call each).
    return f"{_PROCESS}{next(_COUNTER):08x}"


class _TooLarge(Exception):
    pass


class RequestMiddleware:
    """Request id, body size limit, one structured log line, request metrics."""

    def __init__(self, app: ASGIApp, *, max_body: int, max_batch_body: int,
                 batch_paths: tuple[str, ...], observe: Callable[[str, str, int, float], None]
                 ) -> None:
        self.app = app
        self.max_body = max_body
        self.max_batch_body = max_batch_body
        self.batch_paths = batch_paths
        self.observe = observe

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        headers: dict[bytes, bytes] = dict(scope.get("headers") or ())
        incoming = headers.get(b"x-request-id", b"").decode("latin-1")
        rid = incoming if incoming and _RID.match(incoming) else _new_request_id()
        scope.setdefault("state", {})["request_id"] = rid
        path: str = scope.get("path", "")
        limit = self.max_batch_body if path.startswith(self.batch_paths) else self.max_body
        status = [500]
        raw_rid = rid.encode()

        async def send_with_id(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                headers: list[tuple[bytes, bytes]] = list(message.get("headers", ()))
                if not any(k.lower() == b"x-request-id" for k, _ in headers):
                    headers.append((b"x-request-id", raw_rid))
                message["headers"] = headers
            await send(message)

        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._too_large(send_with_id, rid, limit)
        else:
            seen = [0]

            async def counted_receive() -> dict[str, Any]:
                message: dict[str, Any] = await receive()
                if message["type"] == "http.request":
                    seen[0] += len(message.get("body", b""))
                    if seen[0] > limit:
                        raise _TooLarge()
                return message

            try:
                await self.app(scope, counted_receive, send_with_id)
            except _TooLarge:
                await self._too_large(send_with_id, rid, limit)
        elapsed = time.perf_counter() - start
        route: Any = scope.get("route")
        template = getattr(route, "path", None) or "unmatched"
        self.observe(scope.get("method", ""), template, status[0], elapsed)
        state: dict[str, Any] = scope.get("state", {})
        if log.isEnabledFor(logging.INFO):
            log.info(json.dumps({
                "event": "request", "request_id": rid, "method": scope.get("method"),
                "route": template, "status": status[0], "ms": round(elapsed * 1000, 3),
                "key_id": state.get("key_id"), "tenant": state.get("tenant")}))

    async def _too_large(self, send: Any, rid: str, limit: int) -> None:
        body = json.dumps({
            "code": "E705", "message": f"request body over {limit} bytes", "span": None,
            "hint": "send a smaller body, or split the batch", "fixes": [],
            "rendered": f"error[E705]: request body over {limit} bytes", "request_id": rid,
            "detail": None, "diagnostics": None, "extra": None}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


# -- logs --------------------------------------------------------------------------------------

_SECRET = re.compile(r"fk_[0-9a-f]{16}_[A-Za-z0-9_-]{10,}|(?i:bearer)\s+[A-Za-z0-9._~+/=-]+")


def redact(text: str) -> str:
    return _SECRET.sub("[redacted]", text)


class Redactor(logging.Filter):
    """Removes API keys and bearer tokens from every record (message and arguments)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(str(record.msg))
        if record.args:
            record.args = tuple(redact(a) if isinstance(a, str) else a
                                for a in (record.args if isinstance(record.args, tuple)
                                          else (record.args,)))
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        try:
            data = json.loads(message) if message.startswith("{") else {"message": message}
        except json.JSONDecodeError:
            data = {"message": message}
        data = {"ts": round(record.created, 3), "level": record.levelname.lower(),
                "logger": record.name, **data}
        if record.exc_info:
            data["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(data, default=str)


def configure_logging(level: str = "info") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    handler.addFilter(Redactor())
    for name in ("formulane", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
        logger.setLevel(level.upper())
