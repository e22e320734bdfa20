"""Constant folding on the IR (`interpreter.fold`): what folds, and that folding never changes
an answer.

The cases (tests/fold/cases.yaml) say what each formula's root folds to, or that it is kept;
every case, and every formula Hypothesis builds from constants, ``x``, ``t`` and the calls
folding treats specially (errors left to right, lazy calls, context-reading calls, values no
backend holds), is evaluated by the scalar engine on the program as checked and on the program
as folded: the answers agree (numbers within the 18 decimal places a folded fraction keeps).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import formulane
from formulane.errors import Unsupported
from formulane import ErrorValue, FormulaError, Limits
from formulane.interpreter import ir
from formulane.interpreter.fold import MISSING, constant, fold
from formulane.interpreter.program import Program

CASES = yaml.safe_load((Path(__file__).parent / "fold" / "cases.yaml").read_text())
SCHEMA = {"x": "Number", "t": "Text", "f": "Boolean"}
INPUTS = [{"x": Decimal("1.5"), "t": "ab", "f": True}, {"x": Decimal("-7"), "t": "", "f": False},
          {"x": Decimal("0"), "t": "Straße", "f": True}]
NOW = dt.datetime(2024, 5, 6, 12, 0, tzinfo=dt.timezone.utc)
#: a folded fraction keeps 18 decimal places (what Decimal(38, 18) holds)
REL = Decimal("1e-15")


def _folded_program(program: Program[Any], root: ir.IR) -> Program[Any]:
    return Program(source=program.source, schema=program.schema, profile=program.profile,
                   limits=program.limits, registry=program.registry, tree=program.tree,
                   root=root, variables=program.variables,
                   slot_count=program._frame_size, warnings=())


def _run(program: Program[Any], inputs: dict[str, Any]) -> Any:
    try:
        return program.evaluate(inputs, now=NOW)
    except FormulaError as exc:
        return ("raises", exc.code)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, ErrorValue) or isinstance(b, ErrorValue):
        return isinstance(a, ErrorValue) and isinstance(b, ErrorValue) and a.code == b.code
    if isinstance(a, Decimal) and isinstance(b, Decimal) and not isinstance(a, bool):
        return abs(a - b) <= REL * max(abs(a), abs(b), Decimal(1))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b and type(a) is type(b))


def _agrees(source: str, schema: dict[str, str] = SCHEMA) -> ir.IR:
    program = formulane.compile(source, schema)
    folded = fold(program.root)
    other = _folded_program(program, folded)
    for inputs in INPUTS:
        before, after = _run(program, inputs), _run(other, inputs)
        assert _same(before, after), f"{source} on {inputs}: {before!r} folded to {after!r}"
    return folded


@pytest.mark.parametrize("case", CASES, ids=[c["expr"] for c in CASES])
def test_fold_case(case: dict[str, Any]) -> None:
    folded = _agrees(case["expr"])
    if case.get("kept"):
        assert type(folded) not in (ir.Const, ir.ListOf), f"{case['expr']} folded to {folded}"
        return
    if "list" in case:  # a constant list, written out (`ListOf` of folded constants)
        assert type(folded) is ir.ListOf and all(type(i) is ir.Const and i.folded
                                                 for i in folded.items), case["expr"]
        got = [i.value for i in folded.items]  # type: ignore[union-attr]
        assert got == [v if isinstance(v, str) and not v[:1].isdigit() else Decimal(v)
                       for v in case["list"]]
        return
    assert type(folded) is ir.Const and folded.folded, f"{case['expr']} was not folded"
    want = case["const"]
    if isinstance(want, dict):
        assert isinstance(folded.value, ErrorValue) and folded.value.code == want["error"]
    elif isinstance(want, bool):
        assert folded.value is want
    elif isinstance(folded.value, dt.date):
        assert folded.value.isoformat() == want
    else:
        assert folded.value == Decimal(want)


def test_limits_are_the_programs() -> None:
    program = formulane.compile('LEN(REPT("ab", 30))', SCHEMA)
    assert type(fold(program.root, limits=Limits(max_text_length=100))) is ir.Const
    # the scalar engine stops this text (E406): not folded, the backend reports it
    assert type(fold(program.root, limits=Limits(max_text_length=50))) is not ir.Const


@pytest.mark.parametrize("backend", ["sql", "polars"])
def test_backends_fold_under_the_programs_limits(backend: str) -> None:
    """Every entry point passes the program's own limits to the walk and its forms: under
    the wide limits the constant folds; under the narrow ones REPT's 60 characters pass
    max_text_length, which the scalar engine stops (E406), so the backend refuses and says
    why (before, the text forms folded it under the default limits)."""
    src = 'LEN(REPT("ab", 30)) + x'
    wide = formulane.compile(src, SCHEMA, limits=Limits(max_text_length=100))
    narrow = formulane.compile(src, SCHEMA, limits=Limits(max_text_length=50))
    compile_ = (lambda p: p.to_sql("duckdb").select("t")) if backend == "sql" \
        else (lambda p: str(p.to_polars().value))
    assert "60" in compile_(wide)
    with pytest.raises(Unsupported, match="would exceed a limit"):
        compile_(narrow)


@pytest.mark.parametrize("src,want", [
    ("LET(a, 2, c, a * 3, a + c)", "8"),        # a name bound to a constant folds further
    ("LET(a, 5, a + x)", None),                  # the LET goes; a + x stays a call
    ("LET(a, x, c, 2, a * c)", "keeps a"),       # a non-constant name keeps its binding
    ("LET(a, 1, a) + LET(a, x, a)", "one LET"),  # a name is known in its own LET only
])
def test_let_names_bound_to_constants(src: str, want: str | None) -> None:
    folded = fold(formulane.compile(src, SCHEMA).root)
    if want == "keeps a":
        assert type(folded) is ir.Let and folded.names == ("a",)
        return
    if want == "one LET":
        lets = [n for n in _nodes(folded) if type(n) is ir.Let]
        assert len(lets) == 1 and type(lets[0].values[0]) is ir.Var
        return
    assert not any(type(n) is ir.Let for n in _nodes(folded))
    if want is None:
        assert type(folded) is ir.Call
    else:
        assert type(folded) is ir.Const and folded.value == Decimal(want)


def _nodes(node: ir.IR) -> list[ir.IR]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(ir.ir_children(n))
    return out


def test_keep_leaves_the_call_and_its_callers() -> None:
    program = formulane.compile("ROUND(1, 1/0) + 1", SCHEMA)
    kept = fold(program.root, keep=lambda call: call.spec.name == "/")
    assert type(kept) is ir.Call and type(kept.args[0]) is ir.Call


def test_constant_reads_what_fold_decides() -> None:
    program = formulane.compile('">=" & 2', SCHEMA)
    assert constant(program.root) == ">=2"
    assert constant(formulane.compile("[1, 2] ", SCHEMA).root) == (Decimal(1), Decimal(2))
    assert constant(formulane.compile("x + 1", SCHEMA).root) is MISSING
    assert isinstance(constant(formulane.compile("1/0", SCHEMA).root), ErrorValue)


# ------------------------------------------------------------------------ the property

_NUMBER_LEAVES = st.sampled_from(["x", "0", "1", "2.5", "-3", "1/0", "SQRT(-1)", "NA()",
                                  "LEN(t)", "PI()", "FACT(170)", "1e19"])
_TEXT_LEAVES = st.sampled_from(['t', '"ab"', '""', '"Straße"', "TEXT(1/0, \"0\")"])


def _numbers(inner: st.SearchStrategy[str], texts: st.SearchStrategy[str]
             ) -> st.SearchStrategy[str]:
    two = st.tuples(inner, inner)
    return st.one_of(
        two.map(lambda p: f"({p[0]} + {p[1]})"),
        two.map(lambda p: f"({p[0]} / {p[1]})"),
        two.map(lambda p: f"ROUND({p[0]}, {p[1]})"),
        two.map(lambda p: f"IFERROR({p[0]}, {p[1]})"),
        two.map(lambda p: f"IF({p[0]} > {p[1]}, {p[0]}, {p[1]})"),
        two.map(lambda p: f"MOD({p[0]}, {p[1]})"),
        two.map(lambda p: f"SUM([{p[0]}, {p[1]}])"),
        two.map(lambda p: f"INDEX([{p[0]}, 2, 3], {p[1]})"),
        inner.map(lambda a: f"ABS({a})"),
        inner.map(lambda a: f"ERROR.TYPE({a})"),
        inner.map(lambda a: f"HOUR(TIME({a}, 0, 0))"),
        inner.map(lambda a: f"SERIAL(DATETIME(2024, 1, 1, {a}, 0, 0))"),
        texts.map(lambda s: f"LEN({s})"),
    )


def _texts(numbers: st.SearchStrategy[str], inner: st.SearchStrategy[str]
           ) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, numbers).map(lambda p: f"REPT({p[0]}, {p[1]})"),
        st.tuples(inner, numbers).map(lambda p: f"LEFT({p[0]}, {p[1]})"),
        st.tuples(inner, inner).map(lambda p: f"({p[0]} & {p[1]})"),
        st.tuples(inner, numbers).map(lambda p: f'({p[0]} & {p[1]})'),
        inner.map(lambda s: f"UPPER({s})"),
    )


def _formulas() -> st.SearchStrategy[str]:
    numbers = st.deferred(lambda: st.one_of(_NUMBER_LEAVES, _numbers(numbers, texts)))
    texts = st.deferred(lambda: st.one_of(_TEXT_LEAVES, _texts(numbers, texts)))
    return numbers


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_formulas())
def test_folding_never_changes_an_answer(source: str) -> None:
    assume(len(source) < 400)
    try:
        formulane.compile(source, SCHEMA)
    except FormulaError:
        assume(False)
    _agrees(source)
