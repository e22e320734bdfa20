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


def test_functions_sorted() -> None:
    names = [f["name"] for f in json.loads(run("functions", "--json").stdout)]
    assert names == sorted(names)
    heads = [line.split("  ")[0] for line in run("functions").stdout.splitlines()
             if line and not line.startswith(" ")]
    assert heads == sorted(heads)


def test_functions_into_head_is_no_error() -> None:
    """A real pipe into a reader that stops after one line: no BrokenPipeError, exit 0."""
    producer = subprocess.Popen([sys.executable, "-m", "formulane.cli", "functions"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert producer.stdout is not None
    first = producer.stdout.readline()
    producer.stdout.close()  # what head does after its lines
    _, err = producer.communicate(timeout=60)
    assert first.startswith(b"ABS")
    assert producer.returncode == 0 and b"Error" not in err and b"Traceback" not in err, err


def test_eval_explain() -> None:
    done = run("eval", "--explain", "IF(x > 1, x / 0, 2)", "--var", "x=3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "IF(x > 1, x / 0, 2)  : Number = #DIV/0! (division by zero)"
    assert "  x / 0  : Number = #DIV/0! (division by zero)  <- error arises here" in lines
    assert "  2  : Number = (not evaluated)" in lines
    tree = json.loads(run("eval", "--explain", "--json", "1 + 2").stdout)
    assert tree["result"] == "3" or tree["result"] == 3


def test_diagnostics_coloured_on_a_terminal_only() -> None:
    import os
    import pty

    plain = run("eval", "ROUND(1,5; 2)")
    assert "\x1b[" not in plain.stderr and "= fix: ROUND(1.5, 2)" in plain.stderr
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "formulane.cli", "eval", "ROUND(1,5; 2)"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=follower, timeout=60, env=dict(os.environ, TERM="xterm"))
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    coloured = b"".join(chunks).decode()
    assert done.returncode == 1
    assert "\x1b[1;31merror[E104]" in coloured
    assert "ROUND(1.5, 2)" in coloured
