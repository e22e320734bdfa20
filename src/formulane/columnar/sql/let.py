"""Binding a SQL sub-expression once (`let`), so generated SQL grows linearly with the formula.

A form that reads an argument several times (ROUND reads its number in a dozen places) would
copy the argument's whole expression each time, and nesting multiplies the copies:
``ROUND(ROUND(x * 1.2, 2) * 1.1, 2)`` once rendered 2.4 MB of SQL. Instead the compiler and the
forms call `let(expression)`, which, while a `Binder` is active, records the expression as a
named column and returns a reference to it. `Binder.finish` then inlines every binding read
once (or small enough that repeating it is shorter than binding it, or whose lateral level
costs more characters than repeating what it holds) and groups what remains by dependency
level; `lateral_joins` renders each level as ``CROSS JOIN LATERAL (SELECT e1 AS _f1, e2 AS
_f2) AS _fl1`` (DuckDB, PostgreSQL, Spark, Trino, Snowflake). The names the binder makes
(``_t``, ``_fl1``, ``_f1``) are unquoted: plain lower-case ASCII starting with ``_``, valid
unquoted in each of those dialects and folded alike at definition and reference where a
dialect folds case (Snowflake upper-cases both); a reference is qualified (``_fl1._f1``), so
a table column of the same name is never read in its place. Dialects without
lateral subqueries (SQLite, BigQuery) compile with no binder: `let` returns its argument and
the SQL-size limit (`Limits.max_sql_length`, E411) stops what still grows too large.

What may be bound: an expression the engine can evaluate on every row without failing (the
forms' values are total by contract: a DECIMAL step that could overflow sits inside its own
guarding CASE). Binding evaluates it on every row, where inline it might sit in an unselected
CASE branch; DOUBLE arithmetic, comparisons and guarded casts are safe, a bare DECIMAL cast or
product is not and must be bound only together with its guard.
"""

from __future__ import annotations

import contextvars
import re
from typing import Callable, Container, Iterable, cast

from sqlglot import exp

#: Dialects whose SQL binds through lateral subqueries.
LATERAL_DIALECTS = frozenset({"duckdb", "postgres", "spark", "trino", "snowflake"})
#: Alias of the source table when bindings exist (its columns are selected as ``_t.*``).
TABLE_ALIAS = "_t"

_BINDER: contextvars.ContextVar["Binder | None"] = contextvars.ContextVar(
    "formulane_sql_binder", default=None)

#: Where a tree reads a binding: (the parent node, its arg key, the index in a list arg or
#: None), as `Binder._scan` records it for `Binder.finish` to rewrite.
_Site = tuple[exp.Expr, str, int | None]


#: Expressions that render as one self-delimited term in every dialect (a name, a literal, a
#: call, CASE ... END): inlined in place of a reference without parentheses. (Not every sqlglot
#: `Func`: DATE_ADD renders as ``d + INTERVAL ...`` on DuckDB, some others as operators.)
_ATOMS = (exp.Column, exp.Literal, exp.Null, exp.Boolean, exp.Paren, exp.Cast, exp.TryCast,
          exp.Case, exp.Coalesce, exp.Round, exp.Abs, exp.Anonymous, exp.Floor, exp.Ceil,
          exp.Nullif, exp.Greatest, exp.Least)


#: Parents whose arguments are delimited (a call's parentheses and commas, CASE's keywords, an
#: alias): an inlined binding needs no parentheses of its own there.
_DELIMITING = (exp.Cast, exp.TryCast, exp.Round, exp.Abs, exp.Coalesce, exp.Anonymous,
               exp.Nullif, exp.If, exp.Case, exp.Paren, exp.Alias)


def _trivial(e: exp.Expr) -> bool:
    """Cheaper to repeat than to bind: a column, a literal, a cast or negation of one."""
    while isinstance(e, (exp.Paren, exp.Neg, exp.Cast, exp.TryCast)):
        e = e.this
    if isinstance(e, (exp.Column, exp.Literal, exp.Null, exp.Boolean)):
        return True
    if isinstance(e, exp.Array):
        return all(_trivial(i) for i in e.expressions)
    return False


def _name(column: exp.Expr) -> str:
    """A column's name, as ``column.name`` reads it, without its property's dispatch for the
    usual identifier (`Binder._scan` asks it of every column of every tree)."""
    this = column.args.get("this")
    if type(this) is exp.Identifier:
        name: str = this.args["this"]
        return name
    return column.name


