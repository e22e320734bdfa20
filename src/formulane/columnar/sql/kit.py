"""The SQL kit: what the SQL compiler and the SQL forms build sqlglot expressions with.

A compiled sub-expression is a `SqlColumn` (value, error code or None, ``strict``, ``double``,
``maybe_double``, ``unchecked``, a DOUBLE estimate in decimal mode); `first_error` combines
error codes left to right with COALESCE, `cases`/`case`/`error_when` build flattened CASE
expressions, `literal` writes exact literals (numbers as decimal text), `sql_type` names a
formula type's column type, `dtype` builds a column-type node (parsed once per type name,
copied after), `column_types` reads the table's column SQL types a caller gives
(`ColumnType`), `literal_decimal` the DECIMAL type an engine gives a number literal,
`mark_quotient` and `quotient_of` the operands of a decimal-mode quotient (computed in DOUBLE)
that the grid forms read to answer exactly (`Quotient`). Binding an expression once is `let`
(the sibling module).
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any, Mapping, Sequence

from sqlglot import exp

from ...types import Type
from .let import bound

DIALECTS = ("duckdb", "postgres", "spark", "trino", "bigquery", "snowflake", "sqlite")


NULL = exp.Null()


@functools.lru_cache(maxsize=128)
def _parsed_type(text: str) -> exp.DataType:
    return exp.DataType.build(text)


def dtype(text: str) -> exp.DataType:
    """A fresh ``DataType`` node for a type named in SQL (``"DECIMAL(38, 18)"``): sqlglot
    parses the name each time (40-90 µs, a large share of compiling arithmetic); here each
    name is parsed once and its node cloned."""
    return clone_type(_parsed_type(text))


def clone_type(t: exp.DataType) -> exp.DataType:
    """A fresh copy of a type node (a few small nodes), built by their constructors: a third
    of the time of sqlglot's generic deep copy, which a cast of arithmetic pays several times."""
    return _clone(t)  # type: ignore[return-value]


def _clone(node: exp.Expr) -> exp.Expr:
    args: dict[str, Any] = {}
    for key, value in node.args.items():
        if isinstance(value, exp.Expr):
            args[key] = _clone(value)
        elif isinstance(value, list):
            args[key] = [_clone(v) if isinstance(v, exp.Expr) else v for v in value]
        else:
            args[key] = value
    return type(node)(**args)


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
    #: the value may be a DOUBLE though ``double`` is False: in decimal mode a table column
    #: whose engine type the caller did not give (`column_types`), or a value passed on from
    #: one or from a DOUBLE (ABS of it, a CASE of it): a DECIMAL or a DOUBLE. Read through
    #: `FormCall.exact` by the forms whose exact SQL is right for a DECIMAL only (ROUND's
    #: places, MOD's remainder of DECIMAL casts). In float mode, set together with ``double``:
    #: a value the forms read as a DOUBLE whose engine type may be narrower (an untyped column,
    #: a REAL, a value passed on from one); + - * widen it (`compiler._narrow`)
    maybe_double: bool = False
    #: decimal mode: a DOUBLE estimate of the value (overflow guards test it, so they never
    #: repeat the decimal expression itself)
    estimate: exp.Expr | None = None
    #: decimal mode: the value's DECIMAL (precision, scale) as the engine types it, when the
    #: compiler knows it (a literal, the DECIMAL(38, 18) of + - *, a column whose type the
    #: caller gave); None: not known. `sql_join.join_decimals` reads it to cast only the
    #: branches of a CASE or list whose types may differ.
    decimal: tuple[int, int] | None = None

    def error_or_null(self) -> exp.Expr:
        return self.error if self.error is not None else exp.Null()

    def but(self, **changes: Any) -> SqlColumn:
        """This column with ``changes`` (field name -> value), as `dataclasses.replace` gives
        it, in a fifth of the time: the walk changes a field of nearly every node's column
        (its type, its bound value), thousands of times in a large formula. Fields only (a
        TypeError for any other name, as `replace`); there is no ``__post_init__`` to run."""
        if not changes.keys() <= _COLUMN_FIELDS:
            raise TypeError(f"SqlColumn has no field {sorted(changes.keys() - _COLUMN_FIELDS)}")
        new = object.__new__(SqlColumn)
        new.__dict__.update(self.__dict__, **changes)
        return new


