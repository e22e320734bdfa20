"""Information functions: type tests (ISNUMBER...), error inspection, and N, T, TYPE, BOOLEAN.

Contract: the IS* tests take any value and never fail: as in Excel, they see error values
(``ISNUMBER(1/0)`` is FALSE, ``ISNONTEXT(NA())`` is TRUE), so they are declared with
``accepts_errors``; ISEVEN and ISODD take a Number and propagate errors, as Excel does. The
tests follow this language's types, not Excel's storage: a Date is not a Number
(``ISNUMBER(DATE(2024,1,1))`` is FALSE), and ISDATE is TRUE for Date and DateTime values.
TYPE and N, whose purpose is Excel compatibility, follow Excel's storage model instead: dates,
date-times and durations are numbers there (TYPE 1; N gives the serial number), a record is
compound data (TYPE 128), and a blank is TYPE 1 as an empty cell is. Text conversions (VALUE,
NUMBERVALUE, TEXT) belong to the text family; IF/IFERROR-style lazy forms to logic.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Mapping

from ..types import ANY, BOOLEAN, NEVER, NUMBER, TEXT, Type, non_null
from ..values import CONTEXT, ERROR_TYPE_NUMBER, NA, NUM, VALUE, ErrorValue, XLError
from ._numeric import Number, finish, trunc_int
from .spec import Cost, Refuse, builtin, family, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "info"

#: Excel's serial 0 is 1899-12-31; from 1900-03-01 on serials count Lotus's phantom 1900-02-29
#: (the same rule as the dates family's SERIAL helper).
_SERIAL_EPOCH = dt.date(1899, 12, 31)
_MARCH_1900 = dt.date(1900, 3, 1)
_DAY_SECONDS = 86400

# Columnar and SQL decisions (forms in `columnar/forms/math`; the forms of the IS* tests, TYPE and
# ERROR.TYPE receive their argument's compiled column, as they see errors). Not vectorized yet:
_NEEDS_TYPE = (
    "its result depends on the argument's static type (an Any parameter: a Number, a Text, a "
    "Date... each converts differently), which the backends do not pass to an eager form")


def _is_error(value: Any) -> bool:
    return type(value) is ErrorValue


def _is_number(value: Any) -> bool:
    tv = type(value)
    return tv is Decimal or tv is int


# ----------------------------------------------------------------------------------- IS tests

#: The IS... tests of any value: they see error values and never fail.
_is = family(sig(p("value", ANY), returns=BOOLEAN), cost=Cost.const(1), accepts_errors=True,
             can_error=False)
#: ISEVEN and ISODD: a Number (errors propagate, as in Excel), truncated to an integer.
_parity = family(sig(p("number", NUMBER), returns=BOOLEAN), cost=Cost.const(1), can_error=False)


@_is(
    "ISBLANK",
    doc="TRUE when the value is blank (an empty text is not blank).",
    examples=["ISBLANK(BLANK()) -> TRUE", 'ISBLANK("") -> FALSE', "ISBLANK(0) -> FALSE",
              "ISBLANK(1/0) -> FALSE"],
)
def isblank(value: Any) -> bool:
    return value is None


@_is(
    "ISERROR",
    doc="TRUE when the value is any error value.",
    examples=["ISERROR(1/0) -> TRUE", "ISERROR(NA()) -> TRUE", "ISERROR(1) -> FALSE"],
)
def iserror(value: Any) -> bool:
    return _is_error(value)


@_is(
    "ISERR",
    doc="TRUE when the value is an error other than #N/A.",
    examples=["ISERR(1/0) -> TRUE", "ISERR(NA()) -> FALSE", 'ISERR("x") -> FALSE'],
)
def iserr(value: Any) -> bool:
    return _is_error(value) and value.code != NA


@_is(
    "ISNA",
    doc="TRUE when the value is the #N/A error.",
    examples=["ISNA(NA()) -> TRUE", "ISNA(1/0) -> FALSE", "ISNA(0) -> FALSE"],
)
def isna(value: Any) -> bool:
    return _is_error(value) and value.code == NA


@_is(
    "ISNUMBER",
    doc="TRUE when the value is a Number (not text that looks like one, not a date).",
    examples=["ISNUMBER(4) -> TRUE", 'ISNUMBER("4") -> FALSE', "ISNUMBER(1/0) -> FALSE",
              "ISNUMBER(DATE(2024, 1, 1)) -> FALSE"],
)
def isnumber(value: Any) -> bool:
    return _is_number(value)


@_is(
    "ISTEXT",
    doc="TRUE when the value is a Text (the empty text included).",
    examples=['ISTEXT("a") -> TRUE', 'ISTEXT("") -> TRUE', "ISTEXT(1) -> FALSE",
              "ISTEXT(BLANK()) -> FALSE"],
)
def istext(value: Any) -> bool:
    return type(value) is str


@_is(
    "ISNONTEXT",
    doc="TRUE when the value is not a Text (blanks and errors included).",
    examples=["ISNONTEXT(1) -> TRUE", 'ISNONTEXT("a") -> FALSE', "ISNONTEXT(BLANK()) -> TRUE",
              "ISNONTEXT(NA()) -> TRUE"],
)
def isnontext(value: Any) -> bool:
    return type(value) is not str


@_is(
    "ISLOGICAL",
    doc="TRUE when the value is a Boolean.",
    examples=["ISLOGICAL(TRUE) -> TRUE", "ISLOGICAL(1) -> FALSE", 'ISLOGICAL("TRUE") -> FALSE'],
)
def islogical(value: Any) -> bool:
    return type(value) is bool


@_is(
    "ISDATE",
    doc="TRUE when the value is a Date or a DateTime (text is never a date).",
    examples=["ISDATE(DATE(2024, 2, 29)) -> TRUE", 'ISDATE("2024-02-29") -> FALSE',
              "ISDATE(45351) -> FALSE"],
)
def isdate(value: Any) -> bool:
    return isinstance(value, dt.date)


@_parity(
    "ISEVEN",
    doc="TRUE when the number, truncated to an integer, is even.",
    examples=["ISEVEN(4) -> TRUE", "ISEVEN(2.5) -> TRUE", "ISEVEN(-1) -> FALSE", "ISEVEN(0) -> TRUE"],
)
def iseven(number: Number) -> bool:
    return trunc_int(number) % 2 == 0


@_parity(
    "ISODD",
    doc="TRUE when the number, truncated to an integer, is odd.",
    examples=["ISODD(3) -> TRUE", "ISODD(-3.7) -> TRUE", "ISODD(2) -> FALSE", "ISODD(0) -> FALSE"],
)
def isodd(number: Number) -> bool:
    return trunc_int(number) % 2 == 1


# ----------------------------------------------------------------------------- errors and types


@builtin(
    "ERROR.TYPE",
    sig(p("error_val", ANY), returns=NUMBER),
    doc="The number of an error value (1 #NULL!, 2 #DIV/0!, 3 #VALUE!, 4 #REF!, 5 #NAME?, "
        "6 #NUM!, 7 #N/A, 14 #CALC!, 99 ERROR()); #N/A when the value is not an error.",
    examples=["ERROR.TYPE(1/0) -> 2", "ERROR.TYPE(NA()) -> 7", "ERROR.TYPE(SQRT(-1)) -> 6",
              "ERROR.TYPE(1) -> #N/A"],
    cost=Cost.const(1),
    accepts_errors=True,
    errors=("#N/A",),
)
def error_type(error_val: Any) -> int:
    if not _is_error(error_val):
        raise XLError(NA, "ERROR.TYPE of a value that is not an error")
    return ERROR_TYPE_NUMBER.get(error_val.code, 99)


@builtin(
    "TYPE",
    sig(p("value", ANY), returns=NUMBER),
    doc="Excel's type number: 1 Number (and Date, DateTime, Duration, blank), 2 Text, "
        "4 Boolean, 16 error, 64 List, 128 Record.",
    examples=["TYPE(1) -> 1", 'TYPE("a") -> 2', "TYPE(TRUE) -> 4", "TYPE(1/0) -> 16",
              "TYPE([1, 2]) -> 64", "TYPE(DATE(2024, 1, 1)) -> 1"],
    cost=Cost.const(1),
    accepts_errors=True,
    can_error=False,
)
def type_(value: Any) -> int:
    tv = type(value)
    if tv is str:
        return 2
    if tv is bool:
        return 4
    if tv is ErrorValue:
        return 16
    if tv is tuple:
        return 64
    if isinstance(value, Mapping):
        return 128  # Excel's "compound data" (linked data types are records)
    return 1  # numbers, dates, date-times, durations and blank cells are numbers to Excel


@builtin(
    "NA",
    sig(returns=NEVER),
    doc="The #N/A error value (\"not available\"); fits wherever a value is expected.",
    examples=["NA() -> #N/A", "ISNA(NA()) -> TRUE", "IFERROR(NA(), 0) -> 0"],
    cost=Cost.const(1),
    errors=("#N/A",),
)
def na() -> Any:
    raise XLError(NA, "value not available")


# ---------------------------------------------------------------------------------- conversion


def _serial(value: dt.date) -> int:
    if value < _SERIAL_EPOCH:
        raise XLError(NUM, "Excel serial numbers start at 1899-12-31 (serial 0)")
    days = value.toordinal() - _SERIAL_EPOCH.toordinal()
    return days + 1 if value >= _MARCH_1900 else days


@builtin(
    "N",
    sig(p("value", ANY), returns=NUMBER),
    doc="A value as a number: numbers as they are, TRUE 1, FALSE 0, dates as Excel serial "
        "numbers (date-times with the time as a fraction, in their own zone), durations in "
        "days, text and blank 0.",
    examples=["N(7) -> 7", "N(TRUE) -> 1", 'N("7") -> 0', "N(DATE(2024, 1, 1)) -> 45292",
              "N(1/0) -> #DIV/0!"],
    polars=Refuse(_NEEDS_TYPE), sql=Refuse(_NEEDS_TYPE),
    cost=Cost.const(2),
    errors=("#VALUE!", "#NUM!"),
)
def n(value: Any) -> Number:
    tv = type(value)
    if tv is Decimal or tv is int:
        return value  # type: ignore[no-any-return]
    if tv is bool:
        return 1 if value else 0
    if tv is str or value is None:
        return 0
    if isinstance(value, dt.datetime):
        seconds = value.hour * 3600 + value.minute * 60 + value.second
        fraction = CONTEXT.divide(Decimal(seconds * 1_000_000 + value.microsecond),
                                  Decimal(_DAY_SECONDS * 1_000_000))
        return finish(CONTEXT.add(_serial(value.date()), fraction))
    if isinstance(value, dt.date):
        return _serial(value)
    if isinstance(value, dt.timedelta):
        micros = (value.days * _DAY_SECONDS + value.seconds) * 1_000_000 + value.microseconds
        return finish(CONTEXT.divide(Decimal(micros), Decimal(_DAY_SECONDS * 1_000_000)))
    raise XLError(VALUE, "N takes a single value, not a list or a record")


@builtin(
    "T",
    sig(p("value", ANY), returns=TEXT),
    doc="The value when it is a Text, else the empty text.",
    examples=['T("abc") -> "abc"', 'T(12) -> ""', 'T(TRUE) -> ""', "T(1/0) -> #DIV/0!"],
    polars=Refuse(_NEEDS_TYPE), sql=Refuse(_NEEDS_TYPE),
    cost=Cost.const(1),
    can_error=False,
)
def t(value: Any) -> str:
    return value if type(value) is str else ""


_TRUE_WORDS = frozenset({"true", "yes", "1"})
_FALSE_WORDS = frozenset({"false", "no", "0"})


def _boolean_check(types: list[Type], profile: str) -> tuple[list[Type], Type]:
    """BOOLEAN dispatches on its argument's own type: Boolean, Number, Text (or untyped data).
    A custom rule, because overloads would let the excel profile coerce text to a number."""
    if len(types) != 1:
        raise TypeError(-1, f"BOOLEAN takes 1 argument, got {len(types)}")
    arg = types[0]
    if arg.kind in ("Boolean", "Number", "Text"):
        return [non_null(arg)], BOOLEAN
    if arg.kind in ("Any", "Never"):
        return [arg], BOOLEAN
    if arg.kind == "Blank":
        raise TypeError(0, "BOOLEAN needs a value, got a blank")
    raise TypeError(0, f"BOOLEAN converts a Text, Number or Boolean, got {arg}")


@builtin(
    "BOOLEAN",
    sig(p("value", BOOLEAN), returns=BOOLEAN),
    sig(p("value", NUMBER), returns=BOOLEAN),
    sig(p("value", TEXT), returns=BOOLEAN),
    doc="A value as a Boolean: numbers are TRUE unless 0; the texts true/yes/1 and "
        "false/no/0 (any case, spaces trimmed) are TRUE and FALSE; other texts #VALUE!.",
    examples=['BOOLEAN("Yes") -> TRUE', 'BOOLEAN(" false ") -> FALSE', "BOOLEAN(0) -> FALSE",
              "BOOLEAN(-2.5) -> TRUE", 'BOOLEAN("maybe") -> #VALUE!', "BOOLEAN(TRUE) -> TRUE"],
    cost=Cost.const(1),
    check=_boolean_check,
    errors=("#VALUE!",),
)
def boolean(value: Any) -> bool:
    tv = type(value)
    if tv is bool:
        return value  # type: ignore[no-any-return]
    if tv is Decimal or tv is int:
        return value != 0  # type: ignore[no-any-return]
    if tv is str:
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
        raise XLError(VALUE, f"cannot read {value[:40]!r} as TRUE or FALSE")
    raise XLError(VALUE, "BOOLEAN converts a Text, Number or Boolean")
