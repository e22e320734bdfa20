"""Calendar arithmetic behind the date functions: Excel's rules as pure functions.

Contract: everything works on proleptic Gregorian ordinals (`date.toordinal()`), plain Python
ints, so absurd arguments (``DATE(2024, 10^30, 1)``, ``WORKDAY(d, 10^20)``) cannot overflow or
loop: a date is built only through `from_ordinal`, which turns an out-of-range ordinal into
``#NUM!``. Functions raise `XLError` with Excel's codes and never return floats. Text parsing
(`parse_date_text`, `parse_time_text`) is bounded: texts longer than `MAX_PARSE_LENGTH` are
rejected before any regular expression runs. Time zones come from the ``tzdata`` package only
(never the host's zone files), so results do not depend on the machine.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from functools import lru_cache
from importlib import resources
from typing import Iterable
from zoneinfo import ZoneInfo

from ..values import NUM, VALUE, XLError

MIN_ORDINAL = dt.date.min.toordinal()  # 0001-01-01
MAX_ORDINAL = dt.date.max.toordinal()  # 9999-12-31
#: Excel's serial 0 ("1900-01-00") is represented by 1899-12-31, the day before serial 1.
EXCEL_EPOCH = dt.date(1899, 12, 31)
EXCEL_MIN_ORDINAL = EXCEL_EPOCH.toordinal()
EXCEL_MAX_SERIAL = 2958465  # 9999-12-31
_MARCH_1900 = dt.date(1900, 3, 1)
_DAY = dt.timedelta(days=1)
MAX_PARSE_LENGTH = 100


def to_int(x: Decimal | int) -> int:
    """Excel truncates fractional counts toward zero (``EDATE(d, 1.9)`` adds one month)."""
    return x if type(x) is int else int(x)


def from_ordinal(ordinal: int, what: str = "date") -> dt.date:
    if not MIN_ORDINAL <= ordinal <= MAX_ORDINAL:
        raise XLError(NUM, f"the {what} falls outside the years 1 to 9999")
    return dt.date.fromordinal(ordinal)


def is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if is_leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _month_start_ordinal(month_index: int) -> int:
    """Ordinal of the first day of ``month_index`` = year*12 + (month-1); #NUM! off-calendar."""
    year, month0 = divmod(month_index, 12)
    if not 1 <= year <= 9999:
        raise XLError(NUM, "the date falls outside the years 1 to 9999")
    return dt.date(year, month0 + 1, 1).toordinal()


def make_date(year: int, month: int, day: int) -> dt.date:
    """Excel's DATE: years 0-1899 are offset by 1900, months and days overflow into the next
    (or previous) month and year, and the result must be serial 0 (1899-12-31) or later."""
    if year < 0 or year >= 10000:
        raise XLError(NUM, "DATE needs a year from 0 to 9999")
    if year < 1900:
        year += 1900
    # Months first (DATE(2024, 14, 1) is 2025-02-01), then days on top of that month's start.
    ordinal = _month_start_ordinal(year * 12 + (month - 1)) + (day - 1)
    if not EXCEL_MIN_ORDINAL <= ordinal <= MAX_ORDINAL:
        raise XLError(NUM, "DATE's result falls outside 1900-01-01 to 9999-12-31")
    return dt.date.fromordinal(ordinal)


def add_months(d: dt.date, months: int) -> dt.date:
    """``d`` moved by whole months, clamped to the target month's last day (Jan 31 + 1 month
    is Feb 28 or 29)."""
    month_index = d.year * 12 + (d.month - 1) + months
    year, month0 = divmod(month_index, 12)
    if not 1 <= year <= 9999:
        raise XLError(NUM, "the date falls outside the years 1 to 9999")
    return dt.date(year, month0 + 1, min(d.day, days_in_month(year, month0 + 1)))


def end_of_month(d: dt.date, months: int) -> dt.date:
    month_index = d.year * 12 + (d.month - 1) + months
    year, month0 = divmod(month_index, 12)
    if not 1 <= year <= 9999:
        raise XLError(NUM, "the date falls outside the years 1 to 9999")
    return dt.date(year, month0 + 1, days_in_month(year, month0 + 1))


# ---------------------------------------------------------------------------------------------
# Excel serial numbers (1900 system, with Lotus 1-2-3's phantom 1900-02-29 at serial 60)


