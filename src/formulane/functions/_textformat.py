"""Excel number-format codes, as a pure function ``format_value(value, format_text) -> str``
(the reverse, reading numbers out of text for VALUE and NUMBERVALUE, is `_numbertext`).

Contract: ``value`` is an engine value (Number as Decimal/int, Date, aware DateTime, Duration,
Text or Boolean); the result is the text Excel's ``TEXT(value, format_text)`` shows, in the
en-US locale. An invalid format code raises ``XLError(VALUE)``. The function never touches a
clock, the host or floats, and its output is at most a few times longer than ``format_text``
(plus the digits of the number), so the caller checks the final length against its limit.

Supported: sections ``positive;negative;zero;text`` and ``[condition]`` sections; digit
placeholders ``0 # ?``; ``.``; ``,`` as thousands separator and, trailing, as /1000 scaling;
``%``; ``E+ E- e+ e-``; fractions (``# ?/?``, ``# ??/16``); ``"literal"``, ``\\c``, ``_c`` (a
space), ``*c`` (fill: dropped, TEXT has no column width); ``[Red]``-style colors (ignored);
``[$text-locale]`` currency literals; ``General``; ``@``; date and time codes ``y yy yyyy m mm
mmm mmmm mmmmm d dd ddd dddd h hh m mm s ss .0 .00 .000 AM/PM am/pm A/P [h] [m] [s]``, ``m``
meaning minutes right after an hour code or right before a seconds code.

Numbers are first rounded to 15 significant digits (what Excel can show), then rounded half
away from zero to the format's decimals, exactly, in decimal: ``TEXT(2.675, "0.00")`` is
"2.68". Dates map to Excel serial numbers (1900 system, with its phantom 1900-02-29 for
numbers below 61) when a number format is applied to them or a date format to a number.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Callable, Any

from ..values import VALUE, XLError, general_text

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MAX_SERIAL = 2958465  # 9999-12-31
_EPOCH = dt.date(1899, 12, 30)
_DAY = 86400
_COLORS = frozenset(("black", "blue", "cyan", "green", "magenta", "red", "white", "yellow"))
_CONDITION = re.compile(r"(<=|>=|<>|<|>|=)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d{1,3})?)")
_ELAPSED = re.compile(r"(h+|m+|s+)", re.IGNORECASE)


def _bad(message: str) -> XLError:
    return XLError(VALUE, f"invalid format code: {message}")


# ------------------------------------------------------------------------------------ parsing
# A token is (kind, arg, source). Kinds: lit, digit (0 # ?), dot, comma, pct, exp (sign), slash,
# at, general, ampm (text as written); date (letter, count), elapsed (unit, width), minute
# (count) and fsec (digits) carry numbers in place of the source text.
_Token = tuple[str, Any, Any]


@dataclass(frozen=True, slots=True)
class _Section:
    tokens: tuple[_Token, ...]
    condition: tuple[str, Decimal] | None
    is_date: bool
    has_at: bool
    has_elapsed: bool
    frac_seconds: int  # digits after the seconds' decimal point (0-3)


def _tokenize(fmt: str) -> list[tuple[list[_Token], tuple[str, Decimal] | None]]:
    sections: list[tuple[list[_Token], tuple[str, Decimal] | None]] = []
    tokens: list[_Token] = []
    condition: tuple[str, Decimal] | None = None
    i, n = 0, len(fmt)
    while i < n:
        c = fmt[i]
        low = c.lower()
        if c == ";":
            sections.append((tokens, condition))
            tokens, condition = [], None
            i += 1
        elif c == '"':
            end = fmt.find('"', i + 1)
            if end < 0:
                raise _bad("unterminated quoted text")
            tokens.append(("lit", fmt[i + 1:end], fmt[i:end + 1]))
            i = end + 1
        elif c in "\\_*":
            if i + 1 >= n:
                raise _bad(f"{c!r} at the end of the format needs a character after it")
            if c == "\\":
                tokens.append(("lit", fmt[i + 1], fmt[i:i + 2]))
            elif c == "_":  # a space as wide as the next character: one space here
                tokens.append(("lit", " ", fmt[i:i + 2]))
            i += 2  # "*c" repeats c to fill a column; TEXT has no column, so it vanishes
        elif c == "[":
            end = fmt.find("]", i + 1)
            if end < 0:
                raise _bad("unclosed '['")
            inner = fmt[i + 1:end]
            key = inner.strip().lower()
            m = _CONDITION.fullmatch(inner.strip())
            if m:
                condition = (m.group(1), Decimal(m.group(2)))
            elif _ELAPSED.fullmatch(inner) and len(set(inner.lower())) == 1:
                tokens.append(("elapsed", inner[0].lower(), len(inner)))
            elif key.startswith("$"):
                currency = inner[1:].split("-", 1)[0]
                if currency:
                    tokens.append(("lit", currency, fmt[i:end + 1]))
            elif key in _COLORS or re.fullmatch(r"color\s*\d{1,2}", key):
                pass  # colors do not exist in text
            else:
                raise _bad(f"unknown code [{inner}]")
            i = end + 1
        elif c in "0#?":
            tokens.append(("digit", c, c))
            i += 1
        elif c == ".":
            tokens.append(("dot", None, c))
            i += 1
        elif c == ",":
            tokens.append(("comma", None, c))
            i += 1
        elif c == "%":
            tokens.append(("pct", None, c))
            i += 1
        elif c == "/":
            tokens.append(("slash", None, c))
            i += 1
        elif c == "@":
            tokens.append(("at", None, c))
            i += 1
        elif low == "e" and i + 1 < n and fmt[i + 1] in "+-":
            tokens.append(("exp", fmt[i + 1], fmt[i:i + 2]))
            i += 2
        elif low == "g" and fmt[i:i + 7].lower() == "general":
            tokens.append(("general", None, fmt[i:i + 7]))
            i += 7
        elif low == "a" and fmt[i:i + 5].lower() == "am/pm":
            tokens.append(("ampm", fmt[i:i + 5], fmt[i:i + 5]))
            i += 5
        elif low == "a" and fmt[i:i + 3].lower() == "a/p":
            tokens.append(("ampm", fmt[i:i + 3], fmt[i:i + 3]))
            i += 3
        elif low in "ymdhs":
            j = i
            while j < n and fmt[j].lower() == low:
                j += 1
            tokens.append(("date", low, j - i))
            i = j
        else:
            tokens.append(("lit", c, c))
            i += 1
    sections.append((tokens, condition))
    return sections


def _date_section(tokens: list[_Token]) -> tuple[list[_Token], int]:
    """Resolve ``m`` (month or minute) and ``s.000`` in a date/time section."""
    out: list[_Token] = []
    frac = 0
    i = 0
    # m is a minute right after an hour code or right before a seconds code, else a month.
    dated = [(idx, t) for idx, t in enumerate(tokens) if t[0] in ("date", "elapsed")]
    minute_at: set[int] = set()
    for pos, (idx, t) in enumerate(dated):
        if t[0] == "date" and t[1] == "m" and t[2] <= 2:
            prev = dated[pos - 1][1] if pos > 0 else None
            nxt = dated[pos + 1][1] if pos + 1 < len(dated) else None
            if (prev is not None and prev[1] == "h") or (nxt is not None and nxt[1] == "s"):
                minute_at.add(idx)
    last_seconds = False
    while i < len(tokens):
        t = tokens[i]
        zero = ("digit", "0", "0")
        if t[0] == "dot" and last_seconds and i + 1 < len(tokens) and tokens[i + 1] == zero:
            j = i + 1
            while j < len(tokens) and tokens[j] == ("digit", "0", "0"):
                j += 1
            digits = j - i - 1
            if digits > 3:
                raise _bad("at most 3 decimals of seconds")
            frac = max(frac, digits)
            out.append(("fsec", digits, "." + "0" * digits))
            i = j
            continue
        if t[0] == "digit":
            raise _bad("digit placeholders cannot be mixed with date or time codes")
        if i in minute_at:
            out.append(("minute", t[2], t[2]))
        else:
            out.append(t)
        if t[0] in ("date", "elapsed"):
            last_seconds = t[1] == "s"
        i += 1
    return out, frac


def parse_format(fmt: str) -> tuple[_Section, ...]:
    """The sections of a format code; short codes are cached (they repeat far more than
    values), long ones are not, so the cache's memory stays small."""
    return _parse_cached(fmt) if len(fmt) <= 256 else _parse(fmt)


