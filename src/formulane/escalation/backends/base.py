"""The one interface every sandbox backend implements, and the refusal rules they share.

Contract: a backend declares `capabilities()` (isolation level and mechanism, network modes,
states, which knob it enforces and how, its wall-time ceiling). `refusals(job)` lists, in
words, everything the job asks for that this backend cannot give; `check` turns a non-empty
list into `EscalationError` E601. A job is never run weaker than it asked in silence. `run`
returns a `Receipt` for every job it accepted, whatever happened; `reconcile` is asked about a
job whose control channel dropped and returns a terminal receipt only when it can confirm one.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ...errors import EscalationError
from ..contract import (
    BackendInfo, CancelToken, EnforcedBy, InputDigest, Isolation, JobState, NetworkMode,
    Outcome, Receipt, ResultValue, SandboxJob, StreamRecord, canonical_json,
)

#: Default bound of a job's declared result, as JSON bytes (`LocalRunner(result_max_bytes=)`).
RESULT_MAX_BYTES = 1024 * 1024


class BackendCapabilities(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    available: bool
    unavailable_reason: str = ""
    isolation: Isolation
    mechanism: str
    network_modes: tuple[NetworkMode, ...] = ("none",)
    states: tuple[JobState, ...] = ("ephemeral",)
    enforces: dict[str, EnforcedBy] = Field(default_factory=dict[str, EnforcedBy])
    max_wall_s: float = 24 * 3600
    package_install: bool = False
    kills_whole_sandbox: bool = True
    cold_start: str = ""


class SandboxBackend(ABC):
    name: ClassVar[str] = "abstract"

    @abstractmethod
    def capabilities(self) -> BackendCapabilities: ...

    @abstractmethod
    def run(self, job: SandboxJob, *, cancel: CancelToken | None = None,
            attempt: int = 1) -> Receipt: ...

    def refusals(self, job: SandboxJob) -> list[str]:
        caps = self.capabilities()
        reasons: list[str] = []
        if not caps.available:
            reasons.append(f"backend {caps.name} is unavailable here: {caps.unavailable_reason}")
            return reasons
        if not caps.isolation.covers(job.min_isolation):
            reasons.append(f"the job needs {job.min_isolation.value} isolation; {caps.name} on "
                           f"this machine gives {caps.isolation.value} ({caps.mechanism})")
        if job.network.mode not in caps.network_modes:
            reasons.append(f"network mode {job.network.mode!r} cannot be enforced by "
                           f"{caps.name} (it enforces {', '.join(caps.network_modes)})")
        if job.state not in caps.states:
            reasons.append(f"state {job.state!r} is not supported by {caps.name}")
        if job.limits.wall_timeout_s > caps.max_wall_s:
            reasons.append(f"wall timeout {job.limits.wall_timeout_s} s exceeds the "
                           f"{caps.name} ceiling of {caps.max_wall_s} s")
        if job.runtime.package_policy == "install_from_mirror" and not caps.package_install:
            reasons.append(f"{caps.name} never installs packages inside a job; declare an "
                           "environment with the packages instead")
        return reasons

    def check(self, job: SandboxJob) -> None:
        reasons = self.refusals(job)
        if reasons:
            raise EscalationError("sandbox job refused: " + "; ".join(reasons), code="E601",
                                  hint="lower the job's requirements or pick another backend")

    def reconcile(self, job: SandboxJob, attempt: int,
                  provider_ids: dict[str, str]) -> Receipt | None:
        """Confirm the final state of a job whose control channel dropped, if possible."""
        return None

    def close(self) -> None:
        """Release pools, threads and leftovers. Idempotent."""


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def input_digests(job: SandboxJob) -> tuple[InputDigest, ...]:
    out = [InputDigest(name=f.path, sha256=f.digest, kind="file") for f in job.files]
    for name, value in sorted(job.inputs.items()):
        out.append(InputDigest(name=name, sha256=hashlib.sha256(canonical_json(value)).hexdigest(),
                               kind="value"))
    if job.stdin is not None:
        out.append(InputDigest(name="stdin", sha256=hashlib.sha256(job.stdin).hexdigest(),
                               kind="stdin"))
    return tuple(out)


def syntax_problem(source: str, version: str | None = None) -> str | None:
    """Parse on the host, never compile or run: a message with line and column, or None."""
    feature: tuple[int, int] | None = None
    if version:
        major, minor = (int(x) for x in version.split(".")[:2])
        if (major, minor) <= sys.version_info[:2]:
            feature = (major, minor)
    try:
        # Parsing only: model-written code never becomes a code object on the host (it is
        # compiled and run inside the sandbox). Errors found after parsing ('return' outside
        # a function...) come back from the sandbox as its own syntax error.
        ast.parse(source, "main.py", feature_version=feature)
    except SyntaxError as exc:
        where = f"line {exc.lineno}, column {exc.offset}" if exc.lineno else "unknown position"
        text = (exc.text or "").rstrip("\n")
        caret = f"\n    {text}\n    {' ' * max(0, (exc.offset or 1) - 1)}^" if text else ""
        return f"{type(exc).__name__}: {exc.msg} ({where}){caret}"
    except (ValueError, MemoryError, RecursionError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def last_expression(source: str) -> tuple[int, int] | None:
    """(byte offset, line) of the code's final statement when it is an expression statement
    starting a line, so the bootstrap can evaluate it and keep its value; else None. Parsed
    on the host, never compiled here."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not tree.body or not isinstance(tree.body[-1], ast.Expr) or tree.body[-1].col_offset:
        return None
    if "\r" in source.replace("\r\n", "\n"):
        return None  # bare CR line ends: the line count below would not match the parser's
    line = tree.body[-1].lineno
    data = source.encode("utf-8", "surrogatepass")
    offset = 0
    for _ in range(line - 1):
        offset = data.index(b"\n", offset) + 1
    try:
        # The bootstrap compiles the rest in "eval" mode: it must parse as one expression
        # (a trailing ';' or a second statement on the line would not).
        ast.parse("\n" * (line - 1) + data[offset:].decode("utf-8", "surrogatepass"),
                  mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return offset, line


def result_value(record: bytes | None, max_bytes: int = RESULT_MAX_BYTES) -> ResultValue:
    """The receipt's `ResultValue` from the bootstrap's result record (None: nothing was
    declared). The record came from inside the sandbox, so it is checked as untrusted."""
    if not record:
        return ResultValue(declared=False)
    kind, how_b, payload = record[:1], record[1:2], record[2:]
    how = {b"a": "assigned", b"e": "expression", b"?": "none"}.get(how_b)
    if how is None or kind not in (b"V", b"E"):
        return ResultValue(declared=True, error="the result record is malformed")
    if kind == b"E":
        return ResultValue(declared=True, how=how,  # type: ignore[arg-type]
                           error=payload[:500].decode("utf-8", "replace"))
    if len(payload) > max_bytes:
        return ResultValue(declared=True, how=how,  # type: ignore[arg-type]
                           error=f"the result is {len(payload)} bytes of JSON; the limit is "
                                 f"{max_bytes}")
    try:
        value = json.loads(payload)
        # A receipt is UTF-8 JSON: text with a lone surrogate (valid as a JSON escape) could
        # not be stored or hashed.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return ResultValue(declared=True, how=how,  # type: ignore[arg-type]
                           error="the result holds text that is not valid Unicode "
                                 "(a lone surrogate)")
    except (ValueError, RecursionError) as exc:
        return ResultValue(declared=True, how=how,  # type: ignore[arg-type]
                           error=f"the result is not valid JSON: {type(exc).__name__}")
    return ResultValue(declared=True, how=how, value=value,  # type: ignore[arg-type]
                       json_bytes=len(payload), sha256=hashlib.sha256(payload).hexdigest())


