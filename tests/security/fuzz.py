"""Fuzz targets for the security suite: the formula lane (parse, check, evaluate, explain,
to_polars, to_sql) and tool-argument validation (tenant keys and secrets at every nesting).

A target takes bytes and raises `FuzzFailure` (or lets a foreign exception out) when a promise
breaks: anything but a `FormulaError` leaving the engine, an `InternalError` (E9xx), a tool call
that raises, a tool body that sees another tenant, a secret in a receipt. Three drivers:

- `python -m tests.security.fuzz formula|tools [libFuzzer flags]`: atheris (coverage-guided),
  e.g. ``-runs=200000 -max_total_time=600``; seeds from the case files and function examples.
- `mutation_run(target, runs, seed)`: a dependency-free, deterministic byte mutator over the
  same seeds (what `tests/security/report.py` uses when atheris is absent, and what CI runs).
- `tests/security/test_fuzz.py`: a bounded run in CI (fixed seed and budget) plus Hypothesis.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable

import yaml
from pydantic import BaseModel, ConfigDict, Field

import formulane
from formulane import FormulaError, InternalError, Limits
from formulane.typed_tools import Secret, TenantKey

HERE = Path(__file__).parent
#: The fuzzed formula text is cut here (the engine refuses longer ones anyway, E401).
MAX_FUZZ_TEXT = 2_000
#: Tighter than the defaults so one input cannot take long, whatever it does.
FUZZ_LIMITS = Limits(deadline_ms=50.0, max_cost=500_000, max_memory_bytes=16 * 1024 * 1024)
SCHEMA = {"x": "Number", "y": "Number?", "s": "Text", "xs": "List[Number]", "ts": "List[Text]",
          "d": "Date", "b": "Boolean", "r": "Record{a: Number, t: Text}"}
VARIABLES: dict[str, Any] = {"x": 3, "y": None, "s": "abc", "xs": [1, 2, 3], "ts": ["a", "b*", "c"],
                             "d": dt.date(2024, 1, 31), "b": True, "r": {"a": 1, "t": "z"}}
NOW = dt.datetime(2024, 1, 31, 12, tzinfo=dt.timezone.utc)


class FuzzFailure(AssertionError):
    """A broken promise found by a fuzz target."""


# --- the formula lane ------------------------------------------------------------------------


def _engine_call(what: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except InternalError as exc:
        raise FuzzFailure(f"{what}: internal error {exc.code}: {exc}") from exc
    except FormulaError:
        return None
    except Exception as exc:  # noqa: BLE001 - exactly what a fuzz target looks for
        raise FuzzFailure(f"{what}: foreign exception {type(exc).__name__}: {exc}") from exc


def formula_target(data: bytes) -> None:
    text = data[: MAX_FUZZ_TEXT * 4].decode("utf-8", "replace")[:MAX_FUZZ_TEXT]
    program = _engine_call("compile", lambda: formulane.compile(text, SCHEMA, limits=FUZZ_LIMITS))
    if program is None:
        return
    _engine_call("evaluate", lambda: program.evaluate(VARIABLES, now=NOW))
    _engine_call("explain", lambda: program.explain(VARIABLES, now=NOW).to_dict())
    _engine_call("to_polars", lambda: program.to_polars())
    _engine_call("to_sql", lambda: program.to_sql("duckdb").value_sql)


def formula_seeds() -> list[bytes]:
    seeds: list[str] = []
    for path in sorted((HERE / "cases").glob("*.yaml")):
        for case in yaml.safe_load(path.read_text()) or []:
            if isinstance(case, dict) and isinstance(case.get("expr"), str):
                seeds.append(case["expr"])
    for entry in formulane.function_catalog():
        seeds.extend(str(e).rsplit(" -> ", 1)[0] for e in entry.get("examples", []))
    seeds += ["x + 1", "IF(b, s & \"!\", \"no\")", "SUM(MAP(xs, v => v * x))", "COUNTIF(ts, \"b*\")",
              "LET(a, xs, FILTER(a, a > 1))", "r.a + LEN(r.t)", "TEXT(d, \"yyyy-mm-dd\")"]
    return [s.encode() for s in dict.fromkeys(seeds)]


# --- tool-argument validation ---------------------------------------------------------------


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenant: Annotated[str, TenantKey]
    key: Annotated[str, Secret] = "sk-fuzz-secret-0000"
    amount: float = 0.0


class _Other(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str = "other"
    tenant: Annotated[str, TenantKey]


@dataclass
class _ToolBench:
    registry: Any
    crossings: list[str] = field(default_factory=list)


def _tenants_in(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, BaseModel):
            if hasattr(v, "tenant"):
                out.append(v.tenant)
            stack.extend(getattr(v, k) for k in type(v).model_fields)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return out


def _bench() -> _ToolBench:
    from formulane.typed_tools import ToolRegistry, formula_tools

    registry = ToolRegistry()
    formula_tools.register(registry)
    bench = _ToolBench(registry)

    def guard(*values: Any) -> int:
        foreign = [t for t in _tenants_in(list(values)) if t != "acme"]
        bench.crossings.extend(foreign)
        return len(values)

    @registry.tool
    def nested(a: list[list[_Item]], b: dict[str, list[_Item]] = {}, c: tuple[_Item, _Other] | None = None,
               d: _Item | _Other | None = None) -> int:
        """Nested tenant keys."""
        return guard(a, b, c, d)

    @registry.tool
    def amount(value: float, items: list[Annotated[str, Field(max_length=50)]] = []) -> float:
        """Floats and bounded texts."""
        return value

    return bench


_BENCH: _ToolBench | None = None
_TOOL_NAMES = ("nested", "amount", "evaluate_formula", "check_formula", "explain_formula")


def tool_target(data: bytes) -> None:
    global _BENCH
    if _BENCH is None:
        _BENCH = _bench()
    bench = _BENCH
    from formulane.typed_tools import Principal

    name = _TOOL_NAMES[data[0] % len(_TOOL_NAMES)] if data else "nested"
    raw = data[1:]
    try:
        result = bench.registry.call(name, raw, principal=Principal("fuzz", "acme"))
    except Exception as exc:  # noqa: BLE001
        raise FuzzFailure(f"tool {name}: call raised {type(exc).__name__}: {exc}") from exc
    if bench.crossings:
        crossed, bench.crossings[:] = list(bench.crossings), []
        raise FuzzFailure(f"tool {name}: ran for another tenant {crossed[:3]}")
    receipt = result.receipt
    if "sk-fuzz-secret" in (receipt.args or "") or (
            result.error is not None and "sk-fuzz-secret" in json.dumps(result.error.to_dict())):
        raise FuzzFailure(f"tool {name}: a secret reached a receipt or an error")


def tool_seeds() -> list[bytes]:
    item = {"tenant": "acme", "key": "sk-fuzz-secret-0001", "amount": 1.5}
    other = {"kind": "other", "tenant": "acme"}
    docs = [
        (0, {"a": [[item]], "b": {"k": [item]}, "c": [item, other], "d": item}),
        (0, {"a": [[{**item, "tenant": "evil"}]]}),
        (0, {"a": [], "d": {"kind": "other", "tenant": "evil"}}),
        (1, {"value": 1.5, "items": ["a", "b"]}),
        (2, {"formula": "SUM(xs)", "variables": {"xs": [1, 2]}}),
        (3, {"formula": "x +", "types": {"x": "Number"}}),
        (4, {"formula": "IF(x > 1, x, 0)", "variables": {"x": 2}}),
    ]
    seeds = [bytes([i]) + json.dumps(doc).encode() for i, doc in docs]
    seeds.append(bytes([1]) + b'{"value": NaN}')
    return seeds


# --- drivers ---------------------------------------------------------------------------------

TARGETS: dict[str, tuple[Callable[[bytes], None], Callable[[], list[bytes]]]] = {
    "formula": (formula_target, formula_seeds),
    "tools": (tool_target, tool_seeds),
}

_TOKENS = [b"(", b")", b",", b"\"", b"[", b"]", b"{", b"}", b"=>", b"&", b"*", b"?", b"~", b" ", b"1e308",
           b"-", b"LET(", b"MAP(", b"REPT(", b"SEQUENCE(", b"TEXT(", b"COUNTIF(", b"x", b"xs", b"ts", b"NaN",
           b"\xc5\xbf", b"\xef\xac\x81", b"99999999999999999999", b"\"tenant\"", b"\"evil\"", b"null", b"[[", b"]]"]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One random edit: flip, insert a token, delete a run, duplicate a run, splice digits."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        pos = rng.randint(0, len(buf))
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] = rng.randrange(256)
        elif op == 1:
            buf[pos:pos] = rng.choice(_TOKENS)
        elif op == 2 and buf:
            del buf[pos:pos + rng.randint(1, 8)]
        elif op == 3 and buf:
            start = rng.randrange(len(buf))
            buf[pos:pos] = buf[start:start + rng.randint(1, 16)]
        else:
            buf[pos:pos] = str(rng.randint(-10**6, 10**6)).encode()
    return bytes(buf[:MAX_FUZZ_TEXT * 2])


@dataclass
class RunStats:
    target: str
    executions: int = 0
    failures: list[str] = field(default_factory=list)


def mutation_run(name: str, runs: int, seed: int = 15) -> RunStats:
    """``runs`` executions of a target: every seed once, then mutants of seeds and survivors."""
    target, seeds_of = TARGETS[name]
    rng = random.Random(seed)
    pool = seeds_of()
    stats = RunStats(name)
    for i in range(runs):
        data = pool[i] if i < len(pool) else mutate(rng.choice(pool), rng)
        try:
            target(data)
        except FuzzFailure as exc:
            stats.failures.append(f"{exc} <- {data[:200]!r}")
        stats.executions += 1
        if i >= len(pool) and rng.random() < 0.05 and len(pool) < 5_000:
            pool.append(data)
    return stats


def main(argv: list[str]) -> None:
    import atheris

    if len(argv) < 2 or argv[1] not in TARGETS:
        raise SystemExit(f"usage: python -m tests.security.fuzz {'|'.join(TARGETS)} [libFuzzer flags]")
    target, seeds_of = TARGETS[argv[1]]
    corpus = Path(f".fuzz-corpus-{argv[1]}")
    corpus.mkdir(exist_ok=True)
    for i, seed in enumerate(seeds_of()):
        (corpus / f"seed-{i:04d}").write_bytes(seed)

    def one(data: bytes) -> None:
        target(data)

    if argv[1] == "tools":
        _bench_ready = tool_target(b"")  # noqa: F841 - build the registry before instrumenting
    atheris.instrument_all()  # coverage feedback over formulane (and what it imports)
    atheris.Setup([argv[0], *argv[2:], str(corpus)], one)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
