"""The static type lattice of the formula language.

One immutable `Type` class with a `kind` covers scalars (Number, Text, Boolean, Date, DateTime,
Duration), `List[T]`, `Record{...}`, `Any` (untyped JSON input, must be narrowed), `Blank` (the
type of ``BLANK()``), type variables for generic signatures, and function types for lambda
parameters. Nullability is a flag (``T?``). Types print and parse in the schema syntax users
write: ``"Number"``, ``"Text?"``, ``"List[Number]"``, ``"Record{name: Text, due: Date?}"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, cast

SCALAR_KINDS = ("Number", "Text", "Boolean", "Date", "DateTime", "Duration")
KINDS = SCALAR_KINDS + ("List", "Record", "Any", "Blank", "Never", "Var", "Fn", "Many")


@dataclass(frozen=True, slots=True)
class Type:
    """A type. Use the module constants and constructors rather than building these by hand."""

    kind: str
    nullable: bool = False
    elem: "Type | None" = None  # List, Many (scalar-or-list argument), Fn return
    fields: tuple[tuple[str, "Type"], ...] = ()  # Record, sorted by name
    name: str = ""  # Var
    params: tuple["Type", ...] = ()  # Fn parameter types

    def __str__(self) -> str:
        return format_type(self)

    @property
    def is_scalar(self) -> bool:
        return self.kind in SCALAR_KINDS

    def field(self, name: str) -> "Type | None":
        for field_name, field_type in self.fields:
            if field_name == name:
                return field_type
        return None


NUMBER = Type("Number")
TEXT = Type("Text")
BOOLEAN = Type("Boolean")
DATE = Type("Date")
DATETIME = Type("DateTime")
DURATION = Type("Duration")
ANY = Type("Any", nullable=True)
BLANK = Type("Blank", nullable=True)
#: The element type of an empty list literal: fits anywhere.
NEVER = Type("Never")
T = Type("Var", name="T")
U = Type("Var", name="U")


def optional(t: Type) -> Type:
    return t if t.nullable else replace(t, nullable=True)


def non_null(t: Type) -> Type:
    if t.kind in ("Blank", "Any"):
        return t
    return replace(t, nullable=False) if t.nullable else t


def list_of(elem: Type, nullable: bool = False) -> Type:
    return Type("List", nullable=nullable, elem=elem)


def many(elem: Type) -> Type:
    """An argument that takes scalars or lists of ``elem``, flattened (``SUM(1, xs, [2, 3])``)."""
    return Type("Many", elem=elem)


def fn(params: Iterable[Type], returns: Type) -> Type:
    return Type("Fn", params=tuple(params), elem=returns)


def record(fields: Mapping[str, Type] | Iterable[tuple[str, Type]], nullable: bool = False) -> Type:
    items: Iterable[tuple[str, Type]] = (
        cast("Mapping[str, Type]", fields).items() if isinstance(fields, Mapping) else fields)
    return Type("Record", nullable=nullable, fields=tuple(sorted(items)))


def var(name: str) -> Type:
    return Type("Var", name=name)


def format_type(t: Type) -> str:
    q = "?" if t.nullable and t.kind not in ("Blank", "Any") else ""
    if t.kind == "List":
        return f"List[{format_type(t.elem)}]{q}"  # type: ignore[arg-type]
    if t.kind == "Many":
        return f"{format_type(t.elem)}...|List"  # type: ignore[arg-type]
    if t.kind == "Record":
        inner = ", ".join(f"{_format_field(n)}: {format_type(ft)}" for n, ft in t.fields)
        return f"Record{{{inner}}}{q}"
    if t.kind == "Var":
        return t.name + q
    if t.kind == "Fn":
        ps = ", ".join(format_type(p) for p in t.params)
        return f"({ps}) => {format_type(t.elem)}"  # type: ignore[arg-type]
    return t.kind + q


_IDENT = re.compile(r"^[^\W\d]\w*$")


def _format_field(name: str) -> str:
    return name if _IDENT.match(name) else "{" + name + "}"


class TypeSyntaxError(ValueError):
    """A schema type string that does not parse; the message says where."""


_ALIASES = {
    "number": "Number", "decimal": "Number", "int": "Number", "integer": "Number",
    "float": "Number", "text": "Text", "string": "Text", "str": "Text",
    "boolean": "Boolean", "bool": "Boolean", "date": "Date", "datetime": "DateTime",
    "duration": "Duration", "timedelta": "Duration", "any": "Any", "json": "Any",
}


def parse_type(text: str) -> Type:
    """Parse a schema type string such as ``"Record{name: Text, tags: List[Text]?}"``."""
    parser = _TypeParser(text)
    result = parser.type()
    parser.skip()
    if parser.pos != len(text):
        parser.fail("unexpected text")
    return result


#: Nesting of List/Record in one type string: deeper is refused before the recursion gets near
#: Python's own stack (a model-sent "List[List[...]]" raised RecursionError).
MAX_TYPE_DEPTH = 32


class _TypeParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def fail(self, what: str) -> None:
        shown = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        raise TypeSyntaxError(f"{what} at position {self.pos + 1} in type {shown!r}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def eat(self, ch: str) -> bool:
        self.skip()
        if self.text.startswith(ch, self.pos):
            self.pos += len(ch)
            return True
        return False

    def ident(self) -> str:
        self.skip()
        if self.eat("{"):
            end = self.text.find("}", self.pos)
            if end < 0:
                self.fail("unclosed '{'")
            name = self.text[self.pos : end]
            self.pos = end + 1
            return name
        m = re.compile(r"[^\W\d][\w.]*").match(self.text, self.pos)
        if not m:
            self.fail("expected a name")
        self.pos = m.end()  # type: ignore[union-attr]
        return m.group(0)  # type: ignore[union-attr]

    def type(self) -> Type:
        self.depth += 1
        if self.depth > MAX_TYPE_DEPTH:
            self.fail(f"type nested deeper than {MAX_TYPE_DEPTH} levels")
        try:
            return self._type()
        finally:
            self.depth -= 1

    def _type(self) -> Type:
        name = self.ident()
        key = name.lower()
        if key in ("list", "array"):
            if not (self.eat("[") or self.eat("<")):
                self.fail("expected '[' after List")
            elem = self.type()
            if not (self.eat("]") or self.eat(">")):
                self.fail("expected ']'")
            t = list_of(elem)
        elif key in ("record", "object"):
            if not self.eat("{"):
                self.fail("expected '{' after Record")
            fields: dict[str, Type] = {}
            if not self.eat("}"):
                while True:
                    fname = self.ident()
                    if not self.eat(":"):
                        self.fail("expected ':' after field name")
                    if fname in fields:
                        self.fail(f"duplicate field {fname!r}")
                    fields[fname] = self.type()
                    if self.eat("}"):
                        break
                    if not self.eat(","):
                        self.fail("expected ',' or '}'")
            t = record(fields)
        elif key in _ALIASES:
            kind = _ALIASES[key]
            t = ANY if kind == "Any" else Type(kind)
        else:
            self.fail(f"unknown type {name!r}")
            raise AssertionError  # unreachable
        if self.eat("?"):
            t = optional(t)
        return t


def is_assignable(actual: Type, expected: Type) -> bool:
    """Whether a value of ``actual`` may be used where ``expected`` is declared (no type vars)."""
    if actual.kind == "Never":
        return True
    if actual.kind == "Blank":
        return expected.nullable
    if actual.nullable and not expected.nullable:
        return False
    if expected.kind == "Any":
        return True
    if actual.kind != expected.kind:
        return False
    if actual.kind == "List":
        return is_assignable(actual.elem, expected.elem)  # type: ignore[arg-type]
    if actual.kind == "Record":
        return all(
            (ft2 := actual.field(n)) is not None and is_assignable(ft2, ft)
            for n, ft in expected.fields
        )
    return True


def join(a: Type, b: Type) -> Type | None:
    """The least type both fit in (``Number`` and ``Blank`` give ``Number?``), or None."""
    if a.kind == "Never":
        return b
    if b.kind == "Never":
        return a
    if a.kind == "Blank":
        return optional(b)
    if b.kind == "Blank":
        return optional(a)
    nullable = a.nullable or b.nullable
    if a.kind != b.kind:
        return None
    if a.kind == "List":
        inner = join(a.elem, b.elem)  # type: ignore[arg-type]
        return None if inner is None else list_of(inner, nullable)
    if a.kind == "Record":
        if [n for n, _ in a.fields] != [n for n, _ in b.fields]:
            return None
        joined = []
        for (n, fa), (_, fb) in zip(a.fields, b.fields):
            j = join(fa, fb)
            if j is None:
                return None
            joined.append((n, j))
        return record(joined, nullable)
    return optional(a) if nullable else non_null(a)
