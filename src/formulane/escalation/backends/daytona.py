"""Daytona adapter for `ManagedBackend`; needs the optional ``daytona`` SDK.

Contract: `DaytonaClient` maps the provider verbs onto the Daytona Python SDK (tested with
daytona 0.226): ``Daytona.create`` with our labels, ``network_block_all`` unless the policy
allowed an open network, the provider TTL as ``auto_stop_interval`` / ``ttl_minutes`` and
``ephemeral=True`` so a stopped sandbox is deleted; ``fs.upload_file`` / ``list_files`` /
``download_file`` for inputs and artifacts; ``process.exec`` with an explicit timeout (stderr
goes to a file in the sandbox, because ``exec`` returns one combined stream); ``delete`` and
``get`` (not found) to confirm destruction; ``list`` by owner label for the startup reaper. It
is tested against the SDK's real client classes with the network boundary replaced (an
in-process HTTP server on loopback standing in for the Daytona API and toolbox), never against
app.daytona.io.
"""

from __future__ import annotations

import math
import shlex
from typing import Any, Callable

from ...errors import EscalationError
from ..contract import Isolation, SandboxJob
from .managed import (
    JOB_DIR, OWNER_LABEL, FoundSandbox, ProviderClient, ProviderExit, ProviderSandbox,
    ProviderTimeout,
)

_STDERR = f"{JOB_DIR}/stderr.txt"


def _sdk() -> Any:
    try:
        import daytona
    except ImportError:
        raise EscalationError("the Daytona adapter needs the daytona SDK", code="E602",
                              hint="pip install 'formulane[daytona]' (daytona>=0.200)") from None
    return daytona


class DaytonaSandbox(ProviderSandbox):
    def __init__(self, client: Any, sandbox: Any) -> None:
        self.client = client
        self.sandbox = sandbox
        self.sandbox_id = sandbox.id

    def write_file(self, path: str, data: bytes) -> None:
        self.sandbox.fs.upload_file(data, path)

    def run(self, argv: list[str], *, timeout_s: float, cwd: str,
            on_stdout: Callable[[str], None], on_stderr: Callable[[str], None]) -> ProviderExit:
        daytona = _sdk()
        command = " ".join(shlex.quote(a) for a in argv) + f" 2> {shlex.quote(_STDERR)}"
        try:
            response = self.sandbox.process.exec(command, cwd=cwd,
                                                 timeout=max(1, math.ceil(timeout_s)))
        except (daytona.DaytonaTimeoutError, daytona.DaytonaProcessExecutionTimeoutError) as exc:
            raise ProviderTimeout(str(exc)) from None
        if response.exit_code is not None and response.exit_code < 0:
            # Daytona reports a command killed at its timeout with a negative exit code.
            raise ProviderTimeout(f"exit code {response.exit_code}")
        stdout = response.result or ""
        try:
            stderr = (self.sandbox.fs.download_file(_STDERR) or b"").decode("utf-8", "replace")
        except daytona.DaytonaError:
            stderr = ""
        if stdout:
            on_stdout(stdout)
        if stderr:
            on_stderr(stderr)
        return ProviderExit(response.exit_code, "", "")

    def list_files(self, directory: str) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        pending = [directory]
        while pending:
            current = pending.pop()
            for info in self.sandbox.fs.list_files(current):
                path = f"{current}/{info.name}"
                if info.is_dir:
                    pending.append(path)
                else:
                    out.append((path[len(directory) + 1:], int(info.size)))
        return out

    def read_file(self, path: str) -> bytes:
        return bytes(self.sandbox.fs.download_file(path) or b"")

    def kill(self) -> None:
        self.client.delete(self.sandbox)


class DaytonaClient(ProviderClient):
    name = "daytona"
    isolation = Isolation.MICROVM
    mechanism = "Daytona sandbox (dedicated kernel per sandbox, provider network block)"
    network_modes = ("none", "open")

    def __init__(self, *, api_key: str | None = None, api_url: str | None = None,
                 snapshot: str | None = None, create_timeout_s: float = 60.0,
                 **config: Any) -> None:
        daytona = _sdk()
        from importlib.metadata import version

        self.version = version("daytona")
        self.snapshot = snapshot
        self.create_timeout_s = create_timeout_s
        self.client = daytona.Daytona(daytona.DaytonaConfig(api_key=api_key, api_url=api_url,
                                                            **config))

    def create(self, job: SandboxJob, *, labels: dict[str, str],
               ttl_s: float) -> ProviderSandbox:
        daytona = _sdk()
        minutes = max(1, math.ceil(ttl_s / 60))
        params = daytona.CreateSandboxFromSnapshotParams(
            language="python", labels=labels, env_vars=dict(job.env),
            network_block_all=job.network.mode == "none", auto_stop_interval=minutes,
            ephemeral=True, snapshot=self.snapshot)
        sandbox = self.client.create(params, timeout=self.create_timeout_s)
        return DaytonaSandbox(self.client, sandbox)

    def connect(self, sandbox_id: str) -> ProviderSandbox | None:
        daytona = _sdk()
        try:
            return DaytonaSandbox(self.client, self.client.get(sandbox_id))
        except daytona.DaytonaNotFoundError:
            return None

    def close(self) -> None:
        """Stop the SDK's event threads (socket.io dispatcher, subscription expiry)."""
        manager = getattr(self.client, "_subscription_manager", None)
        if manager is not None:
            manager.shutdown()
        dispatcher = getattr(self.client, "_event_dispatcher", None)
        if dispatcher is not None:
            dispatcher.disconnect()
            worker = getattr(dispatcher, "_bg_thread", None)
            if worker is not None:
                worker.join(timeout=10)

    def find(self, owner: str) -> list[FoundSandbox]:
        daytona = _sdk()
        query = daytona.ListSandboxesQuery(labels={OWNER_LABEL: owner})
        return [FoundSandbox(s.id, dict(s.labels or {})) for s in self.client.list(query)]
