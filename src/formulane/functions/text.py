"""Text functions: slicing, case, search, joins, splits, conversions (regular expressions:
`text_regex`).

Contract: texts come in as NFC ``str`` and every length or position counts code points
(``LEN("😀")`` is 1); like ``&`` (and Excel), joins and case changes do not renormalize, so
``LEN(CONCAT(a, b)) = LEN(a) + LEN(b)`` always holds. Counts and positions are truncated
toward zero (``LEFT("abc", 1.9)`` is "a"); a negative count or a position below 1 is
``#VALUE!``. Every function that can grow a text checks the
result's length with ``ctx.check_text`` *before* building it, so ``REPT("a", 10^9)`` stops
with `LimitExceeded` at once. Searches never backtrack (`_textsearch`): literal searches and
``*`` wildcards use ``str.find``, ``?`` wildcards and the REGEX functions run on RE2 (linear
time, unanchored, RE2 syntax; an invalid pattern is ``#VALUE!`` with RE2's message), and an RE2
run whose worst case (text bytes x program size) is over budget is refused before it starts.
``FIND``, ``EXACT``, ``SUBSTITUTE``, ``STARTSWITH``... are case-sensitive;
``SEARCH`` is not. Conversions (``VALUE``, ``NUMBERVALUE``, ``TEXT``) follow Excel's en-US
rules; the format-code engine of ``TEXT`` lives in `_textformat`.
"""

from __future__ import annotations

import unicodedata
from decimal import Decimal
from typing import Any, Callable, Iterable

from ..types import (
    BOOLEAN, DATE, DATETIME, DURATION, NUMBER, TEXT, list_of, many, optional,
)
from ..values import NA, VALUE, XLError
from ._numbertext import parse_number_text, parse_numbervalue
from ._textformat import format_value
from ._textsearch import before_after, delimiter_spans, delimiters, flag, wildcard_find
from .spec import Cost, FunctionSpec, Refuse, builtin, family, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "text"


_MAX_CODE_POINT = 0x10FFFF


def _count(x: Decimal | int, what: str, fn: str) -> int:
    """A character count: negative is #VALUE!, fractions truncate (Excel)."""
    if x < 0:
        raise XLError(VALUE, f"{fn} needs {what} >= 0")
    return int(x)


def _position(x: Decimal | int, what: str, fn: str) -> int:
    n = int(x)
    if n < 1:
        raise XLError(VALUE, f"{fn} needs {what} >= 1")
    return n


def _texts(args: Iterable[Any]) -> list[str]:
    """Flatten `many(TEXT)` arguments; blanks read as empty text."""
    out: list[str] = []
    for a in args:
        if type(a) is tuple:
            out.extend("" if v is None else v for v in a)
        else:
            out.append("" if a is None else a)
    return out


# ------------------------------------------------------------------------------ length & slices


@builtin(
    "LEN",
    sig(p("text", TEXT), returns=NUMBER),
    doc="The number of characters (Unicode code points) in a text.",
    examples=['LEN("abc") -> 3', 'LEN("") -> 0', 'LEN("😀") -> 1'],
    cost=Cost.const(1),
    can_error=False,
)
def len_(text: str) -> int:
    return len(text)


@builtin(
    "LEFT",
    sig(p("text", TEXT), p("num_chars", NUMBER, 1), returns=TEXT),
    doc="The first characters of a text (num_chars defaults to 1, fractions truncate).",
    examples=['LEFT("abc", 2) -> "ab"', 'LEFT("abc") -> "a"', 'LEFT("abc", 1.9) -> "a"',
              'LEFT("abc", 10) -> "abc"', 'LEFT("abc", -1) -> #VALUE!'],
    cost=Cost.const(1),
    errors=("#VALUE!",),
)
def left(text: str, num_chars: Decimal | int = 1) -> str:
    n = _count(num_chars, "num_chars", "LEFT")
    return text[:n] if n < len(text) else text


