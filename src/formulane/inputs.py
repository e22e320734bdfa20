"""Inputs a Python user already has: models, dataclasses, TypedDicts, JSON Schema.

`as_variables` turns the variables of `evaluate` (a mapping, a TypedDict value, a pydantic
model instance or a dataclass instance, nested in any mix) into plain dicts and lists the
engine reads. It reads *fields only*: a pydantic instance's ``__dict__`` entries named in its
class's ``model_fields``, a dataclass's ``fields()`` read from ``__dict__`` (or its slots) with
``object.__getattribute__``; no method, property, validator or ``__getattr__`` of the host
object runs, so no host code reaches the engine. The walk is bounded before it is spent: depth
by ``Limits.max_depth``, the number of items by ``Limits.max_list_length`` (each a
configurable limit, docs/errors.md); a breach is an `EvalError` E301, as any unreadable input.

`schema_from_dataclass` (a dataclass or TypedDict class), `schema_from_json_schema` and
`to_json_schema` convert schemas; a pydantic model class is already a schema
(`formulane.schema.normalize_schema`). JSON Schema covers what formula types say: ``number``/
``integer``, ``string`` (``format: date``, ``date-time``, ``duration``), ``boolean``,
``array`` with ``items``, ``object`` with ``properties``, nullability as ``type: [T, "null"]``
or ``anyOf`` with ``{"type": "null"}``; anything else is a `CheckError` E209 naming the field.
"""

from __future__ import annotations

import dataclasses
import types as pytypes
import typing
from typing import Any, Mapping

from .errors import CheckError, EvalError
from .limits import DEFAULT_LIMITS, Limits
from .types import (
    ANY, BOOLEAN, DATE, DATETIME, DURATION, NUMBER, TEXT, Type, list_of, optional, record,
)

__all__ = ["as_variables", "schema_from_dataclass", "schema_from_json_schema", "to_json_schema"]

_PLAIN = (str, int, float, bool, type(None))


def _is_model(obj: Any) -> bool:
    return not isinstance(obj, type) and isinstance(
        getattr(type(obj), "model_fields", None), dict)


def _is_dataclass_value(obj: Any) -> bool:
    return dataclasses.is_dataclass(obj) and not isinstance(obj, type)


def _field_value(obj: Any, name: str) -> Any:
    """A stored field, never through the object's own attribute hooks or properties."""
    try:
        store = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        store = None
    if isinstance(store, dict) and name in store:
        return store[name]
    # a slots dataclass: the class attribute is the slot's member descriptor, which reads the
    # slot and runs no user code (a property of that name would: refused)
    if isinstance(getattr(type(obj), name, None), pytypes.MemberDescriptorType):
        try:
            return object.__getattribute__(obj, name)
        except AttributeError:
            pass
    raise EvalError(f"field {name!r} of {type(obj).__name__} is not set", code="E301",
                    hint="set the field, or give it a default (None for a blank)")


def _fields_of(obj: Any) -> list[tuple[str, Any]]:
    if _is_model(obj):
        return [(name, _field_value(obj, name)) for name in type(obj).model_fields]
    return [(f.name, _field_value(obj, f.name)) for f in dataclasses.fields(obj)]


def as_variables(variables: Any, limits: Limits | None = None) -> dict[str, Any]:
    """Plain variables from a mapping, model or dataclass instance (see the module doc)."""
    lim = limits or DEFAULT_LIMITS
    budget = [lim.max_list_length]

    def walk(value: Any, depth: int, where: str) -> Any:
        if isinstance(value, _PLAIN):
            return value
        if depth > lim.max_depth:
            raise EvalError(f"{where}: the variables are nested deeper than {lim.max_depth} "
                            "levels (Limits.max_depth)", code="E301",
                            hint="flatten the input, or raise Limits.max_depth")
        budget[0] -= 1
        if budget[0] < 0:
            raise EvalError(f"the variables hold more than {lim.max_list_length:,} items "
                            "(Limits.max_list_length)", code="E301",
                            hint="pass fewer items, or raise Limits.max_list_length")
        if _is_model(value) or _is_dataclass_value(value):
            return {k: walk(v, depth + 1, f"{where}.{k}") for k, v in _fields_of(value)}
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    raise EvalError(f"{where} has a non-text key {k!r}", code="E301",
                                    hint="a record's keys are its field names: use text keys")
                out[k] = walk(v, depth + 1, f"{where}.{k}")
            return out
        if isinstance(value, (list, tuple)):
            return [walk(v, depth + 1, f"{where}[{i + 1}]") for i, v in enumerate(value)]
        return value  # dates, Decimal, ...: the engine's own converters judge them

    if variables is None:
        return {}
    if not (isinstance(variables, Mapping) or _is_model(variables)
            or _is_dataclass_value(variables)):
        raise EvalError("variables must be a mapping of names to values, a pydantic model "
                        f"instance or a dataclass instance, got {type(variables).__name__}",
                        code="E301")
    try:
        result = walk(variables, 0, "variables")
    except EvalError:
        raise
    except RecursionError:
        raise EvalError("variables are nested too deeply", code="E301") from None
    except Exception as exc:  # a host mapping's own items() raised: its fault, told as E301
        raise EvalError(f"the variables could not be read: a host object raised "
                        f"{type(exc).__name__}", code="E301") from None
    assert isinstance(result, dict)
    return result