def to_serial(d: dt.date) -> int:
    """Serial 1 is 1900-01-01; dates from 1900-03-01 on count the phantom 1900-02-29."""
    if d < EXCEL_EPOCH:
        raise XLError(NUM, "Excel serial numbers start at 1899-12-31 (serial 0)")
    days = d.toordinal() - EXCEL_MIN_ORDINAL
    return days + 1 if d >= _MARCH_1900 else days


def from_serial(serial: int) -> dt.date:
    if serial < 0 or serial > EXCEL_MAX_SERIAL:
        raise XLError(NUM, "an Excel serial date runs from 0 to 2958465 (9999-12-31)")
    if serial == 60:
        raise XLError(NUM, "serial 60 is Excel's 1900-02-29, a day that never existed")
    return dt.date.fromordinal(EXCEL_MIN_ORDINAL + (serial - 1 if serial > 60 else serial))


# ---------------------------------------------------------------------------------------------
# Weekdays and week numbers. Python's weekday(): Monday = 0 ... Sunday = 6.

#: WEEKDAY return type -> (first day of the week as a Python weekday, number of that day).
WEEKDAY_TYPES = {1: (6, 1), 2: (0, 1), 3: (0, 0), **{t: ((t - 11) % 7, 1) for t in range(11, 18)}}
#: WEEKNUM return type -> first day of the week (system 1: the week holding January 1 is 1).
WEEKNUM_TYPES = {1: 6, 2: 0, **{t: (t - 11) % 7 for t in range(11, 18)}}


def weekday(d: dt.date, return_type: int) -> int:
    spec = WEEKDAY_TYPES.get(return_type)
    if spec is None:
        raise XLError(NUM, "WEEKDAY's return_type must be 1, 2, 3 or 11 to 17")
    first, base = spec
    return (d.weekday() - first) % 7 + base


def weeknum(d: dt.date, return_type: int) -> int:
    if return_type == 21:
        return d.isocalendar()[1]
    first = WEEKNUM_TYPES.get(return_type)
    if first is None:
        raise XLError(NUM, "WEEKNUM's return_type must be 1, 2, 11 to 17 or 21")
    jan1 = dt.date(d.year, 1, 1)
    offset = (jan1.weekday() - first) % 7
    return (d.toordinal() - jan1.toordinal() + offset) // 7 + 1


# ---------------------------------------------------------------------------------------------
# DATEDIF and YEARFRAC


def datedif(start: dt.date, end: dt.date, unit: str) -> int:
    """Excel's DATEDIF, including its documented "MD" quirk (it can be negative: Jan 31 to
    Mar 1 is 1 - 31 + 28 = -2 in a common year)."""
    if start > end:
        raise XLError(NUM, "DATEDIF needs start_date <= end_date")
    u = unit.strip().upper()
    before = (end.month, end.day) < (start.month, start.day)
    if u == "D":
        return end.toordinal() - start.toordinal()
    if u == "Y":
        return end.year - start.year - (1 if before else 0)
    if u == "M":
        return (end.year - start.year) * 12 + end.month - start.month - (end.day < start.day)
    if u == "YM":
        return (12 + end.month - start.month - (end.day < start.day)) % 12
    if u == "MD":
        if end.day >= start.day:
            return end.day - start.day
        prev_year, prev_month = (end.year - 1, 12) if end.month == 1 else (end.year, end.month - 1)
        return days_in_month(prev_year, prev_month) + end.day - start.day
    if u == "YD":
        if not before:
            # start's month and day in end's year; Feb 29 overflows to Mar 1 as DATE does.
            anchor = dt.date(end.year, start.month, 1).toordinal() + start.day - 1
            return end.toordinal() - anchor
        # Count from start, dropping the whole calendar years strictly between the two.
        between = dt.date(end.year, 1, 1).toordinal() - dt.date(start.year + 1, 1, 1).toordinal()
        return end.toordinal() - start.toordinal() - between
    raise XLError(NUM, 'DATEDIF\'s unit must be "Y", "M", "D", "MD", "YM" or "YD"')


