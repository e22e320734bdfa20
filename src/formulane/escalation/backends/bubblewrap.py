"""The default local backend: bubblewrap with every namespace, seccomp, a job uid and cgroups.

Contract: each job runs as ``bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL
--disable-userns --clearenv`` under a dedicated unprivileged host uid (so RLIMIT_NPROC holds;
uid 65534 inside), with a root that contains only: the environment's lean interpreter tree
read-only at /opt/python and its ELF loader, /proc of the job's own pid namespace, a minimal
/dev, a sized tmpfs /tmp, the host-backed workspace at /workspace (read-only inputs
bind-mounted over their paths) and the read-only job directory at /job. Host paths are handed
to bwrap as O_PATH file descriptors, so the job uid never needs to traverse host directories.
The network namespace has only loopback and the seccomp filter refuses every non-unix socket;
``network="open"`` shares the host network instead and is for trusted policy only. Nothing in
the sandbox's /proc names a host path or a bwrap option: the environment is bound from a
read-only overlay view (its mount options name only ``/proc/self/fd/N``; made once per
backend and environment, unmounted by `close`, reaped after a crash), and bwrap reads its
options from a descriptor (``--args``), so its namespace init's cmdline holds none of them.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from ..contract import Isolation, SandboxJob
from ..environments import Environment
from .base import BackendCapabilities
from .runner import LocalRunner, Resources, compiled_bootstrap
from .cgroups import instance_alive, instance_name
from .seccomp import filter_fd
from .workspace import mount_overlay_view, unmount

SANDBOX_PYTHON = "/opt/python"
SANDBOX_WORKSPACE = "/workspace"
SANDBOX_JOB = "/job"
INSIDE_UID = 65534
_NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl",
                  "/etc/ca-certificates", "/usr/share/ca-certificates")


def _bootstrap_file(env: Environment) -> str:
    # The compiled bootstrap is bytecode of this interpreter: only the same version runs it.
    return "bootstrap.pyc" if env.version == platform.python_version() else "bootstrap.py"


def _opath(path: Path | str) -> int:
    return os.open(path, os.O_PATH | os.O_CLOEXEC)


class BubblewrapBackend(LocalRunner):
    name = "bubblewrap"
    wrapper = True
    bootstrap_pyc = compiled_bootstrap(f"{SANDBOX_JOB}/bootstrap.py")

    def __init__(self, state_dir: Path | str, **kwargs: Any) -> None:
        super().__init__(state_dir, **kwargs)
        if not self.caps.bwrap_unprivileged:
            # Privileged fallback: bwrap runs as host root, so uid slots would not apply.
            self.uids = None
        self._views: dict[str, Path] = {}
        self._views_enabled = self.use_tmpfs  # we may mount
        if self._views_enabled:
            reap_views(self.state_dir / "views")

    # -- environment views ------------------------------------------------------------------

    def _views_root(self) -> Path:
        return self.state_dir / "views" / instance_name()

    def env_view(self, env: Environment) -> Path:
        """Where the sandbox's /opt/python comes from: a read-only overlay of the environment
        made once per backend (`mount_overlay_view`), so no host path of the environment
        store shows in the sandbox's /proc; the environment itself when we may not mount."""
        if not self._views_enabled:
            return Path(env.root)
        with self._lock:
            view = self._views.get(env.digest)
            if view is not None:
                return view
            root = self._views_root()
            empty = root / ".empty"
            try:
                empty.mkdir(parents=True, exist_ok=True)
                os.chmod(root.parent, 0o711)
                os.chmod(root, 0o711)
                view = root / f"{self._tag}-{env.digest.split(':')[-1][:32]}"
                view.mkdir(exist_ok=True)
                mount_overlay_view(view, Path(env.root), empty)
            except OSError:
                self._views_enabled = False  # an older kernel: bind the environment itself
                return Path(env.root)
            self._views[env.digest] = view
            return view

    def _release_views(self) -> None:
        with self._lock:
            views, self._views = list(self._views.values()), {}
        for view in views:
            try:
                unmount(view)
                view.rmdir()
            except OSError:
                pass
        root = self._views_root()
        try:
            (root / ".empty").rmdir()
            root.rmdir()
        except OSError:
            pass  # another backend of this process still has views here

    def close(self) -> None:
        super().close()
        self._release_views()

    def capabilities(self) -> BackendCapabilities:
        caps = self.caps
        reason = ""
        if not caps.bwrap:
            reason = "bubblewrap is not installed (Debian package: bubblewrap)"
        elif not (caps.bwrap_unprivileged or caps.bwrap_as_root):
            reason = caps.userns_reason
        elif not (caps.seccomp and caps.seccomp_arch):
            reason = f"seccomp filters unavailable for {caps.arch}"
        uid_mode = ("job uid slots" if self.uids is not None else
                    "host root mapped to 65534 (RLIMIT_NPROC not enforced)")
        mechanism = (f"bwrap {caps.bwrap_version} (user, pid, net, mount, ipc, uts, cgroup "
                     f"namespaces) + seccomp + {self.cg_support.describe()} + {uid_mode}"
                     + (" + tmpfs workspace" if self.use_tmpfs else ""))
        enforces = {"wall_timeout_s": "host", "cpu_time_s": "rlimit", "max_file_bytes": "rlimit",
                    "max_open_files": "rlimit", "stdout_max_bytes": "host", "tmp_bytes": "tmpfs",
                    "memory_bytes": "cgroup" if self.cg_support.version else "rlimit",
                    "max_processes": "cgroup" if self.cg_support.version else (
                        "rlimit" if self.uids is not None else "not_enforced"),
                    "workspace_bytes": "tmpfs" if self.use_tmpfs else "not_enforced",
                    "network": "netns"}
        return BackendCapabilities(
            name=self.name, available=not reason, unavailable_reason=reason,
            isolation=Isolation.NAMESPACE, mechanism=mechanism,
            network_modes=("none", "open"), states=("ephemeral", "session"),
            enforces=enforces,  # type: ignore[arg-type]
            cold_start="~20 ms at load ~3 (p50, 2 vCPUs; a warm-pool hit ~4 ms; bench/SANDBOX.md)")

    def network_enforcement(self, job: SandboxJob) -> str:
        if job.network.mode == "open":
            return "none: the host network namespace is shared (policy allowed 'open')"
        return "netns (loopback only) + seccomp (socket families other than AF_UNIX refused)"

    def workspace_path(self, res: Resources) -> str:
        return SANDBOX_WORKSPACE

    def job_path(self, res: Resources) -> str:
        return SANDBOX_JOB

    def env_paths(self, env: Environment) -> list[str]:
        return [f"{SANDBOX_PYTHON}/{env.site_packages}"]

    def launch_argv(self, job: SandboxJob, env: Environment, res: Resources, gate: int,
                    status: int) -> tuple[list[str], dict[str, str], list[int]]:
        assert res.workspace is not None and res.jobdir is not None and self.caps.bwrap
        fds: list[int] = []

        def fd_of(path: Path | str) -> str:
            fd = _opath(path)
            fds.append(fd)
            return str(fd)

        try:
            argv = [self.caps.bwrap, "--unshare-all", "--unshare-user"]
            if job.network.mode == "open":
                argv.append("--share-net")
            argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL",
                     "--disable-userns", "--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID),
                     "--hostname", "sandbox", "--clearenv"]
            environ = {"PATH": f"{SANDBOX_PYTHON}/bin", "HOME": SANDBOX_WORKSPACE,
                       "LANG": "C.UTF-8", "LD_LIBRARY_PATH": f"{SANDBOX_PYTHON}/lib",
                       "TMPDIR": "/tmp", **job.env}
            for key, value in environ.items():
                argv += ["--setenv", key, value]
            view = self.env_view(env)
            argv += ["--ro-bind-fd", fd_of(view), SANDBOX_PYTHON]
            if env.elf_interpreter and env.elf_interpreter_copy:
                argv += ["--ro-bind-fd", fd_of(view / env.elf_interpreter_copy),
                         env.elf_interpreter]
            argv += ["--proc", "/proc", "--dev", "/dev",
                     "--size", str(job.limits.tmp_bytes), "--tmpfs", "/tmp",
                     "--bind-fd", fd_of(res.workspace.path), SANDBOX_WORKSPACE]
            for rel, host in res.ro_files:
                argv += ["--ro-bind-fd", fd_of(host), f"{SANDBOX_WORKSPACE}/{rel}"]
            argv += ["--ro-bind-fd", fd_of(res.jobdir), SANDBOX_JOB]
            if job.network.mode == "open":
                for path in _NETWORK_FILES:
                    if os.path.exists(path):
                        argv += ["--ro-bind", path, path]
            # The root and /dev are bwrap's own tmpfs: make them read-only once populated, with a
            # small writable /dev/shm for POSIX semaphores (multiprocessing needs them).
            argv += ["--size", str(16 * 1024 * 1024), "--tmpfs", "/dev/shm",
                     "--remount-ro", "/dev", "--remount-ro", "/"]
            seccomp = filter_fd(self.seccomp_program(job))
            fds.append(seccomp)
            argv += ["--chdir", SANDBOX_WORKSPACE, "--seccomp", str(seccomp)]
            # The options travel through a descriptor (``--args``), not bwrap's command line:
            # the sandbox's /proc/1/cmdline (bwrap's namespace init) would show them all.
            options = filter_fd(b"".join(a.encode() + b"\0" for a in argv[1:]))
            fds.append(options)
            argv = [argv[0], "--args", str(options), "--",
                    f"{SANDBOX_PYTHON}/{env.python}", "-I", "-S", "-B", "-X", "utf8",
                    f"{SANDBOX_JOB}/{_bootstrap_file(env)}", str(gate), str(status)]
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return argv, {}, fds


def reap_views(root: Path) -> int:
    """Unmount and remove the environment views of processes that no longer exist."""
    removed = 0
    if not root.is_dir():
        return 0
    for inst in root.iterdir():
        if not inst.is_dir() or instance_alive(inst.name):
            continue
        for view in inst.iterdir():
            try:
                unmount(view)
                view.rmdir()
                removed += 1
            except OSError:
                pass
        try:
            inst.rmdir()
        except OSError:
            pass
    return removed
