"""Omitted arguments (Excel style) and the editor tokenizer."""

from __future__ import annotations

import pytest

from formulane.errors import ParseError
from formulane.grammar import ast, parse, print_formula, tokenize
from formulane.source import Span
from grammar_ast_helpers import b, call, n, num, s

O = ast.Omitted()

# (source, expected AST, canonical text)
OMITTED = [
    ('TEXTSPLIT(t, ",", , TRUE)', call("TEXTSPLIT", n("t"), s(","), O, b(True)),
     'TEXTSPLIT(t, ",", , TRUE)'),
    ("F(a,,b)", call("F", n("a"), O, n("b")), "F(a, , b)"),
    ("F(a, )", call("F", n("a"), O), "F(a, )"),
    ("F(a,)", call("F", n("a"), O), "F(a, )"),
    ("F(, a)", call("F", O, n("a")), "F(, a)"),
    ("F(,)", call("F", O, O), "F(, )"),
    ("F( , , )", call("F", O, O, O), "F(, , )"),
    ("F()", call("F"), "F()"),
    ("IF(x, 1, )", call("IF", n("x"), num(1), O), "IF(x, 1, )"),
    ("F(G(, 1), )", call("F", call("G", O, num(1)), O), "F(G(, 1), )"),
    ("F(a, /* none */, b)", call("F", n("a"), O, n("b")), "F(a, , b)"),
]


@pytest.mark.parametrize(("source", "expected", "canonical"), OMITTED)
def test_omitted_arguments(source: str, expected: ast.Node, canonical: str) -> None:
    tree = parse(source)
    assert tree == expected
    assert print_formula(tree) == canonical
    assert parse(canonical) == tree


def test_omitted_spans_are_the_gap_between_neighbours() -> None:
    source = "F( a ,  , b,  )"
    tree = parse(source)
    assert isinstance(tree, ast.Call)
    spans = [(a.span.start, a.span.end) for a in tree.args]
    assert spans == [(3, 4), (6, 8), (10, 11), (12, 14)]
    lead = parse("F(  , 1)")
    assert isinstance(lead, ast.Call) and lead.args[0].span == Span(2, 4)


@pytest.mark.parametrize("source", ["[1,,2]", "[1, 2,]", "[, 1]", "(a,,b) => 1", "F(a b)",
                                    "MAP(xs, LAMBDA(x, ))", "LAMBDA(, x)"])
def test_omitted_only_in_calls(source: str) -> None:
    with pytest.raises(ParseError):
        parse(source)


def test_printer_refuses_omitted_outside_calls() -> None:
    for tree in (O, ast.ListLit((num(1), O)), call("F", O), ast.Binary("+", O, num(1))):
        with pytest.raises(ValueError):
            print_formula(tree)


def test_omitted_reaches_the_checker() -> None:
    import formulane

    assert formulane.evaluate("ROUND(2.567, )") == 3
    assert formulane.evaluate('TEXTSPLIT("a,,b", ",", , TRUE)') == ["a", "b"]
    with pytest.raises(formulane.CheckError) as info:
        formulane.compile("SUM(1, 2, )")
    assert "cannot be left out" in info.value.message


# ---- tokenize ---------------------------------------------------------------------------------

def _kinds(source: str) -> list[tuple[str, str]]:
    return [(t.type, t.value) for t in tokenize(source)]


def test_tokenize_keeps_comments_and_positions() -> None:
    source = 'SUM(a /* c */, "x")'
    tokens = tokenize(source)
    assert [(t.type, t.value) for t in tokens] == [
        ("FUNCNAME", "SUM"), ("LPAR", "("), ("IDENT", "a"), ("COMMENT", "/* c */"),
        ("COMMA", ","), ("STRING", '"x"'), ("RPAR", ")")]
    for t in tokens:
        assert source[t.start:t.end] == t.value


@pytest.mark.parametrize(("source", "last"), [
    ('UPPER("ab', ("OPEN_STRING", '"ab')),
    ("UPPER('ab", ("OPEN_STRING", "'ab")),
    ("{Unit Pr", ("OPEN_BRACED", "{Unit Pr")),
    ("a /* note", ("OPEN_COMMENT", "/* note")),
    ("a #", ("ERROR", "#")),
])
def test_tokenize_never_fails_on_broken_input(source: str, last: tuple[str, str]) -> None:
    assert _kinds(source)[-1] == last


def test_tokenize_words() -> None:
    assert _kinds("stdev.s(xs) and not x.y") == [
        ("FUNCNAME", "stdev.s"), ("LPAR", "("), ("IDENT", "xs"), ("RPAR", ")"), ("AND", "and"),
        ("NOT", "not"), ("IDENT", "x"), ("DOT", "."), ("IDENT", "y")]
    assert _kinds("15% <> 1") == [("PERCENT_NUMBER", "15%"), ("CMP", "<>"), ("NUMBER", "1")]
