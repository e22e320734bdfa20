"""Source -> AST tables for every construct, precedence and associativity, spans."""

from __future__ import annotations

import functools
from decimal import Decimal

import pytest

from formulane.grammar import ast, parse
from formulane.grammar import parser as parser_module
from formulane.source import Span
from grammar_ast_helpers import (
    BLANK, b, bi, call, idx, lam, lst, mem, n, num, s, un,
)

LITERALS = [
    ("12", num(12)),
    ("007", num(7)),
    ("1.5", num("1.5")),
    (".5", num("0.5")),
    ("1.", num(1)),
    ("1e-3", num("0.001")),
    ("1E3", num(1000)),
    ("1.5e+2", num(150)),
    ("0.1", num("0.1")),
    ("123456789012345678901234567890.123456789", num("123456789012345678901234567890.123456789")),
    ("15%", num("0.15")),
    ("15 %", num("0.15")),
    ("0.5%", num("0.005")),
    ("1e2%", num(1)),
    ("(15)%", un("%", num(15))),
    ("15%%", un("%", num("0.15"))),
    ('"abc"', s("abc")),
    ('""', s("")),
    ('"a""b"', s('a"b')),
    ("'it''s'", s("it's")),
    ("'say \"hi\"'", s('say "hi"')),
    ('"back\\slash"', s("back\\slash")),
    ('"line\nbreak"', s("line\nbreak")),
    ('"/* not a comment */"', s("/* not a comment */")),
    ("TRUE", b(True)),
    ("false", b(False)),
    ("True", b(True)),
    ("null", BLANK),
    ("NULL", BLANK),
    ("BLANK()", BLANK),
    ("blank()", BLANK),
]

NAMES = [
    ("price", n("price")),
    ("_x1", n("_x1")),
    ("été", n("été")),
    ("数量", n("数量")),
    ("andy", n("andy")),
    ("notable", n("notable")),
    ("or_else", n("or_else")),
    ("true1", n("true1")),
    ("{Unit Price}", n("Unit Price")),
    ("{and}", n("and")),
    ("{a.b (c) \"d\" 'e'}", n("a.b (c) \"d\" 'e'")),
    ("order.customer.name", mem(mem(n("order"), "customer"), "name")),
    ("{Order}.{Ship Date}", mem(n("Order"), "Ship Date")),
    ("order . total", mem(n("order"), "total")),
    ("xs[1]", idx(n("xs"), num(1))),
    ("orders[1].total", mem(idx(n("orders"), num(1)), "total")),
    ("a.b[2].c", mem(idx(mem(n("a"), "b"), num(2)), "c")),
    ("xs[1][2]", idx(idx(n("xs"), num(1)), num(2))),
    ("xs[i + 1]", idx(n("xs"), bi("+", n("i"), num(1)))),
    ("(a).b", mem(n("a"), "b")),
    ("SUM(xs).total", mem(call("SUM", n("xs")), "total")),
    ("[1, 2][1]", idx(lst(num(1), num(2)), num(1))),
    ('"abc"[1]', idx(s("abc"), num(1))),
]

LISTS_AND_CALLS = [
    ("[]", lst()),
    ("[1]", lst(num(1))),
    ("[1, 2, 3]", lst(num(1), num(2), num(3))),
    ("[[1], [], x]", lst(lst(num(1)), lst(), n("x"))),
    ("sum(1, 2)", call("SUM", num(1), num(2))),
    ("Sum()", call("SUM")),
    ("ERROR.TYPE(x)", call("ERROR.TYPE", n("x"))),
    ("stdev.s(xs)", call("STDEV.S", n("xs"))),
    ("CEILING.MATH(1.5)", call("CEILING.MATH", num("1.5"))),
    ("AND(a, b)", call("AND", n("a"), n("b"))),
    ("or(a)", call("OR", n("a"))),
    ("NOT(a)", call("NOT", n("a"))),
    ("TRUE()", call("TRUE")),
    ("LOG10(x)", call("LOG10", n("x"))),
    ("IF(a, b, c)", call("IF", n("a"), n("b"), n("c"))),
    ("LET(x, 1, x + 1)", call("LET", n("x"), num(1), bi("+", n("x"), num(1)))),
    ("SUM(SUM(1), [2])", call("SUM", call("SUM", num(1)), lst(num(2)))),
]

