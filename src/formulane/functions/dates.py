"""Dates and times: Excel's date functions on real date types.

Contract: a Date is a `datetime.date`, a DateTime an aware `datetime.datetime` (its fields are
read in its own time zone), a Duration a `datetime.timedelta`. Numbers come in as `Decimal` or
`int` and fractional counts are truncated toward zero as Excel does. Where Excel works on
serial numbers we work on dates; `SERIAL`/`FROMSERIAL` convert, with the 1900 leap-year quirk
replicated there only. Differences from Excel, all deliberate:

- `DATE` accepts Excel's years 0-9999 (0-1899 mean 1900-3799) and rejects results before
  1899-12-31 (Excel's serial 0, shown by Excel as "1900-01-00") with #NUM!; other functions
  accept any date in Python's range (years 1-9999), out of range is #NUM!.
- `TIME` and `TIMEVALUE` return a Duration since midnight, wrapped to under 24 hours as Excel
  does; `DATETIME` builds a DateTime (time zone "UTC" unless named) and carries overflowing
  hours into days instead of wrapping.
- `DATEVALUE` reads only texts that mean one date in every locale: "3/4/2024" is #VALUE!
  (Excel's answer depends on the machine's locale), "4/30/2024" and "2024-03-04" are fine, and
  a text without a year is #VALUE! (Excel would use the current year, an impure read).
- `FROMSERIAL(60)` is #NUM!: serial 60 is Excel's 1900-02-29, a day that never existed.
- `TODAY()`/`NOW()` read the injected clock (`EvalContext.now`), never the machine's.
"""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import ROUND_DOWN, ROUND_FLOOR, Decimal
from typing import Callable, Sequence

from ..runtime import EvalContext
from ..types import DATE, DATETIME, DURATION, NUMBER, TEXT, Type, list_of, optional
from ..values import NUM, VALUE, XLError
from . import _calendar as cal
from . import _numeric as nm
from .spec import Cost, FunctionSpec, Param, Refuse, Sig, builtin, family, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "dates"

Number = Decimal | int
_MIDNIGHT = dt.time(0)
_MICROS_PER_DAY = 86_400_000_000
HOLIDAYS = list_of(optional(DATE))


_CLOCK_REFUSED = Refuse("reads the evaluation's injected clock, and the columnar and SQL "
                        "compilers have no clock to pass as a literal")


def _date_of(value: dt.date) -> dt.date:
    """The calendar date of a Date, or of a DateTime in its own time zone."""
    return value.date() if isinstance(value, dt.datetime) else value


def _date_sigs(*params: Param, returns: Type) -> tuple[Sig, ...]:
    """One overload per Date/DateTime combination of the parameters typed DATE (DateTime
    arguments count by their local calendar date, as Excel truncates a date-time serial); the
    form tables of `columnar.forms` name each overload's polars and SQL form."""
    slots = [i for i, prm in enumerate(params) if prm.type == DATE]
    out = []
    for kinds in itertools.product((DATE, DATETIME), repeat=len(slots)):
        ps = list(params)
        for i, kind in zip(slots, kinds):
            ps[i] = Param(ps[i].name, kind, ps[i].default, ps[i].doc)
        out.append(Sig(tuple(ps), returns))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# The clock


#: TODAY and NOW read the evaluation's injected clock: never folded, never vectorized.
_clock_read = family(cost=Cost.const(1), needs_ctx=True, volatile=True, can_error=False,
                     polars=_CLOCK_REFUSED, sql=_CLOCK_REFUSED)


@_clock_read(
    "TODAY",
    sig(returns=DATE),
    doc="Today's date, from the evaluation's injected clock (in the clock's time zone).",
    examples=[
        "DAYS(TODAY(), TODAY()) -> 0",
        "TODAY() = DATE(YEAR(TODAY()), MONTH(TODAY()), DAY(TODAY())) -> TRUE",
    ],
)
def today(ctx: EvalContext) -> dt.date:
    return ctx.today


@_clock_read(
    "NOW",
    sig(returns=DATETIME),
    doc="The current date and time, from the evaluation's injected clock.",
    examples=["DAYS(NOW(), TODAY()) -> 0", "HOUR(NOW()) < 24 -> TRUE"],
)
def now(ctx: EvalContext) -> dt.datetime:
    return ctx.now


# ---------------------------------------------------------------------------------------------
# Building dates, times and date-times


