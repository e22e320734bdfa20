"""Searching text without blow-ups: literal scans, Excel wildcards, delimiters and RE2.

Contract: every search here is linear in the text for a given pattern, and the work of any
RE2 run (UTF-8 bytes of the text times the compiled program's size, which bounds RE2's
automaton) is checked against `REGEX_WORK_LIMIT` *before* it runs, raising `LimitExceeded`
(RE2 never backtracks, but its fallback NFA costs pattern size per byte). Literal searches use
``str.find``; case-insensitive ones compare texts lowered one character to one character, so
positions in the lowered text are positions in the original. Invalid patterns raise
``XLError(VALUE)`` carrying RE2's message.
"""

from __future__ import annotations

import math

from decimal import Decimal
from functools import lru_cache
from typing import Any, Iterator, Sequence

import re2  # type: ignore[import-untyped]

from ..errors import LimitExceeded
from ..values import NA, VALUE, XLError

#: Bytes of text times RE2 program instructions allowed for one regex run. The slowest RE2 path
#: measured about 18 ns per unit, so this bounds one call to roughly 0.2 s; common patterns
#: (under 300 instructions) always fit on a maximal 32,767-character text.
REGEX_WORK_LIMIT = 10_000_000
#: RE2's memory budget per compiled pattern (program and DFA cache); larger patterns fail to
#: compile with "pattern too large", which is #VALUE!.
REGEX_MAX_MEM = 2 << 20


def lower1(text: str) -> str:
    """Lower case, one character to one character (so positions survive)."""
    if text.isascii():
        return text.lower()
    out = []
    for ch in text:
        low = ch.lower()
        out.append(low if len(low) == 1 else ch)
    return "".join(out)


def options(case_sensitive: bool = True, dot_nl: bool = False, latin1: bool = False) -> re2.Options:
    opts = re2.Options()
    opts.case_sensitive = case_sensitive
    opts.dot_nl = dot_nl
    opts.log_errors = False
    opts.max_mem = REGEX_MAX_MEM
    if latin1:
        opts.encoding = re2.Options.Encoding.LATIN1
    return opts


@lru_cache(maxsize=32)
def _compile_cached(pattern: str | bytes, case_sensitive: bool, dot_nl: bool,
                    latin1: bool) -> Any:
    return _REGEXP(pattern, options(case_sensitive, dot_nl, latin1))


# re2.compile keeps 128 patterns of up to max_mem each in its own cache; ours keeps 32 short
# ones and compiles long ones afresh, so cached automata stay within 32 x REGEX_MAX_MEM.
_REGEXP = getattr(re2, "_Regexp", None) or (lambda pattern, opts: re2.compile(pattern, opts))


def compile_regex(pattern: str | bytes, opts: re2.Options, fn: str) -> Any:
    try:
        key = (opts.case_sensitive, opts.dot_nl, opts.encoding == re2.Options.Encoding.LATIN1)
        if len(pattern) <= 1000:
            return _compile_cached(pattern, *key)
        return _REGEXP(pattern, opts)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise XLError(VALUE, f"{fn}: invalid regular expression: {detail}") from None


def check_work(regex: Any, nbytes: int, fn: str) -> None:
    """Refuse a run whose worst case (bytes x program size) is over the budget."""
    size = max(regex.programsize, regex.reverseprogramsize)
    if nbytes * size > REGEX_WORK_LIMIT:
        raise LimitExceeded(
            f"{fn}: a pattern of {size:,} instructions on a text of {nbytes:,} bytes exceeds "
            f"the regular-expression budget of {REGEX_WORK_LIMIT:,} units",
            code="E405",
            hint="use a smaller pattern or a shorter text",
        )


_UNANCHORED = re2._Anchor.UNANCHORED
_NULL = (-1, -1)


