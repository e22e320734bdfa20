"""`formulane apply` on a real public dataset with blanks: the shipped nycflights13 slice
(tests/data/README.md: 2,699 flights of 1-3 January 2013, CC0), through the command line
(`cli_cases.yaml`, each case a subprocess as a user runs it) and the Python API (`formulane.apply`
and `formulane.columnar.polars.stream.apply_stream`).

Expected counts are the slice's own (its README lists the blanks per column) and are checked
against polars reading the same file independently, so a wrong reading fails twice.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pl = pytest.importorskip("polars")
yaml = pytest.importorskip("yaml")

import formulane  # noqa: E402
from formulane.columnar.polars.stream import apply_stream  # noqa: E402

HERE = Path(__file__).parent
SLICE = HERE.parent / "data" / "nycflights13_flights_2013-01-01_03.csv"
CASES: list[dict[str, Any]] = yaml.safe_load((HERE / "cli_cases.yaml").read_text("utf-8"))
BLANKS = {"dep_time": 22, "dep_delay": 22, "arr_time": 25, "arr_delay": 40, "tailnum": 4,
          "air_time": 40}


def test_the_slice_is_what_its_readme_says() -> None:
    frame = pl.read_csv(SLICE, null_values=["NA"], infer_schema_length=None)
    assert frame.height == 2699 and frame.width == 19
    assert {c: n for c, n in frame.null_count().row(0, named=True).items() if n} == BLANKS
    assert SLICE.stat().st_size < 300_000


def _variant(kind: str, folder: Path) -> Path:
    """The slice as shipped, or rewritten (see cli_cases.yaml)."""
    if kind == "flights":
        return SLICE
    lines = SLICE.read_text("utf-8").splitlines()
    header, rows = lines[0], lines[1:]
    if kind == "empty":
        rows = [",".join("" if f == "NA" else f for f in r.split(",")) for r in rows]
    elif kind == "dash":
        rows = [",".join("-" if f == "NA" else f for f in r.split(",")) for r in rows]
    elif kind == "frac":
        fields = rows[1999].split(",")
        fields[header.split(",").index("dep_delay")] = "1.5"
        rows[1999] = ",".join(fields)
    else:
        raise AssertionError(kind)
    path = folder / f"{kind}.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_cli_case(case: dict[str, Any], tmp_path: Path) -> None:
    source = _variant(case["input"], tmp_path)
    out = tmp_path / case.get("output", "out.parquet")
    cmd = [sys.executable, "-m", "formulane", "apply", str(source), *case["args"], "-o",
           str(out), "--no-progress"]
    if "schema" in case:
        schema = tmp_path / "schema.json"
        schema.write_text(json.dumps(case["schema"]), encoding="utf-8")
        cmd += ["--schema", str(schema)]
    if "json" in case:
        cmd.append("--json")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == case["exit"], proc.stderr
    for text in case.get("stderr", []):
        assert text in proc.stderr, (text, proc.stderr)
    for text in case.get("absent", []):
        assert text not in proc.stderr, (text, proc.stderr)
    if case.get("no_output"):
        assert not out.exists() and not list(out.parent.glob(".*.partial"))
    if "json" in case:
        summary = json.loads(proc.stdout)
        for key, want in case["json"].items():
            got = summary[key]
            if isinstance(want, dict):
                got = {k: got[k] for k in want}
            assert got == want, (key, summary)
    for name, want in case.get("columns", {}).items():
        frame = pl.read_parquet(out)
        error = frame[name + "__error"] if name + "__error" in frame.columns else None
        assert (0 if error is None else error.is_not_null().sum()) == want["errors"], name
        assert frame[name].null_count() == want["blanks"], name
        if "error_code" in want:
            assert error is not None and set(error.drop_nulls()) == {want["error_code"]}


def test_cli_values_match_hand_written_polars(tmp_path: Path) -> None:
    """The values written for real rows are polars' own arithmetic, blanks and errors where
    the slice has blanks."""
    out = tmp_path / "out.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "formulane", "apply", str(SLICE), "--no-progress", "-o", str(out),
         "-f", "speed=ROUND(distance / (air_time ?? 0) * 60, 1)",
         "-f", "gain=(dep_delay ?? 0) - (arr_delay ?? 0)", "-f", 'route=origin & "-" & dest'],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = pl.read_csv(out, infer_schema_length=None)
    src = pl.read_csv(SLICE, null_values=["NA"], infer_schema_length=None)
    air = src["air_time"]
    speed = (src["distance"] / air * 60).to_list()
    for row, (value, error, a) in enumerate(zip(got["speed"], got["speed__error"], air)):
        if a is None:
            assert value is None and error == "#DIV/0!", row
        else:
            assert error is None and value == pytest.approx(speed[row], abs=0.0501), row
    gain = (src["dep_delay"].fill_null(0) - src["arr_delay"].fill_null(0)).to_list()
    assert got["gain"].to_list() == gain
    assert got["route"].to_list() == (src["origin"] + "-" + src["dest"]).to_list()
    # the input columns pass through unchanged, blanks included
    assert got["air_time"].null_count() == 40 and got["tailnum"].null_count() == 4


def test_python_api_on_a_frame_read_from_the_slice() -> None:
    """`formulane.apply` infers T? for a column with blanks, on a DataFrame and a LazyFrame
    alike, so the strict profile refuses an unhandled blank divisor without a schema, exactly
    as with one; handled, the blanks become the formula's answer."""
    lazy = pl.scan_csv(SLICE, null_values=["NA"])
    for frame in (lazy, lazy.collect()):
        with pytest.raises(formulane.FormulaError) as caught:
            formulane.apply(frame, {"speed": "distance / air_time * 60"})
        assert caught.value.code == "E205" and "air_time" in caught.value.message
        assert not caught.value.fixes  # no `air_time ?? 0`: every blank would be #DIV/0!
        assert "in the formula for output column 'speed'" in getattr(
            caught.value, "__notes__", [])
        with pytest.raises(formulane.FormulaError) as declared:
            formulane.apply(frame, {"speed": "distance / air_time * 60"},
                            {"distance": "Number", "air_time": "Number?"})
        assert declared.value.code == "E205"
        out = formulane.apply(frame, {"late": "(arr_delay ?? 0) > 15"})
        late = out.collect() if isinstance(out, pl.LazyFrame) else out
        assert late["late"].null_count() == 0
        assert late["late"].sum() == (lazy.collect()["arr_delay"].fill_null(0) > 15).sum()


