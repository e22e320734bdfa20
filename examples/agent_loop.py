"""An agent loop calling typed tools with the OpenAI and the Anthropic SDKs.

One typed tool (`quote_price`: a pydantic-validated call that evaluates a pricing formula) is
exported to each provider; the loop sends the conversation, runs the tool calls the model asks
for through `handle_response` (validation, principal, receipts) and sends the results back until
the model answers in text. Without API keys the example runs against `StandIn`, a local
stand-in of both HTTP APIs on loopback that asks for one tool call and then answers with the
tool's result: the SDKs' real clients, request building and response parsing all run.

Run: ``python examples/agent_loop.py`` (stand-in), or with OPENAI_API_KEY / ANTHROPIC_API_KEY
and ``--live`` against the real services.
"""

from __future__ import annotations

import json
import sys
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import anthropic
import openai
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionToolParam

import formulane
from formulane.typed_tools import Principal, ToolRegistry
from formulane.typed_tools.providers import handle_response

tools = ToolRegistry()
PRICING = "ROUND(price * qty * IF(country = \"FR\", 1.2, 1), 2)"


@tools.tool
def quote_price(price: Decimal, qty: int, country: str) -> str:
    """Price an order with the customer's pricing formula."""
    return str(formulane.evaluate(PRICING, {"price": price, "qty": qty, "country": country}))


ALICE = Principal("alice", "acme")
QUESTION = "What do 3 items at 9.99 cost in FR?"
ARGS = {"price": "9.99", "qty": 3, "country": "FR"}


def openai_loop(client: openai.OpenAI, model: str = "gpt-4.1-mini") -> str:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    # The export is plain JSON; the SDK types the same shape as TypedDicts.
    payload = cast("list[ChatCompletionToolParam]", tools.export("openai").payload())
    for _ in range(5):
        response = client.chat.completions.create(model=model, messages=messages, tools=payload)
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        messages += handle_response(tools, "openai_chat", response, principal=ALICE)
    raise RuntimeError("the model kept calling tools")


def anthropic_loop(client: anthropic.Anthropic, model: str = "claude-sonnet-4-5") -> str:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    payload = cast("list[ToolParam]", tools.export("anthropic").payload())
    for _ in range(5):
        response = client.messages.create(model=model, max_tokens=512, messages=messages,
                                          tools=payload)
        if response.stop_reason != "tool_use":
            return "".join(b.text for b in response.content if b.type == "text")
        messages.append({"role": "assistant", "content": [b.model_dump() for b in response.content]})
        messages.append(handle_response(tools, "anthropic", response, principal=ALICE))
    raise RuntimeError("the model kept calling tools")


class StandIn:
    """Both APIs on 127.0.0.1: the first turn asks for quote_price, the next echoes its result."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "StandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - the http.server spelling
        body: dict[str, Any] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        last: dict[str, Any] = body["messages"][-1]
        message: dict[str, Any]
        blocks: list[dict[str, Any]]
        reply: dict[str, Any]
        if self.path.endswith("/chat/completions"):
            if last["role"] == "tool":
                message = {"role": "assistant", "content": f"It costs {last['content']}."}
            else:
                message = {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_1", "type": "function", "function": {
                        "name": body["tools"][0]["function"]["name"],
                        "arguments": json.dumps(ARGS)}}]}
            reply = {"id": "cmpl", "object": "chat.completion", "created": 0,
                     "model": body["model"], "choices": [{"index": 0, "message": message,
                     "finish_reason": "stop" if message["content"] else "tool_calls"}]}
        else:
            content: list[Any] | str = last["content"]
            if isinstance(content, list) and content and content[0].get("type") == "tool_result":
                result = content[0]["content"]
                text = result if isinstance(result, str) else result[0]["text"]
                blocks, stop = [{"type": "text", "text": f"It costs {text}."}], "end_turn"
            else:
                blocks = [{"type": "tool_use", "id": "toolu_1", "name": body["tools"][0]["name"],
                           "input": ARGS}]
                stop = "tool_use"
            reply = {"id": "msg", "type": "message", "role": "assistant", "model": body["model"],
                     "content": blocks, "stop_reason": stop, "stop_sequence": None,
                     "usage": {"input_tokens": 1, "output_tokens": 1}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> None:
    if "--live" in sys.argv:
        print(openai_loop(openai.OpenAI()))
        print(anthropic_loop(anthropic.Anthropic()))
        return
    with StandIn() as stand_in:
        print(openai_loop(openai.OpenAI(base_url=stand_in.url + "/v1", api_key="stand-in")))
        print(anthropic_loop(anthropic.Anthropic(base_url=stand_in.url, api_key="stand-in")))


if __name__ == "__main__":
    main()
