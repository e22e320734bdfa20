"""``formulane fmt``: format formulas in files or from stdin.

    formulane fmt                          # a formula on stdin, the formatted one on stdout
    formulane fmt rules.yaml calc.formula  # the formatted files on stdout
    formulane fmt --write config/*.yaml    # rewrite the files in place
    formulane fmt --check config/          # exit 1 if a file would change (CI)

Files: ``.formula`` (one formula), ``.yaml``/``.yml`` and ``.json`` (string values under the
``--field`` keys, ``formula`` by default); a directory stands for the files of those kinds
under it. Exit codes: 0 done (or nothing to change with ``--check``), 1 a file would change
(``--check``) or a formula does not parse (it is left as it is, its error on stderr), 2 a
usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from ..errors import FormulaError
from .documents import YAML_MISSING, document_kind, format_document, yaml_available
from .formatter import format as format_formula

__all__ = ["add_arguments", "main", "run"]


def _files(paths: Sequence[str]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out += sorted(p for p in path.rglob("*") if p.is_file() and document_kind(p.name))
        else:
            out.append(path)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The ``fmt`` options (shared by ``formulane fmt`` and ``python -m ...fmt``)."""
    parser.add_argument("paths", nargs="*", help=".formula, .yaml, .yml, .json files or folders")
    parser.add_argument("--width", type=int, default=80)
    parser.add_argument("--field", action="append", default=None, metavar="NAME",
                        help="YAML/JSON key holding formulas (repeatable; default: formula)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", "-w", action="store_true", help="rewrite files in place")
    mode.add_argument("--check", action="store_true", help="exit 1 if a file would change")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = add_arguments(argparse.ArgumentParser(prog="formulane fmt",
                                                   description=(__doc__ or "").split("\n")[0]))
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    return run(args)


def run(args: argparse.Namespace) -> int:
    """Format what ``args`` (parsed by `add_arguments`) names; the exit status."""
    if args.width < 1:
        print("formulane fmt: --width must be positive", file=sys.stderr)
        return 2
    fields = tuple(args.field or ["formula"])
    if not args.paths:
        source = sys.stdin.read()
        try:
            print(format_formula(source, args.width))
        except FormulaError as exc:
            print(exc.render(source), file=sys.stderr)
            return 1
        return 0
    status = 0
    for path in _files(args.paths):
        kind = document_kind(path.name)
        if not kind:
            print(f"formulane fmt: {path}: not a .formula, .yaml or .json file", file=sys.stderr)
            return 2
        if kind == "yaml" and not yaml_available():
            print(f"formulane fmt: {path}: {YAML_MISSING}", file=sys.stderr)
            return 2
        try:
            text = path.read_text("utf-8")
        except OSError as exc:
            print(f"formulane fmt: {path}: {exc}", file=sys.stderr)
            return 2
        formatted, problems = format_document(text, kind, args.width, fields)
        for region, problem in problems:
            where = f"{path}" + (f" ({region.key})" if region.key else "")
            detail = problem.render(region.text) if isinstance(problem, FormulaError) else problem
            print(f"{where}:\n{detail}", file=sys.stderr)
            status = 1
        if args.check:
            if formatted != text:
                print(f"would reformat {path}", file=sys.stderr)
                status = 1
        elif args.write:
            if formatted != text:
                path.write_text(formatted, "utf-8")
        else:
            sys.stdout.write(formatted)
    return status


if __name__ == "__main__":
    sys.exit(main())
