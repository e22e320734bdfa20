"""Export tools to a provider: one canonical schema, one compiler profile per target.

Contract: `export_tools(tools, target, names=...)` returns an `Export`: the provider tool list
(`payload()`, `to_json()` deterministic bytes), one `ToolReport` per tool (what changed, what is
lossy, what was downgraded or refused) and the exported -> canonical name map. A tool the target
cannot express raises `ToolError` E507 naming every offending field, unless
`skip_unexportable=True` (then it is left out and its report says why). Every export is checked
against the provider rules in `checks.py` before it is returned; a violation is our bug (E901).
Targets: openai_strict, openai, anthropic, anthropic_strict, gemini, mcp.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ...errors import InternalError, ToolError
from ..tool import Tool
from . import anthropic, gemini, mcp, openai
from .checks import check_export
from .common import Change, Compiler, Profile, ToolReport, ordered, schema_stats

TARGETS: tuple[str, ...] = ("openai_strict", "openai", "anthropic", "anthropic_strict", "gemini", "mcp")
PROFILES: dict[str, Profile] = {
    "openai_strict": openai.OPENAI_STRICT,
    "openai": openai.OPENAI,
    "anthropic": anthropic.ANTHROPIC,
    "anthropic_strict": anthropic.ANTHROPIC_STRICT,
    "gemini": gemini.GEMINI,
    "mcp": mcp.MCP,
}


@dataclass(frozen=True, slots=True)
class Export:
    target: str
    api: str | None
    tools: tuple[dict[str, Any], ...]
    reports: tuple[ToolReport, ...]
    names: dict[str, str]

    def payload(self) -> list[dict[str, Any]]:
        """What goes in the provider request's `tools` field."""
        if self.target == "gemini":
            return [{"functionDeclarations": list(self.tools)}] if self.tools else []
        return list(self.tools)

    def to_json(self) -> bytes:
        return json.dumps(self.payload(), ensure_ascii=False, separators=(",", ":")).encode()

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.to_json()).hexdigest()

    @property
    def lossy(self) -> bool:
        return any(report.lossy for report in self.reports)

    def report(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "api": self.api,
            "lossy": self.lossy,
            "tools": [report.to_dict() for report in self.reports],
        }

    def canonical_name(self, exported: str) -> str:
        return self.names[exported]


def _description(tool: Tool) -> str:
    return tool.description or tool.title or f"Tool {tool.name}."


def _compile(tool: Tool, profile: Profile, name: str, schema: dict[str, Any] | None = None) -> tuple[
        dict[str, Any] | None, ToolReport]:
    report = ToolReport(tool=tool.name, name=name, target=profile.target,
                        strict=profile.target in ("openai_strict", "anthropic_strict"))
    if name != tool.name:
        report.changes.append(Change("", "name_mapped", f"{tool.name} -> {name}"))
    for note in tool.notes:
        report.changes.append(Change("", "root_wrapped", note))
    compiler = Compiler(profile, tool.name, schema if schema is not None else tool.input_schema)
    compiled = ordered(compiler.compile())
    report.changes.extend(compiler.changes)
    if compiler.refusals:
        report.refused = "; ".join(compiler.refusals)
        return None, report
    return compiled, report


