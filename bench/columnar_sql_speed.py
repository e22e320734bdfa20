"""Speed of the generated SQL on DuckDB against the bare hand-written query.

    python bench/columnar_sql_speed.py [--rows 1000000] [--repeat 5]

What a SQL user would write with no error checks (`SELECT a + b FROM t`) beside
`formulane.sql_select` of the same formula, over the same table, in the engine: DECIMAL(18, 2)
columns in decimal mode and DOUBLE columns in float mode (each mode over the columns it is
meant for), and decimal mode over DOUBLE columns, each with and without ``column_types`` (the
compiler reads a column whose engine type it is not told as possibly either); and typed
DECIMAL(38, 4) columns, whose products pass 38 digits. The ``chain`` case and the
DECIMAL(38, 4) setup (each last) were added later: the other rows are comparable across
rounds. Each query is wrapped in ``SELECT SUM(HASH(COLUMNS(*)))`` so the engine computes
every value (and error code) and returns one row; times are the best of ``--repeat`` runs,
wall clock, after one warm-up run.
The ratio is formulane's time over the bare query's. Figures: bench/COLUMNAR.md.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import duckdb

import formulane

#: (name, formula, the bare SQL a user would write for it)
CASES: list[tuple[str, str, str]] = [
    ("sum", "a + b", "a + b"),
    ("product", "a * b * (1 - c)", "a * b * (1 - c)"),
    ("conditional", "IF(b > 5, a * 0.9, a)", "CASE WHEN b > 5 THEN a * 0.9 ELSE a END"),
    ("round", "ROUND(a * b, 2)", "ROUND(a * b, 2)"),
    ("rounddown", "ROUNDDOWN(a / 3, 2)", "TRUNC(a / 3 * 100) / 100"),
    ("compare", "a + b = c", "a + b = c"),
    # a longer chain of + - * (each step's DECIMAL type known from the last's when typed)
    ("chain", "(a * b - c) * 1.08 + a * 0.5", "(a * b - c) * 1.08 + a * 0.5"),
]

#: (label, SQL column type, numbers mode, column_types given)
SETUPS: list[tuple[str, str, str, bool]] = [
    ("DECIMAL cols, decimal", "DECIMAL(18, 2)", "decimal", False),
    ("DECIMAL cols, decimal, typed", "DECIMAL(18, 2)", "decimal", True),
    ("DOUBLE cols, float", "DOUBLE", "float", False),
    ("DOUBLE cols, decimal", "DOUBLE", "decimal", False),
    ("DOUBLE cols, decimal, typed", "DOUBLE", "decimal", True),
    # wide DECIMALs: a product's precision passes 38 (Spark would keep 6 places of it)
    ("DECIMAL(38, 4) cols, decimal, typed", "DECIMAL(38, 4)", "decimal", True),
]


def _best(con: Any, sql: str, repeat: int) -> float:
    query = f"SELECT SUM(HASH(COLUMNS(*))) FROM ({sql}) AS q"
    con.execute(query).fetchall()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        con.execute(query).fetchall()
        times.append(time.perf_counter() - start)
    return min(times)


def run(rows: int, repeat: int) -> list[dict[str, Any]]:
    schema = {"a": "Number", "b": "Number", "c": "Number"}
    out = []
    for label, sql_type, numbers, typed in SETUPS:
        con = duckdb.connect()
        con.execute(f"CREATE TABLE t AS SELECT CAST(random() * 1000 AS {sql_type}) AS a, "
                    f"CAST(random() * 10 AS {sql_type}) AS b, "
                    f"CAST(random() AS {sql_type}) AS c FROM range({rows})")
        types = {name: sql_type for name in schema} if typed else None
        for name, formula, bare in CASES:
            sql = formulane.sql_select("t", {"out": formula}, schema, numbers=numbers,
                                       keep_columns=False, column_types=types)
            ours = _best(con, sql, repeat)
            hand = _best(con, f"SELECT {bare} AS out FROM t", repeat)
            out.append({"setup": label, "case": name, "ours_ms": ours * 1e3,
                        "bare_ms": hand * 1e3, "ratio": ours / hand, "chars": len(sql)})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"DuckDB {duckdb.__version__}, {args.rows:,} rows, best of {args.repeat} "
          "(ms: formulane / bare = ratio; SQL chars)")
    setup = None
    for r in run(args.rows, args.repeat):
        if r["setup"] != setup:
            setup = r["setup"]
            print(setup)
        print(f"  {r['case']:12s} {r['ours_ms']:8.1f} / {r['bare_ms']:7.1f} = "
              f"{r['ratio']:5.1f}x  {r['chars']:5d} chars")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
