"""The local runner shared by the bubblewrap and plain-process backends: one job, start to receipt.

Contract: `LocalRunner.run` refuses what the machine cannot give (E601), compiles the code on
the host first (a syntax error is answered without spawning anything), resolves the declared
environment, then per job: a dedicated uid, a cgroup with the limits already set, a
host-backed workspace with the input files staged, a read-only job directory (bootstrap, code,
helper module, broker ticket; the input values travel in the configuration frame); a cold run
takes these from the `SpareSlot` prepared after the previous cold run when one fits. It spawns
through the subclass's `launch_argv`, sends the configuration only after the interpreter is in
the cgroup, builds the receipt's fixed parts while the job runs, supervises, ends the tree,
verifies no survivor, classifies, copies the declared artifacts into the artifact store
(``complete`` is True on success, or when the job's own manifest vouches for the bytes; None
otherwise), and releases every resource in `finally`, so a failure inside the runner cannot
leak a process, a mount, a cgroup or a uid.
"""

from __future__ import annotations

import importlib.util
import marshal
import math
import mimetypes
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import EscalationError
from ..artifacts import ArtifactStore
from ..capabilities import Capabilities, probe
from ..contract import (
    ArtifactRecord, BackendInfo, BrokerCall, CancelToken, CleanupRecord, Enforcement, Limits,
    MiB, Outcome, Receipt, ResultValue, SandboxJob,
)
from ..environments import Environment, EnvironmentStore
from . import cgroups, workspace as workspaces
from .base import (
    RESULT_MAX_BYTES, SandboxBackend, input_digests, last_expression, result_value,
    static_receipt, syntax_problem, utcnow,
)
from .capture import StreamCapture
from .cgroups import CgroupSupport, JobCgroup, LaunchGroup
from .classifier import ExitRecord, Verdict, classify
from .seccomp import build_filter
from .spare import SpareSlot
from .supervisor import Launch, Running, Supervised, UidPool, control_pipes, spawn
from .workspace import Workspace

if TYPE_CHECKING:
    from ..pool import WarmPool
    from ..sessions import SessionManager

_HERE = Path(__file__).parent
BOOTSTRAP_SOURCE = (_HERE / "bootstrap.py").read_text()
JOBKIT_SOURCE = (_HERE / "jobkit.py").read_text()


def compiled_bootstrap(path: str) -> bytes:
    """The bootstrap as a ``.pyc`` the interpreter runs directly (``python bootstrap.pyc``),
    compiled for the file name ``path`` it has inside the sandbox. Compiling its source took
    ~2 ms of every sandbox's start-up. Only for an environment running this very interpreter
    version (the bytecode format is the host's); the source is written next to it, so
    tracebacks through the bootstrap read the same as before."""
    code = compile(BOOTSTRAP_SOURCE, path, "exec", dont_inherit=True, optimize=0)
    # Header: magic, flags, then two words a directly-run .pyc never checks (mtime, size).
    return importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(code)
#: Without a memory cgroup the address-space rlimit is the memory limit; with one, the rlimit
#: is only a backstop and the cgroup (which OOM-kills, observably) is what trips first.
AS_HEADROOM = 1024 * MiB
#: The bootstrap's monitor (see bootstrap.py) is one task of the job's cgroup and uid beyond
#: what the job may start itself: pids.max and RLIMIT_NPROC are raised by this much.
MONITOR_TASKS = 1
DEFAULT_UID_LOCKS = Path("/run/formulane/uid-locks")


class BrokerChannel(Protocol):
    def close(self) -> tuple[BrokerCall, ...]: ...


class JobBroker(Protocol):
    def open_channel(self, job: SandboxJob, *, socket_path: Path, peer_uid: int | None,
                     expires_in_s: float) -> tuple[BrokerChannel, str]: ...


