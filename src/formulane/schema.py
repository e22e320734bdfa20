"""Schemas: which names a formula may read, and their types.

A schema is given as a mapping of names to type strings (``{"price": "Number", "due":
"Date?"}``) or `Type` objects, as a pydantic model, dataclass or TypedDict class (fields become
variables, nested classes records; JSON Schema: `formulane.inputs`), or inferred from the
variables passed. `normalize_schema` turns any of these into ``dict[str, Type]``; a problem is a `CheckError` (E209) naming the field.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import types as pytypes
import typing
from decimal import Decimal
from typing import Any, Mapping

from .errors import CheckError, EvalError, FormulaError
from .types import (
    ANY, BOOLEAN, DATE, DATETIME, DURATION, NUMBER, TEXT, Type, TypeSyntaxError, list_of,
    optional, parse_type, record,
)
from .values import infer_type

SchemaLike = Mapping[str, "str | Type"] | type | None


def schema_key(schema: Any) -> Any:
    """A hashable key for caching: cheap for the usual forms."""
    if schema is None:
        return ()
    if type(schema) is dict:
        # The usual form, in its own order: no ABC check, no sort (a cache hit is ~1.5 µs in
        # all, and these were a third of it). The same schema spelled in another order is
        # another key, compiled once more to the same program.
        items = tuple(schema.items())
        try:
            hash(items)
        except TypeError:  # a value that is no type: normalize_schema words the error
            return schema
        return items
    if isinstance(schema, Mapping):
        try:
            return tuple(sorted(schema.items()))
        except TypeError:
            raise CheckError("schema names must be text and types strings or Type objects",
                             code="E209") from None
    return schema


def normalize_schema(schema: Any) -> dict[str, Type]:
    if schema is None or schema == ():
        return {}
    if isinstance(schema, tuple):
        schema = dict(schema)
    if isinstance(schema, Mapping):
        out = {}
        for name, t in schema.items():
            if not isinstance(name, str) or not name:
                raise CheckError(f"schema name {name!r} must be non-empty text", code="E209")
            if isinstance(t, Type):
                out[name] = t
            elif isinstance(t, str):
                try:
                    out[name] = parse_type(t)
                except TypeSyntaxError as exc:
                    raise CheckError(f"schema field {name!r}: {exc}", code="E209",
                                     hint='types look like "Number", "Text?", "List[Date]", '
                                          '"Record{name: Text}"') from None
            else:
                raise CheckError(f"schema field {name!r}: expected a type string, got "
                                 f"{type(t).__name__}", code="E209")
        return out
    if isinstance(schema, type) and hasattr(schema, "model_fields"):
        return {name: _from_annotation(f.annotation, f"{schema.__name__}.{name}")
                for name, f in schema.model_fields.items()}
    hints = _class_hints(schema)
    if hints is not None:  # a dataclass or TypedDict class
        return {name: _from_annotation(a, f"{schema.__name__}.{name}")
                for name, a in hints.items()}
    raise CheckError(f"a schema must be a mapping of names to types, a pydantic model, "
                     f"dataclass or TypedDict class, got {type(schema).__name__}", code="E209")


def _class_hints(cls: Any) -> dict[str, Any] | None:
    """A dataclass's or TypedDict's field annotations (a TypedDict's optional keys as ``T |
    None``), or None for any other class."""
    if not isinstance(cls, type):
        return None
    if dataclasses.is_dataclass(cls):
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except Exception as exc:  # a forward reference that does not resolve
            raise CheckError(f"{cls.__name__}: its annotations do not resolve ({exc})",
                             code="E209") from None
        return {f.name: hints.get(f.name, f.type) for f in dataclasses.fields(cls)}
    if issubclass(cls, dict) and hasattr(cls, "__required_keys__"):
        try:  # without extras: NotRequired/Required are dropped (the key sets say it)
            hints = typing.get_type_hints(cls)
        except Exception as exc:
            raise CheckError(f"{cls.__name__}: its annotations do not resolve ({exc})",
                             code="E209") from None
        optional_keys: frozenset[str] = getattr(cls, "__optional_keys__", frozenset())
        return {k: (typing.Optional[v] if k in optional_keys else v) for k, v in hints.items()}
    return None


def infer_schema(variables: Mapping[str, Any]) -> dict[str, Type]:
    out = {}
    try:
        for name, value in variables.items():
            t = infer_type(value, name)
            out[name] = optional(ANY) if t.kind == "Blank" else t
    except FormulaError:
        raise
    except RecursionError:
        raise EvalError("variables are nested too deeply", code="E301") from None
    except Exception as exc:  # a host object's own method raised: its fault, told as E301
        raise EvalError(f"the variables could not be read: a host object raised "
                        f"{type(exc).__name__}", code="E301") from None
    return out


_SCALARS: dict[Any, Type] = {
    int: NUMBER, float: NUMBER, Decimal: NUMBER, str: TEXT, bool: BOOLEAN, dt.date: DATE,
    dt.datetime: DATETIME, dt.timedelta: DURATION,
}


def _from_annotation(annotation: Any, where: str) -> Type:
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if annotation is Any or annotation is object:
        return ANY
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _from_annotation(args[0], where)
    if origin in (typing.Union, pytypes.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            inner = _from_annotation(rest[0], where)
            return optional(inner) if len(rest) < len(args) else inner
        raise CheckError(f"{where}: unions are not formula types", code="E209")
    if origin in (list, tuple, typing.Sequence) or annotation in (list, tuple):
        if not args:
            return list_of(ANY)
        return list_of(_from_annotation(args[0], where))
    if origin in (dict, typing.Mapping) or annotation is dict:
        return ANY
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return record({n: _from_annotation(f.annotation, f"{where}.{n}")
                       for n, f in annotation.model_fields.items()})
    hints = _class_hints(annotation)
    if hints is not None:
        return record({n: _from_annotation(a, f"{where}.{n}") for n, a in hints.items()})
    raise CheckError(f"{where}: {annotation!r} has no formula type", code="E209")


#: Version of the stored forms of schemas and programs (`schema_to_json`, `Program.to_json`).
#: Bump it when the language changes meaning; a reader refuses a newer one by name.
LANGUAGE_VERSION = "1"


def schema_to_json(schema: Any) -> dict[str, str]:
    """The stable JSON form of a schema: names to canonical type strings, in name order
    (``normalize_schema`` reads it back; ``str(Type)`` and ``parse_type`` round-trip)."""
    normal = normalize_schema(schema)
    return {name: str(normal[name]) for name in sorted(normal)}


def schema_from_json(data: Any) -> dict[str, Type]:
    """A schema from its JSON form (raises CheckError E209 on a malformed one)."""
    if not isinstance(data, Mapping):
        raise CheckError("a stored schema must be a JSON object of names to types", code="E209")
    return normalize_schema(dict(data))
