"""bench/columnar_sql_size.py's nested section runs to its end for every dialect: a formula the
dialect cannot express (PostgreSQL has no REGEXP_EXTRACT_ALL for the text family, no LIST_MAX
for MAX of many) is counted and reported as refused, not a crash of the whole bench (it
stopped with an uncaught `Unsupported` for ``--dialect postgres`` before)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "columnar_sql_size.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("columnar_sql_size", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    setattr(module, "REPEAT", 1)  # (sizes are the subject here, not times)
    return module


def test_nested_section_reports_postgres_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    bench.nested_and_largest("postgres", "float")
    out = capsys.readouterr().out
    # the text family and the MAX of many are refused there; ROUND and IF are measured
    assert "text d1" in bench.NESTED_REFUSED and "MAX of MAXes" in bench.NESTED_REFUSED
    assert "refused (" in out and "REGEXP_EXTRACT_ALL" in out
    assert f"refused for postgres: {len(bench.NESTED_REFUSED)} of the nested" in out
    measured = [line for line in out.splitlines() if line.strip().startswith(("ROUND", "IF"))]
    assert len(measured) == 4 and all("chars" in line or "/n" in line for line in measured)


def test_nested_section_refuses_nothing_on_duckdb(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _bench()
    bench.nested_and_largest("duckdb", "float")
    assert bench.NESTED_REFUSED == []
    assert "refused" not in capsys.readouterr().out
