"""`build_select` keeps each rendered query skeleton by its shape (issue 10, compile time).

The skeleton (SELECT ... AS "value", ... FROM "t" CROSS JOIN LATERAL ...) depends only on the
dialect, the table, ``keep_columns``, the output names, which outputs have an error column and
the bindings' names and levels; a kept skeleton filled with another program's texts must give
exactly the query the whole tree renders to. Checked over programs of every shape (with and
without bindings and error columns), tables given as a name, a tuple and a sqlglot Table, every
dialect, asked twice and interleaved (a miss, then hits), and several formulas in one query.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlglot import exp

import formulane
from formulane.columnar.sql import select
from formulane.columnar.sql.kit import DIALECTS

SCHEMA = {"x": "Number", "y": "Number", "t": "Text"}
FORMULAS = ["x + 1", "x * 2", "ROUND(x * 1.1, 2)", "ROUND(y * 1.2, 3)", "1 / x", "2 / y",
            'UPPER(LEFT(TRIM(t), 5) & "x")', "IF(x > 3, x * 2, x - 1)", "LEN(t)", "x"]
TABLES: list[Any] = ["t", ("s", "t"), ("c", "s", "orders"),
                     exp.Table(this=exp.to_identifier("u", quoted=True),
                               db=exp.to_identifier("s"))]


def _whole(table: Any, names: tuple[str, str], form: Any, keep: bool, dialect: str) -> str:
    return select._select_of(select.table_expression(table), [(*names, form)], keep, dialect,
                            None).sql(dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_kept_skeletons_give_the_whole_tree(dialect: str) -> None:
    select._SKELETONS.clear()
    forms = []
    for src in FORMULAS:
        try:
            forms.append(formulane.compile(src, SCHEMA).to_sql(dialect))
        except formulane.FormulaError:
            continue
    assert len(forms) >= 6
    for _ in range(2):  # misses first, then every shape again from what was kept
        for form in forms:
            for table in TABLES:
                for keep in (False, True):
                    for names in (("value", "error"), ("v", "v_err")):
                        got = form.select(table, *names, keep_columns=keep)
                        assert got == _whole(table, names, form, keep, dialect)
    assert select._SKELETONS  # shapes were kept


def test_several_formulas_in_one_query() -> None:
    select._SKELETONS.clear()
    for dialect in DIALECTS:
        for formulas in ({"a": "ROUND(x * 1.1, 2)", "b": "1 / y", "c": "x + 1"},
                         {"a": "x + 2", "b": "ROUND(y * 1.3, 1)", "c": "2 / x"},
                         {"p": "ROUND(x * 1.1, 2)", "q": "ROUND(y * 1.1, 2)"}):
            programs = [formulane.compile(f, SCHEMA) for f in formulas.values()]
            for _ in range(2):
                forms = select.to_sql_forms([p.root for p in programs], dialect, None,
                                           formulane.Limits())
                outputs = [(name, name + "__error", form)
                           for name, form in zip(formulas, forms)]
                for keep in (False, True):
                    got = select.build_select(select.table_expression("t"), outputs, keep,
                                             dialect)
                    want = select._select_of(select.table_expression("t"), outputs, keep,
                                            dialect, None).sql(dialect)
                    assert got == want


def test_the_kept_skeletons_are_bounded() -> None:
    select._SKELETONS.clear()
    form = formulane.compile("ROUND(x * 1.1, 2)", SCHEMA).to_sql("duckdb")
    for i in range(select._SKELETONS_MAX + 10):
        assert form.select(f"t{i}") == _whole(f"t{i}", ("value", "error"), form, False,
                                              "duckdb")
    assert 0 < len(select._SKELETONS) <= select._SKELETONS_MAX
