"""Polars and SQL forms of the date and time family (private).

`dates.py` names these through its lazy `_P`/`_S` wrappers, resolved on first use, so declaring
a function never imports polars (nor this package). Each algorithm is written once, over an
"ops" object (`PolarsOps` or `SqlOps`) whose values support Python's operators, and mirrors
the scalar implementation in `_calendar`: the same arithmetic on proleptic Gregorian ordinals
(``date.toordinal()``), the same errors in the same order.

Conventions shared by both backends:

- Dates compute as int64 ordinals (1 is 0001-01-01); a date is built only from an ordinal that
  passed the scalar's range test, and every value that could make an engine raise (an int64
  overflow, a date out of range) is masked first, so no row can abort the query.
- Number arguments are truncated toward zero as `_calendar.to_int` does; a magnitude of 1e15
  or more is #NUM! wherever the scalar's answer is #NUM! for it anyway (each form says why).
- DateTime fields are read in the value's zone: in polars the column's own zone (one zone per
  column, the wall clock of ``dt.replace_time_zone(None)``); in SQL a TIMESTAMPTZ is an
  instant and is read at UTC (``AT TIME ZONE 'UTC'``, ``EPOCH_US``), never in the session's
  zone. So SQL has no form for what would need another zone (TZCONVERT to a zone other than
  UTC, DATETIME in another zone), and polars none for a zone that is not a literal.
- Texts naming units ("month", "YD") are trimmed of exactly the characters Python's
  ``str.strip`` removes and compared after lower/upper-casing, as the scalar does.
- Holiday lists may be columns: polars injects the row's bounds into the list by broadcast
  arithmetic (``list - column``) and counts inside ``list.eval``; SQL uses list lambdas that
  capture the row's columns (DuckDB ``list_filter(xs, lambda x: x > col)``).
- Weekend codes must be literals (their mask decides the shape of the expression); a weekend
  that is a column is refused.

Sharing. Neither engine has a let: an expression used twice is written twice, and chains of
reuse grow exponentially (polars walks its expression trees without memo, SQL text repeats).
So the algorithms are generators: ``v = yield expr`` names a value (helpers join the chain with
``yield from``). Polars binds it as a struct field (``pl.struct(v0=...).struct.with_fields(
v1=f(pl.field("v0")))``, outputs read from the last struct), SQL as a lambda parameter
(``LIST_TRANSFORM([expr], LAMBDA v : ...)[1]``): the forms stay linear in the formula's size.

Layout: `_base` (constants, refusals, `program`, the calendar helpers), `ops` (`PolarsOps`,
`SqlOps` and the SQL value `Q`), `parts` (building dates and reading their parts), `arithmetic`
(moving dates, differences, working days); `run` is the one entry point.
"""

from __future__ import annotations

from typing import Any, Callable

from .arithmetic import (
    f_dateadd, f_datedif, f_days, f_edate, f_eomonth, f_networkdays, f_workday, f_yearfrac,
)
from .ops import PolarsOps, SqlOps
from .parts import (
    f_date, f_datetime, f_day, f_fromserial, f_hour, f_isoweeknum, f_minute, f_month, f_second,
    f_serial, f_time, f_tzconvert, f_weekday, f_weeknum, f_year,
)


FORMS: dict[str, Callable[..., Any]] = {
    "date": f_date, "time": f_time, "datetime": f_datetime, "year": f_year, "month": f_month,
    "day": f_day, "hour": f_hour, "minute": f_minute, "second": f_second,
    "weekday": f_weekday, "weeknum": f_weeknum, "isoweeknum": f_isoweeknum, "edate": f_edate,
    "eomonth": f_eomonth, "dateadd": f_dateadd, "datedif": f_datedif, "days": f_days,
    "yearfrac": f_yearfrac, "networkdays": f_networkdays, "workday": f_workday,
    "tzconvert": f_tzconvert, "serial": f_serial, "fromserial": f_fromserial,
}
_OPS: dict[str, type[PolarsOps] | type[SqlOps]] = {"polars": PolarsOps, "sql": SqlOps}


def run(backend: str, name: str, kinds: tuple[str | None, ...], *args: Any) -> Any:
    """The ``backend`` form of ``name`` for an overload with these parameter kinds (Date,
    DateTime...), applied to the backend's values (called by `_lazy_forms.lazy_form`)."""
    o = _OPS[backend]()
    out = FORMS[name](o, kinds, *[o.wrap(a) for a in args])
    if isinstance(out, tuple):
        value, errors = out
        return o.unwrap(value), [(o.unwrap(c), code) for c, code in errors]
    return o.unwrap(out)
