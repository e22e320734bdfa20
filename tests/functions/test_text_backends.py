"""The text family on the columnar (polars) and SQL (DuckDB) backends.

Every case runs three ways on the same rows: the scalar engine (`Program.evaluate`, row by
row), polars (`formulane.apply` on a frame of the rows) and DuckDB (the generated SQL over a
table of the rows), with Number columns as Float64/DOUBLE and as Decimal(38, 18)/DECIMAL. Values
must be equal (numbers within 1e-9 relative) and error codes equal, row by row; a row where the
scalar engine stops with `LimitExceeded` must never be reached by a backend form (the form must
have refused). Refusals are listed with their reason and checked to happen at compile time, and
every spec of the family must carry an explicit decision for both backends. Exhaustive checks
run the case-mapping, code-point and normalization forms over every code point, and TEXT's
rounding and SEARCH's wildcards over seeded random inputs.
"""

from __future__ import annotations

import itertools
import random
import unicodedata
from typing import Any

import pytest

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

from functions import _engines as E  # noqa: E402

import formulane  # noqa: E402
from formulane.errors import LimitExceeded, Unsupported  # noqa: E402
from formulane.columnar.call import FormCall  # noqa: E402
from formulane.columnar.forms.form import Form  # noqa: E402
from formulane.columnar.forms.text import case as tf  # noqa: E402
from formulane.functions import text as text_module  # noqa: E402
from formulane.functions.registry import default_registry  # noqa: E402
from formulane.functions.spec import UNDECIDED, Refuse  # noqa: E402

REGISTRY = default_registry()
PROFILE = "excel"  # blanks read as "" and 0, as a spreadsheet does: the rows hold nulls

# --------------------------------------------------------------------------------- the rows
# Texts are NFC (the scalar engine normalizes its inputs; see the module docs of columnar/forms/text).

TEXTS = ["", "abc", "ABC", "  a   b  ", "Straße", "İstanbul", "ΟΔΟΣ σ", "é😀x", "e\u0301",
         "a\tb\nc\x01\x7f", "aaa", "aAaA", "a-b-c", "a--b-", "john@example.com x1 y22",
         "ǆemal ǅ ǈ", "ﬁne ŉ ǰ", "sſ ẞ ß", "٣4 a_b", "a\\b$1 $$", "中文字 ab", "x" * 40,
         "MiXeD-case_words 2-way don't", None]
TEXTS = [None if t is None else unicodedata.normalize("NFC", t) for t in TEXTS]
NUMS = [0.0, 1.0, 2.0, 2.9, -1.0, -0.5, 0.5, 3.0, 100.0, 1e10, None]
NEEDLES = ["a", "", "A", "b", "-", "aa", "ß", "x", None]

DATASETS: dict[str, tuple[dict[str, str], list[dict[str, Any]]]] = {
    "tn": ({"a": "Text?", "n": "Number?"},
           [{"a": a, "n": n} for a, n in itertools.product(TEXTS, NUMS)]),
    "tb": ({"a": "Text?", "b": "Text?", "n": "Number?"},
           [{"a": a, "b": b, "n": n} for a, b, n in itertools.product(
               TEXTS, NEEDLES, [1.0, 2.0, 0.0, 4.0])]),
    "x": ({"x": "Number?", "b": "Text?"},
          [{"x": v, "b": "0"} for v in [
              0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 2.675, -2.675, 1.005, 0.285, 1234.5678, -1234.5678,
              0.001, -0.001, 1e-7, 123456.789, 9.995, 65.0, 97.9, 255.0, 255.9, 256.0, 127.0,
              233.0, 8491.0, 55296.0, 57343.0, 128512.0, 1114111.0, 1114112.0, 1e15,
              123456789012345.6, 5e17, 0.3, 1 / 3, 2 / 3, 99.5, 999999.995, None]]),
    "bool": ({"b": "Boolean?"}, [{"b": b} for b in (True, False, None)]),
}

# --------------------------------------------------------------------------------- the cases

