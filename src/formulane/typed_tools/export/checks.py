"""Checkers of each provider's documented tool rules, written from the research (Part 1).

Contract: `check_openai(tools, api)`, `check_anthropic(tools)`, `check_gemini(payload)` and
`check_mcp(tools)` take a provider payload exactly as it would be sent and return a list of
violations (empty when valid); `check_export(export)` dispatches on the target. They are
written independently of the compiler, from the rules as documented, so the compiler's output
is tested against the rules rather than against itself. Every export runs them, and every
snapshot test does too.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator

from ...jsonshape import is_array, is_object

OPENAI_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
GEMINI_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,62}$")
MCP_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")

JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}

# OpenAI Structured Outputs, "Supported schemas": the keywords strict mode accepts.
OPENAI_STRICT_KEYS = {"type", "description", "properties", "required", "additionalProperties", "items", "anyOf",
                      "enum", "$ref", "$defs", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
                      "exclusiveMaximum", "multipleOf", "minItems", "maxItems"}
OPENAI_STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
OPENAI_LIMITS = {"properties": 5000, "depth": 10, "enum_values": 1000, "chars": 120_000}

# Anthropic strict tool use: unsupported constraint keywords and the accepted formats.
ANTHROPIC_STRICT_BANNED = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
                           "maxLength", "pattern", "maxItems", "uniqueItems", "default", "examples", "prefixItems"}
ANTHROPIC_STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6",
                            "uuid"}
# OpenAPI-only keys that make Anthropic answer "JSON schema is invalid" (fastapi_mcp #218).
OPENAPI_ONLY = {"nullable", "example", "discriminator", "xml", "externalDocs"}

GEMINI_KEYS = {"type", "format", "description", "nullable", "enum", "properties", "required", "items", "anyOf",
               "minItems", "maxItems"}
GEMINI_TYPES = {"string", "integer", "number", "boolean", "array", "object"}
GEMINI_FORMATS = {"date-time", "enum"}

MCP_TOOL_KEYS = {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons", "_meta",
                 "execution"}
MCP_HINTS = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

_SCHEMA_CHILDREN = ("items", "additionalProperties", "propertyNames", "not", "if", "then", "else", "contains")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def nodes(schema: Any, path: str = "$") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema node with a JSONPath-like location (properties, items, unions, $defs)."""
    if not is_object(schema):
        return
    yield path, schema
    properties: dict[str, Any] = schema.get("properties") or {}
    for name, child in properties.items():
        yield from nodes(child, f"{path}.properties.{name}")
    for key in _SCHEMA_CHILDREN:
        if isinstance(schema.get(key), dict):
            yield from nodes(schema[key], f"{path}.{key}")
    for key in _SCHEMA_LISTS:
        branches: list[Any] = schema.get(key) or []
        for i, child in enumerate(branches):
            yield from nodes(child, f"{path}.{key}[{i}]")
    defs: dict[str, Any] = schema.get("$defs") or {}
    for name, child in defs.items():
        yield from nodes(child, f"{path}.$defs.{name}")


def _depth(schema: Any, level: int = 0) -> int:
    if not is_object(schema):
        return level
    deepest = level
    props = schema.get("properties")
    if is_object(props):
        deepest = max([level + 1] + [_depth(c, level + 1) for c in props.values()])
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            deepest = max(deepest, _depth(schema[key], level))
    branches: list[Any] = schema.get("anyOf") or []
    for child in branches:
        deepest = max(deepest, _depth(child, level))
    return deepest


def _refs_ok(schema: dict[str, Any], where: str) -> list[str]:
    out: list[str] = []
    defs: dict[str, Any] = schema.get("$defs") or {}
    for path, node in nodes(schema):
        ref = node.get("$ref")
        if ref is None:
            continue
        if ref != "#" and not (ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in defs):
            out.append(f"{where} {path}: $ref {ref!r} does not resolve")
    return out


