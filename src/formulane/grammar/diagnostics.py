"""Explaining a failed parse: the linear pre-scan and the diagnostics for lexer and parser
failures. No lark here (only ``parser.py`` and ``table.py`` import it): the engine reports a
failure as `LexFailure` or `SyntaxFailure` and `diagnose` turns it into a ParseError with a
span, a label and, where the intent can be guessed, a hint and machine-applicable fixes.

`prescan` runs before the parse, in one linear pass: strings, comments and braces must close
(E103, E106, E105), bracket depth, argument counts and a lower bound on the node count are
checked against the limits (E403, E404, E402), and what it learns about brackets and ``;`` is
kept for the diagnostics, which report it only if the parse fails too.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, NamedTuple, NoReturn

from ..errors import Fix, LimitExceeded, ParseError
from ..limits import Limits
from ..source import Span, line_col

__all__ = ["LexFailure", "SyntaxFailure", "Scan", "Tok", "diagnose", "parse_error", "prescan",
           "raise_limit", "LAMBDA_HINT", "LAMBDA_MESSAGE"]

LAMBDA_MESSAGE = "a lambda can only be an argument of a function call"
LAMBDA_HINT = "pass it to a function such as MAP, FILTER or REDUCE: MAP(xs, x => x * 2)"


class Tok(NamedTuple):
    """A token as the builder sees it (the fallback path passes Lark tokens, which quack alike)."""

    type: str
    value: str
    start_pos: int
    end_pos: int



@dataclass(eq=False)
class LexFailure(Exception):
    """No terminal matches at ``pos``."""

    pos: int


@dataclass(eq=False)
class SyntaxFailure(Exception):
    """``token`` is not acceptable; ``expected`` names the terminals that were, ``stack`` holds
    the values parsed so far (nodes and tokens)."""

    token: Tok
    expected: set[str]
    stack: list[Any]



# ---- Pre-scan: linear, before lark -----------------------------------------------------------

_SCAN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<comment>/\*)
      | (?P<quote>["'])
      | (?P<brace>\{)
      | (?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
      | (?P<func>[^\W\d]\w*+(?:\.\w++){0,3}+(?=\())
      | (?P<word>[^\W\d]\w*+)
      | (?P<op>==|<>|!=|<=|>=|&&|\|\||\?\?|=>|[-+*/^&%.=<>!])
      | (?P<open>[(\[])
      | (?P<close>[)\]])
      | (?P<comma>,)
      | (?P<semi>;)
      | (?P<other>.)""",
    re.X | re.S,
)
_STRING_BODY = {'"': re.compile(r'"(?:[^"]|"")*+'), "'": re.compile(r"'(?:[^']|'')*+")}
_CLOSER = {"(": ")", "[": "]"}
_OPENER = {")": "(", "]": "["}
_KEYWORD_OPS = frozenset({"and", "or", "not"})
_OTHER_QUOTE = {'"': "'", "'": '"'}


@dataclass(slots=True)
class Scan:
    """What the pre-scan learned; bracket problems are reported only if lark fails too."""

    open_brackets: list[tuple[str, int]] = field(default_factory=list)
    mismatch: tuple[int, str, int] | None = None  # (closer pos, opener char, opener pos)
    stray: int | None = None  # position of a closer with nothing to close
    semicolons: list[int] = field(default_factory=list)
    digit_commas: list[int] = field(default_factory=list)  # "1,5": a decimal comma, if ';' seps
    first: tuple[str, int, int] | None = None  # first significant token: (kind, start, end)
    second: int | None = None  # start of the second significant token


def _where(text: str, offset: int) -> str:
    line, col = line_col(text, offset)
    return f"{line}:{col}"


def raise_limit(code: str, message: str, span: Span, label: str, hint: str, text: str) -> NoReturn:
    raise LimitExceeded(message, code=code, span=span, label=label, hint=hint, source=text)


