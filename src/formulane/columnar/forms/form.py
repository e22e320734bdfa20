"""A table entry: where a form is defined and how it is called; the families' loaders.

Contract: a `Form` names a function in a family module (``family`` is a plain function that
imports that module, on the first call of one of its forms, so declaring and compiling for one
backend never import the other backend's library). Every form receives the one contract,
`columnar.call.FormCall` (argument types, constants, numeric mode, the arguments' compiled
columns, ``let``, ``refuse``), first; ``style`` says what follows it:

- ``"call"`` (the default): ``fn(call, *bound, *values, **flags)``, the arguments' compiled
  values (their errors combined by the compiler); a form returns a value or
  ``(value, errors)``;
- ``"columns"``: ``fn(call, *bound, *columns, **flags)``, each argument's compiled column
  (value, error code, static type: the tests that see error values, ISERROR...).

The walk reads ``wants_call`` to bind the form to its `FormCall` (`columnar.walk.WithCall`) and
``wants_columns`` to pass columns; a host function's own form (`Registry.extend`) is a plain
callable of the values and declares neither. ``null_on_error`` (SQL) says the form's value is
already NULL wherever its error is set (see the field).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Literal, Mapping

Style = Literal["call", "columns"]


@dataclass(frozen=True, slots=True)
class Form:
    """One function's form on one backend (see the module docs)."""

    backend: Literal["polars", "sql"]
    family: Callable[[], ModuleType]
    attr: str
    bound: tuple[Any, ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)
    style: Style = "call"
    #: SQL: given arguments whose values are NULL wherever their errors are set, this form's
    #: value is NULL wherever its error is set (its own, and for an eager form the arguments'
    #: errors the walk combines: a NULL argument that errs gives a NULL value). The walk then
    #: keeps the result ``strict`` and the query writes no ``CASE WHEN error IS NULL THEN
    #: value END`` around it. Checked form by form on DuckDB over rows that err
    #: (tests/columnar/test_strict_null_on_error.py); never set without a case there.
    null_on_error: bool = False

    #: every table form takes the `FormCall` (a host function's plain callable does not)
    wants_call = True

    @property
    def wants_columns(self) -> bool:
        return self.style == "columns"

    @property
    def __name__(self) -> str:  # noqa: PLW3201 - reads like a function's in messages and tests
        return f"{self.backend}:{self.attr}"

    def __call__(self, *args: Any, call: Any = None) -> Any:
        from ..call import FormCall
        from ...errors import Unsupported
        from ...interpreter import ir

        fn = getattr(self.family(), self.attr)
        # the walk passes the FormCall it filled (`columnar.walk.WithCall`); a bare `ir.Call`
        # (a caller outside the walk) gets one without its columns
        if isinstance(call, ir.Call):
            call = FormCall(call, self.backend)
        if not isinstance(call, FormCall):
            raise Unsupported(f"the {self.backend} form {self.attr} needs the call's "
                              "argument types", function=self.attr, backend=self.backend,
                              reason="the backend did not pass the call being translated")
        return fn(call, *self.bound, *args, **self.flags)


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


def info_sql() -> ModuleType:
    from .math import info_sql

    return info_sql


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


def lists_across() -> ModuleType:
    from .lists import across

    return across


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
# Its forms are date algorithms written once for both backends (`dates.call_form`): FormCall
# forms that read the overload (Date, DateTime...) from the call's argument types, so one entry
# serves every overload of a function; declared here once, read into both tables by
# `dates_entries`.


DATES_OPS: dict[str, tuple[Callable[[], ModuleType], str]] = {
    "DATE": (dates_parts, "f_date"),
    "TIME": (dates_parts, "f_time"),
    "DATETIME": (dates_parts, "f_datetime"),
    "YEAR": (dates_parts, "f_year"),
    "MONTH": (dates_parts, "f_month"),
    "DAY": (dates_parts, "f_day"),
    "HOUR": (dates_parts, "f_hour"),
    "MINUTE": (dates_parts, "f_minute"),
    "SECOND": (dates_parts, "f_second"),
    "WEEKDAY": (dates_parts, "f_weekday"),
    "WEEKNUM": (dates_parts, "f_weeknum"),
    "ISOWEEKNUM": (dates_parts, "f_isoweeknum"),
    "TZCONVERT": (dates_parts, "f_tzconvert"),
    "SERIAL": (dates_parts, "f_serial"),
    "FROMSERIAL": (dates_parts, "f_fromserial"),
    "EDATE": (dates_arithmetic, "f_edate"),
    "EOMONTH": (dates_arithmetic, "f_eomonth"),
    "DATEADD": (dates_arithmetic, "f_dateadd"),
    "DATEDIF": (dates_arithmetic, "f_datedif"),
    "DAYS": (dates_arithmetic, "f_days"),
    "YEARFRAC": (dates_arithmetic, "f_yearfrac"),
    "NETWORKDAYS": (dates_arithmetic, "f_networkdays"),
    "NETWORKDAYS.INTL": (dates_arithmetic, "f_networkdays"),
    "WORKDAY": (dates_arithmetic, "f_workday"),
    "WORKDAY.INTL": (dates_arithmetic, "f_workday"),
}


#: The date forms whose SQL value is NULL on every row where their own error is set (each
#: masks its result with its error condition: `dates._base._to_date`, a lookup without a
#: default, a NULL in place of an out-of-range total), flagged ``null_on_error`` on the SQL
#: table (tests/columnar/test_strict_null_on_error.py runs each).
DATES_NULL_ON_ERROR = frozenset({
    "DATE", "TIME", "DATETIME", "WEEKDAY", "SERIAL", "FROMSERIAL", "EDATE", "EOMONTH",
    "DATEDIF", "YEARFRAC", "NETWORKDAYS.INTL", "WORKDAY", "WORKDAY.INTL",
})


def dates_entries(backend: Literal["polars", "sql"]) -> dict[str, Form]:
    """The dates family's entries of one backend's table (`DATES_OPS`)."""
    return {name: Form(backend, family, attr,
                       null_on_error=backend == "sql" and name in DATES_NULL_ON_ERROR)
            for name, (family, attr) in DATES_OPS.items()}
