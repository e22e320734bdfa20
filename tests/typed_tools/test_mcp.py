"""End to end through the official `mcp` SDK client: `python -m formulane.mcp` as a stdio
subprocess (and over streamable HTTP), tools/list with annotations and output schemas,
tools/call with structuredContent, isError refusals, and a write approved out of band."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from formulane.mcp import APPROVAL_META, RECEIPT_META, build_server  # noqa: E402
from formulane.typed_tools import Principal, SQLiteStore, ToolRegistry  # noqa: E402
from write_app import build_registry  # noqa: E402

HERE = Path(__file__).parent
APPROVER = Principal("carol", "acme", ["tools:approve"])
TRANSFER = {"tenant": "acme", "to": "bob", "cents": 500, "api_key": "sk-live-123"}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "FORMULANE_TEST_MCP_STORE": str(tmp_path / "mcp.sqlite3"),
        "FORMULANE_TEST_MCP_EFFECTS": str(tmp_path / "effects.log"),
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }


def server_args(*extra: str) -> list[str]:
    return ["-m", "formulane.mcp", "--registry", f"{HERE / 'mcp_app.py'}:build", "--scope", "payments:write",
            "--tenant", "acme", "--subject", "agent", *extra]


async def exercise(client: Client, env: dict[str, str]) -> None:
    listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert {"invoices.get", "draft_reminder", "transfer", "evaluate_formula", "list_functions"} <= set(tools)
    assert tools["invoices.get"].annotations.read_only_hint is True
    assert (tools["draft_reminder"].annotations.read_only_hint, tools["draft_reminder"].annotations.destructive_hint) \
        == (False, False)
    assert tools["transfer"].annotations.destructive_hint is True
    assert tools["invoices.get"].output_schema["properties"]["due"]["format"] == "date"
    assert tools["invoices.get"].input_schema["additionalProperties"] is False

    got = await client.call_tool("invoices.get", {"number": "F-1"})
    assert not got.is_error
    assert got.structured_content == {"number": "F-1", "total_cents": 1250, "due": "2030-01-31", "status": "open"}
    assert json.loads(got.content[0].text) == got.structured_content
    assert got.meta[RECEIPT_META].startswith("rcpt_")

    drafted = await client.call_tool("draft_reminder", {"number": "F-1", "tone": "firm"})
    assert drafted.structured_content == {"result": "[firm] Invoice F-1 is due."}

    wrong = await client.call_tool("invoices.get", {"number": 7, "extra": True})
    assert wrong.is_error and wrong.structured_content is None
    assert "error[E502]" in wrong.content[0].text and "unknown field 'extra'" in wrong.content[0].text

    held = await client.call_tool("transfer", TRANSFER)
    assert held.is_error and "error[E504]" in held.content[0].text
    approval_id = re.search(r"approval_id: (apr_\w+)", held.content[0].text).group(1)
    assert not Path(env["FORMULANE_TEST_MCP_EFFECTS"]).exists()

    # A person approves out of band, on the same durable store.
    with SQLiteStore(env["FORMULANE_TEST_MCP_STORE"]) as store:
        build_registry(store, effect_file=Path(env["FORMULANE_TEST_MCP_EFFECTS"])).approve(approval_id,
                                                                                       approver=APPROVER)
    done = await client.call_tool("transfer", TRANSFER, meta={APPROVAL_META: approval_id})
    assert not done.is_error, done.content[0].text
    assert done.structured_content == {"result": {"cents": 500}}
    again = await client.call_tool("transfer", TRANSFER, meta={APPROVAL_META: approval_id})
    assert again.structured_content == {"result": {"cents": 500}}
    assert Path(env["FORMULANE_TEST_MCP_EFFECTS"]).read_text().splitlines() == ["acme -> bob: 500"]

    with pytest.raises(MCPError, match="Unknown tool: nope"):
        await client.call_tool("nope", {})


def test_stdio_list_and_call_with_the_sdk_client(env: dict[str, str]) -> None:
    params = StdioServerParameters(command=sys.executable, args=server_args(), env=env, cwd=str(HERE))

    async def run() -> None:
        with open(os.devnull, "w") as errlog:
            async with Client(params) as client:
                await exercise(client, env)

    anyio.run(run)
    with SQLiteStore(env["FORMULANE_TEST_MCP_STORE"]) as store:
        outcomes = [r.outcome for r in store.receipts()]
    assert outcomes.count("succeeded") == 3 and "replayed" in outcomes and "approval_required" in outcomes
    assert "invalid_arguments" in outcomes and "unknown_tool" in outcomes


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_streamable_http_list_and_call(env: dict[str, str]) -> None:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, *server_args("--http", "--port", str(port))], env={**os.environ, **env},
                            cwd=HERE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                time.sleep(0.05)

        async def run() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                await exercise(client, env)

        anyio.run(run)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_in_process_server_uses_the_resolved_principal() -> None:
    registry = ToolRegistry()

    @registry.tool(scopes=["secret:read"])
    def secret() -> str:
        return "42"

    async def run(principal: Any) -> Any:
        async with Client(build_server(registry, principal=principal)) as client:
            return await client.call_tool("secret", {})

    denied = anyio.run(run, Principal("u", "t"))
    assert denied.is_error and "error[E503]" in denied.content[0].text
    allowed = anyio.run(run, lambda ctx: Principal("u", "t", ["secret:read"]))
    assert allowed.structured_content == {"result": "42"}


def test_http_refuses_non_loopback_hosts_without_opt_in() -> None:
    from formulane.errors import ToolError
    from formulane.mcp import serve

    with pytest.raises(ToolError, match="only loopback"):
        serve(ToolRegistry(), "http", host="0.0.0.0", port=1)
