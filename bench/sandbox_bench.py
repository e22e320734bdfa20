"""Sandbox benchmark: cold start of the local bubblewrap backend next to a bare subprocess of the
same interpreter and to the bubblewrap floor (setpriv + bwrap with the same options around the
same interpreter, no formulane code), one run, interleaved; the latency of one job that finds a
warm sandbox; and the throughput of 200 small jobs through a warm pool.

Usage (as root, on a machine with bubblewrap): ``python bench/sandbox_bench.py [--runs 40]
[--only cold,warm-hit,pool]``. Prints tables and ratios; ``--json`` writes the raw figures too.
To measure another tree with this same harness (an A/B against a commit), put its ``src`` first
on the path: ``git archive HEAD | tar -x -C /tmp/before`` then
``PYTHONPATH=/tmp/before/src python bench/sandbox_bench.py``; the tree measured is printed.
Targets: cold start within 1.5x of a bare subprocess of the same interpreter; a warm pool under
5 ms per small job. CPU is measured with a cpuacct group around this process (see `CpuMeter`):
getrusage alone misses the sandboxes' interpreters.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.contract import SandboxJob
from formulane.escalation.environments import Environment, real_interpreter


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _job(code: str, n: int = 0) -> SandboxJob:
    return SandboxJob(idempotency_key=f"bench-{n}-{time.monotonic_ns()}", tenant="bench",
                      principal="bench", purpose="benchmark", code=code, inputs={"n": n})


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


class CpuMeter:
    """All the CPU this benchmark causes, in seconds.

    ``getrusage`` is not enough: bubblewrap's monitor exits without waiting for its namespace
    init, so the init and the interpreter it reaped (start-up included) never reach this
    process's RUSAGE_CHILDREN. When it can, the meter moves this process into its own cpuacct
    group before anything is started: every process it forks (setpriv, bwrap, the namespace
    init, the interpreter until it joins its job cgroup, early in its start-up) is counted
    there, and the job cgroup's share after the join is each receipt's ``cpu_ms``, added by
    the caller; for pooled sandboxes the share before the job took them is the pool's
    ``prestart_cpu_s``, also added.
    """

    def __init__(self) -> None:
        self.group: Path | None = None
        root = Path("/sys/fs/cgroup/cpuacct")
        if not (root / "cpuacct.usage").exists():
            return
        group = root / f"formulane-bench-{os.getpid()}"
        try:
            group.mkdir()
            (group / "cgroup.procs").write_text(str(os.getpid()))
            self.group = group
        except OSError:
            if group.exists():
                group.rmdir()

    @property
    def complete(self) -> bool:
        return self.group is not None

    def __call__(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        return _rusage_cpu()

    def close(self) -> None:
        if self.group is None:
            return
        (self.group.parent / "cgroup.procs").write_text(str(os.getpid()))
        for _ in range(100):  # children that are still exiting keep the group busy a moment
            try:
                self.group.rmdir()
                break
            except OSError:
                time.sleep(0.05)
        self.group = None


def _rusage_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


_cpu: Callable[[], float] = _rusage_cpu  # main() installs a CpuMeter


def wait_for_idle(limit: float, max_wait_s: float) -> float:
    """Wait (up to ``max_wait_s``) until the 1-minute load average drops below ``limit``."""
    deadline = time.monotonic() + max_wait_s
    while os.getloadavg()[0] >= limit and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


class BwrapFloor:
    """``setpriv`` + ``bwrap`` with the options of a real cold job (the same namespaces, binds,
    mounts and seccomp filter, built by the backend's own `launch_argv` on a uid slot and
    workspace of its own) around the lean interpreter's ``-c pass``: no formulane code on the
    path, so what any bubblewrap sandbox of this interpreter costs here at the least."""

    def __init__(self, backend: BubblewrapBackend) -> None:
        from formulane.escalation.backends.runner import Resources
        from formulane.escalation.backends.supervisor import SETPRIV

        self.backend = backend
        self.res = Resources()
        backend._allocate(None, 0, self.res, name=f"bench-floor-{os.getpid()}")
        env = backend.environments.get()
        argv, self.env, self.fds = backend.launch_argv(_job("pass"), env, self.res, 0, 1)
        self.seccomp = int(argv[argv.index("--seccomp") + 1])
        cut = argv.index("--")
        self.argv = argv[:cut + 2] + ["-I", "-S", "-B", "-X", "utf8", "-c", "pass"]
        uid = self.res.uid
        if uid is not None and SETPRIV:
            self.argv = [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                         "--"] + self.argv

    def __call__(self) -> None:
        os.lseek(self.seccomp, 0, os.SEEK_SET)  # bwrap reads the filter to its end each time
        subprocess.run(self.argv, env=self.env, pass_fds=self.fds, stdin=subprocess.DEVNULL,
                       capture_output=True, check=True, start_new_session=True)

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.res.release(self.backend.uids)


def cold_start(backend: BubblewrapBackend, runs: int) -> dict[str, dict[str, float]]:
    env = backend.environments.get()
    floor = BwrapFloor(backend)
    try:
        return _cold_start(backend, env, floor, runs)
    finally:
        floor.close()


def _cold_start(backend: BubblewrapBackend, env: Environment, floor: BwrapFloor,
                runs: int) -> dict[str, dict[str, float]]:
    host = real_interpreter()
    lean = str(env.host_python)
    lean_env = {"LD_LIBRARY_PATH": str(Path(env.root) / "lib")}
    variants: dict[str, Callable[[], object]] = {
        "bare: python -c pass (host interpreter)": lambda: subprocess.run(
            [host, "-c", "pass"], stdin=subprocess.DEVNULL, capture_output=True, check=True),
        "bare: lean python -I -S -c pass (sandbox's binary, same flags)": lambda: subprocess.run(
            [lean, "-I", "-S", "-B", "-X", "utf8", "-c", "pass"], stdin=subprocess.DEVNULL,
            capture_output=True, check=True, env=lean_env),
        "sandbox: BubblewrapBackend.run (cold, full receipt)": lambda: _check(
            backend.run(_job("pass"))),
        "floor: setpriv + bwrap (same options) + lean python -c pass, no formulane": floor,
    }
    for fn in variants.values():  # warm caches once
        fn()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, float] = {name: 0.0 for name in variants}
    for _ in range(runs):
        for name, fn in variants.items():  # interleaved: drift hits every variant alike
            c0 = _cpu()
            _job_cpu.clear()
            samples[name].append(_timed(fn))
            time.sleep(0.02)  # the wrapper's init finishes exiting, so all its CPU is in
            cpu[name] += _cpu() - c0 + sum(_job_cpu)
    return {name: {"p50": statistics.median(v), "p90": _pct(v, 0.9), "min": min(v),
                   "cpu_ms": cpu[name] / runs * 1000}
            for name, v in samples.items()}


_job_cpu: list[float] = []  # receipts' cpu_ms (seconds): the job cgroup's share, see CpuMeter


def _check(receipt) -> None:  # type: ignore[no-untyped-def]
    if not receipt.succeeded:
        raise RuntimeError(f"benchmark job failed: {receipt.outcome} {receipt.stderr.text}")
    _job_cpu.append((receipt.cpu_ms or 0.0) / 1000)


def warm_pool(backend: BubblewrapBackend, jobs: int, size: int, fillers: int,
              workers: int) -> dict[str, float]:
    pool = backend.enable_pool(size, fillers=fillers)
    if not pool.wait_ready(timeout=60):
        raise RuntimeError(f"pool never filled: {pool.errors}")
    latencies: list[float] = []
    job_cpu: list[float] = []
    lock = threading.Lock()
    counter = iter(range(jobs))

    def worker() -> None:
        while True:
            with lock:
                n = next(counter, None)
            if n is None:
                return
            t0 = time.perf_counter()
            receipt = backend.run(_job("print(inputs['n'] * 2)", n))
            elapsed = (time.perf_counter() - t0) * 1000
            if receipt.stdout.text != f"{n * 2}\n":
                raise RuntimeError(f"job {n} answered {receipt.stdout.text!r}")
            with lock:
                latencies.append(elapsed)
                job_cpu.append((receipt.cpu_ms or 0.0) / 1000)

    t0 = time.perf_counter()
    cpu0 = _cpu()
    # Interpreters join their job group while starting; the pool keeps that share out of the
    # receipts and counts it here instead.
    pre0 = pool.prestart_cpu_s
    threads = [threading.Thread(target=worker, name=f"bench-worker-{i}") for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = (time.perf_counter() - t0) * 1000
    cpu_ms = (_cpu() - cpu0 + sum(job_cpu) + pool.prestart_cpu_s - pre0) * 1000
    taken = pool.taken
    backend.close()
    return {"jobs": jobs, "pool_size": size, "fillers": fillers, "workers": workers,
            "total_ms": total, "ms_per_job": total / jobs, "jobs_per_s": jobs / total * 1000,
            "latency_p50": statistics.median(latencies), "latency_p90": _pct(latencies, 0.9),
            "warm_hits": taken, "cpu_ms_per_job": cpu_ms / jobs}


def warm_hits(backend: BubblewrapBackend, jobs: int, size: int) -> dict[str, float]:
    """Latency of a job that finds a warm sandbox, the pool otherwise idle: before each job the
    pool is full again and its fillers are waiting, so the figure is what one job costs on the
    critical path (take, stage, frame, run, teardown, survivor check, receipt), not the
    pre-start work, which `warm_pool` charges in full."""
    pool = backend.enable_pool(size, fillers=1)
    walls: list[float] = []
    cpus: list[float] = []
    for n in range(jobs):
        if not pool.wait_ready(timeout=60):
            raise RuntimeError(f"pool never filled: {pool.errors}")
        time.sleep(0.05)  # let the filler that just finished go back to waiting
        taken = pool.taken
        c0 = _cpu()
        t0 = time.perf_counter()
        receipt = backend.run(_job("print(inputs['n'] * 2)", n))
        walls.append((time.perf_counter() - t0) * 1000)
        # Read at once: cpuacct counts as it runs, and the refill the pool starts now is
        # pre-start work, not this job's.
        cpus.append((_cpu() - c0) * 1000 + (receipt.cpu_ms or 0.0))
        if receipt.stdout.text != f"{n * 2}\n" or pool.taken != taken + 1:
            raise RuntimeError(f"job {n}: {receipt.outcome} {receipt.stdout.text!r}, not warm")
    backend.close()
    return {"jobs": jobs, "p50": statistics.median(walls), "p90": _pct(walls, 0.9),
            "min": min(walls), "cpu_ms": statistics.median(cpus)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", default="cold,warm-hit,pool",
                        help="comma-separated sections to run: cold, warm-hit, pool")
    parser.add_argument("--wait-idle", type=float, default=0.0,
                        help="seconds to wait for the load average to fall below 1.5 first")
    args = parser.parse_args()
    if args.wait_idle:
        wait_for_idle(1.5, args.wait_idle)
    global _cpu
    meter = CpuMeter()  # before any thread or child exists, so all of them are counted
    _cpu = meter  # type: ignore[assignment]
    try:
        return _main(args, meter)
    finally:
        meter.close()


def _main(args: argparse.Namespace, meter: CpuMeter) -> int:
    state = Path(tempfile.mkdtemp(prefix="formulane-bench-", dir="/tmp"))
    os.chmod(state, 0o711)
    try:
        return _run(args, meter, state)
    finally:
        # Every backend is closed by then (workspaces unmounted); the environments copy and
        # the artifacts are the bench's own.
        shutil.rmtree(state, ignore_errors=True)


def _run(args: argparse.Namespace, meter: CpuMeter, state: Path) -> int:
    backend = BubblewrapBackend(state, uid_first=192_000, uid_count=32)
    if not backend.capabilities().available:
        print(f"bubblewrap unavailable: {backend.capabilities().unavailable_reason}")
        return 2
    import formulane
    print(f"# machine: {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}, "
          f"python {sys.version.split()[0]}, {backend.caps.summary()}")
    print(f"# code measured: {Path(formulane.__file__).parent}")
    print("# CPU: " + ("a cpuacct group around this process and its children, plus the job "
                       "cgroups' share (complete)" if meter.complete else
                       "getrusage only: misses the sandboxes' interpreters (partial)"))
    only = set(args.only.split(","))
    results: dict[str, object] = {"load_start": os.getloadavg()[0]}
    if "cold" in only:
        results.update(_cold_section(backend, args.runs))
    if "warm-hit" in only:
        hits = warm_hits(BubblewrapBackend(state / "warm-hits", uid_first=192_000,
                                           uid_count=32, environments=backend.environments),
                         min(args.jobs, 60), 4)
        print(f"\n## Warm hit: one job taking a waiting sandbox ({hits['jobs']} jobs)\n")
        print("| p50 ms | p90 ms | min ms | CPU ms (median) |\n|---|---|---|---|")
        print(f"| {hits['p50']:.2f} | {hits['p90']:.2f} | {hits['min']:.2f} | "
              f"{hits['cpu_ms']:.2f} |")
        results["warm_hit"] = hits
    if "pool" in only:
        results["warm_pool"] = _pool_section(backend, state, args.jobs)
    backend.close()
    results["load_end"] = os.getloadavg()[0]
    print(f"\nload average after the run: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


def _cold_section(backend: BubblewrapBackend, runs: int) -> dict[str, object]:
    cold = cold_start(backend, runs)
    print(f"\n## Cold start ({runs} interleaved runs each)\n")
    print("| variant | p50 ms | p90 ms | min ms | CPU ms |\n|---|---|---|---|---|")
    for name, row in cold.items():
        print(f"| {name} | {row['p50']:.1f} | {row['p90']:.1f} | {row['min']:.1f} | "
              f"{row['cpu_ms']:.1f} |")
    names = list(cold)
    sandbox = cold[names[2]]["p50"]
    ratio_host = sandbox / cold[names[0]]["p50"]
    ratio_lean = sandbox / cold[names[1]]["p50"]
    print(f"\nratio sandbox / bare host interpreter: {ratio_host:.2f}x (target <= 1.5x)")
    print(f"ratio sandbox / bare lean binary, same flags: {ratio_lean:.2f}x")
    ratio_floor = cold[names[3]]["p50"] / cold[names[1]]["p50"]
    over_floor = sandbox - cold[names[3]]["p50"]
    print(f"ratio bubblewrap floor / bare lean binary: {ratio_floor:.2f}x; the sandbox adds "
          f"{over_floor:.1f} ms to the floor (p50)")
    return {"cold": cold, "ratio_host": ratio_host, "ratio_lean": ratio_lean,
            "ratio_floor_lean": ratio_floor, "sandbox_over_floor_ms": over_floor}


def _pool_section(backend: BubblewrapBackend, state: Path, jobs: int) -> list[dict[str, float]]:
    runs = []
    for size, fillers, workers in ((8, 4, 1), (8, 4, 2)):
        fresh = BubblewrapBackend(state / f"pool-{workers}", uid_first=192_000, uid_count=32,
                                  environments=backend.environments)
        runs.append(warm_pool(fresh, jobs, size, fillers, workers))
    print(f"\n## Warm pool, {jobs} small jobs\n")
    print("| pool | fillers | callers | ms per job | jobs/s | latency p50 | latency p90 | "
          "CPU ms per job | warm hits |\n|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['pool_size']} | {r['fillers']} | {r['workers']} | {r['ms_per_job']:.2f} | "
              f"{r['jobs_per_s']:.0f} | {r['latency_p50']:.2f} | {r['latency_p90']:.2f} | "
              f"{r['cpu_ms_per_job']:.2f} | {r['warm_hits']}/{r['jobs']} |")
    best = min(r["ms_per_job"] for r in runs)  # type: ignore[type-var]
    print(f"\nbest throughput: {best:.2f} ms per job (target < 5 ms)")
    return runs


if __name__ == "__main__":
    raise SystemExit(main())
