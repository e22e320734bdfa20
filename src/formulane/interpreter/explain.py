"""Explain an evaluation: the tree of sub-expressions with their types, values and costs.

The program is compiled again with an observer around every node's closure (no constant
folding), then run on the inputs: each node records the values it produced, in order. A node
never called was not evaluated (a lazy branch not taken: ``IF(TRUE, 1, 1/0)`` shows ``1/0`` as
skipped). A node inside a lambda records one value per call. An error value is traced to the
node that produced it (the deepest node whose result is that error and whose children did not
already carry it), so the explanation leads to where ``#DIV/0!`` arose.

Explaining is bounded like evaluating: the run is always metered (the program's cost budget
and deadline, the meter polled inside function loops, the memory budget), each node keeps at
most `MAX_VALUES` values with texts and lists clipped (`MAX_SHOWN_CHARS`, `MAX_SHOWN_ITEMS`),
and a tree over `Limits.max_explain_nodes` nodes is refused (E414), so the explanation's size
is bounded whatever the formula does.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..values import CONTEXT, ErrorValue, display_text, to_external
from . import ir
from .compile import Closure, Compiler
from .program import _read_inputs
from ..errors import EvalError, LimitExceeded
from ..runtime import EvalContext, activate, deactivate

#: Values shown per node for lambda bodies called many times.
MAX_VALUES = 5
#: A shown text keeps this many characters, a shown list this many items (then a marker).
MAX_SHOWN_CHARS = 200
MAX_SHOWN_ITEMS = 20


@dataclass
class ExplainNode:
    kind: str
    label: str
    source: str
    span: tuple[int, int]
    type: str
    cost: int
    evaluated: bool
    calls: int
    values: list[Any] = field(default_factory=list)
    origin: bool = False  # this node produced the error value it returned
    children: list["ExplainNode"] = field(default_factory=list)

    @property
    def value(self) -> Any:
        return self.values[0] if self.values else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "source": self.source,
            "span": {"start": self.span[0], "end": self.span[1]},
            "type": self.type,
            "cost": self.cost,
            "evaluated": self.evaluated,
            "calls": self.calls,
            "values": [_jsonable(v) for v in self.values],
            "origin": self.origin,
            "children": [c.to_dict() for c in self.children],
        }


@dataclass
class Explanation:
    source: str
    root: ExplainNode
    result: Any

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "result": _jsonable(self.result),
                "tree": self.root.to_dict()}

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    def error_origin(self) -> ExplainNode | None:
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.origin:
                return node
            stack.extend(reversed(node.children))
        return None

    def to_text(self) -> str:
        lines: list[str] = []
        self._render(self.root, 0, lines)
        return "\n".join(lines)

    def _render(self, node: ExplainNode, depth: int, lines: list[str]) -> None:
        pad = "  " * depth
        if node.kind == "lambda":
            shown = f"(called {node.children[0].calls} times)" if node.children else "(lambda)"
        elif not node.evaluated:
            shown = "(not evaluated)"
        elif node.calls > 1:
            more = "" if node.calls <= len(node.values) else ", ..."
            shown = "[" + ", ".join(_show(v) for v in node.values) + more + \
                f"] ({node.calls} calls)"
        else:
            shown = _show(node.value)
        marker = "  <- error arises here" if node.origin else ""
        lines.append(f"{pad}{node.source}  : {node.type} = {shown}{marker}")
        for child in node.children:
            self._render(child, depth + 1, lines)


def _show(value: Any) -> str:
    if isinstance(value, ErrorValue):
        return value.code + (f" ({value.message})" if value.message else "")
    if value is None:
        return "(blank)"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.items()) + "}"
    try:
        return display_text(value)
    except TypeError:
        return "<function>"


def _jsonable(value: Any) -> Any:
    if isinstance(value, ErrorValue):
        return value.to_dict()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    try:
        return display_text(value)
    except TypeError:
        return "<function>"


def _label(node: ir.IR) -> tuple[str, str]:
    if isinstance(node, ir.Call):
        return "call", node.spec.name
    if isinstance(node, ir.Var):
        return "name", node.name
    if isinstance(node, ir.Const):
        return "literal", ""
    if isinstance(node, ir.Let):
        return "let", ", ".join(node.names)
    if isinstance(node, ir.Lambda):
        return "lambda", ", ".join(node.names)
    if isinstance(node, ir.FieldOf):
        return "field", node.name
    if isinstance(node, ir.Coerce):
        return "coerce", node.mode
    return type(node).__name__.lower(), ""


def explain(program: Any, variables: Mapping[str, Any] | None = None, *,
            now: dt.datetime | None = None) -> Explanation:
    """Evaluate ``program`` on ``variables`` recording every sub-expression."""
    records: dict[int, list[Any]] = {}  # id(node) -> [calls, first values...]

    def observe(node: ir.IR, closure: Closure) -> Closure:
        key = id(node)
        bucket = records.setdefault(key, [0])

        def recorded(f: list[Any]) -> Any:
            value = closure(f)
            bucket[0] += 1
            if len(bucket) <= MAX_VALUES:
                bucket.append(_clip(value))
            return value

        return recorded

    limits = program.limits
    compiler = Compiler(True, limits, observe=observe)  # always metered: the same limits apply
    with decimal.localcontext(CONTEXT):
        run = compiler.compile(program.root)
    # Inputs go through the program's own checks, then the instrumented closure runs.
    frame: list[Any] = [None] * program._frame_size  # noqa: SLF001 - same package
    try:
        values = dict(variables or {})
    except Exception:  # noqa: BLE001 - a host mapping's own fault
        raise EvalError("variables must be a mapping of names to values", code="E301") from None
    _read_inputs(program._converters, values, frame)  # noqa: SLF001
    if now is not None and (not isinstance(now, dt.datetime) or now.utcoffset() is None):
        raise EvalError("now must be an aware datetime", code="E301")
    clock = now or dt.datetime.now(dt.timezone.utc)
    ctx = EvalContext(limits, clock, True)
    frame[0] = ctx
    token = activate(ctx)
    try:
        with decimal.localcontext(CONTEXT):
            result = run(frame)
    except RecursionError:
        raise LimitExceeded("explanation nested too deeply", code="E403") from None
    except MemoryError:
        raise LimitExceeded("explanation ran out of memory", code="E413") from None
    finally:
        deactivate(token)
    budget = [limits.max_explain_nodes]
    root = _tree(program.root, program.source, records, budget)
    _mark_origin(root)
    return Explanation(program.source, root, to_external(result))


def _clip(value: Any) -> Any:
    """A value cut to what an explanation shows (texts and lists, recursively)."""
    if type(value) is str and len(value) > MAX_SHOWN_CHARS:
        return value[:MAX_SHOWN_CHARS] + f"... ({len(value):,} characters)"
    if isinstance(value, (tuple, list)):
        shown = [_clip(v) for v in value[:MAX_SHOWN_ITEMS]]
        if len(value) > MAX_SHOWN_ITEMS:
            shown.append(f"... ({len(value):,} items)")
        return tuple(shown)
    if isinstance(value, dict) and len(value) > MAX_SHOWN_ITEMS:
        return {k: _clip(v) for k, v in list(value.items())[:MAX_SHOWN_ITEMS]}
    return value


def _tree(node: ir.IR, source: str, records: dict[int, list[Any]], budget: list[int]) -> ExplainNode:
    budget[0] -= 1
    if budget[0] < 0:
        raise LimitExceeded("the explanation would have more steps than Limits.max_explain_nodes",
                            code="E414", hint="explain a smaller part of the formula, or raise "
                            "Limits.max_explain_nodes")
    kind, label = _label(node)
    record = records.get(id(node), [0])
    calls, produced = record[0], record[1:]
    text = source[node.span.start:node.span.end] if node.span.end else label
    if len(text) > MAX_SHOWN_CHARS:
        text = text[:MAX_SHOWN_CHARS] + "..."
    shown = [] if isinstance(node, ir.Lambda) else [to_external(v) for v in produced[:MAX_VALUES]]
    children = [_tree(c, source, records, budget) for c in ir.ir_children(node)]
    return ExplainNode(kind=kind, label=label, source=text,
                       span=(node.span.start, node.span.end), type=str(node.type),
                       cost=node.cost, evaluated=bool(calls), calls=calls,
                       values=shown, children=children)


def _mark_origin(node: ExplainNode) -> bool:
    """Mark the deepest node that turned good inputs into an error; True if one was found."""
    for child in node.children:
        if _mark_origin(child):
            return True
    errors = [v for v in node.values if isinstance(v, ErrorValue)]
    if not errors:
        return False
    carried = any(isinstance(v, ErrorValue) and v.code == errors[0].code
                  for c in node.children for v in c.values)
    if not carried:
        node.origin = True
        return True
    return False
