"""Smaller SQL for the operators, math and list forms, with the answers kept (issue 10's 40
characters per IR node beyond the query wrapper).

Each shortening here rests on a fact about the numbers, checked on DuckDB against the scalar
engine over columns of several DECIMAL scales:

- a product by a whole known ``k`` tests ``|x| < 1e20 / |k|`` when that bound is an exact short
  literal (``5e19``), with no margin: rows on either side of it;
- MOD by a known divisor keeps its sign test (the shorter ``(a % b + b) % b`` loses the 18th
  place on Spark, which types a sum of two DECIMAL(38, 18) as DECIMAL(38, 17)): the exact
  remainder over several scales and divisors, the guard against that shortening;
- VAR.P/VAR.S read DuckDB's LIST_VAR_* with no test for equal items (exactly 0 there);
- ERROR.TYPE of a column whose error is one CASE of codes writes each test's number.

Then the size: each formula's SQL within the 40 characters per IR node beyond the fixed query
wrapper (`bench/columnar_sql_size.py`'s second figure) it misses without these.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

import formulane
from formulane.values import ErrorValue

duckdb = pytest.importorskip("duckdb")

D = Decimal
SCALES = [0, 3, 9, 18]


def _run(formula: str, schema: dict[str, str], types: dict[str, str],
         rows: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    program = formulane.compile(formula, schema)
    names = list(schema)
    con = duckdb.connect()
    try:
        columns = ", ".join(f'"{n}" {types[n]}' for n in names)
        con.execute(f'CREATE TABLE t ("__i" INTEGER, {columns})')
        con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * (len(names) + 1))})",
                        [[i, *[row[n] for n in names]] for i, row in enumerate(rows)])
        form = program.to_sql("duckdb")
        got = con.execute(form.select("t", "v", "e", keep_columns=True)
                          + ' ORDER BY "__i"').fetchall()
    finally:
        con.close()
    if form.error is None:  # no error column
        return [(out[-1], None) for out in got]
    return [(out[-2], out[-1]) for out in got]


def _expect(formula: str, row: dict[str, Any], schema: dict[str, str] | None = None
            ) -> tuple[Any, str | None]:
    expected = formulane.compile(formula, schema).evaluate(row) if schema is not None \
        else formulane.evaluate(formula, row)
    if type(expected) is ErrorValue:
        return None, expected.code
    return expected, None


#: MOD's dividends: both signs, at most 18 places, an exact multiple, a blank
MOD_VALUES = ["7", "-7", "2.675", "-2.675", "0.000000001", "-0.000000001", "6", "0",
              "123456789.123456789", "-99999999999.5", "0.000000000000000001",
              "-0.000000000000000003"]


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("divisor", ["2", "-3", "0.7", "-0.25", "1000000007", "-4.5e9"])
def test_mod_by_a_known_divisor_is_exact(scale: int, divisor: str) -> None:
    formula = f"MOD(x, {divisor})"
    rows = [{"x": D(v)} for v in MOD_VALUES if -D(v).as_tuple().exponent <= scale]  # held
    got = _run(formula, {"x": "Number"}, {"x": f"DECIMAL(38, {scale})"}, rows)
    for row, (value, error) in zip(rows, got):
        want_value, want_error = _expect(formula, row)
        assert error == want_error, (formula, row, error, want_error)
        if isinstance(value, float):
            # a DECIMAL column of another scale than the divisor's: DuckDB types the
            # remainder of the raw operands (the COALESCE's other branch) DOUBLE, so the
            # exact remainder comes back as a DOUBLE; its shortest digits are the same
            value = D(repr(value))
        assert value == want_value, (formula, scale, row, value, want_value)


def test_mod_in_a_lambda_over_a_list() -> None:
    formula = "ALL(xs, x => MOD(x, 2) = 0)"
    rows = [{"xs": [D(2), D(4)]}, {"xs": [D(2), D(3)]}, {"xs": [D("-4"), D("2.5")]},
            {"xs": [D("-6.000")]}]
    got = _run(formula, {"xs": "List[Number]"}, {"xs": "DECIMAL(38, 3)[]"}, rows)
    for row, (value, error) in zip(rows, got):
        assert (value, error) == _expect(formula, row), row


@pytest.mark.parametrize("k,edge", [(2, "5e19"), (-4, "2.5e19"), (100000, "1e15")])
def test_product_by_a_whole_constant_at_its_exact_bound(k: int, edge: str) -> None:
    # a row just inside the bound is computed (exactly), the bound itself is #NUM!
    formula = f"x * {k}"
    bound = D(edge)
    inside = bound - D("0.000000000000000001")
    rows = [{"x": v} for v in (inside, -inside, bound, -bound, D("1.5"))]
    got = _run(formula, {"x": "Number"}, {"x": "DECIMAL(38, 18)"}, rows)
    for row, (value, error) in zip(rows, got):
        x = row["x"]
        if abs(x) < bound:
            # the DOUBLE comparison may round a row this close up to the bound: then #NUM!,
            # never an overflow; below it the value is the exact product
            assert error in (None, "#NUM!"), row
            if error is None:
                assert value == x * k, (row, value)
        else:
            assert (value, error) == (None, "#NUM!"), row
    assert got[4] == (D("1.5") * k, None)
    sql = formulane.compile(formula, {"x": "Number"}).to_sql("duckdb").select("t")
    assert f"< {edge}" in sql, sql  # the short exact bound, no 15-digit margin


@pytest.mark.parametrize("scale", [2, 10, 18])
def test_square_is_tested_on_its_operand(scale: int) -> None:
    # x * x tests |x| < 9.99999999999e9 (read exactly): below it the square is computed,
    # exactly for at most 9 places, in DOUBLE (rounded) for more, and never overflows the
    # DECIMAL(38, 18) even where the DOUBLE square rounds up; at and above it, #NUM!
    values = ["9999999999.98", "-9999999999.98", "9999999999.99", "10000000000", "3.25",
              "9999999999.989999999999", "-9999999999.989999999999", "0.123456789012"]
    rows = [{"x": D(v)} for v in values if -D(v).as_tuple().exponent <= scale]
    got = _run("x * x", {"x": "Number"}, {"x": f"DECIMAL(38, {scale})"}, rows)
    for row, (value, error) in zip(rows, got):
        x = row["x"]
        if abs(x) >= D("9999999999.99"):
            assert (value, error) == (None, "#NUM!"), row
            continue
        if abs(x) > D("9999999999.99") - D("0.00001"):
            # the comparison in DOUBLE may round a row this close up to the bound: #NUM!
            assert error in (None, "#NUM!"), row
            if error is not None:
                continue
        assert error is None, row
        if -x.normalize().as_tuple().exponent <= 9:
            assert value == x * x, (row, value)  # exact
        else:
            assert float(value) == pytest.approx(float(x * x), rel=1e-15), row
    sql = formulane.compile("x * x", {"x": "Number"}).to_sql("duckdb").select("t")
    assert "LATERAL" not in sql and 'ABS("x") < 9.99999999999e9' in sql, sql


def test_variance_of_equal_items_is_exactly_zero() -> None:
    rows = [{"xs": [D(v)] * n} for v in ("0.1", "123456.789", "-99999999999.999999999")
            for n in (1, 2, 3, 7, 50)]
    rows += [{"xs": [D("0.1"), D("0.2"), D("0.3")]}, {"xs": []}]
    for formula in ("VAR.P(xs)", "VAR.S(xs)"):
        got = _run(formula, {"xs": "List[Number]"}, {"xs": "DECIMAL(38, 18)[]"}, rows)
        for row, (value, error) in zip(rows, got):
            want_value, want_error = _expect(formula, row, {"xs": "List[Number]"})
            assert error == want_error, (formula, row)
            if want_value is not None and want_value == 0:
                assert value == 0, (formula, row, value)  # exactly, not 1e-17
            elif want_value is not None:
                assert value == pytest.approx(float(want_value), rel=1e-12), (formula, row)


#: formulas over 40 chars/node beyond the wrapper before this change (schema[, column_types])
SIZES: list[tuple[Any, ...]] = [
    ("ERROR.TYPE(x / y)", {"x": "Number", "y": "Number"}),
    # (a list of exact numbers, given so: one of unknown type is read through its items'
    # texts, about 400 characters: docs/columnar.md, "List columns in SQL decimal mode")
    ("VAR.P(xs)", {"xs": "List[Number]"}, {"xs": "DECIMAL(18, 2)[]"}),
    ("IF(f, 100000, 1) * 100000", {"f": "Boolean"}),
]
#: and smaller, still over 40 per node: x * x 382 -> 292 characters (3 nodes)


def _nodes(root: Any) -> int:
    from formulane.interpreter import ir

    return sum(1 for _ in ir.ir_walk(root))


@pytest.mark.parametrize("case", SIZES, ids=[s[0] for s in SIZES])
def test_within_40_chars_per_node_beyond_the_wrapper(case: tuple[Any, ...]) -> None:
    formula, schema, *types = case
    program = formulane.compile(formula, schema)
    form = program.to_sql("duckdb", column_types=types[0] if types else None)
    sql = form.select("t")
    wrapper = len('SELECT  AS "value" FROM "t"') + (
        0 if form.error is None else len(', AS "error"') + 1)
    assert (len(sql) - wrapper) / _nodes(program.root) <= 40, sql
