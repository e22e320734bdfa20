"""The lists family (and the statistics pack): implementations called directly, Excel criteria,
Hypothesis laws, adversarial inputs (huge counts, blanks, empty lists, 32,767-character texts,
lambdas returning errors), and every declared example through the engine."""

from __future__ import annotations

import datetime as dt
import decimal
import re
import time
from collections import Counter
from decimal import Decimal as D
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import formulane
from formulane.errors import LimitExceeded
from formulane.functions import _arrays, lists, statistics
from formulane.functions._criteria import Wildcard, parse_criterion, parse_number
from formulane.functions.registry import default_registry
from formulane.functions.spec import FunctionSpec
from formulane.runtime import EvalContext
from formulane.limits import Limits
from formulane.values import CONTEXT, ErrorValue, XLError

SPECS = {id(v): v for v in vars(lists).values() if isinstance(v, FunctionSpec)}
LIST_SPECS = list(SPECS.values())
STAT_SPECS = [v for v in vars(statistics).values() if isinstance(v, FunctionSpec)]
BY_NAME = {s.name: s for s in LIST_SPECS + STAT_SPECS}
NOW = dt.datetime(2024, 3, 1, 12, tzinfo=dt.timezone.utc)


def ctx(**limits: Any) -> EvalContext:
    return EvalContext(Limits(**limits), NOW, metered=True)


def call(name: str, *args: Any, overload: int | None = None) -> Any:
    """Run an implementation as the interpreter does: in the engine context, XLError -> code."""
    spec = BY_NAME[name]
    impl = spec.impl if overload is None else (spec.signatures[overload].impl or spec.impl)
    if spec.needs_ctx:
        args = (ctx(), *args)
    with decimal.localcontext(CONTEXT):
        try:
            result = impl(*args)  # type: ignore[misc]
        except XLError as exc:
            return exc.code
    _check_value(result)
    return result


def _check_value(v: Any) -> None:
    assert not isinstance(v, float)
    if isinstance(v, D):
        assert v.is_finite() and v.copy_abs() < D("1e308")
    if isinstance(v, tuple):
        for item in v:
            _check_value(item)


def L(*items: Any) -> tuple:
    return tuple(D(str(i)) if isinstance(i, (int, float)) and not isinstance(i, bool) else i
                 for i in items)


# ------------------------------------------------------------------------------ declarations


def test_the_family_is_complete() -> None:
    expected = set(
        "SUM PRODUCT AVERAGE MIN MAX COUNT COUNTA COUNTBLANK COUNTIF COUNTIFS SUMIF SUMIFS "
        "AVERAGEIF MEDIAN STDEV.S STDEV.P VAR.S VAR.P LARGE SMALL PERCENTILE.INC UNIQUE SORT "
        "SORTBY FILTER MAP REDUCE SEQUENCE TAKE DROP FLATTEN".split())
    names = {s.name for s in LIST_SPECS}
    assert expected <= names
    assert names - expected == {"AVERAGEIFS", "MAXIFS", "MINIFS", "SUMPRODUCT", "ROWS", "COLUMNS",
                                "TRANSPOSE", "CHOOSEROWS", "CHOOSECOLS", "VSTACK", "HSTACK",
                                "TOCOL", "TOROW", "WRAPROWS", "WRAPCOLS"}


@pytest.mark.parametrize("spec", LIST_SPECS + STAT_SPECS, ids=lambda s: s.name)
def test_declarations(spec: FunctionSpec) -> None:
    assert spec.category == ("statistics" if spec in STAT_SPECS else "lists")
    assert spec.pack == ("statistics" if spec in STAT_SPECS else None)
    assert spec.doc and spec.doc.endswith(".") and len(spec.doc) < 300
    assert len(spec.examples) >= 2
    assert any(e.result.startswith("#") for e in spec.examples) or len(spec.examples) >= 3
    assert spec.can_error == bool(spec.errors)
    assert all(code.startswith("#") for code in spec.errors)
    assert spec.cost.base >= 1


def test_registry_sees_the_lists_and_the_pack() -> None:
    registry = default_registry()
    assert registry.get("SUM") is lists.sum_
    assert registry.get("STDEV") is lists.STDEV_S
    assert registry.get("PERCENTILE") is lists.percentile_inc
    assert registry.get("GEOMEAN") is None and registry.pack_of("GEOMEAN") == "statistics"
    assert registry.with_packs("statistics").get("MODE") is statistics.mode_sngl


