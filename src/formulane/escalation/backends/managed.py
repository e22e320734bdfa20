"""Managed sandboxes (E2B, Modal, Daytona) behind one adapter that trusts no provider default.

Contract: a `ProviderClient` wraps one SDK (see `e2b.py`, `modal.py`, `daytona.py`) in five
verbs: create (with labels and a provider TTL), run (with the provider's own timeout and
streaming callbacks), files in and out, kill, and find (by id, or by our owner label).
`ManagedBackend` translates the `SandboxJob` onto it and enforces the contract itself: it
labels every sandbox with owner, job and expiry, sets the provider TTL to the deadline plus a
grace, reaps our expired sandboxes at start, hands the provider ids to ``on_provider_ids``
*before* any job code starts (so a reconnect is idempotent), caps output on the host, kills
the whole sandbox on timeout or cancellation and confirms it is gone (``timeout_wall``
observed), reports ``unknown`` when it cannot confirm, maps a dropped control connection to
``lost`` (or ``unknown`` when a side effect was possible), never reports ``succeeded``
without a confirmed exit status, and always destroys ephemeral sandboxes. A small runner
inside the sandbox points stdin at /dev/null, loads the inputs and runs the job code, so
interactive input fails at once and tracebacks classify like local ones.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Callable

from ..artifacts import ArtifactStore
from ..contract import (
    ArtifactRecord, BackendInfo, CancelToken, CleanupRecord, Enforcement, Isolation, NetworkMode,
    Outcome, OutcomeBasis, Receipt, SandboxJob,
)
from .base import BackendCapabilities, SandboxBackend, input_digests, preflight, \
    static_receipt, utcnow
from .capture import StreamCapture
from .classifier import classify
from .workspace import glob_regex

JOB_DIR = "/tmp/formulane-job"
WORK_DIR = "/tmp/formulane-job/work"
OWNER_LABEL = "formulane-owner"
JOB_LABEL = "formulane-job"
EXPIRES_LABEL = "formulane-expires"

RUNNER = r'''
import json, os, sys
fd = os.open(os.devnull, os.O_RDONLY)
os.dup2(fd, 0)
sys.stdin = open(os.devnull)
with open("/tmp/formulane-job/inputs.json") as f:
    values = json.load(f)
os.chdir("/tmp/formulane-job/work")
g = {"__name__": "__main__", "__builtins__": __builtins__, "inputs": values, **values}
with open("/tmp/formulane-job/main.py") as f:
    code = compile(f.read(), "/tmp/formulane-job/main.py", "exec")
exec(code, g)
'''


class ProviderTimeout(Exception):
    """The provider's own command timeout fired (the process may still be running)."""


class ProviderLost(Exception):
    """The control connection to the provider failed mid-run; remote state is unknown."""


@dataclass
class ProviderExit:
    exit_code: int | None  # None: the provider gave no confirmed exit status
    stdout: str = ""
    stderr: str = ""


@dataclass
class FoundSandbox:
    sandbox_id: str
    labels: dict[str, str] = field(default_factory=dict[str, str])


class ProviderSandbox(ABC):
    sandbox_id: str

    @abstractmethod
    def write_file(self, path: str, data: bytes) -> None: ...

    @abstractmethod
    def run(self, argv: list[str], *, timeout_s: float, cwd: str,
            on_stdout: Callable[[str], None], on_stderr: Callable[[str], None]) -> ProviderExit: ...

    @abstractmethod
    def list_files(self, directory: str) -> list[tuple[str, int]]: ...

    @abstractmethod
    def read_file(self, path: str) -> bytes: ...

    @abstractmethod
    def kill(self) -> None: ...


class ProviderClient(ABC):
    name: str = "provider"
    version: str = "unknown"
    isolation: Isolation = Isolation.MICROVM
    mechanism: str = ""
    network_modes: tuple[NetworkMode, ...] = ("none",)

    @abstractmethod
    def create(self, job: SandboxJob, *, labels: dict[str, str],
               ttl_s: float) -> ProviderSandbox: ...

    @abstractmethod
    def connect(self, sandbox_id: str) -> ProviderSandbox | None:
        """The sandbox if it still exists, else None."""

    @abstractmethod
    def find(self, owner: str) -> list[FoundSandbox]: ...

    def gone(self, sandbox_id: str) -> bool:
        return self.connect(sandbox_id) is None

    def close(self) -> None:
        """Release SDK resources (connections, background threads)."""


