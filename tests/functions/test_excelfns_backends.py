"""The issue-11 functions that have a polars and a SQL form (`columnar/forms/math/elementwise*`),
on the scalar engine, polars and DuckDB, in float and decimal mode, over rows that cross every
domain edge (0, +-1, the 2^27 trigonometric limit, overflow near 710, blanks); and every
function of the issue-11 modules carries an explicit decision for both backends.

Values agree within the columnar float policy (1e-9 relative, `_engines.REL`); error codes
must be equal row by row.
"""

from __future__ import annotations

import pytest

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

import importlib  # noqa: E402
from decimal import Decimal  # noqa: E402

from formulane.functions.registry import default_registry  # noqa: E402
from formulane.functions.spec import UNDECIDED, FunctionSpec, Refuse  # noqa: E402
from functions import _engines as E  # noqa: E402

REGISTRY = default_registry().with_packs("finance", "statistics")
PROFILE = "excel"
MODULES = tuple(importlib.import_module(f"formulane.functions.{name}") for name in (
    "trig", "conversion", "engineering", "moremath", "distributions", "depreciation",
    "cashflows", "bonds", "database", "complex", "morestats"))
BACKENDS = ("polars-float", "polars-decimal", "duckdb-float", "duckdb-decimal")

X = [0.0, 1.0, -1.0, 0.5, -0.5, 0.999, -0.999, 1.001, 2.0, -2.5, 1e-9, 3.14159, 30.0, 45.0,
     100.0, 709.0, 711.0, -711.0, 2.0**27, -(2.0**27), 2.0**27 - 1, 1e15, None]
DATASETS = {
    "x": ({"x": "Number?"}, [{"x": v} for v in X]),
    "xy": ({"x": "Number?", "y": "Number?"},
           [{"x": a, "y": b} for a in [0.0, 1.0, -2.5, 4.0, None] for b in [0.0, 1.0, -2.5, 4.0,
                                                                             None]]),
    "dep": ({"c": "Number?", "s": "Number?", "n": "Number?", "p": "Number?"},
            [{"c": c, "s": s, "n": n, "p": q} for c in [30000.0, 1000.0, None]
             for s in [7500.0, 0.0] for n in [10.0, 0.0, -1.0, 3.5] for q in [1.0, 10.0, 11.0,
                                                                              0.0]]),
}
CASES = [(f"{name}(x)", "x") for name in (
    "SINH", "COSH", "TANH", "ASINH", "ACOSH", "ATANH", "COT", "ACOT", "COTH", "ACOTH", "CSC",
    "SEC", "CSCH", "SECH", "SQRTPI", "FISHER", "FISHERINV")] + [
    ("DELTA(x, y)", "xy"), ("GESTEP(x, y)", "xy"), ("DELTA(x)", "xy"),
    ("STANDARDIZE(x, 1, y)", "xy"),
    ("SLN(c, s, n)", "dep"), ("SYD(c, s, n, p)", "dep"),
]


def _specs() -> list[FunctionSpec]:
    seen: dict[int, FunctionSpec] = {}
    for module in MODULES:
        for value in vars(module).values():
            if isinstance(value, FunctionSpec):
                seen[id(value)] = value
    return sorted(seen.values(), key=lambda s: s.name)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_forms_agree_with_the_scalar_engine(case: tuple[str, str], backend: str) -> None:
    formula, dataset = case
    engine, mode = E.engine_mode(backend)
    schema, all_rows = DATASETS[dataset]
    rows = E.rows_for(mode, all_rows)
    expected = E.run_scalar(formula, schema, rows, profile=PROFILE, registry=REGISTRY)
    actual = E.run(backend, formula, schema, rows, profile=PROFILE, registry=REGISTRY)
    decimal_polars = engine == "polars" and mode == "decimal"
    # Decimal(38, 18) keeps 18 places: a tiny float result keeps fewer significant digits
    E.assert_agree(f"{formula} on {backend}", rows, expected, actual,
                   decimal_limit=Decimal("1e20") if decimal_polars else None,
                   abs_tol=1e-17 if decimal_polars else 0.0)


def test_every_function_has_an_explicit_decision() -> None:
    specs = _specs()
    assert len(specs) >= 170
    for spec in specs:
        for decision in E.decisions(spec):
            assert decision is not UNDECIDED, spec.name
            assert isinstance(decision, Refuse) or callable(decision), spec.name
            if isinstance(decision, Refuse):
                assert len(decision.reason) > 30, f"{spec.name}: say why"


def test_every_form_has_a_case() -> None:
    text = " ".join(c[0] for c in CASES)
    missing = [s.name for s in _specs()
               if any(callable(d) and not isinstance(d, Refuse) for d in E.decisions(s))
               and f"{s.name}(" not in text]
    assert not missing, f"forms without a three-engine case: {missing}"


def test_refusals_are_typed_and_at_compile_time() -> None:
    for formula, backend in (("DEC2HEX(x)", "polars"), ("ERF(x)", "sql")):
        call = E.run_polars if backend == "polars" else E.run_duckdb
        E.assert_refused(backend, "", call, formula, {"x": "Number?"}, [{"x": 1.0}], "float",
                         profile=PROFILE, registry=REGISTRY)
