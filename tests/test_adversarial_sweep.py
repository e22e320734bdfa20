"""Every function of the registry (all packs) under hostile arguments, in both profiles.

Issue 3 asks that huge counts, negative positions, empty lists, blanks, errors in every
argument and 32,767-character texts give the documented error value or a `LimitExceeded`
within the budget, never a Python exception. Rather than hand-pick cases per family, this sweep
reads each signature from the registry and, starting from an ordinary call, replaces one
argument at a time by each hostile value of its type. A combination the checker refuses (a
blank where the strict profile wants a value, say) is a clean `CheckError` and counts as such;
the test asserts only that nothing but a `FormulaError` or a value ever comes out, and that the
sweep really ran (most combinations check and run).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from typing import Any, Iterator

import pytest

import formulane
from formulane import ErrorValue, FormulaError, Limits
from formulane.functions.registry import default_registry
from formulane.functions.spec import FunctionSpec, Sig
from formulane.reference import _all_packs
from formulane.types import Type

REGISTRY = _all_packs(default_registry())
NOW = dt.datetime(2024, 2, 29, 12, 0, tzinfo=dt.timezone.utc)
LIMITS = Limits(max_cost=200_000)  # a small budget: runaway work must stop early and cleanly

SCHEMA = {"nb": "Number?", "tb": "Text?", "bb": "Boolean?", "db": "Date?", "big": "Text",
          "xs": "List[Number]", "ts": "List[Text]", "rec": "Record{a: Number, b: Text?}"}
VARIABLES = {"nb": None, "tb": None, "bb": None, "db": None, "big": "x" * 32_767,
             "xs": [], "ts": ["", "a" * 1000, "*?~"], "rec": {"a": 1, "b": None}}

#: (ordinary value, hostile values) per type kind: formula text of that kind.
POOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Number": ("2", ("0", "-1", "0.5", "-2.5", "10^15", "-(10^15)", "10^300", "-(10^300)",
                     "10^-30", "2^53 + 1", "1/0", "nb", "32767", "-32768", "1000000000")),
    "Text": ('"ab"', ('""', "big", "tb", '"-1"', '"1e400"', '"%"', '"*?~[("', '"é😀\u200b"',
                      'TEXT(1/0, "0")', '"2024-02-30"', '"   "')),
    "Boolean": ("TRUE", ("FALSE", "bb", "1/0 > 0")),
    "Date": ("DATE(2024, 1, 31)", ("DATE(1900, 1, 1)", "DATE(9999, 12, 31)",
                                   "DATE(2024, 2, 29)", "db", "DATE(1, 1, 1/0)")),
    "DateTime": ("DATETIME(2024, 1, 31, 23, 59, 59)",
                 ("DATETIME(1900, 1, 1, 0, 0, 0)", "DATETIME(9999, 12, 31, 23, 59, 59)")),
    "Duration": ("TIME(1, 0, 0)", ("TIME(0, 0, 0)", "TIME(-100000, 0, 0)", "TIME(10^9, 0, 0)")),
    "List": ("[1, 2, 3]", ("[]", "xs", "[1, 1/0]", "[nb, 1]", "SEQUENCE(100000)",
                           "SEQUENCE(1000, 1000)")),
    "Grid": ("[[1, 2], [3, 4]]", ("[]", "[[]]", "[[1, 2], [3]]", "[[1, 1/0], [3, 4]]",
                                  "[[nb, 1], [2, 3]]", "[[10^300, 1], [1, 10^300]]",
                                  "TRANSPOSE(SEQUENCE(300))", "MUNIT(65)")),
    "TextList": ('["a", "b"]', ("[]", "ts", '["", tb]', '[TEXT(1/0, "0")]')),
    "Record": ("rec", ()),
}


def _pool(t: Type) -> tuple[str, tuple[str, ...]]:
    kind = t.kind
    if kind in ("Var", "Any"):
        return POOLS["Number"]
    if kind == "Many":
        elem = t.elem
        scalar = _pool(elem) if elem is not None else POOLS["Number"]
        lists = POOLS["TextList"] if elem is not None and elem.kind == "Text" else POOLS["List"]
        return scalar[0], scalar[1] + lists[1]
    if kind == "List" and t.elem is not None and t.elem.kind == "List":
        return POOLS["Grid"]  # a 2-D array (a list of rows)
    if kind == "List":
        return POOLS["TextList"] if t.elem is not None and t.elem.kind == "Text" \
            else POOLS["List"]
    return POOLS.get(kind, POOLS["Number"])


def _lambda(t: Type) -> str:
    params = [f"p{i}" for i in range(len(t.params))]
    ret = t.elem
    body = {"Boolean": "TRUE", "Text": '"a"', "Number": "1"}.get(ret.kind if ret else "", "")
    if not body:
        body = params[0] if params else "1"
    head = params[0] if len(params) == 1 else f"({', '.join(params)})"
    return f"{head} => {body}"


def _calls(spec: FunctionSpec) -> Iterator[str]:
    """An ordinary call per signature, then each argument replaced by each hostile value."""
    seen: set[str] = set()
    for sig in spec.signatures:
        for args in _argument_lists(sig):
            source = f"{spec.name}({', '.join(args)})"
            if source not in seen:
                seen.add(source)
                yield source


def _argument_lists(sig: Sig) -> Iterator[list[str]]:
    params = [p for p in sig.params if not p.optional] or list(sig.params[:1])
    required = len(params)
    params = list(sig.params)  # optional ones too: their edge values matter as much
    ordinary = [_lambda(p.type) if p.type.kind == "Fn" else _pool(p.type)[0] for p in params]
    for n in sorted({required, len(params)}):
        yield ordinary[:n]
        for i in range(n):
            if params[i].type.kind == "Fn":
                continue
            for hostile in _pool(params[i].type)[1]:
                yield ordinary[:i] + [hostile] + ordinary[i + 1:n]


def _is_function(spec: FunctionSpec) -> bool:
    """Callable by name (operators are reached through their syntax: see the OpMatrix suite)."""
    return spec.category != "operators" and re.fullmatch(r"[A-Z][A-Z0-9_.]*", spec.name) is not None


FUNCTIONS = sorted((s for s in REGISTRY if _is_function(s)), key=lambda s: s.name)


@pytest.mark.parametrize("profile", ["strict", "excel"])
@pytest.mark.parametrize("spec", FUNCTIONS, ids=lambda s: s.name)
def test_hostile_arguments_give_values_or_formula_errors(spec: FunctionSpec, profile: str) -> None:
    outcomes: Counter[str] = Counter()
    for source in _calls(spec):
        try:
            program = formulane.compile(source, SCHEMA, profile=profile, limits=LIMITS,
                                        registry=REGISTRY)
        except FormulaError as exc:
            outcomes["check:" + exc.code] += 1
            continue
        try:
            result = program.evaluate(VARIABLES, now=NOW)
        except FormulaError as exc:
            outcomes["eval:" + exc.code] += 1
            assert exc.code.startswith(("E3", "E4")), f"{source}: {exc}"
            continue
        except Exception as exc:  # noqa: BLE001 - exactly what must never happen
            pytest.fail(f"{profile} {source} raised {type(exc).__name__}: {exc}")
        outcomes["error value" if isinstance(result, ErrorValue) else "value"] += 1
        _assert_sane(source, result)
    ran = outcomes["value"] + outcomes["error value"] + sum(
        n for k, n in outcomes.items() if k.startswith("eval:"))
    assert ran > 0, f"{spec.name}: no hostile call even type-checked: {dict(outcomes)}"


def _assert_sane(source: str, value: Any) -> None:
    """Results stay inside the engine's value space (no NaN, no inf, texts within limits)."""
    if isinstance(value, str):
        assert len(value) <= LIMITS.max_text_length, source
    elif isinstance(value, list):
        assert len(value) <= LIMITS.max_list_length, source
        for item in value[:100]:
            _assert_sane(source, item)
    elif hasattr(value, "is_finite"):
        assert value.is_finite(), f"{source} -> {value}"