@lru_cache(maxsize=512)
def _parse_cached(fmt: str) -> tuple[_Section, ...]:
    return _parse(fmt)


def _parse(fmt: str) -> tuple[_Section, ...]:
    raw = _tokenize(fmt)
    if len(raw) > 4:
        raise _bad("at most 4 sections separated by ';'")
    sections = []
    for tokens, condition in raw:
        is_date = any(t[0] in ("date", "elapsed", "ampm") for t in tokens)
        frac = 0
        if is_date:
            tokens, frac = _date_section(tokens)
        sections.append(_Section(
            tokens=tuple(tokens),
            condition=condition,
            is_date=is_date,
            has_at=any(t[0] == "at" for t in tokens),
            has_elapsed=any(t[0] == "elapsed" for t in tokens),
            frac_seconds=frac,
        ))
    return tuple(sections)


# ------------------------------------------------------------------------------------ numbers


def _wide(digits: int) -> decimal.Context:
    return decimal.Context(prec=max(digits, 28), rounding=decimal.ROUND_HALF_UP,
                           Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                           traps=[decimal.InvalidOperation])


def _excel_precision(v: Decimal) -> Decimal:
    """Round a magnitude to the 15 significant digits Excel displays."""
    if not v:
        return Decimal(0)
    return v.quantize(Decimal((0, (1,), v.adjusted() - 14)), context=_wide(20))