# ---------------------------------------------------------------------------------- totals


def test_sum_skips_blanks_and_flattens() -> None:
    assert call("SUM", D(1), L(2, 3), L(None, 4)) == 10
    assert call("SUM", L(D("0.1"), D("0.2"))) == D("0.3")
    assert call("SUM", L(D("1e20"), 1, D("-1e20"))) == 1
    assert call("SUM", ()) == 0
    assert call("SUM", None) == 0
    assert call("SUM", True, D(2)) == 3  # a logical given directly counts (excel profile)
    assert call("SUM", L(D("9e307"), D("9e307"))) == "#NUM!"
    assert call("SUM", ((D(1), (D(2),)), D(3))) == 6  # nested lists from untyped data


def test_sum_of_durations() -> None:
    hours = (dt.timedelta(hours=1), None, dt.timedelta(minutes=30))
    assert BY_NAME["SUM"].signatures[1].impl(hours) == dt.timedelta(minutes=90)
    huge = (dt.timedelta(days=999_999_999),) * 2
    with pytest.raises(XLError):
        BY_NAME["SUM"].signatures[1].impl(huge)


def test_product_average_min_max() -> None:
    assert call("PRODUCT", L(2, 3), D("0.5")) == 3
    assert call("PRODUCT", ()) == 0
    assert call("PRODUCT", L(D("1e200"), D("1e200"))) == "#NUM!"
    assert call("PRODUCT", L(*[10] * 400)) == "#NUM!"
    assert call("AVERAGE", L(1, None, 3)) == 2
    assert call("AVERAGE", ()) == "#DIV/0!"
    assert call("AVERAGE", L(None, None)) == "#DIV/0!"
    assert call("AVERAGE", L(1, 2, 2)) == CONTEXT.divide(D(5), 3)
    assert call("MIN", ()) == 0 and call("MAX", ()) == 0
    assert call("MIN", L(5, None, -2), D(7)) == -2
    assert call("MAX", L(-5, None, -2)) == -2
    dates = (dt.date(2024, 5, 1), None, dt.date(2023, 1, 9))
    assert call("MIN", dates, overload=1) == dt.date(2023, 1, 9)
    assert call("MAX", dates, overload=1) == dt.date(2024, 5, 1)
    assert call("MAX", (), overload=1) == "#CALC!"


def test_counting() -> None:
    assert call("COUNT", D(1), L(2, None, "a", True), "a", "12", True) == 4
    assert call("COUNT", (dt.date(2024, 1, 1), None)) == 1  # dates are numbers in Excel
    assert call("COUNT", L(1, None, 3)) == 2
    assert call("COUNT", ()) == 0
    assert call("COUNTA", D(1), "", L(None, False), None) == 3
    assert call("COUNTA", ()) == 0
    assert call("COUNTBLANK", ("a", "", None)) == 2
    assert call("COUNTBLANK", ()) == 0


# -------------------------------------------------------------------------------- criteria


@pytest.mark.parametrize("criteria, items, expected", [
    (">5", L(1, 5, 6, None, 10), 2),
    (">=5", L(1, 5, 6), 2),
    ("<5", L(1, 5, None), 1),
    ("<=5", L(1, 5, 6), 2),
    ("=5", L(5, D("5.0"), 6), 2),
    ("5", L(5, 6), 1),
    ("<>5", L(5, 6, None), 2),  # blanks are "not 5"
    ("", L(1, None, None), 2),
    ("=", ("", None, "a"), 1),  # "=" is truly blank only
    ("", ("", None, "a"), 2),  # "" is blank or empty text
    ("<>", ("", None, "a"), 2),
    ("apple", ("Apple", "APPLE", "apples", None), 2),
    ("a*", ("apple", "Avocado", "kiwi", ""), 2),
    ("*a*", ("banana", "kiwi", "A"), 2),
    ("?", ("a", "ab", ""), 1),
    ("a?c", ("abc", "aXc", "ac", "abbc"), 2),
    ("*~*", ("a*", "ab", "*"), 2),
    ("~?", ("?", "a"), 1),
    ("<>a*", ("apple", "kiwi", None, D(3)), 3),
    (">b", ("a", "B", "c", D(5)), 1),  # text order ignores case; numbers never match text
    ("<B", ("a", "b", "C"), 1),
    ("5", ("5", "05", " 5 ", "5.0", "a"), 4),  # numeric text counts as the number (Excel)
    (">4", ("5",), 0),  # but only equality converts text
    ("TRUE", (True, False, "TRUE", D(1)), 1),
    ("<>TRUE", (True, False, None), 2),
    ("50%", L(D("0.5"), 50), 1),
    (">2024-01-01", (dt.date(2023, 12, 31), dt.date(2024, 1, 2), None), 1),
    (">45292", (dt.date(2024, 1, 1), dt.date(2024, 1, 2)), 1),  # Excel serial of 2024-01-01
    ("=2024-01-01", (dt.date(2024, 1, 1), "2024-01-01"), 2),
])
def test_countif_criteria(criteria: str, items: tuple, expected: int) -> None:
    assert call("COUNTIF", items, criteria) == expected


