"""Time zones of DateTime values in a polars program: one zone per column.

Contract: `refuse_mixed_zones(root, columns, dtypes)` raises `Unsupported` (at compile time)
where a polars expression would meet DateTime values of two zones in one operation, which
polars cannot do: it aborts the query ("failed to determine supertype of datetime[μs, UTC] and
datetime[μs, Europe/Paris]", "could not evaluate comparison"). The scalar engine keeps each
value's own zone (`IF(c, at, DATETIME(2000, 1, 1))` answers a Paris or a UTC DateTime by row,
HOUR reads each in its zone), which one polars column cannot hold, and converting to one zone
would change the wall clock the date forms read: a refusal is the faithful answer.

A node's zones are the polars zone keys its DateTime values may have ("" for a naive column):
a column's from its dtype (UTC when the frame is not known: `kit.dtype_of`), a literal's UTC,
a call declaring `zone_param` (DATETIME, TZCONVERT) from its constant zone text, a LET
name's from its value; any other call passes on the zones of its DateTime arguments. A call
of the date family reads each DateTime argument in its own zone (DATEDIF, DAYS, YEARFRAC), so
only other calls and list literals join zones. Lambda parameters have no known zone and are
left alone.
"""

from __future__ import annotations

from typing import Any, Mapping

from ...errors import Unsupported
from ...interpreter import ir
from ...types import Type

_UTC = frozenset({"UTC"})
_NONE: frozenset[str] = frozenset()


def _has_datetime(t: Type | None) -> bool:
    if t is None:
        return False
    if t.kind == "DateTime":
        return True
    return _has_datetime(t.elem) or any(_has_datetime(ft) for _, ft in t.fields)


def _dtype_zones(dtype: Any) -> frozenset[str]:
    """The zones of the Datetime parts of a polars dtype."""
    import polars as pl

    if isinstance(dtype, pl.Datetime):
        return frozenset({dtype.time_zone or ""})
    if isinstance(dtype, (pl.List, pl.Array)):
        return _dtype_zones(dtype.inner)
    if isinstance(dtype, pl.Struct):
        return frozenset().union(*(_dtype_zones(f.dtype) for f in dtype.fields))
    return _NONE


def refuse_mixed_zones(root: ir.IR, columns: Mapping[str, str],
                       dtypes: Mapping[str, Any]) -> None:
    """Raises `Unsupported` at the first node that joins DateTimes of different zones."""
    _zones(root, columns, dtypes, {})


def _zones(node: ir.IR, columns: Mapping[str, str], dtypes: Mapping[str, Any],
           slots: dict[int, frozenset[str]]) -> frozenset[str]:
    if isinstance(node, ir.Var):
        if node.slot in slots:
            return slots[node.slot]
        if node.local or not _has_datetime(node.type):
            return _NONE  # a lambda's parameter: its zone is not known here
        dtype = dtypes.get(columns.get(node.name, node.name))
        return _UTC if dtype is None else _dtype_zones(dtype)
    if isinstance(node, ir.Const):
        return _UTC if _has_datetime(node.type) else _NONE
    if isinstance(node, ir.Let):
        for slot, value in zip(node.slots, node.values):
            slots[slot] = _zones(value, columns, dtypes, slots)
        return _zones(node.body, columns, dtypes, slots)
    if isinstance(node, ir.Lambda):
        return _zones(node.body, columns, dtypes, slots)
    found = [_zones(c, columns, dtypes, slots) for c in ir.ir_children(node)]
    name = "a list"
    if isinstance(node, ir.Call):
        name = node.spec.name
        if node.spec.zone_param:  # DATETIME, TZCONVERT: the zone a constant text names
            from ..forms.dates.parts import polars_zone

            i = [q.name for q in node.sig.params].index(node.spec.zone_param)
            text = _const(node.args[i]) if i < len(node.args) else node.sig.params[i].default
            zone = polars_zone(text)
            return frozenset({zone}) if zone is not None else _UTC
        if node.spec.category == "dates":
            # (each DateTime argument read in its own zone)
            return frozenset().union(*found) if _has_datetime(node.type) else _NONE
    if isinstance(node, (ir.FieldOf, ir.IndexOf)):
        return found[0]
    joined: frozenset[str] = frozenset().union(*found)
    if len(joined) > 1:
        shown = ", ".join(sorted(z or "naive" for z in joined))
        reason = f"DateTime values of different time zones ({shown}) in one operation"
        raise Unsupported(f"polars cannot evaluate {name}: {reason} (polars holds one zone "
                          "per column)", function=name, backend="polars", reason=reason,
                          span=getattr(node, "span", None))
    return joined if _has_datetime(node.type) else _NONE


def _const(node: ir.IR) -> Any:
    return node.value if isinstance(node, ir.Const) else None
