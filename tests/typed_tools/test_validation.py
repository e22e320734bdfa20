"""Strict validation of model-produced arguments: the lax-mode traps, the stringified-JSON hook,
wire changes made by exporters, and error envelopes a model can act on."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from formulane.typed_tools import Principal, Secret, ToolRegistry

P = Principal("u", "t")


class Line(BaseModel):
    sku: str
    qty: int = 1


def make_registry(**options: Any) -> ToolRegistry:
    reg = ToolRegistry(**options)

    @reg.tool
    def order(n: int, flag: bool, when: datetime, day: date | None = None, price: Decimal = Decimal("0"),
              lines: list[Line] = [], labels: dict[str, int] = {}, note: str = "",
              token: Annotated[str, Secret] = "") -> dict[str, Any]:
        """Place an order."""
        return {"n": n, "flag": flag, "lines": len(lines), "labels": labels, "day": str(day), "price": str(price)}

    return reg


GOOD = {"n": 2, "flag": True, "when": "2011-11-11T10:00"}


def args(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


@pytest.mark.parametrize(
    ("case", "raw", "path", "kind"),
    [
        ("string for int", args(n="2"), "n", "int_type"),
        ("float for int", args(n=2.0), "n", "int_type"),
        ("bool for int", args(n=True), "n", "int_type"),
        ("yes for bool", args(flag="yes"), "flag", "bool_type"),
        ("1 for bool", args(flag=1), "flag", "bool_type"),
        ("date-only datetime", args(when="2011-11-11"), "when", "datetime_parsing"),
        ("datetime for date", args(day="2011-11-11T10:00:00"), "day", "date_parsing"),
        ("unknown key", args(extra=1), "extra", "extra_forbidden"),
        ("unknown nested key", args(lines=[{"sku": "a", "qtty": 2}]), "lines[0].qtty", "extra_forbidden"),
        ("missing field", {"n": 1, "flag": True}, "when", "missing"),
        ("number for string", args(note=5), "note", "string_type"),
        ("not a decimal", args(price="ten"), "price", "decimal_parsing"),
        ("stringified list without the hook", args(lines='[{"sku": "a"}]'), "lines", "list_type"),
    ],
)
def test_lax_mode_traps_are_rejected(case: str, raw: dict[str, Any], path: str, kind: str) -> None:
    reg = make_registry()
    for form in (raw, json.dumps(raw), json.dumps(raw).encode()):
        result = reg.call("order", form, principal=P)
        assert result.status == "error", case
        assert result.receipt.outcome == "invalid_arguments"
        error = result.error
        assert error is not None and error.code == "E502" and error.retryable
        assert [(i.path, i.kind) for i in error.issues] == [(path, kind)], case


def test_json_mode_accepts_what_json_can_say() -> None:
    reg = make_registry()
    result = reg.call("order", args(day="2024-02-29", price="12.50", lines=[{"sku": "a"}], n=-3), principal=P)
    assert result.ok, result.text()
    assert result.value == {"n": -3, "flag": True, "lines": 1, "labels": {}, "day": "2024-02-29", "price": "12.50"}


def test_a_python_dict_goes_through_json_so_python_objects_cannot_slip_in() -> None:
    reg = make_registry()
    result = reg.call("order", args(when=datetime(2020, 1, 1)), principal=P)
    assert result.error is not None and result.error.issues[0].kind == "json_invalid"
    assert "only JSON values" in result.error.issues[0].message


@pytest.mark.parametrize(
    ("raw", "kind"),
    [("{not json", "json_invalid"), ("[1, 2]", "model_type"), ("null", "model_type"), (42, "json_invalid")],
)
def test_arguments_that_are_not_a_json_object(raw: Any, kind: str) -> None:
    result = make_registry().call("order", raw, principal=P)
    assert result.error is not None and result.error.issues[0].kind == kind


def test_empty_string_means_no_arguments() -> None:
    reg = ToolRegistry()

    @reg.tool
    def ping() -> str:
        return "pong"

    assert reg.call("ping", "", principal=P).value == "pong"
    assert reg.call("ping", "{}", principal=P).value == "pong"


def test_stringified_json_hook_is_opt_in_and_never_coerces_scalars() -> None:
    raw = args(lines='[{"sku": "a", "qty": 2}]', labels='{"x": 1}')
    assert make_registry().call("order", raw, principal=P).status == "error"
    reg = make_registry(decode_stringified_json=True)
    result = reg.call("order", raw, principal=P)
    assert result.ok, result.text()
    assert result.value["lines"] == 1 and result.value["labels"] == {"x": 1}
    # Scalars stay strict even with the hook on; a string field keeps JSON-looking text as text.
    assert reg.call("order", args(n="2"), principal=P).status == "error"
    ok = reg.call("order", args(note='["not", "decoded"]'), principal=P)
    assert ok.ok and reg.receipts(outcome="succeeded")[-1].args is not None
    assert '"note":"[\\"not\\", \\"decoded\\"]"' in reg.receipts(outcome="succeeded")[-1].args


def test_wire_changes_from_strict_exports_are_undone() -> None:
    reg = make_registry()
    # openai_strict sends every field: null means "use the default"; maps come as {key, value} lists.
    raw = args(day=None, price=None, lines=[{"sku": "a", "qty": None}], note=None, token=None,
               labels=[{"key": "a", "value": 1}, {"key": "b", "value": 2}])
    result = reg.call("order", raw, principal=P)
    assert result.ok, result.text()
    assert result.value["labels"] == {"a": 1, "b": 2} and result.value["price"] == "0"
    duplicate = reg.call("order", args(labels=[{"key": "a", "value": 1}, {"key": "a", "value": 2}]), principal=P)
    assert duplicate.status == "error" and duplicate.error.issues[0].path == "labels"


def test_envelope_gives_path_expected_type_example_and_received_value() -> None:
    result = make_registry().call("order", args(n="2", when="2011-11-11", extra=1), principal=P)
    issues = {i.path: i for i in result.error.issues}
    assert issues["n"].expected == "integer" and issues["n"].example == 1 and issues["n"].received == '"2"'
    assert "without quotes" in issues["n"].message
    assert issues["when"].expected == "string in date-time format"
    assert issues["when"].example == "2024-01-31T09:30:00Z"
    assert issues["extra"].expected.startswith("no such field; allowed fields: day, flag, labels")
    text = result.text()
    assert text.startswith("error[E502] invalid tool arguments: 3 problems")
    assert "- n: Input should be a valid integer" in text and "retryable: yes" in text
    assert result.data["error"]["issues"][0]["path"] in issues


def test_close_field_names_are_suggested() -> None:
    result = make_registry().call("order", args(flagg=True), principal=P)
    assert "did you mean 'flag'?" in result.error.issues[0].message


def test_secret_inputs_are_never_echoed() -> None:
    result = make_registry().call("order", args(token=12345678), principal=P)
    issue = result.error.issues[0]
    assert issue.path == "token" and issue.received is None and issue.example is None
    assert "12345678" not in result.text() and "12345678" not in json.dumps(result.data)


def test_constraint_descriptions_and_examples_follow_the_schema() -> None:
    reg = ToolRegistry()

    @reg.tool
    def book(seats: Annotated[int, Field(ge=1, le=12)], code: Annotated[str, Field(examples=["AB12"])]) -> int:
        return seats

    result = reg.call("book", {"seats": 0, "code": 5}, principal=P)
    issues = {i.path: i for i in result.error.issues}
    assert issues["seats"].expected == "integer (>= 1, <= 12)" and issues["seats"].example == 1
    assert issues["code"].example == "AB12"


def test_retry_cap_per_retry_key() -> None:
    reg = make_registry(max_retries=2)
    lefts = []
    for _ in range(4):
        result = reg.call("order", args(n="x"), principal=P, call_id="call-1")
        lefts.append((result.error.attempts_left, result.error.retryable))
    assert lefts == [(1, True), (0, True), (0, False), (0, False)]
    assert "retry limit" in result.error.hint
    # A success under the key resets it; another key has its own budget.
    assert reg.call("order", GOOD, principal=P, call_id="call-1").ok
    assert reg.call("order", args(n="x"), principal=P, call_id="call-1").error.attempts_left == 1
    assert reg.call("order", args(n="x"), principal=P, retry_key="other").error.attempts_left == 1
    # Without a key nothing is counted.
    assert reg.call("order", args(n="x"), principal=P).error.attempts_left is None


def test_unknown_tool_lists_close_names_and_counts_as_a_retry() -> None:
    reg = make_registry(max_retries=1)
    first = reg.call("ordr", GOOD, principal=P, call_id="c")
    assert first.error.code == "E501" and first.error.details["did_you_mean"] == ["order"]
    assert first.receipt.outcome == "unknown_tool"
    assert reg.call("ordr", GOOD, principal=P, call_id="c").error.retryable is False


def test_tool_failures_become_envelopes_without_internal_messages() -> None:
    from formulane.typed_tools import ToolFailure

    reg = ToolRegistry()

    @reg.tool
    def boom(kind: str) -> int:
        if kind == "model":
            raise ToolFailure("The order is locked; retry in a minute.", retryable=True, hint="wait")
        if kind == "bad-output":
            return "not an int"  # type: ignore[return-value]
        raise RuntimeError("password=hunter2 leaked in a message")

    internal = reg.call("boom", {"kind": "internal"}, principal=P)
    assert internal.error.code == "E505" and "RuntimeError" in internal.error.message
    assert "hunter2" not in internal.text() and internal.receipt.outcome == "tool_error"
    assert "hunter2" not in (reg.receipts(outcome="tool_error")[0].error_message or "")
    told = reg.call("boom", {"kind": "model"}, principal=P, call_id="x")
    assert told.error.message == "The order is locked; retry in a minute." and told.error.retryable
    assert told.error.attempts_left == 2
    bad = reg.call("boom", {"kind": "bad-output"}, principal=P)
    assert "does not match its output schema" in bad.error.message and not bad.error.retryable
