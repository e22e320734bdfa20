"""The `formulane` command line: eval, check, functions, apply, fmt, lsp, mcp.

Exit codes: 0 success (an error *value* such as #DIV/0! is a result, printed as such), 1 a
formula error (rendered with carets, the same text the API and tool results carry), 2 a usage
error. ``--json`` prints machine-readable output; numbers are exact decimal strings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any, Sequence

from . import compile as compile_formula
from . import function_catalog
from .errors import FormulaError
from .schema import infer_schema, normalize_schema
from .types import Type
from .values import ErrorValue


def to_jsonable(value: Any) -> Any:
    """Engine output as JSON data: numbers as exact decimal strings, dates as ISO text."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral_value() and \
            abs(value) < Decimal("1e30") else str(value.normalize())
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return {"seconds": str(Decimal(value.days * 86400 + value.seconds)
                               + Decimal(value.microseconds) / Decimal(10**6))}
    if isinstance(value, ErrorValue):
        return value.to_dict()
    if isinstance(value, list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    return str(value)


def display(value: Any) -> str:
    if isinstance(value, ErrorValue):
        return value.code + (f"  ({value.message})" if value.message else "")
    if value is None:
        return "(blank)"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    jsonable = to_jsonable(value)
    return jsonable if isinstance(jsonable, str) else json.dumps(jsonable, ensure_ascii=False)


class UsageError(Exception):
    pass


def parse_var(text: str, schema: dict[str, Type]) -> tuple[str, Any]:
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise UsageError(f"--var takes name=value, got {text!r}")
    name = name.strip()
    declared = schema.get(name)
    return name, convert_raw(raw, declared, name)


def convert_raw(raw: str, declared: Type | None, name: str) -> Any:
    """A command-line value: JSON when it parses (numbers exact), else text; a declared Date,
    DateTime or Duration type reads ISO text."""
    kind = declared.kind if declared is not None else None
    try:
        if kind == "Date":
            return dt.date.fromisoformat(raw)
        if kind == "DateTime":
            return dt.datetime.fromisoformat(raw)
    except ValueError:
        raise UsageError(f"--var {name}: {raw!r} is not an ISO {kind}") from None
    if kind == "Text":
        return raw
    try:
        return json.loads(raw, parse_float=Decimal, parse_int=Decimal)
    except json.JSONDecodeError:
        return raw


def load_schema(path: str | None) -> dict[str, Type]:
    if path is None:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read schema {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError("a schema file holds a JSON object of names to type strings")
    return normalize_schema(data)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="formulane", description=(__doc__ or "").split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="evaluate a formula")
    ev.add_argument("expr")
    ev.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                    help="a variable (JSON value, or text); repeatable")
    ev.add_argument("--schema", help="JSON file mapping names to types")
    ev.add_argument("--profile", choices=("strict", "excel"), default="strict")
    ev.add_argument("--now", help="ISO datetime for TODAY()/NOW() (default: the current time)")
    ev.add_argument("--json", action="store_true", help="print JSON")
    ev.add_argument("--explain", action="store_true",
                    help="print the tree of sub-expressions with their values")

    ck = sub.add_parser("check", help="type-check a formula without evaluating it")
    ck.add_argument("expr")
    ck.add_argument("--schema", help="JSON file mapping names to types")
    ck.add_argument("--profile", choices=("strict", "excel"), default="strict")
    ck.add_argument("--json", action="store_true")

    fn = sub.add_parser("functions", help="list functions (optionally matching QUERY)")
    fn.add_argument("query", nargs="?", default="")
    fn.add_argument("--json", action="store_true")
    fn.add_argument("--no-pager", action="store_true",
                    help="never page (a terminal pages through $PAGER by default)")

    mcp = sub.add_parser("mcp", help="serve the typed tools over MCP (stdio or HTTP)")
    mcp.add_argument("rest", nargs=argparse.REMAINDER)
    try:  # `apply` needs the columnar extra (polars)
        from .columnar.polars.cli_apply import add_parser as add_apply

        add_apply(sub)
    except ImportError:
        pass
    from .authoring.cli_commands import add_parser as add_authoring  # lsp, fmt

    add_authoring(sub)
    from .escalation.cli_lanes import add_parser as add_lanes  # route, pilot

    add_lanes(sub)
    try:  # `serve`, `keys`, `db` need the api extra (FastAPI, uvicorn, SQLAlchemy)
        from .api.cli import add_parser as add_api

        add_api(sub)
    except ImportError:
        pass
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["mcp"]:
        # The MCP server parses its own options (--http, --port, --registry...).
        from .mcp import main as mcp_main

        return int(mcp_main(args_list[1:]) or 0)
    if args_list[:1] == ["apply"]:
        # Its own parser: building every sub-command's would import the service (about 1 s).
        from .columnar.polars.cli_apply import main as apply_main

        return apply_main(args_list[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    try:
        if args.command == "eval":
            return cmd_eval(args)
        if args.command == "check":
            return cmd_check(args)
        if args.command == "functions":
            return cmd_functions(args)
        if args.command in ("lsp", "fmt"):
            from .authoring.cli_commands import run as run_authoring

            return run_authoring(args)
        if args.command in ("route", "pilot"):
            return int(args.func(args))
        if getattr(args, "api_run", None) is not None:  # serve, keys, db (formulane.api.cli)
            return int(args.api_run(args))
        if args.command == "apply":
            from .columnar.polars.cli_apply import run as run_apply

            return run_apply(args)
    except UsageError as exc:
        print(f"formulane: {exc}", file=sys.stderr)
        return 2
    except FormulaError as exc:
        report(exc, getattr(args, "expr", None), getattr(args, "json", False))
        return 1
    return 2


def report(exc: FormulaError, source: str | None, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"ok": False, "error": exc.to_dict(source)}, ensure_ascii=False))
    else:
        print_diagnostic(exc.render(source))


