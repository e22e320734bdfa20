"""Sessions: a kept-alive interpreter with a persistent workspace and an idle TTL.

Contract: a job with ``state="session"`` and a ``session_id`` runs inside the session of that
(tenant, principal, session id), started on first use with the first job's environment,
network and limits (later jobs must ask for the same, or get E603; another principal gets
E601). Variables, imports and workspace files persist between calls; each call gets its own
receipt (stdout/stderr of that call, artifacts as they are now, ``session_id`` set,
``side_effects_possible`` true because state persists). A call that times out, floods output,
is cancelled or kills the interpreter ends the whole session: the host cannot interrupt Python
code safely, so it kills the sandbox and says so. Sessions idle longer than their TTL are
closed by one reaper thread; `close` ends everything and joins it.
"""

from __future__ import annotations

# pyright: reportPrivateUsage=false
# (a session drives the local runner's own steps (`_allocate`, `_stage`, `_spawn`, `_config_frame`, `_collect`), package-internal.)

import json
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..jsonshape import is_object
from ..errors import EscalationError
from .backends.base import utcnow
from .backends.capture import StreamCapture
from .backends.classifier import Verdict, classify
from .backends.supervisor import Running, Supervised
from .contract import CancelToken, Outcome, Receipt, SandboxJob
from .environments import Environment

if TYPE_CHECKING:
    from .backends.runner import LocalRunner, Resources

_START_TIMEOUT_S = 15.0


@dataclass
class Session:
    key: tuple[str, str, str]
    template: SandboxJob
    env: Environment
    res: "Resources"
    running: Running
    ttl_s: float
    last_used: float = field(default_factory=time.monotonic)
    calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    alive: bool = True


def _captures(running: Running, job: SandboxJob) -> dict[int, StreamCapture]:
    return {running.out_r: StreamCapture(job.limits.stdout_max_bytes, job.limits.stream_kill_bytes),
            running.err_r: StreamCapture(job.limits.stderr_max_bytes, job.limits.stream_kill_bytes)}


def _pending(running: Running) -> bool:
    import select
    ready, _, _ = select.select([running.out_r, running.err_r], [], [], 0)
    return bool(ready)


def _frame_ready(running: Running) -> bool:
    buf = running.status_buffer
    return len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[:4], "big")


