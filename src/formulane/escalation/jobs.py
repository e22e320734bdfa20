"""Durable sandbox jobs: submit returns at once, workers run them, restarts reconcile them.

Contract: `JobManager.submit` validates the job against the backend (refusal: E601), stores it
under its idempotency key and returns the record immediately; a second submit with the same key
returns the same record and never runs the job again. Worker threads claim queued jobs
atomically, run them with a cancel token, and append the receipt. `status`, `cancel` and
`result` work from any manager sharing the store. `result(timeout, on_timeout="cancel")` is
the caller giving up: the job is cancelled and the kill confirmed (outcome ``cancelled``) or,
when it cannot be confirmed, ``unknown``. On start, `recover` finds running jobs whose
supervisor is gone (dead owner process on this host, or an expired lease), records them as
``lost``, salvages what their workspace holds, and reconciles: a confirmed terminal state from
the backend if it has one; otherwise ``unknown`` when a side effect was possible (never retried;
`resolve` lets a person settle it); otherwise the job is queued again as attempt n+1.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Literal, Mapping

from ..errors import EscalationError
from .backends.base import SandboxBackend, static_receipt
from .backends.cgroups import instance_alive, instance_name
from .contract import (
    BackendInfo, CancelToken, Isolation, Outcome, OutcomeBasis, Receipt, SandboxJob,
)
from .store import JobRecord, JobStore

_log = logging.getLogger(__name__)
OnTimeout = Literal["leave", "cancel"]
_CONFIRM_S = 15.0


class ResultTimeout(TimeoutError):
    """`result` waited ``timeout`` seconds and the job is still running (``on_timeout='leave'``)."""

    def __init__(self, record: JobRecord) -> None:
        super().__init__(f"job {record.job_id} is still {record.status}")
        self.record = record


@dataclass(frozen=True)
class JobResult:
    record: JobRecord
    receipt: Receipt

    @property
    def outcome(self) -> Outcome:
        return self.receipt.outcome


class JobManager:
    def __init__(self, store: JobStore, backends: SandboxBackend | Mapping[str, SandboxBackend],
                 *, workers: int = 2, lease_s: float = 30.0, retry_lost: bool = True,
                 start: bool = True) -> None:
        if isinstance(backends, SandboxBackend):
            backends = {backends.name: backends}
        if not backends:
            raise EscalationError("a job manager needs at least one backend", code="E602")
        self.store = store
        self.backends = dict(backends)
        self.default_backend = next(iter(self.backends))
        self.lease_s = lease_s
        self.retry_lost = retry_lost
        self.owner = f"{socket.gethostname()}/{instance_name()}/{uuid.uuid4().hex[:8]}"
        self._queue: queue.Queue[str] = queue.Queue()
        self._tokens: dict[str, CancelToken] = {}
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.recovered: list[str] = []
        if start:
            self.recover()
            for i in range(workers):
                self._spawn_thread(self._worker, f"formulane-jobs-worker-{i}")
            self._spawn_thread(self._heartbeat, "formulane-jobs-heartbeat")

    def _spawn_thread(self, target: object, name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    # -- the public API ----------------------------------------------------------------------

    def submit(self, job: SandboxJob, *, backend: str | None = None) -> JobRecord:
        name = backend or self.default_backend
        if name not in self.backends:
            raise EscalationError(f"unknown backend {name!r}", code="E602",
                                  hint=f"configured: {', '.join(self.backends)}")
        self.backends[name].check(job)
        record, created = self.store.create(job, name)
        if created:
            self._queue.put(record.job_id)
        return record

    def status(self, job_id: str) -> JobRecord:
        record = self.store.get(job_id)
        if record is None:
            raise EscalationError(f"no job {job_id!r}", code="E603")
        return record

    def cancel(self, job_id: str, reason: str = "cancelled by request") -> JobRecord:
        record = self.status(job_id)
        if record.terminal:
            return record
        # Once cancel_requested is set no worker can claim the row any more (see claim).
        self.store.request_cancel(job_id, reason)
        with self._lock:
            token = self._tokens.get(job_id)
        if token is not None:
            token.cancel(reason)
            return self.status(job_id)
        record = self.status(job_id)
        if record.status == "queued":
            # Never started: nothing to kill, the receipt says so.
            self._finish(record, static_receipt(
                record.job, backend=self._info(record), outcome=Outcome.CANCELLED,
                detail=f"{reason}; cancelled before it started", attempt=record.attempt))
        return self.status(job_id)

    def result(self, job_id: str, *, timeout: float | None = None,
               on_timeout: OnTimeout = "leave") -> JobResult:
        deadline = None if timeout is None else time.monotonic() + timeout
        record = self._wait(job_id, deadline)
        if record.terminal:
            return self._result(record)
        if on_timeout == "leave":
            raise ResultTimeout(record)
        self.cancel(job_id, f"caller timed out after {timeout} s")
        record = self._wait(job_id, time.monotonic() + _CONFIRM_S)
        if record.terminal:
            return self._result(record)
        # The kill was not confirmed in time: say so instead of pretending.
        receipt = static_receipt(record.job, backend=self._info(record), outcome=Outcome.UNKNOWN,
                                 detail="caller timed out; the kill was not confirmed",
                                 attempt=record.attempt)
        self._finish(record, receipt.model_copy(update={"outcome_basis": "unknown"}))
        return self._result(self.status(job_id))

    def run(self, job: SandboxJob, *, timeout: float | None = None) -> JobResult:
        """Submit and wait; a caller timeout cancels the job (never leaves it running)."""
        record = self.submit(job)
        return self.result(record.job_id, timeout=timeout, on_timeout="cancel")

    def resolve(self, job_id: str, outcome: Outcome, *, by: str, note: str) -> JobResult:
        """A person settles an ``unknown`` job (appends a receipt; the old ones stay)."""
        record = self.status(job_id)
        if record.status != Outcome.UNKNOWN.value:
            raise EscalationError(f"job {job_id} is {record.status}, not unknown", code="E603")
        if not outcome.terminal or outcome is Outcome.UNKNOWN:
            raise EscalationError("resolve to a terminal outcome other than unknown", code="E603")
        last = self.store.latest(job_id)
        base = last if last is not None else static_receipt(
            record.job, backend=self._info(record), outcome=outcome, detail="")
        receipt = base.model_copy(update={"outcome": outcome, "outcome_basis": "inferred",
                                          "outcome_detail": f"resolved by {by}: {note}"})
        self.store.append(receipt, status=outcome.value)
        return self._result(self.status(job_id))

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            for token in self._tokens.values():
                token.cancel("the job manager is shutting down")
        for thread in self._threads:
            thread.join()
        self._threads.clear()

    # -- recovery ----------------------------------------------------------------------------

    def recover(self) -> list[str]:
        """Reconcile running jobs whose supervisor is gone; queue what was waiting."""
        now = time.time()
        handled: list[str] = []
        for record in self.store.jobs(["running", "lost"]):
            if record.status == "running" and not self._owner_gone(record, now):
                continue
            self._reconcile(record)
            handled.append(record.job_id)
        for record in self.store.jobs(["queued"]):
            self._queue.put(record.job_id)
        for backend in self.backends.values():
            reap = getattr(backend, "reap_workspaces", None)
            if reap is not None:
                reap()
        self.recovered = handled
        return handled

    def _owner_gone(self, record: JobRecord, now: float) -> bool:
        if record.owner is None:
            return True
        host, _, rest = record.owner.partition("/")
        instance = rest.split("/")[0]
        if host == socket.gethostname() and instance != instance_name():
            return not instance_alive(instance)
        return record.lease_until is not None and record.lease_until < now

    def _reconcile(self, record: JobRecord) -> None:
        backend = self.backends.get(record.backend)
        job = record.job
        if record.status == "running":
            lost = static_receipt(job, backend=self._info(record), outcome=Outcome.LOST,
                                  detail=f"control channel dropped: supervisor {record.owner} is "
                                         "gone", attempt=record.attempt)
            self.store.append(lost.model_copy(update={
                "outcome_basis": "unknown", "side_effects_possible": job.side_effects_possible,
                "provider_ids": record.provider_ids}), status="lost")
        confirmed = backend.reconcile(job, record.attempt, record.provider_ids) \
            if backend is not None else None
        if confirmed is not None:
            self.store.append(confirmed, status=confirmed.outcome.value)
            return
        salvage = getattr(backend, "salvage", None)
        artifacts = salvage(job, record.attempt) if salvage is not None else ()
        if job.side_effects_possible or not self.retry_lost or record.cancel_requested:
            why = ("a side effect may have happened before the channel dropped; not retried, "
                   "resolve it after checking" if job.side_effects_possible
                   else "lost and not retried")
            basis: OutcomeBasis = "unknown"
            receipt = static_receipt(job, backend=self._info(record), outcome=Outcome.UNKNOWN,
                                     detail=why, attempt=record.attempt)
            self.store.append(receipt.model_copy(update={
                "outcome_basis": basis, "artifacts": artifacts,
                "side_effects_possible": job.side_effects_possible,
                "provider_ids": record.provider_ids}), status=Outcome.UNKNOWN.value)
            return
        if artifacts:
            note = static_receipt(job, backend=self._info(record), outcome=Outcome.LOST,
                                  detail="salvaged before retry", attempt=record.attempt)
            self.store.append(note.model_copy(update={"artifacts": artifacts,
                                                      "outcome_basis": "unknown"}), status="lost")
        self.store.requeue(record.job_id)

    # -- workers -----------------------------------------------------------------------------

    def _worker(self) -> None:
        # A worker outlives every job: whatever one job raises (the backend, the store, a
        # receipt that cannot be saved), the job ends with a receipt where one can be written,
        # and the thread goes on to the next job. A dead worker left every later job queued.
        while not self._stop.is_set():
            try:
                job_id = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            try:
                self._run_one(job_id)
            except Exception:  # noqa: BLE001 - logged; the job's lease lets recovery find it
                _log.exception("job worker: job %s failed outside its run", job_id)

    def _run_one(self, job_id: str) -> None:
        record = self.store.claim(job_id, self.owner, self.lease_s)
        if record is None:
            return
        token = CancelToken()
        with self._lock:
            self._tokens[job_id] = token
        try:
            fresh = self.store.get(job_id)
            if fresh is not None and fresh.cancel_requested:
                token.cancel(fresh.cancel_requested)  # asked between our claim and the token
            backend = self.backends[record.backend]
            try:
                receipt = backend.run(record.job, cancel=token, attempt=record.attempt)
            except EscalationError as exc:
                receipt = self._error_receipt(record, f"[{exc.code}] {exc.message}")
            except Exception as exc:  # a backend bug: recorded, never swallowed silently
                _log.exception("job %s: backend failure", job_id)
                receipt = self._error_receipt(
                    record, f"backend failure: {type(exc).__name__}: {exc}")
            try:
                self._finish(record, receipt)
            except Exception as exc:  # the receipt itself could not be stored
                _log.exception("job %s: receipt could not be stored", job_id)
                self._finish(record, self._error_receipt(
                    record, f"the run's receipt could not be stored: {type(exc).__name__}: "
                            f"{exc}"[:2000]))
        finally:
            with self._lock:
                self._tokens.pop(job_id, None)

    def _error_receipt(self, record: JobRecord, detail: str) -> Receipt:
        """``sandbox_error`` for a run that failed on our side; its text made storable (a
        message may quote a name that is not valid UTF-8)."""
        detail = detail.encode("utf-8", "backslashreplace").decode("utf-8")
        receipt = static_receipt(record.job, backend=self._info(record),
                                 outcome=Outcome.SANDBOX_ERROR, detail=detail,
                                 attempt=record.attempt)
        # We cannot tell what the job did before the failure: a writer stays "possible".
        return receipt.model_copy(update={
            "side_effects_possible": record.job.side_effects_possible,
            "outcome_basis": "unknown" if record.job.side_effects_possible else "observed"})

    def _heartbeat(self) -> None:
        while not self._stop.wait(max(0.05, self.lease_s / 3)):
            self.store.renew(self.owner, self.lease_s)
            with self._lock:
                running = list(self._tokens.items())
            for job_id, token in running:
                record = self.store.get(job_id)
                if record is not None and record.cancel_requested and not token.cancelled:
                    token.cancel(record.cancel_requested)

    def _finish(self, record: JobRecord, receipt: Receipt) -> None:
        self.store.append(receipt, status=receipt.outcome.value)
        with self._done:
            self._done.notify_all()

    def _wait(self, job_id: str, deadline: float | None) -> JobRecord:
        while True:
            record = self.status(job_id)
            if record.terminal:
                return record
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return record
            with self._done:
                self._done.wait(0.05 if left is None else min(0.05, left))

    def _result(self, record: JobRecord) -> JobResult:
        receipt = self.store.latest(record.job_id)
        if receipt is None:
            raise EscalationError(f"job {record.job_id} is {record.status} without a receipt",
                                  code="E901")
        return JobResult(record, receipt)

    def _info(self, record: JobRecord) -> BackendInfo:
        backend = self.backends.get(record.backend)
        if backend is None:
            return BackendInfo(name=record.backend, version="unknown",
                               isolation=Isolation.PROCESS, mechanism="not configured here")
        caps = backend.capabilities()
        return BackendInfo(name=caps.name, version=str(getattr(backend, "version", "n/a")),
                           isolation=caps.isolation, mechanism=caps.mechanism)

    def __enter__(self) -> "JobManager":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
