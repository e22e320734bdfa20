"""Parse errors: code, span, message, hint and fixes for each common slip; golden renderings.

Regenerate the golden file with ``FORMULANE_UPDATE_GOLDEN=1 pytest tests/grammar``.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

from formulane.errors import LimitExceeded, ParseError
from formulane.grammar import parse
from formulane.grammar import parser as parser_module
from formulane.limits import Limits

GOLDEN = Path(__file__).with_name("golden_diagnostics.txt")

# (source, code, (span start, end), words in the message, words in the hint, text after the
# first fix or None when there is no fix)
ERRORS: list[tuple[str, str, tuple[int, int], str, str, str | None]] = [
    ("", "E102", (0, 0), "empty formula", "write an expression", None),
    ("   ", "E102", (0, 3), "empty formula", "", None),
    ("=", "E102", (0, 1), "empty formula", "", None),
    ("/* only a comment */", "E102", (0, 20), "empty formula", "", None),
    ("1 +", "E102", (3, 3), "expected a value but the formula ended", "", None),
    ("not", "E102", (3, 3), "expected a value", "", None),
    ("SUM(1,", "E102", (6, 6), "expected a value", "'(' at 1:4 is not closed", None),
    ("()", "E102", (2, 2), "expected '=>'", "() => 1", None),
    ("1 2", "E101", (2, 3), "expected an operator or the end of the formula but found the "
     "number 2", "", None),
    ("IF(a b, c)", "E101", (5, 6), "expected an operator, ',' or ')' but found the name 'b'",
     "separate arguments with ','", "IF(a, b, c)"),
    ("[1 2]", "E101", (3, 4), "expected an operator, ',' or ']'", "separate list items",
     "[1, 2]"),
    ("xs[1 2]", "E101", (5, 6), "expected an operator or ']'", "", None),
    ("(a b)", "E101", (3, 4), "expected an operator or ')'", "", None),
    ("[1, 2,]", "E101", (6, 7), "expected a value but found ']'", "trailing ','", "[1, 2]"),
    ("[1,,2]", "E101", (3, 4), "expected a value but found ','", "list item is missing", None),
    ("[, 2]", "E101", (1, 2), "expected a value or ']' but found ','", "list item is missing",
     None),
    ("SUM(1, 2 3)", "E101", (9, 10), "found the number 3", "separate arguments", "SUM(1, 2, 3)"),
    ("MAP(xs, LAMBDA(x, ))", "E101", (8, 19), "LAMBDA needs a body", "LAMBDA(x, x * 2)", None),
    ("MAP(xs, LAMBDA(, x))", "E101", (15, 15), "parameter must be a plain name", "", None),
    ("a,b", "E101", (1, 2), "but found ','", "one expression", None),
    ("SUM (1)", "E101", (4, 5), "found '('", "remove the space", "SUM(1)"),
    ("2 ** 3", "E101", (2, 4), "'**' is not an operator", "'^'", "2 ^ 3"),
    ("5 % 3", "E101", (4, 5), "found the number 3", "MOD(a, b)", "MOD(5, 3)"),
    ("a + x % y * 2", "E101", (8, 9), "found the name 'y'", "MOD(a, b)", "a + MOD(x, y) * 2"),
    ("(a + b) % c", "E101", (10, 11), "found the name 'c'", "percent", "MOD((a + b), c)"),
    ("x % (y)", "E101", (4, 5), "found '('", "MOD(a, b)", None),
    ("a =< b", "E101", (2, 4), "'=<' is not an operator", "'<='", "a <= b"),
    ("a = not b", "E101", (4, 7), "expected a value but found 'not'", "(not x)", None),
    ("a.and", "E101", (2, 5), "expected a name but found 'and'", "{and}", "a.{and}"),
    ("a.5", "E101", (1, 3), "found the number .5", "xs[n]", None),
    ("(a, 1) => 2", "E101", (4, 5), "expected a name but found the number 1", "", None),
    ("MAP(xs, (a, b))", "E101", (14, 15), "expected '=>' but found ')'", "[a, b]", None),
    ("{}", "E101", (0, 2), "cannot be empty", "{Unit Price}", None),
    ("MAP(xs, LAMBDA())", "E101", (8, 16), "LAMBDA needs a body", "LAMBDA(x, x * 2)", None),
    ("MAP(xs, LAMBDA(1 + 1, 2))", "E101", (15, 20), "parameter must be a plain name", "", None),
    ("MAP(xs, (x + 1) => 2)", "E101", (9, 14), "parameter must be a plain name", "", None),
    ("MAP(xs, ((x)) => 2)", "E101", (9, 12), "parameter must be a plain name", "", None),
    ('"abc', "E103", (0, 4), "unterminated string", 'close the text with "', '"abc"'),
    ("'abc", "E103", (0, 4), "unterminated string", "close the text with '", "'abc'"),
    ("\"abc' & x", "E103", (0, 9), "unterminated string", "same quote on both sides",
     '"abc" & x'),
    ("'abc\"", "E103", (0, 5), "unterminated string", "same quote", "'abc'"),
    ('"it\'s', "E103", (0, 5), "unterminated string", 'close the text with "', '"it\'s"'),
    ('"a"" & 1', "E103", (0, 8), "unterminated string", "", '"a"" & 1"'),
    ("SUM(1; 2; 3)", "E104", (5, 6), "unexpected character ';'", "separate arguments with ','",
     "SUM(1, 2, 3)"),
    ('SUM(1; ";"; 3)', "E104", (5, 6), "';'", "','", 'SUM(1, ";", 3)'),
    ("$A$1 + 1", "E104", (0, 1), "unexpected character '$'", "refer to fields by name",
     "A$1 + 1"),
    ("`Unit Price` * 2", "E104", (0, 1), "unexpected character '`'", "{...}",
     "{Unit Price} * 2"),
    ("\u201cabc\u201d", "E104", (0, 1), "unexpected character", "straight quotes", '"abc"'),
    ("x # y", "E104", (2, 3), "'#'", "NA()", None),
    ("a : b", "E104", (2, 3), "':'", "ranges", None),
    ("a | b", "E104", (2, 3), "'|'", "'or'", "a || b"),
    ("a ? b", "E104", (2, 3), "'?'", "'??'", None),
    ("\\n", "E104", (0, 1), "'\\'", "no backslash escapes", None),
    ("a\u200bb", "E104", (1, 2), "invisible character U+200B", "delete it", "ab"),
    ("\x00", "E104", (0, 1), "U+0000", "delete it", ""),
    ("(1 + 2", "E105", (0, 1), "expected ')' to close the '(' at 1:1", "add ')'", "(1 + 2)"),
    ("SUM(MAX(1, 2", "E105", (7, 8), "'(' at 1:8", "", "SUM(MAX(1, 2))"),
    ("[1, (2", "E105", (4, 5), "'(' at 1:5", "", "[1, (2)]"),
    ("x +\n  (1", "E105", (6, 7), "'(' at 2:3", "", "x +\n  (1)"),
    ("[1, 2)", "E105", (5, 6), "expected ']' to close the '[' at 1:1 but found ')'", "",
     "[1, 2]"),
    ("1 + 2)", "E105", (5, 6), "unmatched ')'", "no '('", "1 + 2"),
    ("{abc", "E105", (0, 1), "expected '}'", "{Unit Price}", "{abc}"),
    ("abc}", "E105", (3, 4), "unmatched '}'", "", None),
    ("1 /* open", "E106", (2, 9), "unterminated comment", "*/", "1 /* open */"),
    ("1.2.3", "E107", (0, 5), "invalid number '1.2.3'", "1e-3", None),
    ("1..2", "E107", (0, 4), "invalid number '1..2'", "", None),
    ("0x1F", "E107", (0, 4), "invalid number '0x1F'", "", None),
    ("1e", "E107", (0, 2), "invalid number '1e'", "", None),
    ("2x", "E107", (0, 2), "invalid number '2x'", "2 * x", None),
    ("1e308", "E107", (0, 5), "number too large", "1e308", None),
    ("1e99999999999999999999999", "E107", (0, 25), "invalid number", "", None),
    ("x => x", "E108", (0, 6), "only be an argument of a function call", "MAP(", None),
    ("(a, b) => a", "E108", (0, 11), "lambda", "", None),
    ("LAMBDA(x, 1)", "E108", (0, 12), "lambda", "", None),
    ("[x => 1]", "E108", (1, 7), "lambda", "", None),
    ("1 + (x => 1)", "E108", (4, 12), "lambda", "", None),
    ("1 + x => 2", "E108", (6, 8), "lambda", "", None),
    ("MAP(xs, x => y => 1)", "E108", (13, 19), "lambda", "", None),
    ("IF(x, LAMBDA(y, y)[1], 0)", "E108", (6, 18), "lambda", "", None),
]


@pytest.mark.parametrize(("source", "code", "span", "message", "hint", "fixed"), ERRORS,
                         ids=[json.dumps(e[0]) for e in ERRORS])
def test_error(source: str, code: str, span: tuple[int, int], message: str, hint: str,
               fixed: str | None) -> None:
    with pytest.raises(ParseError) as info:
        parse(source)
    err = info.value
    assert err.code == code
    assert err.span is not None and (err.span.start, err.span.end) == span
    assert message in err.message
    assert hint in err.hint
    assert err.primary.label
    if fixed is None:
        assert err.fixes == ()
    else:
        assert err.fixes and err.fixes[0].apply(source) == fixed
    assert err.source == source  # render() works without passing the source again


@pytest.mark.parametrize("source", [e[0] for e in ERRORS], ids=[json.dumps(e[0]) for e in ERRORS])
def test_fallback_engine_reports_the_same_problem(source: str) -> None:
    """Lark's public transformer path finds the same code, span and fixes (wording may differ)."""
    engine = _fallback_engine()
    with pytest.raises(ParseError) as fast:
        parse(source)
    with pytest.raises(ParseError) as slow:
        parser_module._parse_with(engine, source, None)
    assert (slow.value.code, slow.value.span) == (fast.value.code, fast.value.span)
    assert slow.value.fixes == fast.value.fixes


