"""`formulane apply`'s progress display on rich: a bar with rows, rate, ETA and bytes written.

Contract: `ApplyProgress(output, stream, source=..., input_format=...)` has the interface of the
hand-drawn progress line it replaced (a context manager whose `update(rows, elapsed)`
is the stream's progress callback), so wiring it is one line in `cli_apply.run`. The total is
the input's row count: exact for Parquet (its metadata), estimated for CSV and NDJSON from the
bytes per line of the file's first MiB (the bar then moves with the file's bytes), unknown for
anything else (a bar without ETA). On a terminal rich redraws the line; elsewhere (a log, a CI
job) one plain line is printed every `log_interval` seconds, as before. Rich is only imported
here, when apply shows progress.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn, Progress, ProgressColumn, Task, TaskProgressColumn, TextColumn, TimeRemainingColumn,
)
from rich.text import Text

#: Bytes read from a text input to estimate its bytes per row.
SAMPLE_BYTES = 1 << 20


def estimate_rows(source: str | Path, input_format: str = "") -> int | None:
    """The input's row count: exact for Parquet, estimated for CSV/NDJSON, else None."""
    path = Path(source)
    if not path.is_file():
        return None  # a glob, a folder or a stream: no cheap total
    fmt = (input_format or path.suffix.lstrip(".")).lower()
    if fmt in ("parquet", "pq"):
        import polars as pl

        try:
            return int(pl.scan_parquet(path).select(pl.len()).collect().item())
        except Exception:  # noqa: BLE001 - progress is best effort; the run reports read errors
            return None
    if fmt not in ("csv", "tsv", "ndjson", "jsonl", "txt"):
        return None
    size = path.stat().st_size
    with path.open("rb") as handle:
        sample = handle.read(SAMPLE_BYTES)
    lines = sample.count(b"\n")
    if not lines:
        return None
    header = 1 if fmt in ("csv", "tsv", "txt") else 0
    if len(sample) == size:
        return max(lines - header + (0 if sample.endswith(b"\n") else 1), 0)
    return max(round(size * lines / len(sample)) - header, 0)


class _Rate(ProgressColumn):
    # The mean since the start, as the summary reports it (rich's own speed restarts whenever
    # the total changes, which an estimated total does at the end).
    def render(self, task: Task) -> Text:
        return Text(f"{task.fields.get('rate', 0.0):,.0f} rows/s", style="progress.data.speed")


class _Rows(ProgressColumn):
    def render(self, task: Task) -> Text:
        total = "" if task.total is None else f"/{'~' if task.fields.get('estimated') else ''}{task.total:,.0f}"
        return Text(f"{task.completed:,.0f}{total}", style="progress.download")


class _Written(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"{task.fields.get('written', 0) / 1e6:,.1f} MB out", style="progress.filesize")


class ApplyProgress:
    """Rows processed of the input's rows, rate, ETA, bytes written and time, on `stream`."""

    def __init__(self, output: str, stream: TextIO, interval: float = 0.5, *,
                 source: str | Path | None = None, input_format: str = "",
                 total_rows: int | None = None, log_interval: float = 5.0,
                 force_terminal: bool | None = None) -> None:
        self.output = output
        self.console = Console(file=stream, force_terminal=force_terminal, highlight=False)
        self.tty = self.console.is_terminal
        self.interval = interval if self.tty else log_interval
        self.estimated = total_rows is None and source is not None
        self.total = total_rows if total_rows is not None else (
            estimate_rows(source, input_format) if source is not None else None)
        self.rows = 0
        self.started = time.monotonic()
        self.progress = Progress(
            # Fits 80 columns: the elapsed time is in the summary printed after the run.
            TextColumn("apply"), BarColumn(bar_width=16), TaskProgressColumn(), _Rows(), _Rate(),
            TimeRemainingColumn(), _Written(),
            console=self.console, auto_refresh=False, transient=False,
        )
        self.task = self.progress.add_task("apply", total=self.total, estimated=self.estimated,
                                           written=0, rate=0.0)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.loop, name="formulane-progress", daemon=True)

    def update(self, rows: int, elapsed: float) -> None:
        self.rows = max(self.rows, rows)

    def _written(self) -> int:
        try:
            return os.path.getsize(self.output)
        except OSError:
            return 0

    def line(self) -> str:
        """The plain status line (logs, and the last line of a non-terminal run)."""
        elapsed = time.monotonic() - self.started
        rate = self.rows / elapsed if elapsed > 0 else 0.0
        total = "" if self.total is None else f" of {'~' if self.estimated else ''}{self.total:,}"
        return (f"formulane apply: {self.rows:,}{total} rows  {rate:,.0f} rows/s  "
                f"{self._written() / 1e6:,.1f} MB written  {elapsed:,.1f}s")

    def show(self) -> None:
        if self.tty:
            total = self.total
            if total is not None and self.rows > total:  # an estimate ran short: keep the bar honest
                total = self.total = self.rows
            elapsed = time.monotonic() - self.started
            self.progress.update(self.task, completed=self.rows, total=total, written=self._written(),
                                 rate=self.rows / elapsed if elapsed > 0 else 0.0)
            self.progress.refresh()
        else:
            self.console.print(self.line(), markup=False, soft_wrap=True)

    def loop(self) -> None:
        while not self.stop_event.wait(self.interval):
            self.show()

    def __enter__(self) -> "ApplyProgress":
        if self.tty:
            self.progress.start()
        self.thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop_event.set()
        self.thread.join()
        if exc_type is None:  # done: the bar ends full and exact whatever the estimate said
            self.total, self.estimated = self.rows, False
            self.progress.update(self.task, estimated=False)
        self.show()
        if self.tty:
            self.progress.stop()
