"""DuckDB's list functions rewritten for Spark (`columnar/sql/spark_lists.py`) answer as DuckDB's.

Each call is written once as the forms write it (`exp.Anonymous`, DuckDB's name), executed on
DuckDB as it is and on local Spark as `dialects.adapt` rewrites it, over the same rows: lists
with NULL items, empty, NULL and one-item lists, ties, 18-digit decimals, and bounds that are
0, negative, past the end or NULL. The answers must be equal (a DOUBLE bit for bit but for the sign
of a zero, a DECIMAL by value). Calls the rewrite cannot write faithfully stay refused (`lacking`).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from formulane.columnar.sql import dialects, spark_lists

duckdb = pytest.importorskip("duckdb")

pytestmark = pytest.mark.slow

#: (row, the list's items as text, k): one list column `a`, one INT column `k`.
ROWS: list[tuple[int, list[str] | None, int | None]] = [
    (0, ["1.5", None, "2.25", "-3", "2.25"], 2),
    (1, [], 0),
    (2, None, 1),
    (3, [None], -1),
    (4, ["0.123456789012345678", "0.2", "0.3", "0.000000000000000001"], -2),
    (5, ["7"], None),
    (6, ["4", "1", "3", "2"], 9),
    (7, ["-0", "0", "5"], 3),
]


def _e(sql: str) -> exp.Expr:
    return sqlglot.parse_one(sql, read="duckdb")


def _f(name: str, *args: exp.Expr | str) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=[_e(a) if isinstance(a, str) else a
                                                 for a in args])


def _lam(body: str, *names: str) -> exp.Lambda:
    return exp.Lambda(this=_e(body), expressions=[exp.to_identifier(n) for n in names])


CALLS: dict[str, exp.Expr] = {
    "len": _f("LEN", "a"),
    "product": _f("LIST_PRODUCT", "a"),
    "min": _f("LIST_MIN", "a"),
    "max": _f("LIST_MAX", "a"),
    "var_samp": _f("LIST_VAR_SAMP", "a"),
    "var_pop": _f("LIST_VAR_POP", "a"),
    "stddev_samp": _f("LIST_STDDEV_SAMP", "a"),
    "stddev_pop": _f("LIST_STDDEV_POP", "a"),
    "count": _f("LIST_COUNT", "a"),
    "unique": _f("LIST_UNIQUE", "a"),
    "distinct": _f("LIST_SORT", _f("LIST_DISTINCT", "a")),
    "reverse": _f("LIST_REVERSE", "a"),
    "position_max": _f("LIST_POSITION", "a", _f("LIST_MAX", "a")),
    "position_absent": _f("LIST_POSITION", "a", "99"),
    "position_null": _f("LIST_POSITION", "a", _f("LIST_MAX", _f("LIST_FILTER", "a", _lam(
        "x > 1000", "x")))),
    "slice_k_3": _f("LIST_SLICE", "a", "k", "3"),
    "slice_2_k": _f("LIST_SLICE", "a", "2", "k"),
    "slice_1_2": _f("LIST_SLICE", "a", "1", "2"),
    "slice_neg": _f("LIST_SLICE", "a", "-2", "-1"),
    "sort": _f("LIST_SORT", "a"),
    "sort_desc": _f("LIST_SORT", "a", "'DESC'"),
    "sort_desc_last": _f("LIST_SORT", "a", "'DESC'", "'NULLS LAST'"),
    "concat": _f("LIST_CONCAT", "a", _f("LIST_REVERSE", "a")),
    "transform_index": _f("LIST_TRANSFORM", "a", _lam("i", "x", "i")),
    "filter_index": _f("LIST_FILTER", "a", _lam("i > 1", "x", "i")),
    "filter": _f("LIST_FILTER", "a", _lam("x > 1", "x")),
    "range_k": _f("RANGE", "k"),
    "range_1_k": _f("RANGE", "1", "k"),
    "flatten": _f("FLATTEN", exp.Array(expressions=[_e("a"), exp.Null(), _e("a")])),
}

#: Calls rewritten only where the form marks their items DOUBLEs (`spark_lists.DOUBLE`).
DOUBLE_CALLS = {"sum": _f("LIST_SUM", "a"), "avg": _f("LIST_AVG", "a"),
                "median": _f("LIST_MEDIAN", "a"),
                "sum_filtered": _f("LIST_SUM", _f("LIST_FILTER", "a", _lam("x > 0", "x")))}


def _value(text: str | None, numbers: str) -> Any:
    if text is None:
        return None
    return float(text) if numbers == "float" else Decimal(text)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and isinstance(b, float):
        # (a == b: of equal items 0 and -0, DuckDB's minimum and distinct keep one, Spark's
        # the other; the scalar engine and Excel have no negative zero)
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, (int, float, Decimal)) and isinstance(b, (int, float, Decimal)) \
            and not isinstance(a, bool):
        return Decimal(a) == Decimal(b)
    return bool(a == b)


@pytest.mark.parametrize("numbers", ["float", "decimal"])
def test_spark_list_rewrites_answer_as_duckdb(spark: Any, numbers: str) -> None:
    item = "DOUBLE" if numbers == "float" else "DECIMAL(38, 18)"
    rows = [(r, None if xs is None else [_value(x, numbers) for x in xs], k)
            for r, xs, k in ROWS]
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t (r INT, a {item}[], k INT)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    spark.createDataFrame(rows, f"r INT, a ARRAY<{item}>, k INT").createOrReplaceTempView("t")
    problems = []
    calls = dict(CALLS)
    for name, call in DOUBLE_CALLS.items():
        if numbers == "float":
            calls[name] = call.copy()
            calls[name].meta[spark_lists.DOUBLE] = True
        else:  # a DECIMAL sum: refused, with the reason
            what = dialects.lacking([dialects.adapt(call, "spark")], "spark")
            assert what is not None and "DECIMAL" in what, (name, what)
            continue
    for name, call in calls.items():
        duck = con.execute(f"SELECT {call.sql('duckdb')} FROM t ORDER BY r").fetchall()
        adapted = dialects.adapt(call, "spark")
        assert adapted is not None
        assert dialects.lacking([adapted], "spark") is None, name
        query = f"SELECT {adapted.sql('spark')} AS v FROM t ORDER BY r"
        got = [row.v for row in spark.sql(query).collect()]
        want = [row[0] for row in duck]
        if not _same(want, got):
            problems.append(f"{name}: DuckDB {want}, Spark {got}\n  {query}")
    assert not problems, "\n".join(problems)


def test_what_spark_cannot_fold_faithfully_stays_refused() -> None:
    """A sum of unmarked items (a DECIMAL sum Spark's fold retypes), a reduction (its lambda's
    type is DuckDB's result, Spark's must be its start value's) and a sort with NULLs first
    are left as DuckDB's, refused; the other dialects' SQL is not rewritten at all."""
    for call in (_f("LIST_SUM", "a"), _f("LIST_REDUCE", "a", _lam("acc + x", "acc", "x"), "0"),
                 _f("LIST_SORT", "a", "'ASC'", "'NULLS FIRST'")):
        adapted = dialects.adapt(call, "spark")
        assert dialects.lacking([adapted], "spark") is not None, adapted
    for dialect in ("trino", "snowflake", "bigquery", "postgres", "sqlite", "duckdb"):
        call = _f("LIST_SUM", "a")
        adapted = dialects.adapt(call, dialect)
        assert adapted is not None and adapted.sql(dialect) == call.sql(dialect)
    assert "LIST_SUM" in spark_lists.NAMES and "LIST_MAX" in spark_lists.NAMES
