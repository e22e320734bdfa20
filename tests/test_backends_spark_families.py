"""The function families' formulas over columns, as Spark SQL on pyspark in local mode.

tests/test_backends.py runs the golden operator and logic cases on Spark; this runs the rows
and formulas of tests/functions/test_{math,text,excelfns,dates,lists}_backends.py (month ends,
leap days, ties, huge and tiny numbers, blanks...: `family_cases`) there, in both numeric modes
(DOUBLE and DECIMAL(38, 18) columns), and compares each row with the scalar engine through the
families' own comparison (`_engines.differing`), as tests/test_backends_sqlite.py and
tests/test_backends_postgres.py do for their engines.

Spark analyses a query in about a second, so a family table's formulas run as few queries: the
formulas `formulane.sql_select` takes of one (table, profile) become the columns of a SELECT
(`CHUNK` at most) over a temporary view of its rows; a query Spark rejects is re-run formula by formula, to name
the formula. A formula is either refused when compiling (E213, the reason naming what Spark
lacks: `columnar/sql/dialects.py`) and counted, or it runs and agrees: a rejected query is a
failure ("no foreign exception"), except the entries of `KNOWN`, each a documented engine
limit with its reason, checked both ways (a known difference that disappears must leave the
list). Rows pyspark cannot hold (an instant of year 1: its Python conversion goes through the
process's local time zone and overflows) are left out, with the count printed.

Skipped, with the reason, when pyspark or Java is missing (the `spark` fixture of tests/conftest.py).
"""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from typing import Any

import pytest

import formulane
from formulane import Unsupported
from formulane.schema import normalize_schema
from formulane.types import Type

from family_cases import FamilyCase, family_cases
from functions import _engines as E

pytestmark = pytest.mark.slow

#: (module, formula, numbers) -> why Spark differs there (docs/columnar.md says so too).
KNOWN: dict[tuple[str, str, str], str] = {
    ("test_text_backends", 'REGEXEXTRACTALL(a, "[a-z]+", 1)', numbers):
        "Java's Unicode case-insensitive matching ((?iu), which Spark's regular expressions "
        "need for RE2's folding of s, S and the long s) also matches the dotted capital I "
        "(U+0130) with i, as RE2's simple case folding and the scalar engine's do not"
    for numbers in ("float", "decimal")
}

ROW = E.ROW

#: Formulas a query at most (`_tables`).
CHUNK = 8




def _spark_type(t: Type, numbers: str) -> str | None:
    """The Spark column type of a formulane type, or None where the layout has none here."""
    if t.kind == "Number":
        return "DECIMAL(38, 18)" if numbers == "decimal" else "DOUBLE"
    if t.kind == "List":
        inner = None if t.elem is None else _spark_type(t.elem, numbers)
        return None if inner is None else f"ARRAY<{inner}>"
    return {"Text": "STRING", "Boolean": "BOOLEAN", "Date": "DATE", "DateTime": "TIMESTAMP",
            "Duration": "INTERVAL DAY TO SECOND"}.get(t.kind)


def _write(value: Any, t: Type, numbers: str) -> Any:
    """A row's value as pyspark takes it for the column's type (a DOUBLE takes floats only)."""
    if value is None:
        return None
    if t.kind == "Number":
        return float(value) if numbers == "float" else Decimal(value)
    if t.kind == "List":
        assert t.elem is not None
        return [_write(v, t.elem, numbers) for v in value]
    return value


def _holdable(value: Any) -> bool:
    """pyspark converts an instant through the process's local time: year 1 overflows there
    (a limit of the harness, not of the SQL)."""
    if isinstance(value, list):
        return all(map(_holdable, value))
    return not (isinstance(value, dt.datetime) and value.year == 1)


def _read(value: Any) -> Any:
    """What Spark answered, as the scalar engine's values compare: a TIMESTAMP comes back as a
    naive local date-time (pyspark's conversion), read as that instant."""
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.astimezone(dt.UTC)
    if isinstance(value, list):
        return [_read(v) for v in value]
    return value


def _tables() -> list[list[FamilyCase]]:
    """The family cases grouped by the table they run over (its rows, profile and registry)."""
    groups: dict[tuple[Any, ...], list[FamilyCase]] = {}
    for case in family_cases():
        groups.setdefault((case.module, id(case.rows), case.profile, id(case.registry)),
                          []).append(case)
    # at most CHUNK formulas a query: the list forms' lambdas make a large plan, and a whole
    # table's of them exhausts a small local driver's memory
    return [cases[i:i + CHUNK] for cases in groups.values()
            for i in range(0, len(cases), CHUNK)]


def _query(cases: list[FamilyCase], numbers: str, refused: dict[str, str]
           ) -> tuple[str | None, dict[str, FamilyCase]]:
    """One SELECT of every formula of a table Spark compiles (``f0``, ``f1``...), and the
    formulas by column; refusals go to ``refused``."""
    first = cases[0]
    taken: dict[str, FamilyCase] = {}
    for case in cases:
        try:
            formulane.sql_select("t", {"f": case.formula}, case.schema, dialect="spark",
                                 profile=case.profile, registry=case.registry, numbers=numbers)
        except Unsupported as exc:
            # what Spark lacks (columnar/sql/dialects.py), or what no SQL dialect expresses
            assert "Spark has no" in exc.reason or "SQL cannot express" in str(exc), exc.reason
            refused[case.id] = exc.reason
            continue
        taken[f"f{len(taken)}"] = case
    if not taken:
        return None, taken
    query = formulane.sql_select("t", {n: c.formula for n, c in taken.items()}, first.schema,
                                 dialect="spark", profile=first.profile,
                                 registry=first.registry, numbers=numbers)
    return query, taken


