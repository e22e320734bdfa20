"""Formula text to AST. With `table` (which builds the LALR table), the only module in formulane
that imports lark, and only when the checked-in table does not match formula.lark.

Contract: ``parse(source, limits=None)`` returns a node from ``formulane.grammar.ast`` or raises
``ParseError`` (E101-E108) or ``LimitExceeded`` (E401-E404), never anything else, for any
string. Phases, cheapest first: source length; one linear pre-scan (strings, comments, braces,
bracket depth, argument counts, a lower bound on the node count); the LALR parse, which builds
nodes at each reduction (no tree, no recursion); then an iterative walk that checks the exact
node count, depth and argument counts and that lambdas appear only as call arguments. Every
error carries a span, a label and, where we can guess the intent, a hint and machine-applicable
fixes (the explaining lives in ``diagnostics.py``). Positions are character offsets into the
original text (a leading ``=`` is blanked, not removed, so offsets never shift).

Arguments may be left out, Excel style: an empty slot between commas, a leading empty slot
``F(, b)`` and a trailing one after a comma ``F(a, )`` parse to `ast.Omitted` (the checker
gives it the parameter's default); ``F()`` has no arguments, and list items cannot be left
out (``[1, , 2]`` and ``[1, 2,]`` stay errors). An omitted argument's span is the gap between
its neighbours (the whitespace between the commas, possibly empty).

``tokenize(source)`` is the lexer for editors: it never raises, keeps comments (with their
positions: the formatter re-attaches them) and turns what the grammar cannot lex into
``OPEN_STRING``, ``OPEN_COMMENT``, ``OPEN_BRACED`` (unclosed to the end of the text) or
``ERROR`` (one character) tokens, so completion can read broken input while it is typed.
"""

from __future__ import annotations

import re
import threading
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, cast

from ..errors import Fix, ParseError
from ..limits import DEFAULT_LIMITS, Limits
from ..source import Span, ascii_upper
from .ast import (
    Binary, Boolean, Call, Index, Lambda, ListLit, Member, Name, Node, Number, Omitted, String,
    Unary, children,
)
from .diagnostics import (
    LAMBDA_HINT, LAMBDA_MESSAGE, LexFailure, SyntaxFailure, Tok, diagnose, parse_error, prescan,
    raise_limit,
)
from . import table as lalr_table

if TYPE_CHECKING:
    from lark import Lark

__all__ = ["Token", "parse", "tokenize"]

# ---- AST construction during the LALR parse --------------------------------------------------

_BINARY_OPS: dict[str, str] = {
    "==": "=", "=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
    "&&": "and", "and": "and", "||": "or", "or": "or", "??": "??",
    "&": "&", "+": "+", "-": "-", "*": "*", "/": "/", "^": "^",
}
#: Magnitudes from here up are not Numbers (the type is |x| < 1e308).
_MAX_ADJUSTED_EXPONENT = 307
#: A call's argument list that ends with a comma: the slots so far and where the open one starts.
_OpenSlots = tuple[list[Node], int]


_ARRAY_ITEM = re.compile(
    r'\s*(?:(?P<sep>[,;])|(?P<item>"(?:[^"]|"")*"|#N/A|[+-]?[^\s,;]+))')


def _array_item(text: str, span: Span) -> Node:
    """One constant of an array constant, as the same text would parse in a list."""
    if text[0] == '"':
        return String(text[1:-1].replace('""', '"'), span)
    upper = text.upper()
    if upper in ("TRUE", "FALSE"):
        return Boolean(upper == "TRUE", span)
    if upper == "#N/A":
        return Call("NA", (), span, span)
    if text[0] in "+-":
        inner = Span(span.start + 1, span.end)
        return Unary(text[0], _array_item(text[1:], inner), span, Span(span.start, span.start + 1))
    if text.endswith("%"):
        sign, digits, exponent = _decimal(text[:-1], span).as_tuple()
        return Number(Decimal((sign, digits, int(exponent) - 2)), span)
    return Number(_decimal(text, span), span)


class _Reject(Exception):
    """Raised inside a parse callback; carries the ParseError to raise once lark has unwound."""

    def __init__(self, error: ParseError) -> None:
        super().__init__(error.message)
        self.error = error


def _tspan(tok: Tok) -> Span:
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


