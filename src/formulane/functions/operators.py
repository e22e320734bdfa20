"""Operators, declared as specs like any function (named by their symbol).

Each overload carries its own implementation, chosen statically by the checker, so ``Date +
Number`` and ``Number + Number`` cost no dispatch at run time. Arithmetic relies on the engine's
decimal context (34 digits, overflow traps to ``#NUM!``). Comparisons of Text ignore case, as
Excel does; ``EXACT`` is the case-sensitive test. ``and``, ``or`` and ``??`` are lazy.
"""

from __future__ import annotations

import datetime as dt
import operator
from decimal import Decimal
from typing import Any, Callable

from ..types import (
    BOOLEAN, DATE, DATETIME, DURATION, NUMBER, TEXT, Type, join, non_null, optional,
)
from ..values import DIV0, NUM, ErrorValue, XLError, display_text
from ._numeric import POWER_COST
from .spec import Cost, FunctionSpec, Refuse, builtin, family, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "operators"

_EPOCH_UTC = dt.timezone.utc
#: +, -, * and /: the refusal of their overloads without a table form (DateTime, Duration).
_TIME_REFUSED = Refuse("DateTime and Duration arithmetic is not vectorized yet")


def _days(n: Any) -> dt.timedelta:
    return dt.timedelta(days=int(n))


def _date_plus(d: dt.date, n: Any) -> dt.date:
    try:
        return d + _days(n)
    except OverflowError:
        raise XLError(NUM, "date out of range") from None


def _date_minus(d: dt.date, n: Any) -> dt.date:
    try:
        return d - _days(n)
    except OverflowError:
        raise XLError(NUM, "date out of range") from None


def _date_plus_duration(d: dt.date, span: dt.timedelta) -> dt.datetime:
    return dt.datetime(d.year, d.month, d.day, tzinfo=_EPOCH_UTC) + span


def _date_diff(a: dt.date, b: dt.date) -> int:
    return (a - b).days


