"""The SQL backend: checked IR -> sqlglot expressions, rendered for any sqlglot dialect.

Like the polars backend, each sub-expression is a value plus an optional error-code expression
(``CASE WHEN divisor = 0 THEN '#DIV/0!' END``), combined left to right with COALESCE; lazy
forms select both with CASE, so SQL engines that evaluate every branch give the scalar answer.
A function without a faithful SQL form raises `Unsupported` when compiling, with the reason.

Form protocol (the ``sql=`` slot of a spec or signature):
- a sqlglot function class (``exp.Upper``): built from the arguments in order;
- eager callable ``form(*values: exp.Expr) -> exp.Expr | (value, error | None)``;
- lazy functions: ``form(*columns: SqlColumn) -> SqlColumn``;
- a callable whose ``wants_call`` attribute is true also gets ``call=node`` (the `ir.Call`).
Literals are exact: numbers are written as decimal text, so ``0.1 + 0.2 = 0.3`` holds in SQL.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Callable, Mapping, Sequence

from sqlglot import exp

from ..columnar.forms import form_for
from ..errors import Unsupported
from ..functions.spec import Refuse
from ..interpreter import ir
from ..types import Type
from ..values import ErrorValue
from .sql_let import _BINDER, let

DIALECTS = ("duckdb", "postgres", "spark", "trino", "bigquery", "snowflake", "sqlite")
NULL = exp.Null()


@dataclass(frozen=True)
class SqlColumn:
    """A compiled sub-expression: value, error code (None: cannot error), whether the value is
    already NULL on every row where the error is set (``strict``: the final CASE that blanks
    the value of an errored row is then not needed), a float value that may be non-finite and
    is not yet tested (``unchecked``, float mode), and the node's static type."""

    value: exp.Expr
    error: exp.Expr | None = None
    strict: bool = True
    unchecked: bool = False
    type: Type | None = None
    double: bool = False  # the value is a DOUBLE (float columns, division, powers)
    #: decimal mode: a DOUBLE estimate of the value (overflow guards test it, so they never
    #: repeat the decimal expression itself)
    estimate: exp.Expr | None = None

    def error_or_null(self) -> exp.Expr:
        return self.error if self.error is not None else exp.Null()


def _is_null(e: exp.Expr) -> bool:
    return isinstance(e, exp.Null)


def first_error(*errors: exp.Expr | None) -> exp.Expr | None:
    """COALESCE of the errors, left to right, flattened (None when nothing can error)."""
    present: list[exp.Expr] = []
    for e in errors:
        if e is None or _is_null(e):
            continue
        if isinstance(e, exp.Coalesce):
            present.append(e.this)
            present.extend(e.expressions)
        else:
            present.append(e)
        if isinstance(present[-1], exp.Literal):
            break  # a constant error code: nothing after it can be reached
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return exp.Coalesce(this=present[0], expressions=present[1:])


def cases(pairs: Sequence[tuple[exp.Expr, exp.Expr]],
          default: exp.Expr | None = None) -> exp.Expr:
    """CASE WHEN c1 THEN v1 ... ELSE default END, flattened: a default that is itself a CASE
    without ELSE-CASE nesting is merged, NULL defaults are dropped, and a CASE whose every
    branch is NULL is NULL."""
    if default is not None and _is_null(default):
        default = None
    if isinstance(default, exp.Case) and default.this is None:
        pairs = [*pairs, *((i.this, i.args["true"]) for i in default.args["ifs"])]
        default = default.args.get("default")
    # trailing branches that give what the ELSE gives are redundant
    while pairs and ((default is None and _is_null(pairs[-1][1]))
                     or (default is not None and pairs[-1][1] == default)):
        pairs = pairs[:-1]
    if not pairs:
        return default if default is not None else exp.Null()
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=default)


def error_when(condition: exp.Expr, code: str) -> exp.Expr:
    return cases([(condition, exp.Literal.string(code))])


def own_errors(spec: Any) -> exp.Expr | None:
    """A form's errors: an expression, or ``[(condition, code), ...]`` checked in order."""
    if spec is None or isinstance(spec, exp.Expr):
        return spec
    pairs = [(c, exp.Literal.string(code)) for c, code in spec]
    return cases(pairs) if pairs else None


def case(condition: exp.Expr, then: exp.Expr, otherwise: exp.Expr | None = None
         ) -> exp.Expr:
    return cases([(condition, then)], otherwise)


