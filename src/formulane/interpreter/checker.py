"""The checker: AST + schema + profile -> typed, resolved IR, or diagnostics.

It resolves names (schema variables, LET names, lambda parameters) to frame slots, picks one
overload per call (generic signatures unify left to right; lambda parameters take their types
from earlier arguments), enforces nullability (strict: a possibly-blank value must be handled;
``IF(ISBLANK(x), ..., x)`` narrows), makes excel-profile coercions explicit, flags ambiguous
precedence (``-2^2``, ``2^3^2``, ``1<2<3``: errors in strict, warnings in excel), and computes
a static cost bound. It never mutates the AST and collects up to ``max_diagnostics`` problems,
each with a span, a hint and machine-applicable fixes where one exists.
"""

from __future__ import annotations

import difflib
from decimal import Decimal
from typing import Mapping

from ..errors import CheckError, Diagnostic, Fix, LimitExceeded
from ..functions.operators import COMPARISONS
from ..functions.registry import Registry
from ..grammar import ast
from ..limits import Limits
from ..source import Span, ascii_upper
from ..types import (
    ANY, BOOLEAN, NEVER, NUMBER, TEXT, Type, join, list_of, non_null, optional,
)
from ..values import MAX_NUMBER
from . import ir
from .ir import IR
from .serials import SERIAL_KINDS
from .overloads import FAIL_NULLABLE, OverloadResolver, name_source, per_char_cost  # noqa: F401

_UNARY_SPECS = {"-": "NEG", "+": "POS", "%": "%", "not": "NOT"}
_BINARY_SPECS = {"and": "OP_AND", "or": "OP_OR"}

#: Operators a ``??`` default is easily read as binding tighter than (issue 16 item 6).
#: The conditional aggregates, which read error values inside their ranges (excel profile).
_CRITERIA_FAMILY = frozenset(("COUNTIF", "SUMIF", "AVERAGEIF", "COUNTIFS", "SUMIFS",
                              "AVERAGEIFS", "MAXIFS", "MINIFS"))
#: Functions whose arrays' texts and logicals are read, not skipped (excel profile).
_NONNUMERIC_REFUSED = frozenset(("GCD", "LCM", "MULTINOMIAL"))
_COALESCE_TRAP = frozenset({"+", "-", "*", "/", "^", "&"})
#: Cash-flow functions -> the position of their values list, which may be a mixed array.
_CASH_FLOWS = {"IRR": 0, "MIRR": 0, "XIRR": 0, "XNPV": 1}


class _Abort(Exception):
    """Too many diagnostics: stop checking."""


class Scope:
    """Names visible at a point: locals (LET, lambda params) over the schema, with narrowing."""

    __slots__ = ("bindings",)

    def __init__(self, bindings: Mapping[str, tuple[int, Type, bool]]) -> None:
        self.bindings = dict(bindings)

    def child(self, **updates: tuple[int, Type, bool]) -> "Scope":
        merged = dict(self.bindings)
        merged.update(updates)
        return Scope(merged)

    def narrowed(self, overrides: Mapping[str, Type]) -> "Scope":
        if not overrides:
            return self
        merged = dict(self.bindings)
        for name, t in overrides.items():
            if name in merged:
                slot, _, local = merged[name]
                merged[name] = (slot, t, local)
        return Scope(merged)