#: Line styles of a rendered diagnostic on a terminal (rich markup styles).
_STYLES = (("error", "bold red"), ("warning", "bold yellow"), ("= hint", "cyan"),
           ("= fix", "green"))


def print_diagnostic(text: str) -> None:
    """A rendered diagnostic to stderr: coloured (rich) when stderr is a terminal, the plain
    text otherwise, so pipes and tests see exactly the API's rendering."""
    stream = sys.stderr
    try:
        from rich.console import Console
        from rich.text import Text
    except ImportError:  # the report extra is not installed
        print(text, file=stream)
        return
    if not stream.isatty():
        print(text, file=stream)
        return
    console = Console(file=stream, highlight=False, soft_wrap=True)
    for line in text.split("\n"):
        body = line.lstrip(" 0123456789")
        style = next((st for prefix, st in _STYLES if body.startswith(prefix)
                      or line.startswith(prefix)), "")
        if body.startswith("|") and set(body[1:].strip().split(" ")[0]) == {"^"}:
            style = "bold red"  # the caret line
        elif body.startswith("-->") or body.startswith("|"):
            style = "dim" if body.startswith("-->") else ""
        console.print(Text(line, style=style))


def cmd_eval(args: argparse.Namespace) -> int:
    schema = load_schema(args.schema)
    variables = dict(parse_var(v, schema) for v in args.var)
    if not args.schema:
        schema = infer_schema(variables)
    now = None
    if args.now:
        try:
            now = dt.datetime.fromisoformat(args.now)
        except ValueError:
            raise UsageError(f"--now {args.now!r} is not an ISO datetime") from None
        if now.tzinfo is None:
            now = now.replace(tzinfo=dt.timezone.utc)
    program = compile_formula(args.expr, schema, profile=args.profile)
    for warning in program.warnings:
        print_diagnostic(warning.render(args.expr))
    if args.explain:
        explanation = program.explain(variables, now=now)
        if args.json:
            print(explanation.to_json())
        else:
            print(explanation.to_text())
            print(f"= {display(explanation.result)}")
        return 0
    value = program.evaluate(variables, now=now)
    if args.json:
        print(json.dumps({"ok": True, "value": to_jsonable(value), "type": str(program.type)},
                         ensure_ascii=False))
    else:
        print(display(value))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    schema = load_schema(args.schema)
    program = compile_formula(args.expr, schema, profile=args.profile)
    if args.json:
        print(json.dumps({"ok": True, "type": str(program.type),
                          "cost_bound": program.cost_bound, "uses": list(program.uses),
                          "warnings": [w.to_dict(args.expr) for w in program.warnings]}))
    else:
        for warning in program.warnings:
            print_diagnostic(warning.render(args.expr))
        print(f"ok: {program.type} (cost bound {program.cost_bound:,})")
    return 0


def cmd_functions(args: argparse.Namespace) -> int:
    query = args.query.lower()
    rows = sorted((f for f in function_catalog()
                   if not query or query in f["name"].lower() or query in f["doc"].lower()
                   or query == f["category"]), key=lambda f: f["name"])
    if args.json:
        return _emit(json.dumps(rows, ensure_ascii=False, indent=2), page=False)
    if not rows:
        print(f"no function matches {args.query!r}", file=sys.stderr)
        return 1
    lines: list[str] = []
    for f in rows:
        lines.append(f"{f['name']}  [{f['category']}]  {f['doc']}")
        lines += [f"    {s}" for s in f["signatures"]]
        lines += [f"    e.g. {e}" for e in f["examples"][:2]]
    return _emit("\n".join(lines), page=not args.no_pager)


def _emit(text: str, *, page: bool) -> int:
    """Print ``text``: through the pager ($PAGER, else less) on a terminal, plainly into a
    pipe. A reader that stops early (``| head``) is no error: the broken pipe ends the output
    quietly, as the Python docs recommend (stdout pointed at devnull so the exit flush is
    silent too)."""
    try:
        if page and sys.stdout.isatty() and sys.stdin.isatty():
            import pydoc

            pydoc.pager(text)
        else:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
    except BrokenPipeError:
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