_COLUMN_FIELDS = frozenset(f.name for f in fields(SqlColumn))


@dataclass(frozen=True)
class Quotient:
    """Decimal mode: the operands of a quotient ``dividend / divisor``, which every dialect
    computes in DOUBLE (docs/columnar.md, "SQL decimal policy"). A grid function of the
    quotient (TRUNC, FLOOR, MOD...) reads them to place the exact quotient on its grid: the
    DOUBLE lies a hair beside a quotient that is on the grid (-826.80 / 3 is -275.59999...),
    which put TRUNC(a / 3, 2) a step off. ``known_*``: an operand's value when it is a constant
    (`sql_arith.known`). Immutable: a copy of the marked node shares it (`__deepcopy__`)."""

    dividend: SqlColumn
    divisor: SqlColumn
    known_dividend: Decimal | None = None
    known_divisor: Decimal | None = None

    def __deepcopy__(self, memo: Any) -> Quotient:
        return self  # sqlglot copies a node's meta with it; this is frozen and shared


#: The key of a quotient's `Quotient` in its DOUBLE division node's ``meta``.
_QUOTIENT = "formulane_quotient"


def mark_quotient(value: exp.Expr, quotient: Quotient) -> exp.Expr:
    """``value``, the division node of a quotient, marked with its operands (`Quotient`):
    the node travels with the quotient's column through bindings (`let.bound` reads it back),
    where a field of the column would have to be carried by every step of the walk."""
    value.meta[_QUOTIENT] = quotient
    return value


def quotient_of(col: SqlColumn | None) -> Quotient | None:
    """The operands of a column that is a marked quotient (`mark_quotient`), read through
    its binding; None for any other column."""
    if col is None:
        return None
    e = bound(col.value)
    while isinstance(e, exp.Paren):
        e = e.this
    if not isinstance(e, exp.Div):
        return None
    q = e.meta.get(_QUOTIENT)
    return q if isinstance(q, Quotient) else None


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
    if isinstance(default, exp.Paren) and isinstance(default.this, exp.Case):
        default = default.this  # an ELSE needs no parentheses: merged below
    if isinstance(default, exp.Case) and default.this is None:
        pairs = [*pairs, *((i.this, i.args["true"]) for i in default.args["ifs"])]
        default = default.args.get("default")
    # trailing branches that give what the ELSE gives are redundant
    while pairs and ((default is None and _is_null(pairs[-1][1]))
                     or (default is not None and pairs[-1][1] == default)):
        pairs = pairs[:-1]
    if not pairs:
        return default if default is not None else exp.Null()
    if default is None:
        pairs = [*pairs[:-1], _nested_last(*pairs[-1])]
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=default)


def _nested_last(condition: exp.Expr, value: exp.Expr) -> tuple[exp.Expr, exp.Expr]:
    """The last branch of a CASE without ELSE whose value is itself a one-branch CASE without
    ELSE on a plain test (`_plain_test`), merged: ``WHEN c THEN CASE WHEN t THEN v END`` as
    ``WHEN c AND t THEN v`` (NULL unless both hold, either way; 15 characters fewer). Only a
    plain test, which never fails on any row: merged, it may be evaluated where ``c`` does not
    hold (an engine need not stop an AND at its first false operand)."""
    while True:
        # (a binding's reference, `let`, is looked through where the nested CASE is small: a
        # plain test of a few nodes giving a literal, copied here; the binding stays for its
        # other reads, or is dropped by the binder when this was its only one)
        seen = bound(value)
        copy = seen is not value
        if not (type(seen) is exp.Case and seen.this is None
                and seen.args.get("default") is None and len(seen.args["ifs"]) == 1
                and _plain_test(seen.args["ifs"][0].this, 12 if copy else None)
                and (not copy or isinstance(seen.args["ifs"][0].args["true"], exp.Literal))):
            return condition, value
        inner = seen.args["ifs"][0]
        test, value = inner.this, inner.args["true"]
        if copy:
            test, value = test.copy(), value.copy()
        condition = exp.And(this=_conjunct(condition), expression=_conjunct(test))


