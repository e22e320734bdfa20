"""SQL decimal mode over lists of numbers: what the SQL list forms read and how they sum.

Contract: a list whose engine type may be DOUBLE[] or FLOAT[] (a column whose type the caller
did not give, an expression of one) is read by a list form as the scalar engine reads its
items, each the number its shortest text shows, and a row holding an item DECIMAL(38, 18)
cannot hold (|x| >= 1e20, inf, NaN) is that row's #NUM! (docs/columnar.md, "SQL decimal
policy"; polars decimal mode reads such a list alike, `columnar.polars.compiler.
_decimal_float_list`). Each SQL list form is decorated with what it does with the items
(`_sql_reading`, `_sql_reading_doubles`, `_sql_checking`, `_sql_picking`,
`_sql_reading_criteria`): one reading, here, for every form. Decimal sums and means never abort
the query (`_sql_sum`, `_sql_mean`): DuckDB's DECIMAL sum aborts on an overflow, even of a
partial sum. Float mode is untouched: every decorator passes its form through.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from sqlglot import exp

from ...sql.kit import dtype, first_error as _first_error, own_errors as _own_errors
from ....interpreter import ir
from ._base import (
    FormCall, _case, _coalesce, _f, _is_null, _literal_sum, _n, _or, _sql_checked,
)


#: The decimal mode's SQL number type: DECIMAL(38, 18) holds |x| < 1e20.
_D18 = "DECIMAL(38, 18)"


def _sql_needs_reading(c: FormCall, i: int) -> bool:
    """Whether list argument ``i`` is read item by item (`_sql_read`): SQL decimal mode, a list
    of numbers whose engine type may be DOUBLE[] or FLOAT[] (a column whose type the caller
    did not give, an expression of one). A list written out (``[a, 1]``) is not: the compiler
    reads its items as it reads any number (`SqlCompiler.list_of`)."""
    if c.backend == "polars" or c.numbers != "decimal" or i >= len(c.args):
        return False
    t = c.type(i)
    if t.kind != "List" or t.elem is None or t.elem.kind != "Number":
        return False
    a = c.args[i]
    if isinstance(a, (ir.ListOf, ir.Const)) or (
            type(a) is ir.Call and a.spec.keeps_items and a.args
            and a.args[0].type.kind == "List"
            and any(isinstance(x, ir.Lambda) for x in a.args)):
        return False
    col = c.column(i)
    if col is None:  # a higher-order call's list (no columns known): read it
        return True
    return bool(getattr(col, "maybe_double", False) or getattr(col, "double", False))


def _sql_read(c: FormCall, value: exp.Expr, kind: str = "exact"
              ) -> tuple[exp.Expr, exp.Expr]:
    """A list of numbers as decimal mode reads it: ``(items, lost)``, the items each a
    DECIMAL(38, 18), and whether an item that type cannot hold (|x| >= 1e20, inf, NaN, an
    integer or DECIMAL(38, 0) past 1e20) is in it: that row's #NUM!, as polars decimal mode
    reads a list of floats (`columnar.polars.compiler._decimal_float_list`).

    Each item is read through its text, a DOUBLE's or FLOAT's shortest decimal, as the
    compiler reads a DOUBLE column (`sql_arith.decimal_cast`): an engine's own cast summed
    [0.1, 0.2] to 0.30000000000000004, and ROUNDDOWN(x, 2) in a MAP took a DOUBLE 0.29 for
    0.28999... (A DECIMAL's or an integer's text is its own digits: the same value.) One cast
    of the whole list, ``TRY_CAST(CAST(xs AS TEXT[]) AS DECIMAL(38, 18)[])``: 50 characters
    and, over 300k rows of five DOUBLEs, 170 ms on DuckDB (one thread) where a lambda casting
    item by item took 190. A TRY_CAST (``safe``: Spark writes TRY_CAST only so; Java's
    "1.0E21" reads as DuckDB's "1e+21" does): an item past the range is a NULL, never an
    aborted query.

    ``kind`` "doubles", for a form that computes in DOUBLE anyway (products, moments,
    interpolations): the items as DOUBLEs, which a DOUBLE's text reads back bit for bit, so
    only a FLOAT list is read through its text (a FLOAT 0.1 is 0.10000000149011612 as a
    DOUBLE). DuckDB settles the TYPEOF test when planning: a DOUBLE or DECIMAL list costs a
    cast at most, also where the form reads the list item by item inside a lambda
    (SUMPRODUCT(xs, xs) read through the text took 10x its time); other dialects read the
    text (`dialects._shortest`). ``kind`` "check", for a form that only orders or compares
    items (MATCH, COUNTIF, RANK) or picks one (`_sql_picking` reads the one picked): the list
    as it is, only ``lost`` tested; DOUBLEs order and compare as their shortest decimals do.

    ``lost`` reads the list's extremes, not the items read (NaN is the largest DOUBLE in
    DuckDB, Spark and PostgreSQL): counting the items read made DuckDB read them twice (SUM:
    437 -> 260 ms). They are compared with the DOUBLE 1e20 (an exact 10^20 does not bind
    against a DECIMAL(38, 18) list), so a DECIMAL item within 8192 of 1e20, which that DOUBLE
    rounds onto, counts as past it."""
    text = exp.Cast(this=value.copy(), to=dtype("TEXT[]"))
    limit = exp.Literal.number("1e20")
    lost = _or(exp.GTE(this=_f("LIST_MAX", value.copy()), expression=limit),
               exp.LTE(this=_f("LIST_MIN", value.copy()), expression=exp.Neg(this=limit.copy())))
    if kind == "check":
        return value, lost
    if kind == "exact":
        read = exp.TryCast(this=text, to=dtype(_D18 + "[]"), safe=True)
        read.meta[_SOURCE] = value.copy()  # for a sum's range test (`_sql_source`)
        return read, lost
    floats = exp.In(this=_f("TYPEOF", value.copy()), expressions=[exp.Literal.string("FLOAT[]")])
    # (the ELSE branch as it is: the CASE joins it with the DOUBLE[] of the THEN branch)
    doubles = _case([(floats, exp.Cast(this=text, to=dtype("DOUBLE[]")))], value.copy())
    return doubles, lost


def _blanks_on_error(c: FormCall) -> bool:
    """Whether the SQL table flags the call's form ``null_on_error`` (`forms.form.Form`)."""
    from ..sql_table import SQL

    form = SQL.get(c.name)
    return bool(getattr(form, "null_on_error", False))