def static_receipt(job: SandboxJob, *, backend: BackendInfo, outcome: Outcome, detail: str,
                   attempt: int = 1, capabilities: dict[str, Any] | None = None,
                   environment_digest: str | None = None, stderr: str = "",
                   network_enforcement: str = "not started") -> Receipt:
    """A receipt for a job that never reached a sandbox (syntax error, expired deadline)."""
    now = utcnow()
    data = stderr.encode()
    return Receipt(
        job_id=str(job.job_id), idempotency_key=job.idempotency_key, attempt=attempt,
        tenant=job.tenant, principal=job.principal, purpose=job.purpose, backend=backend,
        capabilities=capabilities or {}, environment=job.runtime.environment,
        environment_digest=environment_digest, code_sha256=job.code_sha256,
        inputs=input_digests(job), limits_requested=job.limits, network=job.network,
        network_enforcement=network_enforcement, started_at=now, ended_at=now, wall_ms=0.0,
        stderr=StreamRecord(head=stderr, total_bytes=len(data), kept_bytes=len(data),
                            sha256=hashlib.sha256(data).hexdigest()),
        outcome=outcome, outcome_basis="observed", outcome_detail=detail,
        side_effects_possible=False, session_id=job.session_id)


def preflight(job: SandboxJob, backend: BackendInfo, attempt: int = 1) -> Receipt | float:
    """What a remote backend checks before it asks its provider for anything: the code's syntax
    on the host and the job's deadline. A receipt when the job ends here, else the wall-clock
    seconds the job may still take."""
    problem = syntax_problem(job.source, job.runtime.version)
    if problem is not None:
        return static_receipt(job, backend=backend, outcome=Outcome.SYNTAX_ERROR,
                              detail=problem, attempt=attempt, stderr=problem + "\n")
    wall = job.limits.wall_timeout_s
    if job.deadline is not None:
        wall = min(wall, (job.deadline - utcnow()).total_seconds())
        if wall <= 0:
            return static_receipt(job, backend=backend, outcome=Outcome.TIMEOUT_WALL,
                                  detail="deadline passed before start", attempt=attempt)
    return wall


def dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, default=str)
