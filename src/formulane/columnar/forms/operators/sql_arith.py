"""The SQL builders the operators and math forms share, and the decimal + - * of the compiler.

Contract: small sqlglot builders that parenthesize only what needs it (`p`), the binary
operators and comparisons (`add`, `lt`...), the guards both families write (`not_finite`,
`only`, `nullif_zero`), `decimal_arith`, the exact DECIMAL + - * that
`columnar.sql.compiler` delegates to (in the operands' own types where both are known,
`_native`, else in DECIMAL(38, 18)), and `IN_LAMBDA`, set while a lambda body compiles.
The branch joins and exact comparisons of DECIMALs built on these are `sql_join`'s.

What a form knows about an operand is passed in, never read back out of the built SQL: an
`Operand` is an expression or, for a constant (`FormCall.const`, through `known`), its value as
a `Decimal`; a test of known values is decided when the SQL is built and never written.
Importing this imports sqlglot, never polars.
"""

from __future__ import annotations

import contextvars
import functools
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Callable, Union

from sqlglot import exp

from ...sql.kit import (D18, SqlColumn, cases, clone_type, dtype, first_error, literal_decimal,
                        not_null)
from ...sql.let import bound, let, size

if TYPE_CHECKING:
    from ...call import FormCall

#: An operand of the builders: an expression, or a constant's known value.
Operand = Union[exp.Expr, Decimal]


def known(call: FormCall, i: int) -> Decimal | None:
    """Argument ``i`` of the call as a number when it is a constant (`FormCall.const`, the one
    reader of constants), else None (a column, a text, a Boolean, a blank)."""
    return known_number(call.const(i))


def known_number(value: Any) -> Decimal | None:
    """A constant's value (`interpreter.fold.constant`) as a number, else None: for a caller
    that reads the constant itself (the compiler's `decimal_arith` call)."""
    if value is None or isinstance(value, (bool, str, tuple)):
        return None
    if isinstance(value, (int, Decimal)):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    return None  # MISSING, an error value, a date...


def operand(call: FormCall, i: int, value: exp.Expr) -> Operand:
    """Argument ``i``: its known number (`known`) or its compiled ``value``."""
    k = known(call, i)
    return value if k is None else k


def value_of(x: Operand) -> Decimal | None:
    """A known operand's value, or the value of a number literal the builders themselves
    wrote (`literal`), else None."""
    return x if isinstance(x, Decimal) else literal(x)


def literal(e: exp.Expr) -> Decimal | None:
    """The value of a number literal (possibly negated, parenthesized or cast to DECIMAL), else
    None. A peephole of the builders, not a reader of the program's constants (those come
    from `FormCall.const`): a form writes its own literals (``_n(0)``, a known argument
    written from its value) and a comparison or guard of two literals is decided here
    instead of being written (``2 = 0`` is FALSE, so MOD by a literal has no #DIV/0! test
    and may sit in a lambda body)."""
    while isinstance(e, exp.Paren) or (isinstance(e, exp.Cast)
                                        and e.to.this == exp.DataType.Type.DECIMAL):
        e = e.this
    if isinstance(e, exp.Neg):
        inner = literal(e.this)
        return None if inner is None else -inner
    if isinstance(e, exp.Literal) and not e.is_string:
        try:
            return Decimal(e.this)
        except (InvalidOperation, ValueError):
            return None
    return None


def sql_of(x: Operand) -> exp.Expr:
    """An operand as SQL (a known value as its literal)."""
    return num(x) if isinstance(x, Decimal) else x

#: Expressions that render as one token or a call: never parenthesized again.
_ATOMS = (exp.Column, exp.Literal, exp.Paren, exp.Null, exp.Boolean, exp.Cast, exp.TryCast)


def p(e: exp.Expr) -> exp.Expr:
    """``e`` parenthesized unless it renders as an atom or a call (AND/OR are sqlglot Funcs
    too, yet render infix)."""
    if isinstance(e, exp.Connector):
        return exp.Paren(this=e)
    if isinstance(e, _ATOMS) or (isinstance(e, exp.Func) and not isinstance(e, exp.Binary)):
        return e
    return exp.Paren(this=e)


def num(value: int | float | Decimal) -> exp.Expr:
    """A number literal (floats by their shortest repr, decimals as plain digits)."""
    if isinstance(value, float):
        return exp.Literal.number(repr(value).replace("e+", "e"))
    if isinstance(value, Decimal):
        return exp.Literal.number(format(value, "f"))
    return exp.Literal.number(str(value))


def _binary(cls: type[exp.Binary]) -> Callable[[exp.Expr, exp.Expr], exp.Expr]:
    def build(a: exp.Expr, b: exp.Expr) -> exp.Expr:
        if cls is exp.Div:
            return exp.Div(this=p(a), expression=p(b), typed=False, safe=False)
        return cls(this=p(a), expression=p(b))
    return build