def prescan(text: str, limits: Limits) -> Scan:
    scan = Scan()
    stack: list[list[Any]] = []  # [opener char, position, commas seen]
    operators = 0  # each operator token makes exactly one node: a lower bound on the count
    pos, end = 0, len(text)
    match = _SCAN.match
    while pos < end:
        m = match(text, pos)
        assert m is not None  # the last alternative matches any character
        kind, start, pos = m.lastgroup, m.start(), m.end()
        if kind == "ws":
            continue
        if kind == "comment":
            close = text.find("*/", start + 2)
            if close < 0:
                raise ParseError(
                    "unterminated comment", code="E106", span=Span(start, end),
                    label="this comment is never closed", hint="close it with */",
                    fixes=(Fix(Span(end, end), " */", "close the comment"),), source=text)
            pos = close + 2
            continue
        if kind == "quote":
            _scan_string(text, start)
            pos = _string_body_end(text, start) + 1
        elif kind == "brace":
            close = text.find("}", start + 1)
            if close < 0:
                raise ParseError(
                    "expected '}' to close the '{'", code="E105", span=Span(start, start + 1),
                    label="this '{' is never closed",
                    hint="names in braces end with '}', like {Unit Price}",
                    fixes=(Fix(Span(end, end), "}", "close the name"),), source=text)
            pos = close + 1
        elif kind == "open":
            stack.append([text[start], start, 0])
            if len(stack) > limits.max_depth:
                raise_limit("E403", f"nesting too deep: more than {limits.max_depth} levels",
                            Span(start, start + 1), f"level {len(stack)}",
                            "split the formula with LET, or flatten nested calls", text)
        elif kind == "close":
            char = text[start]
            if not stack:
                if scan.stray is None:
                    scan.stray = start
            else:
                opener, opened, _ = stack.pop()
                if _CLOSER[opener] != char and scan.mismatch is None:
                    scan.mismatch = (start, opener, opened)
        elif kind == "comma":
            if 0 < start < end - 1 and text[start - 1].isdigit() and text[start + 1].isdigit():
                scan.digit_commas.append(start)
            if stack:
                stack[-1][2] += 1
                if stack[-1][2] >= limits.max_arguments:
                    raise_limit("E404",
                                f"too many arguments: more than {limits.max_arguments} in one call "
                                "or list", Span(start, start + 1),
                                f"more than {limits.max_arguments} items from here",
                                "split the list or the call", text)
        elif kind == "semi":
            scan.semicolons.append(start)
        elif kind == "op" or (kind == "word" and m.group().lower() in _KEYWORD_OPS):
            if scan.first is not None or m.group() != "=":  # a leading '=' is no node
                operators += 1
            if operators > limits.max_nodes:
                raise_limit("E402", f"too many nodes: more than {limits.max_nodes}",
                            Span(start, pos), "the formula is already too large here",
                            "split the formula, or use SUM(...) over a list", text)
        if scan.first is None:
            scan.first = (str(kind), start, pos)
        elif scan.second is None:
            scan.second = start
    scan.open_brackets = [(opener, opened) for opener, opened, _ in stack]
    return scan


def _string_body_end(text: str, start: int) -> int:
    """End of the string starting at ``start``, before its closing quote (if it has one)."""
    m = _STRING_BODY[text[start]].match(text, start)
    assert m is not None  # the pattern matches its own opening quote
    return m.end()


def _scan_string(text: str, start: int) -> None:
    """Raise E103 if the string starting at ``start`` is never closed."""
    quote = text[start]
    body_end = _string_body_end(text, start)
    if body_end < len(text):
        return
    end = len(text)
    other = _OTHER_QUOTE[quote]
    fixes = (Fix(Span(end, end), quote, f"close the text with {quote}"),)
    hint = f"close the text with {quote}"
    # A closing quote of the other kind, followed by something that can follow a value,
    # is most likely a mismatched pair: "abc' -> "abc".
    for m in re.finditer(re.escape(other) + r"(?=\s*(?:$|[,)\]&+\-*/=<>;]))", text[start + 1:]):
        at = start + 1 + m.start()
        fixes = (Fix(Span(at, at + 1), quote, f"end the text with {quote}"),)
        hint = (f"the text starts with {quote} but ends with {other}; "
                "use the same quote on both sides")
        break
    raise ParseError("unterminated string", code="E103", span=Span(start, end),
                     label="this text is never closed", hint=hint, fixes=fixes, source=text)


# ---- Turning lark's errors into diagnostics --------------------------------------------------

