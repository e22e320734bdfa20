"""The drafting room: sandbox code that keeps coming back becomes a reviewed, pinned typed tool.

Contract: `DraftRoom.promote(job_id, tool=..., by=...)` makes a draft from a *succeeded* sandbox
job's exact code, runtime and environment digest, and types the tool from the job's inputs
(one argument per input, JSON type of the value it had). A reviewer adds known-answer cases
(`add_case`: inputs and the answer a person computed; cases belong to the tool, so every later
draft faces them too) and `approve`s: each case runs the draft's code in the sandbox, with no
model in the loop, and its declared result must equal the known answer (numbers within 1e-9
relative); at least `MIN_CASES` cases are needed; the runs must report the pinned environment
digest. On success the draft is pinned (content hash + environment digest, version n+1) and
replaces the previously pinned version; on any failure it is refused (E605) with every case's
verdict and the pinned version stays. `PinnedTools` is the `ToolCatalog` the router sees: a call
of a pinned tool checks the principal's scopes and the argument types, runs that exact code in
the sandbox (through the job manager, so it gets a job id and receipts) and reports the pinned
version, which the lane receipt names.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Literal, Mapping

from pydantic import BaseModel, ConfigDict
from sqlalchemy import RowMapping, insert, select, update

from ..jsonshape import is_array, is_object
from ..errors import EscalationError
from .contract import Principal, Receipt, RuntimeSpec, SandboxJob
from .lanes import json_value, sandbox_value
from .store import JobStore
from .store import schema as tables

MIN_CASES = 3
#: Approval runs every case in the sandbox: the count and each case's size are bounded first.
MAX_CASES = 50
MAX_CASE_JSON_BYTES = 1024 * 1024
DraftStatus = Literal["draft", "pinned", "superseded", "rejected"]
Effect = Literal["read", "proposes_change"]
_EFFECT_SIDE = {"read": "read_only", "proposes_change": "proposes_change"}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if is_array(value):
        return "array"
    if is_object(value):
        return "object"
    return "null"


class Draft(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    draft_id: str
    tool: str
    version: int | None
    status: DraftStatus
    source_job_id: str | None
    tenant: str
    code: str
    code_sha256: str
    runtime: RuntimeSpec
    environment_digest: str | None
    arguments: dict[str, str]
    effect: Effect
    scopes: tuple[str, ...]
    created_by: str
    approved_by: str | None
    created_at: str

    @property
    def pinned_name(self) -> str:
        """How receipts name this version: ``tool@vN sha256:<code> env:<digest>``."""
        env = (self.environment_digest or "none").removeprefix("sha256:")[:16]
        return f"{self.tool}@v{self.version} sha256:{self.code_sha256[:16]} env:{env}"


class Case(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    case_id: str
    tool: str
    inputs: dict[str, Any]
    expected: Any
    added_by: str
    note: str = ""


@dataclass(frozen=True)
class CaseVerdict:
    case: Case
    passed: bool
    got: Any
    outcome: str
    detail: str


@dataclass(frozen=True)
class ToolRun:
    """What a pinned tool call gives the router's tool lane."""

    version: str
    receipt: Receipt | None
    outcome: str = "succeeded"
    detail: str = ""


# The drafting room's tables are declared with the store's (`store.schema`); its statements
# run through the store's `execute` and `fetch`, in the store's transactions.
_D = tables.lane_drafts.c
_C = tables.lane_draft_cases.c
_DRAFT = select(tables.lane_drafts)


def same_answer(got: Any, expected: Any) -> bool:
    got, expected = json_value(got), json_value(expected)
    if isinstance(got, bool) or isinstance(expected, bool):
        return got is expected if isinstance(got, bool) and isinstance(expected, bool) else False
    if isinstance(got, (int, float)) and isinstance(expected, (int, float)):
        return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)
    if is_array(got) and is_array(expected):
        return len(got) == len(expected) and all(same_answer(a, b) for a, b in zip(got, expected))
    if is_object(got) and is_object(expected):
        return got.keys() == expected.keys() and all(same_answer(got[k], expected[k])
                                                     for k in got)
    return bool(got == expected)


