"""Program.explain: golden explanations, laziness shown, errors traced to their origin."""

from __future__ import annotations

import json

import formulane

GOLDEN = [
    ("IF(x > 0, 10 / (x - 2), 1/0)", {"x": 2}, """\
IF(x > 0, 10 / (x - 2), 1/0)  : Number = #DIV/0! (division by zero)
  x > 0  : Boolean = TRUE
    x  : Number = 2
    0  : Number = 0
  10 / (x - 2)  : Number = #DIV/0! (division by zero)  <- error arises here
    10  : Number = 10
    (x - 2)  : Number = 0
      x  : Number = 2
      2  : Number = 2
  1/0  : Number = (not evaluated)
    1  : Number = (not evaluated)
    0  : Number = (not evaluated)"""),
    ("SUM(MAP(xs, v => v * 2))", {"xs": [1, 2, 3]}, """\
SUM(MAP(xs, v => v * 2))  : Number = 12
  MAP(xs, v => v * 2)  : List[Number] = [2, 4, 6]
    xs  : List[Number] = [1, 2, 3]
    v => v * 2  : (Number) => Number = (called 3 times)
      v * 2  : Number = [2, 4, 6] (3 calls)
        v  : Number = [1, 2, 3] (3 calls)
        2  : Number = [2, 2, 2] (3 calls)"""),
    ('LET(t, price * qty, IF(t > 100, "big", "small"))', {"price": 30, "qty": 4}, """\
LET(t, price * qty, IF(t > 100, "big", "small"))  : Text = "big"
  price * qty  : Number = 120
    price  : Number = 30
    qty  : Number = 4
  IF(t > 100, "big", "small")  : Text = "big"
    t > 100  : Boolean = TRUE
      t  : Number = 120
      100  : Number = 100
    "big"  : Text = "big"
    "small"  : Text = (not evaluated)"""),
]


def test_golden_explanations() -> None:
    for source, variables, expected in GOLDEN:
        program = formulane.compile(source, formulane.schema.infer_schema(variables))
        assert program.explain(variables).to_text() == expected, source


def test_explain_agrees_with_evaluate_and_serialises() -> None:
    program = formulane.compile("ROUND(a / b, 2) & \"!\"", {"a": "Number", "b": "Number"})
    explanation = program.explain({"a": 1, "b": 3})
    assert explanation.result == program.evaluate({"a": 1, "b": 3})
    data = json.loads(explanation.to_json())
    assert data["tree"]["type"] == "Text" and data["tree"]["children"]


def test_error_origin() -> None:
    program = formulane.compile("1 + [1, 2][x]", {"x": "Number"})
    origin = program.explain({"x": 5}).error_origin()
    assert origin is not None and origin.source == "[1, 2][x]"
    assert program.explain({"x": 1}).error_origin() is None
