"""The plain-process fallback, for machines where bubblewrap cannot build namespaces.

Contract: the job's interpreter runs directly on the host, in its own session and process
group, as a dedicated unprivileged uid when we are root, with rlimits, the per-job cgroup where
available, and — applied by the bootstrap before any job code — no_new_privs, a Landlock
ruleset (read-only: the environment and the job directory; read-write: the workspace; from ABI
4 also TCP bind/connect denied) and the same seccomp filter as bubblewrap. Every receipt says
``isolation=process``; jobs that ask for namespace isolation or stronger are refused. Without
Landlock the host filesystem is only protected by ordinary permissions, and the receipt says so.
Host directories on the way to the state directory must be traversable by the job uid.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..contract import Enforcement, Isolation, Limits, SandboxJob
from ..environments import Environment
from .base import BackendCapabilities
from .runner import LocalRunner, Resources
from .workspace import RUNNER_DIR


def _traversable(path: Path) -> str:
    """'' when every ancestor of ``path`` lets others search it, else the first that does not."""
    current = path.resolve()
    for part in [current, *current.parents]:
        try:
            if not os.stat(part).st_mode & 0o001:
                return str(part)
        except OSError:
            return str(part)
    return ""


class ProcessBackend(LocalRunner):
    name = "process"
    wrapper = False
    cgroup_controllers = ("memory", "pids", "freezer", "cpuacct")

    def __init__(self, state_dir: Path | str, **kwargs: Any) -> None:
        super().__init__(state_dir, **kwargs)
        self._blocked = _traversable(self.state_dir) if self.uids is not None else ""

    def capabilities(self) -> BackendCapabilities:
        caps = self.caps
        reason = ""
        if self._blocked:
            reason = (f"{self._blocked} is not searchable by the job uid; put the state "
                      "directory somewhere like /var/lib/formulane")
        elif not (caps.seccomp and caps.seccomp_arch):
            reason = f"seccomp filters unavailable for {caps.arch}"
        landlock = f"landlock abi {caps.landlock_abi}" if caps.landlock_abi else \
            "no landlock (filesystem protected by permissions only)"
        mechanism = (f"setsid + {'job uid slots' if self.uids is not None else 'same uid'} + "
                     f"rlimits + seccomp + {landlock} + {self.cg_support.describe()}")
        enforces = {"wall_timeout_s": "host", "cpu_time_s": "rlimit", "max_file_bytes": "rlimit",
                    "max_open_files": "rlimit", "stdout_max_bytes": "host",
                    "memory_bytes": "cgroup" if self.cg_support.version else "rlimit",
                    "max_processes": "cgroup" if self.cg_support.version else (
                        "rlimit" if self.uids is not None else "not_enforced"),
                    "workspace_bytes": "tmpfs" if self.use_tmpfs else "not_enforced",
                    "network": "seccomp"}
        return BackendCapabilities(
            name=self.name, available=not reason, unavailable_reason=reason,
            isolation=Isolation.PROCESS, mechanism=mechanism, network_modes=("none", "open"),
            states=("ephemeral",), enforces=enforces,  # type: ignore[arg-type]
            cold_start="~12 ms")

    def network_enforcement(self, job: SandboxJob) -> str:
        if job.network.mode == "open":
            return "none: host network (policy allowed 'open')"
        extra = " + landlock TCP deny" if self.caps.landlock_abi >= 4 else ""
        return "seccomp (socket families other than AF_UNIX refused)" + extra

    def workspace_path(self, res: Resources) -> str:
        assert res.workspace is not None
        return str(res.workspace.path)

    def job_path(self, res: Resources) -> str:
        assert res.jobdir is not None
        return str(res.jobdir)

    def env_paths(self, env: Environment) -> list[str]:
        return [str(Path(env.root) / env.site_packages)]

    def confinement(self, job: SandboxJob, env: Environment,
                    res: Resources) -> dict[str, Any] | None:
        conf: dict[str, Any] = {"seccomp": self.seccomp_program(job)}
        if self.caps.landlock_abi:
            rules = [(env.root, False), (self.job_path(res), False),
                     (self.workspace_path(res), True), ("/dev/null", True)]
            if job.network.mode == "open":
                rules += [(p, False) for p in ("/etc/resolv.conf", "/etc/hosts", "/etc/ssl")]
            conf["landlock"] = {"abi": self.caps.landlock_abi, "rules": rules}
        return conf

    def launch_argv(self, job: SandboxJob, env: Environment, res: Resources, gate: int,
                    status: int) -> tuple[list[str], dict[str, str], list[int]]:
        ws = self.workspace_path(res)
        environ = {"PATH": str(Path(env.root) / "bin"), "HOME": ws, "LANG": "C.UTF-8",
                   "LD_LIBRARY_PATH": str(Path(env.root) / "lib"),
                   "TMPDIR": f"{ws}/{RUNNER_DIR}/tmp", **job.env}
        argv = [str(env.host_python), "-I", "-S", "-B", "-X", "utf8",
                f"{self.job_path(res)}/bootstrap.py", str(gate), str(status)]
        return argv, environ, []

    def _extra_enforcement(self, limits: Limits, res: Resources) -> list[Enforcement]:
        return [Enforcement(knob="filesystem", requested="workspace only",
                            enforced=f"landlock abi {self.caps.landlock_abi}"
                            if self.caps.landlock_abi else None,
                            by="landlock" if self.caps.landlock_abi else "not_enforced")]
