"""The SQL table's ``null_on_error`` flag, checked on DuckDB over rows that err.

An entry flagged ``null_on_error`` (`columnar.forms.form.Form`) lets the walk keep its result
``strict``: the query then writes no ``CASE WHEN error IS NULL THEN value END`` around the
value, so the flag must be true. Each case below calls a flagged function (its own errors, and
for lazy forms arguments that err) over rows some of which err; the test asserts the program
compiled strict (no wrapper), that at least one row errs (the check cannot pass vacuously),
that the errors are the scalar engine's, and that the value is NULL on every row that errs.
Every flagged entry needs a case here (`test_every_flagged_form_has_a_case`).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import duckdb
import pytest

import formulane
from formulane.columnar.forms import sql_table
from formulane.columnar.sql.select import to_sql_form
from formulane.columnar.sql.compiler import SqlCompiler
from formulane.interpreter import ir
from formulane.values import ErrorValue

D = Decimal
_D1, _D2 = dt.date(2024, 1, 5), dt.date(2023, 12, 31)

_XY = {"x": "Number", "y": "Number"}
#: rows where x / y errs (y = 0), x / (y - 1) errs (y = 1), x > 2, or nothing errs
_ROWS = [{"x": D(x), "y": D(y)} for x in (-1, 1, 3) for y in (0, 1, 2)]

#: (formula, schema, rows): rows as dicts of the schema's variables
CASES: list[tuple[str, dict[str, str], list[dict[str, Any]]]] = [
    ("AVERAGE(xs)", {"xs": "List[Number?]"},
     [{"xs": [D(1), D(2)]}, {"xs": []}, {"xs": [None]}, {"xs": [D(3), None]}]),
    ("AVERAGE(xs, ys)", {"xs": "List[Number]", "ys": "List[Number?]"},
     [{"xs": [D(1)], "ys": [None]}, {"xs": [], "ys": [None]}, {"xs": [], "ys": [D(2)]}]),
    ("MEDIAN(xs)", {"xs": "List[Number]"}, [{"xs": [D(1), D(5), D(2)]}, {"xs": []}]),
    ("VAR.P(xs)", {"xs": "List[Number?]"},
     [{"xs": [D(1), D(5), D(2)]}, {"xs": []}, {"xs": [None]}, {"xs": [D("0.1")] * 3}]),
    ("VAR.S(xs)", {"xs": "List[Number?]"},
     [{"xs": [D(1), D(5)]}, {"xs": [D(1)]}, {"xs": [D(2), None]}, {"xs": []}]),
    # not a plain column: the form writes its own range test, its value NULL there too
    ("VAR.S(xs, ABS(y))", {"xs": "List[Number]", "y": "Number"},
     [{"xs": [D(1), D(4)], "y": D(-2)}, {"xs": [], "y": D(3)}]),
    # a product past 1e308 (#NUM!: NULL there), an empty list (0), blanks skipped
    ("PRODUCT(xs)", {"xs": "List[Number?]"},
     [{"xs": [D("1e33")] * 10}, {"xs": [D("-1e33")] * 9 + [D("1e33")]}, {"xs": []},
      {"xs": [None]}, {"xs": [D(2), None, D(3)]}]),
    ("PRODUCT(xs, 2)", {"xs": "List[Number]"}, [{"xs": [D("1e33")] * 10}, {"xs": [D(4)]}]),
    # lists of different lengths (#VALUE!: NULL there, even where the key is found), a key
    # not found (#N/A), a blank if_not_found
    ("XLOOKUP(k, ks, vs)", {"k": "Text", "ks": "List[Text]", "vs": "List[Number]"},
     [{"k": k, "ks": ["a", "b"], "vs": vs} for k in ("a", "z")
      for vs in ([D(1), D(2)], [D(1)], [D(1), D(2), D(3)])]),
    ("XLOOKUP(k, ks, ts)", {"k": "Text", "ks": "List[Text]", "ts": "List[Text]"},
     [{"k": k, "ks": ["a", "b"], "ts": ts} for k in ("a", "z") for ts in (["p", "q"], ["p"])]),
    ('XLOOKUP(k, ks, vs, 0)', {"k": "Text", "ks": "List[Text]", "vs": "List[Number]"},
     [{"k": k, "ks": ["a", "b"], "vs": vs} for k in ("a", "z") for vs in ([D(1), D(2)], [D(1)])]),
    ('XLOOKUP(k, ks, vs, b)', {"k": "Text", "ks": "List[Text]", "vs": "List[Number]",
                               "b": "Number?"},
     [{"k": k, "ks": ["a", "b"], "vs": vs, "b": b} for k in ("a", "z")
      for vs in ([D(1), D(2)], [D(1)]) for b in (None, D(5))]),
    ('XLOOKUP(k, ["a", "b"], vs)', {"k": "Text", "vs": "List[Number]"},
     [{"k": k, "vs": vs} for k in ("a", "z") for vs in ([D(1), D(2)], [D(1)])]),
    ('XLOOKUP(k, ks, [1, 2])', {"k": "Text", "ks": "List[Text]"},
     [{"k": k, "ks": ks} for k in ("a", "z") for ks in (["a", "b"], ["a"])]),
    ("MIN(ds)", {"ds": "List[Date]"}, [{"ds": [_D1, _D2]}, {"ds": []}]),
    ("MAX(ds)", {"ds": "List[Date?]"}, [{"ds": [_D1, None]}, {"ds": []}, {"ds": [None]}]),
    ("INDEX(xs, 2)", {"xs": "List[Number?]"}, [{"xs": [D(1), None]}, {"xs": [D(1)]}, {"xs": []}]),
    ("INDEX(xs, n)", {"xs": "List[Number]", "n": "Number"},
     [{"xs": [D(1), D(2)], "n": D(n)} for n in (-1, 0, 1, 2, 3)]),
    ("INDEX(xs, 1, n)", {"xs": "List[Number]", "n": "Number"},
     [{"xs": [D(1), D(2)], "n": D(n)} for n in (-1, 0, 1, 2, 3)]),
    ("INDEX(xs, 3, 1)", {"xs": "List[Number]"}, [{"xs": [D(1), D(2)]}, {"xs": [D(1), D(2), D(3)]}]),
    ("INDEX(xss, r, c)", {"xss": "List[List[Number]]", "r": "Number", "c": "Number"},
     [{"xss": [[D(1), D(2)], [D(3)]], "r": D(r), "c": D(c)} for r in (-1, 1, 2, 3) for c in (0, 1, 2)]),
    ("INDEX(xss, 2, 2)", {"xss": "List[List[Number]]"},
     [{"xss": [[D(1), D(2)], [D(3)]]}, {"xss": [[D(1)], [D(3), D(4)]]}]),
    ("x / y", _XY, _ROWS),
    ("NA()", {}, [{}]),
    ('ERROR("no")', {}, [{}]),
    # lazy forms: an argument that errs (x / y with y = 0 is NULL there), in each position
    ("IF(x / y > 1, x, y)", _XY, _ROWS),
    ("IF(x > 1, x / y, y)", _XY, _ROWS),
    ("IF(x > 1, y, x / y)", _XY, _ROWS),
    ("IF(x > 1, x / y)", _XY, _ROWS),
    ("IF(x / y > 1, x / (y - 1))", _XY, _ROWS),
    ("AND(x > 0, x / y > 1)", _XY, _ROWS),
    ("AND(x > 0, y >= 0, x / y > 1)", _XY, _ROWS),
    ("OR(x < 0, x / y > 1)", _XY, _ROWS),
    ("x > 0 && x / y > 1", _XY, _ROWS),
    ("x < 0 || x / y > 1", _XY, _ROWS),
    ("b ?? x / y", {**_XY, "b": "Number?"}, [{**r, "b": b} for r in _ROWS for b in (None, D(4))]),
    ("COALESCE(b, c, x / y)", {**_XY, "b": "Number?", "c": "Number?"},
     [{**r, "b": b, "c": c} for r in _ROWS for b in (None, D(4)) for c in (None, D(5))]),
    ("IFBLANK(b, x / y)", {**_XY, "b": "Number?"},
     [{**r, "b": b} for r in _ROWS for b in (None, D(4))]),
    ("IFERROR(x / y, y / (x - 3))", _XY, _ROWS),
    ("IFERROR(x / y, NA())", _XY, _ROWS),
    ("IFNA(IF(x > 2, NA(), x / y), x / (y - 1))", _XY, _ROWS),
    ("IFNA(x / y, 0)", _XY, _ROWS),
    ("ERROR.TYPE(x / y)", _XY, _ROWS),
    ("ERROR.TYPE(IF(x > 2, NA(), x / y))", _XY, _ROWS),
    # the date forms (`forms.form.DATES_NULL_ON_ERROR`): each own error, and a constant one
    ("DATE(y, m, d)", {"y": "Number", "m": "Number", "d": "Number"},
     [{"y": D(y), "m": D(m), "d": D(d)} for y in ("-1", "99.5", "2024", "9999", "10000")
      for m in ("-30000", "1", "13") for d in ("0", "31", "1e16")]),
    ("DATE(y, 2, 29)", {"y": "Number"}, [{"y": D(y)} for y in ("-1", "1899", "2023", "10000")]),
    ("TIME(h, 30, s)", {"h": "Number", "s": "Number"},
     [{"h": D(h), "s": D(s)} for h in ("-1", "0.5", "23", "32767", "32768", "1e16")
      for s in ("-1801", "0", "40000")]),
    ("DATETIME(y, 1, 1, h, 0, 0)", {"y": "Number", "h": "Number"},
     [{"y": D(y), "h": D(h)} for y in ("-1", "2024", "9999") for h in ("-1", "12", "1e16")]),
    ("WEEKDAY(d, r)", {"d": "Date", "r": "Number"},
     [{"d": _D1, "r": D(r)} for r in ("1", "4", "11.5", "17", "18", "1e16")]),
    ("WEEKDAY(d, 4)", {"d": "Date"}, [{"d": _D1}]),
    ("SERIAL(d)", {"d": "Date"}, [{"d": dt.date(y, m, d)} for y, m, d in (
        (1800, 1, 1), (1899, 12, 30), (1899, 12, 31), (1900, 2, 28), (1900, 3, 1))]),
    ("FROMSERIAL(n)", {"n": "Number"},
     [{"n": D(n)} for n in ("-1", "0", "59.9", "60", "61.5", "2958465", "2958466", "1e16")]),
    ("EDATE(d, n)", {"d": "Date", "n": "Number"},
     [{"d": dt.date(2024, 1, 31), "n": D(n)} for n in ("1", "-24289", "-30000", "95000", "1e16")]),
    ("EOMONTH(d, n)", {"d": "Date", "n": "Number"},
     [{"d": dt.date(2024, 1, 31), "n": D(n)} for n in ("1", "-24289", "-30000", "95000", "1e16")]),
    ("DATEDIF(s, e, u)", {"s": "Date", "e": "Date", "u": "Text"},
     [{"s": s, "e": e, "u": u} for s, e in ((_D2, _D1), (_D1, _D2))
      for u in ("d", " MD ", "yd", "x")]),
    ('DATEDIF(s, DATE(2025, 3, 1), " md ")', {"s": "Date"},
     [{"s": dt.date(2025, m, 31)} for m in (1, 3)]),
    ("YEARFRAC(s, e, b)", {"s": "Date", "e": "Date", "b": "Number"},
     [{"s": _D2, "e": _D1, "b": D(b)} for b in ("-1", "0", "1.5", "4", "5", "1e16")]),
    ("NETWORKDAYS.INTL(a, b, 99)", {"a": "Date", "b": "Date"}, [{"a": _D2, "b": _D1}]),
    ("WORKDAY(d, n)", {"d": "Date", "n": "Number"},
     [{"d": _D1, "n": D(n)} for n in ("1", "-1", "-600000", "3000000", "1e16")]),
    ("WORKDAY.INTL(d, n, 11)", {"d": "Date", "n": "Number"},
     [{"d": _D1, "n": D(n)} for n in ("1", "-1", "-700000", "3000000", "1e16")]),
    ("WORKDAY(d, n, [DATE(2024, 1, 8), DATE(2024, 1, 9)])", {"d": "Date", "n": "Number"},
     [{"d": _D1, "n": D(n)} for n in ("1", "-1", "-700000", "3000000")]),
]

#: Number columns are DECIMAL(38, 4) (decimal mode) or DOUBLE (float mode)
_TYPES = {"Number": "DECIMAL(38, 4)", "Text": "VARCHAR", "Boolean": "BOOLEAN", "Date": "DATE"}


def _column_type(t: str, numbers: str) -> str:
    t = t.rstrip("?")
    if t.startswith("List[") and t.endswith("]"):
        return _column_type(t[5:-1], numbers) + "[]"
    if t == "Number" and numbers == "float":
        return "DOUBLE"
    return _TYPES[t]


def _calls(root: ir.IR) -> set[str]:
    names: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if type(node) is ir.Call:
            names.add(node.spec.name)
        stack.extend(ir.ir_children(node))
    return names


def _flagged() -> set[str]:
    return {key.split("(")[0] for key, form in sql_table.SQL.items() if form.null_on_error}


def test_every_flagged_form_has_a_case() -> None:
    covered: set[str] = set()
    for source, schema, _ in CASES:
        covered |= _calls(formulane.compile(source, schema).root)
    missing = _flagged() - covered
    assert not missing, f"flagged null_on_error without a case here: {sorted(missing)}"


#: what the walk writes itself (no table entry): a list read at a known position
_LISTS: list[dict[str, Any]] = [{"xs": [D(1), D(2)]}, {"xs": []}, {"xs": None}]
_NO_ROW: list[dict[str, Any]] = [{}]
WALK_CASES: list[tuple[str, dict[str, str], list[dict[str, Any]]]] = [
    *[(f"xs[{k}]", {"xs": "List[Number]?"}, _LISTS) for k in (0, 1, 2, 3)],
    ("[1, x / y, 3][2]", _XY, _ROWS),
    ("[1, 2, 3][4]", {}, _NO_ROW),
    ("xs[n]", {"xs": "List[Number]", "n": "Number"},
     [{"xs": [D(1), D(2)], "n": D(n)} for n in ("-1", "0", "1.5", "2", "2.9", "3")]),
]


@pytest.mark.parametrize("numbers", ["decimal", "float"])
@pytest.mark.parametrize("source,schema,rows", CASES, ids=[c[0] for c in CASES])
def test_value_is_null_wherever_the_error_is_set(source: str, schema: dict[str, str],
                                                 rows: list[dict[str, Any]],
                                                 numbers: str) -> None:
    program = formulane.compile(source, schema)
    assert _calls(program.root) & _flagged(), "the case calls no flagged form"
    _check(program, source, schema, rows, numbers)


@pytest.mark.parametrize("numbers", ["decimal", "float"])
@pytest.mark.parametrize("source,schema,rows", WALK_CASES, ids=[c[0] for c in WALK_CASES])
def test_walk_values_are_null_wherever_the_error_is_set(source: str, schema: dict[str, str],
                                                        rows: list[dict[str, Any]],
                                                        numbers: str) -> None:
    _check(formulane.compile(source, schema), source, schema, rows, numbers)


def _check(program: Any, source: str, schema: dict[str, str], rows: list[dict[str, Any]],
           numbers: str) -> None:
    # compiled strict: the query writes no CASE WHEN error IS NULL around the value (float
    # mode may add a non-finite test whose rows hold the infinity: then the wrapper stays)
    strict = SqlCompiler({}, numbers).run(program.root).strict
    assert strict or numbers == "float"
    form = to_sql_form(program.root, "duckdb", numbers)
    assert form.error is not None
    names = list(schema)
    con = duckdb.connect()
    try:
        columns = ", ".join(f'"{n}" {_column_type(schema[n], numbers)}' for n in names)
        con.execute(f'CREATE TABLE t ("__i" INTEGER, {columns})')
        con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * (len(names) + 1))})",
                        [[i, *[row[n] for n in names]] for i, row in enumerate(rows)])
        got = con.execute(form.select("t", "v", "e", keep_columns=True)
                          + ' ORDER BY "__i"').fetchall()
    finally:
        con.close()
    erring = 0
    for row, out in zip(rows, got):
        value, error = out[-2], out[-1]
        expected = program.evaluate(row)
        want = expected.code if type(expected) is ErrorValue else None
        assert error == want, f"{source} on {row}: error {error!r}, scalar {expected!r}"
        if error is not None:
            erring += 1
            assert value is None or not strict, f"{source} on {row}: value {value!r} beside {error}"
    assert erring, f"{source}: no row errs, nothing was checked"
