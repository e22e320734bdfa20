"""Hover, the type of a selection, and diagnostics for editors."""

from __future__ import annotations

import pytest

from formulane.authoring.hover import diagnose, hover, type_at

from authoring_helpers import SCHEMA

SOURCE = "ROUND(price * 2, 1) + order.total + SUM(MAP(xs, x => x * (discount ?? 0)))"


@pytest.mark.parametrize(("needle", "kind", "title"), [
    ("ROUND", "function", "ROUND(number: Number, [num_digits: Number]) -> Number"),
    ("price", "variable", "price: Number"),
    ("order", "variable", "order: Record{{Ship Date}: Date, customer: Record{name: Text, tier: "
                          "Text}, total: Number}"),
    ("total", "field", "total: Number"),
    ("x *", "local", "x: Number"),
    ("discount", "variable", "discount: Number?"),
    ("* 2", "expression", "price * 2: Number"),
    ("+ order", "expression", "ROUND(price * 2, 1) + order.total: Number"),
    ("MAP", "function", "MAP(list: List[T], fn: (T) => U) -> List[U]\nMAP(list1: List[T], "
                        "list2: List[U], fn: (T, U, ) => V) -> List[V]"),
])
def test_hover(needle: str, kind: str, title: str) -> None:
    info = hover(SOURCE, SOURCE.index(needle), SCHEMA)
    assert info is not None
    assert info.kind == kind
    if kind == "function":
        assert info.title.split("\n")[0] == title.split("\n")[0]
        assert "```formula" in info.markdown()
    else:
        assert info.title == title


def test_hover_docs_and_edges() -> None:
    info = hover(SOURCE, SOURCE.index("discount"), SCHEMA)
    assert info is not None and "may be blank" in info.documentation
    assert hover("1 /* note */ + 2", 4, SCHEMA) is None
    assert hover("   ", 1, SCHEMA) is None
    # broken: the token still says what it can
    broken = hover("ROUND(price, ", 7, SCHEMA)
    assert broken is not None and broken.title == "price: Number"
    assert hover("ROUND(", 1, SCHEMA).kind == "function"  # type: ignore[union-attr]
    assert hover("nothing + (", 2, SCHEMA) is None
    untyped = hover("UPPER(1) & x", 0, {})
    assert untyped is not None and untyped.kind == "function"


def test_type_of_selection() -> None:
    start = SOURCE.index("price * 2")
    span, t = type_at(SOURCE, start, start + len("price * 2"), SCHEMA)  # type: ignore[misc]
    assert SOURCE[span.start:span.end] == "price * 2" and str(t) == "Number"
    # a selection that is not a whole expression: the smallest expression covering it
    span, t = type_at(SOURCE, start + 2, start + 9, SCHEMA)  # type: ignore[misc]
    assert SOURCE[span.start:span.end] == "price * 2"
    span, t = type_at(SOURCE, 0, len(SOURCE), SCHEMA)  # type: ignore[misc]
    assert (span.start, span.end, str(t)) == (0, len(SOURCE), "Number")
    assert type_at("1 +", 0, 1, SCHEMA) is None
    span, t = type_at("UPPER(1)", 6, 7, SCHEMA)  # type: ignore[misc]
    assert str(t) == "Number"


def test_diagnose() -> None:
    assert diagnose(SOURCE, SCHEMA) == []
    (problem,) = diagnose("UPPER(price) & pric", SCHEMA)[:1]
    assert problem.code == "E202" and problem.span is not None
    several = diagnose("UPPER(price) & nope & UPPER(qty)", SCHEMA)
    assert [d.code for d in several] == ["E202", "E201", "E202"]
    (parse,) = diagnose("SUM(1,", SCHEMA)
    assert parse.code == "E102"
    (warning,) = diagnose("-2^2", SCHEMA, profile="excel")
    assert warning.severity == "warning" and warning.code == "E206"
    (limit,) = diagnose("(" * 300 + "1" + ")" * 300, SCHEMA)
    assert limit.code == "E403"
    (schema_problem,) = diagnose("1", {"x": "Nope"})
    assert schema_problem.code == "E209"