def _conjunct(e: exp.Expr) -> exp.Expr:
    return exp.Paren(this=e) if isinstance(e, exp.Or) else e


#: The nodes of a plain test: comparisons and null tests of columns (a table's, or a binding's,
#: which is total by `let`'s contract), literals and their ABS or negation, joined by NOT, AND
#: and OR: evaluated on any row, it never fails.
_PLAIN_TEST = (exp.Column, exp.Identifier, exp.Literal, exp.Null, exp.Boolean, exp.Abs,
               exp.Paren, exp.Neg, exp.Not, exp.And, exp.Or, exp.EQ, exp.NEQ, exp.LT, exp.LTE,
               exp.GT, exp.GTE, exp.Is)


def _plain_test(e: exp.Expr, most: int | None = None) -> bool:
    """Whether ``e`` is a plain test (`_PLAIN_TEST`), of at most ``most`` nodes if given."""
    stack = [e]
    count = 0
    while stack:
        node = stack.pop()
        count += 1
        if type(node) not in _PLAIN_TEST or (most is not None and count > most):
            return False
        for value in node.args.values():
            if isinstance(value, exp.Expr):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, exp.Expr))
    return True


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
        return exp.cast(exp.Literal.string(value.isoformat()), dtype("TIMESTAMPTZ"), copy=False)
    if isinstance(value, dt.date):
        return exp.cast(exp.Literal.string(value.isoformat()), dtype("DATE"), copy=False)
    if isinstance(value, tuple):
        return exp.Array(expressions=[literal(v) for v in value])
    raise TypeError(f"no SQL literal for {type(value).__name__}")


#: Float (DOUBLE) results the scalar engine could not hold are #NUM! (see module docs).
FLOAT_LIMIT = exp.Literal.number("1e308")


def not_finite(value: exp.Expr) -> exp.Expr:
    """#NUM! for NaN, infinities and |x| >= 1e308 (NaN sorts above every number in DuckDB,
    Spark, PostgreSQL and Trino, so the one comparison catches all three). Of a number
    literal (a form's folded value, ``1e307``), decided: NULL when it is below the bound."""
    if isinstance(value, exp.Literal) and not value.is_string:
        try:
            if abs(Decimal(value.this)) < Decimal("1e308"):
                return exp.Null()
        except ArithmeticError:
            pass
    return error_when(exp.GTE(this=exp.Abs(this=value), expression=FLOAT_LIMIT), "#NUM!")


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


#: The DECIMAL type of the compiler's exact arithmetic (`sql_arith.decimal_arith`).
D18 = (38, 18)