# ---- schemas ---------------------------------------------------------------------------------

def schema_from_dataclass(cls: type) -> dict[str, Type]:
    """A schema from a dataclass or TypedDict class (nested ones become records)."""
    from .schema import normalize_schema

    return normalize_schema(cls)


_JSON_SCALARS = {"number": NUMBER, "integer": NUMBER, "boolean": BOOLEAN}
_STRING_FORMATS = {None: TEXT, "date": DATE, "date-time": DATETIME, "duration": DURATION}


def _from_json_schema(node: Any, where: str, depth: int) -> Type:
    if depth > DEFAULT_LIMITS.max_depth:
        raise CheckError(f"{where}: the JSON Schema nests too deeply", code="E209")
    if node is True or node == {}:
        return ANY
    if not isinstance(node, Mapping):
        raise CheckError(f"{where}: a JSON Schema node must be an object", code="E209")
    for key in ("anyOf", "oneOf"):
        if key in node:
            options = node[key]
            if not isinstance(options, list):
                raise CheckError(f"{where}: {key} must be a list", code="E209")
            rest = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
            if len(rest) != 1:
                raise CheckError(f"{where}: a union of {len(rest)} types is not a formula type "
                                 "(only T or null)", code="E209")
            inner = _from_json_schema(rest[0], where, depth + 1)
            return optional(inner) if len(rest) < len(options) else inner
    kind = node.get("type")
    nullable = False
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        nullable = len(kinds) < len(kind)
        if len(kinds) != 1:
            raise CheckError(f"{where}: type {kind!r} is not a formula type", code="E209")
        kind = kinds[0]
    if kind in _JSON_SCALARS:
        t = _JSON_SCALARS[kind]
    elif kind == "string":
        fmt = node.get("format")
        if fmt not in _STRING_FORMATS:
            fmt = None  # email, uri...: still text
        t = _STRING_FORMATS[fmt]
    elif kind == "array":
        t = list_of(_from_json_schema(node.get("items", {}), f"{where}[]", depth + 1))
    elif kind == "object":
        props = node.get("properties")
        if not isinstance(props, Mapping) or not props:
            t = ANY
        else:
            required = set(node.get("required", ()))
            fields = {}
            for name, sub in props.items():
                ft = _from_json_schema(sub, f"{where}.{name}", depth + 1)
                fields[name] = ft if name in required or ft.kind == "Any" else optional(ft)
            t = record(fields)
    elif kind is None:
        t = ANY
    else:
        raise CheckError(f"{where}: JSON type {kind!r} has no formula type", code="E209")
    return optional(t) if nullable and t.kind != "Any" else t


def schema_from_json_schema(json_schema: Any) -> dict[str, Type]:
    """A schema from a JSON Schema of an object: each property a variable; a property not in
    ``required`` is nullable (``T?``)."""
    if not isinstance(json_schema, Mapping) or json_schema.get("type", "object") != "object":
        raise CheckError("a schema from JSON Schema needs an object schema with properties",
                         code="E209")
    t = _from_json_schema(dict(json_schema, type="object"), "schema", 0)
    return dict(t.fields) if t.kind == "Record" else {}


def _to_json_schema(t: Type) -> dict[str, Any]:
    if t.kind == "Any":
        return {}
    if t.kind == "Number":
        node: dict[str, Any] = {"type": "number"}
    elif t.kind == "Text":
        node = {"type": "string"}
    elif t.kind == "Boolean":
        node = {"type": "boolean"}
    elif t.kind in ("Date", "DateTime", "Duration"):
        node = {"type": "string", "format": {"Date": "date", "DateTime": "date-time",
                                             "Duration": "duration"}[t.kind]}
    elif t.kind == "List":
        node = {"type": "array", "items": _to_json_schema(t.elem) if t.elem else {}}
    elif t.kind == "Record":
        node = {"type": "object",
                "properties": {n: _to_json_schema(ft) for n, ft in t.fields},
                "required": [n for n, ft in t.fields if not ft.nullable and ft.kind != "Any"],
                "additionalProperties": False}
    else:
        raise CheckError(f"type {t} has no JSON Schema form", code="E209")
    if t.nullable:
        return {"anyOf": [node, {"type": "null"}]}
    return node


def to_json_schema(schema: Any) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a schema's variables, as one object; nullable names are
    not ``required``. `schema_from_json_schema` reads it back to the same schema."""
    from .schema import normalize_schema

    out = _to_json_schema(record(normalize_schema(schema)))
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return out
