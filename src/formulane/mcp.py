"""MCP server over a `ToolRegistry`, built on the official `mcp` SDK (stdio and streamable HTTP).

Contract: `build_server(registry, principal=...)` returns an `mcp` low-level `Server` whose
`tools/list` is the registry's `mcp` export (inputSchema, outputSchema, annotations from the
effect class) and whose `tools/call` runs `registry.acall`: results carry `structuredContent`
and a text copy; refusals (invalid arguments, not authorized, approval required) are
`isError` results the model can read; an unknown tool name is a protocol error (-32602), as the
spec asks. Every call runs as one `Principal`, fixed or resolved per request. A write's
approval id and idempotency key travel in the request `_meta` (`formulane/approval_id`,
`formulane/idempotency_key`); without them an approved request for the same arguments is used.
`serve(...)` runs it; HTTP binds loopback unless `allow_remote=True`, because the tools run
with the configured principal's authority. `main(argv)` is the `formulane mcp` command.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import ipaddress
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from .errors import ToolError
from .typed_tools import Principal, ToolRegistry, formula_tools

APPROVAL_META = "formulane/approval_id"
IDEMPOTENCY_META = "formulane/idempotency_key"
RECEIPT_META = "formulane/receipt_id"

PrincipalSource = Principal | Callable[[Any], Principal]


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("formulane")
    except Exception:  # noqa: BLE001 - running from a source tree without metadata
        return "0"


def build_server(registry: ToolRegistry, *, principal: PrincipalSource, name: str = "formulane") -> Any:
    """An `mcp.server.lowlevel.Server` serving the registry's tools as `principal`."""
    try:
        import mcp_types as types
        from mcp.server.lowlevel import Server
        from mcp.shared.exceptions import MCPError
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ToolError("the MCP server needs the official mcp SDK (2.x)", code="E506",
                        hint="pip install 'formulane[mcp]'") from exc
    if not isinstance(principal, Principal) and not callable(principal):
        raise ToolError("principal must be a Principal or a callable(request context) -> Principal", code="E503")
    exported = registry.export("mcp", skip_unexportable=True)
    tools = [types.Tool.model_validate(tool) for tool in exported.tools]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        caller = principal if isinstance(principal, Principal) else principal(ctx)
        meta = dict(params.meta or {})
        approval = meta.get(APPROVAL_META) or "auto"
        key = meta.get(IDEMPOTENCY_META)
        try:
            result = await registry.acall(params.name, params.arguments or {}, principal=caller,
                                          approval=approval, idempotency_key=key,
                                          call_id=str(ctx.request_id) if ctx.request_id is not None else None)
        except ToolError as exc:
            # A malformed _meta value (an idempotency key too long or not a string...) is the
            # client's mistake: a tool error it can read, not an internal error (-32603).
            return types.CallToolResult.model_validate(
                {"content": [{"type": "text", "text": exc.render()}], "isError": True})
        if result.error is not None and result.error.code == "E501":
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        payload = result.to_mcp()
        payload["_meta"] = {RECEIPT_META: result.receipt.id}
        return types.CallToolResult.model_validate(payload)

    return Server(name, version=_version(), on_list_tools=list_tools, on_call_tool=call_tool)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def serve_async(registry: ToolRegistry, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000,
                      *, principal: PrincipalSource | None = None, allow_remote: bool = False,
                      path: str = "/mcp") -> None:
    if transport not in ("stdio", "http"):
        raise ToolError(f"unknown transport {transport!r}", code="E506", hint="'stdio' or 'http'")
    if transport == "http" and not _loopback(host) and not allow_remote:
        raise ToolError(f"refusing to serve tools on {host}: only loopback without allow_remote=True",
                        code="E503", hint="put an authenticating proxy in front and pass allow_remote=True")
    server = build_server(registry, principal=principal or default_principal())
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return
    import uvicorn

    app = server.streamable_http_app(streamable_http_path=path, host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def serve(registry: ToolRegistry, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000, *,
          principal: PrincipalSource | None = None, allow_remote: bool = False, path: str = "/mcp") -> None:
    """Serve the registry over MCP until the client disconnects (stdio) or the process stops."""
    import anyio

    anyio.run(lambda: serve_async(registry, transport, host, port, principal=principal,
                                  allow_remote=allow_remote, path=path))


def default_principal(scopes: Sequence[str] = ()) -> Principal:
    return Principal(
        subject=os.environ.get("FORMULANE_MCP_SUBJECT", "mcp-client"),
        tenant=os.environ.get("FORMULANE_MCP_TENANT", "default"),
        scopes=scopes,
        kind="workload",
    )


def load_registry(spec: str) -> ToolRegistry:
    """`module:attr` or `path/to/file.py:attr`; attr is a ToolRegistry or a function returning one."""
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise ToolError(f"registry spec {spec!r} must look like module:attr or file.py:attr", code="E506")
    if target.endswith(".py"):
        file = Path(target)
        module_spec = importlib.util.spec_from_file_location(f"formulane_mcp_{file.stem}", file)
        if module_spec is None or module_spec.loader is None or not file.exists():
            raise ToolError(f"cannot load {target!r}", code="E506")
        module = importlib.util.module_from_spec(module_spec)
        # pydantic resolves postponed annotations through sys.modules[cls.__module__].
        sys.modules[module_spec.name] = module
        sys.path.insert(0, str(file.resolve().parent))  # so the file can import its neighbours
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    found = getattr(module, attr, None)
    if found is None:
        raise ToolError(f"{target!r} has no attribute {attr!r}", code="E506")
    registry = found() if callable(found) and not isinstance(found, ToolRegistry) else found
    if not isinstance(registry, ToolRegistry):
        raise ToolError(f"{spec!r} is not a ToolRegistry (got {type(registry).__name__})", code="E506")
    return registry


def main(argv: Sequence[str] | None = None) -> int:
    """`formulane mcp [--http] [--port N]`: serve the formula tools (or a registry) over MCP."""
    parser = argparse.ArgumentParser(prog="formulane mcp", description=main.__doc__)
    parser.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp", help="HTTP path of the MCP endpoint")
    parser.add_argument("--registry", help="module:attr or file.py:attr naming a ToolRegistry (or a factory)")
    parser.add_argument("--store", help="receipt store: a SQLite path or a postgresql:// URL")
    parser.add_argument("--no-formula-tools", action="store_true", help="do not add the built-in formula tools")
    parser.add_argument("--scope", action="append", default=[], help="a scope the client holds (repeatable)")
    parser.add_argument("--subject", help="the principal's subject (default $FORMULANE_MCP_SUBJECT)")
    parser.add_argument("--tenant", help="the principal's tenant (default $FORMULANE_MCP_TENANT)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        if args.registry:
            registry = load_registry(args.registry)
        else:
            registry = ToolRegistry(store=args.store)
        if not args.no_formula_tools and "evaluate_formula" not in registry:
            formula_tools.register(registry)
        principal = default_principal(args.scope)
        if args.subject or args.tenant:
            principal = Principal(args.subject or principal.subject, args.tenant or principal.tenant,
                                  principal.scopes, principal.kind)
        try:
            serve(registry, "http" if args.http else "stdio", args.host, args.port, principal=principal,
                  path=args.path)
        finally:
            registry.close()
    except ToolError as exc:
        print(f"formulane mcp: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