def test_python_api_streams_a_file(tmp_path: Path) -> None:
    """`apply_stream` reads the file with the same null markers and counts as the CLI."""
    out = tmp_path / "out.ndjson"
    result = apply_stream(SLICE, {"air": "air_time", "speed": "distance / (air_time ?? 0)"},
                          out)
    assert result.rows == 2699
    assert result.errors == {"air": 0, "speed": 40}
    assert result.blanks == {"air": 40, "speed": 0}
    assert result.input_blanks == {"distance": 0, "air_time": 40}
    written = pl.read_ndjson(out, infer_schema_length=None)
    assert written.height == 2699 and written["speed__error"].drop_nulls().len() == 40


def test_python_api_read_error_is_a_formula_error(tmp_path: Path) -> None:
    from formulane.columnar.polars.reading import ReadOptions

    source = _variant("dash", tmp_path)
    with pytest.raises(formulane.FormulaError) as caught:
        apply_stream(source, {"g": "(dep_delay ?? 0) - (arr_delay ?? 0)"}, tmp_path / "o.csv",
                     read_options=ReadOptions(infer_rows=100))
    assert caught.value.code == "E303"
    assert "dash.csv, column 'arr_delay', row 472" in caught.value.message
    assert not (tmp_path / "o.csv").exists()
    result = apply_stream(source, {"g": "(dep_delay ?? 0) - (arr_delay ?? 0)"},
                          tmp_path / "o.csv",
                          read_options=ReadOptions(null_values=("", "-"), infer_rows=100))
    assert result.rows == 2699 and result.input_blanks == {"dep_delay": 22, "arr_delay": 40}


# ---- what the command controls for the engine: read-ahead, and which columns are counted