class DraftRoom:
    def __init__(self, store: JobStore, jobs: Any) -> None:
        self.store = store
        self.jobs = jobs

    # -- drafts ------------------------------------------------------------------------------

    def promote(self, job_id: str, *, tool: str, by: str, effect: Effect = "read",
                scopes: Iterable[str] = ()) -> Draft:
        """A draft from a succeeded sandbox job's exact code, runtime and environment."""
        if not tool.replace("_", "a").isalnum() or not tool[:1].isalpha() or len(tool) > 64:
            raise EscalationError(f"tool name {tool!r} must be a letter then letters, digits "
                                  "or '_' (64 at most)", code="E603")
        record = self.store.get(job_id)
        if record is None:
            raise EscalationError(f"no job {job_id!r}", code="E603")
        receipt = self.store.latest(job_id)
        if receipt is None or not receipt.succeeded:
            raise EscalationError(f"job {job_id} did not succeed; only a job that worked can be "
                                  "promoted", code="E603")
        job = record.job
        draft = Draft(draft_id=uuid.uuid4().hex, tool=tool, version=None, status="draft",
                      source_job_id=job_id, tenant=job.tenant, code=job.source,
                      code_sha256=job.code_sha256,
                      runtime=job.runtime.model_copy(update={
                          "environment_digest": receipt.environment_digest}),
                      environment_digest=receipt.environment_digest,
                      arguments={k: json_type(v) for k, v in sorted(job.inputs.items())},
                      effect=effect, scopes=tuple(sorted(set(scopes))), created_by=by,
                      approved_by=None, created_at=_now())
        self.store.execute(insert(tables.lane_drafts).values(self._row(draft)))
        return draft

    def _row(self, d: Draft) -> dict[str, Any]:
        return {"draft_id": d.draft_id, "tool": d.tool, "version": d.version,
                "status": d.status, "source_job_id": d.source_job_id, "tenant": d.tenant,
                "code": d.code, "code_sha256": d.code_sha256,
                "runtime_json": d.runtime.model_dump_json(),
                "environment_digest": d.environment_digest,
                "arguments_json": json.dumps(d.arguments, sort_keys=True), "effect": d.effect,
                "scopes_json": json.dumps(list(d.scopes)), "created_by": d.created_by,
                "approved_by": d.approved_by, "created_at": d.created_at}

    def _draft(self, m: RowMapping) -> Draft:
        return Draft(draft_id=m["draft_id"], tool=m["tool"], version=m["version"],
                     status=m["status"], source_job_id=m["source_job_id"], tenant=m["tenant"],
                     code=m["code"], code_sha256=m["code_sha256"],
                     runtime=RuntimeSpec.model_validate_json(m["runtime_json"]),
                     environment_digest=m["environment_digest"],
                     arguments=json.loads(m["arguments_json"]), effect=m["effect"],
                     scopes=tuple(json.loads(m["scopes_json"])), created_by=m["created_by"],
                     approved_by=m["approved_by"], created_at=m["created_at"])

    def draft(self, draft_id: str) -> Draft:
        rows = self.store.fetch(_DRAFT.where(_D.draft_id == draft_id))
        if not rows:
            raise EscalationError(f"no draft {draft_id!r}", code="E603")
        return self._draft(rows[0])

    def new_draft(self, tool: str, code: str, *, by: str) -> Draft:
        """A new draft of a pinned tool with different code (same arguments and runtime)."""
        pinned = self.pinned(tool)
        if pinned is None:
            raise EscalationError(f"no pinned tool {tool!r} to redraft", code="E603")
        draft = pinned.model_copy(update={
            "draft_id": uuid.uuid4().hex, "version": None, "status": "draft",
            "source_job_id": None, "code": code,
            "code_sha256": hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest(),
            "created_by": by, "approved_by": None, "created_at": _now()})
        self.store.execute(insert(tables.lane_drafts).values(self._row(draft)))
        return draft

    def pinned(self, tool: str) -> Draft | None:
        rows = self.store.fetch(_DRAFT.where(_D.tool == tool, _D.status == "pinned").limit(1))
        return self._draft(rows[0]) if rows else None

    def pinned_tools(self) -> list[Draft]:
        rows = self.store.fetch(_DRAFT.where(_D.status == "pinned").order_by(_D.tool))
        return [self._draft(r) for r in rows]

    def history(self, tool: str) -> list[Draft]:
        rows = self.store.fetch(_DRAFT.where(_D.tool == tool).order_by(_D.created_at))
        return [self._draft(r) for r in rows]

    # -- known-answer cases ------------------------------------------------------------------

    def add_case(self, tool: str, inputs: Mapping[str, Any], expected: Any, *, by: str,
                 note: str = "") -> Case:
        if len(self.cases(tool)) >= MAX_CASES:
            raise EscalationError(f"{tool} already has {MAX_CASES} known-answer cases",
                                  code="E603", hint="a few cases a person computed are enough")
        size = len(json.dumps([json_value(dict(inputs)), json_value(expected)]))
        if size > MAX_CASE_JSON_BYTES:
            raise EscalationError(f"known-answer case is {size} bytes of JSON; the limit is "
                                  f"{MAX_CASE_JSON_BYTES}", code="E603")
        if not by.strip():
            raise EscalationError("a known-answer case names who computed it", code="E603")
        case = Case(case_id=uuid.uuid4().hex, tool=tool, inputs=dict(inputs),
                    expected=json_value(expected), added_by=by, note=note[:2000])
        self.store.execute(insert(tables.lane_draft_cases).values(
            case_id=case.case_id, tool=tool, inputs_json=json.dumps(case.inputs, sort_keys=True),
            expected_json=json.dumps(case.expected), added_by=by, note=note, created_at=_now()))
        return case

    def cases(self, tool: str) -> list[Case]:
        rows = self.store.fetch(select(_C.case_id, _C.tool, _C.inputs_json, _C.expected_json,
                                       _C.added_by, _C.note)
                                .where(_C.tool == tool).order_by(_C.seq))
        return [Case(case_id=r["case_id"], tool=r["tool"], inputs=json.loads(r["inputs_json"]),
                     expected=json.loads(r["expected_json"]), added_by=r["added_by"],
                     note=r["note"]) for r in rows]

    def check(self, draft_id: str) -> list[CaseVerdict]:
        """Run every known-answer case of the draft's tool on the draft's code."""
        draft = self.draft(draft_id)
        verdicts: list[CaseVerdict] = []
        for case in self.cases(draft.tool):
            problem = self._argument_problem(draft, case.inputs)
            if problem:
                verdicts.append(CaseVerdict(case, False, None, "refused", problem))
                continue
            receipt = self._run(draft, case.inputs, purpose=f"known-answer case "
                                f"{case.case_id} of {draft.tool} (draft {draft_id})",
                                principal="drafting-room")
            declared, got = sandbox_value(receipt)
            passed = (receipt.succeeded and declared and same_answer(got, case.expected)
                      and self._env_ok(draft, receipt))
            detail = "" if passed else (
                f"expected {case.expected!r}, got {got!r}" if receipt.succeeded and declared
                else receipt.outcome_detail or f"no declared result ({receipt.outcome.value})")
            if receipt.succeeded and not self._env_ok(draft, receipt):
                detail = (f"ran in environment {receipt.environment_digest}, not the pinned "
                          f"{draft.environment_digest}")
            verdicts.append(CaseVerdict(case, passed, got, receipt.outcome.value, detail))
        return verdicts

    def approve(self, draft_id: str, *, by: str) -> Draft:
        """Pin the draft if it passes every known-answer case of its tool (else E605)."""
        draft = self.draft(draft_id)
        if draft.status != "draft":
            raise EscalationError(f"draft {draft_id} is {draft.status}, not a draft",
                                  code="E603")
        if by == draft.created_by:
            raise EscalationError("the reviewer who approves must not be the one who promoted",
                                  code="E605", hint="ask another person to review")
        cases = self.cases(draft.tool)
        if len(cases) < MIN_CASES:
            raise EscalationError(f"{draft.tool} has {len(cases)} known-answer case(s); "
                                  f"approval needs {MIN_CASES}", code="E605",
                                  hint="add cases whose answers a person computed")
        verdicts = self.check(draft_id)
        failed = [v for v in verdicts if not v.passed]
        if failed:
            raise EscalationError(
                f"draft {draft_id} of {draft.tool} fails {len(failed)} of {len(verdicts)} "
                "known-answer case(s): " + "; ".join(
                    f"{v.case.case_id[:8]}: {v.detail}" for v in failed)[:2000],
                code="E605", hint="the pinned version stays in service")
        previous = self.pinned(draft.tool)
        version = 1 + max((d.version or 0) for d in self.history(draft.tool))
        pin = update(tables.lane_drafts).where(_D.draft_id == draft_id).values(
            status="pinned", version=version, approved_by=by)
        # the old version stands down and the new one is pinned in one transaction
        self.store.execute(*([] if previous is None else [
            update(tables.lane_drafts).where(_D.draft_id == previous.draft_id)
            .values(status="superseded")]), pin)
        return self.draft(draft_id)

    def reject(self, draft_id: str, *, by: str) -> Draft:
        self.store.execute(update(tables.lane_drafts)
                           .where(_D.draft_id == draft_id, _D.status == "draft")
                           .values(status="rejected", approved_by=by))
        return self.draft(draft_id)

    # -- running -----------------------------------------------------------------------------

    def _argument_problem(self, draft: Draft, args: Mapping[str, Any]) -> str:
        missing = sorted(set(draft.arguments) - set(args))
        extra = sorted(set(args) - set(draft.arguments))
        if missing or extra:
            return (f"{draft.tool} takes {', '.join(draft.arguments) or 'no arguments'}"
                    + (f"; missing {', '.join(missing)}" if missing else "")
                    + (f"; unknown {', '.join(extra)}" if extra else ""))
        wrong = [f"{k} must be a {t}, not a {json_type(args[k])}"
                 for k, t in draft.arguments.items() if json_type(args[k]) != t]
        return "; ".join(wrong)

    def _env_ok(self, draft: Draft, receipt: Receipt) -> bool:
        return draft.environment_digest is None or \
            receipt.environment_digest == draft.environment_digest

    def _run(self, draft: Draft, args: Mapping[str, Any], *, purpose: str, principal: str,
             tenant: str | None = None, timeout: float | None = None) -> Receipt:
        job = SandboxJob(idempotency_key=f"tool:{draft.tool}:{draft.draft_id}:{uuid.uuid4().hex}",
                         tenant=tenant or draft.tenant, principal=principal, purpose=purpose,
                         side_effect_class=_EFFECT_SIDE[draft.effect],  # type: ignore[arg-type]
                         runtime=draft.runtime, code=draft.code, inputs=dict(args))
        receipt: Receipt = self.jobs.run(job, timeout=timeout).receipt
        return receipt

    def call(self, tool: str, args: Mapping[str, Any], *, principal: Principal,
             timeout: float | None = None) -> ToolRun:
        draft = self.pinned(tool)
        if draft is None:
            raise EscalationError(f"no pinned tool {tool!r}", code="E603")
        missing_scopes = sorted(set(draft.scopes) - set(principal.scopes))
        if missing_scopes:
            return ToolRun(draft.pinned_name, None, "refused",
                           f"{principal.subject} lacks scopes {', '.join(missing_scopes)}")
        if principal.tenant != draft.tenant:
            return ToolRun(draft.pinned_name, None, "refused",
                           f"{tool} belongs to tenant {draft.tenant}")
        problem = self._argument_problem(draft, args)
        if problem:
            return ToolRun(draft.pinned_name, None, "user_error", problem)
        receipt = self._run(draft, args, purpose=f"pinned tool {draft.pinned_name}",
                            principal=principal.subject, tenant=principal.tenant,
                            timeout=timeout)
        if receipt.code_sha256 != draft.code_sha256:  # the contract of a pinned tool
            raise EscalationError(f"{tool}: ran code {receipt.code_sha256}, not the pinned "
                                  f"{draft.code_sha256}", code="E901")
        return ToolRun(draft.pinned_name, receipt)