@builtin(
    "DATE",
    sig(p("year", NUMBER), p("month", NUMBER), p("day", NUMBER), returns=DATE),
    doc="The date of a year, month and day; months and days past their range roll over, as in "
        "Excel (years 0-1899 mean 1900-3799).",
    examples=[
        "DATE(2024, 14, 1) -> DATE(2025, 2, 1)",
        "DATE(2024, 3, 0) -> DATE(2024, 2, 29)",
        "DATE(2024, -1, 1) -> DATE(2023, 11, 1)",
        "DATE(99, 1, 1) -> DATE(1999, 1, 1)",
        "DATE(10000, 1, 1) -> #NUM!",
    ],
    cost=Cost.const(2),
    errors=("#NUM!",),
)
def date_(year: Number, month: Number, day: Number) -> dt.date:
    return cal.make_date(cal.to_int(year), cal.to_int(month), cal.to_int(day))


_TIME_ARG_MAX = 32767  # Excel's documented bound for each of TIME's arguments
_CLOCK_ARG_MAX = 10**12  # more seconds than years 1-9999 hold: larger is #NUM! at once


def _clock_seconds(hour: Number, minute: Number, second: Number) -> int:
    h, m, s = cal.to_int(hour), cal.to_int(minute), cal.to_int(second)
    if max(h, m, s) > _TIME_ARG_MAX:
        raise XLError(NUM, "TIME's arguments must be at most 32767")
    total = h * 3600 + m * 60 + s
    if total < 0:
        raise XLError(NUM, "TIME's arguments add up to a negative time")
    return total


@builtin(
    "TIME",
    sig(p("hour", NUMBER), p("minute", NUMBER), p("second", NUMBER), returns=DURATION),
    doc="A time of day, as the Duration since midnight; overflowing hours wrap around the day "
        "and minutes and seconds carry, as in Excel.",
    examples=[
        "TIME(27, 0, 0) -> TIME(3, 0, 0)",
        "TIME(0, 750, 0) -> TIME(12, 30, 0)",
        "TIME(1, -30, 0) -> TIME(0, 30, 0)",
        "TIME(0, -1, 0) -> #NUM!",
    ],
    cost=Cost.const(2),
    errors=("#NUM!",),
)
def time_(hour: Number, minute: Number, second: Number) -> dt.timedelta:
    return dt.timedelta(seconds=_clock_seconds(hour, minute, second) % 86400)


@builtin(
    "DATETIME",
    sig(p("year", NUMBER), p("month", NUMBER), p("day", NUMBER), p("hour", NUMBER, 0),
        p("minute", NUMBER, 0), p("second", NUMBER, 0), p("time_zone", TEXT, "UTC"),
        returns=DATETIME),
    doc="A date and time in a time zone (IANA name such as \"Europe/Paris\", or \"+05:30\"; "
        "default \"UTC\"); overflowing fields roll over into the next unit.",
    examples=[
        "DATETIME(2024, 3, 1, 25, 0, 0) -> DATETIME(2024, 3, 2, 1, 0, 0)",
        'HOUR(DATETIME(2024, 3, 31, 2, 30, 0, "Europe/Paris")) -> 3',
        'DATETIME(2024, 1, 1, 0, 0, 0, "Mars/Olympus") -> #VALUE!',
    ],
    cost=Cost.const(10),
    errors=("#NUM!", "#VALUE!"),
    zone_param="time_zone",
)
def datetime_(year: Number, month: Number, day: Number, hour: Number, minute: Number,
              second: Number, time_zone: str) -> dt.datetime:
    tz = cal.zone(time_zone)
    day0 = cal.make_date(cal.to_int(year), cal.to_int(month), cal.to_int(day))
    if max(nm.magnitude(hour), nm.magnitude(minute), nm.magnitude(second)) > _CLOCK_ARG_MAX:
        raise XLError(NUM, "the date and time fall outside the years 1 to 9999")
    # Seconds keep their fraction down to microseconds; hours and minutes are truncated.
    micros = (cal.to_int(hour) * 3600 + cal.to_int(minute) * 60) * 1_000_000
    micros += int(Decimal(second).scaleb(6).to_integral_value(rounding=ROUND_DOWN))
    days, rest = divmod(micros, _MICROS_PER_DAY)
    day1 = cal.from_ordinal(day0.toordinal() + days)
    naive = dt.datetime.combine(day1, _MIDNIGHT) + dt.timedelta(microseconds=rest)
    return cal.localize(naive, tz)


