"""How a job's interpreter ends inside the sandbox, as the job and the receipt can observe it.

The bootstrap does not run the full interpreter teardown after job code (it cost ~8 ms per job):
it joins non-daemon threads, runs atexit handlers, drops the job's globals so unclosed files
are flushed and ``__del__`` runs, flushes stdio, and exits with the status Python would give.
Each test pins one thing a normal ``python main.py`` exit does, on the real bubblewrap backend,
cold and through the warm pool.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Outcome

from .conftest import cold_or_pooled, make_job


@pytest.fixture(params=["cold", "pooled"])
def backend(request: pytest.FixtureRequest, sandbox: BubblewrapBackend,
            state_dir: Path) -> Iterator[BubblewrapBackend]:
    with cold_or_pooled(request.param, sandbox,
                        state_dir / f"exit-{request.node.name[-12:]}") as chosen:
        yield chosen


def test_an_unclosed_file_is_flushed_whole(backend: BubblewrapBackend) -> None:
    code = "f = open('out.txt', 'w')\nf.write('x' * 100000 + 'END')\n"  # never closed
    receipt = backend.run(make_job(code, artifact_globs=("out.txt",)))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    [artifact] = receipt.artifacts
    data = backend.artifacts.get(artifact.stored_ref or "")
    assert len(data) == 100003 and data.endswith(b"END")


def test_atexit_del_and_a_late_non_daemon_thread_all_run(backend: BubblewrapBackend) -> None:
    code = ("import atexit, threading, time\n"
            "atexit.register(lambda: print('atexit ran', flush=True))\n"
            "class Noisy:\n    def __del__(self):\n        print('del ran', flush=True)\n"
            "keep = Noisy()\n"
            "def late():\n    time.sleep(0.3)\n    print('thread finished', flush=True)\n"
            "threading.Thread(target=late).start()\n"
            "print('main done')\n")
    receipt = backend.run(make_job(code))
    assert receipt.outcome is Outcome.SUCCEEDED, receipt.stderr.text
    lines = receipt.stdout.text.splitlines()
    assert lines[0] == "main done"
    # As with a normal exit: threads are joined first, then atexit, then module globals go.
    assert lines[1:] == ["thread finished", "atexit ran", "del ran"], lines


@pytest.mark.parametrize("code,exit_code,stderr_part", [
    ("import sys\nsys.exit(3)", 3, ""),
    ("import sys\nsys.exit('bad input file')", 1, "bad input file"),
    ("import sys\nsys.exit(None)", 0, ""),
    ("raise KeyError('col')", 1, "KeyError: 'col'"),
])
def test_the_exit_status_is_what_python_gives(backend: BubblewrapBackend, code: str,
                                              exit_code: int, stderr_part: str) -> None:
    receipt = backend.run(make_job(code))
    assert receipt.exit_code == exit_code, (receipt.exit_code, receipt.stderr.text)
    assert stderr_part in receipt.stderr.text
    expected = Outcome.SUCCEEDED if exit_code == 0 else Outcome.USER_ERROR
    assert receipt.outcome is expected
    if "KeyError" in stderr_part:
        assert "Traceback (most recent call last)" in receipt.stderr.text


def test_buffered_stdout_is_flushed_without_an_explicit_flush(
        backend: BubblewrapBackend) -> None:
    receipt = backend.run(make_job("import sys\nsys.stdout.write('no newline, no flush')"))
    assert receipt.outcome is Outcome.SUCCEEDED
    assert receipt.stdout.text == "no newline, no flush"
