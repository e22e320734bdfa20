"""Provider-hosted code execution (lane two) under the same contract as every sandbox backend.

Contract: a `HostedClient` wraps one provider's code-execution tool (OpenAI's code interpreter,
Anthropic's code execution tool, Gemini's code execution; see `openai_hosted.py`,
`anthropic_hosted.py`, `gemini_hosted.py`) in one verb, `execute`: send the program, get back
what the provider ran and reported (`HostedRun`). `HostedBackend` translates the `SandboxJob`
and enforces what it can itself, never trusting a provider default:

* it refuses (E601) a job whose data classes the policy keeps in-house (`DataPolicy`: the
  classes of the job's inputs and files, by a caller-supplied hook, against the classes this
  provider may receive), a job asking for more than the provider can give (network, memory,
  wall time, state) and a job with more input bytes than may travel inline;
* the program is the job's code behind a fixed prelude (inputs as globals, stdin at /dev/null,
  the input files written into the work directory); the provider's model is told to run it
  verbatim, and a run whose executed code differs from it is ``sandbox_error`` (the provider
  ran something else: nothing it reported is the job's);
* the host enforces the wall deadline (the SDK call's timeout), caps output (head and tail)
  and copies every artifact the job's globs match into our `ArtifactStore` before it deletes
  the provider's container and files (an ephemeral job leaves nothing behind to expire);
* the receipt records the provider's ids and billed usage (``provider_ids``: ids, and
  ``usage.*`` token and container counts) and, per knob, whether the provider or the host
  enforces it or nobody does (``not_enforced``), from the client's `HostedLimits`.

Outcome basis: a provider that reports a process exit status (Anthropic) gives ``observed``
outcomes as the provider saw them; one that reports only a tool status (OpenAI, Gemini) gives
``inferred`` at most: nothing there is a confirmed exit status.
"""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from ..artifacts import ArtifactStore
from ..contract import (
    ArtifactRecord, BackendInfo, CancelToken, CleanupRecord, Enforcement, EnforcedBy, Isolation,
    Outcome, Receipt, SandboxJob, check_relative_path,
)
from .base import BackendCapabilities, SandboxBackend, input_digests, preflight, \
    static_receipt, utcnow
from .capture import StreamCapture
from .classifier import classify
from .workspace import glob_regex

#: Markers around the program in the request, so the provider's model (and our stand-ins)
#: find exactly what to run.
CODE_START = "<<<FORMULANE-PROGRAM"
CODE_END = "FORMULANE-PROGRAM>>>"
#: Input files travel inside the program (base64): above this they are refused, not truncated.
MAX_INLINE_INPUT_BYTES = 256 * 1024

INSTRUCTIONS = (
    "You are an executor, not an author. Call the code execution tool exactly once with the "
    "program between the markers, byte for byte, without changing, fixing or adding anything, "
    "then reply with the single word done.")


@dataclass(frozen=True)
class HostedLimits:
    """What one provider can enforce, in the contract's terms (None: nothing to set)."""

    memory_bytes: int | None  # the most the provider gives a program
    memory_by: EnforcedBy
    max_wall_s: float  # the provider's own ceiling per execution
    network: str  # how the provider keeps the program off the network, in words
    lifetime: str  # how long the provider keeps a container alive
    retention: str  # how long the provider keeps the files and the code it saw
    states: tuple[Literal["ephemeral", "session"], ...] = ("ephemeral",)
    artifacts: str = "files"  # what artifacts the provider can hand back


@dataclass
class HostedFile:
    path: str  # relative to the program's work directory
    data: bytes


@dataclass
class HostedRun:
    """What the provider reported about one execution."""

    executed_code: str | None  # what the provider says it ran (None: it did not say)
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None  # None: the provider reports no process exit status
    status: Literal["ok", "failed", "timeout", "error"] = "ok"  # the tool's own status
    detail: str = ""
    files: list[HostedFile] = field(default_factory=list[HostedFile])
    provider_ids: dict[str, str] = field(default_factory=dict[str, str])
    usage: dict[str, int] = field(default_factory=dict[str, int])
    cleanup_ok: bool = True  # the provider's container and files were deleted (or none)


