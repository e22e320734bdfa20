"""Where the `TenantKey` and `Secret` marks sit in a tool's types, and walks over validated values.

Contract: `shape_of(annotation)` turns a type (a model, `list[list[M]]`, `dict[str, list[M]]`,
`tuple[M, M]`, `A | B`, `Annotated[...]`, a recursive model...) into a `Shape` tree, once per
tool. The walks follow the *validated value* along that tree whatever the nesting:
`tenant_values(shape, value)` yields every tenant-marked value with its path,
`redact_dump(shape, value, dumped)` replaces every secret in the JSON-mode dump of that value,
and `loc_may_hold_secret(shape, loc)` says whether a validation error location could point at
or contain a secret (so its input is never echoed). At a union the value itself says which
member it is (an instance of the model, a list, a dict...); when several members fit, every one
of them is walked, so a mark is never missed. A mark the walker could not reach (inside a type
it does not understand, such as a dataclass) is refused when the tool is defined
(`UnreachableMark`), never silently skipped.
"""

from __future__ import annotations

import collections.abc as cabc
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Iterator, cast

from pydantic import BaseModel, RootModel, SecretBytes, SecretStr
from pydantic.fields import FieldInfo

from ..jsonshape import is_array, is_object
from .principal import SECRET_EXTRA, TENANT_KEY_EXTRA, Secret, TenantKey

REDACTED = "[redacted]"

_SEQ_ORIGINS = (list, set, frozenset, cabc.Sequence, cabc.MutableSequence, cabc.Set, cabc.MutableSet,
                cabc.Iterable, cabc.Collection)
_MAP_ORIGINS = (dict, cabc.Mapping, cabc.MutableMapping)


class UnreachableMark(Exception):
    """A TenantKey/Secret mark sits where the walker cannot follow it."""


@dataclass(eq=False)
class Shape:
    kind: str  # "leaf" | "model" | "root" | "seq" | "tuple" | "dict" | "union"
    tenant: bool = False
    secret: bool = False
    model: type[Any] | None = None
    fields: list[tuple[str, str, "Shape"]] = field(default_factory=list[tuple[str, str, "Shape"]])  # (attribute, alias, shape)
    items: "Shape | None" = None  # seq items, dict values, variadic tuple items, root value
    keys: "Shape | None" = None  # dict keys
    positional: list["Shape"] = field(default_factory=list["Shape"])  # fixed tuples
    members: list["Shape"] = field(default_factory=list["Shape"])  # union members
    test: Any = None  # for leaf members of a union: a type, a tuple of literals, or None (anything)
    # Whether a mark sits here or below (set once the tree is complete; recursion makes it cyclic).
    has_tenant: bool = False
    has_secret: bool = False

    def children(self) -> list["Shape"]:
        out = [s for _, _, s in self.fields] + self.positional + self.members
        out += [s for s in (self.items, self.keys) if s is not None]
        return out


def _marks_of(metadata: list[Any]) -> tuple[bool, bool]:
    tenant = secret = False
    for item in metadata:
        if item is TenantKey:
            tenant = True
        elif item is Secret:
            secret = True
        elif isinstance(item, FieldInfo):
            extra = item.json_schema_extra
            if is_object(extra):
                tenant |= bool(extra.get(TENANT_KEY_EXTRA))
                secret |= bool(extra.get(SECRET_EXTRA))
    return tenant, secret


def _has_mark_anywhere(annotation: Any, depth: int = 0) -> bool:
    if depth > 20:
        return False
    if typing.get_origin(annotation) is typing.Annotated:
        args = typing.get_args(annotation)
        if any(_marks_of(list(args[1:]))):
            return True
        return _has_mark_anywhere(args[0], depth + 1)
    return any(_has_mark_anywhere(a, depth + 1) for a in typing.get_args(annotation))


