"""Canonical JSON schemas for tool models, and the per-model plan used around validation.

Contract: `canonical_schema(model)` is the one schema every exporter compiles from: pydantic's
validation-mode schema, with `Decimal` written as a pattern-checked string (JSON floats lose
cents) carrying its numeric constraints under `x-decimal`, `additionalProperties: false` on
every model object (validation runs with `extra="forbid"` at every depth), and secret fields
marked `x-secret` with their masked defaults removed. `build_plan(model)` precomputes, once per
tool, which fields are dicts, containers, or defaulted non-nullable fields, so `normalize` only
walks what it must. Tenant keys and secrets are walked by `walk.py`, whatever the nesting.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterator

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from ..jsonshape import is_array, is_object
from .principal import SECRET_EXTRA

#: What a model may send for a `Decimal`: an optional sign, digits, an optional fraction.
DECIMAL_PATTERN = r"^-?\d+(\.\d+)?$"

_DECIMAL_KEYS = {
    "ge": "minimum",
    "gt": "exclusiveMinimum",
    "le": "maximum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
    "max_digits": "maxDigits",
    "decimal_places": "decimalPlaces",
}


class CanonicalJsonSchema(GenerateJsonSchema):
    """pydantic's generator with the two canonical choices this library makes."""

    def decimal_schema(self, schema: core_schema.DecimalSchema) -> JsonSchemaValue:
        out: dict[str, Any] = {"type": "string", "pattern": DECIMAL_PATTERN}
        constraints = {
            _DECIMAL_KEYS[key]: (str(value) if isinstance(value, Decimal) else value)
            for key, value in schema.items()
            if key in _DECIMAL_KEYS and value is not None
        }
        out["x-decimal"] = constraints
        return out


def canonical_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(
        mode="validation", ref_template="#/$defs/{model}", schema_generator=CanonicalJsonSchema
    )
    _close_objects(schema)
    _require_discriminators(schema, schema.get("$defs", {}))
    return schema


def _require_discriminators(node: Any, defs: dict[str, Any]) -> None:
    """A discriminated union needs its tag in the input even when the tag has a default, so the
    tag is listed as required in every member (pydantic's schema leaves it optional)."""
    if is_object(node):
        disc = node.get("discriminator")
        if is_object(disc) and isinstance(disc.get("propertyName"), str):
            tag = disc["propertyName"]
            for member in node.get("oneOf", []) + node.get("anyOf", []):
                target = member
                if is_object(member) and "$ref" in member:
                    target = defs.get(member["$ref"].rsplit("/", 1)[-1], {})
                if is_object(target) and tag in target.get("properties", {}):
                    required = target.setdefault("required", [])
                    if tag not in required:
                        order = list(target["properties"])
                        required.append(tag)
                        required.sort(key=order.index)
        for value in node.values():
            _require_discriminators(value, defs)
    elif is_array(node):
        for item in node:
            _require_discriminators(item, defs)


def _close_objects(node: Any) -> None:
    """Add `additionalProperties: false` to model objects and tidy secret nodes, in place."""
    if is_object(node):
        if node.get("type") == "object" and "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        if node.get("writeOnly") is True or node.get(SECRET_EXTRA) is True:
            # pydantic puts the masked "**********" default in the schema; it is noise.
            node.pop("default", None)
            node[SECRET_EXTRA] = True
        for key, value in node.items():
            if key in ("properties", "$defs", "patternProperties"):
                for child in value.values():
                    _close_objects(child)
            elif key not in ("enum", "const", "default", "examples"):
                _close_objects(value)
    elif is_array(node):
        for child in node:
            _close_objects(child)


# --- annotation inspection ---------------------------------------------------------------


def _strip_annotated(annotation: Any) -> tuple[Any, list[Any]]:
    metadata: list[Any] = []
    while typing.get_origin(annotation) is typing.Annotated:
        args = typing.get_args(annotation)
        annotation, metadata = args[0], metadata + list(args[1:])
    return annotation, metadata


def _union_members(annotation: Any) -> list[Any] | None:
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return list(typing.get_args(annotation))
    return None


def accepts_none(annotation: Any) -> bool:
    annotation, _ = _strip_annotated(annotation)
    if annotation is None or annotation is type(None) or annotation is Any:
        return True
    members = _union_members(annotation)
    if members is not None:
        return any(accepts_none(m) for m in members)
    if typing.get_origin(annotation) is typing.Literal:
        return None in typing.get_args(annotation)
    return False


def _non_none(annotation: Any) -> list[Any]:
    annotation, _ = _strip_annotated(annotation)
    members = _union_members(annotation)
    if members is None:
        return [annotation]
    out: list[Any] = []
    for member in members:
        if member is not type(None):
            out.extend(_non_none(member))
    return out


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _is_container(annotation: Any) -> bool:
    origin = typing.get_origin(annotation) or annotation
    return origin in (list, tuple, set, frozenset, dict) or _is_model(annotation)


# --- plans ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Child:
    """How to reach a nested model from a field: directly, through a list, or dict values."""

    via: str  # "model" | "list" | "dict"
    plan: "ModelPlan"


