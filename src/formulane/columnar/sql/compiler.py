"""The SQL backend: checked IR -> sqlglot expressions, rendered for any sqlglot dialect.

Like the polars backend, each sub-expression is a value plus an optional error-code expression
(``CASE WHEN divisor = 0 THEN '#DIV/0!' END``), combined left to right with COALESCE; lazy
forms select both with CASE, so SQL engines that evaluate every branch give the scalar answer.
A function without a faithful SQL form raises `Unsupported` when compiling, with the reason.

Form protocol (the ``sql=`` slot of a spec or signature):
- a sqlglot function class (``exp.Upper``): built from the arguments in order;
- eager callable ``form(*values: exp.Expr) -> exp.Expr | (value, error | None)``;
- lazy functions: ``form(*columns: SqlColumn) -> SqlColumn``;
- a table entry (`forms.form.Form`) is bound to its `FormCall` by the walk
  (`columnar.walk.Walker.with_call`: the compiler's numeric mode and the arguments' columns)
  and then called as any callable of the values or columns.
An entry flagged ``null_on_error`` keeps its result ``strict`` (the value NULL wherever the
error is set, given strict arguments), so the query needs no ``CASE WHEN error IS NULL``
around its value.
Literals are exact: numbers are written as decimal text, so ``0.1 + 0.2 = 0.3`` holds in SQL.

The walk itself (folding, slots, LET, calls, error plumbing left to right) is shared with the
polars backend (`columnar.walk`); `SqlCompiler` holds the SQL hooks, `kit` the builders the
forms use too, `let` the binding of an expression once.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Mapping, Sequence

from sqlglot import exp

from ...errors import Unsupported
from ...interpreter import ir
from ...limits import Limits
from ...types import Type
from ...values import ErrorValue
from ..walk import Walker, null_on_error
from .kit import (ColumnType, SqlColumn, case, cases, dtype, error_when, first_error, is_null,
                  literal, literal_decimal, not_finite, own_errors, sql_type)
from .let import _BINDER, let, sql_length_error

class SqlCompiler(Walker[SqlColumn]):
    """The SQL hooks of the shared walk (`columnar.walk`): DOUBLE/DECIMAL typing (``double``),
    strictness (``strict``: the value is NULL wherever the error is set), SQL lambdas, the
    size guard of inline SQL."""

    backend = "sql"
    label = "SQL"
    constant_errors_shortcut = False

    def __init__(self, columns: Mapping[str, str], numbers: str = "decimal",
                 max_sql_length: int | None = None, limits: Limits | None = None,
                 column_types: Mapping[str, ColumnType] | None = None) -> None:
        super().__init__(limits)
        self.columns = columns
        self.numbers = numbers
        #: the table's column SQL types the caller gave (`kit.column_types`), by variable name
        self.column_types: Mapping[str, ColumnType] = column_types or {}
        #: whether the node just compiled wrote a range test of `sql_join.join_decimals`
        self.range_tested = False
        self.params: dict[int, exp.Expr] = {}
        #: inline SQL (no binder: a lambda body, a dialect without lateral subqueries) can
        #: still grow past any bound; its node count is checked call by call against this
        #: (a node renders to at least about half a character)
        self.max_nodes = None if max_sql_length is None else 2 * max_sql_length

    def numbers_mode(self) -> str:
        return self.numbers

    # ------------------------------------------------------------------ column plumbing

    def error_of(self, col: SqlColumn) -> exp.Expr | None:
        return col.error

    def without_error(self, col: SqlColumn) -> SqlColumn:
        if self.range_tested:
            # the checker proved the call cannot err, but a branch joined to DECIMAL(38, 18)
            # below it may not fit there (`sql_join.join_decimals`): its #NUM! stays
            return col
        return col.but(error=None, strict=True, unchecked=False)

    def _compile(self, node: ir.IR) -> SqlColumn:
        from ..forms.operators.sql_join import range_tests

        before = range_tests()
        col = super()._compile(node)
        # read by `without_error`, which the walk calls right after this on the same node
        self.range_tested = range_tests() != before
        return col

    def typed(self, col: SqlColumn, t: Type) -> SqlColumn:
        return col if col.type is t else col.but(type=t)

    def unchecked(self, col: SqlColumn) -> bool:
        return col.unchecked

    def checked(self, col: SqlColumn) -> SqlColumn:
        if not col.unchecked:
            return col
        return col.but(error=first_error(col.error, not_finite(col.value)), unchecked=False,
                       strict=False)

    def first_error(self, errors: list[Any]) -> exp.Expr | None:
        return first_error(*errors)

    def bound(self, col: SqlColumn) -> SqlColumn:
        """The column with its value, error and estimate each bound once (`let.let`)."""
        if _BINDER.get() is None:
            return col
        return col.but(value=let(col.value),
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
                what = node.spec.name if isinstance(node, ir.Call) else "this formula"
                raise sql_length_error(count // 2, cap // 2, f"the SQL of {what}")

    def refuse(self, node: ir.IR, name: Any, reason: str) -> Unsupported:
        return Unsupported(f"SQL cannot express {name}: {reason}", function=str(name),
                           backend="sql", reason=reason, span=node.span)

    def unknown(self, node: ir.IR) -> Unsupported:
        return self.refuse(node, type(node).__name__, "this construct has no SQL form")

    # ------------------------------------------------------------------------- leaves

    def const(self, node: ir.Const) -> SqlColumn:
        value = node.value
        if type(value) is ErrorValue:
            return SqlColumn(exp.Null(), exp.Literal.string(value.code))
        if _huge(value):
            # more digits than DECIMAL(38) holds: a DOUBLE literal (tested for #NUM!)
            return SqlColumn(exp.cast(exp.Literal.string(format(Decimal(value), "E")),
                                      dtype("DOUBLE")), double=True,
                             unchecked=True)
        if _beyond_bigint(value):
            # engines type an integer literal past BIGINT as HUGEINT (DuckDB), which a CASE
            # joined with a DECIMAL(38, 18) branch casts to it and aborts the query (MOD's
            # exact branch): DOUBLE in float mode, DECIMAL(38, 0) in decimal mode
            if self.numbers == "float":
                return SqlColumn(exp.cast(literal(value), dtype("DOUBLE")),
                                 double=True)
            return SqlColumn(exp.cast(literal(value), dtype("DECIMAL(38, 0)")), decimal=(38, 0))
        if node.folded and self.numbers == "float" and isinstance(value, Decimal) \
                and -int(value.as_tuple().exponent) > _LITERAL_PLACES:
            # a value folded from a constant call (`interpreter.fold`): float mode keeps long
            # fractions DOUBLE (a DECIMAL(18, 18) literal times 180 overflows on DuckDB);
            # whole numbers and short fractions are written as a formula's own literals are
            # (forms read constants such as an instance number -1)
            return SqlColumn(exp.cast(literal(value), dtype("DOUBLE")),
                             double=True)
        return SqlColumn(literal(value), decimal=literal_decimal(value))

    def var(self, node: ir.Var) -> SqlColumn:
        if node.slot in self.params:
            return SqlColumn(self.params[node.slot])
        name = self.columns.get(node.name, node.name)
        known = self.column_types.get(name)
        if known is not None and node.type.kind == "Number":
            if not known.numeric:
                from ...errors import CheckError

                raise CheckError(f"column_types[{node.name!r}] is {known.text!r}, not a number "
                                 f"type, but the schema reads {node.name} as a Number",
                                 code="E209", span=node.span)
            # a DOUBLE column is read as a DOUBLE in either mode; an exact one (DECIMAL, an
            # integer) as exact, so float mode widens it before + - * (an INTEGER product
            # aborts the query on an overflow); a REAL (FLOAT4) one as a DOUBLE that float
            # mode widens alike (`_narrow`: its product is a float4's, inf at 3.4e38)
            return SqlColumn(exp.column(name, quoted=True), double=known.double,
                             decimal=None if self.numbers == "float" else known.decimal,
                             maybe_double=self.numbers == "float" and known.double
                             and not dtype(known.text).is_type(exp.DataType.Type.DOUBLE))
        items = known.items if known is not None else None
        if items is not None and items.numeric and not items.double \
                and self.numbers == "decimal" and node.type.kind == "List" \
                and _has_numbers(node.type):
            # decimal mode, a list of exact numbers (DECIMAL(18, 2)[], INTEGER[]): its items are
            # read as they are, not through their text (`forms.lists._sql_decimal`); float mode
            # reads any list as before
            return SqlColumn(exp.column(name, quoted=True))
        # no type given: float mode reads a DOUBLE, which may be narrower in the engine (an
        # INTEGER, a DECIMAL, a REAL: `_narrow`); decimal mode a DECIMAL or a DOUBLE (a CSV
        # or Parquet read into the engine), which the forms' exact SQL must not take for a
        # DECIMAL (`FormCall.exact`)
        numbers = _has_numbers(node.type)
        return SqlColumn(exp.column(name, quoted=True),
                         double=self.numbers == "float" and numbers, maybe_double=numbers)

    def field(self, node: ir.FieldOf) -> SqlColumn:
        obj = self.compile(node.obj)
        record = obj.value if isinstance(obj.value, (exp.Column, exp.Dot, exp.Bracket)) \
            else exp.paren(obj.value)  # (CASE ... END).name
        return SqlColumn(exp.Dot(this=record, expression=exp.to_identifier(node.name)),
                         obj.error, obj.strict, maybe_double=obj.maybe_double)

    def list_of(self, node: ir.ListOf) -> SqlColumn:
        items = [self.checked(self.compile(i)) for i in node.items]
        if node.type.elem is not None and node.type.elem.kind == "Number":
            items = self.joined(items)
        return SqlColumn(exp.Array(expressions=[i.value for i in items]),
                         first_error(*[i.error for i in items]), False)

    def known_index(self, node: ir.IndexOf) -> int | None:
        """The position when the index is a constant number (truncated, as the scalar
        engine's ``int``), else None."""
        from ...interpreter.fold import constant

        k = constant(node.index, self.limits, self.memo)
        if isinstance(k, (int, Decimal)) and not isinstance(k, bool):
            return int(k)
        return None

    def index(self, node: ir.IndexOf) -> SqlColumn:
        if type(node.obj) is ir.ListOf and node.obj.items:
            return self.index_literal(node)
        obj = self.compile(node.obj)
        k = self.known_index(node)
        if k is not None:
            return self.index_known(node, obj, k)
        index = self.checked(self.compile(node.index))
        n = let(index.value)
        items = let(obj.value)
        # the position truncated, as the scalar engine's int(): out of range is n < 1 or
        # n >= size + 1 (tested on n itself, so no cast of a huge n); the item is read only in
        # range, through a BIGINT, which DuckDB's list index needs (a DECIMAL index does not
        # bind) and from which sqlglot writes Spark's and Snowflake's 0-based index
        oob = exp.or_(exp.LT(this=n, expression=exp.Literal.number(1)),
                      exp.GTE(this=n.copy(), expression=exp.Add(
                          this=exp.ArraySize(this=items), expression=exp.Literal.number(1))))
        position = exp.Cast(this=exp.Trunc(this=n.copy()), to=dtype("BIGINT"))
        value = case(exp.Not(this=exp.paren(oob.copy(), copy=False)),
                     exp.Bracket(this=items.copy(), expressions=[position], offset=1))
        # NULL wherever its own error is set; wherever an operand's is, when that one is strict
        strict = all(c.error is None or c.strict for c in (obj, index))
        return SqlColumn(value, first_error(obj.error, index.error, error_when(oob, "#REF!")),
                         strict, maybe_double=obj.maybe_double)

    def index_known(self, node: ir.IndexOf, obj: SqlColumn, k: int) -> SqlColumn:
        """``xs[k]`` with ``k`` known: #REF! past the end (before it, a blank list is blank);
        the item is read only where it exists (Spark's ANSI mode aborts the query on an index
        past the end), so the value is NULL wherever the error is set."""
        obj = self.checked(obj)
        if k < 1:
            ref: exp.Expr = exp.Literal.string("#REF!")
            if node.obj.type.nullable:
                ref = case(exp.Not(this=is_null(obj.value)), ref)
            return SqlColumn(exp.Null(), first_error(obj.error, ref))
        items = let(obj.value)
        size = exp.ArraySize(this=items)
        value = case(exp.GTE(this=size, expression=exp.Literal.number(k)),
                     exp.Bracket(this=items, expressions=[exp.Literal.number(k)], offset=1))
        past = error_when(exp.LT(this=size.copy(), expression=exp.Literal.number(k)), "#REF!")
        return SqlColumn(value, first_error(obj.error, past), obj.error is None or obj.strict,
                         maybe_double=obj.maybe_double)

    def index_literal(self, node: ir.IndexOf) -> SqlColumn:
        """``[a, b][i]``: only the selected item's error reaches the result (as in scalar)."""
        k = self.known_index(node)
        if k is not None:  # the item itself, or #REF! (decided here)
            items = node.obj.items  # type: ignore[union-attr]
            if 1 <= k <= len(items):
                return self.checked(self.compile(items[k - 1]))
            return SqlColumn(exp.Null(), exp.Literal.string("#REF!"))
        items = [self.checked(self.compile(i)) for i in node.obj.items]  # type: ignore[union-attr]
        if node.type.kind == "Number":
            items = self.joined(items)
        index = self.checked(self.compile(node.index))
        at = [exp.EQ(this=exp.paren(index.value), expression=exp.Literal.number(n))
              for n in range(1, len(items) + 1)]
        value = cases([(c, i.value) for c, i in zip(at, items)])
        error = cases([(c, i.error_or_null()) for c, i in zip(at, items)],
                      exp.Literal.string("#REF!"))
        return SqlColumn(value, first_error(index.error, error), False,
                         maybe_double=_passes_double(items))

    def joined(self, cols: list[SqlColumn]) -> list[SqlColumn]:
        """Number branches of one CASE or list with one DECIMAL type where they may differ
        (`sql_join.join_decimals`)."""
        from ..forms.operators.sql_join import join_decimals

        joined = join_decimals(list[SqlColumn | None](cols), self.numbers)
        return [c for c in joined if c is not None]  # none is None: none was given

    # -------------------------------------------------------------------------- calls

    def prepare(self, node: ir.Call, args: list[SqlColumn], nodes: Sequence[ir.IR]
                ) -> list[SqlColumn]:
        """An eager call's Number arguments given to one repeated parameter (``MAX(a, b)``,
        ``SUM(a, b)``: the forms put them in one list) with one DECIMAL type where they may
        differ (`sql_join.join_decimals`); lazy forms join their own branches."""
        sig = node.sig
        if self.numbers == "float" and node.spec.sql_widens and not self.params:
            # the form computes in its arguments' engine types (ABS of a SMALLINT -32768;
            # DuckDB's LIST_SUM of DECIMAL(38, 0) items overflows HUGEINT at 1.7e38), aborting
            # the query on an overflow (`spec.sql_widens`): every Number argument not surely a
            # DOUBLE (a typed INTEGER column, an IF of one) is widened to DOUBLE, as + - *
            # widen theirs; not a literal, which a DOUBLE beside it widens
            return [a.but(value=exp.cast(a.value, dtype("DOUBLE")), double=True,
                          maybe_double=False)
                    if n.type.kind == "Number" and type(n) is not ir.Const
                    and not _surely_double(a) else a
                    for a, n in zip(args, node.args)]
        if self.numbers != "decimal" or node.spec.lazy or not sig.repeat or len(args) < 2:
            return args
        start = len(sig.params) - sig.repeat
        groups: dict[int, list[int]] = {}
        for i in range(start, len(args)):
            if node.args[i].type.kind == "Number":
                groups.setdefault((i - start) % sig.repeat, []).append(i)
        out = list(args)
        for positions in groups.values():
            if len(positions) > 1:
                for i, col in zip(positions, self.joined([args[i] for i in positions])):
                    out[i] = col
        return out

    def call(self, node: ir.Call) -> SqlColumn:
        out = super().call(node)
        self.guard_size(node, out.value, out.error)
        return out

    def always_error(self, node: ir.Call, before: list[SqlColumn]) -> SqlColumn:
        null = exp.cast(exp.Null(), dtype(sql_type(node.type, self.numbers)))
        return SqlColumn(null, first_error(*[c.error for c in before]))

    def call_args(self, node: ir.Call) -> list[SqlColumn]:
        return [self.bound(self.compile(a)) for a in node.args]

    def arithmetic(self, node: ir.Call, args: list[SqlColumn], nodes: Sequence[ir.IR]
                   ) -> SqlColumn | None:
        if self.numbers == "decimal" and node.spec.arithmetic in _DECIMAL_OPS \
                and node.type.kind == "Number" and not any(a.double for a in args) \
                and all(n.type.kind == "Number" for n in node.args):
            return self.decimal_op(node.spec.arithmetic, args, nodes)
        return None

    def lazy(self, node: ir.Call, form: Any, args: list[SqlColumn]) -> SqlColumn:
        out: Any = form(*[self.checked(a) for a in args])
        col = out if isinstance(out, SqlColumn) else SqlColumn(out)
        # a lazy form flagged ``null_on_error`` says in its column whether its value is NULL
        # wherever its error is set (computed from its arguments'); any other is not strict.
        # A number it passes on (IF's branch) may be a DOUBLE where an argument may be
        maybe = _has_numbers(node.type) and not col.double and col.decimal is None \
            and _passes_double(args) or self.numbers == "float" and _has_numbers(node.type) \
            and any(_narrow(a, self.numbers) for a in args)
        return col.but(strict=col.error is None or (null_on_error(form) and col.strict),
                       maybe_double=col.maybe_double or maybe)

    def eager(self, node: ir.Call, form: Any, args: list[SqlColumn]
              ) -> tuple[Any, Any, bool, Any]:
        spec = node.spec
        values = [a.value for a in args]
        widen = self.numbers == "float" and spec.carries_nonfinite and not self.params \
            and node.type.kind == "Number" and all(n.type.kind == "Number" for n in node.args)
        if widen:
            # float mode computes + - * in DOUBLE: an INTEGER or BIGINT operand (a literal, an
            # IF of literals, a table's column whose type was not given) would make the engine
            # multiply integers and abort the whole query on an overflow (100000 * 100000
            # overflows INTEGER on DuckDB; a DECIMAL(18, 2) product too; a REAL's is inf at
            # 3.4e38). A DOUBLE's cast costs nothing: DuckDB and PostgreSQL drop it when
            # planning. Not in a lambda body: it computes in its list's item type, and must not
            # gain a #NUM! test
            # One DOUBLE operand makes the whole step DOUBLE on every engine (an INTEGER,
            # DECIMAL or REAL beside it is widened by the engine): at most one is cast, the
            # first that is not a literal (whose value a guard reads, `pg_float`)
            if not any(_surely_double(a) for a in args):
                i = next((i for i, n in enumerate(node.args) if type(n) is not ir.Const), 0)
                v = values[i]
                values[i] = exp.cast(v if type(v) is exp.Column else exp.paren(v),
                                     dtype("DOUBLE"))
        out: Any
        if isinstance(form, type) and issubclass(form, exp.Func):
            out = form.from_arg_list(values)
        else:
            out = form(*values)
        own = None
        if isinstance(out, tuple):
            out, own = out[0], own_errors(out[1])
        double = node.type.kind == "Number" and (spec.sql_double or widen
                                                 or any(a.double for a in args))
        return out, own, double, (double, form, widen)

    def finish(self, node: ir.Call, args: list[SqlColumn], value: Any, error: Any, own: Any,
               floats: bool, carried: bool, state: Any) -> SqlColumn:
        spec = node.spec
        # strict: the value is NULL wherever the error is set. The operands' errors: none, or
        # NULL-propagating operators keep it from strict operands (an operand with a pending
        # non-finite test is not: its value is the infinity); the form's own errors: none, or
        # a form flagged ``null_on_error`` (the division's NULLIF, ...) blanks its value there.
        operands = all(a.error is None and not a.unchecked for a in args) or (
            spec.propagates_null and all(not a.unchecked and (a.error is None or a.strict)
                                         for a in args))
        strict = error is None or (operands and (
            own is None or null_on_error(state[1])))
        # a quotient of DECIMALs (|x| < 1e38) cannot leave DOUBLE's range; other DOUBLE
        # results may (POWER(10, 400), a DOUBLE column's overflow)
        may_overflow = spec.arithmetic != "/" or any(a.double for a in args)
        decimal = None
        if self.numbers == "decimal" and not state[0] and node.type.kind == "Number" and args:
            decimal = _rounded_type(value, args[0])
        # decimal mode: a number computed from one that may be a DOUBLE (ABS of a column of
        # unknown type) may be one too, unless the form's result has a known DECIMAL type
        maybe = self.numbers == "decimal" and not state[0] and decimal is None \
            and _has_numbers(node.type) and any(a.maybe_double for a in args)
        # float mode: a number passed on from one whose engine type may be narrower than
        # DOUBLE (ABS, MAX of INTEGER columns is an INTEGER) may be narrower too, unless the
        # form computed in DOUBLE (+ - * widened, a DOUBLE function)
        maybe = maybe or (self.numbers == "float" and state[0] and not spec.sql_double
                          and not state[2] and _has_numbers(node.type)
                          and any(_narrow(a, self.numbers) for a in args))
        return SqlColumn(value, error, strict,
                         floats and may_overflow and (node.may_error or carried),
                         double=bool(state[0]), decimal=decimal, maybe_double=maybe)

    def decimal_op(self, op: str, args: list[SqlColumn], nodes: Sequence[ir.IR]
                   ) -> SqlColumn:
        """+ - * on DECIMAL columns: `forms.operators.sql_arith.decimal_arith` (the operators'
        SQL, with what a literal operand settles decided when compiling)."""
        from ...interpreter.fold import constant
        from ..forms.operators.sql_arith import decimal_arith, known_number

        return decimal_arith(op, args[0], args[1],
                             known_number(constant(nodes[0], self.limits, self.memo)),
                             known_number(constant(nodes[1], self.limits, self.memo)))

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
                parts.append(exp.cast(col.value, dtype("TEXT")))
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
                inner = SqlCompiler(self.columns, self.numbers, limits=self.limits,
                                    column_types=self.column_types)
                inner.max_nodes = self.max_nodes
                inner.slots = dict(self.slots)
                inner.constants = dict(self.constants)
                inner.memo = self.memo  # the same walk over the same program
                inner.params = dict(self.params)
                for slot, name in zip(a.slots, names):
                    inner.params[slot] = exp.column(name)
                # a lambda body reads its parameters: nothing in it can move to a binding; and
                # it may not err, so its branches keep the engine's types (`IN_LAMBDA`)
                from ..forms.operators.sql_arith import IN_LAMBDA

                token = _BINDER.set(None)
                inside = IN_LAMBDA.set(True)
                try:
                    body = inner.checked(inner.compile(a.body))
                finally:
                    IN_LAMBDA.reset(inside)
                    _BINDER.reset(token)
                if body.error is not None:
                    raise self.refuse(node, node.spec.name, "a lambda whose body may error")
                values.append(exp.Lambda(this=body.value, expressions=names))
            else:
                col = self.checked(self.compile(a))
                values.append(col.value)
                errors.append(col.error)
        out = form(*values)
        own = None
        if isinstance(out, tuple):
            out, own = out[0], own_errors(out[1])
        # strict when no argument errs (a form need not give NULL for a NULL list: SUMIF's
        # is 0) and the form has no errors of its own or blanks its value there
        return SqlColumn(out, first_error(*errors, own), all(e is None for e in errors)
                         and (own is None or null_on_error(form)))

    def coerce(self, node: ir.Coerce) -> SqlColumn:
        inner = self.checked(self.compile(node.node))
        v = let(inner.value)
        mode = node.mode
        if mode in ("blank_to_number", "blank_to_text", "blank_to_boolean"):
            zero = {"blank_to_number": exp.Literal.number(0), "blank_to_text": exp.Literal.string(""),
                    "blank_to_boolean": exp.Boolean(this=False)}[mode]
            # a blank read as 0 keeps the operand's type: COALESCE of a DOUBLE is a DOUBLE
            # (forms ask `FormCall.exact`: ROUND of a DOUBLE needs the float algorithm)
            return SqlColumn(exp.Coalesce(this=v, expressions=[zero]), inner.error, False,
                             double=inner.double, maybe_double=inner.maybe_double)
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
            number = exp.TryCast(this=cleaned, to=dtype(target), safe=True)
            bad = is_null(number)
            if node.node.type.nullable:  # a blank passes on (blank_to_number follows)
                bad = exp.and_(bad, exp.Not(this=is_null(v)))
            return SqlColumn(number, first_error(inner.error, error_when(bad, "#VALUE!")), False,
                             double=self.numbers == "float")
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


#: The arithmetic computed natively on DECIMAL operands (`SqlCompiler.decimal_op`).
_DECIMAL_OPS = frozenset({"+", "-", "*"})
#: Float mode: a folded fraction with more decimal places than this is written as a DOUBLE.
_LITERAL_PLACES = 9


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


def _rounded_type(value: exp.Expr, arg: SqlColumn) -> tuple[int, int] | None:
    """The DECIMAL type of ``ROUND(arg, n)`` (a literal n) when the arg's is known: DuckDB
    types it DECIMAL(p, min(s, max(n, 0))). A peephole of what the ROUND family wrote (as
    `sql_arith._short` is), so that ``MAX(ROUND(a * 1.1, 2), ROUND(b * 1.1, 2))`` joins two
    DECIMAL(38, 2) without casts (`sql_join.join_decimals`); None otherwise."""
    from ..forms.operators.sql_arith import literal as number_literal
    from .let import bound

    e = bound(value)
    if arg.decimal is None or type(e) is not exp.Round or e.args.get("truncate") is not None:
        return None
    digits = e.args.get("decimals")
    n = Decimal(0) if digits is None else number_literal(digits)
    if n is None or n != n.to_integral_value() or bound(e.this) != bound(arg.value):
        return None
    p, s = arg.decimal
    return p, min(s, max(int(n), 0))


def _surely_double(col: SqlColumn) -> bool:
    """Float mode: ``col`` is a DOUBLE in the engine too (read as one and not `_narrow`), so
    + - * and the `spec.sql_widens` forms need no cast of it."""
    return col.double and not col.maybe_double


def _narrow(col: SqlColumn, numbers: str) -> bool:
    """Float mode: whether ``col``'s engine type may be narrower than DOUBLE though the forms
    read it as one (``double``): a table column whose type was not given (an INTEGER, a
    DECIMAL, a REAL read as it is) or a REAL one, or a value passed on from one (its ABS, an
    IF of it). Flagged ``double`` and ``maybe_double`` both (`SqlColumn`): the forms' float
    algorithms apply (`FormCall.exact` is False), and + - * widen it (`SqlCompiler.eager`)."""
    return numbers == "float" and col.double and col.maybe_double


def _passes_double(cols: Sequence[SqlColumn]) -> bool:
    """Whether a value chosen among ``cols`` (a CASE of them) may be a DOUBLE: one of them is
    or may be one (DuckDB types a CASE of a DECIMAL and a DOUBLE as DOUBLE)."""
    return any(c.double or c.maybe_double for c in cols)


def _has_numbers(t: Type) -> bool:
    return t.kind == "Number" or (t.kind == "List" and t.elem is not None
                                  and t.elem.kind == "Number")


def to_sql(root: ir.IR, *, columns: Mapping[str, str] | None = None, numbers: str = "decimal",
           max_sql_length: int | None = None, limits: Limits | None = None,
           column_types: Mapping[str, ColumnType] | None = None
           ) -> tuple[exp.Expr, exp.Expr | None]:
    """(value expression, error-code expression or None). ``numbers``: "decimal" when Number
    columns are DECIMAL (the engine's exact arithmetic), "float" when they are DOUBLE (then a
    non-finite result is #NUM!). Under an active `let.Binder` the expressions read its
    bindings (see `select.to_sql_form`). ``limits``: the program's, that constants fold under
    (None: the defaults). ``column_types``: the table's column SQL types, by variable name
    (`kit.column_types`), when the caller knows them."""
    if numbers not in ("float", "decimal"):
        raise ValueError("numbers must be 'float' or 'decimal'")
    compiler = SqlCompiler(columns or {}, numbers, max_sql_length, limits, column_types)
    col = compiler.run(root)
    if col.error is None:
        return col.value, None
    if col.strict:
        return col.value, col.error
    error = let(col.error)  # read twice: by the value's CASE and as the error column
    return case(is_null(error), col.value), error
