"""A table entry: where a form is defined and how it is called; the families' loaders.

Contract: a `Form` names a function in a family module (``family`` is a plain function that
imports that module, on the first call of one of its forms, so declaring and compiling for one
backend never import the other backend's library) and how the compilers call it (``style``):

- ``"values"``: ``fn(*bound, *values, **flags)``, the arguments' compiled values (their errors
  combined by the compiler); a form returns a value or ``(value, errors)``;
- ``"columns"``: the same with each argument's compiled column (value, error code, static type:
  the tests that see error values, ISERROR...);
- ``"call"``: ``fn(FormCall, *bound, *values, **flags)`` (`columnar.call`: argument types,
  constants, numeric mode, the arguments' compiled columns, ``let``, ``refuse``);
- ``"call_columns"``: ``fn(FormCall, *bound, *columns, **flags)``, the ``"columns"`` form
  that also takes the call;
- ``"ops"``: a date algorithm written once over an ops object (`dates.run_ops`), with the
  overload's parameter kinds bound first.

The compilers read ``wants_call`` and ``wants_columns`` to know what to pass (see
`columnar.polars.compiler` and `columnar.sql.compiler`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Literal, Mapping

Style = Literal["values", "columns", "call", "call_columns", "ops"]


@dataclass(frozen=True, slots=True)
class Form:
    """One function's form on one backend (see the module docs)."""

    backend: Literal["polars", "sql"]
    family: Callable[[], ModuleType]
    attr: str
    bound: tuple[Any, ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)
    style: Style = "values"

    @property
    def wants_call(self) -> bool:
        return self.style in ("call", "call_columns")

    @property
    def wants_columns(self) -> bool:
        return self.style in ("columns", "call_columns")

    @property
    def __name__(self) -> str:  # noqa: PLW3201 - reads like a function's in messages and tests
        return f"{self.backend}:{self.attr}"

    def __call__(self, *args: Any, call: Any = None) -> Any:
        fn = getattr(self.family(), self.attr)
        if self.style in ("call", "call_columns"):
            from ..call import FormCall
            from ...errors import Unsupported
            from ...interpreter import ir

            # the walk passes the FormCall it filled (`columnar.walk.WithCall`); a bare
            # `ir.Call` (a caller outside the walk) gets one without its columns
            if isinstance(call, ir.Call):
                call = FormCall(call, self.backend)
            if not isinstance(call, FormCall):
                raise Unsupported(f"the {self.backend} form {self.attr} needs the call's "
                                  "argument types", function=self.attr, backend=self.backend,
                                  reason="the backend did not pass the call being translated")
            return fn(call, *self.bound, *args, **self.flags)
        if self.style == "ops":
            from .dates import run_ops

            return run_ops(self.backend, fn, *self.bound, *args)
        return fn(*self.bound, *args, **self.flags)


# ------------------------------------------------------------------------- family loaders
# One plain import each: grep, an IDE and the layering test follow them.


def operators_polars() -> ModuleType:
    from .operators import polars

    return polars


def operators_sql() -> ModuleType:
    from .operators import sql

    return sql


def math_polars() -> ModuleType:
    from .math import polars

    return polars


def math_sql() -> ModuleType:
    from .math import sql

    return sql


def elementwise() -> ModuleType:
    from .math import elementwise

    return elementwise


def elementwise_sql() -> ModuleType:
    from .math import elementwise_sql

    return elementwise_sql


def text_case() -> ModuleType:
    from .text import case

    return case


def text_search() -> ModuleType:
    from .text import search

    return search


def text_regex() -> ModuleType:
    from .text import regex

    return regex


def text_formatting() -> ModuleType:
    from .text import formatting

    return formatting


def lists_aggregates() -> ModuleType:
    from .lists import aggregates

    return aggregates


def lists_arrays() -> ModuleType:
    from .lists import arrays

    return arrays


def lists_criteria() -> ModuleType:
    from .lists import criteria

    return criteria


def lists_lookup() -> ModuleType:
    from .lists import lookup

    return lookup


def lists_statistics() -> ModuleType:
    from .lists import statistics

    return statistics


def dates_parts() -> ModuleType:
    from .dates import parts

    return parts


def dates_arithmetic() -> ModuleType:
    from .dates import arithmetic

    return arithmetic


# -------------------------------------------------------------------- the dates family
# Its forms are date algorithms written once over an ops object (`dates.run_ops`), the same
# entry for both backends: declared here once, read into both tables by `dates_entries`.


_OpsEntry = tuple[Callable[[], ModuleType], str, tuple[Any, ...]]


def _d(family: Callable[[], ModuleType], attr: str, kinds: tuple[Any, ...]) -> _OpsEntry:
    return family, attr, kinds


