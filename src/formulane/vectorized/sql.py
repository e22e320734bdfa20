"""The SQL backend: checked IR -> sqlglot expressions, rendered for any sqlglot dialect.

Like the polars backend, each sub-expression is a value plus an optional error-code expression
(``CASE WHEN divisor = 0 THEN '#DIV/0!' END``), combined left to right with COALESCE; lazy
forms select both with CASE, so SQL engines that evaluate every branch give the scalar answer.
A function without a faithful SQL form raises `Unsupported` when compiling, with the reason.

Form protocol (the ``sql=`` slot of a spec or signature):
- a sqlglot function class (``exp.Upper``): built from the arguments in order;
- eager callable ``form(*values: exp.Expression) -> exp.Expression | (value, error | None)``;
- lazy functions: ``form(*columns: SqlColumn) -> SqlColumn``.
Literals are exact: numbers are written as decimal text, so ``0.1 + 0.2 = 0.3`` holds in SQL.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Mapping

from sqlglot import exp

from ..errors import Unsupported
from ..functions.spec import Refuse
from ..interpreter import ir
from ..types import Type
from ..values import ErrorValue

DIALECTS = ("duckdb", "postgres", "spark", "trino", "bigquery", "snowflake", "sqlite")
NULL = exp.Null()


@dataclass(frozen=True)
class SqlColumn:
    value: exp.Expression
    error: exp.Expression | None = None

    def error_or_null(self) -> exp.Expression:
        return self.error if self.error is not None else exp.Null()


def first_error(*errors: exp.Expression | None) -> exp.Expression | None:
    present = [e for e in errors if e is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return exp.Coalesce(this=present[0], expressions=present[1:])


def error_when(condition: exp.Expression, code: str) -> exp.Expression:
    return exp.Case(ifs=[exp.If(this=condition, true=exp.Literal.string(code))])


def own_errors(spec: Any) -> exp.Expression | None:
    """A form's errors: an expression, or ``[(condition, code), ...]`` checked in order."""
    if spec is None or isinstance(spec, exp.Expression):
        return spec
    ifs = [exp.If(this=c, true=exp.Literal.string(code)) for c, code in spec]
    return exp.Case(ifs=ifs) if ifs else None


def case(condition: exp.Expression, then: exp.Expression, otherwise: exp.Expression | None = None
         ) -> exp.Expression:
    return exp.Case(ifs=[exp.If(this=condition, true=then)], default=otherwise)


def literal(value: Any) -> exp.Expression:
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


