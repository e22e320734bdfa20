"""The schema compiler shared by every export target, and the report of what it changed.

Contract: `Compiler(profile, tool_name, schema).compile()` turns a canonical tool schema into
the subset one provider accepts, walking it once with a stack of `$defs` names so recursion is
detected (never a RecursionError): references are inlined, recursive ones are kept in `$defs`
or refused per the profile. Each keyword the target lacks is dropped, or moved into the
description when it constrains values (the full model still enforces it on our side). Every
change is logged as a `Change`; problems the target cannot express at all are collected as
refusals naming the field. `ordered()` fixes the key order so exports are byte-for-byte stable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from ...jsonshape import is_array, is_object

NullStyle = Literal["anyOf", "flag"]

#: Keyword output order; properties keep their declaration order, `$defs` are sorted.
KEY_ORDER: tuple[str, ...] = (
    "$ref", "type", "title", "description", "enum", "const", "format", "pattern",
    "minLength", "maxLength", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum",
    "multipleOf", "nullable", "properties", "required", "additionalProperties", "propertyNames",
    "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "anyOf", "oneOf",
    "discriminator", "default", "examples", "deprecated", "readOnly", "writeOnly", "$defs",
)

#: Keywords that constrain values, with how to say each in words, in output order.
CONSTRAINTS: tuple[tuple[str, str], ...] = (
    ("minLength", "length at least {}"),
    ("maxLength", "length at most {}"),
    ("pattern", "must match the regular expression {}"),
    ("format", "format {}"),
    ("minimum", "minimum {}"),
    ("exclusiveMinimum", "greater than {}"),
    ("maximum", "maximum {}"),
    ("exclusiveMaximum", "less than {}"),
    ("multipleOf", "a multiple of {}"),
    ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"),
    ("uniqueItems", "items must be unique"),
    ("minProperties", "at least {} entries"),
    ("maxProperties", "at most {} entries"),
)
_CONSTRAINT_KEYS = {key for key, _ in CONSTRAINTS}
_DECIMAL_PHRASES = {
    "minimum": "minimum {}",
    "exclusiveMinimum": "greater than {}",
    "maximum": "maximum {}",
    "exclusiveMaximum": "less than {}",
    "multipleOf": "a multiple of {}",
    "maxDigits": "at most {} digits",
    "decimalPlaces": "at most {} decimal places",
}
_SILENT_DROP = {"title", "x-tenant-key", "x-secret", "discriminator", "readOnly", "writeOnly", "$schema", "$id",
                "$comment"}


@dataclass(frozen=True, slots=True)
class Profile:
    """What one target accepts. Keyword sets list what is kept; the rest is moved or dropped."""

    target: str
    keywords: frozenset[str]
    formats: frozenset[str] | None
    all_required: bool = False
    close_objects: bool = True
    maps: Literal["keep", "remap"] = "keep"
    null_style: NullStyle = "anyOf"
    drop_null_of_optional: bool = False
    recursion: Literal["defs", "refuse"] = "defs"
    tuples: Literal["keep", "refuse"] = "keep"
    free_values: Literal["keep", "refuse"] = "keep"
    string_enums_only: bool = False
    const_as_enum: bool = False
    oneof_as_anyof: bool = True
    ref_siblings: bool = True
    max_min_items: int | None = None


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    kind: str
    detail: str
    lossy: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "detail": self.detail, "lossy": self.lossy}


@dataclass(slots=True)
class ToolReport:
    tool: str
    name: str
    target: str
    strict: bool
    changes: list[Change] = field(default_factory=list[Change])
    refused: str | None = None
    downgraded: str | None = None

    @property
    def lossy(self) -> bool:
        return any(change.lossy for change in self.changes)

    @property
    def dropped(self) -> list[str]:
        return [f"{c.path or '(root)'}: {c.detail}" for c in self.changes if c.lossy]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "name": self.name,
            "target": self.target,
            "strict": self.strict,
            "lossy": self.lossy,
            "refused": self.refused,
            "downgraded": self.downgraded,
            "dropped": self.dropped,
            "changes": [c.to_dict() for c in self.changes],
        }


class Refusal(Exception):
    """The target cannot express a part of the schema (collected, then reported)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _ref_name(ref: str, path: str) -> str:
    if not ref.startswith("#/$defs/"):
        raise Refusal(path, f"has an external or unsupported reference {ref!r}")
    return ref[len("#/$defs/"):]


def _is_null(node: Any) -> bool:
    return is_object(node) and node.get("type") == "null" and len(node) <= 2 and set(node) <= {"type", "title"}