def test_countif_plain_values_and_lambdas() -> None:
    assert call("COUNTIF", L(2, 2, 3), D(2)) == 2
    assert call("COUNTIF", (True, False, True), True) == 2
    day = dt.date(2024, 5, 1)
    assert call("COUNTIF", (day, dt.date(2023, 5, 1)), day) == 1
    assert call("COUNTIF", L(1, 5, 10), lambda x: x > 3) == 2
    assert call("COUNTIF", L(1, 5), lambda x: None) == 0  # blank answer is FALSE
    err = ErrorValue("#DIV/0!")
    assert call("COUNTIF", L(1, 0, 2), lambda x: err if x == 0 else True) is err
    assert call("COUNTIF", ((1, 2),), (1, 2)) == "#VALUE!"


def test_criteria_parsing() -> None:
    c = parse_criterion(">=10")
    assert (c.op, c.kind, c.number) == (">=", "number", 10)
    assert parse_criterion("<>").kind == "empty"
    assert parse_criterion("=TRUE").kind == "bool"
    assert parse_criterion("a*").kind == "text"
    assert parse_number("1e3") == 1000 and parse_number("1_000") is None
    assert parse_number("Infinity") is None and parse_number("nan") is None
    assert parse_number("9" * 401) is None


def test_sumif_averageif() -> None:
    assert call("SUMIF", L(1, 5, 10), ">2") == 15
    assert call("SUMIF", ("a", "b", "A"), "a", L(1, 2, 4)) == 5
    assert call("SUMIF", L(1, 2), "a", L(1)) == "#VALUE!"
    assert call("SUMIF", L(1, 2), ">5") == 0
    assert call("SUMIF", ("x", "y"), "x") == 0  # no numbers to sum
    assert call("SUMIF", L(1, 2, 3), lambda x: x != 2) == 4
    assert call("SUMIF", ("a", "a"), "a", L(1, None)) == 1
    assert call("AVERAGEIF", L(1, 5, 10), ">2") == D("7.5")
    assert call("AVERAGEIF", L(1, 2), ">5") == "#DIV/0!"
    err = ErrorValue("#N/A")
    assert call("AVERAGEIF", L(1, 2), lambda x: err) is err


def test_ifs_family() -> None:
    xs, tags = L(1, 2, 3), ("a", "b", "a")
    assert call("COUNTIFS", xs, ">1", tags, "a") == 1
    assert call("COUNTIFS", xs, ">0") == 3
    assert call("COUNTIFS", xs, ">0", L(1), ">0") == "#VALUE!"
    assert call("COUNTIFS", (), ">0") == 0
    assert call("SUMIFS", L(10, 20, 30), tags, "a") == 40
    assert call("SUMIFS", L(10, 20, 30), xs, ">1", ("x", "y", "y"), "y") == 50
    assert call("SUMIFS", L(10, 20), xs, ">1") == "#VALUE!"
    assert call("SUMIFS", L(10, None, 30), tags, "<>b") == 40
    assert call("AVERAGEIFS", L(10, 20, 30), tags, "a") == 20
    assert call("AVERAGEIFS", L(10, 20), L(1, 2), ">5") == "#DIV/0!"
    assert call("MAXIFS", L(10, 20, 30), tags, "a") == 30
    assert call("MINIFS", L(10, 20, 30), tags, "a") == 10
    assert call("MAXIFS", L(10), L(1), ">5") == 0
    assert call("COUNTIFS", xs, (1, 2)) == "#VALUE!"  # a list is not a criterion
    assert call("COUNTIFS", xs, D(2)) == 1


