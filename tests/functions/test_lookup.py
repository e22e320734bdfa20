"""The lookup family: XLOOKUP/XMATCH match and search modes (binary search agrees with linear
search on sorted data), MATCH, INDEX, LOOKUP in both forms, ANY/ALL with lambdas returning
errors, adversarial positions, and every declared example through the engine."""

from __future__ import annotations

import decimal
import time
from decimal import Decimal as D
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import formulane
from formulane.functions import lookup
from formulane.functions.spec import FunctionSpec
from formulane.values import CONTEXT, ErrorValue, XLError

SPECS = [v for v in vars(lookup).values() if isinstance(v, FunctionSpec)]
BY_NAME = {s.name: s for s in SPECS}


def call(name: str, *args: Any, overload: int | None = None) -> Any:
    spec = BY_NAME[name]
    impl = spec.impl if overload is None else (spec.signatures[overload].impl or spec.impl)
    with decimal.localcontext(CONTEXT):
        try:
            result = impl(*args)  # type: ignore[misc]
        except XLError as exc:
            return exc.code
    assert not isinstance(result, float)
    return result


def L(*items: Any) -> tuple:
    return tuple(D(i) if isinstance(i, int) and not isinstance(i, bool) else i for i in items)


def test_the_family_is_complete() -> None:
    names = {"XLOOKUP", "XMATCH", "MATCH", "INDEX", "LOOKUP", "ANY", "ALL", "VLOOKUP",
             "HLOOKUP"}
    assert {s.name for s in SPECS} == names


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_declarations(spec: FunctionSpec) -> None:
    assert spec.category == "lookup" and spec.pack is None
    assert spec.doc and spec.doc.endswith(".") and len(spec.doc) < 300
    assert len(spec.examples) >= 2
    assert any(e.result.startswith("#") for e in spec.examples)
    assert spec.can_error == bool(spec.errors)


# ----------------------------------------------------------------------------------- XLOOKUP


def test_xlookup_exact() -> None:
    keys, vals = ("a", "b", "c"), L(1, 2, 3)
    assert call("XLOOKUP", "b", keys, vals) == 2
    assert call("XLOOKUP", "C", keys, vals) == 3  # text ignores case
    assert call("XLOOKUP", "z", keys, vals) == "#N/A"
    assert call("XLOOKUP", "z", keys, vals, D(0)) == 0
    assert call("XLOOKUP", "z", keys, vals, None) == "#N/A"  # blank fallback: as omitted
    assert call("XLOOKUP", "b*", keys, vals) == "#N/A"  # no wildcards in exact mode
    assert call("XLOOKUP", D(1), L(1, 2), L(1)) == "#VALUE!"
    assert call("XLOOKUP", D(2), L(1, 2, 2), ("a", "b", "c"), None, D(0), D(-1)) == "c"
    assert call("XLOOKUP", D(2), L(1, None), ("a", "b")) == "#N/A"
    assert call("XLOOKUP", None, L(1, None), ("a", "b")) == "b"
    assert call("XLOOKUP", D(1), (), ()) == "#N/A"


def test_xlookup_match_modes() -> None:
    keys, vals = L(10, 20, 30), ("lo", "mid", "hi")
    assert call("XLOOKUP", D(25), keys, vals, None, D(-1)) == "mid"
    assert call("XLOOKUP", D(25), keys, vals, None, D(1)) == "hi"
    assert call("XLOOKUP", D(5), keys, vals, None, D(-1)) == "#N/A"
    assert call("XLOOKUP", D(35), keys, vals, None, D(1)) == "#N/A"
    assert call("XLOOKUP", D(20), keys, vals, None, D(1)) == "mid"
    unsorted = L(30, 10, 20)
    assert call("XLOOKUP", D(25), unsorted, vals, None, D(-1)) == "hi"  # linear: nearest
    assert call("XLOOKUP", "b?n*", ("apple", "banana"), L(1, 2), None, D(2)) == 2
    assert call("XLOOKUP", "~*", ("a", "*"), L(1, 2), None, D(2)) == 2
    assert call("XLOOKUP", D(3), L(1, 3), L(1, 2), None, D(2)) == 2  # wildcards: numbers exact
    assert call("XLOOKUP", D(1), L(1), L(1), None, D(4)) == "#VALUE!"  # 3 is the regex mode
    assert call("XLOOKUP", D(1), L(1), L(1), None, D(0), D(0)) == "#VALUE!"
    assert call("XLOOKUP", D(1), L(1), L(1), None, D("1e300")) == "#VALUE!"