def _fixed(v: Decimal, frac: int) -> tuple[str, str]:
    """Integer digits ('' for 0) and exactly ``frac`` decimals, rounded half away from zero."""
    q = v.quantize(Decimal((0, (1,), -frac)), context=_wide(max(v.adjusted(), 0) + frac + 5))
    digits = "".join(map(str, q.as_tuple().digits)).rjust(frac + 1, "0")
    if frac:
        return digits[:-frac].lstrip("0"), digits[-frac:]
    return digits.lstrip("0"), ""


def _fill_integer(placeholders: list[str], digits: str, grouping: bool) -> list[str]:
    """One output string per integer placeholder; extra digits go to the leftmost one."""
    n = len(placeholders)
    out = [""] * n
    nd = len(digits)

    def emit(ch: str, pos: int) -> str:
        return ch + "," if grouping and pos and pos % 3 == 0 and ch.isdigit() else ch

    for r in range(n):
        k = n - 1 - r
        ph = placeholders[k]
        if r < nd:
            ch = digits[nd - 1 - r]
        else:
            ch = "0" if ph == "0" else (" " if ph == "?" else "")
        out[k] = emit(ch, r) if ch else ""
    if nd > n and n:
        extra = "".join(emit(digits[nd - 1 - r], r) for r in range(nd - 1, n - 1, -1))
        out[0] = extra + out[0]
    return out


def _fill_fraction(placeholders: list[str], digits: str) -> list[str]:
    keep = -1
    for i, (ph, d) in enumerate(zip(placeholders, digits)):
        if d != "0" or ph == "0":
            keep = i
    return [d if i <= keep else (" " if ph == "?" else "") for i, (ph, d) in
            enumerate(zip(placeholders, digits))]


