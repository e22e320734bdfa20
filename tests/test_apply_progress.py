"""`formulane apply`'s rich progress display (columnar/polars/progress.py): the total it works
towards (exact for Parquet, estimated for text inputs), the bar on a terminal and the plain
lines in a log, driven by a real streaming run."""

from __future__ import annotations

import io
import re
from pathlib import Path

import polars as pl
import pytest

from formulane.columnar.polars.progress import ApplyProgress, estimate_rows
from formulane.columnar.polars.stream import plan_stream, run_stream

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _csv(path: Path, rows: int) -> Path:
    path.write_text("price,qty\n" + "".join(f"{i},{i % 7}\n" for i in range(rows)))
    return path


@pytest.mark.parametrize(("name", "rows", "expected"), [
    ("small.csv", 1000, 1000),           # read whole: exact
    ("empty.csv", 0, 0),
])
def test_estimate_rows_of_small_text_files_is_exact(tmp_path: Path, name: str, rows: int,
                                                    expected: int) -> None:
    assert estimate_rows(_csv(tmp_path / name, rows)) == expected


def test_estimate_rows_of_a_large_csv_is_close_and_parquet_is_exact(tmp_path: Path) -> None:
    big = _csv(tmp_path / "big.csv", 300_000)  # past the 1 MiB sample
    estimate = estimate_rows(big)
    # from the first MiB, whose numbers are shorter than the file's later ones: within 10%
    assert estimate is not None and abs(estimate - 300_000) < 300_000 * 0.10
    pl.read_csv(big).write_parquet(tmp_path / "big.parquet")
    assert estimate_rows(tmp_path / "big.parquet") == 300_000
    ndjson = tmp_path / "x.ndjson"
    ndjson.write_text("".join(f'{{"a": {i}}}\n' for i in range(10)))
    assert estimate_rows(ndjson) == 10
    assert estimate_rows(tmp_path / "missing.csv") is None
    assert estimate_rows(tmp_path) is None  # a folder


def test_terminal_bar_and_log_lines_follow_a_real_streaming_run(tmp_path: Path) -> None:
    source = _csv(tmp_path / "in.csv", 20_000)
    for terminal in (True, False):
        output = tmp_path / f"out_{terminal}.csv"
        stream = io.StringIO()
        plan = plan_stream(str(source), {"total": "price * qty"}, str(output))
        with ApplyProgress(str(output), stream, interval=0.01, log_interval=0.01,
                           source=source, force_terminal=terminal) as progress:
            result = run_stream(plan, progress.update)
        assert result.rows == 20_000
        text = ANSI.sub("", stream.getvalue())
        last = text.replace("\r", "\n").strip().splitlines()[-1]
        if terminal:
            assert "100%" in last and "20,000/20,000" in last and "rows/s" in last and "MB out" in last
        else:
            assert "\x1b" not in stream.getvalue()  # a log gets plain lines
            assert last.startswith("formulane apply: 20,000 of 20,000 rows") and "MB written" in last
