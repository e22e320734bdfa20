"""The canonical printer: AST to formula text.

Contract: ``print_formula(node)`` returns one canonical spelling (upper-case function names,
``=`` ``<>`` ``and`` ``or`` ``not`` ``??``, one space around binary operators, ``", "`` between
arguments, double-quoted strings, braces only where a name needs them, plain decimal numbers,
minimal parentheses) such that ``parse(print_formula(ast)) == ast`` for every AST the parser
can produce. Three forms are always parenthesized although precedence would not require it, so
strict mode never sees an ambiguous form after printing: a signed left operand of ``^``
(``(-2) ^ 2``), a ``^`` on the left of ``^`` (``(2 ^ 3) ^ 2``) and a comparison on the left of
a comparison (``(a < b) = c``). Lambdas print as ``x => body`` or ``(a, b) => body``. An
omitted argument prints as nothing: ``TEXTSPLIT(t, ",", , TRUE)``, ``IF(c, 1, )``. The
printer walks the tree with an explicit stack, so no AST depth can make it recurse. It raises
ValueError for nodes that have no spelling (a name containing ``}``, an empty name, a NaN or
infinite number, an invalid function name, an omitted argument outside a call's arguments or
as a call's only argument, which would read back as no argument).
"""

from __future__ import annotations

import re
from decimal import Decimal

from ..source import ascii_upper
from typing import Union

from .ast import (
    Binary, Boolean, Call, Index, Lambda, ListLit, Member, Name, Node, Number, Omitted, String,
    Unary, children,
)

__all__ = ["print_formula", "to_source", "format_number", "format_name", "format_string",
           "function_name", "leaf_text", "lambda_head", "needs_parens", "operand_levels",
           "LOOSEST"]

# Binding strength, loosest first; the parser's grammar layers in the same order.
_LAMBDA, _COALESCE, _OR, _AND, _NOT, _CMP, _CONCAT, _ADD, _MUL, _POW = range(10)
_PREFIX, _POSTFIX, _ATOM = 10, 11, 12
_BINARY_LEVEL: dict[str, int] = {
    "??": _COALESCE, "or": _OR, "and": _AND,
    "=": _CMP, "<>": _CMP, "<": _CMP, "<=": _CMP, ">": _CMP, ">=": _CMP,
    "&": _CONCAT, "+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL, "^": _POW,
}
# Matched the way the lexer matches keywords (re.IGNORECASE, so "falſe" is a keyword too).
_KEYWORD = re.compile(r"and|or|not|true|false|null", re.IGNORECASE)
_IDENT = re.compile(r"[^\W\d]\w*")
_FUNCTION = re.compile(r"[^\W\d]\w*(?:\.\w+){0,3}")  # as FUNCNAME in formula.lark
#: Plain notation is used while it needs at most this many zeros beyond the digits.
_MAX_PADDING_ZEROS = 20

# A work item is text to emit, or a node to print with the minimum binding strength its
# position needs.
_Item = Union[str, tuple[Node, int]]


#: The binding strength a whole formula, an argument or a list item needs: anything goes.
LOOSEST = _LAMBDA


def _level(node: Node) -> int:
    if isinstance(node, Binary):
        return _BINARY_LEVEL[node.op]
    if isinstance(node, Unary):
        return {"not": _NOT, "%": _POSTFIX}.get(node.op, _PREFIX)
    if isinstance(node, Lambda):
        return _LAMBDA
    if isinstance(node, (Member, Index)):
        return _POSTFIX
    return _ATOM


def format_number(value: Decimal) -> str:
    """Shortest plain decimal for ``value``; exponent form only for very large/small values."""
    if not isinstance(value, Decimal) or not value.is_finite():
        raise ValueError(f"cannot print the number {value!r}")
    sign, digit_tuple, exponent = value.as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    if not digits:
        return "0"
    exp = int(exponent)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)  # drop trailing zeros: normalize without a context
    digits = stripped
    minus = "-" if sign else ""
    if 0 <= exp <= _MAX_PADDING_ZEROS:
        return minus + digits + "0" * exp
    point = len(digits) + exp
    if exp < 0 and point > 0:
        return minus + digits[:point] + "." + digits[point:]
    if exp < 0 and -point < _MAX_PADDING_ZEROS:
        return minus + "0." + "0" * -point + digits
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{minus}{mantissa}E{point - 1:+d}"


def format_name(name: str) -> str:
    """A name as written in a formula: bare if it is a plain identifier, else ``{braced}``."""
    if _IDENT.fullmatch(name) and not _KEYWORD.fullmatch(name):
        return name
    if not name or "}" in name:
        raise ValueError(f"the name {name!r} cannot be written in a formula")
    return "{" + name + "}"


def format_string(value: str) -> str:
    """A text literal: double-quoted, ``"`` doubled."""
    return '"' + value.replace('"', '""') + '"'


def function_name(name: str) -> str:
    """A function name as printed (upper-case); ValueError if it cannot be written."""
    upper = ascii_upper(name)
    if not _FUNCTION.fullmatch(upper):
        raise ValueError(f"cannot print a call to {name!r}")
    return upper