@builtin(
    "RIGHT",
    sig(p("text", TEXT), p("num_chars", NUMBER, 1), returns=TEXT),
    doc="The last characters of a text (num_chars defaults to 1, fractions truncate).",
    examples=['RIGHT("abc", 2) -> "bc"', 'RIGHT("abc") -> "c"', 'RIGHT("abc", 0) -> ""',
              'RIGHT("abc", -1) -> #VALUE!'],
    cost=Cost.const(1),
    errors=("#VALUE!",),
)
def right(text: str, num_chars: Decimal | int = 1) -> str:
    n = _count(num_chars, "num_chars", "RIGHT")
    return text[len(text) - n:] if n < len(text) else text


@builtin(
    "MID",
    sig(p("text", TEXT), p("start_num", NUMBER), p("num_chars", NUMBER), returns=TEXT),
    doc="The num_chars characters of a text from position start_num (1-based).",
    examples=['MID("abcdef", 2, 3) -> "bcd"', 'MID("abc", 5, 1) -> ""',
              'MID("abc", 0, 1) -> #VALUE!',
              'MID("abc", 1, -1) -> #VALUE!'],
    cost=Cost.const(1),
    errors=("#VALUE!",),
)
def mid(text: str, start_num: Decimal | int, num_chars: Decimal | int) -> str:
    start = _position(start_num, "start_num", "MID")
    n = _count(num_chars, "num_chars", "MID")
    if start > len(text):
        return ""
    return text[start - 1:start - 1 + min(n, len(text))]


# ------------------------------------------------------------------------------------ case etc.


def _map_chars(text: str, fn: Callable[[str], str]) -> str:
    # One character in, one character out (as Excel): "ß" stays "ß" in UPPER, so lengths hold.
    # Like `&`, results are not renormalized: Excel does not normalize either.
    if text.isascii():
        return fn(text)
    out = []
    for ch in text:
        mapped = fn(ch)
        out.append(mapped if len(mapped) == 1 else ch)
    return "".join(out)


#: UPPER, LOWER, TRIM, CLEAN: a Text to a Text, one C-speed pass.
_text_to_text = family(sig(p("text", TEXT), returns=TEXT), cost=Cost.const(1), can_error=False)


@_text_to_text(
    "UPPER",
    doc="The text in upper case (character by character: 'ß' stays 'ß').",
    examples=['UPPER("Abc") -> "ABC"', 'UPPER("straße") -> "STRAßE"', 'UPPER("") -> ""'],
)
def upper(text: str) -> str:
    return _map_chars(text, str.upper)


@_text_to_text(
    "LOWER",
    doc="The text in lower case (character by character).",
    examples=['LOWER("AbC") -> "abc"', 'LOWER("ÉTÉ 2024") -> "été 2024"', 'LOWER("") -> ""'],
)
def lower(text: str) -> str:
    return _map_chars(text, str.lower)


@builtin(
    "PROPER",
    sig(p("text", TEXT), returns=TEXT),
    doc="Each letter that follows a non-letter in upper case, every other letter in lower case.",
    examples=['PROPER("this is a TITLE") -> "This Is A Title"',
              'PROPER("2-way street") -> "2-Way Street"',
              'PROPER("76BudGet") -> "76Budget"', 'PROPER("don\'t") -> "Don\'T"'],
    cost=Cost.const(2),
    can_error=False,
)
def proper(text: str) -> str:
    # Excel capitalises every letter that follows a non-letter, digits included ("76Budget").
    out = []
    prev_letter = False
    for ch in text:
        if ch.isalpha():
            mapped = ch.lower() if prev_letter else ch.upper()
            out.append(mapped if len(mapped) == 1 else ch)
            prev_letter = True
        else:
            out.append(ch)
            prev_letter = False
    return "".join(out)


@_text_to_text(
    "TRIM",
    doc="The text without leading or trailing spaces, inner runs of spaces reduced to one "
        "(only the space U+0020, as Excel).",
    examples=['TRIM("  a   b  ") -> "a b"', 'TRIM("   ") -> ""',
              'TRIM("a" & CHAR(9)) -> "a" & CHAR(9)'],
)
def trim(text: str) -> str:
    return " ".join(part for part in text.split(" ") if part)


