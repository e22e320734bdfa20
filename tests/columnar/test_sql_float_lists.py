"""SQL decimal mode over lists of numbers: each item read as the number its text shows, sums
that never abort the query (`columnar.forms.lists._base._sql_read`, `_sql_sum`).

A DOUBLE or FLOAT column is read through its shortest decimal text in decimal mode, and a value
DECIMAL(38, 18) cannot hold is that row's #NUM! (docs/columnar.md, "SQL decimal policy");
list items were not: over DuckDB, before,

- SUM(xs) of [0.1, 0.2] DOUBLEs was 0.30000000000000004 (the scalar engine: 0.3), and MAP(xs,
  x => ROUNDDOWN(x, 2)) took a DOUBLE 0.29 for 0.28999... (0.28);
- SUM(xs) of [1e20, 1] DOUBLEs was 1e20, no #NUM!;
- SUM(xs) of [9e19, 9e19] DECIMAL(38, 18)s aborted the whole query (Overflow in HUGEINT
  addition), as did [9e19, 9e19, -9e19], whose sum 9e19 fits.

Every list form is run here over DOUBLE[], FLOAT[], DECIMAL(18, 2)[], DECIMAL(38, 18)[] and
INTEGER[] columns (NULL items, empty and NULL lists, items past 1e20) and compared row by row
with the scalar engine, the items given to it as their text shows (FLOAT items have at most 7
significant digits, so a FLOAT shows each as written). The forms whose answer the scalar
engine computes exactly (sums, extremes, lookups, a MAP of ROUNDDOWN) must give it exactly,
not within the float tolerance. An item past 1e20 (or inf, NaN) makes its row #NUM!, as in
polars decimal mode (tests/columnar/test_decimal_float_lists.py). PostgreSQL and Spark run
the forms their SQL has; the others are refused when compiling (E213), never answered wrong.
"""

from __future__ import annotations

import math
import os
import random
from decimal import Decimal
from typing import Any

import pytest
from functions import _engines as E

import formulane
from formulane.errors import Unsupported
from formulane.values import ErrorValue

duckdb = pytest.importorskip("duckdb")

SCHEMA = {"xs": "List<Number?>?", "ts": "List<Text?>?"}
#: For the forms that refuse a list that may be blank (E205): NULL-list rows left out.
STRICT_SCHEMA = {"xs": "List<Number?>", "ts": "List<Text?>"}
TYPES = ["DOUBLE", "FLOAT", "DECIMAL(18, 2)", "DECIMAL(38, 18)", "INTEGER"]

#: Formulas whose scalar answer the SQL must give exactly (a DECIMAL, not a DOUBLE near it).
EXACT = ["SUM(xs)", 'SUMIF(xs, ">0")', 'SUMIFS(xs, xs, ">0", xs, "<100")', "MIN(xs)",
         "MAX(xs)", "INDEX(xs, 2)", 'MAXIFS(xs, xs, "<5")', "SUM(xs, 0.05)",
         "ROUNDDOWN(SUM(xs), 1)", "INT(SUM(xs) * 10)", "MAP(xs, x => ROUNDDOWN(x ?? 0, 2))",
         "SUM(FILTER(xs, x => (x ?? 0) > 1))", "SORT(xs)", "LARGE(xs, 2)",
         'COUNTIF(xs, ">1.15")', "COUNT(xs)", "COUNTA(xs)", "XMATCH(0.29, xs)",
         "MATCH(1.15, xs, 0)", "SUMIF(xs, x => (x ?? 0) > 1)",
         "COUNTIF(xs, x => ROUND(x ?? 0, 1) = 0.3)", "ANY(xs, x => ROUNDDOWN(x ?? 0, 1) = 0.2)",
         "REDUCE(0, xs, (a, x) => MAX(a, x ?? 0))", "LOOKUP(xs, x => (x ?? 0) > 1)"]
#: Formulas computed in DOUBLE by the SQL (a mean, moments, products, DuckDB's interpolation
#: between two middle DECIMALs): within the tolerance.
FLOATING = ["MEDIAN(xs)", "AVERAGE(xs)", "PRODUCT(xs)", "SUMPRODUCT(xs, xs)", "VAR.S(xs)",
            "VAR.P(xs)",
            "STDEV.P(xs)", 'AVERAGEIF(xs, ">0")', "XLOOKUP(1.15, xs, xs, -1)"]
FORMULAS = EXACT + FLOATING

#: Lists whose items have at most 7 significant digits and 3 places.
BASE: list[list[float | None] | None] = [
    [0.1, 0.2, None], [-855.127, -210.3, 0.0], [2.675, 1.005], [0.29, 1.15, 7.25, -3.5, 4.0],
    [], None, [None, None], [1.0, 2.0, 3.0], [0.29, 0.29]]


