"""The stored form of a Program (JSON and pickle): reloads without a reparse, same values, same
tree; a newer language version is refused by name. Runs over the golden cases."""

from __future__ import annotations

import datetime as dt
import json
import pickle
from pathlib import Path

import pytest
import yaml

import formulane
from formulane.errors import FormulaError
from formulane.interpreter.program import program_from_json
from formulane.schema import LANGUAGE_VERSION, schema_from_json, schema_to_json

CASES_DIR = Path(__file__).parents[1] / "cases"


def golden() -> list[dict]:
    out = []
    for path in sorted(CASES_DIR.glob("*.yaml"))[:6]:
        for case in yaml.safe_load(path.read_text()) or []:
            if isinstance(case, dict) and "expr" in case and "value" in case and "vars" not in case:
                out.append({"file": path.name, **case})
    return out[:300]


CASES = golden()
NOW = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['file']}:{c['expr'][:40]}")
def test_stored_form_round_trips(case: dict) -> None:
    try:
        program = formulane.compile(case["expr"], profile=case.get("profile", "strict"))
    except FormulaError:
        pytest.skip("does not compile without its schema")
    data = json.loads(json.dumps(program.to_json()))
    assert data["language_version"] == LANGUAGE_VERSION
    again = program_from_json(data)
    assert again.tree == program.tree and str(again.type) == str(program.type)
    assert repr(again.evaluate({}, now=NOW)) == repr(program.evaluate({}, now=NOW))
    pickled = pickle.loads(pickle.dumps(program))
    assert repr(pickled.evaluate({}, now=NOW)) == repr(program.evaluate({}, now=NOW))


def test_schema_json_round_trip() -> None:
    schema = {"b": "Number?", "a": "List[Record{name: Text, due: Date}]"}
    data = schema_to_json(schema)
    assert list(data) == ["a", "b"]
    assert schema_to_json(schema_from_json(data)) == data


def test_newer_language_version_is_refused() -> None:
    data = formulane.compile("1 + 1").to_json()
    data["language_version"] = str(int(LANGUAGE_VERSION) + 1)
    with pytest.raises(FormulaError, match="language version"):
        program_from_json(data)
    with pytest.raises(FormulaError):
        program_from_json({"format": "formulane.program", "language_version": "1",
                           "source": "x", "schema": {}, "profile": "strict",
                           "tree": {"n": "Evil"}})
