"""Provider responses in, tool-result messages out: every call id answered, errors flagged the
way each provider expects, names resolved through provider aliases."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from formulane.errors import ToolError
from formulane.typed_tools import Principal, ToolRegistry
from formulane.typed_tools.providers import (
    arun_calls,
    calls_from,
    gemini_results,
    handle_response,
    openai_chat_results,
    openai_responses_results,
    run_calls,
)

P = Principal("u", "acme", ["billing:write"])


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.tool
    def add(a: int, b: int) -> int:
        return a + b

    @reg.tool(name="billing.refund", effect="write", scopes=["billing:write"])
    def refund(order_id: str) -> str:
        return order_id

    return reg


OPENAI_CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None,
        "tool_calls": [
            {"id": "call_ok", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}},
            {"id": "call_bad", "type": "function", "function": {"name": "add", "arguments": "{\"a\": \"1\", \"b\": 2"}},
            {"id": "call_unknown", "type": "function", "function": {"name": "addd", "arguments": "{}"}},
            {"id": "call_write", "type": "function",
             "function": {"name": "billing_refund", "arguments": "{\"order_id\": \"o1\"}"}},
        ]}}],
}

OPENAI_RESPONSES = {
    "id": "resp_1",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "add", "arguments": "{\"a\":2,\"b\":3}"},
        {"type": "message", "id": "msg_1", "role": "assistant", "content": []},
        {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "add", "arguments": "{\"a\":2}"},
    ],
}

ANTHROPIC = {
    "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
    "content": [
        {"type": "text", "text": "Let me add those."},
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 4, "b": 5}},
        {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {"a": 4, "b": "5"}},
    ],
}

GEMINI = {
    "candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "add", "args": {"a": 1, "b": 1}}},
        {"functionCall": {"id": "g-2", "name": "add", "args": {"a": 1}}},
    ]}}],
}


def test_openai_chat_every_call_is_answered_in_order() -> None:
    reg = registry()
    answered = run_calls(reg, calls_from("openai_chat", OPENAI_CHAT), principal=P)
    messages = openai_chat_results(answered)
    assert [m["tool_call_id"] for m in messages] == ["call_ok", "call_bad", "call_unknown", "call_write"]
    assert all(m["role"] == "tool" and isinstance(m["content"], str) for m in messages)
    assert json.loads(messages[0]["content"]) == {"result": 3}
    assert messages[1]["content"].startswith("error[E502]") and "not valid JSON" in messages[1]["content"]
    assert messages[2]["content"].startswith("error[E501]") and "'add'" in messages[2]["content"]
    assert messages[3]["content"].startswith("error[E504]")  # the alias found billing.refund, which needs approval
    assert answered[3][1].approval is not None


def test_openai_responses_items() -> None:
    reg = registry()
    items = openai_responses_results(run_calls(reg, calls_from("openai_responses", OPENAI_RESPONSES), principal=P))
    assert [(i["type"], i["call_id"]) for i in items] == [("function_call_output", "call_a"),
                                                          ("function_call_output", "call_b")]
    assert json.loads(items[0]["output"]) == {"result": 5} and "required field is missing" in items[1]["output"]


def test_anthropic_results_are_one_user_message_with_is_error() -> None:
    reg = registry()
    message = handle_response(reg, "anthropic", ANTHROPIC, principal=P)
    assert message["role"] == "user"
    assert [b["type"] for b in message["content"]] == ["tool_result", "tool_result"]
    ok, bad = message["content"]
    assert ok == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"result\":9}"}
    assert bad["tool_use_id"] == "toolu_2" and bad["is_error"] is True and "b: Input should be" in bad["content"]


def test_gemini_function_responses() -> None:
    reg = registry()
    content = gemini_results(run_calls(reg, calls_from("gemini", GEMINI), principal=P))
    first, second = (p["functionResponse"] for p in content["parts"])
    assert first == {"name": "add", "response": {"result": 2}}  # no id: older responses carry none
    assert second["id"] == "g-2" and second["response"]["error"]["code"] == "E502"


def test_sdk_objects_and_json_text_are_read_too() -> None:
    class SdkObject:
        def model_dump(self) -> dict[str, Any]:
            return ANTHROPIC

    assert [c.id for c in calls_from("anthropic", SdkObject())] == ["toolu_1", "toolu_2"]
    assert [c.id for c in calls_from("anthropic", json.dumps(ANTHROPIC))] == ["toolu_1", "toolu_2"]
    assert calls_from("openai_chat", {"choices": []}) == []


@pytest.mark.parametrize(("provider", "response", "message"), [
    ("cohere", {}, "unknown provider"),
    ("anthropic", "not json", "not JSON"),
    ("anthropic", 42, "cannot read a provider response"),
])
def test_unreadable_input_is_a_clear_error(provider: str, response: Any, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        calls_from(provider, response)


def test_conversation_caps_retries_across_call_ids() -> None:
    reg = registry()
    reg.max_retries = 1

    def bad(call_id: str) -> dict[str, Any]:  # each model turn brings a new call id
        return {"choices": [{"message": {"tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "add", "arguments": "{}"}}]}}]}

    first = run_calls(reg, calls_from("openai_chat", bad("c1")), principal=P, conversation="conv-1")
    second = run_calls(reg, calls_from("openai_chat", bad("c2")), principal=P, conversation="conv-1")
    assert first[0][1].error.retryable and not second[0][1].error.retryable
    assert "retry limit" in openai_chat_results(second)[0]["content"]
    other = run_calls(reg, calls_from("openai_chat", bad("c3")), principal=P, conversation="conv-2")
    assert other[0][1].error.retryable


def test_async_run_calls_concurrently() -> None:
    reg = registry()
    answered = asyncio.run(arun_calls(reg, calls_from("anthropic", ANTHROPIC), principal=P, concurrent=True))
    assert [(c.id, r.status) for c, r in answered] == [("toolu_1", "ok"), ("toolu_2", "error")]
