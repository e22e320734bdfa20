"""Strict validation of model-produced arguments, and errors a model can act on.

Contract: `validate_arguments(tool, raw, decode_stringified_json=...)` returns the validated
input model or an `ErrorEnvelope` (E502); it never raises for bad input. Arguments are always
treated as JSON: `str`/`bytes` go straight to `model_validate_json(raw, strict=True,
extra="forbid")` (strict JSON mode rejects `"2"` for an int, `"yes"` for a bool, unknown keys
and date-only datetimes, yet accepts ISO dates); a `dict` is `json.dumps`-ed first so Python
objects cannot sneak past the JSON rules. Wire changes the exporters make (null for a default,
`{key, value}` lists for maps) are undone first, and only when the tool has such fields.
"""

from __future__ import annotations

import cmath
import difflib
import json
import math
from typing import Any, Iterable, Sequence, cast

from pydantic import BaseModel, ValidationError

from ..jsonshape import is_array, is_object
from .envelope import ErrorEnvelope, Issue
from .schema import DECIMAL_PATTERN, normalize
from .tool import Tool
from .walk import loc_may_hold_secret

MAX_ISSUES = 20
_RECEIVED_MAX = 80

_FORMAT_EXAMPLES: dict[str, str] = {
    "date": "2024-01-31",
    "date-time": "2024-01-31T09:30:00Z",
    "time": "09:30:00",
    "duration": "P1DT2H",
    "email": "user@example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "uri": "https://example.com/",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
}

_HINTS: dict[str, str] = {
    "int_type": "send a JSON number without quotes",
    "int_from_float": "send a whole number",
    "float_type": "send a JSON number without quotes",
    "bool_type": "send true or false without quotes",
    "string_type": "send a JSON string in double quotes",
    "datetime_parsing": "send a full ISO 8601 date and time",
    "datetime_type": "send a full ISO 8601 date and time as a string",
    "date_parsing": "send an ISO 8601 date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "send a date without a time part",
    "list_type": "send a JSON array",
    "dict_type": "send a JSON object",
    "model_type": "send a JSON object",
    "decimal_parsing": "send the number as a string of digits, e.g. \"12.50\"",
}


class _InvalidJson(Exception):
    pass


def _to_json_text(raw: Any) -> str | bytes:
    if isinstance(raw, (str, bytes)):
        return raw
    if isinstance(raw, bytearray):
        return bytes(raw)
    if is_object(raw):
        try:
            return json.dumps(raw, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise _InvalidJson(f"arguments must contain only JSON values: {exc}") from exc
    raise _InvalidJson(f"arguments must be a JSON object (str, bytes or dict), got {type(raw).__name__}")


def validate_arguments(
    tool: Tool, raw: Any, *, decode_stringified_json: bool = False, max_bytes: int | None = None
) -> BaseModel | ErrorEnvelope:
    try:
        data = _to_json_text(raw)
    except _InvalidJson as exc:
        return _envelope(tool, [Issue(path="", message=str(exc), expected="a JSON object",
                                      example=example_for(tool.input_schema, tool.input_schema), kind="json_invalid")])
    if max_bytes is not None and len(data) > max_bytes // (4 if isinstance(data, str) else 1) \
            and _utf8_size(data) > max_bytes:
        return _envelope(tool, [Issue(path="", message=f"the arguments are larger than {max_bytes:,} bytes",
                                      expected="smaller arguments", example=None, kind="too_large")])
    if not data.strip():
        data = "{}"  # some clients send an empty string for a tool without arguments
    plan = tool.plan
    # Parse twice only when a wire change can be present: the common call skips this.
    if (
        (plan.has_null_default and ("null" in data if isinstance(data, str) else b"null" in data))
        or (plan.has_dict and ('"key"' in data if isinstance(data, str) else b'"key"' in data))
        or (decode_stringified_json and plan.has_json)
    ):
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = None  # pydantic reports the JSON error with its position below
        if is_object(parsed):
            normalize(parsed, plan, decode_json=decode_stringified_json)
            data = json.dumps(parsed, ensure_ascii=False)
    try:
        validated: BaseModel = tool.input_model.model_validate_json(data, strict=True, extra="forbid")
    except ValidationError as exc:
        return _envelope(tool, issues_from(tool, exc))
    bad = _non_finite(validated)
    if bad is not None:
        # JSON has no NaN or Infinity; pydantic's parser accepts them (and 1e999) as floats.
        return _envelope(tool, [Issue(path=bad, message="the number is not finite (NaN, Infinity or too large)",
                                      expected="a finite JSON number", example=None, received=None,
                                      kind="finite_number")])
    return validated


def _utf8_size(data: str | bytes) -> int:
    return len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))


