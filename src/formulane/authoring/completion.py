"""Completion and signature help while a formula is typed (and so, usually, broken).

``complete(source, cursor, schema)`` reads the tokens around the cursor (`analysis.context_at`),
never a successful parse, and offers:

* where a value may start: the names in scope (LET names and lambda parameters, with the types
  the checker infers for them, then the schema's variables with their types), the functions of
  the registry (signature, doc, an example), and ``TRUE``, ``FALSE``, ``BLANK()``;
* after ``obj.``: the fields of ``obj``'s record type (the prefix up to the dot is checked, its
  open brackets closed), and dotted function names (``STDEV.`` offers ``STDEV.S``, ``STDEV.P``);
* inside ``{...}``: names, braced;
* where an operator is expected: the keyword operators ``and``, ``or``;
* inside text or a comment: nothing.

Items are filtered by the typed prefix (case-insensitive) and ranked: when the cursor is an
argument of a known function, names and functions whose type fits that parameter come first.
The profile decides what fits: ``strict`` takes exact types only and marks a nullable variable
("may be blank: x ?? 0"); ``excel`` also ranks what it converts implicitly (Text to Number,
Boolean to Number...) and says so. Each item carries the span it replaces (the whole word,
braces included).

``signature_help(source, cursor)`` gives the innermost call around the cursor: its signatures
(labels with each parameter's offsets, parameter docs), the argument index and the active
signature and parameter (following repeated parameters such as SUM's).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from ..errors import FormulaError
from ..functions.registry import Registry, default_registry
from ..functions.spec import FunctionSpec, Sig
from ..grammar import parse
from ..grammar.printer import format_name
from ..schema import normalize_schema
from ..source import Span
from ..types import Type, format_type
from .analysis import CursorContext, bounded_source, context_at, probe_types, typed_spans

__all__ = ["CompletionItem", "ParameterInfo", "SignatureHelp", "SignatureInfo", "complete",
           "signature_help"]

_CONVERTIBLE = {  # excel profile: what converts implicitly into the key kind
    "Number": {"Text", "Boolean"}, "Text": {"Number", "Boolean", "Date", "DateTime", "Duration"},
    "Boolean": {"Number", "Text"},
}
_KEYWORDS = (("TRUE", "Boolean", "the logical value TRUE"),
             ("FALSE", "Boolean", "the logical value FALSE"),
             ("BLANK()", "Blank", "an empty value (also written null)"))
_OPERATOR_WORDS = (("and", "both are TRUE (also &&)"), ("or", "either is TRUE (also ||)"))


@dataclass(frozen=True, slots=True)
class CompletionItem:
    """One suggestion. ``span`` is the text it replaces with ``insert_text``."""

    label: str
    kind: str  # "local" | "variable" | "field" | "function" | "keyword"
    detail: str = ""  # a type, or a function's first signature
    documentation: str = ""
    insert_text: str = ""
    span: Span = Span(0, 0)
    sort_text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind, "detail": self.detail,
                "documentation": self.documentation, "insert_text": self.insert_text,
                "span": self.span.to_dict(), "sort_text": self.sort_text}


@dataclass(frozen=True, slots=True)
class ParameterInfo:
    label: str
    documentation: str
    offsets: tuple[int, int]  # where the parameter is in its signature's label


@dataclass(frozen=True, slots=True)
class SignatureInfo:
    label: str
    documentation: str
    parameters: tuple[ParameterInfo, ...]
    active_parameter: int | None  # for the current argument, or None if it has no parameter


@dataclass(frozen=True, slots=True)
class SignatureHelp:
    function: str
    signatures: tuple[SignatureInfo, ...]
    active_signature: int
    argument: int  # 0-based index of the argument the cursor is in
    call: Span  # the function name

    @property
    def active_parameter(self) -> int | None:
        return self.signatures[self.active_signature].active_parameter

    def to_dict(self) -> dict[str, Any]:
        return {
            "function": self.function, "argument": self.argument,
            "active_signature": self.active_signature,
            "active_parameter": self.active_parameter, "call": self.call.to_dict(),
            "signatures": [{"label": s.label, "documentation": s.documentation,
                            "active_parameter": s.active_parameter,
                            "parameters": [{"label": p.label, "documentation": p.documentation,
                                            "offsets": list(p.offsets)}
                                           for p in s.parameters]} for s in self.signatures],
        }


# ---- completion ------------------------------------------------------------------------------

def complete(source: str, cursor: int, schema: Any = None, *, profile: str = "strict",
             registry: Registry | None = None) -> list[CompletionItem]:
    """Completion items at ``cursor`` (an offset into ``source``), best first."""
    source = bounded_source(source)
    reg = registry or default_registry()
    types = normalize_schema(schema)
    ctx = context_at(source, cursor)
    if ctx.inside:
        return []
    items: list[CompletionItem] = []
    if ctx.dot >= 0:
        items += _fields(ctx, types, profile, reg)
        items += _dotted_functions(ctx, reg, profile)
        return _ranked(items)
    if ctx.braced:
        items += _names(ctx, types, profile, reg, expected=_expected_kinds(ctx, reg))
        return _ranked(items)
    if not ctx.expects_value:
        prefix = ctx.word.lower()
        operators = [CompletionItem(word, "keyword", "operator", doc, word, ctx.span, f"5{word}")
                     for word, doc in _OPERATOR_WORDS if word.startswith(prefix)]
        if operators or not ctx.word:
            return operators
        # A word where an operator belongs: broken input, most likely a value being typed.
    expected = _expected_kinds(ctx, reg)
    items += _names(ctx, types, profile, reg, expected)
    items += _functions(ctx, reg, profile, expected)
    prefix = ctx.word.upper()
    items += [CompletionItem(word, "keyword", kind, doc, word, ctx.span, f"6{word}")
              for word, kind, doc in _KEYWORDS if word.startswith(prefix)]
    return _ranked(items)


def _ranked(items: list[CompletionItem]) -> list[CompletionItem]:
    seen: set[str] = set()
    out = []
    for item in sorted(items, key=lambda i: (i.sort_text, i.label.lower())):
        if item.label not in seen:
            seen.add(item.label)
            out.append(item)
    return out


def _matches(label: str, prefix: str) -> bool:
    return label.lower().startswith(prefix.lower())


def _names(ctx: CursorContext, schema: dict[str, Type], profile: str, registry: Registry,
           expected: set[str] | None) -> list[CompletionItem]:
    items = []
    local_types = _local_types(ctx, schema, profile, registry)
    shadowed: set[str] = set()
    for name, _ in reversed(ctx.locals):
        if name in shadowed or not _matches(name, ctx.word):
            continue
        shadowed.add(name)
        t = local_types.get(name)
        rank, note = _fit(t, expected, profile)
        items.append(CompletionItem(
            name, "local", format_type(t) if t is not None else "local name",
            note or "a LET name or lambda parameter", _insert_name(ctx, name), ctx.span,
            f"{rank}0{name.lower()}"))
    for name, t in schema.items():
        if name in shadowed or not _matches(name, ctx.word):
            continue
        rank, note = _fit(t, expected, profile)
        doc = " ".join(x for x in (note, _nullable_note(name, t, profile)) if x)
        items.append(CompletionItem(name, "variable", format_type(t), doc or "a variable",
                                    _insert_name(ctx, name), ctx.span, f"{rank}1{name.lower()}"))
    return items


def _insert_name(ctx: CursorContext, name: str) -> str:
    if ctx.braced:
        return "{" + name + "}"
    try:
        return format_name(name)
    except ValueError:
        return name


def _local_types(ctx: CursorContext, schema: dict[str, Type], profile: str,
                 registry: Registry) -> dict[str, Type]:
    """The types the checker infers for the names in scope, from a repaired prefix."""
    names = list(dict.fromkeys(name for name, _ in ctx.locals))
    if not names:
        return {}
    spellings = [format_name(n) for n in names]
    probe, spans, at = "[", [], ctx.span.start + 1
    for spelling in spellings:
        spans.append((at, at + len(spelling)))
        at += len(spelling) + 2
    probe += ", ".join(spellings) + "]"
    found = probe_types(ctx, ctx.span.start, probe, spans, schema, profile=profile,
                        registry=registry)
    return {n: found[s] for n, s in zip(names, spans) if s in found}


def _nullable_note(name: str, t: Type, profile: str) -> str:
    if not t.nullable or t.kind in ("Any", "Blank"):
        return ""
    if profile == "strict":
        zero = {"Number": "0", "Text": '""', "Boolean": "FALSE"}.get(t.kind)
        fix = f"{format_name(name)} ?? {zero}" if zero else f"IF(ISBLANK({format_name(name)}), ...)"
        return f"May be blank: the strict profile wants it handled ({fix})."
    return "May be blank: the excel profile reads a blank as 0, \"\" or FALSE."


def _fit(t: Type | None, expected: set[str] | None, profile: str) -> tuple[int, str]:
    """(rank, note): 0 fits the parameter, 1 unknown, 2 converts or may be blank, 3 does not
    fit. ``expected`` holds kinds, ``*`` for anything and ``?`` when a blank is accepted."""
    if expected is None or t is None:
        return 1, ""
    kind = t.kind
    if "*" in expected or kind in ("Any", "Never"):
        return 0, ""
    if kind in expected:
        if t.nullable and "?" not in expected and kind not in ("Any", "Blank") \
                and profile == "strict":
            return 2, "May be blank, and this argument needs a value (strict profile)."
        return 0, ""
    if profile == "excel":
        for want in sorted(expected):
            if kind in _CONVERTIBLE.get(want, ()):
                return 2, f"{kind}: converted to {want} here (excel profile)."
    want = " or ".join(sorted(expected - {"?"}))
    hint = ""
    if expected - {"?"} == {"Number"} and kind == "Text":
        hint = "; VALUE(x) converts it"
    elif expected - {"?"} == {"Text"} and t.is_scalar:
        hint = '; TEXT(x, "General") converts it'
    return 3, f"{kind}, but {want} is expected here{hint}."


#: What the operand after an operator may be.
_AFTER_OPERATOR = {
    "PLUS": {"Number", "Date", "DateTime", "Duration"},
    "MINUS": {"Number", "Date", "DateTime", "Duration"},
    "STAR": {"Number", "Duration"}, "SLASH": {"Number", "Duration"}, "CARET": {"Number"},
    "AMP": {"Number", "Text", "Boolean", "Date", "DateTime", "Duration"},
    "AND": {"Boolean"}, "OR": {"Boolean"}, "NOT": {"Boolean"},
    "CMP": {"Number", "Text", "Boolean", "Date", "DateTime", "Duration"},
    "COALESCE": {"*"},
}


def _expected_kinds(ctx: CursorContext, registry: Registry) -> set[str] | None:
    """Kinds that fit where the cursor is: after an operator, its operand's; at the start of
    an argument, what the enclosing call's signatures accept there."""
    prev = ctx.previous()
    if prev is not None and prev.type in _AFTER_OPERATOR and not (
            prev.type == "CMP" and prev.start == 0 and prev.value == "="):
        return set(_AFTER_OPERATOR[prev.type])
    frame = ctx.frames[-1] if ctx.frames else None
    if frame is None or frame.kind != "call" or prev is None or prev.type not in (
            "LPAR", "COMMA"):
        return None
    spec = registry.get(frame.name)
    if spec is None or spec.category == "operators":
        return None
    kinds: set[str] = set()
    for s in spec.signatures:
        prm = s.param_for(frame.index)
        if prm is None:
            continue
        kinds |= _kinds_of(prm.type)
        if prm.type.nullable or prm.type.kind in ("Any", "Many"):
            kinds.add("?")
    return kinds or None


