"""Numbers read out of text, as Excel (en-US) reads them: ``parse_number_text`` for VALUE (and
TEXT of a numeric text), ``parse_numbervalue`` for NUMBERVALUE's explicit separators.

Contract: both return a Number (int when integral, else a Decimal of at most 34 significant
digits, below 1e308 in magnitude) or raise ``XLError(VALUE)``. Only bounded, non-nested regular
expressions run, on texts capped at ``_MAX_NUMBER_TEXT`` characters. The reverse direction,
number-format codes, is `_textformat`.
"""

from __future__ import annotations

import decimal
import re
from decimal import Decimal

from ..values import VALUE, XLError

_DAY = 86400
_MAX_NUMBER_TEXT = 1000
_TIME = re.compile(r"([0-9]{1,4}):([0-9]{1,2})(?::([0-9]{1,2}(?:\.[0-9]{1,9})?))? *"
                   r"(am|pm|a|p)?", re.IGNORECASE)
_MIXED = re.compile(r"([0-9]{1,15}) +([0-9]{1,15})/([0-9]{1,15})")
_PLAIN = re.compile(r"([0-9]{1,3}(?:,[0-9]{3})+|[0-9]*)(\.[0-9]*)?(?:[eE]([-+]?[0-9]{1,6}))?")
_LIMIT = Decimal("1e308")


def _canonical(x: Decimal) -> Decimal | int:
    """34 significant digits; integers as int, others without trailing zeros."""
    x = x.normalize(_ENGINE)  # explicit contexts: the engine's own traps overflow past 1e307
    if x.copy_abs() >= _LIMIT:
        raise XLError(VALUE, "the number is out of range")
    if x == x.to_integral_value():
        return int(x)
    return x


_ENGINE = decimal.Context(prec=34, rounding=decimal.ROUND_HALF_EVEN, Emax=decimal.MAX_EMAX,
                          Emin=-340, traps=[decimal.InvalidOperation])


def _not_a_number(text: str) -> XLError:
    shown = text if len(text) <= 30 else text[:27] + "..."
    return XLError(VALUE, f"{shown!r} is not a number")


def parse_number_text(text: str) -> Decimal | int:
    """VALUE(text): a number as Excel (en-US) reads one typed into a cell: spaces around,
    ``+``/``-``, ``(5)`` for -5, ``$``, thousands commas in groups of three, a decimal point,
    an exponent, one ``%``, a mixed fraction ``1 1/2``, or a time ``h:mm[:ss] [AM/PM]`` (a
    fraction of a day). Dates are refused: DATEVALUE reads them into a Date."""
    s = text.strip(" ")
    if not s or len(s) > _MAX_NUMBER_TEXT:
        raise _not_a_number(text)
    t = _TIME.fullmatch(s)
    if t:
        return _time_fraction(t, text)
    neg = False
    if s[0] == "(" and s[-1] == ")":
        neg, s = True, s[1:-1].strip(" ")
    signed = False
    if neg and s[:1] in ("+", "-"):
        raise _not_a_number(text)  # "(-5)" is not an accounting negative
    if s[:1] in ("+", "-"):
        neg, signed, s = neg != (s[0] == "-"), True, s[1:].lstrip(" ")
    if s[:1] == "$":
        s = s[1:].lstrip(" ")
        if not signed and s[:1] in ("+", "-"):
            neg, s = neg != (s[0] == "-"), s[1:].lstrip(" ")
    percent = s.endswith("%")
    if percent:
        s = s[:-1].rstrip(" ")
    mixed = _MIXED.fullmatch(s)
    if mixed:
        whole, num, den = (int(g) for g in mixed.groups())
        if den == 0:
            raise _not_a_number(text)
        value = Decimal(whole) + _ENGINE.divide(Decimal(num), Decimal(den))
    else:
        m = _PLAIN.fullmatch(s)
        if not m or not any(ch.isdigit() for ch in (m.group(1) or "") + (m.group(2) or "")):
            raise _not_a_number(text)
        mantissa = (m.group(1) or "0").replace(",", "") + (m.group(2) or "")
        if mantissa.endswith("."):
            mantissa += "0"
        value = Decimal(mantissa).scaleb(int(m.group(3) or 0), _ENGINE)
    if percent:
        value = value.scaleb(-2, _ENGINE)
    return _canonical(value.copy_negate() if neg else value)


def _time_fraction(t: re.Match[str], text: str) -> Decimal | int:
    hours, minutes = int(t.group(1)), int(t.group(2))
    seconds = Decimal(t.group(3) or 0)
    marker = (t.group(4) or "").lower()
    if minutes > 59 or seconds >= 60:
        raise _not_a_number(text)
    if marker:
        if hours > 12:
            raise _not_a_number(text)
        hours = hours % 12 + (12 if marker.startswith("p") else 0)
    total = Decimal(hours * 3600 + minutes * 60) + seconds
    return _canonical(_ENGINE.divide(total, Decimal(_DAY)))


def parse_numbervalue(text: str, decimal_separator: str, group_separator: str) -> Decimal | int:
    """NUMBERVALUE: locale-free parsing with explicit separators (first character of each).
    Spaces anywhere are ignored; group separators before the decimal separator are dropped,
    after it they are an error; trailing ``%`` signs divide by 100 each; "" is 0."""
    if not decimal_separator or not group_separator:
        raise XLError(VALUE, "NUMBERVALUE needs non-empty separators")
    dec, grp = decimal_separator[0], group_separator[0]
    if dec == grp or dec in "0123456789+-%eE" or grp in "0123456789+-%eE":
        raise XLError(VALUE, "NUMBERVALUE: the separators must differ and not be digits or signs")
    s = "".join(text.split())
    if not s:
        return 0
    if len(s) > _MAX_NUMBER_TEXT:
        raise _not_a_number(text)
    stripped = s.rstrip("%")
    percents = len(s) - len(stripped)
    s = stripped
    neg = False
    if s[:1] in ("+", "-"):
        neg, s = s[0] == "-", s[1:]
    digits: list[str] = []
    seen_dec = False
    exponent = 0
    i = 0
    while i < len(s):
        c = s[i]
        if "0" <= c <= "9":
            digits.append(c)
        elif c == dec and not seen_dec:
            seen_dec = True
            digits.append(".")
        elif c == grp and not seen_dec:
            pass
        elif c in "eE" and digits and re.fullmatch(r"[-+]?[0-9]{1,6}", s[i + 1:]):
            exponent = int(s[i + 1:])
            break
        else:
            raise _not_a_number(text)
        i += 1
    mantissa = "".join(digits)
    if not any(ch != "." for ch in mantissa):
        raise _not_a_number(text)
    if mantissa.endswith("."):
        mantissa += "0"
    value = Decimal(mantissa).scaleb(exponent - 2 * percents, _ENGINE)
    return _canonical(value.copy_negate() if neg else value)


__all__ = ["parse_number_text", "parse_numbervalue"]
