"""Formulas embedded in YAML and JSON configs: found under the configured keys and mapped back
to document offsets character by character, escapes and block styles included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from formulane.authoring.documents import SchemaFiles, document_kind, formula_regions

YAML = """\
rules:
  - name: plain
    formula: IF(order.total > 100, 0.1, 0)
  - name: double
    formula: "UPPER(\\"x\\") & \\u00e9"
  - name: single
    formula: 'UPPER(name) & ''!'''
  - formula: |
      SUM(
        1, 2)
  - formula: |-
      LET(x, 1,
        x + 1)
  - formula: >
      a +
      b

      + c
  - formula: plain multi
      line text
  - formula: "double
      folded \\
      joined"
  - nested:
      expr: qty * 2
  - formula: 12
---
formula: second document
"""


def _visible(text: str, offsets: tuple[int, ...]) -> str:
    return "".join(text[o] for o in offsets[:-1])


def test_yaml_regions_decode_and_map_exactly() -> None:
    regions = formula_regions(YAML, "yaml", ["formula", "expr"])
    loaded = list(yaml.safe_load_all(YAML))
    expected = [r["formula"] if "formula" in r else r["nested"]["expr"]
                for r in loaded[0]["rules"] if isinstance(r.get("formula", ""), str)]
    expected.append(loaded[1]["formula"])
    assert [r.text for r in regions] == expected
    assert all(r.exact for r in regions)
    styles = [r.style for r in regions]
    assert styles == ["plain", "double", "single", "literal", "literal", "folded", "plain",
                      "double", "plain", "plain"]
    keys = [r.key for r in regions]
    assert keys[0] == "rules[0].formula" and keys[8] == "rules[8].nested.expr"
    for region in regions:
        for i, ch in enumerate(region.text):
            source_char = YAML[region.offsets[i]]
            # a decoded character comes from itself, an escape, or a folded line break
            assert source_char == ch or source_char in "\\'\n" or (ch == " " and source_char
                                                                   in "\n ")
    plain = regions[0]
    assert YAML[plain.offsets[0]:plain.offsets[-1]] == plain.text
    double = regions[1]
    assert _visible(YAML, double.offsets) == 'UPPER(\\x\\) & \\'
    assert double.from_document(double.offsets[7]) == 7


def test_json_regions() -> None:
    text = json.dumps({"rules": [{"formula": 'UPPER("a") & \u00e9 & \U0001F600', "x": 1},
                                 {"formula": "1 + ", "other": "x"}], "formula": 3},
                      ensure_ascii=True)
    regions = formula_regions(text, "json")
    assert [r.text for r in regions] == ['UPPER("a") & \u00e9 & \U0001F600', "1 + "]
    assert [r.key for r in regions] == ["rules[0].formula", "rules[1].formula"]
    first = regions[0]
    assert text[first.offsets[6]] == "\\"  # the escaped quote starts at its backslash
    assert text[first.offsets[-1]] == '"'
    # unfinished documents still give their finished formulas
    assert [r.text for r in formula_regions(text[:70], "json")] == [regions[0].text]


def test_kinds_and_formula_files() -> None:
    assert [document_kind(p) for p in ("a.formula", "b.YAML", "c.yml", "d.json", "e.txt")] == [
        "formula", "yaml", "yaml", "json", ""]
    (region,) = formula_regions("SUM(1, 2)\n", "formula")
    assert region.text == "SUM(1, 2)\n" and region.to_document(4) == 4
    assert formula_regions("key: [unclosed", "yaml") == []


def test_schema_files(tmp_path: Path) -> None:
    files = SchemaFiles()
    doc = tmp_path / "rules.yaml"
    assert files.schema_for(str(doc)) == ({}, "")
    schema_file = tmp_path / "formulane.schema.json"
    schema_file.write_text('{"price": "Number", "tags": "List[Text]"}')
    schema, problem = files.schema_for(str(doc))
    assert problem == "" and str(schema["tags"]) == "List[Text]"
    schema_file.write_text('{"price": "Nope"}')
    import os

    os.utime(schema_file, (1, 1))
    schema, problem = files.schema_for(str(doc))
    assert schema == {} and "Nope" in problem
    schema_file.write_text("[1]")
    os.utime(schema_file, (2, 2))
    assert "JSON object" in files.schema_for(str(doc))[1]


@pytest.mark.parametrize("style", ["plain", "literal"])
def test_region_lookup_outside(style: str) -> None:
    text = "formula: a + b\n" if style == "plain" else "formula: |\n  a + b\n"
    (region,) = formula_regions(text, "yaml")
    assert region.from_document(0) is None
    assert region.from_document(region.offsets[0]) == 0