@builtin(
    "DATEVALUE",
    sig(p("date_text", TEXT), returns=DATE),
    doc="The date a text names: ISO (2024-03-01), English month names (1 March 2024, "
        "Mar 1, 2024) or an unambiguous day/month order; otherwise #VALUE!.",
    examples=[
        'DATEVALUE("2024-03-01") -> DATE(2024, 3, 1)',
        'DATEVALUE("22-Aug-2008") -> DATE(2008, 8, 22)',
        'DATEVALUE("8/22/2008") -> DATE(2008, 8, 22)',
        'DATEVALUE("3/4/2024") -> #VALUE!',
        'DATEVALUE("2023-02-29") -> #VALUE!',
    ],
    cost=Cost.const(20),
    errors=("#VALUE!",),
    polars=Refuse("DATEVALUE's reading of dates (several layouts, month names, weekday "
                  "checks, the day/month ambiguity rule) has no exact native form"),
    sql=Refuse("DATEVALUE's reading of dates (several layouts, month names, weekday checks, "
               "the day/month ambiguity rule) has no exact SQL form"),
)
def datevalue(date_text: str) -> dt.date:
    return cal.parse_date_text(date_text)


@builtin(
    "TIMEVALUE",
    sig(p("time_text", TEXT), returns=DURATION),
    doc="The time of day a text names (\"18:45\", \"6:45 PM\"), as the Duration since "
        "midnight; a date in the text is ignored.",
    examples=[
        'TIMEVALUE("6:45 PM") -> TIME(18, 45, 0)',
        'TIMEVALUE("2024-03-01 10:30:15") -> TIME(10, 30, 15)',
        'TIMEVALUE("25:61") -> #VALUE!',
    ],
    cost=Cost.const(15),
    errors=("#VALUE!",),
    polars=Refuse("TIMEVALUE's reading of times (AM/PM, fractions, a date before the time) has "
                  "no exact native form"),
    sql=Refuse("TIMEVALUE's reading of times (AM/PM, fractions, a date before the time) has "
               "no exact SQL form"),
)
def timevalue(time_text: str) -> dt.timedelta:
    return cal.parse_time_text(time_text)


# ---------------------------------------------------------------------------------------------
# Reading fields


def _field(name: str, read: Callable[[dt.date], int], *, doc: str,
           examples: list[str]) -> FunctionSpec:
    """YEAR, MONTH, DAY: one field of a Date (of a DateTime in its own time zone). A blank
    date gives a blank, so the columnar forms' value (EXTRACT of the date) is NULL wherever
    the date is: ``propagates_null``."""
    return builtin(name, *(sig(p("date", t), returns=NUMBER) for t in (DATE, DATETIME)),
                   doc=doc, examples=examples, cost=Cost.const(1), can_error=False,
                   propagates_null=True)(read)


year = _field(
    "YEAR", lambda value: value.year,
    doc="The year of a date (of a DateTime in its own time zone).",
    examples=["YEAR(DATE(2024, 3, 1)) -> 2024", "YEAR(DATE(2024, 12, 32)) -> 2025"],
)
month = _field(
    "MONTH", lambda value: value.month,
    doc="The month of a date, 1 to 12.",
    examples=["MONTH(DATE(2023, 12, 25)) -> 12", "MONTH(DATE(2024, 0, 1)) -> 12"],
)
day = _field(
    "DAY", lambda value: value.day,
    doc="The day of the month of a date, 1 to 31.",
    examples=["DAY(DATE(2024, 2, 29)) -> 29", "DAY(DATE(2023, 2, 29)) -> 1"],
)


def _seconds_of_day(value: dt.date | dt.timedelta) -> int:
    """Seconds since midnight, rounded to the nearest second as Excel rounds time serials."""
    if isinstance(value, dt.timedelta):
        if value < dt.timedelta(0):
            raise XLError(NUM, "a negative Duration has no time of day")
        seconds, micros = value.seconds, value.microseconds
    elif isinstance(value, dt.datetime):
        seconds = value.hour * 3600 + value.minute * 60 + value.second
        micros = value.microsecond
    else:
        return 0
    return (seconds + (1 if micros >= 500_000 else 0)) % 86400


