"""The JSON form: exact shapes, the round trip as a property, its JSON Schema, clear errors with
JSON paths, and checking through the same compiler as text."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

import formulane
from formulane.authoring.jsonform import (
    JsonFormError, compile_json, from_json, json_form_schema, to_json,
)
from formulane.errors import CheckError, LimitExceeded
from formulane.grammar import ast, parse, print_formula
from formulane.limits import Limits
from formulane.testing.strategies import formula_trees

from authoring_helpers import SCHEMA, any_trees

PROPERTY = settings(max_examples=300, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
VALIDATOR = jsonschema.Draft202012Validator(json_form_schema())
ROOTED = jsonschema.Draft202012Validator(json_form_schema(root_object=True))


def test_shapes() -> None:
    source = 'IF(order.total > 1.50, MAP(xs, (a, b) => a * -b)[1], BLANK()) & TEXTSPLIT(t, ",", , TRUE)'
    assert to_json(source) == {"op": "&", "args": [
        {"call": "IF", "args": [
            {"op": ">", "args": [{"member": "total", "of": {"name": "order"}},
                                 {"number": "1.5"}]},
            {"index": {"number": "1"}, "of": {"call": "MAP", "args": [
                {"name": "xs"},
                {"lambda": ["a", "b"], "body": {"op": "*", "args": [
                    {"name": "a"}, {"op": "-", "args": [{"name": "b"}]}]}}]}},
            {"call": "BLANK", "args": []}]},
        {"call": "TEXTSPLIT", "args": [{"name": "t"}, {"text": ","}, {"omitted": True},
                                       {"boolean": True}]}]}
    assert to_json(formulane.compile("{Unit Price} * 15%", {"Unit Price": "Number"})) == {
        "op": "*", "args": [{"name": "Unit Price"}, {"number": "0.15"}]}
    assert to_json(parse("not x")) == {"op": "not", "args": [{"name": "x"}]}


def test_lenient_inputs_normalize() -> None:
    assert from_json({"number": 0.1}) == ast.Number(__import__("decimal").Decimal("0.1"))
    assert from_json({"number": "-3"}) == parse("-3")
    assert from_json({"number": 7}) == parse("7")
    assert from_json({"op": "&&", "args": [{"name": "a"}, {"name": "b"}]}) == parse("a and b")
    assert from_json({"call": "round", "args": [{"number": "1"}]}) == parse("ROUND(1)")
    assert from_json({"formula": {"name": "x"}}) == parse("x")


def _round_trip(tree: ast.Node) -> None:
    obj = to_json(tree)
    VALIDATOR.validate(obj)
    ROOTED.validate({"formula": obj})
    assert from_json(json.loads(json.dumps(obj))) == tree
    assert print_formula(from_json(obj)) == print_formula(tree)


@PROPERTY
@given(any_trees)
def test_round_trip_any_ast(tree: ast.Node) -> None:
    _round_trip(tree)


@settings(max_examples=120, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(formula_trees(SCHEMA, max_depth=3))
def test_round_trip_and_compile_well_typed(tree: ast.Node) -> None:
    _round_trip(tree)
    text = print_formula(tree)
    try:
        expected = formulane.compile(text, SCHEMA)
    except LimitExceeded:
        return
    assert compile_json(to_json(tree), SCHEMA).type == expected.type


BAD = [
    ([1], "$", "expected an object"),
    ({}, "$", "exactly one of the keys"),
    ({"name": "x", "text": "y"}, "$", "several kinds"),
    ({"call": "SUM"}, "$", "needs args"),
    ({"call": "SUM", "args": [], "extra": 1}, "$", "unexpected key(s)"),
    ({"call": "SUM", "args": {"a": 1}}, "$.args", "must be an array"),
    ({"call": "SUM", "args": [{"number": "1,5"}]}, "$.args[0].number", "not a number"),
    ({"call": "SUM", "args": [{"number": True}]}, "$.args[0].number", "decimal string"),
    ({"call": "SUM", "args": [{"number": "1e999"}]}, "$.args[0].number", "too large"),
    ({"call": "3D", "args": []}, "$.call", "not a function name"),
    ({"call": "LAMBDA", "args": []}, "$.call", "write a lambda as"),
    ({"op": "**", "args": [{"name": "a"}, {"name": "b"}]}, "$.op", "unknown operator"),
    ({"op": "*", "args": [{"name": "a"}]}, "$.args", "takes 2 argument"),
    ({"op": "not", "args": [{"name": "a"}, {"name": "b"}]}, "$.args", "takes 1 argument"),
    ({"name": "a}b"}, "$.name", "cannot be a name"),
    ({"name": 3}, "$.name", "must be a string"),
    ({"text": None}, "$.text", "must be a string"),
    ({"boolean": "true"}, "$.boolean", "true or false"),
    ({"lambda": ["x"], "body": {"name": "x"}}, "$", "only be an argument"),
    ({"list": [{"lambda": [], "body": {"number": "1"}}]}, "$.list[0]", "only be an argument"),
    ({"op": "+", "args": [{"omitted": True}, {"number": "1"}]}, "$.args[0]",
     "only be a call argument"),
    ({"call": "F", "args": [{"omitted": True}]}, "$.args[0]", "only argument cannot be omitted"),
    ({"call": "F", "args": [{"omitted": False}, {"number": "1"}]}, "$.args[0].omitted",
     "must be true"),
    ({"call": "MAP", "args": [{"name": "xs"}, {"lambda": "x", "body": {"name": "x"}}]},
     "$.args[1].lambda", "array of parameter names"),
    ({"member": "", "of": {"name": "o"}}, "$.member", "cannot be a name"),
    ({"formula": {"index": {"number": "1"}, "of": {"nope": 1}}}, "$.formula.of",
     "exactly one of the keys"),
]


@pytest.mark.parametrize(("obj", "path", "words"), BAD, ids=[json.dumps(b[0])[:40] for b in BAD])
def test_malformed_forms_say_where(obj: object, path: str, words: str) -> None:
    with pytest.raises(JsonFormError) as info:
        from_json(obj)
    assert info.value.json_path == path
    assert words in info.value.message
    assert info.value.code == "E101"


def test_limits_apply_without_recursion() -> None:
    deep: dict = {"number": "1"}
    for _ in range(5000):
        deep = {"op": "-", "args": [deep]}
    with pytest.raises(LimitExceeded) as info:
        from_json(deep)
    assert info.value.code == "E403"
    wide = {"call": "SUM", "args": [{"number": "1"}] * 300}
    with pytest.raises(LimitExceeded):
        from_json(wide)
    assert from_json(wide, limits=Limits(max_arguments=1000)) is not None


def test_compile_json_goes_through_the_checker_and_maps_errors_back() -> None:
    program = compile_json({"op": "*", "args": [{"name": "price"}, {"number": "2"}]}, SCHEMA)
    assert program.evaluate({"price": 4, "qty": 1, "name": "", "flag": True,
                             "due": __import__("datetime").date(2024, 1, 1), "xs": [],
                             "tags": [], "discount": None, "Unit Price": 1,
                             "order": {"total": 1, "customer": {"name": "", "tier": ""},
                                       "Ship Date": __import__("datetime").date(2024, 1, 1)},
                             "orders": []}) == 8
    obj = {"call": "IF", "args": [{"name": "flag"}, {"call": "ROUND", "args": [
        {"name": "price"}, {"text": "two"}]}, {"number": "0"}]}
    with pytest.raises(CheckError) as info:
        compile_json(obj, SCHEMA)
    assert info.value.json_path == "$.args[1].args[1]"  # type: ignore[attr-defined]
    assert info.value.source == 'IF(flag, ROUND(price, "two"), 0)'
    with pytest.raises(CheckError) as info:
        compile_json({"formula": {"name": "nope"}}, SCHEMA)
    assert info.value.json_path == "$.formula"  # type: ignore[attr-defined]


def test_schema_is_strict_structured_output_shaped() -> None:
    schema = json_form_schema(root_object=True)
    assert schema["type"] == "object" and schema["required"] == ["formula"]
    for name, definition in schema["$defs"].items():
        if name == "expr":
            continue
        assert definition["additionalProperties"] is False
        assert sorted(definition["required"]) == sorted(definition["properties"])
    jsonschema.Draft202012Validator.check_schema(schema)
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate({"call": "SUM"})
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate({"number": "1,5"})
