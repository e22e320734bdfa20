"""The editor features on the text of a keystroke: well-typed formulas (formulane.testing) cut,
with characters dropped or inserted, at any cursor, in both profiles. Completion, signature
help, hover, types of selections and diagnostics never raise; the formatter raises only a
FormulaError; spans stay inside the text."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulane.authoring import complete, diagnose, format, hover, signature_help, type_at
from formulane.errors import FormulaError
from formulane.testing import formulas

from authoring_helpers import SCHEMA

_NOISE = list("()[]{},.;:+-*/^%&=<>!?\"' \n0123456789abxyz") + ["=>", "/*", "*/", "é", "😀"]


def _mutate(source: str, rnd: random.Random) -> str:
    if not source:
        return source
    i = rnd.randrange(len(source) + 1)
    kind = rnd.randrange(4)
    if kind == 0:
        return source[:i]  # typed so far
    if kind == 1:
        return source[:i] + source[min(len(source), i + rnd.randrange(1, 6)):]  # deleted
    if kind == 2:
        return source[:i] + rnd.choice(_NOISE) + source[i:]  # a slip
    return source[i:]


@settings(max_examples=100, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(formulas(SCHEMA, max_depth=3), st.randoms(use_true_random=False),
       st.sampled_from(["strict", "excel"]))
def test_broken_text_never_raises(source: str, rnd: random.Random, profile: str) -> None:
    for _ in range(3):
        text = _mutate(_mutate(source, rnd), rnd) if rnd.random() < 0.3 else _mutate(source, rnd)
        cursor = rnd.randrange(len(text) + 1)
        start, end = sorted((rnd.randrange(len(text) + 1), rnd.randrange(len(text) + 1)))
        for item in complete(text, cursor, SCHEMA, profile=profile):
            assert 0 <= item.span.start <= cursor <= item.span.end <= len(text)  # replaces the word
        signature_help(text, cursor)
        info = hover(text, cursor, SCHEMA, profile=profile)
        if info is not None:
            assert 0 <= info.span.start <= info.span.end <= len(text)
        found = type_at(text, start, end, SCHEMA, profile=profile)
        if found is not None:
            assert 0 <= found[0].start <= found[0].end <= len(text)
        for problem in diagnose(text, SCHEMA, profile=profile):
            assert problem.span is None or 0 <= problem.span.start <= problem.span.end <= len(text)
        try:
            format(text, rnd.choice([10, 40, 80]))
        except FormulaError:
            pass
