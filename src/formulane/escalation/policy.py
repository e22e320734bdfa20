"""Escalation policy per tenant and principal, and the typed reasons every decision carries.

Contract: a `PolicyRule` sets any subset of the knobs; `PolicyBook.resolve(principal)` layers
the default rule, the tenant's rule and the principal's rule (later layers win, knob by knob)
into a complete `Policy` whose defaults are the safe ones: no escalation at all, only the
``default`` environment, no network, only ``public`` and ``internal`` inputs may cross, the
contract's default limits as ceilings, namespace isolation at least, read-only side effects,
no package installation, no brokered tools, known operations not in a sandbox. `Policy.review(job, classes)` returns one `Reason`
per thing the job asks that the policy does not allow (an empty list means allowed); it never
raises: a refusal is an answer.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field

from .contract import (
    Isolation, Limits, NetworkMode, Principal, SandboxJob, SideEffectClass,
)


class ReasonCode(str, Enum):
    TOOL_COVERS = "tool_covers"
    TOOL_UNKNOWN = "tool_unknown"
    FORMULA_PROPOSED = "formula_proposed"
    FORMULA_INVALID = "formula_invalid"
    DEMOTED = "demoted"
    NOT_DEMOTABLE = "not_demotable"
    FORMULA_ENGINE_MISSING = "formula_engine_missing"
    SYNTAX_ERROR = "syntax_error"
    NOTHING_PROPOSED = "nothing_proposed"
    NEEDS_SANDBOX = "needs_sandbox"
    ESCALATION_NOT_ALLOWED = "escalation_not_allowed"
    RUNTIME_NOT_ALLOWED = "runtime_not_allowed"
    PACKAGES_NOT_ALLOWED = "packages_not_allowed"
    NETWORK_NOT_ALLOWED = "network_not_allowed"
    INPUT_MAY_NOT_CROSS = "input_may_not_cross"
    LIMITS_EXCEED_POLICY = "limits_exceed_policy"
    SIDE_EFFECT_NOT_ALLOWED = "side_effect_not_allowed"
    BROKER_TOOL_NOT_ALLOWED = "broker_tool_not_allowed"
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"
    # The job contract (`jobspec`): postpone when it is too unclear, refuse what it rules out.
    SPEC_UNCLEAR = "spec_unclear"
    SPEC_INCOMPLETE = "spec_incomplete"
    KNOWN_OPERATION = "known_operation"
    CALCULATION_ONLY = "calculation_only"
    BUSINESS_STATE = "business_state"
    WRITE_NEEDS_TOOL = "write_needs_tool"
    WORKSPACE_NEEDS_SESSION = "workspace_needs_session"


class Reason(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    code: ReasonCode
    message: str
    detail: dict[str, Any] = Field(default_factory=dict[str, Any])


class PolicyRule(BaseModel):
    """A partial policy: ``None`` means "inherit from the layer below"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    may_escalate: bool | None = None
    environments: tuple[str, ...] | None = None
    max_network: NetworkMode | None = None
    input_classes: tuple[str, ...] | None = None
    max_limits: Limits | None = None
    min_isolation: Isolation | None = None
    allow_package_install: bool | None = None
    side_effects: tuple[SideEffectClass, ...] | None = None
    broker_tools: tuple[str, ...] | None = None
    known_operations_in_sandbox: bool | None = None


class Policy(BaseModel):
    """A complete, resolved policy (the safe defaults are the field defaults)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    may_escalate: bool = False
    environments: tuple[str, ...] = ("default",)
    max_network: NetworkMode = "none"
    input_classes: tuple[str, ...] = ("public", "internal")
    max_limits: Limits = Limits()
    min_isolation: Isolation = Isolation.NAMESPACE
    allow_package_install: bool = False
    side_effects: tuple[SideEffectClass, ...] = ("read_only",)
    broker_tools: tuple[str, ...] = ()
    #: A job whose contract says "known operation" may still run in a sandbox (default: no,
    #: it is postponed until a typed tool or formula covers it).
    known_operations_in_sandbox: bool = False

    def review(self, job: SandboxJob, classes: Mapping[str, str]) -> list[Reason]:
        """Everything ``job`` asks that this policy does not allow (empty: allowed).

        ``classes`` maps each input value name and file path to its data class; anything not
        listed is ``internal``.
        """
        out: list[Reason] = []
        if not self.may_escalate:
            out.append(Reason(code=ReasonCode.ESCALATION_NOT_ALLOWED,
                              message=f"{job.principal} in {job.tenant} may not run code in a "
                                      "sandbox"))
            return out
        if job.runtime.environment not in self.environments:
            out.append(Reason(code=ReasonCode.RUNTIME_NOT_ALLOWED,
                              message=f"environment {job.runtime.environment!r} is not allowed",
                              detail={"allowed": list(self.environments)}))
        if job.runtime.package_policy == "install_from_mirror" and not self.allow_package_install:
            out.append(Reason(code=ReasonCode.PACKAGES_NOT_ALLOWED,
                              message="installing packages inside a job is not allowed; use a "
                                      "declared environment"))
        ranks = ("none", "allowlist", "open")
        if ranks.index(job.network.mode) > ranks.index(self.max_network):
            out.append(Reason(code=ReasonCode.NETWORK_NOT_ALLOWED,
                              message=f"network {job.network.mode!r} is above the allowed "
                                      f"{self.max_network!r}"))
        crossing = list(job.inputs) + [f.path for f in job.files]
        for name in crossing:
            cls = classes.get(name, "internal")
            if cls not in self.input_classes:
                out.append(Reason(code=ReasonCode.INPUT_MAY_NOT_CROSS,
                                  message=f"input {name!r} is {cls!r} data, which may not leave "
                                          "the process",
                                  detail={"input": name, "class": cls,
                                          "allowed": list(self.input_classes)}))
        over = job.limits.within(self.max_limits)
        if over:
            out.append(Reason(code=ReasonCode.LIMITS_EXCEED_POLICY,
                              message=f"limits above policy: {', '.join(over)}",
                              detail={k: getattr(job.limits, k) for k in over}))
        if job.side_effect_class not in self.side_effects:
            out.append(Reason(code=ReasonCode.SIDE_EFFECT_NOT_ALLOWED,
                              message=f"side-effect class {job.side_effect_class!r} is not "
                                      "allowed in a sandbox; writes go through approved tools"))
        extra = sorted(set(job.broker_tools) - set(self.broker_tools))
        if extra:
            out.append(Reason(code=ReasonCode.BROKER_TOOL_NOT_ALLOWED,
                              message=f"brokered tools not allowed: {', '.join(extra)}"))
        return out


class PolicyBook:
    """Rules for everyone, per tenant, and per (tenant, subject)."""

    def __init__(self, default: PolicyRule | None = None, *,
                 tenants: Mapping[str, PolicyRule] | None = None,
                 principals: Mapping[tuple[str, str], PolicyRule] | None = None) -> None:
        self.default = default or PolicyRule()
        self.tenants = dict(tenants or {})
        self.principals = dict(principals or {})

    def resolve(self, principal: Principal) -> Policy:
        merged: dict[str, Any] = {}
        for rule in (self.default, self.tenants.get(principal.tenant),
                     self.principals.get((principal.tenant, principal.subject))):
            if rule is None:
                continue
            for key, value in rule.model_dump(exclude_none=True).items():
                merged[key] = getattr(rule, key) if key == "max_limits" else value
        return Policy(**merged)