add, sub, mul, div, mod = (_binary(c) for c in (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod))

_DECIDE: dict[type[exp.Binary], Callable[[Decimal, Decimal], bool]] = {
    exp.EQ: lambda x, y: x == y, exp.NEQ: lambda x, y: x != y, exp.LT: lambda x, y: x < y,
    exp.LTE: lambda x, y: x <= y, exp.GT: lambda x, y: x > y, exp.GTE: lambda x, y: x >= y}


def _comparison(cls: type[exp.Binary]) -> Callable[[Operand, Operand], exp.Expr]:
    """A comparison, decided when both sides are known numbers (TRUE/FALSE, which
    `when`, `all_of`, `any_of` and `errors` then drop or settle)."""
    decide = _DECIDE[cls]

    def build(a: Operand, b: Operand) -> exp.Expr:
        x, y = value_of(a), value_of(b)
        if x is not None and y is not None:
            return exp.true() if decide(x, y) else exp.false()
        a, b = sql_of(a), sql_of(b)
        if cls in (exp.EQ, exp.NEQ) and truth(b) is not None:
            # c = TRUE is c, c <> TRUE is NOT c (NULL stays NULL either way)
            return a if (truth(b) is True) == (cls is exp.EQ) else not_(a)
        return cls(this=p(a), expression=p(b))
    return build


eq, ne, lt, le, gt, ge = (_comparison(c) for c in (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT,
                                                    exp.GTE))


def truth(e: exp.Expr) -> bool | None:
    """True/False for a condition decided when compiling, None for a per-row test."""
    return bool(e.this) if isinstance(e, exp.Boolean) else None


def _in_and(c: exp.Expr) -> exp.Expr:
    """A condition as an operand of AND: comparisons and NOT bind tighter, OR does not."""
    return exp.Paren(this=c) if isinstance(c, exp.Or) else c


def all_of(*parts: exp.Expr) -> exp.Expr:
    """AND of the conditions, TRUE ones left out (FALSE if one is FALSE)."""
    kept = [c for c in parts if truth(c) is not True]
    if any(truth(c) is False for c in kept):
        return exp.false()
    if not kept:
        return exp.true()
    out = _in_and(kept[0])
    for c in kept[1:]:
        out = exp.And(this=out, expression=_in_and(c))
    # parenthesized: the condition may become a value that other families compare
    return exp.Paren(this=out) if len(kept) > 1 else out


def any_of(*parts: exp.Expr) -> exp.Expr:
    """OR of the conditions, FALSE ones left out (TRUE if one is TRUE)."""
    kept = [c for c in parts if truth(c) is not False]
    if any(truth(c) is True for c in kept):
        return exp.true()
    if not kept:
        return exp.false()
    out = kept[0]
    for c in kept[1:]:
        out = exp.Or(this=out, expression=c)
    return exp.Paren(this=out) if len(kept) > 1 else out


def not_(e: exp.Expr) -> exp.Expr:
    t = truth(e)
    if t is not None:
        return exp.false() if t else exp.true()
    # NOT binds looser than comparisons and IS in every dialect, tighter than AND/OR
    return exp.Not(this=exp.Paren(this=e) if isinstance(e, exp.Connector) else e)


def when(pairs: list[tuple[exp.Expr, exp.Expr]], default: exp.Expr | None = None
         ) -> exp.Expr:
    """CASE WHEN ... END with the conditions decided when compiling settled: a FALSE branch
    is left out, a TRUE one ends the CASE as its ELSE."""
    kept: list[tuple[exp.Expr, exp.Expr]] = []
    for c, v in pairs:
        t = truth(c)
        if t is False:
            continue
        if t is True:
            default = v
            break
        kept.append((c, v))
    if not kept:
        return default if default is not None else exp.Null()
    if isinstance(default, exp.Case) and default.this is None:
        # CASE WHEN a THEN x ELSE CASE WHEN b THEN y ELSE z END END: one CASE
        kept.extend((i.this, i.args["true"]) for i in default.args["ifs"])
        default = default.args.get("default")
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in kept], default=default)


def settled(form: Callable[..., Any]) -> Callable[..., Any]:
    """A form whose ``(value, [(condition, code), ...])`` result has its decided conditions
    settled by `errors` (no error list left: the value alone)."""
    @functools.wraps(form)
    def run(*args: Any, **kwargs: Any) -> Any:
        out = form(*args, **kwargs)
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], list):
            kept = errors(out[1])
            return (out[0], kept) if kept else out[0]
        return out
    return run


def errors(pairs: list[tuple[exp.Expr, str]]) -> list[tuple[exp.Expr, str]]:
    """A form's error tests with those decided FALSE left out, and none after one decided
    TRUE (it is that row's error on every row)."""
    kept: list[tuple[exp.Expr, str]] = []
    for c, code in pairs:
        t = truth(c)
        if t is False:
            continue
        kept.append((c, code))
        if t is True:
            break
    return kept