def _clock(name: str, read: Callable[[int], int], *, doc: str,
           examples: list[str]) -> FunctionSpec:
    """HOUR, MINUTE, SECOND: read from the seconds since midnight (`_seconds_of_day`)."""

    def impl(value: dt.date | dt.timedelta) -> int:
        return read(_seconds_of_day(value))

    return builtin(name, *(sig(p("time", t), returns=NUMBER) for t in (DATETIME, DURATION, DATE)),
                   doc=doc, examples=examples, cost=Cost.const(1), errors=("#NUM!",))(impl)


hour = _clock(
    "HOUR", lambda seconds: seconds // 3600,
    doc="The hour of a DateTime or of a Duration's time of day, 0 to 23.",
    examples=[
        "HOUR(TIME(18, 45, 0)) -> 18",
        "HOUR(DATETIME(2024, 1, 1, 13, 5, 0)) -> 13",
        "HOUR(TIMEVALUE(\"23:59:59.6\")) -> 0",
    ],
)
minute = _clock(
    "MINUTE", lambda seconds: seconds // 60 % 60,
    doc="The minute of a DateTime or of a Duration's time of day, 0 to 59.",
    examples=["MINUTE(TIME(18, 45, 0)) -> 45", "MINUTE(TIME(0, 750, 0)) -> 30"],
)
second = _clock(
    "SECOND", lambda seconds: seconds % 60,
    doc="The second of a DateTime or of a Duration's time of day, 0 to 59.",
    examples=["SECOND(TIME(0, 0, 2000)) -> 20", "SECOND(DATETIME(2024, 1, 1, 0, 0, 59.5)) -> 0"],
)


@builtin(
    "WEEKDAY",
    *_date_sigs(p("date", DATE), p("return_type", NUMBER, 1), returns=NUMBER),
    doc="The day of the week: type 1 Sunday=1..Saturday=7, 2 Monday=1..Sunday=7, 3 "
        "Monday=0..Sunday=6, 11-17 weeks starting Monday..Sunday at 1.",
    examples=[
        "WEEKDAY(DATE(2023, 12, 24)) -> 1",
        "WEEKDAY(DATE(2023, 12, 24), 2) -> 7",
        "WEEKDAY(DATE(2023, 12, 24), 3) -> 6",
        "WEEKDAY(DATE(2023, 12, 24), 4) -> #NUM!",
    ],
    cost=Cost.const(1),
    errors=("#NUM!",),
)
def weekday(value: dt.date, return_type: Number) -> int:
    return cal.weekday(_date_of(value), cal.to_int(return_type))


@builtin(
    "WEEKNUM",
    *_date_sigs(p("date", DATE), p("return_type", NUMBER, 1), returns=NUMBER),
    doc="The week of the year: week 1 holds January 1 and weeks start on Sunday (type 1), "
        "Monday (2, 11) ... Sunday (17); type 21 is the ISO week.",
    examples=[
        "WEEKNUM(DATE(2024, 1, 6)) -> 1",
        "WEEKNUM(DATE(2024, 1, 7)) -> 2",
        "WEEKNUM(DATE(2021, 1, 1), 21) -> 53",
        "WEEKNUM(DATE(2024, 1, 1), 3) -> #NUM!",
    ],
    cost=Cost.const(2),
    errors=("#NUM!",),
)
def weeknum(value: dt.date, return_type: Number) -> int:
    return cal.weeknum(_date_of(value), cal.to_int(return_type))


@builtin(
    "ISOWEEKNUM",
    *_date_sigs(p("date", DATE), returns=NUMBER),
    doc="The ISO 8601 week number (weeks start on Monday; week 1 holds the first Thursday).",
    examples=["ISOWEEKNUM(DATE(2021, 1, 3)) -> 53", "ISOWEEKNUM(DATE(2024, 12, 30)) -> 1"],
    cost=Cost.const(2),
    can_error=False,
)
def isoweeknum(value: dt.date) -> int:
    return _date_of(value).isocalendar()[1]


# ---------------------------------------------------------------------------------------------
# Moving dates


