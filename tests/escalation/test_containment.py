"""Containment on the real bubblewrap backend: what a job can see, write, spawn and flood.

Each test runs hostile code and asserts both the receipt and the host-side facts (no survivor,
host state untouched, bounded harness time).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import MiB, Outcome

from .conftest import job_processes, make_job


# A file of this checkout, wherever it lives on the host.
REPO_FILE = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_host_files_are_invisible(sandbox: BubblewrapBackend, state_dir: Path) -> None:
    secret = state_dir / "host-secret.txt"
    secret.write_text("s3cret")
    probes = ["/etc/passwd", "/etc/shadow", "/root", "/home", "/var", str(secret),
              str(REPO_FILE), "/usr/bin/python3", "/sys/fs/cgroup"]
    code = ("import os, json\nout = {}\nfor p in " + json.dumps(probes) + ":\n"
            "    out[p] = os.path.exists(p)\n"
            "print(json.dumps({'root': sorted(os.listdir('/')), 'seen': out}))\n")
    receipt = sandbox.run(make_job(code))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    report = json.loads(receipt.stdout.text)
    assert report["root"] == ["dev", "job", "lib64", "opt", "proc", "tmp", "workspace"]
    assert not any(report["seen"].values()), report["seen"]


# (what, code) pairs: every write outside /workspace and /tmp must fail.
WRITES = [
    ("interpreter tree", "open('/opt/python/evil.py', 'w')"),
    ("job directory", "open('/job/main.py', 'a')"),
    ("new top-level file", "open('/evil', 'w')"),
    ("proc", "open('/proc/sys/kernel/hostname', 'w').write('x')"),
    ("loader", "open('/lib64/evil', 'w')"),
    ("device directory", "open('/dev/evil', 'w')"),
]


@pytest.mark.parametrize("what,code", WRITES, ids=[w[0] for w in WRITES])
def test_writes_outside_the_workspace_fail(sandbox: BubblewrapBackend, what: str,
                                           code: str) -> None:
    receipt = sandbox.run(make_job(code))
    assert receipt.outcome is Outcome.USER_ERROR
    assert any(err in receipt.stderr.text for err in (
        "Read-only file system", "Permission denied", "No such file")), receipt.stderr.text


def test_workspace_and_tmp_are_writable_and_read_only_inputs_are_not(
        sandbox: BubblewrapBackend) -> None:
    code = ("open('/workspace/out.txt', 'w').write('ok')\nopen('/tmp/t', 'w').write('ok')\n"
            "print(open('data/in.csv').read())\n"
            "for attempt in (lambda: open('data/in.csv', 'w'), lambda: os.remove('data/in.csv')):\n"
            "    try:\n        attempt()\n        print('WRITABLE')\n"
            "    except OSError as e:\n        print('refused', e.errno)\n")
    receipt = sandbox.run(make_job("import os\n" + code, files=[
        {"path": "data/in.csv", "content": b"a,b\n", "mode": "ro"}], artifact_globs=("*.txt",)))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    assert "WRITABLE" not in receipt.stdout.text and receipt.stdout.text.count("refused") == 2
    assert [a.path for a in receipt.artifacts] == ["out.txt"]
    assert [i.name for i in receipt.inputs] == ["data/in.csv"]


def test_artifact_symlinks_never_make_the_host_read_outside(sandbox: BubblewrapBackend,
                                                           state_dir: Path) -> None:
    secret = state_dir / "host-only.txt"
    secret.write_text("host secret")
    code = ("import os\nos.symlink(" + repr(str(secret)) + ", 'leak.txt')\n"
            "os.symlink('/etc/passwd', 'passwd.txt')\nos.mkdir('d')\n"
            "os.symlink('/etc', 'd/etc')\nopen('real.txt', 'w').write('mine')\n")
    receipt = sandbox.run(make_job(code, artifact_globs=("*.txt", "d/**")))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    assert [a.path for a in receipt.artifacts] == ["real.txt"]
    for art in receipt.artifacts:
        assert b"host secret" not in sandbox.artifacts.get(art.stored_ref or "")


def test_fork_bomb_is_contained_by_the_pids_limit(sandbox: BubblewrapBackend) -> None:
    code = ("import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
            "            time.sleep(60)\n            os._exit(0)\n        n += 1\n"
            "except OSError:\n    print('forked', n)\n    raise\n")
    receipt = sandbox.run(make_job(code, limits={"max_processes": 32, "wall_timeout_s": 20}))
    assert receipt.outcome is Outcome.PIDS_LIMIT, receipt.stderr.text
    assert int(receipt.stdout.text.split()[-1]) < 32
    assert receipt.cleanup.survivors == 0


def test_exponential_fork_bomb_ends_at_the_deadline_with_nothing_left(
        sandbox: BubblewrapBackend) -> None:
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    t0 = time.monotonic()
    receipt = sandbox.run(make_job(code, limits={"max_processes": 24, "wall_timeout_s": 1.5,
                                                 "kill_grace_s": 0.1}))
    assert receipt.outcome is Outcome.TIMEOUT_WALL
    assert receipt.cleanup.survivors == 0 and not job_processes()
    assert any("pids.max" in e for e in receipt.events)
    # Functional, not a benchmark: the bomb never ends by itself, so a harness that failed to
    # kill it would wait forever. 60 s is 40x the 1.5 s deadline, room for a loaded CI box.
    assert time.monotonic() - t0 < 60


def test_memory_hog_is_oom_killed(sandbox: BubblewrapBackend) -> None:
    code = ("hog = []\nwhile True:\n    block = bytearray(16 << 20)\n"
            "    block[::4096] = b'x' * len(block[::4096])\n    hog.append(block)\n")
    receipt = sandbox.run(make_job(code, limits={"memory_bytes": 96 * MiB}))
    assert receipt.outcome is Outcome.OOM_KILLED, (receipt.outcome, receipt.stderr.text)
    assert receipt.peak_memory_bytes is not None and receipt.peak_memory_bytes <= 100 * MiB
    assert receipt.cleanup.survivors == 0


def test_a_gigabyte_stdout_flood_is_capped_keeping_head_and_tail(
        sandbox: BubblewrapBackend) -> None:
    code = ("import os\nos.write(1, b'BEGIN-MARKER\\n')\nchunk = b'0123456789abcdef' * 65536\n"
            "for i in range(1024):\n    os.write(1, chunk)\nopen('finished', 'w').write('yes')\n")
    t0 = time.monotonic()
    receipt = sandbox.run(make_job(code, artifact_globs=("finished",)))
    elapsed = time.monotonic() - t0
    out = receipt.stdout
    assert receipt.outcome is Outcome.OUTPUT_LIMIT
    assert out.head.startswith("BEGIN-MARKER") and out.tail.endswith("cdef")
    assert out.truncated and not out.read_to_end
    assert out.kept_bytes <= 1 * MiB
    assert out.total_bytes <= 16 * MiB + 65536, "the host kept reading past the kill limit"
    assert receipt.artifacts == (), "the job ran to completion instead of being killed"
    # The byte counts above are the proof that the flood was cut at the kill limit; this only
    # catches a harness that hung on the pipe (the job alone would write 1 GiB and finish).
    assert elapsed < 120, f"harness stalled for {elapsed:.2f} s"


def test_sigterm_ignorer_and_detached_grandchild_are_gone_after_the_timeout(
        sandbox: BubblewrapBackend) -> None:
    code = ("import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            "        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n        time.sleep(300)\n"
            "    os._exit(0)\nprint('started', flush=True)\ntime.sleep(300)\n")
    t0 = time.monotonic()
    receipt = sandbox.run(make_job(code, limits={"wall_timeout_s": 1, "kill_grace_s": 0.3}))
    elapsed = time.monotonic() - t0
    assert receipt.outcome is Outcome.TIMEOUT_WALL
    assert receipt.cleanup.group_killed and receipt.cleanup.survivors == 0
    assert not job_processes()
    # Functional: a grandchild holding the pipes once stretched a 1.5 s timeout to 12 s of
    # harness time. Here a stalled harness would wait for the grandchild's 300 s sleep; 60 s
    # (45x the deadline plus grace) tells the two apart even on a heavily loaded machine.
    assert elapsed < 60, f"harness stalled for {elapsed:.2f} s"


def test_host_environment_variables_are_absent(sandbox: BubblewrapBackend,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORMULANE_CANARY_TOKEN", "do-not-leak")
    receipt = sandbox.run(make_job("import os, json\nprint(json.dumps(dict(os.environ)))",
                                   env={"REPORT_MONTH": "2026-05"}))
    env = json.loads(receipt.stdout.text)
    assert "FORMULANE_CANARY_TOKEN" not in env and "do-not-leak" not in receipt.stdout.text
    assert set(env) == {"PATH", "HOME", "LANG", "LD_LIBRARY_PATH", "TMPDIR", "PWD", "REPORT_MONTH"}
    assert env["PWD"] == "/workspace" and env["HOME"] == "/workspace"


def test_proc_shows_only_the_job(sandbox: BubblewrapBackend) -> None:
    code = ("import os, json\npids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
            "cmd = {p: open(f'/proc/{p}/cmdline', 'rb').read().split(b'\\0')[0].decode() "
            "for p in pids}\nprint(json.dumps({'pids': pids, 'cmd': cmd, 'me': os.getpid()}))")
    report = json.loads(sandbox.run(make_job(code)).stdout.text)
    # 1: bwrap's namespace init; 2: the bootstrap's monitor (it waits for the job and reports
    # its exit status; see bootstrap.py); 3: the job.
    assert report["pids"] == [1, 2, 3] and report["me"] == 3
    assert report["cmd"]["1"].endswith("bwrap") and "python" in report["cmd"]["2"]
    assert str(os.getpid()) not in report["cmd"]


def test_no_privilege_and_no_host_handle_inside(sandbox: BubblewrapBackend) -> None:
    code = ("import os, json\nstatus = dict(l.split(':\\t', 1) for l in "
            "open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
            "print(json.dumps({'ids': [os.getuid(), os.getgid()], 'groups': os.getgroups(), "
            "'fds': sorted(os.listdir('/proc/self/fd')), 'status': status}))")
    report = json.loads(sandbox.run(make_job(code)).stdout.text)
    assert report["ids"] == [65534, 65534] and report["groups"] in ([], [65534])
    assert report["fds"] == ["0", "1", "2", "3"], "a host file descriptor leaked into the job"
    status = report["status"]
    assert status["CapEff"] == status["CapPrm"] == status["CapBnd"] == "0000000000000000"
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"


def test_namespaces_cannot_be_created_inside(sandbox: BubblewrapBackend) -> None:
    code = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "for flag in (0x10000000, 0x40000000, 0x00020000):\n"
            "    if libc.unshare(flag) == 0:\n        print('ESCAPED', flag)\n"
            "    else:\n        print('refused', ctypes.get_errno())\n")
    out = sandbox.run(make_job(code)).stdout.text
    assert "ESCAPED" not in out and out.count("refused") == 3


def test_receipt_records_capabilities_and_enforcement(sandbox: BubblewrapBackend) -> None:
    receipt = sandbox.run(make_job("print(1)"))
    assert receipt.capabilities["bwrap_version"] and receipt.backend.isolation.value == "namespace"
    by = {e.knob: e.by for e in receipt.limits_enforced}
    assert by["wall_timeout_s"] == "host" and by["cpu_time_s"] == "rlimit"
    if sandbox.cg_support.version:
        assert by["memory_bytes"] == "cgroup" and by["max_processes"] == "cgroup"
    assert receipt.environment_digest and receipt.environment_digest.startswith("sha256:")
    assert len(receipt.sha256) == 64
