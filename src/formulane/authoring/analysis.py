"""What an editor needs to know about a formula while it is typed, and usually broken.

Two tools shared by completion, signature help and hover:

* `context_at(source, cursor)` reads the tokens before the cursor (the never-failing lexer, not
  a parse): the word being typed and the text it replaces, whether the cursor sits in text or a
  comment, whether a value or an operator is expected there, the open brackets around it (which
  call, which argument), a member access before it (``order.cu|``), and the local names in scope
  (LET names, LAMBDA and ``x =>`` parameters).
* `typed_spans(tree, source, schema, ...)` runs the checker over an AST that may not check and
  records the type of every sub-expression it could type, by span. It is a `Checker` whose
  ``visit`` writes down each result; errors do not stop it (up to the diagnostics cap).

Types of what is before the cursor come from *repairing* the prefix: the text up to the point
of interest, a probe where the value would go, and the closing brackets still missing
(``MAP(orders, o => o.`` is checked as ``MAP(orders, o => o)``), so lambda parameters and LET
names get the types the checker infers for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import EvalError, FormulaError, LimitExceeded
from ..functions.registry import Registry
from ..grammar import Token, ast, parse, tokenize
from ..interpreter.checker import Checker, Scope
from ..limits import DEFAULT_LIMITS, Limits
from ..source import Span
from ..types import Type

__all__ = ["CursorContext", "Frame", "context_at", "probe_types", "typed_spans"]

_WORDS = frozenset({"IDENT", "FUNCNAME", "TRUE", "FALSE", "NULL", "AND", "OR", "NOT"})
#: Tokens after which a value is expected (an operand, an argument, a list item...).
_VALUE_BEFORE = frozenset({
    "LPAR", "LSQB", "COMMA", "PLUS", "MINUS", "STAR", "SLASH", "CARET", "AMP", "CMP",
    "COALESCE", "AND", "OR", "NOT", "ARROW", "ERROR",  # after a stray ';' or '#': a value
})
#: Tokens that end a value (so a following '[' indexes and a following '.' is a member).
_VALUE_END = frozenset({
    "IDENT", "BRACED", "NUMBER", "PERCENT_NUMBER", "STRING", "RPAR", "RSQB", "TRUE", "FALSE",
    "NULL", "PERCENT",
})
_NAMES = frozenset({"IDENT", "BRACED"})



def bounded_source(source: Any, limits: Limits | None = None) -> str:
    """The editor's text, refused (E401) past the formula length limit before any scan: the
    editor helpers run on every keystroke and were quadratic-ish on 800 kB (9.3 s)."""
    if not isinstance(source, str):
        raise EvalError("the formula text must be a string", code="E301")
    limit = (limits or DEFAULT_LIMITS).max_source_length
    if len(source) > limit:
        raise LimitExceeded(f"formula too long: {len(source):,} characters (limit {limit:,})",
                            code="E401", hint="raise Limits.max_source_length to edit longer formulas")
    return source

@dataclass(slots=True)
class Frame:
    """An open bracket at the cursor: a call ``F(``, a group ``(``, a list ``[`` or an index
    ``xs[``; ``args`` holds the token index where each argument starts."""

    kind: str  # "call" | "group" | "list" | "index"
    start: int  # offset of the bracket
    token: int  # index of the bracket in the token list
    name: str = ""  # the function of a call, upper-case
    name_span: Span | None = None
    args: list[int] = field(default_factory=list)

    @property
    def index(self) -> int:
        """The argument the cursor is in, 0-based."""
        return len(self.args) - 1


@dataclass(slots=True)
class CursorContext:
    source: str
    cursor: int
    tokens: list[Token]  # every token (comments excluded), the whole text
    before: int  # how many of `tokens` end before the word (or the cursor)
    word: str  # what is typed of the word so far (for braces: inside them)
    span: Span  # the text a completion replaces (the whole word, braces included)
    braced: bool  # the word is a {braced name}
    inside: str  # "" or "text" / "comment": the cursor is inside one (nothing to complete)
    expects_value: bool  # a value may start here (else an operator is expected)
    frames: list[Frame]  # open brackets, outermost first
    member_of: Span | None = None  # ``obj.|``: the span of obj
    dot: int = -1  # offset of that dot
    locals: list[tuple[str, int]] = field(default_factory=list)  # (name, offset declared)

    @property
    def call(self) -> Frame | None:
        """The innermost open call around the cursor."""
        for frame in reversed(self.frames):
            if frame.kind == "call":
                return frame
        return None

    def previous(self, k: int = 1) -> Token | None:
        at = self.before - k
        return self.tokens[at] if at >= 0 else None


def context_at(source: str, cursor: int) -> CursorContext:
    """The editing context at ``cursor`` (an offset into ``source``; clamped)."""
    cursor = max(0, min(cursor, len(source)))
    everything = tokenize(source)
    inside = ""
    for t in everything:
        if t.start >= cursor:
            break
        if t.type in ("STRING", "COMMENT") and cursor < t.end or \
                t.type in ("OPEN_STRING", "OPEN_COMMENT"):
            inside = "text" if "STRING" in t.type else "comment"
    tokens = [t for t in everything if t.type != "COMMENT"]
    word_start, word_end, braced = cursor, cursor, False
    before = 0
    for i, t in enumerate(tokens):
        word = _is_word(t)
        if t.end < cursor or (t.end == cursor and not word):
            before = i + 1
            continue
        if t.start < cursor and word:
            word_start, word_end = t.start, t.end
            braced = t.type in ("BRACED", "OPEN_BRACED")
        break
    typed = source[word_start + 1:cursor] if braced else source[word_start:cursor]
    ctx = CursorContext(source, cursor, tokens, before, typed, Span(word_start, word_end),
                        braced, inside, True, [])
    _read_brackets(ctx)
    prev = ctx.previous()
    if prev is not None and prev.type == "DOT" and not braced:
        start = _postfix_start(tokens, before - 2)
        if start is not None:
            ctx.member_of = Span(tokens[start].start, tokens[before - 2].end)
        ctx.dot = prev.start
        ctx.expects_value = False
    else:
        ctx.expects_value = prev is None or prev.type in _VALUE_BEFORE
    ctx.locals = _locals(ctx)
    return ctx


def _is_word(t: Token) -> bool:
    """A name or keyword being typed (``&&`` and ``!`` are operators, not words)."""
    if t.type in ("BRACED", "OPEN_BRACED"):
        return True
    return t.type in _WORDS and (t.value[:1].isalpha() or t.value[:1] == "_")


def _read_brackets(ctx: CursorContext) -> None:
    frames: list[Frame] = []
    tokens = ctx.tokens
    for i in range(ctx.before):
        t = tokens[i]
        if t.type == "LPAR":
            prev = tokens[i - 1] if i else None
            if prev is not None and prev.type == "FUNCNAME" and prev.end == t.start:
                frames.append(Frame("call", t.start, i, prev.value.upper(),
                                    Span(prev.start, prev.end), [i + 1]))
            else:
                frames.append(Frame("group", t.start, i, args=[i + 1]))
        elif t.type == "LSQB":
            prev = tokens[i - 1] if i else None
            kind = "index" if prev is not None and prev.type in _VALUE_END else "list"
            frames.append(Frame(kind, t.start, i, args=[i + 1]))
        elif t.type in ("RPAR", "RSQB"):
            if frames:
                frames.pop()
        elif t.type == "COMMA" and frames:
            frames[-1].args.append(i + 1)
    ctx.frames = frames


def _postfix_start(tokens: list[Token], at: int) -> int | None:
    """Index of the first token of the postfix expression ending with ``tokens[at]``."""
    if at < 0 or tokens[at].type not in _VALUE_END:
        return None
    while at >= 0:
        t = tokens[at]
        if t.type in ("RPAR", "RSQB"):
            depth, j = 0, at
            while j >= 0:
                if tokens[j].type in ("RPAR", "RSQB"):
                    depth += 1
                elif tokens[j].type in ("LPAR", "LSQB"):
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            if j < 0:
                return None
            if tokens[j].type == "LPAR" and j > 0 and tokens[j - 1].type == "FUNCNAME":
                j -= 1
            elif tokens[j].type == "LSQB" and j > 0 and tokens[j - 1].type in _VALUE_END:
                at = j - 1  # an index: its object comes before
                continue
            at = j
        if at > 0 and tokens[at - 1].type == "DOT" and at > 1 \
                and tokens[at - 2].type in _VALUE_END:
            at -= 2
            continue
        return at
    return None


def _locals(ctx: CursorContext) -> list[tuple[str, int]]:
    """Names LET and lambdas bind around the cursor, innermost last."""
    tokens = ctx.tokens
    found: list[tuple[str, int]] = []
    for frame in ctx.frames:
        if frame.kind != "call":
            continue
        ends = frame.args[1:] + [ctx.before + 1]
        single = [_single_name(tokens, start, end - 1) for start, end in zip(frame.args, ends)]
        if frame.name == "LET":
            found += [n for n in single[0:frame.index:2] if n is not None]
        elif frame.name == "LAMBDA":
            found += [n for n in single[:frame.index] if n is not None]
        # An arrow lambda starting the current argument: x => ..., (a, b) => ...
        found += _arrow_params(tokens, frame.args[-1], ctx.before)
    return found


def _single_name(tokens: list[Token], start: int, end: int) -> tuple[str, int] | None:
    if end - start == 1 and tokens[start].type in _NAMES:
        return _name_of(tokens[start]), tokens[start].start
    return None


def _name_of(tok: Token) -> str:
    return tok.value[1:-1] if tok.type == "BRACED" else tok.value


def _arrow_params(tokens: list[Token], start: int, stop: int) -> list[tuple[str, int]]:
    if start + 1 < stop and tokens[start].type in _NAMES and tokens[start + 1].type == "ARROW":
        return [(_name_of(tokens[start]), tokens[start].start)]
    if start < stop and tokens[start].type == "LPAR":
        params: list[tuple[str, int]] = []
        j = start + 1
        while j < stop and tokens[j].type in _NAMES:
            params.append((_name_of(tokens[j]), tokens[j].start))
            j += 1
            if j < stop and tokens[j].type == "COMMA":
                j += 1
        if j + 1 < stop and tokens[j].type == "RPAR" and tokens[j + 1].type == "ARROW":
            return params
    return []


# ---- types of sub-expressions ----------------------------------------------------------------

class _Recorder(Checker):
    """A checker that writes down the type of every node it visits, by span."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.types: dict[tuple[int, int], Type] = {}

    def visit(self, node: ast.Node, scope: Scope) -> Any:
        result = super().visit(node, scope)
        if result.type.kind != "Never":
            self.types[(node.span.start, node.span.end)] = result.type
        return result


def typed_spans(tree: ast.Node, source: str, schema: Mapping[str, Type], *, profile: str,
                registry: Registry, limits: Limits = DEFAULT_LIMITS
                ) -> dict[tuple[int, int], Type]:
    """The type of each sub-expression the checker could type, by (start, end) span (the
    outermost node wins where spans coincide); never raises."""
    recorder = _Recorder(source, schema, profile=profile, limits=limits, registry=registry)
    try:
        recorder.visit(tree, Scope({}))
    except Exception:  # noqa: BLE001 - an aborted or failed check still typed what it reached
        pass
    return recorder.types


def repaired(ctx: CursorContext, upto: int, probe: str) -> str:
    """``source[:upto] + probe`` and what it takes to close the brackets open at ``upto``."""
    tail = []
    for frame in reversed(ctx.frames):
        if frame.start >= upto:
            continue
        if frame.kind == "call" and frame.name == "LET" and frame.index % 2 == 1:
            tail.append(", 0")  # a value position: LET still needs its calculation
        tail.append(")" if frame.kind in ("call", "group") else "]")
    return ctx.source[:upto] + probe + "".join(tail)


def probe_types(ctx: CursorContext, upto: int, probe: str, spans: list[tuple[int, int]],
                schema: Mapping[str, Type], *, profile: str,
                registry: Registry) -> dict[tuple[int, int], Type]:
    """Types at ``spans`` (offsets into the repaired text) once the prefix is repaired."""
    text = repaired(ctx, upto, probe)
    try:
        tree = parse(text)
    except FormulaError:
        return {}
    types = typed_spans(tree, text, schema, profile=profile, registry=registry)
    return {s: types[s] for s in spans if s in types}