class HostedClient(ABC):
    """One provider's code-execution tool, through its official SDK."""

    name: str = "hosted"
    version: str = "unknown"
    isolation: Isolation = Isolation.NAMESPACE
    mechanism: str = ""
    workdir: str = "/tmp/formulane-job"
    limits: HostedLimits

    @abstractmethod
    def execute(self, job: SandboxJob, program: str, *, timeout_s: float,
                session: str | None, want_files: Callable[[str], bool]) -> HostedRun:
        """Run ``program`` once; the files ``want_files`` accepts are downloaded, and the
        provider's container and files are deleted unless ``session`` keeps the container."""

    def close(self) -> None:
        """Release SDK resources."""


@dataclass(frozen=True)
class DataPolicy:
    """Which data classes may go to this provider. ``classes_of`` names each input's and
    file's class (by name or path); anything it does not name is ``default_class``."""

    allowed: frozenset[str] = frozenset({"public"})
    default_class: str = "internal"
    classes_of: Callable[[SandboxJob], Mapping[str, str]] | None = None

    def crossing(self, job: SandboxJob) -> dict[str, str]:
        named = dict(self.classes_of(job)) if self.classes_of is not None else {}
        out = {name: named.get(name, self.default_class) for name in job.inputs}
        out.update({f.path: named.get(f.path, self.default_class) for f in job.files})
        return out


def build_program(job: SandboxJob, workdir: str) -> str:
    """The job's code behind the fixed prelude, as the provider must run it."""
    files = {f.path: base64.b64encode(f.content).decode() for f in job.files}
    prelude = (
        f"# formulane job {job.job_id}: prelude (inputs, stdin, work directory), then the code\n"
        "import base64 as _fb, json as _fj, os as _fo, sys as _fs\n"
        f"_fo.makedirs({workdir!r}, exist_ok=True)\n"
        f"_fo.chdir({workdir!r})\n"
        f"for _p, _d in _fj.loads({json.dumps(files)!r}).items():\n"
        "    _fo.makedirs(_fo.path.dirname(_p) or '.', exist_ok=True)\n"
        "    open(_p, 'wb').write(_fb.b64decode(_d))\n"
        "_fs.stdin = open(_fo.devnull)\n"
        f"inputs = _fj.loads({json.dumps(job.inputs)!r})\n"
        "globals().update(inputs)\n"
        "del _fb, _fj, _fo, _fs\n"
        "# --- the job's code ---\n")
    return prelude + job.source


def request_text(program: str) -> str:
    return f"{CODE_START}\n{program}\n{CODE_END}"


def extract_program(text: str) -> str | None:
    """The program between the markers of a request (what a provider's model reads)."""
    start = text.find(CODE_START + "\n")
    end = text.rfind("\n" + CODE_END)
    if start < 0 or end < start:
        return None
    return text[start + len(CODE_START) + 1:end]