def _words(value: Any) -> str:
    if isinstance(value, str) and value and value.strip() == value:
        return value
    return json.dumps(value, ensure_ascii=False)


_FORMAT_WORDS = {
    "date": "an ISO 8601 date (YYYY-MM-DD)",
    "date-time": "an ISO 8601 date and time (YYYY-MM-DDTHH:MM:SS, with an optional offset)",
    "time": "an ISO 8601 time (HH:MM:SS)",
    "duration": "an ISO 8601 duration (e.g. P1DT2H)",
    "uuid": "a UUID",
    "email": "an email address",
    "uri": "a URI",
}


def _join_path(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class Compiler:
    def __init__(self, profile: Profile, tool_name: str, schema: dict[str, Any]) -> None:
        self.p = profile
        self.tool = tool_name
        self.root = schema
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.changes: list[Change] = []
        self.refusals: list[str] = []
        self._needed: list[str] = []
        self._needed_set: set[str] = set()

    # -- entry ------------------------------------------------------------------------------

    def compile(self) -> dict[str, Any]:
        body = {k: v for k, v in self.root.items() if k != "$defs"}
        out = self._guard(body, "", ())
        compiled: dict[str, Any] = {}
        index = 0
        while index < len(self._needed):  # defs may pull in further defs
            name = self._needed[index]
            index += 1
            compiled[name] = self._guard(self.defs[name], f"$defs.{name}", (name,))
        if compiled:
            out["$defs"] = {name: compiled[name] for name in sorted(compiled)}
        return out

    def note(self, path: str, kind: str, detail: str, lossy: bool = False) -> None:
        self.changes.append(Change(path, kind, detail, lossy))

    def _guard(self, node: Any, path: str, stack: tuple[str, ...]) -> dict[str, Any]:
        try:
            return self.node(node, path, stack)
        except Refusal as exc:
            self.refuse(exc)
            return {}

    def refuse(self, exc: Refusal) -> None:
        self.refusals.append(f"field {exc.path or '(root)'!r} {exc.message}")

    # -- nodes ------------------------------------------------------------------------------

    def node(self, schema: Any, path: str, stack: tuple[str, ...]) -> dict[str, Any]:
        if schema is True or schema == {}:
            return self._free(path, {})
        if not is_object(schema):
            raise Refusal(path, f"has an unsupported schema {schema!r}")
        s = dict(schema)
        if "$ref" in s:
            return self._ref(s, path, stack)
        if "allOf" in s:
            parts = s.pop("allOf")
            if len(parts) != 1:
                raise Refusal(path, "combines several schemas with allOf, which this target cannot express")
            inner = parts[0]
            return self.node({**(inner if is_object(inner) else {}), **s}, path, stack)
        if "oneOf" in s:
            s["anyOf"] = s.pop("oneOf")
            if self.p.oneof_as_anyof:
                self.note(path, "one_of_as_any_of", "oneOf written as anyOf (we still require exactly one match)")
        if "anyOf" in s:
            return self._union(s, path, stack)
        kind = s.get("type")
        if is_array(kind):
            # A type array: rewrite as a union so one code path handles it.
            rest = {k: v for k, v in s.items() if k != "type"}
            return self.node({"anyOf": [{"type": t} for t in kind], **rest}, path, stack)
        if kind == "object":
            return self._object(s, path, stack)
        if kind == "array":
            return self._array(s, path, stack)
        if kind in ("string", "integer", "number", "boolean", "null"):
            return self._scalar(s, path)
        if "enum" in s or "const" in s:
            return self._scalar(s, path)
        return self._free(path, s)

    def _ref(self, s: dict[str, Any], path: str, stack: tuple[str, ...]) -> dict[str, Any]:
        name = _ref_name(s.pop("$ref"), path)
        if name not in self.defs:
            raise Refusal(path, f"references a missing definition {name!r}")
        if name in stack:
            cycle = " -> ".join(stack[stack.index(name):] + (name,))
            if self.p.recursion == "refuse":
                raise Refusal(path, f"is recursive ({cycle}); {self.p.target} cannot express recursive schemas. "
                              "Bound the depth with separate models, or export to a target that keeps $defs")
            if name not in self._needed_set:
                self._needed_set.add(name)
                self._needed.append(name)
                self.note(path, "recursive_ref", f"recursive {cycle} kept in $defs", lossy=False)
            out: dict[str, Any] = {"$ref": f"#/$defs/{name}"}
            if "description" in s:
                if self.p.ref_siblings:
                    out["description"] = s["description"]
                else:
                    self.note(path, "description_dropped", "description next to a recursive $ref dropped")
            return out
        merged = {**self.defs[name], **s}  # the use site's description/default win
        return self.node(merged, path, stack + (name,))

    def _union(self, s: dict[str, Any], path: str, stack: tuple[str, ...]) -> dict[str, Any]:
        branches = s.pop("anyOf")
        nulls = [b for b in branches if _is_null(b)]
        rest = [b for b in branches if not _is_null(b)]
        if not rest:
            return self._scalar({"type": "null", **s}, path)
        if len(rest) == 1:
            inner: dict[str, Any] = rest[0] if is_object(rest[0]) else {}
            merged = {**inner, **{k: v for k, v in s.items() if k in ("description", "default", "examples")}}
            out = self.node(merged, path, stack)
            return self._nullable(out, path) if nulls else out
        compiled = [self.node(b, f"{path}|{i}", stack) for i, b in enumerate(rest)]
        out = {"anyOf": compiled}
        out = self._annotate(out, s, path)
        return self._nullable(out, path) if nulls else out

    def _nullable(self, out: dict[str, Any], path: str) -> dict[str, Any]:
        if self.p.null_style == "flag":
            out["nullable"] = True
            return out
        if "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
            return out
        lifted: dict[str, Any] = {k: out.pop(k) for k in ("description", "default") if k in out}
        return {"anyOf": [out, {"type": "null"}], **lifted}

    def _object(self, s: dict[str, Any], path: str, stack: tuple[str, ...]) -> dict[str, Any]:
        props: dict[str, Any] = s.get("properties", {})
        extra = s.get("additionalProperties")
        if not props and is_object(extra):
            return self._map(s, extra, path, stack)
        if not props and (extra is True or "additionalProperties" not in s):
            return self._free(path, s, what="accepts an object with any keys")
        required: list[str] = [name for name in props if name in s.get("required", [])]
        out_props: dict[str, Any] = {}
        for name, sub in props.items():
            child_path = _join_path(path, name)
            sub = sub if is_object(sub) else {}
            optional = name not in required
            if optional and self.p.drop_null_of_optional and sub.get("default", 0) is None and "anyOf" in sub:
                kept = [b for b in sub["anyOf"] if not _is_null(b)]
                if len(kept) < len(sub["anyOf"]):
                    sub = {**{k: v for k, v in sub.items() if k != "anyOf"}, "anyOf": kept}
                    self.note(child_path, "null_dropped", "optional field: omit it for none instead of sending null")
            try:
                compiled = self.node(sub, child_path, stack)
            except Refusal as exc:  # keep going: report every field the target cannot express
                self.refuse(exc)
                compiled = {}
            if optional and self.p.all_required:
                compiled = self._required_optional(compiled, sub, child_path)
            out_props[name] = compiled
        out: dict[str, Any] = {"type": "object", "properties": out_props,
                               "required": list(props) if self.p.all_required else required}
        if self.p.close_objects:
            out["additionalProperties"] = False
        return self._annotate(out, s, path)

    def _required_optional(self, compiled: dict[str, Any], canonical: dict[str, Any], path: str) -> dict[str, Any]:
        """Strict targets require every field: an optional one becomes nullable."""
        has_default = "default" in canonical
        default = canonical.get("default")
        if "const" in canonical and has_default and default == canonical["const"]:
            # A constant tag (a discriminator): always sent, never null.
            self.note(path, "required_constant", f"constant {_words(default)} made required")
            return compiled
        already_null = ("anyOf" in compiled and any(_is_null(b) for b in compiled["anyOf"])) or compiled.get(
            "nullable") is True
        if already_null:
            detail = "optional field made required; send null for none"
            if has_default and default is not None:
                detail += f" (null means null, not the default {_words(default)})"
                compiled["description"] = _sentence(compiled.get("description"), f"Default: {_words(default)}.")
            self.note(path, "required_nullable", detail)
            return compiled
        out = self._nullable(compiled, path)
        hint = (f"Send null to use the default ({_words(default)})." if has_default
                else "Send null to leave it unset.")
        out["description"] = _sentence(out.get("description"), hint)
        self.note(path, "required_nullable", "optional field made required and nullable; null means "
                  + (f"the default {_words(default)}" if has_default else "unset"))
        return out

    def _map(self, s: dict[str, Any], values: dict[str, Any], path: str, stack: tuple[str, ...]) -> dict[str, Any]:
        value_schema = self.node(values, f"{path}{{}}", stack)
        if self.p.maps == "keep":
            out: dict[str, Any] = {"type": "object", "additionalProperties": value_schema}
            return self._annotate(out, s, path)
        key_schema: dict[str, Any] = {"type": "string"}
        pair: dict[str, Any] = {"type": "object", "properties": {"key": key_schema, "value": value_schema},
                                "required": ["key", "value"]}
        if self.p.close_objects:
            pair["additionalProperties"] = False
        out = {"type": "array", "items": pair}
        out = self._annotate(out, {k: v for k, v in s.items() if k != "default"}, path)
        out["description"] = _sentence(out.get("description"),
                                       "A map written as a list of {key, value} pairs with unique keys.")
        self.note(path, "map_as_pairs", "dict written as a list of {key, value} pairs; converted back on call")
        return out

    def _array(self, s: dict[str, Any], path: str, stack: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "array"}
        if "prefixItems" in s:
            if self.p.tuples == "refuse":
                raise Refusal(path, f"is a fixed-length tuple (prefixItems), which {self.p.target} cannot "
                              "express; use a model with named fields")
            out["prefixItems"] = [self.node(b, f"{path}[{i}]", stack) for i, b in enumerate(s["prefixItems"])]
            if "items" in s:
                out["items"] = s["items"] if isinstance(s["items"], bool) else self.node(s["items"], f"{path}[]", stack)
        else:
            items = s.get("items", {})
            if items in ({}, True):
                out["items"] = self._free(f"{path}[]", {}, what="is a list of values of any type")
            else:
                out["items"] = self.node(items, f"{path}[]", stack)
        return self._annotate(out, s, path)

    def _scalar(self, s: dict[str, Any], path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "type" in s:
            out["type"] = s["type"]
        values = s.get("enum")
        if "const" in s:
            if self.p.const_as_enum or "const" not in self.p.keywords:
                values = [s["const"]]
                self.note(path, "const_as_enum", "const written as a one-value enum")
            else:
                out["const"] = s["const"]
        if values is not None:
            if self.p.string_enums_only and not all(isinstance(v, str) for v in values):
                s = {**s, "description": _sentence(s.get("description"),
                                                   "One of: " + ", ".join(_words(v) for v in values) + ".")}
                self.note(path, "enum_to_description", "non-string enum moved into the description", lossy=True)
            else:
                out["enum"] = list(values)
                if "type" not in out:
                    kinds: set[type[Any]] = {type(v) for v in values}
                    if kinds == {str}:
                        out["type"] = "string"
        return self._annotate(out, s, path)

    def _free(self, path: str, s: dict[str, Any], what: str = "accepts any JSON value") -> dict[str, Any]:
        if self.p.free_values == "refuse":
            raise Refusal(path, f"{what}; {self.p.target} needs a concrete type. Declare a precise type or a model")
        # An open object keeps only its type: any keys is JSON Schema's default.
        out: dict[str, Any] = {"type": "object"} if s.get("type") == "object" else {}
        return self._annotate(out, {k: v for k, v in s.items() if k != "additionalProperties"}, path)

    # -- annotations and constraints --------------------------------------------------------

    def _annotate(self, out: dict[str, Any], s: dict[str, Any], path: str) -> dict[str, Any]:
        description = s.get("description")
        extra: list[str] = []
        decimal = s.get("x-decimal")
        if decimal is not None:
            bounds = [_DECIMAL_PHRASES[name].format(value) for name, value in sorted(decimal.items())
                      if name in _DECIMAL_PHRASES]
            extra.append('A decimal number written as a string, e.g. "12.50"'
                         + (f" ({'; '.join(bounds)})" if bounds else "") + ".")
            if bounds:
                self.note(path, "decimal_bounds", "decimal bounds described in text: " + "; ".join(bounds),
                          lossy=True)
        moved: list[str] = []
        for key, phrase in CONSTRAINTS:
            if key not in s:
                continue
            value = s[key]
            if key == "format":
                if value in ("password",):
                    continue  # a secret marker, not a wire format
                if value == "binary":
                    extra.append("Binary data as a string.")
                    self.note(path, "format_dropped", "format binary dropped")
                    continue
                if self.p.formats is None or value in self.p.formats:
                    out["format"] = value
                    continue
            elif key == "pattern" and decimal is not None and key not in self.p.keywords:
                continue  # the decimal sentence above already says what the pattern says
            elif key in self.p.keywords and not (
                key == "minItems" and self.p.max_min_items is not None and value > self.p.max_min_items
            ):
                out[key] = value
                continue
            if key == "uniqueItems" and value is not True:
                continue
            if key == "format" and value in _FORMAT_WORDS:
                moved.append(_FORMAT_WORDS[value])
            else:
                moved.append(phrase.format(value) if "{}" in phrase else phrase)
        if moved:
            extra.append("Constraints: " + "; ".join(moved) + ".")
            self.note(path, "moved_to_description", "; ".join(moved), lossy=True)
        if "default" in s and s["default"] is not None:
            if "default" in self.p.keywords:
                out["default"] = s["default"]
            elif not self.p.all_required:
                extra.append(f"Default: {_words(s['default'])}.")
            # (all-required targets say "send null to use the default" in _required_optional)
        if s.get("examples"):
            if "examples" in self.p.keywords:
                out["examples"] = s["examples"]
            else:
                extra.append(f"Example: {_words(s['examples'][0])}.")
        if s.get("deprecated") is True:
            if "deprecated" in self.p.keywords:
                out["deprecated"] = True
            else:
                extra.append("Deprecated.")
        for key in ("readOnly", "writeOnly"):
            if key in s and key in self.p.keywords:
                out[key] = s[key]
        text = description
        for sentence in extra:
            text = _sentence(text, sentence)
        if text:
            out["description"] = text
        unknown = sorted(k for k in s if k not in _KNOWN and not k.startswith("x-") and k not in _SILENT_DROP)
        for key in unknown:
            if key in self.p.keywords:
                out[key] = s[key]
            else:
                self.note(path, "keyword_dropped", f"unsupported keyword {key} dropped", lossy=True)
        return out


_KNOWN = {
    "type", "description", "enum", "const", "properties", "required", "additionalProperties", "items",
    "prefixItems", "anyOf", "oneOf", "allOf", "$ref", "default", "examples", "deprecated", "readOnly",
    "writeOnly", "title", "$defs", *_CONSTRAINT_KEYS,
}


def _sentence(text: str | None, sentence: str) -> str:
    if not text:
        return sentence
    text = text.rstrip()
    if text.endswith(sentence):
        return text
    return f"{text} {sentence}" if text.endswith((".", "!", "?", ":")) else f"{text}. {sentence}"


def ordered(value: Any, *, in_properties: bool = False) -> Any:
    """A copy with keywords in `KEY_ORDER` (then sorted), properties in declaration order."""
    if is_array(value):
        return [ordered(v) for v in value]
    if not is_object(value):
        return value
    if in_properties:
        return {k: ordered(v) for k, v in value.items()}
    rank = {key: i for i, key in enumerate(KEY_ORDER)}
    keys = sorted(value, key=lambda k: (rank.get(k, len(KEY_ORDER)), k))
    out: dict[str, Any] = {}
    for key in keys:
        item = value[key]
        if key == "properties":
            out[key] = ordered(item, in_properties=True)
        elif key == "$defs":
            out[key] = {name: ordered(item[name]) for name in sorted(item)}
        elif key in ("enum", "const", "default", "examples", "required"):
            out[key] = item
        else:
            out[key] = ordered(item)
    return out


def schema_stats(schema: Any) -> dict[str, int]:
    """Depth, property count, enum value count, characters in names/enums/consts, optional and
    union parameter counts: the quantities providers put limits on."""
    stats = {"depth": 0, "properties": 0, "enum_values": 0, "chars": 0, "optional": 0, "unions": 0}

    def walk(node: Any, depth: int) -> None:
        if is_array(node):
            for item in node:
                walk(item, depth)
            return
        if not is_object(node):
            return
        props = node.get("properties")
        if is_object(props):
            stats["depth"] = max(stats["depth"], depth + 1)
            stats["properties"] += len(props)
            required = set(node.get("required", []))
            stats["optional"] += sum(1 for name in props if name not in required)
            for name, child in props.items():
                stats["chars"] += len(name)
                if is_object(child) and ("anyOf" in child or isinstance(child.get("type"), list)):
                    stats["unions"] += 1
                walk(child, depth + 1)
        for key in ("enum",):
            if key in node:
                stats["enum_values"] += len(node[key])
                stats["chars"] += sum(len(str(v)) for v in node[key])
        if "const" in node:
            stats["chars"] += len(str(node["const"]))
        for key in ("items", "anyOf", "prefixItems", "additionalProperties"):
            if key in node:
                walk(node[key], depth)
        if "$defs" in node:
            for child in node["$defs"].values():
                walk(child, 0)

    walk(schema, 0)
    return stats