def export_tools(tools: Iterable[Tool], target: str, *, names: Mapping[str, str] | None = None,
                 api: str = "chat", skip_unexportable: bool = False) -> Export:
    if target not in PROFILES:
        raise ToolError(f"unknown export target {target!r}", code="E507", hint="one of " + ", ".join(TARGETS))
    if api not in ("chat", "responses"):
        raise ToolError(f"unknown OpenAI api {api!r}", code="E507", hint="'chat' or 'responses'")
    selected = sorted(tools, key=lambda t: t.name)
    mapping = dict(names or {})
    out_tools: list[dict[str, Any]] = []
    reports: list[ToolReport] = []
    exported_names: dict[str, str] = {}
    budget = {"strict": 0, "optional": 0, "unions": 0}
    for tool in selected:
        name = tool.name if target == "mcp" else mapping.get(tool.name, tool.name)
        entry, report = _export_one(tool, target, name, api, budget)
        reports.append(report)
        if entry is not None:
            out_tools.append(entry)
            exported_names[name] = tool.name
    refused = [r for r in reports if r.refused]
    if refused and not skip_unexportable:
        lines = [f"tool {r.tool!r}: {r.refused}" for r in refused]
        raise ToolError(f"cannot export {len(refused)} tool(s) to {target}:\n" + "\n".join(lines), code="E507",
                        hint="change the types named above, choose another target, or pass skip_unexportable=True")
    if target == "gemini" and len(out_tools) > gemini.MAX_DECLARATIONS:
        raise ToolError(f"{len(out_tools)} tools exceed Gemini's {gemini.MAX_DECLARATIONS} declarations per request",
                        code="E507", hint="export a subset with tools=[...]")
    result = Export(target=target, api=api if target.startswith("openai") else None, tools=tuple(out_tools),
                    reports=tuple(reports), names=exported_names)
    violations = check_export(result)
    if violations:
        raise InternalError(f"export to {target} broke the provider rules (a formulane bug): "
                            + "; ".join(violations[:10]))
    return result


def _export_one(tool: Tool, target: str, name: str, api: str, budget: dict[str, int]) -> tuple[
        dict[str, Any] | None, ToolReport]:
    description = _description(tool)
    if target in ("openai_strict", "openai"):
        schema, report = _compile(tool, PROFILES[target], name)
        if schema is None:
            return None, report
        strict = target == "openai_strict"
        if strict:
            reason = openai.over_limits(schema)
            if reason is not None:
                schema, report = _compile(tool, openai.OPENAI, name)
                assert schema is not None
                report.target, report.strict, report.downgraded = target, False, reason
                strict = False
        return openai.wrap(name, description, schema, strict=strict, api=api), report
    if target in ("anthropic", "anthropic_strict"):
        schema, report = _compile(tool, PROFILES[target], name)
        if schema is None:
            return None, report
        strict = target == "anthropic_strict"
        if strict:
            stats = schema_stats(schema)
            reason = None
            if budget["strict"] + 1 > anthropic.MAX_STRICT_TOOLS:
                reason = f"more than {anthropic.MAX_STRICT_TOOLS} strict tools in one request"
            elif budget["optional"] + stats["optional"] > anthropic.MAX_OPTIONAL:
                reason = f"more than {anthropic.MAX_OPTIONAL} optional parameters across strict tools"
            elif budget["unions"] + stats["unions"] > anthropic.MAX_UNIONS:
                reason = f"more than {anthropic.MAX_UNIONS} union parameters across strict tools"
            if reason is None:
                budget["strict"] += 1
                budget["optional"] += stats["optional"]
                budget["unions"] += stats["unions"]
            else:
                schema, report = _compile(tool, anthropic.ANTHROPIC, name)
                assert schema is not None
                report.target, report.strict, report.downgraded = target, False, reason
                strict = False
        return anthropic.wrap(name, description, schema, strict=strict), report
    if target == "gemini":
        schema, report = _compile(tool, gemini.GEMINI, name)
        if schema is None:
            return None, report
        return gemini.wrap(name, description, schema), report
    schema, report = _compile(tool, mcp.MCP, name)
    output, out_report = _compile(tool, mcp.MCP, name, schema=tool.output_schema)
    report.changes.extend(Change("output" + (f".{c.path}" if c.path else ""), c.kind, c.detail, c.lossy)
                          for c in out_report.changes if c.kind not in ("name_mapped", "root_wrapped"))
    if schema is None or output is None:
        report.refused = "; ".join(filter(None, [report.refused, out_report.refused]))
        return None, report
    return mcp.wrap(name, tool.title, description, schema, output, tool.mcp_annotations()), report


__all__ = ["Export", "PROFILES", "TARGETS", "ToolReport", "export_tools"]
