"""Type guards for JSON-shaped data whose shape is only known at run time.

Contract: `is_object(v)` is exactly `isinstance(v, dict)` and `is_array(v)` exactly
`isinstance(v, list)`; the only difference is what a type checker learns from them. A plain
`isinstance(v, dict)` narrows to `dict[Unknown, Unknown]`, so code that walks a parsed JSON
document, a JSON Schema or a provider payload would need a cast at every step; these guards
narrow to `dict[str, Any]` / `list[Any]`, the types such a document has once parsed. JSON object
keys are strings, so the guard states what the data already is; it checks nothing more and
imports nothing from formulane.
"""

from __future__ import annotations

from typing import Any, TypeGuard

#: A parsed JSON object (keys are strings; values are any JSON value).
JsonObject = dict[str, Any]


def is_object(value: object) -> TypeGuard[dict[str, Any]]:
    """`isinstance(value, dict)`, narrowing to a JSON object."""
    return isinstance(value, dict)


def is_array(value: object) -> TypeGuard[list[Any]]:
    """`isinstance(value, list)`, narrowing to a JSON array."""
    return isinstance(value, list)
