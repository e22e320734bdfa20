"""The date and time family on every engine: scalar, polars and DuckDB SQL.

Each table below is a schema, rows (month ends, leap days, 1900-02-28/03-01, the first and last
dates, zeros, negatives, fractions, huge counts, blanks, texts with odd case and spaces...) and
formulas. Every formula runs row by row through `Program.evaluate` (the reference) and on four
layouts: polars with Float64 or Decimal(38, 18) Number columns (`formulane.apply`), DuckDB with
DOUBLE or DECIMAL(38, 18) Number columns (`formulane.sql_select`, numbers="float" and
"decimal"). Values must be equal and error codes identical row by row; numbers compare within
1e-9 relative (the float policy; SQL divides in DOUBLE), numbers inside lists exactly.
DateTimes compare as instants, and polars DateTime results must also show the scalar's wall
clock. The machinery is the shared harness, `_engines`.

A formula marked ``refuse={"sql": "..."}`` must be refused by that backend at compile time with
a reason containing the text, and still run on the others. The last tests check that every
function of the family has an explicit polars and SQL decision on every overload, and that every
function appears in a table.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from functions import _engines as E

from formulane.columnar.forms import declared_form
from formulane.functions import dates
from formulane.functions.spec import FunctionSpec, Refuse

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

UTC = dt.timezone.utc
D = dt.date
PARIS = ZoneInfo("Europe/Paris")
SPECS = [v for v in vars(dates).values() if isinstance(v, FunctionSpec)]
LAYOUTS = ("polars-float", "polars-decimal", "duckdb-float", "duckdb-decimal")


def T(*args: int, tz: Any = UTC) -> dt.datetime:
    return dt.datetime(*args, tzinfo=tz)


@dataclass
class F:
    """A formula, and the backends ("polars", "sql") expected to refuse it (backend -> part of
    the reason)."""

    source: str
    refuse: dict[str, str] = field(default_factory=dict)
    #: backend -> (why, the rows) known to differ (docs/columnar.md); the test then requires
    #: exactly those rows to differ, so a fix is noticed and the entry removed
    known: dict[str, tuple[str, frozenset[int]]] = field(default_factory=dict)


@dataclass
class Table:
    name: str
    schema: dict[str, str]
    rows: list[tuple]
    formulas: list[F | str]
    profile: str = "strict"
    layouts: tuple[str, ...] = LAYOUTS
    polars_dtypes: dict[str, Any] = field(default_factory=dict)  # overrides (zoned columns)


# -------------------------------------------------------------------------------- engines


def _rows(table: Table) -> list[dict[str, Any]]:
    return [dict(zip(table.schema, row)) for row in table.rows]


def check(table: Table, formula: F | str) -> None:
    f = formula if isinstance(formula, F) else F(formula)
    rows = _rows(table)
    expected = E.run_scalar(f.source, table.schema, rows, profile=table.profile)
    for layout in table.layouts:
        engine, mode = E.engine_mode(layout)
        backend = E.BACKEND[engine]
        layout_rows = E.rows_for(mode, rows)
        assert len(layout_rows) == len(rows), "every row of these tables fits Decimal(38, 18)"
        if backend in f.refuse:
            E.assert_refused(backend, f.refuse[backend], E.run, layout, f.source, table.schema,
                             layout_rows, profile=table.profile, dtypes=table.polars_dtypes)
            continue
        got = E.run(layout, f.source, table.schema, layout_rows, profile=table.profile,
                    dtypes=table.polars_dtypes)
        # Polars keeps a DateTime's zone, so its wall clock must be the scalar's too; DuckDB
        # hands a TIMESTAMPTZ back in the session's zone, so only the instant can be compared.
        differ = E.differing(expected, got, wall_clock=backend == "polars")
        if backend in f.known:
            why, known = f.known[backend]
            assert set(differ) == known, (f"{layout}: {f.source}: rows {differ} differ, known "
                                          f"{sorted(known)} ({why})")
            continue
        assert not differ, E.report(f"{layout}: {f.source}", table.rows, expected, got, differ)


# ---------------------------------------------------------------------------------- tables

HUGE = 1e16  # beyond the int64-safe bound of the forms, inside Decimal(38, 18)
#: polars reads zones with chrono-tz, which has no daylight-saving rules after 2037, where
#: Python's zoneinfo extends them (docs/columnar.md): summer rows in year 9999 (row 6) or
#: 1e9 minutes after 2024 (row 11, year 3925) are an hour apart
_CHRONO_TZ = "chrono-tz has no daylight-saving rules after 2037"

TABLES: list[Table] = [
    Table("building dates", {"y": "Number", "m": "Number", "d": "Number"}, [
        (2024.0, 14.0, 1.0), (2024.0, 3.0, 0.0), (2008.0, 1.0, 35.0), (2008.0, -3.0, 2.0),
        (2008.0, 1.0, -15.0), (108.0, 1.0, 2.0), (99.0, 1.0, 1.0), (10000.0, 1.0, 1.0),
        (-1.0, 1.0, 1.0), (1900.0, 1.0, -1.0), (1900.0, 1.0, 0.0), (2024.9, 2.9, 29.9),
        (2024.0, HUGE, 1.0), (2024.0, 1.0, HUGE), (2024.0, -HUGE, 1.0), (0.0, 1.0, 1.0),
        (9999.0, 12.0, 31.0), (9999.0, 12.0, 32.0), (1899.0, 12.0, 31.0), (-0.5, -0.5, 1.5),
        (2023.0, 2.0, 29.0), (1.0, 1.0, 1.0), (2024.0, 0.0, 0.0), (2024.0, 119999.0, 1.0),
        (1900.0, 1.0, 3652059.0), (2024.0, -24288.0, 1.0),
    ], [
        "DATE(y, m, d)", "DATE(y, m, 1)", "DATE(2024, m, d)", "YEAR(DATE(y, m, d))",
        "DATE(y, m, d) - DATE(2000, 1, 1)",
    ]),
    Table("building times", {"h": "Number", "mi": "Number", "s": "Number"}, [
        (27.0, 0.0, 0.0), (0.0, 750.0, 0.0), (0.0, 0.0, 2000.0), (1.0, -30.0, 0.0),
        (0.0, -1.0, 0.0), (32768.0, 0.0, 0.0), (32767.0, 32767.0, 32767.0), (12.5, 0.9, 59.99),
        (-HUGE, 0.0, 0.0), (HUGE, 0.0, 0.0), (0.0, 0.0, -HUGE), (23.0, 59.0, 59.5),
        (0.0, 0.0, 0.0), (-1.0, 61.0, 0.0),
    ], [
        "TIME(h, mi, s)", "HOUR(TIME(h, mi, s))", "MINUTE(TIME(h, mi, s))",
        "SECOND(TIME(h, mi, s))", "SERIAL(TIME(h, mi, s))",
    ]),
    Table("building date-times",
          {"y": "Number", "d": "Number", "h": "Number", "mi": "Number", "s": "Number"}, [
              (2024.0, 1.0, 25.0, 30.0, 0.0), (2024.0, 31.0, 23.0, 59.0, 59.5),
              (2024.0, 1.0, -1.0, 0.0, 0.0), (2024.0, 1.0, 0.0, 0.0, 1.000001),
              (2024.0, 1.0, 0.0, 0.0, 0.1), (2024.0, 1.0, 0.0, 0.0, -0.0000015),
              (9999.0, 31.0, 23.0, 59.0, 60.0), (1900.0, 0.0, -24.0, 0.0, 0.0),
              (2024.0, 1.0, 1e12, 0.0, 0.0), (2024.0, 1.0, 0.0, 0.0, 1e12 + 1),
              (2024.0, 1.0, 0.0, 0.0, 123456.789), (2024.0, 1.0, 0.0, 1e9, 0.0),
              (99.0, 15.0, 2.0, 30.0, 0.0), (2024.0, 1.0, 0.0, 0.0, 1e-7),
              (2024.0, 1.0, HUGE, 0.0, 0.0), (10000.0, 1.0, 0.0, 0.0, 0.0),
          ], [
              "DATETIME(y, 1, d, h, mi, s)", 'DATETIME(y, 1, d, h, mi, s, "UTC")',
              'DATETIME(y, 1, d, h, mi, s, "+00:00")', "HOUR(DATETIME(y, 1, d, h, mi, s))",
              "SECOND(DATETIME(y, 1, d, h, mi, s))",
              F('DATETIME(y, 3, d, h, mi, s, "Europe/Paris")', {"sql": "read at UTC"},
                {"polars": (_CHRONO_TZ, frozenset({6, 11}))}),
              F('HOUR(DATETIME(y, 3, d, h, mi, s, "Europe/Paris"))', {"sql": "read at UTC"}),
              F('DATETIME(y, 10, 27, 2, mi, s, "Europe/Paris")', {"sql": "read at UTC"},
                {"polars": (_CHRONO_TZ, frozenset({6}))}),
              F('DATETIME(y, 1, d, h, mi, s, "+05:00")', {"sql": "read at UTC"}),
              F('DATETIME(y, 1, d, h, mi, s, "-11:00")', {"sql": "read at UTC"}),
              F('DATETIME(y, 1, d, h, mi, s, "+05:30")',
                {"sql": "read at UTC", "polars": "whole number of hours"}),
              'DATETIME(y, 1, d, h, mi, s, "Mars/Olympus")',
          ]),
    # Clocks going forward (gaps) and back (repeated hours) in Paris: 2024-03-31 02:00-03:00
    # does not exist, 2024-10-27 02:00-03:00 happens twice.
    Table("date-times in a zone with DST", {"y": "Number", "mo": "Number", "d": "Number",
                                            "h": "Number", "mi": "Number"}, [
        (2024.0, 3.0, 31.0, 2.0, 30.0), (2024.0, 3.0, 31.0, 1.0, 59.0),
        (2024.0, 3.0, 31.0, 3.0, 0.0), (2024.0, 10.0, 27.0, 2.0, 30.0),
        (2024.0, 10.0, 27.0, 3.0, 0.0), (2024.0, 10.0, 27.0, 1.0, 59.0),
        (2024.0, 7.0, 1.0, 12.0, 0.0), (9999.0, 12.0, 31.0, 23.0, 30.0),
        (1.0, 1.0, 1.0, 0.0, 0.0),
    ], [
        F('DATETIME(y, mo, d, h, mi, 0, "Europe/Paris")', {"sql": "read at UTC"}),
        F('MINUTE(DATETIME(y, mo, d, h, mi, 0, "europe/paris"))', {"sql": "read at UTC"}),
        F('DATETIME(y, mo, d, h, mi, 0, "America/New_York")', {"sql": "read at UTC"}),
        F('DATEADD(DATETIME(y, mo, d - 1, h, mi, 0, "Europe/Paris"), 1, "day")',
          {"sql": "read at UTC"}),
        F('DATEADD(DATETIME(y, mo - 1, d, h, mi, 0, "Europe/Paris"), 1, "month")',
          {"sql": "read at UTC"}),
        F('DATEADD(DATETIME(y, mo, d, h, mi, 0, "Europe/Paris"), 90, "minutes")',
          {"sql": "read at UTC"}),
        F('DAY(TZCONVERT(DATETIME(y, mo, d, h, mi, 0), "Asia/Kolkata"))',
          {"sql": "read at UTC"}),
    ]),
    Table("reading dates", {"d": "Date", "rt": "Number"}, [
        (D(2023, 12, 24), 1.0), (D(2024, 1, 1), 2.0), (D(2024, 2, 29), 3.0),
        (D(2021, 1, 3), 11.0), (D(2024, 12, 30), 17.0), (D(1900, 2, 28), 4.0),
        (D(1900, 3, 1), 21.0), (D(1899, 12, 31), 0.0), (D(1, 1, 1), 16.9),
        (D(9999, 12, 31), 12.0), (D(2024, 12, 31), -1.0), (D(2027, 1, 1), 13.0),
        (D(2024, 6, 15), HUGE), (D(1970, 1, 1), 14.0), (D(1969, 12, 31), 15.0),
    ], [
        "YEAR(d)", "MONTH(d)", "DAY(d)", "HOUR(d)", "MINUTE(d)", "SECOND(d)", "WEEKDAY(d)",
        "WEEKDAY(d, rt)", "WEEKDAY(d, 2)", "WEEKNUM(d)", "WEEKNUM(d, rt)", "WEEKNUM(d, 21)",
        "ISOWEEKNUM(d)", "SERIAL(d)", "FROMSERIAL(SERIAL(d))", "DAYS(d, DATE(2000, 1, 1))",
    ]),
    Table("moving dates", {"d": "Date", "n": "Number", "u": "Text"}, [
        (D(2024, 1, 31), 1.0, "month"), (D(2024, 3, 31), -1.9, "Months"),
        (D(9999, 12, 1), 1.0, " year "), (D(2024, 1, 15), -13.0, "QUARTER"),
        (D(2024, 2, 29), -12.0, "years"), (D(2024, 1, 1), 2.0, "weeks"),
        (D(2024, 1, 1), 1.0, "hour"), (D(2024, 1, 1), 1.0, "fortnight"),
        (D(1, 1, 1), -1.0, "day"), (D(9999, 12, 31), 1.0, "days"),
        (D(2024, 5, 31), HUGE, "day"), (D(2024, 5, 31), -HUGE, "month"),
        (D(2024, 5, 31), 0.0, ""), (D(1900, 2, 28), 1.0, "\u2003Day\n"),
        (D(2023, 1, 31), 13.0, "minute"), (D(2024, 8, 31), -6.0, "quarters"),
        (D(1, 3, 31), -2.0, "month"), (D(1, 3, 31), -3.0, "month"),
    ], [
        "EDATE(d, n)", "EOMONTH(d, n)", "EDATE(d, 1)", "EOMONTH(d, 0)", "DATEADD(d, n, u)",
        'DATEADD(d, n, "month")', 'DATEADD(d, 7, u)', "d + n", "YEAR(EDATE(d, n))",
    ]),
    Table("differences", {"a": "Date", "b": "Date", "u": "Text", "k": "Number"}, [
        (D(2001, 6, 1), D(2002, 8, 15), "YD", 0.0), (D(2020, 2, 29), D(2024, 2, 28), "Y", 1.0),
        (D(2024, 1, 31), D(2024, 2, 29), "M", 2.0), (D(2011, 1, 31), D(2011, 3, 1), "md", 3.0),
        (D(2024, 2, 1), D(2024, 1, 1), "D", 4.0), (D(2024, 2, 29), D(2025, 2, 28), " ym ", 0.0),
        (D(2024, 1, 1), D(2026, 1, 1), "YD", 1.0), (D(2023, 3, 1), D(2024, 2, 29), "YD", 1.0),
        (D(2024, 3, 31), D(2024, 3, 31), "x", 5.0), (D(2023, 12, 31), D(2024, 1, 31), "MD", 0),
        (D(2000, 2, 28), D(2000, 2, 29), "YD", 4.0), (D(1900, 1, 31), D(1900, 3, 1), "MD", 2.0),
        (D(2024, 5, 31), D(2024, 4, 30), "Y", 2.0), (D(1999, 12, 31), D(2001, 1, 1), "YD", 1.0),
        (D(2023, 1, 30), D(2023, 2, 28), "MD", 0.0), (D(1, 1, 15), D(1, 1, 10), "D", -1.0),
        (D(2024, 2, 28), D(2025, 2, 28), "YM", 1.0), (D(2023, 2, 28), D(2024, 2, 29), "Y", 1.0),
        (D(2024, 2, 29), D(2028, 2, 29), "YD", 0.0), (D(1, 1, 31), D(1, 2, 1), "MD", 1.0),
        (D(2024, 6, 30), D(2024, 12, 31), "D", 0.0), (D(2024, 3, 31), D(2024, 9, 30), "D", 4.0),
        (D(2023, 7, 31), D(2024, 6, 30), "D", HUGE), (D(9998, 1, 1), D(9999, 12, 31), "YD", 1),
    ], [
        "DATEDIF(a, b, u)", 'DATEDIF(a, b, "MD")', 'DATEDIF(a, b, "YD")', 'DATEDIF(a, b, "Y")',
        "DAYS(a, b)", "DAYS(b, a)", "b - a", "YEARFRAC(a, b)", "YEARFRAC(a, b, k)",
        "YEARFRAC(a, b, 1)", "YEARFRAC(b, a, 4)",
    ]),
    Table("working days", {"a": "Date", "b": "Date", "n": "Number", "hs": "List<Date?>"}, [
        (D(2024, 1, 1), D(2024, 1, 31), 1.0, []),
        (D(2024, 1, 1), D(2024, 1, 31), -1.0, [D(2024, 1, 1), D(2024, 1, 6), None]),
        (D(2024, 1, 31), D(2024, 1, 1), 10.0, [D(2024, 1, 15), D(2024, 1, 15), D(2023, 12, 1)]),
        (D(2024, 1, 6), D(2024, 1, 7), 0.0, [D(2024, 1, 8)]),
        (D(2024, 1, 5), D(2024, 1, 5), 3.0, [D(2024, 1, 8), D(2024, 1, 9), D(2024, 1, 11)]),
        (D(2024, 1, 12), D(2024, 1, 12), -3.0, [D(2024, 1, 11), D(2024, 1, 9), D(2024, 1, 10)]),
        (D(2024, 1, 1), D(2024, 12, 31), 1e9, [D(2024, 12, 25), D(2024, 7, 4)]),
        (D(1, 1, 1), D(1, 1, 10), -1.0, []), (D(9999, 12, 31), D(9999, 12, 1), 1.0, []),
        (D(9999, 12, 30), D(1, 1, 1), 1.5, [D(9999, 12, 31)]),
        (D(2024, 2, 29), D(2024, 3, 1), -2.7, [None, None]),
        (D(2024, 3, 1), D(2024, 3, 31), 20.0, [D(2024, 3, 29), D(2024, 4, 1), D(2024, 4, 2)]),
        (D(2024, 3, 30), D(2024, 3, 31), -HUGE, []),
        (D(2024, 3, 4), D(2024, 3, 4), -1.0, [D(2024, 3, 1), D(2024, 2, 29), D(2024, 3, 4)]),
    ], [
        "NETWORKDAYS(a, b)", "NETWORKDAYS(a, b, hs)",
        "NETWORKDAYS(a, b, [DATE(2024, 1, 1), DATE(2024, 1, 15)])",
        "NETWORKDAYS.INTL(a, b, 7, hs)", 'NETWORKDAYS.INTL(a, b, "1000100", hs)',
        'NETWORKDAYS.INTL(a, b, "1111111")', "NETWORKDAYS.INTL(a, b, 11)",
        "NETWORKDAYS.INTL(a, b, 8, hs)", 'NETWORKDAYS.INTL(a, b, "0101")',
        F("NETWORKDAYS.INTL(a, b, n)", {"polars": "literal", "sql": "literal"}),
        "WORKDAY(a, n)", "WORKDAY(a, n, hs)", "WORKDAY(b, n, hs)",
        "WORKDAY(a, n, [DATE(2024, 1, 8), DATE(2024, 1, 8)])",
        "WORKDAY.INTL(a, n, 7, hs)", 'WORKDAY.INTL(a, n, "0000001", hs)',
        'WORKDAY.INTL(a, n, "1111111")', "WORKDAY.INTL(a, n, 0)", "WORKDAY.INTL(a, n, 17, hs)",
        'WORKDAY.INTL(a, n, "0110110", hs)',
    ]),
    Table("date-times", {"t": "DateTime", "n": "Number", "u": "Text"}, [
        (T(2024, 1, 1, 23, 0), 90.0, "minute"), (T(2024, 1, 31, 12, 0), 1.0, "month"),
        (T(2024, 3, 1, 0, 0, 59, 500000), -1.0, "day"), (T(1969, 12, 31, 23, 59, 59), 1.0, "s"),
        (T(9999, 12, 31, 23, 59), 1.0, "hour"), (T(1, 1, 1, 0, 30), -1.0, "hours"),
        (T(2024, 2, 29, 6, 0, 0, 499999), 1.0, "YEAR"), (T(2024, 2, 29, 6, 0), 3.0, "second"),
        (T(2024, 6, 30, 12, 0), 1e12, "second"), (T(2024, 6, 30, 12, 0), HUGE, "week"),
        (T(2000, 1, 1, 0, 0), 2.0, "quarter"), (T(2024, 5, 5, 5, 5, 5), -3.0, "bogus"),
        (T(1899, 12, 30, 12, 0), 0.0, "day"), (T(1900, 3, 1, 18, 0), 1.0, "day"),
    ], [
        "YEAR(t)", "MONTH(t)", "DAY(t)", "HOUR(t)", "MINUTE(t)", "SECOND(t)", "WEEKDAY(t, 2)",
        "WEEKNUM(t)", "ISOWEEKNUM(t)", "EDATE(t, n)", "EOMONTH(t, n)", "DATEADD(t, n, u)",
        'DATEADD(t, n, "minutes")', "DATEDIF(t, DATE(2024, 12, 31), \"D\")",
        "DAYS(t, DATE(2000, 1, 1))", "YEARFRAC(t, DATE(2024, 12, 31), 1)", "SERIAL(t)",
        'TZCONVERT(t, "UTC")', 'TZCONVERT(t, "+00:00")',
        F('TZCONVERT(t, "Europe/Paris")', {"sql": "read at UTC"}),
        F('HOUR(TZCONVERT(t, "America/New_York"))', {"sql": "read at UTC"}),
        F('TZCONVERT(t, "+05:00")', {"sql": "read at UTC"}),
        F('DAY(TZCONVERT(t, "-12:00"))', {"sql": "read at UTC"}),
        'TZCONVERT(t, "Nowhere/Special")',
        F("TZCONVERT(t, u)", {"polars": "literal", "sql": "literal"}),
    ]),
    Table("a zoned column", {"t": "DateTime", "n": "Number", "u": "Text"}, [
        (T(2024, 3, 30, 2, 30, tz=PARIS), 1.0, "day"),
        (T(2024, 3, 31, 1, 30, tz=PARIS), 1.0, "hour"),
        (T(2024, 10, 26, 2, 30, tz=PARIS), 1.0, "day"),
        (T(2024, 2, 29, 2, 30, tz=PARIS), 1.0, "month"),
        (T(2024, 1, 1, 0, 30, tz=PARIS), -1.0, "minute"),
        (T(2023, 12, 31, 23, 30, tz=PARIS), 0.0, "day"),
    ], [
        "YEAR(t)", "DAY(t)", "HOUR(t)", "DATEADD(t, n, u)", "SERIAL(t)", "EDATE(t, n)",
        'TZCONVERT(t, "UTC")', "WEEKDAY(t)",
    ], layouts=("polars-float", "polars-decimal"),
        polars_dtypes={"t": pl.Datetime("us", "Europe/Paris")}),
    Table("durations", {"v": "Duration"}, [
        (dt.timedelta(hours=18, minutes=45),), (dt.timedelta(days=2, seconds=59, microseconds=500000),),
        (dt.timedelta(seconds=-1),), (dt.timedelta(0),),
        (dt.timedelta(hours=23, minutes=59, seconds=59, microseconds=600000),),
        (dt.timedelta(microseconds=499999),), (dt.timedelta(days=-3, hours=5),),
    ], ["HOUR(v)", "MINUTE(v)", "SECOND(v)", "SERIAL(v)"]),
    Table("serial numbers", {"x": "Number"}, [
        (39448.0,), (45292.75,), (61.0,), (60.0,), (59.99,), (-1.0,), (0.0,), (-0.5,),
        (2958465.0,), (2958465.9,), (2958466.0,), (HUGE,), (1.0,), (60.5,), (-HUGE,),
    ], ["FROMSERIAL(x)", "SERIAL(FROMSERIAL(x))", "YEAR(FROMSERIAL(x))"]),
    Table("blanks (excel profile)", {"x": "Number?", "u": "Text?"}, [
        (None, None), (5.0, None), (None, "month"), (0.0, ""), (-3.0, "YD"),
    ], [
        "DATE(2024, x, 1)", "TIME(x, x, x)", "EDATE(DATE(2024, 1, 31), x)",
        'DATEADD(DATE(2024, 1, 31), x, u)', "DATEDIF(DATE(2020, 1, 31), DATE(2024, 3, 1), u)",
        "WEEKDAY(DATE(2024, 1, 1), x)", "FROMSERIAL(x)", "WORKDAY(DATE(2024, 1, 5), x)",
    ], profile="excel"),
    Table("the clock", {"x": "Number"}, [(1.0,)], [
        F("TODAY()", {"polars": "clock", "sql": "clock"}),
        F("NOW()", {"polars": "clock", "sql": "clock"}),
        F("YEAR(TODAY()) + x", {"polars": "clock", "sql": "clock"}),
    ]),
    Table("parsing texts", {"s": "Text"}, [("2024-03-01",), ("6:45 PM",)], [
        F("DATEVALUE(s)", {"polars": "no exact", "sql": "no exact"}),
        F("TIMEVALUE(s)", {"polars": "no exact", "sql": "no exact"}),
    ]),
]


@pytest.mark.parametrize("table, formula", E.table_cases(TABLES))
def test_engines_agree(table: Table, formula: F | str) -> None:
    check(table, formula)


# ------------------------------------------------------------------------------ decisions


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_overload_has_a_decision(spec: FunctionSpec) -> None:
    for slot in ("polars", "sql"):
        decided = declared_form(spec, slot)
        if isinstance(decided, Refuse):
            assert decided.reason
        for sig_ in spec.signatures:
            form = declared_form(spec, slot, sig_)
            assert isinstance(form, Refuse) or callable(form), (spec.name, slot, sig_)


def test_declaring_does_not_import_polars() -> None:
    import subprocess
    import sys

    code = ("import sys, formulane.functions.dates; "
            "print('polars' in sys.modules, 'formulane.columnar.forms.dates' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_every_function_is_in_a_table() -> None:
    import re

    text = " ".join(E.source_of(f) for t in TABLES for f in t.formulas)
    called = set(re.findall(r"([A-Z][A-Z0-9.]*)\(", text))
    missing = {s.name for s in SPECS} - called
    assert not missing, missing
