"""The table's column SQL types and the SQL compiler: DECIMAL branches of one type.

DuckDB types a CASE, COALESCE or list of DECIMAL(38, s1) and DECIMAL(38, s2) values as
DECIMAL(38, min(s1, s2)), truncating the finer one; the compiler gives such branches one type
(`sql_join.join_decimals`), with or without the caller's ``column_types``
(`formulane.sql_select`). Here: each wrong answer DuckDB gave (each test failed before the
fix), the same answers with and without ``column_types`` over the golden cases that join
Number values, the errors of a bad ``column_types``, and the same formulas on PostgreSQL when
``FORMULANE_TEST_POSTGRES_URL`` is set (its NUMERIC never truncates, but the casts must be
valid there).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import duckdb
import pytest

import formulane
from formulane import CheckError, ErrorValue, FormulaError, Unsupported

#: One row; the columns' scales differ, as a real table's do.
TABLE = {
    "a": ("DECIMAL(38, 4)", Decimal("0.1143")),
    "b": ("DECIMAL(38, 0)", Decimal("0")),
    "x": ("DECIMAL(38, 4)", Decimal("-7")),
    "n": ("DECIMAL(38, 0)", None),
    "big": ("DECIMAL(38, 0)", Decimal("1e25")),
    "i": ("DECIMAL(38, 0)", Decimal("2")),
    "c": ("BOOLEAN", True),
    "f": ("BOOLEAN", False),
}
SCHEMA = {name: ("Boolean" if t == "BOOLEAN" else "Number?" if v is None else "Number")
          for name, (t, v) in TABLE.items()}
TYPES = {name: t for name, (t, _) in TABLE.items()}

#: Formulas whose answer DuckDB truncated (the scalar engine's answer is the reference).
TRUNCATED = [
    "IF(a > b, a, b)",          # 0 (the DECIMAL(38, 0) branch's type)
    "IF(c, a * 1.5, b)",        # 0.1714: the computed DECIMAL(38, 18) cut to 4 places
    "IF(f, b, a * 1.5)",
    "IF(c, b + 1.00005, a)",
    "IF(f, b, 1.5)",            # a literal's places beside a DECIMAL(38, 0) column
    "IFS(f, b, c, a)",
    "CHOOSE(i, b, a)",
    "SWITCH(i, 1, b, 2, a)",
    "SWITCH(i, 1, b, a)",
    "COALESCE(n, a)",
    "IFBLANK(n, a)",
    "n ?? a",
    "IFERROR(IF(a > 1, b, NA()), a * 1.5)",
    "IFNA(IF(a > 1, b, NA()), a * 1.5)",
    "MAX(a, b)",
    "MIN(b, a - 1)",
    "SUM(a, b)",
    "AVERAGE(a, b)",
    "MAX([a, b])",
    "[b, a][i]",
    "IF(c, IF(f, b, a), b)",
]


def _duckdb() -> Any:
    con = duckdb.connect()
    columns = ", ".join(f'?::{t} AS "{n}"' for n, (t, _) in TABLE.items())
    con.execute(f"CREATE TABLE t AS SELECT {columns}", [v for _, v in TABLE.values()])
    return con


def _scalar(formula: str) -> Any:
    program = formulane.compile(formula, SCHEMA)
    value = program.evaluate({n: v for n, (_, v) in TABLE.items()})
    return value


def _run(con: Any, formula: str, types: Any = None, dialect: str = "duckdb") -> Any:
    given = {} if types is None else {"column_types": types}
    sql = formulane.sql_select("t", {"v": formula}, SCHEMA, dialect=dialect, keep_columns=False,
                               **given)
    cur = con.execute(sql)
    row = cur.fetchone()
    if len(row) > 1 and row[1] is not None:
        return ErrorValue(row[1])
    return row[0]


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, ErrorValue) or want is None:
        return got == want
    return got is not None and not isinstance(got, ErrorValue) \
        and abs(Decimal(str(got)) - Decimal(str(want))) <= Decimal("1e-15")


@pytest.fixture(scope="module")
def con() -> Any:
    c = _duckdb()
    yield c
    c.close()


@pytest.mark.parametrize("with_types", [False, True], ids=["untyped", "typed"])
@pytest.mark.parametrize("formula", TRUNCATED)
def test_duckdb_joins_decimal_scales_without_truncating(con: Any, formula: str,
                                                        with_types: bool) -> None:
    want = _scalar(formula)
    got = _run(con, formula, TYPES if with_types else None)
    assert _same(got, want), (formula, got, want)


@pytest.mark.parametrize("with_types", [False, True], ids=["untyped", "typed"])
def test_a_branch_no_decimal_38_18_holds_is_num_not_an_abort(con: Any, with_types: bool) -> None:
    # 1e25 in a DECIMAL(38, 0) column joined with a DECIMAL(38, 4) one: the cast to one type
    # cannot hold it, so that row is #NUM! (the "No foreign exception" contract)
    types = TYPES if with_types else None
    assert _run(con, "IF(big > a, big, a * 2)", types) == ErrorValue("#NUM!")
    # the branch not taken is never an error
    assert _same(_run(con, "IF(big < a, big, a * 2)", types), Decimal("0.2286"))
    # also where the checker proves the formula cannot err (its error column is kept)
    assert _run(con, "IF(big > a, big, a)", types) == ErrorValue("#NUM!")


def test_one_scale_needs_no_cast(con: Any) -> None:
    """Known types that join losslessly, and integer literals beside a column, are not cast:
    the SQL reads the columns as they are."""
    sql = formulane.sql_select("t", {"v": "IF(c, b, i)"}, SCHEMA, keep_columns=False,
                               column_types=TYPES)
    assert "CAST" not in sql
    sql = formulane.sql_select("t", {"v": "IF(c, a, 0)"}, SCHEMA, keep_columns=False)
    assert "CAST" not in sql
    typed = {"a": "DECIMAL(18, 4)", "b": "DECIMAL(18, 0)"}
    sql = formulane.sql_select("t", {"v": "IF(c, a, b)"}, SCHEMA, keep_columns=False,
                               column_types=typed)
    assert "CAST" not in sql  # DECIMAL(18, 4) and DECIMAL(18, 0) join as DECIMAL(18, 4)
    # without types, the columns' scales may differ: cast (each in both branches of its
    # TYPEOF reading: the column may be a DOUBLE, read through its text)
    sql = formulane.sql_select("t", {"v": "IF(c, a, b)"}, SCHEMA, keep_columns=False)
    assert sql.count("DECIMAL(38, 18)") == 4 and sql.count("TYPEOF") == 2
    # a known type whose range DECIMAL(38, 18) holds is cast without a range test
    typed = {"a": "DECIMAL(18, 4)", "b": "DECIMAL(38, 0)"}
    sql = formulane.sql_select("t", {"v": "IF(c, a, b)"}, SCHEMA, keep_columns=False,
                               column_types=typed)
    assert 'CAST("a" AS DECIMAL(38, 18))' in sql and "ABS(\"a\")" not in sql


def test_mod_by_a_huge_divisor_stays_exact(con: Any) -> None:
    assert _same(_run(con, "MOD(x, 1e19)"), _scalar("MOD(x, 1e19)"))


def test_lambda_bodies_keep_their_branches_and_compile() -> None:
    """A range test in a lambda body would make it able to err, which refuses the lambda
    (E213): there branches are left as the engine joins them (a documented gap), so what
    compiled before still compiles."""
    for formula in ["MAP(xs, x => MAX(x, 0.5))", "MAP(xs, x => IF(x > 1, x, 0.25))"]:
        sql = formulane.sql_select("t", {"v": formula}, {"xs": "List[Number]"},
                                   keep_columns=False)
        body = sql.split("LAMBDA", 1)[1].split(' END AS "v"', 1)[0]
        assert "1e20" not in body, sql  # (the list's own range test sits outside it)


# --------------------------------------------------------------------- bad column_types


def test_unparseable_column_type_names_the_column_and_the_type() -> None:
    with pytest.raises(CheckError, match=re.escape("column_types['a']")) as info:
        formulane.sql_select("t", {"v": "a + 1"}, SCHEMA, column_types={"a": "DECIMAL(38,"})
    assert info.value.code == "E209" and "DECIMAL(38," in str(info.value)


def test_a_number_column_typed_as_text_is_refused() -> None:
    with pytest.raises(CheckError, match="not a number type") as info:
        formulane.sql_select("t", {"v": "a + 1"}, SCHEMA, column_types={"a": "VARCHAR"})
    assert info.value.code == "E209" and "'a'" in str(info.value)


@pytest.mark.parametrize("bad", [["a", "DOUBLE"], {"a": 5}, {"a": ""}, {3: "DOUBLE"}])
def test_column_types_must_map_names_to_type_texts(bad: Any) -> None:
    with pytest.raises(CheckError) as info:
        formulane.sql_select("t", {"v": "a + 1"}, SCHEMA, column_types=bad)
    assert info.value.code == "E209"


def test_program_to_sql_takes_column_types(con: Any) -> None:
    program = formulane.compile("IF(a > b, a, b)", SCHEMA)
    form = program.to_sql("duckdb", column_types=TYPES)
    row = con.execute(form.select("t", "v", "e")).fetchone()
    assert row[0] == Decimal("0.1143")


def test_float_mode_integer_columns_are_widened_when_typed() -> None:
    """Float mode reads columns as DOUBLE; an INTEGER column the caller names is widened
    before a product (DuckDB aborts the query on an INTEGER overflow)."""
    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE t AS SELECT 100000::INTEGER AS q")
        sql = formulane.sql_select("t", {"v": "q * q"}, {"q": "Number"}, numbers="float",
                                   keep_columns=False, column_types={"q": "INTEGER"})
        assert con.execute(sql).fetchone()[0] == 1e10
    finally:
        con.close()


# -------------------------------------------------- the golden cases, with and without types

def _joining_cases() -> list[int]:
    from backend_runner import CASES

    return [i for i, c in enumerate(CASES) if c.vars]


def _outcome(index: int, numbers: str, with_types: bool) -> Any:
    from backend_runner import CASES, NotApplicable, run_duckdb

    try:
        return run_duckdb(CASES[index], numbers, with_types)
    except (NotApplicable, Unsupported) as exc:
        return ("n/a", type(exc).__name__)
    except FormulaError as exc:
        return ("raised", exc.code)


@pytest.mark.parametrize("numbers", ["decimal", "float"])
def test_golden_cases_answer_the_same_with_column_types(numbers: str) -> None:
    from backend_runner import CASES

    indices = _joining_cases()
    assert len(indices) > 200  # every golden case with columns (the others read none)
    differ = []
    compared = 0
    for i in indices:
        without = _outcome(i, numbers, False)
        with_ = _outcome(i, numbers, True)
        if isinstance(without, tuple) and without and without[0] == "n/a":
            continue
        compared += 1
        same = with_ == without if isinstance(without, (ErrorValue, tuple, type(None))) \
            or isinstance(with_, (ErrorValue, tuple, type(None))) else _close(with_, without)
        if not same:
            differ.append((CASES[i].file, CASES[i].index, CASES[i].expr, without, with_))
    assert compared > 100
    assert not differ, differ[:10]


def _close(a: Any, b: Any) -> bool:
    if type(a) in (int, float, Decimal) and type(b) in (int, float, Decimal):
        x, y = Decimal(str(a)), Decimal(str(b))
        return abs(x - y) <= Decimal("1e-12") * max(Decimal(1), abs(y))
    return bool(a == b)


# ------------------------------------------------------------------------------ PostgreSQL


@pytest.mark.parametrize("with_types", [False, True], ids=["untyped", "typed"])
def test_postgres_runs_the_casts(postgres: Any, with_types: bool) -> None:
    from backend_runner import postgres_table

    pg = postgres
    types = postgres_table(pg, TABLE)
    ran = 0
    for formula in [*TRUNCATED, "IF(big > a, big, a * 2)"]:
        want = ErrorValue("#NUM!") if formula.startswith("IF(big") else _scalar(formula)
        try:
            got = _run(pg, formula, types if with_types else None, dialect="postgres")
        except Unsupported:
            continue  # a form PostgreSQL has no function for (the list aggregates)
        ran += 1
        assert _same(got, want), (formula, got, want)
    assert ran >= 15


# ------------------------------------------- known ranges: + - * without range tests

#: Columns whose types bound their range: sums and small products need no #NUM! test.
NARROW = {"p": ("DECIMAL(18, 4)", Decimal("12345.6789")), "q": ("DECIMAL(18, 2)", Decimal("-7.25")),
          "k": ("INTEGER", 123456), "w": ("DECIMAL(38, 4)", Decimal("50000000000000000000.5"))}
NARROW_SCHEMA = {n: "Number" for n in NARROW}
NARROW_TYPES = {n: t for n, (t, _) in NARROW.items()}


@pytest.mark.parametrize("formula", ["p + q", "p - q * 3", "p * q", "p * 1.5", "k * k + p",
                                     "IF(p > q, p, q * 2)", "MAX(p, q, k)", "p * q * k",
                                     "w + 1", "w * 2", "IF(p > 0, w, p)", "ROUND(p * q, 2) + k"])
def test_known_ranges_answer_as_the_scalar_engine_with_shorter_sql(formula: str) -> None:
    con = duckdb.connect()
    try:
        columns = ", ".join(f'?::{t} AS "{n}"' for n, (t, _) in NARROW.items())
        con.execute(f"CREATE TABLE t AS SELECT {columns}", [v for _, v in NARROW.values()])
        program = formulane.compile(formula, NARROW_SCHEMA)
        want = program.evaluate({n: v for n, (_, v) in NARROW.items()})
        if isinstance(want, Decimal) and abs(want) >= Decimal("1e20"):
            want = ErrorValue("#NUM!")  # DECIMAL(38, 18)'s range (docs/columnar.md)
        answers = []
        sizes = []
        for types in (None, NARROW_TYPES):
            given = {} if types is None else {"column_types": types}
            sql = formulane.sql_select("t", {"v": formula}, NARROW_SCHEMA, keep_columns=False,
                                       **given)
            sizes.append(len(sql))
            row = con.execute(sql).fetchone()
            answers.append(ErrorValue(row[1]) if len(row) > 1 and row[1] is not None else row[0])
        for got in answers:
            assert _same(got, want), (formula, answers, want)
        assert sizes[1] <= sizes[0], (formula, sizes)
    finally:
        con.close()
