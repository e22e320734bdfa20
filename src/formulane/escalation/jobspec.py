"""The job contract: a typed `JobSpec` answering the seed's six questions, and what it implies.

Contract: `JobSpec` carries the answers (every one may be ``unclear``, the honest default):
1. ``operation``: a ``known`` operation or an ``open_ended`` one;
2. ``data_classes``: the classes of data that cross the boundary (``public``, ``internal``,
   ``tenant``, ``pii``, ``secret``...);
3. ``needs``: a ``calculation`` or a ``runtime``;
4. ``state_owner``: who owns the state: ``conversation``, ``job``, ``workspace`` or
   ``business``;
5. ``may_change``: ``read_only_scratch``, ``constrained_reads``, ``proposed_change`` or
   ``approved_write``;
6. ``failure_story``: what happens when it fails halfway (may it be retried, who settles an
   ``unknown``, who owns the failure).
`review_spec` reads a spec against the tenant's `Policy` for a job that would go to the
sandbox and returns a `SpecVerdict`: reasons to *postpone* (the contract is too unclear to
decide: an ``unclear`` answer, no failure story, an input class the spec does not list, a known
operation or a bare calculation that no tool or formula covers yet), reasons to *refuse* (the
contract itself rules the sandbox out: business state, an approved write, a class the policy
keeps in-house), and the side-effect class and state the job gets. Tool and formula lanes do
not need a complete spec: a known operation that a tool or formula covers is the good case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field

from .contract import JobState, SideEffectClass
from .policy import Policy, Reason, ReasonCode

Operation = Literal["known", "open_ended", "unclear"]
Needs = Literal["calculation", "runtime", "unclear"]
StateOwner = Literal["conversation", "job", "workspace", "business", "unclear"]
MayChange = Literal["read_only_scratch", "constrained_reads", "proposed_change",
                    "approved_write", "unclear"]

_SIDE_EFFECT: dict[str, SideEffectClass] = {
    "read_only_scratch": "read_only", "constrained_reads": "read_only",
    "proposed_change": "proposes_change", "approved_write": "write_requires_approval"}


class FailureStory(BaseModel):
    """Question 6: what a failure halfway through means for this job."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    retry: Literal["safe", "never"] = "never"
    on_unknown: Literal["person", "reconciliation"] = "person"
    owner: str = Field(min_length=1, max_length=200)
    note: str = Field(default="", max_length=2000)


class JobSpec(BaseModel):
    """The six answers, plus the job kind the pilot report groups by."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = Field(default="unspecified", pattern=r"^[A-Za-z0-9_.:-]{1,100}$")
    operation: Operation = "unclear"
    data_classes: tuple[str, ...] = ()
    needs: Needs = "unclear"
    state_owner: StateOwner = "unclear"
    may_change: MayChange = "unclear"
    failure_story: FailureStory | None = None

    @property
    def side_effect_class(self) -> SideEffectClass | None:
        return _SIDE_EFFECT.get(self.may_change)


@dataclass(frozen=True)
class SpecVerdict:
    postpone: list[Reason] = field(default_factory=list[Reason])
    refuse: list[Reason] = field(default_factory=list[Reason])
    side_effect_class: SideEffectClass | None = None
    state: JobState | None = None


def _r(code: ReasonCode, message: str, **detail: object) -> Reason:
    return Reason(code=code, message=message, detail=dict(detail))


def review_spec(spec: JobSpec, policy: Policy, *, input_classes: Mapping[str, str],
                crossing: list[str], session_id: str | None) -> SpecVerdict:
    """What the contract says about running this job in a sandbox (see the module doc)."""
    postpone: list[Reason] = []
    refuse: list[Reason] = []
    for question, answer in (("operation", spec.operation), ("needs", spec.needs),
                             ("state_owner", spec.state_owner), ("may_change", spec.may_change)):
        if answer == "unclear":
            postpone.append(_r(ReasonCode.SPEC_UNCLEAR,
                               f"the job contract leaves {question!r} unclear; decide it before "
                               "running code", question=question))
    if spec.failure_story is None:
        postpone.append(_r(ReasonCode.SPEC_UNCLEAR, "the job contract has no failure story "
                           "(who owns a failure, may it be retried)", question="failure_story"))
    declared = set(spec.data_classes)
    used = {input_classes.get(name, "internal") for name in crossing}
    undeclared = sorted(used - declared)
    if undeclared:
        postpone.append(_r(ReasonCode.SPEC_INCOMPLETE,
                           f"inputs of class {', '.join(undeclared)} cross the boundary but the "
                           "job contract does not list them", classes=undeclared))
    if spec.operation == "known" and not policy.known_operations_in_sandbox:
        postpone.append(_r(ReasonCode.KNOWN_OPERATION,
                           "a known operation that no typed tool or formula covers yet: build "
                           "the deterministic function (or promote a reviewed draft) first"))
    if spec.needs == "calculation":
        postpone.append(_r(ReasonCode.CALCULATION_ONLY,
                           "the job needs a calculation, not a runtime, and the formula lane "
                           "cannot express it: build the calculation"))
    if spec.state_owner == "business":
        refuse.append(_r(ReasonCode.BUSINESS_STATE,
                         "business state belongs to the application; a sandbox may not own it"))
    if spec.may_change == "approved_write":
        refuse.append(_r(ReasonCode.WRITE_NEEDS_TOOL,
                         "an approved write happens in a typed application operation after "
                         "identity, policy and approval checks, never in sandbox code"))
    kept = sorted(declared - set(policy.input_classes))
    if kept:
        refuse.append(_r(ReasonCode.INPUT_MAY_NOT_CROSS,
                         f"the contract sends {', '.join(kept)} data, which this tenant's policy "
                         "keeps in-house", classes=kept, allowed=list(policy.input_classes)))
    state: JobState | None = None
    if spec.state_owner in ("conversation", "job"):
        state = "ephemeral"
    elif spec.state_owner == "workspace":
        if session_id is None:
            refuse.append(_r(ReasonCode.WORKSPACE_NEEDS_SESSION,
                             "workspace-owned state needs a session: give a session_id"))
        else:
            state = "session"
    return SpecVerdict(postpone=postpone, refuse=refuse,
                       side_effect_class=spec.side_effect_class, state=state)
