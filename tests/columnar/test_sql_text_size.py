"""UPPER and LOWER in SQL: the guard's shorter class, and the answers it must keep.

`forms.text.case.sql_case` sends a text to the exact one-to-one pass only when it holds a
character some engine maps differently (`casefix.sql_fix`); the guard's class joins fix ranges
at most `_GUARD_GAP` code points apart, so texts holding a character of a joined gap take the
pass too. The pass must map those as the scalar engine does: every code point of every joined
gap (alone, between ASCII letters, and next to a fix character) is run on DuckDB here and
compared with `Program.evaluate`. The size bound keeps the shorter guard from coming back long.
"""

from __future__ import annotations

import unicodedata

import pytest
from functions import _engines as E

import formulane
from formulane.columnar.forms.text.case import _guard_ranges
from formulane.columnar.forms.text.casefix import sql_fix

pytest.importorskip("duckdb")


def _gap_characters(kind: str) -> list[str]:
    """The code points the guard's class holds and the fix set does not (those NFC keeps: the
    scalar engine reads every text in NFC (`values`), a column's text is read as stored)."""
    exact = {c for a, b in sql_fix(kind) for c in range(a, b + 1)}
    joined = {c for a, b in _guard_ranges(kind) for c in range(a, b + 1)}
    return [chr(c) for c in sorted(joined - exact)
            if unicodedata.normalize("NFC", chr(c)) == chr(c)]


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_texts_in_the_guards_gaps_map_as_the_scalar_engine(kind: str) -> None:
    gaps = _gap_characters(kind)
    assert gaps, "the guard joins no gap: this test would check nothing"
    fix = chr(sql_fix(kind)[0][0])
    texts = [*gaps, "a" + "".join(gaps) + "b", fix + "".join(gaps) + "xY"]
    formula = f"{kind.upper()}(s)"
    rows = [{"s": t} for t in texts]
    want = E.run_scalar(formula, {"s": "Text"}, rows, profile="strict")
    have = E.run_duckdb(formula, {"s": "Text"}, rows, "decimal", profile="strict")
    E.assert_agree(f"{formula} on DuckDB", rows, want, have)


#: (formula, the most characters of its DuckDB query): 361 and 465 before the shorter guard
SIZES = [("UPPER(s)", 330), ('UPPER(t ?? "none")', 435), ("LOWER(s)", 285)]


@pytest.mark.parametrize(("formula", "most"), SIZES, ids=[f for f, _ in SIZES])
def test_case_mapping_sql_stays_small(formula: str, most: int) -> None:
    sql = formulane.compile(formula, {"s": "Text", "t": "Text?"}).to_sql(
        "duckdb", "decimal").select("t")
    assert len(sql) <= most, f"{len(sql)} characters:\n{sql}"
