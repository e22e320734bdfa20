"""The plain-process fallback (isolation=process, Landlock where present) and declared
environments (content digests, declared packages only, clear refusals)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from formulane.errors import EscalationError
from formulane.escalation.backends import BubblewrapBackend, ProcessBackend
from formulane.escalation.capabilities import probe
from formulane.escalation.contract import Outcome, PinnedRequirement, RuntimeSpec
from formulane.escalation.environments import EnvironmentSpec, EnvironmentStore, tree_digest

from .conftest import UID_COUNT, UID_FIRST, job_processes, make_job, shared_environments


@pytest.fixture(scope="module")
def process(state_dir: Path) -> Iterator[ProcessBackend]:
    backend = ProcessBackend(state_dir / "process", uid_first=UID_FIRST, uid_count=UID_COUNT,
                             environments=shared_environments())
    if not backend.capabilities().available:
        reason = backend.capabilities().unavailable_reason
        backend.close()
        pytest.skip(f"process backend unavailable: {reason}")
    try:
        yield backend
    finally:
        backend.close()


def pjob(code: str, **kw: object):  # type: ignore[no-untyped-def]
    return make_job(code, min_isolation="process", **kw)


def test_receipts_say_process_isolation_and_namespace_jobs_are_refused(
        process: ProcessBackend) -> None:
    receipt = process.run(pjob("print('hi')"))
    assert receipt.outcome is Outcome.SUCCEEDED and receipt.backend.isolation.value == "process"
    assert receipt.stdout.text == "hi\n"
    with pytest.raises(EscalationError) as err:
        process.run(make_job("print(1)"))  # the default asks for namespace isolation
    assert err.value.code == "E601" and "namespace isolation" in err.value.message


@pytest.mark.skipif(not probe().landlock_abi, reason="the kernel has no Landlock")
def test_landlock_hides_the_host_filesystem(process: ProcessBackend, state_dir: Path) -> None:
    secret = state_dir / "process-secret.txt"
    secret.write_text("s3cret")
    os.chmod(secret, 0o644)  # readable by anyone: only Landlock stands in the way
    code = ("import json, os\nout = {}\nfor p in ['/etc/passwd', " + repr(str(secret)) + "]:\n"
            "    try:\n        open(p).read()\n        out[p] = 'READ'\n"
            "    except OSError as e:\n        out[p] = e.errno\n"
            "open('mine.txt', 'w').write('ok')\nprint(json.dumps(out))")
    receipt = process.run(pjob(code, artifact_globs=("mine.txt",)))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    assert set(json.loads(receipt.stdout.text).values()) == {13}  # EACCES from Landlock
    assert [a.path for a in receipt.artifacts] == ["mine.txt"]
    assert any(e.knob == "filesystem" and e.by == "landlock" for e in receipt.limits_enforced)


def test_network_is_denied_by_seccomp(process: ProcessBackend) -> None:
    receipt = process.run(pjob("import socket\nsocket.create_connection(('127.0.0.1', 9))"))
    assert receipt.outcome is Outcome.NETWORK_DENIED
    assert "seccomp" in receipt.network_enforcement


def test_a_detached_grandchild_is_found_and_killed(process: ProcessBackend) -> None:
    code = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(120)\n"
            "print('leader done')")
    receipt = process.run(pjob(code))
    assert receipt.outcome is Outcome.SUCCEEDED
    assert receipt.cleanup.orphans_found == 1 and receipt.cleanup.survivors == 0
    assert not job_processes()


def test_pids_and_memory_limits_hold_without_namespaces(process: ProcessBackend) -> None:
    bomb = process.run(pjob("import os, time\nwhile True:\n    if os.fork() == 0:\n"
                            "        time.sleep(30)\n        os._exit(0)",
                            limits={"max_processes": 16, "wall_timeout_s": 10}))
    assert bomb.outcome is Outcome.PIDS_LIMIT and bomb.cleanup.survivors == 0
    hog = process.run(pjob("x = []\nwhile True:\n    x.append(bytearray(8 << 20))\n"
                           "    x[-1][::4096] = b'x' * len(x[-1][::4096])",
                           limits={"memory_bytes": 64 << 20}))
    assert hog.outcome is Outcome.OOM_KILLED


# -- environments ------------------------------------------------------------------------------

def test_default_environment_is_lean_and_digested(sandbox: BubblewrapBackend) -> None:
    env = sandbox.environments.get()
    root = Path(env.root)
    stdlib = root / env.stdlib
    assert (stdlib / "os.py").exists() and not (stdlib / "test").exists()
    assert not any((stdlib / "site-packages").iterdir())
    assert env.digest == tree_digest(root) and sandbox.environments.verify()
    receipt = sandbox.run(make_job("import sys\nprint(sys.prefix, sys.flags.isolated, "
                                   "sys.flags.no_site)"))
    assert receipt.stdout.text == "/opt/python 1 1\n"
    assert receipt.environment_digest == env.digest


def test_declared_packages_and_only_those(sandbox: BubblewrapBackend, tmp_path: Path) -> None:
    from importlib.metadata import version as dist_version

    store = EnvironmentStore(shared_environments().root)
    pin = PinnedRequirement(name="annotated-types", version=dist_version("annotated-types"))
    store.register(EnvironmentSpec(name="typing-extras", packages=(pin,)))
    env = store.get("typing-extras")
    assert env.packages == (str(pin),) and env.package_for_module("annotated_types")
    assert env.digest != store.get().digest
    saved = sandbox.environments
    sandbox.environments = store
    try:
        ok = sandbox.run(make_job("import annotated_types\nprint('imported')",
                                  runtime={"environment": "typing-extras",
                                           "packages": [pin.model_dump()]}))
        assert ok.outcome is Outcome.SUCCEEDED and ok.environment_digest == env.digest
        other = sandbox.run(make_job("import pydantic", runtime={"environment": "typing-extras"}))
        assert other.outcome is Outcome.MISSING_PACKAGE and other.missing_module == "pydantic"
    finally:
        sandbox.environments = saved


# (runtime asked, error fragment)
BAD_RUNTIMES = [
    ({"environment": "nope"}, "unknown environment"),
    ({"version": "3.2"}, "runs Python"),
    ({"environment_digest": "sha256:" + "0" * 64}, "the job pins"),
    ({"packages": [{"name": "numpy", "version": "1.0"}]}, "does not provide numpy==1.0"),
]


@pytest.mark.parametrize("runtime,fragment", BAD_RUNTIMES, ids=[b[1] for b in BAD_RUNTIMES])
def test_runtime_mismatches_are_explained(sandbox: BubblewrapBackend, runtime: dict,
                                          fragment: str) -> None:
    with pytest.raises(EscalationError) as err:
        sandbox.environments.resolve(RuntimeSpec(**runtime))
    assert err.value.code == "E603" and fragment in err.value.message


def test_a_package_that_is_not_on_the_host_is_never_installed(tmp_path: Path) -> None:
    store = EnvironmentStore(tmp_path / "envs")
    store.register(EnvironmentSpec(name="wishful", packages=(
        PinnedRequirement(name="definitely-not-a-package", version="9.9"),)))
    with pytest.raises(EscalationError) as err:
        store.get("wishful")
    assert err.value.code == "E602" and "not installed on the host" in err.value.message


def test_without_bubblewrap_the_fallback_is_chosen_and_says_so(
        state_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from formulane.escalation import capabilities
    from formulane.escalation.backends import local_backend

    real = probe()
    blocked = real.model_copy(update={"bwrap_unprivileged": False, "bwrap_as_root": False,
                                      "userns_reason": "setting up uid map: Permission denied"})
    monkeypatch.setattr(capabilities, "_cached", blocked)
    backend = local_backend(state_dir / "fallback", uid_first=UID_FIRST, uid_count=UID_COUNT,
                            environments=shared_environments())
    try:
        assert isinstance(backend, ProcessBackend)
        assert backend.capabilities().isolation.value == "process"
        bwrap = BubblewrapBackend(state_dir / "fallback-b", uid_first=UID_FIRST,
                                  uid_count=UID_COUNT, environments=shared_environments())
        reasons = bwrap.refusals(make_job("print(1)"))
        assert reasons and "uid map" in reasons[0]
        bwrap.close()
    finally:
        backend.close()


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_seccomp_programs_assemble_for_each_architecture(arch: str) -> None:
    from formulane.escalation.backends.seccomp import build_filter, denied_syscalls

    for network_open in (False, True):
        program = build_filter(arch, network_open=network_open)
        assert len(program) % 8 == 0 and 30 < len(program) // 8 < 255
    assert len(build_filter(arch, network_open=True)) < len(build_filter(arch))
    assert "ptrace" in denied_syscalls(arch) and "io_uring_setup" in denied_syscalls(arch)
    with pytest.raises(EscalationError, match="no seccomp syscall table"):
        build_filter("sparc")
