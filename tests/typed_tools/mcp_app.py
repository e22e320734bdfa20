"""The registry the MCP end-to-end tests serve in a subprocess (`--registry mcp_app.py:build`).

The store and the side-effect file come from the environment so the test process can open the
same store to approve a pending write out of band.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from formulane.typed_tools import ToolRegistry, formula_tools
from write_app import build_registry, open_spec


class Invoice(BaseModel):
    number: str
    total_cents: int
    due: date
    status: Literal["open", "paid"]


def build() -> ToolRegistry:
    store = open_spec(["sqlite", os.environ["FORMULANE_TEST_MCP_STORE"], ""])
    registry = build_registry(store, effect_file=Path(os.environ["FORMULANE_TEST_MCP_EFFECTS"]))

    @registry.tool(name="invoices.get")
    def get_invoice(number: str) -> Invoice:
        """Look up one invoice."""
        return Invoice(number=number, total_cents=1250, due=date(2030, 1, 31), status="open")

    @registry.tool(effect="propose")
    def draft_reminder(number: str, tone: Literal["polite", "firm"] = "polite") -> str:
        """Draft a payment reminder without sending it."""
        return f"[{tone}] Invoice {number} is due."

    return formula_tools.register(registry)