def test_sumproduct() -> None:
    assert call("SUMPRODUCT", L(1, 2, 3), L(4, 5, 6)) == 32
    assert call("SUMPRODUCT", L(1, None), L(3, 4)) == 3
    assert call("SUMPRODUCT", L(1, 2), L(1)) == "#VALUE!"
    assert call("SUMPRODUCT", ()) == 0
    assert call("SUMPRODUCT", L(D("1e200")), L(D("1e200"))) == "#NUM!"


# ------------------------------------------------------------------------- order statistics


def test_median_stdev_var() -> None:
    assert call("MEDIAN", L(3, 1, 2)) == 2
    assert call("MEDIAN", L(1, 2, 3, 4)) == D("2.5")
    assert call("MEDIAN", ()) == "#NUM!"
    assert call("STDEV.S", L(1, 3, 5)) == 2
    assert call("STDEV.S", L(5)) == "#DIV/0!"
    assert call("STDEV.P", L(2, 4, 4, 4, 5, 5, 7, 9)) == 2
    assert call("STDEV.P", ()) == "#DIV/0!"
    assert call("VAR.S", L(1, 2, 2)) == CONTEXT.divide(D(1), 3)
    assert call("VAR.P", L(D("1.5"), D("3.5"))) == 1
    assert str(call("VAR.P", L(D("1.5"), D("3.5")))) == "1"  # no trailing zeros
    assert call("VAR.S", L(D("1e200"), D("-1e200"))) == "#NUM!"
    # the spread of numbers far from zero is still exact
    assert call("VAR.S", L(D("1e20") + 1, D("1e20") + 2, D("1e20") + 3)) == 1


def test_large_small_percentile() -> None:
    xs = L(3, 9, 1, 7, None)
    assert call("LARGE", xs, D(2)) == 7 and call("SMALL", xs, D(2)) == 3
    assert call("LARGE", xs, D("1.5")) == 7  # Excel rounds LARGE's k up...
    assert call("SMALL", xs, D("2.9")) == 3  # ...and SMALL's k down
    assert call("LARGE", xs, D(5)) == "#NUM!" and call("SMALL", xs, D(0)) == "#NUM!"
    assert call("LARGE", (), D(1)) == "#NUM!"
    assert call("LARGE", xs, D("1e300")) == "#NUM!"
    big = tuple(D(i) for i in range(200))
    assert call("LARGE", big, D(100)) == 100 and call("SMALL", big, D(100)) == 99
    assert call("PERCENTILE.INC", L(1, 2, 3, 4), D("0.3")) == D("1.9")
    assert call("PERCENTILE.INC", L(1, 2, 3, 4), D(0)) == 1
    assert call("PERCENTILE.INC", L(1, 2, 3, 4), D(1)) == 4
    assert call("PERCENTILE.INC", L(7), D("0.5")) == 7
    assert call("PERCENTILE.INC", L(1, 2), D("1.5")) == "#NUM!"
    assert call("PERCENTILE.INC", L(1, 2), D("-0.1")) == "#NUM!"
    assert call("PERCENTILE.INC", (), D("0.5")) == "#NUM!"


# ---------------------------------------------------------------------- arrays: shape & order


def test_unique() -> None:
    assert call("UNIQUE", L(3, 1, 3, 2, 1)) == L(3, 1, 2)
    assert call("UNIQUE", ("a", "A", "b")) == ("a", "b")
    assert call("UNIQUE", L(1, D("1.0"), 2)) == L(1, 2)
    assert call("UNIQUE", (True, D(1), True)) == (True, D(1))  # TRUE is not 1
    assert call("UNIQUE", L(1, 2, 1), False, True) == L(2)
    assert call("UNIQUE", ()) == ()
    rec = {"a": D(1)}
    assert call("UNIQUE", (rec, {"a": D(1)}, {"a": D(2)})) == (rec, {"a": D(2)})


