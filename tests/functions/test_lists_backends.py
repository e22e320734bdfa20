"""The lists, lookup and statistics families on three engines: scalar, polars and DuckDB SQL.

Each table below is a schema, rows (with blanks, zeros, negatives, empty lists and texts, month
ends, huge and tiny numbers...) and formulas. Every formula runs three ways: `Program.evaluate`
row by row, polars through `formulane.apply` on a frame built from the rows, and DuckDB on the
SQL of `formulane.sql_select` over a table built from the same rows (DOUBLE columns with
``numbers="float"``; tables marked ``decimal`` use polars Decimal and DuckDB DECIMAL(38, 18)).
Values must be equal and error codes identical, row by row (a row with an error has no value);
numbers, also inside lists, compare within 1e-9 relative, the float policy of the columnar
backends; polars DateTime results must also show the scalar's wall clock. A formula marked
``refuse={"polars": "..."}`` must be refused by that backend at compile time with a reason
containing the text, and still agree on the others. The machinery is the shared `_engines`. The last tests check that every
signature of these families has an explicit polars and SQL decision (a form or a `Refuse`),
and that every function appears in a table.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest
from functions import _engines as E

import formulane
from formulane.columnar.forms import declared_form
from formulane.errors import Unsupported
from formulane.functions import _arrays, lists, lookup, statistics
from formulane.functions.registry import default_registry
from formulane.functions.spec import UNDECIDED, FunctionSpec, Refuse

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

STATS = default_registry().with_packs("statistics")
UTC = dt.timezone.utc
D = dt.date


@dataclass
class F:
    """A formula, and the backends expected to refuse it (backend -> part of the reason)."""

    source: str
    refuse: dict[str, str] = field(default_factory=dict)


@dataclass
class Table:
    name: str
    schema: dict[str, str]
    rows: list[tuple]
    formulas: list[F | str]
    stats: bool = False  # needs the statistics pack
    decimal: bool = False  # Number columns are decimals (polars Decimal, SQL DECIMAL(38, 18))
    profile: str = "strict"


# -------------------------------------------------------------------------------- engines


def _registry(table: Table) -> Any:
    return STATS if table.stats else default_registry()


def check(table: Table, formula: F | str) -> None:
    f = formula if isinstance(formula, F) else F(formula)
    mode = "decimal" if table.decimal else "float"
    rows = [dict(zip(table.schema, row)) for row in table.rows]
    options = {"profile": table.profile, "registry": _registry(table)}
    expected = E.run_scalar(f.source, table.schema, rows, **options)
    layout_rows = E.rows_for(mode, rows)
    assert len(layout_rows) == len(rows), "every row of the decimal tables fits Decimal(38, 18)"
    for engine in ("polars", "duckdb"):
        backend = E.BACKEND[engine]
        if backend in f.refuse:
            E.assert_refused(backend, f.refuse[backend], E.run, f"{engine}-{mode}", f.source,
                             table.schema, layout_rows, **options)
            continue
        got = E.run(f"{engine}-{mode}", f.source, table.schema, layout_rows, **options)
        # Items of a list are numbers of the float policy like any other (SEQUENCE(2.9, 1, o, n)
        # adds in float: -1.2 + 2.7 is 1.5000000000000002), so they compare within 1e-9 too.
        E.assert_agree(f"{backend}: {f.source}", table.rows, expected, got,
                       wall_clock=backend == "polars", list_tolerance=True)


# ---------------------------------------------------------------------------------- tables

NUMS = {"xs": "List<Number?>", "a": "Number?", "k": "Number"}
NUM_ROWS = [
    ([1.0, 2.0, None, 4.0], 1.0, 2.0),
    ([3.0], None, 1.0),
    ([], 2.0, 0.0),
    ([-5.0, 0.0, 2.5, -5.0], -1.5, -1.0),
    ([None, None], 0.0, 1.5),
    ([0.1, 0.1, 0.1], 0.1, 3.0),
    ([1e200, 1e200], 1e200, 2.9),
    ([7.0, 7.0, 3.0, 9.0, 3.0, 7.0], 3.0, 4.0),
]

TABLES: list[Table] = [
    Table("aggregates", {"xs": "List<Number?>?", "a": "Number?", "b": "Number"}, [
        ([1.0, 2.0, None, 4.0], 1.0, 2.0),
        ([3.0], None, -1.0),
        (None, 2.0, 0.0),
        ([], 3.0, 0.5),
        ([-5.0, 0.0, 2.5], -1.5, 1e300),
        ([None, None], 0.0, 1.0),
        ([1e308 / 2, 1e308 / 2, 1e308 / 2], 1.0, 2.0),
        ([1e200, 1e200], 1e200, 1.0),
        ([0.1, 0.2], 0.3, -0.3),
    ], [
        "SUM(xs)", "SUM(a, xs, b)", "SUM(a, b, 10)", "SUM(xs, xs)", "SUM(a)",
        "PRODUCT(xs)", "PRODUCT(a, xs)", "PRODUCT(xs, b)",
        "AVERAGE(xs)", "AVERAGE(xs, a)", "AVERAGE(a)",
        "MIN(xs)", "MIN(xs, a)", "MIN(a)", "MAX(xs)", "MAX(b, xs)", "MAX(a, b)",
        "COUNT(xs)", "COUNT(xs, a, b)", "COUNTA(xs, a)", "COUNTA(a, b, xs)",
        "MEDIAN(xs)", "MEDIAN(xs, a, b)",
        "STDEV.S(xs)", "STDEV.P(xs)", "VAR.S(xs)", "VAR.P(xs, a)", "STDEV.S(a, b)",
        "VAR.P(a)",
    ]),
    Table("order statistics", NUMS, NUM_ROWS, [
        "LARGE(xs, k)", "SMALL(xs, k)", "LARGE(xs, 1)", "SMALL(xs, 2.5)",
        "PERCENTILE.INC(xs, 0.3)", "PERCENTILE.INC(xs, k / 4)", "PERCENTILE.INC(xs, 1)",
        "PERCENTILE.INC(xs, 0)", "SUMPRODUCT(xs, xs)", "SUMPRODUCT(xs)",
        "SUMPRODUCT(xs, [1, 2, 3, 4])", "COUNTBLANK(xs)",
    ]),
]

CRIT = {"xs": "List<Number?>", "ys": "List<Number?>", "ns": "List<Number>", "t": "List<Text?>",
        "ds": "List<Date?>", "bs": "List<Boolean?>", "a": "Number?", "d": "Date"}
CRIT_ROWS = [
    ([1.0, 5.0, 10.0, 15.0], [10.0, 20.0, 30.0, 40.0], [1.0, 5.0, 10.0, 15.0],
     ["apple", "Avocado", "kiwi", None], [D(2024, 1, 31), D(2024, 2, 29), None, D(2023, 1, 1)],
     [True, False, None, True], 5.0, D(2024, 2, 29)),
    ([], [], [], [], [], [], None, D(2024, 1, 31)),
    ([None, 2.0, 2.0, -3.0], [1.0, None, 3.0, 4.0], [0.0, 2.0, 2.0, -3.0],
     ["", "a*b", "A?c", "x~y"], [D(2023, 12, 31), None, None, None], [False, None, None, None],
     2.0, D(2023, 12, 31)),
    ([0.0, 0.5, 10.0], [1.0, 2.0], [0.0, 0.5, 10.0], ["b", "B", "bb"], [], [True, True],
     0.0, D(2000, 2, 29)),
    ([1e200, 1e200, -1.0], [1e308 / 2, 1e308 / 2, 1e308 / 2], [-1.0, 1.0, 3.0],
     ["Ab", "ab", "ba"], [D(2024, 3, 31), D(2024, 4, 30), D(2024, 2, 29)], [None, None, None],
     -3.0, D(2024, 4, 30)),
]
TEXT_CRITERIA_REFUSED = "numeric criteria over text items"

TABLES += [
    Table("COUNTIF family", CRIT, CRIT_ROWS, [
        'COUNTIF(xs, ">=10")', 'COUNTIF(xs, "<>1")', 'COUNTIF(xs, "")', 'COUNTIF(xs, "=")',
        'COUNTIF(xs, "<>")', "COUNTIF(xs, 2)", "COUNTIF(xs, a)", "COUNTIF(ns, x => x > 3)",
        'COUNTIF(xs, "<0")', 'COUNTIF(xs, "=0.5")', 'COUNTIF(xs, ">abc")',
        'COUNTIF(t, "a*")', 'COUNTIF(t, "A?C")', 'COUNTIF(t, "*~**")', 'COUNTIF(t, "<b")',
        'COUNTIF(t, "")', 'COUNTIF(t, "<>a*")', 'COUNTIF(t, "=")', 'COUNTIF(t, "*")',
        'COUNTIF(t, "?")', 'COUNTIF(t, "x~~y")', 'COUNTIF(t, ">=B")', 'COUNTIF(t, "TRUE")',
        F('COUNTIF(t, "5")', {"polars": TEXT_CRITERIA_REFUSED, "sql": TEXT_CRITERIA_REFUSED}),
        'COUNTIF(xs, ">" & "5")', 'SUMIF(t, "<>" & "a*", ys)',
        F('COUNTIF(ds, "<" & d)', {"polars": "not a literal", "sql": "not a literal"}),
        'COUNTIF(ds, ">=2024-01-31")', 'COUNTIF(ds, "2024-02-29")', "COUNTIF(ds, d)",
        'COUNTIF(ds, "<45000")', 'COUNTIF(ds, "")',
        "COUNTIF(bs, TRUE)", 'COUNTIF(bs, "true")', 'COUNTIF(bs, ">false")',
        'COUNTIF(bs, "<>TRUE")', 'COUNTIF(bs, "=1")',
        'SUMIF(xs, ">2")', 'SUMIF(xs, ">2", ys)', 'SUMIF(t, "a*", ys)',
        "SUMIF(ns, x => x <> 2)", "SUMIF(ns, x => x <> 2, ys)", 'SUMIF(t, "b")',
        "SUMIF(xs, a, ys)", 'SUMIF(ds, ">2024-01-01", ys)',
        'AVERAGEIF(xs, ">0")', 'AVERAGEIF(xs, ">0", ys)', 'AVERAGEIF(xs, ">100")',
        'AVERAGEIF(t, "<>kiwi", ys)', "AVERAGEIF(ns, x => x >= 0, ys)",
        'COUNTIFS(xs, ">1", ys, "<35")', 'COUNTIFS(xs, ">0")', 'COUNTIFS(t, "a*", xs, ">=1")',
        "COUNTIFS(xs, a)", 'COUNTIFS(ds, "<>", bs, TRUE)',
        'SUMIFS(ys, xs, ">1")', 'SUMIFS(ys, xs, ">1", t, "<>kiwi")', 'SUMIFS(xs, ds, "")',
        'AVERAGEIFS(ys, xs, ">=0")', 'AVERAGEIFS(ys, t, "zz")', 'MAXIFS(ys, xs, ">0")',
        'MINIFS(ys, t, "*")', 'MAXIFS(xs, ns, "<2")', 'MINIFS(xs, xs, "<>")',
        F('COUNTIFS(xs, [1, 2])', {"polars": "list or record", "sql": "list or record"}),
    ]),
]

ARR = {"xs": "List<Number?>", "ns": "List<Number>", "ks": "List<Number?>", "t": "List<Text?>",
       "ts": "List<Text>", "bs": "List<Boolean?>", "ds": "List<Date?>",
       "g": "List<List<Number?>?>", "o": "Number", "n": "Number", "b": "Boolean"}
ARR_ROWS = [
    ([3.0, 1.0, None, 3.0, 2.0], [3.0, 1.0, 2.0], [2.0, None, 1.0, 1.0, 0.0],
     ["b", "A", None, "a", "B"], ["bb", "a", "ccc"], [True, None, False, True, True],
     [D(2024, 2, 29), None, D(2023, 12, 31), D(2024, 2, 29)], [[1.0, 2.0], None, [], [None]],
     1.0, 2.0, True),
    ([], [], [], [], [], [], [], [], -1.0, -1.0, False),
    ([None, 0.0, -2.5], [0.0, -2.5, 7.0], [1.0, 1.0, 1.0], ["", "x", "X"], ["", "x", "X"],
     [False, False, True], [None], [None, [5.0]], 1.9, 0.0, True),
    ([5.0], [5.0], [None], [None], ["z"], [None], [D(2000, 1, 31)], [[3.0], [1.0, 2.0]],
     -1.2, 2.7, False),
    ([4.0, 3.0, 2.0, 1.0], [4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0], ["d", "c", "b", "a"],
     ["d", "C", "b", "A"], [True, True, True, True], [D(2024, 1, 31)] * 4, [[]], 0.0, -2.5,
     True),
    ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0], ["a", "b", "c"], ["a", "b", "c"],
     [True, False], [], [[1.0]], 2.0, 1e300, False),
]
SEVERAL_KEYS = "several (keys, order) pairs"
GRID = "list of lists"  # 2-D arrays (ROWS, COLUMNS, TRANSPOSE, VLOOKUP, HLOOKUP)

TABLES += [
    Table("shaping", ARR, ARR_ROWS, [
        "UNIQUE(xs)", "UNIQUE(t)", "UNIQUE(xs, FALSE, TRUE)", "UNIQUE(t, FALSE, TRUE)",
        "UNIQUE(ds)", "UNIQUE(bs)", "UNIQUE(ks, FALSE, b)", "UNIQUE(ts, TRUE, b)",
        "SORT(xs)", "SORT(xs, -1)", "SORT(t)", "SORT(t, -1)", "SORT(xs, o)", "SORT(t, o)",
        "SORT(xs, 1, -1)", "SORT(xs, 2, 1)", "SORT(xs, 0)", "SORT(ds, -1)", "SORT(bs)",
        "SORT(ts, n, o)", "SORT(ns, 1, 1, TRUE)",
        "SORTBY(ts, s => s)", "SORTBY(ns, x => -x)", "SORTBY(ns, x => x, -1)",
        "SORTBY(t, ks)", "SORTBY(t, ks, -1)", "SORTBY(ns, ts, o)", "SORTBY(xs, t, -1)",
        "SORTBY(ts, s => s = \"x\", o)",
        F("SORTBY(xs, ks, 1, ns, -1)", {"polars": SEVERAL_KEYS, "sql": SEVERAL_KEYS}),
        "FILTER(ns, x => x > 2)", "FILTER(ns, x => x > 100, 0)",
        'FILTER(ns, x => x > 100, "none")', "FILTER(t, bs)", "FILTER(xs, ks)",
        "FILTER(xs, ks, 7)", 'FILTER(ts, s => s > "a", "-")', "FILTER(ns, x => TRUE)",
        "FILTER(ds, bs)",
        F("FILTER(ns, x => x <> n, n)", {"polars": "reads other columns"}),
        F("MAP(ns, x => x * 2 + 1)", {"polars": "may error"}),
        "MAP(ns, x => -x)", "MAP(ns, x => x > 1)", 'MAP(ts, s => s & "!")',
        F("ROWS(xs)", {"polars": GRID, "sql": GRID}),
        F("COLUMNS(xs)", {"polars": GRID, "sql": GRID}),
        F("TRANSPOSE(xs)", {"polars": GRID, "sql": GRID}),
        "MAP(ns, x => 7)", "MAP(ns, x => IF(x > 1, 1, 0))",
        F("MAP(ns, ns, LAMBDA(a, b, a > b))", {"polars": "two-parameter lambda"}),
        F("MAP(ns, ts, LAMBDA(a, b, b & \"-\"))", {"polars": "two-parameter lambda"}),
        F("REDUCE(0, ns, LAMBDA(acc, x, acc + x))", {"polars": "a fold"}),
        F('REDUCE("", ts, LAMBDA(acc, s, acc & s))', {"polars": "a fold"}),
        F("REDUCE(n, ns, LAMBDA(acc, x, MAX(acc, x)))", {"polars": "a fold"}),
        "SEQUENCE(4)", "SEQUENCE(2, 3, n, 0.5)", "SEQUENCE(0)", "SEQUENCE(-1)",
        "SEQUENCE(2.9, 1, o, n)", "SEQUENCE(3, 1, n, 1E307)", "SEQUENCE(1, 0)",
        F("SEQUENCE(n)", {"polars": "literal number", "sql": "literal number"}),
        F("SEQUENCE(1000, 1000)", {"polars": "list limit", "sql": "list limit"}),
        "TAKE(xs, 2)", "TAKE(xs, -1)", "TAKE(xs, n)", "TAKE(xs, 0)", "TAKE(t, o)",
        "DROP(xs, 1)", "DROP(xs, -2)", "DROP(xs, n)", "DROP(xs, 100)", "DROP(t, o)",
        "FLATTEN(g)", "FLATTEN(xs)", "FLATTEN([ns, ks])",
    ]),
]

LOOK = {"v": "Number", "keys": "List<Number?>", "res": "List<Text?>", "tv": "Text",
        "tk": "List<Text?>", "nf": "Text?", "r": "Number", "col": "Number",
        "grid": "List<List<Number?>>", "ns": "List<Number>", "bs": "List<Boolean?>",
        "dk": "List<Date?>", "dv": "Date"}
LOOK_ROWS = [
    (20.0, [10.0, 20.0, 30.0, 20.0], ["a", "b", "c", "d"], "B", ["a", "b", "B", None], "none",
     2.0, 1.0, [[1.0, 2.0], [3.0, 4.0, 5.0]], [3.0, 8.0, 12.0], [False, True],
     [D(2024, 1, 31), D(2024, 2, 29), None], D(2024, 2, 1)),
    (25.0, [10.0, 20.0, 30.0], ["lo", "mid", "hi"], "z", ["apple", "banana"], None, 0.0, 0.0,
     [[1.0]], [1.0], [None], [], D(2024, 2, 29)),
    (-1.0, [], [], "", [], "", 3.0, 2.0, [], [], [], [D(2023, 12, 31)], D(2023, 12, 31)),
    (5.0, [None, 5.0, 5.0], ["x", "y"], "a*", ["A*x", "a*", "b", "A"], "n/a", -1.0, 2.0,
     [[None, 7.0]], [0.0, -2.0], [False, False], [None, D(2000, 2, 29)], D(2000, 3, 1)),
    (100.0, [30.0, 20.0, 10.0], ["p", "q", "r"], "BANANA", ["banana", "Banana"], None, 4.0,
     3.0, [[1.0], [2.0], [3.0], [4.0, 4.5, 9.0]], [9.0, 10.0], [True, True],
     [D(2024, 3, 31), D(2024, 1, 1)], D(2024, 12, 31)),
    (20.0, [20.0], [None], "b", ["", "b"], None, 1.9, -1.0, [[2.0]], [6.0, 7.0], [],
     [D(2024, 2, 1)], D(2024, 2, 1)),
]
BINARY = "binary search"
NOT_LITERAL = "not a literal"

TABLES += [
    Table("lookup", LOOK, LOOK_ROWS, [
        "XLOOKUP(v, keys, res)", "XLOOKUP(v, keys, res, nf)", 'XLOOKUP(v, keys, res, "none", -1)',
        'XLOOKUP(v, keys, res, "none", 1)', 'XLOOKUP(v, keys, res, "", 0, -1)',
        'XLOOKUP(v, keys, res, "", -1, -1)', 'XLOOKUP(v, keys, res, "", 1, -1)',
        "XLOOKUP(tv, tk, tk)", 'XLOOKUP("b*", tk, tk, "none", 2)',
        'XLOOKUP("B", tk, tk, "-", 0, -1)', 'XLOOKUP(v, keys, res, "", 4)',
        'XLOOKUP(v, keys, res, "", 0, 3)', 'XLOOKUP(tv, tk, tk, "none", 1)',
        'XLOOKUP(tv, tk, tk, "none", -1)', "XLOOKUP(dv, dk, dk, dv, -1)",
        'XLOOKUP("?", tk, tk, nf, 2, -1)', 'XLOOKUP("*", tk, tk, nf, 2, 2)',
        'XLOOKUP(v, keys, keys, v, 1.5)',
        F('XLOOKUP(v, keys, res, "", 0, 2)', {"polars": BINARY, "sql": BINARY}),
        F('XLOOKUP(v, keys, res, "", 1, -2)', {"polars": BINARY, "sql": BINARY}),
        'XLOOKUP(tv, tk, tk, "", 2)', 'XLOOKUP(tv, tk, tk, "", 2, -1)', "MATCH(tv, tk, 0)",
        F("XLOOKUP(v, keys, res, nf, r)", {"polars": "literal number", "sql": "literal number"}),
        "XMATCH(v, keys)", "XMATCH(v, keys, 1)", "XMATCH(v, keys, -1, -1)", "XMATCH(tv, tk)",
        'XMATCH("?", tk, 2)', "XMATCH(v, keys, 5)", "XMATCH(TRUE, bs)", "XMATCH(dv, dk, 1)",
        'XMATCH("~*", tk, 2)', 'XMATCH("a~*", tk, 2, -1)',
        F("XMATCH(v, keys, 0, -2)", {"polars": BINARY, "sql": BINARY}),
        "MATCH(v, keys, 0)", "MATCH(tv, tk, 0)", 'MATCH("a~*", tk, 0)', 'MATCH("b?", tk, 0)',
        "MATCH(v, keys, 0.5)", "MATCH(dv, dk, 0)",
        F("VLOOKUP(v, [[1, 2], [3, 4]], 2, FALSE)", {"polars": GRID, "sql": GRID}),
        F("HLOOKUP(v, [[1, 3], [2, 4]], 2, FALSE)", {"polars": GRID, "sql": GRID}),
        F("MATCH(v, keys)", {"polars": "binary search", "sql": "binary search"}),
        F("MATCH(v, keys, -1)", {"polars": "binary search", "sql": "binary search"}),
        "INDEX(keys, r)", "INDEX(keys, r, col)", "INDEX(grid, r, col)", "INDEX(res, 2)",
        "INDEX(keys, 1, r)", "INDEX(grid, r)", "INDEX(tk, col, 1)", "INDEX(ns, -r)",
        "LOOKUP(ns, x => x > 5)", "LOOKUP(ns, x => x > 5, x => x > 10)",
        "LOOKUP(ns, x => x > 5, x => -x)", "LOOKUP(ns, x => TRUE)",
        F("LOOKUP(v, keys)", {"polars": "binary search", "sql": "binary search"}),
        F("LOOKUP(v, keys, res)", {"polars": "binary search", "sql": "binary search"}),
        "ANY(ns, x => x > 8)", "ALL(ns, x => x > 0)", "ANY(bs)", "ALL(bs)",
        "ANY(ns, x => TRUE)", "ALL(ns, x => FALSE)",
        F("ANY(ns, x => x = v)", {"polars": "reads other columns"}),
    ]),
]

STAT = {"xs": "List<Number?>", "ys": "List<Number?>", "a": "Number", "k": "Number",
        "o": "Number"}
STAT_ROWS = [
    ([1.0, 2.0, 2.0, 3.0, 3.0], [2.0, 4.0, 4.0, 6.0, 7.0], 2.0, 1.0, 0.0),
    ([1.0, 3.0, 9.0], [3.0, 2.0, 1.0], 3.0, 4.0, 1.0),
    ([], [], 0.0, 0.0, -1.0),
    ([5.0, None, 5.0], [1.0, 2.0, None], 5.0, 2.0, 0.0),
    ([-1.0, 2.0], [1.0], -1.0, 3.9, 2.0),
    ([1e200, -1e200, 3e200], [1e-200, 2e-200, 5e-200], 1e200, 5.0, 0.0),
    ([0.1, 0.1, 0.1], [0.2, 0.4, 0.6], 0.1, -1.0, 1.0),
    ([4.0, 4.0, 1.5, None], [1.0, 2.0, 2.5, 3.0], 4.0, 3.0, -0.5),
    ([2.0, 8.0, 0.5, 7.25], [-3.0, 0.0, 1.5, 2.0], 7.25, 2.0, 1.0),
]
NORM = {"x": "Number", "m": "Number", "sd": "Number", "cum": "Boolean"}
NORM_ROWS = [(z, 0.0, 1.0, i % 2 == 0) for i, z in enumerate([
    -40.0, -37.5, -27.0, -8.0, -3.0, -2.8284271247461903, -2.0, -1.97, -0.5, 0.0, 0.5, 1.999,
    2.0, 2.8284271247461903, 5.0, 9.0, 38.0, 1e300, -1e300])] + [
    (42.0, 40.0, 1.5, True), (42.0, 40.0, 1.5, False), (1.0, 0.0, 0.0, True),
    (1.0, 2.0, -1.0, False), (-5.0, 5.0, 1e-300, False), (3.0, 1.0, 1e-200, True),
    (0.1, 0.2, 0.3, False), (1e250, -1e250, 1e-100, True)]

TABLES += [
    Table("statistics", STAT, STAT_ROWS, [
        "MODE.SNGL(xs)", "MODE.SNGL(a, xs)", "MODE.SNGL(ys, xs)", "GEOMEAN(xs)",
        "GEOMEAN(a, xs)", "HARMEAN(xs)", "HARMEAN(ys)", "AVEDEV(xs)", "AVEDEV(a, ys)",
        "DEVSQ(xs)", "DEVSQ(a)", "DEVSQ(xs, ys)", "QUARTILE.INC(xs, k)", "QUARTILE.INC(xs, 1)",
        "QUARTILE.INC(ys, 4)", "RANK.EQ(a, xs)", "RANK.EQ(a, xs, o)", "RANK.AVG(a, xs)",
        "RANK.AVG(a, xs, 1)", "RANK.AVG(k, ys, o)", "CORREL(xs, ys)", "RSQ(ys, xs)",
        "COVARIANCE.P(xs, ys)", "COVARIANCE.S(xs, ys)", "SLOPE(ys, xs)", "INTERCEPT(ys, xs)",
        "SLOPE(xs, ys)", "INTERCEPT(xs, ys)", "CORREL(ys, ys)",
    ], stats=True),
    Table("normal distribution", NORM, NORM_ROWS, [
        "NORM.DIST(x, m, sd, cum)", "NORM.DIST(x, m, sd, TRUE)", "NORM.DIST(x, m, sd, FALSE)",
        "NORM.S.DIST(x, cum)", "NORM.S.DIST(x, TRUE)", "NORM.S.DIST(x, FALSE)",
        "NORM.S.DIST(x / 7, TRUE)",
    ], stats=True),
]

DEC = {"xs": "List<Number?>", "ys": "List<Number?>", "t": "List<Text?>", "a": "Number",
       "k": "Number"}
Q = Decimal
DEC_ROWS = [
    ([Q("0.1"), Q("0.2"), None, Q("0.3")], [Q("1.5"), Q("2.25"), Q("3"), Q("-4")],
     ["a", "b", "a", None], Q("0.1"), Q("2")),
    ([], [], [], Q("0"), Q("1")),
    ([Q("123456789.123456789"), Q("-0.000000001"), Q("1")], [Q("1"), Q("2"), Q("3")],
     ["x", "y", "z"], Q("1"), Q("-1")),
    ([Q("7"), Q("7"), Q("3.5")], [Q("0.5"), None], ["q", "q"], Q("7"), Q("3.9")),
    ([None], [Q("99999999999999999")], [None], Q("-2.5"), Q("0")),
]

TABLES += [
    Table("decimal columns", DEC, DEC_ROWS, [
        "SUM(xs)", "SUM(a, xs, ys)", "PRODUCT(xs)", "AVERAGE(xs, a)", "MIN(xs)", "MAX(xs, ys)",
        "COUNT(xs, a)", "COUNTA(t, a)", "MEDIAN(ys)", "LARGE(ys, k)", "SMALL(xs, 1)",
        "PERCENTILE.INC(ys, 0.25)", "SUMPRODUCT(xs, ys)", 'COUNTIF(xs, ">0.15")',
        "COUNTIF(xs, a)", 'SUMIF(t, "a", ys)', 'AVERAGEIF(ys, ">=1.5")',
        'SUMIFS(ys, xs, "<>0.2", t, "<>b")', 'MAXIFS(ys, t, "?")', "XLOOKUP(a, xs, ys, -1)",
        "XMATCH(a, xs, 1)", "INDEX(ys, k)", "SORT(ys, -1)", "UNIQUE(xs)", "TAKE(ys, k)",
        "SEQUENCE(3, 1, a, 0.1)", "FILTER(ys, xs)", "STDEV.S(ys)", "VAR.P(xs)",
        "COUNTBLANK(xs)",
    ], decimal=True),
    Table("decimal statistics", DEC, DEC_ROWS, [
        "RANK.EQ(a, xs)", "RANK.AVG(a, ys, 1)", "MODE.SNGL(xs)", "GEOMEAN(ys)", "DEVSQ(xs)",
        "QUARTILE.INC(xs, 3)", "CORREL(xs, ys)", "SLOPE(ys, xs)", "NORM.S.DIST(a, TRUE)",
    ], stats=True, decimal=True),
]

TD = dt.timedelta
TIMES = {"ds": "List<Date?>", "dts": "List<DateTime?>", "durs": "List<Duration?>", "d": "Date",
         "when": "DateTime"}
TIME_ROWS = [
    ([D(2024, 2, 29), None, D(2023, 12, 31)],
     [dt.datetime(2024, 1, 31, 23, 59, tzinfo=UTC), dt.datetime(2024, 1, 31, 0, 0, tzinfo=UTC)],
     [TD(days=1), TD(hours=-3), None], D(2024, 1, 31), dt.datetime(2024, 2, 1, tzinfo=UTC)),
    ([], [], [], D(2000, 2, 29), dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC)),
    ([D(1999, 1, 1)], [None], [TD(seconds=1), TD(days=30), TD(0)], D(1999, 1, 1),
     dt.datetime(2024, 12, 31, 12, tzinfo=UTC)),
]
DURATION_ORDER = "Duration ordering"

TABLES += [
    Table("dates and times", TIMES, TIME_ROWS, [
        "MIN(ds)", "MAX(ds, d)", "MIN(dts)", "MAX(dts, when)", "COUNT(ds, dts, durs)",
        "COUNTA(ds, d, durs)", "SORT(dts, -1)", "UNIQUE(dts)", "XLOOKUP(d, ds, ds, d, 1)",
        "XMATCH(d, ds, -1)", "XMATCH(when, dts)", 'COUNTIF(ds, "<=2024-01-31")',
        "COUNTBLANK(durs)", "TAKE(durs, -1)",
        F("MIN(durs)", {"sql": DURATION_ORDER}), F("MAX(durs)", {"sql": DURATION_ORDER}),
        F("SORT(durs)", {"sql": DURATION_ORDER}),
        F("SUM(durs)", {"polars": "Duration totals", "sql": "Duration totals"}),
        F('COUNTIF(dts, ">1")', {"polars": "numeric criteria over DateTime",
                                 "sql": "numeric criteria over DateTime"}),
    ]),
]

TABLES += [
    Table("excel profile", CRIT, CRIT_ROWS, [
        "COUNTIF(xs, 5)", "COUNTIF(xs, 2)", "SUMIF(xs, 10, ys)", "COUNTIF(bs, TRUE)",
        "SUM(TRUE, xs)", "AVERAGE(a, xs)", "MAX(a)",
        # A criterion computed from constants is folded to its text (interpreter.fold), so
        # the list is read as numbers again and every engine answers.
        'COUNTIFS(xs, ">=" & 2)',
        "XMATCH(a, xs)", "COUNT(a, TRUE)",
    ], profile="excel"),
]


@pytest.mark.parametrize("table, formula", E.table_cases(TABLES))
def test_three_engines_agree(table: Table, formula: F | str) -> None:
    check(table, formula)


# ---------------------------------------------------------------------------- decisions

FAMILY_MODULES = (lists, _arrays, lookup, statistics)


def _family_specs() -> list[FunctionSpec]:
    seen: dict[int, FunctionSpec] = {}
    for module in FAMILY_MODULES:
        for value in vars(module).values():
            if isinstance(value, FunctionSpec):
                seen[id(value)] = value
    return sorted(seen.values(), key=lambda s: s.name)


def _decided(form: Any) -> bool:
    return isinstance(form, Refuse) or (callable(form) and form is not UNDECIDED)


@pytest.mark.parametrize("spec", _family_specs(), ids=lambda s: s.name)
def test_every_signature_has_an_explicit_decision(spec: FunctionSpec) -> None:
    for sig in spec.signatures:
        for backend in ("polars", "sql"):
            form = declared_form(spec, backend, sig)
            assert _decided(form), f"{spec.name} {sig.describe(spec.name)}: no {backend} decision"
            if isinstance(form, Refuse):
                assert len(form.reason) > 20, "a refusal says why"


def test_every_function_of_the_family_is_in_a_table() -> None:
    import re

    used = set()
    for table in TABLES:
        for formula in table.formulas:
            source = E.source_of(formula)
            used |= {m.upper() for m in re.findall(r"([A-Za-z][A-Za-z0-9.]*)\s*\(", source)}
    # A function every backend refuses (the 2-D shaping functions: a 2-D array is not a
    # column) has no three-engine table; its refusals are in tests/backend_refusals.txt.
    missing = [s.name for s in _family_specs() if s.name not in used
               and not all(isinstance(f, Refuse) for f in E.decisions(s))]
    assert not missing, f"no three-engine case for {missing}"


def test_refusals_are_typed_and_at_compile_time() -> None:
    """A refused call raises `Unsupported` naming the function, the backend and the reason when
    compiling, before any data is read."""
    program = formulane.compile("XMATCH(v, keys, 0, 2)", {"v": "Number", "keys": "List<Number?>"})
    for compile_for, backend in ((program.to_polars, "polars"),
                                 (lambda: program.to_sql("duckdb"), "sql")):
        with pytest.raises(Unsupported) as info:
            compile_for()
        assert info.value.function == "XMATCH" and info.value.backend == backend
        assert "binary search" in info.value.reason


def test_declaring_and_sql_forms_do_not_import_polars() -> None:
    import subprocess
    import sys

    code = ("import sys, formulane; from formulane.columnar.sql.compiler import to_sql; "
            "p = formulane.compile('SUMIF(xs, \">1\") + XMATCH(2, xs, 0)', "
            "{'xs': 'List<Number?>'}); to_sql(p.root); print('polars' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_forms_take_the_call_when_the_backend_passes_it() -> None:
    """`call=node` (what a backend can pass to forms marked ``wants_call``) is used as is; the
    frame lookup is only the fallback."""
    program = formulane.compile("SUMIF(xs, \">1\")", {"xs": "List<Number?>"})
    root = program.root
    form = declared_form(root.spec, "polars", root.sig)
    assert getattr(form, "wants_call", False)
    value, _errors = form(pl.col("xs"), pl.lit(">1"), pl.lit(None), call=root)
    frame = pl.DataFrame({"xs": [[0.5, 2.0, 3.0]]})
    assert frame.select(value.alias("v"))["v"].to_list() == [5.0]
    with pytest.raises(Unsupported, match="needs the call"):
        form(pl.col("xs"), pl.lit(">1"), pl.lit(None))  # no backend frame above: refused
