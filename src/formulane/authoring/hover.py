"""Hover, types of selected expressions, and diagnostics for editors.

* ``hover(source, offset, schema)``: on a function name, its signatures, doc and examples; on a
  variable, a LET name or a lambda parameter, its type; on a field after a dot, the field's
  type; anywhere else, the innermost expression around the offset and its type. Types come
  from the checker, run over the AST even when the formula does not check (what it could type
  is shown). On text that does not parse, function docs and schema types still show.
* ``type_at(source, start, end, schema)``: the smallest expression covering a selection, with
  its type (the LSP server answers ``formulane/typeOf`` with it).
* ``diagnose(source, schema)``: every problem and warning of the formula (parse, check,
  limits) as `Diagnostic` objects with spans: what an editor underlines. It parses and checks
  only (no compilation to closures), so it is cheap enough to run on each keystroke.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import Diagnostic, FormulaError, InternalError
from ..functions.registry import Registry, default_registry
from ..functions.spec import FunctionSpec
from ..grammar import ast, parse, tokenize
from ..interpreter.checker import check
from ..limits import DEFAULT_LIMITS, Limits
from ..schema import normalize_schema
from ..source import Span
from ..types import Type, format_type
from .analysis import bounded_source, typed_spans

__all__ = ["HoverInfo", "diagnose", "function_markdown", "hover", "type_at"]


@dataclass(frozen=True, slots=True)
class HoverInfo:
    span: Span
    kind: str  # "function" | "variable" | "local" | "field" | "expression"
    title: str
    type: str | None
    documentation: str = ""

    def markdown(self) -> str:
        parts = [f"```formula\n{self.title}\n```"]
        if self.documentation:
            parts.append(self.documentation)
        return "\n\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"span": self.span.to_dict(), "kind": self.kind, "title": self.title,
                "type": self.type, "documentation": self.documentation}


def function_markdown(spec: FunctionSpec) -> str:
    """A function's doc for a hover or a completion item: doc, examples, error values."""
    lines = [spec.doc]
    if spec.examples:
        lines.append("")
        lines += [f"- `{e.expr}` → `{e.result}`" for e in spec.examples[:3]]
    if spec.errors:
        lines.append("")
        lines.append("Error values: " + ", ".join(spec.errors))
    return "\n".join(lines)


def hover(source: str, offset: int, schema: Any = None, *, profile: str = "strict",
          registry: Registry | None = None) -> HoverInfo | None:
    """What to show when the pointer rests at ``offset``; None over blanks and comments."""
    source = bounded_source(source)
    reg = registry or default_registry()
    types = normalize_schema(schema)
    token = next((t for t in tokenize(source)
                  if t.start <= offset < t.end or (t.end == offset and t.type in (
                      "IDENT", "FUNCNAME", "BRACED"))), None)
    if token is None or token.type in ("COMMENT", "OPEN_COMMENT"):
        return None
    span = Span(token.start, token.end)
    if token.type == "FUNCNAME":
        spec = reg.get(token.value)
        if spec is not None:
            return HoverInfo(span, "function", "\n".join(spec.describe()), None,
                             function_markdown(spec))
    found = _typed_tree(source, types, profile, reg)
    if found is None:  # does not parse: what the token alone tells
        if token.type in ("IDENT", "BRACED"):
            name = token.value[1:-1] if token.type == "BRACED" else token.value
            if name in types:
                return HoverInfo(span, "variable", f"{name}: {format_type(types[name])}",
                                 format_type(types[name]), "A variable of the schema.")
        return None
    tree, spans = found
    node = _innermost(tree, offset, offset + 1 if offset < len(source) else offset)
    if node is None:
        return None
    t = spans.get((node.span.start, node.span.end))
    shown = format_type(t) if t is not None else None
    if isinstance(node, ast.Member) and node.name_span.start <= offset <= node.name_span.end:
        return HoverInfo(node.name_span, "field", f"{node.name}: {shown or '?'}", shown,
                         "A field of a record.")
    if isinstance(node, ast.Name):
        local = node.name not in types or _bound_locally(tree, node)
        kind = "local" if local else "variable"
        doc = "A LET name or lambda parameter." if local else "A variable of the schema."
        if t is not None and t.nullable and not local and profile == "strict":
            doc += " It may be blank: handle it (x ?? default, or IF(ISBLANK(x), ...))."
        return HoverInfo(node.span, kind, f"{node.name}: {shown or '?'}", shown, doc)
    text = source[node.span.start:node.span.end]
    if len(text) > 60:
        text = text[:57] + "..."
    return HoverInfo(node.span, "expression", f"{' '.join(text.split())}: {shown or '?'}", shown,
                     "" if t is not None else "The checker could not type this expression.")


