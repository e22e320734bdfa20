"""The Modal adapter against the real Modal SDK, over gRPC to an in-process stand-in.

`FakeModal` (tests/escalation/modal_fake.py) serves Modal's control plane and task command router
on 127.0.0.1 with the SDK's own protobuf messages; `modal.Client`, `App.lookup`, `Image`,
`Sandbox.create / exec / terminate / poll / list / get_tags` and the sandbox filesystem (which
runs the SDK's fs-tools helper through exec) are the real classes, unpatched. The job command
the fake receives runs for real in the local bubblewrap sandbox, so exit codes, tracebacks and
artifacts are real. No request leaves the process. Further down: managed-backend rules that need
a provider misbehaving in ways no fake here produces, through a scripted provider.
"""

from __future__ import annotations

import inspect
import math
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator

import pytest

from formulane.escalation.artifacts import ArtifactStore
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.backends.managed import (
    EXPIRES_LABEL, JOB_DIR, JOB_LABEL, OWNER_LABEL, WORK_DIR, FoundSandbox, ManagedBackend,
    ProviderClient, ProviderExit, ProviderSandbox,
)
from formulane.escalation.contract import Isolation, MiB, Outcome, SandboxJob

from .conftest import MANAGED_STORIES as STORIES
from .conftest import make_job

modal = pytest.importorskip("modal", reason="the modal SDK is not installed (pip install modal)")

from formulane.escalation.backends.modal import ModalClient  # noqa: E402
from modal_proto import api_pb2  # noqa: E402

from .managed_support import run_staged  # noqa: E402
from .modal_fake import ExecResult, FakeModal, FakeModalBox  # noqa: E402


def _run_for_real(sandbox: BubblewrapBackend):  # type: ignore[no-untyped-def]
    def execute(box: FakeModalBox, argv: list[str], workdir: str) -> ExecResult | None:
        code = box.files[f"{JOB_DIR}/main.py"].decode()
        if "# fake: hang" in code:
            box.unkillable = "# fake: unkillable" in code
            return None
        assert argv == ["python3", f"{JOB_DIR}/run.py"] and workdir == WORK_DIR
        if "# fake: symlink loop" in code:  # a link the job planted, pointing at its own dir
            box.symlinks[f"{WORK_DIR}/loop"] = WORK_DIR
        exit_code, stdout, stderr = run_staged(sandbox, box.files)
        return ExecResult(exit_code, stdout.encode(), stderr.encode())

    return execute


@pytest.fixture
def fake(sandbox: BubblewrapBackend) -> Iterator[FakeModal]:
    server = FakeModal(_run_for_real(sandbox))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def client(fake: FakeModal) -> Iterator[object]:
    with modal.Client(fake.url, api_pb2.CLIENT_TYPE_CLIENT, ("ak-test", "as-test")) as sdk:
        yield sdk


def _managed(client: object, tmp_path: Path, **kw: object) -> ManagedBackend:
    return ManagedBackend(ModalClient(app_name="formulane-tests", client=client),
                          owner="formulane-tests", artifacts=ArtifactStore(tmp_path / "art"),
                          **kw)  # type: ignore[arg-type]


@pytest.fixture
def backend(client: object, fake: FakeModal, tmp_path: Path) -> ManagedBackend:
    ids: list[tuple[str, dict[str, str], int]] = []
    managed = _managed(client, tmp_path, on_provider_ids=lambda job_id, pid: ids.append(
        (job_id, pid, len(fake.calls))))
    managed.recorded_ids = ids  # type: ignore[attr-defined]
    return managed


def test_a_job_runs_through_the_sdk_labelled_with_a_ttl_and_is_terminated(
        backend: ManagedBackend, fake: FakeModal) -> None:
    job = make_job("print('total', inputs['a'] + inputs['b'])\n"
                   "open('sub/out.csv', 'w').write(open('data.txt').read().upper())",
                   inputs={"a": 2, "b": 3}, artifact_globs=("**/*.csv",),
                   files=[{"path": "data.txt", "content": b"abc", "mode": "rw"},
                          {"path": "sub/keep.txt", "content": b"", "mode": "rw"}],
                   limits={"wall_timeout_s": 20, "memory_bytes": 256 * MiB})
    receipt = backend.run(job)
    assert receipt.outcome is Outcome.SUCCEEDED, (receipt.outcome_detail, receipt.stderr.text)
    assert receipt.stdout.text == "total 5\n"
    [box] = fake.boxes.values()
    assert "SandboxCreateV2" in fake.calls  # modal 1.6's default sandbox API
    assert box.tags[OWNER_LABEL] == "formulane-tests" and box.tags[JOB_LABEL] == str(job.job_id)
    expires = datetime.fromisoformat(box.tags[EXPIRES_LABEL])
    assert expires > datetime.now(timezone.utc) + timedelta(seconds=20)
    definition = box.definition
    assert definition.timeout_secs == math.ceil(20 + backend.grace_s)
    assert definition.network_access.network_access_type == api_pb2.NetworkAccess.BLOCKED
    assert definition.resources.memory_mb == 256
    assert not box.alive and receipt.cleanup.sandbox_destroyed
    assert receipt.provider_ids["sandbox_id"] == box.sandbox_id
    [(job_id, ids, calls_at)] = backend.recorded_ids  # type: ignore[attr-defined]
    assert ids["sandbox_id"] == box.sandbox_id
    assert calls_at <= fake.calls.index("TaskExecStart"), \
        "provider ids must be stored before anything runs in the sandbox"
    # Inputs went in and artifacts came out through the SDK's filesystem API (fs-tools exec).
    assert box.files[f"{WORK_DIR}/data.txt"] == b"abc"
    [artifact] = receipt.artifacts
    assert artifact.path == "sub/out.csv" and artifact.complete is True
    assert backend.artifacts.get(artifact.stored_ref or "") == b"ABC"


