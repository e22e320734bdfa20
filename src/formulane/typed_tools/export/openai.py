"""OpenAI function tools: strict Structured Outputs (`openai_strict`) and plain (`openai`).

Contract: strict mode follows the documented subset (developers.openai.com "Supported
schemas", read in research Part 1.1): every field required (optional ones become nullable,
null meaning the default), `additionalProperties: false` on every object, no `$ref` siblings,
maps as `{key, value}` lists, tuples and free-form values refused, recursion kept in `$defs`,
only the listed string formats. A strict schema over the limits (5,000 properties, 10 levels,
1,000 enum values, 120,000 characters) is downgraded to a plain one and the report says so.
`strict` is always written out: the Responses API defaults it to true.
"""

from __future__ import annotations

from typing import Any

from .common import Profile, schema_stats

STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})

OPENAI_STRICT = Profile(
    target="openai_strict",
    keywords=frozenset({"pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                        "multipleOf", "minItems", "maxItems"}),
    formats=STRICT_FORMATS,
    all_required=True,
    close_objects=True,
    maps="remap",
    recursion="defs",
    tuples="refuse",
    free_values="refuse",
    const_as_enum=True,
    ref_siblings=False,
)

OPENAI = Profile(
    target="openai",
    keywords=frozenset({"pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                        "multipleOf", "minItems", "maxItems", "minLength", "maxLength", "uniqueItems",
                        "minProperties", "maxProperties", "default", "examples", "deprecated", "const"}),
    formats=None,
    close_objects=True,
)

LIMITS = {"properties": 5000, "depth": 10, "enum_values": 1000, "chars": 120_000}
NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


def over_limits(parameters: dict[str, Any]) -> str | None:
    stats = schema_stats(parameters)
    for key, limit in LIMITS.items():
        if stats[key] > limit:
            return f"{key} {stats[key]} exceeds OpenAI's strict-mode limit of {limit}"
    return None


def wrap(name: str, description: str, parameters: dict[str, Any], *, strict: bool, api: str) -> dict[str, Any]:
    function = {"name": name, "description": description, "parameters": parameters, "strict": strict}
    if api == "responses":
        return {"type": "function", **function}
    return {"type": "function", "function": function}