def _recursive_defs(schema: dict[str, Any]) -> set[str]:
    defs: dict[str, Any] = schema.get("$defs") or {}
    edges: dict[str, set[str]] = {name: {n.get("$ref", "")[len("#/$defs/"):] for _, n in nodes(body) if "$ref" in n}
             for name, body in defs.items()}
    cyclic: set[str] = set()
    for start in defs:
        stack, seen = list(edges.get(start, ())), set[str]()
        while stack:
            current = stack.pop()
            if current == start:
                cyclic.add(start)
                break
            if current in seen or current not in edges:
                continue
            seen.add(current)
            stack.extend(edges[current])
    return cyclic


def _unique_names(names: list[str], where: str) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        if name in seen:
            out.append(f"{where}: duplicate tool name {name!r}")
        seen.add(name)
    return out


# -- OpenAI ------------------------------------------------------------------------------------


def check_openai(tools: list[dict[str, Any]], api: str = "chat") -> list[str]:
    out: list[str] = []
    names: list[str] = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if tool.get("type") != "function":
            out.append(f"{where}: type must be 'function'")
        fn = tool.get("function") if api == "chat" else tool
        if not is_object(fn):
            out.append(f"{where}: missing function object")
            continue
        name = fn.get("name", "")
        names.append(name)
        if not isinstance(name, str) or not OPENAI_NAME.match(name):
            out.append(f"{where}: name {name!r} must match {OPENAI_NAME.pattern}")
        if not isinstance(fn.get("strict"), bool):
            out.append(f"{where}: strict must be written out (the Responses API defaults it to true)")
        params = fn.get("parameters")
        if not is_object(params) or params.get("type") != "object":
            out.append(f"{where}: parameters must be an object schema")
            continue
        for key in ("anyOf", "oneOf", "allOf", "enum", "not"):
            if key in params:
                out.append(f"{where}: parameters root must not use {key}")
        if fn.get("strict") is True:
            out.extend(_openai_strict(params, where))
    return out + _unique_names(names, "openai")


def _openai_strict(params: dict[str, Any], where: str) -> list[str]:
    out = _refs_ok(params, where)
    for path, node in nodes(params):
        extra = set(node) - OPENAI_STRICT_KEYS
        if extra:
            out.append(f"{where} {path}: keywords not supported in strict mode: {sorted(extra)}")
        if "$ref" in node and len(node) != 1:
            out.append(f"{where} {path}: $ref must not have sibling keywords in strict mode")
        kind = node.get("type")
        kinds = kind if is_array(kind) else [kind]
        if kind is None and not ({"anyOf", "$ref", "enum"} & set(node)):
            out.append(f"{where} {path}: every schema needs a type (an empty schema is not allowed)")
        if kind is not None and not set(kinds) <= JSON_TYPES:
            out.append(f"{where} {path}: unknown type {kind!r}")
        if "object" in kinds:
            props = node.get("properties")
            if not is_object(props):
                out.append(f"{where} {path}: objects need properties")
                props = {}
            if node.get("additionalProperties") is not False:
                out.append(f"{where} {path}: additionalProperties must be false")
            if sorted(node.get("required", [])) != sorted(props):
                out.append(f"{where} {path}: required must list every property")
        if "format" in node and node["format"] not in OPENAI_STRICT_FORMATS:
            out.append(f"{where} {path}: format {node['format']!r} is not supported in strict mode")
        if node.get("items") == {}:
            out.append(f"{where} {path}: items must not be an empty schema")
    stats = {"depth": _depth(params), "properties": 0, "enum_values": 0, "chars": 0}
    for _, node in nodes(params):
        node_props: dict[str, Any] = node.get("properties") or {}
        stats["properties"] += len(node_props)
        stats["chars"] += sum(len(name) for name in node_props)
        enum: list[Any] = node.get("enum") or []
        stats["enum_values"] += len(enum)
        stats["chars"] += sum(len(str(v)) for v in enum)
    for key, limit in OPENAI_LIMITS.items():
        if stats[key] > limit:
            out.append(f"{where}: {key} {stats[key]} over the strict-mode limit {limit}")
    return out


# -- Anthropic ---------------------------------------------------------------------------------