def test_sort() -> None:
    assert call("SORT", L(3, 1, 2)) == L(1, 2, 3)
    assert call("SORT", L(3, 1, 2), D(-1)) == L(3, 2, 1)
    assert call("SORT", L(2, None, 1), D(-1)) == L(2, 1, None)
    assert call("SORT", ("b", "A", "a", "B")) == ("A", "a", "b", "B")  # stable, case ignored
    assert call("SORT", ("b", "A", "a", "B"), D(-1)) == ("b", "B", "A", "a")
    assert call("SORT", (True, "b", D(2), None, "a", D(1))) == (D(1), D(2), "a", "b", True, None)
    assert call("SORT", L(1, 2), D(0)) == "#VALUE!"
    assert call("SORT", L(1, 2), D("1e300")) == "#VALUE!"
    assert call("SORT", ({"a": 1}, {"a": 2})) == "#VALUE!"
    assert call("SORT", L(3, 1), D(1), D(-1), overload=4) == L(3, 1)
    assert call("SORT", L(3, 1), D(2), D(1), overload=4) == "#VALUE!"
    assert call("SORT", ()) == ()


def test_sortby() -> None:
    words = ("bb", "a", "ccc")
    assert call("SORTBY", words, len) == ("a", "bb", "ccc")
    assert call("SORTBY", words, len, D(-1)) == ("ccc", "bb", "a")
    assert call("SORTBY", ("x", "y", "z"), L(3, 1, 2), overload=4) == ("y", "z", "x")
    assert call("SORTBY", ("x", "y"), L(1), overload=4) == "#VALUE!"
    assert call("SORTBY", L(1, 2, 3, 4), ("b", "a", "b", "a"), D(1), L(1, 2, 3, 4), D(-1),
                overload=5) == L(4, 2, 3, 1)
    err = ErrorValue("#N/A")
    assert call("SORTBY", L(1, 2), lambda x: err) is err
    assert call("SORTBY", L(1, 2, 3), lambda x: None if x == 2 else -x) == L(3, 1, 2)


def test_filter_map_reduce() -> None:
    assert call("FILTER", L(1, 5, 10), lambda x: x > 3) == L(5, 10)
    assert call("FILTER", L(1, 2), lambda x: False) == ()
    assert call("FILTER", L(1, 2), lambda x: False, D(0)) == L(0)
    assert call("FILTER", L(1, 2), lambda x: False, "") == ()  # Excel's "" idiom: nothing
    assert call("FILTER", ("a",), lambda x: False, "none") == ("none",)
    err = ErrorValue("#DIV/0!")
    assert call("FILTER", L(1, 0), lambda x: err if x == 0 else True) is err
    assert call("FILTER", L(1, 2, 3), (True, None, D(2)), overload=3) == L(1, 3)
    assert call("FILTER", L(1, 2), (True,), overload=3) == "#VALUE!"
    assert call("FILTER", L(1, 2), ("x", True), overload=3) == "#VALUE!"
    assert call("MAP", L(1, 2), lambda x: x * 2) == L(2, 4)
    mapped = call("MAP", L(1, 0), lambda x: err if x == 0 else x)
    assert mapped == (D(1), err)  # the error stays in its place
    assert call("MAP", L(1, 2), L(10, 20), lambda a, b: a + b, overload=1) == L(11, 22)
    assert call("MAP", L(1, 2), L(10), lambda a, b: a + b, overload=1) == "#VALUE!"
    assert call("MAP", (), lambda x: x) == ()
    assert call("REDUCE", D(0), L(1, 2, 3), lambda a, x: a + x) == 6
    assert call("REDUCE", D(5), (), lambda a, x: a + x) == 5
    calls = []

    def stop(acc: Any, x: Any) -> Any:
        calls.append(x)
        return err if x == 0 else acc

    assert call("REDUCE", D(1), L(1, 0, 2), stop) is err and len(calls) == 2


def test_sequence_take_drop_flatten() -> None:
    assert call("SEQUENCE", D(4)) == (1, 2, 3, 4)
    assert call("SEQUENCE", D(3), D(1), D(10), D(5)) == (10, 15, 20)
    assert call("SEQUENCE", D(2), D(2), D(0), D("0.5")) == L(0, D("0.5"), 1, D("1.5"))
    assert call("SEQUENCE", D(3), D(1), D(7), D(0)) == (7, 7, 7)
    assert call("SEQUENCE", D(0)) == ()
    assert call("SEQUENCE", D(-1)) == "#VALUE!"
    assert call("SEQUENCE", D("2.9")) == (1, 2)
    assert call("SEQUENCE", D(2), D(1), D("9e307"), D("9e307")) == "#NUM!"
    assert call("TAKE", L(1, 2, 3, 4), D(2)) == L(1, 2)
    assert call("TAKE", L(1, 2, 3, 4), D(-1)) == L(4)
    assert call("TAKE", L(1, 2), D("1e300")) == L(1, 2)
    assert call("TAKE", L(1, 2), D("-1e300")) == L(1, 2)
    assert call("TAKE", L(1, 2), D(0)) == ()
    assert call("DROP", L(1, 2, 3, 4), D(1)) == L(2, 3, 4)
    assert call("DROP", L(1, 2, 3, 4), D(-2)) == L(1, 2)
    assert call("DROP", L(1, 2), D("-1e300")) == ()
    assert call("DROP", L(1, 2), D("1e300")) == ()
    assert call("FLATTEN", (L(1, 2), L(3), ())) == L(1, 2, 3)
    assert call("FLATTEN", (L(1), None, L(2))) == L(1, 2)
    assert call("FLATTEN", ((L(1), L(2)), (L(3),))) == (L(1), L(2), L(3))


