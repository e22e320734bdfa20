"""Demotion: model-written Python that is one pure expression becomes a formula, with proof.

Contract: `demote(code, inputs)` reads the code with `ast` (it is never executed), accepts one
statement (an expression, ``print(expr)`` or ``name = expr``) built from arithmetic,
comparisons, ``and/or/not``, conditional expressions, ``round abs min max len sum int float
any all``, the string methods ``upper lower strip startswith endswith replace``, indexing,
slicing, list literals and one-generator comprehensions over the inputs, and translates it into
formula text. It then *certifies* the translation for the job's inputs: a reference evaluator
applies Python's own operators, one vetted operation at a time and under size bounds, to the
concrete input values, the formula engine evaluates the translated formula, and the two
answers must be equal (an int equal to the Number, a float equal to it exactly or as printed,
the same failure for both: ZeroDivisionError ~ #DIV/0!, IndexError ~ #REF!). Anything else
raises `EscalationError` E604 with the reason and the source position, e.g. Python's
``round(2.675, 2)`` is 2.67 on binary floats while ``ROUND`` gives 2.68, so that job is not
demoted. The certificate holds for these inputs on this interpreter's semantics.
"""

from __future__ import annotations

import ast
import operator
import re
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Literal, Mapping, Sequence, cast

from ..jsonshape import is_array
from ..errors import EscalationError

Kind = Literal["number", "bool", "str", "list"]
Equivalence = Literal["exact", "as_printed", "both_fail"]

MAX_NODES = 200
MAX_STEPS = 100_000
MAX_INT_BITS = 4096
MAX_TEXT = 1_000_000
_RESERVED = {"and", "or", "not", "true", "false", "null", "blank", "if", "in", "let", "lambda"}
_SIMPLE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_CMP_TEXT: dict[type[ast.cmpop], str] = {ast.Eq: "=", ast.NotEq: "<>", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
             ast.GtE: ">="}
_CMP_PY: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge}
_ERROR_MATCH = {"ZeroDivisionError": "#DIV/0!", "IndexError": "#REF!"}


@dataclass(frozen=True)
class Demotion:
    """A certified translation: run ``formula`` with ``variables`` to get ``value``."""

    formula: str
    schema: dict[str, str]
    variables: dict[str, Any]
    value: Any
    python_value: str
    equivalence: Equivalence
    inputs_used: tuple[str, ...]


class _Refuse(Exception):
    def __init__(self, message: str, node: ast.AST | None = None) -> None:
        line, col = getattr(node, "lineno", None), getattr(node, "col_offset", 0)
        where = f" (line {line}, column {col + 1})" if line is not None else ""
        super().__init__(message + where)


