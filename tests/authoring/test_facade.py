"""The authoring kit through the public facade (`formulane.complete`, `format`, `to_json`,
`from_json`...), and the ``lsp``/``fmt`` sub-commands as `formulane.cli` wires them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import formulane
from formulane.authoring.jsonform import JsonFormError

SCHEMA = {"price": "Number", "qty": "Number", "order": "Record{total: Number, tier: Text}"}


def test_facade_exports_old_and_new() -> None:
    for name in ("compile", "evaluate", "check", "apply", "sql_select", "prompt",
                 "function_catalog", "Program", "FormulaError", "ErrorValue", "Limits",
                 "complete", "signature_help", "hover", "diagnose", "format", "to_json",
                 "from_json", "json_form_schema"):
        assert name in formulane.__all__ and hasattr(formulane, name), name


def test_complete_and_signature_help() -> None:
    items = formulane.complete("ROUND(order.", 12, SCHEMA)
    # ROUND wants a Number first: the Number field ranks above the Text one.
    assert [(i.label, i.detail) for i in items] == [("total", "Number"), ("tier", "Text")]
    assert [i.label for i in formulane.complete("UPPER(order.", 12, SCHEMA)] == ["tier", "total"]
    help_ = formulane.signature_help("ROUND(price, ", 13)
    assert help_ is not None and help_.signatures[0].label.startswith("ROUND(")
    assert help_.active_parameter == 1


def test_hover_and_diagnose() -> None:
    info = formulane.hover("ROUND(price, 2)", 1, SCHEMA)
    assert info is not None and "ROUND" in info.markdown()
    problems = formulane.diagnose("UPPER(price) & nope", SCHEMA)
    assert [(d.code, d.span.start if d.span else None) for d in problems] == [
        ("E202", 6), ("E201", 15)]
    assert formulane.diagnose("price * qty", SCHEMA) == []


def test_format() -> None:
    assert formulane.format("round( price*qty ,2) /* money */") == \
        "ROUND(price * qty, 2) /* money */"
    with pytest.raises(formulane.ParseError):
        formulane.format("ROUND(price,")


def test_json_round_trip_through_the_checker() -> None:
    program = formulane.compile('IF(order.total > 100, ROUND(price * 0.9, 2), price)', SCHEMA)
    form = formulane.to_json(program)
    jsonschema.Draft202012Validator(formulane.json_form_schema()).validate(form)
    again = formulane.from_json(json.loads(json.dumps(form)), SCHEMA)
    assert isinstance(again, formulane.Program)
    assert again.source == program.source and again.tree == program.tree
    assert again.evaluate({"price": 10, "qty": 1, "order": {"total": 200, "tier": "a"}}) == 9
    with pytest.raises(formulane.CheckError) as caught:  # the same checker as text
        formulane.from_json({"call": "UPPER", "args": [{"name": "price"}]}, SCHEMA)
    assert caught.value.json_path == "$.args[0]"  # type: ignore[attr-defined]
    with pytest.raises(JsonFormError):
        formulane.from_json({"call": "UPPER"}, SCHEMA)


HARNESS = """
import argparse, sys
from formulane.authoring.cli_commands import COMMANDS, add_parser, run
parser = argparse.ArgumentParser(prog="formulane")
sub = parser.add_subparsers(dest="command", required=True)
add_parser(sub)
args = parser.parse_args(sys.argv[1:])
assert args.command in COMMANDS
sys.exit(run(args))
"""


def _cli(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", HARNESS, *argv], input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_fmt_subcommand(tmp_path: Path) -> None:
    done = _cli("fmt", stdin="if(a>1,'x','y')")
    assert (done.returncode, done.stdout) == (0, 'IF(a > 1, "x", "y")\n')
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - expr: sum(1,2)\n", "utf-8")
    assert _cli("fmt", "--check", "--field", "expr", str(rules)).returncode == 1
    assert _cli("fmt", "--write", "--field", "expr", str(rules)).returncode == 0
    assert rules.read_text("utf-8") == "rules:\n  - expr: SUM(1, 2)\n"
    assert _cli("fmt", "--width", "0").returncode == 2


def test_lsp_subcommand_answers_initialize() -> None:
    """A minimal JSON-RPC exchange over the sub-command's stdio: initialize, shutdown, exit."""
    def frame(obj: dict) -> bytes:
        body = json.dumps(obj).encode("utf-8")
        return f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": None, "capabilities": {},
                    "initializationOptions": {"fields": ["expr"]}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    done = subprocess.run([sys.executable, "-c", HARNESS, "lsp", "--profile", "excel"],
                          input=b"".join(frame(m) for m in messages), capture_output=True,
                          timeout=120)
    out = done.stdout.decode("utf-8")
    replies = [json.loads(part[part.index("{"):]) for part in out.split("Content-Length:")[1:]]
    init = next(r for r in replies if r.get("id") == 1)
    caps = init["result"]["capabilities"]
    assert caps["completionProvider"]["triggerCharacters"] == [".", "(", "{", ","]
    assert caps["hoverProvider"] and caps["documentFormattingProvider"]
    assert any(r.get("id") == 2 for r in replies)
    assert _cli("lsp", "--width", "0").returncode == 2
    unknown = _cli("lsp", "--pack", "nope")
    assert unknown.returncode == 2 and "unknown pack" in unknown.stderr