def cast_to(e: exp.Expr, to: exp.DataType | str) -> exp.Expr:
    """CAST(e AS to), always written (`exp.cast` drops a cast of a cast to a type it deems
    equivalent: DECIMAL(38, 0) to DECIMAL(38, 9))."""
    return exp.Cast(this=e, to=dtype(to) if isinstance(to, str) else clone_type(to))


def decimal_cast(c: SqlColumn, to: exp.DataType | str, value: exp.Expr | None = None
                 ) -> exp.Expr:
    """``c``'s value (or ``value``, an expression of it) as the DECIMAL ``to``; a value that
    may be a DOUBLE (`kit.SqlColumn.maybe_double`: a column whose engine type the caller did
    not give) through its text, its shortest decimal, as the scalar engine reads it. An
    engine's own cast of a DOUBLE to DECIMAL is not that: DuckDB's goes through a product in
    DOUBLE (12345.6789 reads 12345.678900000001622016, -2.2 reads -2.200000000000000178, so
    INT(a * 10) floored it to -23). A DECIMAL's text is its own digits: the same value."""
    v = (c.value if value is None else value).copy()
    if not c.maybe_double:
        return cast_to(v, to)
    guard = _guard(v)
    if guard is not None:
        # a guarded value (CASE WHEN fits THEN x END) read under its guard, not the guard
        # inside each of the reading's two casts: the reading is written once, and a CASE
        # evaluates it only on the rows that fit
        test, inner = guard
        return exp.Case(ifs=[exp.If(this=test, true=decimal_cast(c, to, inner))])
    # (the type is the column's, or its binding's, whatever expression of it ``value`` is)
    return shortest_decimal(v, to, typed=c.value if _plain(c.value) else v)


def shortest_decimal(v: exp.Expr, to: exp.DataType | str, typed: exp.Expr | None = None,
                     text: bool = False) -> exp.Expr:
    """A number ``v`` as the DECIMAL ``to``, as the scalar engine reads it: a DOUBLE (or
    FLOAT) through its text, its shortest decimal; any other type (a DECIMAL, an integer) cast
    as it is. The one reading of a number whose engine type may be DOUBLE (`decimal_cast`
    for + - * and the joins; the ROUND family's `math.round_sql`): ``v`` must sit where ``to``
    holds it (the callers' range tests). On DuckDB a TYPEOF test settled when planning picks
    the text for a DOUBLE only (the other dialects read the text: `dialects._shortest`);
    ``text``: the text alone whatever the type (a TRY_CAST, as the float forms have always
    written it: `dialects.NO_TRY_CAST` keeps one of a number's own text), exact for every
    type, where the test does not pay for its characters (`round_sql._text_reading`); else
    the test is on ``typed``'s type (``v``'s own by default)."""
    if text:
        return exp.TryCast(this=cast_to(v.copy(), "VARCHAR"), to=dtype(to) if isinstance(
            to, str) else clone_type(to), safe=True)
    through = cast_to(cast_to(v.copy(), "VARCHAR"), to)
    # Only a DOUBLE (or FLOAT) needs the text, which costs: read so, a + b over DECIMAL
    # columns was 5x slower on DuckDB (20 -> 104 ms per million rows). DuckDB knows each
    # value's type when planning and folds TYPEOF, so there the test costs nothing per row
    # and a DECIMAL is cast as it is; other dialects read any such value through its text
    # (`dialects.adapt` writes the WHEN on TYPEOF as its text reading there: `_shortest`).
    return exp.Case(ifs=[exp.If(this=floating(typed or v), true=through)],
                    default=cast_to(v.copy(), to))


def floating(e: exp.Expr) -> exp.Expr:
    """Whether DuckDB types ``e`` DOUBLE or FLOAT (its TYPEOF, settled when planning; the other
    dialects' `dialects.adapt` reads the WHEN it heads as TRUE: `_shortest`)."""
    return exp.In(this=exp.Anonymous(this="TYPEOF", expressions=[e.copy()]),
                  expressions=[exp.Literal.string("DOUBLE"), exp.Literal.string("FLOAT")])


def _guard(e: exp.Expr) -> tuple[exp.Expr, exp.Expr] | None:
    """(test, value) of ``CASE WHEN test THEN value END`` (one branch, no ELSE), else None."""
    if type(e) is not exp.Case or e.this is not None or e.args.get("default") is not None:
        return None
    ifs = e.args["ifs"]
    if len(ifs) != 1:
        return None
    return ifs[0].this, ifs[0].args["true"]


def double(e: exp.Expr) -> exp.Expr:
    if isinstance(e, exp.Cast) and e.to.this == exp.DataType.Type.DOUBLE:
        return e
    return cast_to(e, "DOUBLE")


