"""Date forms of calendar arithmetic: EDATE EOMONTH DATEADD, DATEDIF DAYS YEARFRAC, and the
working days NETWORKDAYS WORKDAY.

Contract: arithmetic on proleptic Gregorian ordinals as `_calendar` does it, every value that
could make an engine raise masked first; weekend codes must be literals.
"""

from __future__ import annotations

import datetime as dt
import operator
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Sequence

from sqlglot import exp

from ....values import XLError
from ....functions import _calendar as cal
from ._base import (
    DAY_US, EPOCH_ORDINAL, MAX_ORDINAL, Program, US_10000, _dates, _min, _month_ok, _refuse,
    _to_date, is_leap, literal_int, literal_key, pl, program,
)
from . import call_form
from ...call import MISSING
from .ops import Q, _cast, _lambda
from .sqlops import lateral, table_column
from .sqlfold import constant
from .parts import _fix_gap

if TYPE_CHECKING:
    from ...call import FormCall


# ------------------------------------------------------------------------ moving dates


def _add_months(o: Any, d: Any, months: Any, bad: Any) -> Program:
    """(ordinal of d + months clamped to the month's end, bad) (`_calendar.add_months`)."""
    d = yield d
    Y, M, D = o.ymd(d)
    k = yield Y * 12 + M - 1 + o.when([(~bad, months)], 0)
    bad = yield bad | ~_month_ok(k)
    ks = yield o.when([(~bad, k)], 12)
    start = yield o.month_start(ks)
    length = o.month_start(ks + 1) - start
    if o.backend == "sql":  # read twice by _min (polars: its expression is shared as it is)
        length = yield length
    return start + _min(o, D, length) - 1, bad


@call_form
@program
def f_edate(o: Any, c: FormCall, d: Any, n: Any) -> Program:
    (d,) = _dates(o, c, [d])
    n = yield n
    months, big = o.trunc(n)
    ordinal, bad = yield from _add_months(o, d, months, big)
    return _to_date(o, ordinal, bad), [(bad, "#NUM!")]


@call_form
@program
def f_eomonth(o: Any, c: FormCall, d: Any, n: Any) -> Program:
    (d,) = _dates(o, c, [d])
    d, n = (yield d), (yield n)
    months, big = o.trunc(n)
    Y, M, _ = o.ymd(d)
    k = yield Y * 12 + M - 1 + o.when([(~big, months)], 0)
    bad = yield big | ~_month_ok(k)
    ordinal = yield o.month_start(o.when([(~bad, k)], 12) + 1) - 1
    return _to_date(o, ordinal, bad), [(bad, "#NUM!")]


def _unit_code(o: Any, c: FormCall, unit: Any, table: dict[str, int], upper: bool) -> Any:
    """The code of the unit text (argument 3): decided now when it is a constant."""
    known, code = literal_key(c, 2, table, upper)
    return o.code(code) if known else o.key(unit, table, upper)


#: DATEADD's units as codes: 1-3 count months, 4-5 days, 6-8 seconds (tables below).
_UNIT_CODES = {"year": 1, "quarter": 2, "month": 3, "week": 4, "day": 5, "hour": 6,
               "minute": 7, "second": 8}
_MONTHS_PER = {1: 12, 2: 3, 3: 1}
_DAYS_PER = {4: 7, 5: 1}
_SECONDS_PER = {6: 3600, 7: 60, 8: 1}


def _unit_table() -> dict[str, int]:
    from ....functions import dates

    return {alias: _UNIT_CODES[key] for alias, key in dates._UNITS.items()}


