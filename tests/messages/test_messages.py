"""End-user rendering and the message catalogue (issue 16 item 6)."""

from __future__ import annotations

import gettext
import io
from pathlib import Path

import pytest
import yaml

import formulane
from formulane.errors import CODES
from formulane.messages import CATALOGUE, _check_complete, pot, render_end_user

CASES = yaml.safe_load((Path(__file__).parent / "end_user_cases.yaml").read_text())


def _error(source: str, schema: dict | None) -> formulane.FormulaError:
    with pytest.raises(formulane.FormulaError) as info:
        formulane.compile(source, schema or {})
    return info.value


@pytest.mark.parametrize("case", CASES, ids=[c["source"] for c in CASES])
def test_end_user_rendering(case: dict) -> None:
    exc = _error(case["source"], case.get("schema"))
    text = exc.render(audience="end_user")
    if "expected" in case:
        assert text == case["expected"]
    for part in case.get("contains", ()):
        assert part in text
    # no signatures or types in what an end user reads
    assert "->" not in text and "expects" not in text


def test_every_code_has_plain_words() -> None:
    _check_complete()
    assert set(CATALOGUE) == set(CODES)


def test_suggested_fix_parses() -> None:
    exc = _error("IF(a > 2,5; 1,25; 0)", {"a": "Number"})
    fixed = exc.fixes[0].apply("IF(a > 2,5; 1,25; 0)")
    assert fixed == "IF(a > 2.5, 1.25, 0)"
    assert formulane.evaluate(fixed, {"a": 3}) == formulane.evaluate("1.25")


def test_coalesce_precedence_warning() -> None:
    program = formulane.compile("price ?? 0 * qty", {"price": "Number?", "qty": "Number"})
    (warning,) = program.warnings
    assert warning.code == "E206"
    assert [f.apply("price ?? 0 * qty") for f in warning.fixes] == [
        "(price ?? 0) * qty", "price ?? (0 * qty)"]
    assert not formulane.compile("(price ?? 0) * qty",
                                 {"price": "Number?", "qty": "Number"}).warnings


def test_gettext_translation() -> None:
    """The .pot's ids are what render_end_user asks gettext for: a catalogue compiled from it
    translates the rendering."""
    template = pot()
    assert 'msgid "The formula stops before it is finished."' in template
    french = {"Problem": "Problème",
              "The formula stops before it is finished.": "La formule s'arrête trop tôt.",
              "What to do: {todo}": "À faire : {todo}"}
    translations = gettext.GNUTranslations(io.BytesIO(_mo(french)))
    exc = _error("1 +", None)
    text = exc.primary.render("1 +", audience="end_user", translate=translations.gettext)
    assert text.startswith("Problème: La formule s'arrête trop tôt.")
    assert "À faire : Complete the formula" in text
    assert render_end_user(exc.primary, "1 +") != text


def _mo(messages: dict[str, str]) -> bytes:
    """A GNU .mo file (the format gettext reads) holding ``messages``."""
    import struct

    entries = sorted({"": "Content-Type: text/plain; charset=UTF-8\n", **messages}.items())
    ids = b"".join(k.encode() + b"\0" for k, _ in entries)
    strs = b"".join(v.encode() + b"\0" for _, v in entries)
    n = len(entries)
    start = 7 * 4 + 16 * n
    koffsets: list[int] = []
    voffsets: list[int] = []
    pos = 0
    for k, _ in entries:
        koffsets += [len(k.encode()), start + pos]
        pos += len(k.encode()) + 1
    pos = 0
    for _, v in entries:
        voffsets += [len(v.encode()), start + len(ids) + pos]
        pos += len(v.encode()) + 1
    header = struct.pack("Iiiiiii", 0x950412DE, 0, n, 7 * 4, 7 * 4 + 8 * n, 0, 0)
    return header + struct.pack(f"{2 * n}i", *koffsets) + struct.pack(f"{2 * n}i", *voffsets) \
        + ids + strs
