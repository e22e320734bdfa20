"""The router: every job goes to the smallest lane that can do it, and says why.

Contract: `Router.route(request)` is side-effect free and returns a `Decision` with a typed
lane (``tool``, ``formula``, ``sandbox``, ``refuse``, ``postpone``) and typed reasons, in this
order:
1. a proposed tool call, or code that is just a keyword call of a registered tool, goes to the
   typed-tool lane;
2. a proposed formula that checks goes to the formula lane (one that does not check is refused
   with its diagnostic: a broken formula is fixed, never escalated); code that demotes to a
   certified formula (see `demotion`) goes to the formula lane too;
3. only then the sandbox, as a fully built `SandboxJob`, when the principal's policy allows the
   runtime, network, limits, side effects and every input's data class, and the backend can
   give the isolation asked for;
   A request's `JobSpec` is read first for that step: ``postpone`` when it is too unclear,
   ``refuse`` when it rules the sandbox out (see `jobspec`);
4. otherwise ``refuse`` with every reason that applied. Refusal is an answer, not an exception.
`Router.execute(request)` then runs the chosen lane (the sandbox through a `JobManager` when
given one, so jobs are durable and idempotent) and returns a `LaneResult`, appending its
`LaneReceipt` to the store.
"""

from __future__ import annotations

import ast
import time
import uuid
from datetime import datetime
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..jsonshape import is_array
from ..errors import EscalationError
from .backends.base import SandboxBackend, syntax_problem, utcnow
from .broker import ToolCatalog
from .contract import (
    FileSpec, Isolation, JobState, Limits, NetworkPolicy, Outcome, Principal, RuntimeSpec,
    SandboxJob, SideEffectClass, parse_untrusted,
)
from .demotion import demote
from .jobspec import JobSpec, review_spec
from .lanes import (
    Lane, LaneResult, LaneRun, Proposer, ReviewState, Submitted, lane_outcome_for_refusal,
    result_from_receipt,
)
from .policy import Policy, PolicyBook, Reason, ReasonCode