def is_null(e: exp.Expr) -> exp.Expr:
    return exp.Is(this=e, expression=exp.Null())


def not_null(e: exp.Expr) -> exp.Expr:
    return exp.Not(this=exp.Is(this=e, expression=exp.Null()))


def literal(value: Any) -> exp.Expr:
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, Decimal)):
        text = format(Decimal(value), "f")
        return exp.Literal.number(text)
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, dt.datetime):
        return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.build("TIMESTAMPTZ"))
    if isinstance(value, dt.date):
        return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.build("DATE"))
    if isinstance(value, tuple):
        return exp.Array(expressions=[literal(v) for v in value])
    raise TypeError(f"no SQL literal for {type(value).__name__}")


_CARRIERS = frozenset({"+", "-", "*", "NEG", "POS", "%"})
#: Forms computing in DOUBLE whatever their inputs (see `_sql_forms.divide`).
_DOUBLE_FORMS = frozenset({"/", "^"})
#: Forms whose value is NULL on every row where their own error is set (so an error never sits
#: next to a half-computed value): the division's NULLIF, for one.
_STRICT_FORMS = frozenset({"/", "+", "-", "*", "NEG", "POS", "%", "=", "<>", "<", "<=", ">", ">=",
                           "NOT"})
#: Float (DOUBLE) results the scalar engine could not hold are #NUM! (see module docs).
FLOAT_LIMIT = exp.Literal.number("1e308")


def not_finite(value: exp.Expr) -> exp.Expr:
    """#NUM! for NaN, infinities and |x| >= 1e308 (NaN sorts above every number in DuckDB,
    Spark, PostgreSQL and Trino, so the one comparison catches all three)."""
    return error_when(exp.GTE(this=exp.Abs(this=value), expression=FLOAT_LIMIT), "#NUM!")