def _widened(c: FormCall, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """A list column of exact numbers given so (``column_types``: DECIMAL(18, 2)[]) as
    DECIMAL(38, 18)[], for a form computing in DOUBLE: DuckDB's LIST_MEDIAN and quantiles of a
    DECIMAL(18, 2)[] keep its scale (the median of [1.25, 2.5] was 1.87, not 1.875)."""
    out = list(values)
    for i in range(min(len(values), len(c.args))):
        t = c.type(i)
        if t.kind == "List" and t.elem is not None and t.elem.kind == "Number" \
                and isinstance(c.args[i], ir.Var) and isinstance(values[i], exp.Column):
            out[i] = exp.Cast(this=values[i], to=dtype(_D18 + "[]"))
    return tuple(out)


def _reader(kind: str | Callable[[dict[str, Any]], str]
            ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator of SQL list forms reading their lists as `_sql_read`'s ``kind`` says
    (a function of the form's flags where the form serves several functions)."""
    def decorate(form: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(form)
        def reading(c: FormCall, *values: Any, **flags: Any) -> Any:
            read = [i for i in range(min(len(values), len(c.args)))
                    if _sql_needs_reading(c, i) and values[i] is not None
                    and not isinstance(values[i], exp.Null)]
            if not read:
                if kind == "interpolates" and c.numbers == "decimal":
                    values = _widened(c, values)
                return form(c, *values, **flags)
            how = kind(flags) if callable(kind) else kind
            how = "doubles" if how == "interpolates" else how
            if any(isinstance(a, ir.Lambda) for a in c.args):
                how = "exact"  # a lambda's body takes its parameter for an exact number
            picks = how == "pick" and c.node.type.kind == "Number"
            how = "check" if how == "pick" else how
            args = list(values)
            done: dict[str, tuple[exp.Expr, exp.Expr]] = {}  # SUMPRODUCT(xs, xs): once
            for i in read:
                key = args[i].sql()
                if key not in done:
                    done[key] = _sql_read(c, args[i], how)
                args[i] = done[key][0]
            out = form(c, *args, **flags)
            value, own = out if isinstance(out, tuple) else (out, None)
            lost = [gone for _, gone in done.values()]
            gone = _or(*lost) if len(lost) > 1 else lost[0]
            # (``gone`` and the value picked are written where they are read, not bound: a
            # binding is a lateral join, which cost DuckDB more than reading two list
            # extremes again, INDEX(xs, 2) 3.5 -> 237 ms over 300k rows, 59 inline)
            if picks or _blanks_on_error(c):
                # the table promises NULL wherever the error is set (`Form.null_on_error`);
                # a blank list (no extremes) keeps the value
                value = _case([(gone, exp.Null())], value)
            if picks:
                # the item picked, read as its text shows: one text a row, not one an item;
                # whatever its type, so the value is written once (a DECIMAL's text is its
                # digits; `decimal_cast`'s TYPEOF test writes it three times); NULL above
                # where an item is past the range, so the cast cannot fail
                value = exp.Cast(this=exp.Cast(this=value, to=dtype("TEXT")), to=dtype(_D18))
            return value, _first_error(_own_errors([(gone.copy(), "#NUM!")]),
                                       _own_errors(own))

        return reading

    return decorate


#: A SQL list form whose list-of-number arguments are read as decimal mode reads them
#: (`_sql_read`) before it sees them, the #NUM! of an item past the range first among its
#: errors (an argument's error, as the scalar engine meets it when it reads the list). Float
#: mode, lists written out and lists whose items are exact already pass through unchanged.
#: Each form says what it does with the items: sums them or returns a list of them (read
#: exactly), computes in DOUBLE, only orders and compares them, or picks one (`_sql_picking`:
#: the item picked is read as its text shows, one text a row); a form with a lambda reads
#: them exactly.
_sql_reading = _reader("exact")
_sql_reading_doubles = _reader("doubles")
#: ... and interpolates between two items (MEDIAN, percentiles), which DuckDB does in the
#: items' own DECIMAL type: an exact list given so is widened first (`_widened`).
_sql_reading_interpolated = _reader("interpolates")
_sql_checking = _reader("check")
_sql_picking = _reader("pick")


def _sql_sums_or_checks(flags: dict[str, Any]) -> str:
    """The *IF(S) forms, by their table flag ``how``: a sum or mean reads its items exactly,
    an extreme picks one, a count only checks them."""
    how = flags["how"]
    if how in ("sum", "average"):
        return "exact"
    return "pick" if how in ("max", "min") else "check"


_sql_reading_criteria = _reader(_sql_sums_or_checks)


def _sql_sum(c: FormCall, items: exp.Expr, errors: Sequence[tuple[Any, str]] = (),
             tracked: bool = False,
             mark: Callable[[FormCall, exp.Expr], exp.Expr] = lambda c, e: e,
             span: tuple[int, int | None] | None = None
             ) -> tuple[exp.Expr, list[tuple[Any, str]]]:
    """The sum of a list of numbers (0 for none) and its errors after ``errors``. Float mode:
    the DOUBLE sum, range-tested unless ``tracked`` (`_sql_checked`). Decimal mode: DuckDB's
    exact DECIMAL sum, which aborts the whole query where the sum, or only a partial sum as in
    [9e19, 9e19, -9e19], passes its type ("Overflow in HUGEINT addition"); under DuckDB's
    ``TRY`` such a row is NULL instead (no cost per row: 105 ms with or without it), and
    there the sum of the items' DOUBLEs decides: #NUM! from 1e20 on, else that sum
    (relative 1e-16, where polars' `_pl_sum` is exact: a partial sum past 1.7e20 on the way
    to a total below 1e20 is rare). ``mark``: the form's mark of its
    float sum (`aggregates._doubles`). ``span``: the arguments summed, when the sum is of
    arguments (not of a list the form built): literals alone, whose magnitudes add up below
    1e20, are summed as they are (`_literal_sum`)."""
    if c.numbers == "float":
        total = _coalesce(mark(c, _f("LIST_SUM", items)), _n(0))
        return _sql_checked(c, total, errors, tracked=tracked)
    if span is not None and _literal_sum(c, *span):
        return _coalesce(_f("LIST_SUM", items), _n(0)), list(errors)
    source = _sql_source(items)
    if source is None:
        items = c.let(items)
    exact = exp.Try(this=_coalesce(_f("LIST_SUM", items), _n(0)))
    estimate = _f("LIST_SUM", exp.Cast(this=(items if source is None else source).copy(),
                                       to=dtype("DOUBLE[]")))
    # the DOUBLE sum read through its text (9e19 + 9e19 - 9e19 is 9e19, not DuckDB's cast
    # 89999999999999992307.09); a text's TRY_CAST is one a dialect without TRY_CAST writes
    # (`dialects._number_text`), so the refusal there names the list function it lacks
    text = exp.Cast(this=estimate.copy(), to=dtype("TEXT"))
    total = _coalesce(exact, exp.TryCast(this=text, to=dtype(_D18), safe=True))
    if source is None:
        total = c.let(total)
        return total, [*errors, (_is_null(total), "#NUM!")]
    # a list read as it is (`_sql_read`): the range test reads the DOUBLE sum of the list as
    # stored, not the sum itself, which would read the items twice (DuckDB evaluates a
    # binding at each reference); it and the value's fallback agree but within 1e-16 of 1e20
    return total, [*errors, (exp.GTE(this=_f("ABS", estimate),
                                     expression=exp.Literal.number("1e20")), "#NUM!")]


#: The list a reading (`_sql_read`) read, in its ``meta`` (which renders as nothing).
_SOURCE = "formulane.list_source"


def _sql_source(items: exp.Expr) -> exp.Expr | None:
    """The list as stored when ``items`` is its reading (or a blank-as-empty COALESCE of it,
    `_sql_items`), else None."""
    if isinstance(items, exp.Coalesce) and len(items.expressions) == 1 \
            and isinstance(items.expressions[0], exp.Array) \
            and not items.expressions[0].expressions:
        items = items.this
    source = items.meta.get(_SOURCE) if isinstance(items, exp.TryCast) else None
    return source if isinstance(source, exp.Expr) else None


def _sql_mean(c: FormCall, items: exp.Expr) -> exp.Expr:
    """The mean of a list of numbers (NULL for none): DuckDB's LIST_AVG (a DOUBLE), which in
    decimal mode sums the DECIMALs exactly first and aborts the query where a partial sum
    passes the type (`_sql_sum`); under ``TRY`` such a row averages the items' DOUBLEs
    instead (relative 1e-16: the mean lies within the items' range)."""
    if c.numbers == "float":
        return _f("LIST_AVG", items)
    if _sql_source(items) is None:
        items = c.let(items)
    return _coalesce(exp.Try(this=_f("LIST_AVG", items)),
                     _f("LIST_AVG", exp.Cast(this=items.copy(), to=dtype("DOUBLE[]"))))
