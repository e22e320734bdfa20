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
LAMBDA v : ...)[1]``): the forms stay linear in the formula's size.

The call. Every form is a FormCall form (``style="call"``, `columnar.call`): `call_form` turns
an algorithm ``f(o, call, *args)`` into ``form(call, *values)``, and `run_ops` runs it. An
algorithm reads its overload from the call (``call.kind(i)``: Date, DateTime, Duration...), so
one table entry serves every overload of a function (`form.DATES_OPS`), and its literal
arguments (units, a basis, weekend codes, holiday lists, zones) through ``call.const(i)``
(`interpreter.fold.constant`, the one reader of constants), never from the built values. On
SQL, a constant argument reaches the algorithm as a literal built from that value
(`SqlOps.const_arg`). What stays: the algorithms fold the intermediate values they build
themselves (a literal year makes a literal month index; `sqlops.constant` and `_fold_binary`
compute such expressions with the engine's semantics; polars folds a constant yielded value
once, `ops._fold`): those are not arguments, and no FormCall knows them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from sqlglot import exp

from .ops import PolarsOps, SqlOps
from .sqlfold import constant

if TYPE_CHECKING:
    from ...call import FormCall

_OPS: dict[str, type[PolarsOps] | type[SqlOps]] = {"polars": PolarsOps, "sql": SqlOps}


def run_ops(call: FormCall, algorithm: Callable[..., Any], *args: Any) -> Any:
    """Applies the date algorithm (``f(o, call, *args)`` of `parts` or `arithmetic`) to the
    backend's values of ``call`` (a `FormCall`): the overload and the constant arguments are
    the call's."""
    o = _OPS[call.backend]()
    out = algorithm(o, call, *[o.arg(call, i, a) for i, a in enumerate(args)])
    if isinstance(out, tuple):
        value, errors = out
        pairs = [(o.unwrap(c), code) for c, code in errors]
        if o.backend == "sql":
            return o.unwrap(value), _sql_errors(pairs)
        return o.unwrap(value), pairs
    return o.unwrap(out)


def _sql_errors(pairs: list[tuple[Any, str]]) -> Any:
    """The SQL errors of ``pairs`` (condition, code), checked in order: a condition known
    FALSE (or NULL) never raises its error, one known TRUE ends the chain (its code is the
    ELSE, or the whole error when it comes first: ``'#NUM!'``, no CASE)."""
    kept: list[tuple[Any, str]] = []
    for c, code in pairs:
        known, truth = constant(c)
        if known and truth is True:
            if not kept:
                return exp.Literal.string(code)
            return exp.Case(ifs=[exp.If(this=k, true=exp.Literal.string(v)) for k, v in kept],
                            default=exp.Literal.string(code))
        if not (known and (truth is False or truth is None)):
            kept.append((c, code))
    if len(kept) == 1:
        c, code = kept[0]
        inner = c.unnest()
        held = inner.this.unnest() if isinstance(inner, exp.Not) else None
        if isinstance(held, exp.Coalesce) and len(held.expressions) == 1 \
                and constant(held.expressions[0]) == (True, False):
            # NOT COALESCE(t, FALSE): the code where t does not hold, NULL included, is the
            # ELSE of t (no NOT, no COALESCE)
            return exp.Case(ifs=[exp.If(this=held.this, true=exp.Null())],
                            default=exp.Literal.string(code))
    return kept


def call_form(algorithm: Callable[..., Any]) -> Callable[..., Any]:
    """The table's form of a date algorithm: ``form(call, *values)`` (``style="call"``)."""

    def form(call: FormCall, *args: Any) -> Any:
        return run_ops(call, algorithm, *args)

    form.__name__ = getattr(algorithm, "__name__", "form")
    form.__doc__ = algorithm.__doc__
    return form
