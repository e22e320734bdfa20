"""Whether a polars frame holds what a declared schema says, before a formula runs over it.

`apply` with a ``schema`` compiles the formulas against the declared types and builds the
polars plan from them. A frame that does not hold those types reached the plan unchecked and
answered garbage or raised polars' own exception: ``NOT(n)`` over an integer column declared
Boolean answered -2, ``s + 1`` over text declared Number raised polars' InvalidOperationError,
a blank in a column declared non-nullable joined as "0". Here, for the columns the formulas
read (`Program.uses`):

- a missing column, or a dtype that is not the declared kind (at every depth: list elements,
  record fields), is an `EvalError` E303 naming the column, its dtype and the declared type,
  on every frame (the dtypes are known without reading data);
- a blank where the schema says non-nullable (a value, a list element, a record field) is an
  E303 naming the column, the count and the first row, as the scalar engine's E303 for a blank
  variable; checked where the data are in memory (a DataFrame, ``df.lazy()``), where a
  column's null count is already known (a nested part costs one pass over its values). A
  LazyFrame over a file or a computation is trusted for blanks: counting them is a pass over
  the data, which a declared schema exists to skip (`formulane apply` reads files with the
  declared types and counts their blanks itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import polars as pl

from ...errors import EvalError
from ...types import Type, optional
from .frame import type_of_dtype

if TYPE_CHECKING:
    from polars.datatypes import DataTypeClass


def check_declared(data: pl.DataFrame | None, dtypes: Mapping[str, pl.DataType],
                   declared: Iterable[tuple[str, Type]]) -> None:
    """Raise E303 for the first read column whose dtype or (with ``data``) blanks do not fit
    its declared type. ``declared``: (column, declared type) of each column a formula reads."""
    for name, t in declared:
        dtype = dtypes.get(name)
        if dtype is None:
            raise EvalError(
                f"column {name!r} is in the schema ({t}) but not in the frame",
                code="E303",
                hint=f"the frame's columns: {_listing(dtypes)}",
            )
        if not _fits(dtype, t):
            raise EvalError(
                f"column {name!r} holds {dtype} but the schema says {t}",
                code="E303",
                hint=_cast_hint(name, t),
            )
        if data is not None:
            _check_blanks(name, data.get_column(name), t)


def _fits(dtype: pl.DataType | DataTypeClass, t: Type) -> bool:
    """Whether values of ``dtype`` are values of ``t``'s kind, at every depth (nullability is
    a property of the data, checked by `_check_blanks`)."""
    if t.kind == "Any" or dtype == pl.Null:
        return True  # a column of blanks only: any type's blank
    if t.kind == "List":
        return isinstance(dtype, pl.List) and t.elem is not None and _fits(dtype.inner, t.elem)
    if t.kind == "Record":
        if not isinstance(dtype, pl.Struct):
            return False
        inner = {f.name: f.dtype for f in dtype.fields}
        return all(name in inner and _fits(inner[name], ft) for name, ft in t.fields)
    have = type_of_dtype(dtype)
    return have.kind == "Any" or have.kind == t.kind


def _check_blanks(name: str, values: pl.Series, t: Type, part: str = "",
                  rows: pl.Series | None = None) -> None:
    """``values``: the column, or a nested part of it (``part``: its path below the column,
    ``[*]`` for list elements, ``.name`` for a record field); ``rows``: each value's row index
    in the frame (None: the values are the rows)."""
    if not t.nullable and values.null_count():
        mask = values.is_null()
        first = int((rows.filter(mask) if rows is not None else mask.arg_true())[0])
        count = int(mask.sum())
        where = f" at {name}{part}" if part else ""
        raise EvalError(
            f"column {name!r}{where} holds {count:,} blank{'s' if count != 1 else ''} (the "
            f"first in row index {first}) but the schema says {t} (not nullable)",
            code="E303",
            hint=f"declare {'it' if not part else name + part} as {optional(t)} (the formula "
                 f"then handles blanks), or fill the blanks before applying (`fill_null`)",
        )
    inner = [ft for _, ft in t.fields] if t.kind == "Record" else \
        [t.elem] if t.kind == "List" and t.elem is not None else []
    if values.dtype == pl.Null or not any(_may_hold_blanks(it) for it in inner):
        return  # blanks only (checked above), or nothing below that may hide one
    if rows is None:
        rows = pl.Series("row", range(len(values)), dtype=pl.UInt32)
    if t.kind == "List" and t.elem is not None:
        # one pass over the elements (the rows' own blanks were checked above), each element
        # beside its row index
        flat = pl.DataFrame({"row": rows, "v": values}).explode(
            "v", empty_as_null=False, keep_nulls=False)
        _check_blanks(name, flat.get_column("v"), t.elem, part + "[*]",
                      flat.get_column("row"))
    else:
        present = values.is_not_null()
        for field, ft in t.fields:
            if _may_hold_blanks(ft):
                # a blank record's fields read blank: only present records' fields count
                _check_blanks(name, values.struct.field(field).filter(present), ft,
                              part + f".{field}", rows.filter(present))


def _may_hold_blanks(t: Type) -> bool:
    """Whether a value of type ``t`` may hide a blank the schema forbids."""
    if not t.nullable:
        return True
    return (t.kind == "List" and t.elem is not None and _may_hold_blanks(t.elem)) or \
        (t.kind == "Record" and any(_may_hold_blanks(ft) for _, ft in t.fields))


def _cast_hint(name: str, t: Type) -> str:
    if t.kind == "Number":
        return f"cast it (`pl.col({name!r}).cast(pl.Float64)` or a Decimal) or declare its kind"
    if t.kind == "Date":
        return f"cast it (`pl.col({name!r}).str.to_date()` for ISO text) or declare its kind"
    return "declare the column's own kind in the schema, or cast the column"


def _listing(dtypes: Mapping[str, pl.DataType]) -> str:
    names = list(dtypes)
    if not names:
        return "none"
    shown = ", ".join(repr(n) for n in names[:12])
    return shown + (f" and {len(names) - 12} more" if len(names) > 12 else "")
