"""`apply`'s three-step plan for an output whose only error is its range test (issue 10).

An output like `price * qty * (1 - disc)` (float arithmetic over numeric columns) can err only
by its result's range test (#NUM! where it is not finite or reaches 1e308). `apply` then
writes the raw value, tests the column just written, and nulls the value where the error
column is set (`PolarsForm.steps`), instead of one step that polars' common-subexpression
elimination splits. Checked here:
- which programs take the three steps (`range_only`) and which keep two (other errors);
- the three steps give exactly what the single-step form (`PolarsForm.exprs`) gives, value and
  error column, on every row (Hypothesis, values at and around the bound, infinities, NaN and
  blanks in the inputs included), on eager and lazy frames;
- the plan leaves nothing for common-subexpression elimination (no hidden column);
- columns keep their order when several outputs are added (an error column next to its
  value), and an output may replace an input column;
- where `apply` counted the blanks itself over data that cannot change (an eager frame, a
  `df.lazy()`), the second step nulls the value from the range test and the third derives
  the error column from the value's validity: the same result on blank-free data; with a
  schema passed, a blank in a column declared non-nullable is E303 over data in memory
  (`conform`), and over any other plan keeps its error column blank as in the one-step form.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import formulane
from formulane.columnar.polars import frame as polars_frame

DTYPES = {"a": pl.Float64, "b": pl.Float64, "n": pl.Int64}
SCHEMA = {"a": "Number", "b": "Number", "n": "Number"}

#: (formula, whether its only error is the result's range test, the steps `apply` takes)
PROGRAMS = [
    ("a * b", True, 3),
    ("a * n * (1 - b)", True, 3),
    ("a + b - n", True, 3),
    ("-a * 3", True, 3),
    ("a / b", False, 2),  # #DIV/0! first
    ("a * b > 1", False, 2),  # the test is of an operand, not of the (Boolean) result
    ("SQRT(a * b)", False, 1),  # not computed on erring rows (`raw_is_safe`): one step
    ("ROUND(a * b, 2)", False, 2),  # total on floats too: computed once, on every row
    ("SQRT(a * b) + 1", False, 1),
]


def _form(source: str) -> polars_frame.PolarsForm:
    program = formulane.compile(source, SCHEMA)
    return polars_frame.to_polars_form(program.root, "float", DTYPES)


@pytest.mark.parametrize("source,range_only,steps", PROGRAMS)
def test_range_only_is_recognised(source: str, range_only: bool, steps: int) -> None:
    form = _form(source)
    assert form.error is not None
    assert form.range_only is range_only
    assert len(form.steps("out")) == steps


_FLOATS = st.one_of(st.floats(-1e10, 1e10), st.sampled_from(
    [1e154, -1e154, 1e308, -1e308, 1e308 / 3, 9.999999999999999e307, -9.999999999999999e307,
     1.7976931348623157e308, math.inf, -math.inf, math.nan, 0.0, -0.0, 5e-324]))


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.tuples(st.one_of(st.none(), _FLOATS), _FLOATS,
                               st.integers(-2**62, 2**62)), min_size=1, max_size=12),
       source=st.sampled_from([p for p, only, _ in PROGRAMS if only]))
def test_three_steps_give_what_one_step_gives(rows: list[tuple[Any, float, int]],
                                              source: str) -> None:
    frame = pl.DataFrame(rows, schema=DTYPES, orient="row")
    form = _form(source)
    want = frame.with_columns(form.exprs("out"))
    staged = frame.lazy()
    for step in form.steps("out"):
        staged = staged.with_columns(step)
    assert staged.collect().equals(want)
    # and through apply, eager and lazy, with the schema given (blanks in `a` on purpose: a
    # column declared non-nullable that holds one is E303 where the data are in memory; over
    # any other plan the blank is trusted away and gives what the one-step form gives)
    blank = frame["a"].null_count() > 0 and "a" in formulane.compile(source, SCHEMA).uses
    for given_frame, held in ((frame, True), (frame.lazy(), True),
                              (frame.lazy().select(pl.all()), False)):
        if blank and held:
            with pytest.raises(formulane.FormulaError, match="column 'a' holds"):
                formulane.apply(given_frame, {"out": source}, SCHEMA)
            continue
        out = formulane.apply(given_frame, {"out": source}, SCHEMA)
        out = out.collect() if isinstance(out, pl.LazyFrame) else out
        assert out.equals(want)


def test_the_plan_leaves_nothing_for_cse() -> None:
    frame = pl.DataFrame({"price": [1.5, 1e200], "qty": [2, 3], "disc": [0.1, 0.5]})
    lazy = formulane.apply(frame.lazy(), {"out": "price * qty * (1 - disc) * 1e200"})
    assert "__POLARS_CSE" not in lazy.explain()
    out = lazy.collect()
    assert out["out"].to_list()[0] == pytest.approx(2.7e200)
    assert out["out"].to_list()[1] is None
    assert out["out__error"].to_list() == [None, "#NUM!"]


def test_columns_keep_their_order() -> None:
    frame = pl.DataFrame({"x": [1e300, 2.0], "y": [1e10, 0.0]})
    formulas = {"m": "x * y", "r": "x / y", "s": "x + y", "x": "x * 2"}
    eager = formulane.apply(frame, formulas)
    lazy = formulane.apply(frame.lazy(), formulas).collect()
    assert eager.equals(lazy)
    assert eager.columns == ["x", "y", "m", "m__error", "r", "r__error", "s", "s__error",
                             "x__error"]
    assert eager["m__error"].to_list() == ["#NUM!", None]
    assert eager["x"].to_list() == [2e300, 4.0]  # read from the input, not from another output
    assert eager["s"].to_list() == [1e300, 2.0]


@pytest.mark.parametrize("formulas,errors", [
    # every output errs by its range test alone: no optimizer
    ({"out": "a * n * (1 - b) * 1e10"}, [None, "#NUM!", None, None]),
    # outputs whose value and error share subexpressions: optimized
    ({"out": "a * n * (1 - b) * 1e10", "q": "a / b", "r": "ROUND(a * b, 2)"},
     [None, "#NUM!", None, None]),
    # bound temporaries
    ({"out": "ROUND(ROUND(a * 1.2, 2) * 1.1, 2) + SQRT(a)"}, [None, None, "#NUM!", None]),
])
def test_eager_engines_agree(formulas: dict[str, str], errors: list[str | None],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    # an eager frame below IN_MEMORY_ROWS runs on the in-memory engine, from it on the
    # default one: the same columns either way, and the same as a LazyFrame collected
    frame = pl.DataFrame({"a": [1.5, 1e300, -2.0, 0.0], "b": [0.5, 1e10, 0.0, 2.0],
                          "n": [2, 3, 4, 5]})
    lazy = formulane.apply(frame.lazy(), formulas)
    assert isinstance(lazy, pl.LazyFrame)
    want = lazy.collect()
    assert formulane.apply(frame, formulas).equals(want)
    monkeypatch.setattr(polars_frame, "IN_MEMORY_ROWS", 0)
    assert formulane.apply(frame, formulas).equals(want)
    assert want["out__error"].to_list() == errors


_VALIDITY = 'is_null()).then("#NUM!")'  # the third step's test, in polars' plan description


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(_FLOATS, _FLOATS, st.integers(-2**62, 2**62)), min_size=1,
                     max_size=12),
       source=st.sampled_from([p for p, only, _ in PROGRAMS if only]))
def test_counted_blanks_derive_the_error_from_validity(rows: list[tuple[float, float, int]],
                                                       source: str) -> None:
    frame = pl.DataFrame(rows, schema=DTYPES, orient="row")
    want = frame.with_columns(_form(source).exprs("out"))
    lazy = formulane.apply(frame.lazy(), {"out": source})
    assert isinstance(lazy, pl.LazyFrame)
    assert _VALIDITY in lazy.explain(optimized=False)
    assert lazy.collect().equals(want)
    assert formulane.apply(frame, {"out": source}).equals(want)


def test_declared_or_scanned_schemas_keep_the_error_test(tmp_path: Path) -> None:
    frame = pl.DataFrame({"a": [1.5, None, 1e300], "b": [2.0, 3.0, 1e300], "n": [1, 2, 3]})
    # a plan other than a scan of memory: the declared schema is trusted for blanks
    declared = formulane.apply(frame.lazy().select(pl.all()), {"out": "a * b"}, SCHEMA)
    assert isinstance(declared, pl.LazyFrame)
    assert _VALIDITY not in declared.explain(optimized=False)
    out = declared.collect()
    assert out["out"].to_list() == [3.0, None, None]
    assert out["out__error"].to_list() == [None, None, "#NUM!"]  # the blank is not #NUM!
    # the same over blank-free data in memory, the schema declared
    held = frame.drop_nulls()
    assert formulane.apply(held, {"out": "a * b"}, SCHEMA).equals(
        formulane.apply(held.lazy().select(pl.all()), {"out": "a * b"}, SCHEMA).collect())
    # a file scan is counted, but the file may change before the plan runs
    path = tmp_path / "t.parquet"
    frame.drop_nulls().write_parquet(path)
    scanned = formulane.apply(pl.scan_parquet(path), {"out": "a * b"})
    assert isinstance(scanned, pl.LazyFrame)
    assert _VALIDITY not in scanned.explain(optimized=False)
    assert scanned.collect()["out__error"].to_list() == [None, "#NUM!"]
