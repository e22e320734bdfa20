"""Overhead of a typed-tool call: validated, authorized, receipted, next to the bare function and
pydantic-ai's tool call path, in one run.

    python bench/tools_bench.py [--calls 5000] [--repeats 7] [--json bench/out/tools.json]

Scenarios (same function, same arguments, raw JSON as a provider sends it):
- bare: `price(sku="A1", qty=2)`;
- pydantic validate_json: the strict validation alone, the floor any safe path pays;
- formulane read: `registry.call(...)` on a SQLite file store (receipts batched by a background
  thread; the amortized figure includes the final flush of every receipt);
- formulane read, dict arguments; formulane read, in-memory SQLite; formulane acall (async tool);
- formulane write: an approved write, claim + result + receipt durable (fsync) before returning;
- pydantic-ai: `ToolManager.handle_call` with a sync tool (run in a thread, as pydantic-ai does)
  and with an async tool, when `pydantic-ai-slim` is installed.
Each figure is the median over repeats of the mean per-call time, wall and CPU (process time,
which counts the receipt writer thread); ratios and the target use CPU, against bare.
Target (issue 5): a receipted read call adds <= 50 us over the bare function.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, ConfigDict

from formulane.typed_tools import Principal, ToolRegistry

ARGS_JSON = '{"sku": "A1", "qty": 2}'
ARGS_DICT = {"sku": "A1", "qty": 2}
PRINCIPAL = Principal("bench", "acme", ["prices:read", "prices:write"])
APPROVER = Principal("approver", "acme", ["tools:approve"])
TARGET_US = 50.0


def price(sku: str, qty: int = 1) -> float:
    """The price of `qty` units of `sku`."""
    return 2.5 * qty


async def aprice(sku: str, qty: int = 1) -> float:
    return 2.5 * qty


def set_price(sku: str, qty: int) -> float:
    return 2.5 * qty


class PriceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sku: str
    qty: int = 1


# (median wall, best wall, median CPU) of the per-repeat mean microseconds per call. CPU is
# process time, so it includes the receipt writer thread and excludes time the process spent
# descheduled: on a shared, loaded machine it is the stable figure.
Figure = tuple[float, float, float]


def timed(fn: Callable[[], Any], calls: int, repeats: int, after: Callable[[], Any] | None = None) -> Figure:
    """Per-call microseconds over `repeats` runs of `calls` calls (after() runs inside the timing)."""
    for _ in range(min(calls, 500)):
        fn()
    if after is not None:
        after()
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter_ns(), time.process_time_ns()
        for _ in range(calls):
            fn()
        if after is not None:
            after()
        walls.append((time.perf_counter_ns() - start) / calls / 1000)
        cpus.append((time.process_time_ns() - cpu) / calls / 1000)
    return statistics.median(walls), min(walls), statistics.median(cpus)


def timed_async(make: Callable[[], Awaitable[Any]], calls: int, repeats: int) -> Figure:
    async def run() -> Figure:
        for _ in range(min(calls, 500)):
            await make()
        walls, cpus = [], []
        for _ in range(repeats):
            start, cpu = time.perf_counter_ns(), time.process_time_ns()
            for _ in range(calls):
                await make()
            walls.append((time.perf_counter_ns() - start) / calls / 1000)
            cpus.append((time.process_time_ns() - cpu) / calls / 1000)
        return statistics.median(walls), min(walls), statistics.median(cpus)

    return asyncio.run(run())


def registry_for(store: str) -> ToolRegistry:
    registry = ToolRegistry(store=store)
    registry.tool(scopes=["prices:read"])(price)
    registry.tool(scopes=["prices:read"])(aprice)
    registry.tool(effect="write", scopes=["prices:write"])(set_price)
    return registry


def write_calls(registry: ToolRegistry, calls: int) -> Figure:
    """Mean us per approved write: claim, run, result + receipt committed durably."""
    approvals = []
    for i in range(calls):
        args = {"sku": "A1", "qty": i}
        pending = registry.call("set_price", args, principal=PRINCIPAL)
        registry.approve(pending.approval.id, approver=APPROVER)
        approvals.append((args, pending.approval.id))
    start, cpu = time.perf_counter_ns(), time.process_time_ns()
    for i, (args, approval_id) in enumerate(approvals):
        result = registry.call("set_price", args, principal=PRINCIPAL, approval=approval_id, idempotency_key=f"k{i}")
        assert result.ok, result.text()
    mean = (time.perf_counter_ns() - start) / calls / 1000
    return mean, mean, (time.process_time_ns() - cpu) / calls / 1000


def pydantic_ai_rows(calls: int, repeats: int) -> list[tuple[str, Figure]]:
    try:
        from pydantic_ai import RunContext
        from pydantic_ai.messages import ToolCallPart
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.tool_manager import ToolManager
        from pydantic_ai.toolsets import FunctionToolset
        from pydantic_ai.usage import RunUsage
    except ImportError:
        print("pydantic-ai-slim is not installed: its rows are skipped", file=sys.stderr)
        return []
    rows = []
    for label, fn in (("pydantic-ai handle_call (sync tool)", price),
                      ("pydantic-ai handle_call (async tool)", aprice)):
        async def manager(fn: Callable[..., Any] = fn) -> Any:
            context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
            return await ToolManager(FunctionToolset([fn])).for_run_step(context)

        tool_manager = asyncio.run(manager())
        name = fn.__name__

        async def one(tm: Any = tool_manager, name: str = name) -> Any:
            return await tm.handle_call(ToolCallPart(tool_name=name, args=ARGS_JSON, tool_call_id="c1"))

        rows.append((label, timed_async(one, calls, repeats)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    calls, repeats = args.calls, args.repeats

    rows: list[tuple[str, Figure]] = []
    bare = timed(lambda: price(sku="A1", qty=2), calls, repeats)
    rows.append(("bare function", bare))
    rows.append(("pydantic validate_json (strict) + call",
                 timed(lambda: price(**PriceArgs.model_validate_json(ARGS_JSON, strict=True).__dict__), calls, repeats)))

    with tempfile.TemporaryDirectory() as tmp:
        registry = registry_for(str(Path(tmp) / "receipts.sqlite3"))
        assert registry.call("price", ARGS_JSON, principal=PRINCIPAL).value == 5.0
        read_json = timed(lambda: registry.call("price", ARGS_JSON, principal=PRINCIPAL), calls, repeats)
        rows.append(("formulane call, read, SQLite file (latency)", read_json))
        amortized = timed(lambda: registry.call("price", ARGS_JSON, principal=PRINCIPAL), calls, repeats,
                          after=registry.flush)
        rows.append(("formulane call, read, SQLite file (incl. flush)", amortized))
        rows.append(("formulane call, read, dict arguments",
                     timed(lambda: registry.call("price", ARGS_DICT, principal=PRINCIPAL), calls, repeats)))

        async def async_call() -> Any:
            return await registry.acall("aprice", ARGS_JSON, principal=PRINCIPAL)

        rows.append(("formulane acall, async read", timed_async(async_call, calls, repeats)))
        registry.flush()
        written = len(registry.receipts(limit=10_000_000))
        write_us = write_calls(registry, args.writes)
        rows.append(("formulane call, approved write (durable)", write_us))
        registry.close()

    memory = registry_for(":memory:")
    rows.append(("formulane call, read, in-memory SQLite",
                 timed(lambda: memory.call("price", ARGS_JSON, principal=PRINCIPAL), calls, repeats,
                       after=memory.flush)))
    memory.close()
    rows.extend(pydantic_ai_rows(min(calls, 2000), repeats))

    width = max(len(label) for label, _ in rows)
    base_wall, base_cpu = bare[0], bare[2]
    print(f"{'scenario':<{width}}  {'wall med':>9}  {'wall best':>9}  {'CPU med':>9}  {'x bare':>8}  {'+CPU us':>8}")
    for label, (median, best, cpu) in rows:
        print(f"{label:<{width}}  {median:>9.2f}  {best:>9.2f}  {cpu:>9.2f}  {cpu / base_cpu:>8.0f}  "
              f"{cpu - base_cpu:>8.2f}")
    overhead = amortized[2] - base_cpu
    verdict = "meets" if overhead <= TARGET_US else "MISSES"
    print(f"\nreceipted read: +{read_json[0] - base_wall:.1f} us wall latency (receipt written in the background); "
          f"+{overhead:.1f} us CPU per call including writing its receipt ({verdict} the {TARGET_US:.0f} us target); "
          f"{written} read receipts written")
    pai = dict(rows).get("pydantic-ai handle_call (sync tool)")
    if pai:
        print(f"pydantic-ai handle_call (sync tool) / formulane receipted read: {pai[2] / amortized[2]:.1f}x CPU, "
              f"{pai[0] / amortized[0]:.1f}x wall")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(
            {label: {"wall_median_us": m, "wall_best_us": b, "cpu_median_us": c} for label, (m, b, c) in rows},
            indent=2) + "\n")
    return 0 if overhead <= TARGET_US else 1


if __name__ == "__main__":
    raise SystemExit(main())
