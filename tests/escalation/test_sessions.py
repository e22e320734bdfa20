"""Sessions on the real bubblewrap backend: state persists, failures end it, TTL reaps it."""

from __future__ import annotations

import time
from typing import Any

import pytest

from formulane.errors import EscalationError
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import Outcome

from .conftest import job_processes, make_job


def session_job(code: str, session_id: str, **kw: Any):  # type: ignore[no-untyped-def]
    return make_job(code, state="session", session_id=session_id, **kw)


def test_state_and_workspace_persist_between_calls(sandbox: BubblewrapBackend) -> None:
    sid = "analysis-1"
    try:
        first = sandbox.run(session_job("total = 41\nopen('notes.txt', 'w').write('kept')", sid,
                                        inputs={"rate": 2}))
        second = sandbox.run(session_job("print(total + 1, open('notes.txt').read(), rate)", sid,
                                         inputs={"rate": 3}, artifact_globs=("*.txt",)))
        assert first.outcome is Outcome.SUCCEEDED and second.outcome is Outcome.SUCCEEDED
        assert second.stdout.text == "42 kept 3\n"
        assert first.stdout.total_bytes == 0, "stdout must be per call"
        assert second.session_id == sid and second.side_effects_possible
        assert [a.path for a in second.artifacts] == ["notes.txt"]
        assert sid in sandbox.session_manager().active()
    finally:
        sandbox.session_manager().end("acme", "ana", sid)
    assert sid not in sandbox.session_manager().active()


def test_an_exception_is_a_call_outcome_not_the_end(sandbox: BubblewrapBackend) -> None:
    sid = "analysis-2"
    try:
        sandbox.run(session_job("x = 1", sid))
        failed = sandbox.run(session_job("raise KeyError('region')", sid))
        assert failed.outcome is Outcome.USER_ERROR and "KeyError" in failed.outcome_detail
        asked = sandbox.run(session_job("input('continue? ')", sid))
        assert asked.outcome is Outcome.INPUT_REQUIRED
        missing = sandbox.run(session_job("import not_a_real_module_abc", sid))
        assert missing.outcome is Outcome.MISSING_PACKAGE
        assert missing.missing_module == "not_a_real_module_abc"
        still = sandbox.run(session_job("print(x)", sid))
        assert still.stdout.text == "1\n"
    finally:
        sandbox.session_manager().end("acme", "ana", sid)


def test_a_timeout_kills_the_session_and_the_next_call_starts_fresh(
        sandbox: BubblewrapBackend) -> None:
    sid = "analysis-3"
    limits = {"wall_timeout_s": 1, "kill_grace_s": 0.2}
    try:
        sandbox.run(session_job("secret_state = 7", sid, limits=limits))
        stuck = sandbox.run(session_job("while True:\n    pass", sid, limits=limits))
        assert stuck.outcome is Outcome.TIMEOUT_WALL and "session ended" in stuck.outcome_detail
        assert stuck.cleanup.survivors == 0
        fresh = sandbox.run(session_job("print('secret_state' in globals())", sid, limits=limits))
        assert fresh.stdout.text == "False\n"
    finally:
        sandbox.session_manager().end("acme", "ana", sid)


def test_idle_sessions_expire(sandbox: BubblewrapBackend) -> None:
    sid = "analysis-4"
    sandbox.run(session_job("y = 2", sid, session_ttl_s=0.3))
    assert sid in sandbox.session_manager().active()
    deadline = time.monotonic() + 5
    while sid in sandbox.session_manager().active() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sid not in sandbox.session_manager().active()
    assert not job_processes()


# (what differs, job overrides, error code)
MISUSE = [
    ("another principal", {"principal": "mallory"}, "E601"),
    ("different limits", {"limits": {"memory_bytes": 64 << 20}}, "E603"),
    ("files after the first call", {"files": [{"path": "a.txt", "content": b"x"}]}, "E603"),
]


@pytest.mark.parametrize("what,override,code", MISUSE, ids=[m[0] for m in MISUSE])
def test_session_misuse_is_refused(sandbox: BubblewrapBackend, what: str, override: dict,
                                   code: str) -> None:
    sid = f"guarded-{code}-{len(what)}"
    try:
        sandbox.run(session_job("z = 3", sid))
        with pytest.raises(EscalationError) as err:
            sandbox.run(session_job("print(z)", sid, **override))
        assert err.value.code == code
    finally:
        sandbox.session_manager().end("acme", "ana", sid)


def test_a_session_outlives_the_thread_that_started_it(sandbox: BubblewrapBackend) -> None:
    """bwrap --die-with-parent follows the starting *thread*; a web request's thread ends."""
    import threading

    sid = "analysis-5"
    started = threading.Thread(target=lambda: sandbox.run(session_job("kept = 'yes'", sid)))
    started.start()
    started.join()
    try:
        later = sandbox.run(session_job("print(kept)", sid))
        assert later.outcome is Outcome.SUCCEEDED and later.stdout.text == "yes\n"
    finally:
        sandbox.session_manager().end("acme", "ana", sid)
