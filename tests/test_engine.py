"""The public contract of the formula lane: compile/evaluate, values in and out, schemas,
limits, caching, diagnostics. Each test states one promise other code relies on."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest
from pydantic import BaseModel

import formulane
from formulane import CheckError, ErrorValue, EvalError, FormulaError, LimitExceeded, Limits


def test_compile_returns_program_with_type_and_cost() -> None:
    program = formulane.compile("ROUND(price * qty, 2)", {"price": "Number", "qty": "Number"})
    assert str(program.type) == "Number"
    assert program.cost_bound > 0
    assert program.evaluate({"price": Decimal("9.99"), "qty": 3}) == Decimal("29.97")
    assert set(program.uses) == {"price", "qty"}


def test_values_out_are_python_types() -> None:
    assert formulane.evaluate("1 + 1") == Decimal(2)
    assert isinstance(formulane.evaluate("1 + 1"), Decimal)
    assert formulane.evaluate('"a" & "b"') == "ab"
    assert formulane.evaluate("1 < 2") is True
    assert formulane.evaluate("[1, 2]") == [Decimal(1), Decimal(2)]
    assert formulane.evaluate("x", {"x": {"a": 1}}) == {"a": Decimal(1)}
    assert formulane.evaluate("x", {"x": dt.date(2024, 1, 2)}) == dt.date(2024, 1, 2)
    assert formulane.evaluate("BLANK()") is None
    err = formulane.evaluate("1/0")
    assert isinstance(err, ErrorValue) and err.code == "#DIV/0!"
    assert err.span is not None and (err.span.start, err.span.end) == (0, 3)


def test_values_in_are_converted_exactly() -> None:
    # floats are taken by their shortest repr, so 0.1 is 0.1
    assert formulane.evaluate("x + 0.2 = 0.3", {"x": 0.1}) is True
    assert formulane.evaluate("x * 3", {"x": 10**20}) == Decimal(3 * 10**20)
    assert formulane.evaluate("x", {"x": [1, 2.5]}) == [Decimal(1), Decimal("2.5")]
    aware = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone.utc)
    assert formulane.evaluate("x", {"x": aware}) == aware
    assert formulane.evaluate("x", {"x": dt.timedelta(hours=1)}) == dt.timedelta(hours=1)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, Decimal("NaN"), Decimal("Infinity"),
                                 object(), b"bytes", {1, 2}, 1e308 * 10])
def test_values_in_refused_name_the_variable(bad: object) -> None:
    with pytest.raises(EvalError) as info:
        formulane.evaluate("x", {"x": bad})
    assert "x" in info.value.message


def test_naive_datetime_refused() -> None:
    with pytest.raises(EvalError, match="time zone"):
        formulane.evaluate("x", {"x": dt.datetime(2024, 1, 1)})


def test_schema_forms_agree() -> None:
    class Order(BaseModel):
        price: Decimal
        qty: int
        note: str | None = None

    by_strings = formulane.compile("price * qty", {"price": "Number", "qty": "Number"})
    by_model = formulane.compile("price * qty", Order)
    assert by_strings.type == by_model.type
    assert by_model.evaluate({"price": 2, "qty": 3}) == 6
    assert str(formulane.compile("note", Order).type) == "Text?"


def test_schema_types_checked_at_evaluate() -> None:
    program = formulane.compile("x + 1", {"x": "Number"})
    with pytest.raises(EvalError) as info:
        program.evaluate({"x": "1"})
    assert info.value.code == "E303"
    with pytest.raises(EvalError) as info:
        program.evaluate({})
    assert info.value.code == "E302"
    with pytest.raises(EvalError):
        program.evaluate({"x": True})  # a bool is not a number


def test_bad_schema_is_a_check_error() -> None:
    with pytest.raises(CheckError) as info:
        formulane.compile("x", {"x": "Nmber"})
    assert info.value.code == "E209"


def test_cache_returns_the_same_program() -> None:
    a = formulane.compile("1 + x", {"x": "Number"})
    b = formulane.compile("1 + x", {"x": "Number"})
    assert a is b
    assert formulane.compile("1 + x", {"x": "Number"}, profile="excel") is not a


def test_cache_key_of_a_dict_schema() -> None:
    # The key is the dict's items in their own order (cheap): the same schema in another order
    # compiles once more, to a program that answers the same.
    xy = formulane.compile("x - y", {"x": "Number", "y": "Number"})
    yx = formulane.compile("x - y", {"y": "Number", "x": "Number"})
    assert xy.evaluate({"x": 5, "y": 2}) == yx.evaluate({"x": 5, "y": 2}) == 3
    assert formulane.compile("x - y", {"y": "Number", "x": "Number"}) is yx
    # A value that is no type cannot be a key: the schema check words the error.
    for bad, words in (({"a": ["Number"]}, "schema field 'a'"), ({1: "Number"}, "schema name 1"),
                       ({"a": {"b": "Number"}}, "schema field 'a'")):
        with pytest.raises(CheckError) as info:
            formulane.compile("1", bad)
        assert info.value.code == "E209" and words in str(info.value)


def test_diagnostic_rendering_and_dict() -> None:
    with pytest.raises(CheckError) as info:
        formulane.compile('1 & UPPER(42)')
    err = info.value
    if err.code == "E202":  # UPPER exists once the text family is in
        rendered = err.render()
        assert "^^" in rendered and "1:11" in rendered
        assert err.fixes and err.fixes[0].apply("1 & UPPER(42)").startswith("1 & UPPER(TEXT(42")
    data = err.to_dict()
    assert set(data) >= {"code", "message", "span", "hint", "fixes", "rendered"}
    assert data["span"]["line"] == 1


def test_fix_its_are_machine_applicable() -> None:
    source = "x + 1"
    with pytest.raises(CheckError) as info:
        formulane.compile(source, {"x": "Number?"})
    fixed = info.value.fixes[0].apply(source)
    assert formulane.evaluate(fixed, {"x": None}, schema={"x": "Number?"}) == 1


def test_unknown_name_suggests() -> None:
    with pytest.raises(CheckError) as info:
        formulane.compile("pryce * 2", {"price": "Number"})
    assert info.value.code == "E201"
    assert info.value.fixes[0].replacement == "price"


def test_narrowing_with_isblank() -> None:
    schema = {"x": "Number?"}
    program = formulane.compile("IF(ISBLANK(x), 0, x * 2)", schema)
    assert str(program.type) == "Number"
    assert program.evaluate({"x": None}) == 0
    assert program.evaluate({"x": 4}) == 8
    assert formulane.evaluate("not ISBLANK(x) and x > 1", {"x": 3}, schema=schema) is True


def test_lazy_forms_do_not_evaluate_untaken_branches() -> None:
    assert formulane.evaluate("IF(TRUE, 1, 1/0)") == 1
    assert formulane.evaluate("AND(FALSE, 1/0 = 1)") is False
    assert formulane.evaluate("OR(TRUE, 1/0 = 1)") is True
    err = formulane.evaluate("AND(1/0 = 1, FALSE)")
    assert isinstance(err, ErrorValue) and err.code == "#DIV/0!"


def test_clock_is_injected() -> None:
    now = dt.datetime(2024, 3, 1, 12, tzinfo=dt.timezone.utc)
    assert formulane.evaluate("NOW()", now=now) == now
    assert formulane.evaluate("NOW()", now=now) == formulane.evaluate("NOW()", now=now)


# ------------------------------------------------------------------------------------- limits


def test_source_length_limit() -> None:
    with pytest.raises(LimitExceeded) as info:
        formulane.compile("1" + "+1" * 5000)
    assert info.value.code in ("E401", "E402")


def test_deep_nesting_is_a_clean_limit_error() -> None:
    source = "(" * 100_000 + "1" + ")" * 100_000
    with pytest.raises(LimitExceeded):
        formulane.compile(source, limits=Limits(max_source_length=10**6))


def test_long_sum_is_a_clean_limit_error() -> None:
    source = "+".join(["1"] * 100_000)
    with pytest.raises(LimitExceeded):
        formulane.compile(source, limits=Limits(max_source_length=10**6))


def test_limits_are_configurable() -> None:
    with pytest.raises(LimitExceeded):
        formulane.compile("1+1+1+1", limits=Limits(max_nodes=3))
    assert formulane.compile("1+1+1+1", limits=Limits(max_nodes=50)).evaluate() == 4
    with pytest.raises(ValueError):
        Limits(max_depth=10_000)


def test_runtime_meter_stops_runaway_and_iferror_cannot_catch_it() -> None:
    limits = Limits(max_cost=10_000)
    source = "SUM(MAP(SEQUENCE(n), x => SUM(MAP(SEQUENCE(n), y => x * y))))"
    program = formulane.compile(source, {"n": "Number"}, limits=limits)
    assert program.metered
    assert program.evaluate({"n": 3}) == 36
    with pytest.raises(LimitExceeded):
        program.evaluate({"n": 1000})
    wrapped = formulane.compile(f"IFERROR({source}, 0)", {"n": "Number"}, limits=limits)
    with pytest.raises(LimitExceeded):
        wrapped.evaluate({"n": 1000})


def test_sizes_checked_before_allocating() -> None:
    with pytest.raises(LimitExceeded):
        formulane.evaluate('REPT("a", 10^9)')
    with pytest.raises(LimitExceeded):
        formulane.evaluate("SEQUENCE(10^8)")
    with pytest.raises(LimitExceeded):
        formulane.evaluate('IFERROR(REPT("a", 10^9), "x")')


def test_concat_limit() -> None:
    limits = Limits(max_text_length=10)
    with pytest.raises(LimitExceeded) as info:
        formulane.evaluate('x & x', {"x": "abcdefgh"}, limits=limits)
    assert info.value.code == "E406"


def test_only_formula_errors_escape() -> None:
    weird = ["", " ", "(", ")", "1 +", "IF(", "[1,", "{", "}", "'", '"', "x.", "1..2", "/*",
             "a => b", "LAMBDA(x, x)", "LET(1, 2, 3)", "LET(x, 1)", "MAP(1, x => x)",
             "FILTER([1], 2)", "SUM(x => x)", "[1][\"a\"]", "1 ?? 2 ?? 3", "-" * 300 + "1",
             "1" * 500, "1e99999", "\x00", "😀", "{a}.{b}.{c}"]
    for source in weird:
        try:
            formulane.evaluate(source)
        except FormulaError:
            pass


def test_determinism() -> None:
    program = formulane.compile("ROUND(x / 3, 10) & \"|\" & (x ^ 2)", {"x": "Number"})
    results = {program.evaluate({"x": Decimal("7.1")}) for _ in range(20)}
    assert len(results) == 1


def test_unknown_profile() -> None:
    with pytest.raises(CheckError):
        formulane.compile("1", profile="lenient")


def test_formula_must_be_text() -> None:
    with pytest.raises(FormulaError):
        formulane.compile(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("source, expected", [
    ('CONCAT([1, 2.5])', "12.5"),
    ('TEXTJOIN(",", TRUE, SEQUENCE(3))', "1,2,3"),
    ('TEXTJOIN("-", TRUE, [1, n])', "1"),       # a blank item stays blank and is skipped
    ('TEXTJOIN("-", FALSE, [1, n])', "1-"),
    ('CONCAT([TRUE, FALSE])', "TRUEFALSE"),
])
def test_excel_profile_turns_a_list_of_scalars_into_texts_item_by_item(
        source: str, expected: str) -> None:
    variables = {"n": None}
    schema = {"n": "Number?"}
    assert formulane.evaluate(source, variables, schema=schema, profile="excel") == expected
    with pytest.raises(CheckError) as strict:
        formulane.compile(source, schema)
    assert strict.value.code == "E202"


def test_excel_list_to_text_keeps_an_items_error() -> None:
    result = formulane.evaluate('TEXTJOIN("-", FALSE, [1, 1/0])', profile="excel")
    assert isinstance(result, ErrorValue) and result.code == "#DIV/0!"