@pytest.mark.parametrize("code,outcome", STORIES, ids=[s[1].value for s in STORIES])
def test_outcomes_are_classified_from_the_exec_result(backend: ManagedBackend, code: str,
                                                      outcome: Outcome) -> None:
    receipt = backend.run(make_job(code))
    assert receipt.outcome is outcome, receipt.stderr.text


def test_a_symlink_planted_in_the_workspace_is_not_followed(backend: ManagedBackend,
                                                            fake: FakeModal) -> None:
    receipt = backend.run(make_job("# fake: symlink loop\nopen('a.txt', 'w').write('a')",
                                   artifact_globs=("**",)))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    assert [a.path for a in receipt.artifacts] == ["a.txt"]
    assert f"{WORK_DIR}/loop" in fake.boxes[receipt.provider_ids["sandbox_id"]].symlinks


def test_a_hung_command_gets_the_whole_sandbox_killed_and_confirmed(
        backend: ManagedBackend, fake: FakeModal) -> None:
    receipt = backend.run(make_job("# fake: hang\nimport time\ntime.sleep(3600)",
                                   limits={"wall_timeout_s": 1}))
    [box] = fake.boxes.values()
    assert box.alive is False, "the sandbox must not live on after a timeout"
    assert receipt.outcome is Outcome.TIMEOUT_WALL, receipt.outcome_detail
    assert receipt.outcome_basis == "observed" and receipt.cleanup.sandbox_destroyed


def test_a_sandbox_that_survives_terminate_makes_the_outcome_unknown(
        client: object, fake: FakeModal, tmp_path: Path) -> None:
    managed = _managed(client, tmp_path, kill_confirm_s=0.5)
    receipt = managed.run(make_job("# fake: hang\n# fake: unkillable\nimport time\n"
                                   "time.sleep(3600)", limits={"wall_timeout_s": 1}))
    [box] = fake.boxes.values()
    assert box.alive, "the scripted provider kept the sandbox"
    assert receipt.outcome is Outcome.UNKNOWN and not receipt.cleanup.sandbox_destroyed
    box.unkillable = False
    box.alive = False  # the provider's TTL (set at create) would end it; do so for the suite


def test_the_startup_reaper_kills_only_our_expired_sandboxes(client: object, fake: FakeModal,
                                                             tmp_path: Path) -> None:
    import asyncio

    app_id = modal.App.lookup("formulane-tests", create_if_missing=True, client=client).app_id
    now = datetime.now(timezone.utc)
    for n, (owner, expires) in enumerate([("formulane-tests", now - timedelta(hours=1)),
                                          ("formulane-tests", now + timedelta(hours=1)),
                                          ("someone-else", now - timedelta(hours=1))]):
        sid = f"sb-left{n}"
        fake.boxes[sid] = FakeModalBox(sid, f"ta-left{n}", app_id, {
            OWNER_LABEL: owner, EXPIRES_LABEL: expires.isoformat()}, None,
            terminated=asyncio.Event())
    managed = _managed(client, tmp_path)
    assert managed.reaped == ["sb-left0"]
    assert {s: b.alive for s, b in fake.boxes.items()} == {
        "sb-left0": False, "sb-left1": True, "sb-left2": True}
    for box in fake.boxes.values():
        box.alive = False


def test_reconcile_after_a_restart_kills_what_is_left(backend: ManagedBackend,
                                                      fake: FakeModal) -> None:
    import asyncio

    fake.boxes["sb-left"] = FakeModalBox("sb-left", "ta-left", "ap-x", {
        OWNER_LABEL: "formulane-tests"}, None, terminated=asyncio.Event())
    assert backend.reconcile(make_job("print(1)"), 1, {"sandbox_id": "sb-left"}) is None
    assert fake.boxes["sb-left"].alive is False
    assert "SandboxTerminate" in fake.calls


def test_network_open_is_translated(backend: ManagedBackend, fake: FakeModal) -> None:
    backend.run(make_job("print(1)", network={"mode": "open"}))
    [box] = fake.boxes.values()
    assert box.definition.network_access.network_access_type == api_pb2.NetworkAccess.OPEN


def test_a_syntax_error_never_creates_a_modal_sandbox(backend: ManagedBackend,
                                                      fake: FakeModal) -> None:
    receipt = backend.run(make_job("def f(:"))
    assert receipt.outcome is Outcome.SYNTAX_ERROR and fake.boxes == {}
    assert "SandboxCreateV2" not in fake.calls and "SandboxCreate" not in fake.calls


# (object path in the modal SDK, parameters the adapter passes): a cheap early warning that
# names the renamed parameter; the tests above are what exercise the calls.
MODAL_SURFACE = [
    ("Sandbox.create", {"app", "image", "timeout", "block_network", "memory", "env", "tags",
                        "client", "environment_name"}),
    ("Sandbox.exec", {"timeout", "workdir"}),
    ("Sandbox.from_id", {"sandbox_id", "client"}),
    ("Sandbox.list", {"app_id", "tags", "client"}),
    ("App.lookup", {"create_if_missing", "client", "environment_name"}),
]


@pytest.mark.parametrize("path,params", MODAL_SURFACE, ids=[m[0] for m in MODAL_SURFACE])
def test_the_adapter_matches_the_installed_modal_sdk(path: str, params: set[str]) -> None:
    owner, name = path.split(".")
    fn = getattr(getattr(modal, owner), name)
    accepted = set(inspect.signature(fn).parameters)
    assert params <= accepted, f"modal.{path} no longer takes {sorted(params - accepted)}"


def test_modal_client_declares_gvisor_isolation() -> None:
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
