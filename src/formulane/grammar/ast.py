"""The formula AST: frozen, slotted nodes, each with the span it came from.

Spans and the ``parenthesized`` flag are excluded from equality, so two ASTs are equal when they
mean the same program: that is what ``parse(print(ast)) == ast`` checks. The flag exists only so
the checker can tell ``-2^2`` (ambiguous) from ``(-2)^2`` (explicit). Names of functions are
stored upper-case; operator spellings are canonical (``=``, ``<>``, ``and``, ``or``, ``not``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Iterator, Union

from ..source import Span

_NOSPAN = Span(0, 0)

#: Canonical binary operators, loosest first (the printer and parser agree on this order).
BINARY_OPERATORS = (
    "??",
    "or",
    "and",
    "=", "<>", "<", "<=", ">", ">=",
    "&",
    "+", "-",
    "*", "/",
    "^",
)
UNARY_OPERATORS = ("not", "-", "+", "%")


@dataclass(frozen=True, slots=True)
class Number:
    value: Decimal
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class String:
    value: str
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Boolean:
    value: bool
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Name:
    """A variable, a LET binding or a lambda parameter. ``{Unit Price}`` gives ``Unit Price``."""

    name: str
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ListLit:
    items: tuple["Node", ...]
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Member:
    """``obj.field`` (record field access)."""

    obj: "Node"
    name: str
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    name_span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Index:
    """``obj[index]``, 1-based."""

    obj: "Node"
    index: "Node"
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Unary:
    """``op`` is one of ``not``, ``-``, ``+``, ``%`` (postfix percent)."""

    op: str
    operand: "Node"
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    op_span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Binary:
    op: str
    left: "Node"
    right: "Node"
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    op_span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Call:
    """``NAME(args...)``; ``name`` is upper-case (``ERROR.TYPE`` keeps its dot)."""

    name: str
    args: tuple["Node", ...]
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    name_span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Lambda:
    """``LAMBDA(x, body)`` or ``x => body`` or ``(acc, x) => body``; only as a call argument."""

    params: tuple[str, ...]
    body: "Node"
    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    param_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Omitted:
    """An argument left out, Excel style: ``TEXTSPLIT(t, ",", , TRUE)``; only in calls."""

    span: Span = field(default=_NOSPAN, compare=False, repr=False)
    parenthesized: bool = field(default=False, compare=False, repr=False)


Node = Union[Number, String, Boolean, Name, ListLit, Member, Index, Unary, Binary, Call, Lambda,
             Omitted]
# BLANK() and null parse to Call("BLANK", ()): one spelling of blank in the AST.


def children(node: Node) -> tuple[Node, ...]:
    """Direct sub-nodes, left to right."""
    if isinstance(node, (Number, String, Boolean, Name, Omitted)):
        return ()
    if isinstance(node, ListLit):
        return node.items
    if isinstance(node, Member):
        return (node.obj,)
    if isinstance(node, Index):
        return (node.obj, node.index)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Lambda):
        return (node.body,)
    raise TypeError(f"not an AST node: {type(node).__name__}")


def walk(node: Node) -> Iterator[Node]:
    """Every node, pre-order, without recursion (depth is bounded elsewhere, but be safe)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))
