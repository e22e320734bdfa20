"""A division by a constant that is not 0 has no #DIV/0! test (issue 10's speed work).

`x / 12` divides no row by zero, so its polars form drops the divisor's zero test and the
result's range test is its only error: `apply` then runs the three-step plan of
`PolarsForm.range_only` (value, range test, nulling) instead of one step whose value and
error share `x / 12` (which polars' common-subexpression elimination split). Checked here:
- which divisors lose the test (a constant whose float is not 0) and which keep it (0, a
  constant whose float underflows to 0, a column, a computed divisor that is not constant);
- the value and error columns are those of the general path (the same literal divisor with
  its zero test, the form told the divisor is not a known constant), on eager and lazy
  frames, over blanks, infinities, NaN and quotients past the 1e308 bound (Hypothesis);
- and, where the inputs are finite numbers (the lane's values), those of the scalar engine
  within 1e-15. Not for a subnormal divisor: polars divides by a constant as a product with
  its reciprocal, which is infinite there (0 / 5e-324 is NaN, #NUM!, where the scalar engine
  answers 0), with or without the zero test; a column divisor is divided exactly.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import formulane
from formulane.columnar.forms.operators import polars as operator_forms
from formulane.columnar.polars import frame as polars_frame

SCHEMA = {"x": "Number", "d": "Number"}
DTYPES = {"x": pl.Float64, "d": pl.Float64}


def _form(source: str) -> polars_frame.PolarsForm:
    program = formulane.compile(source, SCHEMA)
    return polars_frame.to_polars_form(program.root, "float", DTYPES)


@pytest.mark.parametrize("source,range_only", [
    ("x / 12", True),
    ("x / 0.5", True),
    ("x / -3", True),
    ("x / 1e-300", True),
    ("x / 5e-324", True),  # the smallest subnormal is a float, not 0
    ("x / (2 * 3)", True),  # folded to the constant 6
    ("x / 0", False),
    ("x / (1 - 1)", False),
    ("x / 1e-400", False),  # its float is 0: the row divides by zero
    ("x / d", False),
    ("x / (d * 2)", False),
])
def test_which_divisors_drop_the_zero_test(source: str, range_only: bool) -> None:
    form = _form(source)
    assert form.error is not None
    assert form.range_only is range_only
    assert ("#DIV/0!" in str(form.error)) is not range_only


_SPECIAL = [0.0, -0.0, 1.0, -1.5, 1e308, -1e308, 9.999999999999999e307, 1.7976931348623157e308,
            1e-300, 5e-324, math.inf, -math.inf, math.nan]
_FLOATS = st.one_of(st.floats(-1e10, 1e10), st.sampled_from(_SPECIAL))
_DIVISORS = [12.0, 0.5, -3.0, 1e-300, 5e-324, 1e307, -0.25]


def _apply(frame: pl.DataFrame, source: str, profile: str, lazy: bool) -> pl.DataFrame:
    out = formulane.apply(frame.lazy() if lazy else frame, {"q": source}, profile=profile)
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _general(frame: pl.DataFrame, source: str, profile: str, lazy: bool) -> pl.DataFrame:
    """The general path: the form sees no known divisor (so it keeps the zero test), the
    same literal divided by the same polars kernel; plans rebuilt for it and after it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(operator_forms, "_known_float", lambda value: None)
        polars_frame._plan.cache_clear()
        try:
            return _apply(frame, source, profile, lazy)
        finally:
            polars_frame._plan.cache_clear()


@settings(max_examples=120, deadline=None)
@given(xs=st.lists(st.one_of(st.none(), _FLOATS), min_size=1, max_size=12),
       divisor=st.sampled_from(_DIVISORS))
def test_constant_divisor_gives_what_the_general_path_gives(xs: list[float | None],
                                                            divisor: float) -> None:
    frame = pl.DataFrame({"x": xs}, schema={"x": pl.Float64})
    profile = "excel" if frame["x"].null_count() else "strict"  # strict refuses a blank x
    source = f"x / {divisor!r}"
    for lazy in (False, True):
        out = _apply(frame, source, profile, lazy)
        general = _general(frame, source, profile, lazy)
        assert "#DIV/0!" not in str(_form(source).error)
        assert out.equals(general), (source, lazy)
    # a value is blank exactly where its error is set, or where the row's x is blank
    errs = out["q__error"].is_not_null()
    assert out.filter(errs)["q"].null_count() == int(errs.sum())


@settings(max_examples=60, deadline=None)
@given(xs=st.lists(st.one_of(st.floats(-1e308, 1e308, exclude_min=True, exclude_max=True),
                             st.sampled_from([1e308 / 2, -9.999999999999999e307])),
                   min_size=1, max_size=8),
       divisor=st.sampled_from([d for d in _DIVISORS if abs(d) >= 2.0 ** -1022]))
def test_constant_divisor_agrees_with_the_scalar_engine(xs: list[float], divisor: float) -> None:
    frame = pl.DataFrame({"x": xs}, schema={"x": pl.Float64})
    source = f"x / {divisor!r}"
    out = formulane.apply(frame.lazy(), {"q": source})
    assert isinstance(out, pl.LazyFrame)
    got = out.collect()
    program = formulane.compile(source, {"x": "Number"})
    for x, value, error in zip(xs, got["q"], got["q__error"]):
        want: Any = program.evaluate({"x": x})
        if isinstance(want, formulane.ErrorValue):
            assert (value, error) == (None, want.code), (x, divisor)
        else:
            assert error is None, (x, divisor)
            assert value == pytest.approx(float(want), rel=1e-15), (x, divisor)


def test_the_plan_has_three_steps_and_no_hidden_column() -> None:
    frame = pl.DataFrame({"x": [24.0, 1e308, -6.0]})
    lazy = formulane.apply(frame.lazy(), {"q": "x / 0.5"})
    assert isinstance(lazy, pl.LazyFrame)
    plan = lazy.explain()
    assert "__POLARS_CSE" not in plan and "#DIV/0!" not in plan
    out = lazy.collect()
    assert out["q"].to_list() == [48.0, None, -12.0]
    assert out["q__error"].to_list() == [None, "#NUM!", None]
