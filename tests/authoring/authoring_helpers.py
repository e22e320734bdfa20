"""Shared fixtures of the authoring tests: a schema and a strategy for any parseable AST."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import strategies as st

from formulane.grammar import ast

SCHEMA = {
    "price": "Number", "qty": "Number", "name": "Text", "flag": "Boolean", "due": "Date",
    "xs": "List[Number]", "tags": "List[Text]", "discount": "Number?",
    "Unit Price": "Number",
    "order": "Record{total: Number, customer: Record{name: Text, tier: Text}, "
             "{Ship Date}: Date}",
    "orders": "List[Record{total: Number, id: Text}]",
}

_digits = st.integers(min_value=0, max_value=10**30)
_exponent = st.integers(min_value=-30, max_value=30)
numbers = st.builds(lambda c, e: Decimal((0, tuple(int(d) for d in str(c)), e)), _digits,
                    _exponent).filter(lambda d: d == 0 or d.adjusted() <= 307).map(ast.Number)
names = st.one_of(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True),
                  st.sampled_from(["and", "Not", "null", "Unit Price", "été", "x.y", "1st"]))
leaves = st.one_of(numbers, st.text(max_size=8).map(ast.String), st.booleans().map(ast.Boolean),
                   names.map(ast.Name), st.just(ast.Call("BLANK", ())))
functions = st.sampled_from(["SUM", "IF", "MAP", "LET", "ERROR.TYPE", "STDEV.S", "TEXTSPLIT"])


def _extend(children: st.SearchStrategy[ast.Node]) -> st.SearchStrategy[ast.Node]:
    lambdas = st.builds(ast.Lambda, st.lists(names, max_size=3).map(tuple), children)
    args = st.lists(st.one_of(children, lambdas, st.just(ast.Omitted())), max_size=4).map(
        tuple).filter(lambda a: a != (ast.Omitted(),))
    return st.one_of(
        st.builds(ast.ListLit, st.lists(children, max_size=4).map(tuple)),
        st.builds(ast.Member, children, names),
        st.builds(ast.Index, children, children),
        st.builds(ast.Unary, st.sampled_from(ast.UNARY_OPERATORS), children),
        st.builds(ast.Binary, st.sampled_from(ast.BINARY_OPERATORS), children, children),
        st.builds(ast.Call, functions, args),
    )


#: Any AST the parser can produce (not necessarily well typed).
any_trees = st.recursive(leaves, _extend, max_leaves=20)
