"""JSON values in and out of the engine, by the schema's declared types.

Contract: `to_engine(variables, schema)` turns JSON into engine inputs: numbers become exact
decimals (a float through its shortest repr; a number sent as a string keeps every digit), ISO
text becomes a Date or DateTime where the schema declares one, records and lists recursively.
What does not convert is left as it is, so the engine answers with its own diagnostic.
`to_json(value)` is the engine value as JSON: a number stays a JSON number when that loses no
digit, else an exact decimal string; dates are ISO text; an error value is
``{"error": "#DIV/0!", "message": ...}``.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping, Sequence, cast

from ..jsonshape import is_array, is_object
from ..types import Type
from ..values import ErrorValue


def _scalar(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    return value


def convert(value: Any, t: Type | None) -> Any:
    if value is None:
        return None
    kind = t.kind if t is not None else ""
    if is_array(value):
        elem = t.elem if t is not None and kind == "List" else None
        return [convert(v, elem) for v in value]
    if is_object(value):
        fields = dict(t.fields) if t is not None and kind == "Record" else {}
        return {k: convert(v, fields.get(k)) for k, v in value.items()}
    if isinstance(value, str):
        try:
            if kind == "Number":
                return Decimal(value)
            if kind == "Date":
                return dt.date.fromisoformat(value)
            if kind == "DateTime":
                parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
                return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)
        except (InvalidOperation, ValueError):
            return value
        return value
    return _scalar(value)


def to_engine(variables: Mapping[str, Any], schema: Mapping[str, Type]) -> dict[str, Any]:
    return {name: convert(value, schema.get(name)) for name, value in variables.items()}


def to_json(value: Any) -> Any:
    if isinstance(value, ErrorValue):
        return {"error": value.code, "message": getattr(value, "message", "") or ""}
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            return str(value)
        if value == value.to_integral_value() and abs(value) < 2**53:
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else format(value.normalize(), "f")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return {"seconds": value.total_seconds()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in cast("Sequence[Any]", value)]
    if is_object(value):
        return {str(k): to_json(v) for k, v in value.items()}
    return str(value)


def same(actual: Any, expected: Any) -> bool:
    """A known-answer case's comparison: JSON forms equal, numbers compared as decimals."""
    a = to_json(actual)
    if isinstance(expected, (int, float)) and not isinstance(expected, bool) and \
            isinstance(a, (int, float, str)) and not isinstance(a, bool):
        try:
            return Decimal(str(a)) == Decimal(repr(expected) if isinstance(expected, float)
                                              else str(expected))
        except InvalidOperation:
            return False
    if isinstance(expected, str) and isinstance(a, (int, float)) and not isinstance(a, bool):
        try:
            return Decimal(str(a)) == Decimal(expected)
        except InvalidOperation:
            return False  # a number never equals text that is not a number
    if is_object(expected) and is_object(a) and set(expected) == {"error"}:
        same_error: bool = a.get("error") == expected["error"]
        return same_error
    if is_array(expected) and is_array(a):
        return len(a) == len(expected) and all(same(x, y) for x, y in zip(actual, expected))
    return bool(a == expected)