def literal_decimal(value: Any) -> tuple[int, int] | None:
    """The DECIMAL (precision, scale) DuckDB gives a number literal written by `literal`
    (``1.5`` is DECIMAL(2, 1), ``0.1142`` DECIMAL(5, 4)); an integer literal as a DECIMAL of
    its own digits (DuckDB joins an integer literal with a DECIMAL(38, s) without loss when
    its digits fit beside the scale); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return None
    d = Decimal(value)
    if not d.is_finite():
        return None
    sign, digits, exponent = d.as_tuple()
    scale = max(0, -int(exponent))
    whole = max(1, len(digits) + int(exponent))
    return whole + scale, scale


@dataclass(frozen=True)
class ColumnType:
    """A table column's SQL type as the caller gave it (`column_types`): ``decimal`` (its
    precision and scale: DECIMAL/NUMERIC(p, s), or an integer type as DECIMAL(digits, 0)),
    ``double`` (DOUBLE, FLOAT, REAL), or neither (another type, or a NUMERIC without a
    precision, whose range the compiler cannot bound); ``text`` as given."""

    text: str
    decimal: tuple[int, int] | None = None
    double: bool = False
    numeric: bool = False  # a number type of any kind
    items: ColumnType | None = None  # a list's (DECIMAL(18, 2)[], ARRAY<DOUBLE>) item type


_INTEGER_DIGITS = {"TINYINT": 3, "UTINYINT": 3, "SMALLINT": 5, "USMALLINT": 5, "INT": 10,
                   "UINT": 10, "MEDIUMINT": 8, "BIGINT": 19, "UBIGINT": 20}
_DOUBLES = frozenset({"DOUBLE", "FLOAT", "DOUBLE PRECISION", "REAL"})


def column_type(name: str, text: Any) -> ColumnType:
    """One column's SQL type text (as the engine reports it, e.g. DuckDB's ``DESCRIBE``:
    ``DECIMAL(38,4)``, ``DOUBLE``, ``VARCHAR``) parsed once; a `CheckError` (E209) naming the
    column and the type when it is not a SQL type."""
    from sqlglot.errors import SqlglotError

    from ...errors import CheckError

    if not isinstance(name, str) or not isinstance(text, str) or not text.strip():
        raise CheckError(f"column_types must map column names to SQL type texts, got "
                         f"{name!r}: {text!r:.80}", code="E209")
    try:
        parsed = exp.DataType.build(text)
    except (SqlglotError, ValueError) as exc:
        raise CheckError(f"column_types[{name!r}]: {text!r:.80} is not a SQL type ({exc})",
                         code="E209", hint="give the type as the engine reports it, "
                         "e.g. DECIMAL(38, 4) or DOUBLE") from None
    kind = parsed.this.value if isinstance(parsed.this, exp.DataType.Type) else str(parsed.this)
    if kind == "ARRAY" and len(parsed.expressions) == 1 \
            and isinstance(parsed.expressions[0], exp.DataType):
        return ColumnType(text, items=column_type(name, parsed.expressions[0].sql()))
    if kind in ("DECIMAL", "BIGDECIMAL", "DECIMAL32", "DECIMAL64", "DECIMAL128"):
        params = [e.this for e in parsed.expressions]
        try:
            numbers = [int(p.this if isinstance(p, exp.Expr) else p) for p in params]
        except (TypeError, ValueError):
            numbers = []
        if len(numbers) == 2 and 0 <= numbers[1] <= numbers[0] <= 38:
            return ColumnType(text, decimal=(numbers[0], numbers[1]), numeric=True)
        if len(numbers) == 1 and 1 <= numbers[0] <= 38:
            return ColumnType(text, decimal=(numbers[0], 0), numeric=True)
        return ColumnType(text, numeric=True)  # unbounded (PostgreSQL's NUMERIC)
    if kind in _INTEGER_DIGITS:
        return ColumnType(text, decimal=(_INTEGER_DIGITS[kind], 0), numeric=True)
    if kind in _DOUBLES:
        return ColumnType(text, double=True, numeric=True)
    if kind in ("INT128", "UINT128", "INT256", "UINT256", "HUGEINT", "UHUGEINT"):
        return ColumnType(text, numeric=True)
    return ColumnType(text)


def column_types(types: Any) -> dict[str, ColumnType]:
    """The caller's ``column_types`` (column name -> SQL type text) parsed, each once."""
    if types is None:
        return {}
    if not isinstance(types, Mapping):
        from ...errors import CheckError

        raise CheckError(f"column_types must be a mapping of column names to SQL type texts, "
                         f"got {type(types).__name__}", code="E209")
    return {name: column_type(name, text) for name, text in types.items()}


def type_name(t: Type) -> str:
    return t.kind
