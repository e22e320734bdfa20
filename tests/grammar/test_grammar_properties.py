"""Hypothesis properties: printing round-trips, and no input makes parse raise anything else."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from formulane.errors import LimitExceeded, ParseError
from formulane.grammar import ast, parse, print_formula
from formulane.limits import Limits

_SETTINGS = settings(max_examples=400, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])
_ROOMY = Limits(max_source_length=100_000, max_nodes=100_000, max_depth=200,
                max_arguments=10_000)

# ---- a strategy for every AST the parser can produce -----------------------------------------

_digits = st.integers(min_value=0, max_value=10**40)
_exponent = st.integers(min_value=-45, max_value=45)


def _decimal(coefficient: int, exponent: int) -> Decimal:
    return Decimal((0, tuple(int(d) for d in str(coefficient)), exponent))


numbers = st.builds(_decimal, _digits, _exponent).filter(
    lambda d: d == 0 or d.adjusted() <= 307).map(ast.Number)
strings = st.text(max_size=12).map(ast.String)
booleans = st.booleans().map(ast.Boolean)
identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)
keywordish = st.sampled_from(["and", "OR", "Not", "true", "FALSE", "null", "falſe", "x.y",
                              "1st", "Unit Price", " padded ", "été", "数量", "a-b", "BLANK"])
braced = st.text(min_size=1, max_size=10).filter(lambda t: "}" not in t)
names = st.one_of(identifiers, keywordish, braced)
blank = st.just(ast.Call("BLANK", ()))
leaves = st.one_of(numbers, strings, booleans, names.map(ast.Name), blank)
function_names = st.sampled_from(["SUM", "IF", "MAP", "REDUCE", "LET", "ERROR.TYPE", "STDEV.S",
                                  "CEILING.MATH", "AND", "OR", "NOT", "TRUE", "BLANK", "F_2"])
binary_ops = st.sampled_from(ast.BINARY_OPERATORS)
unary_ops = st.sampled_from(ast.UNARY_OPERATORS)


def _extend(children: st.SearchStrategy[ast.Node]) -> st.SearchStrategy[ast.Node]:
    lambdas = st.builds(ast.Lambda, st.lists(names, max_size=3).map(tuple), children)
    omitted = st.just(ast.Omitted())
    arguments = st.lists(st.one_of(children, lambdas, omitted), max_size=4).map(tuple).filter(
        lambda args: args != (ast.Omitted(),))  # F() reads back as no argument at all
    return st.one_of(
        st.builds(ast.ListLit, st.lists(children, max_size=4).map(tuple)),
        st.builds(ast.Member, children, names),
        st.builds(ast.Index, children, children),
        st.builds(ast.Unary, unary_ops, children),
        st.builds(ast.Binary, binary_ops, children, children),
        st.builds(ast.Call, function_names, arguments),
    )


trees = st.recursive(leaves, _extend, max_leaves=25)


@_SETTINGS
@given(trees)
def test_print_then_parse_is_identity(tree: ast.Node) -> None:
    text = print_formula(tree)
    assert parse(text, limits=_ROOMY) == tree, text
    assert print_formula(parse(text, limits=_ROOMY)) == text  # canonical text is a fixed point


# ---- any text: a node, ParseError or LimitExceeded, nothing else ------------------------------

_TOKENS = [
    "SUM(", "IF(", "MAP(", "LAMBDA(", "ERROR.TYPE(", "NOT(", "(", ")", "[", "]", ",", "1",
    "1.5", ".5", "1e3", "15%", "%", "x", "y", "{a b}", "{", "}", '"s"', "'t'", '"', "'", "and",
    "or", "not", "!", "TRUE", "null", "=>", "??", "=", "==", "<>", "!=", "<", ">=", "&&", "||",
    "&", "+", "-", "*", "/", "^", "**", ";", ".", "/*", "*/", "/* c */", "$", "`", "#", ":",
    "?", "|", "\u201c", "\u200b", "\n", " ", "  ",
]
formula_text = st.lists(st.sampled_from(_TOKENS), max_size=25).map("".join)
formula_chars = st.text(alphabet=st.sampled_from(
    list("()[]{},.;:+-*/^%&=<>!?|\"' \n\t0123456789eE_abxyzSUMIFandortnul`$#@\\\u00a0\u201c")),
    max_size=40)


def _check_any(text: str) -> None:
    try:
        tree = parse(text)
    except (ParseError, LimitExceeded) as err:
        diag = err.primary
        assert diag.code.startswith(("E1", "E4")), diag
        assert diag.span is not None and 0 <= diag.span.start <= diag.span.end <= len(text)
        assert diag.label, diag
        assert err.render().startswith(f"error[{diag.code}]")
        for fix in diag.fixes:
            assert 0 <= fix.span.start <= fix.span.end <= len(text)
            fix.apply(text)
        return
    for node in ast.walk(tree):
        assert 0 <= node.span.start <= node.span.end <= len(text)
    printed = print_formula(tree)
    assert parse(printed, limits=_ROOMY) == tree


@_SETTINGS
@given(st.text(max_size=60))
def test_arbitrary_text_only_raises_formula_errors(text: str) -> None:
    _check_any(text)


@_SETTINGS
@given(formula_text)
def test_token_soup_only_raises_formula_errors(text: str) -> None:
    _check_any(text)


@_SETTINGS
@given(formula_chars)
def test_formula_characters_only_raise_formula_errors(text: str) -> None:
    _check_any(text)


@settings(max_examples=200, deadline=None)
@given(trees, st.data())
def test_broken_printed_formulas_only_raise_formula_errors(tree: ast.Node,
                                                           data: st.DataObject) -> None:
    """Cut, duplicate or drop a piece of a valid formula: still only formula errors."""
    text = print_formula(tree)
    assume(text)
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i, len(text)))
    _check_any(text[:i] + text[j:])
    _check_any(text[:j] + text[i:])