class HostedBackend(SandboxBackend):
    def __init__(self, client: HostedClient, *, artifacts: ArtifactStore,
                 policy: DataPolicy | None = None,
                 on_provider_ids: Callable[[str, dict[str, str]], None] | None = None) -> None:
        self.client = client
        self.name = client.name  # type: ignore[misc]
        self.artifacts = artifacts
        self.policy = policy or DataPolicy()
        self.on_provider_ids = on_provider_ids
        self._sessions: dict[str, str] = {}
        self._lock = threading.Lock()

    def capabilities(self) -> BackendCapabilities:
        lim = self.client.limits
        return BackendCapabilities(
            name=self.client.name, available=True, isolation=self.client.isolation,
            mechanism=self.client.mechanism, network_modes=("none",), states=lim.states,
            enforces={"wall_timeout_s": "host", "stdout_max_bytes": "host",
                      "stderr_max_bytes": "host", "artifact_max_bytes_total": "host",
                      "memory_bytes": lim.memory_by, "network": "provider",
                      "cpu_time_s": "not_enforced", "max_processes": "not_enforced",
                      "max_file_bytes": "not_enforced", "workspace_bytes": "not_enforced"},
            max_wall_s=lim.max_wall_s, kills_whole_sandbox=False,
            cold_start="seconds (a model turn at the provider)")

    def refusals(self, job: SandboxJob) -> list[str]:
        reasons = super().refusals(job)
        lim = self.client.limits
        crossing = self.policy.crossing(job)
        kept = sorted({cls for cls in crossing.values() if cls not in self.policy.allowed})
        if kept:
            names = ", ".join(sorted(n for n, c in crossing.items() if c in kept))
            reasons.append(f"the job sends {', '.join(kept)} data ({names}) and the policy "
                           f"keeps it in-house; {self.client.name} may receive only "
                           f"{', '.join(sorted(self.policy.allowed)) or 'nothing'}")
        if lim.memory_bytes is not None and job.limits.memory_bytes > lim.memory_bytes:
            reasons.append(f"{self.client.name} gives a program at most {lim.memory_bytes} "
                           f"bytes of memory; the job asks {job.limits.memory_bytes}")
        if sum(len(f.content) for f in job.files) > MAX_INLINE_INPUT_BYTES:
            reasons.append(f"input files above {MAX_INLINE_INPUT_BYTES} bytes do not travel to "
                           f"{self.client.name}; run this job on a local or managed sandbox")
        if job.broker_tools:
            reasons.append(f"{self.client.name} cannot reach the tool broker")
        if job.runtime.packages:
            reasons.append(f"{self.client.name} has its own preinstalled packages; pinned "
                           "packages cannot be guaranteed there")
        return reasons

    def _info(self) -> BackendInfo:
        c = self.client
        return BackendInfo(name=c.name, version=c.version, isolation=c.isolation,
                           mechanism=c.mechanism)

    def run(self, job: SandboxJob, *, cancel: CancelToken | None = None,
            attempt: int = 1) -> Receipt:
        self.check(job)
        wall = preflight(job, self._info(), attempt)
        if isinstance(wall, Receipt):
            return wall
        if cancel is not None and cancel.cancelled:
            return static_receipt(job, backend=self._info(), outcome=Outcome.CANCELLED,
                                  detail=f"{cancel.reason}; cancelled before it was sent",
                                  attempt=attempt)
        program = build_program(job, self.client.workdir)
        session = None
        if job.state == "session":
            with self._lock:
                session = self._sessions.get(job.session_id or "")
        matcher = glob_regex(job.artifact_globs)
        inputs = {f.path for f in job.files}
        started_at = utcnow()
        t0 = time.monotonic()
        reason, run, detail = "exited", None, ""
        try:
            run = self.client.execute(job, program, timeout_s=wall, session=session,
                                      want_files=lambda p: bool(job.artifact_globs)
                                      and bool(matcher.match(p)) and p not in inputs)
        except Exception as exc:  # the SDK call failed: what ran remotely is not known
            # Each SDK has its own timeout class (httpx's, its own APITimeoutError...).
            timed_out = isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__
            reason = "timeout" if timed_out else "lost"
            detail = f"{type(exc).__name__}: {exc}"
        ids = {"provider": self.client.name, **(run.provider_ids if run else {})}
        if run is not None:
            ids.update({f"usage.{k}": str(v) for k, v in sorted(run.usage.items())})
            if job.state == "session" and run.provider_ids.get("container_id"):
                with self._lock:
                    self._sessions[job.session_id or ""] = run.provider_ids["container_id"]
        if self.on_provider_ids is not None:
            self.on_provider_ids(str(job.job_id), ids)
        out = StreamCapture(job.limits.stdout_max_bytes, job.limits.stream_kill_bytes)
        err = StreamCapture(job.limits.stderr_max_bytes, job.limits.stream_kill_bytes)
        if run is not None:  # the provider's text may hold anything JSON can escape
            out.feed(run.stdout.encode("utf-8", "replace"))
            err.feed(run.stderr.encode("utf-8", "replace"))
        out.feed(b"")
        err.feed(b"")
        verdict = self._verdict(job, program, reason, run, err, detail)
        artifacts: tuple[ArtifactRecord, ...] = ()
        if run is not None and verdict["outcome"] is not Outcome.SANDBOX_ERROR:
            artifacts = self._store(job, attempt, run, verdict["outcome"])
        events = tuple(f"provider usage {k}={v}" for k, v in sorted((run.usage if run else {})
                                                                    .items()))
        return Receipt(
            job_id=str(job.job_id), idempotency_key=job.idempotency_key, attempt=attempt,
            tenant=job.tenant, principal=job.principal, purpose=job.purpose,
            backend=self._info(), capabilities={"limits": self._limits_text()},
            environment=job.runtime.environment, code_sha256=job.code_sha256,
            inputs=input_digests(job), limits_requested=job.limits,
            limits_enforced=self._enforcement(job, wall), network=job.network,
            network_enforcement=f"provider ({self.client.name}): {self.client.limits.network}",
            started_at=started_at, ended_at=utcnow(),
            wall_ms=round((time.monotonic() - t0) * 1000, 3), stdout=out.record(),
            stderr=err.record(), artifacts=artifacts,
            cleanup=CleanupRecord(group_killed=reason != "exited",
                                  sandbox_destroyed=bool(run and run.cleanup_ok)
                                  and session is None and job.state != "session"),
            provider_ids=ids, side_effects_possible=job.side_effects_possible,
            events=events, session_id=job.session_id, **verdict)

    def _limits_text(self) -> dict[str, Any]:
        lim = self.client.limits
        return {"memory_bytes": lim.memory_bytes, "max_wall_s": lim.max_wall_s,
                "network": lim.network, "lifetime": lim.lifetime, "retention": lim.retention,
                "artifacts": lim.artifacts}

    def _enforcement(self, job: SandboxJob, wall: float) -> tuple[Enforcement, ...]:
        lim, limits = self.client.limits, job.limits
        rows = [
            Enforcement(knob="wall_timeout_s", requested=limits.wall_timeout_s,
                        enforced=min(wall, lim.max_wall_s), by="host"),
            Enforcement(knob="memory_bytes", requested=limits.memory_bytes,
                        enforced=lim.memory_bytes, by=lim.memory_by),
            Enforcement(knob="network", requested=job.network.mode, enforced="none",
                        by="provider"),
            Enforcement(knob="stdout_max_bytes", requested=limits.stdout_max_bytes,
                        enforced=limits.stdout_max_bytes, by="host"),
            Enforcement(knob="stderr_max_bytes", requested=limits.stderr_max_bytes,
                        enforced=limits.stderr_max_bytes, by="host"),
            Enforcement(knob="artifact_max_bytes_total",
                        requested=limits.artifact_max_bytes_total,
                        enforced=limits.artifact_max_bytes_total, by="host"),
        ]
        for knob in ("cpu_time_s", "max_processes", "max_file_bytes", "workspace_bytes",
                     "max_open_files"):
            rows.append(Enforcement(knob=knob, requested=getattr(limits, knob), enforced=None,
                                    by="not_enforced"))
        return tuple(rows)

    def _verdict(self, job: SandboxJob, program: str, reason: str, run: HostedRun | None,
                 err: StreamCapture, detail: str) -> dict[str, Any]:
        if reason == "lost" or run is None:
            outcome = Outcome.UNKNOWN if job.side_effects_possible else Outcome.LOST
            if reason == "timeout":
                outcome = Outcome.UNKNOWN if job.side_effects_possible else Outcome.TIMEOUT_WALL
                return {"outcome": outcome, "outcome_basis": "inferred",
                        "outcome_detail": f"the host deadline fired on the provider call; the "
                                          f"remote execution may still have run ({detail})"}
            return {"outcome": outcome, "outcome_basis": "unknown",
                    "outcome_detail": f"the call to {self.client.name} failed: {detail}"}
        if run.executed_code is not None and run.executed_code.strip() != program.strip():
            return {"outcome": Outcome.SANDBOX_ERROR, "outcome_basis": "observed",
                    "outcome_detail": f"{self.client.name} ran code other than the job's "
                                      "(its model changed the program); nothing it reported "
                                      "is the job's result"}
        if run.executed_code is None:
            return {"outcome": Outcome.SANDBOX_ERROR, "outcome_basis": "observed",
                    "outcome_detail": f"{self.client.name} did not run the program "
                                      f"({run.detail or 'no code execution in the reply'})"}
        if run.status == "timeout":
            outcome = Outcome.UNKNOWN if job.side_effects_possible else Outcome.TIMEOUT_WALL
            return {"outcome": outcome, "outcome_basis": "inferred",
                    "outcome_detail": f"{self.client.name} stopped the execution at its own "
                                      f"deadline ({self.client.limits.max_wall_s:g} s)"}
        if run.status == "error":
            return {"outcome": Outcome.SANDBOX_ERROR, "outcome_basis": "inferred",
                    "outcome_detail": f"{self.client.name}: {run.detail}"}
        if run.exit_code is not None:
            verdict = classify(reason="exited", started=True, returncode=run.exit_code,
                               wrapper=True, stderr=err.tail_text(16384),
                               network_mode=job.network.mode)
            return {"outcome": verdict.outcome, "outcome_basis": verdict.basis,
                    "outcome_detail": verdict.detail, "exit_code": verdict.exit_code,
                    "signal": verdict.signal, "missing_module": verdict.missing_module}
        # Only a tool status: a failure refined by the traceback text, everything inferred.
        code = 0 if run.status == "ok" else 1
        verdict = classify(reason="exited", started=True, returncode=code, wrapper=False,
                           stderr=err.tail_text(16384), network_mode=job.network.mode)
        return {"outcome": verdict.outcome, "outcome_basis": "inferred",
                "outcome_detail": (verdict.detail + "; " if verdict.detail else "")
                + f"{self.client.name} reports a tool status ({run.status}), not an exit "
                  "status", "missing_module": verdict.missing_module}

    def _store(self, job: SandboxJob, attempt: int, run: HostedRun,
               outcome: Outcome) -> tuple[ArtifactRecord, ...]:
        """Copy the provider's files into our store (the provider's copies are deleted)."""
        matcher = glob_regex(job.artifact_globs)
        budget = job.limits.artifact_max_bytes_total
        out: list[ArtifactRecord] = []
        for item in run.files:
            if not job.artifact_globs or not matcher.match(item.path):
                continue
            try:
                check_relative_path(item.path, "artifact path")
                item.path.encode("utf-8")
            except (ValueError, UnicodeEncodeError):
                continue  # a name the provider made up that no receipt can hold
            if len(out) >= job.limits.artifact_max_count or len(item.data) > budget:
                continue
            budget -= len(item.data)
            complete = True if outcome is Outcome.SUCCEEDED else None
            ref = self.artifacts.put(item.data, provenance={
                "job_id": str(job.job_id), "attempt": attempt, "path": item.path,
                "tenant": job.tenant, "principal": job.principal,
                "code_sha256": job.code_sha256, "backend": self.client.name,
                "provider_ids": run.provider_ids, "outcome": outcome.value,
                "complete": complete})
            out.append(ArtifactRecord(
                path=item.path, size=len(item.data),
                sha256=hashlib.sha256(item.data).hexdigest(),
                mime=mimetypes.guess_type(item.path)[0] or "application/octet-stream",
                complete=complete, stored_ref=ref))
        return tuple(out)

    def close(self) -> None:
        self.client.close()