def test_xmatch_binary_modes() -> None:
    asc = L(1, 3, 5, 7)
    assert call("XMATCH", D(5), asc, D(0), D(2)) == 3
    assert call("XMATCH", D(4), asc, D(0), D(2)) == "#N/A"
    assert call("XMATCH", D(4), asc, D(-1), D(2)) == 2
    assert call("XMATCH", D(4), asc, D(1), D(2)) == 3
    assert call("XMATCH", D(0), asc, D(-1), D(2)) == "#N/A"
    assert call("XMATCH", D(9), asc, D(1), D(2)) == "#N/A"
    desc = L(7, 5, 3, 1)
    assert call("XMATCH", D(3), desc, D(0), D(-2)) == 3
    assert call("XMATCH", D(4), desc, D(-1), D(-2)) == 3
    assert call("XMATCH", D(4), desc, D(1), D(-2)) == 2
    assert call("XMATCH", "B", ("a", "b", "c"), D(0), D(2)) == 2
    assert call("XMATCH", "?b", ("ab", "bb"), D(2), D(-1)) == 2
    # Excel probes for the last item <= value: among duplicates the last one (IronCalc's XLOOKUP
    # workbook, multipleelements sheet: XLOOKUP(5, {9;8;7;7;7;6;5;5;5;...}, ..., , 1, -2) is the 3rd 5)
    assert call("XMATCH", D(2), L(1, 2, 2, 2, 3), D(0), D(2)) == 4


sorted_keys = st.lists(st.integers(-50, 50), max_size=25).map(
    lambda xs: tuple(D(x) for x in sorted(xs)))


@given(sorted_keys, st.integers(-60, 60), st.sampled_from([0, -1, 1]))
def test_binary_search_agrees_with_linear_search(keys: tuple, value: int, mode: int) -> None:
    linear = call("XMATCH", D(value), keys, D(mode), D(1))
    binary = call("XMATCH", D(value), keys, D(mode), D(2))
    if linear == "#N/A" or binary == "#N/A":
        assert linear == binary
    else:  # the same value (duplicates may sit at another position)
        assert keys[linear - 1] == keys[binary - 1]
    desc = tuple(reversed(keys))
    rev = call("XMATCH", D(value), desc, D(mode), D(-2))
    lin = call("XMATCH", D(value), desc, D(mode), D(1))
    assert (rev == "#N/A") == (lin == "#N/A")
    if rev != "#N/A":
        assert desc[rev - 1] == desc[lin - 1]


@given(st.lists(st.integers(0, 9), max_size=20), st.integers(0, 9))
def test_xmatch_finds_the_first_and_last_occurrence(xs: list[int], v: int) -> None:
    keys = tuple(D(x) for x in xs)
    first = call("XMATCH", D(v), keys)
    last = call("XMATCH", D(v), keys, D(0), D(-1))
    if v in xs:
        assert first == xs.index(v) + 1 and last == len(xs) - xs[::-1].index(v)
    else:
        assert first == last == "#N/A"


def test_match() -> None:
    assert call("MATCH", D(25), L(10, 20, 30)) == 2
    assert call("MATCH", D(20), L(10, 20, 20, 30)) == 3  # the last of equal items
    assert call("MATCH", D(5), L(10, 20)) == "#N/A"
    assert call("MATCH", D(99), L(10, 20)) == 2
    assert call("MATCH", D(25), L(30, 20, 10), D(-1)) == 1
    assert call("MATCH", "b?", ("a", "bc"), D(0)) == 2
    assert call("MATCH", "B", ("a", "b"), D(0)) == 2
    assert call("MATCH", "b", ("a", "b", "c"), D(1)) == 2
    assert call("MATCH", D(15), L(10, None, 20), D(1)) == 1


# ------------------------------------------------------------------------------------ INDEX


def test_index() -> None:
    xs = L(10, 20, 30)
    assert call("INDEX", xs, D(2)) == 20
    assert call("INDEX", xs, D("1.9")) == 10
    assert call("INDEX", xs, D(0)) == "#REF!"
    assert call("INDEX", xs, D(4)) == "#REF!"
    assert call("INDEX", xs, D(-1)) == "#VALUE!"
    assert call("INDEX", xs, D("1e300")) == "#REF!"
    assert call("INDEX", (), D(1)) == "#REF!"
    assert call("INDEX", L(1, None), D(2)) is None
    grid = (L(1, 2), L(3, 4))
    assert call("INDEX", grid, D(2), D(1), overload=0) == 3
    assert call("INDEX", grid, D(3), D(1), overload=0) == "#REF!"
    assert call("INDEX", grid, D(1), D(3), overload=0) == "#REF!"
    assert call("INDEX", (L(1), None), D(2), D(1), overload=0) == "#REF!"
    assert call("INDEX", xs, D(3), D(1), overload=1) == 30
    assert call("INDEX", xs, D(1), D(2), overload=1) == 20
    assert call("INDEX", xs, D(2), D(2), overload=1) == "#REF!"
    assert call("INDEX", xs, D(-2), D(1), overload=1) == "#VALUE!"


# ----------------------------------------------------------------------------------- LOOKUP