@call_form
@program
def f_dateadd(o: Any, c: FormCall, x: Any, n: Any, unit: Any) -> Program:
    """Unknown unit #VALUE!, a clock unit on a Date #VALUE!, then the range (#NUM!). |n| >= 1e15
    is #NUM!: that many months, days or seconds leave the years 1-9999."""
    x, n = (yield x), (yield n)
    code = yield _unit_code(o, c, unit, _unit_table(), upper=False)
    unknown = yield o.when([(code >= 1, False)], True)
    ni, big = o.trunc(n)
    big = yield big
    nn = yield o.coalesce(ni, 0)  # (ni is NULL exactly where big is TRUE or n is NULL)
    is_months = yield code <= 3
    is_clock = yield code >= 6
    date = yield o.local_date(x) if c.kind(0) == "DateTime" else x
    months = nn * o.lookup(code, _MONTHS_PER, 0)
    days = nn * o.lookup(code, _DAYS_PER, 0)
    by_month, bad_month = yield from _add_months(o, date, months, big)
    by_day = yield o.ordinal(date) + days
    bad_day = big | (by_day < 1) | (by_day > MAX_ORDINAL)
    moved = yield o.when([(is_months, by_month)], by_day)
    bad_calendar = yield o.when([(is_months, bad_month)], bad_day)
    if c.kind(0) != "DateTime":
        errors = [(unknown, "#VALUE!"), (is_clock, "#VALUE!"), (bad_calendar, "#NUM!")]
        return _to_date(o, moved, unknown | is_clock | bad_calendar), errors
    # DateTime: calendar units keep the wall clock; clock units add elapsed time.
    seconds = yield nn * o.lookup(code, _SECONDS_PER, 0)
    too_far = yield big | (seconds > 3_700_000 * 86400) | (seconds < -3_700_000 * 86400)
    delta_days = yield o.when([(~(unknown | is_clock | bad_calendar), moved - o.ordinal(date))],
                              0)
    delta_us = o.when([(~(unknown | too_far) & is_clock, seconds * 1_000_000)], 0)
    if o.backend == "sql":
        instant = yield o.instant_us(x) + delta_days * DAY_US + delta_us
        out_of_range = (instant < 0) | (instant >= US_10000)
        value = o.from_instant_us(instant)
    else:
        wanted = o.wall_us(x) + delta_days * DAY_US
        calendar = _fix_gap(x.dt.offset_by(pl.format("{}d", delta_days)), wanted)
        clock = x + delta_us.cast(pl.Duration("us"))
        value = pl.when(is_clock).then(clock).otherwise(calendar)
        instant, wall = o.instant_us(value), o.wall_us(value)
        out_of_range = (instant < 0) | (instant >= US_10000) | (wall < 0) | (wall >= US_10000)
    bad = o.when([(is_clock, too_far)], bad_calendar) | out_of_range
    return value, [(unknown, "#VALUE!"), (bad, "#NUM!")]


# -------------------------------------------------------------------------- differences

_DATEDIF_CODES = {"D": 1, "Y": 2, "M": 3, "YM": 4, "MD": 5, "YD": 6}


@call_form
@program
def f_datedif(o: Any, c: FormCall, s: Any, e: Any, unit: Any) -> Program:
    s, e = _dates(o, c, [s, e])
    s, e = (yield s), (yield e)
    code = yield _unit_code(o, c, unit, _DATEDIF_CODES, upper=True)
    os_, oe = (yield o.ordinal(s)), (yield o.ordinal(e))
    fields = [*o.ymd(s), *o.ymd(e)]
    if not (o.backend == "sql" and literal_key(c, 2, _DATEDIF_CODES, True)[0]
            and all(table_column(x) or constant(x.e)[0] for x in (s, e))):
        bound = []
        for f in fields:
            bound.append((yield f))
        fields = bound
    # (SQL, a constant unit, dates that are a table's columns or literals: the unit's formula
    # reads a field two or three times, EXTRACT(DAY FROM "s") in 21 characters where a
    # binding costs 13 a read and a lateral level: written out)
    sy, sm, sd, ey, em, ed = fields
    early = yield (em < sm) | ((em == sm) & (ed < sd))  # (em, ed) < (sm, sd)
    day_short = o.when([(ed < sd, 1)], 0)
    d_ = oe - os_
    y_ = ey - sy - o.when([(early, 1)], 0)
    m_ = (ey - sy) * 12 + em - sm - day_short
    ym = (em - sm - day_short + 12) % 12
    # MD: the length of the month before e's month (December of year 0 has 31 days)
    k_e = yield ey * 12 + em - 1
    prev_len = o.when([(k_e >= 13, o.month_start(k_e) - o.month_start(o.when([(k_e >= 13,
                                                                                 k_e - 1)],
                                                                               12)))], 31)
    md = o.when([(ed >= sd, ed - sd)], prev_len + ed - sd)
    # YD: from s's month and day in e's year (Feb 29 rolls to Mar 1), or dropping the whole
    # calendar years between the two
    anchor = o.ord_ymd(ey, sm, 1) + sd - 1
    between = o.ord_ymd(ey, 1, 1) - o.ord_ymd(o.when([(sy < ey, sy + 1)], ey), 1, 1)
    yd = o.when([(~early, oe - anchor)], oe - os_ - between)
    value = o.lookup(code, {1: d_, 2: y_, 3: m_, 4: ym, 5: md, 6: yd})  # (NULL: unknown)
    reversed_ = os_ > oe
    if o.backend == "sql":  # NULL where the dates are reversed (``null_on_error``); the
        reversed_ = s > e  # dates compare as dates (a literal one stays a literal)
        value = o.when([(reversed_, None)], value)
    unknown = o.when([(code >= 1, False)], True)
    return o.number(value), [(reversed_, "#NUM!"), (unknown, "#NUM!")]


