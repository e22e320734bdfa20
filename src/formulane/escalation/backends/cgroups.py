"""Per-job control groups: memory and process limits, statistics, and a kill that leaves nothing.

Contract: `discover()` finds a usable hierarchy, cgroup v2 first (a mount whose
``cgroup.controllers`` offers memory and pids and whose parent directory we may write), then
v1 (separate memory, pids, and when present freezer and cpuacct mounts). It never touches the
cgroup this process was started in: job groups live under ``<mount>/formulane/<instance>/``,
where the instance name carries our pid and start time so a later process can reap the
leftovers of a dead one (`reap_stale`). `JobCgroup.create` makes one leaf per job with the
limits set before any job process joins; `join` is called top-down by the supervisor;
`kill` freezes (v1 freezer) or uses ``cgroup.kill`` (v2) and SIGKILLs until empty; `remove`
retries EBUSY with backoff and reports whether it succeeded instead of leaking silently.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

ROOT_NAME = "formulane"
_V1_WANTED = ("memory", "pids", "freezer", "cpuacct")


@dataclass(frozen=True)
class CgroupSupport:
    """What the machine offers; ``version`` is None when no usable hierarchy was found."""

    version: Literal["v2", "v1"] | None
    paths: dict[str, Path] = field(default_factory=dict[str, Path])  # controller (or "unified") -> mount
    reason: str = ""

    @property
    def controllers(self) -> tuple[str, ...]:
        return tuple(sorted(self.paths))

    def only(self, controllers: tuple[str, ...]) -> "CgroupSupport":
        """The same hierarchy restricted to ``controllers`` (v1; v2 has one tree anyway)."""
        if self.version != "v1":
            return self
        return CgroupSupport("v1", {c: p for c, p in self.paths.items() if c in controllers},
                             self.reason)

    def describe(self) -> str:
        if self.version is None:
            return f"none ({self.reason})"
        return f"cgroup {self.version} ({', '.join(self.controllers)})"


def _mounts() -> list[tuple[str, str, list[str]]]:
    """(mount point, fstype, super options) from /proc/self/mountinfo."""
    out: list[tuple[str, str, list[str]]] = []
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        parts = left.split()
        rparts = right.split()
        if len(parts) < 5 or len(rparts) < 3:
            continue
        out.append((parts[4].replace("\\040", " "), rparts[0], rparts[2].split(",")))
    return out


def _writable_parent(mount: Path) -> tuple[bool, str]:
    parent = mount / ROOT_NAME
    try:
        parent.mkdir(exist_ok=True)
    except OSError as exc:
        return False, f"cannot create {parent}: {exc.strerror}"
    return True, ""


def discover() -> CgroupSupport:
    """Probe the hierarchy (v2 first). Creates the ``formulane`` parent group if allowed."""
    mounts = _mounts()
    reasons: list[str] = []
    for point, fstype, _ in mounts:
        if fstype != "cgroup2":
            continue
        mount = Path(point)
        try:
            offered = set((mount / "cgroup.controllers").read_text().split())
        except OSError:
            continue
        if not {"memory", "pids"} <= offered:
            reasons.append(f"cgroup2 at {point} offers only {sorted(offered) or 'nothing'}")
            continue
        ok, why = _writable_parent(mount)
        if not ok:
            reasons.append(why)
            continue
        try:
            _enable_v2_controllers(mount / ROOT_NAME)
        except OSError as exc:
            reasons.append(f"cannot delegate memory+pids under {point}: {exc.strerror}")
            continue
        return CgroupSupport("v2", {"unified": mount})
    v1: dict[str, Path] = {}
    for point, fstype, options in mounts:
        if fstype != "cgroup":
            continue
        for ctl in _V1_WANTED:
            if ctl in options and ctl not in v1:
                v1[ctl] = Path(point)
    if {"memory", "pids"} <= set(v1):
        for ctl, mount in list(v1.items()):
            ok, why = _writable_parent(mount)
            if not ok:
                if ctl in ("memory", "pids"):
                    return CgroupSupport(None, reason=why)
                del v1[ctl]
        return CgroupSupport("v1", v1)
    reasons.append("no cgroup v1 memory+pids mounts")
    return CgroupSupport(None, reason="; ".join(reasons))


def _enable_v2_controllers(parent: Path) -> None:
    # The mount root must delegate memory and pids to our parent, and our parent to its leaves.
    root = parent.parent
    for group in (root, parent):
        enabled = set((group / "cgroup.subtree_control").read_text().split())
        missing = {"memory", "pids"} - enabled
        if missing:
            (group / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))


def instance_name() -> str:
    """``i<pid>-<start ticks>``: unique per process lifetime, checkable after a crash."""
    return f"i{os.getpid()}-{_start_ticks(os.getpid())}"


def _start_ticks(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "0"


def instance_alive(name: str) -> bool:
    try:
        pid_text, ticks = name[1:].split("-", 1)
        return _start_ticks(int(pid_text)) == ticks
    except ValueError:
        return False


def _read_pids(group: Path) -> list[int]:
    # os-level reads: this runs several times per job (survivor check, release, slot reuse).
    try:
        fd = os.open(f"{group}/cgroup.procs", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        chunks: list[bytes] = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return [int(x) for x in b"".join(chunks).split()]
    except (OSError, ValueError):
        return []
    finally:
        os.close(fd)


def _rmdir(group: Path, attempts: int = 40) -> bool:
    # A v1 rmdir right after the last task exits sometimes answers EBUSY; retry with backoff.
    delay = 0.001
    for _ in range(attempts):
        try:
            group.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
    return False


def reap_stale(support: CgroupSupport) -> int:
    """Kill and remove job groups left by dead formulane processes. Returns groups removed."""
    removed = 0
    for mount in set(support.paths.values()):
        parent = mount / ROOT_NAME
        if not parent.is_dir():
            continue
        for inst in parent.iterdir():
            if not inst.is_dir() or not inst.name.startswith("i") or instance_alive(inst.name):
                continue
            for leaf in list(inst.iterdir()):
                if leaf.is_dir():
                    for pid in _read_pids(leaf):
                        _kill(pid)
                    if _rmdir(leaf):
                        removed += 1
            _rmdir(inst)
    return removed


def release_instance(support: CgroupSupport) -> None:
    """Remove this process's (empty) instance groups; one still holding job groups of another
    backend in this process stays (rmdir refuses a group with children)."""
    for mount in set(support.paths.values()):
        try:
            (mount / ROOT_NAME / instance_name()).rmdir()
        except OSError:
            pass


def _kill(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


@dataclass
class CgroupStats:
    peak_memory_bytes: int | None = None
    oom_kills: int = 0
    pids_max_hits: int = 0
    cpu_ns: int | None = None


class JobCgroup:
    """One job's groups (one per v1 controller, or one v2 leaf)."""

    def __init__(self, support: CgroupSupport, groups: dict[str, Path]) -> None:
        self.support = support
        self.groups = groups
        self.removed = False
        self._base = CgroupStats()
        self._limits: tuple[int, int] | None = None  # last written: reused groups skip rewrites

    @classmethod
    def create(cls, support: CgroupSupport, name: str, *, memory_bytes: int,
               max_processes: int) -> "JobCgroup":
        if support.version is None:
            raise OSError(errno.ENOTSUP, f"no usable cgroup hierarchy: {support.reason}")
        inst = instance_name()
        groups: dict[str, Path] = {}
        made: list[Path] = []
        try:
            for ctl, mount in support.paths.items():
                leaf = mount / ROOT_NAME / inst / name
                if leaf not in made:  # co-mounted controllers (cpu,cpuacct) share one leaf
                    leaf.mkdir(parents=True, exist_ok=False)
                    made.append(leaf)
                groups[ctl] = leaf
            self = cls(support, groups)
            self.set_limits(memory_bytes=memory_bytes, max_processes=max_processes)
            return self
        except BaseException:
            for leaf in made:
                _rmdir(leaf)
            raise

    def set_limits(self, *, memory_bytes: int, max_processes: int) -> None:
        # Only this process writes these files (root-owned, outside the job's view), so the
        # values last written are the values in force: a reused group skips the writes.
        if self._limits == (memory_bytes, max_processes):
            return
        self._limits = None  # unknown until every write below has succeeded
        self._write_limits(memory_bytes, max_processes)
        self._limits = (memory_bytes, max_processes)

    def _write_limits(self, memory_bytes: int, max_processes: int) -> None:
        if self.support.version == "v2":
            leaf = self.groups["unified"]
            (leaf / "memory.max").write_text(str(memory_bytes))
            _try_write(leaf / "memory.swap.max", "0")
            _try_write(leaf / "memory.oom.group", "1")
            (leaf / "pids.max").write_text(str(max_processes))
            return
        mem = self.groups["memory"]
        _try_write(mem / "memory.swappiness", "0")
        # With swap accounting, memory+swap is capped too, and v1 insists on memsw >= memory at
        # every step: raising needs memsw first, lowering needs memory first. Try both orders.
        _try_write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
        (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
        _try_write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
        (self.groups["pids"] / "pids.max").write_text(str(max_processes))

    def _leaves(self) -> list[Path]:
        return list(dict.fromkeys(self.groups.values()))

    def join(self, pid: int) -> None:
        for leaf in self._leaves():
            (leaf / "cgroup.procs").write_text(str(pid))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for leaf in self._leaves():
            found.update(_read_pids(leaf))
        return found

    def kill_all(self, timeout: float = 2.0) -> bool:
        """SIGKILL every member until the group is empty. True when it is."""
        deadline = time.monotonic() + timeout
        if self.support.version == "v2":
            _try_write(self.groups["unified"] / "cgroup.kill", "1")
        freezer = self.groups.get("freezer")
        frozen = False
        if freezer is not None and self.pids():
            # Freeze first so a forking process cannot outrun the kill loop.
            frozen = _try_write(freezer / "freezer.state", "FROZEN")
        try:
            while True:
                members = self.pids()
                if not members:
                    return True
                for pid in members:
                    _kill(pid)
                if time.monotonic() > deadline:
                    return not self.pids()
                if frozen:
                    # Killed tasks of a frozen group die only once thawed.
                    _try_write(freezer / "freezer.state", "THAWED")  # type: ignore[operator]
                    frozen = False
                time.sleep(0.002)
        finally:
            if frozen:
                _try_write(freezer / "freezer.state", "THAWED")  # type: ignore[operator]

    def rebase(self) -> None:
        """Start counting afresh for the next job of a reused group.

        Peak memory and CPU usage can be reset in place; event counters (OOM kills, pids.max
        hits) cannot, so they are reported as deltas from here.
        """
        if self.support.version == "v1":
            _try_write(self.groups["memory"] / "memory.max_usage_in_bytes", "0")
            if "cpuacct" in self.groups:
                _try_write(self.groups["cpuacct"] / "cpuacct.usage", "0")
        else:
            _try_write(self.groups["unified"] / "memory.peak", "reset")
        self._base = CgroupStats()
        raw = self.stats()
        self._base = CgroupStats(oom_kills=raw.oom_kills, pids_max_hits=raw.pids_max_hits,
                                 cpu_ns=raw.cpu_ns if self.support.version == "v2" else None)

    def stats(self) -> CgroupStats:
        raw = self._raw_stats()
        base = self._base
        return CgroupStats(
            peak_memory_bytes=raw.peak_memory_bytes,
            oom_kills=raw.oom_kills - base.oom_kills,
            pids_max_hits=raw.pids_max_hits - base.pids_max_hits,
            cpu_ns=None if raw.cpu_ns is None else raw.cpu_ns - (base.cpu_ns or 0))

    def _raw_stats(self) -> CgroupStats:
        out = CgroupStats()
        if self.support.version == "v2":
            leaf = self.groups["unified"]
            out.peak_memory_bytes = _read_int(leaf / "memory.peak")
            out.oom_kills = _keyed(leaf / "memory.events", "oom_kill")
            out.pids_max_hits = _keyed(leaf / "pids.events", "max")
            usec = _keyed(leaf / "cpu.stat", "usage_usec", default=-1)
            out.cpu_ns = usec * 1000 if usec >= 0 else None
            return out
        mem = self.groups["memory"]
        out.peak_memory_bytes = _read_int(mem / "memory.max_usage_in_bytes")
        out.oom_kills = _keyed(mem / "memory.oom_control", "oom_kill")
        out.pids_max_hits = _keyed(self.groups["pids"] / "pids.events", "max")
        if "cpuacct" in self.groups:
            out.cpu_ns = _read_int(self.groups["cpuacct"] / "cpuacct.usage")
        return out

    def remove(self) -> bool:
        if self.removed:
            return True
        ok = True
        for leaf in self._leaves():
            ok = _rmdir(leaf) and ok
        self.removed = ok
        return ok

    def describe(self) -> str:
        return self.support.describe()


class LaunchGroup:
    """A group a sandbox's wrapper is moved into as soon as it is spawned, for time only.

    A migration first waits for an RCU grace period (the cgroup threadgroup lock; ~8-12 ms
    here, in scheduler ticks), unless another migration ended less than about one grace period
    before. Moving bubblewrap's monitor here right after the spawn starts that wait while
    bubblewrap builds the namespaces, so the interpreter's own move into its job group, a few
    milliseconds later, does not wait again. No limits are set and nothing is read from it:
    the wrapper and its namespace init stay outside the job's groups, as before (the survivor
    check covers them by pidfd and job uid); the interpreter is moved out of it into the job's
    group before it may run job code. One per backend, in the pids hierarchy on v1 (no side
    effects without ``pids.max``), removed by the backend's `close`.
    """

    def __init__(self, support: CgroupSupport, name: str) -> None:
        if support.version is None:
            raise OSError(errno.ENOTSUP, f"no usable cgroup hierarchy: {support.reason}")
        mount = support.paths.get("pids") or support.paths.get("unified") or next(
            iter(support.paths.values()))
        self.path = mount / ROOT_NAME / instance_name() / name
        self.path.mkdir(parents=True, exist_ok=True)

    def enter(self, pid: int) -> bool:
        return _try_write(self.path / "cgroup.procs", str(pid))

    def remove(self) -> bool:
        return _rmdir(self.path)


def _try_write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _read_small(path: Path) -> bytes | None:
    # os-level: the statistics are read after every job, on the caller's path, and a text-mode
    # open costs several times the read itself.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, 65536)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_int(path: Path) -> int | None:
    data = _read_small(path)
    try:
        return int(data.split()[0]) if data is not None else None
    except (ValueError, IndexError):
        return None


def _keyed(path: Path, key: str, default: int = 0) -> int:
    data = _read_small(path)
    if data is None:
        return default
    wanted = key.encode()
    try:
        for line in data.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == wanted:
                return int(parts[1])
    except ValueError:
        pass
    return default
