"""The formulane language server (pygls): ``formulane lsp``, or ``python -m formulane.authoring.lsp``.

Over stdio it serves, for ``.formula`` files and for formulas embedded in YAML and JSON configs
(string values under a configurable key, ``formula`` by default; see `documents`):

* diagnostics (parse and check errors and warnings, with their codes, hints and ranges) on
  open, change and save, and quick fixes for the fixes the engine proposes (code actions);
* completion (trigger characters ``.`` ``(`` ``{`` ``,``), signature help (``(`` ``,``);
* hover: function docs, the types of variables, fields and the expression under the pointer;
* formatting of each formula in place (YAML values keep or gain a block style as needed);
* commands ``formulane.typeOf`` (arguments: uri, range; the type of the selected expression)
  and ``formulane.explain`` (arguments: uri, position, variables; `Program.explain`'s tree as
  JSON and text).

The schema of a document is ``formulane.schema.json`` in its folder (names to types); a
problem with that file is reported on the document's first line. Options, from the command
line, the client's ``initializationOptions`` or ``workspace/didChangeConfiguration`` (under a
``formulane`` key or at the top; open documents are then rechecked): ``fields`` (key names
holding formulas), ``profile`` (``strict`` or ``excel``), ``width`` (the formatter's),
``packs`` (optional function packs to enable).
"""

from __future__ import annotations

import argparse
import bisect
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ..errors import Diagnostic, FormulaError
from ..functions.registry import Registry, default_registry
from ..source import Span
from ..types import format_type
from .completion import complete, signature_help
from .documents import (
    SCHEMA_FILE, YAML_MISSING, Region, SchemaFiles, document_kind, formula_regions, replacement,
    yaml_available,
)
from .formatter import format as format_formula
from .hover import diagnose, hover, type_at

__all__ = ["FormulaServer", "build_server", "main", "serve"]

_KINDS = {"local": lsp.CompletionItemKind.Variable, "variable": lsp.CompletionItemKind.Variable,
          "field": lsp.CompletionItemKind.Field, "function": lsp.CompletionItemKind.Function,
          "keyword": lsp.CompletionItemKind.Keyword}
_BREAKS = re.compile(r"\r\n|\r|\n")


# ---- offsets and positions -------------------------------------------------------------------

