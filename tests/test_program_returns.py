"""`compile(..., returns=T)`: the checked promise behind ``Program[T]`` (issue 16 item 4).

Cases in ``tests/data/program_returns/``: ``accepted.csv`` (formula, Python type, inputs, the
result's ``str``) compile and return an instance of that type; ``refused.csv`` (formula, type,
words the message must hold) raise CheckError E214 at compile time. Then the run-time half (an
error value raised as E304, before and after the program tiers up), the cache (a typed program
is cached and shares nothing mutable with the untyped one) and a Hypothesis property over
generated formulas: a non-blank static type always yields its Python type or E304.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import pickle
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import formulane
from formulane import CheckError, ErrorValue, EvalError
from formulane.interpreter import cache
from formulane.interpreter.program import RESULT_TYPES, TIER_UP_CALLS
from formulane.messages import CATALOGUE
from formulane.testing import formulas, values

DATA = Path(__file__).parent / "data" / "program_returns"
SCHEMA = {"price": "Number", "qty": "Number", "name": "Text", "due": "Date", "at": "DateTime",
          "note": "Number?"}
TYPES: dict[str, Any] = {"Decimal": Decimal, "str": str, "bool": bool, "date": dt.date,
                         "datetime": dt.datetime, "timedelta": dt.timedelta, "list": list,
                         "dict": dict, "int": int, "float": float, "ErrorValue": ErrorValue,
                         "Number": "Number"}


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _inputs(text: str) -> dict[str, Any]:
    raw = json.loads(text)
    out: dict[str, Any] = {}
    for key, value in raw.items():
        kind = SCHEMA[key].rstrip("?")
        if kind == "Date" and value is not None:
            value = dt.date.fromisoformat(value)
        elif kind == "DateTime" and value is not None:
            value = dt.datetime.fromisoformat(value)
        out[key] = value
    return out


def _id(row: dict[str, str]) -> str:
    return f"{row['formula']}->{row['returns']}"


@pytest.mark.parametrize("row", _rows("accepted.csv"), ids=_id)
def test_accepted(row: dict[str, str]) -> None:
    returns = TYPES[row["returns"]]
    program = formulane.compile(row["formula"], SCHEMA, returns=returns)
    assert program.returns is returns
    for _ in range(TIER_UP_CALLS + 2):  # the closures, then the generated function
        out = program.evaluate(_inputs(row["inputs"]))
        assert isinstance(out, returns) and str(out) == row["expected"]
    assert formulane.evaluate(row["formula"], _inputs(row["inputs"]), schema=SCHEMA,
                              returns=returns) == out


@pytest.mark.parametrize("row", _rows("refused.csv"), ids=_id)
def test_refused_at_compile_time(row: dict[str, str]) -> None:
    with pytest.raises(CheckError) as info:
        formulane.compile(row["formula"], SCHEMA, returns=TYPES[row["returns"]])
    err = info.value
    assert err.code == "E214" and row["says"] in err.message
    assert err.hint and err.span is not None and err.span.end == len(row["formula"])
    assert "error[E214]" in err.render()  # the one rendering, with the source quoted


def test_error_value_is_raised_not_returned() -> None:
    program = formulane.compile("price / qty", SCHEMA, returns=Decimal)
    plain = formulane.compile("price / qty", SCHEMA)
    for _ in range(TIER_UP_CALLS + 2):
        assert program.evaluate({"price": 1, "qty": 4}) == Decimal("0.25")
        with pytest.raises(EvalError) as info:
            program.evaluate({"price": 1, "qty": 0})
        assert info.value.code == "E304" and "#DIV/0!" in info.value.message
        assert "IFERROR" in info.value.hint
        # without returns= the error value is data, as always
        assert plain.evaluate({"price": 1, "qty": 0}) == ErrorValue("#DIV/0!")


def test_new_codes_have_end_user_text() -> None:
    from formulane.errors import CODES

    for code in ("E214", "E304"):
        assert code in CODES and CATALOGUE[code].title and CATALOGUE[code].todo
    doc = (Path(__file__).parent.parent / "docs" / "errors.md").read_text(encoding="utf-8")
    assert "| E214 |" in doc and "| E304 |" in doc


def test_typed_programs_are_cached_apart() -> None:
    cache.cache_clear()
    typed = formulane.compile("price * qty", SCHEMA, returns=Decimal)
    assert formulane.compile("price * qty", SCHEMA, returns=Decimal) is typed
    plain = formulane.compile("price * qty", SCHEMA)
    assert plain is not typed and plain.returns is None
    assert formulane.compile("price * qty", SCHEMA) is plain
    info = cache.cache_info()
    assert info.misses == 2 and info.hits == 3  # typed, untyped (inside), then hits
    # the untyped program stays untyped: an error value is still data there
    assert formulane.compile("price / qty", SCHEMA).evaluate({"price": 1, "qty": 0}) \
        == ErrorValue("#DIV/0!")


def test_unhashable_arguments_skip_the_cache_and_are_refused_in_words() -> None:
    with pytest.raises(CheckError) as info:
        formulane.compile("price + 1", SCHEMA, returns=[Decimal])  # type: ignore[call-overload]
    assert info.value.code == "E214" and "[<class 'decimal.Decimal'>]" in info.value.message
    with pytest.raises(CheckError) as bad_schema:
        formulane.compile("price + 1", {"price": ["Number"]}, returns=Decimal)
    assert bad_schema.value.code == "E209"


def test_pickle_and_returning_keep_the_promise() -> None:
    program = formulane.compile("price / qty", SCHEMA, returns=Decimal)
    again = pickle.loads(pickle.dumps(program))
    assert again.returns is Decimal and "returns=Decimal" in repr(again)
    with pytest.raises(EvalError):
        again.evaluate({"price": 1, "qty": 0})
    held = formulane.compile("UPPER(name)", SCHEMA).returning(str)
    assert held.evaluate({"name": "x"}) == "X"
    with pytest.raises(CheckError):
        formulane.compile("UPPER(name)", SCHEMA).returning(Decimal)


PROPERTY_SCHEMA = {"a": "Number", "b": "Number", "t": "Text", "d": "Date", "f": "Boolean"}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), kind=st.sampled_from(["Number", "Text", "Boolean", "Date"]))
def test_a_non_blank_type_gives_its_python_type_or_e304(data: st.DataObject, kind: str) -> None:
    source = data.draw(formulas(PROPERTY_SCHEMA, kind, max_depth=2))
    returns = RESULT_TYPES[kind]
    program = formulane.compile(source, PROPERTY_SCHEMA, returns=returns)
    variables = data.draw(values(PROPERTY_SCHEMA))
    now = dt.datetime.now(dt.timezone.utc)
    untyped = formulane.compile(source, PROPERTY_SCHEMA).evaluate(variables, now=now)
    try:
        out = program.evaluate(variables, now=now)
    except EvalError as exc:
        assert exc.code == "E304" and isinstance(untyped, ErrorValue), source
    else:
        assert isinstance(out, returns) and out == untyped, source
