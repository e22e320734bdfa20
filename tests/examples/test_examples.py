"""Every program in examples/ runs as a user runs it (issue 16 item 7)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from xml.etree import ElementTree

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [str(EXAMPLES.parent / "src"), os.environ.get("PYTHONPATH", "")]))


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations there
    spec.loader.exec_module(module)
    return module


def test_flights_pipeline(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    out = tmp_path / "flights.parquet"
    done = subprocess.run([sys.executable, str(EXAMPLES / "flights_pipeline.py"), str(out)],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 0, done.stderr
    table = pl.read_parquet(out)
    source = pl.read_csv(EXAMPLES / "data" / "flights_slice.csv")
    assert table.height == source.height == 1982
    # a cancelled flight has no air time: its speed is the error value, row for row
    no_air = source["air_time"].is_null()
    assert (table["speed_mph__error"] == "#DIV/0!").fill_null(False).to_list() == no_air.to_list()
    row = table.filter(pl.col("air_time").is_not_null()).row(0, named=True)
    assert row["speed_mph"] == pytest.approx(round(row["distance"] / (row["air_time"] / 60), 1))
    assert table["route"][0] == f"{source['origin'][0]}-{source['dest'][0]}"


def test_hypothesis_example_file(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--junitxml={report}", str(EXAMPLES / "test_pricing_properties.py")],
                          capture_output=True, text=True, env=ENV, timeout=600, cwd=EXAMPLES)
    assert done.returncode == 0, done.stdout[-3000:]
    suite = ElementTree.parse(report).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "0"


def test_pricing_app() -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    client = TestClient(_load("pricing_app").app)
    ok = client.put("/customers/acme/rule",
                    json={"formula": 'ROUND(price * qty * IF(country = "FR", 1.2, 1), 2)'})
    assert ok.status_code == 200, ok.text
    got = client.post("/customers/acme/quote",
                      json={"price": "9.99", "qty": 3, "country": "FR"})
    assert got.json() == {"total": "35.96"}
    bad = client.put("/customers/acme/rule", json={"formula": "ROUND(price * qty; 2)"})
    assert bad.status_code == 422
    detail = bad.json()["detail"]
    assert detail["code"] == "E104"
    assert "Suggested formula: ROUND(price * qty, 2)" in detail["message"]
    blank = client.put("/customers/beta/rule", json={"formula": "price * (1 - LEN(coupon))"})
    assert blank.json()["detail"]["code"] == "E205"
    assert client.post("/customers/zed/quote",
                       json={"price": "1", "qty": 1, "country": "FR"}).status_code == 404


def test_agent_loop_with_both_sdks() -> None:
    """The OpenAI and Anthropic SDKs' real clients against the example's loopback stand-in:
    the model asks for the typed tool, the loop runs it and sends the result back."""
    done = subprocess.run([sys.executable, str(EXAMPLES / "agent_loop.py")],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ['It costs {"result":"35.96"}.'] * 2