def _non_finite(value: Any) -> str | None:
    """The path of the first NaN or infinite float inside a validated value, or None."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, v = stack.pop()
        if type(v) is float:
            if not math.isfinite(v):
                return path or "(arguments)"
        elif isinstance(v, BaseModel):
            stack.extend((f"{path}.{k}" if path else k, getattr(v, k, None)) for k in type(v).model_fields)
        elif isinstance(v, (list, tuple, set, frozenset)):
            members = cast("Iterable[Any]", v)
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(members))
        elif is_object(v):
            stack.extend((f"{path}[{k!r}]", item) for k, item in v.items())
        elif isinstance(v, complex) and not cmath.isfinite(v):
            return path or "(arguments)"
    return None


def _envelope(tool: Tool, issues: list[Issue]) -> ErrorEnvelope:
    count = len(issues)
    noun = "problem" if count == 1 else "problems"
    return ErrorEnvelope(
        code="E502",
        tool=tool.name,
        message=f"{count} {noun} with the arguments for tool {tool.name!r}",
        retryable=True,
        issues=tuple(issues[:MAX_ISSUES]),
        hint="fix every listed argument and call the tool again with the corrected JSON object",
    )


def issues_from(tool: Tool, error: ValidationError) -> list[Issue]:
    issues: list[Issue] = []
    schema = tool.input_schema
    for item in error.errors(include_url=False):
        loc = tuple(item.get("loc", ()))
        kind = str(item.get("type", ""))
        secret = loc_may_hold_secret(tool.shape, loc)
        if kind == "extra_forbidden":
            parent = _node_at(schema, loc[:-1])
            allowed = sorted((parent or {}).get("properties", {}))
            unknown = str(loc[-1]) if loc else ""
            close = difflib.get_close_matches(unknown, allowed, n=1)
            message = f"unknown field {unknown!r}" + (f"; did you mean {close[0]!r}?" if close else "")
            issues.append(Issue(
                path=_path(loc),
                message=message,
                expected="no such field; allowed fields: " + (", ".join(allowed) or "none"),
                example=None,
                received=None,
                kind=kind,
            ))
            continue
        node = _node_at(schema, loc)
        message = str(item.get("msg", "invalid value"))
        if kind == "json_invalid":
            message = "arguments are not valid JSON: " + str((item.get("ctx") or {}).get("error", message))
        elif kind == "missing":
            message = "required field is missing"
        hint = _HINTS.get(kind)
        if hint and kind != "missing":
            message = f"{message}; {hint}"
        received = None
        if "input" in item and kind not in ("missing", "json_invalid") and not secret:
            received = _short(item["input"])
        issues.append(Issue(
            path=_path(loc),
            message=message,
            expected=describe(node, schema) if node is not None else "",
            example=None if secret or node is None else example_for(node, schema),
            received=received,
            kind=kind,
        ))
    return issues


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _short(value: Any) -> str:
    """The start of the received value as JSON, built from a bounded prefix of it (never the
    whole, possibly megabytes-long, input)."""
    try:
        text = json.dumps(_prefix(value, _RECEIVED_MAX, 0), ensure_ascii=False)
    except (TypeError, ValueError):
        text = f"a {type(value).__name__} value"
    return text if len(text) <= _RECEIVED_MAX else text[: _RECEIVED_MAX - 3] + "..."


def _prefix(value: Any, budget: int, depth: int) -> Any:
    if isinstance(value, str):
        return value[: budget + 1]
    if depth > 8:
        return "..."
    if isinstance(value, (list, tuple)):
        items = cast("Sequence[Any]", value)
        return [_prefix(v, budget, depth + 1) for v in items[: budget // 2 + 1]]
    if is_object(value):
        return {str(k)[: budget + 1]: _prefix(v, budget, depth + 1)
                for k, v in list(value.items())[: budget // 4 + 1]}
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (int, float, bool)) or value is None:
        return value if not (isinstance(value, int) and value.bit_length() > 256) else "a very large integer"
    return f"a {type(value).__name__} value"


def _resolve(node: Any, root: dict[str, Any]) -> Any:
    seen = 0
    while is_object(node) and "$ref" in node and seen < 32:
        name = node["$ref"].rsplit("/", 1)[-1]
        target = root.get("$defs", {}).get(name, {})
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        seen += 1
    return node


def _node_at(schema: dict[str, Any], loc: tuple[Any, ...]) -> dict[str, Any] | None:
    """The schema node an error location points at, or None when it cannot be followed."""
    node: Any = _resolve(schema, schema)
    for part in loc:
        node = _resolve(node, schema)
        if not is_object(node):
            return None
        if isinstance(part, int):
            prefix = node.get("prefixItems")
            if is_array(prefix) and part < len(prefix):
                node = prefix[part]
            elif "items" in node:
                node = node["items"]
            else:
                return None
            continue
        props = node.get("properties", {})
        if part in props:
            node = props[part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        elif "anyOf" in node or "oneOf" in node:
            # pydantic inserts a union member tag ("int", "Circle"...); pick the member it names.
            members: list[Any] = node.get("anyOf") or node.get("oneOf") or []
            branches = [_resolve(b, schema) for b in members]
            match = [b for b in branches if b.get("title") == part or b.get("type") == _JSON_TYPES.get(part)]
            if not match:
                return node
            node = match[0]
        else:
            return node
    resolved = _resolve(node, schema)
    return resolved if is_object(resolved) else None


_JSON_TYPES = {"int": "integer", "float": "number", "str": "string", "bool": "boolean",
               "list": "array", "dict": "object", "none": "null"}


def describe(node: dict[str, Any], root: dict[str, Any], depth: int = 0) -> str:
    """A short human description of what a schema node accepts."""
    node = _resolve(node, root)
    if depth > 3:
        return "value"
    if "enum" in node:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in node["enum"])
    if "const" in node:
        return "exactly " + json.dumps(node["const"], ensure_ascii=False)
    union = node.get("anyOf") or node.get("oneOf")
    if union:
        return " or ".join(describe(b, root, depth + 1) for b in union)
    kind = node.get("type")
    if kind == "string":
        if "x-decimal" in node or node.get("pattern") == DECIMAL_PATTERN:
            bounds = _bounds(node.get("x-decimal", {}))
            return "decimal number as a string" + (f" ({bounds})" if bounds else "")
        if node.get("format") in _FORMAT_EXAMPLES:
            return f"string in {node['format']} format"
        extra: list[str] = []
        if "minLength" in node:
            extra.append(f"at least {node['minLength']} characters")
        if "maxLength" in node:
            extra.append(f"at most {node['maxLength']} characters")
        if "pattern" in node:
            extra.append(f"matching {node['pattern']}")
        return "string" + (f" ({', '.join(extra)})" if extra else "")
    if kind in ("integer", "number"):
        bounds = _bounds(node)
        return ("integer" if kind == "integer" else "number") + (f" ({bounds})" if bounds else "")
    if kind == "boolean":
        return "boolean (true or false)"
    if kind == "null":
        return "null"
    if kind == "array":
        items = node.get("items")
        inner = describe(items, root, depth + 1) if is_object(items) and items else "values"
        return f"array of {inner}"
    if kind == "object":
        if isinstance(node.get("additionalProperties"), dict):
            return f"object mapping strings to {describe(node['additionalProperties'], root, depth + 1)}"
        return "object with fields " + ", ".join(node.get("properties", {})) if node.get("properties") else "object"
    return "any JSON value"


def _bounds(node: dict[str, Any]) -> str:
    parts: list[str] = []
    for key, text in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if key in node:
            parts.append(f"{text} {node[key]}")
    if "multipleOf" in node:
        parts.append(f"multiple of {node['multipleOf']}")
    if "decimalPlaces" in node:
        parts.append(f"at most {node['decimalPlaces']} decimal places")
    return ", ".join(parts)


def example_for(node: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """A plausible valid value for a schema node (documentation examples win)."""
    node = _resolve(node, root)
    if not is_object(node) or depth > 4:
        return None
    if node.get("examples"):
        return node["examples"][0]
    if "default" in node and node["default"] is not None:
        return node["default"]
    if node.get("enum"):
        return node["enum"][0]
    if "const" in node:
        return node["const"]
    union = node.get("anyOf") or node.get("oneOf")
    if union:
        for branch in union:
            if _resolve(branch, root).get("type") != "null":
                return example_for(branch, root, depth + 1)
        return None
    kind = node.get("type")
    if kind == "string":
        if "x-decimal" in node or node.get("pattern") == DECIMAL_PATTERN:
            low = node.get("x-decimal", {}).get("minimum")
            return str(low) if low is not None else "12.50"
        fmt = node.get("format")
        if fmt in _FORMAT_EXAMPLES:
            return _FORMAT_EXAMPLES[fmt]
        if "pattern" in node:
            return None  # no honest example for an arbitrary pattern
        return "text"[: node.get("maxLength", 4)] if node.get("minLength", 0) <= 4 else "x" * node["minLength"]
    if kind in ("integer", "number"):
        for key in ("minimum", "maximum"):
            if key in node:
                return node[key]
        if "exclusiveMinimum" in node:
            return node["exclusiveMinimum"] + 1
        return 1 if kind == "integer" else 1.5
    if kind == "boolean":
        return True
    if kind == "array":
        item = example_for(node.get("items", {}), root, depth + 1)
        return [] if item is None else [item]
    if kind == "object":
        props = node.get("properties", {})
        required = node.get("required", [])
        return {name: example_for(props[name], root, depth + 1) for name in required if name in props}
    return None
