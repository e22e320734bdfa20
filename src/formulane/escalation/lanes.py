"""One result and one receipt from every lane: `LaneResult` and `LaneReceipt`.

Contract: whichever lane ran a request (typed tool, formula, sandbox) or declined it (refuse,
postpone), the caller gets a frozen `LaneResult`: the request id, the lane, the outcome, the
value (a JSON-able value, ``None`` when there is none), the router's `Decision` with its
reasons, the `LaneReceipt`, and the job id when a sandbox job ran. A `LaneReceipt` is one
envelope for every lane and answers the seed's receipt list: the request and its id, who
proposed the code (provider, model, prompt version: fields the caller fills), the decision and
reasons, runtime, environment and its digest, the inputs with their mode and data class, the
network policy and how it was enforced, the code itself *redacted* (credential-looking literals
and URL passwords are replaced; inputs of a secret class are recorded by hash only), the files
created, the exit state, and the review state. The sandbox lane embeds the sandbox's own
`Receipt` unchanged. Outcomes are the sandbox `Outcome` values plus ``refused`` and
``postponed``; a refusal for a syntax error reads ``syntax_error``.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import date, datetime, time, timezone
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Sequence, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..jsonshape import is_object
from .contract import (
    ArtifactRecord, NetworkPolicy, Outcome, Receipt, canonical_json,
)
from .jobspec import JobSpec
from .policy import Reason

if TYPE_CHECKING:
    from .router import Decision

Lane = Literal["tool", "formula", "sandbox", "refuse", "postpone"]
ReviewState = Literal["accepted", "rejected", "needs_review"]
REVIEW_STATES: tuple[ReviewState, ...] = ("accepted", "rejected", "needs_review")
#: Every outcome a lane result can carry: the sandbox outcomes plus the router's two "no"s.
LANE_OUTCOMES: frozenset[str] = frozenset({o.value for o in Outcome} | {"refused", "postponed"})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Proposer(_Frozen):
    """Who proposed the code or the call: filled by the caller (the model is not asked)."""

    provider: str | None = Field(default=None, max_length=100)
    model: str | None = Field(default=None, max_length=200)
    prompt_version: str | None = Field(default=None, max_length=200)
    agent: str | None = Field(default=None, max_length=200)


class MountedInput(_Frozen):
    """One input that crossed into the lane: how it was given and under which data class."""

    name: str
    kind: Literal["value", "file", "stdin"]
    mode: Literal["ro", "rw"] = "ro"
    data_class: str = "internal"
    sha256: str
    size: int | None = None


class RequestRecord(_Frozen):
    """The request that started the job, redacted: what was asked and what was proposed."""

    ask: str
    formula: str | None = None
    tool: str | None = None
    tool_args_sha256: str | None = None
    code: str | None = None
    code_sha256: str | None = None
    idempotency_key: str | None = None


class DecisionRecord(_Frozen):
    lane: Lane
    reasons: tuple[Reason, ...]
    formula: str | None = None
    equivalence: str | None = None
    tool: str | None = None


class LaneReceipt(_Frozen):
    """The one receipt shape every lane writes into the store (append-only, hashed)."""

    receipt_version: Literal[1] = 1
    receipt_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    request_id: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    lane: Lane
    job_kind: str = "unspecified"
    tenant: str
    principal: str
    request: RequestRecord
    proposer: Proposer = Proposer()
    spec: JobSpec | None = None
    decision: DecisionRecord
    runtime: str
    environment: str | None = None
    environment_digest: str | None = None
    backend: str | None = None
    isolation: str | None = None
    inputs: tuple[MountedInput, ...] = ()
    data_classes: tuple[str, ...] = ()
    network: NetworkPolicy | None = None
    network_enforcement: str = "no network: ran in-process"
    tool: str | None = None
    tool_version: str | None = None
    files_created: tuple[ArtifactRecord, ...] = ()
    outcome: str
    outcome_detail: str = ""
    exit_code: int | None = None
    signal: int | None = None
    has_value: bool = False
    value_sha256: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    wall_ms: float | None = None
    cpu_ms: float | None = None
    job_id: str | None = None
    sandbox: Receipt | None = None
    review_state: ReviewState = "needs_review"

    @field_validator("outcome")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in LANE_OUTCOMES:
            raise ValueError(f"unknown lane outcome {value!r}")
        return value

    def canonical(self) -> bytes:
        return canonical_json(self.model_dump(mode="json"))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical()).hexdigest()

    @property
    def succeeded(self) -> bool:
        return self.outcome == Outcome.SUCCEEDED.value


class LaneResult(_Frozen):
    """What `formulane.run` and `Router.execute` return, whichever lane ran."""

    request_id: str
    lane: Lane
    outcome: str
    value: Any = None
    decision: "Decision"  # the router's (resolved by `router` with model_rebuild: no cycle)
    receipt: LaneReceipt
    job_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.SUCCEEDED.value

    @property
    def reasons(self) -> tuple[Reason, ...]:
        return tuple(self.decision.reasons)

    @property
    def sandbox_receipt(self) -> Receipt | None:
        return self.receipt.sandbox


# ------------------------------------------------------------------------------ helpers


def json_value(value: Any) -> Any:
    """A formula or tool value as plain JSON data: Decimal -> int or float (exact when it
    fits, else its text), dates as ISO text, tuples as lists; anything else as its text."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) \
            else str(value)
    if isinstance(value, Decimal):
        if value == value.to_integral_value() and abs(value) < 2 ** 63:
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else str(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in cast("Sequence[Any]", value)]
    if is_object(value):
        return {str(k): json_value(v) for k, v in value.items()}
    return str(value)


