"""Excel comparison machinery shared by the list, lookup and statistics functions.

Contract: every helper takes engine values (see `formulane.values`) and never raises anything
but `XLError`. Text compares case-insensitively (``str.lower`` on both sides, code-point order,
as the engine's ``=`` does). Three pieces live here:

* `order_key` / `eq_key`: a total order and a hashable equality key over engine values, in
  Excel's sort order (numbers, then text, then logicals; blanks handled by the callers);
* `Wildcard`: Excel's ``?``, ``*`` and ``~`` patterns, matched by a bit-parallel NFA
  simulation, so a 32,767-character pattern against a 32,767-character text stays linear in
  the text (no backtracking, no regex engine that may fall back to a slow path);
* `Criterion`: COUNTIF/SUMIF criteria (``">10"``, ``"<>x"``, ``"=5"``, ``"a*"``, ``""``),
  parsed once and cached. As in Excel, an error value inside a range matches only an error
  criterion of its own code (``"#N/A"``, ``"=#DIV/0!"``, or an error value given as the
  criterion), and every ``"<>..."`` criterion but its own code; an error criterion matches no
  other value (not even the text ``"#N/A"``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import operator
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, Callable, Literal, Mapping, Sequence

from ..runtime import active, poll
from .spec import MATCHER_PAIR, MATCHER_PER_CHAR
from ..values import CONTEXT, ERROR_CODES, NUM, VALUE, ErrorValue, XLError

_EPOCH_DATE = dt.date(1899, 12, 30)  # Excel's 1900 date system, day 0 (serials from 1900-03-01)
_EPOCH_DATETIME = dt.datetime(1899, 12, 30)
_US_PER_DAY = Decimal(86_400_000_000)

# Ranks in Excel's sort order. Dates, datetimes and durations are numbers in Excel; here they are
# their own types, ranked right after numbers so an untyped (Any) list still sorts
# deterministically.
RANK_NUMBER, RANK_DATE, RANK_DATETIME, RANK_DURATION, RANK_TEXT, RANK_BOOL, RANK_BLANK = range(7)


def is_number(v: Any) -> bool:
    t = type(v)
    return t is int or t is Decimal


def rank(v: Any) -> int:
    """The Excel sort rank of a value; raises #VALUE! for lists and records (not orderable)."""
    t = type(v)
    if t is int or t is Decimal:
        return RANK_NUMBER
    if t is str:
        return RANK_TEXT
    if t is bool:
        return RANK_BOOL
    if v is None:
        return RANK_BLANK
    if t is dt.datetime:
        return RANK_DATETIME
    if t is dt.date:
        return RANK_DATE
    if t is dt.timedelta:
        return RANK_DURATION
    if isinstance(v, dt.datetime):
        return RANK_DATETIME
    if isinstance(v, dt.date):
        return RANK_DATE
    raise XLError(VALUE, "lists and records cannot be ordered")


def order_key(v: Any) -> tuple[int, Any]:
    """A key ordering values as Excel sorts them: numbers < (dates...) < text < logicals < blank.

    Text compares case-insensitively; a blank sorts last."""
    r = rank(v)
    if r == RANK_TEXT:
        return (r, v.lower())
    if r == RANK_BLANK:
        return (r, 0)
    if r == RANK_DATETIME and v.tzinfo is None:  # never from the engine; keeps keys comparable
        return (r, v.replace(tzinfo=dt.timezone.utc))
    return (r, v)


def eq_key(v: Any) -> Any:
    """A hashable key equal exactly when the engine's ``=`` would say equal (text ignoring case,
    1 = 1.0, TRUE distinct from 1). Lists and records compare element-wise."""
    t = type(v)
    if t is int or t is Decimal:
        return (RANK_NUMBER, v)
    if t is str:
        return (RANK_TEXT, v.lower())
    if t is bool:
        return (RANK_BOOL, v)
    if v is None:
        return (RANK_BLANK,)
    if t is tuple:
        return ("list", tuple(eq_key(x) for x in v))
    if isinstance(v, Mapping):
        return ("record", tuple(sorted((k, eq_key(x)) for k, x in v.items())))
    return (rank(v), v)


