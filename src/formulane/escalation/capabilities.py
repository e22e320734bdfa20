"""What this machine can enforce, probed for real once per process and written in every receipt.

Contract: `probe()` returns a frozen `Capabilities` (cached; ``refresh=True`` probes again). It
checks, by doing rather than by reading version strings where it can: bubblewrap present and
its version, whether bubblewrap can build a sandbox as an unprivileged uid (user namespaces
allowed) or only as root, the cgroup hierarchy (v2 first, then v1 memory+pids), seccomp filter
support, the Landlock ABI (via the landlock_create_ruleset version query), whether we may mount
a tmpfs, and whether we may switch uid. `isolation_tier()` names the strongest local isolation
that is actually available; a backend refuses jobs that ask for more.
"""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from .backends import cgroups
from .backends.seccomp import supported_arch
from .contract import Isolation

PROBE_UID = 65534
_lock = threading.Lock()
_cached: "Capabilities | None" = None


class Capabilities(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: str
    kernel: str
    euid: int
    bwrap: str | None
    bwrap_version: str | None
    bwrap_unprivileged: bool
    bwrap_as_root: bool
    userns_reason: str
    cgroup: str | None
    cgroup_controllers: tuple[str, ...]
    cgroup_reason: str
    seccomp: bool
    seccomp_arch: bool
    landlock_abi: int
    can_mount_tmpfs: bool
    can_switch_uid: bool
    kvm: bool

    def isolation_tier(self) -> Isolation:
        if self.bwrap and (self.bwrap_unprivileged or self.bwrap_as_root):
            return Isolation.NAMESPACE
        return Isolation.PROCESS

    def summary(self) -> str:
        bits = [f"bwrap {self.bwrap_version}" if self.bwrap else "no bwrap",
                "userns" if self.bwrap_unprivileged else "no unprivileged userns",
                f"cgroup {self.cgroup or 'none'}",
                "seccomp" if self.seccomp else "no seccomp",
                f"landlock abi {self.landlock_abi}" if self.landlock_abi else "no landlock"]
        return ", ".join(bits)


def _landlock_abi() -> int:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        version = libc.syscall(444, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
        return int(version) if version > 0 else 0
    except (OSError, AttributeError):
        return 0


def _seccomp() -> bool:
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    return "Seccomp_filters:" in status or "Seccomp:" in status


def _bwrap_probe(bwrap: str, uid: int | None) -> tuple[bool, str]:
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"]
    try:
        result = subprocess.run(
            argv, capture_output=True, timeout=15, stdin=subprocess.DEVNULL, env={},
            user=uid, group=uid, extra_groups=[] if uid is not None else None)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    if result.returncode == 0:
        return True, ""
    return False, result.stderr.decode("utf-8", "replace").strip()[:300]


def _probe() -> Capabilities:
    euid = os.geteuid()
    bwrap = shutil.which("bwrap")
    version = None
    unprivileged = as_root = False
    reason = "bubblewrap is not installed (Debian package: bubblewrap)"
    if bwrap:
        try:
            out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
            version = out.stdout.split()[-1] if out.stdout.split() else "unknown"
        except (OSError, subprocess.SubprocessError):
            version = "unknown"
        unprivileged, why = _bwrap_probe(bwrap, PROBE_UID if euid == 0 else None)
        reason = "" if unprivileged else f"unprivileged user namespaces refused: {why}"
        if not unprivileged and euid == 0:
            as_root, why_root = _bwrap_probe(bwrap, None)
            if not as_root:
                reason += f"; as root too: {why_root}"
    support = cgroups.discover()
    with tempfile.TemporaryDirectory(prefix="formulane-probe-") as scratch:
        from .backends.workspace import can_mount
        mount_ok = euid == 0 and can_mount(Path(scratch))
    return Capabilities(
        arch=platform.machine(), kernel=platform.release(), euid=euid, bwrap=bwrap,
        bwrap_version=version, bwrap_unprivileged=unprivileged, bwrap_as_root=as_root,
        userns_reason=reason, cgroup=support.version, cgroup_controllers=support.controllers,
        cgroup_reason=support.reason, seccomp=_seccomp(), seccomp_arch=supported_arch(),
        landlock_abi=_landlock_abi(), can_mount_tmpfs=mount_ok, can_switch_uid=euid == 0,
        kvm=os.path.exists("/dev/kvm"))


def probe(refresh: bool = False) -> Capabilities:
    """The machine's capabilities (probed once per process unless ``refresh``)."""
    global _cached
    with _lock:
        if _cached is None or refresh:
            _cached = _probe()
        return _cached


def cgroup_support() -> cgroups.CgroupSupport:
    """The cgroup hierarchy to use (same discovery as the probe, returned with its paths)."""
    return cgroups.discover()
