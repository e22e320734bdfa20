"""Formula endpoints (``/v1``): check, evaluate, batch, explain, format, complete, signature help,
hover, catalog.

Contract: every route takes the formula text, an optional schema (names to type strings; when
absent it is inferred from the variables) and a profile, and answers with the engine's own
types and diagnostics. ``/v1/check`` answers 200 for a bad formula (``ok: false`` and every
diagnostic with its fix-its): checking is its job. The others answer a bad formula with the
error envelope (422, the library's code). The batch route takes JSON rows, or an Arrow IPC
stream (``application/vnd.apache.arrow.stream``) or Parquet (``application/vnd.apache.parquet``)
body, runs `formulane.apply` (native polars, no per-row Python) and answers in the same format
with the formula columns and their ``__error`` columns.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import time
from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

import formulane

from ..errors import FormulaError, ServiceError
from ..schema import infer_schema, normalize_schema
from .auth import ApiPrincipal
from .deps import need
from .envelope import ERROR_RESPONSES
from .values import to_engine, to_json

router = APIRouter(prefix="/v1", tags=["formulas"], responses=ERROR_RESPONSES)

ARROW = "application/vnd.apache.arrow.stream"
PARQUET = "application/vnd.apache.parquet"
Profile = Literal["strict", "excel"]
Schema = dict[str, str]
MAX_SUMMARY_ROWS = 100  # first rows in a binary batch's JSON summary
MAX_TEXT = 65_536  # the model's bound; the configured max_formula_chars is checked below


class FormulaIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    formula: str = Field(min_length=1, max_length=MAX_TEXT,
                         examples=["ROUND(price * qty * 1.2, 2)"])
    schema_: Schema | None = Field(default=None, alias="schema",
                                   examples=[{"price": "Number", "qty": "Number"}])
    profile: Profile = "strict"


class EvaluateIn(FormulaIn):
    variables: dict[str, Any] = Field(default_factory=dict[str, Any], examples=[{"price": 9.99, "qty": 3}])
    now: dt.datetime | None = Field(default=None, description="the time TODAY()/NOW() see (default: now)")

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"formula": "ROUND(price * qty * 1.2, 2)", "variables": {"price": 9.99, "qty": 3}}]})


class DiagnosticOut(BaseModel):
    code: str
    severity: str
    message: str
    span: dict[str, int] | None = None
    label: str = ""
    hint: str = ""
    fixes: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    rendered: str = ""


class CheckOut(BaseModel):
    ok: bool = Field(examples=[True])
    type: str | None = Field(default=None, examples=["Number"])
    cost_bound: int | None = Field(default=None, description="static cost bound (units; see Limits)")
    metered: bool | None = Field(default=None, description="True when every call is charged as it runs")
    uses: list[str] = Field(default_factory=list[str], description="the schema names it reads")
    diagnostics: list[DiagnosticOut] = Field(default_factory=list[DiagnosticOut])


class ValueOut(BaseModel):
    value: Any = Field(default=None, examples=[35.96])
    type: str = Field(examples=["Number"])
    error_value: dict[str, str] | None = Field(
        None, description='set when the result is an error value, e.g. {"error": "#DIV/0!"}')
    warnings: list[DiagnosticOut] = Field(default_factory=list[DiagnosticOut])


class BatchIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"formulas": {"total": "ROUND(price * qty, 2)", "unit": "price / qty"},
         "rows": [{"price": 9.99, "qty": 3}, {"price": 5, "qty": 0}],
         "schema": {"price": "Number", "qty": "Number"}}]})
    formulas: dict[str, str] = Field(min_length=1, max_length=64)
    rows: list[dict[str, Any]]
    schema_: Schema | None = Field(default=None, alias="schema")
    profile: Profile = "strict"


class BatchOut(BaseModel):
    rows: list[dict[str, Any]] = Field(description="per row: each formula's value and, where "
                                                   "errors are possible, <name>__error")
    count: int


class ExplainOut(ValueOut):
    explanation: dict[str, Any]
    text: str


class FormatIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    formula: str = Field(min_length=1, max_length=MAX_TEXT, examples=["if(a>1,'x','y')"])
    width: int = Field(default=80, ge=20, le=400)


class FormatOut(BaseModel):
    formatted: str = Field(examples=['IF(a > 1, "x", "y")'])


class CursorIn(FormulaIn):
    formula: str = Field(max_length=MAX_TEXT, examples=["ROUND(pri"])  # may be empty
    cursor: int = Field(ge=0, examples=[9])


class CompletionOut(BaseModel):
    items: list[dict[str, Any]]


class HoverOut(BaseModel):
    hover: dict[str, Any] | None = None
    markdown: str | None = None


class SignatureHelpOut(BaseModel):
    signature: dict[str, Any] | None = Field(
        None, description="the innermost call around the cursor: `function`, `argument` (0-based "
                          "index being written), `active_signature`, `active_parameter`, `call` "
                          "(the name's span) and `signatures` (label, documentation, parameters "
                          "with their offsets in the label); null outside a call")


class FunctionOut(BaseModel):
    name: str
    category: str
    signatures: list[str]
    doc: str
    examples: list[str]


class FunctionsOut(BaseModel):
    functions: list[FunctionOut]
    count: int


# -- helpers -----------------------------------------------------------------------------------

def check_formula_limit(request: Request, formula: str) -> None:
    limit = request.app.state.service.settings.max_formula_chars
    if len(formula) > limit:
        raise ServiceError(f"formula of {len(formula)} characters is over the service's limit "
                           f"of {limit}", code="E401", hint="shorten the formula")


def _schema(schema: Schema | None, variables: dict[str, Any]) -> Any:
    if schema is None:
        return infer_schema(to_engine(variables, {}))
    return normalize_schema(schema)


def _diag(d: Any, source: str) -> DiagnosticOut:
    data = d.to_dict(source)
    return DiagnosticOut(**{k: data.get(k) for k in DiagnosticOut.model_fields})


def value_out(program: Any, value: Any, source: str) -> dict[str, Any]:
    out = to_json(value)
    error = out if isinstance(value, formulane.ErrorValue) else None
    return {"value": None if error else out, "type": str(program.type), "error_value": error,
            "warnings": [_diag(w, source) for w in program.warnings]}


def _count(request: Request, who: ApiPrincipal, lane: str, outcome: str) -> None:
    request.app.state.service.metrics.count(who.tenant, lane, outcome)


# -- routes ------------------------------------------------------------------------------------

@router.post("/check", response_model=CheckOut, summary="Type-check a formula",
             description="Its type and static cost bound, or every diagnostic with fix-its "
                         "(200 either way).")
async def check(body: FormulaIn, request: Request, who: ApiPrincipal = need("formulas:read")
                ) -> CheckOut:
    check_formula_limit(request, body.formula)
    schema = normalize_schema(body.schema_ or {})
    diags = formulane.diagnose(body.formula, schema, profile=body.profile)
    errors = [d for d in diags if d.severity == "error"]
    if errors:
        return CheckOut(ok=False, diagnostics=[_diag(d, body.formula) for d in diags])
    program = formulane.compile(body.formula, schema, profile=body.profile)
    return CheckOut(ok=True, type=str(program.type), cost_bound=program.cost_bound,
                    metered=program.metered, uses=list(program.uses),
                    diagnostics=[_diag(d, body.formula) for d in diags])


@router.post("/evaluate", response_model=ValueOut, summary="Evaluate a formula on one row")
async def evaluate(body: EvaluateIn, request: Request,
                   who: ApiPrincipal = need("formulas:read")) -> dict[str, Any]:
    check_formula_limit(request, body.formula)
    schema = _schema(body.schema_, body.variables)
    program = formulane.compile(body.formula, schema, profile=body.profile)
    now = body.now if body.now is None or body.now.tzinfo else body.now.replace(tzinfo=dt.timezone.utc)
    value = program.evaluate(to_engine(body.variables, program.schema), now=now)
    _count(request, who, "formula", "error_value" if isinstance(value, formulane.ErrorValue)
           else "ok")
    return value_out(program, value, body.formula)


@router.post("/explain", response_model=ExplainOut, summary="Why a formula gives its value",
             description="The tree of sub-expressions with types, values, costs, and which ran.")
async def explain(body: EvaluateIn, request: Request,
                  who: ApiPrincipal = need("formulas:read")) -> dict[str, Any]:
    check_formula_limit(request, body.formula)
    schema = _schema(body.schema_, body.variables)
    program = formulane.compile(body.formula, schema, profile=body.profile)
    inputs = to_engine(body.variables, program.schema)
    explanation = program.explain(inputs, now=body.now)
    value = program.evaluate(inputs, now=body.now)
    out = value_out(program, value, body.formula)
    out["explanation"] = to_json(explanation.to_dict())
    out["text"] = explanation.to_text()
    return out


@router.post("/format", response_model=FormatOut, summary="The canonical form of a formula")
async def format_formula(body: FormatIn, request: Request,
                         who: ApiPrincipal = need("formulas:read")) -> FormatOut:
    check_formula_limit(request, body.formula)
    return FormatOut(formatted=formulane.format(body.formula, body.width))


@router.post("/complete", response_model=CompletionOut, summary="Completions at a cursor",
             description="Works on incomplete text as it is typed; best first.")
async def complete(body: CursorIn, request: Request,
                   who: ApiPrincipal = need("formulas:read")) -> CompletionOut:
    check_formula_limit(request, body.formula)
    cursor = min(body.cursor, len(body.formula))
    items = formulane.complete(body.formula, cursor, normalize_schema(body.schema_ or {}),
                               profile=body.profile)
    return CompletionOut(items=[i.to_dict() for i in items[:200]])


@router.post("/signature-help", response_model=SignatureHelpOut,
             summary="The call around a cursor: its signatures and the argument being written",
             description="Works on incomplete text as it is typed (`ROUND(x, `).")
async def signature_help(body: CursorIn, request: Request,
                         who: ApiPrincipal = need("formulas:read")) -> SignatureHelpOut:
    check_formula_limit(request, body.formula)
    cursor = min(body.cursor, len(body.formula))
    info = formulane.signature_help(body.formula, cursor)
    return SignatureHelpOut(signature=None if info is None else info.to_dict())


@router.post("/hover", response_model=HoverOut, summary="What is at a cursor",
             description="A function's docs, or the type of a name or sub-expression.")
async def hover(body: CursorIn, request: Request,
                who: ApiPrincipal = need("formulas:read")) -> HoverOut:
    check_formula_limit(request, body.formula)
    cursor = min(body.cursor, len(body.formula))
    info = formulane.hover(body.formula, cursor, normalize_schema(body.schema_ or {}),
                           profile=body.profile)
    if info is None:
        return HoverOut()
    return HoverOut(hover=info.to_dict(), markdown=info.markdown())


@router.get("/functions", response_model=FunctionsOut, summary="The function catalog")
async def functions(request: Request, query: str | None = Query(None, max_length=100),
                    category: str | None = Query(None, max_length=50),
                    who: ApiPrincipal = need("formulas:read")) -> FunctionsOut:
    needle = (query or "").lower()
    out: list[FunctionOut] = []
    for entry in formulane.function_catalog():
        if category and entry["category"].lower() != category.lower():
            continue
        if needle and needle not in entry["name"].lower() and needle not in entry["doc"].lower():
            continue
        out.append(FunctionOut(name=entry["name"], category=entry["category"],
                               signatures=[str(s) for s in entry["signatures"]],
                               doc=entry["doc"], examples=list(entry["examples"])))
    return FunctionsOut(functions=out, count=len(out))


_BATCH_DOC = (
    "JSON body (`application/json`): `{formulas, rows, schema?, profile?}`, at most "
    "`max_json_batch_rows` rows. Arrow IPC stream (`" + ARROW + "`) or Parquet (`" + PARQUET +
    "`) body: the formulas in the query (`formula=name=expr`, repeatable), the schema as JSON in "
    "`schema` (default: the columns' types); the answer has the same content type and holds the "
    "formula columns and their `<name>__error` columns (`keep_input=true` adds the input "
    "columns). Runs on the columnar engine; a formula it cannot express is refused (E213). "
    "`summary=true` (or `Accept: application/json`) answers JSON instead: the row count, the "
    "count of every error code per formula and the first `summary_rows` rows (at most 100).")


@router.post("/evaluate/batch", summary="Evaluate formulas over many rows", description=_BATCH_DOC,
             response_model=BatchOut,
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/json": {"schema": BatchIn.model_json_schema(by_alias=True)},
                 ARROW: {"schema": {"type": "string", "format": "binary"}},
                 PARQUET: {"schema": {"type": "string", "format": "binary"}}}}},
             responses={200: {"content": {ARROW: {}, PARQUET: {}}}})
async def evaluate_batch(request: Request,
                         formula: list[str] = Query(default_factory=list, max_length=64,
                                                    description="name=expr (binary bodies)"),
                         schema: str | None = Query(None, max_length=65_536),
                         profile: Profile = "strict", keep_input: bool = False,
                         summary: bool = Query(False, description="binary bodies: answer the "
                                               "JSON summary instead of the columns"),
                         summary_rows: int = Query(20, ge=0, le=MAX_SUMMARY_ROWS),
                         who: ApiPrincipal = need("formulas:read")) -> Any:
    svc = request.app.state.service
    kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    raw = await request.body()
    if kind in (ARROW, PARQUET):
        formulas = _query_formulas(formula)
        for text in formulas.values():
            check_formula_limit(request, text)
        parsed_schema = _json_schema(schema)
        from starlette.concurrency import run_in_threadpool

        accept = request.headers.get("accept", "").split(";")[0].strip().lower()
        if summary or accept == "application/json":
            found = await run_in_threadpool(_binary_summary, raw, kind, formulas, parsed_schema,
                                            profile, keep_input, svc.settings.max_batch_rows,
                                            summary_rows)
            svc.metrics.rows.inc(found["rows"])
            _count(request, who, "batch", "ok")
            return JSONResponse(found, headers={"X-Rows": str(found["rows"])})
        started = time.perf_counter()
        data, rows = await run_in_threadpool(_binary_batch, raw, kind, formulas, parsed_schema,
                                             profile, keep_input, svc.settings.max_batch_rows)
        elapsed_ms = (time.perf_counter() - started) * 1000
        svc.metrics.rows.inc(rows)
        _count(request, who, "batch", "ok")
        # Server-Timing: decode + formulas + encode, the figure the batch benchmark reports.
        return Response(data, media_type=kind, headers={
            "X-Rows": str(rows), "Server-Timing": f"batch;dur={elapsed_ms:.3f}"})
    if kind != "application/json":
        raise ServiceError(f"unsupported content type {kind!r}", code="E706",
                           hint=f"send application/json, {ARROW} or {PARQUET}")
    try:
        body = BatchIn.model_validate_json(raw)
    except ValueError as exc:
        from fastapi.exceptions import RequestValidationError

        errors = getattr(exc, "errors", lambda: [{"type": "json_invalid", "loc": ("body",),
                                                  "msg": "invalid JSON"}])()
        raise RequestValidationError([{**e, "loc": ("body", *e.get("loc", ()))} for e in errors])
    if len(body.rows) > svc.settings.max_json_batch_rows:
        raise ServiceError(f"{len(body.rows)} rows is over the JSON batch limit of "
                           f"{svc.settings.max_json_batch_rows}", code="E705",
                           hint="send larger batches as Arrow IPC or Parquet")
    for text in body.formulas.values():
        check_formula_limit(request, text)
    rows_out = _json_batch(body)
    _count(request, who, "batch", "ok")
    svc.metrics.rows.inc(len(rows_out))
    return {"rows": rows_out, "count": len(rows_out)}


def _query_formulas(items: list[str]) -> dict[str, str]:
    formulas: dict[str, str] = {}
    for item in items:
        name, sep, expr = item.partition("=")
        if not sep or not name.strip() or not expr.strip():
            raise ServiceError(f"formula takes name=expr, got {item[:80]!r}", code="E706")
        formulas[name.strip()] = expr
    if not formulas:
        raise ServiceError("give at least one formula=name=expr", code="E706")
    return formulas


def _json_schema(text: str | None) -> Any:
    if text is None:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise ServiceError("schema must be a JSON object of names to types", code="E209") from None
    return normalize_schema(data)


def _json_batch(body: BatchIn) -> list[dict[str, Any]]:
    """JSON rows through the scalar engine, one compiled program per formula."""
    rows = body.rows
    schema = normalize_schema(body.schema_) if body.schema_ is not None else \
        infer_schema(to_engine(rows[0], {}) if rows else {})
    programs = {name: formulane.compile(text, schema, profile=body.profile)
                for name, text in body.formulas.items()}
    out: list[dict[str, Any]] = []
    for row in rows:
        inputs = to_engine(row, schema)
        result: dict[str, Any] = {}
        for name, program in programs.items():
            try:
                value = program.evaluate(inputs)
            except FormulaError as exc:
                if exc.code.startswith("E4"):
                    raise
                result[name] = None
                result[f"{name}__error"] = exc.code
                continue
            if isinstance(value, formulane.ErrorValue):
                result[name] = None
                result[f"{name}__error"] = value.code
            else:
                result[name] = to_json(value)
                result[f"{name}__error"] = None
        out.append(result)
    return out


def _binary_frames(raw: bytes, kind: str, formulas: dict[str, str], schema: Any, profile: str,
                   keep_input: bool, max_rows: int) -> tuple[Any, int]:
    import polars as pl

    try:
        if kind == ARROW:
            frame = pl.read_ipc_stream(io.BytesIO(raw))
        else:
            frame = pl.read_parquet(io.BytesIO(raw))
    except Exception as exc:  # noqa: BLE001 - any decoding failure is the client's body
        raise ServiceError(f"cannot read the {('Arrow IPC stream' if kind == ARROW else 'Parquet')}"
                           f" body: {type(exc).__name__}", code="E706") from None
    if frame.height > max_rows:
        raise ServiceError(f"{frame.height} rows is over the batch limit of {max_rows}",
                           code="E705", hint="split the batch")
    result = formulane.apply(frame, formulas, schema, profile=profile)
    if not keep_input:
        result = result.select([c for c in result.columns if c not in frame.columns])
    return result, frame.height


def _binary_summary(raw: bytes, kind: str, formulas: dict[str, str], schema: Any, profile: str,
                    keep_input: bool, max_rows: int, first: int) -> dict[str, Any]:
    """The JSON summary of a binary batch: rows, error codes counted per formula over every
    row (most frequent first), and the first ``first`` rows."""
    result, rows = _binary_frames(raw, kind, formulas, schema, profile, keep_input, max_rows)
    errors: dict[str, dict[str, int]] = {}
    for name in formulas:
        column = f"{name}__error"
        if column not in result.columns:
            continue
        counts = result.get_column(column).drop_nulls().value_counts(sort=True)
        errors[name] = {str(code): int(n) for code, n in counts.iter_rows()}
    head = [{k: to_json(v) for k, v in row.items()} for row in result.head(first).iter_rows(
        named=True)]
    return {"rows": rows, "columns": result.columns, "errors": errors, "first_rows": head}


def _binary_batch(raw: bytes, kind: str, formulas: dict[str, str], schema: Any, profile: str,
                  keep_input: bool, max_rows: int) -> tuple[bytes, int]:
    result, rows = _binary_frames(raw, kind, formulas, schema, profile, keep_input, max_rows)
    sink = io.BytesIO()
    if kind == ARROW:
        result.write_ipc_stream(sink)
    else:
        result.write_parquet(sink)
    return sink.getvalue(), rows
