"""An integer column compared with a number in float mode can stay integer (issue 10, speed).

`kit.threshold_compare` answers ``float(v) <op> t`` for an integer column by comparing the
integers with `kit.integer_threshold(op, t)` instead of casting every row to Float64. Checked:

- the threshold rule against the float comparison, in Python and in polars' own Int64 ->
  Float64 cast, over int64 edge values (2**53 +- k, int64 min/max, small numbers) and
  thresholds near them, at and between integers, and Excel's 15-digit tolerance bounds
  (Hypothesis);
- `Column.integers`, set by the compiler's column read: a read of an integer dtype that fits
  int64, in float mode, outside lambdas; nothing else (a float, UInt64 or Decimal column,
  decimal mode, a constant, a computed value); a comparison form reads it from its FormCall
  (``call.column(i)``), not from an ambient variable;
- with a column's integers, ``qty <op> L`` through `threshold_compare` with the
  tolerance bounds of the operators' form gives the scalar engine's answer for every int64
  ``qty`` and integer ``|L| < 10**15`` (where 15 significant digits tell integers apart), and
  ``formulane.apply`` gives it too, whichever form the comparison takes.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import polars as pl
import pytest
from hypothesis import assume, given, settings, strategies as st

import formulane
from formulane.columnar.forms.operators.polars import _bounds
from formulane.columnar.polars import kit
from formulane.columnar.polars.compiler import PolarsCompiler

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
_EDGES = sorted({v for k in range(-4, 5) for v in (2**53 + k, -2**53 + k, k, 50 + k,
                                                    2**63 - 1 - abs(k), -2**63 + abs(k),
                                                    2**62 + k, 10**15 + k, -10**15 + k)
                 if INT64_MIN <= v <= INT64_MAX})
_INT64 = st.one_of(st.sampled_from(_EDGES), st.integers(INT64_MIN, INT64_MAX),
                   st.integers(-2**54, 2**54))
_OPS = ["<", "<=", ">", ">="]
_PY = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
       ">=": lambda a, b: a >= b}


def _thresholds() -> st.SearchStrategy[float]:
    near = st.sampled_from(_EDGES).flatmap(lambda v: st.sampled_from(
        [float(v), math.nextafter(float(v), math.inf), math.nextafter(float(v), -math.inf),
         float(v) + 0.5, float(v) - 0.5, *(_bounds(float(v)))]))
    return st.one_of(near, st.floats(allow_nan=True, allow_infinity=True),
                     st.floats(-2.0**54, 2.0**54))


@settings(max_examples=600, deadline=None)
@given(op=st.sampled_from(_OPS), t=_thresholds(), values=st.lists(_INT64, min_size=1,
                                                                  max_size=40))
def test_integer_threshold_is_the_float_comparison(op: str, t: float, values: list[int]) -> None:
    k = kit.integer_threshold(op, t)
    if k is None:
        assert not abs(t) < 2.0**53  # NaN, infinities and the far thresholds stay float
        return
    series = pl.Series("v", [*values, *_EDGES], dtype=pl.Int64)
    as_float = pl.select(_PY[op](pl.lit(series).cast(pl.Float64), t)).to_series()
    as_int = pl.select(_PY[op](pl.lit(series), pl.lit(k, dtype=pl.Int64))).to_series()
    assert as_int.to_list() == as_float.to_list()
    # and the rule itself, in Python's exact int/float comparison
    assert [_PY[op](float(v), t) for v in series] == [_PY[op](v, k) for v in series]


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16,
                                   pl.UInt32])
def test_integer_columns_carry_their_integers(dtype: Any) -> None:
    compiler = PolarsCompiler({}, {"qty": dtype})
    program = formulane.compile("qty", {"qty": "Number"})
    col = compiler.run(program.root)
    assert col.integers is not None and col.integers.meta.output_name() == "qty"
    assert "Float64" not in str(col.integers)  # uncast


@pytest.mark.parametrize("dtype", [pl.Float64, pl.UInt64, pl.Decimal(10, 0), None])
def test_other_columns_carry_none(dtype: Any) -> None:
    program = formulane.compile("qty", {"qty": "Number"})
    assert PolarsCompiler({}, {"qty": dtype} if dtype else {}).run(program.root).integers \
        is None


def test_decimal_mode_constants_and_computed_values_carry_none() -> None:
    compiler = PolarsCompiler({}, {"qty": pl.Int64()})
    token = kit._MODE.set("decimal")
    try:
        assert compiler.run(formulane.compile("qty", {"qty": "Number"}).root).integers is None
    finally:
        kit._MODE.reset(token)
    for source in ("50", "qty + 1", "ABS(qty)", "IF(qty > 1, qty, 2)"):
        program = formulane.compile(source, {"qty": "Number"})
        col = PolarsCompiler({}, {"qty": pl.Int64()}).run(program.root)
        assert col.integers is None, source


def test_comparison_form_reads_integers_from_its_call() -> None:
    """The form gets the column's integers through its FormCall: compared as Int64, no cast."""
    frame = pl.DataFrame({"qty": [49, 50, 51]}, schema={"qty": pl.Int64})
    plan = formulane.apply(frame.lazy(), {"o": "qty > 50"}, {"qty": "Number"})
    assert isinstance(plan, pl.LazyFrame)
    assert "Float64" not in plan.explain()
    assert plan.collect()["o"].to_list() == [False, False, True]
    plan = formulane.apply(frame.with_columns(pl.col("qty").cast(pl.Float64)).lazy(),
                           {"o": "qty > 50"}, {"qty": "Number"})
    assert isinstance(plan, pl.LazyFrame)
    assert plan.collect()["o"].to_list() == [False, False, True]


