"""Positioned `ast` node builders for the code generator (`codegen`), and its value record.

Every node class here carries a fixed source position, so a module built from them compiles
without `ast.fix_missing_locations`. The builders take names the generator made
(`codegen.NAME_PATTERN`) and constants; nothing here reads or produces source text.
"""

from __future__ import annotations

import ast
from typing import Any, ClassVar, NamedTuple

from .compile import _NOT_CONST


def _located(cls: type) -> type:
    """An `ast` node class whose instances carry a fixed source position (line 1): the
    compiler needs one on every statement and expression, and setting it per node with
    `ast.fix_missing_locations` costs more than building the tree."""
    return type(cls.__name__, (cls,), {"lineno": 1, "col_offset": 0, "end_lineno": 1,
                                      "end_col_offset": 0, "__module__": __name__})


class _N:
    """The node classes this module builds (subclasses of the `ast` ones, positioned)."""

    If: ClassVar[type[ast.If]]
    BoolOp: ClassVar[type[ast.BoolOp]]
    BinOp: ClassVar[type[ast.BinOp]]
    IfExp: ClassVar[type[ast.IfExp]]
    UnaryOp: ClassVar[type[ast.UnaryOp]]
    Try: ClassVar[type[ast.Try]]
    ExceptHandler: ClassVar[type[ast.ExceptHandler]]
    Expr: ClassVar[type[ast.Expr]]
    Compare: ClassVar[type[ast.Compare]]
    Tuple: ClassVar[type[ast.Tuple]]
    Return: ClassVar[type[ast.Return]]
    Subscript: ClassVar[type[ast.Subscript]]
    Name: ClassVar[type[ast.Name]]
    Assign: ClassVar[type[ast.Assign]]
    Raise: ClassVar[type[ast.Raise]]
    List: ClassVar[type[ast.List]]
    FunctionDef: ClassVar[type[ast.FunctionDef]]
    Constant: ClassVar[type[ast.Constant]]
    Call: ClassVar[type[ast.Call]]
    arg: ClassVar[type[ast.arg]]


for _name in ("If", "BoolOp", "BinOp", "IfExp", "UnaryOp", "Try", "ExceptHandler", "Expr",
              "Compare", "Tuple", "Return", "Subscript", "Name", "Assign", "Raise", "List",
              "FunctionDef", "Constant", "Call", "arg"):
    setattr(_N, _name, _located(getattr(ast, _name)))


class _V(NamedTuple):
    """A generated value: its expression, whether it may hold an error value, its Number
    representation when known ('int' or 'dec'), and its constant value when folded."""

    expr: ast.expr
    maybe: bool
    kind: str | None = None
    value: Any = _NOT_CONST


# ------------------------------------------------------------------------------ ast helpers


# Nodes are built with positional fields (keyword construction is several times slower).
_LOAD, _STORE = ast.Load(), ast.Store()


def _load(name: str) -> ast.Name:
    return _N.Name(name, _LOAD)


def _store(name: str) -> ast.Name:
    return _N.Name(name, _STORE)


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return _N.Assign([_N.Name(name, _STORE)], value)


def _call(fn: ast.expr, *args: ast.expr) -> ast.Call:
    return _N.Call(fn, list(args), [])


def _cmp(left: ast.expr, op: ast.cmpop, right: ast.expr) -> ast.Compare:
    return _N.Compare(left, [op], [right])


def _const(value: Any) -> ast.Constant:
    return _N.Constant(value)


def _atom(expr: ast.expr) -> bool:
    return isinstance(expr, (ast.Name, ast.Constant))


def _join(a: str | None, b: str | None) -> str | None:
    return a if a == b else None


def _function(name: str, params: list[str], body: list[ast.stmt],
              defaults: list[ast.expr] | None = None, vararg: str | None = None) -> ast.FunctionDef:
    fields: dict[str, Any] = dict(
        name=name,
        args=ast.arguments(posonlyargs=[], args=[_N.arg(arg=p) for p in params],
                           vararg=_N.arg(arg=vararg) if vararg else None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=defaults or []),
        body=body, decorator_list=[], returns=None, type_comment=None)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
        fields["type_params"] = []
    return _N.FunctionDef(**fields)
