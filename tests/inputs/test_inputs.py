"""Inputs a Python user already has (issue 16 item 3): models, dataclasses, TypedDicts and
mappings as variables; schemas from dataclasses, TypedDicts and JSON Schema, and back."""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Optional, TypedDict

import jsonschema
import pydantic
import pytest
import yaml
from hypothesis import given, settings, strategies as st

import formulane
from formulane.errors import CheckError, EvalError
from formulane.inputs import as_variables
from formulane.limits import Limits
from formulane.schema import normalize_schema
from formulane.types import Type, list_of, optional, record

CASES = yaml.safe_load((Path(__file__).parent / "json_schema_cases.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_json_schema_to_schema(case: dict) -> None:
    if "error" in case:
        with pytest.raises(CheckError) as info:
            formulane.schema_from_json_schema(case["json_schema"])
        assert info.value.code == "E209" and case["error"] in str(info.value)
        return
    got = formulane.schema_from_json_schema(case["json_schema"])
    assert got == normalize_schema(case["schema"])
    # and back: the JSON Schema we write is valid 2020-12 and reads back to the same schema
    back = formulane.to_json_schema(got)
    jsonschema.Draft202012Validator.check_schema(back)
    assert formulane.schema_from_json_schema(back) == got


class Customer(pydantic.BaseModel):
    name: str
    tier: Optional[str] = None


class Order(pydantic.BaseModel):
    price: Decimal
    qty: int
    customer: Customer
    tags: list[str] = []

    @property
    def total(self) -> Decimal:  # never called: only fields are read
        raise AssertionError("a property ran")


@dataclasses.dataclass(frozen=True)
class Line:
    sku: str
    n: int


@dataclasses.dataclass(frozen=True, slots=True)
class Basket:
    lines: list[Line]
    due: dt.date
    note: Optional[str] = None


class Quote(TypedDict):
    price: Decimal
    qty: int


def test_pydantic_instance_as_variables() -> None:
    order = Order(price=Decimal("9.99"), qty=3, customer=Customer(name="Ada"), tags=["a"])
    assert formulane.evaluate("ROUND(price * qty, 2)", order) == Decimal("29.97")
    assert formulane.evaluate('customer.name & "/" & (customer.tier ?? "none")', order,
                              schema=Order) == "Ada/none"
    program = formulane.compile("price * qty", Order)
    assert program.evaluate(order) == Decimal("29.97")


def test_dataclass_instance_and_schema() -> None:
    basket = Basket([Line("x", 2), Line("y", 3)], dt.date(2024, 2, 29))
    assert normalize_schema(Basket) == {
        "lines": list_of(record({"sku": Type("Text"), "n": Type("Number")})),
        "due": Type("Date"), "note": optional(Type("Text"))}
    assert formulane.evaluate("SUM(MAP(lines, l => l.n))", basket, schema=Basket) == 5
    assert formulane.compile("YEAR(due)", Basket).evaluate(basket) == 2024


def test_typed_dict_value_and_class() -> None:
    class Partial(TypedDict, total=False):
        discount: Decimal

    assert normalize_schema(Quote) == {"price": Type("Number"), "qty": Type("Number")}
    assert normalize_schema(Partial) == {"discount": optional(Type("Number"))}
    quote: Quote = {"price": Decimal("2.5"), "qty": 4}
    assert formulane.evaluate("price * qty", quote, schema=Quote) == 10


def test_host_code_never_runs() -> None:
    class Sneaky(pydantic.BaseModel):
        a: int

        def __getattr__(self, name: str) -> object:
            raise AssertionError("__getattr__ ran")

    assert formulane.evaluate("a + 1", Sneaky(a=1)) == 2
    with pytest.raises(EvalError) as info:
        formulane.evaluate("1", object())
    assert info.value.code == "E301"

    class Broken(dict):  # a host mapping whose own code raises: E301, no traceback
        def items(self):  # type: ignore[override]
            raise ValueError("boom")

    for variables in (Broken(a=1), {"r": Broken(a=1)}):
        with pytest.raises(EvalError) as info:
            formulane.evaluate("1", variables)
        assert info.value.code == "E301" and "boom" not in str(info.value)


def test_bounded() -> None:
    deep: dict = {"x": 1}
    for _ in range(50):
        deep = {"x": deep}
    with pytest.raises(EvalError, match="max_depth"):
        as_variables({"d": deep}, Limits(max_depth=20))
    with pytest.raises(EvalError, match="max_list_length"):
        as_variables({"xs": [Line("a", i) for i in range(50)]}, Limits(max_list_length=10))


# ---- the round trip as a property ------------------------------------------------------------

_SCALARS = st.sampled_from(["Number", "Text", "Boolean", "Date", "DateTime", "Duration"]).map(
    Type)
_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)


def _types(depth: int = 2) -> st.SearchStrategy[Type]:
    if depth == 0:
        return _SCALARS
    inner = _types(depth - 1)
    return st.one_of(
        _SCALARS,
        inner.map(list_of),
        st.dictionaries(_NAMES, inner, min_size=1, max_size=3).map(record),
    ).flatmap(lambda t: st.sampled_from([t, optional(t)]))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_NAMES, _types(), max_size=5))
def test_json_schema_round_trip(schema: dict[str, Type]) -> None:
    out = formulane.to_json_schema(schema)
    jsonschema.Draft202012Validator.check_schema(out)
    assert formulane.schema_from_json_schema(out) == schema
