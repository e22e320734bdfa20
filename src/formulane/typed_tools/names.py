"""Tool names as providers accept them, mapped reversibly with collision checks.

Contract: `provider_names(names)` maps every canonical name (MCP's `[A-Za-z0-9_.-]{1,128}`) to
a name valid for OpenAI, Anthropic and Gemini at once: `^[A-Za-z_][A-Za-z0-9_-]{0,62}$` (the
strictest published rule: Gemini's first character and 63-character limit). Names that are
already valid are kept. A changed name that collides with another gets a short hash of its
canonical name, so the result does not depend on registration order. The mapping is injective
(checked) and the registry keeps its inverse to resolve names in provider responses.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from typing import Iterable

from ..errors import ToolError

PROVIDER_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,62}$")
MCP_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_MAX = 63


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:6]


def _sanitize(name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    if not safe or not (safe[0].isalpha() or safe[0] == "_"):
        safe = "_" + safe
    if len(safe) > _MAX:
        safe = safe[: _MAX - 7] + "_" + _digest(name)
    return safe


def _suffixed(base: str, name: str) -> str:
    return base[: _MAX - 7] + "_" + _digest(name)


def provider_names(names: Iterable[str]) -> dict[str, str]:
    """canonical name -> provider-safe name."""
    canonical = sorted(set(names))
    groups: dict[str, list[str]] = defaultdict(list)
    for name in canonical:
        groups[_sanitize(name)].append(name)
    out: dict[str, str] = {}
    for base, members in groups.items():
        if len(members) == 1:
            out[members[0]] = base
            continue
        for name in members:
            out[name] = base if name == base else _suffixed(base, name)
    seen: dict[str, str] = {}
    for name, mapped in out.items():
        if mapped in seen:
            raise ToolError(
                f"tool names {seen[mapped]!r} and {name!r} both map to {mapped!r} for providers",
                code="E506",
                hint="rename one of the tools",
            )
        seen[mapped] = name
    return out
