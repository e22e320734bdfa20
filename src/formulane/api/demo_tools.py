"""DEMO tools, served only when no ``--tools module:attr`` is given: try approvals at once.

Contract: two toy tools over an in-memory, per-tenant notes list, clearly labelled as a demo in
their names and descriptions: ``demo_list_notes`` (read, scope ``demo:read``) and
``demo_add_note`` (write, scope ``demo:write``: every call needs an approval by a key holding
``tools:approve``; one idempotency key adds one note). They touch nothing outside this process.
Replace them with your own registry: ``formulane serve --tools mypkg.tools:registry``.
"""

from __future__ import annotations

import threading
from collections import defaultdict

from pydantic import BaseModel, Field

from ..typed_tools import CallContext, ToolRegistry

DEMO_SCOPES = ("demo:read", "demo:write")
_NOTES: dict[str, list[str]] = defaultdict(list)
_LOCK = threading.Lock()


class Notes(BaseModel):
    notes: list[str]


def demo_list_notes(ctx: CallContext) -> Notes:
    """DEMO tool (not for production): list the notes of the caller's tenant."""
    with _LOCK:
        return Notes(notes=list(_NOTES[ctx.principal.tenant]))


def demo_add_note(text: str = Field(min_length=1, max_length=200), *,
                  ctx: CallContext) -> Notes:
    """DEMO tool (not for production): add a note to the caller's tenant; needs an approval.

    Args:
        text: The note to add.
    """
    with _LOCK:
        _NOTES[ctx.principal.tenant].append(text)
        return Notes(notes=list(_NOTES[ctx.principal.tenant]))


def register(registry: ToolRegistry) -> ToolRegistry:
    registry.tool(effect="read", scopes=["demo:read"])(demo_list_notes)
    registry.tool(effect="write", scopes=["demo:write"])(demo_add_note)
    return registry