def _name_of(tok: Tok) -> str:
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

    def number(self, tok: Tok) -> Number:
        span = _tspan(tok)
        return Number(_decimal(tok.value, span), span)

    def percent_number(self, tok: Tok) -> Number:
        span = _tspan(tok)
        text = tok.value[:-1].rstrip()
        sign, digits, exponent = _decimal(text, span).as_tuple()
        # Shift the exponent by hand: Decimal.scaleb would round to the context precision.
        return Number(Decimal((sign, digits, int(exponent) - 2)), span)

    def string(self, tok: Tok) -> String:
        quote = tok.value[0]
        return String(tok.value[1:-1].replace(quote + quote, quote), _tspan(tok))

    def boolean(self, tok: Tok) -> Boolean:
        return Boolean(tok.type == "TRUE", _tspan(tok))

    def null(self, tok: Tok) -> Call:
        span = _tspan(tok)
        return Call("BLANK", (), span, span)

    def name(self, tok: Tok) -> Name:
        return Name(_name_of(tok), _tspan(tok))

    def call_empty(self, name: Tok, lpar: Tok, rpar: Tok) -> Node:
        span = Span(name.start_pos, rpar.end_pos)
        if ascii_upper(name.value) == "LAMBDA":
            _reject("E101", "LAMBDA needs a body", span, "no body",
                    "the last argument is the body: LAMBDA(x, x * 2)")
        return Call(ascii_upper(name.value), (), span, _tspan(name))

    def call_open(self, name: Tok, lpar: Tok, slots: _OpenSlots, rpar: Tok) -> Node:
        items, start = slots
        items.append(Omitted(Span(start, rpar.start_pos)))
        return self.call(name, lpar, items, rpar)

    def slots_lead(self, comma: Tok) -> _OpenSlots:
        # The span is completed in call(), which knows where the '(' ends.
        return [Omitted(Span(comma.start_pos, comma.start_pos))], comma.end_pos

    def slots_sep(self, items: list[Node], comma: Tok) -> _OpenSlots:
        return items, comma.end_pos

    def slots_skip(self, slots: _OpenSlots, comma: Tok) -> _OpenSlots:
        items, start = slots
        items.append(Omitted(Span(start, comma.start_pos)))
        return items, comma.end_pos

    def slots_fill(self, slots: _OpenSlots, item: Node) -> list[Node]:
        items, _ = slots
        items.append(item)
        return items

    def call(self, name: Tok, lpar: Tok, args: list[Node], rpar: Tok) -> Node:
        upper = ascii_upper(name.value)
        span = Span(name.start_pos, rpar.end_pos)
        if isinstance(args[0], Omitted):  # a leading empty slot: F(, b)
            args[0] = Omitted(Span(lpar.end_pos, args[0].span.end))
        if upper != "LAMBDA":
            return Call(upper, tuple(args), span, _tspan(name))
        if not args or isinstance(args[-1], Omitted):
            _reject("E101", "LAMBDA needs a body", span, "no body",
                    "the last argument is the body: LAMBDA(x, x * 2)")
        pairs = [_param_of(arg, "a LAMBDA parameter") for arg in args[:-1]]
        return Lambda(tuple(p for p, _ in pairs), args[-1], span, tuple(s for _, s in pairs))

    def args_start(self, first: Node) -> list[Node]:
        return [first]

    def args_more(self, items: list[Node], comma: Tok, item: Node) -> list[Node]:
        items.append(item)  # a fresh list per parse; appending keeps long lists linear
        return items

    def params_start(self, first: Tok, comma: Tok, second: Tok) -> list[Tok]:
        return [first, second]

    def params_more(self, items: list[Tok], comma: Tok, item: Tok) -> list[Tok]:
        items.append(item)
        return items

    def list_empty(self, lsqb: Tok, rsqb: Tok) -> ListLit:
        return ListLit((), Span(lsqb.start_pos, rsqb.end_pos))

    def array(self, tok: Tok) -> ListLit:
        """An Excel array constant ``{1,2;3,4}``: one row is a list, several rows a list of
        rows (``[[1, 2], [3, 4]]``, the 2-D array every function reads row by row)."""
        rows: list[list[Node]] = [[]]
        base = tok.start_pos
        for m in _ARRAY_ITEM.finditer(tok.value, 1, len(tok.value) - 1):
            text = m.group("item")
            if text is None:
                if m.group("sep") == ";":
                    rows.append([])
                continue
            start = base + m.start("item")
            span = Span(start, start + len(text))
            rows[-1].append(_array_item(text, span))
        width = len(rows[0])
        for row in rows:
            if len(row) != width:
                _reject("E101", "every row of an array constant needs the same number of items",
                        _tspan(tok), f"rows of {width} and {len(row)} items",
                        "separate columns with ',' and rows with ';': {1,2;3,4}")
        span = _tspan(tok)
        if len(rows) == 1:
            return ListLit(tuple(rows[0]), span)
        return ListLit(tuple(ListLit(tuple(r), Span(r[0].span.start, r[-1].span.end))
                             for r in rows), span)

    def list_items(self, lsqb: Tok, items: list[Node], rsqb: Tok) -> ListLit:
        return ListLit(tuple(items), Span(lsqb.start_pos, rsqb.end_pos))

    def paren(self, lpar: Tok, inner: Node, rpar: Tok) -> Node:
        return replace(inner, parenthesized=True, span=Span(lpar.start_pos, rpar.end_pos))

    def binary(self, left: Node, op: Tok, right: Node) -> Binary:
        return Binary(_BINARY_OPS[op.value.lower()], left, right,
                      Span(left.span.start, right.span.end), _tspan(op))

    def prefix(self, op: Tok, operand: Node) -> Unary:
        symbol = "not" if op.type == "NOT" else op.value
        return Unary(symbol, operand, Span(op.start_pos, operand.span.end), _tspan(op))

    def percent(self, operand: Node, op: Tok) -> Unary:
        return Unary("%", operand, Span(operand.span.start, op.end_pos), _tspan(op))

    def member(self, obj: Node, dot: Tok, name: Tok) -> Member:
        return Member(obj, _name_of(name), Span(obj.span.start, name.end_pos), _tspan(name))

    def index(self, obj: Node, lsqb: Tok, idx: Node, rsqb: Tok) -> Index:
        return Index(obj, idx, Span(obj.span.start, rsqb.end_pos))

    def lambda_one(self, param: Tok, arrow: Tok, body: Node) -> Lambda:
        return Lambda((_name_of(param),), body, Span(param.start_pos, body.span.end),
                      (_tspan(param),))

    def lambda_none(self, lpar: Tok, rpar: Tok, arrow: Tok, body: Node) -> Lambda:
        return Lambda((), body, Span(lpar.start_pos, body.span.end), ())

    def lambda_paren(self, lpar: Tok, param: Node, rpar: Tok, arrow: Tok,
                     body: Node) -> Lambda:
        name, span = _param_of(param, "a lambda parameter")
        return Lambda((name,), body, Span(lpar.start_pos, body.span.end), (span,))

    def lambda_many(self, lpar: Tok, params: list[Tok], rpar: Tok, arrow: Tok,
                    body: Node) -> Lambda:
        return Lambda(tuple(_name_of(p) for p in params), body,
                      Span(lpar.start_pos, body.span.end), tuple(_tspan(p) for p in params))


