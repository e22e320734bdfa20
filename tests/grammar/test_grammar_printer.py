"""The canonical printer: exact output for each construct, and parse(print(x)) == x."""

from __future__ import annotations

from decimal import Decimal

import pytest

from formulane.grammar import ast, parse, print_formula, to_source
from formulane.grammar.printer import format_name, format_number
from grammar_ast_helpers import BLANK, b, bi, call, idx, lam, lst, mem, n, num, s, un

# (source, canonical text): canonical text is a fixed point of parse + print.
CANONICAL = [
    ("1+2*3", "1 + 2 * 3"),
    ("(1+2)*3", "(1 + 2) * 3"),
    ("1-(2-3)", "1 - (2 - 3)"),
    ("(1-2)-3", "1 - 2 - 3"),
    ("2^3^2", "(2 ^ 3) ^ 2"),
    ("2^(3^2)", "2 ^ (3 ^ 2)"),
    ("-2^2", "(-2) ^ 2"),
    ("(-2)^2", "(-2) ^ 2"),
    ("-(2^2)", "-(2 ^ 2)"),
    ("+2^2", "(+2) ^ 2"),
    ("2^-2", "2 ^ -2"),
    ("-x%", "-x%"),
    ("(-x)%", "(-x)%"),
    ("(15)%", "(15)%"),
    ("15%", "0.15"),
    ("15%%", "(0.15)%"),
    ("--1", "--1"),
    ("a==b", "a = b"),
    ("a!=b", "a <> b"),
    ("a && b || !c", "a and b or not c"),
    ("A AND (B OR C)", "A and (B or C)"),
    ("not a = b", "not a = b"),
    ("(not a) = b", "(not a) = b"),
    ("not (a and b)", "not (a and b)"),
    ("a and not b", "a and not b"),
    ("-(not a)", "-(not a)"),
    ("a ?? b ?? c", "a ?? b ?? c"),
    ("a ?? (b ?? c)", "a ?? (b ?? c)"),
    ("(a or b) ?? c", "a or b ?? c"),
    ("a<b<c", "(a < b) < c"),
    ("(a = b) <> c", "(a = b) <> c"),
    ("a<(b<c)", "a < (b < c)"),
    ("a & (b & c)", "a & (b & c)"),
    ("(a + b) & c", "a + b & c"),
    ("sum(1,2)", "SUM(1, 2)"),
    ("stdev.s( xs )", "STDEV.S(xs)"),
    ("null", "BLANK()"),
    ("blank()", "BLANK()"),
    ("true", "TRUE"),
    ("False", "FALSE"),
    ("'it''s'", '"it\'s"'),
    ("'say \"hi\"'", '"say ""hi"""'),
    ("{Unit Price} * {qty}", "{Unit Price} * qty"),
    ("{and} + {NULL}", "{and} + {NULL}"),
    ("{Order}.{Ship Date}", "Order.{Ship Date}"),
    ("order.{not}", "order.{not}"),
    ("{1st}", "{1st}"),
    ("xs[1].total", "xs[1].total"),
    ("(xs)[1]", "xs[1]"),
    ("(a + b).c", "(a + b).c"),
    ("(a + b)[1]", "(a + b)[1]"),
    ("(1).x", "(1).x"),
    ("[1,2][1]", "[1, 2][1]"),
    ("(-a).b", "(-a).b"),
    ("-a.b", "-a.b"),
    ("[ ]", "[]"),
    ("[1,[2,3]]", "[1, [2, 3]]"),
    (".5", "0.5"),
    ("1.50", "1.5"),
    ("1e3", "1000"),
    ("1e-3", "0.001"),
    ("100", "100"),
    ("0.0", "0"),
    ("=SUM(1;)".replace(";", ""), "SUM(1)"),
    ("MAP(xs, LAMBDA(x, x*2))", "MAP(xs, x => x * 2)"),
    ("MAP(xs, (x) => x)", "MAP(xs, x => x)"),
    ("REDUCE(0, xs, LAMBDA(a, b, a+b))", "REDUCE(0, xs, (a, b) => a + b)"),
    ("MAP(xs, LAMBDA(1))", "MAP(xs, () => 1)"),
    ("MAP(xs, LAMBDA({a b}, {a b}))", "MAP(xs, {a b} => {a b})"),
    ("MAP(xs, x => x ?? 1, 2)", "MAP(xs, x => x ?? 1, 2)"),
    ("LET(x, 1, x + 1)", "LET(x, 1, x + 1)"),
    ("1 /* c */ + 2", "1 + 2"),
]


