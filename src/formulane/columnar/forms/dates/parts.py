"""Date forms that build dates or read their parts: DATE TIME DATETIME, YEAR MONTH DAY HOUR
MINUTE SECOND, WEEKDAY WEEKNUM ISOWEEKNUM, TZCONVERT, SERIAL and FROMSERIAL.

Contract: the scalar's errors in the scalar's order (`_calendar`); DateTime fields are read in
the value's zone (polars: the column's own zone; SQL: UTC only).
"""

from __future__ import annotations

import bisect
import datetime as dt
from typing import TYPE_CHECKING, Any, Callable

from sqlglot import exp

from ....errors import Unsupported
from ....values import XLError
from ....functions import _calendar as cal
from ._base import (
    DAY_US, EXCEL_MIN_ORDINAL, MARCH_1900, MAX_ORDINAL, Program, US_0001, US_10000, _dates,
    _month_ok, _refuse, _to_date, literal_int, pl, program,
)
from . import call_form
from .ops import PolarsOps, _cast
from .sqlfold import constant
from .sqlops import Q, table_column, unbound

if TYPE_CHECKING:
    from ...call import FormCall


# ------------------------------------------------------------------------------------ DATE


def _date_body(o: Any, y: Any, m: Any, d: Any) -> Program:
    """make_date: years 0-1899 offset by 1900; months then days roll over; the result must be
    1899-12-31..9999-12-31. |month| >= 1e15 leaves the years 1-9999, |day| >= 1e15 the date
    range: #NUM! in the scalar too. Returns (ordinal, bad)."""
    y, m, d = (yield y), (yield m), (yield d)
    yi, by = o.trunc(y)
    mi, bm = o.trunc(m)
    di, bd = o.trunc(d)
    yi = yield yi
    bad = yield by | bm | bd | (yi < 0) | (yi >= 10000)
    k = yield o.when([(yi < 1900, yi + 1900)], yi) * 12 + mi - 1
    bad = yield bad | ~_month_ok(k)
    ordinal = yield o.month_start(o.when([(~bad, k)], 12)) + o.when([(~bad, di)], 1) - 1
    bad = yield bad | (ordinal < EXCEL_MIN_ORDINAL) | (ordinal > MAX_ORDINAL)
    return ordinal, bad


def _date_sql(o: Any, c: FormCall, y: Any, m: Any, d: Any) -> Program:
    """`_date_body` in fewer SQL steps, the same answers: the year is range-tested before it
    is truncated (years 0-9999 are all that pass: no 1e15 guard, no bound year); the month
    index masked by its range makes the month's first day, the day is added as a number (an
    int64 within 1e15 of it cannot overflow); the day count (from 1899-12-31) is NULL wherever
    an argument is out of range, so its range test says #NUM! for NULL too, and the date is
    made only inside that range (NULL wherever the error is set). Only for arguments that are
    never blank (a blank gives a blank and no error in `_date_body`)."""
    one = _date_one_unknown(o, c, y, m, d)
    if one is not None:
        return one
    y = yield y  # (read four times: bound unless it is a column or a literal)
    mi, _ = o.trunc(m)
    di, _ = o.trunc(d)
    whole = o.trunc(y)[0] if constant(y.e)[0] else _cast(Q(exp.Trunc(this=y.e)), "BIGINT")
    year = o.when([((y > -1) & (y < 10000), whole + o.when([(y < 1900, 1900)], 0))])
    # months from 0001-01 (the month index less 12: valid from year 1 to 9999)
    k = yield year * 12 + mi - 13
    start = _cast(Q(exp.DateAdd(this=Q(dt.date(1, 1, 1)).e, expression=k.e,
                                unit=exp.var("MONTH"))), "DATE")
    # the days after 1899-12-31 (the serial before Excel's phantom day; the day before the
    # month's first plus TRUNC(d): one DATE_DIFF from 1900-01-01), NULL outside the month
    # range; the date made only inside its own range, so the date is NULL exactly where the
    # error is set (its test written once in each)
    serial = yield o.when([(o.within(k, 0, 9999 * 12 - 1),
                            o.ordinal(start) - 1 - EXCEL_MIN_ORDINAL + di)])
    top = MAX_ORDINAL - EXCEL_MIN_ORDINAL
    days = o.when([(o.within(serial, 0, top), serial)])
    moved = exp.DateAdd(this=Q(dt.date.fromordinal(EXCEL_MIN_ORDINAL)).e, expression=days.e,
                        unit=exp.var("DAY"))
    return _cast(Q(moved), "DATE"), [(~o.within(serial, 0, top, False), "#NUM!")]


