"""Host-side supervision of one sandboxed process tree: spawn, watch, cap, kill, verify.

Contract: `spawn` starts the sandbox command as the job's unprivileged uid in a new session with
only the listed fds, moves the interpreter into the job's cgroup while it starts (or, if it
was not found in time, once the bootstrap reports ready), and returns only when it is there
and waiting, *before* it is allowed to run job code (it waits on the gate for
`Running.configure`). One thread
supervises with a selector over stdout, stderr, the status pipe and a pidfd: output is
streamed into bounded head/tail captures, the host deadline is enforced independently of the
sandbox, cancellation is polled. On timeout, cancellation or an output flood the tree is ended
in order: SIGTERM to the job's processes, a grace period, SIGKILL to the wrapper (the pid
namespace dies with it), SIGKILL to whatever is left in the cgroup or owned by the job's uid,
then a check that nothing survived. Pipe reads after the leader exits are bounded in time, so a
leaked grandchild holding a pipe cannot stall the harness. No helper threads are created.
"""

from __future__ import annotations

import fcntl
import os
import resource
import select
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..contract import CancelToken
from .capture import StreamCapture
from .cgroups import CgroupStats, JobCgroup, LaunchGroup
from .classifier import ExitRecord

_DRAIN_WINDOW_S = 0.5
#: util-linux setpriv, when present and we are root (it is how the uid switch stays vfork-able).
SETPRIV = shutil.which("setpriv") if os.geteuid() == 0 else None
_POLL_S = 0.05
_EARLY_JOIN_S = 5.0  # how long to look for a starting interpreter before waiting for its R
_EARLY_POLL_S = 0.001
_VERIFY_S = 10.0  # an upper bound: the check returns as soon as nothing is left


class UidPool:
    """Dedicated uids for concurrent jobs (RLIMIT_NPROC counts per uid, so one uid per job).

    A slot is held with an flock on ``<lock_dir>/<uid>.lock``, so several processes sharing one
    state directory never hand out the same uid, and a crashed holder releases it.
    """

    def __init__(self, lock_dir: Path, first: int, count: int) -> None:
        if first < 1000 or count < 1:
            raise ValueError("job uids must be >= 1000 and the pool non-empty")
        self.lock_dir = lock_dir
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        self.first = first
        self.count = count

    def acquire(self) -> tuple[int, int]:
        """(uid, lock fd). Raises OSError when every slot is taken."""
        for uid in range(self.first, self.first + self.count):
            fd = os.open(self.lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                         0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if uid_processes(uid):
                # A previous holder died and left processes under this uid: kill them first.
                kill_uid(uid)
                if uid_processes(uid):
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
                    continue
            return uid, fd
        raise OSError(f"all {self.count} job uids are busy")

    @staticmethod
    def release(lock_fd: int) -> None:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_UN)
        finally:
            os.close(lock_fd)

    def range(self) -> range:
        return range(self.first, self.first + self.count)


def uid_processes(uid: int) -> list[int]:
    """Live pids whose owner is ``uid`` (a reserved job uid: nothing else runs as it).

    Zombies are skipped: they are dead, and when a sandbox's init is reparented to a slow
    host init they may wait a while to be reaped.
    """
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                stat_line = Path(f"/proc/{entry.name}/stat").read_text()
            except OSError:
                continue
            if stat_line.rsplit(")", 1)[-1].split()[0] not in ("Z", "X"):
                found.append(int(entry.name))
    return found


def _signal_if_owned(pid: int, uid: int | None, sig: int) -> bool:
    # Open a pidfd first, then check the owner: if the pid was recycled in between, the check
    # sees the new owner and we do not signal a stranger.
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        if uid is not None and os.stat(f"/proc/{pid}").st_uid != uid:
            return False
        signal.pidfd_send_signal(pidfd, sig)
        return True
    except OSError:
        return False
    finally:
        os.close(pidfd)