_VALUE_STARTS = frozenset({
    "NUMBER", "PERCENT_NUMBER", "STRING", "TRUE", "FALSE", "NULL", "IDENT", "BRACED",
    "FUNCNAME", "LPAR", "LSQB", "PLUS", "MINUS", "NOT",
})
_OPERATORS = frozenset({
    "COALESCE", "OR", "AND", "CMP", "AMP", "PLUS", "MINUS", "STAR", "SLASH", "CARET",
    "PERCENT", "DOT", "LSQB",
})
_PUNCT = (("COMMA", "','"), ("RPAR", "')'"), ("RSQB", "']'"), ("$END", "the end of the formula"))
_CHAR_HINTS: dict[str, str] = {
    "$": "'$' is not needed: refer to fields by name (cell references are not supported)",
    "`": "use {...} for names with spaces, or \"...\" for text",
    "#": 'error values are written as functions: NA(), ERROR("message")',
    ":": "ranges like A1:B3 are not supported; use a list like [a, b, c]",
    "\\": 'there are no backslash escapes; inside "..." write "" for a quote',
    "|": "use 'or' (or '||')",
    "?": "use '??' to give a default for a blank value, or IF(condition, a, b)",
    "@": "'@' is not needed: refer to fields by name",
    "}": "'}' closes a name in braces, like {Unit Price}; there is no '{' here",
}
_CHAR_FIXES = {"|": "||", "$": ""}
_SMART_QUOTES = {"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"}


def _context(text: str, pos: int) -> tuple[str, int] | None:
    """The innermost bracket still open at ``pos``: ("call" | "(" | "[", its offset)."""
    stack: list[tuple[str, int]] = []
    at = 0
    while at < pos:
        m = _SCAN.match(text, at)
        assert m is not None
        kind, start, at = m.lastgroup, m.start(), m.end()
        if kind == "comment":
            at = text.find("*/", start + 2) + 2
        elif kind == "quote":
            at = _string_body_end(text, start) + 1
        elif kind == "brace":
            at = text.find("}", start + 1) + 1
        elif kind == "open":
            stack.append((_bracket_kind(text, start), start))
        elif kind == "close" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _word_start(text: str, end: int) -> int:
    """Start of the run of word characters and dots ending at ``end`` (scans only that run)."""
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "._"):
        start -= 1
    return start


def _name_before(text: str, end: int) -> str:
    """The identifier or dotted name ending exactly at ``end``, or ""."""
    word = text[_word_start(text, end):end].lstrip(".")
    return word if word[:1].isalpha() or word[:1] == "_" else ""


def _bracket_kind(text: str, start: int) -> str:
    """"call" for f(, "index" for xs[, else the bracket itself ("(" grouping, "[" list)."""
    if text[start] == "(":
        return "call" if _name_before(text, start) else "("
    end = _skip_back(text, start)
    word = _name_before(text, end)
    ends_value = text[end - 1:end] in (")", "]", "}", '"', "'") or (
        word != "" and word.lower() not in _KEYWORD_OPS) or text[end - 1:end].isdigit()
    return "index" if ends_value else "["


def _plausible(expected: set[str], context: tuple[str, int] | None) -> set[str]:
    """Drop the closers LALR state merging offers that cannot apply at this nesting."""
    if context is None:
        return expected - {"COMMA", "RPAR", "RSQB"}
    drop = {
        "[": {"RPAR", "$END"}, "index": {"RPAR", "$END", "COMMA"},
        "(": {"RSQB", "$END", "COMMA"}, "call": {"RSQB", "$END"},
    }[context[0]]
    return expected - drop


def _describe_expected(expected: set[str]) -> str:
    parts: list[str] = []
    if "NUMBER" in expected:
        parts.append("a value")
    elif expected & {"IDENT", "BRACED"} and not expected & _OPERATORS:
        parts.append("a name")
    if expected & (_OPERATORS - {"PLUS", "MINUS", "LSQB"} if "NUMBER" in expected else _OPERATORS):
        parts.append("an operator")
    parts.extend(words for name, words in _PUNCT if name in expected)
    if not parts and "ARROW" in expected:
        parts.append("'=>'")
    if not parts:
        parts.append("something else")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


_TOKEN_WORDS = {"$END": "the end of the formula", "NUMBER": "the number {}",
                "PERCENT_NUMBER": "the number {}", "STRING": "the text {}",
                "IDENT": "the name '{}'", "BRACED": "the name {}", "FUNCNAME": "the function {}"}


def _describe_token(tok: Tok) -> str:
    value = str(tok.value) if len(tok.value) <= 24 else tok.value[:21] + "..."
    return _TOKEN_WORDS.get(tok.type, "'{}'").format(value.upper() if tok.type == "FUNCNAME"
                                                       else value)


