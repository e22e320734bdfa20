"""The checked program's nodes: typed, resolved, immutable.

The checker turns the AST into these nodes; every backend (closures, polars, SQL) reads only
them. Each node knows its static type, its span, whether it may produce an error value
(``may_error``: backends skip error plumbing where it cannot), its static cost bound and, for
lists, a bound on its length. Names are resolved to frame slots; overloads to one signature;
excel-profile coercions are explicit `Coerce` nodes, so no backend guesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Union

from ..functions.spec import FunctionSpec, Sig
from ..source import Span
from ..types import Type


@dataclass(frozen=True, slots=True)
class Const:
    value: Any
    type: Type
    span: Span
    may_error: bool = False
    cost: int = 0
    size: int = 0
    #: computed when compiling from a constant call (`fold`), not written in the formula
    folded: bool = False


@dataclass(frozen=True, slots=True)
class Var:
    """A schema variable, LET name or lambda parameter, read from frame slot ``slot``."""

    slot: int
    name: str
    type: Type
    span: Span
    may_error: bool = False
    cost: int = 1
    size: int = 0
    local: bool = False


@dataclass(frozen=True, slots=True)
class Call:
    spec: FunctionSpec
    sig: Sig
    args: tuple["IR", ...]
    type: Type
    span: Span
    may_error: bool = True
    cost: int = 1
    size: int = 0
    body_cost: int = 0  # for higher-order calls: cost of one lambda invocation


@dataclass(frozen=True, slots=True)
class Lambda:
    slots: tuple[int, ...]
    names: tuple[str, ...]
    body: "IR"
    type: Type
    span: Span
    may_error: bool = False
    cost: int = 0
    size: int = 0


@dataclass(frozen=True, slots=True)
class Let:
    slots: tuple[int, ...]
    names: tuple[str, ...]
    values: tuple["IR", ...]
    body: "IR"
    type: Type
    span: Span
    may_error: bool = False
    cost: int = 0
    size: int = 0


@dataclass(frozen=True, slots=True)
class ListOf:
    items: tuple["IR", ...]
    type: Type
    span: Span
    may_error: bool = False
    cost: int = 0
    size: int = 0


@dataclass(frozen=True, slots=True)
class IndexOf:
    obj: "IR"
    index: "IR"
    type: Type
    span: Span
    may_error: bool = True
    cost: int = 1
    size: int = 0


@dataclass(frozen=True, slots=True)
class FieldOf:
    obj: "IR"
    name: str
    type: Type
    span: Span
    may_error: bool = False
    cost: int = 1
    size: int = 0


@dataclass(frozen=True, slots=True)
class Coerce:
    """An excel-profile conversion made explicit: ``mode`` names it (see `COERCIONS`)."""

    node: "IR"
    mode: str
    type: Type
    span: Span
    may_error: bool = False
    cost: int = 1
    size: int = 0


#: Coercion modes: blank->zero value, text->number, boolean->number, number->boolean,
#: text->boolean, any scalar->text, a list of scalars->a list of texts (item by item)... each a
#: total function or an error value.
COERCIONS = (
    "blank_to_number", "blank_to_text", "blank_to_boolean", "text_to_number", "boolean_to_number",
    "number_to_boolean", "text_to_boolean", "to_text", "each_to_text",
    # excel profile, scalar engine only (functions/_serial.py): serials as dates and times
    "serial_to_datetime", "serial_to_duration", "text_to_date", "text_to_datetime",
    "text_to_duration", "each_serial_to_date", "boolean_refused",
    # excel profile, scalar engine only (functions/_excel_arrays.py): skip rules inside arrays
    "array_numbers", "array_and", "array_or", "array_xor", "array_skip_errors",
    "array_errors_counted", "array_vector", "array_mixed", "array_flat",
    # excel profile, scalar engine only (functions/_listnum.py): an array as a range of numbers
    "array_number_cells",
)

IR = Union[Const, Var, Call, Lambda, Let, ListOf, IndexOf, FieldOf, Coerce]


def ir_children(node: IR) -> tuple[IR, ...]:
    if isinstance(node, (Const, Var)):
        return ()
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Lambda):
        return (node.body,)
    if isinstance(node, Let):
        return (*node.values, node.body)
    if isinstance(node, ListOf):
        return node.items
    if isinstance(node, IndexOf):
        return (node.obj, node.index)
    if isinstance(node, (FieldOf, Coerce)):
        return (node.obj,) if isinstance(node, FieldOf) else (node.node,)
    raise TypeError(type(node).__name__)


def ir_walk(node: IR) -> Iterator[IR]:
    """Every node of the subtree, ``node`` first (depth first, without recursion)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(ir_children(n))


def reads_locals(node: IR) -> bool:
    """Whether the subtree reads a LET name or lambda parameter (a `Var` with ``local``)."""
    return any(isinstance(n, Var) and n.local for n in ir_walk(node))