class SqlCompiler:
    def __init__(self, columns: Mapping[str, str], numbers: str = "decimal",
                 max_sql_length: int | None = None) -> None:
        self.columns = columns
        self.numbers = numbers
        self.slots: dict[int, SqlColumn] = {}
        self.params: dict[int, exp.Expr] = {}
        #: inline SQL (no binder: a lambda body, a dialect without lateral subqueries) can
        #: still grow past any bound; its node count is checked call by call against this
        #: (a node renders to at least about half a character)
        self.max_nodes = None if max_sql_length is None else 2 * max_sql_length

    @staticmethod
    def bound(col: SqlColumn) -> SqlColumn:
        """The column with its value, error and estimate each bound once (`sql_let.let`)."""
        if _BINDER.get() is None:
            return col
        return replace(col, value=let(col.value),
                       error=None if col.error is None else let(col.error),
                       estimate=None if col.estimate is None else let(col.estimate))

    def guard_size(self, node: ir.IR, *parts: exp.Expr | None) -> None:
        if self.max_nodes is None or _BINDER.get() is not None:
            return
        from itertools import islice

        cap = self.max_nodes
        count = 0
        for part in parts:
            if part is not None:
                count += sum(1 for _ in islice(part.walk(), cap + 1 - count))
            if count > cap:
                from .sql_let import sql_length_error

                what = node.spec.name if isinstance(node, ir.Call) else "this formula"
                raise sql_length_error(count // 2, cap // 2, f"the SQL of {what}")

    def refuse(self, node: ir.IR, name: Any, reason: str) -> Unsupported:
        return Unsupported(f"SQL cannot express {name}: {reason}", function=str(name),
                           backend="sql", reason=reason, span=node.span)

    def compile(self, node: ir.IR) -> SqlColumn:
        col = self._compile(node)
        if col.error is not None and not node.may_error and type(node) is ir.Call \
                and not ir.reads_locals(node):
            # The checker proved it error-free: no error expression above this node.
            col = replace(col, error=None, strict=True, unchecked=False)
        if not isinstance(node, ir.Lambda):
            col = replace(col, type=node.type)
        return col

    def checked(self, col: SqlColumn) -> SqlColumn:
        if not col.unchecked:
            return col
        return replace(col, error=first_error(col.error, not_finite(col.value)), unchecked=False,
                       strict=False)

    def _compile(self, node: ir.IR) -> SqlColumn:
        kind = type(node)
        if kind is ir.Const:
            value = node.value  # type: ignore[union-attr]
            if type(value) is ErrorValue:
                return SqlColumn(exp.Null(), exp.Literal.string(value.code))
            if _huge(value):
                # more digits than DECIMAL(38) holds: a DOUBLE literal (tested for #NUM!)
                return SqlColumn(exp.cast(exp.Literal.string(format(Decimal(value), "E")),
                                          exp.DataType.build("DOUBLE")), double=True,
                                 unchecked=True)
            if _beyond_bigint(value):
                # engines type an integer literal past BIGINT as HUGEINT (DuckDB), which a CASE
                # joined with a DECIMAL(38, 18) branch casts to it and aborts the query (MOD's
                # exact branch): DOUBLE in float mode, DECIMAL(38, 0) in decimal mode
                if self.numbers == "float":
                    return SqlColumn(exp.cast(literal(value), exp.DataType.build("DOUBLE")),
                                     double=True)
                return SqlColumn(exp.cast(literal(value), exp.DataType.build("DECIMAL(38, 0)")))
            return SqlColumn(literal(value))
        if kind is ir.Var:
            slot = node.slot  # type: ignore[union-attr]
            if slot in self.params:
                return SqlColumn(self.params[slot])
            if slot in self.slots:
                return self.slots[slot]
            name = self.columns.get(node.name, node.name)  # type: ignore[union-attr]
            return SqlColumn(exp.column(name, quoted=True),
                             double=self.numbers == "float" and _has_numbers(node.type))
        if kind is ir.Let:
            for slot, value in zip(node.slots, node.values):  # type: ignore[union-attr]
                self.slots[slot] = self.bound(self.checked(self.compile(value)))
            return self.compile(node.body)  # type: ignore[union-attr]
        if kind is ir.Call:
            out = self.call(node)  # type: ignore[arg-type]
            self.guard_size(node, out.value, out.error)
            return out
        if kind is ir.Coerce:
            return self.coerce(node)  # type: ignore[arg-type]
        if kind is ir.FieldOf:
            obj = self.compile(node.obj)  # type: ignore[union-attr]
            return SqlColumn(exp.Dot(this=obj.value, expression=exp.to_identifier(node.name)),  # type: ignore[union-attr]
                             obj.error, obj.strict)
        if kind is ir.ListOf:
            items = [self.checked(self.compile(i)) for i in node.items]  # type: ignore[union-attr]
            return SqlColumn(exp.Array(expressions=[i.value for i in items]),
                             first_error(*[i.error for i in items]), False)
        if kind is ir.IndexOf:
            if type(node.obj) is ir.ListOf and node.obj.items:  # type: ignore[union-attr]
                return self.index_literal(node)  # type: ignore[arg-type]
            obj = self.compile(node.obj)  # type: ignore[union-attr]
            index = self.checked(self.compile(node.index))  # type: ignore[union-attr]
            size = exp.ArraySize(this=obj.value)
            oob = exp.or_(exp.LT(this=index.value, expression=exp.Literal.number(1)),
                          exp.GT(this=index.value, expression=size))
            value = exp.Bracket(this=obj.value, expressions=[index.value], offset=1)
            return SqlColumn(value, first_error(obj.error, index.error, error_when(oob, "#REF!")),
                             False)
        raise self.refuse(node, kind.__name__, "this construct has no SQL form")

    def index_literal(self, node: ir.IndexOf) -> SqlColumn:
        """``[a, b][i]``: only the selected item's error reaches the result (as in scalar)."""
        items = [self.checked(self.compile(i)) for i in node.obj.items]  # type: ignore[union-attr]
        index = self.checked(self.compile(node.index))
        at = [exp.EQ(this=exp.paren(index.value), expression=exp.Literal.number(n))
              for n in range(1, len(items) + 1)]
        value = cases([(c, i.value) for c, i in zip(at, items)])
        error = cases([(c, i.error_or_null()) for c, i in zip(at, items)],
                      exp.Literal.string("#REF!"))
        return SqlColumn(value, first_error(index.error, error), False)

    def call(self, node: ir.Call) -> SqlColumn:
        spec = node.spec
        form = form_for(node, "sql")
        if spec.name == "&":
            return self.concat(node)
        if isinstance(form, Refuse):
            raise self.refuse(node, spec.name, form.reason)
        if form is None or not (callable(form)):
            raise self.refuse(node, spec.name, "no SQL form is declared")
        if spec.check is not None and not spec.lazy and _concrete_mismatch(node):
            raise self.refuse(node, spec.name, "only the declared operand types vectorize "
                              f"({', '.join(str(p.type) for p in node.sig.params)})")
        folded = _fold_constant(node)
        if folded is not None:
            # every argument a literal: the scalar engine's own answer, computed once now
            # (exact where the engine would compute in DOUBLE: 10^20 + 1); float mode keeps
            # fractions DOUBLE (a DECIMAL(18, 18) literal times 180 overflows on DuckDB), whole
            # numbers literal (forms read constants such as an instance number -1)
            if self.numbers == "float" and isinstance(folded, Decimal) \
                    and folded != folded.to_integral_value():
                return SqlColumn(exp.cast(literal(folded), exp.DataType.build("DOUBLE")),
                                 double=True)
            return self._compile(ir.Const(folded, node.type, node.span))
        never = _never_arg(node)
        if never is not None:
            # an argument that is always an error: the first error left to right (as scalar)
            before = [self.checked(self.compile(a)) for a in node.args[:never + 1]]
            null = exp.cast(exp.Null(), exp.DataType.build(sql_type(node.type, self.numbers)))
            return SqlColumn(null, first_error(*[c.error for c in before]))
        if any(isinstance(a, ir.Lambda) for a in node.args):
            return self.higher_order(node, form)
        args = [self.bound(self.compile(a)) for a in node.args]
        if self.numbers == "decimal" and spec.name in _DECIMAL_OPS and node.type.kind == "Number" \
                and not any(a.double for a in args) \
                and all(n.type.kind == "Number" for n in node.args):
            return self.decimal_op(spec.name, args)
        if spec.lazy or getattr(form, "wants_columns", False):
            out: Any = form(*[self.checked(a) for a in args], **_call_kw(form, node))
            col = out if isinstance(out, SqlColumn) else SqlColumn(out)
            return replace(col, strict=col.error is None)
        values = [a.value for a in args]
        widen = self.numbers == "float" and spec.name in _CARRIERS and not self.params \
            and node.type.kind == "Number" and all(n.type.kind == "Number" for n in node.args)
        if widen:
            # float mode computes + - * in DOUBLE: an INTEGER or BIGINT operand (a literal, an
            # IF of literals) would make the engine multiply integers and abort the whole query
            # on an overflow (100000 * 100000 overflows INTEGER on DuckDB). Not in a lambda
            # body: it computes in its list's item type, and must not gain a #NUM! test
            values = [v if a.double else exp.cast(exp.paren(v), exp.DataType.build("DOUBLE"))
                      for a, v in zip(args, values)]
        if isinstance(form, type) and issubclass(form, exp.Func):
            out = form.from_arg_list(values)
        else:
            out = form(*values, **_call_kw(form, node))
        own = None
        if isinstance(out, tuple):
            out, own = out[0], own_errors(out[1])
        double = node.type.kind == "Number" and (spec.name in _DOUBLE_FORMS or widen
                                                 or any(a.double for a in args))
        floats = double
        carrier = floats and spec.name in _CARRIERS
        errors: list[exp.Expr | None] = []
        pending = False
        for i, a in enumerate(args):
            later = own is not None or any(b.error is not None for b in args[i + 1:])
            if a.unchecked and carrier and not later:
                pending = True
                errors.append(a.error)
            else:
                errors.append(self.checked(a).error)
        error = first_error(*errors, own)
        # strict: the value is NULL wherever the error is set. NULL-propagating operators keep
        # it from their operands; of the forms with errors of their own only the division
        # (NULLIF) blanks its value there.
        strict = error is None or (all(a.strict for a in args) and spec.name in _STRICT_FORMS
                                   and (own is None or spec.name == "/"))
        # a quotient of DECIMALs (|x| < 1e38) cannot leave DOUBLE's range; other DOUBLE
        # results may (POWER(10, 400), a DOUBLE column's overflow)
        may_overflow = spec.name != "/" or any(a.double for a in args)
        return SqlColumn(out, error, strict,
                         floats and may_overflow and (node.may_error or pending), double=double)

    @staticmethod
    def decimal_op(op: str, args: list[SqlColumn]) -> SqlColumn:
        """+ - * on DECIMAL columns (docs/columnar.md, "SQL decimal policy"): the result is a
        DECIMAL(38, 18), so |x| < 1e20. Engines type a product by adding the operands' scales
        (DECIMAL(38, 18) * DECIMAL(38, 18) is DECIMAL(38, 36) on DuckDB, overflowing at 100) and
        abort the whole query on an overflow; so a row whose operands or result do not fit is
        #NUM! (tested on a DOUBLE estimate, with a margin) and never computed. Sums are exact;
        a product is exact when one operand is a whole-number literal (DECIMAL(38, 18) times
        DECIMAL(38, 0)) or both have at most 9 decimal places (DECIMAL(38, 9) each), so the
        result is at scale 18; otherwise it is computed in DOUBLE and rounded to 18 places
        (relative 1e-15)."""
        a, b = args
        ea, eb = _estimate(a), _estimate(b)
        est = {"+": exp.Add, "-": exp.Sub, "*": exp.Mul}[op](this=exp.paren(ea),
                                                              expression=exp.paren(eb))
        fits = exp.and_(*[exp.LT(this=exp.Abs(this=e.copy()), expression=_DECIMAL_FIT)
                          for e in (ea, eb, est)])
        if op == "*":
            def places(c: SqlColumn, step: str) -> exp.Expr:
                return exp.EQ(this=exp.Mod(this=exp.paren(c.value.copy()),
                                           expression=exp.Literal.number(step)),
                              expression=exp.Literal.number(0))

            def mul(sa: exp.DataType, sb: exp.DataType) -> exp.Expr:
                return exp.Mul(this=exp.cast(exp.paren(a.value.copy()), sa),
                               expression=exp.cast(exp.paren(b.value.copy()), sb))

            # exact when the operands' decimal places add up to 18 or fewer: an integer times
            # anything (18 + 0), or two numbers of at most 9 places each
            whole_a, whole_b = _is_integer_literal(a), _is_integer_literal(b)
            if whole_a or whole_b:
                exact = mul(_D0, _D18) if whole_a else mul(_D18, _D0)
                value = case(fits, exact)
            else:
                # (each operand is read twice per product: a chain's text doubles per level)
                value = cases([
                    (exp.and_(fits.copy(), places(a, "0.000000001"),
                              places(b, "0.000000001")), mul(_D9, _D9)),
                    (fits, exp.cast(exp.paren(est.copy()), _D18))])
        else:
            cls = exp.Add if op == "+" else exp.Sub
            value = case(fits, cls(this=exp.cast(exp.paren(a.value), _D18),
                                   expression=exp.cast(exp.paren(b.value), _D18)))
        over = exp.Not(this=exp.paren(fits.copy()))
        # a NULL operand makes `fits` NULL: a blank, not an error
        own = cases([(exp.and_(not_null(ea.copy()), not_null(eb.copy()), over),
                      exp.Literal.string("#NUM!"))])
        error = first_error(a.error, b.error, own)
        return SqlColumn(value, error, strict=False, estimate=est)

    def concat(self, node: ir.Call) -> SqlColumn:
        """``&``: Text, Boolean and Date operands are shown as `values.display_text` does;
        Numbers would need Excel's General format, which has no portable SQL form."""
        parts = []
        errors = []
        for arg in node.args:
            col = self.checked(self.compile(arg))
            kind = arg.type.kind
            if kind == "Boolean":
                parts.append(case(col.value, exp.Literal.string("TRUE"),
                                  exp.Literal.string("FALSE")))
            elif kind == "Date":
                parts.append(exp.cast(col.value, exp.DataType.build("TEXT")))
            elif kind == "Text":
                parts.append(col.value)
            else:
                raise self.refuse(node, "&", f"{arg.type} to text (Excel's General format of "
                                  "numbers has no portable SQL form)")
            errors.append(col.error)
        value = exp.DPipe(this=parts[0], expression=parts[1], safe=True)
        return SqlColumn(value, first_error(*errors),
                         all(e is None for e in errors))

    def higher_order(self, node: ir.Call, form: Callable[..., Any]) -> SqlColumn:
        """Lambdas become SQL lambdas (``x -> x * 2``) where the dialect has them."""
        values: list[Any] = []
        errors = []
        for a in node.args:
            if isinstance(a, ir.Lambda):
                names = [exp.to_identifier(f"_p{slot}") for slot in a.slots]
                inner = SqlCompiler(self.columns, self.numbers)
                inner.max_nodes = self.max_nodes
                inner.slots = dict(self.slots)
                inner.params = dict(self.params)
                for slot, name in zip(a.slots, names):
                    inner.params[slot] = exp.column(name)
                # a lambda body reads its parameters: nothing in it can move to a binding
                token = _BINDER.set(None)
                try:
                    body = inner.checked(inner.compile(a.body))
                finally:
                    _BINDER.reset(token)
                if body.error is not None:
                    raise self.refuse(node, node.spec.name, "a lambda whose body may error")
                values.append(exp.Lambda(this=body.value, expressions=names))
            else:
                col = self.checked(self.compile(a))
                values.append(col.value)
                errors.append(col.error)
        out = form(*values, **_call_kw(form, node))
        own = None
        if isinstance(out, tuple):
            out, own = out[0], own_errors(out[1])
        return SqlColumn(out, first_error(*errors, own), own is None)

    def coerce(self, node: ir.Coerce) -> SqlColumn:
        inner = self.checked(self.compile(node.node))
        v = let(inner.value)
        mode = node.mode
        if mode in ("blank_to_number", "blank_to_text", "blank_to_boolean"):
            zero = {"blank_to_number": exp.Literal.number(0), "blank_to_text": exp.Literal.string(""),
                    "blank_to_boolean": exp.Boolean(this=False)}[mode]
            return SqlColumn(exp.Coalesce(this=v, expressions=[zero]), inner.error, False)
        if mode == "boolean_to_number":
            return SqlColumn(case(v, exp.Literal.number(1), exp.Literal.number(0)), inner.error,
                             False)
        if mode == "number_to_boolean":
            return SqlColumn(exp.NEQ(this=exp.paren(v), expression=exp.Literal.number(0)),
                             inner.error, inner.strict)
        if mode == "text_to_number":
            cleaned = exp.Trim(this=exp.Anonymous(this="REPLACE", expressions=[
                v, exp.Literal.string(","), exp.Literal.string("")]))
            target = "DOUBLE" if self.numbers == "float" else "DECIMAL(38, 10)"
            number = exp.TryCast(this=cleaned, to=exp.DataType.build(target), safe=True)
            bad = is_null(number)
            if node.node.type.nullable:  # a blank passes on (blank_to_number follows)
                bad = exp.and_(bad, exp.Not(this=is_null(v)))
            return SqlColumn(number, first_error(inner.error, error_when(bad, "#VALUE!")), False)
        if mode == "text_to_boolean":
            upper = exp.Upper(this=exp.Trim(this=v))
            value = cases([(exp.EQ(this=upper, expression=exp.Literal.string("TRUE")),
                            exp.Boolean(this=True)),
                           (exp.EQ(this=upper, expression=exp.Literal.string("FALSE")),
                            exp.Boolean(this=False))])
            bad = is_null(value)
            if node.node.type.nullable:  # a blank passes on (blank_to_boolean follows)
                bad = exp.and_(bad, exp.Not(this=is_null(v)))
            return SqlColumn(value, first_error(inner.error, error_when(bad, "#VALUE!")), False)
        raise self.refuse(node, mode, "this coercion has no SQL form")


_DECIMAL_OPS = frozenset({"+", "-", "*"})
_D18 = exp.DataType.build("DECIMAL(38, 18)")
_D9 = exp.DataType.build("DECIMAL(38, 9)")
_D0 = exp.DataType.build("DECIMAL(38, 0)")


def _is_integer_literal(col: SqlColumn) -> bool:
    e = col.value
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.Neg):
        e = e.this
    return isinstance(e, exp.Literal) and not e.is_string and "." not in e.this \
        and "e" not in e.this.lower()
