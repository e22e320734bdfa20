"""Anthropic tools: plain (`anthropic`) and strict tool use (`anthropic_strict`).

Contract: the root is always an object (Anthropic rejects top-level anyOf/oneOf/allOf and a
single bad tool fails the whole request). Plain mode keeps JSON Schema 2020-12 as is, minus
OpenAPI-only keys. Strict mode (research Part 1.2): `additionalProperties: false`, no numeric
or length constraints, `minItems` 0/1 only, listed formats only, no recursion (refused, naming
the field), maps as `{key, value}` lists, optional fields omitted rather than null. Request
limits (20 strict tools, 24 optional parameters, 16 union parameters) downgrade the tools that
do not fit to plain mode, in name order, and the report says so.
"""

from __future__ import annotations

from typing import Any

from .common import Profile

STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6",
                            "uuid"})

ANTHROPIC = Profile(
    target="anthropic",
    keywords=frozenset({"pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                        "multipleOf", "minItems", "maxItems", "minLength", "maxLength", "uniqueItems",
                        "minProperties", "maxProperties", "default", "examples", "deprecated", "const"}),
    formats=None,
    close_objects=True,
)

ANTHROPIC_STRICT = Profile(
    target="anthropic_strict",
    keywords=frozenset({"format", "minItems", "const"}),
    formats=STRICT_FORMATS,
    close_objects=True,
    maps="remap",
    drop_null_of_optional=True,
    recursion="refuse",
    tuples="refuse",
    free_values="refuse",
    max_min_items=1,
)

MAX_STRICT_TOOLS = 20
MAX_OPTIONAL = 24
MAX_UNIONS = 16
NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"


def wrap(name: str, description: str, schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "description": description, "input_schema": schema}
    if strict:
        out["strict"] = True
    return out