CASES: list[tuple[str, str]] = [
    # lengths and slices
    ('LEN(a)', "tn"),
    ('LEN(a & "é")', "tn"),
    ('LEFT(a, n)', "tn"),
    ('LEFT(a)', "tn"),
    ('RIGHT(a, n)', "tn"),
    ('RIGHT(a)', "tn"),
    ('MID(a, n, 3)', "tn"),
    ('MID(a, 2, n)', "tn"),
    ('MID(a, n, n)', "tn"),
    # case and cleaning
    ('UPPER(a)', "tn"),
    ('LOWER(a)', "tn"),
    ('PROPER(a)', "tn"),
    ('TRIM(a)', "tn"),
    ('CLEAN(a)', "tn"),
    ('EXACT(a, b)', "tb"),
    ('EXACT(a, "abc")', "tn"),
    # searching
    ('FIND(b, a)', "tb"),
    ('FIND(b, a, n)', "tb"),
    ('FIND("a", a, n)', "tn"),
    ('FIND("", a, n)', "tn"),
    ('FIND("ß", a)', "tn"),
    ('SEARCH("A", a, n)', "tn"),
    ('SEARCH("", a, n)', "tn"),
    ('SEARCH("*", a, n)', "tn"),
    ('SEARCH("a?c", a)', "tn"),
    ('SEARCH("b*c", a)', "tn"),
    ('SEARCH("*b", a, n)', "tn"),
    ('SEARCH("~*", "a*b" & a)', "tn"),
    ('SEARCH("~?", a & "?")', "tn"),
    ('SEARCH("S?", a, n)', "tn"),
    ('SEARCH("ẞ", a)', "tn"),
    ('SEARCH("σ", a)', "tn"),
    ('SEARCH("a?", a & CHAR(10) & "a")', "tn"),
    ('STARTSWITH(a, b)', "tb"),
    ('ENDSWITH(a, b)', "tb"),
    ('CONTAINS(a, b)', "tb"),
    ('STARTSWITH(a, "a")', "tn"),
    # before / after / split
    ('TEXTBEFORE(a, "a")', "tn"),
    ('TEXTAFTER(a, "a")', "tn"),
    ('TEXTBEFORE(a, "-", 2)', "tn"),
    ('TEXTAFTER(a, "-", -1)', "tn"),
    ('TEXTBEFORE(a, "a", -2)', "tn"),
    ('TEXTAFTER(a, "A", 2, 1)', "tn"),
    ('TEXTBEFORE(a, "S", -1, 1)', "tn"),
    ('TEXTAFTER(a, "b", 1, 0, 1)', "tn"),
    ('TEXTBEFORE(a, "-", -3, 0, 1)', "tn"),
    ('TEXTAFTER(a, "z", 1, 0, 0, "none")', "tn"),
    ('TEXTBEFORE(a, "z", 1, 0, 0, b)', "tb"),
    ('TEXTBEFORE(a, "")', "tn"),
    ('TEXTAFTER(a, "", -1)', "tn"),
    ('TEXTAFTER(a, "a", 0)', "tn"),
    ('TEXTAFTER(a, "a", 1, 2)', "tn"),
    ('TEXTBEFORE(a, "aa", 2)', "tn"),
    ('TEXTSPLIT(a, "-")', "tn"),
    ('TEXTSPLIT(a, "a", BLANK(), TRUE)', "tn"),
    ('TEXTSPLIT(a, " ", BLANK(), n > 1)', "tn"),
    ('TEXTSPLIT(a, "-", BLANK(), FALSE, 1)', "tn"),
    ('TEXTSPLIT(a, "")', "tn"),
    ('TEXTSPLIT(a, ",", ";")', "tn"),
    ('TEXTSPLIT(a, "-", BLANK(), FALSE, 3)', "tn"),
    # growing texts: bounded forms, literal folds
    ('REPT(a, 1)', "tn"),
    ('REPT(a, 0)', "tn"),
    ('REPT("", n)', "tn"),
    ('REPT("ab", 3) & a', "tn"),
    ('REPT(a, -1)', "tn"),
    ('SUBSTITUTE(a, "a", "x")', "tn"),
    ('SUBSTITUTE(a, "-", "")', "tn"),
    ('SUBSTITUTE(a, "ab", "$1")', "tn"),
    ('SUBSTITUTE(a, "", "x")', "tn"),
    ('SUBSTITUTE(a, "aa", "b", n)', "tn"),
    ('SUBSTITUTE(a, "a", "", n)', "tn"),
    ('SUBSTITUTE(a, "-", "+", 2)', "tn"),
    ('SUBSTITUTE(a, "", "x", n)', "tn"),
    ('REPLACE(a, 2, 3, "X")', "tn"),
    ('REPLACE(a, 1, 1, "")', "tn"),
    ('REPLACE(a, 0, 1, "x")', "tn"),
    ('REPLACE(a, 2, -1, "x")', "tn"),
    ('REPLACE("abcdef", n, n, "X")', "tn"),
    ('CONCAT("a", "b", "")', "tn"),
    ('CONCATENATE("x", "", "y") & a', "tn"),
    ('TEXTJOIN(", ", TRUE, "a", "", "b")', "tn"),
    ('ENCODEURL("a b&c é")', "tn"),
    # regular expressions (formula strings have no escapes: "\w" is backslash-w)
    ('REGEXTEST(a, "[0-9]+")', "tn"),
    ('REGEXTEST(a, "^a")', "tn"),
    ('REGEXTEST(a, "c$")', "tn"),
    ('REGEXTEST(a, "b", 1)', "tn"),
    ('REGEXTEST(a, "(")', "tn"),
    ('REGEXTEST(a, "a", 2)', "tn"),
    ('REGEXTEST(a, "a.c")', "tn"),
    ('REGEXTEST(a, "[^a-z]")', "tn"),
    (r'REGEXTEST(a, "\x41|\.|\$")', "tn"),
    ('REGEXEXTRACT(a, "a+")', "tn"),
    (r'REGEXEXTRACT(a, "\w+")', "tn"),
    (r'REGEXEXTRACT(a, "\W+")', "tn"),
    (r'REGEXEXTRACT(a, "\s\S")', "tn"),
    ('REGEXEXTRACT(a, "[a-c]+", n)', "tn"),
    ('REGEXEXTRACT(a, "s.", 0, 1)', "tn"),
    ('REGEXEXTRACT(a, "(?:a|b)+?")', "tn"),
    ('REGEXEXTRACT(a, "x{2,5}")', "tn"),
    (r'REGEXEXTRACT(a, "\d*")', "tn"),
    ('REGEXEXTRACTALL(a, "a")', "tn"),
    (r'REGEXEXTRACTALL(a, "\S+")', "tn"),
    ('REGEXEXTRACTALL(a, "[a-z]+", 1)', "tn"),
    (r'REGEXEXTRACTALL(a, "[\w.]+@\w+")', "tn"),
    ('REGEXEXTRACTALL(a, "ss|s", 1)', "tn"),
    ('REGEXGROUPS(a, "(a)(z)?")', "tn"),
    (r'REGEXGROUPS(a, "(\w+)@(\w+)")', "tn"),
    ('REGEXGROUPS(a, "a")', "tn"),
    ('REGEXGROUPS(a, "(b)|(c)")', "tn"),
    ('REGEXREPLACE(a, "[ab]", "#")', "tn"),
    ('REGEXREPLACE(a, "a+", "$", 1)', "tn"),
    (r'REGEXREPLACE(a, "\s+", "\")', "tn"),
    ('REGEXREPLACE(a, "ab", "$$")', "tn"),
    ('REGEXREPLACE(a, "a", "$3")', "tn"),
    (r'REGEXREPLACE(a, "\d", "", 0, 1)', "tn"),
    # characters
    ('CHAR(x)', "x"),
    ('CODE(a)', "tn"),
    ('UNICHAR(x)', "x"),
    ('UNICODE(a)', "tn"),
    ('UNICODE(UNICHAR(x))', "x"),
    # conversions
    ('VALUE("1,234.5") + n', "tn"),
    ('NUMBERVALUE("2.500,27", ",", ".") + n', "tn"),
    ('TEXT(x, "0")', "x"),
    ('TEXT(x, "0.00")', "x"),
    ('TEXT(x, "#,##0")', "x"),
    ('TEXT(x, "#,##0.00")', "x"),
    ('TEXT(x, "0.0%")', "x"),
    ('TEXT(x, "0%")', "x"),
    ('TEXT(x / 1000, "#,##0.000000000")', "x"),
    ('TEXT(x, "General")', "x"),
    ('TEXT(x / 7, "0.000")', "x"),
    ('TEXT(b, "0.00")', "bool"),
    ('TEXT("5", "0.00")', "bool"),
    ('TEXT(b, "0.00") & TEXT(12.5, "0.0%")', "bool"),
    # composed with the operators and logic
    ('IF(LEN(a) > 3, UPPER(LEFT(a, 3)), LOWER(a))', "tn"),
    ('IFERROR(FIND("b", a), -1) + LEN(TRIM(a))', "tn"),
]

