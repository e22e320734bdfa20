"""A program's SQL is rendered once, and that text is the text of its tree (issue 10, compile time).

`to_sql_forms` renders each expression once, without sqlglot's defensive deep copy, and keeps
the text (`SqlForm.texts`); `SqlForm.select` puts those texts into a rendered skeleton of the
query instead of rendering the whole tree again. Both shortcuts must give exactly the SQL the
tree renders to: checked here over every golden case the SQL backend compiles, in every dialect
(the trees are rendered again, with a copy, after the one-time render; so this also checks that
sqlglot's dialect rewrites left them as they were).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import formulane
from formulane import FormulaError
from formulane.columnar.sql import select
from formulane.columnar.sql.kit import DIALECTS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from case_runner import compiled_cases  # noqa: E402


def _programs() -> tuple[Any, ...]:
    return compiled_cases()



@pytest.mark.slow
@pytest.mark.parametrize("numbers", ["decimal", "float"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_rendered_once_is_the_tree_rendered(dialect: str, numbers: str) -> None:
    if dialect == "sqlite" and numbers == "decimal":
        pytest.skip("refused: SQLite has no DECIMAL (tests/columnar/test_sql_dialects.py)")
    checked = 0
    for program in _programs():
        try:
            form = program.to_sql(dialect, numbers)
        except FormulaError:
            continue
        assert form.texts is not None
        assert form.value_sql == form.value.sql(dialect), program.source
        assert form.error_sql == (None if form.error is None else form.error.sql(dialect))
        assert form.binding_sql() == tuple(e.sql(dialect) for _, e, _ in form.bindings)
        for args in ((("t",), {}), ((("s", "t"), "v", "e"), {"keep_columns": True})):
            table, *names = args[0]
            whole = select._select_of(select.table_expression(table),
                                     [(*(names or ["value", "error"]), form)],  # type: ignore[list-item]
                                     bool(args[1]), dialect, None).sql(dialect)
            assert form.select(*args[0], **args[1]) == whole, program.source
        checked += 1
    assert checked > 500


def test_select_of_several_formulas_is_the_tree_rendered() -> None:
    """`sql_select` with formulas sharing one binder: each binding once, in the skeleton."""
    schema = {"x": "Number", "t": "Text"}
    formulas = {"a": "ROUND(ROUND(x * 1.2, 2) * 1.1, 2)", "b": 'SUBSTITUTE(LEFT(t, 5), "a", "b") & "x"',
                "c": "IF(x > 3, x * 2, x - 1)"}
    programs = [formulane.compile(f, schema) for f in formulas.values()]
    for dialect in DIALECTS:
        forms = select.to_sql_forms([p.root for p in programs], dialect, None,
                                   formulane.Limits())
        outputs = [(name, name + "__error", form) for name, form in zip(formulas, forms)]
        query = select.build_select(select.table_expression("t"), outputs, True, dialect)
        whole = select._select_of(select.table_expression("t"), outputs, True, dialect,
                                 None).sql(dialect)
        assert query == whole
        assert query == formulane.sql_select("t", formulas, schema, dialect=dialect)


def test_an_output_name_with_a_nul_is_rendered_whole() -> None:
    """The skeleton marks its slots with NUL characters; a name holding one falls back to
    rendering the whole tree (the same text)."""
    form = formulane.compile("ROUND(x * 1.1, 2)", {"x": "Number"}).to_sql("duckdb")
    query = form.select("t", "v\x000\x00", "e")
    assert query == select._select_of(select.table_expression("t"), [("v\x000\x00", "e", form)],
                                     False, "duckdb", None).sql("duckdb")