#: The builder methods a table may name (a rule's alias): public methods of `_Build` only.
_BUILD_METHODS = frozenset(k for k, v in vars(_Build).items()
                           if not k.startswith("_") and callable(v))


def _lark_fallback(grammar: str) -> Lark:
    """Lark's own parser with the same callbacks (``transformer=``), for the fallback engine.
    v_args only wraps methods defined on the class itself, so the functions are copied, not
    inherited. lark is imported here: the fast engine's table is usually the checked-in one."""
    from lark import Lark, Transformer, v_args

    builder = v_args(inline=True)(type("_LarkBuilder", (Transformer,), {
        key: value for key, value in vars(_Build).items() if not key.startswith("_")}))
    return Lark(grammar, parser="lalr", lexer="basic", transformer=builder(),
                maybe_placeholders=False, propagate_positions=False, cache=False)


#: A reduction: (children count, rule name for the goto, builder method or None for a
#: pass-through ``?rule`` with one child, indices of the children kept or None for all).
_Reduce = tuple[int, str, Any, "tuple[int, ...] | None"]


class _Engine:
    """An LALR(1) table driven by a small loop, with a lexer built from the grammar's terminals.

    Lark's own parse loop spends most of its time hashing rule objects and wrapping callbacks;
    driving its table directly halves the cost of a short formula. The table is the checked-in
    copy (`table.load`: about 5 ms, lark not imported) when it was built from this grammar,
    else Lark's, read from a private Lark attribute (`table.build`); if a Lark release moves
    that, ``fast`` is False and parsing goes through Lark's public ``transformer=`` path
    instead, with identical results. ``cached`` says the table came from the checked-in file.
    """

    def __init__(self, grammar: str, *, fast: bool = True,
                 data: lalr_table.TableData | None = None) -> None:
        self.fast = False
        self.cached = False
        self._builder = _Build()
        if fast and data is not None:
            try:
                self._load(data)
                self.fast = self.cached = True
            except (KeyError, TypeError, ValueError, IndexError, re.error):
                pass  # a damaged table: build it again below
        if fast and not self.fast:
            try:
                self._load(lalr_table.build(grammar))
                self.fast = True
            except (AttributeError, KeyError, TypeError, ValueError, re.error):
                pass
        if not self.fast:
            self._lark = _lark_fallback(grammar)
            self._scan_with(lalr_table.lexer_terminals(self._lark), self._lark.ignore_tokens)

    def _scan_with(self, terminals: list[tuple[str, str]] | list[list[str]],
                   ignore: Any) -> None:
        # The terminals come in the order Lark's basic lexer tries them (`table.build`).
        self._names = {f"t{i}": name for i, (name, _) in enumerate(terminals)}
        self._scanner = re.compile("|".join(
            f"(?P<t{i}>{regex})" for i, (_, regex) in enumerate(terminals)))
        self._ignore = frozenset(str(t) for t in ignore)

    def _load(self, data: lalr_table.TableData) -> None:
        reductions = [self._reduction(*rule) for rule in data["rules"]]
        actions: dict[Any, dict[str, tuple[bool, Any]]] = {}
        for state, row in enumerate(data["states"]):
            actions[state] = {symbol: (True, code) if code >= 0 else (False, reductions[-1 - code])
                              for symbol, code in row.items()}
        self._scan_with(data["terminals"], data["ignore"])
        self._actions = actions
        # Memo for _follow_chain: deterministic facts about the table, so sharing it between
        # threads is safe (at worst two threads compute the same entry).
        self._chains: dict[tuple[Any, Any, str], Any] = {}
        self._start = data["start"]
        self._end = data["end"]

    def _reduction(self, size: int, origin: str, alias: str | None,
                   keep: list[int] | None) -> _Reduce:
        if alias is None:
            return (size, origin, None, None)
        if alias not in _BUILD_METHODS:
            raise ValueError(f"grammar rule {origin} names no builder method: {alias}")
        return (size, origin, getattr(self._builder, alias), None if keep is None else tuple(keep))

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
                    raise LexFailure(pos)
                kind, end = names[m.lastgroup], m.end()  # type: ignore[index]
                if kind in ignore:
                    pos = end
                    continue
                token = Tok(kind, m.group(), pos, end)
                pos = end
            else:
                kind, token = "$END", Tok("$END", "", length, length)
            first = actions[states[-1]]
            while True:
                row = actions[states[-1]]
                act = row.get(kind)
                if act is None:
                    # LALR may reduce before noticing the error; what the first state
                    # accepted describes the position better than the last one alone.
                    expected = {k for k in first if k.isupper()} | {k for k in row if k.isupper()}
                    raise SyntaxFailure(token, expected - {kind}, values)
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
        from lark.exceptions import UnexpectedCharacters, UnexpectedToken

        try:
            return cast(Node, self._lark.parse(text))
        except UnexpectedCharacters as err:
            raise LexFailure(int(err.pos_in_stream or 0)) from None
        except UnexpectedToken as err:
            tok = err.token
            token = Tok("$END", "", len(text), len(text)) if tok.type == "$END" else Tok(
                tok.type, str(tok.value), int(tok.start_pos or 0), int(tok.end_pos or 0))
            stack = list(getattr(err.state, "value_stack", None) or [])
            raise SyntaxFailure(token, set(err.expected), stack) from None