def _format_number(sec: _Section, v: Decimal) -> str:
    """Format a magnitude ``v >= 0`` with a number section (the caller adds any sign)."""
    toks = sec.tokens
    if not any(t[0] in ("digit", "general", "at") for t in toks):
        return "".join(t[1] if t[0] == "lit" else t[2] for t in toks if t[0] != "pct") + \
            "%" * sum(1 for t in toks if t[0] == "pct")
    roles: list[str | None] = [None] * len(toks)
    exp_at = next((i for i, t in enumerate(toks) if t[0] == "exp"), None)
    dot_at = next((i for i, t in enumerate(toks)
                   if t[0] == "dot" and (exp_at is None or i < exp_at)), None)
    slash_at = None
    if exp_at is None and dot_at is None:
        for i, t in enumerate(toks):
            if t[0] == "slash" and i > 0 and toks[i - 1][0] == "digit":
                slash_at = i
                break
    digit_idx = [i for i, t in enumerate(toks) if t[0] == "digit"]
    scale = 2 * sum(1 for t in toks if t[0] == "pct")
    grouping = False
    for i, t in enumerate(toks):
        if t[0] != "comma":
            continue
        before = any(j < i for j in digit_idx)
        j = i
        while j < len(toks) and toks[j][0] == "comma":
            j += 1
        after_digit = j < len(toks) and toks[j][0] == "digit"
        in_integer = (dot_at is None or i < dot_at) and (exp_at is None or i < exp_at)
        if before and after_digit and in_integer:
            roles[i] = "group"
            grouping = True
        elif before and not after_digit:
            roles[i] = "scale"
            scale -= 3
    if slash_at is not None:
        return _format_fraction(sec, v.scaleb(scale), slash_at, roles)
    for i in digit_idx:
        if exp_at is not None and i > exp_at:
            roles[i] = "exp"
        elif dot_at is not None and i > dot_at:
            roles[i] = "frac"
        else:
            roles[i] = "int"
    int_ph = [toks[i][1] for i in digit_idx if roles[i] == "int"]
    frac_ph = [toks[i][1] for i in digit_idx if roles[i] == "frac"]
    exp_ph = [toks[i][1] for i in digit_idx if roles[i] == "exp"]
    value = _excel_precision(v).scaleb(scale, context=_wide(40))
    exponent = 0
    if exp_at is not None:
        k = max(len(int_ph), 1)
        engineering = "#" in int_ph and k > 1
        if value:
            e = value.adjusted()
            exponent = (e // k) * k if engineering else e - (k - 1)
            int_s = frac_s = ""  # bound for the checkers: the loop below always runs
            for _ in range(3):  # rounding 9.99 up to 10.0 moves the exponent once
                int_s, frac_s = _fixed(value.scaleb(-exponent, context=_wide(40)), len(frac_ph))
                if len(int_s) <= k:
                    break
                exponent += k if engineering else 1
        else:
            int_s, frac_s = "", "0" * len(frac_ph)
    else:
        int_s, frac_s = _fixed(value, len(frac_ph))
    int_out = _fill_integer(int_ph, int_s, grouping)
    frac_out = _fill_fraction(frac_ph, frac_s)
    exp_out: list[str] = []
    if exp_at is not None:
        exp_digits = str(abs(exponent))
        exp_out = _fill_integer(exp_ph, exp_digits, False) if exp_ph else [exp_digits]
    out: list[str] = []
    ii = fi = ei = 0
    int_pending = int_s if digit_idx and not int_ph else ""
    for i, t in enumerate(toks):
        kind = t[0]
        role = roles[i]
        if kind == "digit":
            if role == "int":
                out.append(int_out[ii])
                ii += 1
            elif role == "frac":
                out.append(frac_out[fi])
                fi += 1
            else:
                out.append(exp_out[ei] if ei < len(exp_out) else "")
                ei += 1
        elif kind == "dot":
            if i == dot_at:
                out.append(int_pending + ".")  # no integer placeholders: digits go before '.'
                int_pending = ""
            else:
                out.append(".")
        elif kind == "comma":
            if role is None:
                out.append(",")
        elif kind == "exp":
            if int_pending:
                out.append(int_pending)
                int_pending = ""
            sign = "-" if exponent < 0 else ("+" if t[1] == "+" else "")
            out.append(t[2][0] + sign)
            if not exp_ph:
                out.append(exp_out[0])
        elif kind == "pct":
            out.append("%")
        elif kind == "general" or kind == "at":
            out.append(general_text(v))
        elif kind == "lit":
            out.append(t[1])
        else:  # slash or any other character outside a fraction reads as itself
            out.append(t[2])
    if int_pending:  # a format without '.', E or integer placeholders, e.g. "#%" never lands here
        out.append(int_pending)
    return "".join(out)


def _format_fraction(sec: _Section, v: Decimal, slash_at: int,
                     roles: list[str | None]) -> str:
    toks = sec.tokens
    # Numerator: the run of placeholders just before '/'; integer part: placeholders before it.
    j = slash_at - 1
    while j >= 0 and toks[j][0] == "digit":
        j -= 1
    num_idx = list(range(j + 1, slash_at))
    int_idx = [i for i in range(0, j + 1) if toks[i][0] == "digit"]
    k = slash_at + 1
    den_idx = []
    fixed_den = ""
    while k < len(toks) and (toks[k][0] == "digit" or (toks[k][0] == "lit" and toks[k][1].isdigit()
                                                       and len(toks[k][1]) == 1)):
        den_idx.append(k)
        k += 1
    if den_idx and toks[den_idx[0]][0] == "lit":
        fixed_den = "".join(toks[i][1] if toks[i][0] == "lit" else toks[i][2] for i in den_idx)
    value = Fraction(_excel_precision(v))
    whole = 0
    if int_idx:
        whole = int(value)
        value -= whole
    if fixed_den:
        den = int(fixed_den)
        if den == 0:
            raise _bad("a fraction's denominator cannot be 0")
        num = int((value * den * 2 + 1) // 2)  # half up
    else:
        approx = value.limit_denominator(max(10 ** len(den_idx) - 1, 1))
        num, den = approx.numerator, approx.denominator
    if int_idx and num == den:
        whole, num = whole + 1, 0
    # Nothing at all would show for 0 with "# ?/?": Excel shows the 0.
    int_text = str(whole) if whole else ("0" if num == 0 else "")
    int_out = _fill_integer([toks[i][1] for i in int_idx], int_text, False)
    num_out = _fill_integer([toks[i][1] for i in num_idx], str(num) if num else "", False)
    den_text = fixed_den or str(den)
    den_ph = [toks[i][1] for i in den_idx]
    den_pad = "".join(" " for ph in den_ph[len(den_text):] if ph == "?")
    blank_fraction = bool(int_idx) and num == 0
    if not int_idx and num == 0:
        num_out = _fill_integer([toks[i][1] for i in num_idx], "0", False)
    out: list[str] = []
    ii = ni = 0
    for i, t in enumerate(toks):
        if i in int_idx:
            out.append(int_out[ii])
            ii += 1
        elif i in num_idx:
            text = num_out[ni]
            out.append(" " * len(text) if blank_fraction else text)
            ni += 1
        elif i == slash_at:
            out.append(" " if blank_fraction else "/")
        elif i in den_idx:
            if i == den_idx[0]:
                text = den_text + den_pad
                out.append(" " * len(text) if blank_fraction else text)
        elif t[0] == "lit":
            out.append(t[1])
        elif t[0] == "comma":
            out.append("" if roles[i] else ",")
        elif t[0] in ("general", "at"):
            out.append(general_text(v))
        else:
            out.append(t[2])
    return "".join(out)


# --------------------------------------------------------------------------------- date & time


@dataclass(frozen=True, slots=True)
class _Moment:
    year: int
    month: int
    day: int
    weekday: int  # 0 = Sunday
    second_of_day: Decimal  # rounded to the format's precision
    total_seconds: Decimal  # for [h] [m] [s]


def serial_of_date(d: dt.date) -> int:
    """Excel's serial number of a date (1900 system, counting the phantom 1900-02-29)."""
    n = (d - _EPOCH).days
    return n if n >= 61 else n - 1


def _calendar(day: int) -> tuple[int, int, int, int]:
    """(year, month, day, weekday) of an Excel serial day, 0 <= day <= MAX_SERIAL."""
    weekday = (day + 6) % 7
    if day == 0:
        return 1900, 1, 0, weekday
    if day == 60:
        return 1900, 2, 29, weekday
    d = _EPOCH + dt.timedelta(days=day if day > 60 else day + 1)
    return d.year, d.month, d.day, weekday


def _round_seconds(seconds: Decimal, digits: int) -> Decimal:
    return seconds.quantize(Decimal((0, (1,), -digits)), context=_wide(40))


def _moment_of_serial(serial: Decimal, digits: int) -> _Moment:
    if serial >= MAX_SERIAL + 1:
        raise XLError(VALUE, "the number is too large to show as a date or time")
    total = _round_seconds(serial * _DAY, digits)
    day = int(total // _DAY)
    if day > MAX_SERIAL:
        raise XLError(VALUE, "the number is too large to show as a date or time")
    y, m, d, w = _calendar(day)
    return _Moment(y, m, d, w, total - day * _DAY, total)


def _moment(value: Any, digits: int) -> _Moment:
    if isinstance(value, dt.datetime):
        naive = value.replace(tzinfo=None)
        day_start = dt.datetime(naive.year, naive.month, naive.day)
        sod = _round_seconds(Decimal((naive - day_start).seconds) +
                             Decimal(naive.microsecond).scaleb(-6), digits)
        date = naive.date()
        if sod >= _DAY:
            if date == dt.date.max:
                raise XLError(VALUE, "the date is out of range")
            date, sod = date + dt.timedelta(days=1), sod - _DAY
        serial = serial_of_date(date)
        return _Moment(date.year, date.month, date.day, date.isoweekday() % 7, sod,
                       serial * _DAY + sod)
    if isinstance(value, dt.date):
        serial = serial_of_date(value)
        return _Moment(value.year, value.month, value.day, value.isoweekday() % 7,
                       Decimal(0), Decimal(serial * _DAY))
    return _moment_of_serial(value, digits)


def _format_date(sec: _Section, value: Any) -> str:
    mo = _moment(value, sec.frac_seconds)
    twelve = any(t[0] == "ampm" for t in sec.tokens)
    sod = mo.second_of_day
    whole = int(sod)
    hour, minute, second = whole // 3600, whole // 60 % 60, whole % 60
    out: list[str] = []
    for t in sec.tokens:
        kind, arg, src = t
        if kind == "date":
            if arg == "y":
                out.append(f"{mo.year % 100:02d}" if src <= 2 else f"{mo.year:04d}")
            elif arg == "m":
                if src == 1:
                    out.append(str(mo.month))
                elif src == 2:
                    out.append(f"{mo.month:02d}")
                elif src == 3:
                    out.append(MONTHS[mo.month - 1][:3])
                elif src == 5:
                    out.append(MONTHS[mo.month - 1][0])
                else:
                    out.append(MONTHS[mo.month - 1])
            elif arg == "d":
                if src <= 2:
                    out.append(f"{mo.day:0{src}d}")
                elif src == 3:
                    out.append(WEEKDAYS[mo.weekday][:3])
                else:
                    out.append(WEEKDAYS[mo.weekday])
            elif arg == "h":
                h = (hour % 12 or 12) if twelve else hour
                out.append(f"{h:0{min(src, 2)}d}")
            else:  # s
                out.append(f"{second:0{min(src, 2)}d}")
        elif kind == "minute":
            out.append(f"{minute:0{min(arg, 2)}d}")
        elif kind == "elapsed":
            unit_seconds = {"h": 3600, "m": 60, "s": 1}[arg]
            out.append(f"{int(mo.total_seconds // unit_seconds):0{src}d}")
        elif kind == "fsec":
            frac = "".join(map(str, _round_seconds(sod - whole, arg).as_tuple().digits))
            out.append("." + frac.rjust(arg, "0")[-arg:] if arg else ".")
        elif kind == "ampm":
            pm = hour >= 12
            if len(arg) == 5:
                text = "PM" if pm else "AM"
                out.append(text.lower() if arg[0].islower() else text)
            else:
                out.append(arg[2] if pm else arg[0])
        elif kind == "lit":
            out.append(arg)
        elif kind == "general":
            out.append(general_text(mo.total_seconds / _DAY if mo.total_seconds else 0))
        else:  # . , % / @ E+ read as themselves in a date format
            out.append(src)
    return "".join(out)


# ------------------------------------------------------------------------------------ driver


def _holds(condition: tuple[str, Decimal], v: Decimal) -> bool:
    op, bound = condition
    return {"<": v < bound, ">": v > bound, "=": v == bound, "<=": v <= bound,
            ">=": v >= bound, "<>": v != bound}[op]


def _serial(value: Any) -> Decimal:
    """The number Excel stores for a date, date-time or duration (days)."""
    if isinstance(value, dt.datetime):
        naive = value.replace(tzinfo=None)
        seconds = naive.hour * 3600 + naive.minute * 60 + naive.second
        return Decimal(serial_of_date(naive.date())) + \
            (Decimal(seconds) + Decimal(naive.microsecond).scaleb(-6)) / _DAY
    if isinstance(value, dt.date):
        return Decimal(serial_of_date(value))
    if isinstance(value, dt.timedelta):
        return (Decimal(value.days * _DAY + value.seconds) +
                Decimal(value.microseconds).scaleb(-6)) / _DAY
    return Decimal(value)


def _source(tok: tuple[str, Any, Any]) -> str:
    """How a token was written (date tokens keep their letter and count)."""
    kind, arg, src = tok
    if kind == "lit":
        return str(arg)
    if kind == "date":
        return str(arg) * int(src)
    if kind == "minute":
        return "m" * int(arg)
    if kind == "elapsed":
        return "[" + str(arg) * int(src) + "]"
    return str(src)


def _format_text(sections: tuple[_Section, ...], text: str, check: Callable[[int], None]) -> str:
    if len(sections) >= 4:
        sec = sections[3]
    elif len(sections) == 1 and sections[0].has_at:
        sec = sections[0]
    else:
        return text  # no text section: Excel shows the text unchanged
    pieces = [text if t[0] == "at" else _source(t) for t in sec.tokens]
    # Each "@" repeats the whole value: the length is known, and checked, before joining.
    check(sum(len(piece) for piece in pieces))
    return "".join(pieces)


def _no_check(length: int) -> None:
    return None


def _pick(sections: tuple[_Section, ...], v: Decimal) -> tuple[_Section, bool]:
    """The section for number ``v`` and whether a '-' must be added to its magnitude."""
    if any(s.condition for s in sections[:2]):
        # A section chosen by its own condition shows the magnitude (formats such as
        # [<=-1000]-0.0,"K" write the sign themselves); the fallback section shows a minus.
        for s in sections[:3]:
            if s.condition is None or _holds(s.condition, v):
                return s, v < 0 and s.condition is None
        raise XLError(VALUE, "no section of the format applies to this number")
    first = sections[0]  # a parsed format has at least one section
    if v > 0 or len(sections) == 1:
        return first, v < 0
    if v < 0:
        return sections[1], False
    return (sections[2] if len(sections) >= 3 else first), False


def format_value(value: Any, format_text: str, check: Callable[[int], None] | None = None) -> str:
    """``TEXT(value, format_text)``: the value shown with an Excel format code. ``check`` sees
    the result's length before a text section builds it (a number's text is bounded by a few
    times the format's length, and is checked by the caller once built)."""
    if format_text == "":
        return ""
    sections = parse_format(format_text)
    if isinstance(value, str):
        return _format_text(sections, value, check or _no_check)
    if isinstance(value, bool):
        return _format_text(sections, "TRUE" if value else "FALSE", check or _no_check)
    if isinstance(value, dt.date) and not sections[0].condition:
        sec = sections[0]  # dates always show through the first section
        if sec.is_date:
            return _format_date(sec, value)
        serial = _serial(value)
        body = _format_number(sec, abs(serial))
        return "-" + body if serial < 0 else body
    number = _serial(value)
    sec, minus = _pick(sections, number)
    magnitude = abs(number)
    if sec.is_date:
        if minus and not sec.has_elapsed:
            raise XLError(VALUE, "a negative number cannot be shown as a date or time")
        shown = value if isinstance(value, dt.date) else magnitude
        body = _format_date(sec, shown if not minus else magnitude)
    else:
        body = _format_number(sec, magnitude)
        if minus and body == _format_number(sec, Decimal(0)):
            minus = False  # Excel shows no sign on a number that rounds to zero: "0.00"
    return "-" + body if minus else body


__all__ = ["MONTHS", "WEEKDAYS", "format_value", "parse_format", "serial_of_date"]