class _Builder:
    def __init__(self) -> None:
        self.models: dict[type, Shape] = {}

    def build(self, annotation: Any, metadata: list[Any] | None = None, extra: Any = None) -> Shape:
        meta = list(metadata or [])
        while typing.get_origin(annotation) is typing.Annotated:
            args = typing.get_args(annotation)
            annotation, meta = args[0], meta + list(args[1:])
        tenant, secret = _marks_of(meta)
        if is_object(extra):
            tenant |= bool(extra.get(TENANT_KEY_EXTRA))
            secret |= bool(extra.get(SECRET_EXTRA))
        shape = self._bare(annotation)
        if tenant or secret:
            shape = self._mark(shape, tenant, secret)
        return shape

    def _mark(self, shape: Shape, tenant: bool, secret: bool) -> Shape:
        if shape.kind == "union":  # a mark on `A | None` marks each member
            return Shape("union", members=[self._mark(m, tenant, secret) for m in shape.members])
        if shape.kind in ("model", "root") and self.models.get(shape.model) is shape:  # type: ignore[arg-type]
            # the model's shape is shared by every use; a copy carries this field's mark
            return _marked_alias(shape, tenant, secret)
        shape.tenant |= tenant
        shape.secret |= secret
        return shape

    def _bare(self, annotation: Any) -> Shape:
        if isinstance(annotation, type) and issubclass(annotation, (SecretStr, SecretBytes)):
            return Shape("leaf", secret=True, test=annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return self._model(annotation)
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is typing.Union or origin is types.UnionType:
            return Shape("union", members=[self.build(a) for a in args])
        if origin is typing.Literal:
            return Shape("leaf", test=tuple(args))
        if origin in _SEQ_ORIGINS and len(args) == 1:
            return Shape("seq", items=self.build(args[0]), test=origin)
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return Shape("seq", items=self.build(args[0]), test=tuple)
            return Shape("tuple", positional=[self.build(a) for a in args if a != ()], test=tuple)
        if origin in _MAP_ORIGINS and len(args) == 2:
            return Shape("dict", keys=self.build(args[0]), items=self.build(args[1]), test=dict)
        if args and _has_mark_anywhere(annotation):
            raise UnreachableMark(f"a TenantKey or Secret mark inside {annotation!r} cannot be checked")
        if annotation is None or annotation is type(None):
            return Shape("leaf", test=type(None))
        if isinstance(annotation, type):
            _refuse_marked_class(annotation)
            return Shape("leaf", test=origin if isinstance(origin, type) else annotation)
        return Shape("leaf", test=None)

    def _model(self, model: type[BaseModel]) -> Shape:
        if model in self.models:
            return self.models[model]
        if issubclass(model, RootModel):
            shape = Shape("root", model=cast("type[BaseModel]", model))
            self.models[model] = shape
            info = model.model_fields["root"]
            shape.items = self.build(info.annotation, list(info.metadata), info.json_schema_extra)
            return shape
        shape = Shape("model", model=model)
        self.models[model] = shape
        for name, info in model.model_fields.items():
            child = self.build(info.annotation, list(info.metadata), info.json_schema_extra)
            shape.fields.append((name, info.alias or name, child))
        return shape


def _refuse_marked_class(cls: type[Any]) -> None:
    """Dataclasses and TypedDicts are validated by pydantic but not walked: refuse marks in them."""
    hints: dict[str, Any] = {}
    is_dict = dict in cls.__mro__  # issubclass(cls, dict), without narrowing cls to dict[Unknown, Unknown]
    if hasattr(cls, "__dataclass_fields__") or (is_dict and hasattr(cls, "__annotations__")):
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except Exception:  # noqa: BLE001 - unresolvable hints cannot hold a mark we can see
            hints = {}
    for hint in hints.values():
        if _has_mark_anywhere(hint):
            raise UnreachableMark(
                f"{cls.__name__} has a TenantKey or Secret field; use a pydantic BaseModel for it")


def _marked_alias(shape: Shape, tenant: bool, secret: bool) -> Shape:
    out = Shape(shape.kind, tenant=tenant, secret=secret, model=shape.model, fields=shape.fields,
                items=shape.items, keys=shape.keys, positional=shape.positional, members=shape.members,
                test=shape.test)
    return out


def _settle(root: Shape) -> None:
    seen: list[Shape] = []
    stack = [root]
    ids: set[int] = set()
    while stack:
        s = stack.pop()
        if id(s) in ids:
            continue
        ids.add(id(s))
        seen.append(s)
        s.has_tenant, s.has_secret = s.tenant, s.secret
        stack.extend(s.children())
    changed = True
    while changed:  # a fixed point: recursive models make the tree cyclic
        changed = False
        for s in seen:
            for c in s.children():
                if c.has_tenant and not s.has_tenant:
                    s.has_tenant = changed = True
                if c.has_secret and not s.has_secret:
                    s.has_secret = changed = True


def shape_of(annotation: Any) -> Shape:
    """The mark tree of a type; raises `UnreachableMark` when a mark cannot be walked."""
    shape = _Builder().build(annotation)
    _settle(shape)
    return shape


# --- walks over validated values -----------------------------------------------------------


def _fits(shape: Shape, value: Any) -> bool:
    if shape.kind in ("model", "root"):
        return isinstance(value, shape.model)  # type: ignore[arg-type]
    if shape.kind == "seq":
        return isinstance(value, (list, tuple, set, frozenset))
    if shape.kind == "tuple":
        return isinstance(value, tuple)
    if shape.kind == "dict":
        return isinstance(value, cabc.Mapping)
    if shape.kind == "union":
        return any(_fits(m, value) for m in shape.members)
    test = shape.test
    if test is None:
        return True
    if isinstance(test, tuple):
        return any(value == t for t in cast("cabc.Sequence[Any]", test))
    if isinstance(test, type):
        if test is float and isinstance(value, int):
            return True
        return isinstance(value, test)
    return True


def _members(shape: Shape, value: Any) -> list[Shape]:
    fitting = [m for m in shape.members if _fits(m, value)]
    return fitting or shape.members  # nothing fits (a coerced value): walk them all, fail closed


def tenant_values(shape: Shape, value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every tenant-marked value inside a validated value, with its path."""
    if not shape.has_tenant:
        return
    if shape.tenant:
        yield (path or "(arguments)", value)
        if shape.kind == "leaf":
            return
    kind = shape.kind
    if kind == "union":
        for member in _members(shape, value):
            if member.has_tenant:
                yield from tenant_values(member, value, path)
    elif kind == "model":
        if not isinstance(value, BaseModel):
            return
        for attr, _alias, child in shape.fields:
            if child.has_tenant:
                yield from tenant_values(child, getattr(value, attr, None), f"{path}.{attr}" if path else attr)
    elif kind == "root":
        if isinstance(value, BaseModel) and shape.items is not None:
            yield from tenant_values(shape.items, getattr(value, "root", None), path)
    elif kind == "seq" and shape.items is not None and isinstance(value, (list, tuple, set, frozenset)):
        for i, item in enumerate(cast("cabc.Iterable[Any]", value)):
            yield from tenant_values(shape.items, item, f"{path}[{i}]")
    elif kind == "tuple" and isinstance(value, tuple):
        for i, (child, item) in enumerate(zip(shape.positional, cast("cabc.Sequence[Any]", value))):
            yield from tenant_values(child, item, f"{path}[{i}]")
    elif kind == "dict" and isinstance(value, cabc.Mapping):
        for key, item in cast("cabc.Mapping[object, Any]", value).items():
            if shape.keys is not None and shape.keys.has_tenant:
                yield from tenant_values(shape.keys, key, f"{path}{{key}}")
            if shape.items is not None:
                yield from tenant_values(shape.items, item, f"{path}[{key!r}]")


def redact_dump(shape: Shape, value: Any, dumped: Any) -> Any:
    """The JSON-mode dump of `value` with every secret replaced; `dumped` is modified in place."""
    if not shape.has_secret:
        return dumped
    if shape.secret:
        return None if dumped is None else REDACTED
    kind = shape.kind
    if kind == "union":
        for member in _members(shape, value):
            if member.has_secret:
                dumped = redact_dump(member, value, dumped)
        return dumped
    if kind == "model":
        if isinstance(value, BaseModel) and is_object(dumped):
            for attr, alias, child in shape.fields:
                if not child.has_secret:
                    continue
                key = attr if attr in dumped else alias
                if key in dumped:
                    dumped[key] = redact_dump(child, getattr(value, attr, None), dumped[key])
        return dumped
    if kind == "root":
        if shape.items is not None and isinstance(value, BaseModel):
            return redact_dump(shape.items, getattr(value, "root", None), dumped)
        return dumped
    if kind == "seq" and shape.items is not None and is_array(dumped):
        if isinstance(value, (list, tuple, set, frozenset)):
            for i, item in enumerate(cast("cabc.Iterable[Any]", value)):
                if i < len(dumped):
                    dumped[i] = redact_dump(shape.items, item, dumped[i])
        return dumped
    if kind == "tuple" and is_array(dumped) and isinstance(value, tuple):
        for i, (child, item) in enumerate(zip(shape.positional, cast("cabc.Sequence[Any]", value))):
            if i < len(dumped):
                dumped[i] = redact_dump(child, item, dumped[i])
        return dumped
    if kind == "dict" and is_object(dumped) and isinstance(value, cabc.Mapping):
        pairs = list(zip(cast("cabc.Mapping[object, Any]", value).items(), list(dumped.items())))
        secret_keys = shape.keys is not None and shape.keys.has_secret
        if secret_keys:
            dumped.clear()
        for i, ((_key, item), (dkey, ditem)) in enumerate(pairs):
            new = redact_dump(shape.items, item, ditem) if shape.items is not None else ditem
            if secret_keys:
                dumped[f"{REDACTED}#{i}"] = new
            else:
                dumped[dkey] = new
        return dumped
    return dumped


def loc_may_hold_secret(shape: Shape, loc: tuple[Any, ...]) -> bool:
    """Whether the input at a validation error location is, or may contain, a secret.

    The location is followed through every reading consistent with it (pydantic inserts union
    member tags that need not match a name here); any reading that reaches a secret, or a value
    holding one below it, answers True."""
    states = _expand([shape])
    for part in loc:
        if any(s.secret for s in states):
            return True
        nxt: list[Shape] = []
        for s in states:
            nxt.extend(_step(s, part))
        if not nxt:
            return False
        states = _expand(nxt)
    return any(s.has_secret for s in states)


def _expand(states: list[Shape]) -> list[Shape]:
    out: list[Shape] = []
    stack = list(states)
    seen: set[int] = set()
    while stack:
        s = stack.pop()
        if id(s) in seen:
            continue
        seen.add(id(s))
        out.append(s)
        if s.kind == "union":
            stack.extend(s.members)
        elif s.kind == "root" and s.items is not None:
            stack.append(s.items)
    return out


def _step(shape: Shape, part: Any) -> list[Shape]:
    kind = shape.kind
    if kind == "union":
        return list(shape.members)  # the part may be a member tag
    if kind == "model":
        out = [c for attr, alias, c in shape.fields if part in (attr, alias)]
        return out if out else ([shape] if isinstance(part, str) and part == getattr(shape.model, "__name__", None)
                                else [])
    if kind in ("seq", "dict") and shape.items is not None:
        out = [shape.items]
        if kind == "dict" and shape.keys is not None and part == "[key]":
            out = [shape.keys]
        return out
    if kind == "tuple":
        if isinstance(part, int) and 0 <= part < len(shape.positional):
            return [shape.positional[part]]
        return list(shape.positional)
    if kind in ("leaf",) and isinstance(part, str):
        return [shape]  # e.g. a tag like "function-after[...]" or "str"
    return []