def value_digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(json_value(value))).hexdigest()


_SECRET_ASSIGN = re.compile(
    r"""(?P<key>\b[\w.\[\]'"-]*(?:secret|token|passw(?:or)?d|passwd|api[_-]?key|private[_-]?key|"""
    r"""credential|auth)[\w'"\]]*\s*[:=]\s*)(?P<q>['"])(?P<val>[^'"\n]{1,4096})(?P=q)""",
    re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(?P<pre>\b[a-z][a-z0-9+.-]*://[^\s:/@'\"]+:)[^\s@/'\"]+(?P<at>@)",
                           re.IGNORECASE)
_TOKEN_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|"
    r"AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,}|"
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})")
_ENV_READ = re.compile(
    r"""(os\.environ(?:\.get)?\s*[\[(]\s*['"])([^'"]*(?:SECRET|TOKEN|PASSWORD|API_KEY|KEY)[^'"]*)"""
    r"""(['"])""")
REDACTED = "[redacted]"


def redact_code(code: str) -> str:
    """The code as it ran, with credential-looking literals, URL passwords and known token
    shapes replaced by ``[redacted]`` (the code's hash in the receipt is of the original)."""
    out = _SECRET_ASSIGN.sub(lambda m: f"{m['key']}{m['q']}{REDACTED}{m['q']}", code)
    out = _URL_PASSWORD.sub(lambda m: f"{m['pre']}{REDACTED}{m['at']}", out)
    out = _TOKEN_SHAPES.sub(REDACTED, out)
    return out


def lane_outcome_for_refusal(reasons: tuple[Reason, ...]) -> str:
    if any(r.code.value == "syntax_error" for r in reasons):
        return Outcome.SYNTAX_ERROR.value
    return "refused"


def data_classes(names: list[str], classes: dict[str, str]) -> tuple[str, ...]:
    return tuple(sorted({classes.get(n, "internal") for n in names}))


class Submitted(NamedTuple):
    """`Router.submit`'s answer: the result at once, or the queued sandbox job's id."""

    request_id: str
    decision: Any
    job_id: str | None
    result: LaneResult | None


def result_from_receipt(receipt: LaneReceipt, decision: Any) -> LaneResult:
    """The `LaneResult` of a stored sandbox-lane receipt (its value from the result channel)."""
    declared, raw = sandbox_value(receipt.sandbox) if receipt.sandbox is not None else (
        False, None)
    return LaneResult(request_id=receipt.request_id, lane=receipt.lane, outcome=receipt.outcome,
                      value=json_value(raw) if declared else None, decision=decision,
                      receipt=receipt, job_id=receipt.job_id)


def sandbox_value(receipt: Receipt) -> tuple[bool, Any]:
    """(declared, value) from the sandbox receipt's result channel, when the job declared one.

    The bootstrap serialises the value the job's code assigns to ``result`` (or its final
    expression) as JSON into the receipt's ``result`` (`ResultValue`); the caller never parses
    stdout. A result that was declared but could not be returned (not JSON, too large) has its
    reason in ``result.error`` and no value; a receipt without a result has no value.
    """
    result = getattr(receipt, "result", None)
    if result is None:
        return False, None
    if isinstance(result, BaseModel):  # `ResultValue`: declared, value, error
        declared = bool(getattr(result, "declared", True)) and not getattr(result, "error", "")
        return declared, getattr(result, "value", None) if declared else None
    return True, result