def _tolerant(op: str, integers: pl.Expr | None, value: pl.Expr, c: float) -> pl.Expr:
    """The float-mode comparison with a literal as the operators' form writes it (Excel's
    15-digit tolerance bounds), each bound through `threshold_compare`."""
    if c == 0:
        lo = hi = 0.0
    else:
        lo, hi = _bounds(c)
    cmp = kit.threshold_compare
    if op == "=":
        return cmp(integers, value, ">=", lo) & cmp(integers, value, "<=", hi)
    if op == "<>":
        return cmp(integers, value, "<", lo) | cmp(integers, value, ">", hi)
    return cmp(integers, value, op, {"<": lo, "<=": hi, ">": hi, ">=": lo}[op])


_SCALAR: dict[str, Any] = {}


def _scalar(op: str, literal: int) -> Any:
    source = f"qty {op} {literal}"
    if source not in _SCALAR:
        _SCALAR[source] = formulane.compile(source, {"qty": "Number"})
    return _SCALAR[source]


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from(["=", "<>", *_OPS]),
       literal=st.one_of(st.sampled_from([0, 1, -1, 50, -50, 10**15 - 1, -(10**15 - 1),
                                          2**49 + 3]),
                         st.integers(-(10**15 - 1), 10**15 - 1)),
       values=st.lists(_INT64, min_size=1, max_size=12))
def test_integer_comparison_is_the_scalar_engines(op: str, literal: int,
                                                  values: list[int]) -> None:
    # float mode equates numbers within a relative 1e-15 (Excel's 15 digits; docs/columnar.md)
    # where the scalar engine's decimals are exact: -1e15 "=" -999999999999999 is TRUE in
    # float mode by design, so the scalar engine is the oracle only away from that band
    assume(all(v == literal or abs(v - literal) > 1e-15 * max(abs(v), abs(literal)) * 2
               for v in values))
    program = formulane.compile("qty", {"qty": "Number"})
    read = PolarsCompiler({}, {"qty": pl.Int64()}).run(program.root)
    expr = _tolerant(op, read.integers, read.value, float(literal))
    assert "Float64" not in str(expr)  # compared as integers
    frame = pl.DataFrame({"qty": values}, schema={"qty": pl.Int64})
    got = frame.select(expr.alias("o"))["o"].to_list()
    scalar = _scalar(op, literal)
    want = [scalar.evaluate({"qty": Decimal(v)}) for v in values]
    assert got == want
    applied = formulane.apply(frame, {"o": f"qty {op} {literal}"})
    assert isinstance(applied, pl.DataFrame)
    assert applied["o"].to_list() == want