def test_lookup_power_fx_form() -> None:
    people = ({"name": "Ann", "age": D(31)}, {"name": "Bob", "age": D(25)})
    assert call("LOOKUP", people, lambda r: r["age"] < 30) is people[1]
    assert call("LOOKUP", people, lambda r: False) == "#N/A"
    assert call("LOOKUP", people, lambda r: r["age"] > 30, lambda r: r["name"], overload=1) == "Ann"
    assert call("LOOKUP", people, lambda r: False, lambda r: r["name"], overload=1) == "#N/A"
    err = ErrorValue("#DIV/0!")
    assert call("LOOKUP", people, lambda r: err) is err
    assert call("LOOKUP", people, lambda r: err, lambda r: r, overload=1) is err
    assert call("LOOKUP", people, lambda r: True, lambda r: err, overload=1) is err
    assert call("LOOKUP", (), lambda r: True) == "#N/A"


def test_lookup_excel_vector_form() -> None:
    keys, vals = L(1, 5, 10), ("a", "b", "c")
    assert call("LOOKUP", D(7), keys, vals, overload=6) == "b"
    assert call("LOOKUP", D(10), keys, vals, overload=6) == "c"
    assert call("LOOKUP", D(99), keys, vals, overload=6) == "c"
    assert call("LOOKUP", D(0), keys, vals, overload=6) == "#N/A"
    assert call("LOOKUP", D(7), keys, overload=4) == 5
    assert call("LOOKUP", "c", ("a", "B", "d"), overload=4) == "B"
    assert call("LOOKUP", D(7), keys, ("a",), overload=6) == "#VALUE!"


# ---------------------------------------------------------------------------------- ANY/ALL


def test_any_all() -> None:
    assert call("ANY", L(1, 5, 10), lambda x: x > 8) is True
    assert call("ANY", L(1, 2), lambda x: x > 8) is False
    assert call("ANY", (), lambda x: True) is False
    assert call("ALL", (), lambda x: False) is True
    assert call("ALL", L(2, 4), lambda x: x % 2 == 0) is True
    assert call("ANY", (False, None, True), overload=1) is True
    assert call("ALL", (True, None), overload=1) is False
    err = ErrorValue("#VALUE!")
    seen: list[Any] = []

    def pred(x: Any) -> Any:
        seen.append(x)
        return err if x == 0 else x > 0

    assert call("ANY", L(0, 1), pred) is err
    seen.clear()
    assert call("ANY", L(1, 0), pred) is True and seen == [1]  # stops at the first TRUE
    seen.clear()
    assert call("ALL", L(-1, 0), pred) is False and seen == [D(-1)]  # stops at the first FALSE
    assert call("ALL", L(1, 0), pred) is err


# ------------------------------------------------------------------------------ adversarial


def test_large_lists_are_fast() -> None:
    keys = tuple(D(i) for i in range(100_000))
    start = time.perf_counter()
    for _ in range(1_000):
        assert call("XMATCH", D(77_777), keys, D(0), D(2)) == 77_778
    assert time.perf_counter() - start < 2  # binary search: O(log n) per lookup
    texts = tuple("x" * 100 + str(i) for i in range(10_000))
    assert call("XMATCH", "X" * 100 + "9999", texts) == 10_000
    long = "a" * 32_767
    assert call("XLOOKUP", "*" + "a" * 32_000, (long,), L(1), None, D(2)) == 1


# ------------------------------------------------------------------------ through the engine

HAS_ENGINE = hasattr(formulane, "evaluate")
EXAMPLES = [(s, e) for s in SPECS for e in s.examples]


@pytest.mark.skipif(not HAS_ENGINE, reason="the engine facade has not landed")
@pytest.mark.parametrize("spec, example", EXAMPLES, ids=[f"{s.name}:{e.expr}" for s, e in EXAMPLES])
def test_examples_through_the_engine(spec: FunctionSpec, example: Any) -> None:
    got = formulane.evaluate(example.expr)
    if example.result.startswith("#"):
        assert isinstance(got, ErrorValue) and got.code == example.result, got
    else:
        want = formulane.evaluate(example.result)
        assert type(got) is type(want) and got == want, (got, want)


@pytest.mark.skipif(not HAS_ENGINE, reason="the engine facade has not landed")
def test_records_through_the_engine() -> None:
    people = [{"name": "Ann", "age": 31}, {"name": "Bob", "age": 25}]
    assert formulane.evaluate('LOOKUP(people, p => p.age < 30).name', {"people": people}) == "Bob"
    assert formulane.evaluate('XLOOKUP("ann", MAP(people, p => p.name), MAP(people, p => p.age))',
                              {"people": people}) == 31
    assert formulane.evaluate('ANY(people, p => p.age > 30)', {"people": people}) is True
    assert formulane.evaluate('INDEX(people, 2).name', {"people": people}) == "Bob"
