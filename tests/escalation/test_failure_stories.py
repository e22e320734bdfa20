"""One test per failure story from the seed articles, on the real bubblewrap backend.

Each story names the outcome the receipt must carry and what else must be true (nothing
spawned, killed and confirmed, artifact kept with ``complete`` unknown, ...).
"""

from __future__ import annotations

import signal
import socket
import threading
import time

import pytest

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.backends import runner as runner_module
from formulane.escalation.contract import CancelToken, Outcome

from .conftest import make_job

# (story, code, limits, expected outcome, fragment expected in outcome_detail)
SIMPLE_STORIES = [
    ("interactive input fails at once", "name = input('Your name? ')\nprint(name)",
     {}, Outcome.INPUT_REQUIRED, "stdin"),
    ("getpass falls back to stdin and fails at once", "import getpass\ngetpass.getpass('pw: ')",
     {}, Outcome.INPUT_REQUIRED, "stdin"),
    ("missing package names the module", "import definitely_not_installed_pkg_xyz\n",
     {}, Outcome.MISSING_PACKAGE, "definitely_not_installed_pkg_xyz"),
    ("host site-packages are not visible", "import yaml\n", {}, Outcome.MISSING_PACKAGE, "yaml"),
    ("user error is the model's bug", "raise ValueError('bad column')", {}, Outcome.USER_ERROR,
     "ValueError: bad column"),
    ("cpu timeout", "while True:\n    pass\n", {"cpu_time_s": 1, "wall_timeout_s": 90},
     Outcome.TIMEOUT_CPU, "SIGXCPU"),
    ("file size limit", "open('big', 'wb').write(b'x' * (3 << 20))",
     {"max_file_bytes": 1 << 20}, Outcome.FS_LIMIT, "File too large"),
    ("workspace full", "f = open('big', 'wb')\nfor _ in range(64):\n    f.write(b'x' * (1 << 20))",
     {"workspace_bytes": 8 << 20}, Outcome.FS_LIMIT, "No space left"),
]


@pytest.mark.parametrize("story,code,limits,outcome,detail", SIMPLE_STORIES,
                         ids=[s[0] for s in SIMPLE_STORIES])
def test_simple_story(sandbox: BubblewrapBackend, story: str, code: str, limits: dict,
                      outcome: Outcome, detail: str) -> None:
    receipt = sandbox.run(make_job(code, limits=limits))
    assert receipt.outcome is outcome, (receipt.outcome, receipt.stderr.text)
    assert detail in receipt.outcome_detail + receipt.stderr.text
    assert receipt.cleanup.survivors == 0
    if outcome is Outcome.MISSING_PACKAGE:
        assert receipt.missing_module == detail
    if outcome is Outcome.TIMEOUT_CPU:
        assert receipt.signal == signal.SIGXCPU
        # The cgroup counts from the moment the interpreter joined (early in its start-up).
        assert receipt.cpu_ms is not None and receipt.cpu_ms >= 500


def test_interactive_input_fails_in_milliseconds_not_at_the_deadline(
        sandbox: BubblewrapBackend) -> None:
    code = ("import time, sys\nt = time.perf_counter()\ntry:\n    input()\nexcept EOFError:\n"
            "    print(round((time.perf_counter() - t) * 1000, 3))\n    raise\n")
    receipt = sandbox.run(make_job(code, limits={"wall_timeout_s": 30}))
    assert receipt.outcome is Outcome.INPUT_REQUIRED
    waited_ms = float(receipt.stdout.text.strip())
    # The story: input() on /dev/null fails at once instead of blocking until the 30 s
    # deadline. Both bounds are far from the deadline (a second, measured inside the job; 15 s
    # of wall time for the whole run) so scheduling delays on a loaded machine do not matter.
    assert waited_ms < 1000, f"input() waited {waited_ms} ms on /dev/null"
    assert receipt.wall_ms is not None and receipt.wall_ms < 15_000