def _omitted_outside_call(node: Node) -> ValueError:
    return ValueError("an omitted argument can only be an argument of a call with two or more "
                      "argument slots")


def needs_parens(node: Node, min_level: int) -> bool:
    """Whether ``node`` must be parenthesized where a binding strength of ``min_level`` is
    needed (the levels come from `operand_levels`; a whole formula needs `LOOSEST`)."""
    return _level(node) < min_level


def operand_levels(node: Node) -> tuple[int, ...]:
    """The binding strength each child of ``node`` needs, in ``ast.children`` order."""
    if isinstance(node, Binary):
        level = _BINARY_LEVEL[node.op]
        # Ambiguous left operands are always parenthesized: (-2) ^ 2, (2 ^ 3) ^ 2, (a < b) = c.
        return (_ATOM + 1 if _ambiguous_left(node.op, node.left) else level, level + 1)
    if isinstance(node, Unary):
        if node.op == "%":
            return (_postfix_operand(node.operand)[1],)
        return (_NOT,) if node.op == "not" else (_PREFIX,)
    if isinstance(node, Member):
        return (_postfix_operand(node.obj)[1],)
    if isinstance(node, Index):
        return (_POSTFIX, _LAMBDA)
    if isinstance(node, (Call, ListLit)):
        return (_LAMBDA,) * len(children(node))
    if isinstance(node, Lambda):
        return (_LAMBDA,)
    return ()


def leaf_text(node: Node) -> str:
    """The canonical spelling of a leaf (Number, String, Boolean, Name); TypeError otherwise."""
    if isinstance(node, Number):
        return format_number(node.value)
    if isinstance(node, String):
        return format_string(node.value)
    if isinstance(node, Boolean):
        return "TRUE" if node.value else "FALSE"
    if isinstance(node, Name):
        return format_name(node.name)
    raise TypeError(f"not a leaf: {type(node).__name__}")


def lambda_head(node: Lambda) -> str:
    """``x`` or ``(a, b)``: what comes before ``=>``."""
    params = ", ".join(format_name(p) for p in node.params)
    return params if len(node.params) == 1 else f"({params})"


def _expand(node: Node, min_level: int) -> list[_Item]:
    """The items that print ``node`` (children still unexpanded), parenthesized if needed."""
    items: list[_Item]
    levels = operand_levels(node)
    if isinstance(node, (Number, String, Boolean, Name)):
        items = [leaf_text(node)]
    elif isinstance(node, ListLit):
        items = ["["] + _joined(node.items) + ["]"]
    elif isinstance(node, Call):
        if len(node.args) == 1 and isinstance(node.args[0], Omitted):
            raise _omitted_outside_call(node)
        items = [function_name(node.name) + "("] + _joined(node.args, omit=True) + [")"]
    elif isinstance(node, Member):
        items = [(node.obj, levels[0]), "." + format_name(node.name)]
    elif isinstance(node, Index):
        items = [(node.obj, levels[0]), "[", (node.index, levels[1]), "]"]
    elif isinstance(node, Unary):
        if node.op == "%":
            items = [(node.operand, levels[0]), "%"]
        else:
            items = ["not " if node.op == "not" else node.op, (node.operand, levels[0])]
    elif isinstance(node, Binary):
        items = [(node.left, levels[0]), f" {node.op} ", (node.right, levels[1])]
    elif isinstance(node, Lambda):
        items = [lambda_head(node) + " => ", (node.body, levels[0])]
    elif isinstance(node, Omitted):
        raise _omitted_outside_call(node)
    else:
        raise TypeError(f"not an AST node: {type(node).__name__}")
    if _level(node) < min_level:
        return ["(", *items, ")"]
    return items


def _ambiguous_left(op: str, left: Node) -> bool:
    """Left operands the strict checker calls ambiguous unless parenthesized (E206)."""
    if op == "^":
        return (isinstance(left, Unary) and left.op in ("-", "+")) or (
            isinstance(left, Binary) and left.op == "^")
    return (_BINARY_LEVEL[op] == _CMP and isinstance(left, Binary)
            and _BINARY_LEVEL[left.op] == _CMP)


def _postfix_operand(node: Node) -> tuple[Node, int]:
    # A bare number would swallow the following '.' or '%' ("1.x", "15%" folds to 0.15).
    return (node, _ATOM + 1) if isinstance(node, Number) else (node, _POSTFIX)


def _joined(nodes: tuple[Node, ...], omit: bool = False) -> list[_Item]:
    items: list[_Item] = []
    for i, child in enumerate(nodes):
        if i:
            items.append(", ")
        if omit and isinstance(child, Omitted):
            continue  # an omitted argument is the empty text between its commas
        items.append((child, _LAMBDA))
    return items


def print_formula(node: Node) -> str:
    """The canonical source text of ``node``; see the module docstring for the guarantees."""
    out: list[str] = []
    work: list[_Item] = [(node, _LAMBDA)]
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
        else:
            work.extend(reversed(_expand(*item)))
    return "".join(out)


to_source = print_formula
