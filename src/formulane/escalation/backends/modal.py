"""Modal adapter (gVisor sandboxes) for `ManagedBackend`; needs the optional ``modal`` SDK.

Contract: `ModalClient` maps the provider verbs onto Modal's documented Sandbox API (written
against modal 1.6): ``Sandbox.create`` in one app with ``timeout`` = the provider TTL,
``block_network`` unless the policy allowed an open network, ``memory`` in MiB from the limits,
the job's allowlisted env, and our labels as sandbox tags (``tags=``, also used by
``Sandbox.list`` for the startup reaper); ``filesystem.write_bytes / list_files / read_bytes``
for inputs and artifacts (the working directory is created before exec; listing walks
``FileInfo.is_dir()/is_file()`` and never follows a symlink); ``exec`` with an explicit
timeout, where ``wait() == -1`` is a timeout, not an exit status (letta-evals PR #262);
``terminate`` and ``poll`` (an exit code once the sandbox is finished) to confirm destruction.
Modal's client speaks gRPC to the control plane *and* to a per-task command router (exec and
file transfer both go through it); the test-suite runs this adapter through the real SDK
against an in-process stand-in of both (docs/escalation.md says what that covers).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ...errors import EscalationError
from ..contract import Isolation, SandboxJob
from .managed import (
    OWNER_LABEL, FoundSandbox, ProviderClient, ProviderExit, ProviderSandbox, ProviderTimeout,
)


def _sdk() -> Any:
    try:
        import modal
    except ImportError:
        raise EscalationError("the Modal adapter needs the modal SDK", code="E602",
                              hint="pip install 'formulane[modal]' (modal>=1.0)") from None
    return modal


class ModalSandbox(ProviderSandbox):
    def __init__(self, sandbox: Any) -> None:
        self.sb = sandbox
        self.sandbox_id = sandbox.object_id

    def write_file(self, path: str, data: bytes) -> None:
        parent = path.rsplit("/", 1)[0]
        if parent:
            self.sb.filesystem.make_directory(parent, create_parents=True)
        self.sb.filesystem.write_bytes(data, path)

    def run(self, argv: list[str], *, timeout_s: float, cwd: str,
            on_stdout: Callable[[str], None], on_stderr: Callable[[str], None]) -> ProviderExit:
        # The working directory must exist before exec (the runtime chdirs into it); a job
        # without input files has written nothing there yet.
        self.sb.filesystem.make_directory(cwd, create_parents=True)
        process = self.sb.exec(*argv, timeout=max(1, math.ceil(timeout_s)), workdir=cwd)
        for line in process.stdout:
            on_stdout(line)
        stderr = process.stderr.read()
        if stderr:
            on_stderr(stderr)
        code = process.wait()
        if code == -1:  # Modal's exec timeout is a return value, not an exception
            raise ProviderTimeout("modal exec timed out (wait() == -1)")
        return ProviderExit(code, "", "")

    def list_files(self, directory: str) -> list[tuple[str, int]]:
        """Regular files under ``directory`` (relative path, size). Symlinks are skipped, never
        followed: a link planted by the job must not loop the walk or pull in other files."""
        modal = _sdk()
        out: list[tuple[str, int]] = []
        pending = [directory]
        while pending:
            current = pending.pop()
            try:
                entries = self.sb.filesystem.list_files(current)
            except modal.exception.SandboxFilesystemNotFoundError:
                continue  # nothing was written there
            for info in entries:  # modal.types.FileInfo
                path = f"{current}/{info.name}"
                if info.is_dir():
                    pending.append(path)
                elif info.is_file():
                    out.append((path[len(directory) + 1:], int(info.size)))
        return out

    def read_file(self, path: str) -> bytes:
        return bytes(self.sb.filesystem.read_bytes(path))

    def kill(self) -> None:
        self.sb.terminate()


class ModalClient(ProviderClient):
    name = "modal"
    isolation = Isolation.KERNEL
    mechanism = "Modal Sandbox (gVisor user-space kernel)"
    network_modes = ("none", "open")

    def __init__(self, *, app_name: str = "formulane-sandboxes", image: Any = None,
                 client: Any = None, environment_name: str | None = None) -> None:
        modal = _sdk()
        from importlib.metadata import version

        self.version = version("modal")
        self.app_name = app_name
        self.image = image
        self.client = client
        self.environment_name = environment_name
        self._app: Any = None
        self._modal = modal

    def _application(self) -> Any:
        if self._app is None:
            self._app = self._modal.App.lookup(self.app_name, create_if_missing=True,
                                               client=self.client,
                                               environment_name=self.environment_name)
        return self._app

    def create(self, job: SandboxJob, *, labels: dict[str, str],
               ttl_s: float) -> ProviderSandbox:
        modal = self._modal
        sandbox = modal.Sandbox.create(
            app=self._application(), image=self.image or modal.Image.debian_slim(),
            timeout=int(math.ceil(ttl_s)), block_network=job.network.mode == "none",
            memory=max(128, job.limits.memory_bytes // (1024 * 1024)), env=dict(job.env),
            tags=labels, client=self.client, environment_name=self.environment_name)
        return ModalSandbox(sandbox)

    def connect(self, sandbox_id: str) -> ProviderSandbox | None:
        modal = self._modal
        try:
            sandbox = modal.Sandbox.from_id(sandbox_id, client=self.client)
        except modal.exception.NotFoundError:
            return None
        if sandbox.poll() is not None:
            return None  # finished: its exit code is known, nothing is running
        return ModalSandbox(sandbox)

    def find(self, owner: str) -> list[FoundSandbox]:
        modal = self._modal
        found: list[FoundSandbox] = []
        for sandbox in modal.Sandbox.list(app_id=self._application().app_id,
                                          tags={OWNER_LABEL: owner}, client=self.client):
            found.append(FoundSandbox(sandbox.object_id, dict(sandbox.get_tags())))
        return found