#: Forms that exist for one backend only: (formula, engine that refuses) -> a phrase of the
#: reason.
ONE_SIDED = {('TEXT(x, "General")', "duckdb"): "General"}

#: Formulas a backend must refuse: (formula, dataset, backends, a phrase of the reason).
REFUSED: list[tuple[str, str, tuple[str, ...], str]] = [
    ('CONCAT(a, "b")', "tn", ("polars", "sql"), "not bounded"),
    ('CONCATENATE(a, a)', "tn", ("polars", "sql"), "not bounded"),
    ('TEXTJOIN("-", TRUE, a, "x")', "tn", ("polars", "sql"), "not bounded"),
    ('REPT(a, n)', "tn", ("polars", "sql"), "literal 0 or 1"),
    ('REPT(a, 2)', "tn", ("polars", "sql"), "literal 0 or 1"),
    ('SUBSTITUTE(a, "a", "xy")', "tn", ("polars", "sql"), "longer than old_text"),
    ('SUBSTITUTE(a, b, "x")', "tb", ("polars", "sql"), "must be literals"),
    ('REPLACE(a, n, 1, "X")', "tn", ("polars", "sql"), "must be literals"),
    ('REPLACE(a, 2, 0, "X")', "tn", ("polars", "sql"), "no longer than"),
    ('ENCODEURL(a)', "tn", ("polars", "sql"), "percent-encoding"),
    ('VALUE(a)', "tn", ("polars", "sql"), "reading of a number"),
    ('NUMBERVALUE(a)', "tn", ("polars", "sql"), "reading of a number"),
    ('SEARCH(b, a)', "tb", ("polars", "sql"), "find_text must be a literal"),
    ('TEXTBEFORE(a, b)', "tb", ("polars", "sql"), "one literal text"),
    ('TEXTBEFORE(a, ["-", "+"])', "tn", ("polars", "sql"), "one literal text"),
    ('TEXTAFTER(a, "-", n)', "tn", ("polars", "sql"), "instance_num must be a literal"),
    ('TEXTAFTER(a, "aa", -1)', "tn", ("polars", "sql"), "can overlap"),
    ('TEXTSPLIT(a, "a", BLANK(), FALSE, 1)', "tn", ("polars", "sql"), "cased letters"),
    ('TEXTSPLIT(a, ["-", " "])', "tn", ("polars", "sql"), "one literal text"),
    ('REGEXTEST(a, b)', "tb", ("polars", "sql"), "pattern must be a literal"),
    (r'REGEXTEST(a, "\bx")', "tn", ("polars", "sql"), "escape"),
    ('REGEXTEST(a, "(?P<x>a)")', "tn", ("polars", "sql"), "named groups"),
    ('REGEXTEST(a, "[[:alpha:]]")', "tn", ("polars", "sql"), "inside a class"),
    (r'REGEXTEST(a, "\pL")', "tn", ("polars", "sql"), "budget"),
    ('REGEXTEST(a, "é", 1)', "tn", ("polars", "sql"), "non-ASCII"),
    ('REGEXTEST(a, "a", n)', "tn", ("polars", "sql"), "case_sensitivity must be a literal"),
    ('REGEXEXTRACTALL(a, "a*")', "tn", ("polars", "sql"), "empty text"),
    (r'REGEXREPLACE(a, "(\w+) (\w+)", "$2, $1")', "tn", ("polars", "sql"), "inserts groups"),
    ('REGEXREPLACE(a, "a", "bb")', "tn", ("polars", "sql"), "longer than a match"),
    ('REGEXREPLACE(a, "a", "b", 2)', "tn", ("polars", "sql"), "occurrence"),
    ('TEXT(x, "0.00E+00")', "x", ("polars", "sql"), "not one of those"),
    ('TEXT(x, b)', "x", ("polars", "sql"), "format_text must be a literal"),
    ('TEXT(x, "General")', "x", ("sql",), "General"),
    ('TEXT(DATE(2024, 1, 5), "yyyy")', "x", ("polars", "sql"), "date"),
    ('TEXT(b, "0")', "x", ("polars", "sql"), "reads as a number"),
]

