"""Declaring tools: decorator forms, models from signatures and docstrings, explicit `Tool`,
and a clear E506 for every malformed definition."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Union

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from formulane.errors import ToolError
from formulane.typed_tools import CallContext, Principal, Tool, ToolRegistry
from formulane.typed_tools.docstrings import parse_docstring

P = Principal("u", "t")


def test_bare_decorator_builds_models_from_signature_and_docstring() -> None:
    reg = ToolRegistry()

    @reg.tool
    def convert(amount: float, currency: str = "EUR") -> float:
        """Convert money.

        More words here.

        Args:
            amount: How much to convert.
            currency: The target
                currency code.
        Returns:
            The converted amount.
        """
        return amount * 2

    tool = reg.get("convert")
    assert convert(1.0) == 2.0  # the decorator returns the function unchanged
    assert tool.description == "Convert money.\n\nMore words here."
    props = tool.input_schema["properties"]
    assert props["amount"]["description"] == "How much to convert."
    assert props["currency"]["description"] == "The target currency code."
    assert tool.input_schema["required"] == ["amount"]
    assert tool.input_schema["additionalProperties"] is False
    assert tool.effect == "read" and tool.version == "1" and tool.scopes == frozenset()
    assert tool.wraps_output and tool.output_schema["properties"]["result"]["type"] == "number"
    assert reg.call("convert", '{"amount": 2.5}', principal=P).value == 5.0


def test_decorator_with_options_and_field_descriptions_win_over_docstrings() -> None:
    reg = ToolRegistry()

    @reg.tool(name="orders.cancel", effect="propose", scopes=["orders:write"], version="3", cost=7,
              description="Propose cancelling an order.", title="Cancel order")
    def cancel(order_id: Annotated[str, Field(description="From Field.", min_length=3)],
               reason: str = Field("none", description="Why.")) -> dict[str, str]:
        """Ignored description.

        Args:
            order_id: From the docstring.
        """
        return {"order_id": order_id, "reason": reason}

    tool = reg.get("orders.cancel")
    assert (tool.effect, tool.version, tool.cost, tool.title) == ("propose", "3", 7, "Cancel order")
    assert tool.scopes == frozenset({"orders:write"})
    assert tool.description == "Propose cancelling an order."
    assert tool.input_schema["properties"]["order_id"]["description"] == "From Field."
    assert tool.input_schema["properties"]["order_id"]["minLength"] == 3
    assert tool.input_schema["properties"]["reason"]["description"] == "Why."
    assert tool.mcp_annotations() == {"title": "Cancel order", "readOnlyHint": False, "destructiveHint": False}


@pytest.mark.parametrize(
    ("doc", "args"),
    [
        ("Sphinx.\n\n:param a: first\n:param b: second\n    continued\n:returns: x", {"a": "first", "b": "second continued"}),
        ("NumPy.\n\nParameters\n----------\na : int\n    first\nb : str\n    second\n\nReturns\n-------\nint",
         {"a": "first", "b": "second"}),
        ("Google.\n\nArgs:\n    a (int): first\n    b: second\n        more\n\nRaises:\n    ValueError: no",
         {"a": "first", "b": "second more"}),
        ("Google.\n\nKeyword Args:\n    a: first\n\nNotes:\n    not the description", {"a": "first"}),
        ("Google.\n\nArgs:\n    a: first\n\nAttributes:\n    size: not an argument", {"a": "first"}),
        ("NumPy.\n\nParameters\n----------\nx1, x2 : array_like\n    both\n*cols\n    names", {"x1": "both", "x2": "both", "cols": "names"}),
        ("Sphinx.\n\n:param int a: first\n:type a: int\n:raises ValueError: never", {"a": "first"}),
        ("", {}),
        (None, {}),
    ],
)
def test_docstring_styles(doc: str | None, args: dict[str, str]) -> None:
    parsed = parse_docstring(doc)
    assert parsed.args == args
    if doc:
        assert parsed.description == doc.split("\n")[0]


@pytest.mark.parametrize(
    ("doc", "description"),
    [
        # A wrapped sentence whose second line starts with a role is still description.
        ("Get the default. Tries\n:meth:`lookup` first.\n\n:param ctx: context", "Get the default. Tries :meth:`lookup` first."),
        # Unknown Google sections end the description instead of joining it.
        ("Sum.\n\nTodo:\n    faster\nSee Also:\n    other", "Sum."),
        # A summary wrapped over two lines is one line; paragraphs stay apart.
        ("Convert money\nacross currencies.\n\nMore.\n\nArgs:\n    a: x", "Convert money across currencies.\n\nMore."),
        # A malformed Args section (an item without a colon) is not an error: no style reads
        # it, so it stays in the description and nothing the author wrote is lost.
        ("Sum.\n\nArgs:\n    a no colon", "Sum.\n\nArgs: a no colon"),
    ],
)
def test_docstring_descriptions(doc: str, description: str) -> None:
    assert parse_docstring(doc).description == description


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["Args:", "Returns:", "Parameters", "----------", ":param a:", ":returns:",
                                           "a (int): x", "a : int", "    more", "", "Notes:", ":type a: int"]),
                          st.text(max_size=12)), max_size=12).map("\n".join))
def test_docstring_parsing_never_raises(doc: str) -> None:
    parsed = parse_docstring(doc)
    assert isinstance(parsed.description, str) and all(isinstance(v, str) for v in parsed.args.values())


def test_sync_and_async_tools_both_run() -> None:
    reg = ToolRegistry()

    @reg.tool
    async def slow_double(n: int) -> int:
        await asyncio.sleep(0)
        return n * 2

    @reg.tool
    def double(n: int) -> int:
        return n * 2

    assert reg.get("slow_double").is_async and not reg.get("double").is_async
    assert reg.call("slow_double", {"n": 4}, principal=P).value == 8

    async def both() -> tuple[Any, Any]:
        a = await reg.acall("slow_double", {"n": 5}, principal=P)
        b = await reg.acall("double", {"n": 5}, principal=P)
        return a.value, b.value

    assert asyncio.run(both()) == (10, 10)


def test_sync_call_of_async_tool_inside_a_loop_is_a_programmer_error() -> None:
    reg = ToolRegistry()

    @reg.tool
    async def f(n: int) -> int:
        return n

    async def inside() -> None:
        reg.call("f", {"n": 1}, principal=P)

    with pytest.raises(ToolError) as err:
        asyncio.run(inside())
    assert err.value.code == "E506" and "acall" in err.value.hint


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid")
    src: str
    dst: str


class Delete(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str


def test_explicit_tool_with_model_input_and_injected_context() -> None:
    seen: list[CallContext] = []

    def run(args: Move, ctx: CallContext) -> str:
        seen.append(ctx)
        return f"{args.src}->{args.dst}"

    reg = ToolRegistry()
    reg.add(Tool(name="move", fn=run, input_model=Move, output_model=str, description="Move a file."))
    result = reg.call("move", {"src": "a", "dst": "b"}, principal=P, call_id="c1")
    assert result.value == "a->b"
    assert seen[0].principal == P and seen[0].call_id == "c1" and seen[0].receipt_id == result.receipt.id
    assert "ctx" not in reg.get("move").input_schema["properties"]


def test_root_union_is_wrapped_in_a_field() -> None:
    reg = ToolRegistry()
    reg.add(Tool(name="fs_op", fn=lambda op: type(op).__name__, input_model=Union[Move, Delete], output_model=str))
    tool = reg.get("fs_op")
    assert tool.call_style == "root" and list(tool.input_schema["properties"]) == ["input"]
    assert tool.notes == ("root input type wrapped in the field 'input'",)
    assert reg.call("fs_op", {"input": {"path": "x"}}, principal=P).value == "Delete"


def test_principal_parameter_is_injected_not_exposed() -> None:
    reg = ToolRegistry()

    @reg.tool
    def whoami(prefix: str, who: Principal) -> str:
        return prefix + who.subject

    assert list(reg.get("whoami").input_schema["properties"]) == ["prefix"]
    assert reg.call("whoami", {"prefix": "I am "}, principal=P).value == "I am u"


class Loose(BaseModel):
    x: int


def _no_annotation(x) -> int:  # type: ignore[no-untyped-def]
    return 1


def _varargs(*xs: int) -> int:
    return 1


def _kwargs(**kw: int) -> int:
    return 1


def _posonly(x: int, /) -> int:
    return x


def _private(_x: int) -> int:
    return 1


def _no_return(x: int):  # type: ignore[no-untyped-def]
    return x


def _ok(x: int) -> int:
    return x


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Tool.from_function(_no_annotation), "parameter 'x' has no type annotation"),
        (lambda: Tool.from_function(_varargs), "*args/**kwargs"),
        (lambda: Tool.from_function(_kwargs), "*args/**kwargs"),
        (lambda: Tool.from_function(_posonly), "positional-only"),
        (lambda: Tool.from_function(_private), "starts with '_'"),
        (lambda: Tool.from_function(_no_return), "has no return annotation"),
        (lambda: Tool.from_function(_ok, name="bad name!"), "invalid tool name"),
        (lambda: Tool.from_function(_ok, name="9starts_with_digit"), "invalid tool name"),
        (lambda: Tool.from_function(_ok, effect="delete"), "effect must be one of read, propose, write"),
        (lambda: Tool.from_function(_ok, scopes="admin"), "scopes must be a list"),
        (lambda: Tool.from_function(_ok, cost=-1), "cost must be a non-negative int"),
        (lambda: Tool.from_function(_ok, version=""), "version must be a non-empty string"),
        (lambda: Tool.from_function(_ok, approver_kinds=["robot"]), "approver_kinds"),
        (lambda: Tool(name="loose", fn=lambda a: a, input_model=Loose, output_model=int), "must forbid unknown keys"),
        (lambda: Tool(name="two", fn=lambda a, b: a, input_model=Move, output_model=int), "exactly one argument"),
    ],
)
def test_malformed_definitions_are_refused_with_e506(build: Any, message: str) -> None:
    with pytest.raises(ToolError) as err:
        build()
    assert err.value.code == "E506"
    assert message in str(err.value)


def test_duplicate_names_and_colliding_provider_names() -> None:
    reg = ToolRegistry()
    reg.add(Tool.from_function(_ok, name="a.b"))
    with pytest.raises(ToolError, match="already registered"):
        reg.add(Tool.from_function(_ok, name="a.b"))
    reg.add(Tool.from_function(_ok, name="a_b"))
    # "a.b" would become "a_b" for providers, which is taken: it gets a stable hash suffix.
    alias = reg.provider_name("a.b")
    assert alias.startswith("a_b_") and len(alias) == len("a_b_") + 6
    assert reg.provider_name("a_b") == "a_b"
    assert reg.resolve(alias) is reg.get("a.b")
    with pytest.raises(ToolError) as err:
        reg.get("a_c")
    assert err.value.code == "E501" and "a_b" in err.value.hint


def test_provider_names_do_not_depend_on_registration_order() -> None:
    names = ["x.y", "x_y", "a" * 100, "a" * 101, "ok-name"]
    first, second = ToolRegistry(), ToolRegistry()
    for name in names:
        first.add(Tool.from_function(_ok, name=name))
    for name in reversed(names):
        second.add(Tool.from_function(_ok, name=name))
    mapped = {n: first.provider_name(n) for n in names}
    assert mapped == {n: second.provider_name(n) for n in names}
    assert len(set(mapped.values())) == len(names)
    assert all(len(v) <= 63 for v in mapped.values())