class _Raises(Exception):
    """The reference evaluation raised, as running the code would have."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


@dataclass
class T:
    """One translated node: formula text plus what the reference evaluator needs."""

    text: str
    kind: Kind
    op: str
    args: tuple["T", ...] = ()
    elem: Kind | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


#: Binding strength of the formula operators we print (higher binds tighter).
_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "concat": 5, "add": 6, "sub": 6, "mul": 7,
         "div": 7, "neg": 8, "pow": 9}


def _paren(t: T) -> str:
    return t.text if t.op in ("lit", "name", "call", "list", "comp") else f"({t.text})"


def _operand(child: T, parent: str, right: bool = False) -> str:
    """Parenthesize only where the formula would otherwise parse differently (or be refused:
    strict formulas reject ``-2^2`` and ``2^3^2`` as ambiguous)."""
    if child.op in ("lit", "name", "call", "list", "comp"):
        if parent in ("pow", "neg") and child.op == "lit" and str(child.text).startswith("-"):
            return f"({child.text})"
        return child.text
    mine, theirs = _PREC.get(child.op, 0), _PREC[parent]
    if parent in ("pow", "neg", "cmp") or mine < theirs or (mine == theirs and right):
        return f"({child.text})"
    return child.text


def _kind_of(value: Any, name: str) -> tuple[Kind, Kind | None]:
    if isinstance(value, bool):
        return "bool", None
    if isinstance(value, (int, float)):
        return "number", None
    if isinstance(value, str):
        return "str", None
    if isinstance(value, (list, tuple)):
        kinds: set[Kind] = {_kind_of(v, name)[0] for v in cast("Sequence[Any]", value)}
        if len(kinds) > 1:
            raise _Refuse(f"input {name!r} mixes {sorted(kinds)}: a formula list has one type")
        elem: Kind = kinds.pop() if kinds else "number"
        if elem == "list":
            raise _Refuse(f"input {name!r} is a list of lists")
        return "list", elem
    raise _Refuse(f"input {name!r} is a {type(value).__name__}; demotion handles numbers, text, "
                  "booleans and lists of them")


_SCHEMA = {"number": "Number", "bool": "Boolean", "str": "Text"}


class _Translator:
    def __init__(self, kinds: dict[str, tuple[Kind, Kind | None]]) -> None:
        self.kinds = kinds
        self.nodes = 0
        self.used: set[str] = set()
        self.lambda_names = 0

    def ref(self, name: str) -> str:
        return name if _SIMPLE.match(name) and name.lower() not in _RESERVED else f"{{{name}}}"

    def fresh(self, python_name: str, scope: dict[str, tuple[str, Kind, Kind | None]]) -> str:
        if _SIMPLE.match(python_name) and python_name.lower() not in _RESERVED \
                and python_name not in self.kinds and python_name not in scope:
            return python_name
        self.lambda_names += 1
        return f"item{self.lambda_names}"

    def expr(self, node: ast.AST, scope: dict[str, tuple[str, Kind, Kind | None]]) -> T:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Refuse(f"more than {MAX_NODES} syntax nodes")
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise _Refuse(f"{type(node).__name__} is not part of a pure expression formula", node)
        return method(node, scope)  # type: ignore[no-any-return]

    # -- leaves ------------------------------------------------------------------------------

    def _Constant(self, node: ast.Constant, scope: Any) -> T:
        v = node.value
        if isinstance(v, bool):
            return T("TRUE" if v else "FALSE", "bool", "lit", extra={"value": v})
        if isinstance(v, int):
            if abs(v) >= 10 ** 30:
                raise _Refuse("integer literal too large for a formula number", node)
            return T(str(v), "number", "lit", extra={"value": v})
        if isinstance(v, float):
            return T(repr(v), "number", "lit", extra={"value": v})
        if isinstance(v, str):
            return T('"' + v.replace('"', '""') + '"', "str", "lit", extra={"value": v})
        raise _Refuse(f"the constant {v!r} has no formula equivalent", node)

    def _Name(self, node: ast.Name, scope: dict[str, tuple[str, Kind, Kind | None]]) -> T:
        if node.id in scope:
            text, kind, elem = scope[node.id]
            return T(text, kind, "name", elem=elem, extra={"name": node.id})
        if node.id not in self.kinds:
            raise _Refuse(f"{node.id!r} is not one of the job's inputs", node)
        self.used.add(node.id)
        kind, elem = self.kinds[node.id]
        return T(self.ref(node.id), kind, "name", elem=elem, extra={"name": node.id})

    def _List(self, node: ast.List, scope: Any) -> T:
        items = [self.expr(e, scope) for e in node.elts]
        kinds: set[Kind] = {i.kind for i in items}
        if len(kinds) > 1 or "list" in kinds:
            raise _Refuse("a list literal must hold values of one scalar type", node)
        elem: Kind = kinds.pop() if kinds else "number"
        return T("[" + ", ".join(i.text for i in items) + "]", "list", "list", tuple(items), elem)

    # -- operators ---------------------------------------------------------------------------

    def _UnaryOp(self, node: ast.UnaryOp, scope: Any) -> T:
        a = self.expr(node.operand, scope)
        if isinstance(node.op, ast.Not):
            self._need(a, "bool", node, "not")
            return T(f"not {_operand(a, 'not')}", "bool", "not", (a,))
        self._need(a, "number", node, "a sign")
        if isinstance(node.op, ast.USub):
            return T(f"-{_operand(a, 'neg')}", "number", "neg", (a,))
        if isinstance(node.op, ast.UAdd):
            return T(a.text, "number", "pos", (a,))
        raise _Refuse("bitwise inversion has no formula equivalent", node)

    def _BinOp(self, node: ast.BinOp, scope: Any) -> T:
        a, b = self.expr(node.left, scope), self.expr(node.right, scope)
        op = type(node.op)
        if op is ast.Add and a.kind == b.kind == "str":
            return T(f"{_operand(a, 'concat')} & {_operand(b, 'concat', True)}", "str", "concat",
                     (a, b))
        if op is ast.Mult and {a.kind, b.kind} == {"str", "number"}:
            s, n = (a, b) if a.kind == "str" else (b, a)
            return T(f"REPT({s.text}, {n.text})", "str", "call", (s, n), extra={"fn": "rept"})
        self._need(a, "number", node, "arithmetic")
        self._need(b, "number", node, "arithmetic")
        symbols: dict[type[ast.operator], str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/",
                                                  ast.Pow: "^"}
        tags: dict[type[ast.operator], str] = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
                                               ast.Pow: "pow", ast.FloorDiv: "floordiv", ast.Mod: "mod"}
        symbol = symbols.get(op)
        tag = tags.get(op)
        if tag is None:
            raise _Refuse(f"operator {type(node.op).__name__} has no formula equivalent", node)
        if tag == "pow":
            if not (isinstance(node.right, ast.Constant) and isinstance(node.right.value, int)
                    and not isinstance(node.right.value, bool) and 0 <= node.right.value <= 1024):
                raise _Refuse("powers need a literal whole exponent between 0 and 1024", node)
        if tag == "floordiv":
            return T(f"INT({_paren(a)} / {_paren(b)})", "number", "call", (a, b),
                     extra={"fn": "floordiv"})
        if tag == "mod":
            return T(f"MOD({a.text}, {b.text})", "number", "call", (a, b), extra={"fn": "mod"})
        return T(f"{_operand(a, tag)} {symbol} {_operand(b, tag, True)}", "number", tag, (a, b))

    def _BoolOp(self, node: ast.BoolOp, scope: Any) -> T:
        parts = [self.expr(v, scope) for v in node.values]
        for p in parts:
            self._need(p, "bool", node, "and/or (Python would return an operand, not a boolean)")
        word = " and " if isinstance(node.op, ast.And) else " or "
        tag = "and" if isinstance(node.op, ast.And) else "or"
        return T(word.join(_operand(p, tag, i > 0) for i, p in enumerate(parts)), "bool",
                 "and" if isinstance(node.op, ast.And) else "or", tuple(parts))

    def _Compare(self, node: ast.Compare, scope: Any) -> T:
        operands = [self.expr(node.left, scope)] + [self.expr(c, scope) for c in node.comparators]
        pieces: list[T] = []
        for op, a, b in zip(node.ops, operands, operands[1:]):
            pieces.append(self._compare_one(op, a, b, node))
        if len(pieces) == 1:
            return pieces[0]
        return T(" and ".join(_operand(p, "and", i > 0) for i, p in enumerate(pieces)), "bool",
                 "and", tuple(pieces))

    def _compare_one(self, op: ast.cmpop, a: T, b: T, node: ast.AST) -> T:
        kind = type(op)
        if kind in (ast.In, ast.NotIn):
            if b.kind == "str" and a.kind == "str":
                text = f"ISNUMBER(FIND({a.text}, {b.text}))"
            elif b.kind == "list" and a.kind == b.elem and a.kind in ("number", "str", "bool"):
                var = self.fresh("candidate", {})
                test = f"EXACT({var}, {a.text})" if a.kind == "str" else \
                    f"{var} = {_operand(a, 'cmp', True)}"
                text = f"ANY({b.text}, {var} => {test})"
            else:
                raise _Refuse("'in' works on text in text or a value in a list of its type", node)
            t = T(text, "bool", "call", (a, b), extra={"fn": "in"})
            if kind is ast.NotIn:
                return T(f"not {text}", "bool", "not", (t,))
            return t
        if kind in (ast.Is, ast.IsNot):
            raise _Refuse("'is' compares object identity, which formulas do not have", node)
        if a.kind != b.kind or a.kind == "list":
            raise _Refuse(f"cannot compare {a.kind} with {b.kind}", node)
        if a.kind == "str":
            if kind not in (ast.Eq, ast.NotEq):
                raise _Refuse("text ordering differs (formulas compare text case-insensitively)",
                              node)
            exact = T(f"EXACT({a.text}, {b.text})", "bool", "cmp", (a, b), extra={"op": ast.Eq})
            return exact if kind is ast.Eq else T(f"not {exact.text}", "bool", "not", (exact,))
        if a.kind == "bool" and kind not in (ast.Eq, ast.NotEq):
            raise _Refuse("booleans can only be compared for equality", node)
        return T(f"{_operand(a, 'cmp')} {_CMP_TEXT[kind]} {_operand(b, 'cmp', True)}", "bool",
                 "cmp", (a, b),
                 extra={"op": kind})

    def _IfExp(self, node: ast.IfExp, scope: Any) -> T:
        c = self.expr(node.test, scope)
        self._need(c, "bool", node, "a condition (Python truthiness is not a formula concept)")
        a, b = self.expr(node.body, scope), self.expr(node.orelse, scope)
        if a.kind != b.kind or (a.kind == "list" and a.elem != b.elem):
            raise _Refuse(f"the two branches give {a.kind} and {b.kind}", node)
        return T(f"IF({c.text}, {a.text}, {b.text})", a.kind, "if", (c, a, b), a.elem)

    # -- calls, methods, indexing ------------------------------------------------------------

    def _Call(self, node: ast.Call, scope: Any) -> T:
        if node.keywords:
            raise _Refuse("keyword arguments have no formula equivalent", node)
        if isinstance(node.func, ast.Attribute):
            return self._method(node, scope)
        if not isinstance(node.func, ast.Name):
            raise _Refuse("only plain function calls can be translated", node)
        fn = node.func.id
        argn = node.args
        if fn in ("sum", "any", "all", "min", "max", "len") and len(argn) == 1 and isinstance(
                argn[0], (ast.GeneratorExp, ast.ListComp)):
            return self._aggregate(fn, argn[0], scope, node)
        args = [self.expr(a, scope) for a in argn]
        if fn == "round" and len(args) in (1, 2):
            self._need(args[0], "number", node, "round")
            digits = _literal_int(argn[1]) if len(args) == 2 else 0
            if digits is None:
                raise _Refuse("round() needs a literal number of digits", node)
            return T(f"ROUND({args[0].text}, {digits})", "number", "call", tuple(args),
                     extra={"fn": "round", "ndigits": digits if len(args) == 2 else None})
        if fn == "abs" and len(args) == 1:
            self._need(args[0], "number", node, "abs")
            return T(f"ABS({args[0].text})", "number", "call", tuple(args), extra={"fn": "abs"})
        if fn in ("min", "max"):
            if len(args) == 1 and args[0].kind == "list" and args[0].elem == "number":
                pass
            elif len(args) >= 2 and all(a.kind == "number" for a in args):
                pass
            else:
                raise _Refuse(f"{fn}() is translated for numbers only", node)
            return T(f"{fn.upper()}({', '.join(a.text for a in args)})", "number", "call",
                     tuple(args), extra={"fn": fn})
        if fn == "len" and len(args) == 1:
            if args[0].kind == "str":
                return T(f"LEN({args[0].text})", "number", "call", tuple(args), extra={"fn": "len"})
            if args[0].kind == "list":
                return T(f"COUNTA({args[0].text})", "number", "call", tuple(args),
                         extra={"fn": "len"})
        if fn == "sum" and len(args) == 1 and args[0].kind == "list" and args[0].elem == "number":
            return T(f"SUM({args[0].text})", "number", "call", tuple(args), extra={"fn": "sum"})
        if fn in ("any", "all") and len(args) == 1 and args[0].kind == "list" \
                and args[0].elem == "bool":
            return T(f"{fn.upper()}({args[0].text}, flag => flag)", "bool", "call", tuple(args),
                     extra={"fn": fn})
        if fn == "int" and len(args) == 1 and args[0].kind == "number":
            return T(f"TRUNC({args[0].text})", "number", "call", tuple(args), extra={"fn": "int"})
        if fn == "float" and len(args) == 1 and args[0].kind == "number":
            return T(args[0].text, "number", "call", tuple(args), extra={"fn": "float"})
        if fn in ("str", "repr", "format", "f"):
            raise _Refuse("number formatting differs between Python and formulas", node)
        raise _Refuse(f"{fn}() with these arguments has no formula equivalent", node)

    def _method(self, node: ast.Call, scope: Any) -> T:
        assert isinstance(node.func, ast.Attribute)
        target = self.expr(node.func.value, scope)
        name = node.func.attr
        args = [self.expr(a, scope) for a in node.args]
        if target.kind != "str":
            raise _Refuse(f".{name}() is only translated on text", node)
        simple = {"upper": "UPPER", "lower": "LOWER", "strip": "TRIM"}
        if name in simple and not args:
            return T(f"{simple[name]}({target.text})", "str", "call", (target,),
                     extra={"fn": name})
        if name in ("startswith", "endswith") and len(args) == 1 and args[0].kind == "str":
            side = "LEFT" if name == "startswith" else "RIGHT"
            text = f"EXACT({side}({target.text}, LEN({args[0].text})), {args[0].text})"
            return T(text, "bool", "call", (target, args[0]), extra={"fn": name})
        if name == "replace" and len(args) == 2 and all(a.kind == "str" for a in args):
            return T(f"SUBSTITUTE({target.text}, {args[0].text}, {args[1].text})", "str", "call",
                     (target, *args), extra={"fn": "replace"})
        raise _Refuse(f"text method .{name}() with these arguments has no formula equivalent",
                      node)

    def _Subscript(self, node: ast.Subscript, scope: Any) -> T:
        base = self.expr(node.value, scope)
        if base.kind not in ("str", "list"):
            raise _Refuse("only text and lists can be indexed", node)
        if isinstance(node.slice, ast.Slice):
            return self._slice(base, node.slice, scope, node)
        index = self.expr(node.slice, scope)
        self._need(index, "number", node, "an index")
        size = f"LEN({base.text})" if base.kind == "str" else f"COUNTA({base.text})"
        lit = _literal_int(node.slice)
        if lit is not None:
            position = str(lit + 1) if lit >= 0 else f"{size} - {-lit - 1}" if lit < -1 else size
        else:
            position = f"{_paren(index)} + 1"
        if base.kind == "str":
            return T(f"MID({base.text}, {position}, 1)", "str", "call", (base, index),
                     extra={"fn": "index"})
        return T(f"{_paren(base)}[{position}]", base.elem or "number", "call", (base, index),
                 extra={"fn": "index"})

    def _slice(self, base: T, sl: ast.Slice, scope: Any, node: ast.AST) -> T:
        if sl.step is not None:
            raise _Refuse("slices with a step have no formula equivalent", node)
        lo, hi = _literal_int(sl.lower), _literal_int(sl.upper)
        if (sl.lower is not None and lo is None) or (sl.upper is not None and hi is None):
            raise _Refuse("slice bounds must be literal whole numbers", node)
        size = f"LEN({base.text})" if base.kind == "str" else f"COUNTA({base.text})"
        if base.kind == "str":
            if lo is None and hi is not None and hi >= 0:
                text = f"LEFT({base.text}, {hi})"
            elif lo is None and hi is not None:
                text = f"LEFT({base.text}, MAX(0, {size} - {-hi}))"
            elif lo is not None and lo < 0 and hi is None:
                text = f"RIGHT({base.text}, {-lo})"
            elif lo is not None and lo >= 0 and hi is None:
                text = f"MID({base.text}, {lo + 1}, {size})"
            elif lo is not None and hi is not None and 0 <= lo <= hi:
                text = f"MID({base.text}, {lo + 1}, {hi - lo})"
            else:
                raise _Refuse("this slice has no simple formula equivalent", node)
            return T(text, "str", "call", (base,), extra={"fn": "slice", "lo": lo, "hi": hi})
        if lo is None and hi is not None and hi >= 0:
            text = f"TAKE({base.text}, {hi})"
        elif lo is not None and lo >= 0 and hi is None:
            text = f"DROP({base.text}, {lo})"
        else:
            raise _Refuse("list slices are translated as [:n] and [n:] only", node)
        return T(text, "list", "call", (base,), base.elem, extra={"fn": "slice", "lo": lo,
                                                                   "hi": hi})

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp,
                       scope: dict[str, tuple[str, Kind, Kind | None]]) -> tuple[T, T | None, T, str]:
        if len(node.generators) != 1:
            raise _Refuse("only one 'for' per comprehension", node)
        gen = node.generators[0]
        if gen.is_async or not isinstance(gen.target, ast.Name):
            raise _Refuse("the comprehension target must be one plain name", node)
        source = self.expr(gen.iter, scope)
        if source.kind != "list" or source.elem is None:
            raise _Refuse("comprehensions must loop over a list input", node)
        var = self.fresh(gen.target.id, scope)
        inner: dict[str, tuple[str, Kind, Kind | None]] = {**scope, gen.target.id: (var, source.elem, None)}
        conds = [self.expr(c, inner) for c in gen.ifs]
        for c in conds:
            self._need(c, "bool", node, "a comprehension filter")
        cond = None
        if conds:
            cond = conds[0] if len(conds) == 1 else T(
                " and ".join(_operand(c, "and", i > 0) for i, c in enumerate(conds)), "bool",
                "and", tuple(conds))
        elt = self.expr(node.elt, inner)
        return source, cond, elt, var

    def _listing(self, node: ast.ListComp | ast.GeneratorExp,
                 scope: Any) -> tuple[T, T, str, str]:
        """(the list the comprehension builds, its element, FILTER-ed source text, var)."""
        source, cond, elt, var = self._comprehension(node, scope)
        if elt.kind == "list":
            raise _Refuse("comprehensions must produce scalar values", node)
        base = source.text if cond is None else f"FILTER({source.text}, {var} => {cond.text})"
        is_identity = elt.op == "name" and elt.text == var
        listed = T(base if is_identity else f"MAP({base}, {var} => {elt.text})", "list", "comp",
                   (source, elt) + ((cond,) if cond else ()), elt.kind,
                   extra={"var_name": _target(node), "has_cond": cond is not None})
        return listed, elt, base, var

    def _ListComp(self, node: ast.ListComp, scope: Any) -> T:
        return self._listing(node, scope)[0]

    def _aggregate(self, fn: str, node: ast.GeneratorExp | ast.ListComp, scope: Any,
                   call: ast.AST) -> T:
        listed, elt, base, var = self._listing(node, scope)
        if fn in ("any", "all"):
            self._need(elt, "bool", call, f"{fn}()")
            return T(f"{fn.upper()}({base}, {var} => {elt.text})", "bool", "call", (listed,),
                     extra={"fn": fn})
        if fn == "len":
            return T(f"COUNTA({listed.text})", "number", "call", (listed,), extra={"fn": "len"})
        self._need(elt, "number", call, f"{fn}()")
        return T(f"{fn.upper()}({listed.text})", "number", "call", (listed,), extra={"fn": fn})

    def _GeneratorExp(self, node: ast.GeneratorExp, scope: Any) -> T:
        raise _Refuse("a generator is translated only inside sum/min/max/any/all/len", node)

    def _need(self, t: T, kind: Kind, node: ast.AST, what: str) -> None:
        if t.kind != kind:
            raise _Refuse(f"{what} needs {kind}, got {t.kind}", node)


def _target(node: ast.ListComp | ast.GeneratorExp) -> str:
    return node.generators[0].target.id  # type: ignore[attr-defined,no-any-return]


def _literal_int(node: ast.AST | None) -> int | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


# ---------------------------------------------------------------------------- certification


class _Reference:
    """Python's semantics for the translated operations, on concrete values, with bounds.

    This is not `eval`: only the operations of the tree above exist here, each applied with
    Python's own operator to plain values (int, float, bool, str, list).
    """

    def __init__(self, inputs: Mapping[str, Any]) -> None:
        self.inputs = inputs
        self.steps = 0

    def ev(self, t: T, env: dict[str, Any]) -> Any:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Refuse(f"more than {MAX_STEPS} evaluation steps to certify")
        try:
            return self._ev(t, env)
        except (ZeroDivisionError, IndexError, ValueError, OverflowError, TypeError) as exc:
            raise _Raises(type(exc).__name__) from None

    def _ev(self, t: T, env: dict[str, Any]) -> Any:
        op = t.op
        if op == "lit":
            return t.extra["value"]
        if op == "name":
            name = t.extra["name"]
            return env[name] if name in env else self.inputs[name]
        if op == "list":
            return [self.ev(a, env) for a in t.args]
        if op == "comp":
            return list(self._iterate(t, env))
        if op == "if":
            return self.ev(t.args[1], env) if self.ev(t.args[0], env) else self.ev(t.args[2], env)
        if op in ("and", "or"):
            value: Any = None
            for arg in t.args:
                value = self.ev(arg, env)
                if (op == "and" and not value) or (op == "or" and value):
                    return value
            return value
        if op == "not":
            return not self.ev(t.args[0], env)
        args = [self.ev(a, env) for a in t.args] if op != "call" or t.extra["fn"] not in (
            "any", "all") else []
        if op in ("add", "sub", "mul", "div", "pow"):
            return _bounded(_arith(op, args[0], args[1]))
        if op == "neg":
            return -args[0]
        if op == "pos":
            return +args[0]
        if op == "concat":
            return _text(args[0] + args[1])
        if op == "cmp":
            return _CMP_PY[t.extra["op"]](args[0], args[1])
        if op == "call":
            return self._call(t, args, env)
        raise _Refuse(f"no reference semantics for {op}")

    def _iterate(self, t: T, env: dict[str, Any]) -> Any:
        source = self.ev(t.args[0], env)
        name = t.extra["var_name"]
        for item in source:
            inner = {**env, name: item}
            if t.extra["has_cond"] and not self.ev(t.args[2], inner):
                continue
            yield self.ev(t.args[1], inner)

    def _call(self, t: T, args: list[Any], env: dict[str, Any]) -> Any:
        fn = t.extra["fn"]
        if fn in ("any", "all"):
            arg = t.args[0]
            items = self._iterate(arg, env) if arg.op == "comp" else iter(self.ev(arg, env))
            return any(items) if fn == "any" else all(items)
        if fn == "rept":
            text, times = args
            if isinstance(times, int) and times > 0 and len(text) * times > MAX_TEXT:
                raise _Refuse("text repetition too large to certify")
            return text * times
        if fn == "floordiv":
            return _bounded(args[0] // args[1])
        if fn == "mod":
            return args[0] % args[1]
        if fn == "round":
            return round(args[0]) if t.extra["ndigits"] is None else round(args[0],
                                                                            t.extra["ndigits"])
        simple: dict[str, Callable[..., Any]] = {
            "abs": abs, "len": len, "int": int, "float": float, "upper": str.upper,
            "lower": str.lower, "strip": str.strip, "startswith": str.startswith,
            "endswith": str.endswith, "replace": str.replace, "sum": sum}
        if fn in simple:
            return simple[fn](*args)
        if fn in ("min", "max"):
            return (min if fn == "min" else max)(*args)
        if fn == "in":
            return args[0] in args[1]
        if fn == "index":
            return args[0][args[1]]
        if fn == "slice":
            return args[0][t.extra["lo"]:t.extra["hi"]]
        raise _Refuse(f"no reference semantics for {fn}")


def _arith(op: str, a: Any, b: Any) -> Any:
    if isinstance(a, bool) or isinstance(b, bool):
        raise TypeError("arithmetic on booleans")
    if op == "mul" and isinstance(a, int) and isinstance(b, int) \
            and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        raise _Refuse("integers too large to certify")
    if op == "pow" and isinstance(a, int) and b * max(1, a.bit_length()) > MAX_INT_BITS:
        raise _Refuse("power too large to certify")
    ops: dict[str, Callable[[Any, Any], Any]] = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
                                                 "div": operator.truediv, "pow": operator.pow}  # pyright: ignore[reportUnknownMemberType]  # typeshed leaves truediv/pow's operands unannotated
    return ops[op](a, b)


def _bounded(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise _Refuse("integer result too large to certify")
    return value


def _text(value: str) -> str:
    if len(value) > MAX_TEXT:
        raise _Refuse("text too long to certify")
    return value


def _engine_value(value: Any) -> Any:
    if isinstance(value, bool) or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return Decimal(repr(value))
    return [_engine_value(v) for v in value]


def _schema(kind: Kind, elem: Kind | None) -> str:
    return f"List[{_SCHEMA[elem or 'number']}]" if kind == "list" else _SCHEMA[kind]


def _same(py: Any, fv: Any) -> Equivalence | None:
    """How the formula's value matches Python's, or None when it does not."""
    if isinstance(py, bool):
        return "exact" if isinstance(fv, bool) and fv == py else None
    if isinstance(py, int):
        return "exact" if isinstance(fv, (Decimal, int)) and not isinstance(fv, bool) \
            and Decimal(py) == fv else None
    if isinstance(py, float):
        if not isinstance(fv, (Decimal, int)) or isinstance(fv, bool):
            return None
        if Decimal(py) == fv:
            return "exact"
        return "as_printed" if Decimal(repr(py)) == fv else None
    if isinstance(py, str):
        return "exact" if fv == py else None
    if is_array(py):
        if not isinstance(fv, (list, tuple)) or len(cast("Sequence[Any]", fv)) != len(py):
            return None
        found: list[Equivalence | None] = [_same(a, b) for a, b in zip(py, cast("Sequence[Any]", fv))]
        if any(f is None for f in found):
            return None
        return "as_printed" if "as_printed" in found else "exact"
    return None


def _expression(code: str) -> ast.expr:
    try:
        tree = ast.parse(code, "<code>", mode="exec")
    except SyntaxError as exc:
        raise _Refuse(f"not valid Python: {exc.msg} (line {exc.lineno})") from None
    if len(tree.body) != 1:
        raise _Refuse(f"{len(tree.body)} statements; only one expression can become a formula")
    stmt = tree.body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name):
        return stmt.value
    if isinstance(stmt, ast.Expr):
        value = stmt.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                and value.func.id == "print":
            if len(value.args) != 1 or value.keywords:
                raise _Refuse("print() of more than one value prints text formatting", value)
            return value.args[0]
        return value
    raise _Refuse(f"a {type(stmt).__name__} statement is not a pure expression", stmt)


def translate(code: str, inputs: Mapping[str, Any]) -> tuple[str, dict[str, str], tuple[str, ...]]:
    """Formula text, schema and input names for ``code`` (no certification, no engine)."""
    try:
        expr = _expression(code)
        kinds: dict[str, tuple[Kind, Kind | None]] = {}
        for name, value in inputs.items():
            try:
                kinds[name] = _kind_of(value, name)
            except _Refuse:
                continue  # unusable inputs only matter if the code uses them
        translator = _Translator(kinds)
        for name in {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}:
            if name in inputs and name not in kinds:
                _kind_of(inputs[name], name)  # raises with the reason
        t = translator.expr(expr, {})
    except _Refuse as exc:
        raise EscalationError(f"cannot translate code to a formula: {exc}", code="E604") from None
    used = tuple(sorted(translator.used))
    return t.text, {n: _schema(*kinds[n]) for n in used}, used


def demote(code: str, inputs: Mapping[str, Any], *,
           python_version: str | None = None) -> Demotion:
    """Translate and certify; raises E604 with the reason when the answer would differ."""
    host = "%d.%d" % sys.version_info[:2]
    if python_version and ".".join(python_version.split(".")[:2]) != host:
        raise EscalationError(f"cannot certify Python {python_version} semantics on a {host} "
                              "host", code="E604")
    import formulane

    try:
        expr = _expression(code)
        kinds: dict[str, tuple[Kind, Kind | None]] = {}
        for name in {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}:
            if name in inputs:
                kinds[name] = _kind_of(inputs[name], name)
        translator = _Translator(kinds)
        t = translator.expr(expr, {})
        used = tuple(sorted(translator.used))
        schema = {n: _schema(*kinds[n]) for n in used}
        variables = {n: _engine_value(inputs[n]) for n in used}
        try:
            program = formulane.compile(t.text, schema)
            value = program.evaluate(variables)
        except formulane.FormulaError as exc:
            raise _Refuse(f"the translation {t.text!r} does not run as a formula: "
                          f"[{exc.code}] {exc.message}") from None
        try:
            py = _Reference(inputs).ev(t, {})
        except _Raises as raised:
            code_value = getattr(value, "code", None)
            if code_value is not None and _ERROR_MATCH.get(raised.name) == code_value:
                return Demotion(t.text, schema, variables, value, raised.name, "both_fail", used)
            raise _Refuse(f"running the code raises {raised.name}; the formula gives "
                          f"{value!r}") from None
        match = _same(py, value)
        if match is None:
            why = ""
            if isinstance(py, (float, int)) and "ROUND(" in t.text:
                why = " (Python rounds binary floats half to even; ROUND rounds decimals half " \
                      "away from zero)"
            elif isinstance(py, float):
                why = " (Python computes in binary floating point; formulas in decimal)"
            raise _Refuse(f"the formula {t.text!r} gives {_show(value)} but Python gives "
                          f"{py!r} for these inputs{why}")
        return Demotion(t.text, schema, variables, value, repr(py), match, used)
    except _Refuse as exc:
        raise EscalationError(f"cannot translate code to a formula: {exc}", code="E604") from None


def _show(value: Any) -> str:
    if isinstance(value, Decimal):
        return format(value, "f") if abs(value) < Decimal("1e20") else str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in cast("Sequence[Any]", value)) + "]"
    code = getattr(value, "code", None)
    return code if code is not None else repr(value)