def let(e: exp.Expr) -> exp.Expr:
    """``e`` bound once when a binder is active (a column reference), else ``e`` itself."""
    binder = _BINDER.get()
    if binder is None or _trivial(e):
        return e
    return binder.bind(e)


def bound(e: exp.Expr) -> exp.Expr:
    """The expression a reference made by `let` stands for, else ``e`` itself (for the
    builders' own peepholes: `operators.sql_arith` asks what kind of value it wrote)."""
    binder = _BINDER.get()
    if binder is not None and type(e) is exp.Column and not e.table and e.name in binder.exprs:
        inner: exp.Expr = binder.exprs[e.name].this
        return inner
    return e


class Binder:
    """Collects the bindings of one query (one per `sql_select`, shared by its formulas)."""

    def __init__(self, prefix: str = "_f") -> None:
        self.prefix = prefix
        self.names: list[str] = []
        self.exprs: dict[str, exp.Expr] = {}
        self.levels: dict[str, int] = {}

    @staticmethod
    def for_names(used: Iterable[str]) -> "Binder":
        """A binder whose names (``_f1``, ``__f1``...) match none of the columns read, in any
        case (they are unquoted: Snowflake reads ``_f1`` as ``_F1``, Spark ignores case)."""
        used = set(used)
        prefix = "_f"
        while any(re.fullmatch(re.escape(prefix) + r"l?\d+", n, re.IGNORECASE) for n in used):
            prefix = "_" + prefix
        return Binder(prefix)

    def bind(self, e: exp.Expr) -> exp.Expr:
        name = f"{self.prefix}{len(self.names) + 1}"
        self.names.append(name)
        self.exprs[name] = exp.Paren(this=e)  # a parent for every reference inside
        return exp.column(name)

    def activate(self) -> contextvars.Token["Binder | None"]:
        return _BINDER.set(self)

    @staticmethod
    def deactivate(token: contextvars.Token["Binder | None"]) -> None:
        _BINDER.reset(token)

    # ------------------------------------------------------------------------ finishing

    def _scan(self, tree: exp.Expr, reads: list[str], sites: list[_Site],
              chains: list[exp.Coalesce]) -> None:
        """The binding names read in ``tree`` onto ``reads``, once per occurrence (forms put
        one node in several places: each place renders, so each counts); where each is read
        onto ``sites`` (its parent, the parent's arg key, its index in a list arg or None);
        the COALESCE nodes met onto ``chains``. `finish` rewrites the trees through these
        sites, so each tree is walked once (a node in several places is met, and recorded,
        once per place)."""
        exprs = self.exprs
        expr, column, coalesce = exp.Expr, exp.Column, exp.Coalesce
        stack = [tree]
        while stack:
            node = stack.pop()
            if type(node) is coalesce:
                chains.append(node)
            for key, value in node.args.items():
                if isinstance(value, expr):
                    if type(value) is column and _name(value) in exprs \
                            and not value.args.get("table"):
                        reads.append(value.name)
                        sites.append((node, key, None))
                    else:
                        stack.append(value)
                elif type(value) is list:
                    for i, v in enumerate(value):
                        if not isinstance(v, expr):
                            continue
                        if type(v) is column and _name(v) in exprs \
                                and not v.args.get("table"):
                            reads.append(v.name)
                            sites.append((node, key, i))
                        else:
                            stack.append(v)

    def _reference(self, tree: exp.Expr) -> str | None:
        """The binding ``tree`` itself reads (a whole tree that is a reference), else None."""
        if type(tree) is exp.Column and not tree.args.get("table") and tree.name in self.exprs:
            return tree.name
        return None

    def finish(self, outputs: list[exp.Expr | None], qualify: bool = True
               ) -> list[exp.Expr | None]:
        """Inline the bindings not worth a column (read once, or so small that repeating them
        is shorter); returns the outputs rewritten. What remains is in `bindings()`, in
        dependency order. Each tree is walked once (`_scan`: its reads, where they are, its
        error chains) and rewritten at those places only, not walked again: inlining, and
        with ``qualify`` naming the lateral subquery of each kept reference (``_fl1._f1``), so
        a table column of the same name can never be read in its place."""
        direct: dict[str, int] = {n: 0 for n in self.names}
        reads: dict[str, list[str]] = {}
        # one walk of each tree: its reads, where they are, its error chains
        sites: dict[int | str, list[_Site]] = {}
        chains: list[exp.Coalesce] = []
        tops: list[str | None] = []
        for i, o in enumerate(outputs):
            top = None if o is None else self._reference(o)
            tops.append(top)
            if top is not None:
                direct[top] += 1
            elif o is not None:
                found: list[str] = []
                self._scan(o, found, sites.setdefault(i, []), chains)
                for n in found:
                    direct[n] += 1
        for name in self.names:
            found = reads[name] = []
            self._scan(self.exprs[name], found, sites.setdefault(name, []), chains)
            for n in found:
                direct[n] += 1
        forced: set[str] = set()
        while True:
            inline, uses, levels = self._plan(direct, reads, forced)
            dear = self._dear_level(inline, levels, uses, reads)
            if not dear:
                break
            forced.update(dear)  # cheaper inlined than given a lateral subquery of their own
        self.levels = levels
        alias = {n: exp.to_identifier(f"{self.prefix}l{self.levels[n]}", quoted=False)
                 for n in self.names if n not in inline} if qualify else {}
        final: dict[str, exp.Expr] = {}
        bare: dict[str, exp.Expr] = {}  # the inlined bodies without their parentheses
        done_sites: set[tuple[int, str, int | None]] = set()

        def ref(node: exp.Expr, delimited: bool = True) -> exp.Expr:
            """What a reference becomes: the inlined body (parenthesized unless ``delimited``
            by its parent), or itself qualified."""
            name = node.name
            if name in final:
                return bare[name] if delimited else final[name]
            if name in alias:
                node.set("table", alias[name].copy())
            return node

        def substitute(key: int | str) -> None:
            """The references a tree reads rewritten, in place through their parents' args
            (a place met twice, a node shared by several parents, is rewritten once)."""
            for parent, arg, index in sites[key]:
                site = (id(parent), arg, index)
                if site in done_sites:
                    continue
                done_sites.add(site)
                delimited = isinstance(parent, _DELIMITING)
                if index is None:
                    new = ref(parent.args[arg], delimited)
                    if new is not parent.args[arg]:
                        parent.args[arg] = new
                else:
                    items = parent.args[arg]
                    new = ref(items[index], delimited)
                    if new is not items[index]:
                        items[index] = new

        kept = []
        for name in self.names:
            substitute(name)
            body = self.exprs[name].this
            if name in inline:
                if uses[name]:
                    bare[name] = body
                    final[name] = body if type(body) in _ATOMS or _trivial(body) \
                        else exp.Paren(this=body)
            else:
                self.exprs[name] = exp.Paren(this=body)
                kept.append(name)
        for name in inline:
            self.exprs.pop(name, None)
        self.names = kept
        done: list[exp.Expr | None] = []
        for i, o in enumerate(outputs):
            top = tops[i]
            if o is not None and top is None:
                substitute(i)
            done.append(o if top is None else ref(cast(exp.Expr, o)))
        # error chains, whole now that every reference is resolved: each COALESCE met while
        # scanning, tidied (no third walk over the trees). In any order: a nested chain's
        # parts are spliced in flat either way, and merged codes differ at most in how their
        # ORs nest, which renders alike. One of one part at the top of a tree is that part.
        flattened: set[int] = set()
        for chain in chains:
            if id(chain) not in flattened:
                flattened.add(id(chain))
                _flatten(chain)
        for name in kept:
            self.exprs[name] = exp.Paren(this=_unwrap(self.exprs[name].this))
        return [None if o is None else _unwrap(o) for o in done]

    def _plan(self, direct: dict[str, int], reads: dict[str, list[str]], forced: set[str]
              ) -> tuple[set[str], dict[str, int], dict[str, int]]:
        """(the bindings to inline, how many times each is read once they are, the level of
        each kept one). Inlined: those read once, those so small that repeating them is
        shorter, and ``forced``."""
        uses = dict(direct)
        inline: set[str] = set()
        for name in reversed(self.names):  # a binding is read only by later ones
            count = uses[name]
            if count > 1 and name not in forced and \
                    size(self.exprs[name], 6 // (count - 1) + 1) * (count - 1) > 6:
                continue
            inline.add(name)
            for n in reads[name]:
                uses[n] += count - 1  # its reads are repeated where it is inlined (or gone)
        # levels: a kept binding reads the kept ones it names, directly or through inlined
        # ones (bindings only read earlier ones, so one pass in order)
        levels: dict[str, int] = {}
        through: dict[str, int] = {}
        for name in self.names:
            deepest = max((through[n] for n in reads[name]), default=0)
            if name in inline:
                through[name] = deepest
            else:
                levels[name] = through[name] = deepest + 1
        return inline, uses, levels

    def _dear_level(self, inline: set[str], levels: dict[str, int], uses: dict[str, int],
                    reads: dict[str, list[str]]) -> list[str]:
        """The kept bindings of the deepest level whose lateral subquery costs more characters
        than inlining them would (`_LEVEL_CHARS` for the subquery, `_REF_CHARS` per reference,
        `_AS_CHARS` per column, against repeating each body once more per extra read); empty
        when every level pays for itself. The deepest first: inlining it repeats only reads of
        shallower levels, so the plan is remade after each (`finish`)."""
        # a body's characters, an inlined binding's read counted as its own, a kept one's as a
        # reference; worked out only as far as needed: for the bindings weighed (a level stops
        # being weighed at the first that pays for it), up to what is left of the cap
        cost: dict[str, int] = {}  # exact (under the cap)

        def cost_of(name: str, cap: int = _CHARS_CAP) -> int:
            known = cost.get(name)
            if known is not None:
                return known
            count = chars(self.exprs[name].this, cap, self.exprs, inline, cost_of)
            if count < cap:
                cost[name] = count
            return count

        by_level: dict[int, list[str]] = {}
        for name, level in levels.items():
            by_level.setdefault(level, []).append(name)
        for level in sorted(by_level, reverse=True):
            saving = _MARGIN - _LEVEL_CHARS - (_TABLE_ALIAS_CHARS if len(by_level) == 1 else 0)
            for name in by_level[level]:
                count = uses[name]
                saving += (count - 1) * cost_of(name) - count * _REF_CHARS - _AS_CHARS
                if saving >= 0:
                    break
            if saving < 0:
                return by_level[level]
        return []

    def bindings(self) -> list[tuple[str, exp.Expr, int]]:
        """(name, expression, level): level n reads only columns of levels below n."""
        return [(n, self.exprs[n].this, self.levels[n]) for n in self.names]


def _unwrap(tree: exp.Expr) -> exp.Expr:
    """A COALESCE of one part is that part (at the top of a tree, where no parent holds it)."""
    if type(tree) is exp.Coalesce and not tree.expressions:
        only: exp.Expr = tree.this
        return only
    return tree


def _flatten(node: exp.Coalesce) -> None:
    """An inlined error chain tidied, in place: COALESCE(COALESCE(a, b), c) as
    COALESCE(a, b, c), and neighbours that give one code merged, ``CASE WHEN c1 THEN '#NUM!'
    END, CASE WHEN c2 THEN '#NUM!' END`` as ``CASE WHEN c1 OR c2 THEN '#NUM!' END`` (the same
    code where either holds; NULL where neither does, a NULL condition being no error)."""
    parts = [node.this, *node.expressions]
    flat: list[exp.Expr] = []
    stack = parts[::-1]
    while stack:
        part = stack.pop()
        if type(part) is exp.Coalesce:
            stack.extend([part.this, *part.expressions][::-1])
            continue
        code = _single_code(part)
        last = _single_code(flat[-1]) if flat else None
        if code is not None and last is not None and code[1] == last[1]:
            flat[-1] = exp.Case(ifs=[exp.If(this=exp.Or(this=last[0], expression=code[0]),
                                             true=exp.Literal.string(code[1]))])
        else:
            flat.append(part)
    node.args["this"] = flat[0]
    node.args["expressions"] = flat[1:]


def _single_code(e: exp.Expr) -> tuple[exp.Expr, str] | None:
    """(condition, code) of ``CASE WHEN condition THEN 'code' END``, else None."""
    if type(e) is not exp.Case or e.this is not None or e.args.get("default") is not None:
        return None
    ifs = e.args["ifs"]
    if len(ifs) != 1:
        return None
    value = ifs[0].args.get("true")
    if not isinstance(value, exp.Literal) or not value.is_string:
        return None
    return ifs[0].this, value.this


#: Characters a lateral level adds around its columns (`` CROSS JOIN LATERAL (SELECT `` and
#: ``) AS _fl1``), the source's alias ``AS _t`` that any binding brings, a column's
#: `` AS _f1`` and its separating comma, and a reference (``_fl1._f1``): `_dear_level`'s costs.
_LEVEL_CHARS = 38
_TABLE_ALIAS_CHARS = 6
_AS_CHARS = 8
_REF_CHARS = 8
#: How much shorter inlining must seem before a level goes: `chars` is an estimate, and a
#: close call (SUM's range test on floats, 70 characters read twice) is kept bound.
_MARGIN = 12
#: Past this many characters a body pays for any level (`chars`' cap).
_CHARS_CAP = 160


def chars(tree: exp.Expr, cap: int, bound: Container[str] = (), inline: Container[str] = (),
          read: Callable[[str, int], int] | None = None) -> int:
    """About the characters ``tree`` renders as, counted up to ``cap``: a name or literal its
    own length (quoted), a call its name and parentheses, CASE and WHEN their keywords, any
    other node 4 (an operator with its spaces); a read of a binding (a name in ``bound``), if
    it is in ``inline``, ``read(name, what is left of the cap)`` and parentheses, else a
    reference. (Each inlined read takes 2 of what is left: the nesting is at most cap/2.)"""
    count = 0
    stack = [tree]
    while stack and count < cap:
        node = stack.pop()
        kind = type(node)
        if kind is exp.Column and not cast(exp.Column, node).table and node.name in bound:
            if node.name in inline and read is not None:
                count += 2 + read(node.name, cap - count - 2)
            else:
                count += _REF_CHARS
            continue
        if kind is exp.Identifier:
            count += len(node.name) + 2
        elif kind is exp.Literal:
            count += len(node.name) + (2 if node.is_string else 0)
        elif isinstance(node, exp.Func):
            count += _FUNC_CHARS.get(kind) or _func_chars(cast("type[exp.Func]", kind))
        elif kind is exp.Case:
            count += 9  # CASE ... END
        elif kind is exp.If:
            count += 12  # WHEN ... THEN ...
        elif kind is exp.DataType:
            count += 12
        elif kind is not exp.Column:
            count += 4
        _push_children(stack, node)
    return count


#: `chars`' weight of a call, by its class (`_func_chars`).
_FUNC_CHARS: dict[type[exp.Expr], int] = {}


def _func_chars(kind: type[exp.Func]) -> int:
    """A call's name and parentheses, and a little more (``EXTRACT(YEAR FROM``)."""
    _FUNC_CHARS[kind] = n = len(kind.sql_name()) + 4
    return n


def _push_children(stack: list[exp.Expr], node: exp.Expr) -> None:
    """The walk of `chars` and `size`: ``node``'s child expressions onto ``stack``."""
    for value in node.args.values():
        if isinstance(value, exp.Expr):
            stack.append(value)
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, exp.Expr))


