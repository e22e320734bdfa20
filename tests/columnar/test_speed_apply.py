"""`apply`'s speed paths (issue 10) give what the plain plan gives.

- An eager DataFrame (one `with_columns`, or the lazy plan collected once) and a LazyFrame
  give the same columns, dtypes and values for every formula below, over frames with and
  without erring rows, and a value is null exactly where its error column is set
  (Hypothesis over float columns with values near the 1e308 bound, NaN-free as the lane's
  inputs are). (Skipping the nulling step when no row errs was tried and measured: no
  faster, see bench/COLUMNAR.md.)
- A LazyFrame over an in-memory DataFrame counts its blanks with the in-memory engine
  (`frame._in_memory_scan`): the inferred types are those of the eager frame, and any other
  plan (a computed column, a filter, a file scan) still takes the streaming count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import formulane
from formulane.columnar.polars import frame as polars_frame

#: (formulas, frame columns); each case runs on the frame as given and on one where some rows err
CASES: list[tuple[dict[str, str], dict[str, list[Any]]]] = [
    ({"out": "price * qty * (1 - disc)"},
     {"price": [1.5, 2.0, 1e200], "qty": [2, 3, 4], "disc": [0.1, 0.0, 0.5]}),
    ({"a": "price * qty", "b": "price + 1", "c": "IF(qty > 2, price * 2, price)"},
     {"price": [1.5, 2.0, 1e200], "qty": [2, 3, 4], "disc": [0.1, 0.0, 0.5]}),
    ({"r": "ROUND(ROUND(price * 1.2, 2) * 1.1, 2)", "d": "price / disc"},
     {"price": [1.5, 2.0, 3.25], "qty": [2, 3, 4], "disc": [0.1, 0.0, 0.5]}),
    ({"t": 'UPPER(name) & "-" & LEFT(name, 2)', "n": "LEN(name) * price"},
     {"price": [1.5, 2.0, 3.25], "name": ["ab", "cd", "éf"]}),
]


def _both(formulas: dict[str, str], frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    eager = formulane.apply(frame, formulas)
    lazy = formulane.apply(frame.lazy(), formulas)
    assert isinstance(eager, pl.DataFrame) and isinstance(lazy, pl.LazyFrame)
    return eager, lazy.collect()


def _check_nulled(out: pl.DataFrame, formulas: dict[str, str]) -> None:
    for name in formulas:
        error = name + "__error"
        if error in out.columns:
            erred = out[error].is_not_null()
            assert out.filter(erred)[name].null_count() == int(erred.sum()), name


@pytest.mark.parametrize("formulas,columns", CASES)
@pytest.mark.parametrize("scale", [1.0, 1e200])
def test_eager_equals_lazy(formulas: dict[str, str], columns: dict[str, list[Any]],
                           scale: float) -> None:
    frame = pl.DataFrame(columns)
    if "price" in columns:
        frame = frame.with_columns(pl.col("price") * scale)  # 1e200 * 1e200: #NUM! rows
    eager, lazy = _both(formulas, frame)
    assert eager.schema == lazy.schema
    assert eager.equals(lazy)
    _check_nulled(eager, formulas)


def test_errors_in_one_output_null_only_that_output() -> None:
    frame = pl.DataFrame({"price": [1.0, 1e300, 2.0], "qty": [2, 3, 4]})
    eager, lazy = _both({"big": "price * price", "small": "price * qty"}, frame)
    assert eager.equals(lazy)
    assert eager["big"].to_list() == [1.0, None, 4.0]
    assert eager["big__error"].to_list() == [None, "#NUM!", None]
    assert eager["small"].to_list() == [2.0, 3e300, 8.0]
    assert [c for c in eager.columns if c.startswith("_f")] == []  # temporaries dropped


def test_empty_frame() -> None:
    frame = pl.DataFrame({"price": [], "qty": []}, schema={"price": pl.Float64,
                                                          "qty": pl.Int64})
    eager, lazy = _both({"out": "price * qty"}, frame)
    assert eager.equals(lazy) and eager.height == 0


_FLOATS = st.one_of(st.floats(-1e10, 1e10), st.sampled_from([1e154, -1e154, 1e308 / 3, 1e300,
                                                             -1e300, 0.0, 5e-324]))


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(_FLOATS, _FLOATS), min_size=1, max_size=12),
       formula=st.sampled_from(["a * b", "a * b * 3 + 1", "a / b", "SQRT(a * b)",
                                "IF(a > b, a * a, b - a)", "ROUND(a * b, 2)"]))
def test_eager_nulls_exactly_the_erring_rows(rows: list[tuple[float, float]],
                                             formula: str) -> None:
    frame = pl.DataFrame(rows, schema={"a": pl.Float64, "b": pl.Float64}, orient="row")
    eager, lazy = _both({"out": formula}, frame)
    assert eager.equals(lazy)
    _check_nulled(eager, {"out": formula})


def test_in_memory_scan_is_only_a_dataframe_scan(tmp_path: Path) -> None:
    frame = pl.DataFrame({"a": [1, None], "b": [1.0, 2.0]})
    assert polars_frame._in_memory_scan(frame.lazy())
    assert polars_frame._in_memory_scan(pl.LazyFrame({"a": [1]}))
    assert not polars_frame._in_memory_scan(frame.lazy().with_columns(c=pl.lit(1)))
    assert not polars_frame._in_memory_scan(frame.lazy().filter(pl.col("b") > 1))
    path = tmp_path / "t.parquet"
    frame.write_parquet(path)
    assert not polars_frame._in_memory_scan(pl.scan_parquet(path))


def test_blank_counts_agree_across_plans(tmp_path: Path) -> None:
    frame = pl.DataFrame({"a": [1, None, 3], "b": [1.0, 2.0, 3.0], "c": ["x", None, "z"]})
    want = polars_frame.infer_frame_schema(frame)
    path = tmp_path / "t.parquet"
    frame.write_parquet(path)
    for lazy in (frame.lazy(), frame.lazy().select("a", "b", "c"), pl.scan_parquet(path)):
        assert polars_frame.infer_frame_schema(lazy) == want
    # a computed column's blanks are counted too (the streaming count runs the plan)
    computed = frame.lazy().with_columns(b=pl.when(pl.col("b") > 2).then(pl.col("b")))
    assert polars_frame.infer_frame_schema(computed)["b"].nullable


def test_strict_profile_still_refuses_a_blank_before_apply_returns() -> None:
    frame = pl.DataFrame({"price": [1.0, None], "qty": [1, 2]})
    with pytest.raises(formulane.FormulaError):
        formulane.apply(frame.lazy(), {"out": "price * qty"})
