"""The LALR(1) table of formula.lark as plain data, built once at development time.

Contract: `build(grammar)` asks Lark for the grammar's LALR(1) table and terminals (about 0.1 s
of CPU, plus importing lark) and returns them as JSON-ready data: the terminals in the order
the lexer tries them, the ignored terminals, the rules (children count, rule name, builder
method or None for a one-child ``?rule``, indices of the children kept) and, per state, each
symbol's action (a state number to shift to, or ``-1 - rule`` to reduce). `load(grammar)`
returns the checked-in copy, ``formula_table.json`` beside the grammar, when it was built from
exactly this grammar text (its SHA-256 is stored in the file) and has the expected shape; None
otherwise, and the parser then builds the table with Lark as before. So editing formula.lark
without regenerating costs start-up time, never a wrong parse, and ``tests/grammar/
test_grammar_table.py`` fails until the copy is regenerated::

    python -m formulane.grammar              # rewrites formula_table.json from formula.lark

Why not Lark's own ``cache=True``: it pickles the parser into the shared temporary folder under
a predictable name and unpickles whatever it finds there, and the file vouches for itself (the
grammar hash it is checked against is read from the same file), so anyone who can write that
file can run code in the process or change how formulas parse. Lark's standalone generator
writes Python code we would have to import and keep in step with Lark. This file is data
(JSON: no code runs when it is read), shipped with the package like formula.lark, compared
in full with a fresh build by a test, and the only names it can make the parser call are
the builder's public methods (checked when the engine loads it, by the parser).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypedDict

#: Bumped when the layout of the file changes; a file of another format is ignored.
FORMAT = 1
TABLE_FILE = "formula_table.json"
GRAMMAR_FILE = "formula.lark"


class TableData(TypedDict):
    """The JSON file's content (see the module's opening for the meaning of each field)."""

    format: int
    grammar_sha256: str
    terminals: list[list[str]]
    ignore: list[str]
    rules: list[list[Any]]
    states: list[dict[str, int]]
    start: int
    end: int


def grammar_text() -> str:
    return Path(__file__).with_name(GRAMMAR_FILE).read_text("utf-8")


def digest(grammar: str) -> str:
    return hashlib.sha256(grammar.encode("utf-8")).hexdigest()


def build(grammar: str) -> TableData:
    """The table Lark computes for ``grammar`` (imports lark; about 0.1 s)."""
    from lark import Lark

    lark = Lark(grammar, parser="lalr", lexer="basic", maybe_placeholders=False, cache=False)
    table = lark.parser.parser._parse_table  # private: the parser falls back if it moves
    rules: list[list[Any]] = []
    index: dict[Any, int] = {}

    def rule_code(rule: Any) -> int:
        if rule not in index:
            size = len(rule.expansion)
            if rule.alias is None and not (size == 1 and rule.options.expand1):
                raise ValueError(f"grammar rule {rule.origin.name} needs an alias")
            keep = [i for i, sym in enumerate(rule.expansion)
                    if not (sym.is_term and sym.filter_out)]
            index[rule] = len(rules)
            rules.append([size, str(rule.origin.name),
                          None if rule.alias is None else str(rule.alias),
                          None if len(keep) == size else keep])
        return -1 - index[rule]

    # Lark numbers states in an order that depends on hash randomization; number them again
    # by a breadth-first walk from the start state, symbols in name order, so that the same
    # grammar always gives the same file.
    rows = {state: sorted(row.items(), key=lambda kv: str(kv[0]))
            for state, row in table.states.items()}
    start, end = table.start_states["start"], table.end_states["start"]
    number = {start: 0}
    queue = [start]
    for state in queue:
        for _, (action, arg) in rows[state]:
            if action.name == "Shift" and arg not in number:
                number[arg] = len(number)
                queue.append(arg)
    if len(number) != len(rows) or end not in number:
        raise ValueError("a state of Lark's table is not reachable from the start state")
    states = [{str(symbol): number[arg] if action.name == "Shift" else rule_code(arg)
               for symbol, (action, arg) in rows[state]} for state in queue]
    return TableData(
        format=FORMAT, grammar_sha256=digest(grammar),
        terminals=[list(t) for t in lexer_terminals(lark)],
        ignore=sorted(str(t) for t in lark.ignore_tokens), rules=rules, states=states,
        start=0, end=number[end])


def lexer_terminals(lark: Any) -> list[tuple[str, str]]:
    """(name, regex) of every terminal of a built Lark parser, in the order Lark's basic lexer
    tries them: priority, then longest possible match. Lark's rewriting of string terminals
    that a regex terminal also matches is not reproduced; the grammar has none (keywords are
    prioritized regexes), and a test compares paths."""
    return [(t.name, t.pattern.to_regexp()) for t in sorted(lark.terminals, key=lambda t: (
        -t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))]


def dumps(data: TableData) -> str:
    """The file's text: one rule and one state per line, so a grammar change reads as a
    small diff."""
    def rows(items: list[Any]) -> str:
        return "[\n  " + ",\n  ".join(
            json.dumps(item, sort_keys=True, separators=(",", ":")) for item in items) + "\n ]"

    head = {k: v for k, v in data.items() if k not in ("rules", "states", "terminals")}
    body = json.dumps(head, indent=1, sort_keys=True)
    return (body[:-2] + ',\n "terminals": ' + rows(data["terminals"]) + ',\n "rules": '
            + rows(data["rules"]) + ',\n "states": ' + rows(data["states"]) + "\n}\n")


def load(grammar: str) -> TableData | None:
    """The checked-in table when it was built from exactly ``grammar`` and has the expected
    shape; None when it is missing, unreadable, stale or malformed."""
    try:
        data = json.loads(Path(__file__).with_name(TABLE_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or \
            data.get("grammar_sha256") != digest(grammar) or not _well_formed(data):
        return None
    return data  # type: ignore[return-value]


def _well_formed(data: dict[str, Any]) -> bool:
    """Types and ranges of every field, so that a damaged file is refused here rather than
    failing half-way through a parse."""
    states, rules, terminals = data.get("states"), data.get("rules"), data.get("terminals")
    if not (isinstance(states, list) and isinstance(rules, list) and isinstance(terminals, list)
            and isinstance(data.get("ignore"), list)):
        return False
    n_states, n_rules = len(states), len(rules)
    if not all(isinstance(data.get(k), int) and 0 <= data[k] < n_states for k in ("start", "end")):
        return False
    for t in terminals:
        if not (isinstance(t, list) and len(t) == 2 and all(isinstance(x, str) for x in t)):
            return False
    for r in rules:
        if not (isinstance(r, list) and len(r) == 4 and isinstance(r[0], int) and r[0] >= 1
                and isinstance(r[1], str) and (r[2] is None or isinstance(r[2], str))
                and (r[3] is None or (isinstance(r[3], list)
                                      and all(isinstance(i, int) and 0 <= i < r[0]
                                              for i in r[3])))):
            return False
    for row in states:
        if not isinstance(row, dict):
            return False
        for symbol, code in row.items():
            if not isinstance(code, int) or not -n_rules <= code < n_states:
                return False
    return True


def main() -> None:
    """Rewrite formula_table.json from formula.lark."""
    path = Path(__file__).with_name(TABLE_FILE)
    path.write_text(dumps(build(grammar_text())), "utf-8")
    print(f"wrote {path.name}")