_PLAIN_ORDER = (frozenset((int, Decimal)), frozenset((int,)), frozenset((Decimal,)),
                frozenset((bool,)), frozenset((dt.date,)), frozenset((dt.datetime,)),
                frozenset((dt.timedelta,)))
_TEXT_ONLY = frozenset((str,))


def _sort_key(kinds: set[type]) -> Callable[[Any], Any] | None | Literal[False]:
    """The cheapest correct key for items of these kinds: None (the items themselves), a
    function, or False when only the general `order_key` will do."""
    if kinds in _PLAIN_ORDER:
        return None
    if kinds == _TEXT_ONLY:
        return str.lower
    return False


def sort_values(values: Sequence[Any], descending: bool) -> list[Any]:
    """Values in Excel order (stable; blanks last in either direction). Homogeneous lists,
    the common case, sort on the values themselves rather than on tuple keys."""
    present = [v for v in values if v is not None]
    blanks = [None] * (len(values) - len(present))
    key = _sort_key(set(map(type, present)))
    present.sort(key=order_key if key is False else key, reverse=descending)
    return present + blanks


def sort_positions(positions: list[int], keys: Sequence[Any], descending: bool) -> list[int]:
    """Positions ordered by their keys (stable; blank keys last in either direction)."""
    present = [i for i in positions if keys[i] is not None]
    blanks = [i for i in positions if keys[i] is None]
    key = _sort_key({type(keys[i]) for i in present})
    if key is None:
        present.sort(key=keys.__getitem__, reverse=descending)
    else:
        by = order_key if key is False else key
        cache = {i: by(keys[i]) for i in present}
        present.sort(key=cache.__getitem__, reverse=descending)
    return present + blanks


# ---------------------------------------------------------------------------------------------
# Numbers hidden in text and dates (COUNTIF compares "5" and 5, and dates by serial number)

_NUMBER_START = frozenset("0123456789+-.")


def parse_number(text: str) -> Decimal | None:
    """Excel-style number text (``" 12.5 "``, ``"-1e3"``, ``"50%"``) as a Decimal, else None.

    A first-character check rejects most non-numbers at once; the decimal module's own parser
    does the rest (it would also take ``"1_000"``, non-ASCII digits, ``"Infinity"`` and
    ``"NaN"``, which are refused before or after). Longer than 400 characters is never a
    usable number."""
    s = text.strip(" ")
    if not s or len(s) > 400 or s[0] not in _NUMBER_START or not s.isascii() or "_" in s:
        return None
    percent = s[-1] == "%"
    if percent:
        s = s[:-1]
    try:
        value = Decimal(s)
        if not value.is_finite():
            return None
        value = CONTEXT.plus(value)
        if percent:
            value = CONTEXT.divide(value, 100)
    except (decimal.InvalidOperation, decimal.Overflow, ValueError):
        return None
    return value


def serial(v: Any) -> Decimal | int | None:
    """The Excel serial number of a date, datetime (its own wall clock) or duration (days)."""
    t = type(v)
    if t is dt.date:
        days: int = (v - _EPOCH_DATE).days
        return days
    if isinstance(v, dt.datetime):
        delta = v.replace(tzinfo=None) - _EPOCH_DATETIME
    elif isinstance(v, dt.timedelta):
        delta = v
    elif isinstance(v, dt.date):
        return (v - _EPOCH_DATE).days
    else:
        return None
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return CONTEXT.divide(Decimal(micros), _US_PER_DAY)


def _parse_iso(text: str) -> Decimal | int | None:
    """A date operand as a serial number, else None: ISO dates and datetimes
    (``"2024-01-31"``), and whatever DATEVALUE reads (``"5/13/2011"``, ``"13 May 2011"``), as
    Excel reads a criteria date in the locale's format. A day/month order that two readings fit
    (``"5/3/2011"``) stays text, as DATEVALUE refuses it."""
    s = text.strip(" ")
    if len(s) > 40:
        return None
    if len(s) >= 10 and s[4:5] == "-":
        try:
            if len(s) == 10:
                return serial(dt.date.fromisoformat(s))
            return serial(dt.datetime.fromisoformat(s))
        except ValueError:
            pass
    if not any(c.isdigit() for c in s):
        return None  # every date DATEVALUE reads has a day or a year
    from ._calendar import parse_date_text

    try:
        return serial(parse_date_text(s))
    except XLError:
        return None