def _base_rows() -> list[list[float | None] | None]:
    rng = random.Random(29)
    rows = list(BASE)
    for _ in range(60):
        rows.append([None if rng.random() < 0.1 else round(rng.uniform(-1000, 1000),
                                                             rng.choice([1, 2, 3]))
                     for _ in range(rng.randint(1, 5))])
    return rows


def _item(sql_type: str, v: float | None) -> Any:
    """The item as the column holds it (what the driver inserts)."""
    if v is None:
        return None
    if sql_type == "INTEGER":
        return int(round(v))
    if sql_type == "DECIMAL(18, 2)":
        return Decimal(repr(v)).quantize(Decimal("0.01"))
    if sql_type == "DECIMAL(38, 18)":
        return Decimal(repr(v))
    return v


def _shown(v: Any) -> Any:
    """The number the scalar engine is given: the item as its text shows."""
    if v is None:
        return None
    return Decimal(repr(v)) if isinstance(v, float) else Decimal(v)


def _rows(sql_type: str) -> list[list[Any] | None]:
    return [None if r is None else [_item(sql_type, v) for v in r] for r in _base_rows()]


def _ts(items: list[Any] | None) -> list[str | None] | None:
    return None if items is None else [("a" if i % 2 else "b") for i in range(len(items))]


def _schema(formula: str) -> dict[str, str]:
    try:
        formulane.compile(formula, SCHEMA)
    except formulane.CheckError:
        return STRICT_SCHEMA
    return SCHEMA


def _kept(formula: str, rows: list[list[Any] | None]) -> list[list[Any] | None]:
    return rows if _schema(formula) is SCHEMA else [r for r in rows if r is not None]


def _duckdb(formula: str, sql_type: str, rows: list[list[Any] | None]) -> list[E.Outcome]:
    query = formulane.sql_select("t", {"o": formula}, _schema(formula), dialect="duckdb")
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE t (i INTEGER, xs {sql_type}[], ts VARCHAR[])")
        con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                        [(i, r, _ts(r)) for i, r in enumerate(rows)])
        cursor = con.execute(f"SELECT * FROM ({query}) ORDER BY i")
        return _outcomes(cursor.description, cursor.fetchall())
    finally:
        con.close()


def _outcomes(description: Any, rows: list[Any]) -> list[E.Outcome]:
    """(value, error) of each row (a formula that cannot err has no error column)."""
    names = [d[0] for d in description]
    return [(got["o"], got.get("o__error")) for got in (dict(zip(names, r)) for r in rows)]


def _scalar(formula: str, rows: list[list[Any] | None]) -> list[Any]:
    program = formulane.compile(formula, _schema(formula))
    return [program.evaluate({"xs": None if r is None else [_shown(v) for v in r],
                              "ts": _ts(r)}) for r in rows]


def _exact(want: Any, have: Any) -> bool:
    """``have`` is ``want`` exactly: a number by its decimal value, a list item by item."""
    if isinstance(want, list):
        return isinstance(have, list) and len(want) == len(have) and all(
            _exact(w, h) for w, h in zip(want, have))
    if isinstance(want, (int, Decimal)) and not isinstance(want, bool):
        return isinstance(have, (int, Decimal)) and not isinstance(have, bool) \
            and Decimal(have) == want
    return bool(want == have)


def _bad(formula: str, rows: list[Any], want: list[Any], have: list[E.Outcome]) -> list[str]:
    bad = []
    for row, w, (value, error) in zip(rows, want, have):
        if isinstance(w, ErrorValue):
            ok = error == w.code and value is None
        elif formula in EXACT:
            ok = error is None and _exact(w, value)
        else:
            ok = E.agrees(w, (value, error), decimal_limit=Decimal("1e20"))
        if not ok:
            bad.append(f"{row}: scalar {w!r}, SQL {value!r} / {error!r}")
    return bad


@pytest.mark.parametrize("sql_type", TYPES)
@pytest.mark.parametrize("formula", FORMULAS)
def test_list_items_are_read_as_their_text_shows_on_duckdb(formula: str, sql_type: str) -> None:
    rows = _kept(formula, _rows(sql_type))
    bad = _bad(formula, rows, _scalar(formula, rows), _duckdb(formula, sql_type, rows))
    assert not bad, f"{formula} over {sql_type}[]: {len(bad)} of {len(rows)} rows differ, " \
                    f"e.g. " + "\n".join(bad[:4])


