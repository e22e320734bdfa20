"""Tenant keys and secrets at every nesting (issue 15, item 2): a foreign tenant anywhere in the
validated value is refused before the tool runs, directly and over MCP; a secret anywhere is
never stored in clear (receipts, approvals, idempotency rows on SQLite and PostgreSQL) and an
invalid secret is never echoed back to the model. Cases: cases/tenant_nesting.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from pydantic import ConfigDict, create_model

from formulane.typed_tools import Principal, Tool, ToolRegistry

from .conftest import dump_database
from .models import SECRET, build_type, with_secret

CASES = yaml.safe_load((Path(__file__).parent / "cases" / "tenant_nesting.yaml").read_text())
ACME = Principal("alice", "acme", ["x"])


def make_tool(case: dict[str, Any], ran: list[Any], effect: str = "read") -> Tool:
    annotation = build_type(case["type"])

    def run(value: Any) -> int:
        ran.append(value)
        return 1

    if case.get("root"):
        return Tool(name="t", fn=run, input_model=annotation, output_model=int, effect=effect)
    model = create_model("Args", __config__=ConfigDict(extra="forbid"), x=(annotation, ...))
    return Tool(name="t", fn=run, input_model=model, output_model=int, effect=effect)


def args_of(case: dict[str, Any], key: str) -> dict[str, Any]:
    value = with_secret(case[key])
    return {"input": value} if case.get("root") else {"x": value}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_foreign_tenant_is_refused_directly(case: dict[str, Any]) -> None:
    ran: list[Any] = []
    registry = ToolRegistry()
    registry.add(make_tool(case, ran))
    ok = registry.call("t", args_of(case, "own"), principal=ACME)
    assert ok.error is None, ok.error
    crossed = registry.call("t", args_of(case, "foreign"), principal=ACME)
    assert crossed.error is not None and crossed.error.code == "E503", crossed
    assert len(ran) == 1  # the tool ran for the own tenant only


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_foreign_tenant_is_refused_over_mcp(case: dict[str, Any]) -> None:
    from mcp import Client

    from formulane.mcp import build_server

    ran: list[Any] = []
    registry = ToolRegistry()
    registry.add(make_tool(case, ran))

    async def go() -> Any:
        async with Client(build_server(registry, principal=ACME)) as client:
            return (await client.call_tool("t", args_of(case, "own")),
                    await client.call_tool("t", args_of(case, "foreign")))

    own, foreign = anyio.run(go)
    assert not own.is_error, own.content
    assert foreign.is_error and "E503" in foreign.content[0].text
    assert len(ran) == 1


SECRET_CASES = [c for c in CASES if "secret" in c]


@pytest.mark.parametrize("case", SECRET_CASES, ids=[c["id"] for c in SECRET_CASES])
def test_secrets_never_stored_in_clear(case: dict[str, Any], store: Any) -> None:
    ran: list[Any] = []
    registry = ToolRegistry(store=store)
    registry.add(make_tool(case, ran, effect="write"))
    args = args_of(case, "secret")
    held = registry.call("t", args, principal=ACME)  # a write: held for approval, args stored
    assert held.error is not None and held.error.code == "E504"
    approval_id = held.error.details["approval_id"]
    registry.approve(approval_id, approver=Principal("bob", "acme", ["tools:approve"]))
    done = registry.call("t", args, principal=ACME, approval=approval_id, idempotency_key="k1")
    assert done.error is None, done.error
    registry.call("t", args_of(case, "foreign"), principal=ACME)  # a denied call is receipted too
    registry.flush()
    assert ran and SECRET not in repr(registry.receipts())
    assert "[redacted]" in registry.receipts(outcome="succeeded")[0].args
    assert SECRET not in dump_database(store)


def _break_secret(value: Any) -> Any:
    """The case value with every secret made invalid (too short, still unique)."""
    if isinstance(value, dict):
        return {k: _break_secret(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_break_secret(v) for v in value]
    return "sk-Q9z" if value == "SECRET" else value


@pytest.mark.parametrize("case", SECRET_CASES, ids=[c["id"] for c in SECRET_CASES])
def test_an_invalid_secret_is_never_echoed(case: dict[str, Any]) -> None:
    registry = ToolRegistry()
    registry.add(make_tool(case, []))
    broken = _break_secret(case["secret"])
    result = registry.call("t", {"input": broken} if case.get("root") else {"x": broken}, principal=ACME)
    assert result.error is not None and result.error.code == "E502"
    text = repr(result.error.to_dict()) + result.error.render() if hasattr(result.error, "render") \
        else repr(result.error.to_dict())
    assert "sk-Q9z" not in text
    assert "sk-Q9z" not in repr(registry.receipts())