@builtin(
    "EDATE",
    *_date_sigs(p("start_date", DATE), p("months", NUMBER), returns=DATE),
    doc="The date a number of months away, clamped to the end of a shorter month.",
    examples=[
        "EDATE(DATE(2024, 1, 31), 1) -> DATE(2024, 2, 29)",
        "EDATE(DATE(2024, 3, 31), -1.9) -> DATE(2024, 2, 29)",
        "EDATE(DATE(9999, 12, 1), 1) -> #NUM!",
    ],
    cost=Cost.const(2),
    errors=("#NUM!",),
)
def edate(start_date: dt.date, months: Number) -> dt.date:
    return cal.add_months(_date_of(start_date), cal.to_int(months))


@builtin(
    "EOMONTH",
    *_date_sigs(p("start_date", DATE), p("months", NUMBER), returns=DATE),
    doc="The last day of the month a number of months away.",
    examples=[
        "EOMONTH(DATE(2024, 1, 15), 1) -> DATE(2024, 2, 29)",
        "EOMONTH(DATE(2024, 1, 15), -13) -> DATE(2022, 12, 31)",
        "EOMONTH(DATE(2024, 1, 15), 10^20) -> #NUM!",
    ],
    cost=Cost.const(2),
    errors=("#NUM!",),
)
def eomonth(start_date: dt.date, months: Number) -> dt.date:
    return cal.end_of_month(_date_of(start_date), cal.to_int(months))


_UNITS = {
    "year": "year", "years": "year", "quarter": "quarter", "quarters": "quarter",
    "month": "month", "months": "month", "week": "week", "weeks": "week", "day": "day",
    "days": "day", "hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute",
    "second": "second", "seconds": "second",
}
_CLOCK_UNITS = {"hour": 3600, "minute": 60, "second": 1}


@builtin(
    "DATEADD",
    sig(p("date", DATE), p("amount", NUMBER), p("unit", TEXT), returns=DATE),
    sig(p("date", DATETIME), p("amount", NUMBER), p("unit", TEXT), returns=DATETIME),
    doc="A date moved by a whole number of \"year\", \"quarter\", \"month\", \"week\" or "
        "\"day\" units (month-end clamped); DateTimes also take \"hour\", \"minute\", "
        "\"second\" (elapsed time).",
    examples=[
        'DATEADD(DATE(2024, 1, 31), 1, "month") -> DATE(2024, 2, 29)',
        'DATEADD(DATE(2024, 2, 29), -1, "year") -> DATE(2023, 2, 28)',
        'DATEADD(DATE(2024, 1, 1), 2, "weeks") -> DATE(2024, 1, 15)',
        'DATEADD(DATETIME(2024, 1, 1, 23, 0, 0), 90, "minute") -> DATETIME(2024, 1, 2, 0, 30, 0)',
        'DATEADD(DATE(2024, 1, 1), 1, "hour") -> #VALUE!',
        'DATEADD(DATE(2024, 1, 1), 1, "fortnight") -> #VALUE!',
    ],
    cost=Cost.const(5),
    errors=("#VALUE!", "#NUM!"),
)
def dateadd(value: dt.date, amount: Number, unit: str) -> dt.date:
    key = _UNITS.get(unit.strip().lower())
    if key is None:
        raise XLError(VALUE, 'DATEADD\'s unit is "year", "quarter", "month", "week", "day", '
                             '"hour", "minute" or "second"')
    n = cal.to_int(amount)
    is_dt = isinstance(value, dt.datetime)
    if key in _CLOCK_UNITS:
        if not isinstance(value, dt.datetime):
            raise XLError(VALUE, f'a Date has no {key}s; use DATETIME to add "{key}"')
        if abs(n) * _CLOCK_UNITS[key] > 3_700_000 * 86400:  # more than years 1-9999 span
            raise XLError(NUM, "the date and time fall outside the years 1 to 9999")
        return cal.shift_absolute(value, dt.timedelta(seconds=n * _CLOCK_UNITS[key]))
    base = _date_of(value)
    if key in ("year", "quarter", "month"):
        months = n * {"year": 12, "quarter": 3, "month": 1}[key]
        moved = cal.add_months(base, months)
    else:
        moved = cal.from_ordinal(base.toordinal() + n * (7 if key == "week" else 1))
    if not is_dt:
        return moved
    # Calendar units keep the wall-clock time (a day across a DST change is 23 or 25 hours).
    assert isinstance(value, dt.datetime)
    return cal.localize(dt.datetime.combine(moved, value.timetz().replace(tzinfo=None)),
                        value.tzinfo)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Differences