def _days360_us(start: dt.date, end: dt.date) -> int:
    """30/360 US (NASD) as YEARFRAC basis 0 applies it, February rules included."""
    d1, d2 = start.day, end.day
    start_feb_end = start.month == 2 and start.day == days_in_month(start.year, 2)
    end_feb_end = end.month == 2 and end.day == days_in_month(end.year, 2)
    if d1 == 31 and d2 == 31:
        d1 = d2 = 30
    elif d1 == 31:
        d1 = 30
    elif d1 == 30 and d2 == 31:
        d2 = 30
    elif start_feb_end and end_feb_end:
        d1 = d2 = 30
    elif start_feb_end:
        d1 = 30
    return (end.year - start.year) * 360 + (end.month - start.month) * 30 + d2 - d1


def _days360_eu(start: dt.date, end: dt.date) -> int:
    d1, d2 = min(start.day, 30), min(end.day, 30)
    return (end.year - start.year) * 360 + (end.month - start.month) * 30 + d2 - d1


def _feb29_between(start: dt.date, end: dt.date) -> bool:
    """Whether a Feb 29 lies in [start, end] (start and end at most one year apart)."""
    if is_leap(start.year) and start < dt.date(start.year, 3, 1):
        return True
    return is_leap(end.year) and end >= dt.date(end.year, 3, 1) > start


def yearfrac(start: dt.date, end: dt.date, basis: int) -> Decimal:
    """Excel's YEARFRAC (after D. A. Wheeler's reverse-engineered reference, which matches
    Excel on every basis): arguments are swapped when start > end."""
    if basis not in (0, 1, 2, 3, 4):
        raise XLError(NUM, "YEARFRAC's basis must be 0, 1, 2, 3 or 4")
    if start > end:
        start, end = end, start
    days = end.toordinal() - start.toordinal()
    if basis == 0:
        return Decimal(_days360_us(start, end)) / 360
    if basis == 2:
        return Decimal(days) / 360
    if basis == 3:
        return Decimal(days) / 365
    if basis == 4:
        return Decimal(_days360_eu(start, end)) / 360
    total, years = actual_year_length(start, end)
    return Decimal(days * years) / total


def actual_year_length(start: dt.date, end: dt.date) -> tuple[int, int]:
    """The year length actual/actual (basis 1) divides by, start <= end, as (days, years):
    within one (apparent) year 365 or 366 days (a February 29 touched) over 1; over longer
    spans the days of the calendar years touched over their count (the average). YEARFRAC's
    and the securities functions' (PRICEMAT, YIELDMAT, ACCRINTM) denominator."""
    one_year = start.year == end.year or (
        start.year + 1 == end.year and (start.month, start.day) >= (end.month, end.day)
    )
    if one_year:
        if start.year == end.year:
            return (366 if is_leap(start.year) else 365), 1
        if _feb29_between(start, end) or (end.month == 2 and end.day == 29):
            return 366, 1
        return 365, 1
    n_years = end.year - start.year + 1
    span = dt.date(end.year + 1, 1, 1).toordinal() if end.year < 9999 else MAX_ORDINAL + 1
    return span - dt.date(start.year, 1, 1).toordinal(), n_years


# ---------------------------------------------------------------------------------------------
# Working days. A weekend mask is 7 booleans, Monday first, True for a non-working day.

WEEKEND_NUMBERS = {
    1: "0000011", 2: "1000001", 3: "1100000", 4: "0110000", 5: "0011000", 6: "0001100",
    7: "0000110", 11: "0000001", 12: "1000000", 13: "0100000", 14: "0010000", 15: "0001000",
    16: "0000100", 17: "0000010",
}


def weekend_mask(weekend: Decimal | int | str, allow_all: bool) -> tuple[bool, ...]:
    """A weekend code (1-7, 11-17) or a 7-character 0/1 string; an invalid number is #NUM!, an
    invalid string #VALUE! (Microsoft's documented codes)."""
    if isinstance(weekend, str):
        text = weekend
        if len(text) != 7 or text.strip("01"):
            raise XLError(VALUE, "a weekend string has seven 0/1 characters, Monday first, "
                                 'such as "0000011"')
        if text == "1111111" and not allow_all:
            raise XLError(VALUE, 'the weekend string "1111111" leaves no working day')
    else:
        code = to_int(weekend)
        found = WEEKEND_NUMBERS.get(code)
        if found is None:
            raise XLError(NUM, "a weekend number is 1 to 7 or 11 to 17")
        text = found
    return tuple(ch == "1" for ch in text)


def _is_workday(ordinal: int, mask: tuple[bool, ...]) -> bool:
    return not mask[(ordinal - 1) % 7]  # ordinal 1 (0001-01-01) is a Monday


