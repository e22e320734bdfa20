"""SQL forms of the operators and of the logic functions; each mirrors its scalar twin.

Contract: the forms of `sql_table` marked for this module (``style="call"``), called by the SQL
compiler (`columnar.sql.compiler`) as ``form(call, *values)``: `columnar.call.FormCall` first,
then the arguments' sqlglot values, or their columns for lazy functions; they return a value or
``(value, errors)``. A constant operand is known through ``call.const`` (`sql_arith.known`) and
what it settles is decided when compiling, never read back out of the built SQL.
``power_parts`` is also the helper of POWER. Importing this imports sqlglot, never polars.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from datetime import date
from decimal import Decimal
from typing import Any, Callable

from sqlglot import exp

from ...call import FormCall
from ...sql.kit import (Quotient, SqlColumn, case, cases, dtype, first_error, mark_quotient,
                        not_null)
from ...sql.let import let
from . import sql_arith as _k
from . import sql_join as _j
from .sql_arith import Operand, known, p, settled

_ZERO = Decimal(0)


def _err(col: SqlColumn) -> exp.Expr:
    return col.error_or_null()


# ----------------------------------------------------------------------------------- numbers
# (+ - * on DECIMAL operands are `sql_arith.decimal_arith`, through the compiler; these are
# their DOUBLE forms and the forms of a lambda body)


def add(call: FormCall, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return _k.add(a, b)


def sub(call: FormCall, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return _k.sub(a, b)


def mul(call: FormCall, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return _k.mul(a, b)


@settled
def divide(call: FormCall, a: exp.Expr, b: exp.Expr) -> Any:
    # Division computes in DOUBLE on every dialect (engines' decimal-division scale rules
    # differ: DuckDB gives DOUBLE anyway, Spark keeps 6 places). NULLIF keeps engines that
    # raise on division by zero (PostgreSQL) from failing the query; the error column says
    # #DIV/0! for that row. A constant divisor is settled when compiling.
    kb = known(call, 1)
    value = exp.Div(this=_k.double(a), expression=_k.nullif_zero(b, kb), typed=False,
                    safe=False)
    ca, cb = call.column(0), call.column(1)
    if call.numbers == "decimal" and ca is not None and cb is not None \
            and not ca.double and not cb.double and not _k.IN_LAMBDA.get():
        # decimal operands: the grid forms of the quotient (TRUNC, FLOOR, MOD...) read them
        # to answer on the exact quotient, which the DOUBLE may miss by a hair (`math.sql`)
        mark_quotient(value, Quotient(ca, cb, known(call, 0), kb))
    return value, [(_k.eq(b if kb is None else kb, _ZERO), "#DIV/0!")]


@settled
def power_op(call: FormCall, a: exp.Expr, b: exp.Expr) -> Any:
    """``^``, its operands' known values passed on (`power_parts`); of two known operands
    whose power DOUBLE holds, that power (`power_literal`)."""
    ka, kb = known(call, 0), known(call, 1)
    folded = power_literal(ka, kb)
    if folded is not None:
        return folded
    return power_parts(a, b, ka, kb)


def power_literal(base: Decimal | None, exponent: Decimal | None) -> exp.Expr | None:
    """``base ^ exponent`` as a DOUBLE literal (``1e307``: the exponent makes it a DOUBLE) when
    both are known and their DOUBLE power is finite and below the scalar engine's bound 1e308,
    with none of the power's errors (0^0, 0^-n, a negative base to a fraction); else None.
    The engines compute ``^`` in DOUBLE with the C library's pow, as Python's float power
    does; so the value is the one the engine would compute, and its #NUM! test is decided
    (`kit.not_finite` of a literal)."""
    if base is None or exponent is None or (base == 0 and exponent <= 0) or (
            base < 0 and exponent != exponent.to_integral_value()):
        return None
    try:
        r = float(base) ** float(exponent)
    except (OverflowError, ZeroDivisionError):
        return None
    if not isinstance(r, float) or not math.isfinite(r) or abs(r) >= 1e308:
        return None
    return _k.double_literal(r)


def power_parts(a: exp.Expr, b: exp.Expr, base: Decimal | None = None,
                exponent: Decimal | None = None
                ) -> tuple[exp.Expr, list[tuple[exp.Expr, str]]]:
    """``^`` in DOUBLE: 0^0 #NUM!, 0^-n #DIV/0!, a negative base to a fraction #NUM!; what a
    known operand (``base``, ``exponent``: `sql_arith.known`) settles is decided when
    compiling (``x ^ 2`` has no test of its own). ``^`` is declared ``sql_double``: the
    compiler tests its result for a value the scalar engine could not hold (POWER(10, 400) is
    Infinity on DOUBLE engines; the scalar engine's bound is 1e308), once, or carries the test
    to the consumer (`columnar.walk`)."""
    value = exp.Pow(this=_k.double(a), expression=p(b))
    ka: Operand = a if base is None else base
    kb: Operand = b if exponent is None else exponent
    a_zero = _k.eq(ka, _ZERO)
    return value, [
        (_k.all_of(a_zero, _k.eq(kb, _ZERO)), "#NUM!"),
        (_k.all_of(a_zero, _k.lt(kb, _ZERO)), "#DIV/0!"),
        (_k.all_of(_k.lt(ka, _ZERO), _fraction(b, exponent)), "#NUM!"),
    ]


def _fraction(b: exp.Expr, k: Decimal | None) -> exp.Expr:
    """b is not a whole number (decided for a known ``k``)."""
    k = k if k is not None else _k.literal(b)
    if k is not None:
        return exp.true() if k != k.to_integral_value() else exp.false()
    return _k.ne(b, exp.Floor(this=p(b)))


def neg(call: FormCall, a: exp.Expr) -> exp.Expr:
    return exp.Neg(this=p(a))


def pos(call: FormCall, a: exp.Expr) -> exp.Expr:
    return a


def percent(call: FormCall, a: exp.Expr) -> exp.Expr:
    return exp.Div(this=p(a), expression=exp.Literal.number(100), typed=False, safe=False)


def _date_checked(value: exp.Expr) -> Any:
    """A date result (DuckDB's DATE + INTERVAL is a TIMESTAMP: cast back), #NUM! outside the
    years 1..9999 that the scalar engine's dates cover."""
    # bound once (read by the value and twice by the test): a moved date is total, its day
    # count being NULL beyond the calendar's span
    date = let(exp.cast(value, dtype("DATE"), copy=False))
    year = exp.Extract(this=exp.var("YEAR"), expression=date.copy())
    return date, [(exp.or_(exp.LT(this=year, expression=exp.Literal.number(1)),
                           exp.GT(this=year.copy(), expression=exp.Literal.number(9999))),
                   "#NUM!")]


#: More days than the calendar spans (0001-01-01 .. 9999-12-31): #NUM!, and never cast to INT
#: (an engine aborts the whole query on an INT overflow).
_MAX_DAYS_COUNT = 3652059
_MAX_DAYS = exp.Literal.number(_MAX_DAYS_COUNT)


def _whole_days(n: exp.Expr, k: Decimal | None) -> exp.Expr:
    """The scalar engine truncates a day count toward zero (CAST to INT rounds on DuckDB); a
    known count ``k`` is truncated when compiling."""
    if k is not None:
        if abs(k) > _MAX_DAYS_COUNT:
            return exp.Cast(this=exp.Null(), to=dtype("INT"))
        return exp.Literal.number(str(int(k)))  # int() truncates toward zero
    truncated = exp.Mul(this=exp.func("SIGN", p(n)),
                        expression=exp.Floor(this=exp.Abs(this=p(n))))
    fits = exp.LTE(this=exp.Abs(this=p(n.copy())), expression=_MAX_DAYS.copy())
    return case(fits, exp.cast(truncated, dtype("INT"), copy=False))


@settled
def _moved(value: exp.Expr, n: exp.Expr, k: Decimal | None, d: exp.Expr | None = None,
           sign: int = 1) -> Any:
    """``value``, the date ``d`` moved by ``sign * n`` days, #NUM! outside the calendar. A
    known count ``k`` decides the bounds ``d`` itself must lie in, when compiling: the test
    reads ``d``, not the moved date (written once then, in the value)."""
    if k is not None and d is not None and abs(k) <= _MAX_DAYS_COUNT:
        shift = sign * int(k)  # truncated toward zero, as `_whole_days`
        # d + shift in 0001-01-01 .. 9999-12-31 (by day ordinals: day 1 is 0001-01-01)
        low, high = max(1, 1 - shift), min(_LAST, _LAST - shift)
        if low <= high:
            inside = exp.Between(this=p(d), low=_date_literal(low), high=_date_literal(high))
            return exp.cast(value, dtype("DATE"), copy=False), [
                (exp.Not(this=inside), "#NUM!")]
    moved, errors = _date_checked(value)
    too_far = (exp.GT(this=exp.Abs(this=p(n.copy())), expression=_MAX_DAYS.copy())
               if k is None else exp.true() if abs(k) > _MAX_DAYS_COUNT else exp.false())
    return moved, [(too_far, "#NUM!"), *errors]


#: The scalar engine's calendar ends on day 9999-12-31 (its first day is day 1, 0001-01-01).
_LAST = date(9999, 12, 31).toordinal()


def _date_literal(ordinal: int) -> exp.Expr:
    return exp.cast(exp.Literal.string(date.fromordinal(ordinal).isoformat()),
                    dtype("DATE"))


def _plus_days(d: exp.Expr, n: exp.Expr, k: Decimal | None) -> Any:
    return _moved(exp.DateAdd(this=d, expression=_whole_days(n, k), unit=exp.var("DAY")), n, k,
                  d, 1)


def date_plus_days(call: FormCall, d: exp.Expr, n: exp.Expr) -> Any:
    return _plus_days(d, n, known(call, 1))


def days_plus_date(call: FormCall, n: exp.Expr, d: exp.Expr) -> Any:
    return _plus_days(d, n, known(call, 0))


def date_minus_days(call: FormCall, d: exp.Expr, n: exp.Expr) -> Any:
    k = known(call, 1)
    return _moved(exp.DateSub(this=d, expression=_whole_days(n, k), unit=exp.var("DAY")), n, k,
                  d, -1)


def date_diff(call: FormCall, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.DateDiff(this=a, expression=b, unit=exp.var("DAY"))


# -------------------------------------------------------------------------------- comparison

_COMPARE = {"=": exp.EQ, "<>": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}


def _compare(op: str, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return _COMPARE[op](this=p(a), expression=p(b))


def _text_compare(op: str, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return _COMPARE[op](this=exp.Lower(this=a), expression=exp.Lower(this=b))


def compare(call: FormCall, op: str, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    """``a op b`` (the table binds ``op``): numbers, dates, date-times, durations, booleans.
    Two Number columns whose DECIMAL scales may differ are compared exactly
    (`sql_join.compare_decimals`: Spark compares them at the smaller scale)."""
    ca, cb = call.column(0), call.column(1)
    if call.kind(0) == "Number" and ca is not None and cb is not None:
        joined = _j.compare_decimals(_COMPARE[op], ca, cb, call.numbers)
        if joined is not None:
            return joined
    return _compare(op, a, b)


def text_compare(call: FormCall, op: str, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    """``a op b`` on two texts, case-insensitive as Excel compares (the table binds ``op``)."""
    return _text_compare(op, a, b)


def not_(call: FormCall, a: exp.Expr) -> exp.Expr:
    return exp.Not(this=p(a))


def concat_text(call: FormCall, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.DPipe(this=a, expression=b, safe=True)


# ----------------------------------------------------------------------------- lazy logic


def _strict(*cols: SqlColumn | None) -> bool:
    """Whether every column given is NULL wherever its error is set (or cannot error)."""
    return all(c is None or c.error is None or c.strict for c in cols)


def _joins(branches: Callable[[int], list[int]],
           selects: Callable[[Any], bool] = lambda args: True) -> Callable[[Any], Any]:
    """A lazy form whose Number result is one of its arguments (``branches(n)``: their
    positions among ``n`` arguments), called with those branches given one DECIMAL type where
    they may differ (`sql_join.join_decimals`: DuckDB truncates the finer of two DECIMAL
    scales); its result has that type when the branches share one. ``selects(args)``: False
    where the form returns its first argument alone (IFERROR of a value that cannot err)."""
    def wrap(form: Any) -> Any:
        @functools.wraps(form)
        def joined(call: FormCall, *args: SqlColumn | None) -> SqlColumn:
            if call.node.type.kind != "Number" or not selects(args):
                return form(call, *args)  # type: ignore[no-any-return]
            at = [i for i in branches(len(args)) if i < len(args)]
            cols = _j.join_decimals([args[i] for i in at], call.numbers)
            given = list(args)
            for i, col in zip(at, cols):
                given[i] = col
            out: SqlColumn = form(call, *given)
            types = {c.decimal for c in cols if c is not None and not isinstance(c.value, exp.Null)}
            if out.decimal is None and len(types) == 1:
                out = replace(out, decimal=types.pop())
            elif out.decimal is None and types and None not in types:
                # branches of known types the engine joins losslessly (`join_decimals` left
                # them as they are): the joined type, the most integer digits and the largest
                # scale (``IF(f, 100000, 1)`` is DECIMAL(6, 0): its product with 100000 fits)
                known = [t for t in types if t is not None]
                if _j.joins_losslessly(known):
                    scale = max(s for _, s in known)
                    out = replace(out, decimal=(max(p - s for p, s in known) + scale, scale))
            return out
        return joined
    return wrap


@_joins(lambda n: [1, 2])
def if_(call: FormCall, cond: SqlColumn, then: SqlColumn,
        otherwise: SqlColumn | None = None) -> SqlColumn:
    other = otherwise.value if otherwise is not None else None
    other_error = otherwise.error if otherwise is not None else None
    if cond.error is None and then.error is None and other_error is None:
        return SqlColumn(case(cond.value, then.value, other))
    if cond.error is None:
        value = case(cond.value, then.value, other)
    else:
        # where the condition errs it is NULL (a condition is never blank: the checker
        # coerces it): neither branch, so the value is NULL there too
        value = cases([(cond.value, then.value),
                       (exp.Not(this=exp.paren(cond.value)), other or exp.Null())])
    if then.error is None and _never_blank(cond):
        branches = _unless(cond.value, other_error)  # (where cond errs, its error first)
    else:
        branches = cases([(cond.value, _err(then))], other_error)
    return SqlColumn(value, first_error(cond.error, branches), _strict(cond, then, otherwise))


def _unless(cond: exp.Expr, error: exp.Expr | None) -> exp.Expr | None:
    """``error`` where ``cond`` (never NULL) is false: ``CASE WHEN NOT cond THEN error END``,
    a negated condition unwrapped, and a one-branch CASE ``error`` merged into it."""
    if error is None:
        return None
    inner = cond.unnest()
    test = inner.this if isinstance(inner, exp.Not) else exp.Not(this=exp.paren(cond))
    if isinstance(error, exp.Paren):
        error = error.unnest()
    if isinstance(error, exp.Case) and error.this is None and error.args.get("default") is None \
            and len(error.args["ifs"]) == 1:
        branch = error.args["ifs"][0]
        return case(exp.and_(test, branch.this), branch.args["true"])
    return case(test, error)


@_joins(lambda n: list(range(1, n, 2)))
def ifs(call: FormCall, *args: SqlColumn) -> SqlColumn:
    value_pairs = []
    error_pairs = []
    for i in range(0, len(args), 2):
        c, v = args[i], args[i + 1]
        value_pairs.append((c.value, v.value))
        if c.error is not None:
            error_pairs.append((not_null(c.error), c.error))
        error_pairs.append((c.value, _err(v)))
    return SqlColumn(cases(value_pairs), cases(error_pairs, exp.Literal.string("#N/A")))


def _left_first(a: SqlColumn, b: SqlColumn, value: exp.Expr, b_unread: exp.Expr,
                b_read: exp.Expr | None = None) -> SqlColumn:
    """``value`` of an operator that reads ``b`` only where ``b_unread`` is true (AND, OR, ??):
    its error is a's, else b's where b is read. ``b_read``, the negation of ``b_unread``, is
    used where it is exact: always when given for ??, for AND and OR when ``a`` is never
    blank (NULL only where it errs, and a's error comes first there). Strict when ``a``
    cannot err and ``b`` is strict (where a errs, the value may still read b)."""
    if a.error is None and b.error is None:
        return SqlColumn(value, type=_joined_type(a, b))
    if b_read is not None:
        rest = case(b_read, _err(b))
    else:
        rest = cases([(b_unread, exp.Null())], _err(b))
    return SqlColumn(value, first_error(a.error, rest), a.error is None and _strict(b),
                     type=_joined_type(a, b))


def _never_blank(col: SqlColumn) -> bool:
    return col.type is not None and not col.type.nullable


def _joined_type(a: SqlColumn, b: SqlColumn) -> Any:
    """The type of ``a op b`` as far as blanks go: a's when neither operand may be blank."""
    return a.type if _never_blank(a) and _never_blank(b) else None


def op_and(call: FormCall, a: SqlColumn, b: SqlColumn) -> SqlColumn:
    return _left_first(a, b, exp.And(this=p(a.value), expression=p(b.value)),
                       exp.Not(this=p(a.value)), p(a.value) if _never_blank(a) else None)


def op_or(call: FormCall, a: SqlColumn, b: SqlColumn) -> SqlColumn:
    return _left_first(a, b, exp.Or(this=p(a.value), expression=p(b.value)), a.value,
                       exp.Not(this=p(a.value)) if _never_blank(a) else None)


def and_(call: FormCall, *args: SqlColumn) -> SqlColumn:
    result = args[0]
    for nxt in args[1:]:
        result = op_and(call, result, nxt)
    return result


def or_(call: FormCall, *args: SqlColumn) -> SqlColumn:
    result = args[0]
    for nxt in args[1:]:
        result = op_or(call, result, nxt)
    return result


@_joins(lambda n: list(range(n)))
def coalesce_op(call: FormCall, a: SqlColumn, b: SqlColumn) -> SqlColumn:
    return _coalesce2(a, b)


def _coalesce2(a: SqlColumn, b: SqlColumn) -> SqlColumn:
    # a value that is always blank (a constant error's NULL) leaves a alone
    value = a.value if isinstance(b.value, exp.Null) else \
        exp.Coalesce(this=a.value, expressions=[b.value])
    return _left_first(a, b, value, not_null(a.value), exp.Is(this=a.value,
                                                               expression=exp.Null()))


@_joins(lambda n: list(range(n)))
def coalesce(call: FormCall, *args: SqlColumn) -> SqlColumn:
    result = args[0]
    for nxt in args[1:]:
        result = _coalesce2(result, nxt)
    return result


@_joins(lambda n: [0, 1])
def ifblank(call: FormCall, value: SqlColumn, fallback: SqlColumn) -> SqlColumn:
    return _coalesce2(value, fallback)


@_joins(lambda n: [0, 1], lambda args: args[0].error is not None)
def iferror(call: FormCall, value: SqlColumn, fallback: SqlColumn) -> SqlColumn:
    if value.error is None:
        return value
    if value.strict and _never_blank(value):
        # the value is NULL exactly where it errs: its error need not be read
        out: exp.Expr = exp.Coalesce(this=value.value, expressions=[fallback.value])
        fails: exp.Expr = exp.Is(this=value.value, expression=exp.Null())
    else:
        ok = exp.Is(this=value.error, expression=exp.Null())
        out, fails = case(ok, value.value, fallback.value), exp.Not(this=ok)
    error = None if fallback.error is None else case(fails, fallback.error)
    return SqlColumn(out, error, _strict(fallback))


@_joins(lambda n: [0, 1], lambda args: args[0].error is not None)
def ifna(call: FormCall, value: SqlColumn, fallback: SqlColumn) -> SqlColumn:
    if value.error is None:
        return value
    is_na = exp.EQ(this=value.error, expression=exp.Literal.string("#N/A"))
    return SqlColumn(case(is_na, fallback.value, value.value),
                     case(is_na, _err(fallback), value.error), _strict(value, fallback))


@_joins(lambda n: list(range(1, n)))
def choose(call: FormCall, index: SqlColumn, *values: SqlColumn) -> SqlColumn:
    # the scalar CHOOSE truncates the index (CAST to INT rounds on some engines)
    i = exp.cast(exp.Floor(this=index.value), dtype("INT"))
    value_pairs = [(exp.EQ(this=i, expression=exp.Literal.number(n)), v.value)
                   for n, v in enumerate(values, start=1)]
    error_pairs = [(exp.EQ(this=i, expression=exp.Literal.number(n)), _err(v))
                   for n, v in enumerate(values, start=1)]
    return SqlColumn(cases(value_pairs),
                     first_error(index.error, cases(error_pairs, exp.Literal.string("#VALUE!"))))


@_joins(lambda n: [*range(2, n, 2), *([n - 1] if n % 2 == 0 else [])])
def switch(call: FormCall, subject: SqlColumn, *args: SqlColumn) -> SqlColumn:
    """Text compares ignoring case, as the scalar SWITCH (and `=`) do; blank matches blank."""
    pairs = len(args) - len(args) % 2
    text = subject.type is not None and subject.type.kind == "Text"
    s = exp.Lower(this=subject.value) if text else p(subject.value)
    value_pairs: list[tuple[exp.Expr, exp.Expr]] = []
    error_pairs: list[tuple[exp.Expr, exp.Expr]] = []
    for i in range(0, pairs, 2):
        candidate = exp.Lower(this=args[i].value) if text else p(args[i].value)
        error = args[i].error
        if error is not None:
            value_pairs.append((not_null(error), exp.Null()))
            error_pairs.append((not_null(error), error))
        match: exp.Expr = exp.NullSafeEQ(this=s, expression=candidate)
        if not text and subject.type is not None and subject.type.kind == "Number":
            # one DECIMAL type where the scales may differ, as `=` (`compare`)
            match = _j.compare_decimals(exp.NullSafeEQ, subject, args[i], call.numbers) \
                or match
        value_pairs.append((match, args[i + 1].value))
        error_pairs.append((match, _err(args[i + 1])))
    default_value = args[-1].value if len(args) % 2 else None
    default_error = _err(args[-1]) if len(args) % 2 else exp.Literal.string("#N/A")
    return SqlColumn(cases(value_pairs, default_value),
                     first_error(subject.error, cases(error_pairs, default_error)))


def xor(call: FormCall, *args: exp.Expr) -> exp.Expr:
    total: exp.Expr = case(args[0], exp.Literal.number(1), exp.Literal.number(0))
    for a in args[1:]:
        total = exp.Add(this=total, expression=case(a, exp.Literal.number(1),
                                                    exp.Literal.number(0)))
    return exp.EQ(this=exp.Mod(this=p(total), expression=exp.Literal.number(2)),
                  expression=exp.Literal.number(1))


def error(call: FormCall, message: exp.Expr) -> Any:
    return exp.Null(), exp.Literal.string("#ERROR!")


def blank(call: FormCall) -> exp.Expr:
    return exp.Null()


def true_(call: FormCall) -> exp.Expr:
    return exp.Boolean(this=True)


def false_(call: FormCall) -> exp.Expr:
    return exp.Boolean(this=False)