def _kinds_of(t: Type) -> set[str]:
    if t.kind in ("Var", "Any"):
        return {"*"}
    if t.kind == "Many":
        return {t.elem.kind, "List"} if t.elem is not None else {"*"}
    if t.kind == "Fn":
        return {"Lambda"}
    return {t.kind}


@lru_cache(maxsize=32)
def _function_entries(registry: Registry) -> tuple[tuple[str, str, str, set[str], bool], ...]:
    """(name, detail, documentation, return kinds, takes no arguments) per function."""
    out = []
    for spec in registry.functions():
        sigs = spec.describe()
        doc = spec.doc
        if len(sigs) > 1:
            doc += "\n\n" + "\n".join(sigs)
        if spec.examples:
            e = spec.examples[0]
            doc += f"\n\nExample: {e.expr} -> {e.result}"
        returns: set[str] = set()
        for s in spec.signatures:
            returns |= _kinds_of(s.returns)
        out.append((spec.name, sigs[0] if sigs else spec.name, doc, returns,
                    all(not s.params for s in spec.signatures)))
    return tuple(out)


def _functions(ctx: CursorContext, registry: Registry, profile: str,
               expected: set[str] | None, prefix: str | None = None) -> list[CompletionItem]:
    prefix = ctx.word if prefix is None else prefix
    paren_follows = ctx.source[ctx.span.end:ctx.span.end + 1] == "("
    items = []
    for name, detail, doc, returns, nullary in _function_entries(registry):
        if not _matches(name, prefix) or name == "BLANK":
            continue
        rank = 1
        if expected is not None:
            rank = 0 if returns & expected or "*" in returns or "*" in expected else (
                2 if profile == "excel" and any(
                    r in _CONVERTIBLE.get(e, ()) for r in returns for e in expected) else 3)
        insert = name if paren_follows else name + ("()" if nullary else "(")
        items.append(CompletionItem(name, "function", detail, doc, insert, ctx.span,
                                    f"{rank}2{name.lower()}"))
    return items


