"""Formulas and tools meet: the built-in formula tools (run once the engine exists) and read
tools described as formula functions (side-effecting ones refused)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest

import formulane
from formulane.errors import ToolError
from formulane.typed_tools import Principal, ToolRegistry, formula_tools
from formulane.typed_tools.export import TARGETS

P = Principal("u", "acme", ["prices:read"])

engine = pytest.mark.skipif(not hasattr(formulane, "compile"), reason="the formula engine has not landed yet")


@pytest.fixture
def registry() -> ToolRegistry:
    return formula_tools.register(ToolRegistry())


def call(registry: ToolRegistry, name: str, **args: Any) -> Any:
    result = registry.call(name, args, principal=P)
    assert result.ok, result.text()
    return result.data


def test_formula_tools_export_to_every_target(registry: ToolRegistry) -> None:
    for target in TARGETS:
        export = registry.export(target)
        assert len(export.tools) == 4 and not any(r.refused or r.downgraded for r in export.reports)
    assert {t.effect for t in registry.tools()} == {"read"}


@engine
@pytest.mark.parametrize(
    ("args", "value", "kind"),
    [
        ({"formula": "1 + 2 * 3"}, 7, "Number"),
        ({"formula": "price * qty", "variables": {"price": "9.99", "qty": 3},
          "types": {"price": "Number", "qty": "Number"}}, 29.97, "Number"),
        ({"formula": "qty > 10", "variables": {"qty": 12}}, True, "Boolean"),
        ({"formula": "UPPER(name)", "variables": {"name": "ada"}}, "ADA", "Text"),
        ({"formula": "due + 1", "variables": {"due": "2024-02-28"}, "types": {"due": "Date"}}, "2024-02-29", "Date"),
        ({"formula": "SUM(xs)", "variables": {"xs": [1, 2.5]}}, 3.5, "Number"),
    ],
)
def test_evaluate_formula(registry: ToolRegistry, args: dict[str, Any], value: Any, kind: str) -> None:
    data = call(registry, "evaluate_formula", **args)
    assert data["ok"] is True and data["value"] == value and data["type"] == kind


@engine
def test_evaluate_formula_error_value(registry: ToolRegistry) -> None:
    data = call(registry, "evaluate_formula", formula="1/0")
    assert data["ok"] is False and data["error_value"]["code"] == "#DIV/0!"


@engine
def test_diagnostics_carry_fixes_the_model_can_apply(registry: ToolRegistry) -> None:
    source = "UPPER(42)"
    data = call(registry, "check_formula", formula=source)
    assert data["ok"] is False
    diag = data["diagnostics"][0]
    assert diag["code"] == "E202" and diag["span"]["line"] == 1 and diag["rendered"].startswith("error[E202]")
    fix = diag["fixes"][0]
    fixed = source[: fix["span"]["start"]] + fix["replacement"] + source[fix["span"]["end"]:]
    assert call(registry, "check_formula", formula=fixed) == {"ok": True, "type": "Text", "diagnostics": []}


@engine
def test_unknown_names_need_types(registry: ToolRegistry) -> None:
    data = call(registry, "check_formula", formula="x + 1")
    assert data["ok"] is False and data["diagnostics"][0]["code"] == "E201"
    assert call(registry, "check_formula", formula="x + 1", types={"x": "Number"})["type"] == "Number"


@engine
def test_list_functions_filters(registry: ToolRegistry) -> None:
    everything = call(registry, "list_functions")
    assert len(everything["functions"]) > 20 and "text" in everything["categories"]
    upper = call(registry, "list_functions", query="upper")
    assert "UPPER" in [f["name"] for f in upper["functions"]]
    text = call(registry, "list_functions", category="text")
    assert text["functions"] and all(f["category"] == "text" for f in text["functions"])


@engine
def test_explain_formula(registry: ToolRegistry) -> None:
    result = registry.call("explain_formula", {"formula": "1 + 2"}, principal=P)
    program = formulane.compile("1 + 2")
    if hasattr(program, "explain"):
        assert result.ok and result.data["value"] == 3 and result.data["explanation"] is not None
    else:
        assert result.error.code == "E505" and "not available" in result.error.message


@engine
def test_formula_tools_reach_the_model_through_provider_strict_wire_forms(registry: ToolRegistry) -> None:
    # openai_strict sends every field, nulls included, and the types map as {key, value} pairs.
    wire = {"formula": "x * 2", "variables": {"x": "1.25"}, "types": [{"key": "x", "value": "Number"}]}
    data = call(registry, "evaluate_formula", **wire)
    assert data["value"] == 2.5


def make_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(scopes=["prices:read"], cost=25)
    def unit_price(sku: str, on: date | None = None, qty: int = 1) -> Decimal:
        """The unit price of a product."""
        return Decimal("2.50") * qty

    @registry.tool(effect="write")
    def set_price(sku: str, price: Decimal) -> None:
        """Change a price."""

    @registry.tool(effect="propose")
    def suggest_price(sku: str) -> Decimal:
        return Decimal(1)

    return registry


def test_read_tools_become_formula_functions() -> None:
    registry = make_tools()
    functions = registry.as_formula_functions(principal=P)
    assert [f.name for f in functions] == ["UNIT_PRICE"]
    fn = functions[0]
    assert (fn.tool, fn.cost, fn.doc, fn.returns) == ("unit_price", 25, "The unit price of a product.", Decimal)
    assert [(p.name, p.type, p.required, p.default) for p in fn.params] == [
        ("sku", str, True, None), ("on", date | None, False, None), ("qty", int, False, 1)]
    # The callable goes through the registry: validated, authorized, receipted.
    assert fn.fn("A1", date(2024, 1, 1), Decimal(4)) == Decimal("10.00")
    receipt = registry.receipts(tool="unit_price")[-1]
    assert receipt.outcome == "succeeded" and '"qty":4' in receipt.args
    with pytest.raises(ToolError) as err:
        fn.fn("A1", None, Decimal("1.5"))
    assert err.value.code == "E502"
    with pytest.raises(ToolError) as denied:
        registry.as_formula_functions(principal=Principal("x", "acme"))[0].fn("A1")
    assert denied.value.code == "E503"


@pytest.mark.parametrize("name", ["set_price", "suggest_price"])
def test_side_effecting_tools_are_refused_as_formula_functions(name: str) -> None:
    with pytest.raises(ToolError) as err:
        make_tools().as_formula_functions([name], principal=P)
    assert err.value.code == "E506" and "only read tools" in str(err.value)
