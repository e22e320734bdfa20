"""formulane.testing, tested by using it: every generated formula checks (strict profile) and
evaluates on generated inputs with no Python exception, for every function of the registry
(optional packs on); ``returns=`` and ``max_depth=`` hold; values() gives blanks and edges."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import formulane
from formulane import ErrorValue, FormulaError, LimitExceeded
from formulane.functions.registry import default_registry
from formulane.grammar import ast, parse
from formulane.testing import formulas, values
from formulane.testing.strategies import coverage, formula_trees
from formulane.types import is_assignable, parse_type

SCHEMA = {
    "a": "Number", "b": "Number", "s": "Text", "flag": "Boolean", "d": "Date",
    "when": "DateTime", "span": "Duration", "xs": "List[Number]", "names": "List[Text]",
    "maybe": "Number?", "note": "Text?",
    "order": "Record{total: Number, customer: Record{name: Text, tier: Text?}}",
    "orders": "List[Record{total: Number, id: Text}]",
}
REGISTRY = default_registry().with_packs("finance", "statistics")
FAST = settings(max_examples=8, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
NOW = dt.datetime(2024, 5, 17, 12, 30, tzinfo=dt.timezone.utc)


def _run(source: str, variables: dict) -> object:
    """Check and evaluate; only a LimitExceeded may stop it (a documented FormulaError)."""
    try:
        program = formulane.compile(source, SCHEMA, registry=REGISTRY)
    except LimitExceeded:
        return None
    try:
        return program.evaluate(variables, now=NOW)
    except LimitExceeded:
        return None


def test_the_whole_registry_is_reachable() -> None:
    reachable, missing = coverage(SCHEMA, registry=REGISTRY, volatile=True)
    assert not missing, missing
    names = {spec.name for spec in REGISTRY if spec.category != "operators"}
    assert names <= reachable


@pytest.mark.parametrize("name", sorted(s.name for s in REGISTRY))
def test_every_function_checks_and_evaluates(name: str) -> None:
    if name in ("LET", "BLANK", "NA", "ERROR"):
        strategy = formulas(SCHEMA, registry=REGISTRY, max_depth=2, volatile=True).filter(
            lambda src: name + "(" in src)
    else:
        strategy = formulas(SCHEMA, registry=REGISTRY, functions=[name], max_depth=2,
                            volatile=True)

    @FAST
    @given(strategy, values(SCHEMA))
    def run(source: str, variables: dict) -> None:
        try:
            _run(source, variables)
        except FormulaError as exc:  # a check error is a generator bug; say which formula
            raise AssertionError(f"{source}\n{exc.render()}") from exc

    run()


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["Number", "Text", "Boolean", "Date", "DateTime", "Duration",
                        "List[Number]", "List[Text]", "Number?", "Text?"]), st.data())
def test_returns_is_the_static_type(wanted: str, data: st.DataObject) -> None:
    source = data.draw(formulas(SCHEMA, returns=wanted, max_depth=2))
    program = formulane.compile(source, SCHEMA)
    assert is_assignable(program.type, parse_type(wanted)), (source, str(program.type))


def _depth(node: ast.Node) -> int:
    """Nesting of calls and operators (leaves, names and fields count 0)."""
    best, stack = 0, [(node, 0)]
    while stack:
        current, level = stack.pop()
        nested = level + (1 if isinstance(current, (ast.Call, ast.Binary, ast.Unary,
                                                    ast.Lambda)) else 0)
        best = max(best, nested)
        stack.extend((k, nested) for k in ast.children(current))
    return best


@settings(max_examples=100, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.integers(0, 3), st.data())
def test_max_depth_bounds_nesting(max_depth: int, data: st.DataObject) -> None:
    tree = data.draw(formula_trees(SCHEMA, max_depth=max_depth, errors=False))
    # A literal date is one call, a negative number one operator, a defaulted name one
    # operator or IF(ISBLANK()): each level may add up to two of those wrappers.
    assert _depth(tree) <= 2 * max_depth + 3


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(formulas(SCHEMA, max_depth=3), values(SCHEMA))
def test_mixed_formulas_check_and_evaluate(source: str, variables: dict) -> None:
    result = _run(source, variables)
    if result is not None:
        assert not isinstance(result, BaseException)
    assert parse(source) is not None


def test_generators_reach_lambdas_let_omitted_and_fields() -> None:
    seen: dict[str, str] = {}

    @settings(max_examples=400, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(formula_trees(SCHEMA, max_depth=3))
    def collect(tree: ast.Node) -> None:
        for node in ast.walk(tree):
            seen.setdefault(type(node).__name__, "")
            if isinstance(node, ast.Call) and node.name == "LET":
                seen["LET"] = ""

    collect()
    assert {"Lambda", "Omitted", "Member", "Index", "LET", "Binary", "Unary"} <= set(seen)


def test_values_include_blanks_and_edges() -> None:
    schema = {"n": "Number?", "t": "Text", "xs": "List[Number?]", "d": "Date"}
    found = {
        "blank": lambda v: v["n"] is None,
        "empty text": lambda v: v["t"] == "",
        "empty list": lambda v: v["xs"] == [],
        "blank item": lambda v: None in v["xs"],
        "leap day": lambda v: v["d"] == dt.date(2024, 2, 29),
    }
    from hypothesis import find

    for what, predicate in found.items():
        example = find(values(schema), predicate, settings=settings(
            max_examples=2000, database=None, suppress_health_check=list(HealthCheck)))
        assert predicate(example), what


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(values(SCHEMA))
def test_values_fit_the_schema(variables: dict) -> None:
    for name in SCHEMA:
        program = formulane.compile(name if name.isidentifier() else "{" + name + "}", SCHEMA)
        result = program.evaluate(variables)
        assert not isinstance(result, ErrorValue)


def test_let_bound_error_values_propagate() -> None:
    for source in ("LET(v, 1/0, v + 1)", "LET(v, 1/0, v <= v)",
                   'LET(v, TIMEVALUE(""), v <= TIME(0, 0, 0))'):
        assert isinstance(formulane.evaluate(source), ErrorValue), source


def test_functions_option_and_errors() -> None:
    with pytest.raises(ValueError):
        formulas(SCHEMA, functions=["NO_SUCH_FUNCTION"])
    with pytest.raises(ValueError):
        formulas({}, returns="Record{a: Number}")
