"""Completion and signature help: golden cases at many cursor positions, broken input included.

A case is ``source with | at the cursor`` and the labels expected first (in order), or ``[]``
for no items; ``...`` after the labels means "more may follow"."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formulane.authoring.completion import complete, signature_help
from formulane.source import Span

from authoring_helpers import SCHEMA

VARIABLES = ["discount", "due", "flag", "name", "order", "orders", "price", "qty", "tags",
             "Unit Price", "xs"]

# (marked source, profile, expected first labels, complete list?)
GOLDEN: list[tuple[str, str, list[str], bool]] = [
    # an empty formula: variables first, then functions
    ("|", "strict", VARIABLES + ["ABS"], False),
    ("=|", "strict", VARIABLES[:2], False),
    # a prefix: variables and functions that start with it, any case
    ("pr|", "strict", ["price", "PRODUCT", "PROPER"], True),
    ("PR|", "strict", ["price", "PRODUCT", "PROPER"], True),
    ("ro|", "strict", ["ROMAN", "ROUND", "ROUNDDOWN", "ROUNDUP", "ROWS"], True),
    ("SU|M(1)", "strict", ["SUBSTITUTE", "SUBTOTAL", "SUM", "SUMIF", "SUMIFS", "SUMPRODUCT",
                           "SUMSQ", "SUMX2MY2", "SUMX2PY2", "SUMXMY2"], True),
    ("ROUND(pri|, 2)", "strict", ["price"], True),
    ("1 + q|", "strict", ["qty", "QUOTIENT"], True),  # QUARTILE.INC: a pack, off
    # arguments: what fits the parameter comes first
    ("ROUND(|", "strict", ["price", "qty", "Unit Price"], False),
    ("UPPER(|", "strict", ["name", "BASE"], False),
    ("ROUND(price, |", "strict", ["price", "qty", "Unit Price"], False),
    ("IF(flag, |", "strict", VARIABLES[:3], False),
    ("AND(|", "strict", ["flag"], False),
    # nullable: last among fitting names in strict, with the other fitting ones in excel
    ("ROUND(|", "excel", ["discount", "price", "qty", "Unit Price"], False),
    # record fields after a dot, nested, braced, after a lambda parameter
    ("order.|", "strict", ["customer", "Ship Date", "total"], True),
    ("order.to|", "strict", ["total"], True),
    ("order.customer.|", "strict", ["name", "tier"], True),
    ("order.customer.n|ame", "strict", ["name"], True),
    ("MAP(orders, o => o.|", "strict", ["id", "total"], True),
    ("MAP(orders, o => o.|)", "strict", ["id", "total"], True),
    ("SUM(MAP(orders, (o) => o.t|", "strict", ["total"], True),
    ("FILTER(orders, o => o.total > 10 and o.|", "strict", ["id", "total"], True),
    # Fields rank by what fits where the access stands: a Number after +, in ROUND's first slot.
    ("REDUCE(0, orders, (acc, o) => acc + o.|", "strict", ["total", "id"], True),
    ("ROUND(order.|", "strict", ["total", "customer", "Ship Date"], True),
    ("UPPER(order.customer.|", "strict", ["name", "tier"], True),
    ("LET(best, orders[1], best.|", "strict", ["id", "total"], True),
    ("orders[1].|", "strict", ["id", "total"], True),
    ("(order).cu|", "strict", ["customer"], True),
    ("price.|", "strict", [], True),  # not a record
    ("nothing.|", "strict", [], True),
    # dotted function names
    ("STDEV.|", "strict", ["STDEV.P", "STDEV.S"], True),
    ("CEILING.M|", "strict", ["CEILING.MATH"], True),
    # braces
    ("{Unit|", "strict", ["Unit Price"], True),
    ("{Unit Pr|ice} * 2", "strict", ["Unit Price"], True),
    ("{|", "strict", VARIABLES[:3], False),
    # locals: LET names and lambda parameters, with their inferred types
    ("LET(rate, 0.2, total, price * qty, tot|", "strict", ["total"], True),
    ("LET(rate, 0.2, r|", "strict", ["rate", "RADIANS"], False),
    # after '+': Numbers, Dates... first, then functions returning them; a maybe-blank last
    ("MAP(xs, x => x + |", "strict", ["x", "due", "price", "qty", "Unit Price", "ABS"], False),
    ("MAP(xs, LAMBDA(item, ite|", "strict", ["item"], True),
    # after a value: operators only
    ("price |", "strict", ["and", "or"], True),
    ("price a|", "strict", ["and"], True),
    ("flag o|", "strict", ["or"], True),
    # inside text or a comment: nothing
    ('UPPER("ab|', "strict", [], True),
    ('UPPER("ab|c")', "strict", [], True),
    ("price /* pr| */", "strict", [], True),
    ("price /* pr|", "strict", [], True),
    # broken input: still completes where it can
    ("IF(price > 1, order.| bad bad )))", "strict", ["customer", "Ship Date", "total"], True),
    ("SUM(1;2; pri|", "strict", ["price"], True),
    ("ROUND(price * (qty + |", "strict", ["due", "price", "qty", "Unit Price", "ABS"], False),
    ('IF(name = "x, pr|', "strict", [], True),  # the text is never closed: inside it
    ("SUM(1, 2)) + pr|", "strict", ["price", "PRODUCT", "PROPER"], True),
    ("#bad ro|", "strict", ["ROMAN", "ROUND", "ROUNDDOWN", "ROUNDUP", "ROWS"], True),
    ("xs[1 + |", "strict", ["due", "price"], False),
    ("[1, 2, |", "strict", VARIABLES[:2], False),
    ("price > 1 and not |", "strict", ["flag"], False),
]


def _split(marked: str) -> tuple[str, int]:
    cursor = marked.index("|")
    return marked[:cursor] + marked[cursor + 1:], cursor


@pytest.mark.parametrize(("marked", "profile", "expected", "whole"), GOLDEN,
                         ids=[f"{g[0]}-{g[1]}" for g in GOLDEN])
def test_completion_golden(marked: str, profile: str, expected: list[str], whole: bool) -> None:
    source, cursor = _split(marked)
    labels = [i.label for i in complete(source, cursor, SCHEMA, profile=profile)]
    if whole:
        assert labels == expected
    else:
        assert labels[:len(expected)] == expected, labels[:12]


def test_items_carry_types_signatures_docs_and_the_span_they_replace() -> None:
    source = "ROUND(pri, 2)"
    (item,) = complete(source, 9, SCHEMA)
    assert (item.label, item.kind, item.detail, item.insert_text) == (
        "price", "variable", "Number", "price")
    assert item.span == Span(6, 9)
    items = complete("rou", 3, SCHEMA)
    first = items[0]
    assert first.kind == "function" and first.insert_text == "ROUND("
    assert first.detail == "ROUND(number: Number, [num_digits: Number]) -> Number"
    assert "halves away from zero" in first.documentation
    assert complete("SU(1)", 2, SCHEMA)[0].insert_text == "SUBSTITUTE"  # '(' already there
    assert complete("P", 1, SCHEMA)[0].label == "price"
    pi = next(i for i in complete("P", 1, SCHEMA) if i.label == "PI")
    assert pi.insert_text == "PI()"
    braced = complete("{Un", 3, SCHEMA)[0]
    assert braced.insert_text == "{Unit Price}" and braced.span == Span(0, 3)
    spaced = complete("Un", 2, SCHEMA)[0]
    assert spaced.insert_text == "{Unit Price}"
    field = complete("order.", 6, SCHEMA)
    assert [(f.label, f.detail, f.insert_text) for f in field][1] == (
        "Ship Date", "Date", "{Ship Date}")


def test_local_types_are_inferred() -> None:
    items = complete("LET(rate, 0.2, label, \"x\", ", 27, SCHEMA)
    types = {i.label: i.detail for i in items if i.kind == "local"}
    assert types == {"rate": "Number", "label": "Text"}
    items = complete("MAP(orders, o => ", 17, SCHEMA)
    assert next(i for i in items if i.label == "o").detail == "Record{id: Text, total: Number}"


def test_profile_notes() -> None:
    strict = {i.label: i for i in complete("ROUND(", 6, SCHEMA, profile="strict")}
    excel = {i.label: i for i in complete("ROUND(", 6, SCHEMA, profile="excel")}
    assert "strict" in strict["discount"].documentation
    assert "excel profile" in excel["discount"].documentation
    assert "VALUE(x)" in strict["name"].documentation
    assert "converted to Number" in excel["name"].documentation
    assert strict["name"].sort_text > strict["price"].sort_text
    assert excel["name"].sort_text < excel["due"].sort_text  # Text converts, a Date does not


# ---- signature help --------------------------------------------------------------------------

SIGNATURES = [
    ("ROUND(|", "ROUND", 0, 0, "number: Number"),
    ("ROUND(price, |", "ROUND", 1, 1, "[num_digits: Number]"),
    ("ROUND(price,| 2)", "ROUND", 1, 1, "[num_digits: Number]"),
    ("SUM(1, 2, 3, |", "SUM", 3, 0, "number: Number...|List"),
    ("TEXTJOIN(\",\", TRUE, a, b, |", "TEXTJOIN", 4, 2, "text: Text...|List"),
    ("IF(flag, UPPER(|", "UPPER", 0, 0, "text: Text"),
    ("IF(flag, UPPER(name), |", "IF", 2, 2, "else: T"),
    ('UPPER("a, b|', "UPPER", 0, 0, "text: Text"),  # inside an unfinished text argument
    ("IF(flag, [1, 2, |", "IF", 1, 1, "then: T"),  # inside a list argument
    ("SUM((1 + 2), |", "SUM", 1, 0, "number: Number...|List"),
    ("MAP(xs, x => ROUND(x, |", "ROUND", 1, 1, "[num_digits: Number]"),
    ("LET(a, 1, b, |", "LET", 3, 1, "value: Any"),
    ("TEXTSPLIT(t, \",\", , |", "TEXTSPLIT", 3, 3, "[ignore_empty: Boolean]"),
]


@pytest.mark.parametrize(("marked", "function", "argument", "parameter", "param_label"),
                         SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_signature_help(marked: str, function: str, argument: int, parameter: int,
                        param_label: str) -> None:
    source, cursor = _split(marked)
    help_ = signature_help(source, cursor)
    assert help_ is not None
    assert (help_.function, help_.argument, help_.active_parameter) == (
        function, argument, parameter)
    sig = help_.signatures[help_.active_signature]
    a, b = sig.parameters[parameter].offsets
    assert sig.label[a:b] == param_label


def test_signature_help_details() -> None:
    help_ = signature_help("IF(flag, 1", 10)
    assert help_ is not None and len(help_.signatures) == 2
    assert help_.active_signature == 0
    help_ = signature_help("ROUND(1, ", 9)
    assert help_ is not None
    assert "optional (default 0)" in help_.signatures[0].parameters[1].documentation
    assert help_.to_dict()["active_parameter"] == 1
    assert signature_help("price + 1", 5) is None
    assert signature_help("NOSUCH(1, ", 10) is None
    assert signature_help("(1, ", 4) is None


# ---- robustness ------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.text(alphabet=st.sampled_from(list("()[]{},.;:+-*/^%&=<>!?\"' \n0123456789abxyzSUMIF"
                                             "ordetalpic_/*")), max_size=40), st.data())
def test_any_text_any_cursor_never_raises(source: str, data: st.DataObject) -> None:
    cursor = data.draw(st.integers(0, len(source)))
    for item in complete(source, cursor, SCHEMA):
        assert 0 <= item.span.start <= item.span.end <= len(source)
        assert item.span.start <= cursor <= max(item.span.end, cursor)
    signature_help(source, cursor)