_engine: _Engine | None = None
_engine_lock = threading.Lock()


def _get_engine() -> _Engine:
    """The process-wide engine, built on first use: from the checked-in table when it matches
    formula.lark (a few ms), else with Lark (about 0.1 s; see `table`)."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                grammar = _grammar()
                _engine = _Engine(grammar, data=lalr_table.load(grammar))
    return _engine


def _grammar() -> str:
    return lalr_table.grammar_text()


# ---- Tokens for editors ----------------------------------------------------------------------

class Token(NamedTuple):
    """A lexed token: ``type`` is a terminal name of formula.lark (``FUNCNAME``, ``IDENT``,
    ``NUMBER``, ``COMMA``, ``COMMENT``...) or one of ``OPEN_STRING``, ``OPEN_COMMENT``,
    ``OPEN_BRACED`` (never closed: they run to the end of the text) and ``ERROR`` (one
    character nothing matches). Offsets are into the text given to `tokenize`."""

    type: str
    value: str
    start: int
    end: int


_OPENERS = {'"': "OPEN_STRING", "'": "OPEN_STRING", "{": "OPEN_BRACED"}


def tokenize(source: str) -> list[Token]:
    """Every token of ``source`` but whitespace, comments included, left to right, in linear
    time; never raises (see `Token` for what broken input gives)."""
    engine = _get_engine()
    scanner, names = engine._scanner, engine._names
    out: list[Token] = []
    pos, length = 0, len(source)
    while pos < length:
        m = scanner.match(source, pos)
        if m is None:
            char = source[pos]
            if char in _OPENERS:
                out.append(Token(_OPENERS[char], source[pos:], pos, length))
                break
            out.append(Token("ERROR", char, pos, pos + 1))
            pos += 1
            continue
        kind, end = names[m.lastgroup], m.end()  # type: ignore[index]
        if kind == "SLASH" and source.startswith("/*", pos):  # COMMENT did not match: open
            out.append(Token("OPEN_COMMENT", source[pos:], pos, length))
            break
        if kind != "WS":
            out.append(Token(kind, m.group(), pos, end))
        pos = end
    return out


# ---- After the parse: exact limits and lambda placement, iteratively -------------------------

def _check_tree(root: Node, limits: Limits, text: str) -> None:
    # Pre-order, left to right, so the first problem reported is the leftmost one.
    stack: list[tuple[Node, int, bool]] = [(root, 1, False)]
    count = 0
    while stack:
        node, depth, lambda_ok = stack.pop()
        count += 1
        if count > limits.max_nodes:
            raise_limit("E402", f"too many nodes: more than {limits.max_nodes}", node.span,
                        "the formula is already too large here",
                        "split the formula, or use SUM(...) over a list", text)
        if depth > limits.max_depth:
            raise_limit("E403", f"nesting too deep: more than {limits.max_depth} levels", node.span,
                        f"level {depth}", "split the formula with LET, or use SUM(...) over a list "
                        "instead of a long chain of operators", text)
        if isinstance(node, Lambda):
            if not lambda_ok:
                raise parse_error(text, "E108", LAMBDA_MESSAGE, node.span,
                                  "lambda not allowed here", LAMBDA_HINT)
            _check_count(len(node.params), limits, node.span, text)
        elif isinstance(node, (Call, ListLit)):
            _check_count(len(children(node)), limits, node.span, text)
        is_call = isinstance(node, Call)
        stack.extend((child, depth + 1, is_call) for child in reversed(children(node)))


def _check_count(count: int, limits: Limits, span: Span, text: str) -> None:
    if count > limits.max_arguments:
        raise_limit("E404", f"too many arguments: {count} (limit {limits.max_arguments})", span,
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
        raise_limit("E401", f"formula too long: {length} characters (limit "
                    f"{limits.max_source_length})", Span(limits.max_source_length, length),
                    "past the limit", "shorten the formula or split it into several", source)
    scan = prescan(source, limits)
    text = source
    first = scan.first
    if first is not None and first[0] == "op" and source[first[1]:first[2]] == "=":
        # Excel users paste "=SUM(...)": one leading '=' is accepted silently.
        text = source[: first[1]] + " " + source[first[2]:]
        if scan.second is None:
            first = None
    if first is None:
        raise parse_error(source, "E102", "empty formula", Span(0, length), "nothing to evaluate",
                          'write an expression, like 1 + 2 or UPPER("abc")')
    try:
        tree = engine.parse(text)
    except _Reject as rejected:
        raise rejected.error.with_source(source) from None
    except (LexFailure, SyntaxFailure) as failure:
        raise diagnose(source, failure, scan) from None
    except Exception as err:  # noqa: BLE001 - contract: nothing but ParseError escapes
        raise parse_error(source, "E101", f"could not parse the formula ({type(err).__name__})",
                          Span(0, length), "here") from err
    _check_tree(tree, limits, source)
    return tree