class LaneRun:
    """Mutable notes while a lane runs; `result()` freezes them into a `LaneResult`."""

    def __init__(self, *, request: Any, decision: Any, started_at: datetime,
                 review: ReviewState = "needs_review") -> None:
        self.request = request
        self.decision = decision
        self.started_at = started_at
        self.review: ReviewState = review
        self.outcome = "refused"
        self.detail = ""
        self.value: Any = None
        self.sandbox: Receipt | None = None
        self.tool_version: str | None = None
        self.wall_ms: float | None = None

    def result(self) -> LaneResult:
        request, decision = self.request, self.decision
        value, has_value = json_value(self.value), self.value is not None
        job_id: str | None = None
        lane: Lane = decision.lane
        classes = dict(request.input_classes)
        inputs = [MountedInput(name=n, kind="value", data_class=classes.get(n, "internal"),
                               sha256=value_digest(v)) for n, v in sorted(request.inputs.items())]
        crossing = list(request.inputs)
        if lane in ("refuse", "postpone"):
            self.detail = "; ".join(r.message for r in decision.reasons)[:4000]
        extra: dict[str, Any] = {
            "runtime": _runtime(lane, request), "network_enforcement": {
                "formula": "no network: evaluated in-process by the formula engine",
                "tool": "no network from the lane: the typed tool runs in the application",
                "refuse": "nothing ran", "postpone": "nothing ran"}.get(lane, "")}
        if self.sandbox is not None:
            sandbox = self.sandbox
            job_id = sandbox.job_id
            self.outcome = sandbox.outcome.value
            self.detail = self.detail or sandbox.outcome_detail
            declared, raw = sandbox_value(sandbox)
            value, has_value = (json_value(raw), declared) if declared else (None, False)
            job = decision.sandbox_job
            files = {f.path: f for f in (job.files if job is not None else request.files)}
            inputs = [MountedInput(
                name=d.name, kind=d.kind, sha256=d.sha256,
                mode=files[d.name].mode if d.name in files else "ro",
                size=len(files[d.name].content) if d.name in files else None,
                data_class=classes.get(d.name, "internal")) for d in sandbox.inputs]
            crossing = [d.name for d in sandbox.inputs if d.kind != "stdin"]
            extra.update(
                runtime=_runtime("sandbox", request, sandbox), environment=sandbox.environment,
                environment_digest=sandbox.environment_digest, backend=sandbox.backend.name,
                isolation=sandbox.backend.isolation.value, network=sandbox.network,
                network_enforcement=sandbox.network_enforcement,
                files_created=sandbox.artifacts, exit_code=sandbox.exit_code,
                signal=sandbox.signal, cpu_ms=sandbox.cpu_ms, sandbox=sandbox)
        code = getattr(request, "code", None)
        tool_call = decision.tool_call or request.tool_call
        record = RequestRecord(
            ask=request.ask, formula=request.formula,
            tool=tool_call.name if tool_call is not None else None,
            tool_args_sha256=value_digest(tool_call.args) if tool_call is not None else None,
            code=redact_code(code) if code is not None else None,
            code_sha256=hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
            if code is not None else None,
            idempotency_key=request.idempotency_key)
        spec = request.spec
        ended = datetime.now(timezone.utc)
        receipt = LaneReceipt(
            request_id=request.request_id, lane=lane,
            job_kind=spec.kind if spec is not None else "unspecified",
            tenant=request.principal.tenant, principal=request.principal.subject,
            request=record, proposer=request.proposer or Proposer(), spec=spec,
            decision=DecisionRecord(lane=lane, reasons=tuple(decision.reasons),
                                    formula=decision.formula, equivalence=decision.equivalence,
                                    tool=tool_call.name if lane == "tool" and tool_call
                                    else None),
            inputs=tuple(inputs),
            data_classes=data_classes(crossing, classes) if lane not in (
                "refuse", "postpone") else (),
            tool=tool_call.name if lane == "tool" and tool_call is not None else None,
            tool_version=self.tool_version, outcome=self.outcome, outcome_detail=self.detail,
            has_value=has_value, value_sha256=value_digest(value) if has_value else None,
            started_at=self.started_at, ended_at=ended, wall_ms=self.wall_ms, job_id=job_id,
            review_state=self.review, **extra)
        return LaneResult(request_id=request.request_id, lane=lane, outcome=self.outcome,
                          value=value if has_value else None, decision=decision,
                          receipt=receipt, job_id=job_id)


def _runtime(lane: str, request: Any, sandbox: Receipt | None = None) -> str:
    if sandbox is not None:
        version = request.runtime.version or "host"
        return f"{request.runtime.language} {version} in {sandbox.backend.name} " \
               f"({sandbox.backend.isolation.value} isolation)"
    from .. import __version__

    return {"formula": f"formulane {__version__} formula engine (in-process)",
            "tool": "typed tool (in the application)"}.get(lane, "none: nothing ran")