def size(tree: exp.Expr, cap: int) -> int:
    """The number of nodes of ``tree``, counted up to ``cap`` (enough to decide)."""
    count = 0
    stack = [tree]
    while stack and count < cap:
        node = stack.pop()
        count += 1
        _push_children(stack, node)
    return count


def lateral_joins(bindings: list[tuple[str, exp.Expr, int]], prefix: str = "_f"
                  ) -> list[exp.Join]:
    """One ``CROSS JOIN LATERAL (SELECT ...) AS _fl<level>`` per dependency level."""
    by_level: dict[int, list[exp.Expr]] = {}
    for name, e, level in bindings:
        by_level.setdefault(level, []).append(exp.alias_(e, name, quoted=False, copy=False))
    joins = []
    for level in sorted(by_level):
        sub = exp.Subquery(this=exp.Select(expressions=by_level[level]))
        alias = exp.TableAlias(this=exp.to_identifier(f"{prefix}l{level}", quoted=False))
        joins.append(exp.Join(this=exp.Lateral(this=sub, alias=alias), kind="CROSS"))
    return joins


def sql_length_error(length: int, limit: int, what: str = "the generated SQL") -> Exception:
    from ...errors import LimitExceeded

    return LimitExceeded(f"{what} would be {length:,} characters, over the limit of "
                         f"{limit:,} (Limits.max_sql_length)", code="E411",
                         hint="simplify the formula, or raise Limits.max_sql_length")
