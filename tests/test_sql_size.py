"""Generated SQL grows linearly with the formula (issue 10, item 5).

Each row of `FAMILIES` wraps a formula in one more call per level, to depth 8. Forms read their
arguments several times (ROUND reads its number a dozen times); inlined, each level multiplied
the SQL (``ROUND(ROUND(x * 1.2, 2) * 1.1, 2)`` was 2.4 MB). Bound once (`sql_let`), the SQL per
IR node stays flat: the test checks a linear bound at every depth, that the characters per node
do not grow with depth, that the depth-8 query gives the scalar engine's answers on DuckDB (and
on Spark, where installed), and that `Limits.max_sql_length` refuses with E411.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable

import pytest

import formulane
from formulane import LimitExceeded, Limits
from formulane.interpreter import ir

duckdb = pytest.importorskip("duckdb")

SCHEMA = {"x": "Number", "t": "Text"}
ROWS = [{"x": Decimal("1.5"), "t": "  Straße abc  "}, {"x": Decimal("-7.25"), "t": "ÉTÉ"},
        {"x": Decimal("40"), "t": ""}]
#: characters of SQL per IR node allowed at any depth (the largest forms, ROUND and UPPER,
#: are a few hundred characters each; see bench/COLUMNAR.md for the golden distribution)
PER_NODE = 800
DEPTH = 8

#: (family, innermost formula, one level of wrapping)
FAMILIES: list[tuple[str, str, Callable[[str], str]]] = [
    ("ROUND", "x", lambda e: f"ROUND({e} * 1.1, 2)"),
    ("ROUNDUP/ROUNDDOWN", "x", lambda e: f"ROUNDDOWN(ROUNDUP({e}, 3) / 3, 2)"),
    ("IF", "x", lambda e: f"IF(x > 3, {e} * 2, x - 1)"),
    ("IF over LET", "x", lambda e: f"LET(v, {e}, IF(v > 3, v * 2, v - 1))"),
    ("text", "t", lambda e: f'UPPER(LEFT(TRIM({e}), 5) & "x")'),
    ("mixed", "x", lambda e: f"ROUND(IF(x > 3, {e} * 2, LEN(LOWER(t)) + 1), 1)"),
]


def _nodes(root: Any) -> int:
    return sum(1 for _ in ir.ir_walk(root))


def _duckdb_rows(query: str) -> list[dict[str, Any]]:
    """The query's rows on DuckDB over the table of ROWS, in row order, as name -> value."""
    con = duckdb.connect()
    try:
        con.execute('CREATE TABLE t (i INTEGER, x DECIMAL(18, 4), t VARCHAR)')
        con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                        [(i, r["x"], r["t"]) for i, r in enumerate(ROWS)])
        got = con.execute(f'SELECT * FROM ({query}) ORDER BY i').fetchall()
        names = [d[0] for d in con.description]
    finally:
        con.close()
    return [dict(zip(names, result)) for result in got]


def _nested(inner: str, wrap: Callable[[str], str], depth: int) -> str:
    formula = inner
    for _ in range(depth):
        formula = wrap(formula)
    return formula