@_text_to_text(
    "CLEAN",
    doc="The text without the control characters 0-31 (as Excel; DEL and C1 controls stay).",
    examples=['CLEAN("a" & CHAR(10) & "b") -> "ab"', 'CLEAN("abc") -> "abc"',
              'CLEAN(CHAR(127)) -> CHAR(127)'],
)
def clean(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(ch for ch in text if ord(ch) >= 32)


@builtin(
    "EXACT",
    sig(p("text1", TEXT), p("text2", TEXT), returns=BOOLEAN),
    doc="Whether two texts are identical, case included (the = operator ignores case).",
    examples=['EXACT("a", "A") -> FALSE', 'EXACT("abc", "abc") -> TRUE', 'EXACT("", "") -> TRUE'],
    cost=Cost.const(1),
    can_error=False,
)
def exact(text1: str, text2: str) -> bool:
    return text1 == text2


# ------------------------------------------------------------------------------------- building


@builtin(
    "CONCAT",
    sig(p("text", many(TEXT)), returns=TEXT, repeat=1),
    doc="The texts (and lists of texts) joined end to end; blanks add nothing.",
    examples=['CONCAT("a", "b", "c") -> "abc"', 'CONCAT(["a", "b"], "c") -> "abc"',
              'CONCAT("") -> ""'],
    cost=Cost.linear(1, 2),
    needs_ctx=True,
    can_error=False,
)
def concat(ctx: Any, *args: Any) -> str:
    parts = _texts(args)
    ctx.check_text(sum(map(len, parts)))
    return "".join(parts)


@builtin(
    "CONCATENATE",
    sig(p("text", TEXT), returns=TEXT, repeat=1),
    doc="The texts joined end to end (the older form of CONCAT, scalars only).",
    examples=['CONCATENATE("a", "b") -> "ab"', 'CONCATENATE("x", "", "y") -> "xy"',
              'CONCATENATE("only") -> "only"'],
    cost=Cost.const(2),
    needs_ctx=True,
    can_error=False,
)
def concatenate(ctx: Any, *args: str) -> str:
    ctx.check_text(sum(map(len, args)))
    return "".join(args)


@builtin(
    "TEXTJOIN",
    sig(p("delimiter", TEXT), p("ignore_empty", BOOLEAN), p("text", many(TEXT)), returns=TEXT,
        repeat=1),
    doc="The texts joined with a delimiter; with ignore_empty, empty texts and blanks are "
        "skipped.",
    examples=['TEXTJOIN(", ", TRUE, "a", "", "b") -> "a, b"',
              'TEXTJOIN("-", FALSE, ["a", "", "b"]) -> "a--b"',
              'TEXTJOIN("-", TRUE, ["", ""]) -> ""'],
    cost=Cost.linear(1, 2),
    needs_ctx=True,
    can_error=False,
)
def textjoin(ctx: Any, delimiter: str, ignore_empty: bool, *args: Any) -> str:
    parts = _texts(args)
    if ignore_empty:
        parts = [s for s in parts if s]
    size = sum(map(len, parts)) + len(delimiter) * max(len(parts) - 1, 0)
    ctx.check_text(size)
    return delimiter.join(parts)


@builtin(
    "REPT",
    sig(p("text", TEXT), p("number_times", NUMBER), returns=TEXT),
    doc="The text repeated number_times times (fractions truncate).",
    examples=['REPT("ab", 3) -> "ababab"', 'REPT("a", 0) -> ""', 'REPT("a", 2.9) -> "aa"',
              'REPT("a", -1) -> #VALUE!'],
    cost=Cost(2, builds_text=True),
    needs_ctx=True,
    errors=("#VALUE!",),
)
def rept(ctx: Any, text: str, number_times: Decimal | int) -> str:
    n = _count(number_times, "number_times", "REPT")
    if not text or not n:
        return ""
    ctx.check_text(len(text) * n)  # before allocating: REPT("a", 10^9) stops here
    ctx.charge(len(text) * n // 16)  # the text it builds (a metered run; free otherwise)
    return text * n


@builtin(
    "SUBSTITUTE",
    sig(p("text", TEXT), p("old_text", TEXT), p("new_text", TEXT), returns=TEXT),
    sig(p("text", TEXT), p("old_text", TEXT), p("new_text", TEXT), p("instance_num", NUMBER),
        returns=TEXT),
    doc="The text with old_text replaced by new_text: every occurrence, or only the "
        "instance_num-th (case-sensitive).",
    examples=['SUBSTITUTE("a-b-c", "-", "+") -> "a+b+c"',
              'SUBSTITUTE("a-b-c", "-", "+", 2) -> "a-b+c"',
              'SUBSTITUTE("abc", "", "x") -> "abc"', 'SUBSTITUTE("aaa", "a", "b", 4) -> "aaa"',
              'SUBSTITUTE("abc", "b", "x", 0) -> #VALUE!'],
    cost=Cost(3, builds_text=True),
    needs_ctx=True,
    errors=("#VALUE!",),
)
def substitute(ctx: Any, text: str, old_text: str, new_text: str,
               instance_num: Decimal | int | None = None) -> str:
    if instance_num is not None:
        k = _position(instance_num, "instance_num", "SUBSTITUTE")
        if not old_text or k > len(text):  # never more occurrences than characters
            return text
        at = -len(old_text)
        for _ in range(k):
            at = text.find(old_text, at + len(old_text))
            if at < 0:
                return text
        ctx.check_text(len(text) - len(old_text) + len(new_text))
        return text[:at] + new_text + text[at + len(old_text):]
    if not old_text:
        return text
    count = text.count(old_text)
    if not count:
        return text
    size = len(text) + count * (len(new_text) - len(old_text))
    ctx.check_text(size)
    ctx.charge(size // 16)  # the text it builds (a metered run; free otherwise)
    return text.replace(old_text, new_text)


@builtin(
    "REPLACE",
    sig(p("old_text", TEXT), p("start_num", NUMBER), p("num_chars", NUMBER), p("new_text", TEXT),
        returns=TEXT),
    doc="The text with num_chars characters from position start_num replaced by new_text.",
    examples=['REPLACE("abcdef", 2, 3, "X") -> "aXef"', 'REPLACE("abc", 4, 0, "d") -> "abcd"',
              'REPLACE("abc", 10, 1, "x") -> "abcx"', 'REPLACE("abc", 0, 1, "x") -> #VALUE!'],
    cost=Cost.const(2),
    needs_ctx=True,
    errors=("#VALUE!",),
)
def replace(ctx: Any, old_text: str, start_num: Decimal | int, num_chars: Decimal | int,
            new_text: str) -> str:
    start = min(_position(start_num, "start_num", "REPLACE"), len(old_text) + 1)
    n = min(_count(num_chars, "num_chars", "REPLACE"), len(old_text))
    head, tail = old_text[:start - 1], old_text[start - 1 + n:]
    ctx.check_text(len(head) + len(new_text) + len(tail))
    return head + new_text + tail


# ------------------------------------------------------------------------------------- searching


def _start(start_num: Decimal | int, within: str, fn: str, empty_find: bool) -> int:
    start = _position(start_num, "start_num", fn)
    # An empty find_text matches at start_num, which may sit just after the last character.
    if start > len(within) + (1 if empty_find else 0):
        raise XLError(VALUE, f"{fn}: start_num is past the end of the text")
    return start


@builtin(
    "FIND",
    sig(p("find_text", TEXT), p("within_text", TEXT), p("start_num", NUMBER, 1), returns=NUMBER),
    doc="The position of find_text in within_text, case-sensitive, from start_num; #VALUE! "
        "when absent.",
    examples=['FIND("b", "abcb") -> 2', 'FIND("b", "abcb", 3) -> 4', 'FIND("B", "abc") -> #VALUE!',
              'FIND("", "abc") -> 1', 'FIND("a", "abc", 0) -> #VALUE!'],
    cost=Cost.const(2),
    errors=("#VALUE!",),
)
def find(find_text: str, within_text: str, start_num: Decimal | int = 1) -> int:
    start = _start(start_num, within_text, "FIND", not find_text)
    at = within_text.find(find_text, start - 1)
    if at < 0:
        raise XLError(VALUE, "FIND: the text was not found")
    return at + 1


@builtin(
    "SEARCH",
    sig(p("find_text", TEXT), p("within_text", TEXT), p("start_num", NUMBER, 1), returns=NUMBER),
    doc="The position of find_text in within_text ignoring case, with wildcards ? * and ~ "
        "(escape); #VALUE! when absent.",
    examples=['SEARCH("B", "abc") -> 2', 'SEARCH("b?d", "abcd") -> 2', 'SEARCH("~*", "a*b") -> 2',
              'SEARCH("x", "abc") -> #VALUE!', 'SEARCH("a*c", "xxabbc", 4) -> #VALUE!'],
    cost=Cost.const(20),
    errors=("#VALUE!",),
)
def search(find_text: str, within_text: str, start_num: Decimal | int = 1) -> int:
    start = _start(start_num, within_text, "SEARCH", not find_text)
    at = wildcard_find(find_text, within_text, start - 1)
    if at < 0:
        raise XLError(VALUE, "SEARCH: the text was not found")
    return at + 1


def _affix_test(name: str, part: str, test: Callable[[str, str], bool], *, doc: str,
                examples: list[str]) -> FunctionSpec:
    """STARTSWITH, ENDSWITH, CONTAINS: a case-sensitive test of a text against a part of it."""
    return builtin(name, sig(p("text", TEXT), p(part, TEXT), returns=BOOLEAN), doc=doc,
                   examples=examples, cost=Cost.const(1), can_error=False)(test)


startswith = _affix_test(
    "STARTSWITH", "prefix", lambda text, prefix: text.startswith(prefix),
    doc="Whether the text starts with prefix (case-sensitive).",
    examples=['STARTSWITH("abc", "ab") -> TRUE', 'STARTSWITH("abc", "AB") -> FALSE',
              'STARTSWITH("abc", "") -> TRUE'],
)
endswith = _affix_test(
    "ENDSWITH", "suffix", lambda text, suffix: text.endswith(suffix),
    doc="Whether the text ends with suffix (case-sensitive).",
    examples=['ENDSWITH("abc", "bc") -> TRUE', 'ENDSWITH("abc", "C") -> FALSE',
              'ENDSWITH("abc", "") -> TRUE'],
)
contains = _affix_test(
    "CONTAINS", "substring", lambda text, substring: substring in text,
    doc="Whether the text contains substring (case-sensitive; SEARCH ignores case).",
    examples=['CONTAINS("abc", "b") -> TRUE', 'CONTAINS("abc", "B") -> FALSE',
              'CONTAINS("abc", "") -> TRUE'],
)


# ----------------------------------------------------------------------- before / after / split


_BEFORE_AFTER_PARAMS = (
    p("text", TEXT), p("delimiter", many(TEXT)), p("instance_num", NUMBER, 1),
    p("match_mode", NUMBER, 0), p("match_end", NUMBER, 0), p("if_not_found", optional(TEXT), None),
)


@builtin(
    "TEXTBEFORE",
    sig(*_BEFORE_AFTER_PARAMS, returns=TEXT),
    doc="The text before the instance_num-th delimiter (negative: counted from the end); "
        "match_mode 1 ignores case, match_end 1 treats the end as a delimiter.",
    examples=['TEXTBEFORE("a-b-c", "-") -> "a"', 'TEXTBEFORE("a-b-c", "-", 2) -> "a-b"',
              'TEXTBEFORE("a-b-c", "-", -1) -> "a-b"', 'TEXTBEFORE("abc", "x") -> #N/A',
              'TEXTBEFORE("abc", "x", 1, 0, 0, "none") -> "none"',
              'TEXTBEFORE("abc", "x", 1, 0, 1) -> "abc"', 'TEXTBEFORE("aXb", "x", 1, 1) -> "a"',
              'TEXTBEFORE("abc", "b", 0) -> #VALUE!'],
    cost=Cost.linear(1, 10),  # per delimiter in a list
    errors=("#VALUE!", "#N/A"),
)
def textbefore(text: str, delimiter: Any, instance_num: Decimal | int = 1,
               match_mode: Decimal | int = 0, match_end: Decimal | int = 0,
               if_not_found: str | None = None) -> str:
    if not text:
        return ""  # Excel: an empty text gives empty text
    span = before_after("TEXTBEFORE", text, delimiter, instance_num, match_mode, match_end,
                         if_not_found)
    return span if isinstance(span, str) else text[:span[0]]


@builtin(
    "TEXTAFTER",
    sig(*_BEFORE_AFTER_PARAMS, returns=TEXT),
    doc="The text after the instance_num-th delimiter (negative: counted from the end); "
        "match_mode 1 ignores case, match_end 1 treats the end as a delimiter.",
    examples=['TEXTAFTER("a-b-c", "-") -> "b-c"', 'TEXTAFTER("a-b-c", "-", -1) -> "c"',
              'TEXTAFTER("a-b-c", "-", 3) -> #N/A', 'TEXTAFTER("abc", "", -1) -> ""',
              'TEXTAFTER("a, b; c", [";", ","]) -> " b; c"',
              'TEXTAFTER("abc", "B", 1, 1) -> "c"'],
    cost=Cost.linear(1, 10),  # per delimiter in a list
    errors=("#VALUE!", "#N/A"),
)
def textafter(text: str, delimiter: Any, instance_num: Decimal | int = 1,
              match_mode: Decimal | int = 0, match_end: Decimal | int = 0,
              if_not_found: str | None = None) -> str:
    if not text:
        return ""
    span = before_after("TEXTAFTER", text, delimiter, instance_num, match_mode, match_end,
                         if_not_found)
    return span if isinstance(span, str) else text[span[1]:]


@builtin(
    "TEXTSPLIT",
    sig(p("text", TEXT), p("col_delimiter", many(TEXT)), p("row_delimiter", optional(TEXT), None),
        p("ignore_empty", BOOLEAN, False), p("match_mode", NUMBER, 0), returns=list_of(TEXT)),
    doc="The text split at each delimiter into a list (1-D: a row_delimiter is #VALUE!); "
        "ignore_empty drops empty pieces, match_mode 1 ignores case.",
    examples=['TEXTSPLIT("a,b,,c", ",") -> ["a", "b", "", "c"]',
              'TEXTSPLIT("a,b,,c", ",", BLANK(), TRUE) -> ["a", "b", "c"]',
              'TEXTSPLIT("a-b+c", ["-", "+"]) -> ["a", "b", "c"]',
              'TEXTSPLIT("aXbxc", "x", BLANK(), FALSE, 1) -> ["a", "b", "c"]',
              'TEXTSPLIT("abc", "") -> #VALUE!', 'TEXTSPLIT("a;b", ",", ";") -> #VALUE!'],
    cost=Cost.linear(1, 10),  # per delimiter in a list
    needs_ctx=True,
    errors=("#VALUE!",),
)
def textsplit(ctx: Any, text: str, col_delimiter: Any, row_delimiter: str | None = None,
              ignore_empty: bool = False, match_mode: Decimal | int = 0) -> tuple[str, ...]:
    if row_delimiter:
        raise XLError(VALUE, "TEXTSPLIT returns a 1-D list: row_delimiter is not supported "
                             "(split into rows first, then MAP over them)")
    delims = delimiters(col_delimiter)
    if not delims or any(d == "" for d in delims):
        raise XLError(VALUE, "TEXTSPLIT needs a non-empty delimiter")
    pieces: list[str] = []
    last = 0
    for start, end in delimiter_spans(text, delims, flag(match_mode, "TEXTSPLIT")):
        piece = text[last:start]
        last = end
        if piece or not ignore_empty:
            pieces.append(piece)
            if len(pieces) >= ctx.max_list:  # the list limit, before the next piece
                ctx.check_list(len(pieces) + 1)
    tail = text[last:]
    if tail or not ignore_empty:
        pieces.append(tail)
    ctx.check_list(len(pieces))  # once, for the memory budget (the pieces fit the text's size)
    return tuple(pieces)


# ------------------------------------------------------------------------------ characters, URLs


@builtin(
    "CHAR",
    sig(p("number", NUMBER), returns=TEXT),
    doc="The character with code 1-255, read as Unicode/Latin-1 (Excel on Windows uses ANSI, "
        "which differs for 128-159).",
    examples=['CHAR(65) -> "A"', 'CHAR(233) -> "é"', 'CHAR(0) -> #VALUE!', 'CHAR(256) -> #VALUE!'],
    cost=Cost.const(1),
    errors=("#VALUE!",),
)
def char(number: Decimal | int) -> str:
    n = int(number)
    if not 1 <= n <= 255:
        raise XLError(VALUE, "CHAR needs a number from 1 to 255 (UNICHAR takes any code point)")
    return chr(n)


@builtin(
    "CODE",
    sig(p("text", TEXT), returns=NUMBER),
    doc="The Unicode code point of the text's first character (Excel on Windows gives the "
        "ANSI code, which differs above 127).",
    examples=['CODE("A") -> 65', 'CODE("abc") -> 97', 'CODE("") -> #VALUE!'],
    cost=Cost.const(1),
    errors=("#VALUE!",),
)
def code(text: str) -> int:
    if not text:
        raise XLError(VALUE, "CODE of an empty text")
    return ord(text[0])


@builtin(
    "UNICHAR",
    sig(p("number", NUMBER), returns=TEXT),
    doc="The character with a Unicode code point (1 to 1114111); #N/A for surrogates.",
    examples=['UNICHAR(66) -> "B"', 'UNICHAR(128512) -> "😀"', 'UNICHAR(0) -> #VALUE!',
              'UNICHAR(55296) -> #N/A'],
    cost=Cost.const(1),
    errors=("#VALUE!", "#N/A"),
)
def unichar(number: Decimal | int) -> str:
    n = int(number)
    if not 1 <= n <= _MAX_CODE_POINT:
        raise XLError(VALUE, "UNICHAR needs a code point from 1 to 1114111")
    if 0xD800 <= n <= 0xDFFF:
        raise XLError(NA, "UNICHAR of a surrogate code point")
    return unicodedata.normalize("NFC", chr(n))


@builtin(
    "UNICODE",
    sig(p("text", TEXT), returns=NUMBER),
    doc="The Unicode code point of the text's first character.",
    examples=['UNICODE("B") -> 66', 'UNICODE("😀x") -> 128512', 'UNICODE("") -> #VALUE!'],
    cost=Cost.const(1),
    errors=("#VALUE!",),
)
def unicode_(text: str) -> int:
    if not text:
        raise XLError(VALUE, "UNICODE of an empty text")
    return ord(text[0])


_URL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


@builtin(
    "ENCODEURL",
    sig(p("text", TEXT), returns=TEXT),
    doc="The text percent-encoded as UTF-8 for a URL (only A-Z a-z 0-9 - . _ ~ stay).",
    examples=['ENCODEURL("a b&c") -> "a%20b%26c"', 'ENCODEURL("é") -> "%C3%A9"',
              'ENCODEURL("http://x.org/?q=1") -> "http%3A%2F%2Fx.org%2F%3Fq%3D1"'],
    cost=Cost.const(3),
    needs_ctx=True,
    can_error=False,
)
def encodeurl(ctx: Any, text: str) -> str:
    data = text.encode("utf-8", "surrogatepass")
    safe = _URL_SAFE
    ctx.check_text(sum(1 if chr(b) in safe else 3 for b in data))
    return "".join(chr(b) if chr(b) in safe else f"%{b:02X}" for b in data)


# ------------------------------------------------------------------------------- conversions


@builtin(
    "VALUE",
    sig(p("text", TEXT), returns=NUMBER),
    doc="The number a text shows, read as Excel (en-US) does: \"1,234.5\", \"15%\", \"$1,000\", "
        "\"(5)\", \"1e3\", \"1 1/2\", \"12:30\" (a fraction of a day); dates are #VALUE!.",
    examples=['VALUE("1,234.5") -> 1234.5', 'VALUE(" 15% ") -> 0.15', 'VALUE("$1,000") -> 1000',
              'VALUE("(12)") -> -12', 'VALUE("1e3") -> 1000', 'VALUE("18:00") -> 0.75',
              'VALUE("abc") -> #VALUE!', 'VALUE("") -> #VALUE!'],
    cost=Cost.const(5),
    errors=("#VALUE!",),
)
def value(text: str) -> Decimal | int:
    return parse_number_text(text)


@builtin(
    "NUMBERVALUE",
    sig(p("text", TEXT), p("decimal_separator", TEXT, "."), p("group_separator", TEXT, ","),
        returns=NUMBER),
    doc="The number in a text with the given decimal and group separators (first character "
        "of each); spaces are ignored, trailing % divide by 100 each, \"\" is 0.",
    examples=['NUMBERVALUE("2.500,27", ",", ".") -> 2500.27', 'NUMBERVALUE("3.5%") -> 0.035',
              'NUMBERVALUE(" 3 000 ") -> 3000', 'NUMBERVALUE("") -> 0',
              'NUMBERVALUE("1,5", ",", ",") -> #VALUE!', 'NUMBERVALUE("1.2.3") -> #VALUE!'],
    cost=Cost.const(5),
    errors=("#VALUE!",),
)
def numbervalue(text: str, decimal_separator: str = ".",
                group_separator: str = ",") -> Decimal | int:
    return parse_numbervalue(text, decimal_separator, group_separator)


def _text_checked(ctx: Any, value: Any, format_text: str) -> str:
    if isinstance(value, (str, bool)):
        # A text section repeats the value at each "@": its length is checked before joining.
        return format_value(value, format_text, ctx.check_text)
    out = format_value(value, format_text)
    # A number's text is bounded by a few times the format's length, so it is measured after
    # formatting; no unbounded allocation can happen before this check.
    ctx.check_text(len(out))
    return out


_TEXT_OF_TIME = Refuse("date, time and duration format codes (serial numbers, month and day "
                       "names, elapsed time) are not reproduced natively")


@builtin(
    "TEXT",
    sig(p("value", NUMBER), p("format_text", TEXT), returns=TEXT),
    sig(p("value", DATE), p("format_text", TEXT), returns=TEXT,
        polars=_TEXT_OF_TIME, sql=_TEXT_OF_TIME),
    sig(p("value", DATETIME), p("format_text", TEXT), returns=TEXT,
        polars=_TEXT_OF_TIME, sql=_TEXT_OF_TIME),
    sig(p("value", DURATION), p("format_text", TEXT), returns=TEXT,
        polars=_TEXT_OF_TIME, sql=_TEXT_OF_TIME),
    sig(p("value", BOOLEAN), p("format_text", TEXT), returns=TEXT),
    sig(p("value", TEXT), p("format_text", TEXT), returns=TEXT),
    doc="The value shown with an Excel format code: 0 # ? , . % E+ \"text\" and sections "
        "pos;neg;zero;text, date/time codes yyyy mm dd hh:mm:ss AM/PM [h]; \"General\".",
    examples=['TEXT(1234.567, "#,##0.00") -> "1,234.57"', 'TEXT(0.285, "0.0%") -> "28.5%"',
              'TEXT(2.5, "0") -> "3"', 'TEXT(-2.5, "0") -> "-3"',
              'TEXT(12200000, "0.00E+00") -> "1.22E+07"',
              'TEXT(DATE(2024, 1, 5), "dddd, mmmm d, yyyy") -> "Friday, January 5, 2024"',
              'TEXT(-5, "0;(0)") -> "(5)"', 'TEXT(1/3, "General") -> "0.333333333333333"',
              'TEXT(1, "[Foo]0") -> #VALUE!'],
    # 14-26 µs measured for number formats, plus 45-61 units per code point of a long
    # format code, unloaded (bench/security_costs.py): 128 keeps a 2x margin
    cost=Cost.text(128, 300),
    needs_ctx=True,
    errors=("#VALUE!",),
)
def text(ctx: Any, value: Any, format_text: str) -> str:
    if type(value) is str:
        # Excel formats a text that reads as a number as that number: TEXT("5", "0.00") = "5.00".
        try:
            value = parse_number_text(value)
        except XLError:
            pass
    return _text_checked(ctx, value, format_text)


__all__: list[str] = []
