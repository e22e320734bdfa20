"""Streaming apply: formulas over files larger than memory (CSV, Parquet, NDJSON).

`apply_stream` scans the input lazily (``scan_csv`` / ``scan_parquet`` / ``scan_ndjson``), adds
the formula columns with `formulane.apply` (native polars expressions), and sinks the result
with polars' streaming engine (``sink_*``), so memory stays bounded by the engine's batches,
not by the file: the reader decodes one row group (or CSV/NDJSON chunk) ahead of the writer
unless told otherwise (`reading.read_ahead`; polars' default read-ahead lets decoded batches
pile up and peak memory grow with the file). A pass-through tap at the end of the plan sees each batch once (a per-batch
Python call, never per row) to count rows, error values and blank results per output column
and the blanks read per input column, for the progress display and the summary.

Reading (null markers, declared dtypes, which columns may be blank, read diagnostics) is
`reading`'s. The output folder is checked before any row is read, and the output is written to a
temporary file beside it that replaces the output only when the run succeeds: a failed run
leaves no half-written file.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import polars as pl

from ...errors import CheckError, FormulaError
from ...schema import normalize_schema
from ...types import Type
from . import reading
from ..names import ERROR_SUFFIX
from .frame import apply, polars_dtype, read_names
from .kit import column
from .reading import ReadOptions

FORMATS = ("csv", "parquet", "ndjson")
_SUFFIXES = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet",
             ".ndjson": "ndjson", ".jsonl": "ndjson"}


def format_of(path: str | Path, given: str | None = None) -> str:
    """The file format: given explicitly, else from the suffix."""
    if given:
        if given not in FORMATS:
            raise CheckError(f"unknown format {given!r}; use one of {', '.join(FORMATS)}",
                             code="E209")
        return given
    fmt = _SUFFIXES.get(Path(path).suffix.lower())
    if fmt is None:
        raise CheckError(f"cannot tell the format of {str(path)!r} from its suffix; give it "
                         f"({', '.join(FORMATS)})", code="E209")
    return fmt


def scan(path: str | Path, fmt: str | None = None, options: ReadOptions = ReadOptions()
         ) -> pl.LazyFrame:
    """The file as a LazyFrame, read with ``options`` (see `reading.scan`)."""
    return reading.scan(path, format_of(path, fmt), None, options)


def sink(frame: pl.LazyFrame, path: str | Path, fmt: str | None = None) -> None:
    fmt = format_of(path, fmt)
    if fmt == "csv":
        frame.sink_csv(path, engine="streaming")
    elif fmt == "parquet":
        frame.sink_parquet(path, engine="streaming")
    else:
        frame.sink_ndjson(path, engine="streaming")


def conform(frame: pl.LazyFrame, schema: Mapping[str, Any] | None, numbers: str = "auto"
            ) -> pl.LazyFrame:
    """Cast input columns to the schema's types where the file's reading differs (a CSV date
    read as text, an integer column declared Number in decimal mode)."""
    if not schema:
        return frame
    types = normalize_schema(schema)
    present = frame.collect_schema()
    casts = []
    for name, t in types.items():
        dtype = present.get(name)
        if dtype is None:
            continue
        if t.kind == "Date" and dtype == pl.Utf8:
            casts.append(column(name).str.to_date(strict=False))
        elif t.kind == "Number" and not dtype.is_numeric():
            casts.append(column(name).cast(polars_dtype(t, "decimal" if numbers == "decimal"
                                                        else "float"), strict=False))
    return frame.with_columns(casts) if casts else frame


@dataclass
class StreamResult:
    """What a run did. ``errors``: error values per output; ``blanks``: blank results per
    output that are not errors (a blank input gives a blank result); ``input_blanks``: blanks
    read per input column a formula uses (null markers and empty fields)."""

    rows: int
    errors: dict[str, int]
    seconds: float
    output: str
    columns: list[str] = field(default_factory=list)
    blanks: dict[str, int] = field(default_factory=dict)
    input_blanks: dict[str, int] = field(default_factory=dict)


class _Tap:
    """Counts rows, error values and nulls batch by batch (thread-safe: batches may run in
    parallel). Null counts are kept by each column, so a batch costs O(columns), not O(rows)."""

    def __init__(self, error_columns: list[str],
                 progress: Callable[[int, float], None] | None,
                 null_columns: list[str] | None = None) -> None:
        self.error_columns = error_columns
        self.null_columns = null_columns or []
        self.rows = 0
        self.errors = {c: 0 for c in error_columns}
        self.nulls = {c: 0 for c in self.null_columns}
        self.lock = threading.Lock()
        self.progress = progress
        self.started = time.monotonic()

    def __call__(self, batch: pl.DataFrame) -> pl.DataFrame:
        counts = {c: batch.height - batch[c].null_count() for c in self.error_columns
                  if c in batch.columns}
        nulls = {c: batch[c].null_count() for c in self.null_columns if c in batch.columns}
        with self.lock:
            self.rows += batch.height
            for c, n in counts.items():
                self.errors[c] += n
            for c, n in nulls.items():
                self.nulls[c] += n
            rows = self.rows
        if self.progress is not None:
            self.progress(rows, time.monotonic() - self.started)
        return batch


@dataclass
class StreamPlan:
    """Compiled, not yet run: the lazy query, its output and the columns to count."""

    frame: pl.LazyFrame
    formulas: dict[str, str]
    output: str
    output_format: str
    error_suffix: str
    started: float
    source: str = ""
    input_format: str = ""
    options: ReadOptions = field(default_factory=ReadOptions)
    declared: dict[str, Type] = field(default_factory=dict)
    #: Input columns the formulas read, whose blanks the summary counts.
    inputs: tuple[str, ...] = ()


def check_output(source: str | Path, output: str | Path) -> None:
    """The output can be written: its folder exists and is writable, and it is not the input.
    Checked before any row is read (``OSError`` subclasses, with the path in the message)."""
    out = Path(output)
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(f"the output folder {str(folder)!r} does not exist "
                                f"(for -o {str(output)!r})")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write in the output folder {str(folder)!r}")
    if out.is_dir():
        raise IsADirectoryError(f"-o {str(output)!r} is a folder; give a file name")
    if out.exists() and out.resolve() == Path(source).resolve():
        raise FileExistsError(f"-o {str(output)!r} is the input file; write somewhere else")


def plan_stream(
    source: str | Path,
    formulas: Mapping[str, str],
    output: str | Path,
    *,
    schema: Any = None,
    profile: str = "strict",
    numbers: str = "auto",
    input_format: str | None = None,
    output_format: str | None = None,
    error_suffix: str = ERROR_SUFFIX,
    registry: Any = None,
    read_options: ReadOptions | None = None,
) -> StreamPlan:
    """Compile the formulas against the input's schema. Raises `OSError` for an output that
    cannot be written, formula errors and `Unsupported`, and read errors (`EvalError` E303)
    found while learning which columns hold blanks, all before the output is touched.

    Columns the schema declares are read with the declared types; the others are typed from
    the file, nullable where they hold a blank (`reading.file_types`)."""
    started = time.monotonic()
    options = read_options or ReadOptions()
    fmt = format_of(source, input_format)
    out_fmt = format_of(output, output_format)
    check_output(source, output)
    declared = dict(normalize_schema(schema)) if schema else {}
    try:
        frame = reading.scan(source, fmt, declared, options, numbers)
        types = reading.file_types(frame, source, fmt, declared, options,
                                   read_names(formulas.values()))
    except pl.exceptions.PolarsError as exc:
        raise reading.read_error(exc, source, fmt, options, declared) from None
    types.update(declared)
    result = apply(frame, formulas, types, profile=profile, numbers=numbers,
                   error_suffix=error_suffix, registry=registry)
    assert isinstance(result, pl.LazyFrame)
    from ...interpreter.cache import compile_cached as compile_formula  # cached: apply compiled the same programs

    used = {n for src in formulas.values()
            for n in compile_formula(src, types, profile=profile, registry=registry).uses}
    inputs = tuple(n for n in frame.collect_schema() if n in used)
    return StreamPlan(result, dict(formulas), str(output), out_fmt, error_suffix, started,
                      str(source), fmt, options, declared, inputs)


def partial_path(output: str | Path) -> str:
    """Where a run writes before moving the file to ``output``."""
    out = Path(output)
    return str(out.with_name(f".{out.name}.{os.getpid()}.partial"))


def run_stream(plan: StreamPlan, progress: Callable[[int, float], None] | None = None
               ) -> StreamResult:
    """Run a plan with the streaming engine, counting rows, error values and blanks per
    batch. The output is written beside its final name and moved there on success; a read
    failure becomes a `reading.read_error` (E303)."""
    columns = list(plan.frame.collect_schema())
    error_columns = [n + plan.error_suffix for n in plan.formulas
                     if n + plan.error_suffix in columns]
    null_columns = [n for n in plan.formulas] + [n for n in plan.inputs if n not in plan.formulas]
    tap = _Tap(error_columns, progress, null_columns)
    frame = plan.frame.map_batches(tap, streamable=True, schema=plan.frame.collect_schema())
    partial = partial_path(plan.output)
    try:
        with reading.read_ahead(plan.input_format, plan.options):
            sink(frame, partial, plan.output_format)
        os.replace(partial, plan.output)
    except pl.exceptions.PolarsError as exc:
        if plan.source:
            raise reading.read_error(exc, plan.source, plan.input_format, plan.options,
                                     plan.declared) from None
        raise
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    errors = {name: tap.errors.get(name + plan.error_suffix, 0) for name in plan.formulas}
    blanks = {name: tap.nulls.get(name, 0) - errors[name] for name in plan.formulas}
    input_blanks = {n: tap.nulls.get(n, 0) for n in plan.inputs if n not in plan.formulas}
    return StreamResult(tap.rows, errors, time.monotonic() - plan.started, plan.output, columns,
                        blanks, input_blanks)


def apply_stream(source: str | Path, formulas: Mapping[str, str], output: str | Path, *,
                 progress: Callable[[int, float], None] | None = None,
                 **options: Any) -> StreamResult:
    """Run formulas over a file into another file with the streaming engine (see
    `plan_stream` for the options). Compile-time problems are raised before data is read."""
    return run_stream(plan_stream(source, formulas, output, **options), progress)


__all__ = ["FORMATS", "ReadOptions", "StreamPlan", "StreamResult", "apply_stream",
           "check_output", "conform", "format_of", "partial_path", "plan_stream", "read_names",
           "run_stream", "scan", "sink"]
