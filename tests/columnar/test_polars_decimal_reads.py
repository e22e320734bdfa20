"""How polars decimal mode reads a Number column that is not Decimal(38, s <= 18) with values below
1e20: a Float64 column (`numbers="decimal"` on a float frame) is read as the number its
shortest text shows, as the scalar engine reads it, so the decimal-grid functions answer what
they answer for that number; a value Decimal(38, 18) cannot hold (a float past 1e20, inf, NaN;
a Decimal(38, 10), Decimal(38, 0) or Int128 value past 1e20) is that row's #NUM!, never a
polars error for the whole frame, and no call above the read drops that error (the checker
proves `-a` error-free assuming a column read never is one).

Before: the column was cast to Decimal(38, 18) directly, which expands the binary value and
truncates it (2.3 -> 2.299999999999999822): ROUNDDOWN(2.3, 2) answered 2.29, INT(-2.2 * 10)
-23, FLOOR(-2.2, 0.01) -2.21; and one value of 1e300 failed the frame with "conversion from
`f64` to `decimal[38,18]` failed".
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

pl = pytest.importorskip("polars")

import formulane  # noqa: E402
from formulane import ErrorValue  # noqa: E402
from formulane.columnar.names import ERROR_SUFFIX  # noqa: E402

#: Floats whose binary value lies just below or above the decimal the user wrote, ties among
#: them; each must answer as the scalar engine does for `Decimal(repr(x))`.
VALUES = [2.3, -2.3, -2.2, 2.2, 0.95, 1.0, 2.0, 0.29, 2.01, -1.11, 0.27, 0.54, 2.135, 2.675,
          -0.07, 1.15, 0.0, -0.0, 12345.6789, -9876.54321, 99999999999999.99]

FORMULAS = ["ROUNDDOWN(a, 2)", "ROUNDUP(a, 2)", "ROUND(a, 2)", "TRUNC(a, 1)", "INT(a * 10)",
            "FLOOR(a, 0.01)", "CEILING(a, 0.05)", "MOD(a, 0.1)", "FLOOR.MATH(a, 0.1)",
            "CEILING.MATH(a, 0.1)", "a * 3 - a", "a + 0.1 = 0.1 + a"]


def _frame(values: list[Any]) -> Any:
    return pl.DataFrame({"a": values}, schema={"a": pl.Float64})


def _answers(formula: str, frame: Any) -> list[Any]:
    out = formulane.apply(frame, {"o": formula}, {"a": "Number"}, numbers="decimal")
    errors = out["o" + ERROR_SUFFIX].to_list() if "o" + ERROR_SUFFIX in out.columns \
        else [None] * out.height
    return [ErrorValue(e) if e is not None else v for v, e in zip(out["o"].to_list(), errors)]


def _scalar(formula: str, x: float) -> Any:
    return formulane.evaluate(formula, {"a": Decimal(repr(x))},
                              schema={"a": "Number"})


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_float_column_reads_as_the_number_its_text_shows(formula: str) -> None:
    got = _answers(formula, _frame(VALUES))
    for x, answer in zip(VALUES, got):
        want = _scalar(formula, x)
        if isinstance(want, ErrorValue):
            assert isinstance(answer, ErrorValue) and answer.code == want.code, (x, answer, want)
        elif isinstance(want, Decimal):
            assert answer is not None and Decimal(answer) == want, (formula, x, answer, want)
        else:
            assert answer == want, (formula, x, answer, want)


def test_a_value_decimal_cannot_hold_is_that_rows_num_error() -> None:
    # 1e20 and beyond, infinities and NaN do not fit Decimal(38, 18): #NUM! on their rows only
    frame = _frame([1.5, 1e300, -2.5e20, float("inf"), float("nan"), -0.25])
    got = _answers("ROUNDDOWN(a, 1)", frame)
    assert got[0] == Decimal("1.5") and got[5] == Decimal("-0.2")
    assert [g.code if isinstance(g, ErrorValue) else g for g in got[1:5]] == ["#NUM!"] * 4


def test_float32_columns_read_through_their_own_shortest_text() -> None:
    frame = pl.DataFrame({"a": [2.3, -2.2, 0.95]}, schema={"a": pl.Float32})
    assert _answers("ROUNDDOWN(a, 2)", frame) == [Decimal("2.3"), Decimal("-2.2"),
                                                  Decimal("0.95")]


@pytest.mark.parametrize("dtype", [pl.Decimal(38, 10), pl.Decimal(38, 0), pl.Int128])
@pytest.mark.parametrize("formula", ["-a", "ABS(a) = 1", "MAX(a, 1)", "a + 1", "ROUND(a, 0)",
                                     "LET(x, a, x * 2)", "IF(a > 2, 1, 0)"])
def test_a_wide_column_past_1e20_is_that_rows_num_error(dtype: Any, formula: str) -> None:
    # before: "conversion from `decimal[38,10]` to `decimal[38,18]` failed" for the frame, or
    # (where no cast to scale 18 came) a blank with no error for `-a`
    values = [3, 10 ** 25, -2, -10 ** 20]
    frame = pl.DataFrame({"a": values if dtype == pl.Int128 else [Decimal(v) for v in values]},
                         schema={"a": dtype})
    got = _answers(formula, frame)
    for i in (0, 2):
        assert got[i] == _scalar(formula, float(frame["a"][i])), (i, got)
    assert [g.code if isinstance(g, ErrorValue) else g for g in (got[1], got[3])] == \
        ["#NUM!", "#NUM!"]


def test_a_float_past_the_range_keeps_its_error_through_error_free_calls() -> None:
    got = _answers("ABS(a) = 1", _frame([1.0, 1e300]))
    assert got[0] is True and isinstance(got[1], ErrorValue) and got[1].code == "#NUM!"