@dataclass(slots=True)
class ModelPlan:
    model: type[BaseModel]
    null_default_fields: frozenset[str] = frozenset()
    dict_fields: frozenset[str] = frozenset()
    json_fields: frozenset[str] = frozenset()
    children: dict[str, Child] = field(default_factory=dict[str, Child])
    # Whether this model or anything below it has such fields (set after children are built),
    # so the per-call helpers can skip whole subtrees and the common case costs nothing.
    has_null_default: bool = False
    has_dict: bool = False
    has_json: bool = False
    needs_normalize: bool = False


def build_plan(model: type[BaseModel], _seen: dict[type[BaseModel], ModelPlan] | None = None) -> ModelPlan:
    seen = {} if _seen is None else _seen
    if model in seen:
        return seen[model]
    plan = ModelPlan(model=model)
    seen[model] = plan  # recursive models point back at the same plan
    null_default: set[str] = set()
    dicts: set[str] = set()
    json_fields: set[str] = set()
    for name, info in model.model_fields.items():
        key = info.alias or name
        if not info.is_required() and not accepts_none(info.annotation):
            null_default.add(key)
        plain = _non_none(info.annotation)
        if len(plain) == 1:
            target = plain[0]
            origin = typing.get_origin(target)
            if origin is dict:
                dicts.add(key)
            if _is_container(target):
                json_fields.add(key)
            child = _child_of(target, seen)
            if child is not None:
                plan.children[key] = child
    plan.null_default_fields = frozenset(null_default)
    plan.dict_fields = frozenset(dicts)
    plan.json_fields = frozenset(json_fields)
    if _seen is None:
        _settle_flags(seen)
    return plan


def _child_of(annotation: Any, seen: dict[type[BaseModel], ModelPlan]) -> Child | None:
    if _is_model(annotation):
        return Child("model", build_plan(annotation, seen))
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, set, frozenset, tuple) and args:
        inner = _non_none(args[0])
        if len(inner) == 1 and _is_model(inner[0]) and (origin is not tuple or len(args) == 2 and args[1] is Ellipsis):
            return Child("list", build_plan(inner[0], seen))
    if origin is dict and len(args) == 2:
        inner = _non_none(args[1])
        if len(inner) == 1 and _is_model(inner[0]):
            return Child("dict", build_plan(inner[0], seen))
    return None


def _settle_flags(plans: dict[type[BaseModel], ModelPlan]) -> None:
    # A fixed point, because recursive models make the child graph cyclic.
    for plan in plans.values():
        plan.has_null_default = bool(plan.null_default_fields)
        plan.has_dict = bool(plan.dict_fields)
        plan.has_json = bool(plan.json_fields)
    flags = ("has_null_default", "has_dict", "has_json")
    changed = True
    while changed:
        changed = False
        for plan in plans.values():
            for child in plan.children.values():
                for flag in flags:
                    if getattr(child.plan, flag) and not getattr(plan, flag):
                        setattr(plan, flag, True)
                        changed = True
    for plan in plans.values():
        plan.needs_normalize = plan.has_null_default or plan.has_dict or plan.has_json


# --- per-call helpers ----------------------------------------------------------------------


def _children_values(value: Any, child: Child) -> Iterator[Any]:
    if child.via == "model":
        yield value
    elif child.via == "list" and isinstance(value, (list, tuple, set, frozenset)):
        yield from value
    elif child.via == "dict" and is_object(value):
        yield from value.values()


def normalize(data: Any, plan: ModelPlan, *, decode_json: bool) -> Any:
    """Undo the wire changes exporters make, in place, on parsed JSON.

    - `null` for a defaulted field that cannot be null means "use the default" (strict
      OpenAI requires every field, so optional ones are sent as null);
    - a list of `{key, value}` objects for a `dict` field is turned back into the dict
      (strict targets cannot express maps);
    - with `decode_json`, a string holding a JSON array/object for a container field is
      decoded (clients that stringify nested JSON). Scalars are never coerced.
    """
    if not is_object(data):
        return data
    for key in list(data):
        value = data[key]
        if value is None and key in plan.null_default_fields:
            del data[key]
            continue
        if decode_json and key in plan.json_fields and isinstance(value, str):
            head = value.lstrip()[:1]
            if head in ("[", "{"):
                try:
                    value = json.loads(value)
                except ValueError:
                    pass  # left as is: validation reports the type error
                else:
                    data[key] = value
        if key in plan.dict_fields and is_array(value) and _is_kv_list(value):
            converted = {item["key"]: item["value"] for item in value}
            if len(converted) == len(value):  # duplicate keys are left for validation to reject
                data[key] = value = converted
        child = plan.children.get(key)
        if child is not None and child.plan.needs_normalize:
            for item in _children_values(value, child):
                normalize(item, child.plan, decode_json=decode_json)
    return data


def _is_kv_list(value: list[Any]) -> bool:
    return all(is_object(item) and set(item) == {"key", "value"} and isinstance(item["key"], str) for item in value)
