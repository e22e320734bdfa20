"""Formula-lane families: Python-syntax escapes, Unicode tricks in names, numeric traps and
host objects. Every input ends in a value or a FormulaError with a stable code, never another
exception. Cases: cases/formula_escapes.yaml, unicode_names.yaml, numeric_traps.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import formulane
from formulane import ErrorValue, FormulaError

HERE = Path(__file__).parent / "cases"


def load(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load((HERE / name).read_text())


def value_of(spec: Any) -> Any:
    if isinstance(spec, dict) and set(spec) == {"bigint"}:
        digits = abs(spec["bigint"])
        return (-1 if spec["bigint"] < 0 else 1) * 10 ** digits
    if isinstance(spec, dict) and set(spec) == {"float"}:
        return float(spec["float"])
    if isinstance(spec, dict):
        return {k: value_of(v) for k, v in spec.items()}
    return spec


def run(case: dict[str, Any]) -> Any:
    variables = {k: value_of(v) for k, v in (case.get("vars") or {}).items()}
    kwargs = {"now": case["now"]} if "now" in case else {}
    return formulane.evaluate(case["expr"], variables, **kwargs)


CASES = load("formula_escapes.yaml") + load("unicode_names.yaml") + load("numeric_traps.yaml")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_formula_input(case: dict[str, Any]) -> None:
    try:
        out = run(case)
    except FormulaError as exc:
        assert "error" in case, f"unexpected {exc.code}: {exc}"
        assert exc.code.startswith(case["error"]), exc
        if "hint" in case:
            assert case["hint"] in (exc.hint or ""), exc.hint
        return
    assert "error" not in case, f"expected {case['error']}, got {out!r}"
    if "value" in case:
        assert out == case["value"]
    elif "value_error" in case:
        assert isinstance(out, ErrorValue) and out.code == case["value_error"], out
    elif "value_type" in case:
        assert type(out).__name__ == case["value_type"]


class _Raising:
    """A host object whose every method raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("host fault")

    def __repr__(self) -> str:
        raise RuntimeError("host fault")


class _RaisingList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise RuntimeError("host fault")

    def __len__(self) -> int:
        raise RuntimeError("host fault")


class _RaisingMapping(dict):  # type: ignore[type-arg]
    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("host fault")

    def items(self) -> Any:
        raise RuntimeError("host fault")

    def __iter__(self) -> Any:
        raise RuntimeError("host fault")


@pytest.mark.parametrize("expr,variables", [
    ("x", {"x": _Raising()}),
    ("COUNTA(x)", {"x": _RaisingList([1])}),
    ("x.a", {"x": _RaisingMapping(a=1)}),
    ("x", _RaisingMapping(x=1)),
], ids=["object", "list", "record", "variables"])
@pytest.mark.parametrize("mode", ["evaluate", "explain"])
def test_host_objects_with_raising_methods(expr: str, variables: Any, mode: str) -> None:
    # issue 15 item 11: host objects whose methods raise gave foreign exceptions
    with pytest.raises(FormulaError) as caught:
        program = formulane.compile(expr, {"x": "Any"})
        getattr(program, mode)(variables)
    assert caught.value.code == "E301"


@pytest.mark.parametrize("width", [0, -1, "x", 1.5])
def test_format_width_is_checked(width: Any) -> None:
    with pytest.raises(FormulaError) as caught:
        formulane.format("IF(a, b, c)", width=width)
    assert caught.value.code == "E301"


@pytest.mark.parametrize("fn", ["complete", "hover", "signature_help"])
def test_authoring_helpers_bound_their_input(fn: str) -> None:
    # issue 15 item 11: 9.3 s at 800 kB
    from formulane import authoring

    helper = getattr(authoring, fn)
    with pytest.raises(FormulaError) as caught:
        helper("SUM(" + "1," * 400_000 + "1)", 5)
    assert caught.value.code == "E401"
