"""Formula text to AST: the only module in formulane that imports lark.

Contract: ``parse(source, limits=None)`` returns a node from ``formulane.grammar.ast`` or raises
``ParseError`` (E101-E108) or ``LimitExceeded`` (E401-E404), never anything else, for any
string. Phases, cheapest first: source length; one linear pre-scan (strings, comments, braces,
bracket depth, argument counts, a lower bound on the node count); the LALR parse, which builds
nodes at each reduction (no tree, no recursion); then an iterative walk that checks the exact
node count, depth and argument counts and that lambdas appear only as call arguments. Every
error carries a span, a label and, where we can guess the intent, a hint and machine-applicable
fixes. Positions are character offsets into the original text (a leading ``=`` is blanked, not
removed, so offsets never shift).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, cast

from lark import Lark, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedToken

from ..errors import Fix, LimitExceeded, ParseError
from ..limits import DEFAULT_LIMITS, Limits
from ..source import Span, line_col
from .ast import (
    Binary, Boolean, Call, Index, Lambda, ListLit, Member, Name, Node, Number, String, Unary,
    children,
)

__all__ = ["parse"]

# ---- AST construction during the LALR parse --------------------------------------------------

_BINARY_OPS: dict[str, str] = {
    "==": "=", "=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
    "&&": "and", "and": "and", "||": "or", "or": "or", "??": "??",
    "&": "&", "+": "+", "-": "-", "*": "*", "/": "/", "^": "^",
}
_LAMBDA_MESSAGE = "a lambda can only be an argument of a function call"
_LAMBDA_HINT = "pass it to a function such as MAP, FILTER or REDUCE: MAP(xs, x => x * 2)"
#: Magnitudes from here up are not Numbers (the type is |x| < 1e308).
_MAX_ADJUSTED_EXPONENT = 307


class _Tok(NamedTuple):
    """A token as the builder sees it (the fallback path passes Lark tokens, which quack alike)."""

    type: str
    value: str
    start_pos: int
    end_pos: int


class _Reject(Exception):
    """Raised inside a parse callback; carries the ParseError to raise once lark has unwound."""

    def __init__(self, error: ParseError) -> None:
        super().__init__(error.message)
        self.error = error


def _tspan(tok: _Tok) -> Span:
    return Span(tok.start_pos, tok.end_pos)


def _reject(code: str, message: str, span: Span, label: str, hint: str = "",
            fixes: tuple[Fix, ...] = ()) -> NoReturn:
    raise _Reject(ParseError(message, code=code, span=span, label=label, hint=hint, fixes=fixes))


def _decimal(text: str, span: Span) -> Decimal:
    try:
        value = Decimal(text)
    except (InvalidOperation, ValueError):
        _reject("E107", f"invalid number '{text}'", span, "the exponent is out of range")
    if value and value.adjusted() > _MAX_ADJUSTED_EXPONENT:
        _reject("E107", f"number too large: '{text}'", span, "numbers must be below 1e308",
                "write a smaller number; the largest magnitude is just under 1e308")
    return value


def _name_of(tok: _Tok) -> str:
    if tok.type == "BRACED":
        inner = tok.value[1:-1]
        if not inner:
            _reject("E101", "a name in braces cannot be empty", _tspan(tok), "empty name",
                    "put the field name between the braces, like {Unit Price}")
        return inner
    return str(tok.value)


def _param_of(node: Node, what: str) -> tuple[str, Span]:
    if isinstance(node, Name) and not node.parenthesized:
        return node.name, node.span
    _reject("E101", f"{what} must be a plain name", node.span, "expected a parameter name",
            "parameters are names, like (acc, x) => acc + x")


class _Build:
    """Callbacks named after the grammar's aliases; each returns a node (or a Python list)."""

    def number(self, tok: _Tok) -> Number:
        span = _tspan(tok)
        return Number(_decimal(tok.value, span), span)

    def percent_number(self, tok: _Tok) -> Number:
        span = _tspan(tok)
        text = tok.value[:-1].rstrip()
        sign, digits, exponent = _decimal(text, span).as_tuple()
        # Shift the exponent by hand: Decimal.scaleb would round to the context precision.
        return Number(Decimal((sign, digits, int(exponent) - 2)), span)

    def string(self, tok: _Tok) -> String:
        quote = tok.value[0]
        return String(tok.value[1:-1].replace(quote + quote, quote), _tspan(tok))

    def boolean(self, tok: _Tok) -> Boolean:
        return Boolean(tok.type == "TRUE", _tspan(tok))

    def null(self, tok: _Tok) -> Call:
        span = _tspan(tok)
        return Call("BLANK", (), span, span)

    def name(self, tok: _Tok) -> Name:
        return Name(_name_of(tok), _tspan(tok))

    def call_empty(self, name: _Tok, lpar: _Tok, rpar: _Tok) -> Node:
        return self.call(name, lpar, [], rpar)

    def call(self, name: _Tok, lpar: _Tok, args: list[Node], rpar: _Tok) -> Node:
        upper = name.value.upper()
        span = Span(name.start_pos, rpar.end_pos)
        if upper != "LAMBDA":
            return Call(upper, tuple(args), span, _tspan(name))
        if not args:
            _reject("E101", "LAMBDA needs a body", span, "no body",
                    "the last argument is the body: LAMBDA(x, x * 2)")
        pairs = [_param_of(arg, "a LAMBDA parameter") for arg in args[:-1]]
        return Lambda(tuple(p for p, _ in pairs), args[-1], span, tuple(s for _, s in pairs))

    def args_start(self, first: Node) -> list[Node]:
        return [first]

    def args_more(self, items: list[Node], item: Node) -> list[Node]:
        items.append(item)  # a fresh list per parse; appending keeps long lists linear
        return items

    def params_start(self, first: _Tok, second: _Tok) -> list[_Tok]:
        return [first, second]

    def params_more(self, items: list[_Tok], item: _Tok) -> list[_Tok]:
        items.append(item)
        return items

    def list_empty(self, lsqb: _Tok, rsqb: _Tok) -> ListLit:
        return ListLit((), Span(lsqb.start_pos, rsqb.end_pos))

    def list_items(self, lsqb: _Tok, items: list[Node], rsqb: _Tok) -> ListLit:
        return ListLit(tuple(items), Span(lsqb.start_pos, rsqb.end_pos))

    def paren(self, lpar: _Tok, inner: Node, rpar: _Tok) -> Node:
        return replace(inner, parenthesized=True, span=Span(lpar.start_pos, rpar.end_pos))

    def binary(self, left: Node, op: _Tok, right: Node) -> Binary:
        return Binary(_BINARY_OPS[op.value.lower()], left, right,
                      Span(left.span.start, right.span.end), _tspan(op))

    def prefix(self, op: _Tok, operand: Node) -> Unary:
        symbol = "not" if op.type == "NOT" else op.value
        return Unary(symbol, operand, Span(op.start_pos, operand.span.end), _tspan(op))

    def percent(self, operand: Node, op: _Tok) -> Unary:
        return Unary("%", operand, Span(operand.span.start, op.end_pos), _tspan(op))

    def member(self, obj: Node, dot: _Tok, name: _Tok) -> Member:
        return Member(obj, _name_of(name), Span(obj.span.start, name.end_pos), _tspan(name))

    def index(self, obj: Node, lsqb: _Tok, idx: Node, rsqb: _Tok) -> Index:
        return Index(obj, idx, Span(obj.span.start, rsqb.end_pos))

    def lambda_one(self, param: _Tok, arrow: _Tok, body: Node) -> Lambda:
        return Lambda((_name_of(param),), body, Span(param.start_pos, body.span.end),
                      (_tspan(param),))

    def lambda_none(self, lpar: _Tok, rpar: _Tok, arrow: _Tok, body: Node) -> Lambda:
        return Lambda((), body, Span(lpar.start_pos, body.span.end), ())

    def lambda_paren(self, lpar: _Tok, param: Node, rpar: _Tok, arrow: _Tok,
                     body: Node) -> Lambda:
        name, span = _param_of(param, "a lambda parameter")
        return Lambda((name,), body, Span(lpar.start_pos, body.span.end), (span,))

    def lambda_many(self, lpar: _Tok, params: list[_Tok], rpar: _Tok, arrow: _Tok,
                    body: Node) -> Lambda:
        return Lambda(tuple(_name_of(p) for p in params), body,
                      Span(lpar.start_pos, body.span.end), tuple(_tspan(p) for p in params))


