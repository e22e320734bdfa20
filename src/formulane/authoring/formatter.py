"""The formatter: a formula in its canonical form, comments kept, broken into lines past a width.

``format(source, width=80)`` parses the source, prints the AST the way the canonical printer
does (upper-case function names, ``=``, ``<>``, ``and``/``or``/``not``, double-quoted text,
braces only where a name needs them, plain numbers, minimal parentheses, a leading ``=``
dropped) and lays it out with a small Wadler-style pretty printer: a call, a list, a chain of
one operator level, a parenthesized expression or a lambda stays on one line when it fits in
``width`` columns and is broken otherwise, its parts indented by two spaces (a broken ``LET``
keeps each name and its value on one line)::

    IF(
      AND(order.total > 1000, order.customer.tier = "gold"),
      ROUND(order.total * 0.9, 2),
      order.total
    )

Comments (``/* ... */``) are kept. The lexer reports them with their positions, and each is
attached to the nearest node: to the node before it when only blanks separate them on one line
(a trailing comment, printed right after that node), otherwise to the node after it (a leading
comment, printed right before it), or, with no node on either side, to the enclosing node
(``F(/* none */)``, an omitted argument's empty slot). Comments do not count towards the width,
so the line breaks depend on the AST alone; that is what makes formatting idempotent.

Guarantees (tested as Hypothesis properties over generated formulas, with comments sprinkled
in): ``parse(format(s)) == parse(s)`` (the result is checked before it is returned: an internal
error rather than a changed meaning), ``format(format(s)) == format(s)``, and every comment of
``s`` appears in ``format(s)``, in order. A source that does not parse raises its ParseError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Union

from ..errors import EvalError, InternalError
from ..grammar import ast, parse, tokenize
from ..grammar.printer import (
    LOOSEST, format_name, function_name, lambda_head, leaf_text, needs_parens, operand_levels,
)
from ..limits import Limits
from ..source import Span

__all__ = ["format", "format_tree"]

INDENT = 2
#: Chains of these operators break before every operator (conditions read best one per line);
#: the others fill their lines.
_ONE_PER_LINE = frozenset({"and", "or", "??", "=", "<>", "<", "<=", ">", ">="})


# ---- documents -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Line:
    """A possible line break: a space (or nothing, if ``soft``) when its group fits."""

    soft: bool


@dataclass(frozen=True, slots=True)
class _Group:
    """Laid out flat when it fits in the rest of the line, else with every _Line broken."""

    parts: list["Doc"]


@dataclass(frozen=True, slots=True)
class _Indent:
    parts: list["Doc"]


@dataclass(frozen=True, slots=True)
class _Fill:
    """``[content, line, content, line, ...]``: each line breaks only where the next content
    would not fit (a long sum fills its lines instead of taking one line per term)."""

    parts: list["Doc"]


@dataclass(frozen=True, slots=True)
class _Comment:
    """Comment text (with its separating space): printed, but zero columns wide for layout."""

    text: str


Doc = Union[str, list[Any], _Line, _Group, _Indent, _Fill, _Comment]
_LINE = _Line(False)
_SOFT = _Line(True)


def _render(doc: Doc, width: int) -> str:
    out: list[str] = []
    col = 0  # the column as layout sees it: comments count zero
    stack: list[tuple[int, bool, Doc]] = [(0, False, doc)]
    while stack:
        indent, flat, d = stack.pop()
        if isinstance(d, str):
            out.append(d)
            col += len(d)
        elif isinstance(d, list):
            stack.extend((indent, flat, x) for x in reversed(d))
        elif isinstance(d, _Comment):
            out.append(d.text)
        elif isinstance(d, _Indent):
            stack.append((indent + INDENT, flat, d.parts))
        elif isinstance(d, _Group):
            stack.append((indent, flat or _fits(width - col, (indent, True, d.parts), stack),
                          d.parts))
        elif isinstance(d, _Fill):
            if flat or not d.parts:
                stack.append((indent, flat, d.parts))
                continue
            content = d.parts[0]
            fits = _fits(width - col, (indent, True, content), [])
            if len(d.parts) > 1:
                pair = _fits(width - col, (indent, True, d.parts[:3]), [])
                stack.append((indent, False, _Fill(d.parts[2:])))
                stack.append((indent, pair, d.parts[1]))
            stack.append((indent, fits, content))
        elif flat:
            if not d.soft:
                out.append(" ")
                col += 1
        else:
            out.append("\n" + " " * indent)
            col = indent
    text = "".join(out)
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _fits(remaining: int, first: tuple[int, bool, Doc], rest: list[tuple[int, bool, Doc]]) -> bool:
    """Whether ``first`` laid out flat, and what follows it up to the next line break, fit."""
    work = [first]
    at = len(rest) - 1
    while remaining >= 0:
        if not work:
            if at < 0:
                return True
            work.append(rest[at])
            at -= 1
        indent, flat, d = work.pop()
        if isinstance(d, str):
            remaining -= len(d)
        elif isinstance(d, list):
            work.extend((indent, flat, x) for x in reversed(d))
        elif isinstance(d, (_Group, _Indent, _Fill)):
            work.append((indent, flat, d.parts))
        elif isinstance(d, _Line):
            if not flat:
                return True
            remaining -= 0 if d.soft else 1
    return False


# ---- comments --------------------------------------------------------------------------------

@dataclass(slots=True)
class _Attached:
    leading: list[str]
    trailing: list[str]
    dangling: list[str]


_COMMENT_RE = re.compile(r"/\*.*?\*/", re.S)


def _attach(tree: ast.Node, comments: list[tuple[int, int, str]],
            source: str) -> dict[int, _Attached]:
    """Comments by id of the node they belong to (see the module docstring for the rule)."""
    table: dict[int, _Attached] = {}

    def slot(node: ast.Node) -> _Attached:
        found = table.get(id(node))
        if found is None:
            found = table[id(node)] = _Attached([], [], [])
        return found

    for start, end, text in comments:
        if end <= tree.span.start:
            slot(tree).leading.append(text)
            continue
        if start >= tree.span.end:
            slot(tree).trailing.append(text)
            continue
        node = tree
        while True:
            kids = ast.children(node)
            inner = next((k for k in kids if k.span.start <= start and end <= k.span.end
                          and k.span.start < k.span.end), None)
            if inner is None:
                break
            node = inner
        # An omitted argument takes only the comments inside its slot (as dangling ones).
        before = [k for k in kids if k.span.end <= start and not isinstance(k, ast.Omitted)]
        after = [k for k in kids if k.span.start >= end and not isinstance(k, ast.Omitted)]
        prev = before[-1] if before else None
        nxt = after[0] if after else None
        if prev is not None and _blank_on_one_line(source[prev.span.end:start]):
            slot(prev).trailing.append(text)
        elif nxt is not None:
            slot(nxt).leading.append(text)
        elif prev is not None:
            slot(prev).trailing.append(text)
        elif not kids and not isinstance(node, (ast.Call, ast.ListLit, ast.Omitted)):
            # Inside a parenthesized leaf: before or after its token.
            head = _COMMENT_RE.sub("", source[node.span.start:start]).strip("( \t\r\n")
            (slot(node).trailing if head else slot(node).leading).append(text)
        else:
            slot(node).dangling.append(text)
    return table


def _blank_on_one_line(gap: str) -> bool:
    return "\n" not in gap and not _COMMENT_RE.sub("", gap).strip()


# ---- AST to document -------------------------------------------------------------------------

class _Builder:
    def __init__(self, comments: dict[int, _Attached]) -> None:
        self.comments = comments

    def doc(self, node: ast.Node, min_level: int) -> Doc:
        core = self.core(node)
        if needs_parens(node, min_level):
            core = _Group(["(", _Indent([_SOFT, core]), _SOFT, ")"])
        attached = self.comments.get(id(node))
        if attached is None:
            return core
        leading = attached.leading
        if attached.dangling and not _holds_dangling(node):
            leading = leading + attached.dangling
        return [*(_Comment(c + " ") for c in leading), core,
                *(_Comment(" " + c) for c in attached.trailing)]

    def dangling(self, node: ast.Node) -> list[Doc]:
        attached = self.comments.get(id(node))
        return [_Comment(" ".join(attached.dangling))] if attached and attached.dangling else []

    def core(self, node: ast.Node) -> Doc:
        levels = operand_levels(node)
        if isinstance(node, (ast.Number, ast.String, ast.Boolean, ast.Name)):
            return leaf_text(node)
        if isinstance(node, ast.Call):
            if len(node.args) == 1 and isinstance(node.args[0], ast.Omitted):
                raise ValueError("a call cannot have a single omitted argument")
            if _let_pairs(node):
                return self.let(node)
            return self.bracketed(function_name(node.name) + "(", node.args, ")", node)
        if isinstance(node, ast.ListLit):
            return self.bracketed("[", node.items, "]", node)
        if isinstance(node, ast.Binary):
            return self.chain(node)
        if isinstance(node, ast.Unary):
            operand = self.doc(node.operand, levels[0])
            if node.op == "%":
                return [operand, "%"]
            return ["not " if node.op == "not" else node.op, operand]
        if isinstance(node, ast.Member):
            return [self.doc(node.obj, levels[0]), "." + format_name(node.name)]
        if isinstance(node, ast.Index):
            return [self.doc(node.obj, levels[0]), "[", self.doc(node.index, levels[1]), "]"]
        if isinstance(node, ast.Lambda):
            return _Group([lambda_head(node) + " =>", _Indent([_LINE,
                                                                 self.doc(node.body, levels[0])])])
        if isinstance(node, ast.Omitted):
            raise ValueError("an omitted argument can only be a call argument")
        raise TypeError(f"not an AST node: {type(node).__name__}")

    def bracketed(self, opener: str, items: tuple[ast.Node, ...], closer: str,
                  node: ast.Node) -> Doc:
        if not items:
            return [opener, *self.dangling(node), closer]
        body: list[Doc] = [_SOFT]
        for i, item in enumerate(items):
            if i:
                body += [",", _LINE]
            if isinstance(item, ast.Omitted):
                if isinstance(node, ast.ListLit):
                    raise ValueError("a list item cannot be omitted")
                body += self.dangling(item)
            else:
                body.append(self.doc(item, LOOSEST))
        return _Group([opener, _Indent(body), _SOFT, closer])

    def let(self, node: ast.Call) -> Doc:
        """``LET(name, value, ..., body)`` broken keeps each name with its value on a line
        (or, when the pair does not fit, the value indented on the next lines)."""
        args = node.args
        body: list[Doc] = [_SOFT]
        for i in range(0, len(args) - 1, 2):
            pair = _Group([self.doc(args[i], LOOSEST), ",",
                           _Indent([_LINE, self.doc(args[i + 1], LOOSEST)])])
            body += [pair, ",", _LINE]
        body.append(self.doc(args[-1], LOOSEST))
        return _Group([function_name(node.name) + "(", _Indent(body), _SOFT, ")"])

    def chain(self, node: ast.Binary) -> Doc:
        """``a + b - c``: one group, broken before each operator of the level."""
        rights: list[tuple[str, Doc]] = []
        current: ast.Node = node
        while True:
            assert isinstance(current, ast.Binary)
            left_level, right_level = operand_levels(current)
            rights.append((current.op, self.doc(current.right, right_level)))
            left = current.left
            if not (isinstance(left, ast.Binary) and not needs_parens(left, left_level)
                    and operand_levels(left)[1] == right_level and id(left) not in self.comments):
                break
            current = left
        first = self.doc(current.left, left_level)
        if node.op in _ONE_PER_LINE:
            tail: list[Doc] = []
            for op, right in reversed(rights):
                tail += [_LINE, op + " ", right]
            return _Group([first, _Indent(tail)])
        # The first operand stays outside the indentation (as above), so a chain that is the
        # left operand of another does not indent twice; the fill starts with an empty item.
        parts: list[Doc] = [""]
        for op, right in reversed(rights):
            parts += [_LINE, [op + " ", right]]
        return _Group([first, _Indent([_Fill(parts)])])


def _let_pairs(node: ast.Call) -> bool:
    """A LET of name/value pairs and a body (anything else is laid out as any call)."""
    args = node.args
    return node.name == "LET" and len(args) >= 3 and len(args) % 2 == 1 and not any(
        isinstance(a, ast.Omitted) for a in args)


def _holds_dangling(node: ast.Node) -> bool:
    """Whether the node prints its dangling comments itself (between empty brackets)."""
    return isinstance(node, (ast.Call, ast.ListLit)) and not ast.children(node)


def format_tree(tree: ast.Node, width: int = 80) -> str:
    """The canonical, laid-out text of an AST (no comments)."""
    return _render(_Builder({}).doc(tree, LOOSEST), width)


def format(source: str, width: int = 80, *, limits: Limits | None = None) -> str:  # noqa: A001
    """``source`` in canonical form, comments kept, lines broken past ``width`` columns.

    Raises the ParseError (or LimitExceeded) of a source that does not parse."""
    if not isinstance(width, int) or isinstance(width, bool) or width < 1:
        raise EvalError(f"width must be a positive whole number, got {width!r}"[:120], code="E301",
                        hint="e.g. width=80")
    tree = parse(source, limits=limits)
    comments = [(t.start, t.end, t.value) for t in tokenize(source) if t.type == "COMMENT"]
    doc = _Builder(_attach(tree, comments, source)).doc(tree, LOOSEST)
    text = _render(doc, width)
    roomy = Limits(max_source_length=max(len(text), 8192), max_nodes=10**6,
                   max_depth=(limits or Limits()).max_depth, max_arguments=10**6)
    if parse(text, limits=roomy) != tree:  # pragma: no cover - a bug of ours, never silent
        raise InternalError("the formatter would change the formula's meaning",
                            span=Span(0, len(source)), source=source)
    return text