# ------------------------------------------------------------------------- the three engines


def _scalar(formula: str, schema: dict[str, str], rows: list[dict[str, Any]],
            limits: Any = None) -> list[Any]:
    return E.run_scalar(formula, schema, rows, profile=PROFILE, registry=REGISTRY,
                        limits=limits)


def _run(backend: str, formula: str, schema: dict[str, str], rows: list[dict[str, Any]]
         ) -> list[tuple[Any, Any]]:
    """On ``backend`` (a label of BACKENDS), over rows already in its mode."""
    return E.run(backend, formula, schema, rows, profile=PROFILE, registry=REGISTRY)


def _mode(backend: str) -> str:
    return E.engine_mode(backend)[1]


def _agree(title: str, rows: list[dict[str, Any]], expected: list[Any],
           actual: list[tuple[Any, Any]]) -> None:
    # numbers within 1e-9 relative, no absolute tolerance; texts and booleans exactly
    E.assert_agree(title, rows, expected, actual)


BACKENDS = ("polars-float", "polars-decimal", "duckdb-double", "duckdb-decimal")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_three_engines_agree(case: tuple[str, str], backend: str) -> None:
    formula, dataset = case
    engine, mode = E.engine_mode(backend)
    schema, all_rows = DATASETS[dataset]
    rows = E.rows_for(mode, all_rows)
    one_sided = ONE_SIDED.get((formula, engine))
    if one_sided is not None:
        E.assert_refused(E.BACKEND[engine], one_sided, _run, backend, formula, schema, rows)
        return
    expected = _scalar(formula, schema, rows)
    _agree(f"{formula} on {backend}", rows, expected, _run(backend, formula, schema, rows))


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c[0])
def test_refusals_happen_when_compiling(case: tuple[str, str, tuple[str, ...], str]) -> None:
    formula, dataset, backends, reason = case
    schema, rows = DATASETS[dataset]
    for backend in BACKENDS:
        engine = E.BACKEND[E.engine_mode(backend)[0]]
        if engine not in backends:
            continue
        E.assert_refused(engine, reason, _run, backend, formula, schema,
                         E.rows_for(_mode(backend), rows)[:3])