@builtin(
    "DATEDIF",
    *_date_sigs(p("start_date", DATE), p("end_date", DATE), p("unit", TEXT), returns=NUMBER),
    doc="Whole \"Y\" years, \"M\" months or \"D\" days between two dates, or the remainder "
        "\"MD\" days, \"YM\" months, \"YD\" days (Excel's rules, MD quirk included).",
    examples=[
        'DATEDIF(DATE(2001, 6, 1), DATE(2002, 8, 15), "YD") -> 75',
        'DATEDIF(DATE(2020, 2, 29), DATE(2024, 2, 28), "Y") -> 3',
        'DATEDIF(DATE(2024, 1, 31), DATE(2024, 2, 29), "M") -> 0',
        'DATEDIF(DATE(2011, 1, 31), DATE(2011, 3, 1), "MD") -> -2',
        'DATEDIF(DATE(2024, 2, 1), DATE(2024, 1, 1), "D") -> #NUM!',
    ],
    cost=Cost.const(3),
    errors=("#NUM!",),
)
def datedif(start_date: dt.date, end_date: dt.date, unit: str) -> int:
    return cal.datedif(_date_of(start_date), _date_of(end_date), unit)


@builtin(
    "DAYS",
    *_date_sigs(p("end_date", DATE), p("start_date", DATE), returns=NUMBER),
    doc="The number of days from start_date to end_date (note the order: end first).",
    examples=[
        "DAYS(DATE(2024, 3, 1), DATE(2024, 2, 1)) -> 29",
        "DAYS(DATE(2024, 2, 1), DATE(2024, 3, 1)) -> -29",
    ],
    cost=Cost.const(1),
    can_error=False,
)
def days(end_date: dt.date, start_date: dt.date) -> int:
    return _date_of(end_date).toordinal() - _date_of(start_date).toordinal()


@builtin(
    "YEARFRAC",
    *_date_sigs(p("start_date", DATE), p("end_date", DATE), p("basis", NUMBER, 0),
                returns=NUMBER),
    doc="The fraction of a year between two dates: basis 0 US 30/360, 1 actual/actual, 2 "
        "actual/360, 3 actual/365, 4 European 30/360 (Excel's rules).",
    examples=[
        "YEARFRAC(DATE(2024, 1, 1), DATE(2024, 7, 1)) -> 0.5",
        "YEARFRAC(DATE(2024, 7, 1), DATE(2024, 1, 1)) -> 0.5",
        "YEARFRAC(DATE(2024, 2, 29), DATE(2025, 2, 28), 0) -> 1",
        "YEARFRAC(DATE(2024, 1, 1), DATE(2026, 1, 1), 1) -> 2193 / 1096",
        "YEARFRAC(DATE(2024, 1, 1), DATE(2024, 1, 31), 2) -> 30 / 360",
        "YEARFRAC(DATE(2024, 1, 1), DATE(2025, 1, 1), 5) -> #NUM!",
    ],
    cost=Cost.const(3),
    errors=("#NUM!",),
)
def yearfrac(start_date: dt.date, end_date: dt.date, basis: Number) -> Decimal:
    return cal.yearfrac(_date_of(start_date), _date_of(end_date), cal.to_int(basis))


# ---------------------------------------------------------------------------------------------
# Working days


def _networkdays(start: dt.date, end: dt.date, mask: tuple[bool, ...],
                 holidays: Sequence[dt.date | None]) -> int:
    if all(mask):
        return 0  # "1111111": no working day at all (Microsoft: "will always return 0")
    hols = cal.holiday_ordinals(holidays, mask)
    a, b = start.toordinal(), end.toordinal()
    if a <= b:
        return cal.count_workdays(a, b, mask, hols)
    return -cal.count_workdays(b, a, mask, hols)


def _workday(start: dt.date, n: Number, mask: tuple[bool, ...],
             holidays: Sequence[dt.date | None]) -> dt.date:
    hols = cal.holiday_ordinals(holidays, mask)
    return cal.from_ordinal(cal.add_workdays(start.toordinal(), cal.to_int(n), mask, hols))


_WEEKEND_MON_FRI = cal.weekend_mask(1, allow_all=False)