@dataclass
class Resources:
    """Everything one run holds; `release` frees all of it, whatever state it is in."""

    uid: int | None = None
    uid_lock: int | None = None
    cgroup: JobCgroup | None = None
    workspace: Workspace | None = None
    jobdir: Path | None = None
    fds: list[int] = field(default_factory=list[int])
    ro_files: list[tuple[str, Path]] = field(default_factory=list[tuple[str, Path]])
    keep_workspace: bool = False
    cgroup_removed: bool = True
    cgroup_shared: bool = False  # a uid slot's group, kept (empty) for the slot's next job
    used_cgroup: bool = False  # for the receipt, after `release` has let go of the group
    workspace_removed: bool = False

    def release(self, pools: UidPool | None) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()
        if self.cgroup is not None:
            empty = self.cgroup.kill_all(5.0)
            if self.cgroup_shared:
                self.cgroup_removed = empty
            else:
                self.cgroup_removed = self.cgroup.remove()
            self.cgroup = None
        if self.workspace is not None and not self.keep_workspace:
            self.workspace_removed = self.workspace.destroy()
        if self.uid_lock is not None and pools is not None:
            pools.release(self.uid_lock)
            self.uid_lock = None


class LocalRunner(SandboxBackend):
    """Shared machinery; subclasses say how the command line and the paths look."""

    wrapper = True  # the spawned command wraps the job (bwrap) rather than being it
    #: `compiled_bootstrap` for a backend whose job directory has one fixed path inside.
    bootstrap_pyc: bytes | None = None
    #: v1 controllers a job group joins. Each is one more (slow) migration per job, so only
    #: what the backend needs: memory and pids limits, cpuacct for the receipt's CPU time
    #: (rusage misses the job when bwrap's namespace init reaps it); bubblewrap kills through
    #: its pid namespace, the plain-process backend also wants the freezer.
    cgroup_controllers: tuple[str, ...] = ("memory", "pids", "cpuacct")

    def __init__(self, state_dir: Path | str, *, environments: EnvironmentStore | None = None,
                 artifacts: ArtifactStore | None = None, broker: JobBroker | None = None,
                 uid_first: int = 190_000, uid_count: int = 64, use_cgroups: bool = True,
                 use_tmpfs: bool = True, keep_workspaces: bool = False,
                 reap_stale_workspaces: bool = True, uid_lock_dir: Path | str | None = None,
                 spare: bool = True, artifact_max_depth: int = workspaces.MAX_WALK_DEPTH,
                 artifact_max_entries: int = workspaces.MAX_WALK_ENTRIES,
                 result_max_bytes: int = RESULT_MAX_BYTES) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.state_dir, 0o711)
        self.environments = environments or EnvironmentStore(self.state_dir / "environments")
        self.artifacts = artifacts or ArtifactStore(self.state_dir / "artifacts")
        self.broker = broker
        self.caps: Capabilities = probe()
        found = cgroups.discover() if use_cgroups else CgroupSupport(
            None, reason="disabled by configuration")
        self.cg_support = found.only(self.cgroup_controllers)
        if found.version is not None:
            cgroups.reap_stale(found)  # every controller: dead instances may have used others
        # uid locks are machine-wide, not per state directory: two backends must never hand
        # the same uid to two live jobs (RLIMIT_NPROC and the survivor check are per uid, and
        # `UidPool.acquire` kills what runs under a uid it has just locked). /run/formulane is
        # created when /run is writable (root); testing /run/formulane itself, as before, fell
        # back to per-state-directory locks whenever it did not exist yet.
        locks = Path(uid_lock_dir) if uid_lock_dir else (
            DEFAULT_UID_LOCKS if os.access(DEFAULT_UID_LOCKS.parent.parent, os.W_OK)
            else self.state_dir / "uids")
        self.uids = UidPool(locks, uid_first, uid_count) if self.caps.can_switch_uid else None
        self.use_tmpfs = use_tmpfs and self.caps.can_mount_tmpfs
        self.keep_workspaces = keep_workspaces
        if artifact_max_depth < 1 or artifact_max_entries < 1:
            raise ValueError("artifact walk limits must be at least 1")
        self.artifact_max_depth = artifact_max_depth
        self.artifact_max_entries = artifact_max_entries
        if result_max_bytes < 1:
            raise ValueError("result_max_bytes must be at least 1")
        self.result_max_bytes = result_max_bytes
        self.workspaces_root = self.state_dir / "workspaces"
        self.workspaces_root.mkdir(exist_ok=True)
        os.chmod(self.workspaces_root, 0o711)
        if reap_stale_workspaces:
            # A job manager passes False and reaps after it has salvaged lost jobs' artifacts.
            self.reap_workspaces()
        self._lock = threading.Lock()
        self.pool: WarmPool | None = None
        self._sessions: SessionManager | None = None
        self._slot_groups: dict[int, JobCgroup] = {}
        self._tag = secrets.token_hex(4)  # several backends may share one process
        self._launch_group: LaunchGroup | None = None
        #: the next cold job's uid slot, cgroup and workspace, prepared after each cold run
        self.spare: SpareSlot | None = SpareSlot(self) if spare else None

    # -- subclass hooks --------------------------------------------------------------------

    def launch_argv(self, job: SandboxJob, env: Environment, res: Resources, gate: int,
                    status: int) -> tuple[list[str], dict[str, str], list[int]]:
        raise NotImplementedError

    def workspace_path(self, res: Resources) -> str:
        raise NotImplementedError

    def job_path(self, res: Resources) -> str:
        raise NotImplementedError

    def env_paths(self, env: Environment) -> list[str]:
        raise NotImplementedError

    def confinement(self, job: SandboxJob, env: Environment, res: Resources) -> dict[str, Any] | None:
        return None

    def network_enforcement(self, job: SandboxJob) -> str:
        raise NotImplementedError

    def backend_info(self) -> BackendInfo:
        caps = self.capabilities()
        return BackendInfo(name=self.name, version=self.caps.bwrap_version or "n/a",
                           isolation=caps.isolation, mechanism=caps.mechanism)

    def reap_workspaces(self) -> int:
        """Unmount and delete workspaces left by dead processes."""
        return workspaces.reap(self.workspaces_root)

    def salvage(self, job: SandboxJob, attempt: int) -> tuple[ArtifactRecord, ...]:
        """Artifacts of a lost run, from its surviving workspace (``complete`` unknown unless
        the job's manifest vouches for the bytes). The workspace is deleted afterwards."""
        name = f"{job.job_id}-a{attempt}"
        box = workspaces.find(self.workspaces_root, name)
        if box is None:
            return ()
        info = (box / workspaces.WORK_DIR).stat()
        ws = Workspace(box, info.st_uid, info.st_gid, workspaces.is_mountpoint(box))
        ws.ro_paths = [f.path for f in job.files if f.mode == "ro"]
        try:
            env = self.environments.resolve(job.runtime)
            verdict = Verdict(Outcome.LOST, "unknown")
            res = Resources(workspace=ws)
            return self._collect(job, env, res, verdict, attempt)
        finally:
            ws.destroy()

    # -- the run -----------------------------------------------------------------------------

    def run(self, job: SandboxJob, *, cancel: CancelToken | None = None,
            attempt: int = 1) -> Receipt:
        self.check(job)
        if job.state == "session":
            return self.session_manager().run(job, cancel=cancel)
        pre = self.precheck(job, attempt)
        if isinstance(pre, Receipt):
            return pre
        env, wall_deadline = pre
        info = self.backend_info()
        res = Resources(keep_workspace=self.keep_workspaces)
        channel: BrokerChannel | None = None
        running: Running | None = None
        calls: tuple[BrokerCall, ...] = ()
        started_at = utcnow()
        pool = self.pool
        slot = self.spare
        warm = None
        try:
            warm = pool.take(job, env) if pool is not None else None
            if warm is not None:
                res, running = warm
                res.keep_workspace = self.keep_workspaces
                self._stage(job, res, attempt)
            else:
                spare = slot.take(job, attempt) if slot is not None else None
                if spare is not None:
                    res = spare
                    res.keep_workspace = self.keep_workspaces
                else:
                    self._allocate(job, attempt, res)
                self._stage(job, res, attempt)
            if job.broker_tools:
                channel = self._open_broker(job, res, wall_deadline)
            if running is None:
                running = self._spawn(job, env, res)
            try:
                running.configure(self._config_frame(job, env, res))
            except BrokenPipeError:
                pass  # the sandbox died during setup; supervision reports sandbox_error
            # While the job starts: the receipt's parts that do not depend on how it ends
            # (~0.1 ms that used to follow its end, on the caller's path).
            parts = self.receipt_parts(job, res)
            sup = self._supervise(running, job.limits, wall_deadline, cancel)
            if channel is not None:
                calls = channel.close()
                channel = None
            verdict = self._verdict(job, env, res, sup, cancel)
            artifacts = self._collect(job, env, res, verdict, attempt)
            result = self._result(res, sup)
            peak = self._peak(res, running, sup)
            res.release(self.uids)
            return self.build_receipt(job, env, res, sup, verdict, artifacts, attempt=attempt,
                                      started_at=started_at, peak=peak, calls=calls, info=info,
                                      parts=parts, result=result)
        finally:
            if channel is not None:
                channel.close()
            if running is not None:
                running.close()
            res.release(self.uids)
            if warm is not None and pool is not None:
                pool.done()
            elif slot is not None:
                slot.want()  # the next cold job's resources, prepared off its path

    def precheck(self, job: SandboxJob, attempt: int) -> Receipt | tuple[Environment, float]:
        """Host-side checks before anything is spawned: a receipt if the job ends here."""
        info = self.backend_info()
        problem = syntax_problem(job.source, job.runtime.version)
        if problem is not None:
            return static_receipt(job, backend=info, outcome=Outcome.SYNTAX_ERROR, detail=problem,
                                  attempt=attempt, capabilities=self.caps.model_dump(),
                                  stderr=problem + "\n")
        env = self.environments.resolve(job.runtime)
        wall_deadline = time.monotonic() + job.limits.wall_timeout_s
        if job.deadline is not None:
            left = (job.deadline - utcnow()).total_seconds()
            if left <= 0:
                return static_receipt(job, backend=info, outcome=Outcome.TIMEOUT_WALL,
                                      detail="the job's absolute deadline passed before it "
                                             "started; nothing was spawned", attempt=attempt,
                                      capabilities=self.caps.model_dump(),
                                      environment_digest=env.digest)
            wall_deadline = min(wall_deadline, time.monotonic() + left)
        return env, wall_deadline

    def build_receipt(self, job: SandboxJob, env: Environment, res: Resources, sup: Supervised,
                      verdict: Verdict, artifacts: tuple[ArtifactRecord, ...], *, attempt: int,
                      started_at: Any, peak: int | None, calls: tuple[BrokerCall, ...],
                      info: BackendInfo, session_id: str | None = None,
                      parts: dict[str, Any] | None = None,
                      result: ResultValue | None = None) -> Receipt:
        return Receipt(
            job_id=str(job.job_id), idempotency_key=job.idempotency_key, attempt=attempt,
            tenant=job.tenant, principal=job.principal, purpose=job.purpose, backend=info,
            environment=env.name, environment_digest=env.digest, code_sha256=job.code_sha256,
            limits_requested=job.limits, network=job.network,
            **(parts if parts is not None else self.receipt_parts(job, res)),
            started_at=started_at, ended_at=utcnow(), wall_ms=round(sup.wall_s * 1000, 3),
            cpu_ms=round(sup.cpu_s * 1000, 3) if sup.cpu_s is not None else None,
            peak_memory_bytes=peak, exit_code=verdict.exit_code,
            signal=verdict.signal, stdout=sup.stdout.record(), stderr=sup.stderr.record(),
            artifacts=artifacts,
            cleanup=CleanupRecord(
                group_killed=sup.group_killed, cgroup_empty=sup.cgroup_empty,
                orphans_found=sup.orphans_found, survivors=sup.survivors,
                sandbox_destroyed=sup.survivors == 0,
                workspace_removed=res.workspace_removed),
            outcome=verdict.outcome, outcome_basis=verdict.basis,
            outcome_detail=verdict.detail, missing_module=verdict.missing_module,
            events=tuple(verdict.events), side_effects_possible=job.side_effects_possible,
            broker_calls=calls, session_id=session_id, result=result)

    def receipt_parts(self, job: SandboxJob, res: Resources) -> dict[str, Any]:
        """The receipt's fields fixed before the job runs (capabilities, input digests,
        enforcement, network enforcement): the same values whenever they are computed."""
        return {"capabilities": self.caps.model_dump(), "inputs": input_digests(job),
                "limits_enforced": self._enforcement(job.limits, res),
                "network_enforcement": self.network_enforcement(job)}

    # -- sessions and the warm pool ----------------------------------------------------------

    def session_manager(self) -> "SessionManager":
        with self._lock:
            if self._sessions is None:
                from ..sessions import SessionManager
                self._sessions = SessionManager(self)
            return self._sessions

    def enable_pool(self, size: int = 4, *, environment: str = "default",
                    fillers: int = 1, take_wait_s: float = 0.010) -> "WarmPool":
        """Keep ``size`` sandboxes started and waiting, for jobs that fit them (see
        `WarmPool`: ``take_wait_s`` is how long a job waits for one being finished)."""
        from ..pool import WarmPool
        with self._lock:
            if self.pool is not None:
                self.pool.close()
            self.pool = WarmPool(self, size=size, environment=environment, fillers=fillers,
                                 take_wait_s=take_wait_s)
            return self.pool

    def close(self) -> None:
        with self._lock:
            pool, self.pool = self.pool, None
            sessions, self._sessions = self._sessions, None
            spare, self.spare = self.spare, None
        if spare is not None:
            spare.close()
        if pool is not None:
            pool.close()
        if sessions is not None:
            sessions.close()
        with self._lock:
            groups, self._slot_groups = list(self._slot_groups.values()), {}
            launch, self._launch_group = self._launch_group, None
        for group in groups:
            group.kill_all(1.0)
            group.remove()
        if launch is not None:
            launch.remove()  # empty: its wrappers ended with their jobs
        if self.cg_support.version is not None:
            cgroups.release_instance(self.cg_support)
        workspaces.release_instance_dir(self.workspaces_root)

    def _allocate(self, job: SandboxJob | None, attempt: int, res: Resources, *,
                  name: str | None = None, limits: Limits | None = None) -> None:
        """uid, cgroup, empty workspace and job directory (``job`` None: a pooled sandbox)."""
        limits = limits or (job.limits if job is not None else Limits())
        name = name or f"{job.job_id}-a{attempt}"  # type: ignore[union-attr]
        if self.uids is not None:
            res.uid, res.uid_lock = self.uids.acquire()
        uid = res.uid if res.uid is not None else os.getuid()
        if self.cg_support.version is not None:
            res.used_cgroup = True
            if res.uid is not None:
                res.cgroup = self._slot_cgroup(res.uid, limits)
                res.cgroup_shared = True
            else:
                res.cgroup = JobCgroup.create(self.cg_support, name,
                                              memory_bytes=limits.memory_bytes,
                                              max_processes=limits.max_processes + MONITOR_TASKS)
        res.workspace = Workspace.create(self.workspaces_root, name, uid=uid, gid=uid,
                                         size=limits.workspace_bytes, use_tmpfs=self.use_tmpfs)
        tmp = res.workspace.path / workspaces.RUNNER_DIR / "tmp"
        tmp.mkdir()
        os.chown(tmp, uid, uid)
        res.jobdir = res.workspace.job_dir
        (res.jobdir / "lib").mkdir(mode=0o755)
        _write(res.jobdir / "bootstrap.py", BOOTSTRAP_SOURCE)
        if self.bootstrap_pyc is not None:
            _write(res.jobdir / "bootstrap.pyc", self.bootstrap_pyc)
        _write(res.jobdir / "lib" / "formulane_job.py", JOBKIT_SOURCE)

    def _launch(self) -> LaunchGroup | None:
        """The backend's `LaunchGroup`, made on first use (None without cgroups)."""
        if self.cg_support.version is None:
            return None
        with self._lock:
            if self._launch_group is None:
                try:
                    self._launch_group = LaunchGroup(self.cg_support, f"launch-{self._tag}")
                except OSError:
                    return None  # only a speed-up: the interpreter still joins its group
            return self._launch_group

    def _slot_cgroup(self, uid: int, limits: Limits) -> JobCgroup:
        """The group of one uid slot, created once and reused: a new memory cgroup costs a
        slow first migration and a slow removal, so each slot keeps its own, emptied and
        re-based between jobs (the uid lock makes the slot exclusive)."""
        with self._lock:
            group = self._slot_groups.get(uid)
            if group is None:
                group = JobCgroup.create(self.cg_support, f"slot-{uid}-{self._tag}",
                                         memory_bytes=limits.memory_bytes,
                                         max_processes=limits.max_processes + MONITOR_TASKS)
                self._slot_groups[uid] = group
        if not group.kill_all(5.0):
            raise EscalationError(f"uid slot {uid} still has processes", code="E602")
        group.set_limits(memory_bytes=limits.memory_bytes, max_processes=limits.max_processes + MONITOR_TASKS)
        group.rebase()
        return group

    def _stage(self, job: SandboxJob, res: Resources, attempt: int) -> None:
        """The job's own files: inputs into the workspace, code (and stdin) into /job."""
        assert res.workspace is not None and res.jobdir is not None
        res.ro_files = res.workspace.stage(job.files)
        if job.code is not None:
            _write(res.jobdir / "main.py", job.code)
        if job.stdin is not None:
            _write(res.jobdir / "stdin", job.stdin)
        if res.cgroup is not None:
            res.cgroup.set_limits(memory_bytes=job.limits.memory_bytes,
                                  max_processes=job.limits.max_processes + MONITOR_TASKS)

    def _open_broker(self, job: SandboxJob, res: Resources, deadline: float) -> BrokerChannel:
        if self.broker is None:
            raise EscalationError("the job asks for brokered tools but this backend has no "
                                  "broker", code="E601")
        assert res.jobdir is not None
        sock = res.jobdir / "broker.sock"
        channel, ticket = self.broker.open_channel(
            job, socket_path=sock, peer_uid=res.uid,
            expires_in_s=max(0.1, deadline - time.monotonic()))
        inside = f"{self.job_path(res)}/broker.sock"
        _write(res.jobdir / "broker.json", ticket.replace("@SOCKET@", inside))
        return channel

    def _spawn(self, job: SandboxJob, env: Environment, res: Resources) -> Running:
        gate_r, gate_w, status_r, status_w = control_pipes()
        try:
            argv, environ, fds = self.launch_argv(job, env, res, gate_r, status_w)
        except BaseException:
            for fd in (gate_r, gate_w, status_r, status_w):
                os.close(fd)
            raise
        res.fds.extend(fds)
        assert res.jobdir is not None
        launch = Launch(argv=argv, env=environ, uid=res.uid, gid=res.uid,
                        pass_fds=tuple(fds) + (gate_r, status_w), gate_read=gate_r,
                        status_write=status_w, gate_write=gate_w, status_read=status_r,
                        stdin_path=str(res.jobdir / "stdin") if job.stdin is not None else None,
                        cwd="/", wrapper=self.wrapper)
        try:
            return spawn(launch, res.cgroup, self._launch() if self.wrapper else None)
        except OSError as exc:
            if not launch.handed_over:
                for fd in (gate_w, status_r):
                    os.close(fd)
            # else a `Running` owned them, and `spawn` closed them when it killed the sandbox:
            # closing them again could close a descriptor another thread has opened since.
            raise EscalationError(f"could not start the sandbox: {exc}", code="E602") from None

    def _config_frame(self, job: SandboxJob, env: Environment, res: Resources,
                      mode: str = "run") -> bytes:
        ws = self.workspace_path(res)
        jobp = self.job_path(res)
        main = f"{jobp}/main.py" if job.code is not None else f"{ws}/{job.entrypoint}"
        config = {
            "mode": mode, "main": main, "argv": list(job.argv), "workspace": ws,
            "rlimits": self._rlimits(job.limits, res),
            "paths": self.env_paths(env) + [f"{jobp}/lib"],
            # The values travel in the frame itself (marshal, like the frame): a file for them
            # cost a create on the host and an open in the sandbox, ~0.1 ms of a warm job.
            "inputs": marshal.dumps(job.inputs) if job.inputs else None,
            "confine": self.confinement(job, env, res),
            # The declared result's file and bound, and where a final expression starts.
            "result": {"path": f"{ws}/{workspaces.RUNNER_DIR}/{workspaces.RESULT_FILE}",
                       "max": self.result_max_bytes, "split": last_expression(job.source),
                       "shell": f"{ws}/{workspaces.RUNNER_DIR}/{workspaces.SHELL_FILE}"},
        }
        payload = marshal.dumps(config)
        return payload

    def _rlimits(self, limits: Limits, res: Resources) -> list[tuple[str, int, int]]:
        memory = limits.memory_bytes + (AS_HEADROOM if res.cgroup is not None else 0)
        cpu = max(1, math.ceil(limits.cpu_time_s))
        # NPROC counts every task of the uid, the wrapper's two processes included; with a pids
        # cgroup it is only a backstop a little above pids.max.
        nproc = limits.max_processes + MONITOR_TASKS + (8 if res.cgroup is not None else 2)
        out = [("RLIMIT_AS", memory, memory), ("RLIMIT_CPU", cpu, cpu + 1),
               ("RLIMIT_FSIZE", limits.max_file_bytes, limits.max_file_bytes),
               ("RLIMIT_NOFILE", limits.max_open_files, limits.max_open_files),
               ("RLIMIT_CORE", 0, 0)]
        if res.uid is not None:
            out.append(("RLIMIT_NPROC", nproc, nproc))
        return out

    def _supervise(self, running: Running, limits: Limits, deadline: float,
                   cancel: CancelToken | None) -> Supervised:
        captures = {running.out_r: StreamCapture(limits.stdout_max_bytes, limits.stream_kill_bytes),
                    running.err_r: StreamCapture(limits.stderr_max_bytes, limits.stream_kill_bytes)}
        reason = running.pump(captures, deadline=deadline, cancel=cancel)
        group_killed = False
        pipes_held = False
        if running.exited and reason == "timeout":
            reason, pipes_held = "exited", True  # the leader ended; something held its pipes
        if reason != "exited":
            running.terminate(limits.kill_grace_s)
            group_killed = True
            if reason != "output_limit":
                running.pump(captures, deadline=time.monotonic() + 0.2, cancel=None)
        found, remaining = running.sweep()
        # Everything of the job has ended: what the status pipe holds is complete (the
        # monitor's ``S``, and its exit record, written just before it ended).
        running.drain_status()
        started = running.status_buffer.startswith(b"S")
        wall = time.monotonic() - running.started_at
        cpu_s = None
        stats = running.cgroup.stats() if running.cgroup is not None else None
        if stats is not None:
            cpu_s = stats.cpu_ns / 1e9 if stats.cpu_ns is not None else None
        record = ExitRecord.parse(running.status_buffer) if started else None
        if cpu_s is None and record is not None:
            cpu_s = record.cpu_s
        if cpu_s is None and running.rusage is not None:
            ru = running.rusage
            cpu_s = ru.ru_utime + ru.ru_stime
        sup = Supervised(
            returncode=running.returncode, started=started, events=[reason], stdout=captures[
                running.out_r], stderr=captures[running.err_r], wall_s=wall, cpu_s=cpu_s,
            group_killed=group_killed, orphans_found=found if not group_killed else 0,
            survivors=remaining,
            cgroup_empty=remaining == 0 if running.cgroup is not None else None,
            pipes_closed_early=pipes_held, stats=stats, exit_record=record)
        return sup

    def _verdict(self, job: SandboxJob, env: Environment, res: Resources, sup: Supervised,
                 cancel: CancelToken | None) -> Verdict:
        stats = sup.stats
        return classify(
            reason=sup.events[0], started=sup.started, returncode=sup.returncode,
            wrapper=self.wrapper, stderr=sup.stderr.tail_text(16384),
            oom_kills=stats.oom_kills if stats else 0,
            pids_max_hits=stats.pids_max_hits if stats else 0, cpu_s=sup.cpu_s,
            cpu_limit_s=job.limits.cpu_time_s, network_mode=job.network.mode,
            provided_modules=env.modules, kill_confirmed=sup.survivors == 0,
            cancel_reason=cancel.reason if cancel is not None else "",
            monitored=True, exit_record=sup.exit_record,
            side_effects_possible=job.side_effects_possible,
            writes=self._writes(job),
            shell_failures=res.workspace.shell_failures() if res.workspace is not None and
            sup.started else ())

    @staticmethod
    def _writes(job: SandboxJob) -> str:
        """What could have been written outside the workspace, in words (for the verdict)."""
        parts: list[str] = []
        if job.side_effect_class != "read_only":
            parts.append(f"side-effect class {job.side_effect_class}")
        if job.network.mode != "none":
            parts.append(f"network {job.network.mode}")
        if job.state == "session":
            parts.append("session state")
        return ", ".join(parts)

    def _collect(self, job: SandboxJob, env: Environment, res: Resources, verdict: Verdict,
                 attempt: int) -> tuple[ArtifactRecord, ...]:
        if not job.artifact_globs or res.workspace is None:
            return ()
        report = res.workspace.collect(job.artifact_globs, max_count=job.limits.artifact_max_count,
                                       max_bytes=job.limits.artifact_max_bytes_total,
                                       max_depth=self.artifact_max_depth,
                                       max_entries=self.artifact_max_entries)
        verdict.events.extend(skipped_events(report.skipped))
        manifest = res.workspace.done_manifest()
        ok = verdict.outcome is Outcome.SUCCEEDED
        out: list[ArtifactRecord] = []
        for item in report.files:
            complete: bool | None
            if manifest.get(item.path) == item.sha256:
                complete = True
            else:
                complete = True if ok else None
            ref = self.artifacts.put(item.data, provenance={
                "job_id": str(job.job_id), "attempt": attempt, "path": item.path,
                "tenant": job.tenant, "principal": job.principal,
                "code_sha256": job.code_sha256, "environment_digest": env.digest,
                "backend": self.name, "outcome": verdict.outcome.value, "complete": complete})
            out.append(ArtifactRecord(
                path=item.path, size=item.size, sha256=item.sha256,
                mime=mimetypes.guess_type(item.path)[0] or "application/octet-stream",
                complete=complete, stored_ref=ref))
        return tuple(out)

    def _result(self, res: Resources, sup: Supervised) -> ResultValue | None:
        """The job's declared result (None when job code never started)."""
        if not sup.started or res.workspace is None:
            return None
        return result_value(res.workspace.read_result(self.result_max_bytes),
                            self.result_max_bytes)

    def _peak(self, res: Resources, running: Running, sup: Supervised) -> int | None:
        if sup.stats is not None and sup.stats.peak_memory_bytes is not None:
            return sup.stats.peak_memory_bytes
        if running.rusage is not None:
            return int(running.rusage.ru_maxrss) * 1024
        return None

    def _enforcement(self, limits: Limits, res: Resources) -> tuple[Enforcement, ...]:
        cg = res.used_cgroup
        ws_tmpfs = res.workspace is not None and res.workspace.mounted
        memory = limits.memory_bytes
        rows = [
            Enforcement(knob="wall_timeout_s", requested=limits.wall_timeout_s,
                        enforced=limits.wall_timeout_s, by="host"),
            Enforcement(knob="cpu_time_s", requested=limits.cpu_time_s,
                        enforced=max(1, math.ceil(limits.cpu_time_s)), by="rlimit"),
            Enforcement(knob="memory_bytes", requested=memory, enforced=memory,
                        by="cgroup" if cg else "rlimit"),
            Enforcement(knob="max_processes", requested=limits.max_processes,
                        enforced=limits.max_processes,
                        by="cgroup" if cg else ("rlimit" if res.uid is not None
                                                else "not_enforced")),
            Enforcement(knob="max_file_bytes", requested=limits.max_file_bytes,
                        enforced=limits.max_file_bytes, by="rlimit"),
            Enforcement(knob="workspace_bytes", requested=limits.workspace_bytes,
                        enforced=limits.workspace_bytes if ws_tmpfs else None,
                        by="tmpfs" if ws_tmpfs else "not_enforced"),
            Enforcement(knob="max_open_files", requested=limits.max_open_files,
                        enforced=limits.max_open_files, by="rlimit"),
            Enforcement(knob="stdout_max_bytes", requested=limits.stdout_max_bytes,
                        enforced=limits.stdout_max_bytes, by="host"),
            Enforcement(knob="stderr_max_bytes", requested=limits.stderr_max_bytes,
                        enforced=limits.stderr_max_bytes, by="host"),
            Enforcement(knob="stream_kill_bytes", requested=limits.stream_kill_bytes,
                        enforced=limits.stream_kill_bytes, by="host"),
            Enforcement(knob="artifact_max_bytes_total", requested=limits.artifact_max_bytes_total,
                        enforced=limits.artifact_max_bytes_total, by="host"),
        ]
        rows.extend(self._extra_enforcement(limits, res))
        return tuple(rows)

    def _extra_enforcement(self, limits: Limits, res: Resources) -> list[Enforcement]:
        return []

    def seccomp_program(self, job: SandboxJob) -> bytes:
        return build_filter(network_open=job.network.mode == "open")


#: How many skipped-artifact lines a receipt keeps (the count of the rest is given).
MAX_SKIPPED_EVENTS = 20


def skipped_events(skipped: list[str]) -> list[str]:
    """Receipt events for the artifacts that were not collected and why, bounded."""
    out = [f"artifact not collected: {line[:300]}" for line in skipped[:MAX_SKIPPED_EVENTS]]
    if len(skipped) > MAX_SKIPPED_EVENTS:
        out.append(f"artifact not collected: {len(skipped) - MAX_SKIPPED_EVENTS} more "
                   "entries not listed")
    return out


def _write(path: Path, content: str | bytes) -> None:
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.chmod(path, 0o644)
