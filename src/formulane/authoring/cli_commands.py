"""The authoring sub-commands of ``formulane``: ``lsp`` (the language server over stdio) and
``fmt`` (the formatter over files or stdin).

`formulane.cli` wires them with ``add_parser(subparsers)`` and, when ``args.command`` is in
`COMMANDS`, ``run(args)`` (the exit status). Building the parsers imports neither pygls nor
PyYAML, so ``formulane --help`` works without the ``lsp`` extra; ``formulane lsp`` without it
says which extra to install and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import fmt

__all__ = ["COMMANDS", "add_lsp_arguments", "add_parser", "run"]

COMMANDS = ("lsp", "fmt")


def add_lsp_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The language server's options (shared with ``python -m formulane.authoring.lsp``)."""
    parser.add_argument("--field", action="append", default=None, metavar="NAME",
                        help="a YAML/JSON key whose string values are formulas (repeatable; "
                             "default: formula)")
    parser.add_argument("--profile", choices=("strict", "excel"), default="strict")
    parser.add_argument("--width", type=int, default=80, help="the formatter's line width")
    parser.add_argument("--pack", action="append", default=[], help="enable a function pack")
    return parser


def add_parser(subparsers: Any) -> None:
    """Add ``lsp`` and ``fmt`` to an argparse sub-parsers object."""
    server = subparsers.add_parser(
        "lsp", help="the formula language server (stdio; needs the lsp extra)",
        description="Diagnostics, completion, hover, signature help and formatting for "
                    ".formula files and formulas in YAML/JSON configs, over stdio. The schema "
                    "is formulane.schema.json next to each document.")
    add_lsp_arguments(server)
    server.set_defaults(func=run)
    formatter = subparsers.add_parser(
        "fmt", help="format formulas (stdin, .formula, YAML and JSON files)",
        description=fmt.__doc__.split("\n")[0] if fmt.__doc__ else None)
    fmt.add_arguments(formatter)
    formatter.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the ``lsp`` or ``fmt`` command parsed by `add_parser`; the exit status."""
    if args.command == "fmt":
        return fmt.run(args)
    if args.command == "lsp":
        try:
            from .lsp import serve
        except ImportError as exc:
            print(f"formulane lsp: {exc.name or 'pygls'} is missing; install the lsp extra: "
                  "pip install 'formulane[lsp]'", file=sys.stderr)
            return 2
        return serve(args)
    print(f"formulane: not an authoring command: {args.command!r}", file=sys.stderr)
    return 2