def _whole_at_least(x: Any, lo: int) -> Any:
    """``TRUNC(x) >= lo`` written on ``x`` itself (truncation is toward zero)."""
    return x > lo - 1 if lo <= 0 else x >= lo


def _whole_at_most(x: Any, hi: int) -> Any:
    """``TRUNC(x) <= hi`` written on ``x`` itself."""
    return x < hi + 1 if hi >= 0 else x <= hi


def _month_start(k: int) -> dt.date:
    return dt.date(k // 12, k % 12 + 1, 1)


def _date_year_unknown(o: Any, y: Any, mi: int | None, di: int | None) -> Any:
    """DATE(y, month, day) with a constant month and day: the year Y = TRUNC(y) (+ 1900 below
    1900) runs over 1900..9999 and the date grows with Y, so the valid Y are one range; where
    it holds from 1900 to past 3799 the valid y are one range too (-1 < y < last + 1), tested
    on y itself. The date: that month of 1900, plus (Y - 1900) * 12 months, plus the days."""
    if mi is None or di is None:
        return None
    days = di - 1

    def ordinal(year: int) -> int:
        k = year * 12 + mi - 1
        if not 12 <= k <= 9999 * 12 + 11:
            return 0 if k < 12 else MAX_ORDINAL + 1
        return _month_start(k).toordinal() + days

    years = range(1900, 10000)
    first = years[0] + bisect.bisect_left(years, EXCEL_MIN_ORDINAL, key=ordinal)
    last = years[0] + bisect.bisect_right(years, MAX_ORDINAL, key=ordinal) - 1
    if first != 1900 or last < 3799 or 1900 * 12 + mi - 1 < 12:
        return None  # (two ranges of y, or none: the general form)
    y = unbound(y)  # (read four times)
    ok = (y > -1) & _whole_at_most(y, last)
    whole = _cast(Q(exp.Trunc(this=y.e)), "INT")  # (Spark adds days and months of an INT only)
    offset = o.when([(ok, (whole - o.when([(y < 1900, 0)], 1900)) * 12)])
    moved = _cast(Q(exp.DateAdd(this=Q(_month_start(1900 * 12 + mi - 1)).e,
                                expression=offset.e, unit=exp.var("MONTH"))), "DATE")
    if days:
        moved = _cast(Q(exp.DateAdd(this=moved.e, expression=Q(days).e,
                                    unit=exp.var("DAY"))), "DATE")
    return moved, [(~ok, "#NUM!")]


def _date_one_unknown(o: Any, c: FormCall, y: Any, m: Any, d: Any) -> Any:
    """DATE with a constant year and month (the day a column) or a constant year and day
    (the month a column), else None. The ordinal then grows with the one unknown's whole
    number, so the scalar's tests (year, month index, final range) are one range of it,
    found now and written on the argument itself; the date is a literal day plus that many
    days, or a literal month's first day plus that many months (then the constant days)."""
    ky, yi, y_big = literal_int(c, 0)
    km, mi, m_big = literal_int(c, 1)
    kd, di, d_big = literal_int(c, 2)
    if not ky and km and kd:
        return _date_year_unknown(o, y, mi, di) if not (m_big or d_big) else None
    if not ky or km == kd:
        return None
    never = o.date(o.lit(None)), [(o.true(), "#NUM!")]
    if y_big or (km and m_big) or (kd and d_big):
        return never
    if yi is None or not 0 <= yi <= 9999:
        return None if yi is None else never
    year = yi + 1900 if yi < 1900 else yi
    m, d = unbound(m), unbound(d)  # (each read three times)
    if mi is not None:  # the day is the column: ordinal = start + TRUNC(d) (start: day 0)
        k = year * 12 + mi - 1
        if not 12 <= k <= 9999 * 12 + 11:
            return never
        start = _month_start(k).toordinal() - 1
        lo, hi = EXCEL_MIN_ORDINAL - start, MAX_ORDINAL - start
        ok = _whole_at_least(d, lo) & _whole_at_most(d, hi)
        whole = _cast(Q(exp.Trunc(this=d.e)), "INT")  # (|d| < 4e6 where read; Spark: INT days)
        return o.masked_date(start + whole, ~ok), [(~ok, "#NUM!")]
    # the month is the column: month index k = year * 12 + TRUNC(m) - 1, the date its first
    # day plus di - 1 days; both tests grow with k: the valid k are one range
    if di is None:
        return None
    days = di - 1

    def ordinal(k: int) -> int:
        return _month_start(k).toordinal() + days

    indexes = range(12, 9999 * 12 + 12)
    first = indexes[0] + bisect.bisect_left(indexes, EXCEL_MIN_ORDINAL, key=ordinal)
    last = indexes[0] + bisect.bisect_right(indexes, MAX_ORDINAL, key=ordinal) - 1
    if first > last:
        return never
    base = year * 12 - 1  # month index of TRUNC(m) = 0
    ok = _whole_at_least(m, first - base) & _whole_at_most(m, last - base)
    months = o.when([(ok, _cast(Q(exp.Trunc(this=m.e)), "INT"))])
    moved = _cast(Q(exp.DateAdd(this=Q(_month_start(base)).e, expression=months.e,
                                unit=exp.var("MONTH"))), "DATE")  # (year >= 1900: base too)
    if days:
        moved = _cast(Q(exp.DateAdd(this=moved.e, expression=Q(days).e,
                                    unit=exp.var("DAY"))), "DATE")
    return moved, [(~ok, "#NUM!")]


@call_form
@program
def f_date(o: Any, c: FormCall, y: Any, m: Any, d: Any) -> Program:
    if o.backend == "sql" and not any(c.nullable(i) for i in range(3)):
        return (yield from _date_sql(o, c, y, m, d))
    ordinal, bad = yield from _date_body(o, y, m, d)
    return _to_date(o, ordinal, bad), [(bad, "#NUM!")]


@call_form
@program
def f_time(o: Any, c: FormCall, h: Any, m: Any, s: Any) -> Program:
    """Each argument at most 32767, the total not negative; wrapped to under 24 hours.
    |x| >= 1e15 is #NUM! either way (too large, or a negative total)."""
    if o.backend == "sql" and not any(c.nullable(i) for i in range(3)):
        one = _time_one_unknown(o, c, (h, m, s))
        if one is not None:
            return one
    h, m, s = (yield h), (yield m), (yield s)
    hi, bh = o.trunc(h)
    mi, bm = o.trunc(m)
    si, bs = o.trunc(s)
    hi, mi, si = (yield hi), (yield mi), (yield si)
    total = yield hi * 3600 + mi * 60 + si
    bad = yield bh | bm | bs | (hi > 32767) | (mi > 32767) | (si > 32767) | (total < 0)
    seconds = o.when([(~bad, total)]) % 86400  # (NULL where bad: ``null_on_error``)
    return o.make_duration(seconds * 1_000_000), [(bad, "#NUM!")]


def _time_one_unknown(o: Any, c: FormCall, args: tuple[Any, Any, Any]) -> Any:
    """TIME with two constant arguments: the total is ``TRUNC(x) * unit + rest``, so the
    scalar's tests (each at most 32767, the total not negative) are one range of the unknown
    ``x``, found now and written on ``x`` itself; the seconds are read only inside it (|x| <
    32768: no 1e15 guard)."""
    known = [literal_int(c, i) for i in range(3)]
    unknown = [i for i, (k, _, _) in enumerate(known) if not k]
    if len(unknown) != 1:
        return None
    (i,) = unknown
    if any(big or whole is None for j, (_, whole, big) in enumerate(known) if j != i):
        return None  # (a blank or huge constant: the general form)
    units = (3600, 60, 1)
    wholes = [whole for _, whole, _ in known]
    if any(w is not None and w > 32767 for w in wholes):
        return o.make_duration(o.lit(None)), [(o.true(), "#NUM!")]
    rest = sum(units[j] * (wholes[j] or 0) for j in range(3) if j != i)
    lo = -(rest // units[i])  # the least whole x with x * unit + rest >= 0
    if lo > 32767:
        return o.make_duration(o.lit(None)), [(o.true(), "#NUM!")]
    x = unbound(args[i])  # (read three times)
    ok = _whole_at_least(x, lo) & _whole_at_most(x, 32767)
    whole = _cast(Q(exp.Trunc(this=x.e)), "BIGINT")
    seconds = o.when([(ok, whole * units[i] + rest)]) % 86400
    return o.make_duration(seconds * 1_000_000), [(~ok, "#NUM!")]


def _zone(o: Any, function: str, text: Any) -> dt.tzinfo | None:
    """The zone of a constant time-zone argument (``call.const``; None when the text names
    no zone: #VALUE!)."""
    if not isinstance(text, str):
        raise _refuse(o.backend, function, "the time zone must be a literal text (a column "
                      "holds one zone per column, not one per value)")
    try:
        return cal.zone(text)
    except XLError:
        return None


def _polars_zone_key(function: str, tz: dt.tzinfo) -> str:
    if tz is dt.timezone.utc:
        return "UTC"
    if isinstance(tz, dt.timezone):
        offset = tz.utcoffset(None)
        seconds = int(offset.total_seconds())
        if seconds % 3600:
            raise _refuse("polars", function, "polars has no zone for an offset that is not a "
                          "whole number of hours")
        hours = seconds // 3600
        return "UTC" if not hours else "Etc/GMT" + ("-" if hours > 0 else "+") + str(abs(hours))
    return str(getattr(tz, "key"))


def polars_zone(text: Any) -> str | None:
    """The polars zone of a DateTime that a constant time-zone text gives (DATETIME's,
    TZCONVERT's), None when the text names none polars holds (the form answers #VALUE! or
    refuses)."""
    try:
        tz = cal.zone(text) if isinstance(text, str) else None
        return None if tz is None else _polars_zone_key("", tz)
    except (XLError, Unsupported):
        return None


def _localize_polars(naive_us: Any, key: str) -> Any:
    """A wall-clock time (microseconds from 0001-01-01) in zone ``key``: an ambiguous time takes
    its first occurrence, a time in a gap moves forward by the gap (`_calendar.localize`)."""
    naive = (naive_us - US_0001).cast(pl.Datetime("us"))
    direct = naive.dt.replace_time_zone(key, ambiguous="earliest", non_existent="null")
    # In a gap: from the same wall time a day earlier, one wall-clock day on (polars puts a
    # time in a gap at the later offset), then fixed as `_fix_gap` does.
    day_before = (naive - pl.duration(days=1)).dt.replace_time_zone(
        key, ambiguous="earliest", non_existent="null").dt.offset_by("1d")
    return pl.coalesce(direct, _fix_gap(day_before, naive_us))


def _fix_gap(value: Any, wanted_wall_us: Any) -> Any:
    """``value`` from polars' offset_by: a wall time that fell in a DST gap was put at the
    offset after the gap, the scalar engine (Python's fold=0) reads it at the offset before:
    the instant moves on by the gap, i.e. by the wall time that was missed."""
    missed = wanted_wall_us - PolarsOps().wall_us(value)
    return value + missed.cast(pl.Duration("us"))


@call_form
@program
def f_datetime(o: Any, c: FormCall, y: Any, mo: Any, d: Any, h: Any, mi: Any, s: Any,
               zone: Any) -> Program:
    """The zone first (#VALUE!), then DATE's rules for the day (#NUM!), then the clock fields
    carried into days; the time must stay within the years 1-9999 in UTC and in the zone."""
    tz = _zone(o, "DATETIME", c.const(6))
    if tz is None:
        null = pl.lit(None, dtype=pl.Datetime("us", "UTC")) if o.backend == "polars" \
            else _cast(None, "TIMESTAMPTZ")
        return null, [(o.true(), "#VALUE!")]
    if o.backend == "sql" and tz.utcoffset(None) != dt.timedelta(0):
        raise _refuse("sql", "DATETIME", "a SQL TIMESTAMPTZ is read at UTC; a DateTime in "
                      "another zone has no SQL form")
    key = _polars_zone_key("DATETIME", tz) if o.backend == "polars" else "UTC"
    day0, bad0 = yield from _date_body(o, y, mo, d)
    h, mi, s = (yield h), (yield mi), (yield s)
    hi, bh = o.trunc(h)
    mi_, bm = o.trunc(mi)
    su, bs = yield from o.exact_micros(s)
    # The scalar: max(|h|, |m|, |s|) > 1e12 is #NUM!; below that, a total beyond 1e12 seconds
    # moves the date more than 11 million days, outside the years 1-9999 (#NUM! as well).
    secs = yield hi * 3600 + mi_ * 60
    bad = yield bad0 | bh | bm | bs | ~(secs <= 10**12) | ~(secs >= -10**12)
    shift = 25_000_000  # days: keeps the division's operand non-negative
    micros = yield o.when([(~bad, secs * 1_000_000 + su)], 0) + shift * DAY_US
    day1 = yield day0 + micros // DAY_US - shift
    bad = yield bad | (day1 < 1) | (day1 > MAX_ORDINAL)
    wall = yield o.when([(~bad, (day1 - 1) * DAY_US + micros % DAY_US)])
    if o.backend == "sql":
        return o.from_instant_us(wall), [(bad, "#NUM!")]
    value = yield _localize_polars(wall, key)
    instant = o.instant_us(value)
    bad = bad | (instant < 0) | (instant >= US_10000) | (o.wall_us(value) >= US_10000)
    return value, [(bad, "#NUM!")]


# ------------------------------------------------------------------------------ fields


@call_form
def f_year(o: Any, c: FormCall, d: Any) -> Any:
    return o.number(o.ymd(_dates(o, c, [d])[0])[0])


@call_form
def f_month(o: Any, c: FormCall, d: Any) -> Any:
    return o.number(o.ymd(_dates(o, c, [d])[0])[1])


@call_form
def f_day(o: Any, c: FormCall, d: Any) -> Any:
    return o.number(o.ymd(_dates(o, c, [d])[0])[2])


def _clock(unit: str) -> Callable[..., Any]:
    @program
    def form(o: Any, c: FormCall, v: Any) -> Program:
        """Seconds since midnight rounded to the nearest second, mod 86400
        (`dates._seconds_of_day`): a Date is midnight, a negative Duration #NUM!."""
        kind = c.kind(0)
        errors: list[Any] = []
        if kind == "Date":
            return o.number(o.lit(0)), []
        if kind == "DateTime":
            tod = yield o.wall_us(v) % DAY_US
        else:  # Duration: whole days are dropped
            made = o.time_seconds(v) if o.backend == "sql" else None
            if made is not None:  # TIME's: whole seconds of one day already
                seconds = yield made
                value = {"hour": seconds // 3600, "minute": seconds // 60 % 60,
                         "second": seconds % 60}[unit]
                return o.number(value), []
            us = yield o.duration_us(v)
            negative = yield us < 0
            tod = yield o.when([(~negative, us)], 0) % DAY_US
            errors = [(negative, "#NUM!")]
        seconds = yield (tod // 1_000_000 + o.when([(tod % 1_000_000 >= 500_000, 1)], 0)) \
            % 86400
        value = {"hour": seconds // 3600, "minute": seconds // 60 % 60,
                 "second": seconds % 60}[unit]
        return o.number(value), errors
    return form


f_hour, f_minute, f_second = (call_form(_clock(unit)) for unit in ("hour", "minute", "second"))


# ---------------------------------------------------------------------------- weekdays


@call_form
@program
def f_weekday(o: Any, c: FormCall, d: Any, rt: Any) -> Program:
    (d,) = _dates(o, c, [d])
    table = cal.WEEKDAY_TYPES
    known, whole, _ = literal_int(c, 1)
    if known and whole not in table:  # a constant type that is no type: #NUM! on every row
        return o.number(o.lit(0 if o.backend == "polars" else None)), [(o.true(), "#NUM!")]
    rt = yield rt
    r, big = o.trunc(rt)
    r = yield r
    first = o.lookup(r, {t: f for t, (f, _) in table.items()})
    base = o.lookup(r, {t: b for t, (_, b) in table.items()})
    bad = big | o.not_in(r, list(table))
    weekday0 = (o.ordinal(d) - 1) % 7  # Python's weekday(): ordinal 1 is a Monday
    return o.number((weekday0 - first + 7) % 7 + base), [(bad, "#NUM!")]


@call_form
@program
def f_weeknum(o: Any, c: FormCall, d: Any, rt: Any) -> Program:
    (d,) = _dates(o, c, [d])
    d, rt = (yield d), (yield rt)
    r, big = o.trunc(rt)
    r = yield r
    table = cal.WEEKNUM_TYPES
    first = o.lookup(r, dict(table), 0)
    bad = big | o.not_in(r, [*table, 21])
    ordinal = yield o.ordinal(d)
    jan1 = yield ordinal - o.day_of_year(d) + 1
    offset = ((jan1 - 1) % 7 - first + 7) % 7
    week = (ordinal - jan1 + offset) // 7 + 1
    value = o.when([(r == 21, o.iso_week(d))], week)
    return o.number(value), [(bad, "#NUM!")]


@call_form
def f_isoweeknum(o: Any, c: FormCall, d: Any) -> Any:
    (d,) = _dates(o, c, [d])
    return o.number(o.iso_week(d))

# ----------------------------------------------------------------- zones and serials


@call_form
@program
def f_tzconvert(o: Any, c: FormCall, x: Any, zone: Any) -> Program:
    tz = _zone(o, "TZCONVERT", c.const(1))
    if tz is None:
        return x, [(o.true(), "#VALUE!")]
    if o.backend == "sql":
        if tz.utcoffset(None) != dt.timedelta(0):
            raise _refuse("sql", "TZCONVERT", "a SQL TIMESTAMPTZ is read at UTC; converting "
                          "to another zone has no SQL form")
        return x  # the same instant, read at UTC
    value = yield x.dt.convert_time_zone(_polars_zone_key("TZCONVERT", tz))
    wall = o.wall_us(value)
    return value, [((wall < 0) | (wall >= US_10000), "#NUM!")]


@call_form
@program
def f_serial(o: Any, c: FormCall, v: Any) -> Program:
    """Days from 1899-12-31, plus Excel's phantom 1900-02-29 from 1900-03-01 on; a DateTime
    adds its local time as a fraction of the day; a Duration is its length in days."""
    kind = c.kind(0)
    if kind == "Duration":
        return _serial_number(o, o.ratio(o.duration_us(v), o.lit(DAY_US)))
    v = yield v
    d = o.local_date(v) if kind == "DateTime" else v
    ordinal = o.ordinal(d)
    if o.backend != "sql" or not table_column(d):
        ordinal = yield ordinal  # (SQL: a column's date compares with date literals)
    bad = ordinal < EXCEL_MIN_ORDINAL
    # (NULL before serial 0, where the error is set: ``null_on_error``)
    whole = ordinal - EXCEL_MIN_ORDINAL + o.when([(ordinal >= MARCH_1900, 1),
                                                  (~bad, 0)])
    if kind == "Date":
        return o.number(whole), [(bad, "#NUM!")]
    tod = o.wall_us(v) % DAY_US
    return _serial_number(o, o.ratio(whole * DAY_US + tod, o.lit(DAY_US))), [(bad, "#NUM!")]


def _serial_number(o: Any, ratio: Any) -> Any:
    """SQL: the DOUBLE quotient read back by its shortest decimal digits, as DuckDB's direct
    DOUBLE -> DECIMAL cast is off by ~1e-12 near serial 44590.5 (excel-profile date arithmetic
    subtracts such serials: DATE(2022,1,30) - DATETIME(2022,1,29,12,0,0) must be 0.5)."""
    if o.backend != "sql":
        return ratio
    return _cast(_cast(ratio, "VARCHAR"), "DECIMAL(38, 18)")


@call_form
@program
def f_fromserial(o: Any, c: FormCall, x: Any) -> Program:
    x = yield x
    if o.backend == "sql" and not c.nullable(0) and not constant(x.e)[0]:
        return _fromserial_sql(o, x)
    n, big = o.floor(x)
    n = yield n
    bad = yield big | (n < 0) | (n > cal.EXCEL_MAX_SERIAL) | (n == 60)
    ordinal = EXCEL_MIN_ORDINAL + o.when([(n > 60, n - 1)], n)
    return _to_date(o, ordinal, bad), [(bad, "#NUM!")]




def _fromserial_sql(o: Any, x: Any) -> Any:
    """`f_fromserial` in SQL for an argument that is never blank: the range tested before the
    floor (NULL is out of range: no 1e15 guard to repeat), and the days after 1899-12-31 a
    CASE that is NULL exactly where the serial is bad (out of range, or Excel's phantom
    1900-02-29, serial 60), so the date needs no mask of its own. A table's column is tested
    as it is (FLOOR(x) > 60 is x >= 61, FLOOR(x) = 60 is 60 <= x < 61); anything else floors
    once, bound."""
    top = cal.EXCEL_MAX_SERIAL + 1
    whole = _cast(Q(exp.Floor(this=x.e)), "BIGINT")
    if table_column(x):
        days = o.when([((x >= 61) & (x < top), whole - 1), ((x >= 0) & (x < 60), whole)])
        bad = (x < 0) | (x >= top) | ((x >= 60) & (x < 61))
    else:
        n = o.bind(o.when([((x >= 0) & (x < top), whole)]))
        days = o.when([(n > 60, n - 1), (n < 60, n)])
        bad = Q(exp.Coalesce(this=(n == 60).e, expressions=[exp.true()]))
    moved = exp.DateAdd(this=Q(dt.date.fromordinal(EXCEL_MIN_ORDINAL)).e, expression=days.e,
                        unit=exp.var("DAY"))
    return _cast(Q(moved), "DATE"), [(bad, "#NUM!")]