def _checked(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def run(a: Any, b: Any) -> Any:
        try:
            return op(a, b)
        except OverflowError:
            raise XLError(NUM, "date or duration out of range") from None

    return run


def _utc(d: dt.datetime) -> dt.datetime:
    return d.astimezone(_EPOCH_UTC)


# Python compares and subtracts aware datetimes that share a tzinfo by wall clock, which is
# wrong across daylight-saving changes: every DateTime operation works on the UTC instant.
def _dt_plus(d: dt.datetime, span: dt.timedelta) -> dt.datetime:
    try:
        return (_utc(d) + span).astimezone(d.tzinfo)
    except OverflowError:
        raise XLError(NUM, "date out of range") from None


def _dt_minus_duration(d: dt.datetime, span: dt.timedelta) -> dt.datetime:
    return _dt_plus(d, -span)


def _dt_minus(a: dt.datetime, b: dt.datetime) -> dt.timedelta:
    return _utc(a) - _utc(b)


def _instant(op: Callable[[Any, Any], bool]) -> Callable[[dt.datetime, dt.datetime], bool]:
    return lambda a, b: op(_utc(a), _utc(b))


def _duration_times(span: dt.timedelta, n: Any) -> dt.timedelta:
    try:
        return dt.timedelta(microseconds=int(Decimal(span // dt.timedelta(microseconds=1)) * n))
    except OverflowError:
        raise XLError(NUM, "duration out of range") from None


def _duration_div(span: dt.timedelta, n: Any) -> dt.timedelta:
    if n == 0:
        raise XLError(DIV0, "division by zero")
    return _duration_times(span, Decimal(1) / Decimal(n))


def _duration_ratio(a: dt.timedelta, b: dt.timedelta) -> Decimal:
    if not b:
        raise XLError(DIV0, "division by zero")
    return Decimal(a // dt.timedelta(microseconds=1)) / Decimal(b // dt.timedelta(microseconds=1))


# ------------------------------------------------------------------------------------- arithmetic


@builtin(
    "+",
    sig(NUMBER, NUMBER, returns=NUMBER, impl=operator.add),
    sig(DATE, NUMBER, returns=DATE, impl=_date_plus),
    sig(NUMBER, DATE, returns=DATE, impl=lambda n, d: _date_plus(d, n)),
    sig(DATETIME, DURATION, returns=DATETIME, impl=_dt_plus),
    sig(DURATION, DATETIME, returns=DATETIME, impl=lambda d, t: _dt_plus(t, d)),
    sig(DATE, DURATION, returns=DATETIME, impl=_checked(_date_plus_duration)),
    sig(DURATION, DATE, returns=DATETIME, impl=_checked(lambda s, d: _date_plus_duration(d, s))),
    sig(DURATION, DURATION, returns=DURATION, impl=_checked(operator.add)),
    doc="Addition; a Date plus a Number adds days, a DateTime plus a Duration adds time.",
    polars=_TIME_REFUSED, sql=_TIME_REFUSED,
    examples=["1 + 2 -> 3", "0.1 + 0.2 -> 0.3", "DATE(2024,2,28) + 1 -> DATE(2024,2,29)"],
    category="operators",
    cost=Cost.const(1),
    errors=("#NUM!",),
    arithmetic="+",
    carries_nonfinite=True,
    total_on_floats=True,
    propagates_null=True,
)
def add(a: Any, b: Any) -> Any:
    return a + b


@builtin(
    "-",
    sig(NUMBER, NUMBER, returns=NUMBER, impl=operator.sub),
    sig(DATE, NUMBER, returns=DATE, impl=_date_minus),
    sig(DATE, DATE, returns=NUMBER, impl=_date_diff),
    sig(DATETIME, DATETIME, returns=DURATION, impl=_dt_minus),
    sig(DATETIME, DURATION, returns=DATETIME, impl=_dt_minus_duration),
    sig(DATE, DURATION, returns=DATETIME, impl=_checked(lambda d, s: _date_plus_duration(d, -s))),
    sig(DURATION, DURATION, returns=DURATION, impl=_checked(operator.sub)),
    doc="Subtraction; Date minus Date gives days, DateTime minus DateTime a Duration.",
    polars=_TIME_REFUSED, sql=_TIME_REFUSED,
    examples=["5 - 7 -> -2", "DATE(2024,3,1) - DATE(2024,2,1) -> 29"],
    category="operators",
    cost=Cost.const(1),
    errors=("#NUM!",),
    arithmetic="-",
    carries_nonfinite=True,
    total_on_floats=True,
    propagates_null=True,
)
def sub(a: Any, b: Any) -> Any:
    return a - b


def _multiply(a: Any, b: Any) -> Any:
    # Two small ints multiply exactly but past 34 digits in a chain; Decimal keeps the context.
    if type(a) is int and type(b) is int:
        return Decimal(a) * b
    return a * b


@builtin(
    "*",
    sig(NUMBER, NUMBER, returns=NUMBER, impl=_multiply),
    sig(DURATION, NUMBER, returns=DURATION, impl=_duration_times),
    sig(NUMBER, DURATION, returns=DURATION, impl=lambda n, d: _duration_times(d, n)),
    doc="Multiplication.",
    polars=_TIME_REFUSED, sql=_TIME_REFUSED,
    examples=["6 * 7 -> 42", "1.1 * 1.1 -> 1.21"],
    category="operators",
    cost=Cost.const(1),
    errors=("#NUM!",),
    arithmetic="*",
    carries_nonfinite=True,
    total_on_floats=True,
    propagates_null=True,
)
def mul(a: Any, b: Any) -> Any:
    return a * b


def _divide(a: Any, b: Any) -> Any:
    if not b:
        raise XLError(DIV0, "division by zero")
    return Decimal(a) / b if type(a) is int else a / b


@builtin(
    "/",
    sig(NUMBER, NUMBER, returns=NUMBER, impl=_divide),
    sig(DURATION, NUMBER, returns=DURATION, impl=_duration_div),
    sig(DURATION, DURATION, returns=NUMBER, impl=_duration_ratio),
    doc="Division; dividing by zero gives #DIV/0!.",
    polars=_TIME_REFUSED, sql=_TIME_REFUSED,
    examples=["1 / 4 -> 0.25", "1 / 0 -> #DIV/0!", "0 / 0 -> #DIV/0!"],
    category="operators",
    cost=Cost.const(1),
    errors=("#DIV/0!", "#NUM!"),
    arithmetic="/",
    total_on_floats=True,
    sql_double=True,
    propagates_null=True,
)
def div(a: Any, b: Any) -> Any:
    return _divide(a, b)


def power_of(base: Any, exponent: Any) -> Decimal:
    """Excel's power, shared with POWER(): 0^0 is #NUM!, 0^negative #DIV/0!, a negative base
    needs an integral exponent, and a result too large is #NUM! without computing it."""
    from ._numeric import power

    return power(base, exponent)


@builtin(
    "^",
    sig(NUMBER, NUMBER, returns=NUMBER, impl=power_of),
    doc="Power (left-associative, as in Excel); 0^0 is #NUM!.",
    examples=["2 ^ 10 -> 1024", "0 ^ 0 -> #NUM!", "4 ^ 0.5 -> 2", "9 ^ (9 ^ 9) -> #NUM!", "(-8) ^ (1/3) -> #NUM!"],
    category="operators",
    cost=POWER_COST,
    errors=("#NUM!", "#DIV/0!"),
    sql_double=True,
)
def power(a: Any, b: Any) -> Any:
    return power_of(a, b)


def _concat_check(types: list[Type], profile: str) -> tuple[list[Type], Type]:
    params = []
    for i, t in enumerate(types):
        if not (t.is_scalar or t.kind in ("Blank", "Never", "Any")):
            raise TypeError(i, f"& joins single values, got {t}")
        # Blanks are not silently empty text in strict: `x ?? ""` says so. In excel a blank
        # of any type joins as "" (an empty cell): asking for Text makes the checker coerce
        # the value to text and the blank to "".
        joins_as_text = t.kind in ("Blank", "Any") or (profile == "excel" and t.nullable
                                                        and t.kind != "Text")
        if profile == "excel" and not joins_as_text and t.kind in ("Date", "DateTime",
                                                                   "Duration"):
            # Excel holds a date as its serial number: "" & DATE(2000, 1, 1) is "36526".
            params.append(NUMBER)
            continue
        params.append(TEXT if joins_as_text else non_null(t))
    return params, TEXT


@builtin(
    "&",
    sig(TEXT, TEXT, returns=TEXT),
    doc="Joins two values as text (numbers in Excel's General format, dates as ISO dates).",
    examples=['"a" & "b" -> "ab"', '"n=" & 1/4 -> "n=0.25"', '"" & 1/3 -> "0.333333333333333"'],
    category="operators",
    cost=Cost.const(2),
    needs_ctx=True,
    check=_concat_check,
    errors=(),
    joins_text=True,
)
def concat(ctx: Any, a: Any, b: Any) -> str:
    left: str = a if type(a) is str else display_text(a)
    right: str = b if type(b) is str else display_text(b)
    ctx.check_text(len(left) + len(right))
    return left + right


# -------------------------------------------------------------------------------------- unary


def _negate_duration(d: dt.timedelta) -> dt.timedelta:
    return -d


@builtin(
    "NEG",
    sig(NUMBER, returns=NUMBER, impl=operator.neg),
    sig(DURATION, returns=DURATION, impl=_negate_duration),
    doc="Unary minus.",
    polars=Refuse("Duration negation is not vectorized yet"),
    examples=["-(3) -> -3", "-(-3) -> 3"],
    category="operators",
    cost=Cost.const(1),
    can_error=False,
    arithmetic="neg",
    carries_nonfinite=True,
    total_on_floats=True,
    propagates_null=True,
)
def neg(a: Any) -> Any:
    return -a


@builtin(
    "POS",
    sig(NUMBER, returns=NUMBER, impl=operator.pos),
    sig(DURATION, returns=DURATION, impl=lambda d: d),
    doc="Unary plus (no effect).",
    examples=["+3 -> 3", "+(-3) -> -3"],
    category="operators",
    cost=Cost.const(0),
    can_error=False,
    arithmetic="pos",
    carries_nonfinite=True,
    total_on_floats=True,
    propagates_null=True,
)
def pos(a: Any) -> Any:
    return a


_HUNDRED = Decimal(100)


@builtin(
    "%",
    sig(NUMBER, returns=NUMBER),
    doc="Percent: divides by 100.",
    examples=["15% -> 0.15", "(1 + 1)% -> 0.02"],
    category="operators",
    cost=Cost.const(1),
    can_error=False,
    arithmetic="%",
    carries_nonfinite=True,
    propagates_null=True,
)
def percent(a: Any) -> Any:
    return a / _HUNDRED


@builtin(
    "NOT",
    sig(p("logical", BOOLEAN), returns=BOOLEAN),
    doc="Logical negation (also written `not x` or `!x`).",
    examples=["NOT(TRUE) -> FALSE", "not 1 > 2 -> TRUE"],
    category="logic",
    cost=Cost.const(1),
    can_error=False,
    any_decimal_scale=True,
    total_on_floats=True,
    propagates_null=True,
    decimal_free=True,
)
def not_(a: bool) -> bool:
    return not a


# --------------------------------------------------------------------------------- comparison


def _text_eq(a: str, b: str) -> bool:
    return a == b or a.lower() == b.lower()


def _text_ne(a: str, b: str) -> bool:
    return not _text_eq(a, b)


def _text_cmp(op: Callable[[Any, Any], bool]) -> Callable[[str, str], bool]:
    return lambda a, b: op(a.lower(), b.lower())


_ORDERED = (NUMBER, DATE, DATETIME, DURATION, BOOLEAN)


def _comparison(symbol: str, op: Callable[[Any, Any], bool], text_op: Callable[[str, str], bool],
                doc: str, examples: list[str]) -> FunctionSpec:
    sigs = [sig(t, t, returns=BOOLEAN, impl=_instant(op) if t is DATETIME else op) for t in _ORDERED]
    sigs.append(sig(TEXT, TEXT, returns=BOOLEAN, impl=text_op))
    return builtin(
        symbol, *sigs, doc=doc, examples=examples, category="operators", cost=Cost.const(1),
        can_error=False,
        any_decimal_scale=True,
        total_on_floats=True,
        propagates_null=True,
        decimal_free=True,
    )(op)




eq = _comparison("=", operator.eq, _text_eq, "Equal (Text ignores case; `==` also works).",
                 ['"a" = "A" -> TRUE', "0.1 + 0.2 = 0.3 -> TRUE"])
ne = _comparison("<>", operator.ne, _text_ne, "Not equal (`!=` also works).",
                 ["1 <> 2 -> TRUE", '"a" <> "A" -> FALSE'])
lt = _comparison("<", operator.lt, _text_cmp(operator.lt), "Less than.",
                 ["1 < 2 -> TRUE", '"a" < "B" -> TRUE'])
le = _comparison("<=", operator.le, _text_cmp(operator.le), "Less than or equal.",
                 ["2 <= 2 -> TRUE", "DATE(2024,1,2) <= DATE(2024,1,1) -> FALSE"])
gt = _comparison(">", operator.gt, _text_cmp(operator.gt), "Greater than.",
                 ["3 > 2 -> TRUE", "TRUE > FALSE -> TRUE"])
ge = _comparison(">=", operator.ge, _text_cmp(operator.ge), "Greater than or equal.",
                 ["2 >= 3 -> FALSE", '"b" >= "B" -> TRUE'])

COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")


# ------------------------------------------------------------------------------- lazy logic


def _lazy_and(f: Any, a: Any, b: Any) -> Any:
    x = a(f)
    if x is False or type(x) is ErrorValue:
        return x
    return b(f)


def _lazy_or(f: Any, a: Any, b: Any) -> Any:
    x = a(f)
    if x is True or type(x) is ErrorValue:
        return x
    return b(f)


#: The lazy logical operators (`and`, `or`): the right side is evaluated only when needed.
_lazy_op = family(sig(BOOLEAN, BOOLEAN, returns=BOOLEAN), category="operators", lazy=True,
                  cost=Cost.const(1), can_error=False, any_decimal_scale=True,
                  total_on_floats=True, decimal_free=True)


@_lazy_op(
    "OP_AND",
    doc="Logical and, lazy left to right (`&&` also works).",
    examples=["TRUE and FALSE -> FALSE", "FALSE and 1/0 = 1 -> FALSE"],
)
def and_op(f: Any, a: Any, b: Any) -> Any:
    return _lazy_and(f, a, b)


@_lazy_op(
    "OP_OR",
    doc="Logical or, lazy left to right (`||` also works).",
    examples=["FALSE or TRUE -> TRUE", "TRUE or 1/0 = 1 -> TRUE"],
)
def or_op(f: Any, a: Any, b: Any) -> Any:
    return _lazy_or(f, a, b)


def _coalesce_check(types: list[Type], profile: str) -> tuple[list[Type], Type]:
    result = types[0]
    for i, t in enumerate(types[1:], start=1):
        joined = join(non_null(result), non_null(t)) if result.kind != "Blank" else t
        if joined is None:
            raise TypeError(i, f"?? needs the same type on both sides, got {types[0]} and {t}")
        result = joined
    nullable = types[-1].nullable
    result = optional(result) if nullable else non_null(result)
    return [optional(result) for _ in types[:-1]] + [types[-1]], result


@builtin(
    "??",
    sig(optional(NUMBER), NUMBER, returns=NUMBER),
    doc="Blank-coalescing: the left value unless it is blank, then the right one (lazy).",
    examples=["BLANK() ?? 0 -> 0", "5 ?? 0 -> 5"],
    category="operators",
    lazy=True,
    cost=Cost.const(1),
    check=_coalesce_check,
    can_error=False,
    any_decimal_scale=True,
    decimal_free=True,
)
def coalesce_op(f: Any, a: Any, b: Any) -> Any:
    x = a(f)
    return b(f) if x is None else x