@call_form
def f_days(o: Any, c: FormCall, e: Any, s: Any) -> Any:
    e, s = _dates(o, c, [e, s])
    return o.number(o.ordinal(e) - o.ordinal(s))


def _earlier(a: Any, b: Any) -> Any:
    """SQL: the earlier of two dates (LEAST; a NULL date only on a row that errs)."""
    return Q(exp.Least(this=Q(a).e, expressions=[Q(b).e], ignore_nulls=True))


def _later(a: Any, b: Any) -> Any:
    return Q(exp.Greatest(this=Q(a).e, expressions=[Q(b).e], ignore_nulls=True))


def _days360_us(o: Any, Y1: Any, M1: Any, D1: Any, Y2: Any, M2: Any, D2: Any) -> Program:
    feb1 = yield (M1 == 2) & (D1 == o.when([(o.leap(Y1), 29)], 28))
    feb2 = yield (M2 == 2) & (D2 == o.when([(o.leap(Y2), 29)], 28))
    d1 = o.when([((D1 == 31) & (D2 == 31), 30), (D1 == 31, 30), ((D1 == 30) & (D2 == 31), D1),
                 (feb1 & feb2, 30), (feb1, 30)], D1)
    d2 = o.when([((D1 == 31) & (D2 == 31), 30), (D1 == 31, D2), ((D1 == 30) & (D2 == 31), 30),
                 (feb1 & feb2, 30)], D2)
    return (Y2 - Y1) * 360 + (M2 - M1) * 30 + d2 - d1


@call_form
@program
def f_yearfrac(o: Any, c: FormCall, s: Any, e: Any, basis: Any) -> Program:
    s, e = _dates(o, c, [s, e])
    s, e = (yield s), (yield e)
    known, whole, too_large = literal_int(c, 2)
    if known and whole in range(5):  # a constant basis decides the formula now
        b, bad = o.code(whole), o.lit(False)
    else:
        basis = yield basis
        b, big = o.trunc(basis)
        b = yield b
        bad = big | o.not_in(b, range(5))
    if o.backend == "sql":  # the earlier and the later date (NULL only where an argument
        lo, hi = _earlier(s, e), _later(s, e)  # errs: that row's value is not read)
    else:
        swap = yield o.ordinal(s) > o.ordinal(e)
        lo, hi = o.when([(swap, e)], s), o.when([(swap, s)], e)
    lo, hi = (yield lo), (yield hi)
    Y1, M1, D1 = (yield o.ymd(lo)[0]), (yield o.ymd(lo)[1]), (yield o.ymd(lo)[2])
    Y2, M2, D2 = (yield o.ymd(hi)[0]), (yield o.ymd(hi)[1]), (yield o.ymd(hi)[2])
    days = yield o.ordinal(hi) - o.ordinal(lo)  # (SQL: the engine's DATE_DIFF)
    d360 = (yield from _days360_us(o, Y1, M1, D1, Y2, M2, D2)) if not known or whole == 0 \
        else None  # (only basis 0 reads it)
    d360_eu = (Y2 - Y1) * 360 + (M2 - M1) * 30 + _min(o, D2, 30) - _min(o, D1, 30)
    # basis 1, actual/actual (`_calendar.actual_year_length`): days * years / the days of the
    # years touched, where one calendar year's span is its length (365 or 366, 1 year) as the
    # scalar's one-year case within a year; a year across two calendar years (Y1 + 1 = Y2,
    # (M1, D1) >= (M2, D2): hi at most a calendar year after lo, February 29 moving to
    # February 28 as hi cannot be February 29 there) is 365 or 366 days over 1 year, written
    # as 730 or 732 over the 2 the numerator counts (the same quotient, so the same correctly
    # rounded value). There lo is before March 1 of Y2, so a February 29 lies in [lo, hi] when
    # Y1 is leap and lo is in January or February, or Y2 is leap and hi from February 29 on.
    across = (Y1 < Y2) & (hi <= o.year_later(lo))
    feb29 = (o.leap(Y1) & (M1 <= 2)) | (o.leap(Y2) & (M2 >= 3)) | ((M2 == 2) & (D2 == 29))
    span = o.ord_ymd(Y2 + 1, 1, 1) - o.ord_ymd(Y1, 1, 1)
    num = o.lookup(b, {0: d360, 4: d360_eu, 1: days * (Y2 - Y1 + 1)}, days)
    den = o.lookup(b, {0: 360, 2: 360, 3: 365, 4: 360,
                       1: o.when([(across, o.when([(feb29, 732)], 730))], span)})
    # (NULL for a bad basis)
    return o.bind(o.ratio(num, den)), [(bad, "#NUM!")]


