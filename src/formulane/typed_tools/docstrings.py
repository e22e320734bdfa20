"""Docstring reading for tool descriptions: summary text plus per-argument docs.

Contract: `parse_docstring(doc)` never raises; it understands Google style (`Args:`),
Sphinx style (`:param name: text`) and NumPy style (`Parameters` + dashes), returning the
description (everything before the first section) and a name -> text map. Unknown sections
(`Returns:`, `Raises:`...) end the argument section and are not part of the description.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

_GOOGLE_ARGS = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$")
_GOOGLE_OTHER = re.compile(
    r"^(Returns?|Yields?|Raises?|Examples?|Notes?|Warnings?|See Also|References|Attributes|Todo):\s*$"
)
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")
_SPHINX_OTHER = re.compile(r"^:(type|rtype|returns?|raises?|var|ivar|cvar)\b")
_NUMPY_HEADER = re.compile(r"^(Parameters|Returns|Yields|Raises|Examples|Notes|See Also|Attributes)\s*$")
_NUMPY_ITEM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(:.*)?$")


@dataclass(frozen=True, slots=True)
class Docstring:
    description: str = ""
    args: dict[str, str] = field(default_factory=dict)


def _join(lines: list[str]) -> str:
    # Paragraph breaks are kept; wrapped lines inside a paragraph become one line.
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return "\n\n".join(paragraphs)


def parse_docstring(doc: str | None) -> Docstring:
    if not doc:
        return Docstring()
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    args: dict[str, list[str]] = {}
    mode = "description"
    current: str | None = None
    item_indent = 0
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        # NumPy headers are a word followed by a line of dashes.
        if _NUMPY_HEADER.match(stripped) and nxt and set(nxt) == {"-"}:
            mode = "numpy_args" if stripped == "Parameters" else "other"
            current = None
            i += 2
            continue
        if _GOOGLE_ARGS.match(stripped) and indent == 0:
            mode, current = "google_args", None
            i += 1
            continue
        if _GOOGLE_OTHER.match(stripped) and indent == 0:
            mode, current = "other", None
            i += 1
            continue
        sphinx = _SPHINX_PARAM.match(stripped)
        if sphinx:
            mode = "sphinx_args"
            current = sphinx.group(1)
            args[current] = [sphinx.group(2)]
            item_indent = indent
            i += 1
            continue
        if _SPHINX_OTHER.match(stripped):
            mode, current = "other", None
            i += 1
            continue
        if mode == "description":
            description.append(raw)
        elif mode == "google_args":
            item = _GOOGLE_ITEM.match(stripped)
            if item and (current is None or indent <= item_indent):
                current = item.group(1).lstrip("*")
                args[current] = [item.group(3)]
                item_indent = indent
            elif current is not None and stripped:
                args[current].append(stripped)
        elif mode == "numpy_args":
            item = _NUMPY_ITEM.match(stripped)
            if item and indent == 0 and stripped:
                current = item.group(1)
                args[current] = []
            elif current is not None and stripped:
                args[current].append(stripped)
        elif mode == "sphinx_args":
            if current is not None and stripped and indent > item_indent:
                args[current].append(stripped)
            elif stripped:
                mode, current = "other", None
        i += 1
    return Docstring(
        description=_join(description),
        args={name: " ".join(part for part in parts if part).strip() for name, parts in args.items()},
    )