def test_growing_forms_never_meet_the_text_limit() -> None:
    """Where the scalar engine stops (LimitExceeded), the forms refused when compiling; the
    bounded forms keep long texts whole."""
    long = "ab-" * 10922  # 32,766 characters: within the limit
    rows = [{"a": long, "n": 2.0}, {"a": "a-b", "n": 1.0}]
    schema = {"a": "Text?", "n": "Number?"}
    # The cost budget is a per-evaluation meter the columnar engines do not have (a long text
    # through a regex exhausts the default one): here only the text limit is at stake.
    limits = formulane.Limits(max_cost=10**9)
    for formula in ('SUBSTITUTE(a, "-", "--")', 'REPT(a, n)', 'CONCAT(a, a)',
                    'REPLACE(a, 40000, 0, "xy")', 'REGEXREPLACE(a, "-", "==")'):
        assert isinstance(_scalar(formula, schema, rows, limits)[0], LimitExceeded), formula
        for backend in BACKENDS:
            with pytest.raises(Unsupported) as info:
                _run(backend, formula, schema, E.rows_for(_mode(backend), rows))
            assert info.value.backend == E.BACKEND[E.engine_mode(backend)[0]], backend
    for formula in ('SUBSTITUTE(a, "-", "+")', 'REPLACE(a, 2, 1, "X")', 'UPPER(a)',
                    'REGEXREPLACE(a, "b-", "B")', 'TEXTAFTER(a, "-", -2)',
                    'SUBSTITUTE(a, "b-", "", 10000)'):
        expected = _scalar(formula, schema, rows, limits)
        for backend in BACKENDS:
            got = _run(backend, formula, schema, E.rows_for(_mode(backend), rows))
            _agree(f"{formula} on {backend}", rows, expected, got)