@pytest.mark.parametrize("family,inner,wrap", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_sql_is_linear_in_the_formula(family: str, inner: str,
                                      wrap: Callable[[str], str]) -> None:
    ratios = []
    for depth in range(1, DEPTH + 1):
        program = formulane.compile(_nested(inner, wrap, depth), SCHEMA)
        sql = program.to_sql("duckdb").select("t")
        nodes = _nodes(program.root)
        assert len(sql) <= PER_NODE * nodes, (family, depth, len(sql), nodes)
        ratios.append(len(sql) / nodes)
    # flat per node: deeper nesting adds the same per level (no copies of the inner levels)
    assert ratios[-1] <= 1.25 * max(ratios[1:3]), ratios


def _scalar(formula: str, row: dict[str, Any]) -> Any:
    value = formulane.evaluate(formula, row, schema=SCHEMA)
    return value.code if isinstance(value, formulane.ErrorValue) else value


@pytest.mark.parametrize("family,inner,wrap", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_depth_eight_runs_on_duckdb(family: str, inner: str,
                                    wrap: Callable[[str], str]) -> None:
    formula = _nested(inner, wrap, DEPTH)
    query = formulane.sql_select("t", {"out": formula}, SCHEMA)
    for row, out in zip(ROWS, _duckdb_rows(query)):
        expected = _scalar(formula, row)
        if out.get("out__error") is not None or isinstance(expected, str) and \
                expected.startswith("#"):
            assert out.get("out__error") == expected, (row, out)
        elif isinstance(expected, Decimal):
            assert abs(Decimal(str(out["out"])) - expected) <= Decimal("1e-9") * \
                max(1, abs(expected)), (row, out, expected)
        else:
            assert out["out"] == expected, (row, out, expected)


@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "spark", "trino", "snowflake"])
def test_nested_round_is_small_in_every_lateral_dialect(dialect: str) -> None:
    """The issue's example: 2.4 MB of SQL before; now a few kilobytes in each dialect."""
    query = formulane.sql_select("t", {"out": "ROUND(ROUND(x * 1.2, 2) * 1.1, 2)"},
                                 {"x": "Number"}, dialect=dialect)
    assert len(query) < 8_000
    assert "LATERAL" in query


@pytest.mark.parametrize("dialect", ["sqlite", "bigquery"])
def test_dialects_without_lateral_are_bounded_by_the_limit(dialect: str) -> None:
    """Inline SQL (no lateral subqueries) still meets `Limits.max_sql_length`: E411."""
    limits = Limits(max_sql_length=20_000)
    # inline, each level still doubles the SQL (depth 6: 26,480 characters on SQLite)
    formula = _nested("x", lambda e: f"ROUND({e} * 1.1, 2)", 6)
    with pytest.raises(LimitExceeded) as info:
        formulane.sql_select("t", {"out": formula}, {"x": "Number"}, dialect=dialect,
                             limits=limits)
    assert info.value.code == "E411"


def test_the_limit_applies_to_lateral_sql_too() -> None:
    """Nested ROUND depth 8: 1,890 characters of query, 1,452 of expressions (`to_sql`)."""
    formula = _nested("x", lambda e: f"ROUND({e} * 1.1, 2)", 8)
    with pytest.raises(LimitExceeded) as info:
        formulane.sql_select("t", {"out": formula}, {"x": "Number"},
                             limits=Limits(max_sql_length=1_200))
    assert info.value.code == "E411"
    program = formulane.compile(formula, {"x": "Number"},
                                limits=Limits(max_sql_length=1_200))
    with pytest.raises(LimitExceeded):
        program.to_sql("duckdb")


