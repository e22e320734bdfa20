"""Streaming apply: formulas over files larger than memory (CSV, Parquet, NDJSON).

`apply_stream` scans the input lazily (``scan_csv`` / ``scan_parquet`` / ``scan_ndjson``), adds
the formula columns with `formulane.apply` (native polars expressions), and sinks the result
with polars' streaming engine (``sink_*``), so memory stays bounded by the engine's batches,
not by the file. A pass-through tap at the end of the plan sees each batch once (a per-batch
Python call, never per row) to count rows and error values per output column for the progress
display and the summary.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import polars as pl

from ..errors import CheckError
from ..schema import normalize_schema
from .frame import ERROR_SUFFIX, apply, infer_frame_schema, polars_dtype
from .polars import column

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


def scan(path: str | Path, fmt: str | None = None) -> pl.LazyFrame:
    fmt = format_of(path, fmt)
    if fmt == "csv":
        separator = "\t" if str(path).lower().endswith(".tsv") else ","
        return pl.scan_csv(path, separator=separator, try_parse_dates=True)
    if fmt == "parquet":
        return pl.scan_parquet(path)
    return pl.scan_ndjson(path)


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
    rows: int
    errors: dict[str, int]
    seconds: float
    output: str
    columns: list[str] = field(default_factory=list)


class _Tap:
    """Counts rows and error values batch by batch (thread-safe: batches may run in parallel)."""

    def __init__(self, error_columns: list[str],
                 progress: Callable[[int, float], None] | None) -> None:
        self.error_columns = error_columns
        self.rows = 0
        self.errors = {c: 0 for c in error_columns}
        self.lock = threading.Lock()
        self.progress = progress
        self.started = time.monotonic()

    def __call__(self, batch: pl.DataFrame) -> pl.DataFrame:
        counts = {c: batch.height - batch[c].null_count() for c in self.error_columns
                  if c in batch.columns}
        with self.lock:
            self.rows += batch.height
            for c, n in counts.items():
                self.errors[c] += n
            rows = self.rows
        if self.progress is not None:
            self.progress(rows, time.monotonic() - self.started)
        return batch


@dataclass
class StreamPlan:
    """Compiled, not yet run: the lazy query, its output and the error columns to count."""

    frame: pl.LazyFrame
    formulas: dict[str, str]
    output: str
    output_format: str
    error_suffix: str
    started: float


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
) -> StreamPlan:
    """Compile the formulas against the input's schema (reads only the file's metadata).
    Raises formula errors and `Unsupported` here, before any data is read."""
    started = time.monotonic()
    frame = conform(scan(source, input_format), schema, numbers)
    types = dict(infer_frame_schema(frame))
    if schema:
        types.update(normalize_schema(schema))
    result = apply(frame, formulas, types, profile=profile, numbers=numbers,
                   error_suffix=error_suffix, registry=registry)
    assert isinstance(result, pl.LazyFrame)
    return StreamPlan(result, dict(formulas), str(output),
                      output_format or format_of(output, None), error_suffix, started)


def run_stream(plan: StreamPlan, progress: Callable[[int, float], None] | None = None
               ) -> StreamResult:
    """Run a plan with the streaming engine, counting rows and error values per batch."""
    columns = list(plan.frame.collect_schema())
    error_columns = [n + plan.error_suffix for n in plan.formulas
                     if n + plan.error_suffix in columns]
    tap = _Tap(error_columns, progress)
    frame = plan.frame.map_batches(tap, streamable=True, schema=plan.frame.collect_schema())
    sink(frame, plan.output, plan.output_format)
    errors = {name: tap.errors.get(name + plan.error_suffix, 0) for name in plan.formulas}
    return StreamResult(tap.rows, errors, time.monotonic() - plan.started, plan.output, columns)


def apply_stream(source: str | Path, formulas: Mapping[str, str], output: str | Path, *,
                 progress: Callable[[int, float], None] | None = None,
                 **options: Any) -> StreamResult:
    """Run formulas over a file into another file with the streaming engine (see
    `plan_stream` for the options). Compile-time problems are raised before data is read."""
    return run_stream(plan_stream(source, formulas, output, **options), progress)


__all__ = ["FORMATS", "StreamPlan", "StreamResult", "apply_stream", "conform", "format_of",
           "plan_stream", "run_stream", "scan", "sink"]