ProviderIds = Callable[[str, dict[str, str]], None]


class ManagedBackend(SandboxBackend):
    def __init__(self, client: ProviderClient, *, owner: str,
                 artifacts: ArtifactStore, on_provider_ids: ProviderIds | None = None,
                 grace_s: float = 60.0, reap_on_start: bool = True,
                 kill_confirm_s: float = 10.0) -> None:
        self.client = client
        self.name = client.name  # type: ignore[misc]
        self.owner = owner
        self.artifacts = artifacts
        self.on_provider_ids = on_provider_ids
        self.grace_s = grace_s
        self.kill_confirm_s = kill_confirm_s
        self.reaped: list[str] = []
        if reap_on_start:
            self.reaped = self.reap()

    def capabilities(self) -> BackendCapabilities:
        c = self.client
        return BackendCapabilities(
            name=c.name, available=True, isolation=c.isolation, mechanism=c.mechanism,
            network_modes=c.network_modes, states=("ephemeral",),
            enforces={"wall_timeout_s": "provider", "stdout_max_bytes": "host",
                      "stream_kill_bytes": "host", "memory_bytes": "provider",
                      "artifact_max_bytes_total": "host"},
            cold_start="seconds (provider)")

    def reap(self) -> list[str]:
        """Kill our sandboxes whose expiry label has passed (left by a crashed process)."""
        now = utcnow()
        killed: list[str] = []
        for found in self.client.find(self.owner):
            expires = found.labels.get(EXPIRES_LABEL, "")
            try:
                expired = datetime.fromisoformat(expires) < now
            except ValueError:
                expired = True  # unlabelled or garbled: ours by owner label, so reap it
            if expired:
                box = self.client.connect(found.sandbox_id)
                if box is not None and self._destroy(box):
                    killed.append(found.sandbox_id)
        return killed

    def _info(self) -> BackendInfo:
        return BackendInfo(name=self.client.name, version=self.client.version,
                           isolation=self.client.isolation, mechanism=self.client.mechanism)

    def run(self, job: SandboxJob, *, cancel: CancelToken | None = None,
            attempt: int = 1) -> Receipt:
        self.check(job)
        wall = preflight(job, self._info(), attempt)
        if isinstance(wall, Receipt):
            return wall
        expires = utcnow() + timedelta(seconds=wall + self.grace_s)
        labels = {OWNER_LABEL: self.owner, JOB_LABEL: str(job.job_id),
                  EXPIRES_LABEL: expires.isoformat()}
        started_at = utcnow()
        t0 = time.monotonic()
        out = StreamCapture(job.limits.stdout_max_bytes, job.limits.stream_kill_bytes)
        err = StreamCapture(job.limits.stderr_max_bytes, job.limits.stream_kill_bytes)
        try:
            box = self.client.create(job, labels=labels, ttl_s=wall + self.grace_s)
        except Exception as exc:  # nothing started: infrastructure, our side
            return static_receipt(job, backend=self._info(), outcome=Outcome.SANDBOX_ERROR,
                                  detail=f"provider refused to create a sandbox: "
                                         f"{type(exc).__name__}: {exc}", attempt=attempt)
        ids = {"sandbox_id": box.sandbox_id, "provider": self.client.name}
        if self.on_provider_ids is not None:
            self.on_provider_ids(str(job.job_id), ids)  # stored before any job code starts
        reason, result, detail = "exited", None, ""
        flood = _Flood(out, err)
        watch = _Watchdog(box, cancel, time.monotonic() + wall + min(30.0, self.grace_s))
        try:
            self._stage(box, job)
            if cancel is not None and cancel.cancelled:
                reason = "cancelled"
            else:
                result = box.run(["python3", f"{JOB_DIR}/run.py"], timeout_s=wall,
                                 cwd=WORK_DIR, on_stdout=flood.stdout, on_stderr=flood.stderr)
                if flood.tripped:
                    reason = "output_limit"
                elif cancel is not None and cancel.cancelled:
                    reason = "cancelled"
        except _FloodStop:
            reason = "output_limit"
        except ProviderTimeout:
            reason = "timeout"
        except ProviderLost as exc:
            reason, detail = "lost", str(exc)
        except Exception as exc:  # an SDK error mid-run is a lost control channel
            reason, detail = "lost", f"{type(exc).__name__}: {exc}"
        finally:
            watch.stop()
        if watch.fired == "cancel":
            reason = "cancelled"
        elif watch.fired == "deadline":
            reason = "timeout"  # the provider did not honour its own timeout: we killed it
        if result is not None:
            for text, capture in ((result.stdout, out), (result.stderr, err)):
                if capture.total == 0 and text:
                    capture.feed(text.encode())
        for capture in (out, err):
            capture.feed(b"")
        artifacts: tuple[ArtifactRecord, ...] = ()
        if reason == "exited" and result is not None and job.artifact_globs:
            artifacts = self._collect(box, job, attempt, result.exit_code == 0)
        destroyed = self._destroy(box)
        receipt = Receipt(
            job_id=str(job.job_id), idempotency_key=job.idempotency_key, attempt=attempt,
            tenant=job.tenant, principal=job.principal, purpose=job.purpose,
            backend=self._info(), environment=job.runtime.environment,
            code_sha256=job.code_sha256, inputs=input_digests(job), limits_requested=job.limits,
            limits_enforced=(
                Enforcement(knob="wall_timeout_s", requested=job.limits.wall_timeout_s,
                            enforced=wall, by="provider"),
                Enforcement(knob="stdout_max_bytes", requested=job.limits.stdout_max_bytes,
                            enforced=job.limits.stdout_max_bytes, by="host"),
                Enforcement(knob="memory_bytes", requested=job.limits.memory_bytes,
                            enforced=job.limits.memory_bytes, by="provider"),
            ),
            network=job.network, network_enforcement=f"provider ({self.client.name})",
            started_at=started_at, ended_at=utcnow(),
            wall_ms=round((time.monotonic() - t0) * 1000, 3),
            stdout=out.record(), stderr=err.record(), artifacts=artifacts,
            cleanup=CleanupRecord(group_killed=reason != "exited", sandbox_destroyed=destroyed),
            provider_ids=ids, side_effects_possible=job.side_effects_possible,
            **self._verdict(job, reason, result, err, destroyed, detail, cancel))
        return receipt

    def _verdict(self, job: SandboxJob, reason: str, result: ProviderExit | None,
                 err: StreamCapture, destroyed: bool, detail: str,
                 cancel: CancelToken | None) -> dict[str, Any]:
        basis: OutcomeBasis
        if reason == "lost":
            outcome = Outcome.UNKNOWN if job.side_effects_possible else Outcome.LOST
            return {"outcome": outcome, "outcome_basis": "unknown",
                    "outcome_detail": f"control connection to {self.client.name} dropped: "
                                      f"{detail}"}
        if reason in ("timeout", "cancelled", "output_limit"):
            if not destroyed:
                return {"outcome": Outcome.UNKNOWN, "outcome_basis": "unknown",
                        "outcome_detail": f"{reason}: the sandbox could not be confirmed gone"}
            verdict = classify(reason=reason, started=True, returncode=None, wrapper=False,
                               stderr="", cancel_reason=cancel.reason if cancel else "")
            return {"outcome": verdict.outcome, "outcome_basis": verdict.basis,
                    "outcome_detail": verdict.detail + f"; {self.client.name} sandbox killed "
                                                       "and confirmed gone"}
        if result is None or result.exit_code is None:
            return {"outcome": Outcome.UNKNOWN, "outcome_basis": "unknown",
                    "outcome_detail": "the provider returned no confirmed exit status"}
        # Providers run the command through a shell, which reports a signal death as 128+N.
        verdict = classify(reason="exited", started=True, returncode=result.exit_code,
                           wrapper=True, stderr=err.tail_text(16384),
                           network_mode=job.network.mode)
        basis = verdict.basis
        return {"outcome": verdict.outcome, "outcome_basis": basis,
                "outcome_detail": verdict.detail, "exit_code": verdict.exit_code,
                "signal": verdict.signal, "missing_module": verdict.missing_module}

    def _stage(self, box: ProviderSandbox, job: SandboxJob) -> None:
        box.write_file(f"{JOB_DIR}/run.py", RUNNER.encode())
        box.write_file(f"{JOB_DIR}/main.py", job.source.encode())
        box.write_file(f"{JOB_DIR}/inputs.json", json.dumps(job.inputs).encode())
        for spec in job.files:
            box.write_file(f"{WORK_DIR}/{spec.path}", spec.content)

    def _collect(self, box: ProviderSandbox, job: SandboxJob, attempt: int,
                 ok: bool) -> tuple[ArtifactRecord, ...]:
        matcher = glob_regex(job.artifact_globs)
        budget = job.limits.artifact_max_bytes_total
        out: list[ArtifactRecord] = []
        inputs = {f.path for f in job.files}
        for rel, size in sorted(box.list_files(WORK_DIR)):
            if not matcher.match(rel) or rel in inputs or len(out) >= job.limits.artifact_max_count:
                continue
            if size > budget:
                continue
            data = box.read_file(f"{WORK_DIR}/{rel}")[:budget + 1]
            if len(data) > budget:
                continue
            budget -= len(data)
            ref = self.artifacts.put(data, provenance={
                "job_id": str(job.job_id), "attempt": attempt, "path": rel,
                "backend": self.client.name, "sandbox_id": box.sandbox_id,
                "code_sha256": job.code_sha256})
            out.append(ArtifactRecord(path=rel, size=len(data),
                                      sha256=hashlib.sha256(data).hexdigest(),
                                      mime=mimetypes.guess_type(rel)[0] or
                                      "application/octet-stream",
                                      complete=True if ok else None, stored_ref=ref))
        return tuple(out)

    def _destroy(self, box: ProviderSandbox) -> bool:
        """Kill the whole sandbox and confirm it is gone."""
        try:
            box.kill()
        except Exception:  # confirmation below decides
            pass
        deadline = time.monotonic() + self.kill_confirm_s
        while time.monotonic() < deadline:
            try:
                if self.client.gone(box.sandbox_id):
                    return True
            except Exception:
                return False
            time.sleep(0.05)
        return False

    def close(self) -> None:
        self.client.close()

    def reconcile(self, job: SandboxJob, attempt: int,
                  provider_ids: dict[str, str]) -> Receipt | None:
        """After a restart: kill what is left; the exit status itself cannot be recovered."""
        sandbox_id = provider_ids.get("sandbox_id")
        if sandbox_id:
            box = self.client.connect(sandbox_id)
            if box is not None:
                self._destroy(box)
        return None


