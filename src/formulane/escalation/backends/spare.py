"""The next cold job's resources, prepared ahead of time: uid slot, cgroup, workspace, /job.

Contract: `SpareSlot(backend)` holds at most one set of `Resources` made by the backend's own
`_allocate` (the same code a cold run uses, with the default limits) in one background thread,
asked for with `want` after a cold run has ended, so the ~1.5 ms of allocation (taking a uid
slot and checking that nothing runs under it, re-basing the slot's cgroup, mounting and laying
out the tmpfs workspace, writing the bootstrap) is off the next cold job's path. Nothing is
started in it: no process, no job file. `take(job, attempt)` hands it to one job whose
workspace size it has (claiming the box under the job's name, so lost-job salvage finds it, as
for the warm pool) or returns None, and the job allocates for itself as before; the job's own
limits are written to the cgroup when its files are staged. A spare is used by at most one job.
`close` joins the thread and releases whatever is held. It holds one uid slot while it waits.
"""

from __future__ import annotations

import threading
import uuid
from typing import TYPE_CHECKING

from ..contract import Limits, SandboxJob

if TYPE_CHECKING:
    from .runner import LocalRunner, Resources


class SpareSlot:
    def __init__(self, backend: LocalRunner, limits: Limits | None = None) -> None:
        self.backend = backend
        self.limits = limits or Limits()
        self.errors: list[str] = []
        self.taken = 0
        self._cond = threading.Condition()
        self._res: Resources | None = None
        self._wanted = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def take(self, job: SandboxJob, attempt: int) -> Resources | None:
        if job.limits.workspace_bytes != self.limits.workspace_bytes:
            return None  # the workspace tmpfs is sized at mount time; keep it for another job
        with self._cond:
            res, self._res = self._res, None
        if res is None:
            return None
        assert res.workspace is not None
        res.workspace.claim(f"{job.job_id}-a{attempt}")
        self.taken += 1
        return res

    def want(self) -> None:
        """Prepare a spare if none is held (a notification; the work is the thread's)."""
        with self._cond:
            if self._closed or self._res is not None:
                return
            self._wanted = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="formulane-spare",
                                                daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        from .runner import Resources

        while True:
            with self._cond:
                while not self._wanted and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                self._wanted = False
            res = Resources()
            try:
                # The runner's own allocation step, shared with its cold path (package-internal).
                self.backend._allocate(  # pyright: ignore[reportPrivateUsage]
                    None, 0, res, name=f"spare-{uuid.uuid4().hex[:12]}", limits=self.limits)
            except Exception as exc:  # recorded; jobs allocate for themselves meanwhile
                res.release(self.backend.uids)
                self.errors.append(f"{type(exc).__name__}: {exc}")
                continue
            with self._cond:
                extra = res if self._closed or self._res is not None else None
                if extra is None:
                    self._res = res
                    self._cond.notify_all()
            if extra is not None:
                extra.release(self.backend.uids)

    def wait_ready(self, timeout: float = 30.0) -> bool:
        """Block until a spare is held (tests, benchmarks)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._res is not None or self._closed, timeout)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
        with self._cond:
            res, self._res = self._res, None
        if res is not None:
            res.release(self.backend.uids)