class Regex:
    """An RE2 pattern bound to one subject text, matched on its UTF-8 bytes (the wrapper is
    several times faster on bytes than on str). All-ASCII pattern and text run in Latin-1
    mode, where ``.`` is one instruction instead of seven. Spans are byte offsets; slices
    taken at match boundaries are whole characters."""

    __slots__ = ("regex", "subject", "ascii", "_raw")

    def __init__(self, pattern: str, text: str, fn: str, *, case_sensitive: bool = True,
                 dot_nl: bool = False) -> None:
        self.ascii = pattern.isascii() and text.isascii()
        if self.ascii:
            self.regex = compile_regex(pattern.encode("ascii"),
                                       options(case_sensitive, dot_nl, latin1=True), fn)
            self.subject = text.encode("ascii")
        else:
            self.regex = compile_regex(pattern, options(case_sensitive, dot_nl), fn)
            self.subject = text.encode("utf-8")
        check_work(self.regex, len(self.subject), fn)
        self._raw = getattr(self.regex, "_regexp", None)

    @property
    def groups(self) -> int:
        return int(self.regex.groups)

    @property
    def groupindex(self) -> dict[str, int]:
        # A bytes pattern (the Latin-1 path) names its groups in bytes.
        return {(k.decode("latin-1") if isinstance(k, bytes) else k): v
                for k, v in self.regex.groupindex.items()}

    def _match(self, pos: int) -> Sequence[tuple[int, int]] | None:
        if self._raw is not None:  # one C call, no per-match wrapper objects
            spans = self._raw.Match(_UNANCHORED, self.subject, pos, len(self.subject))
            return None if spans[0] == _NULL else spans
        m = self.regex.search(self.subject, pos)
        return None if m is None else [m.span(i) for i in range(self.groups + 1)]

    def search(self, pos: int = 0) -> Sequence[tuple[int, int]] | None:
        return self._match(pos)

    def spans(self) -> Iterator[Sequence[tuple[int, int]]]:
        """Successive non-overlapping matches (an empty match may follow a non-empty one,
        as in Python and PCRE2); after an empty match the scan moves one character on."""
        b = self.subject
        end = len(b)
        pos = 0
        while pos <= end:
            spans = self._match(pos)
            if spans is None:
                return
            yield spans
            start, stop = spans[0]
            if stop > start:
                pos = stop
            elif stop >= end:
                return
            else:
                step = 1
                while stop + step < end and (b[stop + step] & 0xC0) == 0x80:
                    step += 1
                pos = stop + step

    def text(self, span: tuple[int, int]) -> str:
        if span == _NULL:
            return ""
        return self.subject[span[0]:span[1]].decode("utf-8")

    def chars(self, offset: int) -> int:
        """The character index of a byte offset."""
        return offset if self.ascii else len(self.subject[:offset].decode("utf-8"))


# --------------------------------------------------------------------------------- wildcards


def wildcard_segments(pattern: str) -> tuple[bool, list[list[str | None]]]:
    """Split an Excel wildcard pattern at ``*``: (starts with ``*``, segments), each segment a
    list of characters with ``None`` for ``?``. ``~`` escapes the next character (``~*`` is a
    star, ``~d`` a d) and a final ``~`` stands for nothing, as Excel reads them
    (``SEARCH("~d", "My dear")`` is 4, ``SEARCH("~", "Hi ~Bang!")`` is 1)."""
    segments: list[list[str | None]] = [[]]
    leading = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "~":
            if i + 1 < n:
                segments[-1].append(pattern[i + 1])
            i += 2
            continue
        if c == "*":
            if i == 0:
                leading = True
            if segments[-1]:
                segments.append([])
        elif c == "?":
            segments[-1].append(None)
        else:
            segments[-1].append(c)
        i += 1
    return leading, [s for s in segments if s]


def wildcard_find(pattern: str, text: str, start: int, fn: str = "SEARCH") -> int:
    """Index of the leftmost case-insensitive wildcard match at or after ``start``, or -1."""
    leading, segments = wildcard_segments(lower1(pattern))
    text = lower1(text)
    if not segments:
        return start
    if all(None not in seg for seg in segments):
        literal = ["".join(ch for ch in seg if ch is not None) for seg in segments]
        return _literal_segments(leading, literal, text, start)
    # With ? wildcards: RE2 on the lowered text, . for ?, .*? between segments.
    parts = ["".join("." if ch is None else re2.escape(ch) for ch in seg) for seg in segments]
    regex = Regex((".*?" if leading else "") + ".*?".join(parts), text[start:], fn, dot_nl=True)
    spans = regex.search()
    if spans is None:
        return -1
    return start if leading else start + regex.chars(spans[0][0])


def _literal_segments(leading: bool, segments: list[str], text: str, start: int) -> int:
    # Greedy is exact here: if the later segments do not fit after the earliest occurrence of
    # the first one, they fit after no later occurrence either.
    first = text.find(segments[0], start)
    if first < 0:
        return -1
    pos = first + len(segments[0])
    for seg in segments[1:]:
        at = text.find(seg, pos)
        if at < 0:
            return -1
        pos = at + len(seg)
    return start if leading else first


# -------------------------------------------------------------------------------- delimiters


def delimiter_spans(text: str, delimiters: Sequence[str],
                    ignore_case: bool) -> Iterator[tuple[int, int]]:
    """Yield (start, end) of successive non-overlapping delimiters, left to right; at one
    position the longest delimiter wins. Non-empty delimiters only."""
    if ignore_case:
        text = lower1(text)
        delimiters = [lower1(d) for d in delimiters]
    delims = sorted(set(delimiters), key=len, reverse=True)
    if len(delims) == 1:
        d = delims[0]
        at = text.find(d)
        while at >= 0:
            yield at, at + len(d)
            at = text.find(d, at + len(d))
        return
    nxt = [text.find(d) for d in delims]  # next occurrence of each, at or after pos
    pos = 0
    while True:
        best = -1
        for k, d in enumerate(delims):
            if 0 <= nxt[k] < pos:
                nxt[k] = text.find(d, pos)
            if nxt[k] >= 0 and (best < 0 or nxt[k] < nxt[best]):
                best = k
        if best < 0:
            return
        start = nxt[best]
        pos = start + len(delims[best])
        yield start, pos


