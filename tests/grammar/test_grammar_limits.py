"""Static limits: E401-E404 are raised cleanly, early, and never as RecursionError."""

from __future__ import annotations

import time

import pytest

from formulane.errors import LimitExceeded, ParseError
from formulane.grammar import ast, parse
from formulane.limits import DEFAULT_LIMITS, HARD_MAX_DEPTH, Limits

BIG = Limits(max_source_length=10**6)


def _code(source: str, limits: Limits | None = None) -> str:
    with pytest.raises(LimitExceeded) as info:
        parse(source, limits=limits)
    err = info.value
    assert err.span is not None and 0 <= err.span.start <= err.span.end <= len(source)
    assert err.primary.label and err.hint
    return err.code


def test_source_length_is_checked_first() -> None:
    limit = DEFAULT_LIMITS.max_source_length
    parse("1" + " " * (limit - 1))
    assert _code("1" + " " * limit) == "E401"
    # Checked before anything else: this text is also unterminated.
    assert _code('"' * (limit + 1)) == "E401"


def test_100_000_nested_parentheses() -> None:
    source = "(" * 100_000 + "1" + ")" * 100_000
    started = time.process_time()
    assert _code(source, BIG) == "E403"
    assert time.process_time() - started < 2.0  # the pre-scan stops at the first level too deep


def test_100_000_nested_parentheses_even_with_the_largest_depth() -> None:
    limits = Limits(max_source_length=10**6, max_depth=HARD_MAX_DEPTH, max_nodes=10**6)
    assert _code("(" * 100_000 + "1" + ")" * 100_000, limits) == "E403"
    assert _code("[" * 100_000 + "]" * 100_000, limits) == "E403"
    assert _code("SUM(" * 50_000 + ")" * 50_000, limits) == "E403"


def test_100_000_term_sum() -> None:
    source = "+".join(["1"] * 100_000)
    started = time.process_time()
    assert _code(source, BIG) == "E402"
    assert time.process_time() - started < 2.0  # CPU time: immune to a busy machine
    # With the node limit raised too, the depth limit still stops it, after the parse.
    roomy = Limits(max_source_length=10**6, max_nodes=10**6)
    assert _code(source, roomy) == "E403"


def test_100_000_prefix_operators() -> None:
    assert _code("-" * 100_000 + "1", BIG) == "E402"
    roomy = Limits(max_source_length=10**6, max_nodes=10**6)
    assert _code("-" * 100_000 + "1", roomy) == "E403"
    assert _code("not " * 50_000 + "x", roomy) == "E403"


def test_long_member_chain_is_too_deep() -> None:
    roomy = Limits(max_source_length=10**6, max_nodes=10**6)
    assert _code("a" + ".b" * 100_000, roomy) == "E403"
    assert _code("xs" + "[1]" * 30_000, roomy) == "E403"


def test_100_000_item_list() -> None:
    source = "[" + ", ".join(["1"] * 100_000) + "]"
    assert _code(source, BIG) == "E404"  # the pre-scan counts the commas
    roomy = Limits(max_source_length=10**6, max_nodes=10**6, max_arguments=10**6)
    started = time.process_time()
    tree = parse(source, limits=roomy)
    assert isinstance(tree, ast.ListLit) and len(tree.items) == 100_000
    assert time.process_time() - started < 10.0  # linear: list items are appended, not copied


def test_depth_limit_boundary() -> None:
    depth = DEFAULT_LIMITS.max_depth
    parse("-" * (depth - 1) + "1")
    assert _code("-" * depth + "1") == "E403"
    parse("+".join(["1"] * depth))  # a chain of n terms is n - 1 levels of Binary plus a leaf
    assert _code("+".join(["1"] * (depth + 1))) == "E403"
    parse("(" * depth + "1" + ")" * depth)
    assert _code("(" * (depth + 1) + "1" + ")" * (depth + 1)) == "E403"


def test_node_limit_boundary() -> None:
    limits = Limits(max_nodes=10)
    parse("[1, 2, 3, 4, 5, 6, 7, 8, 9]", limits=limits)
    assert _code("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", limits) == "E402"


def test_argument_limit_boundary() -> None:
    limit = DEFAULT_LIMITS.max_arguments
    parse("SUM(" + ", ".join(["1"] * limit) + ")")
    assert _code("SUM(" + ", ".join(["1"] * (limit + 1)) + ")") == "E404"
    limits = Limits(max_arguments=2)
    assert _code("MAP(xs, LAMBDA(a, b, c, a))", limits) == "E404"
    parse("MAP(xs, (a, b) => a)", limits=limits)


def test_syntax_errors_inside_huge_input_do_not_recurse() -> None:
    roomy = Limits(max_source_length=10**6, max_nodes=10**6, max_depth=HARD_MAX_DEPTH)
    with pytest.raises((ParseError, LimitExceeded)):
        parse("1 + " * 100_000, limits=roomy)
    with pytest.raises((ParseError, LimitExceeded)):
        parse("(" * 150 + "1 +" + ")" * 150, limits=roomy)
