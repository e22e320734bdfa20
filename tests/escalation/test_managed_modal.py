"""The Modal adapter, and the managed-backend rules no real SDK here can exercise.

Modal's client speaks gRPC to its control plane and to a per-task command router; exec and
file transfer both go through the router, and no stand-in for those two services is part of
this suite. What is checked here: the adapter only uses parameters and methods that the
installed Modal SDK really has (so a rename in the SDK fails this test, not production), and
the managed-backend rules that need a provider misbehaving in ways the E2B and Daytona fakes do
not (no exit status, a kill that cannot be confirmed), through a scripted provider.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Callable

import pytest

from formulane.escalation.artifacts import ArtifactStore
from formulane.escalation.backends.managed import (
    FoundSandbox, ManagedBackend, ProviderClient, ProviderExit, ProviderSandbox,
)
from formulane.escalation.contract import Isolation, Outcome, SandboxJob

from .conftest import make_job

# (object path in the modal SDK, parameters the adapter passes)
MODAL_SURFACE = [
    ("Sandbox.create", {"app", "image", "timeout", "block_network", "memory", "env", "tags",
                        "client", "environment_name"}),
    ("Sandbox.exec", {"timeout", "workdir"}),
    ("Sandbox.from_id", {"sandbox_id", "client"}),
    ("Sandbox.list", {"app_id", "tags", "client"}),
    ("Sandbox.terminate", set()),
    ("Sandbox.poll", set()),
    ("Sandbox.get_tags", set()),
    ("App.lookup", {"create_if_missing", "client", "environment_name"}),
    ("Image.debian_slim", set()),
]


@pytest.mark.parametrize("path,params", MODAL_SURFACE, ids=[m[0] for m in MODAL_SURFACE])
def test_the_adapter_matches_the_installed_modal_sdk(path: str, params: set[str]) -> None:
    modal = pytest.importorskip("modal", reason="the modal SDK is not installed")
    owner, name = path.split(".")
    fn = getattr(getattr(modal, owner), name)
    accepted = set(inspect.signature(fn).parameters)
    assert params <= accepted, f"modal.{path} no longer takes {sorted(params - accepted)}"


def test_modal_filesystem_methods_exist() -> None:
    pytest.importorskip("modal", reason="the modal SDK is not installed")
    from modal.sandbox._filesystem import _SandboxFilesystem

    for name, params in [("write_bytes", {"data", "remote_path"}),
                         ("read_bytes", {"remote_path"}), ("list_files", {"remote_path"}),
                         ("make_directory", {"remote_path", "create_parents"})]:
        accepted = set(inspect.signature(getattr(_SandboxFilesystem, name)).parameters)
        assert params <= accepted, name


def test_modal_client_declares_gvisor_isolation() -> None:
    pytest.importorskip("modal", reason="the modal SDK is not installed")
    from formulane.escalation.backends.modal import ModalClient

    client = ModalClient(app_name="formulane-tests")
    assert client.isolation is Isolation.KERNEL and "gVisor" in client.mechanism
    assert client.version.split(".")[0].isdigit()


# -- scripted provider: misbehaviour the fakes do not produce --------------------------------

class _Box(ProviderSandbox):
    def __init__(self, script: Callable[[], ProviderExit], killable: bool) -> None:
        self.sandbox_id = "scripted-1"
        self.script = script
        self.killable = killable
        self.alive = True

    def write_file(self, path: str, data: bytes) -> None:
        pass

    def run(self, argv: list[str], *, timeout_s: float, cwd: str,
            on_stdout: Callable[[str], None], on_stderr: Callable[[str], None]) -> ProviderExit:
        return self.script()

    def list_files(self, directory: str) -> list[tuple[str, int]]:
        return []

    def read_file(self, path: str) -> bytes:
        return b""

    def kill(self) -> None:
        if self.killable:
            self.alive = False


class _Scripted(ProviderClient):
    name = "scripted"

    def __init__(self, script: Callable[[], ProviderExit], killable: bool = True) -> None:
        self.box = _Box(script, killable)

    def create(self, job: SandboxJob, *, labels: dict[str, str],
               ttl_s: float) -> ProviderSandbox:
        return self.box

    def connect(self, sandbox_id: str) -> ProviderSandbox | None:
        return self.box if self.box.alive else None

    def find(self, owner: str) -> list[FoundSandbox]:
        return []


def _backend(client: ProviderClient, tmp_path: Path) -> ManagedBackend:
    return ManagedBackend(client, owner="t", artifacts=ArtifactStore(tmp_path / "a"),
                          kill_confirm_s=0.3)


def test_no_exit_status_is_never_a_success(tmp_path: Path) -> None:
    backend = _backend(_Scripted(lambda: ProviderExit(None, "all good", "")), tmp_path)
    receipt = backend.run(make_job("print(1)"))
    assert receipt.outcome is Outcome.UNKNOWN and "no confirmed exit status" in \
        receipt.outcome_detail


def test_an_unconfirmed_kill_after_a_timeout_is_unknown(tmp_path: Path) -> None:
    from formulane.escalation.backends.managed import ProviderTimeout

    def hang() -> ProviderExit:
        raise ProviderTimeout("client timeout")

    backend = _backend(_Scripted(hang, killable=False), tmp_path)
    receipt = backend.run(make_job("print(1)"))
    assert receipt.outcome is Outcome.UNKNOWN and not receipt.cleanup.sandbox_destroyed


def test_a_syntax_error_never_creates_a_sandbox(tmp_path: Path) -> None:
    created: list[str] = []

    class Counting(_Scripted):
        def create(self, job: SandboxJob, *, labels: dict[str, str],
                   ttl_s: float) -> ProviderSandbox:
            created.append(str(job.job_id))
            return super().create(job, labels=labels, ttl_s=ttl_s)

    receipt = _backend(Counting(lambda: ProviderExit(0)), tmp_path).run(make_job("def f(:"))
    assert receipt.outcome is Outcome.SYNTAX_ERROR and created == []