def serial_of_text(text: str) -> Decimal | int | None:
    """A date text (ISO, or as DATEVALUE reads it) as its Excel serial number, else None."""
    return _parse_iso(text)


def numeric(v: Any) -> Decimal | int | None:
    """A value seen as a number for criteria: numbers, dates/durations by serial, else None."""
    if is_number(v):
        number: Decimal | int = v
        return number
    return serial(v)


# ---------------------------------------------------------------------------------------------
# Wildcards


class Wildcard:
    """An Excel wildcard pattern (``?`` one character, ``*`` any run, ``~`` escapes), matched
    against a whole text, ignoring case.

    Matching simulates the pattern's NFA with one big integer as the set of live positions (the
    classic Shift-And technique extended with ``*`` self-loops): each text character costs a few
    big-integer operations over the pattern's length, whatever the pattern. Common shapes
    (``abc``, ``abc*``, ``*abc``, ``*abc*``) take the str fast paths."""

    __slots__ = ("pattern", "_fast", "_literal", "_masks", "_any", "_stars", "_accept")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        atoms: list[str | None] = []  # a character, "?" as None, "*" as the sentinel "*"
        is_star: list[bool] = []
        i, n = 0, len(pattern)
        low = pattern.lower()
        while i < n:
            ch = low[i]
            if ch == "~" and i + 1 < n and low[i + 1] in "*?~":
                atoms.append(low[i + 1])
                is_star.append(False)
                i += 2
                continue
            if ch == "*":
                if not (is_star and is_star[-1]):  # collapse runs of stars
                    atoms.append(None)
                    is_star.append(True)
            elif ch == "?":
                atoms.append(None)
                is_star.append(False)
            else:
                atoms.append(ch)
                is_star.append(False)
            i += 1
        self._fast: str | None = None
        self._literal = ""
        literal_atoms = [a for a, s in zip(atoms, is_star) if not s]
        has_any = any(a is None for a in literal_atoms)
        if not has_any:
            text = "".join(a for a in literal_atoms if a is not None)
            shape = tuple(is_star)
            stars = sum(shape)
            if stars == 0:
                self._fast, self._literal = "eq", text
            elif stars == 1 and shape[-1]:
                self._fast, self._literal = "prefix", text
            elif stars == 1 and shape[0]:
                self._fast, self._literal = "suffix", text
            elif stars == 2 and shape[0] and shape[-1] and len(shape) > 1:
                self._fast, self._literal = "contains", text
        # One bitmap per distinct character, built from its positions in linear time (OR-ing
        # bits into a growing int was quadratic: 160 ms for 32,000 atoms); they keep
        # distinct x atoms / 8 bytes, charged to a metered run before they are built.
        positions: dict[str | None, list[int]] = {}
        stars_at: list[int] = []
        for pos, (atom, star) in enumerate(zip(atoms, is_star)):
            if star:
                stars_at.append(pos)
            else:
                positions.setdefault(atom, []).append(pos)
        distinct = len(positions)
        ctx = active()
        if ctx is not None:
            ctx.charge(16 * len(atoms) + distinct * len(atoms) // 256)
            ctx.check_memory(distinct * (len(atoms) // 8 + 32))
        width = len(atoms) // 8 + 1

        def bitmap(where: list[int]) -> int:
            buf = bytearray(width)
            for p in where:
                buf[p >> 3] |= 1 << (p & 7)
            return int.from_bytes(buf, "little")

        any_mask = bitmap(positions.pop(None, []))
        stars_mask = bitmap(stars_at)
        masks = {c: bitmap(where) for c, where in positions.items() if c is not None}
        self._masks = {c: m | any_mask for c, m in masks.items()}
        self._any = any_mask
        self._stars = stars_mask
        self._accept = 1 << len(atoms)

    def matches(self, text: str) -> bool:
        low = text.lower()
        fast = self._fast
        if fast is not None:
            lit = self._literal
            if fast == "eq":
                return low == lit
            if fast == "prefix":
                return low.startswith(lit)
            if fast == "suffix":
                return low.endswith(lit)
            return lit in low
        stars = self._stars
        masks = self._masks
        any_mask = self._any
        state = 1 | ((1 & stars) << 1)
        if active() is not None:
            return self._matches_polled(low)
        for ch in low:
            state = ((state & masks.get(ch, any_mask)) << 1) | (state & stars)
            if not state:
                return False
            state |= (state & stars) << 1
        return bool(state & self._accept)

    def _matches_polled(self, low: str) -> bool:
        """The same loop in a metered run: the meter is charged its measured price (and the
        deadline checked) before each `_POLL_CHARS` characters."""
        stars, masks, any_mask = self._stars, self._masks, self._any
        per_char = MATCHER_PER_CHAR + self._accept.bit_length() // MATCHER_PAIR
        state = 1 | ((1 & stars) << 1)
        for start in range(0, len(low), _POLL_CHARS):
            chunk = low[start:start + _POLL_CHARS]
            poll(len(chunk) * per_char)
            for ch in chunk:
                state = ((state & masks.get(ch, any_mask)) << 1) | (state & stars)
                if not state:
                    return False
                state |= (state & stars) << 1
        return bool(state & self._accept)


#: How many text characters a wildcard match runs between two polls of a metered run's meter.
_POLL_CHARS = 1024


@lru_cache(maxsize=512)
def wildcard(pattern: str) -> Wildcard:
    return Wildcard(pattern)


def has_wildcard_chars(text: str) -> bool:
    return "*" in text or "?" in text or "~" in text


# ---------------------------------------------------------------------------------------------
# Criteria

_OPERATORS = ("<=", ">=", "<>", "<", ">", "=")


@dataclass(frozen=True, slots=True)
class Criterion:
    """One parsed criterion. ``kind`` is what the operand is: "empty", "number" (numbers, and
    ISO dates by serial), "bool", "text", "error" (an error code, in ``text``), or "value" (a
    non-text criterion value: equality)."""

    op: str  # "=", "<>", "<", "<=", ">", ">="; "" when the criterion had no operator
    kind: str
    text: str = ""
    number: Decimal | int | None = None
    flag: bool = False
    value: Any = None
    pattern: Wildcard | None = None

    def __call__(self, v: Any) -> bool:
        op = self.op
        if type(v) is ErrorValue or self.kind == "error":
            return self._error(v)
        if op == "<>":
            return not self._equal(v, explicit=True)
        if op in ("", "="):
            return self._equal(v, explicit=op == "=")
        return self._order(v)

    def select(self, values: Sequence[Any]) -> list[int]:
        """Positions of the matching items; plain lists of numbers or of text take a fast
        path, anything else the general rule."""
        op, kind = self.op, self.kind
        kinds = set(map(type, values))
        if kind == "number" and kinds <= _NUMBER_KINDS:
            n = self.number
            if op in ("", "="):
                return [i for i, v in enumerate(values) if v == n]
            if op == "<>":
                return [i for i, v in enumerate(values) if v != n]
            compare = _ORDER_OPS[op]
            return [i for i, v in enumerate(values) if compare(v, n)]
        if kind == "text" and kinds == _TEXT_ONLY and self.pattern is not None:
            matches = self.pattern.matches
            if op == "<>":
                return [i for i, v in enumerate(values) if not matches(v)]
            return [i for i, v in enumerate(values) if matches(v)]
        return [i for i, v in enumerate(values) if self(v)]

    def _error(self, v: Any) -> bool:
        """An error value in the range, or an error criterion: equality of error codes only;
        ``<>`` is its negation, an ordering never matches."""
        same = type(v) is ErrorValue and self.kind == "error" and v.code == self.text
        if self.op == "<>":
            return not same
        return same if self.op in ("", "=") else False

    def _equal(self, v: Any, explicit: bool) -> bool:
        kind = self.kind
        if kind == "empty":
            # "" matches blanks and empty text; "=" only true blanks; "<>" anything non-blank.
            return v is None or (not explicit and v == "")
        if v is None:
            return False
        if kind == "value":
            same: bool = eq_key(v) == eq_key(self.value)
            return same
        tv = type(v)
        if tv is str:
            if self.pattern is not None and self.pattern.matches(v):
                return True
            if kind == "number":  # numeric text equals the number (Excel's COUNTIF coercion)
                n: Decimal | int | None = parse_number(v)
                return n is not None and n == self.number
            return False
        if kind == "number":
            n = numeric(v)
            return n is not None and n == self.number
        if kind == "bool":
            return tv is bool and v == self.flag
        return False

    def _order(self, v: Any) -> bool:
        kind = self.kind
        if v is None or kind == "empty":
            # Excel: "<", "<=", ">", ">=" with no operand match nothing (not even empty text)
            return False
        if kind == "number":
            if type(v) is bool:
                return False
            n = numeric(v)
            if n is None:
                return False
            return _compare(n, self.number, self.op)
        if kind == "bool":
            return type(v) is bool and _compare(v, self.flag, self.op)
        if kind == "value":
            try:
                a, b = order_key(v), order_key(self.value)
            except XLError:
                return False
            return a[0] == b[0] and _compare(a[1], b[1], self.op)
        # text (or empty text) operand: only text values take part, ignoring case
        return type(v) is str and _compare(v.lower(), self.text.lower(), self.op)


_NUMBER_KINDS = frozenset((int, Decimal))
_ERROR_TEXTS = frozenset(ERROR_CODES)
_ORDER_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def _compare(a: Any, b: Any, op: str) -> bool:
    # (the values are numbers, texts or booleans of one kind: the comparison is a bool)
    result: bool
    if op == "<":
        result = a < b
    elif op == "<=":
        result = a <= b
    elif op == ">":
        result = a > b
    else:
        result = a >= b
    return result


@lru_cache(maxsize=512)
def parse_criterion(text: str) -> Criterion:
    """An Excel criteria string: an optional operator, then an operand that is a number, an ISO
    date, TRUE/FALSE, empty, or text (with wildcards under ``=`` and ``<>``)."""
    op = ""
    for candidate in _OPERATORS:
        if text.startswith(candidate):
            op = candidate
            break
    operand = text[len(op):]
    if operand == "":
        return Criterion(op, "empty")
    if operand.upper() in _ERROR_TEXTS:  # "#N/A": matches error values of that code (Excel)
        return Criterion(op, "error", text=operand.upper())
    number: Decimal | int | None = parse_number(operand)
    if number is None:
        number = _parse_iso(operand)
    pattern = wildcard(operand) if op in ("", "=", "<>") else None
    if number is not None:
        return Criterion(op, "number", text=operand, number=number, pattern=pattern)
    upper = operand.strip(" ").upper()
    if upper in ("TRUE", "FALSE"):
        return Criterion(op, "bool", text=operand, flag=upper == "TRUE")
    return Criterion(op, "text", text=operand, pattern=pattern)


def criterion(value: Any) -> Criterion:
    """A predicate for a criteria argument: text is parsed as Excel criteria, any other value
    (number, date, logical) means equality; lists and records are refused with #VALUE!."""
    if type(value) is str:
        return parse_criterion(value)
    if value is None:
        return parse_criterion("")
    if type(value) is tuple or isinstance(value, Mapping):
        raise XLError(VALUE, "a criterion must be a single value, not a list or record")
    if type(value) is ErrorValue:
        return Criterion("=", "error", text=value.code)
    if type(value) is bool:
        return Criterion("=", "bool", flag=value)
    if is_number(value):
        return Criterion("=", "number", number=value)
    return Criterion("=", "value", value=value)


def truthy(v: Any, what: str = "the condition") -> bool:
    """A lambda's or include list's answer as a Boolean: blank is FALSE, numbers are TRUE when
    non-zero (Excel), anything else is #VALUE!."""
    if v is True or v is False:
        return v
    if v is None:
        return False
    if is_number(v):
        nonzero: bool = v != 0
        return nonzero
    raise XLError(VALUE, f"{what} must be TRUE or FALSE")


def to_int(v: Any, what: str) -> int:
    """An integer argument, truncated toward zero like Excel; non-numbers are #VALUE!."""
    if type(v) is bool:
        return int(v)
    if not is_number(v):
        raise XLError(VALUE, f"{what} must be a number")
    try:
        return int(v)
    except (OverflowError, ValueError, decimal.InvalidOperation):  # pragma: no cover - finite
        raise XLError(NUM, f"{what} is out of range") from None


__all__ = [
    "Criterion", "Wildcard", "criterion", "eq_key", "has_wildcard_chars", "is_number", "numeric",
    "order_key", "parse_criterion", "parse_number", "rank", "serial", "serial_of_text", "to_int",
    "truthy",
    "wildcard",
]