def nullif_zero(e: exp.Expr, k: Decimal | None = None) -> exp.Expr:
    """NULL for a zero divisor (engines that raise on division by zero never see one); a
    divisor known to be ``k`` is settled when compiling."""
    k = k if k is not None else literal(e)
    if k is not None:
        return exp.Null() if k == 0 else e
    return exp.Nullif(this=p(e), expression=num(0))


#: Float (DOUBLE) results the scalar engine could not hold are #NUM!.
FLOAT_LIMIT = exp.Literal.number("1e308")


def not_finite(value: exp.Expr) -> exp.Expr:
    """NaN, infinities and |x| >= 1e308 (NaN sorts above every number in DuckDB, Spark,
    PostgreSQL and Trino, so the one comparison catches all three)."""
    return exp.Not(this=exp.LT(this=exp.Abs(this=value), expression=FLOAT_LIMIT.copy()))


def only(condition: exp.Expr, x: exp.Expr) -> exp.Expr:
    """x (as DOUBLE) where condition holds, else NULL: engines never see an argument outside
    a function's domain."""
    return when([(condition, double(x))])


# ------------------------------------------------------------------- decimal + - *

#: DECIMAL(38, 18) holds |x| < 1e20; the DOUBLE estimate is tested with a margin.
DECIMAL_FIT = Decimal("99999999999990000000")
_D18 = dtype("DECIMAL(38, 18)")
_D9 = dtype("DECIMAL(38, 9)")
_D0 = dtype("DECIMAL(38, 0)")
_BINARY = {"+": exp.Add, "-": exp.Sub, "*": exp.Mul}


def _estimate(col: SqlColumn, known: Decimal | None) -> exp.Expr:
    """A DOUBLE estimate of the operand: its own, a known value as a DOUBLE literal
    (``1.1e0``: an exponent makes a literal a DOUBLE on DuckDB, Spark, Trino, BigQuery,
    Snowflake and SQLite; PostgreSQL reads it as an exact NUMERIC, as good an estimate), or its
    value cast."""
    if col.estimate is not None:
        return col.estimate
    if known is not None:
        return double_literal(float(known))
    return double(col.value.copy())


def double_literal(value: float) -> exp.Expr:
    """A finite float as a DOUBLE literal: written with an exponent (``1.1e0``, ``7.8e28``),
    which makes a literal a DOUBLE on DuckDB, Spark, Trino, BigQuery, Snowflake and SQLite
    (PostgreSQL reads it as an exact NUMERIC of the same value)."""
    text = repr(value).replace("e+", "e")
    return exp.Literal.number(text if "e" in text else text + "e0")


def _double_cast(e: exp.Expr) -> bool:
    """``CAST(... AS DOUBLE)``."""
    return isinstance(e, exp.Cast) and e.to.this == exp.DataType.Type.DOUBLE


def _is_double(e: exp.Expr, col: SqlColumn) -> bool:
    """An estimate the engine types DOUBLE: the operand's own, a cast, a DOUBLE literal."""
    return col.estimate is not None or _double_cast(e) or (
        isinstance(e, exp.Literal) and "e" in e.this)


def _plain(e: exp.Expr) -> bool:
    """A column (of the table or of a binding): typed by the engine as a number, so it may be
    compared with a DOUBLE literal or multiplied by a DOUBLE without a cast of its own."""
    while isinstance(e, exp.Paren):
        e = e.this
    return isinstance(e, exp.Column)


def _reading(col: SqlColumn, e: exp.Expr) -> exp.Expr:
    """What an operand's range test reads: a plain column itself (``ABS("x") < 1e19``; its
    comparison with the DOUBLE bound is made in DOUBLE, or exactly, on every engine), else
    its DOUBLE estimate ``e``."""
    return col.value.copy() if col.estimate is None and _plain(col.value) else e.copy()


def _uncast(e: exp.Expr) -> exp.Expr:
    """``CAST(c AS DOUBLE)`` of a plain column as the column itself, else ``e``."""
    if _double_cast(e):
        inner: exp.Expr = e.this
        if _plain(inner):
            return inner
    return e


#: A known operand written as itself (`_bare`) rather than cast: below BIGINT's bound, at
#: most 18 places (then a DECIMAL(38, 18) sum or a whole-number product keeps scale 18).
_BARE_LIMIT = Decimal(2) ** 63


def _bare(k: Decimal | None, whole: bool) -> bool:
    return k is not None and abs(k) < _BARE_LIMIT and (
        k == k.to_integral_value() if whole else _places(k) <= 18)


