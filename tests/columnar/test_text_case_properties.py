"""UPPER, LOWER and PROPER answer the same on every backend: a Hypothesis property over
arbitrary Unicode text (every plane; the characters engines map differently, `casefix.FIX`,
drawn often), each batch run by the scalar engine (`Program.evaluate`, row by row), by polars
(`formulane.apply`, eager) and by DuckDB (the generated SQL over a table of the rows).
Texts are NFC, as the scalar engine holds them (it normalizes its inputs)."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")

import formulane  # noqa: E402
from formulane.columnar.forms.text.casefix import FIX  # noqa: E402

FORMULAS = ("UPPER(t)", "LOWER(t)", "PROPER(t)", 'UPPER(t) & "-" & LEFT(t, 2)',
            "LOWER(MID(t, 2, 3))", "UPPER(TRIM(t) & t)")
SCHEMA = {"t": "Text"}
PROGRAMS = {f: formulane.compile(f, SCHEMA) for f in FORMULAS}

_SPECIAL = sorted({chr(c) for ranges in FIX.values() for a, b in ranges
                   for c in range(a, b + 1)} | set("ΣσςİıiIßẞǅǄǆ ΑΣ Σ ʼ'-2"))
#: any code point but surrogates and NUL (DuckDB texts end at NUL), often a special one
CHAR = st.one_of(st.characters(min_codepoint=1, exclude_categories=("Cs",)),
                 st.sampled_from(_SPECIAL), st.characters(min_codepoint=32, max_codepoint=126))
TEXTS = st.lists(st.text(CHAR, max_size=12).map(lambda s: unicodedata.normalize("NFC", s)),
                 min_size=1, max_size=25)


def _scalar(formula: str, texts: list[str]) -> list[Any]:
    program = PROGRAMS[formula]
    return [program.evaluate({"t": t}) for t in texts]


def _polars(formula: str, texts: list[str]) -> list[Any]:
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.Utf8})
    return list(formulane.apply(frame, {"out": formula})["out"].to_list())


def _duckdb(formula: str, texts: list[str]) -> list[Any]:
    sql = PROGRAMS[formula].to_sql("duckdb", "decimal").select("t", keep_columns=True)
    con = duckdb.connect()
    con.register("t", pa.table({"t": texts, "i": list(range(len(texts)))}))
    return [r[0] for r in con.execute(f"SELECT value FROM ({sql}) ORDER BY i").fetchall()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_case_functions_agree_on_every_backend(texts: list[str]) -> None:
    for formula in FORMULAS:
        want = _scalar(formula, texts)
        assert _polars(formula, texts) == want, formula
        assert _duckdb(formula, texts) == want, formula