@functools.lru_cache(maxsize=1)
def _fallback_engine() -> parser_module._Engine:
    return parser_module._Engine(parser_module._grammar(), fast=False)


ALIASES_ARE_NOT_ERRORS = ["a == b", "a != b", "a && b", "a || b", "!a", "=SUM(1, 2)",
                          " = 1", "TRUE()", "AND(a, b)", "NOT(x)"]


@pytest.mark.parametrize("source", ALIASES_ARE_NOT_ERRORS)
def test_aliases_are_accepted(source: str) -> None:
    parse(source)


def test_fixes_produce_valid_formulas() -> None:
    for source, _, _, _, _, fixed in ERRORS:
        if fixed is not None and source not in ('"a"" & 1', "\x00", "$A$1 + 1"):
            parse(fixed)


def test_errors_are_the_documented_types() -> None:
    with pytest.raises(ParseError):
        parse("1 +")
    with pytest.raises(LimitExceeded):
        parse("1" * 10_000)
    with pytest.raises(TypeError):
        parse(None)  # type: ignore[arg-type]


# ---- golden rendered diagnostics ---------------------------------------------------------------

_SMALL = Limits(max_source_length=40, max_nodes=12, max_depth=6, max_arguments=4)
LIMIT_CASES = [
    "SUM(1, 2, 3) + " * 3 + "1",
    "1 + 2 + 3 + 4 + 5 + 6 + 7",
    "((((((((1))))))))",
    "-------1",
    "SUM(1, 2, 3, 4, 5, 6)",
    "[1, 2, 3, 4, 5]",
    "a.b.c.d.e.f.g",
    "[1, 2, 3, 4] & [5, 6, 7, 8] & [9]",
    "-1-1-1-1-1-1-1-1-1-1-1-1-1",
    "MAP(xs, (a, b, c, d, e) => a)",
]


def _render_all() -> str:
    blocks = []
    cases: list[tuple[str, Limits | None]] = [(source, None) for source, *_ in ERRORS if source.isprintable() or "\n" in source]
    cases += [(source, _SMALL) for source in LIMIT_CASES]
    for source, limits in cases:
        try:
            parse(source, limits=limits)
            rendered = "(no error)"
        except (ParseError, LimitExceeded) as err:
            rendered = err.render()
        title = json.dumps(source, ensure_ascii=False)
        if limits is not None:
            title += " with max_source_length=40, max_nodes=12, max_depth=6, max_arguments=4"
        blocks.append(f"### {title}\n{rendered}\n")
    return "\n".join(blocks)


def test_golden_diagnostics() -> None:
    rendered = _render_all()
    if os.environ.get("FORMULANE_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(rendered, "utf-8")
    assert GOLDEN.exists(), "run with FORMULANE_UPDATE_GOLDEN=1 to create the golden file"
    assert rendered == GOLDEN.read_text("utf-8")
