"""Export to every provider target: snapshots of the zoo, each checked against the provider's
documented rules; refusals and downgrades; deterministic bytes; exported wire forms that
validate back through `call`.

Regenerate snapshots with FORMULANE_UPDATE_SNAPSHOTS=1.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, create_model

from formulane.errors import ToolError
from formulane.typed_tools import Principal, Tool, ToolRegistry
from formulane.typed_tools.export import TARGETS
from formulane.typed_tools.export.checks import (
    check_anthropic,
    check_export,
    check_gemini,
    check_mcp,
    check_openai,
    nodes,
)
from zoo import PORTABLE, build_zoo

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("FORMULANE_UPDATE_SNAPSHOTS") == "1"

#: Zoo tools each target must refuse (recursion, tuples, free-form values), by design.
REFUSED = {
    "openai_strict": {"store_blob", "tag_items"},
    "openai": set(),
    "anthropic": set(),
    "anthropic_strict": {"store_blob", "tag_items", "tree_sum"},
    "gemini": {"store_blob", "tag_items", "tree_sum"},
    "mcp": set(),
}

VARIANTS = [(target, "chat") for target in TARGETS] + [("openai_strict", "responses"), ("openai", "responses")]


def _snapshot_name(target: str, api: str) -> str:
    return f"export_{target}{'_responses' if api == 'responses' else ''}.json"


def _schemas(export: Any) -> list[dict[str, Any]]:
    out = []
    for tool in export.payload():
        if export.target == "gemini":
            out.extend(d["parameters"] for d in tool["functionDeclarations"] if "parameters" in d)
        elif export.target.startswith("openai"):
            out.append((tool.get("function") or tool)["parameters"])
        elif export.target.startswith("anthropic"):
            out.append(tool["input_schema"])
        else:
            out.extend([tool["inputSchema"], tool["outputSchema"]])
    return out


@pytest.mark.parametrize(("target", "api"), VARIANTS)
def test_zoo_export_matches_snapshot_and_provider_rules(target: str, api: str) -> None:
    export = build_zoo().export(target, api=api, skip_unexportable=True)
    snapshot = {"payload": export.payload(), "report": export.report()}
    text = json.dumps(snapshot, indent=2, ensure_ascii=False) + "\n"
    path = SNAPSHOTS / _snapshot_name(target, api)
    if UPDATE or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text)
        if not UPDATE:
            pytest.fail(f"snapshot {path.name} was missing and has been written; run again")
    assert text == path.read_text(), f"{path.name} changed; rerun with FORMULANE_UPDATE_SNAPSHOTS=1 if intended"
    assert check_export(export) == []
    assert {r.tool for r in export.reports if r.refused} == REFUSED[target]
    for schema in _schemas(export):
        jsonschema.Draft202012Validator.check_schema(schema)  # every export is valid JSON Schema too


@pytest.mark.parametrize("target", TARGETS)
def test_every_stored_snapshot_passes_its_checker(target: str) -> None:
    for api in ("chat", "responses") if target.startswith("openai") else ("chat",):
        path = SNAPSHOTS / _snapshot_name(target, api)
        payload = json.loads(path.read_text())["payload"]
        if target.startswith("openai"):
            assert check_openai(payload, api) == []
        elif target.startswith("anthropic"):
            assert check_anthropic(payload) == []
        elif target == "gemini":
            assert check_gemini(payload) == []
        else:
            assert check_mcp(payload) == []


@pytest.mark.parametrize("target", TARGETS)
def test_export_bytes_are_deterministic(target: str) -> None:
    a = build_zoo().export(target, tools=PORTABLE)
    b = build_zoo().export(target, tools=list(reversed(PORTABLE)))
    assert a.to_json() == b.to_json() and a.sha256 == b.sha256
    assert json.loads(a.to_json()) == a.payload()


@pytest.mark.parametrize("target", [t for t in TARGETS if REFUSED[t]])
def test_refusals_name_the_tool_and_field(target: str) -> None:
    with pytest.raises(ToolError) as err:
        build_zoo().export(target)
    assert err.value.code == "E507"
    message = str(err.value)
    for tool in REFUSED[target]:
        assert f"tool {tool!r}" in message
    assert "field 'pairs[]' is a fixed-length tuple" in message
    assert "field 'meta' accepts an object with any keys" in message
    if "tree_sum" in REFUSED[target]:
        assert "field 'root.children[]' is recursive (Node -> Node)" in message


def test_recursion_is_kept_in_defs_where_the_target_allows_it() -> None:
    for target in ("openai_strict", "openai", "anthropic", "mcp"):
        export = build_zoo().export(target, tools=["tree_sum"])
        schema = _schemas(export)[0]
        children = schema["$defs"]["Node"]["properties"]["children"]
        if target == "openai_strict":  # every field required, so the optional list is nullable
            children = children["anyOf"][0]
        assert children["items"] == {"$ref": "#/$defs/Node"}
        assert any(c.kind == "recursive_ref" for c in export.reports[0].changes)


def test_openai_strict_shape_rules() -> None:
    export = build_zoo().export("openai_strict", tools=["search_orders", "set_labels", "billing.refund"])
    by_name = {t["function"]["name"]: t["function"] for t in export.tools}
    search = by_name["search_orders"]["parameters"]
    assert search["required"] == ["query", "limit", "cursor", "status"]
    assert search["properties"]["limit"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    assert "Send null to use the default (10)." in search["properties"]["limit"]["description"]
    labels = by_name["set_labels"]["parameters"]["properties"]["labels"]
    assert labels["type"] == "array" and labels["items"]["required"] == ["key", "value"]
    assert "billing_refund" in by_name and export.names["billing_refund"] == "billing.refund"
    report = {r.tool: r for r in export.reports}
    assert any(c.kind == "name_mapped" for c in report["billing.refund"].changes)
    assert all(t["function"]["strict"] is True for t in export.tools)


def test_plain_openai_keeps_optional_fields_and_says_strict_false() -> None:
    export = build_zoo().export("openai", api="responses", tools=["search_orders"])
    tool = export.tools[0]
    assert tool["strict"] is False and tool["parameters"]["required"] == ["query"]
    assert tool["parameters"]["properties"]["limit"] == {"type": "integer", "description": "How many results to return.",
                                                        "default": 10}


def test_constraints_moved_to_descriptions_are_reported_as_lossy() -> None:
    export = build_zoo().export("gemini", tools=["reserve_slot"])
    report = export.reports[0]
    assert report.lossy
    assert any("maximum 12" in d for d in report.dropped)
    seats = export.tools[0]["parameters"]["properties"]["seats"]
    assert seats == {"type": "integer", "description": "Number of seats. Constraints: minimum 1; maximum 12. Default: 2."}
    mcp = build_zoo().export("mcp", tools=["reserve_slot"])
    assert not mcp.lossy and mcp.tools[0]["inputSchema"]["properties"]["seats"]["maximum"] == 12


def test_mcp_annotations_follow_the_effect_class() -> None:
    export = build_zoo().export("mcp", tools=["search_orders", "plan_change", "billing.refund"])
    hints = {t["name"]: t["annotations"] for t in export.tools}
    assert hints["search_orders"] == {"readOnlyHint": True}
    assert hints["plan_change"] == {"title": "Plan a change", "readOnlyHint": False, "destructiveHint": False}
    assert hints["billing.refund"] == {"readOnlyHint": False, "destructiveHint": True}
    schemas = {t["name"]: t["outputSchema"] for t in export.tools}
    assert schemas["search_orders"]["properties"]["result"]["type"] == "array"


def _wide_tool(name: str, fields: int, optional: bool) -> Tool:
    model = create_model(f"{name}Args", __config__={"extra": "forbid"},
                         **{f"f{i}": ((int | None), None) if optional else (int, ...) for i in range(fields)})
    return Tool(name=name, fn=lambda a: 0, input_model=model, output_model=int)


def test_anthropic_strict_request_limits_downgrade_in_name_order() -> None:
    reg = ToolRegistry()
    for i in range(22):
        reg.add(_wide_tool(f"t{i:02d}", 1, optional=False))
    export = reg.export("anthropic_strict")
    strict = [t["name"] for t in export.tools if t.get("strict")]
    assert strict == [f"t{i:02d}" for i in range(20)]
    downgraded = [r for r in export.reports if r.downgraded]
    assert [r.tool for r in downgraded] == ["t20", "t21"]
    assert "more than 20 strict tools" in downgraded[0].downgraded
    assert check_anthropic(export.payload()) == []

    reg = ToolRegistry()
    reg.add(_wide_tool("a", 20, optional=True))
    reg.add(_wide_tool("b", 5, optional=True))
    export = reg.export("anthropic_strict")
    assert [r.tool for r in export.reports if r.downgraded] == ["b"]
    assert "optional parameters" in export.reports[1].downgraded


def test_openai_strict_depth_limit_downgrades() -> None:
    model: type[BaseModel] = create_model("L0", leaf=(int, ...))
    for depth in range(1, 12):
        model = create_model(f"L{depth}", child=(model, ...))
    reg = ToolRegistry()
    reg.add(Tool(name="deep", fn=lambda a: 0, input_model=create_model("DeepArgs", __config__={"extra": "forbid"},
                                                                        top=(model, ...)), output_model=int))
    export = reg.export("openai_strict")
    assert export.tools[0]["function"]["strict"] is False
    assert "depth 13 exceeds" in export.reports[0].downgraded


@pytest.mark.parametrize(
    ("checker", "payload", "violation"),
    [
        (lambda p: check_openai(p), [{"type": "function", "function": {
            "name": "x", "strict": True, "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}],
         "additionalProperties must be false"),
        (lambda p: check_openai(p), [{"type": "function", "function": {
            "name": "x", "strict": True, "parameters": {"type": "object", "properties": {"a": {"type": "integer"}},
                                                        "required": [], "additionalProperties": False}}}],
         "required must list every property"),
        (lambda p: check_openai(p), [{"type": "function", "function": {"name": "a.b", "strict": False,
                                                                      "parameters": {"type": "object"}}}],
         "must match"),
        (lambda p: check_openai(p), [{"type": "function", "function": {"name": "x", "parameters": {"type": "object"}}}],
         "strict must be written out"),
        (lambda p: check_openai(p), [{"type": "function", "function": {
            "name": "x", "strict": True, "parameters": {"anyOf": [{"type": "object"}], "type": "object"}}}],
         "must not use anyOf"),
        (lambda p: check_openai(p), [{"type": "function", "function": {
            "name": "x", "strict": True, "parameters": {
                "type": "object", "properties": {"a": {"$ref": "#/$defs/A", "description": "d"}}, "required": ["a"],
                "additionalProperties": False, "$defs": {"A": {"type": "string"}}}}}],
         "must not have sibling keywords"),
        (lambda p: check_openai(p), [{"type": "function", "function": {
            "name": "x", "strict": True, "parameters": {
                "type": "object", "properties": {"a": {"type": "string", "format": "uri"}}, "required": ["a"],
                "additionalProperties": False}}}],
         "format 'uri' is not supported"),
        (lambda p: check_anthropic(p), [{"name": "x", "input_schema": {"anyOf": [{}], "type": "object"}}],
         "does not support anyOf at the top level"),
        (lambda p: check_anthropic(p), [{"name": "x", "input_schema": {
            "type": "object", "properties": {"a": {"type": "string", "nullable": True}}}}],
         "OpenAPI-only keywords"),
        (lambda p: check_anthropic(p), [{"name": "x", "strict": True, "input_schema": {
            "type": "object", "properties": {"a": {"type": "integer", "maximum": 3}}, "additionalProperties": False}}],
         "strict mode does not support ['maximum']"),
        (lambda p: check_anthropic(p), [{"name": "x", "strict": True, "input_schema": {
            "type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "additionalProperties": False,
            "$defs": {"N": {"type": "object", "properties": {"k": {"$ref": "#/$defs/N"}},
                            "additionalProperties": False}}}}],
         "cannot be recursive"),
        (lambda p: check_gemini(p), [{"functionDeclarations": [{"name": "x", "description": "d", "parameters": {
            "type": "object", "properties": {"a": {"type": ["string", "null"]}}}}]}],
         "no type arrays"),
        (lambda p: check_gemini(p), [{"functionDeclarations": [{"name": "x", "description": "d", "parameters": {
            "type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}}]}],
         "keywords Gemini rejects: ['additionalProperties']"),
        (lambda p: check_gemini(p), [{"functionDeclarations": [{"name": "x", "description": "d", "parameters": {
            "type": "object", "properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}}]}],
         "no null"),
        (lambda p: check_gemini(p), [{"functionDeclarations": [{"name": "1x", "description": "d"}]}], "must match"),
        (lambda p: check_mcp(p), [{"name": "x", "inputSchema": {"type": "object"}}], "needs properties and required"),
        (lambda p: check_mcp(p), [{"name": "x", "inputSchema": {"type": "object", "properties": {}, "required": []},
                                   "annotations": {"readOnlyHint": True, "destructiveHint": True}}],
         "cannot be destructive"),
    ],
)
def test_checkers_catch_documented_violations(checker: Any, payload: Any, violation: str) -> None:
    found = checker(payload)
    assert any(violation in v for v in found), found


def test_raw_pydantic_schemas_fail_the_strict_checkers() -> None:
    """The exporters are needed: pydantic's own schemas break the strict and Gemini rules."""
    tool = build_zoo().get("create_customer")
    raw = copy.deepcopy(tool.input_schema)
    openai_payload = [{"type": "function", "function": {"name": "create_customer", "parameters": raw,
                                                        "strict": True}}]
    assert check_openai(openai_payload)
    gemini_payload = [{"functionDeclarations": [{"name": "c", "description": "d", "parameters": raw}]}]
    assert check_gemini(gemini_payload)
    assert any("title" in v for v in check_gemini(gemini_payload))