def _fields(ctx: CursorContext, schema: dict[str, Type], profile: str,
            registry: Registry) -> list[CompletionItem]:
    if ctx.member_of is None:
        return []
    span = (ctx.member_of.start, ctx.member_of.end)
    t = probe_types(ctx, ctx.dot, "", [span], schema, profile=profile,
                    registry=registry).get(span)
    if t is None:  # the prefix does not parse: check the object on its own (same offsets)
        text = " " * ctx.member_of.start + ctx.source[ctx.member_of.start:ctx.member_of.end]
        try:
            tree = parse(text)
        except FormulaError:
            return []
        t = typed_spans(tree, text, schema, profile=profile, registry=registry).get(span)
    if t is None or t.kind != "Record":
        return []
    # Rank by what fits where the whole access ``obj.field`` stands (ROUND(order.| wants a
    # Number): the context at the start of ``obj``.
    expected = _expected_kinds(context_at(ctx.source, ctx.member_of.start), registry)
    items = []
    for name, ft in t.fields:
        if not _matches(name, ctx.word):
            continue
        rank, note = _fit(ft, expected, profile)
        doc = "A field of " + ("a record that may be blank, so this may be blank too"
                               if t.nullable else "the record") + (f". {note}" if note else "")
        items.append(CompletionItem(name, "field", format_type(ft), doc, _insert_name(ctx, name),
                                    ctx.span, f"{rank}{name.lower()}"))
    return items


