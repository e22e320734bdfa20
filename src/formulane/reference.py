"""References generated from the registry: the functions document and the authoring prompt.

Both read only the function declarations, so they cannot drift from the engine: a test fails
when `docs/functions.md` differs from `functions_markdown()`. `prompt()` gives a language model
what it needs to write formulas (the language in brief, the schema's names and types, the
function signatures), bounded to a token budget (estimated at four characters per token).
"""

from __future__ import annotations

from typing import Any

from .functions.registry import Registry, default_registry
from .schema import normalize_schema
from .types import format_type

CATEGORY_ORDER = ("logic", "info", "math", "text", "dates", "lists", "lookup", "finance",
                  "statistics")
CATEGORY_TITLES = {
    "logic": "Logic", "info": "Information and conversion", "math": "Math", "text": "Text",
    "dates": "Dates and times", "lists": "Lists and aggregates", "lookup": "Lookup",
    "finance": "Finance (optional pack)", "statistics": "Statistics (optional pack)",
    "host": "Application functions",
}


def _categories(registry: Registry) -> dict[str, list[Any]]:
    groups: dict[str, list[Any]] = {}
    for spec in registry.functions():
        groups.setdefault(spec.category, []).append(spec)
    order = [c for c in CATEGORY_ORDER if c in groups] + sorted(set(groups) - set(CATEGORY_ORDER))
    return {c: sorted(groups[c], key=lambda s: s.name) for c in order}


def functions_markdown(registry: Registry | None = None) -> str:
    """The function reference (docs/functions.md), grouped by category."""
    reg = registry or _all_packs(default_registry())
    lines = ["# Function reference", "",
             "Generated from the function declarations by `formulane.reference"
             ".functions_markdown()`; do not edit by hand.", ""]
    groups = _categories(reg)
    for category, specs in groups.items():
        lines.append(f"- [{CATEGORY_TITLES.get(category, category.title())}](#{category}): "
                     + ", ".join(s.name for s in specs))
    lines.append("")
    for category, specs in groups.items():
        lines += [f"## {CATEGORY_TITLES.get(category, category.title())}", "",
                  f'<a id="{category}"></a>', ""]
        for spec in specs:
            lines.append(f"### {spec.name}")
            lines.append("")
            lines.append(spec.doc)
            lines.append("")
            for text in spec.describe():
                lines.append(f"- `{text}`")
            if spec.errors:
                lines.append(f"- errors: {', '.join(spec.errors)}")
            if spec.pack:
                lines.append(f"- pack: `{spec.pack}` (off by default)")
            lines.append("")
            lines.append("| formula | result |")
            lines.append("|---|---|")
            for example in spec.examples:
                expr = example.expr.replace("|", "\\|")
                result = example.result.replace("|", "\\|")
                lines.append(f"| `{expr}` | `{result}` |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def errors_markdown() -> str:
    """The error reference (docs/errors.md): every stable code, and the error values."""
    from .errors import CODES
    from .values import ERROR_TYPE_NUMBER

    groups = {"1": "Parse", "2": "Check", "3": "Evaluation", "4": "Limits", "5": "Tools",
              "6": "Escalation", "7": "HTTP service", "9": "Internal"}
    lines = ["# Error reference", "",
             "Generated from `formulane.errors.CODES` by `formulane.reference.errors_markdown()`.",
             "", "Every problem is a `FormulaError` with one of these stable codes, a message, a "
             "span, a hint and machine-applicable fixes. They render the same everywhere (CLI, "
             "API, tool results).", ""]
    current = None
    for code, title in CODES.items():
        group = groups.get(code[1], "Other")
        if group != current:
            lines += ["", f"## {group} (E{code[1]}xx)", "", "| code | meaning |", "|---|---|"]
            current = group
        lines.append(f"| {code} | {title} |")
    lines += ["", "## Error values", "",
              "Error values are data, not exceptions: they flow through formulas, `IFERROR` "
              "and `ISERROR` inspect them, and `ERROR.TYPE` numbers them as Excel does.", "",
              "| value | ERROR.TYPE |", "|---|---|"]
    for value, number in ERROR_TYPE_NUMBER.items():
        lines.append(f"| `{value}` | {number} |")
    return "\n".join(lines).strip() + "\n"


def _all_packs(registry: Registry) -> Registry:
    packs = {s.pack for s in registry._all.values() if s.pack}  # noqa: SLF001 - same package
    return registry.with_packs(*sorted(packs)) if packs else registry


LANGUAGE_BRIEF = """\
Write one formula (an Excel-style expression), not code.
- Values: numbers 12, 1.5, 15%; text "a ""quoted"" word"; TRUE/FALSE; BLANK(); lists [1, 2, 3].
- Names: the variables below; {Name With Spaces}; record fields with a dot (order.total).
- Operators: + - * / ^ (power) & (join text) = <> < <= > >= and or not ?? (use the right side
  when the left is blank). Compare text with = (ignores case) or EXACT.
- Lambdas only inside MAP/FILTER/REDUCE/SORTBY/ANY/ALL...: MAP(xs, x => x * 2).
- LET(name, value, ..., result) names intermediate values.
- Types are checked: no "1" + 1 (use VALUE), blanks must be handled (x ?? 0) when a variable
  is marked "may be blank". Errors are values (#DIV/0!, #N/A...): IFERROR(x, fallback).
"""


def prompt(schema: Any = None, *, max_tokens: int = 4000, registry: Registry | None = None,
           categories: tuple[str, ...] | None = None) -> str:
    """A compact authoring prompt for language models, within ``max_tokens`` (estimated)."""
    reg = registry or default_registry()
    budget = max_tokens * 4
    parts = [LANGUAGE_BRIEF]
    types = normalize_schema(schema)
    if types:
        parts.append("Variables:")
        for name, t in types.items():
            note = " (may be blank)" if t.nullable else ""
            parts.append(f"- {name}: {format_type(t)}{note}")
        parts.append("")
    parts.append("Functions (signature: doc):")
    text = "\n".join(parts) + "\n"
    omitted = 0
    groups = _categories(reg)
    # The application's own functions first: they are what no model has seen before.
    ordered = sorted(groups.items(), key=lambda kv: kv[0] != "host")
    for category, specs in ordered:
        if categories and category not in categories:
            continue
        for spec in specs:
            line = f"- {spec.describe()[0]}: {spec.doc}\n"
            if len(text) + len(line) > budget - 80:
                omitted += 1
                continue
            text += line
    if omitted:
        text += f"({omitted} more functions omitted for length; ask for them by name.)\n"
    return text