@builtin(
    "NETWORKDAYS",
    sig(p("start_date", DATE), p("end_date", DATE), p("holidays", HOLIDAYS, ()),
        returns=NUMBER),
    doc="The number of working days (Monday to Friday, not holidays) from start_date to "
        "end_date inclusive; negative when start_date is later.",
    examples=[
        "NETWORKDAYS(DATE(2024, 1, 1), DATE(2024, 1, 31)) -> 23",
        "NETWORKDAYS(DATE(2024, 1, 1), DATE(2024, 1, 31), [DATE(2024, 1, 1), "
        "DATE(2024, 1, 6)]) -> 22",
        "NETWORKDAYS(DATE(2024, 1, 31), DATE(2024, 1, 1)) -> -23",
        "NETWORKDAYS(DATE(2024, 1, 6), DATE(2024, 1, 7)) -> 0",
    ],
    cost=Cost.linear(2, 10),
    can_error=False,
)
def networkdays(start_date: dt.date, end_date: dt.date,
                holidays: Sequence[dt.date | None]) -> int:
    return _networkdays(start_date, end_date, _WEEKEND_MON_FRI, holidays)


_INTL_DOC = ("weekend is a code (1 Saturday-Sunday ... 7 Friday-Saturday, 11-17 a single day "
             "Sunday..Saturday) or a 0/1 string, Monday first (\"0000011\")")


@builtin(
    "NETWORKDAYS.INTL",
    sig(p("start_date", DATE), p("end_date", DATE), p("weekend", NUMBER, 1),
        p("holidays", HOLIDAYS, ()), returns=NUMBER),
    sig(p("start_date", DATE), p("end_date", DATE), p("weekend", TEXT),
        p("holidays", HOLIDAYS, ()), returns=NUMBER),
    doc="NETWORKDAYS with a chosen weekend: " + _INTL_DOC + ".",
    examples=[
        "NETWORKDAYS.INTL(DATE(2024, 1, 1), DATE(2024, 1, 7), 16) -> 6",
        'NETWORKDAYS.INTL(DATE(2024, 1, 1), DATE(2024, 1, 7), "1000100") -> 5',
        'NETWORKDAYS.INTL(DATE(2024, 1, 1), DATE(2024, 1, 7), "1111111") -> 0',
        "NETWORKDAYS.INTL(DATE(2024, 1, 1), DATE(2024, 1, 7), 8) -> #NUM!",
        'NETWORKDAYS.INTL(DATE(2024, 1, 1), DATE(2024, 1, 7), "0101") -> #VALUE!',
    ],
    cost=Cost.linear(2, 10),
    errors=("#NUM!", "#VALUE!"),
)
def networkdays_intl(start_date: dt.date, end_date: dt.date, weekend: Number | str,
                     holidays: Sequence[dt.date | None]) -> int:
    return _networkdays(start_date, end_date, cal.weekend_mask(weekend, allow_all=True), holidays)


@builtin(
    "WORKDAY",
    sig(p("start_date", DATE), p("days", NUMBER), p("holidays", HOLIDAYS, ()), returns=DATE),
    doc="The working day (Monday to Friday, not a holiday) a number of working days before or "
        "after start_date.",
    examples=[
        "WORKDAY(DATE(2024, 1, 5), 1) -> DATE(2024, 1, 8)",
        "WORKDAY(DATE(2024, 1, 8), -1) -> DATE(2024, 1, 5)",
        "WORKDAY(DATE(2024, 1, 5), 1, [DATE(2024, 1, 8)]) -> DATE(2024, 1, 9)",
        "WORKDAY(DATE(2024, 1, 6), 0) -> DATE(2024, 1, 6)",
        "WORKDAY(DATE(2024, 1, 1), 10^9) -> #NUM!",
    ],
    cost=Cost.linear(3, 10),
    errors=("#NUM!",),
)
def workday(start_date: dt.date, days: Number, holidays: Sequence[dt.date | None]) -> dt.date:
    return _workday(start_date, days, _WEEKEND_MON_FRI, holidays)


