"""Bounded load test of `formulane serve` on loopback, next to a bare FastAPI endpoint.

    python bench/api_bench.py [--requests 3000] [--rounds 3] [--concurrency 8] [--batch-rows 100000]

Starts a real `formulane serve` (SQLite in a temporary data directory, rate limit raised
out of the way) and a bare FastAPI app returning a constant (`api_bench_bare.py`), both one
uvicorn process on loopback, and sends each a fixed number of requests over keep-alive
connections from a small asyncio HTTP/1.1 client (so the client costs little of the shared
CPU). Measures: evaluate on a stored formula (``POST /v1/formulas/{name}/evaluate``), a tool
call (``evaluate_formula``), and a 100,000-row Arrow IPC batch (rows/s from the server's
``Server-Timing`` and end to end). Prints requests/s, p50, p99 and the ratios to the bare
endpoint; results go in bench/API.md by hand. Traffic never leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("FORMULANE_")}
    out["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + out.get("PYTHONPATH", "")
    out["FORMULANE_RATE_PER_S"] = "1000000"
    out["FORMULANE_RATE_BURST"] = "1000000"
    out["FORMULANE_LOG_LEVEL"] = "warning"
    return out


def wait_up(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("server exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("server did not start")


class Conn:
    """One keep-alive HTTP/1.1 connection (Content-Length responses only)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> "Conn":
        r, w = await asyncio.open_connection("127.0.0.1", port)
        return cls(r, w)

    async def request(self, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        self.writer.write(raw)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, headers, body


def build(method: str, path: str, port: int, body: bytes = b"", key: str | None = None,
          content_type: str = "application/json") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: keep-alive"]
    if key:
        lines.append(f"Authorization: Bearer {key}")
    if body or method == "POST":
        lines += [f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def load(port: int, raw: bytes, requests: int, concurrency: int
               ) -> tuple[float, list[float], list[dict[str, str]]]:
    latencies: list[float] = []
    headers_seen: list[dict[str, str]] = []
    remaining = [requests]

    async def worker() -> None:
        conn = await Conn.open(port)
        while remaining[0] > 0:
            remaining[0] -= 1
            t0 = time.perf_counter()
            status, headers, _ = await conn.request(raw)
            latencies.append(time.perf_counter() - t0)
            if status >= 400:
                raise SystemExit(f"status {status}")
            if len(headers_seen) < 1000:
                headers_seen.append(headers)
        conn.writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start, latencies, headers_seen


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def report(name: str, requests: int, elapsed: float, lat: list[float]) -> dict[str, float]:
    row = {"rps": requests / elapsed, "p50_ms": pct(lat, 50) * 1000, "p99_ms": pct(lat, 99) * 1000}
    print(f"{name:<34} {row['rps']:>9.0f} req/s   p50 {row['p50_ms']:6.2f} ms   "
          f"p99 {row['p99_ms']:6.2f} ms")
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--batch-rows", type=int, default=100_000)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import httpx
    import polars as pl

    data = tempfile.mkdtemp(prefix="formulane-bench-")
    port, bare_port = free_port(), free_port()
    key = subprocess.run([sys.executable, "-m", "formulane", "keys", "create", "--tenant",
                          "bench", "--data-dir", data], capture_output=True, text=True,
                         env=env(), check=True).stdout.strip().splitlines()[-1]
    serve = subprocess.Popen([sys.executable, "-m", "formulane", "serve", "--data-dir", data,
                              "--port", str(port), "--sandbox", "none"], env=env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bare = subprocess.Popen([sys.executable, str(Path(__file__).with_name("api_bench_bare.py")),
                             str(bare_port)], env=env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_up(port, serve)
        wait_up(bare_port, bare)
        base = f"http://127.0.0.1:{port}"
        h = {"Authorization": f"Bearer {key}"}
        httpx.post(base + "/v1/formulas", headers=h, timeout=30, json={
            "name": "order_total", "formula": "ROUND(price * qty * (1 - discount), 2)",
            "schema": {"price": "Number", "qty": "Number", "discount": "Number"},
            "cases": [{"inputs": {"price": 10, "qty": 3, "discount": 0.1}, "expect": 27}]}
        ).raise_for_status()
        httpx.post(base + "/v1/formulas/order_total/versions/1/publish", headers=h,
                   timeout=30).raise_for_status()
        evaluate = json.dumps({"variables": {"price": 9.99, "qty": 3, "discount": 0.05}}).encode()
        tool = json.dumps({"args": {"formula": "ROUND(price * qty, 2)",
                                    "variables": {"price": 9.99, "qty": 3}}}).encode()
        frame = pl.DataFrame({"price": [float(i % 997) / 7 for i in range(args.batch_rows)],
                              "qty": [i % 13 for i in range(args.batch_rows)]})
        sink = io.BytesIO()
        frame.write_ipc_stream(sink)
        batch_path = ("/v1/evaluate/batch?formula=total%3DROUND(price%20*%20qty%2C%202)"
                      "&formula=unit%3Dprice%20%2F%20qty")
        runs = {
            "bare FastAPI GET constant": (bare_port, build("GET", "/constant", bare_port)),
            "bare FastAPI POST constant": (bare_port, build("POST", "/constant", bare_port,
                                                            evaluate)),
            "evaluate stored formula": (port, build(
                "POST", "/v1/formulas/order_total/evaluate", port, evaluate, key)),
            "tool call (evaluate_formula)": (port, build(
                "POST", "/v1/tools/evaluate_formula/call", port, tool, key)),
        }
        results: dict[str, dict[str, float]] = {}
        print(f"{args.requests} requests each x {args.rounds} alternating rounds (median "
              f"round shown), {args.concurrency} connections, loopback, one uvicorn process per "
              f"server, {os.cpu_count()} cores shared with the client")
        for p, raw in runs.values():
            asyncio.run(load(p, raw, min(200, args.requests), args.concurrency))  # warm up
        # Rounds alternate the endpoints, and each reports its median round: the machine is
        # shared, so a burst of someone else's load hits every endpoint alike.
        rounds: dict[str, list[tuple[float, list[float]]]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, (p, raw) in runs.items():
                elapsed, lat, _ = asyncio.run(load(p, raw, args.requests, args.concurrency))
                rounds[name].append((elapsed, lat))
        for name, samples in rounds.items():
            samples.sort(key=lambda s: s[0])
            elapsed, lat = samples[len(samples) // 2]
            results[name] = report(name, args.requests, elapsed, lat)
        bare_row = results["bare FastAPI POST constant"]
        for name in ("evaluate stored formula", "tool call (evaluate_formula)"):
            print(f"{name}: {results[name]['rps'] / bare_row['rps']:.0%} of the bare POST "
                  f"endpoint's throughput")
        raw = build("POST", batch_path, port, sink.getvalue(), key,
                    "application/vnd.apache.arrow.stream")
        asyncio.run(load(port, raw, 2, 1))
        elapsed, lat, headers = asyncio.run(load(port, raw, args.batches, 1))
        server_ms = [float(hd["server-timing"].split("dur=")[1]) for hd in headers]
        rows = args.batch_rows
        print(f"Arrow IPC batch of {rows:,} rows x 2 formulas, {args.batches} requests: "
              f"server-side p50 {statistics.median(server_ms):.1f} ms = "
              f"{rows / (statistics.median(server_ms) / 1000) / 1e6:.2f} M rows/s; "
              f"end to end p50 {pct(lat, 50) * 1000:.1f} ms = "
              f"{rows / pct(lat, 50) / 1e6:.2f} M rows/s")
    finally:
        for proc in (serve, bare):
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        import shutil

        shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