def _short(e: exp.Expr) -> bool:
    """A value of at most 9 decimal places by construction: ``ROUND(v, n)`` with a literal
    n <= 9 (the ROUND family's exact form: the operand of + - * is a DECIMAL, never a DOUBLE
    there, and the engine's ROUND of a DECIMAL to n places has at most n). A peephole of the
    builders, as `literal` is: it reads the kind of value a form wrote (through `let.bound`),
    and saves the per-row test of the places (``ROUND(x, 9) = x``) and the DOUBLE path of
    a product: ``ROUND(ROUND(x * 1.1, 2) * 1.1, 2)`` multiplies exactly at each level."""
    e = bound(e)
    while isinstance(e, exp.Paren):
        e = e.this
    if not isinstance(e, exp.Round) or e.args.get("truncate") is not None:
        return False
    digits = e.args.get("decimals")
    if digits is None:
        return True
    value = literal(digits)
    return value is not None and value == value.to_integral_value() and value <= 9


def _nine(c: SqlColumn, k: Decimal | None) -> exp.Expr:
    """An operand of at most 9 places as a DECIMAL of scale 9 (the exact product of two is of
    scale 18): a known one as its literal written to 9 places (``1.100000000`` is a
    DECIMAL(10, 9) on every engine, as exact as ``CAST(1.1 AS DECIMAL(38, 9))``)."""
    if k is not None and abs(k) < DECIMAL_FIT and _places(k) <= 9:
        return num(k.quantize(_NINE))
    return decimal_cast(c, _D9)


_NINE = Decimal("1e-9")
#: |x| below this squares below 1e20 - 2e8 (`decimal_arith`'s ``x * x``).
_SQUARE_FIT = exp.Literal.number("9.99999999999e9")


def _fits(e: exp.Expr) -> exp.Expr:
    return exp.LT(this=exp.Abs(this=e), expression=exp.Literal.number("9.999999999999e19"))


def _places(k: Decimal) -> int:
    """Decimal places of ``k`` once trailing zeros are dropped (never rounded by a context)."""
    t = k.as_tuple()
    exponent = int(t.exponent)
    digits = list(t.digits)
    while exponent < 0 and digits and digits[-1] == 0:
        digits.pop()
        exponent += 1
    return max(0, -exponent)


#: A known addend this small moves no operand that passed its own range test (|x| < F) out of
#: DECIMAL(38, 18)'s range (F's margin below 1e20 is 1e7).
_SMALL = Decimal(4096)


def _below(bound: Decimal) -> exp.Expr:
    """A DOUBLE literal of at most ``bound`` (rounded toward zero, 15 significant digits)."""
    from decimal import ROUND_DOWN, Context

    return num(float(Context(prec=15, rounding=ROUND_DOWN).plus(bound)))


def _exact_bound(k: Decimal) -> exp.Expr | None:
    """``1e20 / |k|`` as a number literal when it is exact and a DOUBLE holds it exactly
    (``5e19`` for 2, ``1e15`` for 100000), else None. For an operand read exactly (a value,
    not a DOUBLE estimate), |x| < 1e20 / |k| is the very condition |x * k| < 1e20 (what
    DECIMAL(38, 18) holds), whether the engine compares exactly or in DOUBLE (rounding to
    DOUBLE keeps order, and the bound is a DOUBLE itself): no margin is needed, and the
    literal is short where `_below`'s 15 digits are not."""
    from decimal import Context, Inexact

    if abs(k) <= 1:
        return None
    context = Context(prec=40, traps=[Inexact])
    try:
        bound = context.divide(Decimal(10) ** 20, abs(k))
    except Inexact:
        return None
    if Decimal(float(bound)) != bound:
        return None
    # with an exponent (``1e15``, not ``1000000000000000.0``): a DOUBLE literal where the
    # engine has them (`double_literal`), an exact NUMERIC on PostgreSQL
    return exp.Literal.number(format(bound.normalize(), "e").replace("e+", "e"))


def _limit(c: SqlColumn, k: Decimal | None) -> Decimal | None:
    """A bound on the operand's magnitude known when compiling: a constant's own, or
    10^(p - s) for a value of a known DECIMAL(p, s) type that is not a result of this
    arithmetic (a column whose type the caller gave, `kit.column_types`); else None."""
    if k is not None:
        return abs(k)
    if c.decimal is not None and c.estimate is None:
        return Decimal(10) ** (c.decimal[0] - c.decimal[1])
    return None


def _held(c: SqlColumn) -> bool:
    """An operand whose known type keeps it below DECIMAL(38, 18)'s range (`_limit`)."""
    limit = _limit(c, None)
    return limit is not None and limit <= DECIMAL_FIT


def _whole(k: Decimal | None) -> bool:
    """A known whole number (its DECIMAL(38, 0) cast is exact)."""
    return k is not None and k == k.to_integral_value()