LAMBDAS = [
    ("MAP(xs, x => x * 2)", call("MAP", n("xs"), lam("x", bi("*", n("x"), num(2))))),
    ("MAP(xs, (x) => x)", call("MAP", n("xs"), lam("x", n("x")))),
    ("MAP(xs, (x => x))", call("MAP", n("xs"), lam("x", n("x")))),
    ("REDUCE(0, xs, (acc, x) => acc + x)",
     call("REDUCE", num(0), n("xs"), lam(("acc", "x"), bi("+", n("acc"), n("x"))))),
    ("MAP(xs, LAMBDA(x, x * 2))", call("MAP", n("xs"), lam("x", bi("*", n("x"), num(2))))),
    ("FILTER(xs, lambda(x, y, x))", call("FILTER", n("xs"), lam(("x", "y"), n("x")))),
    ("MAP(xs, LAMBDA(1))", call("MAP", n("xs"), lam((), num(1)))),
    ("MAP(xs, () => 1)", call("MAP", n("xs"), lam((), num(1)))),
    ("MAP(xs, {a b} => {a b})", call("MAP", n("xs"), lam("a b", n("a b")))),
    ("MAP(xs, (a, {b c}, d) => d)", call("MAP", n("xs"), lam(("a", "b c", "d"), n("d")))),
    # The body reaches as far right as it can.
    ("MAP(xs, x => x + 1 ?? 2 or y)",
     call("MAP", n("xs"), lam("x", bi("??", bi("+", n("x"), num(1)), bi("or", num(2), n("y")))))),
    ("MAP(xs, x => MAP(x, y => y + x), 3)",
     call("MAP", n("xs"), lam("x", call("MAP", n("x"), lam("y", bi("+", n("y"), n("x"))))),
          num(3))),
    ("SORTBY(xs, x => x.price)", call("SORTBY", n("xs"), lam("x", mem(n("x"), "price")))),
]

OPERATORS = [
    ("a = b", bi("=", n("a"), n("b"))),
    ("a == b", bi("=", n("a"), n("b"))),
    ("a <> b", bi("<>", n("a"), n("b"))),
    ("a != b", bi("<>", n("a"), n("b"))),
    ("a<b", bi("<", n("a"), n("b"))),
    ("a <= b", bi("<=", n("a"), n("b"))),
    ("a > b", bi(">", n("a"), n("b"))),
    ("a>=b", bi(">=", n("a"), n("b"))),
    ("a and b", bi("and", n("a"), n("b"))),
    ("a AND b", bi("and", n("a"), n("b"))),
    ("a && b", bi("and", n("a"), n("b"))),
    ("a Or b", bi("or", n("a"), n("b"))),
    ("a || b", bi("or", n("a"), n("b"))),
    ("not a", un("not", n("a"))),
    ("NOT a", un("not", n("a"))),
    ("not (a)", un("not", n("a"))),
    ("!a", un("not", n("a"))),
    ("a ?? b", bi("??", n("a"), n("b"))),
    ("a & b", bi("&", n("a"), n("b"))),
    ("a+b", bi("+", n("a"), n("b"))),
    ("a-b", bi("-", n("a"), n("b"))),
    ("a*b", bi("*", n("a"), n("b"))),
    ("a/b", bi("/", n("a"), n("b"))),
    ("a^b", bi("^", n("a"), n("b"))),
    ("-a", un("-", n("a"))),
    ("+a", un("+", n("a"))),
    ("x%", un("%", n("x"))),
    ("-1", un("-", num(1))),
]

