"""Polars forms of SUM PRODUCT AVERAGE MIN MAX over numbers given one by one: across a row.

Contract: ``SUM(a, b, c)`` over columns is the aggregate of each row's values, computed
across the row (``a + b + c`` with blanks read as 0; ``max_horizontal``...), where the list
forms (`aggregates`) first build a list per row (``concat_list``), which polars does about a
thousand times slower: ``SUM(a, b, c)`` at 1M rows went from seconds to the time of
``a + b + c``. Same values and errors as the list forms: blanks skipped, SUM and PRODUCT of no
numbers 0, AVERAGE #DIV/0!, MIN and MAX 0 for Numbers and #CALC! for dates, and a float result
past the range #NUM! (tested where it is read, as for +: the declarations say
``total_on_floats``); decimal mode's SUM is exact, from Int128s as the list form's. A call
with a list argument, and decimal mode's PRODUCT and AVERAGE, take the list forms.
"""

from __future__ import annotations

import operator
from functools import reduce
from typing import Any

from . import aggregates
from ._base import FormCall, _UNIT, _float, _num, _pl_split_total, pl


def _across(c: FormCall, values: tuple[Any, ...], exact_too: bool = False) -> bool:
    """Every argument is one value (no list), and the mode computes in floats (or the form
    is exact in decimals too: ``exact_too``)."""
    return all(c.type(i).kind != "List" for i in range(len(values))) and (
        exact_too or _float())


def _numbers(values: tuple[Any, ...]) -> list[Any]:
    # in the mode's dtype, as the list forms read them (an Int64 column summed as integers
    # could wrap)
    return [_num(v) for v in values]


def _folded(c: FormCall, values: tuple[Any, ...], op: Any, blank: float) -> Any:
    """The floats folded left to right by ``op``, a blank read as ``blank`` (where the
    argument may be blank: over an eager frame with no blanks nothing is filled), as the list
    forms and the scalar engine add (polars' ``sum_horizontal`` adds in another order:
    1e307 + -1e307 + 1 was 0, not 1)."""
    return reduce(op, [v.fill_null(blank) if c.nullable(i) else v
                       for i, v in enumerate(_numbers(values))])


def _none(c: FormCall, values: tuple[Any, ...]) -> Any:
    """The rows where every argument is blank (None: no row, as their types say)."""
    if not all(c.nullable(i) for i in range(len(values))):
        return None
    return pl.all_horizontal([v.is_null() for v in values])


def _decimal_total(c: FormCall, values: tuple[Any, ...]) -> Any:
    """Decimal mode: the exact sum and its #NUM!, never a polars decimal sum (which aborts the
    query where a partial sum passes Decimal(38, 18)): each value's Int128 count of 1e-18
    split into its floor and the rest, as the list form splits its items
    (`_base._pl_decimal_split`), so neither integer sum can overflow."""
    unit = pl.lit(_UNIT, dtype=pl.Int128)
    floors, rests = [], []
    for i, v in enumerate(values):
        raw = _num(v).to_physical()
        raw = raw.fill_null(0) if c.nullable(i) else raw
        floor = raw // unit
        floors.append(floor)
        rests.append(raw - floor * unit)  # in [0, 1e18)
    rest = reduce(operator.add, rests)
    return _pl_split_total(reduce(operator.add, floors) + rest // unit, rest % unit)


def polars_sum(c: FormCall, *values: Any) -> Any:
    if not _across(c, values, exact_too=True):
        return aggregates.polars_sum(c, *values)
    if not _float():
        return _decimal_total(c, values)
    # the value alone: the walk tests a float result that may err (`PolarsCompiler.finish`)
    # where it is read, as it does + (so `apply` runs its three-step plan)
    return _folded(c, values, operator.add, 0.0)


def polars_product(c: FormCall, *values: Any) -> Any:
    if not _across(c, values):
        return aggregates.polars_product(c, *values)
    value = _folded(c, values, operator.mul, 1.0)
    none = _none(c, values)
    if none is not None:
        value = pl.when(none).then(pl.lit(0.0)).otherwise(value)  # Excel: 0, not 1
    return value  # tested where read, as SUM's


def polars_average(c: FormCall, *values: Any) -> Any:
    if not _across(c, values):
        return aggregates.polars_average(c, *values)
    total = _folded(c, values, operator.add, 0.0)
    if not any(c.nullable(i) for i in range(len(values))):
        return total / len(values)
    count = pl.sum_horizontal([v.is_not_null() for v in values])
    # no number on the row: a count of 0 (possible only where every argument may be blank)
    every = all(c.nullable(i) for i in range(len(values)))
    return total / count, [(count == 0, "#DIV/0!")] if every else []


def _pl_extreme(c: FormCall, *values: Any, largest: bool) -> Any:
    # exact in both modes: a maximum is one of the values, as they are
    if not _across(c, values, exact_too=True):
        return aggregates._pl_extreme(c, *values, largest=largest)
    number = c.node.type.kind == "Number"
    items = _numbers(values) if number else list(values)
    value = pl.max_horizontal(items) if largest else pl.min_horizontal(items)
    none = _none(c, values)
    if number:
        return value if none is None else value.fill_null(0)  # Excel: 0 for no numbers
    return value, [] if none is None else [(none, "#CALC!")]
