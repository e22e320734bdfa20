"""The language server, tested through a real LSP client session over stdio: pygls'
LanguageClient starts ``python -m formulane.authoring.lsp`` as a subprocess and speaks
JSON-RPC to it, as an editor would."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

SCHEMA = {"price": "Number", "qty": "Number", "name": "Text", "discount": "Number?",
          "order": "Record{total: Number, customer: Record{name: Text}}",
          "orders": "List[Record{total: Number, id: Text}]"}

RULES = """\
rules:
  - name: total
    formula: ROUND(price * qty, 2) + UPPER(1)
  - name: pick
    expr: "order."
  - name: long
    formula: IF(AND(order.total > 1000, order.customer.name = "gold"), ROUND(order.total * 0.9, 2), order.total)
  - name: emoji
    formula: LEN("😀😀") + nope
"""


class Session:
    """A client connected to the server, with the diagnostics it has received."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = LanguageClient("formulane-test", "1")
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.versions: dict[str, int | None] = {}
        self.arrived: dict[str, asyncio.Event] = {}

        self.messages: list[str] = []

        @self.client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def on_message(ls: Any, params: lsp.ShowMessageParams) -> None:
            self.messages.append(params.message)

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(ls: Any, params: lsp.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = list(params.diagnostics)
            self.versions[params.uri] = params.version
            self.arrived.setdefault(params.uri, asyncio.Event()).set()

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    async def start(self, **options: Any) -> lsp.InitializeResult:
        await self.client.start_io(sys.executable, "-m", "formulane.authoring.lsp")
        result = await self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=self.root.as_uri(),
            initialization_options=options))
        self.client.initialized(lsp.InitializedParams())
        return result

    async def open(self, name: str, text: str, language: str = "yaml") -> list[lsp.Diagnostic]:
        uri = self.uri(name)
        self.arrived[uri] = asyncio.Event()
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri, language, 1, text)))
        return await self.wait(uri)

    async def wait(self, uri: str) -> list[lsp.Diagnostic]:
        await asyncio.wait_for(self.arrived.setdefault(uri, asyncio.Event()).wait(), 30)
        self.arrived[uri].clear()
        return self.diagnostics[uri]

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def _at(text: str, needle: str, shift: int = 0) -> lsp.Position:
    """The LSP position (UTF-16) of ``needle`` in ``text``."""
    offset = text.index(needle) + shift
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    prefix = text[offset - column:offset]
    return lsp.Position(line, len(prefix.encode("utf-16-le")) // 2)


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "formulane.schema.json").write_text(json.dumps(SCHEMA), "utf-8")
    return tmp_path


def test_a_whole_editing_session(workspace: Path) -> None:
    asyncio.run(_session(workspace))


