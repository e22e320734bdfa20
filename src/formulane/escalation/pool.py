"""A warm pool: sandboxes started ahead of time, each used by exactly one job.

Contract: `WarmPool` keeps ``size`` bubblewrap sandboxes fully built and waiting at their gate
(namespaces, mounts, interpreter started, cgroup joined), filled by one background thread. A
job that fits the pool's fixed shape (same environment, no network, no stdin, no extra
environment variables, no read-only input files, the pool's workspace and /tmp sizes) takes
one: the host stages its files, sets its limits on the sandbox's cgroup and sends the
configuration, so the job pays only for running. A pooled sandbox is never reused: no state
crosses from one job to the next. Jobs that do not fit run cold, as usual. Refills wait until a
pooled job has ended (`done`) unless the pool is down to half, so pre-starting does not compete
with running jobs on a small machine; a job that finds the pool empty while a filler is
finishing a sandbox waits for it up to ``take_wait_s`` (10 ms) before running cold. `close` kills and releases every waiting sandbox and joins
the filler threads.
"""

from __future__ import annotations

# pyright: reportPrivateUsage=false
# (the warm pool drives the local runner's own steps (`_allocate`, `_spawn`), package-internal.)

import select
import threading
import uuid
from collections import deque
from typing import TYPE_CHECKING

from .backends.cgroups import instance_name
from .backends.supervisor import Running
from .contract import Limits, RuntimeSpec, SandboxJob
from .environments import Environment

if TYPE_CHECKING:
    from .backends.runner import LocalRunner, Resources


class WarmPool:
    def __init__(self, backend: "LocalRunner", *, size: int = 4,
                 environment: str = "default", limits: Limits | None = None,
                 fillers: int = 1, take_wait_s: float = 0.010) -> None:
        if size < 1 or fillers < 1:
            raise ValueError("a warm pool needs size >= 1 and fillers >= 1")
        self.backend = backend
        self.size = size
        self.env = backend.environments.get(environment)
        self.limits = limits or Limits()
        self.template = SandboxJob(idempotency_key="warm-pool", tenant="-", principal="-",
                                   purpose="warm pool template", code="pass",
                                   runtime=RuntimeSpec(environment=environment), limits=self.limits)
        self._ready: deque[tuple["Resources", Running]] = deque()
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self.errors: list[str] = []
        self.taken = 0
        #: CPU the sandboxes' interpreters used inside their job groups while pre-starting
        #: (excluded from the jobs' receipts; benchmarks add it to account for everything).
        self.prestart_cpu_s = 0.0
        self._starting = 0
        self._in_use = 0  # pooled jobs running now
        self.low_water = size // 2
        #: How long a job that finds the pool empty waits for a sandbox a filler is finishing
        #: before it runs cold: a cold start costs ~20 ms and its CPU competes with the filler.
        self.take_wait_s = take_wait_s
        # Sandbox start-up is mostly kernel work (namespaces, mounts); a few fillers overlap it.
        self._threads = [threading.Thread(target=self._fill, name=f"formulane-pool-filler-{i}",
                                          daemon=True) for i in range(fillers)]
        for thread in self._threads:
            thread.start()

    def fits(self, job: SandboxJob, env: Environment) -> bool:
        return (env.digest == self.env.digest and job.network.mode == "none"
                and job.stdin is None and not job.env and job.state == "ephemeral"
                and all(f.mode == "rw" for f in job.files)
                and job.limits.workspace_bytes == self.limits.workspace_bytes
                and job.limits.tmp_bytes == self.limits.tmp_bytes)

    def take(self, job: SandboxJob, env: Environment) -> tuple["Resources", Running] | None:
        if not self.fits(job, env):
            return None
        wait = self.take_wait_s
        while True:
            with self._cond:
                if not self._ready and self._starting and wait > 0:
                    self._cond.wait_for(
                        lambda: self._ready or not self._starting or self._stop.is_set(), wait)
                    wait = 0.0  # once per job
                if not self._ready:
                    return None
                res, running = self._ready.popleft()
                # No wake-up for the fillers here: a refill started now would compete with this
                # job for the CPUs and the GIL. `done` wakes them once the job has ended, or a
                # filler wakes on its own when the pool is down to its low-water mark.
            if _alive(running):
                break
            self._discard(res, running)
        with self._cond:
            self._in_use += 1
        # Lost-job salvage looks workspaces up by job id and attempt: leave the name in the box
        # (its own tmpfs, outside what the sandbox mounts; a link on the host disk cost ~2 ms).
        assert res.workspace is not None
        res.workspace.claim(f"{job.job_id}-a1")
        self.taken += 1
        return res, running

    def done(self) -> None:
        """A job that took a sandbox has ended (its receipt is built): refill now."""
        with self._cond:
            self._in_use = max(0, self._in_use - 1)
            self._cond.notify_all()

    def _full(self) -> bool:
        have = len(self._ready) + self._starting
        if have >= self.size:
            return True
        # While pooled jobs are running, refill only below the low-water mark (half the pool):
        # pre-starting is mostly CPU, and on a small machine it slows the running jobs down.
        return self._in_use > 0 and len(self._ready) > self.low_water

    def wait_ready(self, count: int | None = None, timeout: float = 30.0) -> bool:
        """Block until ``count`` (default: size) sandboxes are waiting (benchmarks, tests)."""
        want = self.size if count is None else count
        with self._cond:
            return self._cond.wait_for(lambda: len(self._ready) >= want or self._stop.is_set(),
                                       timeout)

    @property
    def ready(self) -> int:
        with self._cond:
            return len(self._ready)

    def _fill(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                while self._full() and not self._stop.is_set():
                    self._cond.wait(0.5)
                if self._stop.is_set():
                    return
                self._starting += 1
            try:
                item = self._prestart()
            except Exception as exc:  # recorded and retried later; jobs run cold meanwhile
                with self._cond:
                    self._starting -= 1
                self.errors.append(f"{type(exc).__name__}: {exc}")
                self._stop.wait(1.0)
                continue
            with self._cond:
                self._starting -= 1
                if self._stop.is_set():
                    self._discard(*item)
                    return
                self._ready.append(item)
                self._cond.notify_all()

    def _prestart(self) -> tuple["Resources", Running]:
        from .backends.runner import Resources

        res = Resources()
        try:
            self.backend._allocate(None, 0, res, name=f"pool-{uuid.uuid4().hex[:12]}",
                                   limits=self.limits)
            running = self.backend._spawn(self.template, self.env, res)
            if res.cgroup is not None:
                # The interpreter joined its group while starting: that CPU is the pool's, not
                # the job's. Count from here (the sandbox waiting at its gate), as a job's
                # receipt should, and keep the start-up's share for `prestart_cpu_s`.
                used = res.cgroup.stats().cpu_ns
                res.cgroup.rebase()
                with self._cond:
                    self.prestart_cpu_s += (used or 0) / 1e9
        except BaseException:
            res.release(self.backend.uids)
            raise
        return res, running

    def _discard(self, res: "Resources", running: Running) -> None:
        running.close()
        running.sweep()
        res.release(self.backend.uids)

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        for thread in self._threads:
            thread.join()
        with self._cond:
            items = list(self._ready)
            self._ready.clear()
        for res, running in items:
            self._discard(res, running)

    def __repr__(self) -> str:
        return f"WarmPool(size={self.size}, ready={self.ready}, taken={self.taken}, " \
               f"instance={instance_name()})"


def _alive(running: Running) -> bool:
    ready, _, _ = select.select([running.pidfd], [], [], 0)
    return not ready
