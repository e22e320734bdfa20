"""Where the formulas are in an editor's document, and how their offsets map to the document's.

A ``.formula`` file is one formula. In a YAML or JSON config, every string value under a key
named like the configured field (``formula`` by default; several names may be given) is a
formula::

    rules:
      - name: discount
        formula: IF(order.total > 100, 0.1, 0)

Each formula becomes a `Region`: its decoded text and, for every character of it, the offset in
the document it came from, so a diagnostic's span, a completion's position or a formatting edit
translate exactly, escapes (``\\"``, ``''``, ``\\u00e9``) and folded or block lines included.
The decoding is checked against the YAML or JSON library's own: a scalar style this module does
not map exactly (a folded ``>`` block with unusual indentation, say) still gets its formula, with
``exact`` False, and its diagnostics are placed on the whole value.

The schema for a document is ``formulane.schema.json`` in the same folder (a JSON object of
names to types, as `formulane.compile` takes), read through `SchemaFiles`, which re-reads a file
when it changes.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..errors import FormulaError
from ..schema import normalize_schema
from ..types import Type

__all__ = ["Region", "SchemaFiles", "SCHEMA_FILE", "YAML_MISSING", "document_kind",
           "format_document", "formula_regions", "replacement", "yaml_available"]

SCHEMA_FILE = "formulane.schema.json"
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.S)
_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                 "t": "\t"}


@dataclass(frozen=True, slots=True)
class Region:
    """One formula in a document. ``offsets[i]`` is the document offset of ``text[i]``, and
    ``offsets[len(text)]`` the offset just past the formula (where an edit appending to it
    goes). ``exact`` is False when the value could be located but not mapped character by
    character (then only ``start``/``end`` are meaningful)."""

    text: str
    offsets: tuple[int, ...]
    start: int  # the value in the document, quotes and block header included
    end: int
    key: str = ""  # a path to the value: rules[0].formula
    style: str = ""  # "file", "json", "plain", "single", "double", "literal", "folded"
    exact: bool = True

    def to_document(self, i: int) -> int:
        """The document offset of formula offset ``i`` (clamped to the formula)."""
        if not self.exact:
            return self.start
        return self.offsets[max(0, min(i, len(self.text)))]

    def from_document(self, offset: int) -> int | None:
        """The formula offset at document offset ``offset``, or None outside the formula."""
        if not self.exact or not self.offsets[0] <= offset <= self.offsets[-1]:
            return None
        lo, hi = 0, len(self.offsets) - 1
        while lo < hi:  # the first formula offset whose document offset is >= offset
            mid = (lo + hi) // 2
            if self.offsets[mid] < offset:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def contains(self, offset: int) -> bool:
        return self.start <= offset <= self.end

    @property
    def rewritable(self) -> bool:
        """Whether a new formula text can replace this one in place (formatting): a whole
        file, a JSON string, a plain or quoted single-line YAML scalar, or a literal block."""
        return self.exact and self.style in ("file", "json", "double", "literal") or (
            self.exact and self.style in ("plain", "single") and "\n" not in self.text)


YAML_MISSING = "formulas in YAML files need PyYAML: pip install 'formulane[lsp]' (or pyyaml)"


def yaml_available() -> bool:
    """Whether YAML configs can be read (PyYAML comes with the lsp extra)."""
    try:
        import yaml  # noqa: F401
    except ImportError:
        return False
    return True


def document_kind(path_or_uri: str) -> str:
    """"formula", "yaml", "json" or "" from a file name."""
    lower = path_or_uri.lower()
    for suffix, kind in ((".formula", "formula"), (".yaml", "yaml"), (".yml", "yaml"),
                         (".json", "json")):
        if lower.endswith(suffix):
            return kind
    return ""


def formula_regions(text: str, kind: str, fields: Iterable[str] = ("formula",)) -> list[Region]:
    """The formulas of a document of ``kind`` ("formula", "yaml" or "json")."""
    names = frozenset(fields)
    if kind == "formula":
        return [Region(text, tuple(range(len(text) + 1)), 0, len(text), "", "file")]
    if kind == "json":
        return _json_regions(text, names)
    if kind == "yaml":
        return _yaml_regions(text, names)
    return []


# ---- JSON ------------------------------------------------------------------------------------

def _json_regions(text: str, names: frozenset[str]) -> list[Region]:
    """String values of keys in ``names``, found by a tolerant scan (an unfinished document
    still has its finished formulas)."""
    tokens = [(m.group(), m.start(), m.end()) for m in _JSON_TOKEN.finditer(text)]
    out: list[Region] = []
    path: list[Any] = []  # the open containers: a dict key or a list index
    containers: list[str] = []
    for i, (tok, start, end) in enumerate(tokens):
        if tok in "{[":
            containers.append(tok)
            path.append(None if tok == "{" else 0)
        elif tok in "}]":
            if containers:
                containers.pop()
                path.pop()
        elif tok == ",":
            if containers and containers[-1] == "[":
                path[-1] = int(path[-1]) + 1  # a list index (the scan keeps keys as str)
        elif tok.startswith('"') and containers and containers[-1] == "{" and \
                i + 1 < len(tokens) and tokens[i + 1][0] == ":":
            key, _ = _json_string(tok, start)
            path[-1] = key
            value = tokens[i + 2] if i + 2 < len(tokens) else None
            if key in names and value is not None and value[0].startswith('"') \
                    and len(value[0]) >= 2:
                decoded, offsets = _json_string(value[0], value[1])
                out.append(Region(decoded, offsets, value[1], value[2], _key_path(path), "json"))
    return out


def _json_string(token: str, start: int) -> tuple[str, tuple[int, ...]]:
    chars: list[str] = []
    offsets: list[int] = []
    i, end = 1, len(token) - 1
    while i < end:
        ch = token[i]
        if ch != "\\":
            chars.append(ch)
            offsets.append(start + i)
            i += 1
            continue
        code = token[i + 1:i + 2]
        if code == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", token[i + 2:i + 6]):
            value = int(token[i + 2:i + 6], 16)
            width = 6
            if 0xD800 <= value < 0xDC00 and token[i + 6:i + 8] == "\\u" and \
                    re.fullmatch(r"[0-9a-fA-F]{4}", token[i + 8:i + 12]):
                low = int(token[i + 8:i + 12], 16)
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                width = 12
            chars.append(chr(value))
            offsets.append(start + i)
            i += width
        else:
            chars.append(_JSON_ESCAPES.get(code, code))
            offsets.append(start + i)
            i += 2
    offsets.append(start + len(token) - 1)  # the closing quote
    return "".join(chars), tuple(offsets)


def _key_path(path: list[Any]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part is not None:
            out += ("." if out else "") + str(part)
    return out


# ---- YAML ------------------------------------------------------------------------------------

def _yaml_regions(text: str, names: frozenset[str]) -> list[Region]:
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with the lsp extra
        return []
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return []
    out: list[Region] = []
    stack: list[tuple[Any, str]] = [(d, "") for d in reversed(documents) if d is not None]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in reversed(node.value):
                name = key.value if isinstance(key, yaml.ScalarNode) else "?"
                sub = f"{path}.{name}" if path else str(name)
                if name in names and isinstance(value, yaml.ScalarNode) and \
                        value.tag == "tag:yaml.org,2002:str":
                    out.append(_yaml_region(text, value, sub))
                else:
                    stack.append((value, sub))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{path}[{i}]") for i, item in reversed(list(
                enumerate(node.value))))
    out.sort(key=lambda r: r.start)
    return out


def _yaml_region(text: str, node: Any, path: str) -> Region:
    start, end = node.start_mark.index, node.end_mark.index
    style = {None: "plain", "'": "single", '"': "double", "|": "literal", ">": "folded"}.get(
        node.style, "plain")
    try:
        if style == "literal":
            chars, offsets = _yaml_block(text, start, end)
        elif style == "folded":
            chars, offsets = _yaml_folded(text, start, end)
        else:
            chars, offsets = _yaml_flow(text, start, end, style)
    except (IndexError, ValueError):
        chars, offsets = [], []
    value = "".join(chars)
    if value != node.value or len(offsets) != len(value) + 1:
        return Region(node.value, (), start, end, path, style, exact=False)
    return Region(value, tuple(offsets), start, end, path, style)


def _yaml_flow(text: str, start: int, end: int, style: str) -> tuple[list[str], list[int]]:
    """A plain or quoted scalar: line breaks fold into spaces (an empty line is a newline)."""
    quoted = style in ("single", "double")
    i, stop = (start + 1, end - 1) if quoted else (start, end)
    chars: list[str] = []
    offsets: list[int] = []
    while i < stop:
        ch = text[i]
        if ch in "\r\n":
            # Trailing blanks before the break do not count; the break folds.
            while chars and chars[-1] in " \t" and offsets[-1] >= _line_start(text, i):
                chars.pop()
                offsets.pop()
            at = i
            breaks = 0
            while i < stop and text[i] in " \t\r\n":
                if text[i] == "\n" or (text[i] == "\r" and text[i + 1:i + 2] != "\n"):
                    breaks += 1
                i += 1
            if breaks == 1:
                chars.append(" ")
                offsets.append(at)
            else:
                for _ in range(breaks - 1):
                    chars.append("\n")
                    offsets.append(at)
            continue
        if style == "single" and ch == "'" and text[i + 1:i + 2] == "'":
            chars.append("'")
            offsets.append(i)
            i += 2
            continue
        if style == "double" and ch == "\\":
            i = _yaml_escape(text, i, chars, offsets)
            continue
        chars.append(ch)
        offsets.append(i)
        i += 1
    offsets.append(stop)
    return chars, offsets


_YAML_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v",
                 "f": "\f", "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
                 "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}
_YAML_HEX = {"x": 2, "u": 4, "U": 8}


def _yaml_escape(text: str, i: int, chars: list[str], offsets: list[int]) -> int:
    code = text[i + 1]
    if code in _YAML_HEX:
        width = _YAML_HEX[code]
        chars.append(chr(int(text[i + 2:i + 2 + width], 16)))
        offsets.append(i)
        return i + 2 + width
    if code in "\r\n":  # an escaped line break: joins the lines without a space
        j = i + 1
        j += 2 if text[j:j + 2] == "\r\n" else 1
        while text[j] in " \t":
            j += 1
        return j
    chars.append(_YAML_ESCAPES[code])
    offsets.append(i)
    return i + 2


def _line_start(text: str, i: int) -> int:
    return max(text.rfind("\n", 0, i), text.rfind("\r", 0, i)) + 1


def _block_lines(text: str, start: int, end: int) -> tuple[str, list[tuple[int, int]], int]:
    """A block scalar's header indicators, its content lines (start, end offsets without the
    break) and their indentation."""
    header_end = text.index("\n", start)
    header = text[start:header_end].split("#")[0].strip()
    lines: list[tuple[int, int]] = []
    at = header_end + 1
    while at < end:
        nl = text.find("\n", at)
        line_end = nl if 0 <= nl < end else end
        lines.append((at, line_end if text[line_end - 1:line_end] != "\r" else line_end - 1))
        at = line_end + 1
    indicator = next((c for c in header[1:] if c.isdigit()), None)
    if indicator is not None:
        raise ValueError("explicit indentation indicators are not mapped")
    indent = min((len(text[a:b]) - len(text[a:b].lstrip(" ")) for a, b in lines
                  if text[a:b].strip()), default=0)
    return header, lines, indent


def _chomp(chars: list[str], offsets: list[int], header: str, end: int) -> None:
    while chars and chars[-1] == "\n" and "+" not in header:
        chars.pop()
        offsets.pop()
    if "-" not in header and "+" not in header and chars:
        chars.append("\n")
        offsets.append(offsets[-1] + 1)
    offsets.append(offsets[-1] + 1 if chars else end)


def _yaml_block(text: str, start: int, end: int) -> tuple[list[str], list[int]]:
    """A literal block (``|``): lines kept, indentation removed."""
    header, lines, indent = _block_lines(text, start, end)
    chars: list[str] = []
    offsets: list[int] = []
    for a, b in lines:
        for k in range(a + indent, b):
            chars.append(text[k])
            offsets.append(k)
        chars.append("\n")
        offsets.append(b)
    _chomp(chars, offsets, header, end)
    return chars, offsets


def _yaml_folded(text: str, start: int, end: int) -> tuple[list[str], list[int]]:
    """A folded block (``>``): lines joined by spaces, empty lines kept as breaks (lines
    indented more than the block keep their breaks)."""
    header, lines, indent = _block_lines(text, start, end)
    chars: list[str] = []
    offsets: list[int] = []
    previous_more = True
    pending = 0
    for a, b in lines:
        content = text[a + indent:b] if b > a + indent else ""
        if not content.strip() and len(text[a:b]) <= indent:
            pending += 1
            continue
        more = content.startswith((" ", "\t"))
        if chars:
            if pending:
                for _ in range(pending + (1 if more or previous_more else 0)):
                    chars.append("\n")
                    offsets.append(a - 1)
            elif more or previous_more:
                chars.append("\n")
                offsets.append(a - 1)
            else:
                chars.append(" ")
                offsets.append(a - 1)
        pending = 0
        for k in range(a + indent, b):
            chars.append(text[k])
            offsets.append(k)
        previous_more = more
    if chars:
        chars.append("\n")
        offsets.append(offsets[-1] + 1)
    chars.extend("\n" * pending)
    offsets.extend([offsets[-1]] * pending if offsets else [])
    while len(chars) > 1 and chars[-1] == "\n" and chars[-2] == "\n" and "+" not in header:
        chars.pop()
        offsets.pop()
    if "-" in header and chars and chars[-1] == "\n":
        chars.pop()
        offsets.pop()
    offsets.append(offsets[-1] + 1 if chars else end)
    return chars, offsets


# ---- rewriting a formula in place ---------------------------------------------------------------

def replacement(text: str, kind: str, region: Region, new: str,
                fields: Iterable[str] = ("formula",)) -> tuple[int, int, str] | None:
    """An edit ``(start, end, replacement)`` of the document that makes ``region``'s formula
    read ``new``, or None when it cannot be written in place. In YAML the value keeps its
    style where it can, becomes a ``|-`` block when ``new`` spans lines, and falls back to a
    double-quoted string; every candidate is decoded again and must give ``new``."""
    if region.style == "file":
        return 0, len(text), new
    if region.style == "json":
        return region.start, region.end, json.dumps(new, ensure_ascii=False)
    if not region.exact or kind != "yaml":
        return None
    line_start = text.rfind("\n", 0, region.start) + 1
    line = text[line_start:region.start]
    key_indent = len(line) - len(line.lstrip(" -"))
    candidates: list[str] = []
    if "\n" in new:
        pad = " " * (key_indent + 2)
        candidates.append("|-\n" + "\n".join(pad + part if part else "" for part in
                                             new.split("\n")))
    elif region.style == "plain":
        candidates.append(new)
    if region.style == "single" and "\n" not in new:
        candidates.append("'" + new.replace("'", "''") + "'")
    candidates.append(json.dumps(new, ensure_ascii=False))
    end = region.end
    if region.style in ("literal", "folded"):
        # A block ends after its last line break; keep the break that ends the value.
        while end > region.start and text[end - 1] in "\r\n":
            end -= 1
    for candidate in candidates:
        edited = text[:region.start] + candidate + text[end:]
        again = [r for r in formula_regions(edited, "yaml", fields) if r.key == region.key]
        if again and again[0].text == new:
            return region.start, end, candidate
    return None


def format_document(text: str, kind: str, width: int = 80,
                    fields: Iterable[str] = ("formula",)) -> tuple[str, list[tuple[Region, Any]]]:
    """Every formula of a document formatted in place: the new text, and the formulas left
    as they were with the reason (a ParseError, or a str when it cannot be rewritten)."""
    from .formatter import format as format_formula

    names = tuple(fields)
    problems: list[tuple[Region, Any]] = []
    edits: list[tuple[int, int, str]] = []
    for region in formula_regions(text, kind, names):
        try:
            formatted = format_formula(region.text, width)
        except FormulaError as exc:
            problems.append((region, exc))
            continue
        if region.style == "file" and region.text.endswith("\n"):
            formatted += "\n"
        if formatted == region.text:
            continue
        edit = replacement(text, kind, region, formatted, names)
        if edit is None:
            problems.append((region, "cannot rewrite this value in place"))
        else:
            edits.append(edit)
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text, problems


# ---- schema files ----------------------------------------------------------------------------

class SchemaFiles:
    """``formulane.schema.json`` next to a document, re-read when its modification time
    changes. `schema_for` returns ``(schema, problem)``: an empty schema and a message when the
    file is missing (no message) or invalid."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[float, dict[str, Type], str]] = {}

    def schema_for(self, document_path: str) -> tuple[dict[str, Type], str]:
        folder = os.path.dirname(os.path.abspath(document_path))
        path = os.path.join(folder, SCHEMA_FILE)
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            return {}, ""
        cached = self._cache.get(path)
        if cached is not None and cached[0] == mtime:
            return cached[1], cached[2]
        schema, problem = _read_schema(Path(path))
        self._cache[path] = (mtime, schema, problem)
        return schema, problem


def _read_schema(path: Path) -> tuple[dict[str, Type], str]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        return {}, f"{SCHEMA_FILE}: cannot read it ({exc})"
    if not isinstance(data, dict):
        return {}, f"{SCHEMA_FILE}: expected a JSON object of names to types"
    try:
        return normalize_schema(data), ""
    except FormulaError as exc:
        return {}, f"{SCHEMA_FILE}: {exc.message}"
