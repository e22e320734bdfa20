"""Short constructors for expected ASTs in the grammar tests (spans are ignored by equality)."""

from __future__ import annotations

from decimal import Decimal

from formulane.grammar.ast import (
    Binary, Boolean, Call, Index, Lambda, ListLit, Member, Name, Node, Number, String, Unary,
)


def num(text: str | int) -> Number:
    return Number(Decimal(str(text)))


def s(value: str) -> String:
    return String(value)


def b(value: bool) -> Boolean:
    return Boolean(value)


def n(name: str) -> Name:
    return Name(name)


def bi(op: str, left: Node, right: Node) -> Binary:
    return Binary(op, left, right)


def un(op: str, operand: Node) -> Unary:
    return Unary(op, operand)


def call(name: str, *args: Node) -> Call:
    return Call(name, tuple(args))


def lst(*items: Node) -> ListLit:
    return ListLit(tuple(items))


def mem(obj: Node, name: str) -> Member:
    return Member(obj, name)


def idx(obj: Node, index: Node) -> Index:
    return Index(obj, index)


def lam(params: tuple[str, ...] | str, body: Node) -> Lambda:
    return Lambda((params,) if isinstance(params, str) else params, body)


BLANK = Call("BLANK", ())