def _constant(node: IR) -> bool:
    """Whether an expression reads no variable (its value is the same on every row)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (ir.Var, ir.Lambda)):
            return False
        stack.extend(ir.ir_children(n))
    return True


class Checker(OverloadResolver):
    def __init__(
        self,
        source: str,
        schema: Mapping[str, Type],
        *,
        profile: str,
        limits: Limits,
        registry: Registry,
    ) -> None:
        self.source = source
        self.schema = dict(schema)
        self.profile = profile
        self.limits = limits
        self.registry = registry
        self.diagnostics: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []
        self.variables: dict[str, tuple[int, Type]] = {}  # schema names actually used
        #: LET slot -> (may its value be an error value, its list-length bound)
        self.let_values: dict[int, tuple[bool, int]] = {}
        self.slot_count = 1  # slot 0 holds the evaluation context
        self.coercing = True  # whether excel-profile conversions may fit an argument

    # -------------------------------------------------------------------------------- driver

    def check(self, node: ast.Node) -> IR:
        try:
            result = self.visit(node, Scope({}))
        except _Abort:
            result = None
        if self.diagnostics:
            raise CheckError(self.diagnostics[0], diagnostics=self.diagnostics, source=self.source)
        assert result is not None
        return result

    def error(self, code: str, message: str, span: Span | None, *, label: str = "",
              hint: str = "", fixes: tuple[Fix, ...] = ()) -> None:
        self.diagnostics.append(Diagnostic(code, message, span, label, hint, fixes))
        if len(self.diagnostics) >= self.limits.max_diagnostics:
            self.diagnostics.append(Diagnostic("E410", "too many problems; stopped checking",
                                               None))
            raise _Abort

    def warn(self, code: str, message: str, span: Span, *, hint: str = "",
             fixes: tuple[Fix, ...] = ()) -> None:
        self.warnings.append(Diagnostic(code, message, span, "", hint, fixes, "warning"))

    def text(self, span: Span) -> str:
        return self.source[span.start : span.end]

    def poison(self, span: Span) -> IR:
        """A stand-in after an error: fits anywhere, so one mistake is reported once."""
        return ir.Const(None, NEVER, span)

    def new_slot(self) -> int:
        slot = self.slot_count
        self.slot_count += 1
        return slot

    # ------------------------------------------------------------------------------- visitors

    def visit(self, node: ast.Node, scope: Scope) -> IR:
        # Dispatch on one saved type() (the checker's hottest branch); neither type checker
        # narrows ``node`` through ``kind``, hence the coded ignores below.
        kind = type(node)
        if kind is ast.Number:
            return self.visit_number(node)  # type: ignore[arg-type]
        if kind is ast.String:
            value: str = node.value  # type: ignore[union-attr, assignment]
            if len(value) > self.limits.max_text_length:
                raise LimitExceeded(f"a text literal of {len(value):,} characters is over the "
                                    f"limit of {self.limits.max_text_length:,}", code="E406",
                                    span=node.span)
            return ir.Const(value, TEXT, node.span)
        if kind is ast.Boolean:
            return ir.Const(node.value, BOOLEAN, node.span)  # type: ignore[union-attr]
        if kind is ast.Name:
            return self.visit_name(node, scope)  # type: ignore[arg-type]
        if kind is ast.ListLit:
            return self.visit_list(node, scope)  # type: ignore[arg-type]
        if kind is ast.Member:
            return self.visit_member(node, scope)  # type: ignore[arg-type]
        if kind is ast.Index:
            return self.visit_index(node, scope)  # type: ignore[arg-type]
        if kind is ast.Unary:
            return self.visit_unary(node, scope)  # type: ignore[arg-type]
        if kind is ast.Binary:
            return self.visit_binary(node, scope)  # type: ignore[arg-type]
        if kind is ast.Call:
            return self.visit_call(node, scope)  # type: ignore[arg-type]
        if kind is ast.Lambda:
            self.error("E108", "a lambda can only be an argument of MAP, FILTER, REDUCE...",
                       node.span)
            return self.poison(node.span)
        if kind is ast.Omitted:
            self.error("E204", "an argument can only be left out inside a function call",
                       node.span)
            return self.poison(node.span)
        raise TypeError(f"unknown AST node {kind.__name__}")

    def visit_number(self, node: ast.Number) -> IR:
        value = node.value
        if not value.is_finite() or abs(value) >= MAX_NUMBER:
            self.error("E107", "number out of range: numbers must be below 1e308 in magnitude",
                       node.span)
            return self.poison(node.span)
        if len(value.as_tuple().digits) > 34:
            value = +Decimal(value)  # rounded to 34 digits by the engine's context below
            from ..values import CONTEXT

            value = CONTEXT.plus(node.value)
        return ir.Const(value, NUMBER, node.span)

    def visit_name(self, node: ast.Name, scope: Scope) -> IR:
        name = node.name
        found = scope.bindings.get(name)
        if found is not None:
            slot, t, local = found
            # A LET name carries what its value may be: an error value, a list of some length.
            may_error, size = self.let_values.get(slot, (False, None))
            if size is None:
                size = self.limits.max_list_length if t.kind == "List" else 0
            return ir.Var(slot, name, t, node.span, may_error=may_error, local=local, size=size)
        if name in self.schema:
            if name not in self.variables:
                self.variables[name] = (self.new_slot(), self.schema[name])
            slot, t = self.variables[name]
            return ir.Var(slot, name, t, node.span,
                          size=self.limits.max_list_length if t.kind == "List" else 0)
        candidates = list(scope.bindings) + list(self.schema)
        close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
        close += [c for c in candidates if c.lower() == name.lower() and c not in close]
        fixes = tuple(Fix(node.span, name_source(c), f"use {c}") for c in close[:3])
        if ascii_upper(name) in self.registry and self.registry.get(ascii_upper(name)) is not None:
            hint = f"{ascii_upper(name)} is a function: call it as {ascii_upper(name)}(...)"
        elif close:
            hint = f"did you mean {close[0]}?"
        elif not candidates:
            hint = "no variables are declared; pass variables or a schema"
        else:
            hint = "known names: " + ", ".join(sorted(candidates)[:8])
        self.error("E201", f"unknown name '{name}'", node.span, label="not declared",
                   hint=hint, fixes=fixes)
        return self.poison(node.span)

    def visit_list(self, node: ast.ListLit, scope: Scope) -> IR:
        if len(node.items) > self.limits.max_list_length:
            raise LimitExceeded("list literal too long", code="E407", span=node.span)
        items = tuple(self.visit(item, scope) for item in node.items)
        elem: Type = NEVER
        for item in items:
            joined = join(elem, item.type)
            if joined is None and self.profile == "excel":
                # An Excel array may mix types ({1, "a", TRUE}); its rows are lists.
                rows = all(i.type.kind in ("List", "Never") for i in items)
                elem = list_of(ANY) if rows else ANY
                break
            if joined is None:
                self.error("E202", f"list items must have one type: {elem} and {item.type}",
                           item.span, label=f"expected {elem}",
                           hint="a list holds one type of value")
                return self.poison(node.span)
            elem = joined
        out = ir.ListOf(items, list_of(elem), node.span,
                        may_error=any(i.may_error for i in items),
                        cost=sum(i.cost for i in items) + 1, size=len(items))
        if elem.kind == "Any" or elem.kind == "List" and elem.elem is not None \
                and elem.elem.kind == "Any":
            # Marked, so a backend whose columns hold one type refuses it when compiling.
            return ir.Coerce(out, "array_mixed", out.type, node.span, out.may_error,
                             out.cost + 1, out.size)
        return out

    def visit_member(self, node: ast.Member, scope: Scope) -> IR:
        obj = self.visit(node.obj, scope)
        t = obj.type
        if t.kind == "Never":
            return obj
        if t.kind == "Any":
            return ir.FieldOf(obj, node.name, ANY, node.span, obj.may_error, obj.cost + 1)
        if t.kind != "Record":
            self.error("E207", f"'.{node.name}' needs a record, but this is {t}",
                       node.name_span if node.name_span.end else node.span,
                       hint="fields exist only on records declared in the schema")
            return self.poison(node.span)
        ft = t.field(node.name)
        if ft is None:
            names = [n for n, _ in t.fields]
            close = difflib.get_close_matches(node.name, names, n=3, cutoff=0.5)
            span = node.name_span if node.name_span.end else node.span
            self.error("E207", f"record has no field '{node.name}'", span,
                       label="unknown field",
                       hint=f"did you mean {close[0]}?" if close else "fields: " + ", ".join(names),
                       fixes=tuple(Fix(span, name_source(c), f"use {c}") for c in close))
            return self.poison(node.span)
        if t.nullable:
            ft = optional(ft)
        size = self.limits.max_list_length if ft.kind == "List" else 0
        return ir.FieldOf(obj, node.name, ft, node.span, obj.may_error, obj.cost + 1, size)

    def visit_index(self, node: ast.Index, scope: Scope) -> IR:
        obj = self.visit(node.obj, scope)
        index = self.visit(node.index, scope)
        if obj.type.kind == "Never":
            return obj
        if obj.type.kind != "List":
            self.error("E202", f"only lists can be indexed, this is {obj.type}", node.obj.span)
            return self.poison(node.span)
        index = self.expect(NUMBER, index, "an index")
        elem = obj.type.elem
        assert elem is not None
        if obj.type.nullable:
            elem = optional(elem)
        return ir.IndexOf(obj, index, elem, node.span, True, obj.cost + index.cost + 1,
                          self.limits.max_list_length if elem.kind == "List" else 0)

    def visit_unary(self, node: ast.Unary, scope: Scope) -> IR:
        spec = self.registry.get(_UNARY_SPECS[node.op])
        assert spec is not None
        operand = self.visit(node.operand, scope)
        if node.op == "+" and self.profile == "excel":
            # Excel's unary plus is the identity on every value (+"3" is the text "3").
            return operand
        return self.resolve(spec, [node.operand], [operand], node.span, node.op_span or node.span,
                            display=node.op)

    def visit_binary(self, node: ast.Binary, scope: Scope) -> IR:
        if self.check_ambiguity(node):
            self.visit(node.left, scope)
            self.visit(node.right, scope)
            return self.poison(node.span)
        spec = self.registry.get(_BINARY_SPECS.get(node.op, node.op))
        assert spec is not None, node.op
        left = self.visit(node.left, scope)
        right_scope = scope
        if node.op in ("and", "or"):
            then_n, else_n = self.narrowings(node.left, scope)
            right_scope = scope.narrowed(then_n if node.op == "and" else else_n)
        right = self.visit(node.right, right_scope)
        if node.op in COMPARISONS:
            return self.resolve_comparison(spec, node, left, right)
        if self.profile == "excel":
            serial = self.serial_arithmetic(node.op, left, right, node.span,
                                            node.op_span or node.span)
            if serial is not None:
                return serial
        return self.resolve(spec, [node.left, node.right], [left, right], node.span,
                            node.op_span or node.span, display=node.op)

    def visit_call(self, node: ast.Call, scope: Scope) -> IR:
        if len(node.args) > self.limits.max_arguments:
            raise LimitExceeded(f"{node.name} has {len(node.args)} arguments; the limit is "
                                f"{self.limits.max_arguments}", code="E404", span=node.span)
        spec = self.registry.get(node.name)
        if spec is None or spec.category == "operators":
            self.unknown_function(node)
            for arg in node.args:
                if not isinstance(arg, ast.Lambda):
                    self.visit(arg, scope)
            return self.poison(node.span)
        if spec.name == "LET":
            return self.visit_let(node, scope)
        args: list[IR | None] = []
        if spec.name in ("IF", "IFS") and node.args:
            pending: dict[str, Type] = {}
            else_narrowing: dict[str, Type] = {}
            for i, arg in enumerate(node.args):
                if spec.name == "IF" and i == 2:
                    sc = scope.narrowed(else_narrowing)
                else:
                    sc = scope.narrowed(pending)
                visited = self.visit(arg, sc) if not isinstance(arg, (ast.Lambda, ast.Omitted)) \
                    else None
                args.append(visited)
                if i % 2 == 0 and (spec.name == "IFS" or i == 0):
                    then_n, else_n = self.narrowings(arg, scope)
                    else_narrowing = else_n
                    pending = then_n
                elif spec.name == "IFS":
                    pending = {}
        else:
            args = [None if isinstance(a, (ast.Lambda, ast.Omitted)) else self.visit(a, scope)
                    for a in node.args]
        nodes = list(node.args)
        if self.profile == "excel" and len(args) == 1 and args[0] is not None:
            special = self.serial_call(spec, args[0], node.span)
            if special is not None:
                return special
            if spec.name == "ISNUMBER" and args[0].type.kind in SERIAL_KINDS:
                args[0] = self.to_serial(args[0], keep_blank=True) or args[0]
        if self.profile == "excel" and spec.name in ("AND", "OR", "XOR"):
            # Excel reads an array argument's logical values (numbers as logicals, texts
            # skipped) into one logical value per array.
            mode = "array_" + spec.name.lower()
            if spec.name == "XOR":
                # XOR skips a text argument as it skips texts in arrays: Excel's XOR("FALSE")
                # is #VALUE! (no logical value), where AND and OR read "TRUE" as TRUE.
                args = [ir.ListOf((a,), list_of(a.type), a.span, a.may_error, a.cost + 1, 1)
                        if a is not None and a.type.kind == "Text" else a for a in args]
            args = [ir.Coerce(a, mode, BOOLEAN, a.span, True, a.cost + 1 + a.size)
                    if a is not None and a.type.kind == "List" else a for a in args]
        if self.profile == "excel" and spec.name in ("COUNT", "COUNTA"):
            # COUNT skips error values inside arrays; COUNTA counts them (Excel).
            mode = "array_skip_errors" if spec.name == "COUNT" else "array_errors_counted"
            args = [ir.Coerce(a, mode, a.type, a.span, False, a.cost + 1 + a.size, a.size)
                    if a is not None and a.type.kind == "List" and a.may_error else a
                    for a in args]
        if self.profile == "excel" and spec.name in _NONNUMERIC_REFUSED:
            # GCD, LCM, MULTINOMIAL read every item of an array: a numeric text is its
            # number, any other text or a logical is #VALUE! (Microsoft: "If any argument is
            # nonnumeric, GCD returns the #VALUE! error value"); the function sees the items.
            args = [ir.Coerce(a, "array_mixed", Type("List", elem=NUMBER,
                                                     nullable=a.type.nullable),
                              a.span, a.may_error, a.cost + 1 + a.size, a.size)
                    if a is not None and a.type.kind == "List" and a.type.elem is not None
                    and a.type.elem.kind != "Number" else a
                    for a in args]
        if self.profile == "excel" and spec.name in _CRITERIA_FAMILY:
            # Excel: an error inside a criteria range only matches an error criterion, one in
            # the summed range counts only where the criteria match: the function sees them
            # (functions/lists.py), the array held as is (array_mixed); so does a constant
            # error criterion (COUNTIF(range, NA()) counts the #N/A cells; one computed from
            # the data still propagates, which keeps such criteria on the columnar backends).
            args = [ir.Coerce(a, "array_mixed", a.type, a.span, False, a.cost + 1 + a.size,
                              a.size)
                    if a is not None and a.may_error
                    and (a.type.kind == "List" or _constant(a)) else a
                    for a in args]
            # An empty cell given as the criterion means 0 (Microsoft's COUNTIFS page: "If the
            # criteria argument is a reference to an empty cell, ... treats the empty cell as a
            # 0 value"), not the empty criterion "" that matches blanks.
            first = 2 if spec.name.endswith("IFS") and spec.name != "COUNTIFS" else 1
            args = [ir.Const(0, NUMBER, a.span)
                    if a is not None and i >= first and (i - first) % 2 == 0
                    and a.type.kind == "Blank" else a
                    for i, a in enumerate(args)]
        if spec.name == "IF" and len(nodes) == 2 and self.profile == "excel" \
                and args[1] is not None and args[1].type.kind in ("Boolean", "Text"):
            # Excel's IF without an else answers FALSE (a typed result cannot mix FALSE with
            # a number or a date, so those keep the blank: docs/language.md).
            false = ast.Boolean(False, Span(node.span.end, node.span.end))
            nodes.append(false)
            args.append(ir.Const(False, BOOLEAN, false.span))
        at = _CASH_FLOWS.get(spec.name)
        if self.profile == "excel" and at is not None and at < len(args):
            flows = args[at]
            if flows is not None and flows.type.kind == "List" and flows.type.elem is not None \
                    and flows.type.elem.kind == "Any":
                # A mixed array of cash flows ({-20, 8, TRUE}) reaches the function as is:
                # IRR and MIRR skip its texts and logicals, XIRR answers #VALUE!, XNPV #NUM!
                # (Excel; functions/finance.py, cashflows.py).
                args[at] = ir.Coerce(flows, "array_mixed",
                                     Type("List", elem=optional(NUMBER),
                                          nullable=flows.type.nullable),
                                     flows.span, flows.may_error, flows.cost + 1 + flows.size,
                                     flows.size)
        return self.resolve(spec, nodes, args, node.span, node.name_span or node.span,
                            scope=scope)

    def visit_let(self, node: ast.Call, scope: Scope) -> IR:
        args = node.args
        if len(args) < 3 or len(args) % 2 == 0:
            self.error("E208", "LET takes pairs of name and value, then a calculation: "
                       "LET(name, value, calculation)", node.span)
            return self.poison(node.span)
        slots, names, values = [], [], []
        current = scope
        for i in range(0, len(args) - 1, 2):
            name_node = args[i]
            if not isinstance(name_node, ast.Name):
                self.error("E208", "a LET name must be a plain name", name_node.span)
                return self.poison(node.span)
            if name_node.name in self.schema or name_node.name in current.bindings:
                self.warn("E208", f"LET name '{name_node.name}' hides another name",
                          name_node.span)
            value = self.visit(args[i + 1], current)
            slot = self.new_slot()
            self.let_values[slot] = (value.may_error, value.size)
            current = current.child(**{name_node.name: (slot, value.type, True)})
            slots.append(slot)
            names.append(name_node.name)
            values.append(value)
        body = self.visit(args[-1], current)
        return ir.Let(tuple(slots), tuple(names), tuple(values), body, body.type, node.span,
                      body.may_error or any(v.may_error for v in values),
                      body.cost + sum(v.cost for v in values) + len(values), body.size)

    def visit_lambda(self, node: ast.Lambda, param_types: list[Type], scope: Scope) -> ir.Lambda:
        slots = []
        current = scope
        for name, t in zip(node.params, param_types):
            slot = self.new_slot()
            slots.append(slot)
            current = current.child(**{name: (slot, t, True)})
        body = self.visit(node.body, current)
        from ..types import fn

        return ir.Lambda(tuple(slots), node.params, body, fn(param_types, body.type), node.span,
                         body.may_error, body.cost, body.size)

    # ------------------------------------------------------------------------------ narrowing

    def narrowings(self, cond: ast.Node, scope: Scope) -> tuple[dict[str, Type], dict[str, Type]]:
        """Types known in the then/else branches of a condition (ISBLANK, ISNUMBER on Any...)."""
        if isinstance(cond, ast.Unary) and cond.op == "not":
            then, other = self.narrowings(cond.operand, scope)
            return other, then
        if isinstance(cond, ast.Call) and cond.name == "NOT" and len(cond.args) == 1:
            then, other = self.narrowings(cond.args[0], scope)
            return other, then
        if isinstance(cond, ast.Binary) and cond.op in ("and", "or"):
            lt, le = self.narrowings(cond.left, scope)
            rt, re_ = self.narrowings(cond.right, scope)
            if cond.op == "and":
                return {**lt, **rt}, {}
            return {}, {**le, **re_}
        if isinstance(cond, ast.Call) and len(cond.args) == 1 and isinstance(cond.args[0], ast.Name):
            name = cond.args[0].name
            found = scope.bindings.get(name)
            t = found[1] if found else self.schema.get(name)
            if t is None:
                return {}, {}
            if name not in scope.bindings and name in self.schema:
                # Make sure the variable has a slot so narrowing can refer to it.
                self.visit_name(cond.args[0], scope)
                scope.bindings[name] = (self.variables[name][0], t, False)
            if cond.name == "ISBLANK" and t.nullable:
                return {}, {name: non_null(t)}
            if t.kind == "Any":
                target = {"ISNUMBER": NUMBER, "ISTEXT": TEXT, "ISLOGICAL": BOOLEAN}.get(cond.name)
                if target is not None:
                    return {name: target}, {}
        return {}, {}

    # ------------------------------------------------------------------------------ ambiguity

    def check_ambiguity(self, node: ast.Binary) -> bool:
        """Report ``-2^2``, ``2^3^2``, ``1<2<3``; True when that is an error (strict)."""
        left = node.left
        src = self.text
        if node.op == "^" and isinstance(left, ast.Unary) and left.op in ("-", "+") \
                and not left.parenthesized:
            excel = f"({src(left.span)})^{src(node.right.span)}"
            math = f"{left.op}({src(left.operand.span)}^{src(node.right.span)})"
            self.ambiguous(node, f"'{src(node.span)}' is ambiguous: Excel computes {excel}, "
                           f"most languages {math}", (excel, math))
        elif node.op == "^" and isinstance(left, ast.Binary) and left.op == "^" \
                and not left.parenthesized:
            excel = f"({src(left.span)})^{src(node.right.span)}"
            math = f"{src(left.left.span)}^({src(left.right.span)}^{src(node.right.span)})"
            self.ambiguous(node, f"'{src(node.span)}' is ambiguous: Excel computes {excel}, "
                           f"most languages {math}", (excel, math))
        elif node.op in COMPARISONS and isinstance(left, ast.Binary) and left.op in COMPARISONS \
                and not left.parenthesized:
            chained = f"{src(left.span)} and {src(left.right.span)} {node.op} {src(node.right.span)}"
            self.ambiguous(node, f"comparisons do not chain: '{src(node.span)}' compares a "
                           "TRUE/FALSE result with a value", (chained,))
        elif node.op == "??" and isinstance(node.right, ast.Binary) and \
                node.right.op in _COALESCE_TRAP and not node.right.parenthesized:
            # price ?? 0 * qty is price ?? (0 * qty): '??' binds loosest. Valid, so a warning
            # in both profiles, with both readings as fixes.
            inner = node.right
            meant = f"({src(node.left.span)} ?? {src(inner.left.span)}) {inner.op} " \
                    f"{src(inner.right.span)}"
            literal = f"{src(node.left.span)} ?? ({src(inner.span)})"
            self.warn("E206", f"'??' binds loosest: '{src(node.span)}' means {literal}",
                      node.span, hint=f"if the default is for {src(node.left.span)} alone, "
                      f"write {meant}", fixes=(Fix(node.span, meant, f"write {meant}"),
                                               Fix(node.span, literal, f"write {literal}")))
            return False
        else:
            return False
        return self.profile == "strict"

    def ambiguous(self, node: ast.Binary, message: str, options: tuple[str, ...]) -> None:
        fixes = tuple(Fix(node.span, o, f"write {o}") for o in options)
        if self.profile == "strict":
            self.error("E206", message, node.span, label="add parentheses",
                       hint="write the meaning you want explicitly", fixes=fixes)
        else:
            self.warn("E206", message + " (evaluated as Excel does)", node.span, fixes=fixes)

def check(tree: ast.Node, source: str, schema: Mapping[str, Type], *, profile: str,
          limits: Limits, registry: Registry) -> tuple[IR, Checker]:
    """Check ``tree``; returns the IR and the checker (variables, slots, warnings)."""
    if profile not in ("strict", "excel"):
        raise CheckError(f"unknown profile {profile!r}: use 'strict' or 'excel'", code="E209")
    checker = Checker(source, schema, profile=profile, limits=limits, registry=registry)
    return checker.check(tree), checker


__all__ = ["Checker", "Scope", "check", "per_char_cost"]