@pytest.mark.slow
def test_depth_eight_runs_on_spark() -> None:
    pytest.importorskip("pyspark")
    import shutil

    if not shutil.which("java"):
        pytest.skip("no Java runtime for pyspark")
    from formulane.columnar.sql.spark import local_session

    spark = local_session()
    try:
        frame = spark.createDataFrame([(i, r["x"], r["t"]) for i, r in enumerate(ROWS)],
                                      "i INT, x DECIMAL(18, 4), t STRING")
        frame.createOrReplaceTempView("t")
        from formulane.columnar.sql.spark import with_formulas

        for family, inner, wrap in FAMILIES:
            formula = _nested(inner, wrap, DEPTH)
            query = formulane.sql_select("t", {"out": formula}, SCHEMA, dialect="spark")
            by_sql = sorted(spark.sql(query).collect(), key=lambda r: r["i"])
            by_frame = sorted(with_formulas(frame, {"out": formula}, SCHEMA).collect(),
                              key=lambda r: r["i"])
            assert [r.asDict() for r in by_sql] == [r.asDict() for r in by_frame]
            for row, result in zip(ROWS, by_sql):
                expected = _scalar(formula, row)
                out = result.asDict()
                if out.get("out__error") is not None or isinstance(expected, str) and \
                        expected.startswith("#"):
                    assert out.get("out__error") == expected, (family, row, out)
                elif isinstance(expected, Decimal):
                    assert abs(Decimal(str(out["out"])) - expected) <= Decimal("1e-9") * \
                        max(1, abs(expected)), (family, row, out, expected)
                else:
                    assert out["out"] == expected, (family, row, out, expected)
    finally:
        spark.stop()


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("family,inner,wrap", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_depth_eight_runs_on_polars(family: str, inner: str, wrap: Callable[[str], str],
                                    lazy: bool) -> None:
    """`formulane.apply` binds nested calls as temporary columns (`polars.Binder`): depth 8
    plans in milliseconds (unbound, depth 5 of ROUND took 207 s), gives the scalar answers,
    and leaves no temporary column behind."""
    pl = pytest.importorskip("polars")
    formula = _nested(inner, wrap, DEPTH)
    frame = pl.DataFrame({"x": [float(r["x"]) for r in ROWS], "t": [r["t"] for r in ROWS]})
    out = formulane.apply(frame.lazy() if lazy else frame, {"out": formula}, SCHEMA)
    if lazy:
        out = out.collect()
    assert set(out.columns) <= {"x", "t", "out", "out__error"}
    for row, got in zip(ROWS, out.iter_rows(named=True)):
        expected = _scalar(formula, row)
        if got.get("out__error") is not None or isinstance(expected, str) and \
                expected.startswith("#"):
            assert got.get("out__error") == expected, (row, got)
        elif isinstance(expected, Decimal):
            assert abs(Decimal(repr(got["out"])) - expected) <= Decimal("1e-9") * \
                max(1, abs(expected)), (row, got, expected)
        else:
            assert got["out"] == expected, (row, got, expected)


#: Constant parts the fold answers at compile time (`interpreter.fold`), and the formula with
#: the answer written in: the same SQL. Each was thousands of characters of SQL before
#: (ROUND(x, 1/0) 13,425; LEN(REPT("ab", 16383)) 32,803; WORKDAY(DATE(2008, 10, 1), 151) 6,041).
FOLDED = [('ROUND(x, 1/0)', '1/0'), ('ROUND(1, 1/0)', '1/0'),
          ('LEN(REPT("ab", 16383))', '32766'), ('LEN(REPT("ab", 3)) + x', '6 + x'),
          ('WORKDAY(DATE(2008, 10, 1), 151)', 'DATE(2009, 4, 30)'),
          ('SERIAL(DATETIME(2024, 1, 1, 18, 0, 0))', '45292.75'),
          ('HOUR(TIME(25, 0, 0))', '1'), ('INDEX([10, 20, 30], 3)', '30'),
          ('IFERROR(1/0, 2) * x', '2 * x')]


@pytest.mark.parametrize("formula,answer", FOLDED, ids=[f[0] for f in FOLDED])
def test_constants_are_folded_to_their_answer(formula: str, answer: str) -> None:
    query = formulane.sql_select("t", {"out": formula}, SCHEMA)
    assert query == formulane.sql_select("t", {"out": answer}, SCHEMA)
    for row, out in zip(ROWS, _duckdb_rows(query)):
        expected = _scalar(formula, row)
        if isinstance(expected, str) and expected.startswith("#"):
            assert out.get("out__error") == expected, (row, out)
        elif isinstance(expected, Decimal):
            assert Decimal(str(out["out"])) == expected, (row, out, expected)
        else:
            assert out["out"] == expected, (row, out, expected)


def test_deep_sql_is_a_clear_error_not_a_traceback() -> None:
    """A long sum passes the parser's depth limit but nests its SQL past Python's stack when
    rendered: E403, never a RecursionError."""
    from formulane.errors import LimitExceeded

    src = " + ".join(f"x * {k}" for k in range(1, 99))
    program = formulane.compile(src, {"x": "Number"})
    try:
        program.to_sql("duckdb").select("t")
    except LimitExceeded as exc:
        assert exc.code == "E403" and "nests too deeply" in str(exc)