def type_at(source: str, start: int, end: int, schema: Any = None, *, profile: str = "strict",
            registry: Registry | None = None) -> tuple[Span, Type | None] | None:
    """The smallest expression covering ``[start, end)`` and its type (None if untypable);
    None when the source does not parse or the selection is outside it."""
    found = _typed_tree(source, normalize_schema(schema), profile,
                        registry or default_registry())
    if found is None:
        return None
    tree, spans = found
    lo, hi = _trim(source, start, end)
    node = _innermost(tree, lo, hi)
    if node is None:
        return None
    return node.span, spans.get((node.span.start, node.span.end))


def _trim(source: str, start: int, end: int) -> tuple[int, int]:
    """The selection without surrounding blanks."""
    start, end = max(0, start), min(len(source), max(start, end))
    while start < end and source[start].isspace():
        start += 1
    while end > start and source[end - 1].isspace():
        end -= 1
    return start, end


def _typed_tree(source: str, schema: dict[str, Type], profile: str,
                registry: Registry) -> tuple[ast.Node, dict[tuple[int, int], Type]] | None:
    try:
        tree = parse(source)
    except FormulaError:
        return None
    return tree, typed_spans(tree, source, schema, profile=profile, registry=registry)


def _innermost(tree: ast.Node, start: int, end: int) -> ast.Node | None:
    """The deepest node whose span holds ``[start, end)``."""
    if not (tree.span.start <= start and end <= tree.span.end):
        return None
    node = tree
    while True:
        inner = next((k for k in ast.children(node)
                      if k.span.start <= start and end <= k.span.end
                      and not isinstance(k, ast.Omitted)), None)
        if inner is None:
            return node
        node = inner


def _bound_locally(tree: ast.Node, name: ast.Name) -> bool:
    """Whether a LET or a lambda around ``name`` binds it."""
    stack: list[tuple[ast.Node, frozenset[str]]] = [(tree, frozenset())]
    while stack:
        node, bound = stack.pop()
        if node is name:
            return name.name in bound
        if isinstance(node, ast.Lambda):
            bound = bound | set(node.params)
        kids = ast.children(node)
        if isinstance(node, ast.Call) and node.name == "LET":
            names = {a.name for a in kids[:-1:2] if isinstance(a, ast.Name)}
            stack.extend((k, bound | names) for k in kids)
            continue
        stack.extend((k, bound) for k in kids)
    return False


def diagnose(source: str, schema: Any = None, *, profile: str = "strict",
             registry: Registry | None = None, limits: Limits | None = None) -> list[Diagnostic]:
    """Errors and warnings of ``source`` (empty when it checks cleanly)."""
    limits = limits or DEFAULT_LIMITS
    try:
        types = normalize_schema(schema)
        tree = parse(source, limits=limits)
        _, checker = check(tree, source, types, profile=profile, limits=limits,
                           registry=registry or default_registry())
    except FormulaError as exc:
        return list(exc.diagnostics)
    except (RecursionError, MemoryError):
        return [Diagnostic("E403", "formula too large to check", Span(0, len(source)))]
    except Exception as exc:  # noqa: BLE001 - an editor shows it rather than crashing
        return list(InternalError(f"internal error while checking: {type(exc).__name__}: "
                                  f"{exc}").diagnostics)
    return list(checker.warnings)
