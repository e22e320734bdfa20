"""``formulane apply``: formulas over CSV, Parquet and NDJSON files, streaming.

    formulane apply orders.parquet --formula 'total=ROUND(price * qty, 2)' \\
        --formula 'unit=price / qty' -o out.parquet [--schema schema.json] [--profile excel]

Reads with ``scan_*`` and writes with ``sink_*`` on polars' streaming engine, so files larger
than memory work. While it runs, stderr shows the rows processed (and bytes written); at the
end, a summary: rows, error values per output column, time. Exit codes as the other commands:
0 done (error *values* in rows are results, counted in the summary), 1 a formula error or a
formula the columnar backend refuses (with the reason), 2 a usage or I/O error.

Wire it into `formulane.cli` with ``add_parser(sub)`` and ``run(args)``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Sequence, TextIO

from ..errors import FormulaError

COMMAND = "apply"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``apply`` sub-command to an argparse sub-parsers object."""
    ap = subparsers.add_parser(
        COMMAND, help="run formulas over a CSV, Parquet or NDJSON file (streaming)",
        description="Add formula columns to a file, streaming: inputs larger than memory work.")
    ap.add_argument("input", help="input file (.csv, .tsv, .parquet, .ndjson, .jsonl)")
    ap.add_argument("--formula", "-f", action="append", required=True, metavar="NAME=EXPR",
                    help="an output column and its formula; repeatable")
    ap.add_argument("-o", "--output", required=True, help="output file (format from suffix)")
    ap.add_argument("--schema", help="JSON file mapping column names to types (default: the "
                                     "file's column types)")
    ap.add_argument("--profile", choices=("strict", "excel"), default="strict")
    ap.add_argument("--numbers", choices=("auto", "float", "decimal"), default="auto",
                    help="numeric mode (auto: decimal when a used column is Decimal)")
    ap.add_argument("--input-format", choices=("csv", "parquet", "ndjson"))
    ap.add_argument("--output-format", choices=("csv", "parquet", "ndjson"))
    ap.add_argument("--no-progress", action="store_true", help="no progress display")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    ap.set_defaults(func=run)
    return ap


def parse_formulas(items: Sequence[str]) -> dict[str, str]:
    formulas: dict[str, str] = {}
    for item in items:
        name, sep, expr = item.partition("=")
        name = name.strip()
        if not sep or not name or not expr.strip():
            raise ValueError(f"--formula takes NAME=EXPR, got {item!r}")
        if name in formulas:
            raise ValueError(f"--formula {name} is given twice")
        formulas[name] = expr.strip()
    return formulas


class Progress:
    """A one-line progress display on stderr: rows processed, rate, bytes written, time."""

    def __init__(self, output: str, stream: TextIO, interval: float = 0.5) -> None:
        self.output = output
        self.stream = stream
        self.tty = stream.isatty()
        self.interval = interval if self.tty else 5.0
        self.rows = 0
        self.elapsed = 0.0
        self.started = time.monotonic()
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def update(self, rows: int, elapsed: float) -> None:
        self.rows = max(self.rows, rows)

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        try:
            written = os.path.getsize(self.output)
        except OSError:
            written = 0
        rate = self.rows / elapsed if elapsed > 0 else 0.0
        return (f"formulane apply: {self.rows:,} rows  {rate:,.0f} rows/s  "
                f"{written / 1e6:,.1f} MB written  {elapsed:,.1f}s")

    def loop(self) -> None:
        while not self.stop_event.wait(self.interval):
            self.show()

    def show(self) -> None:
        text = self.line()
        if self.tty:
            self.stream.write("\r\x1b[2K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def __enter__(self) -> "Progress":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop_event.set()
        self.thread.join()
        self.show()
        if self.tty:
            self.stream.write("\n")


def summary_text(result: Any) -> str:
    lines = [f"rows: {result.rows:,}", f"time: {result.seconds:.2f}s"
             + (f" ({result.rows / result.seconds:,.0f} rows/s)" if result.seconds else "")]
    for name, n in result.errors.items():
        lines.append(f"errors in {name}: {n:,}")
    lines.append(f"output: {result.output}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..cli import load_schema  # the same schema files as `eval` and `check`

    from .stream import plan_stream, run_stream

    try:
        formulas = parse_formulas(args.formula)
        schema = load_schema(args.schema) if args.schema else None
        if not Path(args.input).exists():
            raise ValueError(f"no such file: {args.input}")
    except Exception as exc:  # usage: bad --formula, schema file, missing input
        if isinstance(exc, FormulaError):
            raise
        print(f"formulane: {exc}", file=sys.stderr)
        return 2
    try:
        plan = plan_stream(args.input, formulas, args.output, schema=schema,
                           profile=args.profile, numbers=args.numbers,
                           input_format=args.input_format, output_format=args.output_format)
    except FormulaError as exc:
        print(exc.render(), file=sys.stderr)
        return 1
    except Exception as exc:  # unreadable input, unknown format
        print(f"formulane: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    try:
        if args.no_progress:
            result = run_stream(plan)
        else:
            with Progress(args.output, sys.stderr) as progress:
                result = run_stream(plan, progress.update)
    except Exception as exc:  # polars I/O and parse errors while streaming
        print(f"formulane: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"rows": result.rows, "errors": result.errors,
                          "seconds": round(result.seconds, 3), "output": result.output}))
    print(summary_text(result), file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point (``python -m formulane.vectorized.cli_apply IN ...``)."""
    parser = argparse.ArgumentParser(prog="formulane")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    try:
        args = parser.parse_args([COMMAND, *(sys.argv[1:] if argv is None else argv)])
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