def test_sizes_are_checked_before_allocating() -> None:
    seq = BY_NAME["SEQUENCE"].impl
    sizes = ((D(10) ** 8, D(1)), (D("1e300"), D(1)), (D(100_000), D(2)), (D(1), D("1e9")))
    for rows, cols in sizes:
        start = time.perf_counter()
        with pytest.raises(LimitExceeded):
            with decimal.localcontext(CONTEXT):
                seq(ctx(), rows, cols, D(1), D(1))
        assert time.perf_counter() - start < 0.1
    inner = tuple(range(1000))
    with pytest.raises(LimitExceeded):
        BY_NAME["FLATTEN"].impl(ctx(), (inner,) * 1000)
    # the meter is charged for what SEQUENCE builds
    with pytest.raises(LimitExceeded):
        with decimal.localcontext(CONTEXT):
            seq(ctx(max_cost=1_000), D(5_000), D(1), D(1), D(1))


# ------------------------------------------------------------------------------- wildcards


def _reference(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "~" and i + 1 < len(pattern) and pattern[i + 1] in "*?~":
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL | re.IGNORECASE)


@given(st.text(alphabet="ab*?~A", max_size=8), st.text(alphabet="abAB*?~\n", max_size=10))
def test_wildcards_agree_with_a_reference(pattern: str, text: str) -> None:
    expected = _reference(pattern.lower()).fullmatch(text.lower()) is not None
    assert Wildcard(pattern).matches(text) == expected


def test_wildcards_stay_linear_on_adversarial_patterns() -> None:
    text = "a" * 32_767
    patterns = ("*a" * 16_383 + "b", "a*" * 16_000 + "b", "?" * 32_766 + "b", "*" * 32_767 + "b")
    for pattern in patterns:
        start = time.perf_counter()
        assert not Wildcard(pattern).matches(text)
        assert time.perf_counter() - start < 5
    assert Wildcard("*" * 32_767).matches(text)
    assert call("COUNTIF", (text, "b"), "*" + "a" * 30_000 + "*") == 1
    assert call("COUNTIF", (text,), text.upper()) == 1


# ---------------------------------------------------------------------------- Hypothesis laws

numbers = st.decimals(min_value=-10**6, max_value=10**6, places=2, allow_nan=False,
                      allow_infinity=False)
number_lists = st.lists(numbers, max_size=30).map(tuple)
blanky = st.lists(st.one_of(numbers, st.none()), max_size=30).map(tuple)
texts = st.lists(st.text(alphabet="aAbB", max_size=3), max_size=20).map(tuple)


@given(number_lists)
def test_sum_equals_reduce_with_plus(xs: tuple) -> None:
    with decimal.localcontext(CONTEXT):
        assert call("SUM", xs) == call("REDUCE", D(0), xs, lambda a, x: a + x)


@given(blanky)
def test_sum_ignores_order_and_blanks(xs: tuple) -> None:
    plain = tuple(x for x in xs if x is not None)
    assert call("SUM", xs) == call("SUM", call("SORT", xs)) == call("SUM", plain)
    assert call("COUNT", xs) == len(plain)
    assert call("COUNTA", xs) == len(plain) and call("COUNTBLANK", xs) == len(xs) - len(plain)


@given(number_lists)
def test_average_lies_between_min_and_max(xs: tuple) -> None:
    assume(xs)
    assert call("MIN", xs) <= call("AVERAGE", xs) <= call("MAX", xs)
    assert call("LARGE", xs, D(1)) == call("MAX", xs) and call("SMALL", xs, D(1)) == call("MIN", xs)
    assert call("MEDIAN", xs) == call("PERCENTILE.INC", xs, D("0.5"))
    assert call("VAR.P", xs) >= 0