# The same callbacks for Lark's own ``transformer=`` path (the fallback engine). v_args only
# wraps methods defined on the class itself, so the functions are copied, not inherited.
_LarkBuilder = v_args(inline=True)(type("_LarkBuilder", (Transformer,), {
    key: value for key, value in vars(_Build).items() if not key.startswith("_")}))


@dataclass(eq=False)
class _LexFailure(Exception):
    """No terminal matches at ``pos``."""

    pos: int


@dataclass(eq=False)
class _SyntaxFailure(Exception):
    """``token`` is not acceptable; ``expected`` names the terminals that were, ``stack`` holds
    the values parsed so far (nodes and tokens)."""

    token: _Tok
    expected: set[str]
    stack: list[Any]


#: A reduction: (children count, rule name for the goto, builder method or None for a
#: pass-through ``?rule`` with one child, indices of the children kept or None for all).
_Reduce = tuple[int, str, Any, "tuple[int, ...] | None"]


class _Engine:
    """Lark's LALR(1) table driven by a small loop, with a lexer built from Lark's terminals.

    Lark's own parse loop spends most of its time hashing rule objects and wrapping callbacks;
    driving its table directly halves the cost of a short formula. The table comes from a
    private Lark attribute, so if a Lark release moves it, ``fast`` is False and parsing goes
    through Lark's public ``transformer=`` path instead, with identical results.
    """

    def __init__(self, grammar: str, *, fast: bool = True) -> None:
        self.fast = False
        self._builder = _Build()
        if fast:
            try:
                self._build_fast(grammar)
                self.fast = True
            except (AttributeError, KeyError, TypeError, ValueError, re.error):
                pass
        if not self.fast:
            self._lark = Lark(grammar, parser="lalr", lexer="basic", transformer=_LarkBuilder(),
                              maybe_placeholders=False, propagate_positions=False, cache=False)

    def _build_fast(self, grammar: str) -> None:
        lark = Lark(grammar, parser="lalr", lexer="basic", maybe_placeholders=False, cache=False)
        table = lark.parser.parser._parse_table
        # The same order as Lark's basic lexer: priority, then longest possible match. Lark's
        # rewriting of string terminals that a regex terminal also matches is not reproduced;
        # the grammar has none (keywords are prioritized regexes), and a test compares paths.
        terminals = sorted(lark.terminals, key=lambda t: (
            -t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
        self._names = {f"t{i}": t.name for i, t in enumerate(terminals)}
        self._scanner = re.compile("|".join(
            f"(?P<t{i}>{t.pattern.to_regexp()})" for i, t in enumerate(terminals)))
        self._ignore = frozenset(lark.ignore_tokens)
        actions: dict[Any, dict[str, tuple[bool, Any]]] = {}
        for state, row in table.states.items():
            actions[state] = {str(symbol): (True, arg) if action.name == "Shift" else
                              (False, self._reduction(arg)) for symbol, (action, arg) in
                              row.items()}
        self._actions = actions
        # Memo for _follow_chain: deterministic facts about the table, so sharing it between
        # threads is safe (at worst two threads compute the same entry).
        self._chains: dict[tuple[Any, Any, str], Any] = {}
        self._start = table.start_states["start"]
        self._end = table.end_states["start"]

    def _reduction(self, rule: Any) -> _Reduce:
        size, origin = len(rule.expansion), str(rule.origin.name)
        if rule.alias is None:
            if size == 1 and rule.options.expand1:
                return (size, origin, None, None)
            raise ValueError(f"grammar rule {origin} needs an alias")
        keep = tuple(i for i, sym in enumerate(rule.expansion)
                     if not (sym.is_term and sym.filter_out))
        return (size, origin, getattr(self._builder, rule.alias),
                None if len(keep) == size else keep)

    def _follow_chain(self, below: Any, state: Any, kind: str) -> Any:
        """The state a run of pass-through reductions ends in, on lookahead ``kind``."""
        while state != self._end:
            act = self._actions[state].get(kind)
            if act is None or act[0] or act[1][2] is not None:
                break
            state = self._actions[below][act[1][1]][1]
        return state

    def parse(self, text: str) -> Node:
        if not self.fast:
            return self._parse_lark(text)
        actions, scanner, names, ignore = self._actions, self._scanner, self._names, self._ignore
        states: list[Any] = [self._start]
        values: list[Any] = []
        pos, length = 0, len(text)
        while True:
            if pos < length:
                m = scanner.match(text, pos)
                if m is None:
                    raise _LexFailure(pos)
                kind, end = names[m.lastgroup], m.end()  # type: ignore[index]
                if kind in ignore:
                    pos = end
                    continue
                token = _Tok(kind, m.group(), pos, end)
                pos = end
            else:
                kind, token = "$END", _Tok("$END", "", length, length)
            first = actions[states[-1]]
            while True:
                row = actions[states[-1]]
                act = row.get(kind)
                if act is None:
                    # LALR may reduce before noticing the error; what the first state
                    # accepted describes the position better than the last one alone.
                    expected = {k for k in first if k.isupper()} | {k for k in row if k.isupper()}
                    raise _SyntaxFailure(token, expected - {kind}, values)
                if act[0]:
                    states.append(act[1])
                    values.append(token)
                    break
                size, origin, method, keep = act[1]
                if method is None:
                    # A ?rule with one child: follow the whole chain (atom -> postfix -> ...
                    # -> expr) in one step; where it ends depends only on these three facts.
                    key = (states[-2], states[-1], kind)
                    top = self._chains.get(key)
                    if top is None:
                        top = self._chains[key] = self._follow_chain(*key)
                    states[-1] = top
                    if kind == "$END" and top == self._end:
                        return values[-1]  # type: ignore[no-any-return]
                    continue
                popped = values[-size:]
                del values[-size:]
                del states[-size:]
                values.append(method(*popped) if keep is None else
                              method(*[popped[i] for i in keep]))
                goto = actions[states[-1]][origin][1]
                states.append(goto)
                if kind == "$END" and goto == self._end:
                    return values[-1]  # type: ignore[no-any-return]

    def _parse_lark(self, text: str) -> Node:
        try:
            return cast(Node, self._lark.parse(text))
        except UnexpectedCharacters as err:
            raise _LexFailure(int(err.pos_in_stream or 0)) from None
        except UnexpectedToken as err:
            tok = err.token
            token = _Tok("$END", "", len(text), len(text)) if tok.type == "$END" else _Tok(
                tok.type, str(tok.value), int(tok.start_pos or 0), int(tok.end_pos or 0))
            stack = list(getattr(err.state, "value_stack", None) or [])
            raise _SyntaxFailure(token, set(err.expected), stack) from None


_engine: _Engine | None = None
_engine_lock = threading.Lock()


def _get_engine() -> _Engine:
    """The process-wide engine, built on first use (about 0.1 s), never cached on disk."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                _engine = _Engine(_grammar())
    return _engine


def _grammar() -> str:
    return Path(__file__).with_name("formula.lark").read_text("utf-8")


# ---- Pre-scan: linear, before lark -----------------------------------------------------------

_SCAN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<comment>/\*)
      | (?P<quote>["'])
      | (?P<brace>\{)
      | (?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
      | (?P<func>[^\W\d]\w*+(?:\.[^\W\d]\w*+){0,3}+(?=\())
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
class _Scan:
    """What the pre-scan learned; bracket problems are reported only if lark fails too."""

    open_brackets: list[tuple[str, int]] = field(default_factory=list)
    mismatch: tuple[int, str, int] | None = None  # (closer pos, opener char, opener pos)
    stray: int | None = None  # position of a closer with nothing to close
    semicolons: list[int] = field(default_factory=list)
    first: tuple[str, int, int] | None = None  # first significant token: (kind, start, end)
    second: int | None = None  # start of the second significant token


def _where(text: str, offset: int) -> str:
    line, col = line_col(text, offset)
    return f"{line}:{col}"


def _limit(code: str, message: str, span: Span, label: str, hint: str, text: str) -> NoReturn:
    raise LimitExceeded(message, code=code, span=span, label=label, hint=hint, source=text)


def _prescan(text: str, limits: Limits) -> _Scan:
    scan = _Scan()
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
                _limit("E403", f"nesting too deep: more than {limits.max_depth} levels",
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
            if stack:
                stack[-1][2] += 1
                if stack[-1][2] >= limits.max_arguments:
                    _limit("E404",
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
                _limit("E402", f"too many nodes: more than {limits.max_nodes}",
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
_PUNCT = (("_COMMA", "','"), ("RPAR", "')'"), ("RSQB", "']'"), ("$END", "the end of the formula"))
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
        return expected - {"_COMMA", "RPAR", "RSQB"}
    drop = {
        "[": {"RPAR", "$END"}, "index": {"RPAR", "$END", "_COMMA"},
        "(": {"RSQB", "$END", "_COMMA"}, "call": {"RSQB", "$END"},
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


def _describe_token(tok: _Tok) -> str:
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


def _error(text: str, code: str, message: str, span: Span, label: str, hint: str = "",
           fixes: tuple[Fix, ...] = ()) -> ParseError:
    return ParseError(message, code=code, span=span, label=label, hint=hint, fixes=fixes,
                      source=text)


def _unexpected_character(text: str, pos: int, scan: _Scan) -> ParseError:
    char = text[pos]
    span = Span(pos, pos + 1)
    shown = f"'{char}'" if char.isprintable() and not char.isspace() else f"U+{ord(char):04X}"
    if char == ";":
        first, last = scan.semicolons[0], scan.semicolons[-1]
        chunk = list(text[first:last + 1])
        for at in scan.semicolons:
            chunk[at - first] = ","
        return _error(text, "E104", "unexpected character ';'", span, "not a separator here",
                      "separate arguments with ',' (not ';')",
                      (Fix(Span(first, last + 1), "".join(chunk), "use ',' between arguments"),))
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
        return _error(text, "E104", f"unexpected character '{char}'", span, "curly quote",
                      f"use straight quotes ({straight}) around text", (fix,))
    if unicodedata.category(char) in ("Cf", "Cc", "Co", "Cn", "Zl", "Zp") and char != "\t":
        return _error(text, "E104", f"unexpected invisible character U+{ord(char):04X}", span,
                      "invisible character", "delete it (it was probably pasted by accident)",
                      (Fix(span, "", "delete the character"),))
    if char == "}":
        return _error(text, "E105", "unmatched '}'", span, "nothing to close", _CHAR_HINTS["}"])
    fixes: tuple[Fix, ...] = ()
    close = text.find("`", pos + 1) if char == "`" else -1
    if close > pos + 1 and "}" not in text[pos + 1:close]:
        fixes = (Fix(Span(pos, close + 1), "{" + text[pos + 1:close] + "}", "use braces"),)
    elif char in _CHAR_FIXES:
        fixes = (Fix(span, _CHAR_FIXES[char], f"write {_CHAR_FIXES[char] or 'nothing'}"),)
    return _error(text, "E104", f"unexpected character {shown}", span, "not allowed here",
                  _CHAR_HINTS.get(char, ""), fixes)


def _bracket_error(text: str, tok: _Tok, pos: int, scan: _Scan) -> ParseError | None:
    """E105 when the parse failed exactly where the brackets stop matching."""
    if tok.type == "$END":
        if not scan.open_brackets:
            return None
        opener, opened = scan.open_brackets[-1]
        closing = "".join(_CLOSER[o] for o, _ in reversed(scan.open_brackets))
        return _error(text, "E105",
                      f"expected '{_CLOSER[opener]}' to close the '{opener}' at "
                      f"{_where(text, opened)}", Span(opened, opened + 1),
                      f"this '{opener}' is never closed", f"add '{_CLOSER[opener]}' at the end",
                      (Fix(Span(len(text), len(text)), closing, "close the brackets"),))
    if scan.mismatch is not None and scan.mismatch[0] == pos:
        _, opener, opened = scan.mismatch
        want = _CLOSER[opener]
        return _error(text, "E105",
                      f"expected '{want}' to close the '{opener}' at {_where(text, opened)} "
                      f"but found '{tok.value}'", Span(pos, pos + 1), f"expected '{want}'",
                      f"'{opener}' is closed by '{want}'", (Fix(Span(pos, pos + 1), want),))
    if scan.stray is not None and scan.stray == pos:
        return _error(text, "E105", f"unmatched '{tok.value}'", Span(pos, pos + 1),
                      "nothing to close", f"there is no '{_OPENER[tok.value]}' before it",
                      (Fix(Span(pos, pos + 1), "", f"remove the '{tok.value}'"),))
    return None


def _modulo_fix(text: str, stack: list[Any], tok: _Tok) -> tuple[Fix, ...]:
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


def _diagnose(text: str, failure: _LexFailure | _SyntaxFailure, scan: _Scan) -> ParseError:
    """The diagnostic for a failed parse; a plain E101 if explaining it goes wrong."""
    try:
        if isinstance(failure, _LexFailure):
            return _unexpected_character(text, failure.pos, scan)
        return _unexpected_token(text, failure, scan)
    except Exception:  # noqa: BLE001 - a weak message beats an exception the contract forbids
        pos = failure.pos if isinstance(failure, _LexFailure) else failure.token.start_pos
        pos = min(pos, len(text))
        return _error(text, "E101", "unexpected input", Span(pos, min(pos + 1, len(text))),
                      "here")


def _unexpected_token(text: str, failure: _SyntaxFailure, scan: _Scan) -> ParseError:
    tok = failure.token
    at_end = tok.type == "$END"
    pos = len(text) if at_end else tok.start_pos
    bracket = _bracket_error(text, tok, pos, scan)
    if bracket is not None and (not at_end or failure.expected & {"RPAR", "RSQB"}):
        return bracket
    context = _context(text, pos)
    expected = _plausible(failure.expected, context)
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
        return _error(text, "E102" if at_end else "E101", f"expected '=>' but {found}", span,
                      "expected '=>'", hint)
    if at_end:
        hint = ""
        if scan.open_brackets:
            opener, opened = scan.open_brackets[-1]
            hint = f"the '{opener}' at {_where(text, opened)} is not closed either"
        return _error(text, "E102", f"expected {want} but the formula ended", span,
                      f"expected {want} here", hint)
    message = f"expected {want} but found {_describe_token(tok)}"
    label = f"expected {want}"
    if tok.type == "STAR" and before == "*" and prev == pos:
        return _error(text, "E101", "'**' is not an operator", Span(pos - 1, pos + 1),
                      "use '^' for powers", "powers are written with '^', like 2 ^ 3",
                      (Fix(Span(pos - 1, pos + 1), "^", "use ^"),))
    start = _word_start(text, pos)
    if tok.type in ("IDENT", "NUMBER", "PERCENT_NUMBER") and prev == pos \
            and re.fullmatch(r"\.?[0-9][0-9.eE+-]*", text[start:pos]):
        bad = text[start:tok.end_pos]
        hint = "numbers look like 12, 1.5, .5, 1e-3 or 15%"
        if tok.type == "IDENT" and not re.fullmatch(r"[eE][0-9]*", tok.value):
            hint += f"; to multiply, write {text[start:pos]} * {tok.value}"
        return _error(text, "E107", f"invalid number '{bad}'", Span(start, tok.end_pos),
                      "not a number", hint)
    if tok.type == "CMP" and tok.value in "<>" and before == "=" and prev == pos:
        fixed = tok.value + "="
        return _error(text, "E101", f"'={tok.value}' is not an operator", Span(pos - 1, pos + 1),
                      f"did you mean '{fixed}'?", f"write '{fixed}'",
                      (Fix(Span(pos - 1, pos + 1), fixed, f"use {fixed}"),))
    if tok.type == "_COMMA" and before in (",", "("):
        return _error(text, "E101", message, span, label,
                      "an argument is missing; write a value (BLANK() for an empty one)")
    if tok.type == "_COMMA" and context is None:
        return _error(text, "E101", message, span, label,
                      "a formula is one expression; to combine values use a function like "
                      "SUM(a, b) or a list [a, b]")
    if tok.type == "ARROW":
        return _error(text, "E108", _LAMBDA_MESSAGE, span, "lambda not allowed here",
                      _LAMBDA_HINT)
    if before == "%" and tok.type in _VALUE_STARTS and "NUMBER" not in expected:
        return _error(text, "E101", message, span, label,
                      "'%' means percent here (15% is 0.15); for the remainder of a division "
                      "use MOD(a, b)", _modulo_fix(text, failure.stack, tok))
    if tok.type == "LPAR" and prev < pos and _name_before(text, prev):
        return _error(text, "E101", message, span, label,
                      "remove the space between the function name and '('",
                      (Fix(Span(prev, pos), "", "remove the space"),))
    if tok.type in ("RPAR", "RSQB") and before == ",":
        return _error(text, "E101", message, span, label, "remove the trailing ','",
                      (Fix(Span(prev - 1, prev), "", "remove the ','"),))
    if tok.type in _VALUE_STARTS and "NUMBER" not in expected and "_COMMA" in expected \
            and context is not None and context[0] in ("call", "["):
        what = "arguments" if context[0] == "call" else "list items"
        return _error(text, "E101", message, span, label, f"separate {what} with ','",
                      (Fix(Span(prev, prev), ",", "insert ','"),))
    if tok.type == "NUMBER" and tok.value.startswith(".") and prev == pos:
        return _error(text, "E101", message, span, label,
                      "after '.' comes a field name; for an item of a list write xs[n]")
    if tok.type == "NOT" and "NOT" not in expected and "NUMBER" in expected:
        return _error(text, "E101", message, span, label,
                      "'not' binds more loosely than comparisons and arithmetic; wrap it in "
                      "parentheses: (not x)")
    if tok.type in ("AND", "OR", "NOT", "TRUE", "FALSE", "NULL") and before == "." \
            and expected & {"IDENT", "BRACED"}:
        word = str(tok.value)
        return _error(text, "E101", message, span, label,
                      f"'{word}' is a keyword; write a field named {word} as {{{word}}}",
                      (Fix(_tspan(tok), "{" + word + "}", "brace the name"),))
    return _error(text, "E101", message, span, label)


# ---- After the parse: exact limits and lambda placement, iteratively -------------------------

def _check_tree(root: Node, limits: Limits, text: str) -> None:
    # Pre-order, left to right, so the first problem reported is the leftmost one.
    stack: list[tuple[Node, int, bool]] = [(root, 1, False)]
    count = 0
    while stack:
        node, depth, lambda_ok = stack.pop()
        count += 1
        if count > limits.max_nodes:
            _limit("E402", f"too many nodes: more than {limits.max_nodes}", node.span,
                   "the formula is already too large here",
                   "split the formula, or use SUM(...) over a list", text)
        if depth > limits.max_depth:
            _limit("E403", f"nesting too deep: more than {limits.max_depth} levels", node.span,
                   f"level {depth}", "split the formula with LET, or use SUM(...) over a list "
                   "instead of a long chain of operators", text)
        if isinstance(node, Lambda):
            if not lambda_ok:
                raise _error(text, "E108", _LAMBDA_MESSAGE, node.span, "lambda not allowed here",
                             _LAMBDA_HINT)
            _check_count(len(node.params), limits, node.span, text)
        elif isinstance(node, (Call, ListLit)):
            _check_count(len(children(node)), limits, node.span, text)
        is_call = isinstance(node, Call)
        stack.extend((child, depth + 1, is_call) for child in reversed(children(node)))


def _check_count(count: int, limits: Limits, span: Span, text: str) -> None:
    if count > limits.max_arguments:
        _limit("E404", f"too many arguments: {count} (limit {limits.max_arguments})", span,
               "too many items", "split the list or the call", text)


# ---- Entry point -----------------------------------------------------------------------------

def parse(source: str, *, limits: Limits | None = None) -> Node:
    """Parse one formula into an AST.

    Raises ParseError (E101-E108) or LimitExceeded (E401-E404) for any string, nothing else
    (TypeError only if ``source`` is not a str). ``limits`` defaults to ``DEFAULT_LIMITS``.
    """
    return _parse_with(_get_engine(), source, limits)


def _parse_with(engine: _Engine, source: str, limits: Limits | None) -> Node:
    if not isinstance(source, str):
        raise TypeError(f"parse() expects a str, got {type(source).__name__}")
    limits = limits or DEFAULT_LIMITS
    length = len(source)
    if length > limits.max_source_length:
        _limit("E401", f"formula too long: {length} characters (limit "
               f"{limits.max_source_length})", Span(limits.max_source_length, length),
               "past the limit", "shorten the formula or split it into several", source)
    scan = _prescan(source, limits)
    text = source
    first = scan.first
    if first is not None and first[0] == "op" and source[first[1]:first[2]] == "=":
        # Excel users paste "=SUM(...)": one leading '=' is accepted silently.
        text = source[: first[1]] + " " + source[first[2]:]
        if scan.second is None:
            first = None
    if first is None:
        raise _error(source, "E102", "empty formula", Span(0, length), "nothing to evaluate",
                     'write an expression, like 1 + 2 or UPPER("abc")')
    try:
        tree = engine.parse(text)
    except _Reject as rejected:
        raise rejected.error.with_source(source) from None
    except (_LexFailure, _SyntaxFailure) as failure:
        raise _diagnose(source, failure, scan) from None
    except Exception as err:  # noqa: BLE001 - contract: nothing but ParseError escapes
        raise _error(source, "E101", f"could not parse the formula ({type(err).__name__})",
                     Span(0, length), "here") from err
    _check_tree(tree, limits, source)
    return tree
