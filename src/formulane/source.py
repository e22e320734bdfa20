"""Source text and spans.

A `Span` is a half-open range of character offsets into one source string. Line and column
numbers are computed late, only when a diagnostic is rendered, so every phase can carry spans
cheaply and no phase needs to know about lines.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """Half-open character range ``[start, end)`` in a source string."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid span {self.start}..{self.end}")

    def cover(self, other: "Span") -> "Span":
        """The smallest span containing both."""
        return Span(min(self.start, other.start), max(self.end, other.end))

    def to_dict(self, source: str | None = None) -> dict[str, int]:
        out = {"start": self.start, "end": self.end}
        if source is not None:
            line, column = line_col(source, self.start)
            out["line"] = line
            out["column"] = column
        return out


def line_col(source: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` (columns count code points)."""
    offset = max(0, min(offset, len(source)))
    line = source.count("\n", 0, offset) + 1
    last_newline = source.rfind("\n", 0, offset)
    return line, offset - last_newline


def line_text(source: str, line: int) -> str:
    """The text of 1-based ``line`` without its newline."""
    lines = source.split("\n")
    if 1 <= line <= len(lines):
        return lines[line - 1]
    return ""


_ASCII_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}


def ascii_upper(name: str) -> str:
    """A name upper-cased in ASCII only. Function names are matched this way: Python's
    ``str.upper`` maps look-alikes onto ASCII ('ſum' -> 'SUM', 'ıf' -> 'IF', 'ﬁlter' ->
    'FILTER'), which would let a formula spell a function with letters a reviewer reads as
    something else."""
    return name.upper() if name.isascii() else name.translate(_ASCII_UPPER)


def lookalike_upper(name: str) -> str:
    """What a non-ASCII name would have matched under Unicode case folding (for hints only)."""
    import unicodedata

    return unicodedata.normalize("NFKC", name).upper()

