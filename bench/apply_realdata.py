"""`formulane apply` on a real table at scale, against the same formulas hand-written in polars.

Builds an N-row Parquet file by repeating the shipped nycflights13 slice
(tests/data/nycflights13_flights_2013-01-01_03.csv, 2,699 real rows with blanks) in a temporary
folder (never committed), then runs, each as its own process, end to end from file to file:

- ``formulane apply IN -f ... -o OUT --no-progress`` (the command line, as a user runs it);
- the same outputs hand-written in polars (scan_parquet -> with_columns -> sink_parquet),
  error columns included where formulane writes them ("equivalent"), and without them
  ("naive": what a user who ignores blanks and division by zero would write).

The contenders run interleaved (one run of each in turn, the order rotated every repeat), so a
change in the machine's load hits them alike; the load average is printed before and after
each size. Reports the best of ``--repeat`` wall times, the ratio formulane / equivalent
polars, the best CPU time (user + system, all threads: steadier than wall time on a shared
machine) and the highest peak RSS of each process (``wait4``'s ru_maxrss, measured from a small
launcher process), at each size; ``--startup`` adds formulane's import and planning CPU time.
``--read-ahead-0`` adds formulane with polars' default read-ahead (more memory). Bytecode for
``src`` is compiled first (``compileall``), as an installed package has it: without it every
run would compile formulane's modules again. ``POLARS_MAX_THREADS`` is passed through. Usage::

    python bench/apply_realdata.py [--rows 1000000 3000000 10000000] [--repeat 3] [--startup]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
SLICE = ROOT / "tests" / "data" / "nycflights13_flights_2013-01-01_03.csv"

FORMULAS = {
    "gain": "(dep_delay ?? 0) - (arr_delay ?? 0)",
    "speed": "ROUND(distance / (air_time ?? 0) * 60, 1)",
    "late": "(arr_delay ?? 0) > 15",
    "route": 'origin & "-" & dest',
}

EQUIVALENT = '''
import sys, polars as pl
src, out = sys.argv[1], sys.argv[2]
air = pl.col("air_time").fill_null(0)
bad = air == 0
pl.scan_parquet(src).with_columns(
    gain=pl.col("dep_delay").fill_null(0) - pl.col("arr_delay").fill_null(0),
    speed=pl.when(bad).then(None).otherwise((pl.col("distance") / air * 60).round(1)),
    speed__error=pl.when(bad).then(pl.lit("#DIV/0!")),
    late=pl.col("arr_delay").fill_null(0) > 15,
    route=pl.col("origin") + "-" + pl.col("dest"),
).sink_parquet(out, engine="streaming")
'''

NAIVE = '''
import sys, polars as pl
src, out = sys.argv[1], sys.argv[2]
pl.scan_parquet(src).with_columns(
    gain=pl.col("dep_delay") - pl.col("arr_delay"),
    speed=(pl.col("distance") / pl.col("air_time") * 60).round(1),
    late=pl.col("arr_delay") > 15,
    route=pl.col("origin") + "-" + pl.col("dest"),
).sink_parquet(out, engine="streaming")
'''


def build(rows: int, path: Path) -> None:
    """``rows`` rows of the slice repeated (blanks included), in 100,000-row row groups."""
    base = pl.read_csv(SLICE, null_values=["NA"], try_parse_dates=True)
    index = pl.int_range(0, rows, eager=False) % base.height
    pl.LazyFrame().select(i=pl.int_range(0, rows)).with_columns(index.alias("j")).join(
        base.lazy().with_row_index("j").with_columns(pl.col("j").cast(pl.Int64)), on="j",
        how="left", maintain_order="left").drop("i", "j").sink_parquet(
        path, row_group_size=100_000)


#: Runs one command and prints its wall time, CPU time and peak RSS. Started as a fresh, small
#: process so that the measured command is forked from it: on Linux a child's ru_maxrss counts
#: the memory of the process it was forked from, and this script holds the table it built.
WRAPPER = """
import os, subprocess, sys, time
started = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - started
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(err.decode())
print(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
"""


def measured(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one command; fails on a non-zero exit."""
    proc = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed:\n{proc.stderr}")
    wall, cpu, rss = (float(x) for x in proc.stdout.split())
    return wall, cpu, rss


STARTUP = r"""
import sys, time
c0 = time.process_time()
import formulane
c1 = time.process_time()
from formulane.columnar.polars.stream import plan_stream
formulas = dict(a.split("=", 1) for a in sys.argv[3:])
c2 = time.process_time()
plan_stream(sys.argv[1], formulas, sys.argv[2])
print(c1 - c0, time.process_time() - c2)
"""


def startup(src: Path, out: Path, repeat: int) -> tuple[float, float]:
    """(import formulane, plan the four formulas over ``src``): best CPU seconds of ``repeat``
    fresh processes (polars imported before the clock starts, as both contenders pay it)."""
    runs = []
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", "import polars;" + STARTUP, str(src),
                               str(out), *[f"{n}={f}" for n, f in FORMULAS.items()]],
                              capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        runs.append(tuple(float(x) for x in proc.stdout.split()))
    return min(r[0] for r in runs), min(r[1] for r in runs)


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 3_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--startup", action="store_true",
                    help="also measure formulane's import and planning CPU time")
    ap.add_argument("--read-ahead-0", action="store_true",
                    help="also run formulane with polars' default read-ahead")
    ap.add_argument("--build", nargs=2, metavar=("ROWS", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.build:
        build(int(args.build[0]), Path(args.build[1]))
        return
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"polars {pl.__version__}, POLARS_MAX_THREADS={os.environ.get('POLARS_MAX_THREADS', '-')}"
          f", {os.cpu_count()} CPUs")
    print(f"formulas: {FORMULAS}")
    print("| rows | input MB | formulane s | equivalent polars s | naive polars s | ratio vs "
          "equivalent | ratio vs naive | CPU s formulane / equivalent / naive | CPU ratio | "
          "peak RSS MB formulane / equivalent | load avg before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    extra: list[str] = []
    with tempfile.TemporaryDirectory(prefix="formulane-apply-bench-") as tmp:
        folder = Path(tmp)
        for rows in args.rows:
            src = folder / f"flights_{rows}.parquet"
            subprocess.run([sys.executable, __file__, "--build", str(rows), str(src)],
                           check=True)
            ours = [sys.executable, "-m", "formulane", "apply", str(src), "--no-progress",
                    *[a for n, f in FORMULAS.items() for a in ("-f", f"{n}={f}")],
                    "-o", str(folder / "ours.parquet")]
            commands = {
                "ours": ours,
                "eq": [sys.executable, "-c", EQUIVALENT, str(src), str(folder / "eq.parquet")],
                "naive": [sys.executable, "-c", NAIVE, str(src), str(folder / "naive.parquet")],
            }
            if args.read_ahead_0:
                commands["ours_ra0"] = [*ours[:-1], str(folder / "ours0.parquet"),
                                        "--read-ahead", "0"]
            runs: dict[str, list[tuple[float, float, float]]] = {k: [] for k in commands}
            names = list(commands)
            before = load()
            for i in range(args.repeat):
                for name in names[i % len(names):] + names[:i % len(names)]:
                    runs[name].append(measured(commands[name]))
            after = load()
            best = {k: min(r[0] for r in v) for k, v in runs.items()}
            cpu = {k: min(r[1] for r in v) for k, v in runs.items()}
            rss = {k: max(r[2] for r in v) for k, v in runs.items()}
            got = pl.scan_parquet(folder / "ours.parquet").select(
                pl.len(), pl.col("speed__error").is_not_null().sum()).collect().row(0)
            want = pl.scan_parquet(folder / "eq.parquet").select(
                pl.len(), pl.col("speed__error").is_not_null().sum()).collect().row(0)
            assert got == want, (got, want)
            print(f"| {rows:,} | {src.stat().st_size / 1e6:.1f} | {best['ours']:.2f} | "
                  f"{best['eq']:.2f} | {best['naive']:.2f} | {best['ours'] / best['eq']:.2f} | "
                  f"{best['ours'] / best['naive']:.2f} | {cpu['ours']:.2f} / {cpu['eq']:.2f} / "
                  f"{cpu['naive']:.2f} | {cpu['ours'] / cpu['eq']:.2f} | "
                  f"{rss['ours']:.0f} / {rss['eq']:.0f} | {before} / {after} |", flush=True)
            if args.read_ahead_0:
                extra.append(f"{rows:,} rows, formulane --read-ahead 0: {best['ours_ra0']:.2f} s, "
                             f"CPU {cpu['ours_ra0']:.2f} s, peak RSS {rss['ours_ra0']:.0f} MB")
            if args.startup:
                imp, plan = startup(src, folder / "plan.parquet", max(args.repeat, 5))
                extra.append(f"{rows:,} rows, start-up CPU (best of {max(args.repeat, 5)}): "
                             f"import formulane {imp:.3f} s, plan {plan:.3f} s")
    for line in extra:
        print(line)


if __name__ == "__main__":
    main()