def check_anthropic(tools: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    names: list[str] = []
    strict_count = optional = unions = 0
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        extra = set(tool) - {"name", "description", "input_schema", "strict", "input_examples", "cache_control"}
        if extra:
            out.append(f"{where}: unknown tool keys {sorted(extra)}")
        name = tool.get("name", "")
        names.append(name)
        if not isinstance(name, str) or not ANTHROPIC_NAME.match(name):
            out.append(f"{where}: name {name!r} must match {ANTHROPIC_NAME.pattern}")
        schema = tool.get("input_schema")
        if not is_object(schema) or schema.get("type") != "object":
            out.append(f"{where}: input_schema must be an object schema")
            continue
        for key in ("oneOf", "allOf", "anyOf"):
            if key in schema:
                out.append(f"{where}: input_schema does not support {key} at the top level")
        out.extend(_refs_ok(schema, where))
        for path, node in nodes(schema):
            leaked = set(node) & OPENAPI_ONLY
            if leaked:
                out.append(f"{where} {path}: OpenAPI-only keywords {sorted(leaked)} are invalid JSON Schema here")
            kind = node.get("type")
            for k in (kind if is_array(kind) else [kind]):
                if k is not None and k not in JSON_TYPES:
                    out.append(f"{where} {path}: unknown type {k!r}")
        if tool.get("strict") is True:
            strict_count += 1
            recursive = _recursive_defs(schema)
            if recursive:
                out.append(f"{where}: strict tools cannot be recursive ({sorted(recursive)})")
            for path, node in nodes(schema):
                banned = set(node) & ANTHROPIC_STRICT_BANNED
                if banned:
                    out.append(f"{where} {path}: strict mode does not support {sorted(banned)}")
                if node.get("minItems", 0) > 1:
                    out.append(f"{where} {path}: strict mode supports minItems 0 or 1 only")
                if "format" in node and node["format"] not in ANTHROPIC_STRICT_FORMATS:
                    out.append(f"{where} {path}: format {node['format']!r} is not supported in strict mode")
                kind = node.get("type")
                if (kind == "object" or (is_array(kind) and "object" in kind)) and \
                        node.get("additionalProperties") is not False:
                    out.append(f"{where} {path}: strict mode needs additionalProperties: false")
                props: dict[str, Any] = node.get("properties") or {}
                required_list: list[Any] = node.get("required") or []
                required = set(required_list)
                optional += sum(1 for p in props if p not in required)
                unions += sum(1 for c in props.values()
                              if is_object(c) and ("anyOf" in c or isinstance(c.get("type"), list)))
    if strict_count > 20:
        out.append(f"{strict_count} strict tools in one request (limit 20)")
    if optional > 24:
        out.append(f"{optional} optional parameters across strict tools (limit 24)")
    if unions > 16:
        out.append(f"{unions} union parameters across strict tools (limit 16)")
    return out + _unique_names(names, "anthropic")


# -- Gemini ------------------------------------------------------------------------------------


def check_gemini(payload: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    if not is_array(payload) or len(payload) > 1:
        return ["gemini: the payload is a list with one {functionDeclarations: [...]} tool"]
    decls: list[dict[str, Any]] = payload[0].get("functionDeclarations", []) if payload else []
    if payload and set(payload[0]) != {"functionDeclarations"}:
        out.append("gemini: the tool object holds only functionDeclarations")
    if len(decls) > 128:
        out.append(f"gemini: {len(decls)} declarations (limit 128)")
    names: list[str] = []
    for index, decl in enumerate(decls):
        where = f"functionDeclarations[{index}]"
        extra = set(decl) - {"name", "description", "parameters"}
        if extra:
            out.append(f"{where}: unknown keys {sorted(extra)}")
        name = decl.get("name", "")
        names.append(name)
        if not isinstance(name, str) or not GEMINI_NAME.match(name):
            out.append(f"{where}: name {name!r} must match {GEMINI_NAME.pattern}")
        if not decl.get("description"):
            out.append(f"{where}: description is required")
        params = decl.get("parameters")
        if params is None:
            continue
        if params.get("type") != "object" or not params.get("properties"):
            out.append(f"{where}: parameters must be an object with properties (omit it for no arguments)")
        for path, node in nodes(params):
            out.extend(_gemini_node(node, f"{where} {path}"))
    return out + _unique_names(names, "gemini")


def _gemini_node(node: dict[str, Any], where: str) -> list[str]:
    out: list[str] = []
    extra = set(node) - GEMINI_KEYS
    if extra:
        out.append(f"{where}: keywords Gemini rejects: {sorted(extra)}")
    kind = node.get("type")
    if kind is None:
        branches = node.get("anyOf")
        if not branches:
            out.append(f"{where}: every schema needs a type")
        elif any(not is_object(b) or "type" not in b for b in branches):
            out.append(f"{where}: every anyOf branch needs a type")
    elif not isinstance(kind, str) or kind not in GEMINI_TYPES:
        out.append(f"{where}: type must be one of {sorted(GEMINI_TYPES)} (no type arrays, no null), got {kind!r}")
    if ("properties" in node or "required" in node) and kind != "object":
        out.append(f"{where}: properties/required only on objects")
    if "items" in node and kind != "array":
        out.append(f"{where}: items only on arrays")
    if kind == "array" and "items" not in node:
        out.append(f"{where}: arrays need items")
    if not set(node.get("required", [])) <= set(node.get("properties", {})):
        out.append(f"{where}: required names a missing property")
    if "enum" in node and (kind != "string" or not all(isinstance(v, str) for v in node["enum"])):
        out.append(f"{where}: enum is for strings only")
    if "format" in node and (node["format"] not in GEMINI_FORMATS or kind != "string"):
        out.append(f"{where}: format {node['format']!r} not accepted")
    return out


# -- MCP ---------------------------------------------------------------------------------------


def check_mcp(tools: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    names: list[str] = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        extra = set(tool) - MCP_TOOL_KEYS
        if extra:
            out.append(f"{where}: unknown tool keys {sorted(extra)}")
        name = tool.get("name", "")
        names.append(name)
        if not isinstance(name, str) or not MCP_NAME.match(name):
            out.append(f"{where}: name {name!r} must match {MCP_NAME.pattern}")
        schema = tool.get("inputSchema")
        if not is_object(schema) or schema.get("type") != "object":
            out.append(f"{where}: inputSchema must be an object schema (never null)")
            continue
        if not isinstance(schema.get("properties"), dict) or not isinstance(schema.get("required"), list):
            out.append(f"{where}: inputSchema needs properties and required (strict gateways reject them missing)")
        out.extend(_refs_ok(schema, where))
        output = tool.get("outputSchema")
        if output is not None:
            if not is_object(output) or output.get("type") != "object":
                out.append(f"{where}: outputSchema must be an object schema")
            else:
                out.extend(_refs_ok(output, where + " outputSchema"))
        hints: dict[str, Any] = tool.get("annotations") or {}
        for key, value in hints.items():
            if key == "title":
                if not isinstance(value, str):
                    out.append(f"{where}: annotations.title must be a string")
            elif key not in MCP_HINTS:
                out.append(f"{where}: unknown annotation {key!r}")
            elif not isinstance(value, bool):
                out.append(f"{where}: annotation {key} must be a boolean")
        if hints.get("readOnlyHint") is True and hints.get("destructiveHint") is True:
            out.append(f"{where}: a read-only tool cannot be destructive")
    return out + _unique_names(names, "mcp")


_CHECKERS: dict[str, Callable[..., list[str]]] = {
    "anthropic": check_anthropic,
    "anthropic_strict": check_anthropic,
    "mcp": check_mcp,
}


def check_export(export: Any) -> list[str]:
    """Violations of the target's rules in an `Export` (empty when it is valid)."""
    target = export.target
    if target in ("openai", "openai_strict"):
        violations = check_openai(export.payload(), export.api or "chat")
        if target == "openai_strict":
            strict_flags = [(t.get("function") or t).get("strict") for t in export.tools]
            downgraded = {r.name for r in export.reports if r.downgraded}
            for tool, flag in zip(export.tools, strict_flags):
                name = (tool.get("function") or tool).get("name")
                if flag is not True and name not in downgraded:
                    violations.append(f"{name}: openai_strict export without strict: true")
        return violations
    if target == "gemini":
        return check_gemini(export.payload())
    return _CHECKERS[target](export.payload())
