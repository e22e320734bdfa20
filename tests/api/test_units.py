"""The service's pieces without a server: rate limiter (injected clock), log redaction, key
minting rules, known-answer comparison."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from formulane.api.auth import KeyStore, RateLimiter
from formulane.api.db import make_engine, upgrade
from formulane.api.envelope import Redactor, redact
from formulane.api.values import same
from formulane.errors import ServiceError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rate_limiter_bucket() -> None:
    clock = Clock()
    limiter = RateLimiter(rate=2.0, burst=3, clock=clock)
    assert [limiter.take("k") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("k") == pytest.approx(0.5)
    assert limiter.take("other") == 0.0  # per key
    clock.now += 0.5
    assert limiter.take("k") == 0.0


def test_logs_never_carry_keys() -> None:
    key = "fk_0123456789abcdef_" + "A" * 43
    assert key not in redact(f"got {key} and Authorization: Bearer {key}")
    record = logging.LogRecord("formulane.api", logging.INFO, __file__, 1, "key %s", (key,), None)
    Redactor().filter(record)
    assert key not in record.getMessage()


def test_keys_hashed_minted_down_scoped_and_revoked(tmp_path: Path) -> None:
    clock = Clock()
    engine = make_engine(f"sqlite:///{tmp_path / 'k.db'}")
    upgrade(engine)
    store = KeyStore(engine, clock=clock, ttl_s=0)
    key, parent = store.create(tenant="acme", scopes=["formulas:read", "keys:mint"])
    with engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT secret_hash FROM formulane_api_keys").scalar()
    assert key.split("_", 2)[2] not in stored
    assert store.resolve(key).tenant == "acme"
    with pytest.raises(ServiceError) as bad:
        store.mint(parent, scopes=["tools:call"], ttl_s=60, subject=None, kind="workload",
                   label="", max_ttl_s=600)
    assert bad.value.code == "E702"
    child_key, child = store.mint(parent, scopes=["formulas:read"], ttl_s=60, subject=None,
                                  kind="workload", label="", max_ttl_s=600)
    assert child.tenant == "acme" and child.scopes == {"formulas:read"}
    clock.now += 61
    with pytest.raises(ServiceError):
        store.resolve(child_key)
    assert store.revoke(parent.key_id)
    with pytest.raises(ServiceError):
        store.resolve(key)
    engine.dispose()


@pytest.mark.parametrize("actual, expected, ok", [
    (__import__("decimal").Decimal("35.96"), 35.96, True),
    (__import__("decimal").Decimal("0.1"), "0.1", True),
    (__import__("decimal").Decimal("2"), 2, True),
    (__import__("decimal").Decimal("2"), 3, False),
    ("abc", "abc", True),
    (None, None, True),
    ([__import__("decimal").Decimal("1"), __import__("decimal").Decimal("2")], [1, 2], True),
])
def test_known_answer_comparison(actual: object, expected: object, ok: bool) -> None:
    assert same(actual, expected) is ok


def test_error_values_compare_by_code() -> None:
    import formulane

    value = formulane.evaluate("1/0")
    assert same(value, {"error": "#DIV/0!"})
    assert not same(value, {"error": "#N/A"})


def test_keys_and_db_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from formulane.cli import main

    data = str(tmp_path / "data")
    assert main(["db", "upgrade", "--data-dir", data]) == 0
    assert "revision 0001" in capsys.readouterr().out
    assert main(["keys", "create", "--tenant", "acme", "--scopes", "formulas:read,tools:call",
                 "--data-dir", data]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    key = out[-1]
    assert key.startswith("fk_") and len(out) == 1
    assert main(["keys", "list", "--json", "--data-dir", data]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["scopes"] == ["formulas:read", "tools:call"]
    assert key not in json.dumps(listed)
    assert main(["keys", "revoke", listed[0]["key_id"], "--data-dir", data]) == 0
    assert main(["keys", "revoke", listed[0]["key_id"], "--data-dir", data]) == 1
    assert main(["keys", "create", "--tenant", "bad tenant!", "--data-dir", data]) == 2
