"""Polars and SQL forms of the date and time family (private).

The form tables (`polars_table`, `sql_table`) name the ``f_<name>`` algorithms of `parts` and
`arithmetic`; declaring a function never imports polars (nor this package). Each algorithm is
written once, over an "ops" object (`PolarsOps` or `SqlOps`) whose values support Python's
operators, and mirrors the scalar implementation in `_calendar`: the same arithmetic on
proleptic Gregorian ordinals (``date.toordinal()``), the same errors in the same order.

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

Sharing. An expression used twice is written twice, and chains of reuse grow exponentially
(polars walks its expression trees without memo, SQL text repeats). So the algorithms are
generators: ``v = yield expr`` names a value (helpers join the chain with ``yield from``).
Polars binds it as a struct field (``pl.struct(v0=...).struct.with_fields(v1=f(pl.field("v0")))``,
outputs read from the last struct); SQL through the `let` kit (`columnar.sql.let`: a column of a
lateral subquery, shared by the form's value and its error conditions), or, where no binder is
active (a lambda body, SQLite, BigQuery), as a list-lambda parameter (``LIST_TRANSFORM([expr],
LAMBDA v : ...)[1]``): the forms stay linear in the formula's size. What the compiler knows is
decided when compiling: SQL literals (a year, a date, a unit, a holiday list) are folded with
the engine's semantics (`sqlops.constant`), weekend masks must be literals anyway.

Layout: `_base` (constants, refusals, `program`, the calendar helpers), `ops` (`PolarsOps`),
`sqlops` (`SqlOps`, the SQL value `Q` and the folding), `parts` (building dates and reading
their parts), `arithmetic` (moving dates, differences, working days); `run_ops` is the one entry
point.
"""

from __future__ import annotations

from typing import Any, Callable

from .ops import PolarsOps, SqlOps
from .sqlops import constant

_OPS: dict[str, type[PolarsOps] | type[SqlOps]] = {"polars": PolarsOps, "sql": SqlOps}


def run_ops(backend: str, form: Callable[..., Any], kinds: tuple[str | None, ...],
            *args: Any) -> Any:
    """Applies the date algorithm ``form`` (``f_<name>`` of `parts` or `arithmetic`) for an
    overload with these parameter kinds (Date, DateTime...) to the backend's values (called by
    `form.Form` for the table entries marked ``style="ops"``)."""
    o = _OPS[backend]()
    out = form(o, kinds, *[o.wrap(a) for a in args])
    if isinstance(out, tuple):
        value, errors = out
        pairs = [(o.unwrap(c), code) for c, code in errors]
        if o.backend == "sql":  # a condition known FALSE (or NULL) never raises its error
            pairs = [(c, code) for c, code in pairs if constant(c)[1] is not False
                     and constant(c) != (True, None)]
        return o.unwrap(value), pairs
    return o.unwrap(out)
