"""SQL forms of the operators and of the logic functions; each mirrors its scalar twin.

Contract: the forms of `sql_table` marked for this module, called by the SQL compiler
(`vectorized.sql`) with the arguments' sqlglot values, or their columns for lazy functions;
they return a value or ``(value, errors)``. Importing this imports sqlglot, never polars.
"""

from __future__ import annotations

from typing import Any, Sequence

from sqlglot import exp

from ....vectorized.sql import SqlColumn, case, cases, first_error

_ZERO = exp.Literal.number(0)


def _err(col: SqlColumn) -> exp.Expr:
    return col.error_or_null()


def _not_null(e: exp.Expr) -> exp.Expr:
    return exp.Not(this=exp.Is(this=e, expression=exp.Null()))


def _cases(pairs: Sequence[tuple[exp.Expr, exp.Expr]],
           default: exp.Expr | None = None) -> exp.Expr:
    return cases(pairs, default)


def _paren(e: exp.Expr) -> exp.Expr:
    return exp.Paren(this=e)


# ----------------------------------------------------------------------------------- numbers


def add(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.Add(this=_paren(a), expression=_paren(b))


def sub(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.Sub(this=_paren(a), expression=_paren(b))


def mul(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.Mul(this=_paren(a), expression=_paren(b))


def divide(a: exp.Expr, b: exp.Expr) -> Any:
    # Division computes in DOUBLE on every dialect (engines' decimal-division scale rules
    # differ: DuckDB gives DOUBLE anyway, Spark keeps 6 places). NULLIF keeps engines that
    # raise on division by zero (PostgreSQL) from failing the query; the error column says
    # #DIV/0! for that row.
    value = exp.Div(this=exp.cast(_paren(a), exp.DataType.build("DOUBLE")),
                    expression=exp.Nullif(this=_paren(b), expression=_ZERO),
                    typed=False, safe=False)
    return value, [(exp.EQ(this=_paren(b), expression=_ZERO), "#DIV/0!")]


def power(a: exp.Expr, b: exp.Expr) -> Any:
    base = exp.cast(_paren(a), exp.DataType.build("DOUBLE"))
    value = exp.Pow(this=base, expression=_paren(b))
    a_zero = exp.EQ(this=_paren(a), expression=_ZERO)
    return value, [
        (exp.and_(a_zero, exp.EQ(this=_paren(b), expression=_ZERO)), "#NUM!"),
        (exp.and_(a_zero, exp.LT(this=_paren(b), expression=_ZERO)), "#DIV/0!"),
        (exp.and_(exp.LT(this=_paren(a), expression=_ZERO),
                  exp.NEQ(this=_paren(b), expression=exp.Floor(this=_paren(b)))), "#NUM!"),
        # POWER(10, 400) is Infinity on DOUBLE engines; the scalar engine's bound is 1e308.
        (exp.GTE(this=exp.Abs(this=value.copy()), expression=exp.Literal.number("1e308")),
         "#NUM!"),
    ]


def neg(a: exp.Expr) -> exp.Expr:
    return exp.Neg(this=_paren(a))


def pos(a: exp.Expr) -> exp.Expr:
    return a


def percent(a: exp.Expr) -> exp.Expr:
    return exp.Div(this=_paren(a), expression=exp.Literal.number(100), typed=False, safe=False)


def _date_checked(value: exp.Expr) -> Any:
    """A date result (DuckDB's DATE + INTERVAL is a TIMESTAMP: cast back), #NUM! outside the
    years 1..9999 that the scalar engine's dates cover."""
    date = exp.cast(value, exp.DataType.build("DATE"))
    year = exp.Extract(this=exp.var("YEAR"), expression=date.copy())
    return date, [(exp.or_(exp.LT(this=year, expression=exp.Literal.number(1)),
                           exp.GT(this=year.copy(), expression=exp.Literal.number(9999))),
                   "#NUM!")]


#: More days than the calendar spans (0001-01-01 .. 9999-12-31): #NUM!, and never cast to INT
#: (an engine aborts the whole query on an INT overflow).
_MAX_DAYS = exp.Literal.number(3652059)


def _whole_days(n: exp.Expr) -> exp.Expr:
    """The scalar engine truncates a day count toward zero (CAST to INT rounds on DuckDB)."""
    truncated = exp.Mul(this=exp.func("SIGN", _paren(n)),
                        expression=exp.Floor(this=exp.Abs(this=_paren(n))))
    fits = exp.LTE(this=exp.Abs(this=_paren(n.copy())), expression=_MAX_DAYS.copy())
    return case(fits, exp.cast(truncated, exp.DataType.build("INT")))


def _moved(value: exp.Expr, n: exp.Expr) -> Any:
    date, errors = _date_checked(value)
    too_far = exp.GT(this=exp.Abs(this=_paren(n.copy())), expression=_MAX_DAYS.copy())
    return date, [(too_far, "#NUM!"), *errors]


def date_plus_days(d: exp.Expr, n: exp.Expr) -> Any:
    return _moved(exp.DateAdd(this=d, expression=_whole_days(n), unit=exp.var("DAY")), n)


def days_plus_date(n: exp.Expr, d: exp.Expr) -> Any:
    return date_plus_days(d, n)


def date_minus_days(d: exp.Expr, n: exp.Expr) -> Any:
    return _moved(exp.DateSub(this=d, expression=_whole_days(n), unit=exp.var("DAY")), n)


def date_diff(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.DateDiff(this=a, expression=b, unit=exp.var("DAY"))


# -------------------------------------------------------------------------------- comparison

_COMPARE = {"=": exp.EQ, "<>": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}


def compare(op: str) -> Any:
    return lambda a, b: _COMPARE[op](this=_paren(a), expression=_paren(b))


def text_compare(op: str) -> Any:
    return lambda a, b: _COMPARE[op](this=exp.Lower(this=a), expression=exp.Lower(this=b))


eq, ne, lt, le, gt, ge = (compare(o) for o in ("=", "<>", "<", "<=", ">", ">="))
text_eq, text_ne, text_lt, text_le, text_gt, text_ge = (
    text_compare(o) for o in ("=", "<>", "<", "<=", ">", ">="))


def not_(a: exp.Expr) -> exp.Expr:
    return exp.Not(this=_paren(a))


def concat_text(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.DPipe(this=a, expression=b, safe=True)


# ----------------------------------------------------------------------------- lazy logic


def if_(cond: SqlColumn, then: SqlColumn, otherwise: SqlColumn | None = None) -> SqlColumn:
    value = case(cond.value, then.value, otherwise.value if otherwise is not None else None)
    other_error = otherwise.error if otherwise is not None else None
    if cond.error is None and then.error is None and other_error is None:
        return SqlColumn(value)
    pairs = []
    if cond.error is not None:
        pairs.append((_not_null(cond.error), cond.error))
    pairs.append((cond.value, _err(then)))
    return SqlColumn(value, cases(pairs, other_error))


def ifs(*args: SqlColumn) -> SqlColumn:
    value_pairs = []
    error_pairs = []
    for i in range(0, len(args), 2):
        c, v = args[i], args[i + 1]
        value_pairs.append((c.value, v.value))
        if c.error is not None:
            error_pairs.append((_not_null(c.error), c.error))
        error_pairs.append((c.value, _err(v)))
    return SqlColumn(cases(value_pairs), cases(error_pairs, exp.Literal.string("#N/A")))


def op_and(a: SqlColumn, b: SqlColumn) -> SqlColumn:
    value = exp.And(this=_paren(a.value), expression=_paren(b.value))
    if a.error is None and b.error is None:
        return SqlColumn(value)
    pairs = []
    if a.error is not None:
        pairs.append((_not_null(a.error), a.error))
    pairs.append((exp.Not(this=_paren(a.value)), exp.Null()))
    return SqlColumn(value, _cases(pairs, _err(b)))


def op_or(a: SqlColumn, b: SqlColumn) -> SqlColumn:
    value = exp.Or(this=_paren(a.value), expression=_paren(b.value))
    if a.error is None and b.error is None:
        return SqlColumn(value)
    pairs = []
    if a.error is not None:
        pairs.append((_not_null(a.error), a.error))
    pairs.append((a.value, exp.Null()))
    return SqlColumn(value, _cases(pairs, _err(b)))


def and_(*args: SqlColumn) -> SqlColumn:
    result = args[0]
    for nxt in args[1:]:
        result = op_and(result, nxt)
    return result


def or_(*args: SqlColumn) -> SqlColumn:
    result = args[0]
    for nxt in args[1:]:
        result = op_or(result, nxt)
    return result


def coalesce_op(a: SqlColumn, b: SqlColumn) -> SqlColumn:
    value = exp.Coalesce(this=a.value, expressions=[b.value])
    if a.error is None and b.error is None:
        return SqlColumn(value)
    pairs = []
    if a.error is not None:
        pairs.append((_not_null(a.error), a.error))
    pairs.append((exp.Is(this=a.value, expression=exp.Null()), _err(b)))
    return SqlColumn(value, _cases(pairs))


def coalesce(*args: SqlColumn) -> SqlColumn:
    result = args[0]
    for nxt in args[1:]:
        result = coalesce_op(result, nxt)
    return result


def ifblank(value: SqlColumn, fallback: SqlColumn) -> SqlColumn:
    return coalesce_op(value, fallback)


def iferror(value: SqlColumn, fallback: SqlColumn) -> SqlColumn:
    if value.error is None:
        return value
    ok = exp.Is(this=value.error, expression=exp.Null())
    out = case(ok, value.value, fallback.value)
    error = None if fallback.error is None else case(exp.Not(this=ok), fallback.error)
    return SqlColumn(out, error)


def ifna(value: SqlColumn, fallback: SqlColumn) -> SqlColumn:
    if value.error is None:
        return value
    is_na = exp.EQ(this=value.error, expression=exp.Literal.string("#N/A"))
    return SqlColumn(case(is_na, fallback.value, value.value),
                     case(is_na, _err(fallback), value.error))


def choose(index: SqlColumn, *values: SqlColumn) -> SqlColumn:
    # the scalar CHOOSE truncates the index (CAST to INT rounds on some engines)
    i = exp.cast(exp.Floor(this=index.value), exp.DataType.build("INT"))
    value_pairs = [(exp.EQ(this=i, expression=exp.Literal.number(n)), v.value)
                   for n, v in enumerate(values, start=1)]
    error_pairs = [(exp.EQ(this=i, expression=exp.Literal.number(n)), _err(v))
                   for n, v in enumerate(values, start=1)]
    return SqlColumn(_cases(value_pairs),
                     first_error(index.error, _cases(error_pairs, exp.Literal.string("#VALUE!"))))


def switch(subject: SqlColumn, *args: SqlColumn) -> SqlColumn:
    """Text compares ignoring case, as the scalar SWITCH (and `=`) do; blank matches blank."""
    pairs = len(args) - len(args) % 2
    text = subject.type is not None and subject.type.kind == "Text"
    s = exp.Lower(this=subject.value) if text else _paren(subject.value)
    value_pairs: list[tuple[exp.Expr, exp.Expr]] = []
    error_pairs: list[tuple[exp.Expr, exp.Expr]] = []
    for i in range(0, pairs, 2):
        candidate = exp.Lower(this=args[i].value) if text else _paren(args[i].value)
        error = args[i].error
        if error is not None:
            value_pairs.append((_not_null(error), exp.Null()))
            error_pairs.append((_not_null(error), error))
        match = exp.NullSafeEQ(this=s, expression=candidate)
        value_pairs.append((match, args[i + 1].value))
        error_pairs.append((match, _err(args[i + 1])))
    default_value = args[-1].value if len(args) % 2 else None
    default_error = _err(args[-1]) if len(args) % 2 else exp.Literal.string("#N/A")
    return SqlColumn(_cases(value_pairs, default_value),
                     first_error(subject.error, _cases(error_pairs, default_error)))


def xor(*args: exp.Expr) -> exp.Expr:
    total: exp.Expr = case(args[0], exp.Literal.number(1), exp.Literal.number(0))
    for a in args[1:]:
        total = exp.Add(this=total, expression=case(a, exp.Literal.number(1),
                                                    exp.Literal.number(0)))
    return exp.EQ(this=exp.Mod(this=_paren(total), expression=exp.Literal.number(2)),
                  expression=exp.Literal.number(1))


def error(message: exp.Expr) -> Any:
    return exp.Null(), exp.Literal.string("#ERROR!")


def blank() -> exp.Expr:
    return exp.Null()


def true_() -> exp.Expr:
    return exp.Boolean(this=True)


def false_() -> exp.Expr:
    return exp.Boolean(this=False)