PRECEDENCE = [
    ("1 + 2 * 3", bi("+", num(1), bi("*", num(2), num(3)))),
    ("1 * 2 + 3", bi("+", bi("*", num(1), num(2)), num(3))),
    ("1 - 2 - 3", bi("-", bi("-", num(1), num(2)), num(3))),
    ("8 / 4 / 2", bi("/", bi("/", num(8), num(4)), num(2))),
    ("8 / 4 * 2", bi("*", bi("/", num(8), num(4)), num(2))),
    ("2 ^ 3 ^ 2", bi("^", bi("^", num(2), num(3)), num(2))),
    ("-2 ^ 2", bi("^", un("-", num(2)), num(2))),
    ("2 ^ -2", bi("^", num(2), un("-", num(2)))),
    ("2 * 3 ^ 2", bi("*", num(2), bi("^", num(3), num(2)))),
    ("-2 * 3", bi("*", un("-", num(2)), num(3))),
    ("- -1", un("-", un("-", num(1)))),
    ("-x%", un("-", un("%", n("x")))),
    ("x.y ^ 2", bi("^", mem(n("x"), "y"), num(2))),
    ("xs[1]%", un("%", idx(n("xs"), num(1)))),
    ("a & b + c", bi("&", n("a"), bi("+", n("b"), n("c")))),
    ("a + b & c", bi("&", bi("+", n("a"), n("b")), n("c"))),
    ("a & -b", bi("&", n("a"), un("-", n("b")))),
    ("a = b & c", bi("=", n("a"), bi("&", n("b"), n("c")))),
    ("a < b = c", bi("=", bi("<", n("a"), n("b")), n("c"))),
    ("1 < 2 < 3", bi("<", bi("<", num(1), num(2)), num(3))),
    ("not a = b", un("not", bi("=", n("a"), n("b")))),
    ("not a and b", bi("and", un("not", n("a")), n("b"))),
    ("a and not b", bi("and", n("a"), un("not", n("b")))),
    ("not not a", un("not", un("not", n("a")))),
    ("a and b or c", bi("or", bi("and", n("a"), n("b")), n("c"))),
    ("a or b and c", bi("or", n("a"), bi("and", n("b"), n("c")))),
    ("a and b and c", bi("and", bi("and", n("a"), n("b")), n("c"))),
    ("a ?? b or c", bi("??", n("a"), bi("or", n("b"), n("c")))),
    ("a or b ?? c", bi("??", bi("or", n("a"), n("b")), n("c"))),
    ("a ?? b ?? c", bi("??", bi("??", n("a"), n("b")), n("c"))),
    ("1 + 2 = 3 and 4 > 5 ?? 6",
     bi("??", bi("and", bi("=", bi("+", num(1), num(2)), num(3)), bi(">", num(4), num(5))),
        num(6))),
    ("(1 + 2) * 3", bi("*", bi("+", num(1), num(2)), num(3))),
    ("2 ^ (3 ^ 2)", bi("^", num(2), bi("^", num(3), num(2)))),
    ("(a ?? b) + 1", bi("+", bi("??", n("a"), n("b")), num(1))),
]

SURFACE = [
    ("=1+2", bi("+", num(1), num(2))),
    ("  =SUM(1)", call("SUM", num(1))),
    ("=\n1", num(1)),
    ("/* lead */ =1", num(1)),
    ("= -1", un("-", num(1))),
    ("1 /* one */ + /* two */ 2", bi("+", num(1), num(2))),
    ("/* a\nmulti-line\ncomment */ x", n("x")),
    ("x /* trailing */", n("x")),
    ("SUM(/* none */)", call("SUM")),
    ("\t1\n+\r\n2 ", bi("+", num(1), num(2))),
    ("a/*x*/* b", bi("*", n("a"), n("b"))),
]

ALL_CASES = LITERALS + NAMES + LISTS_AND_CALLS + LAMBDAS + OPERATORS + PRECEDENCE + SURFACE