def _dotted_functions(ctx: CursorContext, registry: Registry,
                      profile: str) -> list[CompletionItem]:
    """``STDEV.|`` may be the start of a dotted function name rather than a member access."""
    dot_token = ctx.previous()
    head = ctx.previous(2)
    if dot_token is None or head is None or head.type != "IDENT" or head.end != dot_token.start:
        return []
    before = ctx.previous(3)
    if before is not None and before.type == "DOT":
        return []
    prefix = head.value + "." + ctx.word
    widened = CursorContext(ctx.source, ctx.cursor, ctx.tokens, ctx.before, prefix,
                            Span(head.start, ctx.span.end), False, "", True, ctx.frames)
    return _functions(widened, registry, profile, None, prefix)


# ---- signature help --------------------------------------------------------------------------

def signature_help(source: str, cursor: int, *,
                   registry: Registry | None = None) -> SignatureHelp | None:
    """The innermost call around ``cursor``, its signatures and the argument being written;
    None outside any call or for an unknown function."""
    source = bounded_source(source)
    reg = registry or default_registry()
    frame = context_at(source, cursor).call  # inside a text argument too
    if frame is None:
        return None
    spec = reg.get(frame.name)
    if spec is None or spec.category == "operators":
        return None
    index = frame.index
    infos = tuple(_signature_info(spec, s, index) for s in spec.signatures)
    active = next((i for i, s in enumerate(spec.signatures) if _takes(s, index + 1)), 0)
    assert frame.name_span is not None
    return SignatureHelp(spec.name, infos, active, index, frame.name_span)


def _takes(s: Sig, count: int) -> bool:
    return s.max_args is None or count <= s.max_args


def _param_position(spec: FunctionSpec, s: Sig, index: int) -> int | None:
    n = len(s.params)
    if spec.name == "LET" and index >= 2:
        return 1 if index % 2 else 2
    if index < n:
        return index
    if not s.repeat:
        return None
    start = n - s.repeat
    return start + (index - start) % s.repeat


def _signature_info(spec: FunctionSpec, s: Sig, index: int) -> SignatureInfo:
    label = spec.name + "("
    params = []
    for i, prm in enumerate(s.params):
        if i:
            label += ", "
        text = f"{prm.name}: {prm.type}"
        if prm.optional:
            text = f"[{text}]"
        params.append(ParameterInfo(text, _param_doc(prm), (len(label), len(label) + len(text))))
        label += text
    if s.repeat:
        label += ", ..."
    label += f") -> {s.returns}"
    return SignatureInfo(label, spec.doc, tuple(params), _param_position(spec, s, index))


def _param_doc(prm: Any) -> str:
    parts = [prm.doc] if prm.doc else []
    if prm.optional:
        default = prm.default
        shown = "blank" if default is None else str(default).upper() if isinstance(default, bool) \
            else f'"{default}"' if isinstance(default, str) else str(default)
        parts.append(f"optional (default {shown})")
    return "; ".join(parts)


def all_labels(items: Iterable[CompletionItem]) -> list[str]:
    """The labels of ``items``, for tests and quick looks."""
    return [i.label for i in items]

