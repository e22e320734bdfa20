"""The runtime contract refuses bad input with a clear message, and its defaults are safe."""

from __future__ import annotations

import json
from typing import Any

import pytest

from formulane.errors import EscalationError
from formulane.escalation.contract import (
    Isolation, Limits, Outcome, PinnedRequirement, Receipt, SandboxJob,
)

BASE: dict[str, Any] = {"idempotency_key": "k", "tenant": "acme", "principal": "ana",
                        "purpose": "count rows", "code": "print(1)"}

# (what is wrong, overrides, fragment of the message)
BAD_JOBS = [
    ("no idempotency key", {"idempotency_key": ""}, "idempotency_key"),
    ("absolute file path", {"files": [{"path": "/etc/passwd", "content": ""}]}, "relative"),
    ("path traversal", {"files": [{"path": "a/../../x", "content": ""}]}, "'..'"),
    ("runner directory", {"files": [{"path": ".formulane/done.json", "content": ""}]},
     "reserved"),
    ("wrong file hash", {"files": [{"path": "a.txt", "content": "", "sha256": "0" * 64}]},
     "declared"),
    ("duplicate paths", {"files": [{"path": "a", "content": ""}, {"path": "a", "content": ""}]},
     "share one path"),
    ("loader variable", {"env": {"LD_PRELOAD": "/x.so"}}, "loader"),
    ("interpreter variable", {"env": {"PYTHONPATH": "/x"}}, "interpreter"),
    ("credential-like variable", {"env": {"STRIPE_API_KEY": "sk"}}, "credential"),
    ("lower-case variable", {"env": {"path": "/x"}}, "must match"),
    ("code and entrypoint", {"entrypoint": "main.py"}, "exactly one"),
    ("entrypoint not among files", {"code": None, "entrypoint": "main.py"}, "not among"),
    ("session without id", {"state": "session"}, "session_id"),
    ("id without session", {"session_id": "s1"}, "only meaningful"),
    ("NaN input", {"inputs": {"x": float("nan")}}, "NaN"),
    ("object input", {"inputs": {"x": {1: 2}}}, "non-text key"),
    ("input name", {"inputs": {"not valid": 1}}, "identifier"),
    ("naive deadline", {"deadline": "2030-01-01T00:00:00"}, "timezone-aware"),
    ("allowlist without entries", {"network": {"mode": "allowlist"}}, "at least one"),
    ("entries without allowlist", {"network": {"allow": ["10.0.0.0/8"]}}, "make no sense"),
    ("garbage allow entry", {"network": {"mode": "allowlist", "allow": ["not a host!"]}},
     "neither a CIDR"),
    ("zero wall time", {"limits": {"wall_timeout_s": 0}}, "greater than 0"),
    ("tiny memory", {"limits": {"memory_bytes": 1024}}, "greater than or equal"),
    ("kill budget below the kept output", {"limits": {"stream_kill_bytes": 2048}},
     "stream_kill_bytes"),
    ("install without network", {"runtime": {"packages": [{"name": "x", "version": "1"}],
                                             "package_policy": "install_from_mirror"}},
     "network"),
    ("unknown field", {"shell": True}, "Extra inputs"),
    ("bad isolation", {"min_isolation": "container"}, "min_isolation"),
]


@pytest.mark.parametrize("what,override,fragment", BAD_JOBS, ids=[b[0] for b in BAD_JOBS])
def test_bad_jobs_are_refused_with_a_clear_message(what: str, override: dict[str, Any],
                                                   fragment: str) -> None:
    with pytest.raises(EscalationError) as err:
        SandboxJob.parse({**BASE, **override})
    assert err.value.code == "E603"
    assert fragment in err.value.message, err.value.message


def test_defaults_are_the_safe_ones() -> None:
    job = SandboxJob.parse(BASE)
    assert job.network.mode == "none" and job.stdin is None and job.state == "ephemeral"
    assert job.side_effect_class == "read_only" and not job.side_effects_possible
    assert job.min_isolation is Isolation.NAMESPACE
    limits = job.limits
    assert (limits.wall_timeout_s, limits.memory_bytes, limits.max_processes) == \
        (30, 512 << 20, 64)
    assert (limits.stdout_max_bytes, limits.stderr_max_bytes) == (1 << 20, 256 << 10)
    assert job.runtime.package_policy == "preinstalled_only"
    with pytest.raises(Exception):
        job.limits = Limits()  # type: ignore[misc]  # frozen


def test_json_round_trip_and_fingerprint() -> None:
    job = SandboxJob.parse({**BASE, "files": [{"path": "a.bin", "content": "AAEC"}]})
    assert job.files[0].content == b"\x00\x01\x02"  # base64 on the wire
    again = SandboxJob.parse(job.model_dump_json())
    assert again == job and again.fingerprint() == job.fingerprint()
    other = SandboxJob.parse({**BASE, "code": "print(2)"})
    assert other.fingerprint() != job.fingerprint()


def test_requirements_must_be_pinned() -> None:
    assert str(PinnedRequirement.parse("annotated-types==0.7.0")) == "annotated-types==0.7.0"
    with pytest.raises(EscalationError, match="pinned"):
        PinnedRequirement.parse("numpy>=1.0")


def test_receipt_hash_changes_with_any_field() -> None:
    from formulane.escalation.backends.base import static_receipt
    from formulane.escalation.contract import BackendInfo

    job = SandboxJob.parse(BASE)
    info = BackendInfo(name="b", version="1", isolation=Isolation.NAMESPACE, mechanism="m")
    receipt = static_receipt(job, backend=info, outcome=Outcome.SUCCEEDED, detail="ok")
    tampered = receipt.model_copy(update={"outcome": Outcome.USER_ERROR})
    assert receipt.sha256 != tampered.sha256 and len(receipt.sha256) == 64
    assert Receipt.model_validate_json(receipt.model_dump_json()).sha256 == receipt.sha256
    assert json.loads(receipt.canonical())["outcome"] == "succeeded"


def test_outcome_vocabulary() -> None:
    assert {o.value for o in Outcome} >= {
        "succeeded", "user_error", "syntax_error", "missing_package", "environment_error",
        "input_required", "timeout_wall", "timeout_cpu", "oom_killed", "output_limit",
        "fs_limit", "pids_limit", "network_denied", "cancelled", "crashed", "sandbox_error",
        "lost", "unknown"}
    assert not Outcome.LOST.terminal and Outcome.UNKNOWN.terminal
    assert Outcome.SANDBOX_ERROR.our_fault and not Outcome.USER_ERROR.our_fault
