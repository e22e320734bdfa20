"""The code points where an engine's own case mapping differs from the scalar engine's, derived
over every code point (alone and between letters, for context rules such as Rust's final
sigma) and checked against `columnar.forms.text.casefix.FIX`: the polars and SQL forms use the
engine's mapping on any text without these characters, so a missing one is a wrong answer.
On a failure, the message gives the ranges to put in FIX."""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import pytest

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")

from formulane.columnar.forms.text.casefix import FIX, ranges_of, sql_fix  # noqa: E402
from formulane.functions import text as text_module  # noqa: E402

CHARS = [chr(c) for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]
#: where each character is mapped: alone, after a letter, between letters, before a letter
CONTEXTS = ("{}", "A{}", "A{}A", "{}A")


def _scalar(kind: str) -> Callable[[str], str]:
    spec = text_module.upper if kind == "upper" else text_module.lower
    assert spec.impl is not None
    impl: Callable[[str], str] = spec.impl
    return impl


def _polars(kind: str, texts: list[str]) -> list[str]:
    s = pl.Series(texts, dtype=pl.Utf8)
    out = s.str.to_uppercase() if kind == "upper" else s.str.to_lowercase()
    return list(out.to_list())


def _duckdb(kind: str, texts: list[str]) -> list[str]:
    con = duckdb.connect()
    texts_table = pa.table({"s": texts})  # noqa: F841 (read by the query by name)
    fn = "upper" if kind == "upper" else "lower"
    return [r[0] for r in con.execute(f"SELECT {fn}(s) FROM texts_table").fetchall()]


ENGINES = {"polars": _polars, "duckdb": _duckdb}


@lru_cache(maxsize=None)
def _differing(engine: str, kind: str) -> frozenset[int]:
    ours = _scalar(kind)
    alone = [ours(c) for c in CHARS]
    a = ours("A")
    found: set[int] = set()
    for ctx in CONTEXTS:
        texts = [ctx.format(c) for c in CHARS]
        got = ENGINES[engine](kind, texts)
        for c, mine, text, theirs in zip(CHARS, alone, texts, got):
            # the scalar engine maps character by character (checked on a sample below)
            want = ctx.replace("A", a).format(mine)
            if theirs != want:
                found.add(ord(c))
    return frozenset(found)


def _covered(ranges: tuple[tuple[int, int], ...]) -> set[int]:
    return {c for a, b in ranges for c in range(a, b + 1)}


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_fix_set_holds_every_code_point_the_engine_maps_differently(engine: str,
                                                                    kind: str) -> None:
    found = _differing(engine, kind)
    missing = found - _covered(FIX[(engine, kind)])
    assert not missing, (f"{engine} {kind} maps these differently: put "
                         f"{[(hex(a), hex(b)) for a, b in ranges_of(found)]} in FIX")
    # the SQL forms' set holds every engine's
    assert found <= _covered(sql_fix(kind))


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_fix_set_is_not_stale(kind: str) -> None:
    """Each listed code point differs on some engine (a stale entry costs speed only, but
    says the table was not regenerated)."""
    for engine in ENGINES:
        assert min(_covered(FIX[(engine, kind)])) > 0x7F  # the forms skip ASCII texts
        extra = _covered(FIX[(engine, kind)]) - _differing(engine, kind)
        assert not extra, (engine, kind, [hex(c) for c in sorted(extra)][:20])


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_scalar_mapping_is_character_by_character(kind: str) -> None:
    """What the derivation above relies on: the reference maps each character alone."""
    ours = _scalar(kind)
    for start in range(0, len(CHARS), 997):
        text = "A" + "".join(CHARS[start:start + 40]) + "ΣA"
        assert ours(text) == "".join(ours(c) for c in text)


#: PROPER is a left-to-right rule whose state is "the previous character is a letter": each
#: character is checked at a word's start, after a letter, after a digit, and for the state it
#: leaves (the letter after it); a text of characters that pass all of them agrees throughout.
PROPER_CONTEXTS = ("{}", "a{}", "1{}", "{}a", "a{}a", "A{}A")


@lru_cache(maxsize=None)
def _proper_differing() -> frozenset[int]:
    assert text_module.proper.impl is not None
    ours: Callable[[str], str] = text_module.proper.impl
    found: set[int] = set()
    for ctx in PROPER_CONTEXTS:
        texts = [ctx.format(c) for c in CHARS]
        got = pl.Series(texts, dtype=pl.Utf8).str.to_titlecase().to_list()
        found |= {ord(c) for c, text, theirs in zip(CHARS, texts, got) if theirs != ours(text)}
    return frozenset(found)


def test_proper_fix_set_holds_every_code_point_titlecase_maps_differently() -> None:
    found = _proper_differing()
    listed = _covered(FIX[("polars", "proper")])
    assert found <= listed, ("polars to_titlecase differs from PROPER on these: put "
                             f"{[(hex(a), hex(b)) for a, b in ranges_of(found)]} in FIX")
    assert not listed - found, [hex(c) for c in sorted(listed - found)][:20]
    # ASCII never needs the fix: the forms skip the search on ASCII texts
    assert min(found) > 0x7F
