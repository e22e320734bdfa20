"""The checked-in LALR table (grammar/formula_table.json) is the one formula.lark gives.

If this fails after an edit of formula.lark, regenerate the table with
``python -m formulane.grammar`` and commit both files. The parser never uses a table built from
another grammar text (it checks the grammar's SHA-256 and builds the table with Lark instead),
so a stale file costs start-up time, not correctness; these tests keep it from going stale.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from formulane.errors import ParseError
from formulane.grammar import ast
from formulane.grammar import parser as parser_module
from formulane.grammar import table
from test_grammar_errors import ERRORS
from test_grammar_parse import ALL_CASES

TABLE_PATH = Path(table.__file__).with_name(table.TABLE_FILE)


def test_checked_in_table_matches_the_grammar() -> None:
    fresh = table.dumps(table.build(table.grammar_text()))
    assert TABLE_PATH.read_text("utf-8") == fresh, (
        "formula_table.json is not the table of formula.lark: run `python -m formulane.grammar` "
        "and commit the file")


def test_the_build_does_not_depend_on_hash_order() -> None:
    """Lark numbers states in set-iteration order; `build` renumbers them, so the file is the
    same in every process (checked here against a second build in a fresh interpreter)."""
    import os
    import subprocess
    import sys

    code = ("from formulane.grammar import table as t; "
            "print(t.dumps(t.build(t.grammar_text())), end='')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONHASHSEED": "12345"}).stdout
    assert out == TABLE_PATH.read_text("utf-8")


def test_the_process_engine_uses_the_checked_in_table() -> None:
    engine = parser_module._get_engine()
    assert engine.fast and engine.cached


@functools.lru_cache(maxsize=1)
def _lark_table_engine() -> parser_module._Engine:
    """The fast engine on the table Lark computes now (no checked-in file)."""
    engine = parser_module._Engine(parser_module._grammar())
    assert engine.fast and not engine.cached
    return engine


@pytest.mark.parametrize(("source", "expected"), ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_lark_built_table_parses_the_same(source: str, expected: ast.Node) -> None:
    assert parser_module._parse_with(_lark_table_engine(), source, None) == expected


@pytest.mark.parametrize("source", [e[0] for e in ERRORS], ids=[json.dumps(e[0]) for e in ERRORS])
def test_lark_built_table_reports_the_same_problem(source: str) -> None:
    """The same diagnostic, word for word: the expected-token sets come from the table."""
    with pytest.raises(ParseError) as cached:
        parser_module.parse(source)
    with pytest.raises(ParseError) as built:
        parser_module._parse_with(_lark_table_engine(), source, None)
    assert built.value.render() == cached.value.render()


def test_a_table_of_another_grammar_is_not_used() -> None:
    grammar = table.grammar_text()
    assert table.load(grammar) is not None
    edited = grammar + "\n// an edit\n"
    assert table.load(edited) is None
    engine = parser_module._Engine(edited, data=table.load(edited))
    assert engine.fast and not engine.cached
    assert parser_module._parse_with(engine, "1 + 2 * 3", None) == parser_module.parse("1 + 2 * 3")


def _damaged(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(json.loads(TABLE_PATH.read_text("utf-8")))
    change(data)
    return data  # type: ignore[no-any-return]


DAMAGES = {
    "unknown format": lambda d: d.update(format=99),
    "state out of range": lambda d: d["states"][0].update(FUNCNAME=10_000),
    "rule out of range": lambda d: d["states"][0].update(FUNCNAME=-10_000),
    "start out of range": lambda d: d.update(start=-1),
    "kept child out of range": lambda d: d["rules"][0].__setitem__(3, [7]),
    "terminal not a pair": lambda d: d["terminals"].append(["X"]),
    "states not a list": lambda d: d.update(states={}),
}


@pytest.mark.parametrize("name", list(DAMAGES))
def test_a_damaged_table_is_refused_by_load(name: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    grammar = table.grammar_text()
    (tmp_path / table.TABLE_FILE).write_text(json.dumps(_damaged(DAMAGES[name])), "utf-8")
    monkeypatch.setattr(table, "__file__", str(tmp_path / "table.py"))
    assert table.load(grammar) is None
    (tmp_path / table.TABLE_FILE).write_text(TABLE_PATH.read_text("utf-8"), "utf-8")
    assert table.load(grammar) is not None  # the same place, undamaged: loaded


@pytest.mark.parametrize("alias", ["__class__", "_reject", "no_such_method", "__init__"])
def test_a_table_naming_anything_but_a_builder_method_is_rebuilt(alias: str) -> None:
    """Only `_Build`'s public methods can be called from a table; anything else makes the
    engine build the table again with Lark (and parse correctly)."""
    def rename(data: dict[str, Any]) -> None:
        for rule in data["rules"]:
            if rule[2] is not None:
                rule[2] = alias

    engine = parser_module._Engine(parser_module._grammar(),
                                   data=_damaged(rename))  # type: ignore[arg-type]
    assert engine.fast and not engine.cached
    assert parser_module._parse_with(engine, "SUM(1, 2)", None) == parser_module.parse("SUM(1, 2)")


def test_a_regex_that_does_not_compile_makes_the_engine_rebuild() -> None:
    def breaking(data: dict[str, Any]) -> None:
        data["terminals"][0][1] = "(unclosed"

    engine = parser_module._Engine(parser_module._grammar(),
                                   data=_damaged(breaking))  # type: ignore[arg-type]
    assert engine.fast and not engine.cached