def holiday_ordinals(holidays: Iterable[dt.date | None], mask: tuple[bool, ...]) -> list[int]:
    """Distinct holidays that fall on working days, sorted; blanks are skipped."""
    found = {h.toordinal() for h in holidays if h is not None}
    return sorted(o for o in found if _is_workday(o, mask))


def count_workdays(a: int, b: int, mask: tuple[bool, ...], holidays: list[int]) -> int:
    """Working days in [a, b] (ordinals, a <= b), in O(1) plus the holidays."""
    per_week = mask.count(False)
    weeks, rest = divmod(b - a + 1, 7)
    total = weeks * per_week
    first = (a - 1) % 7
    total += sum(1 for i in range(rest) if not mask[(first + i) % 7])
    return total - sum(1 for h in holidays if a <= h <= b)


def _step_workdays(ordinal: int, n: int, mask: tuple[bool, ...]) -> int:
    """The n-th working day after (n > 0) or before (n < 0) ``ordinal``, ignoring holidays."""
    step = 1 if n > 0 else -1
    per_week = mask.count(False)
    weeks, rest = divmod(abs(n), per_week)
    if rest == 0:
        weeks, rest = weeks - 1, per_week
    ordinal += step * 7 * weeks  # any 7 consecutive days hold exactly per_week working days
    while rest:
        ordinal += step
        if _is_workday(ordinal, mask):
            rest -= 1
    return ordinal


def add_workdays(start: int, n: int, mask: tuple[bool, ...], holidays: list[int]) -> int:
    """WORKDAY: the n-th working day after (or before) ``start``, skipping holidays. Holidays
    are visited in order, each pushing the candidate one working day further: O(holidays)."""
    if n == 0:
        return start
    candidate = _step_workdays(start, n, mask)
    if n > 0:
        for h in holidays:
            if h <= start:
                continue
            if h > candidate:
                break
            candidate = _step_workdays(candidate, 1, mask)
    else:
        for h in reversed(holidays):
            if h >= start:
                continue
            if h < candidate:
                break
            candidate = _step_workdays(candidate, -1, mask)
    return candidate


# ---------------------------------------------------------------------------------------------
# Time zones (tzdata only) and local-time normalisation

_OFFSET = re.compile(r"(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?", re.ASCII)


@lru_cache(maxsize=1)
def _zone_names() -> dict[str, str]:
    """Every IANA key the tzdata package ships, by case-folded name (read once)."""
    try:
        names = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8").split()
    except FileNotFoundError:  # an old tzdata without its index: list the package's files
        from zoneinfo import available_timezones

        names = sorted(available_timezones())
    return {name.casefold(): name for name in names}


@lru_cache(maxsize=256)
def _load_zone(key: str) -> dt.tzinfo:
    path = resources.files("tzdata.zoneinfo").joinpath(*key.split("/"))
    with path.open("rb") as handle:
        return ZoneInfo.from_file(handle, key=key)


def zone(name: str) -> dt.tzinfo:
    """An IANA zone name (case-insensitive), "UTC", or a fixed offset such as "+05:30"
    ("UTC+5" and "GMT+5" also mean five hours ahead of UTC, unlike IANA's "Etc/GMT+5")."""
    text = name.strip()
    if len(text) > 64:
        raise XLError(VALUE, "unknown time zone")
    if text.upper() in ("UTC", "Z", "GMT", "ETC/UTC"):
        return dt.timezone.utc
    m = _OFFSET.fullmatch(text.upper())
    if m:
        hours, minutes = int(m.group(2)), int(m.group(3) or 0)
        if hours > 23 or minutes > 59:
            raise XLError(VALUE, f"time zone offset {name!r} is out of range")
        offset = dt.timedelta(hours=hours, minutes=minutes)
        return dt.timezone(-offset if m.group(1) == "-" else offset)
    key = _zone_names().get(text.casefold())
    if key is None:
        raise XLError(VALUE, f"unknown time zone {name!r}; use an IANA name such as "
                             '"Europe/Paris", "UTC" or an offset such as "+05:30"')
    return _load_zone(key)


