"""The walk's folding memo (`interpreter.fold.FoldMemo`) changes no answer (issue 10, compile time).

The columnar walk asks `constant` for the operands of each call one by one; without a memo each
question folds the operand's whole subtree again (quadratic in the nesting depth). With the
walk's memo every answer must stay the one a fresh fold gives: checked here for every subtree
of every golden program, asked in the walk's order (children first), top down, and twice; for
subtrees inside LET bodies and lambdas (a name is read as its own LET binds it, never as a
fold of another scope left it); and under a memory budget that two sibling folds pass only
together (a kept fold must not have charged the meter: its answer inside a bigger fold, after
other calls have charged, could differ). And the walk itself compiles the same SQL with it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import formulane
from formulane import Limits
from formulane.columnar import walk
from formulane.interpreter import ir
from formulane.interpreter.fold import MISSING, FoldMemo, constant, fold

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from case_runner import compiled_cases  # noqa: E402


def _roots() -> list[ir.IR]:
    return [program.root for program in compiled_cases()]


def _post_order(root: ir.IR) -> list[ir.IR]:
    out: list[ir.IR] = []
    stack: list[tuple[ir.IR, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(ir.ir_children(node)))
    return out


def _same(a: Any, b: Any) -> bool:
    return (a is MISSING) == (b is MISSING) and (a is MISSING or (type(a), repr(a)) ==
                                                 (type(b), repr(b)))


def _check(root: ir.IR, limits: Limits | None = None) -> int:
    """Every subtree's constant with one memo, asked children first, then top down (each
    order twice, the second time from what the memo kept), against a fresh fold's."""
    nodes = _post_order(root)
    fresh = [constant(n, limits) for n in nodes]
    asked = 0
    for order in (list(range(len(nodes))), list(range(len(nodes)))[::-1]):
        memo = FoldMemo()
        for _ in range(2):
            for i in order:
                got = constant(nodes[i], limits, memo)
                assert _same(got, fresh[i]), (nodes[i], got, fresh[i])
                asked += 1
    return asked


@pytest.mark.slow
def test_every_golden_subtree_folds_as_without_memo() -> None:
    asked = 0
    for root in _roots():
        asked += _check(root)
        asked += _check(fold(root))  # the walk asks over the folded program
    assert asked > 10_000


SCHEMA = {"x": "Number", "t": "Text", "xs": "List<Number>"}


@pytest.mark.parametrize("src", [
    "LET(a, 2, c, a * 3, a + c + x)",             # names bound to constants
    "LET(a, 2, c, a * 3, a + c) * x",             # a LET whose value is a constant
    "LET(a, x, c, 2, a * c + LET(a, 3, a * c))",  # the same name in two scopes
    "LET(a, 1, a) + LET(a, x, a * 2)",
    "MAP(xs, v => v * 2 + LEN(\"abc\")) ",        # a lambda: its parameter is no constant
    "SUM(MAP(xs, v => LET(k, v + 1, k * k))) + ROUND(x * 1.1, 2)",
    "IF(x > 3, ROUND(x * 2, 1), ROUND(1 / 0, 2)) + ROUND(x, 1 / 0)",
    "IFERROR(1 / 0, 1) * x + ERROR.TYPE(NA())",
])
def test_scopes_fold_as_without_memo(src: str) -> None:
    root = formulane.compile(src, SCHEMA).root
    assert _check(root) and _check(fold(root))


def test_a_fold_that_charged_the_meter_is_not_kept() -> None:
    """Each operand alone folds under a 60-byte memory budget; the two together pass it
    (80 bytes in one fold): asked operands first, the sum must still not fold."""
    limits = Limits(max_memory_bytes=60)
    root = formulane.compile('(LEN(REPT("a", 40)) + LEN(REPT("b", 40))) * x', {"x": "Number"},
                             limits=limits).root
    total = root.args[0]  # type: ignore[attr-defined]
    memo = FoldMemo()
    assert all(constant(a, limits, memo) is not MISSING for a in total.args)
    assert constant(total, limits, memo) is MISSING
    assert constant(total, limits) is MISSING
    _check(root, limits)


def test_the_walk_compiles_the_same_sql_without_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nested formulas (where the memo answers most) compile to the same SQL as when every
    question folds afresh."""
    formulas = {"IF": "x", "ROUND": "x"}
    for _ in range(12):
        formulas["IF"] = f"IF(x > 3, {formulas['IF']} * 2, x - 1)"
        formulas["ROUND"] = f"ROUND({formulas['ROUND']} * 1.1, 2)"
    formulas["LET"] = "LET(a, x * 2, b, 3, ROUND(a * b, 1) + ROUND(a / b, 2))"
    with_memo = {k: formulane.compile(f, SCHEMA).to_sql("duckdb").select("t")
                 for k, f in formulas.items()}

    class NoMemo(FoldMemo):
        """A memo that keeps nothing."""

        def __init__(self) -> None:
            super().__init__()
            self.folds = _Forgetful()
            self.quiet = _Forgetful()

    monkeypatch.setattr(walk, "FoldMemo", NoMemo)
    without = {k: formulane.compile(f, SCHEMA).to_sql("duckdb").select("t")
               for k, f in formulas.items()}
    assert with_memo == without


class _Forgetful(dict):  # type: ignore[type-arg]
    def __setitem__(self, key: Any, value: Any) -> None:
        pass
