"""The formatter: canonical text, comments kept, lines broken past the width; idempotent and
meaning-preserving as Hypothesis properties over generated formulas (with comments)."""

from __future__ import annotations

import re

import pytest

from formulane.errors import FormulaError
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from formulane.authoring.formatter import format, format_tree
from formulane.errors import ParseError
from formulane.grammar import ast, parse, print_formula, tokenize
from formulane.testing.strategies import formula_trees

from authoring_helpers import SCHEMA, any_trees

PROPERTY = settings(max_examples=300, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))

# (source, formatted at width 80)
CASES = [
    ("=sum(1;2)".replace(";", ","), "SUM(1, 2)"),
    ("a==b && c!=d || !e", "a = b and c <> d or not e"),
    ("'it''s' & {qty} & {Unit Price}", '"it\'s" & qty & {Unit Price}'),
    ("if(x,1,)", "IF(x, 1, )"),
    ('TEXTSPLIT(t,",",,TRUE)', 'TEXTSPLIT(t, ",", , TRUE)'),
    ("MAP(xs, LAMBDA(x, x*2))", "MAP(xs, x => x * 2)"),
    ("-2^2", "(-2) ^ 2"),
    ("15%", "0.15"),
    ("null", "BLANK()"),
    ("/* head */ a+b", "/* head */ a + b"),
    ("a /* why */ + b", "a /* why */ + b"),
    ("SUM(/* nothing */)", "SUM(/* nothing */)"),
    ("F(a, /* skip */ , b)", "F(a, /* skip */, b)"),
    ("(a /* inner */) * 2", "a /* inner */ * 2"),
    ("a + b /* tail */", "a + b /* tail */"),
    ("IF(c, /* yes */ 1, /* no */ 2)", "IF(c, /* yes */ 1, /* no */ 2)"),
]


@pytest.mark.parametrize(("source", "expected"), CASES)
def test_format_cases(source: str, expected: str) -> None:
    assert format(source) == expected
    assert format(expected) == expected


def test_long_formula_breaks_and_indents() -> None:
    source = ('if(and(order.total>1000,order.customer.tier="gold",order.customer.since<date(2020,'
              '1,1)),round(order.total*0.9,2),order.total)')
    assert format(source) == (
        "IF(\n"
        "  AND(\n"
        "    order.total > 1000,\n"
        '    order.customer.tier = "gold",\n'
        "    order.customer.since < DATE(2020, 1, 1)\n"
        "  ),\n"
        "  ROUND(order.total * 0.9, 2),\n"
        "  order.total\n"
        ")")
    assert format(source, width=200) == print_formula(parse(source))


def test_sums_fill_lines_and_conditions_take_one_line_each() -> None:
    terms = " + ".join(f"item{i}" for i in range(30))
    out = format(terms, width=40)
    assert all(len(line) <= 40 for line in out.split("\n"))
    assert out.split("\n")[1].startswith("  + item")
    conditions = " and ".join(f"flag{i}" for i in range(12))
    lines = format(conditions, width=30).split("\n")
    assert lines[0] == "flag0" and all(line.startswith("  and flag") for line in lines[1:])


def test_let_keeps_each_name_with_its_value() -> None:
    source = ("let(rate, 0.2 /* base */, net, price*qty*(1-rate), if(net>1000, round(net*0.9, 2), "
              "net))")
    assert format(source, width=40) == (
        "LET(\n"
        "  rate, 0.2 /* base */,\n"
        "  net, price * qty * (1 - rate),\n"
        "  IF(\n"
        "    net > 1000,\n"
        "    ROUND(net * 0.9, 2),\n"
        "    net\n"
        "  )\n"
        ")")
    # a pair that does not fit puts its value on the next lines, indented
    assert format("LET(averylongname, price * qty * (1 - discount), averylongname)", 34) == (
        "LET(\n"
        "  averylongname,\n"
        "    price * qty * (1 - discount),\n"
        "  averylongname\n"
        ")")
    assert format("LET(x, 1, y, 2, x + y)") == "LET(x, 1, y, 2, x + y)"


def test_a_chain_inside_a_chain_indents_once() -> None:
    # (total * rate + ... - fee) & " EUR": the inner chain is the left operand of '&'
    assert format('total * rate + SUM(xs) / COUNT(xs) - fee & " EUR"', 30) == (
        "total * rate\n"
        "  + SUM(xs) / COUNT(xs) - fee\n"
        '  & " EUR"')


def test_multiline_comment_and_comment_text_unchanged() -> None:
    source = "a + /* one\n   two */ b"
    assert format(source) == "a + /* one\n   two */ b"


def test_parse_errors_propagate() -> None:
    with pytest.raises(ParseError):
        format("SUM(1,")
    with pytest.raises(FormulaError) as caught:  # issue 15 item 11: no foreign exception
        format("1", width=0)
    assert caught.value.code == "E301"


def test_format_tree_has_no_comments_and_matches_printer_when_wide() -> None:
    tree = parse("IF(a, MAP(xs, x => x + 1), [1, 2])")
    assert format_tree(tree, width=1000) == print_formula(tree)


# ---- properties ------------------------------------------------------------------------------

def _comments(text: str) -> list[str]:
    return [t.value for t in tokenize(text) if t.type == "COMMENT"]


@st.composite
def commented(draw: st.DrawFn, trees: st.SearchStrategy[ast.Node]) -> str:
    """A printed formula with comments (and line breaks) at random token boundaries."""
    text = print_formula(draw(trees))
    tokens = tokenize(text)
    # Not between a function name and its '(' (that is no call), nor inside a token.
    cuts = sorted({t.end for t in tokens if t.type != "FUNCNAME"} | {0})
    chosen = draw(st.lists(st.sampled_from(cuts), max_size=4))
    out, last = [], 0
    for i, at in enumerate(sorted(chosen)):
        out.append(text[last:at])
        gap = draw(st.sampled_from([" ", "\n", "", "  \n  "]))
        after = draw(st.sampled_from([" ", "\n", ""]))
        out.append(f"{gap}/* c{i} */{after}")
        last = at
    out.append(text[last:])
    return "".join(out)


TREES = st.one_of(formula_trees(SCHEMA, max_depth=3), any_trees)


@PROPERTY
@given(commented(TREES), st.sampled_from([20, 40, 80, 120]))
def test_format_preserves_meaning_is_idempotent_and_keeps_comments(source: str,
                                                                   width: int) -> None:
    try:
        tree = parse(source)
    except ParseError:
        assume(False)
        return
    once = format(source, width)
    assert parse(once) == tree
    assert format(once, width) == once
    assert _comments(once) == _comments(source)


@PROPERTY
@given(TREES, st.sampled_from([10, 30, 80]))
def test_format_without_comments_is_canonical_when_it_fits(tree: ast.Node, width: int) -> None:
    text = print_formula(tree)
    once = format(text, width)
    assert parse(once) == tree
    assert format(once, width) == once
    if len(text) <= width:
        assert once == text
    # Breaking only inserts blanks: the canonical text is what remains without them.
    assert re.sub(r"\s+", "", once) == re.sub(r"\s+", "", text)
