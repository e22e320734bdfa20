"""The escalation lane: route each job to the smallest lane, and run what must run in a sandbox.

Contract: `Router.route` decides (typed-tool lane, formula lane, including certified demotion
of one-expression Python, sandbox, or refuse) and says why; `SandboxJob` and `Receipt` are the
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

__all__ = [
    "ArtifactStore", "Broker", "BubblewrapBackend", "CancelToken", "Capabilities", "Decision",
    "Demotion", "Environment", "EnvironmentSpec", "EnvironmentStore", "EscalationRequest",
    "FileSpec", "Isolation", "JobManager", "JobResult", "JobStore", "Limits", "NetworkPolicy",
    "Outcome", "PinnedRequirement", "Policy", "PolicyBook", "PolicyRule", "PostgresJobStore",
    "Principal", "ProcessBackend", "Reason", "ReasonCode", "Receipt", "Resolution",
    "ResultTimeout", "Router", "RuntimeSpec", "SQLiteJobStore", "SandboxBackend", "SandboxJob",
    "StaticCatalog", "ToolCallProposal", "ToolCatalog", "TypedToolCatalog", "demote",
    "local_backend", "open_store", "probe",
]
