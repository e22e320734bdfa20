"""Gemini function declarations (`gemini`): the OpenAPI 3.0 subset Gemini documents.

Contract (research Part 1.3 and 1.9): one `type` string per node (never a type array),
`nullable: true` instead of null unions, no `$ref`/`$defs` (recursion refused, naming the
field), no `additionalProperties`, `const`, `default`, `examples`, `title`, `uniqueItems`,
`prefixItems` or numeric/length/pattern constraints (moved into descriptions), enums on strings
only, formats `date-time` and `enum` only. Names start with a letter or '_' and have at most 63
characters. A tool without arguments has no `parameters`. At most 128 declarations.
"""

from __future__ import annotations

from typing import Any

from .common import Profile

GEMINI = Profile(
    target="gemini",
    keywords=frozenset({"format", "minItems", "maxItems", "nullable"}),
    formats=frozenset({"date-time", "enum"}),
    close_objects=False,
    maps="remap",
    null_style="flag",
    recursion="refuse",
    tuples="refuse",
    free_values="refuse",
    string_enums_only=True,
    const_as_enum=True,
)

MAX_DECLARATIONS = 128
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]{0,62}$"


def wrap(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "description": description}
    if parameters.get("properties"):
        out["parameters"] = parameters
    return out