# ------------------------------------------------------------------- exhaustive and sampled


def _all_code_points() -> list[int]:
    return [c for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]


def test_no_case_mapping_beyond_the_table() -> None:
    for c in range(tf._CASED_LIMIT, 0x110000):
        ch = chr(c)
        if 0xD800 <= c <= 0xDFFF:
            continue
        assert len(ch.upper()) != 1 or ch.upper() == ch, hex(c)
        assert len(ch.lower()) != 1 or ch.lower() == ch, hex(c)


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_polars_case_mapping_on_every_code_point(kind: str) -> None:
    spec = text_module.upper if kind == "upper" else text_module.lower
    chars = [chr(c) for c in _all_code_points()]
    got = pl.select(tf.pl_case(pl.lit(pl.Series(chars)), kind)).to_series().to_list()
    bad = [hex(ord(c)) for c, g in zip(chars, got) if g != spec.impl(c)]
    assert not bad, bad[:20]
    sentence = "".join(chars[:3000]) + "ΣΟΦΟΣ ß İ ǅ"  # context never changes a mapping
    assert pl.select(tf.pl_case(pl.lit(sentence), kind)).item() == spec.impl(sentence)


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_duckdb_case_mapping_on_cased_and_special_characters(kind: str) -> None:
    """Every character a table maps or is mapped to, every special-cased one and the first
    12,288 code points; both paths (the engine's own and TRANSLATE) are taken."""
    spec = text_module.upper if kind == "upper" else text_module.lower
    src, dst = tf.case_table("upper")
    lsrc, ldst = tf.case_table("lower")
    special = {ch for ch in map(chr, range(1, tf._CASED_LIMIT))
               if not 0xD800 <= ord(ch) <= 0xDFFF
               and (len(ch.upper()) > 1 or len(ch.lower()) > 1)}
    chars = sorted(set(src) | set(dst) | set(lsrc) | set(ldst) | special
                   | {chr(c) for c in range(1, 0x3000)})
    texts = chars + ["".join(chars[i:i + 40]) for i in range(0, len(chars), 40)]
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT unnest(?) AS s", [texts])
    expr = tf.sql_case(tf.exp.column("s"), kind).sql("duckdb")
    got = dict(con.execute(f"SELECT s, {expr} FROM t").fetchall())
    bad = [repr(t[:10]) for t in texts if got[t] != spec.impl(t)]
    assert not bad, bad[:20]


def _form_call(expr: str, schema: dict[str, str], backend: str) -> FormCall:
    """The FormCall a compiler gives the form of ``expr``'s outermost call."""
    return FormCall(formulane.compile(expr, schema).root, backend)


def test_code_points_and_characters_exhaustively() -> None:
    cps = _all_code_points()
    unichar = {b: _form_call("UNICHAR(n)", {"n": "Number"}, b) for b in ("polars", "sql")}
    unicode = {b: _form_call("UNICODE(s)", {"s": "Text"}, b) for b in ("polars", "sql")}
    with pl.Config():
        frame = pl.DataFrame({"n": [float(c) for c in cps]})
        got = frame.select(tf.polars_unichar(unichar["polars"], pl.col("n"))[0].alias("c"))[
            "c"].to_list()
    want = [text_module.unichar.impl(c) for c in cps]
    assert got == want
    back = pl.DataFrame({"s": [chr(c) for c in cps]}).select(
        tf.polars_unicode(unicode["polars"], pl.col("s"))[0].alias("u"))["u"].to_list()
    assert back == [float(c) for c in cps]
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT unnest(?) AS n", [cps])
    expr = tf.sql_unichar(unichar["sql"], tf.exp.column("n"))[0].sql("duckdb")
    code = tf.sql_unicode(unicode["sql"], tf.exp.func("CHR", tf.exp.column("n")))[0].sql(
        "duckdb")
    rows = con.execute(f"SELECT n, {expr}, {code} FROM t").fetchall()
    bad = [n for n, c, u in rows if c != want[cps.index(n)] or u != n] if False else \
        [n for n, c, u in rows if c != unicodedata.normalize("NFC", chr(n)) or u != n]
    assert not bad, bad[:20]