#: The largest scale a result computed in its operands' own types may have: the scalar engine
#: keeps 18 places, so a product or sum of at most 18 is its exact answer, digit for digit.
_NATIVE_SCALE = 18
#: DECIMAL widths of at most this many digits are 64-bit integers in DuckDB: a product of two
#: of them is typed DECIMAL(18, s1 + s2) and aborts the query past it (`_native`).
_INT64_DIGITS = 18


def _native_type(c: SqlColumn, k: Decimal | None) -> tuple[int, int] | None:
    """The (precision, scale) an operand has in every engine's DECIMAL arithmetic, at most (a
    bound on its digits), when it may be computed in its own type (`_native`), else None: a
    constant written as its literal (`_bare`: below BIGINT's bound, at most 18 places) as
    DuckDB types it (`kit.literal_decimal`: 1.25 is DECIMAL(3, 2)); a value of a known DECIMAL
    type that is no DOUBLE. A value of scale 0 may be an integer column (`kit.column_type`
    reads BIGINT as DECIMAL(19, 0)), which Spark widens to DECIMAL(20, 0): one digit more."""
    if k is not None:
        return literal_decimal(k) if _bare(k, False) else None
    if c.decimal is None or c.double or c.maybe_double:
        return None
    precision, scale = c.decimal
    return (min(precision + 1, 38), 0) if scale == 0 else (precision, scale)


def _native(op: str, a: SqlColumn, b: SqlColumn, known_a: Decimal | None,
            known_b: Decimal | None) -> tuple[exp.Expr, exp.Expr, tuple[int, int]] | None:
    """The operands of ``a op b`` as SQL to compute it in their own DECIMAL types, and the
    result's type, where that is the exact answer on every engine and never an abort of a
    row the range test lets through (|x| < 1e20); else None (`decimal_arith`'s DECIMAL(38, 18)
    casts). Engines type a product DECIMAL(p1 + p2, s1 + s2) (Spark: p1 + p2 + 1) and a sum
    DECIMAL(max(p1 - s1, p2 - s2) + max(s1, s2) + 1, max(s1, s2)), PostgreSQL's NUMERIC is
    exact at any size; so it is exact when:

    - at least one operand has places (two integer types multiply and add as INTEGER or
      BIGINT, which abort on an overflow);
    - the scale is at most 18 (`_NATIVE_SCALE`: the scalar engine's places; a finer product is
      rounded there, through the DOUBLE path here);
    - the precision is at most 38, or the scale at most 6: past 38 DuckDB keeps DECIMAL(38, s)
      and aborts on a value it cannot hold (|x| >= 10^(38 - s) >= 1e20: never let through),
      and Spark keeps max(38 - integer digits, min(s, 6)) places (all of them when s <= 6).

    DuckDB types a product of two 64-bit DECIMALs (at most 18 digits each, `_INT64_DIGITS`)
    of a scale below 18 DECIMAL(18, s1 + s2), which aborts from 10^(18 - s1 - s2)
    (DECIMAL(18, 2) times DECIMAL(18, 2) from 1e14): where the digits may pass 18 and neither
    operand is surely wider than 18, one is widened to DECIMAL(19, s) (a width, not a rescale:
    a constant is never the one; Spark then types the product a digit wider). The type
    returned is the widest any engine gives (Spark's), never narrower than the engine's own:
    the next operation decides on it again, `join_decimals` and `compare_decimals` cast by it.
    (Two constants: folded before this; left to the casts.)"""
    ta, tb = _native_type(a, known_a), _native_type(b, known_b)
    if ta is None or tb is None or ta[1] + tb[1] == 0 or (
            known_a is not None and known_b is not None):
        return None
    # (the types are bounds, up to a digit wider than DuckDB's own: 19 may be its 18)
    wide = op == "*" and ta[0] + tb[0] > _INT64_DIGITS \
        and max(ta[0], tb[0]) <= _INT64_DIGITS + 1 and ta[1] + tb[1] < _INT64_DIGITS
    # the one widened: a value, not a constant; of two values, an integer one (cast anyway)
    wide_a = wide and known_a is None and (known_b is not None or ta[1] == 0 or tb[1] != 0)
    x, ta = _written(a, known_a, ta, wide_a)
    y, tb = _written(b, known_b, tb, wide and not wide_a)
    if op == "*":
        scale, precision = ta[1] + tb[1], ta[0] + tb[0] + 1
    else:
        scale = max(ta[1], tb[1])
        precision = max(ta[0] - ta[1], tb[0] - tb[1]) + scale + 1
    if scale > _NATIVE_SCALE or (precision > 38 and scale > 6):
        return None
    return x, y, (min(precision, 38), scale)


