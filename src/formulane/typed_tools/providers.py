"""Provider responses in, tool-result messages out: OpenAI (Chat, Responses), Anthropic, Gemini.

Contract: `calls_from_*` read a response (an SDK object with `model_dump()`, a dict, or JSON
text) and return its tool calls in order; `run_calls` answers every call, refused ones too
(unknown tool, invalid arguments, approval required), because a provider rejects the next
request when a call id has no result; the `*_results` helpers render the answers as that
provider's tool-result message(s): OpenAI text, Anthropic `tool_result` blocks with `is_error`
all in one user message, Gemini `functionResponse` parts. Names are resolved through the
registry, so the provider-safe alias of a dotted name (`billing_refund`) finds `billing.refund`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Literal

from ..errors import ToolError
from ..jsonshape import is_object
from .principal import Principal
from .results import ToolResult

if TYPE_CHECKING:
    from .registry import ToolRegistry

Provider = Literal["openai_chat", "openai_responses", "anthropic", "gemini"]
PROVIDERS: tuple[str, ...] = ("openai_chat", "openai_responses", "anthropic", "gemini")


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str | dict[str, Any]
    provider: str


Answered = list[tuple[ToolCall, ToolResult]]


def _as_dict(response: Any) -> dict[str, Any]:
    if is_object(response):
        return response
    if isinstance(response, (str, bytes)):
        try:
            loaded = json.loads(response)
        except ValueError as exc:
            raise ToolError(f"the provider response is not JSON: {exc}", code="E502") from exc
        if is_object(loaded):
            return loaded
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        dumped = dump()
        if is_object(dumped):
            return dumped
    raise ToolError(f"cannot read a provider response of type {type(response).__name__}", code="E502",
                    hint="pass the SDK response object, its dict, or its JSON text")


def calls_from_openai_chat(response: Any, *, choice: int = 0) -> list[ToolCall]:
    data = _as_dict(response)
    choices: list[Any] = data.get("choices") or []
    if not choices:
        return []
    message: dict[str, Any] = choices[choice].get("message") or {}
    out: list[ToolCall] = []
    tool_calls: list[Any] = message.get("tool_calls") or []
    for call in tool_calls:
        if call.get("type", "function") != "function":
            continue
        fn: dict[str, Any] = call.get("function") or {}
        out.append(ToolCall(id=call["id"], name=fn.get("name", ""), arguments=fn.get("arguments") or "{}",
                            provider="openai_chat"))
    return out


def calls_from_openai_responses(response: Any) -> list[ToolCall]:
    data = _as_dict(response)
    output: list[Any] = data.get("output") or []
    return [
        ToolCall(id=item["call_id"], name=item.get("name", ""), arguments=item.get("arguments") or "{}",
                 provider="openai_responses")
        for item in output
        if item.get("type") == "function_call"
    ]


def calls_from_anthropic(response: Any) -> list[ToolCall]:
    data = _as_dict(response)
    content: list[Any] = data.get("content") or []
    return [
        ToolCall(id=block["id"], name=block.get("name", ""), arguments=block.get("input") or {},
                 provider="anthropic")
        for block in content
        if block.get("type") == "tool_use"
    ]


def calls_from_gemini(response: Any, *, candidate: int = 0) -> list[ToolCall]:
    data = _as_dict(response)
    candidates: list[Any] = data.get("candidates") or []
    if not candidates:
        return []
    content: dict[str, Any] = candidates[candidate].get("content") or {}
    parts: list[Any] = content.get("parts") or []
    out: list[ToolCall] = []
    for index, part in enumerate(parts):
        call = part.get("functionCall") or part.get("function_call")
        if not call:
            continue
        name = call.get("name", "")
        # Older Gemini responses carry no call id: the position stands in for it.
        out.append(ToolCall(id=call.get("id") or f"{name}#{index}", name=name, arguments=call.get("args") or {},
                            provider="gemini"))
    return out


def calls_from(provider: str, response: Any) -> list[ToolCall]:
    readers = {
        "openai_chat": calls_from_openai_chat,
        "openai_responses": calls_from_openai_responses,
        "anthropic": calls_from_anthropic,
        "gemini": calls_from_gemini,
    }
    if provider not in readers:
        raise ToolError(f"unknown provider {provider!r}", code="E502", hint="one of " + ", ".join(PROVIDERS))
    return readers[provider](response)


def _retry_key(registry: "ToolRegistry", conversation: str | None, call: ToolCall) -> str | None:
    if conversation is None:
        return None
    tool = registry.resolve(call.name)
    return f"{conversation}:{tool.name if tool else call.name}"


def run_calls(registry: "ToolRegistry", calls: Iterable[ToolCall], *, principal: Principal,
              conversation: str | None = None, idempotency_keys: dict[str, str] | None = None,
              approvals: dict[str, str] | None = None) -> Answered:
    """Run every call in order and pair it with its result; nothing is left unanswered.

    `conversation` caps retries per (conversation, tool); `idempotency_keys` and `approvals`
    map a call id to the key/approval to use for a write.
    """
    keys, grants = idempotency_keys or {}, approvals or {}
    return [
        (call, registry.call(call.name, call.arguments, principal=principal, call_id=call.id,
                             retry_key=_retry_key(registry, conversation, call),
                             idempotency_key=keys.get(call.id), approval=grants.get(call.id)))
        for call in calls
    ]


async def arun_calls(registry: "ToolRegistry", calls: Iterable[ToolCall], *, principal: Principal,
                     conversation: str | None = None, idempotency_keys: dict[str, str] | None = None,
                     approvals: dict[str, str] | None = None, concurrent: bool = False) -> Answered:
    """`run_calls` for async code; with `concurrent=True`, read tools run concurrently."""
    keys, grants = idempotency_keys or {}, approvals or {}
    calls = list(calls)

    async def one(call: ToolCall) -> ToolResult:
        return await registry.acall(call.name, call.arguments, principal=principal, call_id=call.id,
                                    retry_key=_retry_key(registry, conversation, call),
                                    idempotency_key=keys.get(call.id), approval=grants.get(call.id))

    if not concurrent:
        return [(call, await one(call)) for call in calls]
    results = await asyncio.gather(*(one(call) for call in calls))
    return list(zip(calls, results))


def openai_chat_results(answered: Answered) -> list[dict[str, Any]]:
    """One `tool` message per call, in call order."""
    return [{"role": "tool", "tool_call_id": call.id, "content": result.text()} for call, result in answered]


def openai_responses_results(answered: Answered) -> list[dict[str, Any]]:
    return [{"type": "function_call_output", "call_id": call.id, "output": result.text()}
            for call, result in answered]


def anthropic_results(answered: Answered) -> dict[str, Any]:
    """One user message holding every `tool_result` block (and nothing before them)."""
    blocks: list[dict[str, Any]] = []
    for call, result in answered:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id, "content": result.text()}
        if not result.ok:
            block["is_error"] = True
        blocks.append(block)
    return {"role": "user", "content": blocks}


def gemini_results(answered: Answered) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for call, result in answered:
        response = result.data if result.ok and is_object(result.data) else (
            result.error.to_dict() if result.error is not None else {"result": result.data})
        body: dict[str, Any] = {"name": call.name, "response": response}
        if not call.id.startswith(f"{call.name}#"):
            body["id"] = call.id
        parts.append({"functionResponse": body})
    return {"role": "user", "parts": parts}


def results_for(provider: str, answered: Answered) -> Any:
    renderers = {
        "openai_chat": openai_chat_results,
        "openai_responses": openai_responses_results,
        "anthropic": anthropic_results,
        "gemini": gemini_results,
    }
    if provider not in renderers:
        raise ToolError(f"unknown provider {provider!r}", code="E502", hint="one of " + ", ".join(PROVIDERS))
    return renderers[provider](answered)


def handle_response(registry: "ToolRegistry", provider: str, response: Any, *, principal: Principal,
                    conversation: str | None = None) -> Any:
    """Read the calls in `response`, run them all, and return the provider's result message(s)."""
    return results_for(provider, run_calls(registry, calls_from(provider, response), principal=principal,
                                           conversation=conversation))