class _FloodStop(Exception):
    pass


class _Flood:
    """Host-side output caps for streamed provider output; trips stop the run."""

    def __init__(self, out: StreamCapture, err: StreamCapture) -> None:
        self.out = out
        self.err = err
        self.tripped = False

    def _feed(self, capture: StreamCapture, text: str) -> None:
        capture.feed(text.encode("utf-8", "replace"))
        if capture.over_budget:
            self.tripped = True
            raise _FloodStop()

    def stdout(self, text: str) -> None:
        self._feed(self.out, text)

    def stderr(self, text: str) -> None:
        self._feed(self.err, text)


class _Watchdog:
    """Kills the sandbox when the run is cancelled or outlives the host deadline.

    The SDK call blocks; this thread is how the host keeps its own deadline and how a cancel
    reaches a running provider command. It is always stopped and joined by `run`.
    """

    def __init__(self, box: ProviderSandbox, cancel: CancelToken | None, deadline: float) -> None:
        self.box = box
        self.cancel = cancel
        self.deadline = deadline
        self.fired = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="formulane-managed-watchdog",
                                        daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.wait(0.05):
            if self.cancel is not None and self.cancel.cancelled:
                self.fired = "cancel"
            elif time.monotonic() > self.deadline:
                self.fired = "deadline"
            else:
                continue
            try:
                self.box.kill()
            except Exception:  # the run's own cleanup confirms the kill
                pass
            return

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