#: DECIMAL(38, 18) holds |x| < 1e20; the DOUBLE estimate is tested with a margin.
_DECIMAL_FIT = exp.Literal.number("99999999999990000000")


def _estimate(col: SqlColumn) -> exp.Expr:
    if col.estimate is not None:
        return col.estimate
    return exp.cast(exp.paren(col.value.copy()), exp.DataType.build("DOUBLE"))


def _huge(value: Any) -> bool:
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        return abs(Decimal(value)) >= Decimal("1e20") and len(format(Decimal(value), "f")) > 38
    return False


def _beyond_bigint(value: Any) -> bool:
    """An integer literal no BIGINT holds (DuckDB would type it HUGEINT)."""
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        d = Decimal(value)
        return abs(d) >= _BIGINT_LIMIT and d == d.to_integral_value()
    return False


_BIGINT_LIMIT = Decimal(2) ** 63


def _has_numbers(t: Type) -> bool:
    return t.kind == "Number" or (t.kind == "List" and t.elem is not None
                                  and t.elem.kind == "Number")


def to_sql(root: ir.IR, *, columns: Mapping[str, str] | None = None, numbers: str = "decimal",
           max_sql_length: int | None = None
           ) -> tuple[exp.Expr, exp.Expr | None]:
    """(value expression, error-code expression or None). ``numbers``: "decimal" when Number
    columns are DECIMAL (the engine's exact arithmetic), "float" when they are DOUBLE (then a
    non-finite result is #NUM!). Under an active `sql_let.Binder` the expressions read its
    bindings (see `frame.to_sql_form`)."""
    if numbers not in ("float", "decimal"):
        raise ValueError("numbers must be 'float' or 'decimal'")
    compiler = SqlCompiler(columns or {}, numbers, max_sql_length)
    col = compiler.checked(compiler.compile(root))
    if col.error is None:
        return col.value, None
    if col.strict:
        return col.value, col.error
    error = let(col.error)  # read twice: by the value's CASE and as the error column
    return case(is_null(error), col.value), error


