"""``formulane apply``: formulas over CSV, Parquet and NDJSON files, streaming.

    formulane apply orders.parquet --formula 'total=ROUND(price * qty, 2)' \\
        --formula 'unit=price / qty' -o out.parquet [--schema schema.json] [--profile excel]

Reads with ``scan_*`` and writes with ``sink_*`` on polars' streaming engine, so files larger
than memory work; ``--read-ahead`` bounds what the reader decodes ahead of the writer (one row
group or chunk by default, so memory stays flat in the file's size: `reading.read_ahead`). CSV null markers (``--null-values``), the rows type inference reads
(``--infer-rows``) and the dtypes of declared columns (``--schema``) are `reading`'s. While it
runs, stderr shows the rows processed (and bytes written); at the end, a summary: rows, error
values and blank results per output column (apart: a blank input gives a blank result, which is
not an error), blanks read per input column, time. Exit codes as the other commands: 0 done
(error *values* in rows are results, counted in the summary), 1 a formula error or a formula
the columnar backend refuses (with the reason, and the ``-f`` it came from), 2 a usage, I/O or
read error (a value that does not fit its column: file, column, row and the option to use).

Wire it into `formulane.cli` with ``add_parser(sub)`` and ``run(args)``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from ...errors import FormulaError
from .reading import DEFAULT_INFER_ROWS, DEFAULT_NULL_VALUES, DEFAULT_READ_AHEAD

COMMAND = "apply"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``apply`` sub-command to an argparse sub-parsers object."""
    ap: argparse.ArgumentParser = subparsers.add_parser(
        COMMAND, help="run formulas over a CSV, Parquet or NDJSON file (streaming)",
        description="Add formula columns to a file, streaming: inputs larger than memory work.")
    ap.add_argument("input", help="input file (.csv, .tsv, .parquet, .ndjson, .jsonl)")
    ap.add_argument("--formula", "-f", action="append", required=True, metavar="NAME=EXPR",
                    help="an output column and its formula; repeatable")
    ap.add_argument("-o", "--output", required=True, help="output file (format from suffix)")
    ap.add_argument("--schema", help="JSON file mapping column names to types; declared "
                                     "columns are read with these types (default: the file's "
                                     "column types, T? where a column holds a blank)")
    ap.add_argument("--profile", choices=("strict", "excel"), default="strict")
    ap.add_argument("--numbers", choices=("auto", "float", "decimal"), default="auto",
                    help="numeric mode (auto: decimal when a used column is Decimal)")
    ap.add_argument("--null-values", metavar="A,B,...",
                    help="CSV text read as a blank, comma-separated; an empty field is always "
                         "blank (default: " + ",".join(m for m in DEFAULT_NULL_VALUES if m)
                         + ")")
    ap.add_argument("--infer-rows", type=int, default=DEFAULT_INFER_ROWS, metavar="N",
                    help=f"rows read to infer CSV/NDJSON column types (default: "
                         f"{DEFAULT_INFER_ROWS:,}; 0: every row)")
    ap.add_argument("--read-ahead", type=int, metavar="N",
                    help=f"row groups (Parquet) or chunks (CSV, NDJSON) read ahead of the "
                         f"writer (default: {DEFAULT_READ_AHEAD}, which keeps memory flat in "
                         f"the file's size, unless polars' own variable is set; 0: polars' "
                         f"default, more memory)")
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


def summary_text(result: Any) -> str:
    """Rows and time; per output column its error values and, apart, its blank results (a
    blank input gives a blank result: not an error); blanks read per input column."""
    lines = [f"rows: {result.rows:,}", f"time: {result.seconds:.2f}s"
             + (f" ({result.rows / result.seconds:,.0f} rows/s)" if result.seconds else "")]
    blanks = getattr(result, "blanks", {})
    for name, n in result.errors.items():
        lines.append(f"errors in {name}: {n:,}")
        if blanks.get(name):
            lines.append(f"blanks in {name}: {blanks[name]:,} (blank results from blank "
                         f"inputs, not errors)")
    read = {n: k for n, k in getattr(result, "input_blanks", {}).items() if k}
    if read:
        lines.append("blanks read (null markers and empty fields): "
                     + ", ".join(f"{n} {k:,}" for n, k in read.items()))
    lines.append(f"output: {result.output}")
    return "\n".join(lines)


def _render(exc: FormulaError, formulas: dict[str, str]) -> str:
    """The diagnostic, and the ``-f`` it came from (the formula whose text it carries)."""
    text = exc.render()
    names = [n for n, src in formulas.items() if exc.source is not None and src == exc.source]
    notes = getattr(exc, "__notes__", ())
    names += [n for n in formulas if f"in the formula for output column {n!r}" in notes]
    if names:
        text += f"\n  = in: -f {names[0]}={formulas[names[0]]}"
    return text


def run(args: argparse.Namespace) -> int:
    from ...cli import load_schema  # the same schema files as `eval` and `check`

    from .reading import ReadOptions, parse_null_values
    from .stream import partial_path, plan_stream, run_stream

    try:
        formulas = parse_formulas(args.formula)
        schema = load_schema(args.schema) if args.schema else None
        if not Path(args.input).exists():
            raise ValueError(f"no such file: {args.input}")
        if args.infer_rows < 0:
            raise ValueError("--infer-rows takes a row count (0: every row)")
        if args.read_ahead is not None and args.read_ahead < 0:
            raise ValueError("--read-ahead takes a count of row groups or chunks (0: polars' "
                             "default)")
        options = ReadOptions(
            parse_null_values(args.null_values) if args.null_values is not None
            else DEFAULT_NULL_VALUES, args.infer_rows or None, args.read_ahead)
    except Exception as exc:  # usage: bad --formula, schema file, missing input
        if isinstance(exc, FormulaError):
            print(exc.render(), file=sys.stderr)
            return 2
        print(f"formulane: {exc}", file=sys.stderr)
        return 2
    try:
        plan = plan_stream(args.input, formulas, args.output, schema=schema,
                           profile=args.profile, numbers=args.numbers,
                           input_format=args.input_format, output_format=args.output_format,
                           read_options=options)
    except FormulaError as exc:
        print(_render(exc, formulas), file=sys.stderr)
        return 2 if exc.code.startswith("E3") else 1
    except Exception as exc:  # the output folder (OSError), an unreadable input
        print(f"formulane: {exc}", file=sys.stderr)
        return 2
    try:
        if args.no_progress:
            result = run_stream(plan)
        else:
            from .progress import ApplyProgress  # rich is imported only when progress shows
            with ApplyProgress(partial_path(args.output), sys.stderr, source=args.input,
                               input_format=args.input_format) as progress:
                result = run_stream(plan, progress.update)
    except FormulaError as exc:  # a value that does not fit its column (E303)
        print(_render(exc, formulas), file=sys.stderr)
        return 2
    except Exception as exc:  # writing the output (disk full), an engine failure
        print(f"formulane: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"rows": result.rows, "errors": result.errors,
                          "blanks": result.blanks, "input_blanks": result.input_blanks,
                          "seconds": round(result.seconds, 3), "output": result.output}))
    print(summary_text(result), file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point (``python -m formulane.columnar.polars.cli_apply IN ...``)."""
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