async def _session(root: Path) -> None:
    s = Session(root)
    init = await s.start(fields=["formula", "expr"], width=60)
    caps = init.capabilities
    assert caps.completion_provider is not None
    assert set(caps.completion_provider.trigger_characters or ()) >= {".", "("}
    assert caps.hover_provider and caps.document_formatting_provider
    assert caps.signature_help_provider is not None
    assert caps.execute_command_provider is not None
    assert set(caps.execute_command_provider.commands) == {"formulane.typeOf",
                                                           "formulane.explain"}
    try:
        # -- diagnostics: ranges in the YAML document, codes, hints
        uri = s.uri("rules.yaml")
        diags = await s.open("rules.yaml", RULES)
        by_code = {d.code: d for d in diags}
        upper = by_code["E202"]
        assert upper.range.start == _at(RULES, "1)") and upper.source == "formulane"
        assert "UPPER expects Text" in upper.message and "hint:" in upper.message
        assert by_code["E102"].range.start == _at(RULES, '."', 1)  # "order." is unfinished
        unknown = by_code["E201"]
        assert unknown.range.start == _at(RULES, "nope")  # after two emoji: UTF-16 columns
        assert unknown.range.start.character == len('    formula: LEN("😀😀") + ') + 2

        # -- completion: record fields after the dot, with the range they replace
        completion = await s.client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(uri), _at(RULES, '."', 1)))
        assert completion is not None
        items = completion.items if isinstance(completion, lsp.CompletionList) else completion
        assert [i.label for i in items] == ["customer", "total"]
        assert items[1].detail == "Number"
        assert isinstance(items[1].text_edit, lsp.TextEdit)
        assert items[1].text_edit.range.start == _at(RULES, '."', 1)

        # -- completion in an argument: typed ranking, function items
        completion = await s.client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(uri), _at(RULES, "price * qty")))
        items = completion.items if isinstance(completion, lsp.CompletionList) else completion
        labels = [i.label for i in items]
        assert labels[:2] == ["price", "qty"]
        fn = next(i for i in items if i.label == "ROUND")
        assert fn.kind == lsp.CompletionItemKind.Function and "ROUND(number" in (fn.detail or "")

        # -- hover: function docs, variable types
        hover = await s.client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), _at(RULES, "ROUND(price", 2)))
        assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
        assert "halves away from zero" in hover.contents.value
        hover = await s.client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), _at(RULES, "qty")))
        assert hover is not None and "qty: Number" in hover.contents.value  # type: ignore[union-attr]

        # -- signature help: the active parameter
        help_ = await s.client.text_document_signature_help_async(lsp.SignatureHelpParams(
            lsp.TextDocumentIdentifier(uri), _at(RULES, " 2) + UPPER", 1)))
        assert help_ is not None and help_.active_parameter == 1
        label = help_.signatures[0].label
        assert label.startswith("ROUND(")
        start, end = help_.signatures[0].parameters[1].label  # type: ignore[misc]
        assert label[start:end] == "[num_digits: Number]"

        # -- the type of a selection, and an explanation
        selected = await s.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            "formulane.typeOf", [uri, {"start": _pos(_at(RULES, "price * qty")),
                                       "end": _pos(_at(RULES, "price * qty", 11))}]))
        assert _get(selected, "type") == "Number"
        assert _get(selected, "expression") == "price * qty"
        explained = await s.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            "formulane.explain", [uri, _pos(_at(RULES, "IF(AND")),
                                  {"order": {"total": 2000, "customer": {"name": "gold"}}}]))
        assert _get(explained, "ok") is True
        assert "1800" in _get(explained, "text")
        broken = await s.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            "formulane.explain", [uri, _pos(_at(RULES, "ROUND(price")), {}]))
        assert _get(broken, "ok") is False

        # -- quick fixes from the engine's fixes
        actions = await s.client.text_document_code_action_async(lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(uri), lsp.Range(_at(RULES, "1)"), _at(RULES, "1)", 1)),
            lsp.CodeActionContext(diagnostics=[upper])))
        assert actions
        fix = actions[0]
        assert isinstance(fix, lsp.CodeAction) and fix.edit is not None
        (edit,) = fix.edit.changes[uri]  # type: ignore[index]
        assert "TEXT(1, \"General\")" in edit.new_text

        # -- editing: incremental changes re-publish diagnostics
        s.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [lsp.TextDocumentContentChangePartial(
                range=lsp.Range(_at(RULES, "UPPER(1)"), _at(RULES, "UPPER(1)", 8)),
                text="qty")]))
        diags = await s.wait(uri)
        assert s.versions[uri] == 2
        assert "E202" not in {d.code for d in diags}

        # -- formatting: a long YAML formula becomes a literal block, valid YAML, same value
        edits = await s.client.text_document_formatting_async(lsp.DocumentFormattingParams(
            lsp.TextDocumentIdentifier(uri), lsp.FormattingOptions(2, True)))
        assert edits
        text = RULES.replace("UPPER(1)", "qty")
        formatted = _apply(text, edits)
        import yaml

        data = yaml.safe_load(formatted)
        long = data["rules"][2]["formula"]
        assert long.startswith("IF(\n  AND(") and "formula: |-" in formatted
        assert yaml.safe_load(text)["rules"][2]["formula"].replace(" ", "") == \
            long.replace(" ", "").replace("\n", "")

        # -- a .formula file and a JSON config
        f_uri = s.uri("calc.formula")
        diags = await s.open("calc.formula", "sum(price,qty) /* total */ + nope\n", "formula")
        assert [d.code for d in diags] == ["E201"]
        s.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=2, uri=f_uri),
            [lsp.TextDocumentContentChangeWholeDocument(text="sum(price,qty) /* total */\n")]))
        assert await s.wait(f_uri) == []
        edits = await s.client.text_document_formatting_async(lsp.DocumentFormattingParams(
            lsp.TextDocumentIdentifier(f_uri), lsp.FormattingOptions(2, True)))
        assert _apply("sum(price,qty) /* total */\n", edits) == "SUM(price, qty) /* total */\n"
        j_text = json.dumps({"rules": [{"formula": "price * \"x\""}, {"formula": "qty"}]})
        diags = await s.open("rules.json", j_text, "json")
        assert [d.code for d in diags] == ["E202"]
        assert diags[0].range.start == _at(j_text, '\\"x')

        # -- settings changed by the editor: the excel profile converts "x" (no check error)
        j_uri = s.uri("rules.json")
        s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
            settings={"formulane": {"profile": "excel", "fields": ["formula"],
                                    "packs": ["nope"]}}))
        assert await s.wait(j_uri) == []
        assert any("unknown pack" in m for m in s.messages), s.messages  # sent before publishing

        # -- a broken schema file is reported on the document
        other = root / "other"
        other.mkdir()
        (other / "formulane.schema.json").write_text('{"price": "Numbr"}', "utf-8")
        diags = await s.open("other/x.formula", "price", "formula")
        assert any("formulane.schema.json" in d.message for d in diags)
    finally:
        await s.stop()


def _pos(p: lsp.Position) -> dict[str, int]:
    return {"line": p.line, "character": p.character}


def _get(obj: Any, key: str) -> Any:
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)


def _apply(text: str, edits: list[lsp.TextEdit]) -> str:
    lines = text.split("\n")

    def offset(p: lsp.Position) -> int:
        return sum(len(line) + 1 for line in lines[:p.line]) + p.character

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text