class SqlCompiler:
    def __init__(self, columns: Mapping[str, str]) -> None:
        self.columns = columns
        self.slots: dict[int, SqlColumn] = {}
        self.params: dict[int, exp.Expression] = {}

    def refuse(self, node: ir.IR, name: Any, reason: str) -> Unsupported:
        return Unsupported(f"SQL cannot express {name}: {reason}", function=str(name),
                           backend="sql", reason=reason, span=node.span)

    def compile(self, node: ir.IR) -> SqlColumn:
        kind = type(node)
        if kind is ir.Const:
            value = node.value  # type: ignore[union-attr]
            if type(value) is ErrorValue:
                return SqlColumn(exp.Null(), exp.Literal.string(value.code))
            return SqlColumn(literal(value))
        if kind is ir.Var:
            slot = node.slot  # type: ignore[union-attr]
            if slot in self.params:
                return SqlColumn(self.params[slot])
            if slot in self.slots:
                return self.slots[slot]
            name = self.columns.get(node.name, node.name)  # type: ignore[union-attr]
            return SqlColumn(exp.column(name, quoted=True))
        if kind is ir.Let:
            for slot, value in zip(node.slots, node.values):  # type: ignore[union-attr]
                self.slots[slot] = self.compile(value)
            return self.compile(node.body)  # type: ignore[union-attr]
        if kind is ir.Call:
            return self.call(node)  # type: ignore[arg-type]
        if kind is ir.Coerce:
            return self.coerce(node)  # type: ignore[arg-type]
        if kind is ir.FieldOf:
            obj = self.compile(node.obj)  # type: ignore[union-attr]
            return SqlColumn(exp.Dot(this=obj.value, expression=exp.to_identifier(node.name)),  # type: ignore[union-attr]
                             obj.error)
        if kind is ir.ListOf:
            items = [self.compile(i) for i in node.items]  # type: ignore[union-attr]
            return SqlColumn(exp.Array(expressions=[i.value for i in items]),
                             first_error(*[i.error for i in items]))
        if kind is ir.IndexOf:
            obj = self.compile(node.obj)  # type: ignore[union-attr]
            index = self.compile(node.index)  # type: ignore[union-attr]
            size = exp.ArraySize(this=obj.value)
            oob = exp.or_(exp.LT(this=index.value, expression=exp.Literal.number(1)),
                          exp.GT(this=index.value, expression=size))
            value = exp.Bracket(this=obj.value, expressions=[index.value], offset=1)
            return SqlColumn(value, first_error(obj.error, index.error, error_when(oob, "#REF!")))
        raise self.refuse(node, kind.__name__, "this construct has no SQL form")

    def call(self, node: ir.Call) -> SqlColumn:
        spec = node.spec
        form = node.sig.sql or spec.sql
        if isinstance(form, Refuse):
            raise self.refuse(node, spec.name, form.reason)
        if form is None or not (callable(form)):
            raise self.refuse(node, spec.name, "no SQL form is declared")
        if spec.check is not None and _concrete_mismatch(node):
            raise self.refuse(node, spec.name, "only the declared operand types vectorize "
                              f"({', '.join(str(p.type) for p in node.sig.params)})")
        if any(isinstance(a, ir.Lambda) for a in node.args):
            return self.higher_order(node, form)
        args = [self.compile(a) for a in node.args]
        if spec.lazy:
            out = form(*args)
            return out if isinstance(out, SqlColumn) else SqlColumn(out)
        values = [a.value for a in args]
        if isinstance(form, type) and issubclass(form, exp.Func):
            out: Any = form.from_arg_list(values)
        else:
            out = form(*values)
        own = None
        if isinstance(out, tuple):
            out, own = out[0], own_errors(out[1])
        return SqlColumn(out, first_error(*[a.error for a in args], own))

    def higher_order(self, node: ir.Call, form: Callable[..., Any]) -> SqlColumn:
        """Lambdas become SQL lambdas (``x -> x * 2``) where the dialect has them."""
        values: list[Any] = []
        errors = []
        for a in node.args:
            if isinstance(a, ir.Lambda):
                names = [exp.to_identifier(f"_p{slot}") for slot in a.slots]
                inner = SqlCompiler(self.columns)
                inner.slots = dict(self.slots)
                inner.params = dict(self.params)
                for slot, name in zip(a.slots, names):
                    inner.params[slot] = exp.column(name)
                body = inner.compile(a.body)
                if body.error is not None:
                    raise self.refuse(node, node.spec.name, "a lambda whose body may error")
                values.append(exp.Lambda(this=body.value, expressions=names))
            else:
                col = self.compile(a)
                values.append(col.value)
                errors.append(col.error)
        out = form(*values)
        own = None
        if isinstance(out, tuple):
            out, own = out[0], own_errors(out[1])
        return SqlColumn(out, first_error(*errors, own))

    def coerce(self, node: ir.Coerce) -> SqlColumn:
        inner = self.compile(node.node)
        v = inner.value
        mode = node.mode
        if mode in ("blank_to_number", "blank_to_text", "blank_to_boolean"):
            zero = {"blank_to_number": exp.Literal.number(0), "blank_to_text": exp.Literal.string(""),
                    "blank_to_boolean": exp.Boolean(this=False)}[mode]
            return SqlColumn(exp.Coalesce(this=v, expressions=[zero]), inner.error)
        if mode == "boolean_to_number":
            return SqlColumn(case(v, exp.Literal.number(1), exp.Literal.number(0)), inner.error)
        if mode == "number_to_boolean":
            return SqlColumn(exp.NEQ(this=v, expression=exp.Literal.number(0)), inner.error)
        if mode == "text_to_number":
            cleaned = exp.Trim(this=exp.Anonymous(this="REPLACE", expressions=[
                v, exp.Literal.string(","), exp.Literal.string("")]))
            number = exp.TryCast(this=cleaned, to=exp.DataType.build("DECIMAL(38, 10)"))
            return SqlColumn(number, first_error(inner.error, error_when(
                exp.Is(this=number, expression=exp.Null()), "#VALUE!")))
        raise self.refuse(node, mode, "this coercion has no SQL form")


def to_sql(root: ir.IR, *, columns: Mapping[str, str] | None = None
           ) -> tuple[exp.Expression, exp.Expression | None]:
    """(value expression, error-code expression or None)."""
    col = SqlCompiler(columns or {}).compile(root)
    if col.error is None:
        return col.value, None
    return case(exp.Is(this=col.error, expression=exp.Null()), col.value), col.error


def type_name(t: Type) -> str:
    return t.kind


def _concrete_mismatch(node: ir.Call) -> bool:
    """A custom-typed call (``&``) whose arguments are not the declared concrete types."""
    for arg, prm in zip(node.args, node.sig.params):
        if prm.type.kind in ("Var", "Any", "Many", "Fn"):
            continue
        if arg.type.kind != prm.type.kind:
            return True
    return False