def test_proper_on_mixed_scripts() -> None:
    rng = random.Random(7)
    alphabet = ("aB zÉß-2'İıǅǆΣσς中ǰŉ\u0301😀_.ΟΔΟΣ" + "".join(map(chr, range(0x370, 0x400))))
    rows = [{"a": unicodedata.normalize("NFC", "".join(rng.choice(alphabet)
                                                       for _ in range(rng.randint(0, 25))))}
            for _ in range(400)]
    schema = {"a": "Text"}
    expected = _scalar("PROPER(a)", schema, rows)
    for backend in ("polars-float", "duckdb-double"):
        _agree(f"PROPER(a) on {backend}", rows, expected,
               _run(backend, "PROPER(a)", schema, rows))


def test_text_rounding_on_random_numbers() -> None:
    """Seeded samples: short decimals (ties everywhere), full 17-digit floats and extremes,
    through every reproduced format; the three engines agree on every one."""
    rng = random.Random(20240229)
    short = [round(rng.uniform(-1000, 1000), rng.randint(0, 4)) for _ in range(300)]
    ties = [(rng.randint(-99999, 99999) + 0.5) / 10 ** rng.randint(0, 6) for _ in range(300)]
    full = [rng.uniform(-1, 1) * 10 ** rng.randint(-12, 18) for _ in range(300)]
    huge = [rng.uniform(1, 9.99) * 10 ** rng.randint(19, 307) for _ in range(40)]
    rows = [{"x": v} for v in short + ties + full + huge + [0.0, -0.0, 1e-300, 5e-324]]
    schema = {"x": "Number"}
    for fmt in ("0", "0.00", "#,##0", "#,##0.00", "0.0%", "0%", "0.000000000", "#,##0.0"):
        formula = f'TEXT(x, "{fmt}")'
        expected = _scalar(formula, schema, rows)
        for backend in ("polars-float", "duckdb-double"):
            _agree(f"{formula} ({backend})", rows, expected, _run(backend, formula, schema, rows))
    decimal_rows = E.rows_for("decimal", rows)
    for fmt in ("0.00", "#,##0.0%", "0"):
        formula = f'TEXT(x, "{fmt}")'
        expected = _scalar(formula, schema, decimal_rows)
        for backend in ("polars-decimal", "duckdb-decimal"):
            _agree(f"{formula} ({backend})", decimal_rows, expected,
                   _run(backend, formula, schema, decimal_rows))


def test_search_on_random_patterns() -> None:
    rng = random.Random(11)
    texts = ["".join(rng.choice("abAB?*~ß\n-") for _ in range(rng.randint(0, 12)))
             for _ in range(150)]
    rows = [{"a": t, "n": float(rng.randint(0, 4))} for t in texts]
    schema = {"a": "Text", "n": "Number"}
    for _ in range(25):
        pattern = "".join(rng.choice(["a", "B", "?", "*", "~*", "~?", "~", "ß", "-"])
                          for _ in range(rng.randint(1, 4)))
        formula = f'SEARCH("{pattern}", a, n)'
        expected = _scalar(formula, schema, rows)
        for backend in ("polars-float", "duckdb-double"):
            _agree(f"{formula} ({backend})", rows, expected, _run(backend, formula, schema, rows))


# ------------------------------------------------------------------------------- decisions


def _family_specs() -> list[Any]:
    return E.family_specs(REGISTRY, ("text",))


def test_every_text_function_has_an_explicit_decision() -> None:
    specs = _family_specs()
    assert len(specs) == 37
    for spec in specs:
        for decision in E.decisions(spec):
            assert decision is not UNDECIDED, spec.name
            assert isinstance(decision, Refuse) or callable(decision), spec.name
            if isinstance(decision, Refuse):
                assert decision.reason, spec.name
            else:
                assert isinstance(decision, Form), decision
                assert hasattr(decision.family(), decision.attr), decision


def test_cases_cover_every_function() -> None:
    text = " ".join(c[0] for c in CASES)
    missing = [spec.name for spec in _family_specs() if f"{spec.name}(" not in text]
    assert not missing, f"functions without a backend case: {missing}"


def test_declaring_the_family_imports_no_polars() -> None:
    import subprocess
    import sys

    code = ("import sys, formulane.functions.text; "
            "assert 'polars' not in sys.modules, 'polars imported'; "
            "assert 'formulane.columnar.forms.text' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
