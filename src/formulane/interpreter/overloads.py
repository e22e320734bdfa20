"""Overload resolution: fitting checked arguments to a function's signatures.

The checker's second half, as a mixin: picks one signature per call (exact fits before Excel
coercions; generic type variables unify left to right; lambdas take their parameter types from
earlier arguments), makes excel-profile coercions explicit `Coerce` nodes, computes each call's
static cost and size bounds, and words mismatches as diagnostics with machine-applicable fixes
(``VALUE(x)``, ``(x ?? 0)``, ``TEXT(x, "General")``...). How Excel reads an array or a range
that does not fit a list parameter as it is lives beside it, in `array_matching`.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..errors import Fix
from ..functions.spec import MATCHER_PAIR, MATCHER_PER_CHAR, FunctionSpec, Param, Sig
from ..grammar import ast
from ..source import Span, ascii_upper, lookalike_upper
from ..types import BOOLEAN, NEVER, Type, join, non_null, optional
from . import ir
from ..values import VALUE, ErrorValue
from .ir import IR
from .array_matching import ArrayMatching, MeetAtText, as_vector, literal_vectors, unify
from .serials import SERIAL_KINDS, SerialCoercions

#: Functions that, in the excel profile, ignore blank arguments (see `skip_blanks`).
_BLANK_SKIPPING = frozenset(("AND", "OR", "XOR"))


def _is_reference(node: IR) -> bool:
    """An input variable or a field of one: what Excel would read from a cell."""
    while type(node) is ir.FieldOf:
        node = node.obj
    return type(node) is ir.Var and not node.local

if TYPE_CHECKING:
    from ..errors import Diagnostic
    from ..limits import Limits
    from .checker import Scope

_ZERO_OF = {"Number": "0", "Text": '""', "Boolean": "FALSE"}
FAIL_NULLABLE = "nullable"
#: Divisor positions: a blank there is not offered `?? 0` (every blank would become #DIV/0!).
_DIVISORS = {"/": 1, "MOD": 1, "QUOTIENT": 1}
#: Functions whose output list can be longer than any list argument.
_UNBOUNDED_PRODUCERS = frozenset({"SEQUENCE", "FLATTEN", "TEXTSPLIT", "REGEXEXTRACTALL",
                                  # 2-D shaping: more rows than any argument has
                                  "VSTACK", "TOCOL", "CHOOSEROWS", "WRAPCOLS", "MUNIT"})


class OverloadResolver(SerialCoercions, ArrayMatching):
    """Mixed into `Checker`, which provides ``error``, ``text``, ``poison``, ``visit_lambda``,
    ``profile``, ``limits``, ``diagnostics`` and ``coercing``."""

    if TYPE_CHECKING:  # what `Checker` provides (declared here so both checkers can see it)
        limits: Limits
        diagnostics: list[Diagnostic]
        coercing: bool
        source: str

        def error(self, code: str, message: str, span: Span | None, *, label: str = "",
                  hint: str = "", fixes: tuple[Fix, ...] = ()) -> None: ...

        def warn(self, code: str, message: str, span: Span, *, hint: str = "",
                 fixes: tuple[Fix, ...] = ()) -> None: ...

        def text(self, span: Span) -> str: ...

        def poison(self, span: Span) -> IR: ...

        def visit_lambda(self, node: ast.Lambda, param_types: list[Type],
                         scope: Scope) -> ir.Lambda: ...

    # ---------------------------------------------------------------------------- resolution

    def unknown_function(self, node: ast.Call) -> None:
        pack = self.registry.pack_of(node.name)
        span = node.name_span if node.name_span.end else node.span
        if pack:
            self.error("E203", f"{node.name} is in the optional '{pack}' pack, which is off", span,
                       hint=f"enable it with Registry.with_packs('{pack}')")
            return
        close = self.registry.suggest(node.name)
        fixes = tuple(Fix(span, c, f"use {c}") for c in close)
        excluded = {"INDIRECT", "OFFSET", "CELL", "INFO", "HYPERLINK", "WEBSERVICE"}
        if node.name in excluded:
            hint = f"{node.name} is excluded on purpose: formulas cannot reach outside their inputs"
        elif not node.name.isascii() and self.registry.get(lookalike_upper(node.name)) is not None:
            # 'ſum', 'ıf', 'ﬁlter': Unicode case folding would read them as ASCII names.
            target = lookalike_upper(node.name)
            hint = (f"function names are ASCII: {node.name!r} only looks like {target}; "
                    f"write {target}")
            fixes = (Fix(span, target, f"use {target}"),)
        else:
            hint = f"did you mean {close[0]}?" if close else "see `formulane functions` for the list"
        self.error("E203", f"unknown function {node.name}", span, label="unknown function",
                   hint=hint, fixes=fixes)

    def resolve(self, spec: FunctionSpec, nodes: Sequence[ast.Node | None], args: list[IR | None],
                span: Span, name_span: Span, *, display: str | None = None,
                scope: Scope | None = None) -> IR:
        name = display or spec.name
        if any(a is not None and a.type.kind == "Never" and isinstance(a, ir.Const)
               and a.value is None and a.type is NEVER for a in args) and self.diagnostics:
            return self.poison(span)  # an argument already failed: report nothing more here
        if spec.check is not None:
            return self.resolve_custom(spec, nodes, args, span, name, scope)
        n = len(nodes)
        fitting = tuple(s for s in _fitting(spec, n) if s.profile in (None, self.profile))
        if not fitting:
            self.arity_error(spec, n, span, name)
            return self.poison(span)
        failures: list[tuple[int, Param, IR | None, str]] = []
        # Exact fits first: an Excel coercion only decides when no overload fits as is.
        passes = (False, True) if self.profile == "excel" else (False,)
        self.calling = spec.name  # coerce() asks: Excel's add-in functions refuse logicals
        for coerce in passes:
            self.coercing = coerce
            for at, s in enumerate(fitting):
                result = self.fit_sig(spec, s, nodes, args, span, scope, name)
                if isinstance(result, tuple):
                    failures.append(result)
                    continue
                vectors = literal_vectors(result) if coerce else ()
                if vectors:
                    # Excel: XLOOKUP(x, {1;2}, {"a";"b"}) is "a", not the one-item row
                    # {"a"}: a later overload reading that one-column (or one-row) array
                    # as a list, when one fits, is the one meant.
                    read = list(args)
                    for i in vectors:
                        read[i] = as_vector(args[i])  # type: ignore[arg-type]
                    for later in fitting[at + 1:]:
                        other = self.fit_sig(spec, later, nodes, read, span, scope, name)
                        if not isinstance(other, tuple):
                            result = other
                            break
                self.coercing = True
                if self.profile == "excel" and spec.name in _BLANK_SKIPPING:
                    return self.skip_blanks(result, span)
                return result
        self.coercing = True
        self.report_mismatch(spec, name, failures, nodes, fitting)
        return self.poison(span)

    def fit_sig(self, spec: FunctionSpec, s: Sig, nodes: Sequence[ast.Node | None],
                args: list[IR | None], span: Span, scope: Scope | None, name: str,
                ) -> IR | tuple[int, Param, IR | None, str]:
        """`try_sig`, trying again when T must meet at Text or Any; a failure leaves no
        diagnostics behind."""
        mark = len(self.diagnostics)
        bound: dict[str, Type] = {}
        result: IR | tuple[int, Param, IR | None, str] | None = None
        # Each retry binds one more type variable (T to Text, then U to Any...): bounded.
        for _ in range(4):
            try:
                result = self.try_sig(spec, s, nodes, args, span, scope, bound or None)
                break
            except MeetAtText as meet:
                del self.diagnostics[mark:]
                if bound.get(meet.name) == Type(meet.kind):
                    break  # already tried: the types do not meet
                bound = {**bound, meet.name: Type(meet.kind)}
        if result is None:  # only a signature with parameters raises MeetAtText
            result = (0, s.params[0], None, "the arguments' types do not meet")
        if not isinstance(result, tuple) and any(t.kind == "Text" for t in bound.values()):
            self.warn("E202", f"{name}: values of different types meet as Text "
                      "(excel profile; the strict profile refuses this)", span,
                      hint="make the types agree, e.g. TEXT(x, \"0.00\") or a "
                           "number fallback, to keep numbers numbers")
        if isinstance(result, tuple):
            del self.diagnostics[mark:]
        return result

    def try_sig(self, spec: FunctionSpec, s: Sig, nodes: Sequence[ast.Node | None], args: list[IR | None],
                span: Span, scope: Scope | None, bound: Mapping[str, Type] | None = None,
                ) -> IR | tuple[int, Param, IR | None, str]:
        """The call fitted to ``s``, or why not: (argument index, parameter, its IR, reason)."""
        bindings: dict[str, Type] = dict(bound or {})
        out: list[IR] = []
        lambda_cost = 0
        for i, node in enumerate(nodes):
            prm = s.param_for(i)
            assert prm is not None
            if isinstance(node, ast.Omitted):
                if not prm.optional and self.excel_coercions \
                        and prm.type.kind in _ZERO_VALUE and not prm.type.nullable:
                    # Excel reads a left-out argument as an empty cell: 0, "" or FALSE
                    # (CONCATENATE("a", , "b") is "ab"; SUM(1, , 2) is 3).
                    out.append(ir.Const(_ZERO_VALUE[prm.type.kind], Type(prm.type.kind),
                                        node.span))
                    continue
                if not prm.optional:
                    return (i, prm, None, f"{prm.name} cannot be left out")
                default = prm.default
                out.append(ir.Const(default, _subst(prm.type, bindings) if default is not None
                                    else optional(_subst(prm.type, bindings)), node.span))
                continue
            if isinstance(node, ast.Lambda):
                if prm.type.kind != "Fn":
                    return (i, prm, None, "a lambda is not expected here")
                ptypes = [_subst(t, bindings) for t in prm.type.params]
                if len(node.params) != len(ptypes):
                    return (i, prm, None, f"this lambda should take {len(ptypes)} parameter(s)")
                if any(_has_var(t) for t in ptypes):
                    return (i, prm, None, "cannot infer the lambda's parameter types")
                lam = self.visit_lambda(node, ptypes, scope or Scope({}))
                ret = prm.type.elem
                assert ret is not None
                if not unify(ret, lam.body.type, bindings):
                    return (i, prm, lam, f"the lambda must return {_subst(ret, bindings)}")
                lambda_cost = max(lambda_cost, lam.cost + 1)
                out.append(lam)
                continue
            arg = args[i]
            assert arg is not None
            if prm.type.kind == "Fn":
                return (i, prm, arg, "expected a lambda such as x => x * 2")
            matched = self.match(prm.type, arg, bindings)
            if matched is None or matched == FAIL_NULLABLE:
                return (i, prm, arg, matched or "")
            out.append(matched)
        for j in range(len(nodes), len(s.params)):
            prm = s.params[j]
            default = prm.default
            out.append(ir.Const(default, _subst(prm.type, bindings) if default is not None
                                else optional(_subst(prm.type, bindings)), span))
        returns = _subst(s.returns, bindings)
        return self.make_call(spec, s, tuple(out), returns, span, lambda_cost)

    def make_call(self, spec: FunctionSpec, s: Sig, args: tuple[IR, ...], returns: Type,
                  span: Span, lambda_cost: int = 0) -> IR:
        list_sizes = [a.size for a in args if a.type.kind == "List"]
        longest = max(list_sizes, default=0)
        cost = 1 + spec.cost.base + spec.cost.per_item * sum(list_sizes) + sum(a.cost for a in args)
        per_char = per_char_cost(spec)
        if per_char:
            chars = sum(self.text_bound(a) for a in args if a.type.kind == "Text")
            listed = sum(self.list_text_bound(a) for a in args) if spec.cost.list_chars else 0
            cost += int(per_char * (chars + listed) + 0.999)
            if spec.cost.builds_text:
                cost += int(per_char * self.limits.max_text_length + 0.999)
            if spec.cost.matcher:
                # and building the pattern's masks (quadratic in its length; see _criteria)
                cost += listed * (MATCHER_PER_CHAR + chars // MATCHER_PAIR) + 16 * chars + chars * chars // 256
        if spec.cost.per_call:
            cost += longest * lambda_cost
        if spec.name == "IFERROR":
            may_error = args[1].may_error
        elif spec.name in ("IFNA",):
            may_error = True
        else:
            may_error = spec.can_error or any(a.may_error for a in args)
        size = 0
        if returns.kind == "List":
            if longest and spec.name not in _UNBOUNDED_PRODUCERS:
                size = longest
            else:
                # The output's length is not bounded by the inputs': its building is part of
                # the bound, so a program that may build a huge list runs metered.
                size = self.limits.max_list_length
                cost += size * max(1, spec.cost.per_item)
        return ir.Call(spec, s, args, returns, span, may_error, cost, size, lambda_cost)

    def list_text_bound(self, arg: IR) -> int:
        """An upper bound on the code points of the texts inside a list argument."""
        if arg.type.kind not in ("List", "Many"):
            return 0
        elem = arg.type.elem
        if elem is not None and elem.kind not in ("Text", "Any", "Var"):
            return 0
        if isinstance(arg, ir.ListOf):
            return sum(self.text_bound(i) for i in arg.items)
        return max(arg.size, 1) * self.limits.max_text_length

    def text_bound(self, arg: IR) -> int:
        """An upper bound on the length of a Text value: exact for literals."""
        if isinstance(arg, ir.Const):
            return len(arg.value) if isinstance(arg.value, str) else 0
        return self.limits.max_text_length

    def resolve_custom(self, spec: FunctionSpec, nodes: Sequence[ast.Node | None], args: list[IR | None],
                       span: Span, name: str, scope: Scope | None) -> IR:
        if any(a is None for a in args):
            self.error("E202", f"{name} does not take a lambda", span)
            return self.poison(span)
        real = [a for a in args if a is not None]
        try:
            params, returns = spec.check([a.type for a in real], self.profile)  # type: ignore[misc]
        except TypeError as exc:
            index, message = exc.args if len(exc.args) == 2 else (-1, str(exc))
            where = real[index].span if 0 <= index < len(real) else span
            self.error("E202", message, where)
            return self.poison(span)
        out = []
        for i, (ptype, arg) in enumerate(zip(params, real)):
            matched = self.match(ptype, arg, {})
            if matched is None or matched == FAIL_NULLABLE:
                prm = Param(f"argument {i + 1}", ptype)
                self.report_mismatch(spec, name, [(i, prm, arg, matched or "")], nodes,
                                     list(spec.signatures))
                return self.poison(span)
            out.append(matched)
        return self.make_call(spec, spec.signatures[0], tuple(out), returns, span)

    def resolve_comparison(self, spec: FunctionSpec, node: ast.Binary, left: IR, right: IR) -> IR:
        if left.type.kind == "Never" or right.type.kind == "Never":
            # NA() = 1 is #N/A (an error operand is the answer), not a blank: only an operand
            # that already failed to check is poison; the usual resolution passes errors on.
            return self.resolve(spec, [node.left, node.right], [left, right], node.span,
                                node.op_span or node.span, display=node.op)
        lt, rt = left.type, right.type
        if self.profile == "excel" and lt.is_scalar and rt.is_scalar and lt.kind != rt.kind \
                and "Blank" not in (lt.kind, rt.kind):
            from ..functions.spec import Sig as _Sig

            same = {s.params[0].type.kind: s.impl or spec.impl for s in spec.signatures
                    if len(s.params) == 2 and s.params[0].type == s.params[1].type}
            mixed = _Sig((Param("left", lt), Param("right", rt)), BOOLEAN, 0,
                         _excel_comparison(node.op, lt.kind, rt.kind, same))
            return self.make_call(spec, mixed, (left, right), BOOLEAN, node.span)
        return self.resolve(spec, [node.left, node.right], [left, right], node.span,
                            node.op_span or node.span, display=node.op)

    def skip_blanks(self, call: IR, span: Span) -> IR:
        """Excel's AND, OR and XOR ignore blank arguments, and answer #VALUE! when every
        argument is blank. Rewritten with forms every backend has: a blank argument becomes
        the function's identity (``COALESCE(x, TRUE)`` for AND, FALSE for OR and XOR), and when
        every argument may be blank, ``IF(OR(COALESCE(x1, .., xn, #VALUE!), TRUE), call,
        FALSE)`` raises the error first (lazy OR: the error, or TRUE)."""
        if type(call) is not ir.Call:
            return call
        # Only references are skipped, as in Excel (an empty cell, here an input variable or
        # one of its record fields); a computed blank such as IF(FALSE, TRUE) stays FALSE.
        # per argument: the blank-able reference under the coercion, or None
        blanks = [a.node if type(a) is ir.Coerce and a.mode == "blank_to_boolean"
                  and _is_reference(a.node) else None for a in call.args]
        if not any(b is not None for b in blanks):
            return call
        registry = self.registry
        coalesce, or_, if_ = (registry.get(n) for n in ("COALESCE", "OR", "IF"))
        if coalesce is None or or_ is None or if_ is None:  # a registry without the core
            return call
        identity = call.spec.name == "AND"
        args = tuple(self.make_call(coalesce, coalesce.signatures[0],
                                    (blank, ir.Const(identity, BOOLEAN, a.span)),
                                    BOOLEAN, a.span) if blank is not None else a
                     for a, blank in zip(call.args, blanks))
        out = self.make_call(call.spec, call.sig, args, BOOLEAN, span)
        every = [b for b in blanks if b is not None]
        if len(every) != len(blanks):
            return out
        error = ir.Const(ErrorValue(VALUE, f"{call.spec.name} has no logical value: every "
                                    "argument is blank"), BOOLEAN, span, may_error=True)
        first = self.make_call(coalesce, coalesce.signatures[0],
                               (*every, error), BOOLEAN, span)
        guard = self.make_call(or_, or_.signatures[0], (first, ir.Const(True, BOOLEAN, span)),
                               BOOLEAN, span)
        return self.make_call(if_, if_.signatures[0], (guard, out, ir.Const(False, BOOLEAN,
                                                                              span)),
                              BOOLEAN, span)

    def _coerce_null(self, arg: IR) -> IR:
        if arg.type.nullable and arg.type.kind in ("Number", "Text", "Boolean"):
            return ir.Coerce(arg, "blank_to_" + arg.type.kind.lower(), non_null(arg.type),
                             arg.span, arg.may_error, arg.cost + 1)
        return arg

    # -------------------------------------------------------------------------------- matching

    def match(self, expected: Type, arg: IR, bindings: dict[str, Type]) -> Any:
        """``arg`` fitted to ``expected``: the node itself, a coercion, None (type mismatch) or
        ``FAIL_NULLABLE`` (a possibly-blank value where a value is required)."""
        a = arg.type
        k = expected.kind
        if a.kind == "Never":
            return arg
        if k == "Var":
            bound = bindings.get(expected.name)
            if expected.nullable:
                a = non_null(a)  # T? takes blanks; T itself is what is left
            if bound is None:
                bindings[expected.name] = a
                return arg
            if bound.kind == "Any" and self.excel_coercions and (a.is_scalar or a.kind == "Any"):
                return arg  # T met a mixed array: Excel compares values of any types
            joined = join(bound, a)
            if joined is None:
                if not self.excel_coercions:
                    return None
                if a.kind == "Text" and bound.is_scalar and bound.kind != "Text":
                    # IF(c, 1, "n/a"), IFERROR(x / y, "n/a"): without unions, the branches
                    # meet at Text (what Excel shows), never a #VALUE! from reading "n/a"
                    # as a number. Start over with T bound to Text.
                    raise MeetAtText(expected.name)
                if a.kind in SERIAL_KINDS and bound.kind == "Number":
                    # IF(c, 0, DATE(...)): a date and a number meet as a date (the number is
                    # its serial, as Excel formats the cell), whichever branch comes first.
                    raise MeetAtText(expected.name, a.kind)
                return self.coerce(arg, bound)
            bindings[expected.name] = joined
            return arg
        if k == "Any":
            return arg
        if k == "Many":
            elem = expected.elem
            assert elem is not None
            if a.kind == "List":
                if unify(elem, non_null(a.elem), bindings):  # type: ignore[arg-type]
                    return arg
                return self.read_array(elem, arg, bindings)
            return self.match(optional(elem), arg, bindings)
        if k == "List":
            if a.kind == "Blank":
                return arg if expected.nullable else FAIL_NULLABLE
            if a.kind != "List":
                return self.read_cell(expected, arg, bindings)
            if a.nullable and not expected.nullable:
                return FAIL_NULLABLE
            if unify(expected.elem, a.elem, bindings):  # type: ignore[arg-type]
                return arg
            return self.read_range(expected, arg, bindings)
        if k == "Record":
            from ..types import is_assignable

            if a.kind == "Record" and is_assignable(non_null(a), non_null(expected)):
                return arg if (expected.nullable or not a.nullable) else FAIL_NULLABLE
            return None
        # scalar expected
        if self.excel_coercions and a.kind == "List" and type(arg) is ir.ListOf \
                and len(arg.items) == 1:
            # Excel reads a one-cell range where one value is expected as that cell
            # (NPV(A1, ...) with A1's #NUM! is #NUM!): a one-item list literal stands for one.
            return self.match(expected, arg.items[0], bindings)
        if a.kind == "Blank":
            if expected.nullable:
                return arg
            if self.profile == "excel" and k in ("Number", "Text", "Boolean"):
                return ir.Const(_ZERO_VALUE[k], Type(k), arg.span)
            if self.profile == "excel" and k in SERIAL_KINDS:
                return self.serial_coerce(arg, expected) or FAIL_NULLABLE
            return FAIL_NULLABLE
        if a.kind == k:
            if a.nullable and not expected.nullable:
                if self.profile == "excel" and k in ("Number", "Text", "Boolean"):
                    return ir.Coerce(arg, "blank_to_" + k.lower(), non_null(a), arg.span,
                                     arg.may_error, arg.cost + 1)
                if self.profile == "excel" and k in SERIAL_KINDS:
                    return self.blank_serial(arg)  # an empty cell is serial 0
                return FAIL_NULLABLE
            return arg
        if self.excel_coercions:
            return self.coerce(arg, expected)
        return None

    calling: str | None = None

    def coerce(self, arg: IR, target: Type) -> IR | None:
        """Excel's implicit conversions, made explicit (excel profile only)."""
        a = arg.type
        if a.kind == "Never":
            return arg
        if a.kind in SERIAL_KINDS or target.kind in SERIAL_KINDS:
            return self.serial_coerce(arg, target)
        mode = {
            ("Text", "Number"): "text_to_number",
            ("Boolean", "Number"): "boolean_refused" if getattr(self, "calling", None)
            in REFUSE_LOGICALS else "boolean_to_number",
            ("Number", "Boolean"): "number_to_boolean",
            ("Text", "Boolean"): "text_to_boolean",
        }.get((a.kind, target.kind))
        if mode is None and target.kind == "Text" and a.is_scalar:
            mode = "to_text"
        if mode is None:
            return None
        may_error = mode in ("text_to_number", "text_to_boolean", "boolean_refused") \
            or arg.may_error
        if a.nullable and (a.kind == "Text" or target.kind == "Text"):
            # A blank is the target's zero (an empty cell reads as 0, "" or FALSE), not the
            # conversion of the source's zero: a blank Number? joins as "", not "0"; a blank
            # Text? multiplies as 0, not #VALUE! from "". The conversion passes blanks on.
            inner = ir.Coerce(arg, mode, optional(Type(target.kind)), arg.span, may_error,
                              arg.cost + 1)
            return ir.Coerce(inner, "blank_to_" + target.kind.lower(), Type(target.kind),
                             arg.span, may_error, arg.cost + 2)
        node = arg
        if a.nullable:
            node = ir.Coerce(arg, "blank_to_" + a.kind.lower(), non_null(a), arg.span,
                             arg.may_error, arg.cost + 1) if a.kind in ("Number", "Text", "Boolean") \
                else arg
        return ir.Coerce(node, mode, non_null(Type(target.kind)), arg.span, may_error,
                         arg.cost + 1)

    def expect(self, t: Type, arg: IR, what: str) -> IR:
        matched = self.match(t, arg, {})
        if matched is None or matched == FAIL_NULLABLE:
            self.type_error(f"{what} must be {t}, got {arg.type}", arg, t,
                            nullable=matched == FAIL_NULLABLE)
            return self.poison(arg.span)
        return matched  # type: ignore[no-any-return]

    # ---------------------------------------------------------------------------- reporting

    def arity_error(self, spec: FunctionSpec, n: int, span: Span, name: str) -> None:
        lo = min(s.min_args for s in spec.signatures)
        his = [s.max_args for s in spec.signatures]
        hi = None if any(h is None for h in his) else max(h for h in his if h is not None)
        if hi is None:
            expected = f"at least {lo}"
        elif lo == hi:
            expected = f"{lo}"
        else:
            expected = f"{lo} to {hi}"
        plural = "" if expected == "1" else "s"
        self.error("E204", f"{name} takes {expected} argument{plural}, got {n}", span,
                   hint="; ".join(spec.describe()[:3]))

    def report_mismatch(self, spec: FunctionSpec, name: str,
                        failures: list[tuple[int, Param, IR | None, str]],
                        nodes: Sequence[ast.Node | None], sigs: Sequence[Sig]) -> None:
        # Report the failure that got furthest: it is most likely what the author meant.
        index, prm, arg, why = max(failures, key=lambda f: f[0])
        if arg is not None:
            span = arg.span
        else:  # an argument without its IR is a lambda or a left-out one: never a None node
            node = nodes[index]
            assert node is not None
            span = node.span
        if spec.category == "operators" or spec.name == "NOT":
            side = "operand" if len(nodes) == 1 else ("left side" if index == 0 else "right side")
            prm = Param(f"the {side}", prm.type)
            name = f"'{name}'"
        if why == FAIL_NULLABLE and arg is not None:
            divisor = _DIVISORS.get(spec.name) == index
            blank = self.text(span)
            self.type_error(f"{name} needs a value for {prm.name}, but {blank} may "
                            "be blank", arg, prm.type, nullable=True, divisor=divisor,
                            hint=(f"say what the result is when {blank} is blank: "
                                  f"IF(ISBLANK({blank}), BLANK(), <the formula>) keeps it "
                                  f"blank ({blank} ?? 0 would make every blank #DIV/0!)")
                            if divisor else "")
            return
        if why and arg is None:
            fixes: tuple[Fix, ...] = ()
            if index == len(nodes) - 1 and isinstance(nodes[index], ast.Omitted):
                # `SUM(1, 2,)`: a trailing comma, most likely; offer to remove it.
                comma = self.source.rfind(",", 0, span.start)
                if comma >= 0 and not self.source[comma + 1:span.start].strip():
                    fixes = (Fix(Span(comma, span.start), "", "remove the trailing ','"),)
            self.error("E202", f"{name}: {why}", span, hint="; ".join(spec.describe()[:3]),
                       fixes=fixes)
            return
        got = arg.type if arg is not None else "a lambda"
        expected = _describe_expected(prm.type)
        if why:
            message = f"{name}: {why}"
        elif len(sigs) > 1 and len(failures) > 1:
            message = f"{name} does not accept {got} for {prm.name}"
        else:
            message = f"{name} expects {expected} for {prm.name}, got {got}"
        if arg is not None:
            hint = "; ".join(spec.describe()[:3]) if len(sigs) > 1 else ""
            if _records_for_grid(arg.type, prm.type):
                hint = ("a list of records is not a 2-D array: a record's fields have names, "
                        "not positions (a Record type has no field order); look a record up "
                        "with XLOOKUP(key, MAP(records, r => r.id), records) and read its field "
                        "by name, or MAP(records, r => r.field) for one column")
            self.type_error(message, arg, prm.type, label=f"expected {expected}", hint=hint)
        else:
            self.error("E202", message, span)

    def type_error(self, message: str, arg: IR, expected: Type, *, nullable: bool = False,
                   label: str = "", hint: str = "", divisor: bool = False) -> None:
        text = self.text(arg.span)
        simple = _is_simple(text)
        fixes: tuple[Fix, ...] = ()
        if nullable:
            zero = _ZERO_OF.get(expected.kind) if expected.kind != "Var" and not divisor \
                else None
            zero = zero or (None if divisor else _ZERO_OF.get(arg.type.kind))
            if zero is not None:
                wrapped = f"{text} ?? {zero}" if simple else f"({text}) ?? {zero}"
                fixes = (Fix(arg.span, f"({wrapped})", f"use {zero} when blank"),)
            self.error("E205", message, arg.span, label=label or "may be blank",
                       hint=hint or "handle the blank case: x ?? default, or "
                                    "IF(ISBLANK(x), ..., ...); or use the excel profile",
                       fixes=fixes)
            return
        a = arg.type
        if expected.kind == "Number" and a.kind == "Text":
            fixes = (Fix(arg.span, f"VALUE({text})", "convert the text to a number"),)
        elif expected.kind == "Number" and a.kind == "Boolean":
            fixes = (Fix(arg.span, f"IF({text}, 1, 0)", "turn TRUE/FALSE into 1/0"),)
        elif expected.kind == "Text" and a.is_scalar:
            fixes = (Fix(arg.span, f'TEXT({text}, "General")', "format the value as text"),)
        elif expected.kind == "Boolean" and a.kind == "Number":
            fixes = (Fix(arg.span, f"{text} <> 0" if simple else f"({text}) <> 0",
                         "compare with zero"),)
        if a.kind == "Any":
            hint = hint or ("untyped values must be narrowed first: IF(ISNUMBER(x), x, 0), "
                            "or declare the variable's type in the schema")
            self.error("E212", message, arg.span, label=label, hint=hint, fixes=fixes)
            return
        self.error("E202", message, arg.span, label=label or f"expected {expected}",
                   hint=hint or ("or use the excel profile for Excel's implicit conversions"
                                 if fixes else ""), fixes=fixes)


# ------------------------------------------------------------------------------ type helpers

#: Text-family work is C-speed string handling: one unit per 16 code points unless declared.
TEXT_PER_CHAR = 1 / 16


def per_char_cost(spec: FunctionSpec) -> float:
    if spec.cost.per_char:
        return spec.cost.per_char
    return TEXT_PER_CHAR if spec.category == "text" else 0.0


_ZERO_VALUE = {"Number": Decimal(0), "Text": "", "Boolean": False}


#: (id(spec), argument count) -> (spec, its signatures of that arity). Specs live as long as
#: their registry; the spec kept in the value guards against a reused id.
_FITTING: dict[tuple[int, int], tuple[FunctionSpec, tuple[Sig, ...]]] = {}


def _records_for_grid(got: Type, expected: Type) -> bool:
    """A list of records where a 2-D array (a list of lists) is expected (VLOOKUP(k, orders,
    2)): worth its own hint, since Excel users read a table's columns by number."""
    return (got.kind == "List" and got.elem is not None and got.elem.kind == "Record"
            and expected.kind == "List" and expected.elem is not None
            and expected.elem.kind == "List")


def _fitting(spec: FunctionSpec, n: int) -> tuple[Sig, ...]:
    """The signatures of ``spec`` that take ``n`` arguments (memoised: the checker asks for
    every call of every formula, and arity arithmetic was a tenth of a cold compile)."""
    hit = _FITTING.get((id(spec), n))
    if hit is not None and hit[0] is spec:
        return hit[1]
    fitting = tuple(s for s in spec.signatures if _arity_ok(s, n))
    if len(_FITTING) > 65_536:  # host registries come and go: never grow without bound
        _FITTING.clear()
    _FITTING[(id(spec), n)] = (spec, fitting)
    return fitting


def _arity_ok(s: Sig, n: int) -> bool:
    if n < s.min_args:
        return False
    if not s.repeat:
        return n <= len(s.params)
    fixed = len(s.params) - s.repeat
    return n >= len(s.params) and (n - fixed) % s.repeat == 0 or n == len(s.params)


def _has_var(t: Type) -> bool:
    if t.kind == "Var":
        return True
    if t.kind in ("List", "Many", "Fn"):
        return _has_var(t.elem) or any(_has_var(p) for p in t.params)  # type: ignore[arg-type]
    return any(_has_var(ft) for _, ft in t.fields)


def _subst(t: Type, bindings: Mapping[str, Type]) -> Type:
    if t.kind == "Var":
        bound = bindings.get(t.name)
        if bound is None:
            # Nothing constrained it (an empty list literal): the bottom type fits anywhere.
            return NEVER
        return optional(bound) if t.nullable else bound
    if t.kind in ("List", "Many"):
        return replace(t, elem=_subst(t.elem, bindings))  # type: ignore[arg-type]
    if t.kind == "Fn":
        return replace(t, params=tuple(_subst(p, bindings) for p in t.params),
                       elem=_subst(t.elem, bindings))  # type: ignore[arg-type]
    return t


def _describe_expected(t: Type) -> str:
    if t.kind == "Many":
        return f"{t.elem} or a list of {t.elem}"
    if t.kind == "Var":
        return "a value"
    return str(t)


def _is_simple(text: str) -> bool:
    stripped = text.strip()
    return stripped.replace("_", "").replace(".", "").isalnum() or (
        stripped.endswith(")") and stripped.split("(")[0].replace(".", "").isalnum())


def name_source(name: str) -> str:
    from ..types import _IDENT

    return name if _IDENT.match(name) else "{" + name + "}"


_RANKS = {"Number": 0, "Date": 0, "DateTime": 0, "Duration": 0, "Text": 1, "Boolean": 2}
#: Kinds Excel holds as serial numbers (a date is its day count, a time a fraction of a day).
_SERIAL_KINDS = frozenset(("Number", "Date", "DateTime", "Duration"))
#: What a blank reads as next to a value of each kind (KB 214244: an empty cell is zero).
_BLANK_AS = {"Number": (0, "Number"), "Date": (0, "Number"), "DateTime": (0, "Number"),
             "Duration": (0, "Number"), "Text": ("", "Text"), "Boolean": (False, "Boolean")}


#: Excel's functions from the Analysis ToolPak answer #VALUE! for a logical given directly
#: (GCD(TRUE, 2), EOMONTH(44987, TRUE), DELTA(TRUE, 1)) where its own functions read TRUE as 1:
#: each name here is backed by an Excel-computed case of the ironcalc conformance suite.
REFUSE_LOGICALS = frozenset((
    "GCD", "LCM", "QUOTIENT", "MULTINOMIAL", "MROUND", "SERIESSUM", "ERFC", "DELTA", "EOMONTH",
    "ISEVEN", "ISODD", "CUMIPMT", "CUMPRINC", "NOMINAL", "TBILLPRICE", "TBILLYIELD", "DOLLARDE",
    "DOLLARFR"))


def _excel_comparison(op: str, left_kind: str, right_kind: str,
                      same: Mapping[str, Any]) -> Callable[[Any, Any], bool]:
    """Excel's comparison of two values of different declared types (excel profile):

    * a blank is the other side's zero (0, "" or FALSE), so a blank equals 0, "" and FALSE;
    * numbers, dates, datetimes (by their own wall clock) and durations compare as the serial
      numbers Excel holds them as: ``DATE(2000, 1, 1) = 36526``;
    * otherwise numbers < texts < logicals, and values of different ranks are never equal.
    ``same`` holds the operator's own implementation per kind (texts ignore case)."""
    import operator as _op

    from ..functions._criteria import serial

    fn: Callable[[Any, Any], Any] = {"=": _op.eq, "<>": _op.ne, "<": _op.lt, "<=": _op.le, ">": _op.gt, ">=": _op.ge}[op]

    def compare(a: Any, b: Any) -> bool:
        ka, kb = left_kind, right_kind
        if a is None:
            a, ka = _BLANK_AS.get(kb, (None, kb)) if b is not None else (0, "Number")
        if b is None:
            b, kb = _BLANK_AS.get(ka, (None, ka))
        if ka == kb:
            return bool(same.get(ka, fn)(a, b))
        if ka in _SERIAL_KINDS and kb in _SERIAL_KINDS:
            return bool(fn(a if ka == "Number" else serial(a), b if kb == "Number" else serial(b)))
        ra, rb = _RANKS.get(ka, 0), _RANKS.get(kb, 0)
        return bool(fn(ra, rb)) if ra != rb else op == "<>"

    return compare