DATES_OPS: dict[str, _OpsEntry] = {
    "DATE": _d(dates_parts, "f_date", ()),
    "TIME": _d(dates_parts, "f_time", ()),
    "DATETIME": _d(dates_parts, "f_datetime", ()),
    "YEAR": _d(dates_parts, "f_year", ("Date",)),
    "YEAR(DateTime)": _d(dates_parts, "f_year", ("DateTime",)),
    "MONTH": _d(dates_parts, "f_month", ("Date",)),
    "MONTH(DateTime)": _d(dates_parts, "f_month", ("DateTime",)),
    "DAY": _d(dates_parts, "f_day", ("Date",)),
    "DAY(DateTime)": _d(dates_parts, "f_day", ("DateTime",)),
    "HOUR": _d(dates_parts, "f_hour", ("DateTime",)),
    "HOUR(Duration)": _d(dates_parts, "f_hour", ("Duration",)),
    "HOUR(Date)": _d(dates_parts, "f_hour", ("Date",)),
    "MINUTE": _d(dates_parts, "f_minute", ("DateTime",)),
    "MINUTE(Duration)": _d(dates_parts, "f_minute", ("Duration",)),
    "MINUTE(Date)": _d(dates_parts, "f_minute", ("Date",)),
    "SECOND": _d(dates_parts, "f_second", ("DateTime",)),
    "SECOND(Duration)": _d(dates_parts, "f_second", ("Duration",)),
    "SECOND(Date)": _d(dates_parts, "f_second", ("Date",)),
    "WEEKDAY": _d(dates_parts, "f_weekday", ("Date", None)),
    "WEEKDAY(Date, Number)": _d(dates_parts, "f_weekday", ("Date", "Number")),
    "WEEKDAY(DateTime, Number)": _d(dates_parts, "f_weekday", ("DateTime", "Number")),
    "WEEKNUM": _d(dates_parts, "f_weeknum", ("Date", None)),
    "WEEKNUM(Date, Number)": _d(dates_parts, "f_weeknum", ("Date", "Number")),
    "WEEKNUM(DateTime, Number)": _d(dates_parts, "f_weeknum", ("DateTime", "Number")),
    "ISOWEEKNUM": _d(dates_parts, "f_isoweeknum", ("Date",)),
    "ISOWEEKNUM(DateTime)": _d(dates_parts, "f_isoweeknum", ("DateTime",)),
    "EDATE": _d(dates_arithmetic, "f_edate", ("Date", None)),
    "EDATE(Date, Number)": _d(dates_arithmetic, "f_edate", ("Date", "Number")),
    "EDATE(DateTime, Number)":
        _d(dates_arithmetic, "f_edate", ("DateTime", "Number")),
    "EOMONTH": _d(dates_arithmetic, "f_eomonth", ("Date", None)),
    "EOMONTH(Date, Number)": _d(dates_arithmetic, "f_eomonth", ("Date", "Number")),
    "EOMONTH(DateTime, Number)":
        _d(dates_arithmetic, "f_eomonth", ("DateTime", "Number")),
    "DATEADD": _d(dates_arithmetic, "f_dateadd", ("Date", "Number", "Text")),
    "DATEADD(DateTime, Number, Text)":
        _d(dates_arithmetic, "f_dateadd", ("DateTime", "Number", "Text")),
    "DATEDIF": _d(dates_arithmetic, "f_datedif", ("Date", "Date", None)),
    "DATEDIF(Date, Date, Text)":
        _d(dates_arithmetic, "f_datedif", ("Date", "Date", "Text")),
    "DATEDIF(Date, DateTime, Text)":
        _d(dates_arithmetic, "f_datedif", ("Date", "DateTime", "Text")),
    "DATEDIF(DateTime, Date, Text)":
        _d(dates_arithmetic, "f_datedif", ("DateTime", "Date", "Text")),
    "DATEDIF(DateTime, DateTime, Text)":
        _d(dates_arithmetic, "f_datedif", ("DateTime", "DateTime", "Text")),
    "DAYS": _d(dates_arithmetic, "f_days", ("Date", "Date")),
    "DAYS(Date, DateTime)": _d(dates_arithmetic, "f_days", ("Date", "DateTime")),
    "DAYS(DateTime, Date)": _d(dates_arithmetic, "f_days", ("DateTime", "Date")),
    "DAYS(DateTime, DateTime)":
        _d(dates_arithmetic, "f_days", ("DateTime", "DateTime")),
    "YEARFRAC": _d(dates_arithmetic, "f_yearfrac", ("Date", "Date", None)),
    "YEARFRAC(Date, Date, Number)":
        _d(dates_arithmetic, "f_yearfrac", ("Date", "Date", "Number")),
    "YEARFRAC(Date, DateTime, Number)":
        _d(dates_arithmetic, "f_yearfrac", ("Date", "DateTime", "Number")),
    "YEARFRAC(DateTime, Date, Number)":
        _d(dates_arithmetic, "f_yearfrac", ("DateTime", "Date", "Number")),
    "YEARFRAC(DateTime, DateTime, Number)":
        _d(dates_arithmetic, "f_yearfrac", ("DateTime", "DateTime", "Number")),
    "NETWORKDAYS": _d(dates_arithmetic, "f_networkdays", ()),
    "NETWORKDAYS.INTL": _d(dates_arithmetic, "f_networkdays", ()),
    "WORKDAY": _d(dates_arithmetic, "f_workday", ()),
    "WORKDAY.INTL": _d(dates_arithmetic, "f_workday", ()),
    "TZCONVERT": _d(dates_parts, "f_tzconvert", ("DateTime", "Text")),
    "SERIAL": _d(dates_parts, "f_serial", ("Date",)),
    "SERIAL(DateTime)": _d(dates_parts, "f_serial", ("DateTime",)),
    "SERIAL(Duration)": _d(dates_parts, "f_serial", ("Duration",)),
    "FROMSERIAL": _d(dates_parts, "f_fromserial", ("Number",)),
}


def dates_entries(backend: Literal["polars", "sql"]) -> dict[str, Form]:
    """The dates family's entries of one backend's table (``style="ops"``, `DATES_OPS`)."""
    return {name: Form(backend, family, attr, (kinds,), {}, "ops")
            for name, (family, attr, kinds) in DATES_OPS.items()}
