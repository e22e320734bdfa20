"""Polars decimal mode over a list column of floats (`List(Float64)`, `List(Float32)`).

Each item is read as the number its shortest text shows, as a float column is
(`columnar.polars.compiler._decimal_float_list`). Before, the list was cast by its binary
values: SUM([-855.127, -210.3]) was -1065.426999999999901696, so ROUNDDOWN(SUM(xs), 1)
was -1065.5 and INT(SUM(xs) * 10) a step low. A list holding 1e21, inf or NaN failed the
whole frame ("decimal precision 38 can't fit", "conversion from f64 to decimal[38,18]
failed"). Such a row is now #NUM!, the documented decimal range.
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

import pytest

import formulane

pl = pytest.importorskip("polars")

SCHEMA = {"xs": "List[Number?]"}
FORMULAS = ["SUM(xs)", "ROUNDDOWN(SUM(xs), 1)", "INT(SUM(xs) * 10)", "AVERAGE(xs)",
            'SUMIF(xs, ">0")', "MAX(xs)", "INDEX(xs, 1)", "ROUNDUP(SUM(xs), 2)"]


def _rows() -> list[list[float | None]]:
    """Items of at most 7 significant digits, so a Float32 shows each as written."""
    rng = random.Random(11)
    rows: list[list[float | None]] = [[-855.127, -210.3, 0.0], [0.1, 0.2, None], [2.675, 1.005]]
    for _ in range(300):
        rows.append([round(rng.uniform(-1000, 1000), rng.choice([1, 2, 3]))
                     for _ in range(rng.randint(1, 4))])
    return rows


def _scalar(formula: str, row: list[float | None]) -> Any:
    items = [Decimal(repr(x)) if x is not None else None for x in row]
    return formulane.evaluate(formula, {"xs": items}, schema=SCHEMA)


@pytest.mark.parametrize("dtype", [pl.Float64, pl.Float32], ids=["Float64", "Float32"])
@pytest.mark.parametrize("formula", FORMULAS)
def test_items_are_read_as_their_text_shows(formula: str, dtype: Any) -> None:
    rows = _rows()
    frame = pl.DataFrame({"xs": rows}, schema={"xs": pl.List(dtype)})
    out = formulane.apply(frame, {"o": formula}, schema=SCHEMA, numbers="decimal")
    errors = out["o__error"].to_list() if "o__error" in out.columns else [None] * len(rows)
    wrong = []
    for row, got, error in zip(rows, out["o"].to_list(), errors):
        want = _scalar(formula, row)
        if isinstance(want, formulane.ErrorValue):
            ok = error == want.code
        else:
            ok = error is None and got is not None \
                and abs(Decimal(got) - want) <= Decimal("1e-15") * max(abs(want), 1) \
                if formula in ("AVERAGE(xs)",) else error is None and Decimal(got) == want
        if not ok:
            wrong.append((row, got, error, want))
    assert not wrong, f"{len(wrong)} of {len(rows)} rows wrong, e.g. {wrong[:3]}"


@pytest.mark.parametrize("item", [1e21, float("inf"), float("nan")])
def test_an_item_decimal_mode_cannot_hold_is_that_rows_num(item: float) -> None:
    frame = pl.DataFrame({"xs": [[item, 1.0], [1.5, 2.25]]})
    out = formulane.apply(frame, {"o": "SUM(xs)"}, schema=SCHEMA, numbers="decimal")
    assert out["o__error"].to_list() == ["#NUM!", None]
    assert out["o"].to_list() == [None, Decimal("3.75")]