class LineIndex:
    """Offsets (code points) <-> LSP positions in the negotiated encoding."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _BREAKS.finditer(text)]
        self.encoding = str(encoding).lower().replace("_", "-")

    def _units(self, s: str) -> int:
        if self.encoding.endswith("8"):
            return len(s.encode("utf-8"))
        if self.encoding.endswith("32"):
            return len(s)
        return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)

    def position(self, offset: int) -> lsp.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        return lsp.Position(line, self._units(self.text[self.starts[line]:offset]))

    def offset(self, position: lsp.Position) -> int:
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        end = self.starts[position.line + 1] if position.line + 1 < len(self.starts) \
            else len(self.text)
        line = self.text[start:end].rstrip("\r\n")
        units = 0
        for i, ch in enumerate(line):
            if units >= position.character:
                return start + i
            units += self._units(ch)
        return start + len(line)

    def range(self, start: int, end: int) -> lsp.Range:
        return lsp.Range(self.position(start), self.position(end))


# ---- the server ------------------------------------------------------------------------------

@dataclass
class Settings:
    fields: tuple[str, ...] = ("formula",)
    profile: str = "strict"
    width: int = 80
    packs: tuple[str, ...] = ()


@dataclass
class _Analysed:
    version: int | None
    text: str
    kind: str
    regions: list[Region] = field(default_factory=list)


class FormulaServer(LanguageServer):
    def __init__(self, settings: Settings | None = None) -> None:
        from .. import __version__

        super().__init__("formulane", __version__)
        self.settings = settings or Settings()
        self.schemas = SchemaFiles()
        self._cache: dict[str, _Analysed] = {}
        self._registry: Registry | None = None

    # -- configuration
    def configure(self, options: Any) -> None:
        if not isinstance(options, dict):
            return
        fields = options.get("fields")
        if isinstance(fields, str):
            fields = [fields]
        if isinstance(fields, list) and all(isinstance(f, str) for f in fields) and fields:
            self.settings.fields = tuple(fields)
        if options.get("profile") in ("strict", "excel"):
            self.settings.profile = options["profile"]
        if isinstance(options.get("width"), int) and options["width"] > 0:
            self.settings.width = options["width"]
        if isinstance(options.get("packs"), list):
            packs = tuple(str(p) for p in options["packs"])
            try:
                default_registry().with_packs(*packs)
            except ValueError as exc:  # keep the packs we had, and say why
                self.window_show_message(lsp.ShowMessageParams(
                    lsp.MessageType.Warning, f"formulane: {exc}"))
            else:
                self.settings.packs = packs
        self._registry = None
        self._cache.clear()

    @property
    def registry(self) -> Registry:
        if self._registry is None:
            reg = default_registry()
            try:
                self._registry = reg.with_packs(*self.settings.packs) if self.settings.packs \
                    else reg
            except ValueError:
                self._registry = reg
        return self._registry

    # -- documents
    def analysed(self, uri: str) -> _Analysed:
        doc = self.workspace.get_text_document(uri)
        cached = self._cache.get(uri)
        if cached is not None and cached.version == doc.version and cached.text == doc.source:
            return cached
        kind = document_kind(uri)
        result = _Analysed(doc.version, doc.source, kind,
                           formula_regions(doc.source, kind, self.settings.fields))
        self._cache[uri] = result
        return result

    def lines(self, text: str) -> LineIndex:
        return LineIndex(text, self.workspace.position_encoding or "utf-16")

    def schema(self, uri: str) -> tuple[dict[str, Any], str]:
        return self.schemas.schema_for(_path_of(uri))

    def region_at(self, uri: str, position: lsp.Position) -> tuple[_Analysed, Region, int] | None:
        doc = self.analysed(uri)
        offset = self.lines(doc.text).offset(position)
        for region in doc.regions:
            if region.exact and region.contains(offset):
                at = region.from_document(offset)
                if at is not None:
                    return doc, region, at
        return None

    # -- diagnostics
    def publish(self, uri: str) -> None:
        doc = self.analysed(uri)
        if not doc.kind:
            return
        index = self.lines(doc.text)
        schema, problem = self.schema(uri)
        out: list[lsp.Diagnostic] = []
        if problem:
            out.append(lsp.Diagnostic(index.range(0, 0), problem, lsp.DiagnosticSeverity.Warning,
                                      source="formulane"))
        if doc.kind == "yaml" and not yaml_available():
            out.append(lsp.Diagnostic(index.range(0, 0), YAML_MISSING,
                                      lsp.DiagnosticSeverity.Warning, source="formulane"))
        for region in doc.regions:
            for diag in diagnose(region.text, schema, profile=self.settings.profile,
                                 registry=self.registry):
                out.append(self.to_lsp(diag, region, index))
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, diagnostics=out, version=doc.version))

    def to_lsp(self, diag: Diagnostic, region: Region, index: LineIndex) -> lsp.Diagnostic:
        span = diag.span or Span(0, len(region.text))
        start, end = region.to_document(span.start), region.to_document(span.end)
        if not region.exact:
            start, end = region.start, region.end
        message = diag.message + (f"\nhint: {diag.hint}" if diag.hint else "")
        fixes = [{"start": f.span.start, "end": f.span.end, "replacement": f.replacement,
                  "description": f.description} for f in diag.fixes]
        return lsp.Diagnostic(
            range=index.range(start, end), message=message, code=diag.code, source="formulane",
            severity=lsp.DiagnosticSeverity.Warning if diag.severity == "warning"
            else lsp.DiagnosticSeverity.Error,
            data={"fixes": fixes} if fixes else None)


def _path_of(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme in ("file", ""):
        return unquote(parsed.path)
    return unquote(parsed.path or uri)


def build_server(settings: Settings | None = None) -> FormulaServer:
    server = FormulaServer(settings)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: FormulaServer, params: lsp.InitializeParams) -> None:
        ls.configure(params.initialization_options)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: FormulaServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: FormulaServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: FormulaServer, params: lsp.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.endswith("/" + SCHEMA_FILE):  # the schema changed: recheck its folder
            folder = uri.rsplit("/", 1)[0] + "/"
            for other in list(ls.workspace.text_documents):
                if other.startswith(folder) and "/" not in other[len(folder):]:
                    ls.publish(other)
        else:
            ls.publish(uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: FormulaServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls._cache.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=params.text_document.uri, diagnostics=[]))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: FormulaServer,
                                 params: lsp.DidChangeConfigurationParams) -> None:
        # Editors send their settings here: {"formulane": {...}} or the options themselves.
        settings = _plain(params.settings)
        if isinstance(settings, dict) and isinstance(settings.get("formulane"), dict):
            settings = settings["formulane"]
        ls.configure(settings)
        for uri in list(ls.workspace.text_documents):
            ls.publish(uri)

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                    lsp.CompletionOptions(trigger_characters=[".", "(", "{", ","]))
    def completion(ls: FormulaServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        found = ls.region_at(params.text_document.uri, params.position)
        if found is None:
            return lsp.CompletionList(is_incomplete=False, items=[])
        doc, region, at = found
        schema, _ = ls.schema(params.text_document.uri)
        index = ls.lines(doc.text)
        items = []
        for item in complete(region.text, at, schema, profile=ls.settings.profile,
                             registry=ls.registry):
            rng = index.range(region.to_document(item.span.start),
                              region.to_document(item.span.end))
            items.append(lsp.CompletionItem(
                label=item.label, kind=_KINDS.get(item.kind), detail=item.detail,
                documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, item.documentation)
                if item.documentation else None,
                sort_text=item.sort_text, filter_text=item.label,
                text_edit=lsp.TextEdit(rng, item.insert_text or item.label)))
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
                    lsp.SignatureHelpOptions(trigger_characters=["(", ","],
                                             retrigger_characters=[","]))
    def signature(ls: FormulaServer, params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
        found = ls.region_at(params.text_document.uri, params.position)
        if found is None:
            return None
        _, region, at = found
        help_ = signature_help(region.text, at, registry=ls.registry)
        if help_ is None:
            return None
        return lsp.SignatureHelp(
            signatures=[lsp.SignatureInformation(
                label=s.label,
                documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, s.documentation),
                parameters=[lsp.ParameterInformation(
                    label=p.offsets, documentation=p.documentation or None)
                    for p in s.parameters],
                active_parameter=s.active_parameter) for s in help_.signatures],
            active_signature=help_.active_signature,
            active_parameter=help_.active_parameter)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: FormulaServer, params: lsp.HoverParams) -> lsp.Hover | None:
        found = ls.region_at(params.text_document.uri, params.position)
        if found is None:
            return None
        doc, region, at = found
        schema, _ = ls.schema(params.text_document.uri)
        info = hover(region.text, at, schema, profile=ls.settings.profile, registry=ls.registry)
        if info is None:
            return None
        index = ls.lines(doc.text)
        return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, info.markdown()),
                         index.range(region.to_document(info.span.start),
                                     region.to_document(info.span.end)))

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
    def formatting(ls: FormulaServer,
                   params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit]:
        doc = ls.analysed(params.text_document.uri)
        index = ls.lines(doc.text)
        edits = []
        for region in doc.regions:
            edit = _format_edit(ls, doc, region)
            if edit is not None:
                start, end, text = edit
                edits.append(lsp.TextEdit(index.range(start, end), text))
        return edits

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    def code_actions(ls: FormulaServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        doc = ls.analysed(uri)
        index = ls.lines(doc.text)
        start = index.offset(params.range.start)
        actions = []
        for region in doc.regions:
            if not region.exact or not (region.start <= start <= region.end):
                continue
            schema, _ = ls.schema(uri)
            for diag in diagnose(region.text, schema, profile=ls.settings.profile,
                                 registry=ls.registry):
                for fix in diag.fixes:
                    fixed = fix.apply(region.text)
                    edit = _replacement(ls, doc, region, fixed)
                    if edit is None:
                        continue
                    a, b, text = edit
                    actions.append(lsp.CodeAction(
                        title=fix.description or f"replace with {fix.replacement}",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[ls.to_lsp(diag, region, index)],
                        edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(index.range(a, b),
                                                                           text)]})))
        return actions

    @server.command("formulane.typeOf")
    def type_of(ls: FormulaServer, *args: Any) -> dict[str, Any] | None:
        uri, rng = _arg(args, 0), _arg(args, 1)
        doc = ls.analysed(uri)
        index = ls.lines(doc.text)
        start = index.offset(_position(_get(rng, "start")))
        end = index.offset(_position(_get(rng, "end")))
        for region in doc.regions:
            a, b = region.from_document(start), region.from_document(end)
            if a is None or b is None:
                continue
            schema, _ = ls.schema(uri)
            found = type_at(region.text, a, b, schema, profile=ls.settings.profile,
                            registry=ls.registry)
            if found is None:
                return None
            span, t = found
            r = index.range(region.to_document(span.start), region.to_document(span.end))
            return {"type": format_type(t) if t is not None else None,
                    "expression": region.text[span.start:span.end],
                    "range": {"start": {"line": r.start.line, "character": r.start.character},
                              "end": {"line": r.end.line, "character": r.end.character}}}
        return None

    @server.command("formulane.explain")
    def explain(ls: FormulaServer, *args: Any) -> dict[str, Any]:
        from .. import compile as compile_formula

        uri, position, variables = _arg(args, 0), _arg(args, 1), _arg(args, 2) or {}
        found = ls.region_at(uri, _position(position))
        if found is None:
            return {"ok": False, "error": "no formula at this position"}
        _, region, _ = found
        schema, _ = ls.schema(uri)
        try:
            program = compile_formula(region.text, schema, profile=ls.settings.profile,
                                      registry=ls.registry)
            explanation = program.explain(_plain(variables))
        except FormulaError as exc:
            return {"ok": False, "error": exc.to_dict(region.text)}
        return {"ok": True, "text": explanation.to_text(), "tree": explanation.to_dict()}

    return server


def _format_edit(ls: FormulaServer, doc: _Analysed, region: Region) -> tuple[int, int, str] | None:
    try:
        formatted = format_formula(region.text, ls.settings.width)
    except (FormulaError, ValueError):
        return None  # a formula that does not parse is left as it is
    if region.style == "file" and region.text.endswith("\n"):
        formatted += "\n"
    if formatted == region.text:
        return None
    return _replacement(ls, doc, region, formatted)


def _replacement(ls: FormulaServer, doc: _Analysed, region: Region,
                 new: str) -> tuple[int, int, str] | None:
    """An edit (document start, end, text) that makes the region's formula ``new``."""
    return replacement(doc.text, doc.kind, region, new, ls.settings.fields)


