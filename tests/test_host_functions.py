"""Host functions: an application's own read-only function, declared, checked and documented
like a builtin (issue 3: "an application registers its own function with the same declaration
(types, doc, examples, cost) and it is checked and documented like a builtin")."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

import formulane
from formulane import CheckError, ErrorValue, host_function, with_host_functions
from formulane.functions.spec import Cost, p, sig
from formulane.reference import functions_markdown
from formulane.types import NUMBER, TEXT

# The application's own state: a tax table it may change at any time.
RATES: dict[str, Decimal] = {"EU": Decimal("0.21"), "US": Decimal("0.07")}


@host_function("TAXRATE", params={"region": "Text"}, returns="Number",
               doc="The sales-tax rate of a region, from the application's tax table.",
               examples=['TAXRATE("EU") -> 0.21', 'TAXRATE("MARS") -> #VALUE!'],
               errors=("#VALUE!",), cost=Cost.const(5))
def taxrate(region: str) -> Decimal:
    try:
        return RATES[region.upper()]
    except KeyError:
        raise ValueError(f"no tax rate for region {region!r}") from None


@host_function("GROSS", sig(p("net", NUMBER), p("region", TEXT), returns=NUMBER),
               doc="A net amount with its region's tax, rounded to cents.",
               examples=['GROSS(100, "EU") -> 121', 'GROSS(10, "US") -> 10.7'], pure=True)
def gross(net: Any, region: str) -> Decimal:
    return (Decimal(net) * (1 + RATES[region])).quantize(Decimal("0.01"))


REGISTRY = with_host_functions(formulane.default_registry(), taxrate, gross)


def test_a_host_function_is_typed_checked_and_run_like_a_builtin() -> None:
    program = formulane.compile("ROUND(price * (1 + TAXRATE(region)), 2)",
                                {"price": "Number", "region": "Text"}, registry=REGISTRY)
    assert program.type.kind == "Number"
    assert program.evaluate({"price": 10, "region": "eu"}) == Decimal("12.10")
    with pytest.raises(CheckError) as wrong:
        formulane.compile("TAXRATE(1)", registry=REGISTRY)
    assert wrong.value.code == "E202"
    with pytest.raises(CheckError) as unknown:
        formulane.compile("TAXRATE(1)")  # not in the default registry
    assert unknown.value.code == "E203"


def test_a_host_error_is_an_error_value_at_the_call() -> None:
    result = formulane.evaluate('IFERROR(TAXRATE("MARS"), 0) + TAXRATE("MARS")',
                                registry=REGISTRY)
    assert isinstance(result, ErrorValue) and result.code == "#VALUE!"
    assert "MARS" in result.message


def test_state_the_host_changes_is_read_at_run_time_not_folded() -> None:
    program = formulane.compile('TAXRATE("US")', registry=REGISTRY)
    assert program.evaluate() == Decimal("0.07")
    RATES["US"] = Decimal("0.08")
    try:
        assert all(program.evaluate() == Decimal("0.08") for _ in range(12))  # both tiers
    finally:
        RATES["US"] = Decimal("0.07")


def test_host_functions_are_documented_and_offered_like_builtins() -> None:
    reference = functions_markdown(REGISTRY)
    assert "TAXRATE(region: Text) -> Number" in reference
    assert "from the application's tax table" in reference
    assert "TAXRATE" in formulane.prompt({"region": "Text"}, registry=REGISTRY)
    items = formulane.complete("TAXR", 4, {}, registry=REGISTRY)
    assert any(getattr(i, "label", None) == "TAXRATE" for i in items)


def test_columnar_and_sql_refuse_a_host_function_with_the_reason() -> None:
    pl = pytest.importorskip("polars")
    with pytest.raises(formulane.Unsupported, match="host function runs in Python"):
        formulane.apply(pl.DataFrame({"region": ["EU"]}), {"r": "TAXRATE(region)"},
                        registry=REGISTRY)


@pytest.mark.parametrize("change, problem", [
    (dict(name="SUM"), "already a function"),
    (dict(name="tax rate"), "a name is letters"),
    (dict(doc=" "), "doc line"),
    (dict(examples=['BAD("EU") -> 0.21']), "at least two examples"),
    (dict(examples=['BAD("EU") -> 0.5', 'BAD("US") -> 0.07']), "gives"),
    (dict(examples=['BAD(1) -> 0.21', 'BAD("US") -> 0.07']), "does not run"),
])
def test_a_bad_declaration_is_refused_with_what_is_wrong(change: dict, problem: str) -> None:
    declaration: dict[str, Any] = dict(name="BAD", doc="A rate.",
                                       examples=['BAD("EU") -> 0.21', 'BAD("US") -> 0.07'])
    declaration.update(change)
    name = declaration.pop("name")
    spec = host_function(name, params={"region": "Text"}, returns="Number",
                         **declaration)(taxrate.impl)
    with pytest.raises(CheckError, match=problem) as refused:
        with_host_functions(formulane.default_registry(), spec)
    assert refused.value.code == "E209"