def kill_uid(uid: int, timeout: float = _VERIFY_S) -> int:
    """SIGKILL every process of ``uid`` until none is left; returns how many were seen."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout
    while True:
        pids = uid_processes(uid)
        if not pids or time.monotonic() > deadline:
            return len(seen)
        for pid in pids:
            seen.add(pid)
            _signal_if_owned(pid, uid, signal.SIGKILL)
        time.sleep(0.002)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.scandir(f"/proc/{pid}/task"):
            try:
                out += [int(x) for x in Path(task.path, "children").read_text().split()]
            except OSError:
                continue
    except OSError:
        pass
    return out


def _first_child(pid: int) -> int | None:
    """The first child of ``pid``'s main thread (bwrap and its init fork from it), or None."""
    try:
        fd = os.open(f"/proc/{pid}/task/{pid}/children", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        first = os.read(fd, 64).split(b" ", 1)[0]
    except OSError:
        return None
    finally:
        os.close(fd)
    return int(first) if first.strip() else None


def _inner_pid(pid: int) -> int | None:
    """The pid as seen inside the innermost pid namespace (NSpid's last field)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    uid: int | None
    gid: int | None
    pass_fds: tuple[int, ...]
    gate_read: int
    status_write: int
    gate_write: int
    status_read: int
    stdin_path: str | None = None
    cwd: str | None = None
    wrapper: bool = True  # the command is a wrapper (bwrap) around the job's pid namespace
    #: set by `spawn` once a `Running` owns the host ends of the control pipes (from then on
    #: a failed spawn has closed them itself, and the caller must not close them again)
    handed_over: bool = False


@dataclass
class Supervised:
    returncode: int | None
    started: bool
    events: list[str]
    stdout: StreamCapture
    stderr: StreamCapture
    wall_s: float
    cpu_s: float | None
    group_killed: bool = False
    orphans_found: int = 0
    survivors: int = 0
    cgroup_empty: bool | None = None
    pipes_closed_early: bool = False
    stats: CgroupStats | None = None
    exit_record: "ExitRecord | None" = None  # the monitor's report of the job's wait status


class Running:
    """A spawned sandbox waiting at its gate, or running."""

    def __init__(self, popen: subprocess.Popen[bytes], pidfd: int, out_r: int, err_r: int,
                 status_r: int, gate_w: int, cgroup: JobCgroup | None, uid: int | None,
                 wrapper: bool) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.pidfd = pidfd
        self.out_r = out_r
        self.err_r = err_r
        self.status_r = status_r
        self.gate_w: int | None = gate_w
        self.cgroup = cgroup
        self.uid = uid
        self.wrapper = wrapper
        self.exited = False
        self.returncode: int | None = None
        self.rusage: resource.struct_rusage | None = None
        self.status_buffer = b""
        self.ready_seen = False
        self.started_at = time.monotonic()
        self.closed = False
        self._open_streams = {out_r, err_r}
        #: pidfds of the wrapper's own processes between it and the interpreter (bwrap's
        #: namespace init), opened when the interpreter is adopted: with the cgroup they make
        #: the survivor check exact without scanning /proc (see `sweep`).
        self.inner_pidfds: list[int] | None = None

    # -- control channel ---------------------------------------------------------------------

    def configure(self, frame: bytes, *, keep_open: bool = False) -> None:
        """Send the run configuration; the bootstrap starts job code after reading it."""
        if self.gate_w is None:
            raise RuntimeError("gate already closed")
        self.send(frame)
        if not keep_open:
            os.close(self.gate_w)
            self.gate_w = None
        self.started_at = time.monotonic()

    def send(self, payload: bytes) -> None:
        if self.gate_w is None:
            raise BrokenPipeError("control channel closed")
        data = len(payload).to_bytes(4, "big") + payload
        while data:
            data = data[os.write(self.gate_w, data):]

    def take_frame(self) -> bytes | None:
        """One complete length-prefixed frame from the status buffer, if there is one."""
        if len(self.status_buffer) < 4:
            return None
        size = int.from_bytes(self.status_buffer[:4], "big")
        if size > 1 << 20:
            raise ValueError("oversized control frame from the sandbox")
        if len(self.status_buffer) < 4 + size:
            return None
        frame = self.status_buffer[4:4 + size]
        self.status_buffer = self.status_buffer[4 + size:]
        return frame

    def adopt(self, cgroup: JobCgroup, timeout: float = 60.0,
              launch: LaunchGroup | None = None) -> bool:
        """Move the interpreter into ``cgroup`` (while it starts, see `_join_early`, or else
        once its ``R`` has come); it waits at the gate either way.

        Only the interpreter is moved (one migration per controller, the costly part of v1
        cgroups): it is blocked at the gate and has forked nothing, and everything the job
        starts descends from it. The wrapper and the namespace's init stay outside; they die
        with the job. False when the sandbox failed before the bootstrap started.
        """
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.status_r, selectors.EVENT_READ)
        try:
            early = self._join_early(cgroup, sel, deadline, launch)
            while not self.status_buffer.startswith(b"R"):
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return False
                chunk = _read(self.status_r)
                if chunk == b"":
                    return False
                self.status_buffer += chunk or b""
        finally:
            sel.close()
        self.status_buffer = self.status_buffer[1:]
        self.ready_seen = True
        chain = self._chain()
        if chain is None:
            return False
        if chain[-1] != early:
            cgroup.join(chain[-1])
        if self.wrapper:
            # Everything between the wrapper and the interpreter is alive now (the interpreter
            # is blocked at the gate), so these pids cannot have been recycled yet.
            fds: list[int] = []
            opened: list[int] | None = fds
            try:
                for pid in chain[1:-1]:
                    fds.append(os.pidfd_open(pid))
            except OSError:
                for fd in fds:
                    os.close(fd)
                opened = None
            self.inner_pidfds = opened
        return True

    def _join_early(self, cgroup: JobCgroup, sel: selectors.BaseSelector,
                    deadline: float, launch: LaunchGroup | None = None) -> int | None:
        """Move the interpreter into ``cgroup`` while it is still starting, before its ``R``.

        A v1 migration waits for an RCU grace period (~8 ms here, in scheduler ticks), which
        is idle time: done here it overlaps the interpreter's own start-up instead of
        following it. The interpreter is the wrapper's grandchild (bwrap, its namespace init,
        the process it forks and execs), or the spawned process itself without a wrapper; it
        forks nothing before it has read its configuration, which is sent only after
        `adopt`, so it is in the group before anything of the job can exist. The pid is read
        from its parent's children list and written at once: it could name another process
        only if the interpreter exited, was reaped and its pid was handed out again within
        those microseconds (pids are allocated upwards to ``pid_max`` before any is reused),
        the same window the walk after ``R`` has always had. Returns the pid joined, or None when
        the interpreter was not found before its ``R`` (or the sandbox ended). Either way
        `adopt` walks the chain again once the ``R`` has come and joins the process found
        there unless it is the one joined here (a setuid bubblewrap forks a short-lived
        helper first, which this walk may have caught instead)."""
        depth = 2 if self.wrapper else 0
        if depth and launch is not None:
            # Starts the grace period now (this write waits it out while bubblewrap builds
            # the namespaces); the interpreter's move just after it is then quick.
            launch.enter(self.pid)
        limit = min(deadline, time.monotonic() + _EARLY_JOIN_S)
        pid, level = self.pid, 0
        while level < depth:
            child = _first_child(pid)
            if child is not None:
                pid, level = child, level + 1  # each level forks once: never looked at again
                continue
            # One procfs read per poll, a millisecond apart: the start-up takes several, and
            # the fillers of a warm pool run this too, so polling must stay cheap in CPU.
            if sel.select(_EARLY_POLL_S) or time.monotonic() > limit:
                return None  # the status pipe spoke first (ready, or the sandbox failed)
        try:
            cgroup.join(pid)
        except OSError:
            return None  # gone already; the normal path finds out and reports it
        return pid

    def _chain(self) -> list[int] | None:
        """Wrapper pid down to the bootstrap's (the deepest descendant on the first branch)."""
        chain = [self.pid]
        for _ in range(8):
            children = _children(chain[-1])
            if not children:
                return chain
            chain.append(children[0])
        return None

    # -- the loop ----------------------------------------------------------------------------

    def pump(self, captures: dict[int, StreamCapture], *, deadline: float,
             cancel: CancelToken | None, until: Callable[[], bool] | None = None) -> str:
        """Read until exit, ``until()``, the deadline, cancellation or an output flood."""
        sel = selectors.DefaultSelector()
        try:
            for fd in self._open_streams:
                sel.register(fd, selectors.EVENT_READ)
            if self.status_r >= 0:
                sel.register(self.status_r, selectors.EVENT_READ)
            if not self.exited:
                sel.register(self.pidfd, selectors.EVENT_READ)
            while True:
                if until is not None and until():
                    return "condition"
                if self.exited and not self._open_streams:
                    return "exited"
                now = time.monotonic()
                if now >= deadline:
                    return "timeout"
                if cancel is not None and cancel.cancelled:
                    return "cancelled"
                ready = sel.select(min(deadline - now, _POLL_S))
                for key, _ in ready:
                    fd = key.fd
                    if fd == self.pidfd:
                        sel.unregister(fd)
                        self._reap()
                        if not self._open_streams:
                            return "exited"
                        # The leader is gone: give the pipes a bounded time to reach EOF.
                        deadline = min(deadline, time.monotonic() + _DRAIN_WINDOW_S)
                    elif fd == self.status_r:
                        chunk = _read(fd)
                        if chunk is None:
                            continue
                        if chunk:
                            self.status_buffer += chunk
                            if not self.ready_seen and self.status_buffer.startswith(b"R"):
                                self.status_buffer = self.status_buffer[1:]
                                self.ready_seen = True
                        else:
                            sel.unregister(fd)
                            os.close(fd)
                            self.status_r = -1
                    else:
                        chunk = _read(fd)
                        if chunk is None:
                            continue
                        capture = captures[fd]
                        capture.feed(chunk)
                        if not chunk:
                            sel.unregister(fd)
                            self._open_streams.discard(fd)
                        elif capture.over_budget:
                            return "output_limit"
                if self.exited and not self._open_streams:
                    return "exited"
        finally:
            sel.close()

    def drain_status(self, timeout: float = 0.2) -> bytes:
        """What the status pipe still holds once the sandbox has ended (the monitor's ``X``
        record is written just before it exits, so it may not have been read by `pump`).
        Bounded: at most ``timeout`` seconds and 64 KiB."""
        end = time.monotonic() + timeout
        while self.status_r >= 0 and len(self.status_buffer) < 65536:
            chunk = _read(self.status_r)
            if chunk is None:
                if not select.select([self.status_r], [], [], max(0.0, end - time.monotonic()))[0]:
                    break
                continue
            if not chunk:
                os.close(self.status_r)
                self.status_r = -1
                break
            self.status_buffer += chunk
        return self.status_buffer

    def _reap(self) -> None:
        if self.exited:
            return
        _, status, rusage = os.wait4(self.pid, 0)
        self.exited = True
        self.rusage = rusage
        self.returncode = os.waitstatus_to_exitcode(status)
        self.popen.returncode = self.returncode

    # -- ending ------------------------------------------------------------------------------

    def job_pids(self) -> set[int]:
        # The cgroup holds everything the job code started (joined before any ran, inherited
        # by every child, not writable by the job); the wrapper and the namespace's init are
        # outside it but run as the job's dedicated uid, which catches them too.
        pids: set[int] = set()
        if self.cgroup is not None:
            pids |= self.cgroup.pids()
        if self.uid is not None:
            pids |= set(uid_processes(self.uid))
        return pids

    def terminate(self, grace: float) -> None:
        """SIGTERM the job's processes, wait ``grace``, then SIGKILL the whole tree."""
        if not self.exited:
            for pid in self.job_pids():
                if self.wrapper and (pid == self.pid or _inner_pid(pid) == 1):
                    continue  # the wrapper and the namespace's init: SIGTERM would skip grace
                _signal_if_owned(pid, self.uid, signal.SIGTERM)
            if not self.wrapper:
                _killpg(self.pid, signal.SIGTERM)
            end = time.monotonic() + grace
            sel = selectors.DefaultSelector()
            sel.register(self.pidfd, selectors.EVENT_READ)
            try:
                while not self.exited and time.monotonic() < end:
                    if sel.select(max(0.0, end - time.monotonic())):
                        self._reap()
            finally:
                sel.close()
        if not self.exited:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            if not self.wrapper:
                _killpg(self.pid, signal.SIGKILL)
            self._reap()
        self.sweep()

    def sweep(self) -> tuple[int, int]:
        """Kill whatever is left of the job. Returns (found alive, still alive afterwards)."""
        if self._quick_clean():
            return 0, 0
        found = self.job_pids() - ({self.pid} if not self.exited else set())
        if not found:
            # Nothing of the job's uid or cgroup is alive, and nothing can appear from nothing:
            # every such process descends from the job. The common case costs one scan.
            return 0, 0
        if not self.wrapper:
            _killpg(self.pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill_all(_VERIFY_S)
        if self.uid is not None:
            kill_uid(self.uid)
        remaining = self.job_pids()
        return len(found), len(remaining)

    def _quick_clean(self) -> bool:
        """True when nothing of the job can be alive, proven without scanning /proc.

        Under a wrapper with a cgroup, the job uid's processes are exactly: the wrapper (our
        child, reaped), the wrapper's namespace init (held by a pidfd since adoption) and the
        interpreter with everything it started, all born in the cgroup, which the job cannot
        leave. So: wrapper reaped, init exited (it is killed with the wrapper; give it a
        moment) and the cgroup empty. Anything else takes the full path (uid scan, kills)."""
        if not (self.wrapper and self.exited and self.cgroup is not None
                and self.inner_pidfds is not None):
            return False
        for fd in self.inner_pidfds:
            if not _pidfd_exited(fd, 0.5):
                return False
        return not self.cgroup.pids()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for pidfd in self.inner_pidfds or ():
            try:
                os.close(pidfd)
            except OSError:
                pass
        self.inner_pidfds = None
        for fd in (self.out_r, self.err_r, self.status_r, self.gate_w, self.pidfd):
            if fd is not None and fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._open_streams.clear()
        if not self.exited:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except OSError:
                pass
            try:
                self._reap()
            except ChildProcessError:
                pass


def _killpg(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _read(fd: int) -> bytes | None:
    """Bytes read; b"" at EOF; None when a non-blocking pipe had nothing after all."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def spawn(launch: Launch, cgroup: JobCgroup | None,
          launch_group: LaunchGroup | None = None) -> Running:
    """Start the command; its interpreter is in ``cgroup`` before any job code can run."""
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    stdin = open(launch.stdin_path or os.devnull, "rb")
    argv, switch = list(launch.argv), launch.uid is not None
    if switch and SETPRIV:
        # Let setpriv change the uid so Popen may use vfork: forking a large host process
        # (page tables) costs more than the sandbox start itself.
        argv = [SETPRIV, f"--reuid={launch.uid}", f"--regid={launch.gid}", "--clear-groups",
                "--"] + argv
        switch = False
    try:
        popen = subprocess.Popen(
            argv, stdin=stdin, stdout=out_w, stderr=err_w, pass_fds=launch.pass_fds,
            env=launch.env, cwd=launch.cwd, start_new_session=True, close_fds=True,
            user=launch.uid if switch else None, group=launch.gid if switch else None,
            extra_groups=[] if switch and os.geteuid() == 0 else None)
    except BaseException:
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    finally:
        stdin.close()
        os.close(out_w)
        os.close(err_w)
        os.close(launch.gate_read)
        os.close(launch.status_write)
    pidfd = os.pidfd_open(popen.pid)
    running = Running(popen, pidfd, out_r, err_r, launch.status_read, launch.gate_write, cgroup,
                      launch.uid, launch.wrapper)
    launch.handed_over = True
    for fd in (out_r, err_r, launch.status_read):
        os.set_blocking(fd, False)
    if cgroup is not None:
        try:
            adopted = running.adopt(cgroup, launch=launch_group)
        except BaseException:
            running.close()
            raise
        if not adopted and not _exited(running.pidfd):
            # Alive but not ready (or not found): never let it run outside its cgroup.
            running.close()
            raise OSError("the sandbox did not report ready; it was killed before running")
    return running


def _exited(pidfd: int) -> bool:
    return _pidfd_exited(pidfd, 0.2)


def _pidfd_exited(pidfd: int, timeout: float) -> bool:
    """Whether the process behind ``pidfd`` has exited, waiting up to ``timeout``."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(max(0, int(timeout * 1000))))


def control_pipes() -> tuple[int, int, int, int]:
    """(gate_read, gate_write, status_read, status_write); child ends are inheritable."""
    gate_r, gate_w = os.pipe2(os.O_CLOEXEC)
    status_r, status_w = os.pipe2(os.O_CLOEXEC)
    return gate_r, gate_w, status_r, status_w
