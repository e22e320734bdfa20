"""The command line, run as a user runs it: a subprocess, exit codes, stdout and stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "formulane.cli", *args], capture_output=True,
                          text=True, timeout=60)


def test_eval_quickstart() -> None:
    done = run("eval", "ROUND(price * qty * 1.2, 2)", "--var", "price=9.99", "--var", "qty=3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "35.96"


def test_eval_json_is_exact() -> None:
    done = run("eval", "x + 0.2", "--var", "x=0.1", "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"ok": True, "value": "0.3", "type": "Number"}


def test_error_value_is_a_result() -> None:
    done = run("eval", "1/0")
    assert done.returncode == 0 and done.stdout.startswith("#DIV/0!")


def test_formula_error_exit_1_with_carets() -> None:
    done = run("eval", '"1" + 1')
    assert done.returncode == 1
    assert "error[E202]" in done.stderr and "^^^" in done.stderr
    assert 'fix: VALUE("1") + 1' in done.stderr


def test_formula_error_json() -> None:
    done = run("eval", "1 +", "--json")
    assert done.returncode == 1
    payload = json.loads(done.stdout)
    assert payload["ok"] is False and payload["error"]["code"].startswith("E1")
    assert payload["error"]["rendered"].startswith("error[")


def test_usage_error_exit_2() -> None:
    assert run("eval").returncode == 2
    assert run("eval", "x", "--var", "novalue").returncode == 2
    assert run("bogus").returncode == 2


def test_schema_file_and_dates(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"due": "Date", "note": "Text?"}))
    done = run("eval", "EDATE(due, 1)", "--schema", str(schema), "--var", "due=2024-01-31")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2024-02-29"
    done = run("check", "note & due", "--schema", str(schema))
    assert done.returncode == 1 and "E205" in done.stderr


def test_check_reports_type_and_cost() -> None:
    done = run("check", "LEN(\"abc\") * 2")
    assert done.returncode == 0 and done.stdout.startswith("ok: Number")


def test_excel_profile() -> None:
    done = run("eval", '"1" + 1', "--profile", "excel")
    assert done.returncode == 0 and done.stdout.strip() == "2"


def test_functions_listing() -> None:
    done = run("functions", "ROUND")
    assert done.returncode == 0 and "ROUND(" in done.stdout
    assert run("functions", "nosuchthing").returncode == 1
    listing = json.loads(run("functions", "--json").stdout)
    assert {f["name"] for f in listing} >= {"IF", "SUM", "ROUND", "DATE"}