def sql_type(t: Type, numbers: str = "decimal") -> str:
    """A column type for a formula type (generic SQL; sqlglot transpiles it per dialect)."""
    kind = t.kind
    if kind == "Number":
        return "DECIMAL(38, 18)" if numbers == "decimal" else "DOUBLE"
    if kind == "List":
        return sql_type(t.elem, numbers) + "[]"  # type: ignore[arg-type]
    if kind == "Record":
        return "STRUCT(" + ", ".join(f'"{n}" {sql_type(ft, numbers)}' for n, ft in t.fields) + ")"
    return {"Text": "TEXT", "Boolean": "BOOLEAN", "Date": "DATE", "DateTime": "TIMESTAMPTZ",
            "Duration": "INTERVAL"}.get(kind, "TEXT")


def type_name(t: Type) -> str:
    return t.kind


def _call_kw(form: Any, node: ir.Call) -> dict[str, Any]:
    """``{"call": node}`` for a form that declares ``wants_call`` (see the module docs)."""
    return {"call": node} if getattr(form, "wants_call", False) else {}


def _fold_constant(node: ir.Call) -> Any:
    """The value (or ErrorValue) of an eager, pure call whose arguments are all literal
    numbers, texts, booleans or dates, by the scalar implementation; None when not foldable.
    Numbers are kept to what the SQL backend writes exactly (|x| < 1e20, rounded at 18
    places)."""
    import decimal

    from ..values import CONTEXT, XLError

    spec = node.spec
    if spec.lazy or spec.volatile or spec.needs_ctx or spec.accepts_errors or not node.args:
        return None
    values = []
    for a in node.args:
        if type(a) is not ir.Const or isinstance(a.value, (ErrorValue, tuple)) or a.value is None:
            return None
        values.append(a.value)
    impl = node.sig.impl or spec.impl
    if impl is None:
        return None
    try:
        with decimal.localcontext(CONTEXT):
            value = impl(*values)
    except XLError as exc:
        return ErrorValue(exc.code) if isinstance(getattr(exc, "code", None), str) else None
    except Exception:
        return None
    if isinstance(value, ErrorValue):
        return value
    if isinstance(value, dt.datetime):
        return None  # a DateTime keeps its zone's reading: left to the forms
    if isinstance(value, bool) or isinstance(value, (str, dt.date)):
        return value
    if isinstance(value, (int, Decimal)):
        number = Decimal(value)
        if number == number.to_integral_value() and abs(number) < Decimal("1e38"):
            return number.quantize(Decimal(1), context=decimal.Context(prec=60))
        if not abs(number) < Decimal("1e20"):
            return None  # left to the engine's own arithmetic and range tests
        return number.quantize(Decimal("1e-18"), context=decimal.Context(prec=60)).normalize()
    return None


def _never_arg(node: ir.Call) -> int | None:
    """The first argument typed Never (always an error) of an eager call that does not inspect
    errors, else None."""
    spec = node.spec
    if spec.lazy or spec.accepts_errors:
        return None
    for i, a in enumerate(node.args):
        if not isinstance(a, ir.Lambda) and a.type.kind == "Never":
            return i
    return None


def _concrete_mismatch(node: ir.Call) -> bool:
    """A custom-typed call whose arguments are not the declared concrete types."""
    for arg, prm in zip(node.args, node.sig.params):
        if prm.type.kind in ("Var", "Any", "Many", "Fn"):
            continue
        if arg.type.kind != prm.type.kind:
            return True
    return False
