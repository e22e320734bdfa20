"""The receipt stores on real databases: batching for reads, durability for writes, one winner
when several connections race for the same idempotency key, and store specs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from formulane.errors import ToolError
from formulane.typed_tools import OUTCOMES, Principal, SQLiteStore, ToolRegistry, open_store
from formulane.typed_tools.receipts import Receipt, new_id

P = Principal("u", "acme", ["tools:approve"])


def _registry(store: Any) -> ToolRegistry:
    registry = ToolRegistry(store=store)

    @registry.tool
    def echo(text: str) -> str:
        return text

    return registry


def test_read_receipts_are_batched_then_flushed(store_factory: Any) -> None:
    store = store_factory(flush_interval=60)  # the background flush will not fire during the test
    registry = _registry(store)
    for i in range(5):
        assert registry.call("echo", {"text": str(i)}, principal=P).ok
    other = store_factory()
    assert other.receipts() == []  # still buffered in the first process
    assert store.pending_receipts() == 5
    store.flush()
    seen = other.receipts(tool="echo")
    assert [r.args for r in seen] == [f'{{"text":"{i}"}}' for i in range(5)]
    assert all(r.outcome == "succeeded" and r.result_hash.startswith("sha256:") for r in seen)


def test_background_flush_and_close_write_everything(store_factory: Any) -> None:
    store = store_factory(flush_interval=0.01)
    registry = _registry(store)
    registry.call("echo", {"text": "a"}, principal=P)
    other = store_factory()
    deadline = threading.Event()
    for _ in range(200):
        if other.receipts():
            break
        deadline.wait(0.01)
    assert len(other.receipts()) == 1
    registry.call("echo", {"text": "b"}, principal=P)
    registry.close()
    assert len(other.receipts()) == 2
    with pytest.raises(ToolError, match="closed"):
        store.record(registry_receipt())


def registry_receipt() -> Receipt:
    return Receipt(id=new_id("rcpt"), tool="t", version="1", schema_hash="", effect="read", principal="u",
                   principal_kind="user", tenant="acme", outcome="succeeded", started_at=1.0, finished_at=2.0)


def test_receipt_fields_round_trip(store_factory: Any) -> None:
    store = store_factory()
    receipt = registry_receipt()
    receipt.timings = {"total_us": 12}
    receipt.idempotency_key = "k"
    store.record(receipt, durable=True)
    back = store.receipt(receipt.id)
    assert back == receipt
    assert store.receipts(idempotency_key="k") == [receipt] and store.receipts(outcome="unknown") == []


def test_outcomes_cover_every_receipt_written(store_factory: Any) -> None:
    registry = _registry(store_factory())
    registry.call("echo", {"text": 1}, principal=P)
    registry.call("nope", {}, principal=P)
    registry.call("echo", {"text": "x"}, principal=P)
    assert {r.outcome for r in registry.receipts()} <= set(OUTCOMES)
    assert len(registry.receipts()) == 3


def test_one_winner_when_connections_race_for_a_key(store_factory: Any) -> None:
    stores = [store_factory() for _ in range(4)]
    barrier = threading.Barrier(len(stores))
    states: list[str] = []

    def claim(store: Any) -> None:
        barrier.wait()
        states.append(store.reserve(tenant="acme", tool="t", key="same", args_hash="h", receipt_id=new_id("r"),
                                    approval_id=None, now=1.0).state)

    threads = [threading.Thread(target=claim, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(states) == ["new", "started", "started", "started"]


def test_concurrent_calls_with_one_key_run_the_tool_once(store_factory: Any) -> None:
    runs: list[int] = []
    gate = threading.Event()
    registries = []
    for _ in range(3):
        registry = ToolRegistry(store=store_factory())

        @registry.tool(effect="write")
        def pay(cents: int) -> int:
            gate.wait(0.2)  # hold the claim so the others arrive while it runs
            runs.append(cents)
            return cents

        registries.append(registry)
    pending = registries[0].call("pay", {"cents": 5}, principal=P)
    registries[0].approve(pending.approval.id, approver=Principal("a", "acme", ["tools:approve"]))
    results: list[str] = []

    def go(registry: ToolRegistry) -> None:
        results.append(registry.call("pay", {"cents": 5}, principal=P, approval=pending.approval.id,
                                     idempotency_key="k").status)

    threads = [threading.Thread(target=go, args=(r,)) for r in registries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert runs == [5]
    assert results.count("ok") >= 1 and set(results) <= {"ok", "unknown", "error"}


@pytest.mark.parametrize(
    ("spec", "kind"),
    [(None, ":memory:"), (":memory:", ":memory:"), ("sqlite:///{tmp}/a.db", "{tmp}/a.db"), ("{tmp}/b.db", "{tmp}/b.db")],
)
def test_store_specs(spec: str | None, kind: str, tmp_path: Path) -> None:
    fill = (lambda s: s.format(tmp=tmp_path)) if spec else (lambda s: s)
    store = open_store(fill(spec) if spec else None)
    assert isinstance(store, SQLiteStore) and store.path == fill(kind)
    store.close()


@pytest.mark.parametrize(
    ("spec", "message"),
    [("mysql://x", "unsupported store URL"), ("", "store must be a path"), (42, "store must be a path")],
)
def test_bad_store_specs(spec: Any, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        open_store(spec)


def test_bad_table_prefix_is_refused() -> None:
    with pytest.raises(ToolError, match="invalid table prefix"):
        SQLiteStore(":memory:", prefix="x; DROP TABLE y")


def test_a_store_that_cannot_keep_up_pushes_back_instead_of_dropping(tmp_path: Path) -> None:
    from sqlalchemy import create_engine

    path = str(tmp_path / "r.db")
    store = SQLiteStore(path, flush_interval=3600, batch_size=10**6, max_buffer=3)
    registry = _registry(store)
    reachable = store._engine
    # The database goes away under the store: its engine now points at a file that cannot open.
    store._engine = create_engine(f"sqlite:///{tmp_path / 'gone' / 'r.db'}")
    assert registry.call("echo", {"text": "1"}, principal=P).ok
    assert registry.call("echo", {"text": "2"}, principal=P).ok
    with pytest.raises(ToolError) as err:
        registry.call("echo", {"text": "3"}, principal=P)
    assert err.value.code == "E505" and store.pending_receipts() == 3  # nothing was dropped
    store._engine = reachable  # it comes back
    store.flush()
    assert [r.args for r in store.receipts()] == ['{"text":"1"}', '{"text":"2"}', '{"text":"3"}']


@pytest.mark.parametrize(
    ("spec", "shown"),
    [("/nonexistent/dir/r.db", "/nonexistent/dir/r.db"),
     ("postgresql://postgres:s3cret@127.0.0.1:1/none", "postgres:***@127.0.0.1:1/none")],
)
def test_a_store_that_cannot_open_names_where_without_its_password(spec: str, shown: str) -> None:
    with pytest.raises(ToolError) as err:
        open_store(spec)
    assert err.value.code == "E505" and shown in str(err.value) and "s3cret" not in str(err.value)