# ------------------------------------------------------------------------- working days


def _static_mask(o: Any, function: str, value: Any, allow_all: bool
                 ) -> tuple[tuple[bool, ...] | None, str | None]:
    """(mask, error code) of a constant weekend argument (``call.const``)."""
    if value is MISSING or value is None or isinstance(value, tuple):
        raise _refuse(o.backend, function, "the weekend must be a literal code or text (its "
                      "mask shapes the expression)")
    if isinstance(value, float):
        value = Decimal(repr(value))
    try:
        return cal.weekend_mask(value, allow_all=allow_all), None
    except XLError as error:
        return None, error.code


class _Week:
    """Working-day arithmetic for one static weekend mask (Monday first, True = weekend)."""

    def __init__(self, o: Any, mask: tuple[bool, ...]) -> None:
        self.o = o
        self.mask = mask
        self.per_week = mask.count(False)
        self.prefix = [sum(1 for j in range(r) if not mask[j]) for r in range(8)]
        self.work = [j for j in range(7) if not mask[j]]
        self.position = {k + 1: j + 1 for k, j in enumerate(self.work)}

    # (arguments are bound values or list elements: they are read several times)
    def count_to(self, x: Any) -> Any:
        """W(x): working days among ordinals 1..x (x >= 0; ordinal 1 is a Monday)."""
        partial = self.o.pick(x % 7, {j: self.prefix[j] for j in range(1, 7)}, 0)
        return (x // 7) * self.per_week + partial

    def count_between(self, before: Any, last: Any) -> Any:
        """W(last) - W(before): the working days among ordinals before+1..last, the whole
        weeks counted once ((last // 7 - before // 7) * per week)."""
        o = self.o
        partial = {j: self.prefix[j] for j in range(1, 7)}
        return (last // 7 - before // 7) * self.per_week + o.pick(last % 7, partial, 0) \
            - o.pick(before % 7, partial, 0)

    def nth(self, c: Any) -> Any:
        """The ordinal of the c-th working day from ordinal 1 (c >= 1)."""
        c = c - 1
        rem = c % self.per_week + 1
        day = self.o.pick(rem, self.position, 0)
        return (c // self.per_week) * 7 + day

    def is_workday(self, ordinal: Any) -> Any:
        day = (ordinal - 1) % 7  # (0 to 6: ordinals are positive)
        if self.o.backend == "sql" and self.work == list(range(len(self.work))):
            return day < len(self.work)  # Monday to the last working day: one comparison
        return self.o.one_of(day, self.work)


def _literal_holidays(week: _Week, items: Any) -> list[int] | None:
    """The distinct working-day holidays of a constant list (``call.const``) as sorted
    ordinals (blanks skipped); None when the list is not a constant."""
    if not isinstance(items, tuple) or not all(i is None or type(i) is dt.date for i in items):
        return None
    ordinals = {i.toordinal() for i in items if i is not None}
    return sorted(x for x in ordinals if not week.mask[(x - 1) % 7])


def _holiday_ordinals(o: Any, week: _Week, holidays: Any, literal: list[int] | None) -> Any:
    """The distinct working-day holidays as sorted ordinals (blanks skipped)."""
    if o.backend == "polars":
        e = pl.element().cast(pl.Int32).cast(pl.Int64) + EPOCH_ORDINAL
        keep = e.is_not_null() & _Week(o, week.mask).is_workday(e)
        return holidays.list.eval(e.filter(keep).unique().sort())
    if literal is not None:
        return _int_list(literal)
    x, y = exp.to_identifier("_h"), exp.to_identifier("_w")
    mapped = exp.Anonymous(this="LIST_TRANSFORM", expressions=[
        Q(holidays).e, _lambda(o.ordinal(Q(exp.column(x))), x)])
    kept = exp.Anonymous(this="LIST_FILTER", expressions=[
        mapped, _lambda(_Week(o, week.mask).is_workday(Q(exp.column(y))), y)])
    return Q(exp.Anonymous(this="LIST_SORT", expressions=[
        exp.Anonymous(this="LIST_DISTINCT", expressions=[kept])]))


def _int_list(values: Sequence[int]) -> Any:
    return Q(exp.Array(expressions=[Q(v).e for v in values]))


def _count_where(o: Any, items: Any, bound: Any, op: str) -> Any:
    """How many items compare ``op`` with the row's bound (``>=``, ``<=``, ``>``)."""
    if o.backend == "polars":
        e = pl.element()
        test = {">=": e >= 0, "<=": e <= 0, ">": e > 0}[op]
        return (items - bound).list.eval(test.cast(pl.Int64)).list.sum()
    known, values = constant(Q(items).e)
    if known and values is not None:
        b_known, b = constant(Q(bound).e)
        if not values or (b_known and b is not None):
            compare = {">=": operator.ge, "<=": operator.le, ">": operator.gt}[op]
            return Q(sum(1 for v in values if v is not None and compare(v, b)))
    x = exp.to_identifier("_c")
    xe = Q(exp.column(x))
    test = {">=": xe >= bound, "<=": xe <= bound, ">": xe > bound}[op]
    kept = exp.Anonymous(this="LIST_FILTER", expressions=[Q(items).e, _lambda(test, x)])
    return _cast(Q(exp.ArraySize(this=kept)), "BIGINT")


def _weekend_args(o: Any, c: FormCall, function: str, rest: Sequence[Any], allow_all: bool
                  ) -> tuple[tuple[bool, ...] | None, str | None, Any, Any]:
    """(weekend mask, its error code, the holidays, the holidays' constant) of the arguments
    after the first two: (holidays) or (weekend, holidays)."""
    if len(rest) == 1:  # NETWORKDAYS / WORKDAY: Saturday and Sunday
        return cal.weekend_mask(1, allow_all=False), None, rest[0], c.const(2)
    mask, code = _static_mask(o, function, c.const(2), allow_all=allow_all)
    return mask, code, rest[1], c.const(3)


@call_form
@program
def f_networkdays(o: Any, c: FormCall, a: Any, b: Any, *rest: Any) -> Program:
    """NETWORKDAYS(start, end, holidays) / NETWORKDAYS.INTL(start, end, weekend, holidays):
    W(hi) - W(lo - 1) minus the distinct working-day holidays in [lo, hi], signed."""
    mask, code, holidays, listed = _weekend_args(o, c, "NETWORKDAYS.INTL", rest,
                                                 allow_all=True)
    if code is not None or mask is None:
        return o.number(o.lit(0 if o.backend == "polars" else None)), [(o.true(), code)]
    if all(mask):
        return o.number(o.ordinal(a) * 0), []
    week = _Week(o, mask)
    if o.backend == "sql":
        return (yield from _networkdays_sql(o, week, a, b, holidays,
                                            _literal_holidays(week, listed)))
    oa, ob = (yield o.ordinal(a)), (yield o.ordinal(b))
    lo, hi = (yield _min(o, oa, ob)), (yield o.when([(oa < ob, ob)], oa))
    count = week.count_to(hi) - week.count_to(lo - 1)
    literal = _literal_holidays(week, listed)
    if literal != []:  # (no working-day holiday in a constant list: nothing to subtract)
        hols = yield _holiday_ordinals(o, week, holidays, literal)
        count = count - (_count_where(o, hols, lo, ">=") - _count_where(o, hols, hi, ">"))
    count = yield count
    return o.number(o.when([(oa <= ob, count)], o.lit(0) - count)), []


def _dated(q: Any) -> bool:
    """Whether the SQL value ``q`` is a literal date (a constant NULL is not: the argument
    always errs, NETWORKDAYS(d, INDEX([DATE(2000, 1, 1)], 0)) compiled to a TypeError)."""
    known, value = constant(q.e)
    return known and value is not None


def _networkdays_sql(o: Any, week: _Week, a: Any, b: Any, holidays: Any,
                     literal: list[int] | None) -> Program:
    """`f_networkdays` in SQL: the dates ordered as dates (one ordinal each, of the earlier
    and the later), and a column of holidays counted in one pass (the distinct working days
    among them within [lo, hi]: no ordinal list sorted and searched twice)."""
    a, b = (yield a), (yield b)  # (each read three times: bound unless a column)
    first, last = _earlier(a, b), _later(a, b)  # (as dates: the holidays' range)
    pivot: int | None = None  # the one literal date's ordinal (shifted as the others)
    other: Any = None  # the other date's ordinal, read per row
    shift = 0  # ordinals are read modulo 7 and subtracted: any shift by whole weeks serves
    if constant(a.e)[0] and constant(b.e)[0]:  # literal dates: their ordinals are numbers
        a, b = (yield o.ordinal(a)), (yield o.ordinal(b))
        early = a <= b
        before = yield o.when([(early, a)], b) - 1
        hi = yield o.when([(early, b)], a)
    elif _dated(a) or _dated(b):  # one literal: one ordinal read per row
        # (counted from 0001-01-07, a Sunday: DATE_DIFF with no + 1)
        shift = -7
        first_known = _dated(a)
        pivot = constant(o.ordinal(a if first_known else b).e)[1] + shift
        a, b = (yield o.ordinal(a) + shift), (yield o.ordinal(b) + shift)
        other = b if first_known else a
        early = a <= b
        # (each read twice, small: written out, not bound)
        before, hi = _earlier(a, b) - 1, _later(a, b)
    else:  # (a NULL date only on a row whose argument errs: its value is not read)
        early = a <= b
        before = yield o.ordinal(_earlier(a, b)) - 1
        hi = yield o.ordinal(_later(a, b))
    count = week.count_between(before, hi)
    if literal is None:  # the distinct working-day holidays from the first date to the last
        h = exp.to_identifier("_h")
        he = Q(exp.column(h))
        inside = Q(exp.Between(this=he.e, low=Q(first).e, high=Q(last).e))
        kept = exp.Anonymous(this="LIST_FILTER", expressions=[
            Q(holidays).e, _lambda(inside & week.is_workday(o.ordinal(he)), h)])
        # (DuckDB's count of the distinct non-NULL items, a UBIGINT: cast to subtract)
        distinct = exp.Anonymous(this="LIST_UNIQUE", expressions=[kept])
        count = count - _cast(Q(distinct), "BIGINT")
    elif literal:  # distinct working days already: those in (before, hi], one pass
        x = exp.to_identifier("_c")
        xe = Q(exp.column(x))
        inside = (xe > before) & (xe <= hi)
        if len(literal) == 1:
            day = literal[0] + shift
            inside = (Q(day) > before) & (Q(day) <= hi)
            if pivot is not None:  # between the literal date and the other one
                inside = other <= day if day < pivot else other >= day if day > pivot \
                    else Q(True)
            count = count - _cast(inside, "INT")  # (NULL only where the count is NULL)
        else:
            kept = exp.Anonymous(this="LIST_FILTER", expressions=[
                _int_list([h + shift for h in literal]).e, _lambda(inside, x)])
            count = count - _cast(Q(exp.ArraySize(this=kept)), "BIGINT")
    # signed by the dates' order: with a binder, the count read once (no lateral level of its
    # own), times 1 or -1; in a lambda body (no binder) bound as a list-lambda parameter and
    # negated where the dates are reversed, as tests/columnar/test_sql_dates_fold.py pins
    known, first_early = constant(Q(early).e)
    if known and first_early is not None:
        return o.number(count if first_early else Q(exp.Neg(this=Q(count).e))), []
    if lateral():
        return o.number(count * o.when([(early, 1)], -1)), []
    count = yield count
    return o.number(o.when([(early, count)], Q(exp.Neg(this=Q(count).e)))), []


@call_form
@program
def f_workday(o: Any, c: FormCall, start: Any, n: Any, *rest: Any) -> Program:
    """WORKDAY(start, days, holidays) / WORKDAY.INTL(start, days, weekend, holidays).

    With W(x) the working days among ordinals 1..x and h_0 < h_1 < ... the working-day
    holidays after start, the scalar's loop consumes holiday i exactly when W(h_i) - i <=
    W(start) + n (a prefix of the list); the answer is the (W(start) + n + consumed)-th working
    day. Backwards, with the holidays before start in descending order, holiday i is consumed
    when W(h_i) + i >= W(start - 1) + n + 1. |days| >= 1e15 is #NUM! (beyond the years)."""
    mask, code, holidays, listed = _weekend_args(o, c, "WORKDAY.INTL", rest, allow_all=False)
    if code is not None or mask is None:
        return o.date(o.lit(None)), [(o.true(), code)]
    week = _Week(o, mask)
    n = yield n
    ni, big = o.trunc(n)
    big = yield big
    nn = yield o.coalesce(ni, 0)  # (ni is NULL exactly where big is TRUE or n is NULL)
    s = yield o.ordinal(start)
    forward = yield week.count_to(s) + nn
    backward = yield week.count_to(s - 1) + nn + 1
    literal = _literal_holidays(week, listed)
    start_day = c.const(0)
    if literal == []:  # no working-day holiday: nothing is consumed
        c_fwd, c_back = forward, backward
    else:
        hols = yield _holiday_ordinals(o, week, holidays, literal)
        if o.backend == "polars":
            e = pl.element()
            rank = pl.int_range(pl.len(), dtype=pl.Int64)
            after = (hols - s).list.eval(e.filter(e > 0)) + s
            before = (hols - s).list.eval(e.filter(e < 0).sort(descending=True)) + s
            w_e = _Week(o, mask).count_to(e)
            fwd_keys = after.list.eval(w_e - rank)
            back_keys = before.list.eval(w_e + rank)
        elif literal is not None and type(start_day) is dt.date:
            # constant holidays and start: the keys now (`_Week.count_to` folds)
            h_list, s_value = literal, start_day.toordinal()
            w = _Week(o, mask)
            after_, before_ = [h for h in h_list if h > s_value], \
                [h for h in reversed(h_list) if h < s_value]
            fwd_keys = _int_list([constant((w.count_to(Q(h)) - r).e)[1]
                                  for r, h in enumerate(after_)])
            back_keys = _int_list([constant((w.count_to(Q(h)) + r).e)[1]
                                   for r, h in enumerate(before_)])
        else:
            x, i = exp.to_identifier("_x"), exp.to_identifier("_i")
            xe = Q(exp.column(x))
            w_x = _Week(o, mask).count_to(xe)
            rank = Q(exp.column(i)) - 1
            after = exp.Anonymous(this="LIST_FILTER", expressions=[hols.e, _lambda(xe > s, x)])
            before = exp.Anonymous(this="LIST_REVERSE", expressions=[exp.Anonymous(
                this="LIST_FILTER", expressions=[hols.e, _lambda(xe < s, x)])])
            fwd_keys = Q(exp.Anonymous(this="LIST_TRANSFORM", expressions=[
                after, _lambda(w_x - rank, x, i)]))
            back_keys = Q(exp.Anonymous(this="LIST_TRANSFORM", expressions=[
                before, _lambda(w_x + rank, x, i)]))
        c_fwd = forward + _count_where(o, fwd_keys, forward, "<=")
        c_back = backward - _count_where(o, back_keys, backward, ">=")
    count = yield o.when([(nn > 0, c_fwd)], c_back)
    bad_c = yield (nn != 0) & (count < 1)
    # the count where it is good (SQL: at least 1, as GREATEST: where it is not, the result
    # is not read; a NULL count only on a row whose argument errs)
    good = _later(count, 1) if o.backend == "sql" else o.when([(~bad_c, count)], 1)
    result = yield o.when([(nn == 0, s)], week.nth(good))
    bad = yield big | bad_c | (result > MAX_ORDINAL) | (result < 1)
    return _to_date(o, result, bad), [(bad, "#NUM!")]


