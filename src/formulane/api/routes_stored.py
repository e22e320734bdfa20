"""Stored formulas (``/v1/formulas``): versions, known-answer cases, publish, live, rollback.

Contract: thin HTTP over `FormulaStore`; the tenant is always the key's. See formula_store.py
for the rules (immutable versions, publish only when every case passes, tombstones).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.config import JsonDict

import formulane

from .auth import ApiPrincipal
from .deps import authenticate, need, rid
from .envelope import ERROR_RESPONSES
from .formula_store import Actor, FormulaStore
from .routes_formulas import MAX_TEXT, ValueOut, check_formula_limit, value_out
from .values import to_engine

router = APIRouter(prefix="/v1/formulas", tags=["stored formulas"],
                   responses=ERROR_RESPONSES)

NamePath = Path(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,99}$", examples=["order_total"])


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(default=None, max_length=200)
    inputs: dict[str, Any] = Field(default_factory=dict[str, Any])
    expect: Any = Field(description='the expected value; an error value as {"error": "#DIV/0!"}')


_EXAMPLE: JsonDict = {"name": "order_total", "formula": "ROUND(price * qty * 1.2, 2)",
            "schema": {"price": "Number", "qty": "Number"},
            "cases": [{"name": "three at 9.99", "inputs": {"price": 9.99, "qty": 3},
                       "expect": 35.96}]}


class FormulaCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [_EXAMPLE]})
    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,99}$")
    formula: str = Field(min_length=1, max_length=MAX_TEXT)
    schema_: dict[str, str] = Field(default_factory=dict[str, str], alias="schema")
    profile: Literal["strict", "excel"] = "strict"
    cases: list[Case] = Field(default_factory=list[Case])
    note: str = Field(default="", max_length=2000)


class VersionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"formula": "ROUND(price * qty * 1.25, 2)",
         "cases": [{"inputs": {"price": 10, "qty": 2}, "expect": 25}], "note": "new tax"}]})
    formula: str | None = Field(default=None, min_length=1, max_length=MAX_TEXT)
    schema_: dict[str, str] | None = Field(default=None, alias="schema")
    profile: Literal["strict", "excel"] | None = None
    cases: list[Case] | None = None
    note: str = Field(default="", max_length=2000)


class FormulaOut(BaseModel):
    name: str
    live_version: int | None
    latest_version: int | None
    created_at: float
    created_by: str


class FormulaList(BaseModel):
    formulas: list[FormulaOut]


class VersionOut(BaseModel):
    version: int
    source: str
    schema_: dict[str, str] = Field(alias="schema")
    profile: str
    cases: list[dict[str, Any]]
    type: str
    language_version: str
    status: Literal["draft", "published"]
    created_at: float
    created_by: str
    published_at: float | None = None
    published_by: str | None = None
    note: str = ""
    diff: str | None = Field(default=None, description="unified diff of the source against the "
                                               "previous version")

    model_config = ConfigDict(populate_by_name=True)


class VersionList(BaseModel):
    versions: list[VersionOut]


class CaseResult(BaseModel):
    case: str
    passed: bool
    expected: Any = None
    actual: Any = None
    error: dict[str, str] | None = None


class CaseResults(BaseModel):
    passed: bool
    results: list[CaseResult]


class PublishOut(BaseModel):
    formula: FormulaOut
    results: list[CaseResult]


class RollbackIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"version": 1, "reason": "v2 rounds the wrong way"}]})
    version: int | None = Field(default=None, ge=1, description="default: the published version "
                                                        "before the live one")
    reason: str = Field(min_length=1, max_length=2000)


class EventOut(BaseModel):
    at: float
    actor: str
    action: str
    version: int | None
    reason: str
    request_id: str


class EventList(BaseModel):
    events: list[EventOut]


class StoredEvaluateIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"variables": {"price": 9.99, "qty": 3}}]})
    variables: dict[str, Any] = Field(default_factory=dict[str, Any])
    now: dt.datetime | None = None


class StoredValueOut(ValueOut):
    name: str
    version: int


def _actor(request: Request, who: ApiPrincipal) -> Actor:
    return Actor(who.tenant, who.subject, rid(request))


def _store(request: Request) -> FormulaStore:
    store: FormulaStore = request.app.state.service.formulas
    return store


@router.post("", response_model=FormulaOut, status_code=201, summary="Create a stored formula",
             description="Version 1, a draft; publish it when its cases pass.")
def create(body: FormulaCreate, request: Request,
           who: ApiPrincipal = need("formulas:write")) -> dict[str, Any]:
    check_formula_limit(request, body.formula)
    return _store(request).create(_actor(request, who), body.name, source=body.formula,
                                  schema=body.schema_, profile=body.profile,
                                  cases=[c.model_dump() for c in body.cases], note=body.note)


@router.get("", response_model=FormulaList, summary="This tenant's stored formulas")
def list_formulas(request: Request, who: ApiPrincipal = need("formulas:read")) -> dict[str, Any]:
    return {"formulas": _store(request).formulas(who.tenant)}


@router.get("/{name}", response_model=FormulaOut, summary="One stored formula")
def get_formula(request: Request, name: str = NamePath,
                who: ApiPrincipal = need("formulas:read")) -> dict[str, Any]:
    return _store(request).formula(who.tenant, name)


@router.delete("/{name}", status_code=204, summary="Delete (a tombstone; history kept)",
               response_class=Response)
def delete(request: Request, name: str = NamePath,
           who: ApiPrincipal = need("formulas:write")) -> Response:
    _store(request).delete(_actor(request, who), name)
    return Response(status_code=204)


@router.post("/{name}/versions", response_model=VersionOut, status_code=201,
             summary="Add a version", description="Omitted fields are copied from the latest.")
def add_version(body: VersionCreate, request: Request, name: str = NamePath,
                who: ApiPrincipal = need("formulas:write")) -> dict[str, Any]:
    if body.formula is not None:
        check_formula_limit(request, body.formula)
    return _store(request).add_version(
        _actor(request, who), name, source=body.formula, schema=body.schema_,
        profile=body.profile, note=body.note,
        cases=None if body.cases is None else [c.model_dump() for c in body.cases])


@router.get("/{name}/versions", response_model=VersionList, summary="Every version, with diffs")
def versions(request: Request, name: str = NamePath,
             who: ApiPrincipal = need("formulas:read")) -> dict[str, Any]:
    return {"versions": _store(request).versions(who.tenant, name)}


@router.get("/{name}/versions/{version}", response_model=VersionOut, summary="One version")
def version(request: Request, name: str = NamePath, version: int = Path(ge=1, lt=2**31),
            who: ApiPrincipal = need("formulas:read")) -> dict[str, Any]:
    return _store(request).version(who.tenant, name, version)


@router.post("/{name}/versions/{version}/test", response_model=CaseResults,
             summary="Run a version's known-answer cases")
def test_version(request: Request, name: str = NamePath, version: int = Path(ge=1, lt=2**31),
                 who: ApiPrincipal = need("formulas:read")) -> dict[str, Any]:
    results = _store(request).run_cases(who.tenant, name, version)
    return {"passed": all(r["passed"] for r in results), "results": results}


@router.post("/{name}/versions/{version}/publish", response_model=PublishOut,
             summary="Publish a version (every case must pass)",
             description="Moves the live alias. 409 E708 with the failing cases otherwise.")
def publish(request: Request, name: str = NamePath, version: int = Path(ge=1, lt=2**31),
            who: ApiPrincipal = need("formulas:publish")) -> dict[str, Any]:
    return _store(request).publish(_actor(request, who), name, version)


@router.post("/{name}/rollback", response_model=FormulaOut, summary="Move live back")
def rollback(body: RollbackIn, request: Request, name: str = NamePath,
             who: ApiPrincipal = need("formulas:publish")) -> dict[str, Any]:
    return _store(request).rollback(_actor(request, who), name, body.version, body.reason)


@router.get("/{name}/events", response_model=EventList, summary="The audit trail")
def events(request: Request, name: str = NamePath,
           who: ApiPrincipal = need("formulas:read")) -> dict[str, Any]:
    return {"events": _store(request).events(who.tenant, name)}


hot = APIRouter(prefix="/v1/formulas", tags=["stored formulas"],
                responses=ERROR_RESPONSES)


@hot.post("/{ref}/evaluate", response_model=StoredValueOut,
          summary="Evaluate a stored formula: name (live) or name@version",
          description="Scope: formulas:read.",
          openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
              "schema": StoredEvaluateIn.model_json_schema()}}}})
async def evaluate_stored(request: Request,
                          ref: str = Path(max_length=120,
                                          examples=["order_total", "order_total@2"])) -> Any:
    # The hottest route: authentication and the body are read here, not through FastAPI's
    # dependency solving (a third of this route's time); the checks are the same.
    who = await authenticate(request, "formulas:read")
    raw = await request.body()
    try:
        body = StoredEvaluateIn.model_validate_json(raw or b"{}")
    except ValidationError as exc:
        raise RequestValidationError([{**e, "loc": ("body", *e.get("loc", ()))}
                                      for e in exc.errors()]) from None
    store = _store(request)
    found = store.cached(who.tenant, ref)
    if found is None:  # the database only on a miss, off the event loop
        found = await run_in_threadpool(store.resolve, who.tenant, ref)
    program, where = found
    now = body.now if body.now is None or body.now.tzinfo else \
        body.now.replace(tzinfo=dt.timezone.utc)
    value = program.evaluate(to_engine(body.variables, program.schema), now=now)
    request.app.state.service.metrics.count(
        who.tenant, "formula", "error_value" if isinstance(value, formulane.ErrorValue) else "ok")
    # The hot path answers with its JSON directly: the shape is StoredValueOut's by
    # construction (the OpenAPI document and schemathesis check it).
    out = {**value_out(program, value, program.source), **where}
    out["warnings"] = [w.model_dump() for w in out["warnings"]]
    return JSONResponse(out)
