"""`apply` checks a declared schema against the frame (`columnar.polars.conform`).

Before, a frame that did not hold the declared types reached the polars plan: `NOT(n)` over an
integer column declared Boolean answered -2, `s + 1` over text declared Number raised polars'
own InvalidOperationError, a missing column polars' ColumnNotFoundError, and a blank in a
column declared non-nullable joined as "0". Each row of CASES is a schema, a formula and what
`apply` says: E303 with the message's start, or the values it answers. Dtype mismatches are
found on every frame (eager, `df.lazy()`, any other plan); blanks where the data are in memory
(the other plans are trusted for blanks, as documented in docs/columnar.md).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

import formulane

FRAME = pl.DataFrame({
    "n": [1, 2, 3],
    "s": ["x", "y", "z"],
    "d": [dt.date(2024, 1, 1), None, dt.date(2024, 3, 1)],
    "l": [[1, 2], [], [3, None]],
    "r": [{"a": 1, "b": 2}, None, {"a": None, "b": 1}],
    "m": pl.Series([Decimal("0.5"), None, Decimal("2")], dtype=pl.Decimal(38, 4)),
    "ll": [[[1]], [[2, None]], []],
    "e": pl.Series([None, None, None], dtype=pl.Null),
})

# (schema, formula, on which frames it fails: "all" for a dtype, "held" for a blank, None
#  for none, the expected message start or the values)
CASES: list[tuple[dict[str, str], str, str | None, Any]] = [
    # the dtype is not the declared kind, at any depth: every frame
    ({"n": "Text"}, 'n & "!"', "all", "column 'n' holds Int64 but the schema says Text"),
    ({"s": "Number"}, "s + 1", "all", "column 's' holds String but the schema says Number"),
    ({"n": "Boolean"}, "NOT(n)", "all", "column 'n' holds Int64 but the schema says Boolean"),
    ({"d": "DateTime?"}, "ISBLANK(d)", "all", "column 'd' holds Date but the schema says"),
    ({"l": "List[Text]"}, "COUNTA(l)", "all", "column 'l' holds List(Int64) but the schema"),
    ({"r": "Record{a: Text}?"}, "r.a", "all", "column 'r' holds Struct"),
    ({"r": "Record{c: Number}?"}, "r.c", "all", "column 'r' holds Struct"),
    ({"zz": "Number"}, "zz + 1", "all", "column 'zz' is in the schema (Number) but not in"),
    # a blank where the schema says non-nullable: where the data are in memory
    ({"d": "Date"}, "d + 1", "held",
     "column 'd' holds 1 blank (the first in row index 1) but the schema says Date"),
    ({"m": "Number"}, 'm & ""', "held", "column 'm' holds 1 blank (the first in row index 1)"),
    ({"l": "List[Number]"}, "SUM(l)", "held",
     "column 'l' at l[*] holds 1 blank (the first in row index 2)"),
    ({"r": "Record{a: Number, b: Number}?"}, "r.b", "held",
     "column 'r' at r.a holds 1 blank (the first in row index 2)"),
    ({"ll": "List[List[Number]]"}, "ISBLANK(ll)", "held",
     "column 'll' at ll[*][*] holds 1 blank (the first in row index 1)"),
    ({"e": "Number"}, "e + 1", "held", "column 'e' holds 3 blanks (the first in row index 0)"),
    # what fits answers
    ({"d": "Date?"}, "d ?? DATE(2020, 1, 1)", None,
     [dt.date(2024, 1, 1), dt.date(2020, 1, 1), dt.date(2024, 3, 1)]),
    ({"l": "List[Number?]"}, "COUNT(l)", None, [2, 0, 1]),
    ({"r": "Record{a: Number?, b: Number}?"}, "r.b", None, [2, None, 1]),
    ({"m": "Number?", "n": "Number"}, "(m ?? 0) + n", None,
     [Decimal("1.5"), Decimal("2"), Decimal("5")]),
    ({"e": "Text?"}, 'e ?? "-"', None, ["-", "-", "-"]),
    # nothing below a nullable record may hide a forbidden blank; a column of blanks only
    ({"r": "Record{a: Number?, b: Number?}?"}, "ISBLANK(r)", None, [False, True, False]),
    ({"e": "Record{a: Number}?"}, "ISBLANK(e)", None, [True, True, True]),
    ({"e": "List[Number]?"}, "ISBLANK(e)", None, [True, True, True]),
    # a column the formulas do not read is not checked
    ({"s": "Number", "n": "Number"}, "n * 2", None, [2, 4, 6]),
]

FRAMES = {
    "eager": lambda: FRAME,
    "df.lazy()": lambda: FRAME.lazy(),
    "other plan": lambda: FRAME.lazy().select(pl.all()),
}


def _run(frame: pl.DataFrame | pl.LazyFrame, schema: dict[str, str], formula: str) -> Any:
    out = formulane.apply(frame, {"o": formula}, schema)
    return (out.collect() if isinstance(out, pl.LazyFrame) else out)["o"].to_list()


@pytest.mark.parametrize("frame_kind", list(FRAMES))
@pytest.mark.parametrize("schema,formula,fails,expected", CASES,
                         ids=[f"{c[1]} as {c[0]}" for c in CASES])
def test_declared_schema_checked(frame_kind: str, schema: dict[str, str], formula: str,
                                 fails: str | None, expected: Any) -> None:
    frame = FRAMES[frame_kind]()
    raises = fails == "all" or (fails == "held" and frame_kind != "other plan")
    if raises:
        with pytest.raises(formulane.FormulaError) as info:
            _run(frame, schema, formula)
        assert info.value.code == "E303"
        assert str(info.value).startswith(f"[E303] {expected}"), str(info.value)
        assert info.value.hint
    elif fails is None:
        got = _run(frame, schema, formula)
        assert [float(v) if isinstance(v, Decimal) else v for v in got] == \
            [float(v) if isinstance(v, Decimal) else v for v in expected]
    else:  # a blank over a plan the schema is trusted for: no error raised by apply
        _run(frame, schema, formula)


def test_hint_names_the_nullable_declaration() -> None:
    with pytest.raises(formulane.FormulaError) as info:
        formulane.apply(FRAME, {"o": "SUM(l)"}, {"l": "List[Number]"})
    assert info.value.hint is not None and "declare l[*] as Number?" in info.value.hint
    with pytest.raises(formulane.FormulaError) as info:
        formulane.apply(FRAME, {"o": "d + 1"}, {"d": "Date"})
    assert info.value.hint is not None and "declare it as Date?" in info.value.hint


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), min_size=1, max_size=30))
def test_the_first_blank_and_the_count(values: list[float | None]) -> None:
    frame = pl.DataFrame({"x": pl.Series(values, dtype=pl.Float64)})
    blanks = [i for i, v in enumerate(values) if v is None]
    if not blanks:
        assert len(_run(frame, {"x": "Number"}, "x * 2")) == len(values)
        return
    for given_frame in (frame, frame.lazy()):
        with pytest.raises(formulane.FormulaError) as info:
            _run(given_frame, {"x": "Number"}, "x * 2")
        count = len(blanks)
        assert f"holds {count} blank{'s' if count != 1 else ''} (the first in row index " \
               f"{blanks[0]})" in str(info.value)