@given(st.one_of(number_lists, texts), st.sampled_from([D(1), D(-1)]))
def test_sort_is_an_ordered_stable_permutation(xs: tuple, order: D) -> None:
    out = call("SORT", xs, order)
    assert Counter(out) == Counter(xs)
    assert call("SORT", out, order) == out
    keys = [x.lower() if isinstance(x, str) else x for x in out]
    assert keys == sorted(keys, reverse=order == -1)
    if xs and isinstance(xs[0], str):  # stability: equal keys keep their input order
        for key in set(keys):
            assert [x for x in out if x.lower() == key] == [x for x in xs if x.lower() == key]


@given(texts)
def test_unique_is_a_duplicate_free_subsequence(xs: tuple) -> None:
    out = call("UNIQUE", xs)
    assert len({x.lower() for x in out}) == len(out)
    assert {x.lower() for x in out} == {x.lower() for x in xs}
    assert call("UNIQUE", out) == out
    it = iter(xs)
    assert all(any(x == y for y in it) for x in out)  # order of first appearance


@given(number_lists, st.integers(-40, 40))
def test_take_and_drop_split_a_list(xs: tuple, n: int) -> None:
    k = D(n)
    if n >= 0:
        assert call("TAKE", xs, k) + call("DROP", xs, k) == xs
    else:
        assert call("DROP", xs, k) + call("TAKE", xs, k) == xs


@given(blanky, numbers)
def test_countif_matches_python(xs: tuple, k: D) -> None:
    assert call("COUNTIF", xs, f">{k}") == sum(1 for x in xs if x is not None and x > k)
    assert call("COUNTIF", xs, f"<>{k}") == sum(1 for x in xs if x != k)
    assert call("SUMIF", xs, f"<={k}") == sum((x for x in xs if x is not None and x <= k), D(0))
    assert call("COUNTIF", xs, lambda x: x is not None and x > k) == call("COUNTIF", xs, f">{k}")


# --------------------------------------------------------------------------------- statistics


def test_statistics_pack() -> None:
    assert call("MODE.SNGL", L(1, 2, 2, 3, 3)) == 2
    assert call("MODE.SNGL", L(3, 3, 2, 2)) == 3  # the first mode in the data
    assert call("MODE.SNGL", L(1, 2)) == "#N/A" and call("MODE.SNGL", ()) == "#N/A"
    assert call("GEOMEAN", D(2), D(8)) == 4 and str(call("GEOMEAN", D(2), D(8))) == "4"
    assert call("GEOMEAN", L(1, 0)) == "#NUM!" and call("GEOMEAN", ()) == "#NUM!"
    assert call("GEOMEAN", L(*[D("1e300")] * 5)) == D("1e300")
    assert call("HARMEAN", D(1), D(4), D(4)) == 2
    assert call("AVEDEV", L(2, 4, 6)) == CONTEXT.divide(D(4), 3)
    assert call("DEVSQ", L(1, 2, 3)) == 2
    assert call("QUARTILE.INC", L(1, 2, 3, 4), D(1)) == D("1.75")
    assert call("QUARTILE.INC", L(1, 2), D(5)) == "#NUM!"
    assert call("RANK.EQ", D(7), L(3, 7, 9, 7)) == 2
    assert call("RANK.EQ", D(7), L(3, 7, 9, 7), D(1)) == 2
    assert call("RANK.AVG", D(7), L(3, 7, 9, 7)) == D("2.5")
    assert call("RANK.EQ", D(4), L(3, 7)) == "#N/A"
    assert call("CORREL", L(1, 2, 3), L(2, 4, 6)) == 1
    assert call("CORREL", L(1, 2, None, 3), L(3, 2, 9, 1)) == -1  # pairs with a blank skipped
    assert call("CORREL", L(1, 1), L(2, 3)) == "#DIV/0!"
    assert call("CORREL", L(1, 2), L(1)) == "#N/A"
    assert call("RSQ", L(1, 3, 2), L(1, 2, 3)) == D("0.25")
    assert call("SLOPE", L(3, 5, 7), L(1, 2, 3)) == 2
    assert call("INTERCEPT", L(3, 5, 7), L(1, 2, 3)) == 1
    assert call("COVARIANCE.P", L(1, 2, 3), L(2, 4, 6)) == CONTEXT.divide(D(4), 3)
    assert call("COVARIANCE.S", L(1, 2, 3), L(2, 4, 6)) == 2
    assert call("COVARIANCE.S", L(1), L(5)) == "#DIV/0!"
    assert call("NORM.DIST", D(0), D(0), D(1), True) == D("0.5")
    assert call("NORM.DIST", D(1), D(0), D(0), True) == "#NUM!"
    assert call("NORM.DIST", D("1e300"), D(0), D("1e-300"), False) == 0
    assert call("NORM.S.DIST", D(40), True) == 1