class SessionManager:
    def __init__(self, backend: "LocalRunner", *, reap_interval_s: float = 0.5) -> None:
        self.backend = backend
        self.reap_interval_s = reap_interval_s
        self._sessions: dict[tuple[str, str, str], Session] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reaper: threading.Thread | None = None
        # bwrap --die-with-parent ties a sandbox to the *thread* that started it; sessions
        # outlive the caller's thread (a web request), so one long-lived thread starts them.
        self._spawner = ThreadPoolExecutor(max_workers=1,
                                           thread_name_prefix="formulane-session-spawner")

    # -- public ------------------------------------------------------------------------------

    def run(self, job: SandboxJob, *, cancel: CancelToken | None = None) -> Receipt:
        if job.state != "session" or job.session_id is None:
            raise EscalationError("session jobs need state='session' and a session_id",
                                  code="E603")
        pre = self.backend.precheck(job, 1)
        if isinstance(pre, Receipt):
            return pre.model_copy(update={"session_id": job.session_id})
        env, deadline = pre
        for _ in range(3):
            session = self._session_for(job, env)
            with session.lock:
                if session.alive:
                    return self._call(session, job, deadline, cancel)
            # It expired while we waited for it: the next lookup starts a fresh one.
        raise EscalationError(f"session {job.session_id!r} keeps ending before it can run",
                              code="E602")

    def active(self) -> list[str]:
        with self._lock:
            # Listed until fully shut down, so "not active" means "no process left".
            return sorted(k[2] for k in self._sessions)

    def end(self, tenant: str, principal: str, session_id: str) -> bool:
        key = (tenant, principal, session_id)
        with self._lock:
            session = self._sessions.get(key)
        if session is None:
            return False
        with session.lock:
            self._shutdown(session)
        with self._lock:
            if self._sessions.get(key) is session:
                del self._sessions[key]
        return True

    def close(self) -> None:
        self._stop.set()
        if self._reaper is not None:
            self._reaper.join()
            self._reaper = None
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            with session.lock:
                self._shutdown(session)
        self._spawner.shutdown(wait=True)

    # -- internals ---------------------------------------------------------------------------

    def _session_for(self, job: SandboxJob, env: Environment) -> Session:
        key = (job.tenant, job.principal, job.session_id or "")
        with self._lock:
            for other_key, other in self._sessions.items():
                if other_key[2] == key[2] and other_key != key and other.alive:
                    raise EscalationError(f"session {key[2]!r} belongs to another principal",
                                          code="E601")
            session = self._sessions.get(key)
            if session is not None and session.alive:
                self._check_compatible(session, job, env)
                return session
            session = self._start(job, env, key)
            self._sessions[key] = session
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, daemon=True,
                                                name="formulane-session-reaper")
                self._reaper.start()
            return session

    def _check_compatible(self, session: Session, job: SandboxJob, env: Environment) -> None:
        t = session.template
        problems: list[str] = []
        if env.digest != session.env.digest:
            problems.append("environment")
        if job.network != t.network:
            problems.append("network")
        if job.limits != t.limits:
            problems.append("limits")
        if job.env != t.env:
            problems.append("env")
        if job.files:
            problems.append("files (send input files with the session's first call)")
        if problems:
            raise EscalationError(f"session {job.session_id!r} was started with a different "
                                  f"{', '.join(problems)}", code="E603",
                                  hint="use the same runtime, network and limits, or a new "
                                       "session_id")

    def _start(self, job: SandboxJob, env: Environment, key: tuple[str, str, str]) -> Session:
        from .backends.runner import Resources

        backend = self.backend
        res = Resources(keep_workspace=True)
        try:
            backend._allocate(job, 1, res, name=f"session-{uuid.uuid4().hex[:12]}")
            backend._stage(job, res, 1)
            running = self._spawner.submit(backend._spawn, job, env, res).result()
        except BaseException:
            res.keep_workspace = False
            res.release(backend.uids)
            raise
        session = Session(key, job, env, res, running, job.session_ttl_s)
        try:
            running.configure(backend._config_frame(job, env, res, mode="session"),
                              keep_open=True)
            captures = _captures(running, job)
            reason = running.pump(captures, deadline=time.monotonic() + _START_TIMEOUT_S,
                                  cancel=None, until=lambda: _frame_ready(running))
            ready = reason == "condition" and json.loads(running.take_frame() or b"{}")
        except (BrokenPipeError, ValueError):
            ready = False
            captures = _captures(running, job)
        if not ready:
            stderr = captures[running.err_r].text()[-500:]
            self._shutdown(session)
            raise EscalationError(f"session {job.session_id!r} failed to start: {stderr}",
                                  code="E602")
        return session

    def _call(self, session: Session, job: SandboxJob, deadline: float,
              cancel: CancelToken | None) -> Receipt:
        backend = self.backend
        running = session.running
        session.calls += 1
        started_at = utcnow()
        t0 = time.monotonic()
        captures = _captures(running, job)
        request = json.dumps({"id": session.calls, "code": job.source,
                              "inputs": job.inputs}).encode()
        reply: dict[str, object] = {}
        try:
            running.send(request)
            reason = running.pump(captures, deadline=deadline, cancel=cancel,
                                  until=lambda: _frame_ready(running))
            if reason == "condition":
                raw = running.take_frame() or b"{}"
                parsed = json.loads(raw)
                reply = parsed if is_object(parsed) else {}
                # The server flushed both streams before replying: whatever the pipes still
                # hold belongs to this call; after that the call's output is complete.
                running.pump(captures, deadline=time.monotonic() + 0.02, cancel=None,
                             until=lambda: not _pending(running))
                for capture in captures.values():
                    capture.eof = True
        except (BrokenPipeError, ValueError):
            reason = "exited" if running.exited else "broken"
        ended = reason != "condition" or bool(reply.get("exit"))
        killed = reason in ("timeout", "cancelled", "output_limit", "broken")
        if killed:
            running.terminate(job.limits.kill_grace_s)
        survivors = running.sweep()[1] if ended else 0
        stats = session.res.cgroup.stats() if session.res.cgroup is not None else None
        if reason == "condition":
            ok = bool(reply.get("ok"))
            verdict = Verdict(Outcome.SUCCEEDED, "observed") if ok else classify(
                reason="exited", started=True, returncode=1, wrapper=False,
                stderr=captures[running.err_r].tail_text(16384) + "\n" + str(
                    reply.get("type", "")) + ": " + str(reply.get("message", "")),
                network_mode=job.network.mode, provided_modules=session.env.modules,
                pids_max_hits=stats.pids_max_hits if stats else 0)
        else:
            verdict = classify(
                reason="timeout" if reason == "broken" else reason,
                started=True, returncode=running.returncode, wrapper=True,
                stderr=captures[running.err_r].tail_text(16384),
                oom_kills=stats.oom_kills if stats else 0,
                pids_max_hits=stats.pids_max_hits if stats else 0,
                network_mode=job.network.mode, provided_modules=session.env.modules,
                kill_confirmed=survivors == 0,
                cancel_reason=cancel.reason if cancel is not None else "")
        if ended:
            verdict.detail = (verdict.detail + "; the session ended").lstrip("; ")
        sup = Supervised(returncode=running.returncode, started=True, events=[reason],
                         stdout=captures[running.out_r], stderr=captures[running.err_r],
                         wall_s=time.monotonic() - t0, cpu_s=None, group_killed=killed,
                         survivors=survivors)
        artifacts = backend._collect(job, session.env, session.res, verdict, session.calls)
        peak = stats.peak_memory_bytes if stats else None
        receipt = backend.build_receipt(job, session.env, session.res, sup, verdict, artifacts,
                                        attempt=1, started_at=started_at, peak=peak, calls=(),
                                        info=backend.backend_info(), session_id=job.session_id)
        session.last_used = time.monotonic()
        if ended:
            self._shutdown(session)
            with self._lock:
                if self._sessions.get(session.key) is session:
                    del self._sessions[session.key]
        return receipt

    def _shutdown(self, session: Session) -> None:
        if not session.alive:
            return
        session.alive = False
        running = session.running
        if running.gate_w is not None:
            try:
                os.close(running.gate_w)  # EOF: the session server exits on its own
            except OSError:
                pass
            running.gate_w = None
        if not running.exited:
            drain = {running.out_r: StreamCapture(4096, 1 << 30),
                     running.err_r: StreamCapture(4096, 1 << 30)}
            reason = running.pump(drain, deadline=time.monotonic() + 1.0, cancel=None)
            if reason != "exited":
                running.terminate(0.2)
        running.sweep()
        running.close()
        session.res.keep_workspace = False
        session.res.release(self.backend.uids)

    def _reap(self) -> None:
        while not self._stop.wait(self.reap_interval_s):
            now = time.monotonic()
            with self._lock:
                doomed = [(k, s) for k, s in self._sessions.items()
                          if now - s.last_used > s.ttl_s and not s.lock.locked()]
            for key, session in doomed:
                with session.lock:
                    self._shutdown(session)
                with self._lock:
                    if self._sessions.get(key) is session:
                        del self._sessions[key]