def _skip_back(text: str, pos: int) -> int:
    """Offset just past the last significant character before ``pos`` (skips blanks, comments)."""
    while pos > 0:
        if text[pos - 1].isspace():
            pos -= 1
        elif text.startswith("*/", pos - 2) and text.rfind("/*", 0, pos - 2) >= 0:
            pos = text.rfind("/*", 0, pos - 2)
        else:
            break
    return pos


def parse_error(text: str, code: str, message: str, span: Span, label: str, hint: str = "",
           fixes: tuple[Fix, ...] = ()) -> ParseError:
    return ParseError(message, code=code, span=span, label=label, hint=hint, fixes=fixes,
                      source=text)


def _unexpected_character(text: str, pos: int, scan: Scan) -> ParseError:
    char = text[pos]
    span = Span(pos, pos + 1)
    shown = f"'{char}'" if char.isprintable() and not char.isspace() else f"U+{ord(char):04X}"
    if char == ";" and scan.digit_commas:
        # ';' between arguments and ',' in numbers: the European spreadsheet convention.
        # The fix turns both: ROUND(1,5; 2) -> ROUND(1.5, 2), which parses and means it.
        marks = sorted(scan.semicolons + scan.digit_commas)
        first, last = marks[0], marks[-1]
        chunk = list(text[first:last + 1])
        for at in scan.semicolons:
            chunk[at - first] = ","
        for at in scan.digit_commas:
            chunk[at - first] = "."
        return parse_error(text, "E104", "unexpected character ';'", span, "not a separator here",
                           "this looks written with ';' between arguments and ',' as the decimal "
                           "mark: use ',' between arguments and '.' in numbers",
                           (Fix(Span(first, last + 1), "".join(chunk),
                                "use ',' between arguments and '.' as the decimal mark"),))
    if char == ";":
        first, last = scan.semicolons[0], scan.semicolons[-1]
        chunk = list(text[first:last + 1])
        for at in scan.semicolons:
            chunk[at - first] = ","
        return parse_error(text, "E104", "unexpected character ';'", span, "not a separator here",
                           "separate arguments with ',' (not ';')",
                           (Fix(Span(first, last + 1), "".join(chunk),
                                "use ',' between arguments"),))
    if char in _SMART_QUOTES:
        straight = _SMART_QUOTES[char]
        fix = Fix(span, straight, "use a straight quote")
        for close in range(pos + 1, len(text)):
            if _SMART_QUOTES.get(text[close]) == straight:
                inner = text[pos + 1:close]
                if straight not in inner:
                    fix = Fix(Span(pos, close + 1), straight + inner + straight,
                              "use straight quotes")
                break
        return parse_error(text, "E104", f"unexpected character '{char}'", span, "curly quote",
                           f"use straight quotes ({straight}) around text", (fix,))
    if unicodedata.category(char) in ("Cf", "Cc", "Co", "Cn", "Zl", "Zp") and char != "\t":
        return parse_error(text, "E104", f"unexpected invisible character U+{ord(char):04X}", span,
                           "invisible character", "delete it (it was probably pasted by accident)",
                           (Fix(span, "", "delete the character"),))
    if char == "}":
        return parse_error(text, "E105", "unmatched '}'", span, "nothing to close",
                           _CHAR_HINTS["}"])
    fixes: tuple[Fix, ...] = ()
    close = text.find("`", pos + 1) if char == "`" else -1
    if close > pos + 1 and "}" not in text[pos + 1:close]:
        fixes = (Fix(Span(pos, close + 1), "{" + text[pos + 1:close] + "}", "use braces"),)
    elif char in _CHAR_FIXES:
        fixes = (Fix(span, _CHAR_FIXES[char], f"write {_CHAR_FIXES[char] or 'nothing'}"),)
    return parse_error(text, "E104", f"unexpected character {shown}", span, "not allowed here",
                       _CHAR_HINTS.get(char, ""), fixes)


