"""docs/examples/test_stored_formulas.py runs as part of the suite (its tests are imported
here, so pytest collects them), and the outputs shown in docs/authoring.md and README.md are
what the code gives."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import formulane
from formulane.authoring import complete, signature_help

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "examples"))

from test_stored_formulas import (  # noqa: E402,F401
    test_even_nonsense_gets_a_structured_answer, test_never_an_error_value_for_valid_orders,
    test_results_within_bounds, test_stored_rules_check,
    test_user_written_rules_never_crash_the_endpoint,
)


# ---- the snippets of docs/authoring.md and README.md say what the code does ------------------

_ROOT = Path(__file__).resolve().parents[2]


def _block_after(text: str, marker: str) -> str:
    """The fenced block that follows the block holding ``marker``."""
    at = text.index(marker)
    start = text.index("```", text.index("```", at) + 3)
    body = text.index("\n", start) + 1
    return text[body:text.index("```", body)].rstrip("\n")


def test_authoring_guide_outputs() -> None:
    guide = (_ROOT / "docs" / "authoring.md").read_text("utf-8")
    source = re.search(r"print\(format\('(.*)'\)\)", guide).group(1)  # type: ignore[union-attr]
    assert formulane.format(source) == _block_after(guide, "print(format(")
    program = formulane.compile("IF(qty > 0, total / qty, 1/qty)",
                                {"qty": "Number", "total": "Number"})
    assert program.explain({"qty": 0, "total": 5}).to_text().rstrip("\n") == \
        _block_after(guide, "print(program.explain(")
    schema = {"order": "Record{total: Number, customer: Record{name: Text}}",
              "orders": "List[Record{total: Number}]"}
    assert [i.label for i in complete("MAP(orders, o => o.", 19, schema)] == ["total"]
    assert [i.label for i in complete("IF(order.total > 1, ROU", 23, schema)] == \
        ["ROUND", "ROUNDDOWN", "ROUNDUP"]
    assert signature_help("ROUND(order.total, ", 19).active_parameter == 1  # type: ignore[union-attr]


def test_readme_authoring_lines() -> None:
    schema = {"name": "Text", "order": "Record{total: Number, tier: Text}"}
    assert formulane.format("if(a>1,'x','y') /* why */") == 'IF(a > 1, "x", "y") /* why */'
    assert [i.label for i in formulane.complete("ROUND(order.", 12, schema)] == ["total", "tier"]
    program = formulane.from_json({"call": "UPPER", "args": [{"name": "name"}]}, schema)
    assert program.evaluate({"name": "ab", "order": {"total": 1, "tier": "x"}}) == "AB"