@builtin(
    "WORKDAY.INTL",
    sig(p("start_date", DATE), p("days", NUMBER), p("weekend", NUMBER, 1),
        p("holidays", HOLIDAYS, ()), returns=DATE),
    sig(p("start_date", DATE), p("days", NUMBER), p("weekend", TEXT),
        p("holidays", HOLIDAYS, ()), returns=DATE),
    doc="WORKDAY with a chosen weekend: " + _INTL_DOC + " (\"1111111\" is #VALUE!).",
    examples=[
        "WORKDAY.INTL(DATE(2024, 1, 4), 1, 7) -> DATE(2024, 1, 7)",
        'WORKDAY.INTL(DATE(2024, 1, 5), 1, "0000001") -> DATE(2024, 1, 6)',
        'WORKDAY.INTL(DATE(2024, 1, 5), 1, "1111111") -> #VALUE!',
        "WORKDAY.INTL(DATE(2024, 1, 5), 1, 0) -> #NUM!",
    ],
    cost=Cost.linear(3, 10),
    errors=("#NUM!", "#VALUE!"),
)
def workday_intl(start_date: dt.date, days: Number, weekend: Number | str,
                 holidays: Sequence[dt.date | None]) -> dt.date:
    return _workday(start_date, days, cal.weekend_mask(weekend, allow_all=False), holidays)


# ---------------------------------------------------------------------------------------------
# Time zones and serial numbers


@builtin(
    "TZCONVERT",
    sig(p("datetime", DATETIME), p("time_zone", TEXT), returns=DATETIME),
    doc="The same instant seen in another time zone (IANA name such as \"America/New_York\", "
        "\"UTC\" or an offset \"+05:30\").",
    examples=[
        'HOUR(TZCONVERT(DATETIME(2024, 1, 1, 12, 0, 0), "Europe/Paris")) -> 13',
        'HOUR(TZCONVERT(DATETIME(2024, 7, 1, 12, 0, 0), "America/New_York")) -> 8',
        'DAY(TZCONVERT(DATETIME(2024, 1, 1, 23, 0, 0), "+05:30")) -> 2',
        'TZCONVERT(DATETIME(2024, 1, 1, 12, 0, 0), "Nowhere/Special") -> #VALUE!',
    ],
    cost=Cost.const(10),
    errors=("#VALUE!", "#NUM!"),
    zone_param="time_zone",
)
def tzconvert(value: dt.datetime, time_zone: str) -> dt.datetime:
    tz = cal.zone(time_zone)
    try:
        return value.astimezone(tz)
    except (OverflowError, ValueError):
        raise XLError(NUM, "the date and time fall outside the years 1 to 9999") from None


@builtin(
    "SERIAL",
    *(sig(p("value", t), returns=NUMBER)
      for t in (DATE, DATETIME, DURATION)),
    doc="Excel's serial number of a date (1900 system: 1 is 1900-01-01, with Excel's phantom "
        "1900-02-29 at 60), of a DateTime (local time as a day fraction) or a Duration in days.",
    examples=[
        "SERIAL(DATE(2008, 1, 1)) -> 39448",
        "SERIAL(DATE(1900, 3, 1)) -> 61",
        "SERIAL(DATE(1900, 2, 28)) -> 59",
        "SERIAL(TIME(12, 0, 0)) -> 0.5",
        "SERIAL(DATETIME(2024, 1, 1, 18, 0, 0)) -> 45292.75",
    ],
    cost=Cost.const(2),
    errors=("#NUM!",),
)
def serial(value: dt.date | dt.timedelta) -> Number:
    if isinstance(value, dt.timedelta):
        micros = (value.days * 86400 + value.seconds) * 1_000_000 + value.microseconds
        return Decimal(micros) / _MICROS_PER_DAY
    whole = cal.to_serial(_date_of(value))
    if not isinstance(value, dt.datetime):
        return whole
    micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
    return whole + Decimal(micros) / _MICROS_PER_DAY if micros else whole


@builtin(
    "FROMSERIAL",
    sig(p("serial_number", NUMBER), returns=DATE),
    doc="The date of an Excel serial number (1900 system; a fraction is dropped); serial 60, "
        "Excel's phantom 1900-02-29, is #NUM!.",
    examples=[
        "FROMSERIAL(39448) -> DATE(2008, 1, 1)",
        "FROMSERIAL(45292.75) -> DATE(2024, 1, 1)",
        "FROMSERIAL(61) -> DATE(1900, 3, 1)",
        "FROMSERIAL(60) -> #NUM!",
        "FROMSERIAL(-1) -> #NUM!",
    ],
    cost=Cost.const(2),
    errors=("#NUM!",),
)
def fromserial(serial_number: Number) -> dt.date:
    whole = serial_number if type(serial_number) is int else int(
        Decimal(serial_number).to_integral_value(rounding=ROUND_FLOOR))
    return cal.from_serial(whole)

