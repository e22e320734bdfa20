"""SQL size and compile time over every golden case (issue 10's targets).

    python bench/columnar_sql_size.py [--dialect duckdb] [--numbers decimal] [--worst 15]
                                      [--by-function] [--clock wall|cpu] [--repeat 3]
                                      [--floor] [--nested-only]

For each golden case that compiles and that the SQL backend accepts: characters of the whole
query `Program.to_sql(dialect).select("t")` (bindings included) per IR node, and the time to
compile the checked program to SQL text, best of 3 (``--repeat``; `to_sql` plus rendering; the
formula's own parse and check are excluded, they are the same for every backend), by the wall
clock or (``--clock cpu``) this process's CPU time, steadier on a loaded machine. Prints the distribution
(percentiles), the worst cases, and the nested-formula figures of tests/test_sql_size.py.
Targets: at most 40 characters per IR node; under 10 ms per formula. Last, nested formulas
(depth 1, 4, 8, 16), MAX of 200 ROUNDs and the largest formulas the default `Limits` accept,
with compile time per IR node; with ``--floor``, beside each the time sqlglot itself takes to
build the same SQL's tree (its parse of our output, rebuilt node by node with the node
constructors, as the builders do) and to render it (``.sql(dialect, copy=False)``): what
no change of ours can go below. Beside it, the characters
per node beyond the fixed query wrapper (``SELECT `` ... `` AS "value"``, ``, `` ... `` AS
"error"`` when the program may err, `` FROM "t"``: 27 or 40 characters every query has), what
the formula itself costs (the target stays the whole query's). ``--by-function`` adds
a breakdown by family (the declared category) and by function: for each, the cases calling it,
how many of those miss 40 characters per node, their median, and its worst case (a case is
counted under every function it calls, so a miss shows under each suspect).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import formulane  # noqa: E402
from formulane import FormulaError  # noqa: E402
from formulane.interpreter import ir  # noqa: E402


#: The clock compile times are read on (``--clock``) and how many runs each takes the best of.
CLOCK: Callable[[], float] = time.perf_counter
REPEAT = 3
FLOOR = False


def nodes(root: Any) -> int:
    return sum(1 for _ in ir.ir_walk(root))


def functions(root: Any) -> dict[str, str]:
    """The functions a program calls: name -> family (the declared category)."""
    called: dict[str, str] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if type(node) is ir.Call:
            called[node.spec.name] = node.spec.category or "?"
        stack.extend(ir.ir_children(node))
    return called


def breakdown(rows: list[tuple[Any, ...]], key: int, title: str, limit: int) -> None:
    """Per family or function (``key``: 5 for functions, 6 for families): cases, misses of
    40 chars/node, median chars/node, worst case; those with the most misses first."""
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        for name in row[key]:
            groups.setdefault(name, []).append(row)
    table = []
    for name, members in groups.items():
        misses = [r for r in members if r[0] > 40]
        worst = max(members)
        table.append((len(misses), name, len(members), statistics.median(r[0] for r in members),
                      worst))
    table.sort(key=lambda t: (-t[0], -t[4][0]))
    print(f"{title} (cases, over 40 chars/node, median chars/node, worst case):")
    for misses, name, count, median, worst in table[:limit]:
        if not misses:
            break
        print(f"  {name[:22]:22} {count:5} cases  {misses:4} over 40  median {median:6.0f}  "
              f"worst {worst[0]:6.0f}/node {worst[4][:50]}")


def wrapper(form: Any) -> int:
    """The characters of the fixed query every program gets: ``SELECT `` ... `` AS "value"``
    `` FROM "t"`` (27), and ``, `` ... `` AS "error"`` (13) when it has an error column."""
    return len('SELECT  AS "value" FROM "t"') + (0 if form.error is None
                                                 else len(', AS "error"') + 1)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def main() -> None:
    from case_runner import load_cases, schema_and_registry

    parser = argparse.ArgumentParser()
    parser.add_argument("--dialect", default="duckdb")
    parser.add_argument("--numbers", default="decimal")
    parser.add_argument("--worst", type=int, default=15)
    parser.add_argument("--by-function", action="store_true",
                        help="break the misses of 40 chars/node down by family and function")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="compile times by the wall clock or this process's CPU time")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--floor", action="store_true",
                        help="sqlglot's own time to build and render the same SQL")
    parser.add_argument("--nested-only", action="store_true",
                        help="only the nested and largest formulas (not the golden cases)")
    args = parser.parse_args()
    global CLOCK, REPEAT, FLOOR
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    REPEAT = max(1, args.repeat)
    FLOOR = args.floor
    if args.nested_only:
        nested_and_largest(args.dialect, args.numbers)
        return
    rows = []
    refused = 0
    for case in load_cases():
        if case.raises:
            continue
        try:
            schema, registry = schema_and_registry(case)
            # best of 3, each from a freshly checked program (nothing cached between runs):
            # the first run of a family also imports its forms, which is not compile time
            elapsed = float("inf")
            for _ in range(REPEAT):
                program = formulane.compile(case.expr, schema, profile=case.profile,
                                            registry=registry)
                started = CLOCK()
                form = program.to_sql(args.dialect, args.numbers)
                sql = form.select("t")
                elapsed = min(elapsed, CLOCK() - started)
        except FormulaError:
            refused += 1
            continue
        except Exception:  # a value the SQL layout cannot hold: not this benchmark's subject
            refused += 1
            continue
        n = nodes(program.root)
        called = functions(program.root)
        rows.append((len(sql) / n, len(sql), n, elapsed, case.id, tuple(called),
                     tuple(set(called.values())), (len(sql) - wrapper(form)) / n))
    per_node = [r[0] for r in rows]
    times = [r[3] * 1000 for r in rows]
    print(f"{len(rows)} golden cases compiled to {args.dialect} SQL ({args.numbers}); "
          f"{refused} refused or not compiled")
    print("chars per IR node: " + ", ".join(
        f"p{p} {percentile(per_node, p):.0f}" for p in (10, 25, 50, 75, 90, 95, 99, 100)))
    print(f"  cases within 40 chars/node: {sum(1 for v in per_node if v <= 40)} "
          f"({100 * sum(1 for v in per_node if v <= 40) / len(per_node):.0f}%)")
    beyond = [r[7] for r in rows]
    print("chars per IR node beyond the fixed query wrapper: " + ", ".join(
        f"p{p} {percentile(beyond, p):.0f}" for p in (10, 25, 50, 75, 90, 95, 99, 100)))
    print(f"  cases within 40 chars/node beyond the wrapper: "
          f"{sum(1 for v in beyond if v <= 40)} "
          f"({100 * sum(1 for v in beyond if v <= 40) / len(beyond):.0f}%)")
    print("compile to SQL text (ms): " + ", ".join(
        f"p{p} {percentile(times, p):.1f}" for p in (50, 90, 99, 100))
          + f"; mean {statistics.mean(times):.1f}")
    print(f"  cases under 10 ms: {sum(1 for t in times if t < 10)} of {len(times)}")
    print(f"worst {args.worst} by chars per node:")
    for ratio, length, n, elapsed, case_id, *_ in sorted(rows, reverse=True)[:args.worst]:
        print(f"  {ratio:7.0f}  {length:7,} chars  {n:4} nodes  {elapsed * 1000:6.1f} ms  "
              f"{case_id[:70]}")
    if args.by_function:
        breakdown(rows, 6, "by family", 40)
        breakdown(rows, 5, "by function", 60)
    nested_and_largest(args.dialect, args.numbers)


#: (name, innermost formula, one level of wrapping): tests/test_sql_size.py's families
NESTED = [
    ("ROUND", "x", lambda e: f"ROUND({e} * 1.1, 2)"),
    ("IF", "x", lambda e: f"IF(x > 3, {e} * 2, x - 1)"),
    ("text", "t", lambda e: f'UPPER(LEFT(TRIM({e}), 5) & "x")'),
]
NESTED_SCHEMA = {"x": "Number", "t": "Text"}


def timed(formula: str, schema: dict[str, str], dialect: str, numbers: str
          ) -> tuple[int, int, float]:
    """(characters of the whole query, IR nodes, best of 3 (``--repeat``) ms to compile to
    SQL text), each run from a freshly checked program."""
    best = float("inf")
    sql = ""
    program: Any = None
    for _ in range(REPEAT):
        program = formulane.compile(formula, schema)
        started = CLOCK()
        sql = program.to_sql(dialect, numbers).select("t")
        best = min(best, CLOCK() - started)
    global LAST_SQL
    LAST_SQL = sql
    return len(sql), nodes(program.root), best * 1000


LAST_SQL = ""


def floor(dialect: str) -> str:
    """With ``--floor``: sqlglot's own best time to build (constructors, as the builders) and
    render the tree of the SQL `timed` compiled last, else ''."""
    if not FLOOR:
        return ""
    import threading

    import sqlglot
    from sqlglot import exp

    def rebuild(node: Any) -> Any:
        if isinstance(node, exp.Expr):
            return type(node)(**{k: rebuild(v) for k, v in node.args.items()})
        if isinstance(node, list):
            return [rebuild(v) for v in node]
        return node

    times: list[float] = []

    def run() -> None:  # deep SQL: sqlglot's parser and generator recurse
        tree = sqlglot.parse_one(LAST_SQL, read=dialect)
        build = render = float("inf")
        for _ in range(REPEAT):
            started = CLOCK()
            fresh = rebuild(tree)
            built = CLOCK()
            fresh.sql(dialect, copy=False)
            build, render = min(build, built - started), min(render, CLOCK() - built)
        times.extend((build, render))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200_000)
    threading.stack_size(512 * 1024 * 1024)
    try:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    finally:
        sys.setrecursionlimit(limit)
        threading.stack_size(0)
    if not times:
        return " [floor: not parsed]"
    return f" [sqlglot floor {1000 * (times[0] + times[1]):.1f} ms: build " \
           f"{1000 * times[0]:.1f}, render {1000 * times[1]:.1f}]"


def nest(inner: str, wrap: Any, depth: int) -> str:
    formula = inner
    for _ in range(depth):
        formula = wrap(formula)
    return formula


def nested_and_largest(dialect: str, numbers: str) -> None:
    """Nested formulas at depth 1, 4, 8, 16; MAX of 200 ROUNDs; and the largest formulas the
    default `Limits` accept (deepest nesting, most nodes), with compile time per IR node. A
    formula the dialect cannot express (`Unsupported`, E213: PostgreSQL has no
    REGEXP_EXTRACT_ALL for the text family) is counted and reported as refused, not measured."""
    refused: list[str] = []

    def measured(formula: str, schema: dict[str, str], label: str,
                 show: Callable[[int, int, float], str]) -> str:
        try:
            length, n, ms = timed(formula, schema, dialect, numbers)
        except FormulaError as exc:
            refused.append(label)
            return f"refused ({str(exc).splitlines()[0][:150]})"
        return show(length, n, ms) + floor(dialect)

    print("nested formulas (chars, chars/node, compile ms, ms/node):")
    for name, inner, wrap in NESTED:
        line = [measured(nest(inner, wrap, depth), NESTED_SCHEMA, f"{name} d{depth}",
                         lambda length, n, ms, d=depth: f"d{d} {length:,} {length / n:.0f}/n "
                                                        f"{ms:.1f} ms {ms / n:.2f}/n")
                for depth in (1, 4, 8, 16)]
        if all(part.startswith("refused") for part in line):
            line = line[:1]  # (one reason for the four depths)
        print(f"  {name:5} " + "; ".join(line))
    wide = "MAX(" + ", ".join(f"ROUND(x{i} * 1.1, 2)" for i in range(200)) + ")"
    print("  MAX of 200 ROUND(x_i * 1.1, 2): " + measured(
        wide, {f"x{i}": "Number" for i in range(200)}, "MAX of 200 ROUNDs",
        lambda length, n, ms: f"{length:,} chars, {n} nodes, {ms:.0f} ms ({ms / n:.2f} ms/node)"))
    print("largest formulas under the default Limits:")
    for name, inner, wrap in NESTED:
        depth = deepest(inner, wrap)
        print(f"  {name} nested to depth {depth} (max_depth): " + measured(
            nest(inner, wrap, depth), NESTED_SCHEMA, f"{name} at max_depth",
            lambda length, n, ms: f"{length:,} chars, {n} nodes, {ms:.0f} ms "
                                  f"({ms / n:.2f} ms/node)"))
    terms = most_terms()
    formula = _terms(terms)
    print(f"  MAX of MAXes of {terms} ROUND(x * 1.1, 2) (max_nodes, {len(formula):,} source "
          "chars): " + measured(formula, {"x": "Number"}, "MAX of MAXes",
                                lambda length, n, ms: f"{length:,} chars, {n} nodes, {ms:.0f} ms "
                                                      f"({ms / n:.2f} ms/node)"))
    if refused:
        print(f"  refused for {dialect}: {len(refused)} of the nested and largest formulas "
              f"({', '.join(refused)})")
    NESTED_REFUSED[:] = refused


#: The nested and largest formulas the last `nested_and_largest` found refused (by label).
NESTED_REFUSED: list[str] = []


def _accepted(formula: str, schema: dict[str, str]) -> bool:
    try:
        formulane.compile(formula, schema).to_sql("duckdb").select("t")
    except FormulaError:
        return False
    return True


def deepest(inner: str, wrap: Any) -> int:
    depth = 1
    while _accepted(nest(inner, wrap, depth + 1), NESTED_SCHEMA):
        depth += 1
    return depth


def _terms(count: int) -> str:
    """MAX of up to 255 MAXes of up to 255 terms (a call takes at most 255 arguments)."""
    items = ["ROUND(x*1.1,2)"] * count
    groups = [items[i:i + 255] for i in range(0, count, 255)]
    return "MAX(" + ",".join("MAX(" + ",".join(g) + ")" for g in groups) + ")"


def most_terms() -> int:
    low, high = 1, 2000
    while low < high:  # the most terms the checker's limits accept
        mid = (low + high + 1) // 2
        if _accepted(_terms(mid), {"x": "Number"}):
            low = mid
        else:
            high = mid - 1
    return low

if __name__ == "__main__":
    main()
