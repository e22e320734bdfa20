"""Excel's serial numbers as the excel profile's implicit conversions (scalar side).

Contract: in the excel profile a date, a time or a duration is also the number Excel holds for
it (1900 date system: serial 1 is 1900-01-01, serial 60 Excel's phantom 1900-02-29, serial 0
Excel's "1900-01-00", here 1899-12-31; a time is a fraction of a day). The checker turns most
of these conversions into calls of `SERIAL` and `FROMSERIAL`, which every backend has; the
ones below have no such function and are `Coerce` modes of the scalar engine only (the columnar
and SQL backends refuse them at compile time, with the reason). Each takes a blank through as
blank and raises `XLError` (an error value) on a value it cannot convert:

- ``serial_to_datetime``: a serial number as a DateTime at UTC (``HOUR(0.44)`` is 10);
- ``serial_to_duration``: a number of days as a Duration (``DATETIME(...) + 0.5``);
- ``each_serial_to_date``: a list of serial numbers as a list of dates (XNPV's, XIRR's dates);
- ``text_to_date`` / ``text_to_datetime`` / ``text_to_duration``: a text that is a number
  (``"44811"``) as that serial, else a date or time text as DATEVALUE / TIMEVALUE read it,
  as Excel reads ``DAY("2007-01-10")``;
- ``text_to_number``: a text where a number is expected (``"3" + 1``), read as VALUE reads a
  number text, else a date text (with or without a time) as its serial number, as Excel reads
  ``"2020-01-01" + 1`` (43832). The columnar and SQL forms of this mode (columnar/) read
  plain numbers only.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from ..values import CONTEXT, NUM, VALUE, XLError
from . import _calendar as cal
from ._numbertext import parse_number_text

_US_PER_DAY = 86_400_000_000
_UTC = dt.timezone.utc
#: The Date that an empty cell reads as where a date is expected: serial 0 ("1900-01-00").
SERIAL_ZERO_DATE = dt.date(1899, 12, 31)
SERIAL_ZERO_DATETIME = dt.datetime(1899, 12, 31, tzinfo=_UTC)


def _micros(days: Decimal | int) -> int:
    return int((Decimal(days) * _US_PER_DAY).to_integral_value(rounding=ROUND_HALF_EVEN))


def serial_to_datetime(n: Any) -> dt.datetime | None:
    if n is None:
        return None
    whole = int(Decimal(n).to_integral_value(rounding=ROUND_FLOOR))
    day = cal.from_serial(whole)
    try:
        return dt.datetime(day.year, day.month, day.day, tzinfo=_UTC) + dt.timedelta(
            microseconds=_micros(Decimal(n) - whole))
    except OverflowError:
        raise XLError(NUM, "the serial number is past 9999-12-31") from None


def serial_to_duration(n: Any) -> dt.timedelta | None:
    if n is None:
        return None
    try:
        return dt.timedelta(microseconds=_micros(n))
    except OverflowError:
        raise XLError(NUM, f"{n} days is out of the range of a Duration") from None


def _number(text: str) -> Decimal | None:
    cleaned = text.strip().replace(",", "")
    if not cleaned or len(cleaned) > 60:
        return None
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def text_to_number(text: str | None) -> Decimal | None:
    """Excel's reading of a text in arithmetic: a number text as VALUE reads it ("1,234.5",
    "15%", "$1,000", "(5)", "1 1/2", "12:30"), else a date text DATEVALUE reads, with an
    optional time after it, as its serial number ("2020-01-01 12:00" is 43831.5); anything
    else is #VALUE!. A blank passes on (the checker follows with blank_to_number)."""
    if text is None:
        return None
    try:
        return Decimal(parse_number_text(text))
    except XLError:
        pass
    try:
        day = cal.parse_date_text(text)
        serial = cal.to_serial(day)
    except XLError:
        raise XLError(VALUE, f"cannot read {text!r} as a number") from None
    time = cal.parse_time_text(text)
    if not time:
        return Decimal(serial)
    micros = time.seconds * 1_000_000 + time.microseconds
    return CONTEXT.add(serial, CONTEXT.divide(micros, _US_PER_DAY))


def text_to_date(text: str | None) -> dt.date | None:
    if text is None:
        return None
    n = _number(text)
    if n is not None:
        return cal.from_serial(int(n.to_integral_value(rounding=ROUND_FLOOR)))
    return cal.parse_date_text(text)


def text_to_datetime(text: str | None) -> dt.datetime | None:
    if text is None:
        return None
    n = _number(text)
    if n is not None:
        return serial_to_datetime(n)
    try:
        day = cal.parse_date_text(text)
    except XLError:
        day = SERIAL_ZERO_DATE  # a time alone ("10:30") is a time of day 0, as in Excel
        time = cal.parse_time_text(text)
    else:
        try:
            time = cal.parse_time_text(text)
        except XLError:
            time = dt.timedelta(0)
    return dt.datetime(day.year, day.month, day.day, tzinfo=_UTC) + time


def text_to_duration(text: str | None) -> dt.timedelta | None:
    if text is None:
        return None
    n = _number(text)
    if n is not None:
        return serial_to_duration(n)
    try:
        return cal.parse_time_text(text)
    except XLError:
        raise XLError(VALUE, f"cannot read {text!r} as a time") from None


class BlankPassing:
    """A one-argument implementation that answers blank for a blank (picklable)."""

    __slots__ = ("impl",)

    def __init__(self, impl: Any) -> None:
        self.impl = impl

    def __call__(self, value: Any) -> Any:
        return None if value is None else self.impl(value)

    def __reduce__(self) -> Any:
        return (BlankPassing, (self.impl,))


#: Coercion mode -> scalar conversion (merged into the interpreter's coercion table).
def each_serial_to_date(items: Any) -> tuple[Any, ...] | None:
    """A list of numbers where a list of dates is expected (``XNPV(r, flows, {44958, ...})``):
    each number is an Excel serial read as its date (a fraction dropped, as FROMSERIAL does);
    blanks and error values inside the list stay for the function to report."""
    if items is None:
        return None
    out: list[Any] = []
    for x in items:
        if x is None or not isinstance(x, (int, Decimal)) or isinstance(x, bool):
            out.append(x)
            continue
        out.append(cal.from_serial(int(Decimal(x).to_integral_value(rounding=ROUND_FLOOR))))
    return tuple(out)


def boolean_refused(value: Any) -> Any:
    """A logical given to one of Excel's Analysis ToolPak functions (GCD(TRUE, 2)): Excel
    answers #VALUE! where its own functions read TRUE as 1 (interpreter/overloads.py,
    REFUSE_LOGICALS)."""
    if value is None:
        return None
    raise XLError(VALUE, "this function takes numbers, not TRUE or FALSE (as in Excel)")


SERIAL_COERCIONS = {
    "boolean_refused": boolean_refused,
    "each_serial_to_date": each_serial_to_date,
    "serial_to_datetime": serial_to_datetime,
    "serial_to_duration": serial_to_duration,
    "text_to_date": text_to_date,
    "text_to_datetime": text_to_datetime,
    "text_to_duration": text_to_duration,
    "text_to_number": text_to_number,
}