class ToolCallProposal(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    args: dict[str, Any] = Field(default_factory=dict[str, Any])


class EscalationRequest(BaseModel):
    """What is asked, what was proposed, over which inputs, by whom, and what it would need."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    request_id: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1,
                            max_length=200)
    principal: Principal
    ask: str = Field(min_length=1, max_length=4000)
    formula: str | None = None
    tool_call: ToolCallProposal | None = None
    code: str | None = None
    inputs: dict[str, Any] = Field(default_factory=dict[str, Any])
    input_classes: dict[str, str] = Field(default_factory=dict[str, str])
    files: tuple[FileSpec, ...] = ()
    runtime: RuntimeSpec = RuntimeSpec()
    network: NetworkPolicy = NetworkPolicy()
    limits: Limits = Limits()
    state: JobState = "ephemeral"
    session_id: str | None = None
    side_effect_class: SideEffectClass = "read_only"
    min_isolation: Isolation = Isolation.NAMESPACE
    artifact_globs: tuple[str, ...] = ()
    broker_tools: tuple[str, ...] = ()
    idempotency_key: str | None = None
    #: The job contract (the six questions); without one the router decides as before.
    spec: JobSpec | None = None
    #: Who proposed the code or call (provider, model, prompt version): recorded, not trusted.
    proposer: Proposer | None = None

    @model_validator(mode="after")
    def _something(self) -> "EscalationRequest":
        if self.formula is None and self.tool_call is None and self.code is None:
            raise ValueError("propose at least one of formula, tool_call or code")
        return self

    @classmethod
    def parse(cls, data: Mapping[str, Any] | str | bytes) -> "EscalationRequest":
        """Validate untrusted data; every problem becomes one E603 error naming the field."""
        return parse_untrusted(cls, data, "escalation request", "request")


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    lane: Lane
    reasons: tuple[Reason, ...]
    formula: str | None = None
    schema_: dict[str, str] | None = Field(default=None, alias="schema")
    equivalence: str | None = None
    tool_call: ToolCallProposal | None = None
    sandbox_job: SandboxJob | None = None
    policy: Policy | None = None

    @property
    def codes(self) -> list[ReasonCode]:
        return [r.code for r in self.reasons]


def _engine() -> Any:
    import formulane

    return formulane if hasattr(formulane, "compile") else None


class Router:
    def __init__(self, *, policies: PolicyBook | None = None, catalog: ToolCatalog | None = None,
                 backend: SandboxBackend | None = None, store: Any = None) -> None:
        self.policies = policies or PolicyBook()
        self.catalog = catalog
        self.backend = backend
        self.store = store  # where lane receipts go when `execute` is not given one

    # -- deciding ----------------------------------------------------------------------------

    def route(self, request: EscalationRequest) -> Decision:
        reasons: list[Reason] = []
        tools: set[str] = set(self.catalog.names()) if self.catalog is not None else set()
        if request.tool_call is not None:
            if request.tool_call.name in tools:
                return Decision(lane="tool", tool_call=request.tool_call, reasons=(Reason(
                    code=ReasonCode.TOOL_COVERS,
                    message=f"registered typed tool {request.tool_call.name!r} covers it"),))
            reasons.append(Reason(code=ReasonCode.TOOL_UNKNOWN,
                                  message=f"no registered tool {request.tool_call.name!r}"))
        if request.code is not None:
            call = code_as_tool_call(request.code, request.inputs, tools)
            if call is not None:
                return Decision(lane="tool", tool_call=call, reasons=tuple(reasons) + (Reason(
                    code=ReasonCode.TOOL_COVERS,
                    message=f"the code only calls registered tool {call.name!r}"),))
        engine = _engine()
        if request.formula is not None:
            if engine is None:
                reasons.append(Reason(code=ReasonCode.FORMULA_ENGINE_MISSING,
                                      message="the formula engine is not available"))
            else:
                try:
                    schema = engine.infer_schema(request.inputs)
                    engine.compile(request.formula, schema)
                    return Decision(lane="formula", formula=request.formula, reasons=tuple(
                        reasons) + (Reason(code=ReasonCode.FORMULA_PROPOSED,
                                           message="the proposed formula checks"),))
                except engine.FormulaError as exc:
                    return Decision(lane="refuse", reasons=tuple(reasons) + (Reason(
                        code=ReasonCode.FORMULA_INVALID,
                        message=f"the proposed formula does not check: [{exc.code}] "
                                f"{exc.message}", detail={"diagnostic": exc.to_dict()}),))
        if request.code is None:
            if not reasons:
                reasons.append(Reason(code=ReasonCode.NOTHING_PROPOSED, message="nothing to run"))
            return Decision(lane="refuse", reasons=tuple(reasons))
        problem = syntax_problem(request.code, request.runtime.version)
        if problem is not None:
            return Decision(lane="refuse", reasons=tuple(reasons) + (Reason(
                code=ReasonCode.SYNTAX_ERROR, message=problem),))
        if engine is not None:
            try:
                demoted = demote(request.code, request.inputs,
                                 python_version=request.runtime.version)
                return Decision(lane="formula", formula=demoted.formula, schema=demoted.schema,
                                equivalence=demoted.equivalence, reasons=tuple(reasons) + (
                                    Reason(code=ReasonCode.DEMOTED,
                                           message="the code is one pure expression; its formula "
                                                   "gives the same answer for these inputs",
                                           detail={"python_value": demoted.python_value}),))
            except EscalationError as exc:
                reasons.append(Reason(code=ReasonCode.NOT_DEMOTABLE, message=exc.message))
        else:
            reasons.append(Reason(code=ReasonCode.FORMULA_ENGINE_MISSING,
                                  message="the formula engine is not available; no demotion"))
        return self._sandbox(request, reasons)

    def _sandbox(self, request: EscalationRequest, reasons: list[Reason]) -> Decision:
        policy = self.policies.resolve(request.principal)
        isolation = max(request.min_isolation, policy.min_isolation, key=lambda i: i.rank)
        side_effect_class, state = request.side_effect_class, request.state
        if request.spec is not None:
            verdict = review_spec(request.spec, policy, input_classes=request.input_classes,
                                  crossing=list(request.inputs) + [f.path for f in
                                                                   request.files],
                                  session_id=request.session_id)
            if verdict.postpone:
                return Decision(lane="postpone", policy=policy, reasons=tuple(
                    reasons + verdict.postpone + verdict.refuse))
            if verdict.refuse:
                return Decision(lane="refuse", policy=policy,
                                reasons=tuple(reasons + verdict.refuse))
            side_effect_class = verdict.side_effect_class or side_effect_class
            state = verdict.state or state
        try:
            job = SandboxJob(
                idempotency_key=request.idempotency_key or f"request:{request.request_id}",
                tenant=request.principal.tenant, principal=request.principal.subject,
                purpose=f"{request.ask} (formula lane escalated: "
                        f"{'; '.join(r.message for r in reasons)[:1500]})",
                side_effect_class=side_effect_class, runtime=request.runtime,
                code=request.code, inputs=request.inputs, files=request.files,
                artifact_globs=request.artifact_globs, limits=request.limits,
                network=request.network, state=state, session_id=request.session_id,
                min_isolation=isolation, broker_tools=request.broker_tools)
        except ValueError as exc:
            return Decision(lane="refuse", policy=policy, reasons=tuple(reasons) + (Reason(
                code=ReasonCode.SANDBOX_UNAVAILABLE,
                message=f"the request cannot become a valid sandbox job: {exc}"),))
        refusals = policy.review(job, request.input_classes)
        if not refusals and self.backend is not None:
            refusals = [Reason(code=ReasonCode.SANDBOX_UNAVAILABLE, message=m)
                        for m in self.backend.refusals(job)]
        if not refusals and self.backend is None:
            refusals = [Reason(code=ReasonCode.SANDBOX_UNAVAILABLE,
                               message="no sandbox backend is configured")]
        if refusals:
            return Decision(lane="refuse", policy=policy, reasons=tuple(reasons + refusals))
        return Decision(lane="sandbox", sandbox_job=job, policy=policy, reasons=tuple(reasons) + (
            Reason(code=ReasonCode.NEEDS_SANDBOX,
                   message="only a sandbox can run this, and policy allows it"),))

    # -- doing -------------------------------------------------------------------------------

    def execute(self, request: EscalationRequest, decision: Decision | None = None, *,
                jobs: Any = None, store: Any = None, timeout: float | None = None,
                review: ReviewState = "needs_review") -> LaneResult:
        """Run the decided lane and return its `LaneResult`; the lane receipt is appended to
        ``store`` (default: the job manager's store, else the router's) when there is one.

        ``jobs``: a `JobManager` for durable sandbox jobs (else the router's backend runs the
        job directly). Refusals, postponements and lane failures are results, not exceptions.
        """
        decision = decision or self.route(request)
        store = store if store is not None else (
            jobs.store if jobs is not None else self.store)
        started = utcnow()
        clock = time.perf_counter()
        run = LaneRun(request=request, decision=decision, started_at=started, review=review)
        if decision.lane == "postpone":
            run.outcome = "postponed"
        elif decision.lane == "refuse":
            run.outcome = lane_outcome_for_refusal(decision.reasons)
        elif decision.lane == "tool":
            self._run_tool(request, decision, run, jobs=jobs, timeout=timeout)
        elif decision.lane == "formula":
            self._run_formula(request, decision, run)
        else:
            job = decision.sandbox_job
            assert job is not None
            if jobs is not None:
                receipt = jobs.run(job, timeout=timeout).receipt
            elif self.backend is not None:
                receipt = self.backend.run(job)
            else:
                raise EscalationError("no sandbox backend is configured", code="E602")
            run.sandbox = receipt
        run.wall_ms = (time.perf_counter() - clock) * 1000
        result = run.result()
        if store is not None:
            store.append_lane(result.receipt)
        return result

    def submit(self, request: EscalationRequest, decision: Decision | None = None, *,
               jobs: Any, store: Any = None, review: ReviewState = "needs_review") -> Submitted:
        """Like `execute`, but a sandbox job is only queued: the answer carries its job id, and
        `finish(job_id)` gives the `LaneResult` once it ends. Every other lane runs at once."""
        decision = decision or self.route(request)
        if decision.lane != "sandbox":
            result = self.execute(request, decision, jobs=jobs, store=store, review=review)
            return Submitted(request.request_id, decision, None, result)
        store = store if store is not None else jobs.store
        assert decision.sandbox_job is not None
        record = jobs.submit(decision.sandbox_job)
        store.save_pending(record.job_id, request.request_id, request.model_dump_json(),
                           decision.model_dump_json(by_alias=True), review)
        return Submitted(request.request_id, decision, record.job_id, None)

    def finish(self, job_id: str, *, jobs: Any = None, store: Any = None,
               timeout: float | None = None) -> LaneResult:
        """The `LaneResult` of a submitted sandbox job, writing its lane receipt once.

        With ``jobs``, waits up to ``timeout`` (`ResultTimeout` when it is still running; the
        job is left running). Without, the job must have ended.
        """
        store = store if store is not None else (jobs.store if jobs is not None else self.store)
        pending = store.pending(job_id)
        if pending is None:
            raise EscalationError(f"job {job_id} was not submitted through the router",
                                  code="E603")
        _, request_json, decision_json, review = pending
        request = EscalationRequest.model_validate_json(request_json)
        decision = Decision.model_validate_json(decision_json)
        existing = store.lane_receipt_for_job(job_id)
        if existing is not None:
            return result_from_receipt(existing, decision)
        if jobs is not None:
            jobs.result(job_id, timeout=timeout, on_timeout="leave")
        record = store.get(job_id)
        if record is None:
            raise EscalationError(f"no job {job_id!r}", code="E603")
        if not record.terminal:
            from .jobs import ResultTimeout

            raise ResultTimeout(record)
        run = LaneRun(request=request, decision=decision, review=review,
                      started_at=datetime.fromisoformat(record.created_at))
        run.sandbox = store.latest(job_id)
        run.wall_ms = (datetime.fromisoformat(record.updated_at)
                       - datetime.fromisoformat(record.created_at)).total_seconds() * 1000
        result = run.result()
        if not store.append_lane_once(result.receipt):
            found = store.lane_receipt_for_job(job_id)
            assert found is not None
            return result_from_receipt(found, decision)
        return result

    def _run_tool(self, request: EscalationRequest, decision: Decision, run: LaneRun, *,
                  jobs: Any, timeout: float | None) -> None:
        if self.catalog is None or decision.tool_call is None:
            raise EscalationError("no tool catalog configured", code="E602")
        name, args = decision.tool_call.name, decision.tool_call.args
        pinned = getattr(self.catalog, "run_tool", None)
        if pinned is not None:
            found = pinned(name, args, principal=request.principal, jobs=jobs, timeout=timeout)
            if found is not None:  # a promoted tool: its pinned code runs in the sandbox
                run.tool_version = found.version
                run.sandbox = found.receipt
                run.outcome, run.detail = found.outcome, found.detail
                return
        try:
            run.value = self.catalog.call(name, args, principal=request.principal)
            run.outcome = Outcome.SUCCEEDED.value
        except Exception as exc:  # the tool's failure is the lane's answer, recorded
            run.outcome = Outcome.USER_ERROR.value
            run.detail = f"tool {name!r} failed: {type(exc).__name__}: {exc}"
        version = getattr(self.catalog, "version_of", None)
        run.tool_version = version(name) if version is not None else None

    def _run_formula(self, request: EscalationRequest, decision: Decision,
                     run: LaneRun) -> None:
        engine = _engine()
        if engine is None or decision.formula is None:
            raise EscalationError("the formula engine is not available", code="E602")
        schema = decision.schema_ or engine.infer_schema(request.inputs)
        variables = {k: _decimal_floats(v) for k, v in request.inputs.items() if k in schema}
        try:
            value = engine.evaluate(decision.formula, variables, schema=schema)
        except engine.FormulaError as exc:
            run.outcome = Outcome.USER_ERROR.value
            run.detail = f"[{exc.code}] {exc.message}"
            return
        if isinstance(value, engine.ErrorValue):
            run.outcome = Outcome.USER_ERROR.value
            run.detail = f"the formula gave the error value {value.code} {value.message}".strip()
            return
        run.value = value
        run.outcome = Outcome.SUCCEEDED.value


LaneResult.model_rebuild(_types_namespace={"Decision": Decision})

#: The name this result had before every lane returned a `LaneResult`.
Resolution = LaneResult


def code_as_tool_call(code: str, inputs: Mapping[str, Any],
                      tools: set[str]) -> ToolCallProposal | None:
    """``tool_name(arg=input_or_literal, ...)`` and nothing else becomes a tool call."""
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.Expr, ast.Assign)):
        return None
    call = tree.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id in tools and not call.args):
        return None
    args: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            return None
        if isinstance(kw.value, ast.Name) and kw.value.id in inputs:
            args[kw.arg] = inputs[kw.value.id]
        else:
            try:
                args[kw.arg] = ast.literal_eval(kw.value)
            except (ValueError, SyntaxError):
                return None
    return ToolCallProposal(name=call.func.id, args=args)


def _decimal_floats(value: Any) -> Any:
    from decimal import Decimal

    if isinstance(value, float):
        return Decimal(repr(value))
    if is_array(value):
        return [_decimal_floats(v) for v in value]
    return value