def test_read_ahead_is_set_for_the_run_and_put_back(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from formulane.columnar.polars.reading import (
        DEFAULT_READ_AHEAD, READ_AHEAD_VARIABLES, ReadOptions, read_ahead)

    variable = READ_AHEAD_VARIABLES["parquet"]
    monkeypatch.delenv(variable, raising=False)
    with read_ahead("parquet", ReadOptions()):
        assert os.environ[variable] == str(DEFAULT_READ_AHEAD)
    assert variable not in os.environ
    with read_ahead("parquet", ReadOptions(read_ahead=0)):
        assert variable not in os.environ  # polars' own default
    monkeypatch.setenv(variable, "7")  # the user's own setting is respected ...
    with read_ahead("parquet", ReadOptions()):
        assert os.environ[variable] == "7"
    with read_ahead("parquet", ReadOptions(read_ahead=2)):  # ... unless told otherwise
        assert os.environ[variable] == "2"
    assert os.environ[variable] == "7"
    with pytest.raises(RuntimeError):
        with read_ahead("parquet", ReadOptions(read_ahead=3)):
            raise RuntimeError("a failed run")
    assert os.environ[variable] == "7"
    assert set(READ_AHEAD_VARIABLES) == {"csv", "parquet", "ndjson"}


def test_the_blank_count_reads_only_the_columns_formulas_mention(tmp_path: Path) -> None:
    from formulane.types import optional, parse_type
    from formulane.columnar.polars import reading
    from formulane.columnar.polars.stream import read_names

    assert read_names(["(dep_delay ?? 0) - {arr_delay}", "LET(x, air_time, x * 2)"]) == {
        "dep_delay", "arr_delay", "air_time", "x"}
    assert read_names(["distance * ", "air_time"]) is None  # does not parse: count them all
    source = tmp_path / "flights.parquet"
    pl.read_csv(SLICE, null_values=["NA"]).write_parquet(source)
    frame = reading.scan(source, "parquet")
    every = reading.file_types(frame, source, "parquet", {})
    some = reading.file_types(frame, source, "parquet", {}, only={"dep_time", "distance"})
    assert set(some) == set(every)  # every column keeps a type (suggestions read them)
    assert some["dep_time"] == every["dep_time"] == optional(parse_type("Number"))
    assert some["distance"] == every["distance"] == parse_type("Number")  # counted: no blank
    assert every["year"] == parse_type("Number") and some["year"] == optional(every["year"])


def _repeated(rows: int, path: Path) -> None:
    """``rows`` rows of the slice repeated (blanks included) in 100,000-row row groups: data
    that compresses ~80x, so polars' reader can decode far ahead of the writer."""
    base = pl.read_csv(SLICE, null_values=["NA"], try_parse_dates=True)
    index = (pl.int_range(0, rows, eager=False) % base.height).alias("j")
    pl.LazyFrame().select(index).join(
        base.lazy().with_row_index("j").with_columns(pl.col("j").cast(pl.Int64)), on="j",
        how="left", maintain_order="left").drop("j").sink_parquet(path, row_group_size=100_000)


@pytest.mark.slow
def test_peak_memory_is_flat_from_1m_to_3m_rows(tmp_path: Path) -> None:
    """Peak RSS of `formulane apply` on 1M and on 3M rows of the repeated slice (1.8 and 5.5 MB
    of Parquet, ~0.2 and ~0.6 GB decoded) stays within 25% (polars' default read-ahead grew
    it 338 -> 615 MB, bench/APPLY.md), and the counts are the slice's times the repeats."""
    import os

    def peak(source: Path, out: Path) -> tuple[float, str]:
        cmd = [sys.executable, "-m", "formulane", "apply", str(source), "--no-progress",
               "-f", "speed=ROUND(distance / (air_time ?? 0) * 60, 1)",
               "-f", "gain=(dep_delay ?? 0) - (arr_delay ?? 0)",
               "-f", 'route=origin & "-" & dest', "-o", str(out)]
        env = {k: v for k, v in os.environ.items() if k not in (
            "POLARS_ROW_GROUP_PREFETCH_SIZE", "POLARS_CSV_CHUNK_PREFETCH_LIMIT",
            "POLARS_NDJSON_CHUNK_PREFETCH_LIMIT")}
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        assert os.waitstatus_to_exitcode(status) == 0, stderr
        return usage.ru_maxrss / 1024, stderr

    sizes = {}
    for rows in (1_000_000, 3_000_000):
        source = tmp_path / f"in_{rows}.parquet"
        _repeated(rows, source)
        sizes[rows], stderr = peak(source, tmp_path / f"out_{rows}.parquet")
        repeats, rest = divmod(rows, 2699)
        first_rest = pl.read_csv(SLICE, null_values=["NA"]).head(rest)
        want = repeats * 40 + first_rest["air_time"].null_count()
        assert f"rows: {rows:,}" in stderr and f"errors in speed: {want:,}" in stderr
    assert sizes[3_000_000] < sizes[1_000_000] * 1.25, sizes