def find_delimiter(text: str, delims: list[str], instance: int, ignore_case: bool,
                    match_end: bool) -> tuple[int, int] | None:
    """(start, end) of the instance-th delimiter (negative counts from the end), or None."""
    if any(d == "" for d in delims):
        # An empty delimiter matches at once: at the start going forward, the end going back.
        return (0, 0) if instance > 0 else (len(text), len(text))
    if instance > 0:
        seen = 0
        for span in delimiter_spans(text, delims, ignore_case):
            seen += 1
            if seen == instance:
                return span
        if match_end and seen == instance - 1:
            return len(text), len(text)
        return None
    # From the end: scan the reversed text for the reversed delimiters.
    seen = 0
    n = len(text)
    for start, end in delimiter_spans(text[::-1], [d[::-1] for d in delims], ignore_case):
        seen += 1
        if seen == -instance:
            return n - end, n - start
    if match_end and seen == -instance - 1:
        return 0, 0
    return None


def flag(x: Decimal | int, fn: str, what: str = "match_mode") -> bool:
    """0 or 1 (Excel flags); anything else is #VALUE!. True means ignore case."""
    if x == 0:
        return False
    if x == 1:
        return True
    raise XLError(VALUE, f"{fn}: {what} must be 0 or 1")


def delimiters(delimiter: Any) -> list[str]:
    items = list(delimiter) if type(delimiter) is tuple else [delimiter]
    return [d for d in items if d is not None]


def before_after(fn: str, text: str, delimiter: Any, instance_num: Decimal | int,
                  match_mode: Decimal | int, match_end: Decimal | int,
                  if_not_found: str | None) -> tuple[int, int] | str:
    delims = delimiters(delimiter)
    if not delims:
        raise XLError(VALUE, f"{fn}: no delimiter given")
    instance = math.floor(instance_num)  # Excel takes INT: -1.2 is the second from the end
    ignore_case = flag(match_mode, fn)
    end_flag = flag(match_end, fn, "match_end")
    if instance == 0 or (abs(instance) > len(text) and text):
        raise XLError(VALUE, f"{fn}: instance_num must be non-zero and at most the text's length")
    span = find_delimiter(text, delims, instance, ignore_case, end_flag)
    if span is None:
        if if_not_found is not None:
            return if_not_found
        raise XLError(NA, f"{fn}: the delimiter was not found")
    return span


# ------------------------------------------------------------------------ replacement syntax


def replacement_template(replacement: str, regex: Any, fn: str) -> list[str | int]:
    """Excel/PCRE2 replacement syntax: ``$n``, ``${n}``, ``${name}``, ``$$``; the rest is
    literal. Returns literal pieces and group numbers."""
    parts: list[str | int] = []
    buf: list[str] = []
    names = regex.groupindex
    i, n = 0, len(replacement)
    while i < n:
        c = replacement[i]
        if c == "$" and i + 1 < n:
            nxt = replacement[i + 1]
            if nxt == "$":
                buf.append("$")
                i += 2
                continue
            ref: str | None = None
            i_next = i
            if "0" <= nxt <= "9":
                j = i + 1
                while j < n and "0" <= replacement[j] <= "9":
                    j += 1
                ref, i_next = replacement[i + 1:j], j
            elif nxt == "{":
                end = replacement.find("}", i + 2)
                if end > 0:
                    ref, i_next = replacement[i + 2:end], end + 1
            if ref is not None:
                if ref.isascii() and ref.isdigit():
                    group = int(ref)
                elif ref in names:
                    group = names[ref]
                else:
                    raise XLError(VALUE, f"{fn}: the pattern has no group named {ref!r}")
                if group > regex.groups:
                    raise XLError(VALUE, f"{fn}: the pattern has no group {group}")
                if buf:
                    parts.append("".join(buf))
                    buf.clear()
                parts.append(group)
                i = i_next
                continue
        buf.append(c)
        i += 1
    if buf:
        parts.append("".join(buf))
    return parts


__all__ = [
    "REGEX_MAX_MEM", "REGEX_WORK_LIMIT", "Regex", "before_after", "check_work", "compile_regex",
    "delimiter_spans", "delimiters", "find_delimiter", "flag", "lower1", "options",
    "replacement_template", "wildcard_find", "wildcard_segments",
]