@pytest.mark.parametrize(("source", "expected"), CANONICAL, ids=[c[0] for c in CANONICAL])
def test_canonical_text(source: str, expected: str) -> None:
    tree = parse(source)
    assert print_formula(tree) == expected
    assert parse(expected) == tree
    assert print_formula(parse(expected)) == expected  # a fixed point


def test_alias() -> None:
    assert to_source is print_formula


NUMBERS = [
    ("0", "0"),
    ("0.00", "0"),
    ("-0", "0"),
    ("1", "1"),
    ("10", "10"),
    ("1E+1", "10"),
    ("1.2300", "1.23"),
    ("0.001", "0.001"),
    ("123.456", "123.456"),
    ("1E+20", "100000000000000000000"),
    ("1E+21", "1E+21"),
    ("1.5E+300", "1.5E+300"),
    ("1E-19", "0.0000000000000000001"),
    ("1E-25", "1E-25"),
    ("1.25E-30", "1.25E-30"),
    ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
    ("-2.5", "-2.5"),
    ("1E+999999999999999999", "1E+999999999999999999"),
]


@pytest.mark.parametrize(("value", "text"), NUMBERS)
def test_format_number(value: str, text: str) -> None:
    assert format_number(Decimal(value)) == text
    if not text.startswith("-") and "E+999" not in text:
        parsed = parse(text)
        assert isinstance(parsed, ast.Number) and parsed.value == Decimal(value)


@pytest.mark.parametrize("bad", [Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity")])
def test_format_number_rejects_non_finite(bad: Decimal) -> None:
    with pytest.raises(ValueError):
        format_number(bad)


def test_format_name() -> None:
    assert format_name("price") == "price"
    assert format_name("Unit Price") == "{Unit Price}"
    assert format_name("TRUE") == "{TRUE}"
    assert format_name("x.y") == "{x.y}"
    assert format_name("été") == "été"
    for bad in ("", "a}b"):
        with pytest.raises(ValueError):
            format_name(bad)


AST_CASES = [
    (bi("^", un("-", num(2)), num(2)), "(-2) ^ 2"),
    (bi("^", bi("^", num(2), num(3)), num(2)), "(2 ^ 3) ^ 2"),
    (bi("^", num(2), bi("^", num(3), num(2))), "2 ^ (3 ^ 2)"),
    (un("-", bi("^", num(2), num(2))), "-(2 ^ 2)"),
    (un("%", num("0.5")), "(0.5)%"),
    (un("%", un("%", n("x"))), "x%%"),
    (mem(num(1), "x"), "(1).x"),
    (idx(num(1), num(2)), "1[2]"),
    (mem(n("a"), "b c"), "a.{b c}"),
    (call("MAP", n("xs"), lam(("a", "b"), bi("+", n("a"), n("b")))), "MAP(xs, (a, b) => a + b)"),
    (call("F", lam("x", lam("y", n("y")))), "F(x => y => y)"),
    (bi("+", lam("x", n("x")), num(1)), "(x => x) + 1"),
    (lst(lam("x", n("x"))), "[x => x]"),
    (s('a"b'), '"a""b"'),
    (b(True), "TRUE"),
    (BLANK, "BLANK()"),
    (un("not", un("not", n("a"))), "not not a"),
    (bi("=", n("a"), un("not", n("b"))), "a = (not b)"),
    (bi("and", n("a"), bi("and", n("b"), n("c"))), "a and (b and c)"),
    (bi("-", n("a"), un("-", n("b"))), "a - -b"),
    (num("-2"), "-2"),
]


@pytest.mark.parametrize(("tree", "text"), AST_CASES, ids=[c[1] for c in AST_CASES])
def test_print_ast(tree: ast.Node, text: str) -> None:
    assert print_formula(tree) == text


def test_printer_rejects_unprintable_nodes() -> None:
    with pytest.raises(ValueError):
        print_formula(n("a}b"))
    with pytest.raises(ValueError):
        print_formula(call("not a name"))
    with pytest.raises(ValueError):
        print_formula(num("NaN"))
    with pytest.raises(TypeError):
        print_formula("x")  # type: ignore[arg-type]


def test_printer_does_not_recurse() -> None:
    """A hand-built AST far deeper than any parse limit still prints (no RecursionError)."""
    tree: ast.Node = num(1)
    for _ in range(50_000):
        tree = un("-", tree)
    text = print_formula(tree)
    assert text == "-" * 50_000 + "1"
    wide: ast.Node = num(1)
    for _ in range(20_000):
        wide = bi("+", wide, num(1))
    assert print_formula(wide).count("+") == 20_000