# ------------------------------------------------------------------------ through the engine

HAS_ENGINE = hasattr(formulane, "evaluate")


def _examples() -> list[tuple[FunctionSpec, Any]]:
    return [(s, e) for s in LIST_SPECS + STAT_SPECS for e in s.examples]


@pytest.mark.skipif(not HAS_ENGINE, reason="the engine facade has not landed")
@pytest.mark.parametrize("spec, example", _examples(),
                         ids=[f"{s.name}:{e.expr}" for s, e in _examples()])
def test_examples_through_the_engine(spec: FunctionSpec, example: Any) -> None:
    registry = default_registry().with_packs("statistics") if spec.pack else None
    got = formulane.evaluate(example.expr, registry=registry)
    if example.result.startswith("#"):
        assert isinstance(got, ErrorValue) and got.code == example.result, got
    else:
        want = formulane.evaluate(example.result, registry=registry)
        assert type(got) is type(want) and got == want, (got, want)


@pytest.mark.skipif(not HAS_ENGINE, reason="the engine facade has not landed")
@pytest.mark.parametrize("source", [
    "SEQUENCE(10^8)", "SEQUENCE(10^300, 10^300)",
    "FLATTEN(MAP(SEQUENCE(1000), x => SEQUENCE(1000)))",
])
def test_limits_through_the_engine(source: str) -> None:
    start = time.perf_counter()
    with pytest.raises(LimitExceeded):
        formulane.evaluate(source)
    assert time.perf_counter() - start < 2


@pytest.mark.skipif(not HAS_ENGINE, reason="the engine facade has not landed")
@given(st.lists(numbers, max_size=20))
def test_sum_equals_reduce_through_the_engine(xs: list) -> None:
    source = "SUM(xs) = REDUCE(0, xs, LAMBDA(acc, x, acc + x))"
    assert formulane.evaluate(source, {"xs": xs}, schema={"xs": "List[Number]"}) is True


@pytest.mark.skipif(not HAS_ENGINE, reason="the engine facade has not landed")
@pytest.mark.parametrize("source, code", [
    ("SUM([1, 1 / 0])", "#DIV/0!"),
    ('COUNTIF([1, 1 / 0], ">0")', "#DIV/0!"),
    ('COUNTIF([1, 2], 1 / 0)', "#DIV/0!"),
    ("SORT([1, 2], 1 / 0)", "#DIV/0!"),
    ("MAP([1, 1 / 0], x => x)", "#DIV/0!"),
    ("FILTER([1, 2], x => x / 0 > 1)", "#DIV/0!"),
    ("REDUCE(1 / 0, [1], LAMBDA(a, x, a))", "#DIV/0!"),
    ("TAKE([1, 2], 1 / 0)", "#DIV/0!"),
    ("SEQUENCE(1 / 0)", "#DIV/0!"),
    ("LARGE([1, 2], 1 / 0)", "#DIV/0!"),
    ('SUMIFS([1, 2], [1, 2], 1 / 0)', "#DIV/0!"),
])
def test_errors_in_arguments_propagate(source: str, code: str) -> None:
    got = formulane.evaluate(source)
    assert isinstance(got, ErrorValue) and got.code == code


@pytest.mark.skipif(not HAS_ENGINE, reason="the engine facade has not landed")
def test_long_texts_through_the_engine() -> None:
    long = "a" * 32_767
    variables = {"xs": [long, "b"], "c": "*" + "a" * 32_000 + "*"}
    assert formulane.evaluate("COUNTIF(xs, c)", variables) == 1
    assert formulane.evaluate("SORT(xs)", variables) == [long, "b"]
    assert formulane.evaluate("UNIQUE(xs)", {"xs": [long, long.upper()]}) == [long]