def localize(naive: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    """Attach ``tz`` to a wall-clock time: an ambiguous time (clocks going back) takes its
    first occurrence, a time inside a gap (clocks going forward) moves forward by the gap."""
    try:
        aware = naive.replace(tzinfo=tz)
        return aware.astimezone(dt.timezone.utc).astimezone(tz)
    except (OverflowError, ValueError):
        raise XLError(NUM, "the date and time fall outside the years 1 to 9999") from None


def shift_absolute(value: dt.datetime, delta: dt.timedelta) -> dt.datetime:
    """``value`` plus elapsed time (not wall-clock time: adding 1 hour across a DST change
    moves the clock by 0 or 2 hours), in ``value``'s own zone."""
    try:
        tz = value.tzinfo
        return (value.astimezone(dt.timezone.utc) + delta).astimezone(tz)
    except (OverflowError, ValueError):
        raise XLError(NUM, "the date and time fall outside the years 1 to 9999") from None


# ---------------------------------------------------------------------------------------------
# Parsing DATEVALUE / TIMEVALUE texts

_MONTHS = {
    name: i + 1
    for i, names in enumerate((
        ("JANUARY", "JAN"), ("FEBRUARY", "FEB"), ("MARCH", "MAR"), ("APRIL", "APR"),
        ("MAY",), ("JUNE", "JUN"), ("JULY", "JUL"), ("AUGUST", "AUG"),
        ("SEPTEMBER", "SEP", "SEPT"), ("OCTOBER", "OCT"), ("NOVEMBER", "NOV"),
        ("DECEMBER", "DEC"),
    ))
    for name in names
}
_WEEKDAYS = {
    name: i
    for i, names in enumerate((
        ("MONDAY", "MON"), ("TUESDAY", "TUE", "TUES"), ("WEDNESDAY", "WED"),
        ("THURSDAY", "THU", "THUR", "THURS"), ("FRIDAY", "FRI"), ("SATURDAY", "SAT"),
        ("SUNDAY", "SUN"),
    ))
    for name in names
}
_SEP = r"[-/. ]"
_YEAR_FIRST = re.compile(r"(\d{4})([-/.])(\d{1,2})\2(\d{1,2})", re.ASCII)
_YEAR_LAST = re.compile(r"(\d{1,2})([-/.])(\d{1,2})\2(\d{4}|\d{2})", re.ASCII)
_WEEKDAY_PREFIX = re.compile(r"([A-Z]+)\.?,?\s+(.*)", re.ASCII)
_DAY_MONTH_YEAR = re.compile(
    rf"(\d{{1,2}})(?:ST|ND|RD|TH)?{_SEP}+([A-Z]+)\.?,?{_SEP}+(\d{{4}}|\d{{2}})", re.ASCII)
_MONTH_DAY_YEAR = re.compile(
    rf"([A-Z]+)\.?{_SEP}+(\d{{1,2}})(?:ST|ND|RD|TH)?,?{_SEP}+(\d{{4}}|\d{{2}})", re.ASCII)
_MONTH_YEAR = re.compile(rf"([A-Z]+)\.?,?{_SEP}+(\d{{4}})", re.ASCII)
_YEAR_MONTH_DAY = re.compile(rf"(\d{{4}}){_SEP}+([A-Z]+)\.?{_SEP}+(\d{{1,2}})", re.ASCII)
_TIME = re.compile(
    r"(\d{1,4}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?\s*(?:(AM|PM|A|P)|(Z|[+-]\d{2}:?\d{2}))?",
    re.ASCII,
)
_HOUR_ONLY = re.compile(r"(\d{1,2})\s*(AM|PM|A|P)", re.ASCII)


def _two_digit_year(text: str) -> int:
    """Excel's window: 00-29 are 2000-2029, 30-99 are 1930-1999."""
    year = int(text)
    if len(text) == 2:
        year += 2000 if year < 30 else 1900
    return year


def _valid(year: int, month: int, day: int) -> dt.date | None:
    if 1900 <= year <= 9999 and 1 <= month <= 12 and 1 <= day <= days_in_month(year, month):
        return dt.date(year, month, day)
    return None


def _parse_date_only(s: str) -> dt.date | None:
    m = _YEAR_FIRST.fullmatch(s)
    if m:
        return _valid(int(m.group(1)), int(m.group(3)), int(m.group(4)))
    m = _YEAR_LAST.fullmatch(s)
    if m:
        a, b, year = int(m.group(1)), int(m.group(3)), _two_digit_year(m.group(4))
        month_first, day_first = _valid(year, a, b), _valid(year, b, a)
        if month_first and day_first and month_first != day_first:
            return None  # 3/4/2024: March 4 or 3 April depends on a locale we do not have
        return month_first or day_first
    want_weekday = None
    m = _WEEKDAY_PREFIX.fullmatch(s)
    if m and m.group(1) in _WEEKDAYS:
        want_weekday, s = _WEEKDAYS[m.group(1)], m.group(2)
    found: dt.date | None = None
    if m := _DAY_MONTH_YEAR.fullmatch(s):
        month = _MONTHS.get(m.group(2))
        found = _valid(_two_digit_year(m.group(3)), month, int(m.group(1))) if month else None
    elif m := _MONTH_DAY_YEAR.fullmatch(s):
        month = _MONTHS.get(m.group(1))
        found = _valid(_two_digit_year(m.group(3)), month, int(m.group(2))) if month else None
    elif m := _MONTH_YEAR.fullmatch(s):
        month = _MONTHS.get(m.group(1))
        found = _valid(int(m.group(2)), month, 1) if month else None
    elif m := _YEAR_MONTH_DAY.fullmatch(s):
        month = _MONTHS.get(m.group(2))
        found = _valid(int(m.group(1)), month, int(m.group(3))) if month else None
    if not found:
        return None
    if want_weekday is not None and found.weekday() != want_weekday:
        return None  # "Monday, March 1, 2024" names the wrong day: refuse rather than guess
    return found


def _parse_time_only(s: str) -> dt.timedelta | None:
    m = _TIME.fullmatch(s)
    if m:
        hour, minute = int(m.group(1)), int(m.group(2))
        second = int(m.group(3) or 0)
        micro = int((m.group(4) or "0")[:6].ljust(6, "0"))
        if minute > 59 or second > 59:
            return None
        meridiem = m.group(5)
        if meridiem:
            if hour > 12:
                return None
            hour = hour % 12 + (12 if meridiem.startswith("P") else 0)
        return dt.timedelta(hours=hour, minutes=minute, seconds=second, microseconds=micro)
    m = _HOUR_ONLY.fullmatch(s)
    if m:
        hour = int(m.group(1))
        if hour > 12:
            return None
        return dt.timedelta(hours=hour % 12 + (12 if m.group(2).startswith("P") else 0))
    return None


def _normalise(text: str) -> str:
    if len(text) > MAX_PARSE_LENGTH:
        raise XLError(VALUE, "the text is too long to be a date or a time")
    return " ".join(text.upper().split())


def _split_date_time(s: str) -> tuple[dt.date, dt.timedelta] | None:
    """A date followed by a time: ISO ``2024-03-01T10:30`` or ``<date> <time>``."""
    m = re.fullmatch(r"(\d{4}-\d{1,2}-\d{1,2})T(.+)", s, re.ASCII)
    if m:
        d, t = _parse_date_only(m.group(1)), _parse_time_only(m.group(2))
        return (d, t) if d and t is not None else None
    tokens = s.split(" ")
    for k in (1, 2, 3):
        if len(tokens) > k:
            t = _parse_time_only(" ".join(tokens[-k:]))
            if t is not None:
                d = _parse_date_only(" ".join(tokens[:-k]))
                if d:
                    return d, t
    return None


def parse_date_text(text: str) -> dt.date:
    """DATEVALUE's reading of a text: ISO and year-first dates, unambiguous day/month orders,
    English month names; a time after the date is ignored. Anything else is #VALUE!."""
    s = _normalise(text)
    found = _parse_date_only(s)
    if found is None:
        both = _split_date_time(s)
        if both is None:
            raise XLError(VALUE, f"{text!r} is not a date DATEVALUE can read: use ISO 2024-03-01, "
                                 "1 March 2024, or a day/month order only one reading fits")
        found = both[0]
    return found


def parse_time_text(text: str) -> dt.timedelta:
    """TIMEVALUE's reading of a text: the time of day, a date before it ignored; a date alone
    is midnight. Hours past 23 wrap around the day as in Excel."""
    s = _normalise(text)
    found = _parse_time_only(s)
    if found is None:
        both = _split_date_time(s)
        if both is not None:
            found = both[1]
        elif _parse_date_only(s) is not None:
            found = dt.timedelta(0)
        else:
            raise XLError(VALUE, f"{text!r} is not a time TIMEVALUE can read")
    return dt.timedelta(seconds=found.seconds, microseconds=found.microseconds)  # wrap at 24 h