_PY_TYPES: dict[str, Any] = {"number": int | float, "string": str, "boolean": bool,
                              "array": list, "object": dict, "null": type(None)}


def typed_tool(room: DraftRoom, name: str) -> Any:
    """The pinned tool ``name`` as a `typed_tools.Tool` (input model from its arguments, its
    effect and scopes, ``version`` naming the pinned version), for a `ToolRegistry` (MCP, the
    API, provider exports). Each call runs the tool's *current* pinned code in the sandbox;
    re-register after an approval to advertise the new version."""
    from pydantic import create_model

    from ..typed_tools.principal import Principal as ToolPrincipal
    from ..typed_tools.tool import Tool

    draft = room.pinned(name)
    if draft is None:
        raise EscalationError(f"no pinned tool {name!r}", code="E603")
    fields: dict[str, Any] = {arg: (_PY_TYPES[kind], ...) for arg, kind in draft.arguments.items()}
    model = create_model(  # field names come from a dict
        f"{name}_arguments", __config__=ConfigDict(extra="forbid", strict=True), **fields)

    def run(arguments: Any, principal: Any) -> Any:
        who = Principal(subject=principal.subject, tenant=principal.tenant,
                        scopes=frozenset(principal.scopes), kind=principal.kind)
        done = room.call(name, arguments.model_dump(), principal=who)
        if done.receipt is None or not done.receipt.succeeded:
            detail = done.detail or (done.receipt.outcome_detail if done.receipt else "")
            raise EscalationError(f"{name}: {detail or 'failed'}", code="E601")
        declared, value = sandbox_value(done.receipt)
        if not declared:
            raise EscalationError(f"{name}: the pinned code declared no result", code="E601")
        return value

    # Real objects, not strings: the registry resolves these hints to inject the principal.
    run.__annotations__ = {"arguments": model, "principal": ToolPrincipal, "return": Any}
    return Tool(name=name, fn=run, input_model=model, output_model=Any,
                description=f"Pinned drafting-room tool {draft.pinned_name}: reviewed code run "
                            "in the sandbox, no model in the loop.",
                version=draft.pinned_name, effect="read" if draft.effect == "read" else "write",
                scopes=frozenset(draft.scopes))