def _bracket_error(text: str, tok: Tok, pos: int, scan: Scan) -> ParseError | None:
    """E105 when the parse failed exactly where the brackets stop matching."""
    if tok.type == "$END":
        if not scan.open_brackets:
            return None
        opener, opened = scan.open_brackets[-1]
        closing = "".join(_CLOSER[o] for o, _ in reversed(scan.open_brackets))
        return parse_error(text, "E105",
                           f"expected '{_CLOSER[opener]}' to close the '{opener}' at "
                           f"{_where(text, opened)}", Span(opened, opened + 1),
                           f"this '{opener}' is never closed",
                           f"add '{_CLOSER[opener]}' at the end",
                           (Fix(Span(len(text), len(text)), closing, "close the brackets"),))
    if scan.mismatch is not None and scan.mismatch[0] == pos:
        _, opener, opened = scan.mismatch
        want = _CLOSER[opener]
        return parse_error(text, "E105",
                           f"expected '{want}' to close the '{opener}' at {_where(text, opened)} "
                           f"but found '{tok.value}'", Span(pos, pos + 1), f"expected '{want}'",
                           f"'{opener}' is closed by '{want}'", (Fix(Span(pos, pos + 1), want),))
    if scan.stray is not None and scan.stray == pos:
        return parse_error(text, "E105", f"unmatched '{tok.value}'", Span(pos, pos + 1),
                           "nothing to close", f"there is no '{_OPENER[tok.value]}' before it",
                           (Fix(Span(pos, pos + 1), "", f"remove the '{tok.value}'"),))
    return None


def _modulo_fix(text: str, stack: list[Any], tok: Tok) -> tuple[Fix, ...]:
    """``a % b`` -> ``MOD(a, b)`` when both operands are easy to find."""
    left: Span | None = None
    top: Any = stack[-1] if stack else None
    if getattr(top, "type", None) == "PERCENT_NUMBER":  # a token: ours or Lark's
        left = Span(top.start_pos, top.start_pos + len(top.value[:-1].rstrip()))
    elif len(stack) >= 2 and hasattr(top, "type") and hasattr(stack[-2], "span"):
        left = stack[-2].span
    after = text[tok.end_pos:].lstrip()[:1]
    if left is None or tok.type not in ("NUMBER", "IDENT", "BRACED") or (
            after and after in ".([%^"):
        return ()
    replacement = f"MOD({text[left.start:left.end]}, {tok.value})"
    return (Fix(Span(left.start, tok.end_pos), replacement, "use MOD for the remainder"),)


def diagnose(text: str, failure: LexFailure | SyntaxFailure, scan: Scan) -> ParseError:
    """The diagnostic for a failed parse; a plain E101 if explaining it goes wrong."""
    try:
        if isinstance(failure, LexFailure):
            return _unexpected_character(text, failure.pos, scan)
        return _unexpected_token(text, failure, scan)
    except Exception:  # noqa: BLE001 - a weak message beats an exception the contract forbids
        pos = failure.pos if isinstance(failure, LexFailure) else failure.token.start_pos
        pos = min(pos, len(text))
        return parse_error(text, "E101", "unexpected input", Span(pos, min(pos + 1, len(text))),
                           "here")