def test_syntax_error_spawns_nothing(sandbox: BubblewrapBackend,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a syntax error must not spawn a sandbox")

    monkeypatch.setattr(runner_module, "spawn", refuse)
    receipt = sandbox.run(make_job("total = (1 +\nprint(total)\n"))
    assert receipt.outcome is Outcome.SYNTAX_ERROR
    assert "line 1" in receipt.outcome_detail or "line 2" in receipt.outcome_detail
    assert receipt.wall_ms == 0 and receipt.exit_code is None


def test_wall_timeout_kills_and_confirms(sandbox: BubblewrapBackend) -> None:
    t0 = time.monotonic()
    receipt = sandbox.run(make_job("import time\ntime.sleep(60)\n",
                                   limits={"wall_timeout_s": 1, "kill_grace_s": 0.3}))
    elapsed = time.monotonic() - t0
    assert receipt.outcome is Outcome.TIMEOUT_WALL and receipt.outcome_basis == "observed"
    assert receipt.cleanup.group_killed and receipt.cleanup.survivors == 0
    # Functional: the host deadline, not the job's 60 s sleep, ended the run. Half the sleep
    # separates the two with room for a loaded machine.
    assert elapsed < 30, f"timeout took {elapsed:.2f} s of harness time"


def test_network_is_denied_even_to_a_host_loopback_listener(sandbox: BubblewrapBackend) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        receipt = sandbox.run(make_job(code))
        assert receipt.outcome is Outcome.NETWORK_DENIED, receipt.stderr.text
        dns = sandbox.run(make_job("import socket\nsocket.getaddrinfo('example.com', 443)\n"))
        assert dns.outcome is Outcome.NETWORK_DENIED, dns.stderr.text
        assert "netns" in receipt.network_enforcement and "seccomp" in receipt.network_enforcement
    finally:
        server.close()


def test_crash_after_writing_an_artifact_keeps_it_with_complete_unknown(
        sandbox: BubblewrapBackend) -> None:
    code = ("with open('out.csv', 'w') as f:\n    f.write('a,b\\n1,2\\n')\n"
            "import os\nos.abort()\n")
    receipt = sandbox.run(make_job(code, artifact_globs=("*.csv",)))
    assert receipt.outcome is Outcome.CRASHED and receipt.signal == signal.SIGABRT
    [artifact] = receipt.artifacts
    assert artifact.path == "out.csv" and artifact.complete is None
    assert sandbox.artifacts.get(artifact.stored_ref or "") == b"a,b\n1,2\n"
    provenance = sandbox.artifacts.provenance(artifact.stored_ref or "")
    assert provenance[-1]["job_id"] == receipt.job_id and provenance[-1]["outcome"] == "crashed"


def test_crash_after_a_completion_manifest_marks_the_artifact_complete(
        sandbox: BubblewrapBackend) -> None:
    code = ("import os, formulane_job\nwith open('out.csv', 'w') as f:\n    f.write('x\\n')\n"
            "formulane_job.mark_complete('out.csv')\nwith open('partial.csv', 'w') as f:\n"
            "    f.write('half')\nos.abort()\n")
    receipt = sandbox.run(make_job(code, artifact_globs=("*.csv",)))
    assert receipt.outcome is Outcome.CRASHED
    complete = {a.path: a.complete for a in receipt.artifacts}
    assert complete == {"out.csv": True, "partial.csv": None}


def test_caller_gives_up_and_the_job_is_killed_and_confirmed(sandbox: BubblewrapBackend) -> None:
    """The application stops waiting: the run is cancelled, killed, and the kill confirmed."""
    token = CancelToken()
    code = ("import time, os\nfor i in range(6000):\n"
            "    open('tick', 'w').write(str(i))\n    time.sleep(0.05)\n")
    timer = threading.Timer(0.5, token.cancel, args=("caller timed out after 0.5 s",))
    timer.start()
    try:
        t0 = time.monotonic()
        receipt = sandbox.run(make_job(code, limits={"wall_timeout_s": 600}), cancel=token)
        elapsed = time.monotonic() - t0
    finally:
        timer.cancel()
        timer.join()
    assert receipt.outcome is Outcome.CANCELLED and receipt.outcome_basis == "observed"
    assert "caller timed out" in receipt.outcome_detail
    assert receipt.cleanup.group_killed and receipt.cleanup.survivors == 0
    # Functional: the cancellation ended the run, not the job (300 s of ticks) nor its 600 s
    # deadline; 60 s leaves room for a loaded machine.
    assert elapsed < 60, f"cancellation took {elapsed:.2f} s of harness time"