def _arg(args: Sequence[Any], i: int) -> Any:
    return args[i] if i < len(args) else None


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _position(obj: Any) -> lsp.Position:
    if isinstance(obj, lsp.Position):
        return obj
    return lsp.Position(int(_get(obj, "line") or 0), int(_get(obj, "character") or 0))


def _plain(obj: Any) -> Any:
    """Command arguments may arrive as named tuples: back to dicts and lists."""
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    as_dict = getattr(obj, "_asdict", None) if isinstance(obj, tuple) else None
    if as_dict is not None:  # a NamedTuple
        return {k: _plain(v) for k, v in as_dict().items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def main(argv: Sequence[str] | None = None) -> int:
    from .cli_commands import add_lsp_arguments

    parser = add_lsp_arguments(argparse.ArgumentParser(
        prog="formulane lsp", description="the formulane language server (stdio)"))
    return serve(parser.parse_args(list(sys.argv[1:] if argv is None else argv)))


def serve(args: argparse.Namespace) -> int:
    """Serve over stdio until the client exits, with the options `add_lsp_arguments` parsed."""
    if args.width < 1:
        print("formulane lsp: --width must be positive", file=sys.stderr)
        return 2
    try:
        default_registry().with_packs(*args.pack)
    except ValueError as exc:
        print(f"formulane lsp: {exc}", file=sys.stderr)
        return 2
    settings = Settings(tuple(args.field or ["formula"]), args.profile, args.width,
                        tuple(args.pack))
    build_server(settings).start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