@pytest.mark.parametrize("numbers", ["float", "decimal"])
def test_spark_agrees_with_the_scalar_engine_over_columns(spark: Any, numbers: str) -> None:
    started = time.monotonic()
    ran = queries = unheld = 0
    refused: dict[str, str] = {}
    problems: dict[tuple[str, str, str], str] = {}
    known_seen: set[tuple[str, str, str]] = set()
    for cases in _tables():
        first = cases[0]
        types = normalize_schema(first.schema)
        columns = {n: _spark_type(t, numbers) for n, t in types.items()}
        if any(c is None for c in columns.values()):
            continue  # a record column (none in the families today)
        mode_rows = E.rows_for(numbers, first.rows)
        rows = [r for r in mode_rows if all(map(_holdable, r.values()))]
        unheld += len(mode_rows) - len(rows)
        query, taken = _query(cases, numbers, refused)
        if query is None:
            continue
        names = list(types)
        ddl = ", ".join([f"`{ROW}` INT"] + [f"`{n}` {columns[n]}" for n in names])
        frame = spark.createDataFrame(
            [tuple([i] + [_write(r[n], types[n], numbers) for n in names])
             for i, r in enumerate(rows)], ddl)
        frame.createOrReplaceTempView("t")
        queries += 1
        try:
            got = spark.sql(f"SELECT * FROM ({query}) AS q ORDER BY `{ROW}`").collect()
            answers = {name: got for name in taken}
        except Exception:  # a rejected query: each formula alone, to name it
            answers = {}
            for name, case in taken.items():
                alone = formulane.sql_select("t", {name: case.formula}, case.schema,
                                             dialect="spark", profile=case.profile,
                                             registry=case.registry, numbers=numbers)
                try:
                    answers[name] = spark.sql(
                        f"SELECT * FROM ({alone}) AS q ORDER BY `{ROW}`").collect()
                except Exception as exc:
                    key = (case.module, case.formula, numbers)
                    if key in KNOWN:
                        known_seen.add(key)
                        continue
                    problems[key] = f"Spark rejected it: {str(exc).splitlines()[0][:300]}"
        for name, case in taken.items():
            if name not in answers:
                continue
            ran += 1
            actual = [(_read(r[name]), r.asDict().get(name + "__error")) for r in answers[name]]
            expected = E.run_scalar(case.formula, case.schema, rows, profile=case.profile,
                                    registry=case.registry)
            # (list items compare within 1e-9, as the lists family does on every backend:
            # SEQUENCE adds in float)
            bad = E.differing(expected, actual,
                              list_tolerance=case.module == "test_lists_backends")
            key = (case.module, case.formula, numbers)
            if key in KNOWN:
                if bad:
                    known_seen.add(key)
                continue
            if bad:
                problems[key] = E.report(f"{case.formula} on Spark ({numbers})", rows,
                                         expected, actual, bad, limit=4)
    known = {k for k in KNOWN if k[2] == numbers}
    print(f"\nspark ({numbers}): {ran} family formulas ran in {queries} queries, "
          f"{len(refused)} refused, {len(problems)} failed, {len(known_seen)} known; "
          f"{unheld} rows pyspark cannot hold left out; {time.monotonic() - started:.1f}s")
    assert not problems, "\n".join(f"{k[0]}: {k[1]}: {v}" for k, v in problems.items())
    assert known_seen == known, f"now agrees on Spark, remove from KNOWN: " \
                                f"{sorted(known - known_seen)}"
    assert ran >= 300, ran


def test_spark_replaces_the_first_match_with_literal_text(spark: Any) -> None:
    """REGEXREPLACE of the first match only, rewritten for Spark (whose REGEXP_REPLACE replaces
    every match) as the shortest prefix kept (group 1) and the literal: a digit right after the
    group reference, a backslash and a dollar stay literal (Java reads `$12` as group 12)."""
    schema = {"s": "Text"}
    rows = [{"s": s} for s in ("aa-a", "b", "", "xa", "a\na", "$1")]
    formulas = {"digit": 'REGEXREPLACE(s, "a", "5", 1)', "slash": 'REGEXREPLACE(s, "a", "\\", 1)',
                "dollar": 'REGEXREPLACE(s, "a", "$", 1)', "every": 'REGEXREPLACE(s, "a", "$")',
                "case": 'REGEXREPLACE(s, "A", "1", 1, TRUE)'}
    query = formulane.sql_select("t", formulas, schema, dialect="spark", profile="excel")
    spark.createDataFrame([(i, r["s"]) for i, r in enumerate(rows)],
                          f"`{ROW}` INT, s STRING").createOrReplaceTempView("t")
    got = spark.sql(f"SELECT * FROM ({query}) AS q ORDER BY `{ROW}`").collect()
    for name, formula in formulas.items():
        expected = E.run_scalar(formula, schema, rows, profile="excel")
        actual = [(r[name], r.asDict().get(name + "__error")) for r in got]
        E.assert_agree(f"{formula} on Spark", rows, expected, actual)
