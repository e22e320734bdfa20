"""E2B adapter (Firecracker microVMs) for `ManagedBackend`; needs the optional ``e2b`` SDK.

Contract: `E2BClient` maps the five provider verbs onto the E2B Python SDK (tested with
e2b 2.63): ``Sandbox.create`` with our labels as metadata, the provider TTL as ``timeout``,
``allow_internet_access`` from the network policy and the job's allowlisted env; ``commands.run``
with an explicit timeout (the SDK default is 60 s, and a client timeout does *not* stop the
remote process: E2B issue #500), so the adapter kills the whole sandbox afterwards;
``files.write/list/read`` for inputs and artifacts; ``kill`` plus ``get_info`` to confirm the
sandbox is gone; ``Sandbox.list`` filtered by our owner label for the startup reaper. It is
tested against the SDK's real client classes with the network boundary replaced (an in-process
WSGI E2B API and envd behind the SDK's own pyqwest transport hook), never against e2b.dev.
"""

from __future__ import annotations

import shlex
from typing import Any, Callable

from ...errors import EscalationError
from ..contract import Isolation, SandboxJob
from .managed import (
    OWNER_LABEL, FoundSandbox, ProviderClient, ProviderExit, ProviderSandbox, ProviderTimeout,
)


def _sdk() -> Any:
    try:
        import e2b
    except ImportError:
        raise EscalationError("the E2B adapter needs the e2b SDK", code="E602",
                              hint="pip install 'formulane[e2b]' (e2b>=2.60)") from None
    return e2b


class E2BSandbox(ProviderSandbox):
    def __init__(self, sandbox: Any, request_timeout: float) -> None:
        self.sbx = sandbox
        self.sandbox_id = sandbox.sandbox_id
        self.request_timeout = request_timeout

    def write_file(self, path: str, data: bytes) -> None:
        # Octet-stream upload (envd >= 0.5.7; the SDK falls back to multipart on older envd).
        self.sbx.files.write(path, data, request_timeout=self.request_timeout,
                             use_octet_stream=True)

    def run(self, argv: list[str], *, timeout_s: float, cwd: str,
            on_stdout: Callable[[str], None], on_stderr: Callable[[str], None]) -> ProviderExit:
        e2b = _sdk()
        command = " ".join(shlex.quote(a) for a in argv)
        try:
            result = self.sbx.commands.run(command, cwd=cwd, timeout=timeout_s,
                                           on_stdout=on_stdout, on_stderr=on_stderr,
                                           request_timeout=self.request_timeout)
        except e2b.CommandExitException as exc:
            return ProviderExit(exc.exit_code, exc.stdout, exc.stderr)
        except e2b.TimeoutException as exc:
            raise ProviderTimeout(str(exc)) from None
        return ProviderExit(result.exit_code, result.stdout, result.stderr)

    def list_files(self, directory: str) -> list[tuple[str, int]]:
        e2b = _sdk()
        out: list[tuple[str, int]] = []
        for entry in self.sbx.files.list(directory, depth=32,
                                         request_timeout=self.request_timeout):
            if entry.type == e2b.FileType.FILE and entry.path.startswith(directory + "/"):
                out.append((entry.path[len(directory) + 1:], int(entry.size)))
        return out

    def read_file(self, path: str) -> bytes:
        data = self.sbx.files.read(path, format="bytes", request_timeout=self.request_timeout)
        return bytes(data)

    def kill(self) -> None:
        self.sbx.kill(request_timeout=self.request_timeout)


class E2BClient(ProviderClient):
    name = "e2b"
    isolation = Isolation.MICROVM
    network_modes = ("none", "open")

    def __init__(self, *, api_key: str | None = None, template: str | None = None,
                 request_timeout: float = 30.0, **options: Any) -> None:
        e2b = _sdk()
        self.version = getattr(e2b, "__version__", None) or _dist_version("e2b")
        self.template = template
        self.request_timeout = request_timeout
        self.options = {"api_key": api_key, **options} if api_key else dict(options)
        self.mechanism = f"E2B Firecracker microVM (template {template or 'default'})"

    def create(self, job: SandboxJob, *, labels: dict[str, str],
               ttl_s: float) -> ProviderSandbox:
        e2b = _sdk()
        sandbox = e2b.Sandbox.create(
            template=self.template, timeout=int(ttl_s) + 1, metadata=labels, envs=dict(job.env),
            allow_internet_access=job.network.mode != "none",
            request_timeout=self.request_timeout, **self.options)
        return E2BSandbox(sandbox, self.request_timeout)

    def connect(self, sandbox_id: str) -> ProviderSandbox | None:
        e2b = _sdk()
        try:
            e2b.Sandbox.get_info(sandbox_id, request_timeout=self.request_timeout,
                                 **self.options)
            sandbox = e2b.Sandbox.connect(sandbox_id, request_timeout=self.request_timeout,
                                          **self.options)
        except (e2b.NotFoundException, e2b.SandboxNotFoundException):
            return None
        return E2BSandbox(sandbox, self.request_timeout)

    def gone(self, sandbox_id: str) -> bool:
        e2b = _sdk()
        try:
            e2b.Sandbox.get_info(sandbox_id, request_timeout=self.request_timeout,
                                 **self.options)
        except (e2b.NotFoundException, e2b.SandboxNotFoundException):
            return True
        return False

    def find(self, owner: str) -> list[FoundSandbox]:
        e2b = _sdk()
        from e2b import SandboxQuery

        pages = e2b.Sandbox.list(query=SandboxQuery(metadata={OWNER_LABEL: owner}),
                                 request_timeout=self.request_timeout, **self.options)
        found: list[FoundSandbox] = []
        while pages.has_next:
            for info in pages.next_items():
                found.append(FoundSandbox(info.sandbox_id, dict(info.metadata or {})))
        return found


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"