#: (the column's type, a list holding an item DECIMAL(38, 18) cannot hold): the row's #NUM!
PAST = [("DOUBLE", [1e20, 1.0]), ("DOUBLE", [-1e21]), ("DOUBLE", [math.inf, 1.0]),
        ("DOUBLE", [math.nan]), ("FLOAT", [3e20, 2.0]), ("FLOAT", [-math.inf])]
#: Forms that read every item of their list (COUNT, COUNTA and COUNTBLANK count the items,
#: whatever they hold, as the scalar engine does: a count cannot err).
READING = ["SUM(xs)", "AVERAGE(xs)", "MIN(xs)", "MAX(xs)", "INDEX(xs, 1)",
           "PRODUCT(xs)", "MEDIAN(xs)", "VAR.P(xs)", 'SUMIF(xs, ">0")', "SORT(xs)",
           "MAP(xs, x => ROUNDDOWN(x ?? 0, 2))", "SUMPRODUCT(xs, xs)"]


@pytest.mark.parametrize("formula", READING)
@pytest.mark.parametrize("sql_type, items", PAST, ids=[f"{t}-{r}" for t, r in PAST])
def test_an_item_past_the_range_is_that_rows_num(formula: str, sql_type: str,
                                                 items: list[float]) -> None:
    rows = _kept(formula, [items, [1.5, 2.25], None])
    got = _duckdb(formula, sql_type, rows)
    assert got[0] == (None, "#NUM!"), got
    assert not _bad(formula, rows[1:], _scalar(formula, rows[1:]), got[1:]), got


#: DECIMAL(38, 18) rows whose sums pass the type: the sum #NUM!, the others' rows kept; a
#: partial sum past it on the way to one that fits is that sum (no row aborts the query).
WIDE: list[tuple[list[Decimal], str, Any]] = [
    ([Decimal("9e19"), Decimal("9e19")], "SUM(xs)", "#NUM!"),
    ([Decimal("-9e19"), Decimal("-2e19")], "SUM(xs)", "#NUM!"),
    ([Decimal("9e19"), Decimal("9e19"), Decimal("-9e19")], "SUM(xs)", Decimal("9e19")),
    ([Decimal("9e19"), Decimal("9e19")], "AVERAGE(xs)", Decimal("9e19")),
    ([Decimal("9e19"), Decimal("9e19")], 'SUMIF(xs, ">0")', "#NUM!"),
    ([Decimal("9e19"), Decimal("9e19"), Decimal("-9e19")], 'SUMIFS(xs, xs, "<>0")',
     Decimal("9e19")),
    ([Decimal("9e19"), Decimal("9e19")], 'AVERAGEIF(xs, ">0")', Decimal("9e19")),
    ([Decimal("99999999999999000000.5"), Decimal("0.4")], "SUM(xs)", Decimal(
        "99999999999999000000.9")),
    ([Decimal("99999999999999000000.5"), Decimal("1e6")], "SUM(xs)", "#NUM!"),
]


@pytest.mark.parametrize("items, formula, want", WIDE,
                         ids=[f"{f}-{i}" for i, (_, f, _) in enumerate(WIDE)])
def test_decimal_sums_past_the_type_never_abort(items: list[Decimal], formula: str,
                                                want: Any) -> None:
    rows = _kept(formula, [items, [Decimal("1.25")], None])
    got = _duckdb(formula, "DECIMAL(38, 18)", rows)
    if want == "#NUM!":
        assert got[0] == (None, "#NUM!"), got
    else:
        value, error = got[0]
        assert error is None and abs(Decimal(value) - want) <= want * Decimal("1e-15"), got
    assert not _bad(formula, rows[1:], _scalar(formula, rows[1:]), got[1:]), got


def test_float_mode_is_unchanged() -> None:
    # float mode computes in DOUBLE as before: no text reading, no TRY
    sql = formulane.compile("SUM(xs)", SCHEMA).to_sql("duckdb", "float").select("t")
    assert "TEXT" not in sql and "TRY" not in sql


# ------------------------------------------------------------------- PostgreSQL, Spark

URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")
PG_TYPES = {"DOUBLE": "DOUBLE PRECISION", "FLOAT": "REAL", "DECIMAL(18, 2)": "NUMERIC(18, 2)",
            "DECIMAL(38, 18)": "NUMERIC(38, 18)", "INTEGER": "INTEGER"}


