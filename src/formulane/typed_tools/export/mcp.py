"""MCP tool definitions (`mcp`, spec 2025-11-25): inputSchema, outputSchema, annotations.

Contract: JSON Schema 2020-12 kept whole, with every non-recursive `$ref` inlined (VS Code
Copilot, Claude Desktop and others fail on `$defs`); recursion is kept in `$defs` and reported.
Objects always carry `properties` and `required` (strict gateways reject them missing) and
`additionalProperties: false` (true: validation forbids unknown keys). `outputSchema` is the
output model (non-object results wrapped as `{"result": ...}`), and annotations come from the
effect class: read -> readOnlyHint; propose -> not read-only, not destructive; write ->
destructive.
"""

from __future__ import annotations

from typing import Any

from .common import Profile

MCP = Profile(
    target="mcp",
    keywords=frozenset({"pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                        "multipleOf", "minItems", "maxItems", "minLength", "maxLength", "uniqueItems",
                        "minProperties", "maxProperties", "default", "examples", "deprecated", "const",
                        "readOnly", "writeOnly"}),
    formats=None,
    close_objects=True,
)

NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,128}$"


def wrap(name: str, title: str | None, description: str, input_schema: dict[str, Any],
         output_schema: dict[str, Any], annotations: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if title:
        out["title"] = title
    out["description"] = description
    out["inputSchema"] = input_schema
    out["outputSchema"] = output_schema
    out["annotations"] = annotations
    return out