class PinnedTools:
    """The drafting room's pinned tools as a `ToolCatalog` (read-only ones only for brokers)."""

    def __init__(self, room: DraftRoom) -> None:
        self.room = room

    def names(self) -> list[str]:
        return [d.tool for d in self.room.pinned_tools()]

    def is_read_only(self, name: str) -> bool:
        draft = self.room.pinned(name)
        return draft is not None and draft.effect == "read"

    def call(self, name: str, args: Mapping[str, Any], *, principal: Principal) -> Any:
        run = self.room.call(name, args, principal=principal)
        if run.receipt is None or not run.receipt.succeeded:
            raise EscalationError(f"{name}: {run.detail or 'failed'}", code="E601")
        return sandbox_value(run.receipt)[1]

    def run_tool(self, name: str, args: Mapping[str, Any], *, principal: Principal,
                 jobs: Any = None, timeout: float | None = None) -> ToolRun | None:
        if self.room.pinned(name) is None:
            return None
        return self.room.call(name, args, principal=principal, timeout=timeout)


class ToolCatalogs:
    """Several catalogs as one (first one naming a tool wins): pinned tools, then the app's."""

    def __init__(self, *catalogs: Any) -> None:
        self.catalogs = [c for c in catalogs if c is not None]

    def _owner(self, name: str) -> Any:
        for catalog in self.catalogs:
            if name in set(catalog.names()):
                return catalog
        return None

    def names(self) -> list[str]:
        out: list[str] = []
        for catalog in self.catalogs:
            out += [n for n in catalog.names() if n not in out]
        return out

    def is_read_only(self, name: str) -> bool:
        owner = self._owner(name)
        return owner is not None and owner.is_read_only(name)

    def call(self, name: str, args: Mapping[str, Any], *, principal: Principal) -> Any:
        owner = self._owner(name)
        if owner is None:
            raise EscalationError(f"unknown tool {name!r}", code="E601")
        return owner.call(name, args, principal=principal)

    def run_tool(self, name: str, args: Mapping[str, Any], *, principal: Principal,
                 jobs: Any = None, timeout: float | None = None) -> ToolRun | None:
        owner = self._owner(name)
        runner = getattr(owner, "run_tool", None)
        return runner(name, args, principal=principal, jobs=jobs, timeout=timeout) \
            if runner is not None else None

    def version_of(self, name: str) -> str | None:
        owner = self._owner(name)
        version = getattr(owner, "version_of", None)
        return version(name) if version is not None else None
