"""The escalation lane: route each job to the smallest lane, and run what must run in a sandbox.

Contract: `formulane.run(code=..., inputs=...)` (or `default()` as a context manager, then
``.run``) routes one request to the smallest lane, runs it and returns a `LaneResult` (value,
outcome, lane, decision with reasons, a `LaneReceipt` stored with every lane's history).
`Router.route` decides (typed-tool lane, formula lane, including certified demotion of
one-expression Python, sandbox, refuse, or postpone when the `JobSpec` is too unclear) and says
why; `DraftRoom` turns recurring sandbox code into pinned, reviewed typed tools; `pilot` reads
the receipts back into the 30-day report; `SandboxJob` and `Receipt` are the
runtime contract; `BubblewrapBackend` (default) and `ProcessBackend` (fallback, marked
``isolation=process``) run jobs locally with every containment measure the machine offers,
probed in `capabilities.probe`; `JobManager` makes jobs durable (SQLite or PostgreSQL store),
idempotent and reconcilable after a restart; `Broker` lets sandboxed code call read-only
typed tools without credentials. Managed adapters live in `escalation.backends.e2b`,
`.modal` and `.daytona` (optional extras).
"""

from __future__ import annotations

from .artifacts import ArtifactStore
from .backends import BubblewrapBackend, ProcessBackend, SandboxBackend, local_backend
from .broker import Broker, StaticCatalog, ToolCatalog, TypedToolCatalog
from .capabilities import Capabilities, probe
from .contract import (
    CancelToken, FileSpec, Isolation, Limits, NetworkPolicy, Outcome, PinnedRequirement,
    Principal, Receipt, RuntimeSpec, SandboxJob,
)
from .demotion import Demotion, demote
from .environments import Environment, EnvironmentSpec, EnvironmentStore
from .jobs import JobManager, JobResult, ResultTimeout
from .policy import Policy, PolicyBook, PolicyRule, Reason, ReasonCode
from .router import Decision, EscalationRequest, Resolution, Router, ToolCallProposal
from .store import JobStore, PostgresJobStore, SQLiteJobStore, open_store
from .jobspec import FailureStory, JobSpec
from .lanes import LaneReceipt, LaneResult, Proposer, ReviewState
from .drafts import Draft, DraftRoom, PinnedTools
from .facade import Escalation, EscalationSettings, default, run

__all__ = [
    "ArtifactStore", "Broker", "Draft", "DraftRoom", "Escalation", "EscalationSettings",
    "FailureStory", "JobSpec", "LaneReceipt", "LaneResult", "PinnedTools", "Proposer",
    "ReviewState", "default", "run", "BubblewrapBackend", "CancelToken", "Capabilities", "Decision",
    "Demotion", "Environment", "EnvironmentSpec", "EnvironmentStore", "EscalationRequest",
    "FileSpec", "Isolation", "JobManager", "JobResult", "JobStore", "Limits", "NetworkPolicy",
    "Outcome", "PinnedRequirement", "Policy", "PolicyBook", "PolicyRule", "PostgresJobStore",
    "Principal", "ProcessBackend", "Reason", "ReasonCode", "Receipt", "Resolution",
    "ResultTimeout", "Router", "RuntimeSpec", "SQLiteJobStore", "SandboxBackend", "SandboxJob",
    "StaticCatalog", "ToolCallProposal", "ToolCatalog", "TypedToolCatalog", "demote",
    "local_backend", "open_store", "probe",
]