def test_exports_never_leak_vendor_keys_or_titles() -> None:
    for target in TARGETS:
        export = build_zoo().export(target, skip_unexportable=True)
        for schema in _schemas(export):
            for _, node in nodes(schema):
                assert not any(k.startswith("x-") or k == "title" for k in node), (target, node)


def test_unknown_target_is_refused() -> None:
    with pytest.raises(ToolError) as err:
        build_zoo().export("cohere")
    assert err.value.code == "E507" and "openai_strict" in err.value.hint


# Wire forms each target's schema asks for, which must validate through `call`.
ROUND_TRIPS = [
    ("openai_strict", "search_orders", {"query": "x", "limit": None, "cursor": None, "status": None}),
    ("openai_strict", "set_labels", {"labels": [{"key": "a", "value": "b"}], "counts": None,
                                     "addresses": [{"key": "home", "value": {
                                         "street": "1 rue", "city": "Paris", "postcode": "75001", "country": None}}]}),
    ("openai_strict", "measure", {"shape": {"kind": "square", "side": 2}, "scale": None}),
    ("anthropic_strict", "search_orders", {"query": "x"}),
    ("gemini", "price_quote", {"amount": "12.50", "currency": "EUR"}),
    ("mcp", "set_labels", {"labels": {"a": "b"}, "addresses": {"w": {"street": "s", "city": "c", "postcode": "12345"}}}),
    ("openai_strict", "order_action", {"input": {"order_id": "o1", "reason": "dup"}}),
]


@pytest.mark.parametrize(("target", "tool", "wire"), ROUND_TRIPS)
def test_exported_wire_forms_validate_back(target: str, tool: str, wire: dict[str, Any]) -> None:
    reg = build_zoo()
    export = reg.export(target, tools=[tool])
    schema = _schemas(export)[0]
    if target != "gemini":  # Gemini's `nullable` is OpenAPI, not JSON Schema
        jsonschema.validate(wire, schema)
    result = reg.call(tool, wire, principal=Principal("u", "t"))
    assert result.ok, result.text()