def _written(c: SqlColumn, k: Decimal | None, t: tuple[int, int], wide: bool
             ) -> tuple[exp.Expr, tuple[int, int]]:
    """An operand of `_native` as SQL, and its type: a constant as its literal; a value cast to
    DECIMAL(19, s) where ``wide``, and one of scale 0 cast to DECIMAL(p, 0) always (it may be an
    integer column: PostgreSQL's float8 range guard, `pg_float`, reads SIGN of an INTEGER
    as a float8 and would make the product one); any other as it is."""
    if k is not None:
        return num(k), t
    if wide or t[1] == 0:
        t = (max(t[0], _INT64_DIGITS + 1) if wide else t[0], t[1])
        return cast_to(c.value.copy(), f"DECIMAL({t[0]}, {t[1]})"), t
    return c.value.copy(), t


def decimal_arith(op: str, a: SqlColumn, b: SqlColumn, known_a: Decimal | None,
                  known_b: Decimal | None) -> SqlColumn:
    """+ - * on DECIMAL columns (docs/columnar.md, "SQL decimal policy"): |x| < 1e20, in the
    operands' own DECIMAL types where both are known and that is exact on every engine
    (`_native`: the result's type is then theirs, `SqlColumn.decimal`), else a DECIMAL(38, 18).
    Engines type a product by adding the operands' scales and abort the whole query on an
    overflow; so a row whose operands or result do not fit is #NUM! (tested on a DOUBLE
    estimate, with a margin) and never computed. Sums are exact; a product is exact when
    native, when one operand is a whole number known when compiling (DECIMAL(38, 18) times
    DECIMAL(38, 0)) or both have at most 9 decimal places (DECIMAL(38, 9) each), else
    computed in DOUBLE and rounded to 18 places (relative 1e-15).

    ``known_a``/``known_b``: an operand's value when it is a constant (`known`), None when it
    is not. What a known operand settles is decided here, not per row: its own range test,
    its decimal places, which of the operand and result tests implies the other. An operand
    that is itself a result of this arithmetic (it has an estimate) passed its own range test
    there (else it is NULL, with its error first), so it is not tested again; ``x * x`` tests
    its one operand once. The range test is bound once (`let`), read by the value and the
    error; a NULL operand makes it NULL: a blank, not an error."""
    same = known_a is None and known_b is None and a.value == b.value
    ea, eb = _estimate(a, known_a), _estimate(b, known_b)
    # one DOUBLE side makes the estimate a DOUBLE: a plain column beside a DOUBLE (another
    # operand's estimate, or its cast) needs no cast of its own
    if _is_double(eb, b):
        ea = _uncast(ea)
    elif _is_double(ea, a):
        eb = _uncast(eb)
    est = let(_BINARY[op](this=p(ea), expression=p(eb)))
    # an operand's own test: decided for a known value (TRUE: left out), implied for a result
    # of this arithmetic (its estimate passed the test there), else per row
    ra, rb = _reading(a, ea), _reading(b, eb)
    tests = [exp.true() if c.estimate is not None or _held(c)
             else _fits(r) if k is None else exp.true() if abs(k) < DECIMAL_FIT
             else exp.false() for c, r, k in ((a, ra, known_a), (b, rb, known_b))]
    # one operand known (k), the other (x) read per row: its test says it all
    one = (known_a is None) != (known_b is None)
    k = known_a if known_a is not None else known_b
    x_test, x_read = (tests[1], rb) if known_a is not None else (tests[0], ra)
    limit_a, limit_b = _limit(a, known_a), _limit(b, known_b)
    if limit_a is not None and limit_b is not None and (
            limit_a * limit_b if op == "*" else limit_a + limit_b) <= DECIMAL_FIT:
        # both ranges known (a column of a known type, a constant): the result fits
        fits: exp.Expr = exp.true()
    elif one and k is not None and abs(k) < DECIMAL_FIT and (
            (op == "*" and abs(k) <= 1) or (op != "*" and abs(k) <= _SMALL)):
        # |x| < F implies |x * k| < F; and |x + k| < 1e20 (the margin is far wider than k)
        fits = x_test
    elif one and op == "*" and k is not None and abs(k) < DECIMAL_FIT:
        # |x * k| < F, as |x| < F / |k| (which implies |x| < F when |k| >= 1); read exactly,
        # as |x| < 1e20 / |k| where that bound is a short exact literal (`_exact_bound`) and
        # the product is exact (a whole k: no DOUBLE path whose rounding could reach 1e20)
        x_col = b if known_a is not None else a
        bound = _exact_bound(k) if x_col.estimate is None and _whole(k) else None
        fits = exp.LT(this=exp.Abs(this=x_read.copy()),
                      expression=bound if bound is not None else _below(DECIMAL_FIT / abs(k)))
    elif op == "*" and same and a.estimate is None:
        # |x| < 9.99999999999e9, read as a value (not an estimate): |x * x| < 1e20 - 2e8, a
        # margin no DOUBLE rounding of the square crosses; the estimate is then read only by
        # the DOUBLE path (once: not bound)
        fits = exp.LT(this=exp.Abs(this=ra.copy()), expression=_SQUARE_FIT.copy())
    elif op == "*" and same:
        fits = _fits(est.copy())  # |x * x| < F implies |x| < F
    else:
        fits = all_of(*tests, _fits(est.copy()))
    never = truth(fits) is False
    # a single test is NULL exactly where its operand is (a blank, not an error)
    single = not isinstance(fits, (exp.Paren, exp.And))
    # a small test is written where it is read (value and error: what `Binder.finish` would
    # inline anyway), its negation as the opposite comparison; a larger one is bound once
    small = isinstance(fits, exp.LT) and size(fits, 7) <= 6
    if not small:
        fits = let(fits)

    def cast(c: SqlColumn, to: exp.DataType, k: Decimal | None = None) -> exp.Expr:
        """The operand as ``to``; a known operand as itself where that types the result the
        same (a sum's scale is the larger one, 18; a whole number adds none to a product)."""
        if _bare(k, to is _D0):
            return num(k)  # type: ignore[arg-type]
        return decimal_cast(c, to)

    value: exp.Expr
    native = None if never else _native(op, a, b, known_a, known_b)
    decimal = D18
    if native is not None:
        # the operands in their own types: exact, no rescale (`_native`)
        x, y, decimal = native
        value = when([(fits.copy(), _BINARY[op](this=p(x), expression=p(y)))])
    elif never:  # a known operand that no DECIMAL(38, 18) holds: never computed
        value = exp.Cast(this=exp.Null(), to=clone_type(_D18))
    elif op == "*" and (_whole(known_a) or _whole(known_b)):
        whole_a = _whole(known_a)
        value = when([(fits.copy(), exp.Mul(this=cast(a, _D0 if whole_a else _D18, known_a),
                                            expression=cast(b, _D18 if whole_a else _D0,
                                                            known_b)))])
    elif op == "*":
        rounded = cast_to(est.copy(), _D18)
        if any(kk is not None and _places(kk) > 9 for kk in (known_a, known_b)):
            value = when([(fits.copy(), rounded)])  # a constant of more than 9 places
        else:
            # at most 9 places: ROUND(v, 9) = v (not v % 0.000000001 = 0: DuckDB takes % of
            # two scales in DOUBLE, so 2.675 in a DECIMAL(38, 3) failed it and its product
            # went the DOUBLE way, 4.012499999999999488 for 2.675 * 1.5)
            short = [exp.EQ(this=exp.Round(this=c.value.copy(), decimals=num(9)),
                            expression=c.value.copy())
                     for c, kk in ((a, known_a), (b, known_b))[:1 if same else 2]
                     if kk is None and not _short(c.value)
                     and not (c.decimal is not None and c.decimal[1] <= 9
                              and c.estimate is None)]
            nine = exp.Mul(this=_nine(a, known_a), expression=_nine(b, known_b))
            # the test once: CASE WHEN fits THEN CASE WHEN short THEN nine ELSE rounded END END
            value = when([(fits.copy(), when([(all_of(*short), nine)], rounded))])
    else:
        value = when([(fits.copy(), _BINARY[op](this=cast(a, _D18, known_a),
                                                expression=cast(b, _D18, known_b)))])
    over = exp.GTE(this=fits.this.copy(), expression=fits.expression.copy()) if small \
        else not_(fits.copy())
    if not single or never:
        # an operand read per row may be NULL while the other does not fit: a blank
        over = all_of(over, not_null(est.copy()))
    own = None if truth(over) is False else cases([(over, exp.Literal.string("#NUM!"))])
    # strict: the value is NULL wherever the own error is set (it is computed only where it
    # fits), and wherever an operand's error is set when that operand's value is NULL there
    strict = all(c.error is None or c.strict for c in (a, b))
    return SqlColumn(value, first_error(a.error, b.error, own), strict=strict, estimate=est,
                     decimal=decimal)


#: Set while the compiler compiles a lambda body (`SqlCompiler.higher_order`): there a range
#: test's #NUM! would make the body able to err, which refuses the whole lambda, so branches
#: are left as they are (the engine's join; docs/columnar.md, "Engine notes").
IN_LAMBDA: contextvars.ContextVar[bool] = contextvars.ContextVar("formulane_sql_in_lambda",
                                                                default=False)


__all__ = ["add", "sub", "mul", "div", "mod", "eq", "ne", "lt", "le", "gt", "ge", "p", "num",
           "truth", "settled", "all_of", "any_of", "not_", "when", "errors", "Operand", "known",
           "known_number", "operand", "decimal_cast", "shortest_decimal", "floating", "value_of", "literal", "sql_of", "double",
           "cast_to", "nullif_zero", "not_finite", "only", "decimal_arith", "double_literal",
           "FLOAT_LIMIT", "DECIMAL_FIT", "IN_LAMBDA"]
