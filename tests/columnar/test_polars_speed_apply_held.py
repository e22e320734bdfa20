"""`apply` reads a ``df.lazy()``'s schema and blanks from the DataFrame it scans (issue 10).

A LazyFrame that only scans an in-memory DataFrame is collected once by `apply` (`_held`),
and its names, dtypes and null counts are read from that DataFrame (`_held_types`), where the
schema was collected, the plan described twice and the DataFrame collected for its counts.
What must not change, checked on an eager frame, its ``df.lazy()`` and a plan that is not a
scan of memory (a projection, counted by a streaming query):
- a blank in a column the formulas read makes the strict profile refuse (E205) before
  `apply` returns; a blank in a column they do not read changes nothing;
- a declared schema whose non-nullable column holds a blank is E303 over data in memory;
- the excel profile's answers over blanks are the same on every frame kind;
- a column named like a pattern (``^p.*$``) is counted by its exact name.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import formulane

FRAME = pl.DataFrame({"price": [1.5, 2.0, 1e300], "qty": [2, 3, 1_000_000_000],
                      "note": ["a", None, "c"], "disc": [0.1, None, 0.5]})


def _kinds(frame: pl.DataFrame) -> list[Any]:
    return [frame, frame.lazy(), frame.lazy().select(pl.all())]


def _run(frame: Any, formulas: dict[str, str], *args: Any, **kwargs: Any) -> pl.DataFrame:
    out = formulane.apply(frame, formulas, *args, **kwargs)
    assert isinstance(out, type(frame))
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def test_a_blank_the_formulas_do_not_read_changes_nothing() -> None:
    formulas = {"out": "price * qty * 2"}
    got = [_run(f, formulas) for f in _kinds(FRAME)]
    assert got[0].equals(got[1]) and got[0].equals(got[2])
    assert got[0]["out"].to_list() == [6.0, 12.0, None]
    assert got[0]["out__error"].to_list() == [None, None, "#NUM!"]


@pytest.mark.parametrize("source", ["price * (1 - disc)", 'note & "!"'])
def test_a_blank_the_formulas_read_is_refused_before_apply_returns(source: str) -> None:
    for frame in _kinds(FRAME):
        with pytest.raises(formulane.FormulaError) as caught:
            formulane.apply(frame, {"out": source})
        assert getattr(caught.value, "code", None) == "E205", type(frame)


def test_a_declared_non_nullable_column_holding_a_blank_is_refused_in_memory() -> None:
    schema = {"price": "Number", "disc": "Number"}
    for frame in _kinds(FRAME)[:2]:
        with pytest.raises(formulane.FormulaError, match="column 'disc' holds"):
            formulane.apply(frame, {"out": "price * (1 - disc)"}, schema)
    # a plan that is not a scan of memory trusts the declared schema for blanks
    out = _run(FRAME.lazy().select(pl.all()), {"out": "price * (1 - disc)"}, schema)
    assert out["out"].to_list()[0] == pytest.approx(1.35)


def test_excel_profile_answers_alike_over_blanks() -> None:
    formulas = {"a": "price * (1 - disc)", "b": 'note & "!"', "c": "IF(disc > 0.2, qty, price)"}
    got = [_run(f, formulas, profile="excel") for f in _kinds(FRAME)]
    assert got[0].equals(got[1]) and got[0].equals(got[2])
    assert got[0]["b"].to_list() == ["a!", "!", "c!"]


def test_a_pattern_like_column_name_is_read_exactly() -> None:
    frame = pl.DataFrame({"^p.*$": [1.0, None], "price": [2.0, 3.0]})
    for kind in _kinds(frame):
        out = _run(kind, {"out": "price * 2"})
        # the blank of "^p.*$" is not counted as price's (a pattern would match "price")
        assert out["out"].to_list() == [4.0, 6.0]
