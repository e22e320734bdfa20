"""Polars decimal mode: list aggregates over numbers near Decimal(38, 18)'s limit (|x| < 1e20).

The documented policy (docs/columnar.md, "Decimal mode"): a result Decimal(38, 18) cannot hold
is that row's #NUM!, the other rows keep their answers; polars must never fail the frame.

Before: SUM, AVERAGE, SUMIF(S), AVERAGEIF(S) and SUMPRODUCT summed in polars' Decimal(38, 18),
which aborts the whole query ("overflow in decimal addition in sum") when the sum, or only a
partial sum ([9e19, 9e19, -9e19]), passes 1e20; SUMPRODUCT aborted on a product past it; and
PRODUCT answered a blank with no error where the product passes 1e20 (its range test read the
value after it was blanked).

Each row is checked against the scalar engine (`formulane.evaluate`): a scalar answer of 1e20
or more must be #NUM!, an error the same code, any other number equal (to 18 places, the
scalar's 34 significant digits aside) or, where the form documents a float64 estimate (a
product past 1e20 on the way), within a relative 1e-15.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

pl = pytest.importorskip("polars")

import formulane  # noqa: E402
from formulane import ErrorValue  # noqa: E402
from formulane.columnar.names import ERROR_SUFFIX  # noqa: E402

D = Decimal
DEC = pl.Decimal(38, 18)

#: Rows: a row past the limit, a small row, a row whose sum cancels, and lists whose partial
#: sums pass 1e20 where the total does not (row 0: 9e19 + 9e19 - 9e19).
WIDE = pl.DataFrame({
    "a": [D("9e19"), D(2), D("9e19"), D("-9e19")],
    "b": [D("9e19"), D(3), D("-9e19"), D("-0.5")],
    "l": [[D("9e19"), D("9e19"), D("-9e19")], [D(1), D(2), D("3.25")],
          [D("5e19"), D("6e19"), D("-5e19"), D("0.000000000000000001")],
          [D("-9e19"), D("-9e19"), D("0.75")]],
    "w": [[D(1), D(1), D(1)], [D(2), D("0.5"), D(4)], [D(1), D(1), D(1), D(3)],
          [D(1), D("0.1"), D(-1)]],
}, schema={"a": DEC, "b": DEC, "l": pl.List(DEC), "w": pl.List(DEC)})
WIDE_SCHEMA = {"a": "Number", "b": "Number", "l": "List[Number]", "w": "List[Number]"}

EXACT = [
    "SUM(a, b)", "SUM(a, b, 1)", "AVERAGE(a, b)", "AVERAGE(a, b, 0.25)", "SUM(l)", "SUM(l, a)",
    "AVERAGE(l)", "AVERAGE(l, -0.5)", 'SUMIF(l, ">0")', 'SUMIF(l, ">0", w)',
    'AVERAGEIF(l, ">0")', 'SUMIFS(l, l, ">0")', 'SUMIFS(l, w, ">0")', 'AVERAGEIFS(l, l, ">0")',
    # SUMSQ of a list past the limit failed the frame ("overflow in decimal multiplication"):
    # its rows past the range were nulled, and polars still squared a nulled list's items
    "SUMSQ(l)", "SUMSQ(w, l)",
    "SUMIF(l, x => x > 0)", "SUMPRODUCT(l)", "SUMPRODUCT(l, w)", "SUMPRODUCT([a, 1], [b, 2])",
    "PRODUCT(a, b)", "PRODUCT(a, 10)", "PRODUCT(l)", "PRODUCT(w)", "SUMPRODUCT(l, l)",
]
#: A partial product passes 1e20 where the whole does not: a float64 estimate answers.
ESTIMATED = ["PRODUCT(a, 10, 0.000000000000001)", "SUMPRODUCT([a], [10], [0.000000000000001])"]


def _answers(frame: Any, formula: str, schema: dict[str, str],
             numbers: str = "auto") -> list[Any]:
    out = formulane.apply(frame, {"o": formula}, schema, numbers=numbers)
    name = "o" + ERROR_SUFFIX
    errors = out[name].to_list() if name in out.columns else [None] * out.height
    return [ErrorValue(e) if e is not None else v for v, e in zip(out["o"].to_list(), errors)]


def _check(frame: Any, formula: str, schema: dict[str, str], relative: float,
           numbers: str = "auto") -> None:
    got = _answers(frame, formula, schema, numbers)
    for row, answer in zip(frame.iter_rows(named=True), got):
        _agree(answer, formulane.evaluate(formula, row, schema=schema), relative,
               (formula, row))


def _agree(answer: Any, want: Any, relative: float, where: Any) -> None:
    where = (*where, answer, want)
    if isinstance(want, ErrorValue):
        assert isinstance(answer, ErrorValue) and answer.code == want.code, where
    elif abs(want) >= D("1e20"):
        assert isinstance(answer, ErrorValue) and answer.code == "#NUM!", where
    else:
        assert isinstance(answer, Decimal), where
        assert abs(answer - want) <= D("1e-18") + abs(want) * D(relative), where


@pytest.mark.parametrize("formula", EXACT)
def test_exact_aggregates_past_the_limit_are_num_and_the_rest_kept(formula: str) -> None:
    _check(WIDE, formula, WIDE_SCHEMA, 1e-33)


@pytest.mark.parametrize("formula", ESTIMATED)
def test_a_partial_product_past_the_limit_answers_the_estimate(formula: str) -> None:
    _check(WIDE, formula, WIDE_SCHEMA, 1e-15)


def test_the_other_rows_keep_their_answers() -> None:
    # the figures of the brief: row 1 (2 and 3) answers as if row 0 were not there
    got = {f: _answers(WIDE, f, WIDE_SCHEMA) for f in
           ("SUM(a, b)", "SUM(a, b, 1)", "AVERAGE(a, b)", "PRODUCT(a, b)", "PRODUCT(a, 10)")}
    assert [got[f][1] for f in got] == [5, 6, D("2.5"), 6, 20]
    assert all(got[f][0] == ErrorValue("#NUM!") for f in got if f != "AVERAGE(a, b)")
    assert got["AVERAGE(a, b)"][0] == D("9e19")  # the sum passes 1e20, the mean does not


#: Narrow columns: Decimal(18, 2) numbers and Int64 lists (decimal mode: the Int64 read as
#: Decimal(38, 0)) whose totals pass 1e20 only when added up, or multiplied.
NARROW = pl.DataFrame({
    "p": [D("9999999999999999.99"), D("12.50"), D("-9999999999999999.99")],
    "n": [10**6, 3, 5000],
    "li": [[9 * 10**18] * 12 + [-9 * 10**18] * 5, [1, 2, 3], [9 * 10**18] * 12],
    "lp": [[D("9999999999999999.99")] * 3, [D("0.01"), D("0.02")], [D("-1.50")]],
}, schema={"p": pl.Decimal(18, 2), "n": pl.Int64, "li": pl.List(pl.Int64),
           "lp": pl.List(pl.Decimal(18, 2))})
NARROW_SCHEMA = {"p": "Number", "n": "Number", "li": "List[Number]", "lp": "List[Number]"}


@pytest.mark.parametrize("formula", [
    "SUM(li)", "SUM(li, p)", "AVERAGE(li)", "AVERAGE(li, p, n)", 'SUMIF(li, ">0")',
    'AVERAGEIFS(li, li, "<>0")', "PRODUCT(p, n)", "PRODUCT(lp, n)", "SUMPRODUCT(lp, lp)",
    "SUMPRODUCT(li)", "SUM(lp, p, n)",
])
def test_narrow_columns_past_the_limit(formula: str) -> None:
    _check(NARROW, formula, NARROW_SCHEMA, 1e-33, numbers="decimal")


def test_float_mode_keeps_float_sums() -> None:
    # Float64 columns: no decimal step at all; a sum past 1e20 is an ordinary float
    frame = pl.DataFrame({"a": [9e19, 2.0], "b": [9e19, 3.0]})
    got = _answers(frame, "SUM(a, b)", {"a": "Number", "b": "Number"})
    assert got == [1.8e20, 5.0]


def test_blanks_and_the_exact_edge_of_the_limit() -> None:
    # the sum is exact to the last place: -1e20 is #NUM!, -99999999999999999999.9 is not;
    # an empty or blank list sums to 0 and has no mean
    frame = pl.DataFrame({"l": [
        [], None, [None, D("1.5")], [D("-99999999999999999999.5"), D("-0.5")],
        [D("-99999999999999999999.5"), D("-0.4")], [D("-0.000000000000000001")],
        [D("99999999999999999999.999999999999999999"), D("0.000000000000000001")]]},
        schema={"l": pl.List(DEC)})
    for formula in ("SUM(l)", "AVERAGE(l)", "SUM(l, l)", "AVERAGE(l, 1)"):
        out = formulane.apply(frame, {"o": formula}, profile="excel")
        errors = out["o" + ERROR_SUFFIX].to_list()
        for row, value, error in zip(frame.iter_rows(named=True), out["o"].to_list(), errors):
            want = formulane.evaluate(formula, row, schema={"l": "List[Number?]?"},
                                      profile="excel")
            _agree(ErrorValue(error) if error else value, want, 1e-33, (formula, row))