def _unexpected_token(text: str, failure: SyntaxFailure, scan: Scan) -> ParseError:
    tok = failure.token
    at_end = tok.type == "$END"
    pos = len(text) if at_end else tok.start_pos
    bracket = _bracket_error(text, tok, pos, scan)
    # After a comma a call could also close (an omitted argument), but a value is the likelier
    # intent: "SUM(1," says "expected a value".
    after_comma = text[_skip_back(text, pos) - 1:_skip_back(text, pos)] == ","
    if bracket is not None and (not at_end or (failure.expected & {"RPAR", "RSQB"}
                                               and not after_comma)):
        return bracket
    context = _context(text, pos)
    expected = _plausible(failure.expected, context)
    if after_comma and "NUMBER" in expected:
        expected -= {"COMMA", "RPAR"}  # an omitted argument is allowed, but not the likely intent
    want = _describe_expected(expected)
    span = Span(pos, pos) if at_end else Span(pos, max(pos + 1, tok.end_pos))
    prev = _skip_back(text, pos)
    before = text[prev - 1] if prev else ""
    if expected == {"ARROW"}:
        hint = ("names in parentheses separated by ',' are a lambda's parameters: "
                "(a, b) => a + b; for a list write [a, b]")
        inside = _skip_back(text, prev - 1) if before == ")" else 0
        if inside and text[inside - 1] == "(":
            hint = "empty parentheses start a lambda without parameters: () => 1"
        found = "the formula ended" if at_end else f"found {_describe_token(tok)}"
        return parse_error(text, "E102" if at_end else "E101", f"expected '=>' but {found}", span,
                           "expected '=>'", hint)
    if at_end:
        hint = ""
        if scan.open_brackets:
            opener, opened = scan.open_brackets[-1]
            hint = f"the '{opener}' at {_where(text, opened)} is not closed either"
        return parse_error(text, "E102", f"expected {want} but the formula ended", span,
                           f"expected {want} here", hint)
    message = f"expected {want} but found {_describe_token(tok)}"
    label = f"expected {want}"
    if tok.type == "STAR" and before == "*" and prev == pos:
        return parse_error(text, "E101", "'**' is not an operator", Span(pos - 1, pos + 1),
                           "use '^' for powers", "powers are written with '^', like 2 ^ 3",
                           (Fix(Span(pos - 1, pos + 1), "^", "use ^"),))
    start = _word_start(text, pos)
    if tok.type in ("IDENT", "NUMBER", "PERCENT_NUMBER") and prev == pos \
            and re.fullmatch(r"\.?[0-9][0-9.eE+-]*", text[start:pos]):
        bad = text[start:tok.end_pos]
        hint = "numbers look like 12, 1.5, .5, 1e-3 or 15%"
        if tok.type == "IDENT" and not re.fullmatch(r"[eE][0-9]*", tok.value):
            hint += f"; to multiply, write {text[start:pos]} * {tok.value}"
        return parse_error(text, "E107", f"invalid number '{bad}'", Span(start, tok.end_pos),
                           "not a number", hint)
    if tok.type == "CMP" and tok.value in "<>" and before == "=" and prev == pos:
        fixed = tok.value + "="
        return parse_error(text, "E101", f"'={tok.value}' is not an operator",
                           Span(pos - 1, pos + 1), f"did you mean '{fixed}'?", f"write '{fixed}'",
                           (Fix(Span(pos - 1, pos + 1), fixed, f"use {fixed}"),))
    if tok.type == "COMMA" and before in (",", "[") and context is not None \
            and context[0] == "[":
        return parse_error(text, "E101", message, span, label,
                           "a list item is missing; write a value (BLANK() for an empty one)")
    if tok.type == "COMMA" and context is None:
        return parse_error(text, "E101", message, span, label,
                           "a formula is one expression; to combine values use a function like "
                           "SUM(a, b) or a list [a, b]")
    if tok.type == "ARROW":
        return parse_error(text, "E108", LAMBDA_MESSAGE, span, "lambda not allowed here",
                           LAMBDA_HINT)
    if before == "%" and tok.type in _VALUE_STARTS and "NUMBER" not in expected:
        return parse_error(text, "E101", message, span, label,
                           "'%' means percent here (15% is 0.15); for the remainder of a division "
                           "use MOD(a, b)", _modulo_fix(text, failure.stack, tok))
    if tok.type == "LPAR" and prev < pos and _name_before(text, prev):
        return parse_error(text, "E101", message, span, label,
                           "remove the space between the function name and '('",
                           (Fix(Span(prev, pos), "", "remove the space"),))
    if tok.type in ("RPAR", "RSQB") and before == ",":
        return parse_error(text, "E101", message, span, label, "remove the trailing ','",
                           (Fix(Span(prev - 1, prev), "", "remove the ','"),))
    if tok.type in _VALUE_STARTS and "NUMBER" not in expected and "COMMA" in expected \
            and context is not None and context[0] in ("call", "["):
        what = "arguments" if context[0] == "call" else "list items"
        return parse_error(text, "E101", message, span, label, f"separate {what} with ','",
                           (Fix(Span(prev, prev), ",", "insert ','"),))
    if tok.type == "NUMBER" and tok.value.startswith(".") and prev == pos:
        return parse_error(text, "E101", message, span, label,
                           "after '.' comes a field name; for an item of a list write xs[n]")
    if tok.type == "NOT" and "NOT" not in expected and "NUMBER" in expected:
        return parse_error(text, "E101", message, span, label,
                           "'not' binds more loosely than comparisons and arithmetic; wrap it in "
                           "parentheses: (not x)")
    if tok.type in ("AND", "OR", "NOT", "TRUE", "FALSE", "NULL") and before == "." \
            and expected & {"IDENT", "BRACED"}:
        word = str(tok.value)
        return parse_error(text, "E101", message, span, label,
                           f"'{word}' is a keyword; write a field named {word} as {{{word}}}",
                           (Fix(Span(tok.start_pos, tok.end_pos), "{" + word + "}",
                                "brace the name"),))
    return parse_error(text, "E101", message, span, label)