@pytest.mark.parametrize(("source", "expected"), ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_parse_table(source: str, expected: ast.Node) -> None:
    assert parse(source) == expected


@pytest.mark.parametrize(("source", "expected"), ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_lark_fallback_engine_agrees(source: str, expected: ast.Node) -> None:
    """The public-API Lark path (used if a Lark release moves its table) gives the same AST."""
    engine = _fallback_engine()
    assert not engine.fast
    assert parser_module._parse_with(engine, source, None) == expected


@functools.lru_cache(maxsize=1)
def _fallback_engine() -> parser_module._Engine:
    return parser_module._Engine(parser_module._grammar(), fast=False)


def test_fast_engine_is_in_use() -> None:
    assert parser_module._get_engine().fast


def test_numbers_are_exact_decimals() -> None:
    node = parse("0.1")
    assert isinstance(node, ast.Number) and node.value == Decimal("0.1")
    assert isinstance(node.value, Decimal)
    big = parse("1" * 60)
    assert isinstance(big, ast.Number) and big.value == Decimal("1" * 60)
    pct = parse("12.3456789012345678901234567890123456789%")
    assert isinstance(pct, ast.Number)
    assert pct.value == Decimal("0.123456789012345678901234567890123456789")


def test_parenthesized_flag() -> None:
    explicit = parse("(-2)^2")
    implicit = parse("-2^2")
    assert isinstance(explicit, ast.Binary) and isinstance(implicit, ast.Binary)
    assert explicit.left.parenthesized and not implicit.left.parenthesized
    assert explicit == implicit  # the flag is not part of equality
    nested = parse("((a))")
    assert isinstance(nested, ast.Name) and nested.parenthesized
    assert not parse("a").parenthesized
    power = parse("(2^3)^2")
    assert isinstance(power, ast.Binary) and power.left.parenthesized


def _spans(node: ast.Node) -> list[tuple[str, tuple[int, int]]]:
    return [(type(x).__name__, (x.span.start, x.span.end)) for x in ast.walk(node)]


def test_spans_binary() -> None:
    node = parse("1 + 23")
    assert isinstance(node, ast.Binary)
    assert node.span == Span(0, 6) and node.op_span == Span(2, 3)
    assert node.left.span == Span(0, 1) and node.right.span == Span(4, 6)


def test_spans_call_and_parentheses() -> None:
    node = parse("SUM(a, (b + c)) * 2")
    assert _spans(node) == [
        ("Binary", (0, 19)), ("Call", (0, 15)), ("Name", (4, 5)), ("Binary", (7, 14)),
        ("Name", (8, 9)), ("Name", (12, 13)), ("Number", (18, 19)),
    ]
    assert isinstance(node, ast.Binary) and isinstance(node.left, ast.Call)
    assert node.left.name_span == Span(0, 3)
    assert node.op_span == Span(16, 17)


def test_spans_member_index_percent_unary() -> None:
    member = parse("{Order}.{Ship Date}")
    assert isinstance(member, ast.Member)
    assert member.span == Span(0, 19) and member.name_span == Span(8, 19)
    assert member.obj.span == Span(0, 7)
    chain = parse("xs[1].total%")
    assert _spans(chain) == [
        ("Unary", (0, 12)), ("Member", (0, 11)), ("Index", (0, 5)), ("Name", (0, 2)),
        ("Number", (3, 4)),
    ]
    assert isinstance(chain, ast.Unary) and chain.op_span == Span(11, 12)
    neg = parse("not -x")
    assert isinstance(neg, ast.Unary) and neg.op_span == Span(0, 3)
    assert isinstance(neg.operand, ast.Unary) and neg.operand.op_span == Span(4, 5)
    assert parse("15 %").span == Span(0, 4)


def test_spans_lambdas() -> None:
    node = parse("MAP(xs, (acc, x) => acc)")
    assert isinstance(node, ast.Call)
    fn = node.args[1]
    assert isinstance(fn, ast.Lambda)
    assert fn.span == Span(8, 23) and fn.param_spans == (Span(9, 12), Span(14, 15))
    single = _second_argument("MAP(xs, x => 1)")
    assert single.span == Span(8, 14) and single.param_spans == (Span(8, 9),)
    long_form = _second_argument("MAP(xs, LAMBDA(a, {b}, a))")
    assert long_form.span == Span(8, 25)
    assert long_form.param_spans == (Span(15, 16), Span(18, 21))


def _second_argument(source: str) -> ast.Lambda:
    node = parse(source)
    assert isinstance(node, ast.Call) and isinstance(node.args[1], ast.Lambda)
    return node.args[1]


def test_spans_keep_original_offsets() -> None:
    node = parse("=SUM(1)")
    assert node.span == Span(1, 7)
    multi = parse("1 +\n  foo")
    assert isinstance(multi, ast.Binary) and multi.right.span == Span(6, 9)
    blank = parse("  null ")
    assert blank.span == Span(2, 6)
    assert parse("[1, 2]").span == Span(0, 6)
    assert parse('"a""b"').span == Span(0, 6)


def test_every_node_span_is_inside_source() -> None:
    source = "IF(AND({Unit Price} > 10, qty >= 5%), MAP(xs, x => -x ^ 2)[1], [a.b, \"c\"]) ?? 0"
    for node in ast.walk(parse(source)):
        assert 0 <= node.span.start < node.span.end <= len(source)
        text = source[node.span.start:node.span.end]
        assert text == text.strip()