@pytest.mark.slow
@pytest.mark.skipif(not URL, reason="FORMULANE_TEST_POSTGRES_URL is not set")
@pytest.mark.parametrize("sql_type", TYPES)
def test_postgres_answers_or_refuses(sql_type: str) -> None:
    """PostgreSQL has arrays but neither DuckDB's list functions nor lambdas: each form is
    refused when compiling (E213) or, where it compiles, answers as the scalar engine."""
    psycopg = pytest.importorskip("psycopg")
    ran = []
    with psycopg.connect(URL, autocommit=True) as con:
        con.execute("CREATE TEMPORARY TABLE t (i INTEGER, xs "
                    f"{PG_TYPES[sql_type]}[], ts TEXT[])")
        try:
            for formula in FORMULAS:
                rows = _kept(formula, _rows(sql_type))
                con.execute("DELETE FROM t")
                with con.cursor() as cur:
                    cur.executemany("INSERT INTO t VALUES (%s, %s, %s)",
                                    [(i, r, _ts(r)) for i, r in enumerate(rows)])
                try:
                    query = formulane.sql_select("t", {"o": formula}, _schema(formula),
                                                 dialect="postgres")
                except Unsupported as exc:
                    assert exc.code == "E213", exc
                    continue
                cursor = con.execute(f"SELECT * FROM ({query}) AS q ORDER BY i")
                got = _outcomes(cursor.description, cursor.fetchall())
                bad = _bad(formula, rows, _scalar(formula, rows), got)
                assert not bad, f"{formula} over {sql_type}[] on PostgreSQL: " + bad[0]
                ran.append(formula)
        finally:
            con.execute("DROP TABLE t")
    print(f"\nPostgreSQL over {sql_type}[]: {len(ran)} of {len(FORMULAS)} forms ran")


SPARK_FORMULAS = ["MIN(xs)", "MAX(xs)", "INDEX(xs, 2)", "SORT(xs)", "VAR.P(xs)", "LARGE(xs, 2)",
                  "PRODUCT(xs)"]


@pytest.mark.slow
def test_spark_reads_list_items_as_their_text_shows(spark: Any) -> None:
    """On Spark the forms it has read DOUBLE[] items through Java's text (``1.0E21`` reads
    as nothing: #NUM!, as on DuckDB); SUM and the other DECIMAL sums stay refused."""
    for formula in SPARK_FORMULAS:
        rows: list[list[Any] | None] = [*_kept(formula, _rows("DOUBLE")), [1e21, 1.0]]
        frame = spark.createDataFrame([(i, r, _ts(r)) for i, r in enumerate(rows)],
                                      "i INT, xs ARRAY<DOUBLE>, ts ARRAY<STRING>")
        frame.createOrReplaceTempView("t")
        query = formulane.sql_select("t", {"o": formula}, _schema(formula), dialect="spark")
        got = [(r["o"], r.asDict().get("o__error")) for r in spark.sql(
            f"SELECT * FROM ({query}) AS q ORDER BY i").collect()]
        assert got[-1] == (None, "#NUM!"), (formula, got[-1])
        bad = _bad(formula, rows[:-1], _scalar(formula, rows[:-1]), got[:-1])
        assert not bad, f"{formula} on Spark: " + "\n".join(bad[:3])
    with pytest.raises(Unsupported):
        formulane.sql_select("t", {"o": "SUM(xs)"}, SCHEMA, dialect="spark")


SCHEMA_BLANKS = {"xs": "List[Number?]?"}


@pytest.mark.parametrize("formula", ["SUM(xs)", "VAR.P(xs)", "MAX(xs)", "MIN(xs)",
                                     "MEDIAN(xs)"])
@pytest.mark.parametrize("items", ["DECIMAL(18, 2)", "INTEGER"])
def test_a_list_of_exact_numbers_given_so_is_read_as_it_is(formula: str, items: str) -> None:
    """``column_types`` saying DECIMAL(18, 2)[] or INTEGER[]: no item is read through its text
    (the items are exact already), and the answers are the scalar engine's."""
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE t AS SELECT * FROM (VALUES ([1.25, 2.5, NULL]::{items}[]), "
                    f"([]::{items}[]), (NULL::{items}[]), ([7, -3]::{items}[])) AS v(xs)")
        program = formulane.compile(formula, SCHEMA_BLANKS)
        sql = formulane.sql_select("t", {"o": formula}, SCHEMA_BLANKS,
                                   column_types={"xs": f"{items}[]"}, keep_columns=True)
        assert "TEXT[]" not in sql, sql
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, row)) for row in cursor.fetchall()]
    finally:
        con.close()
    for row in rows:
        xs, value, got_error = row["xs"], row["o"], row.get("o__error")
        want = program.evaluate({"xs": xs})
        if isinstance(want, ErrorValue):
            assert got_error == want.code, (formula, xs, value, got_error, want)
        else:
            assert got_error is None and value is not None, (formula, xs, value, got_error)
            assert Decimal(str(value)) == pytest.approx(want, rel=Decimal("1e-15")), \
                (formula, xs, value, want)
