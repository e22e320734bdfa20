"""The SQL side of the date algorithms: `SqlOps` and `Q` (a sqlglot expression with Python
operators), with what the compiler knows folded when compiling.

Contract: each ``yield``ed value of an algorithm is bound once (`SqlOps.run`): a column of the
query's lateral subqueries through the SQL `let` kit (`columnar.sql.let`) when a binder is
active, so the value of a form and its error conditions read the same bindings; else (a lambda
body, a dialect without lateral subqueries) a list-lambda parameter
(``LIST_TRANSFORM([expr], LAMBDA v : ...)[1]``). Literal operands are computed now with the
engine's semantics (`sqlfold`): a literal year, a literal date, a literal
weekend cost no SQL.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Callable, Sequence

from sqlglot import exp

from ...names import fresh
from ...sql.dialects import DURATION, marked
from ...sql.kit import dtype
from ...sql.let import _BINDER, bound, let
from ._base import BOUND, MAX_ORDINAL, Program, US_0001, US_10000, WHITESPACE
from .sqlfold import _NOT_CONSTANT, _number
from .sqlfold import _fold_binary as _fold_binary, constant as constant  # (re-exported)

# =============================================================================================
# SQL values with Python operators


def _atom(e: exp.Expr) -> exp.Expr:
    # (AND/OR are sqlglot Funcs too, yet render infix: they need parentheses like any operator)
    if isinstance(e, (exp.Connector, exp.Binary, exp.Not, exp.Neg)):
        return exp.Paren(this=e)
    if isinstance(e, (exp.Column, exp.Func, exp.Paren, exp.Null, exp.Boolean, exp.Bracket,
                      exp.Extract, exp.Case, exp.Cast)):
        return e
    if isinstance(e, exp.Literal) and (e.is_string or not e.this.startswith("-")):
        return e
    return exp.Paren(this=e)


_COMPARISONS: tuple[type, ...] = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def _operand(parent: type, e: exp.Expr, left: bool) -> exp.Expr:
    """``e`` as an operand of the binary ``parent``: parenthesized unless every SQL dialect
    reads it the same without (the standard's precedence: ``* %`` over ``+ -`` over the
    comparisons and IN over NOT over AND over OR; left-associative ``+ - *``). Integer division
    (DuckDB ``//``, a user-level operator in PostgreSQL's grammar, below ``*``) and NOT keep
    theirs."""
    t = type(e)
    if parent in _COMPARISONS and t is exp.Paren and isinstance(e.this, exp.Neg) \
            and isinstance(e.this.this, exp.Literal):
        return e.this  # a negative number compared needs no parentheses (x > -1)
    if parent in _COMPARISONS:
        plain = t in (exp.Add, exp.Sub, exp.Mul, exp.Mod)
    elif parent is exp.And:
        plain = t in _COMPARISONS or t in (exp.And, exp.In)
    elif parent is exp.Or:
        plain = t in _COMPARISONS or t in (exp.And, exp.Or, exp.In)
    elif parent is exp.Add or parent is exp.Sub:
        plain = t in (exp.Mul, exp.Mod) or (left and t in (exp.Add, exp.Sub))
    elif parent is exp.Mul:
        plain = left and t is exp.Mul
    else:
        plain = False
    return e if plain else _atom(e)


class Q:
    """A sqlglot expression with Python operators (``==`` builds SQL ``=``)."""

    __slots__ = ("e",)
    e: exp.Expr

    def __init__(self, e: Any) -> None:
        self.e = e.e if isinstance(e, Q) else e if isinstance(e, exp.Expr) else _sql_lit(e)

    def _bin(self, cls: type, other: Any, swap: bool = False) -> "Q":
        x, y = self.e, Q(other).e
        if swap:
            x, y = y, x
        folded = _fold_binary(cls, x, y)
        if folded is not _NOT_CONSTANT:
            return Q(folded)
        outer = _int_of(y) if cls is exp.Add or cls is exp.Sub else None
        shifted = _ordinal_of(x) if outer is not None else None
        if shifted is not None and outer is not None:
            # ord(d) + s + n: one DATE_DIFF from another epoch (SERIAL is ord(d) - 693595)
            return _ordinal(shifted[0], shifted[1] + (outer if cls is exp.Add else -outer))
        if outer is not None:
            inner = x
            while isinstance(inner, exp.Paren):
                inner = inner.this
            first = _int_of(inner.expression) if type(inner) in (exp.Add, exp.Sub) else None
            if first is not None:
                # (a + 1) + 1 is a + 2: integers, so the engine's type stays
                sign = 1 if type(inner) is exp.Add else -1
                total = sign * first + (1 if cls is exp.Add else -1) * outer
                return Q(inner.this) + total if total >= 0 else Q(inner.this) - (-total)
        if cls is exp.Sub or cls in _COMPARISONS:
            ox, oy = _ordinal_of(x), _ordinal_of(y)
            if ox is not None and oy is not None:
                # two ordinals: their difference is the engine's day count, their order the
                # dates' own (`SqlOps.ordinal` writes DATE_DIFF from 0001-01-01 plus one)
                if cls is exp.Sub:
                    diff = Q(exp.DateDiff(this=ox[0], expression=oy[0], unit=exp.var("DAY")))
                    return diff + (ox[1] - oy[1])
                if ox[1] == oy[1]:
                    return Q(cls(this=ox[0], expression=oy[0]))
            if cls in _COMPARISONS and (ox is None) != (oy is None):
                # an ordinal against a whole number: the date against that day's literal
                known = ox if ox is not None else oy
                k, flip = (_int_of(y), False) if ox is not None else (_int_of(x), True)
                if known is not None and k is not None and 1 <= k - known[1] <= MAX_ORDINAL:
                    d, shift = known
                    day = _date_literal(dt.date.fromordinal(k - shift))
                    return Q(cls(this=day, expression=d) if flip else cls(this=d, expression=day))
        return Q(cls(this=_operand(cls, x, True), expression=_operand(cls, y, False)))

    def __add__(self, o: Any) -> "Q": return self._bin(exp.Add, o)
    def __radd__(self, o: Any) -> "Q": return self._bin(exp.Add, o, True)
    def __sub__(self, o: Any) -> "Q": return self._bin(exp.Sub, o)
    def __rsub__(self, o: Any) -> "Q": return self._bin(exp.Sub, o, True)
    def __mul__(self, o: Any) -> "Q": return self._bin(exp.Mul, o)
    def __rmul__(self, o: Any) -> "Q": return self._bin(exp.Mul, o, True)

    def __truediv__(self, o: Any) -> "Q":
        return Q(exp.Div(this=_atom(self.e), expression=_atom(Q(o).e), typed=False, safe=False))

    def __floordiv__(self, o: Any) -> "Q": return self._bin(exp.IntDiv, o)  # operands >= 0
    def __mod__(self, o: Any) -> "Q": return self._bin(exp.Mod, o)  # operands >= 0
    def __lt__(self, o: Any) -> "Q": return self._bin(exp.LT, o)
    def __le__(self, o: Any) -> "Q": return self._bin(exp.LTE, o)
    def __gt__(self, o: Any) -> "Q": return self._bin(exp.GT, o)
    def __ge__(self, o: Any) -> "Q": return self._bin(exp.GTE, o)
    def __eq__(self, o: Any) -> "Q": return self._bin(exp.EQ, o)  # type: ignore[override]
    def __ne__(self, o: Any) -> "Q": return self._bin(exp.NEQ, o)  # type: ignore[override]
    def __and__(self, o: Any) -> "Q": return self._bin(exp.And, o)
    def __rand__(self, o: Any) -> "Q": return self._bin(exp.And, o, True)
    def __or__(self, o: Any) -> "Q": return self._bin(exp.Or, o)
    def __ror__(self, o: Any) -> "Q": return self._bin(exp.Or, o, True)
    def __invert__(self) -> "Q":
        known, v = constant(self.e)
        if known and (v is None or isinstance(v, bool)):
            return Q(None if v is None else not v)
        inner = self.e
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Not):  # NOT NOT x is x (NULL stays NULL)
            return Q(inner.this)
        if type(inner) in _NEGATED:  # NOT (a < b) is a >= b (NULL either way; NaN sorts last)
            return Q(_NEGATED[type(inner)](this=inner.this, expression=inner.expression))
        if type(inner) in (exp.And, exp.Or):  # De Morgan (it holds in three-valued logic too)
            left, right = ~Q(inner.this), ~Q(inner.expression)
            if not isinstance(left.e, exp.Not) and not isinstance(right.e, exp.Not):
                return left | right if type(inner) is exp.And else left & right
        return Q(exp.Not(this=_atom(self.e)))

    __hash__ = None  # type: ignore[assignment]


#: The comparison that is true exactly where another is false (engines order every value,
#: NaN included, so NOT (a < b) and a >= b agree on every row; NULL stays NULL).
_NEGATED: dict[type, type] = {exp.LT: exp.GTE, exp.GTE: exp.LT, exp.GT: exp.LTE, exp.LTE: exp.GT,
                              exp.EQ: exp.NEQ, exp.NEQ: exp.EQ}


def _int_of(e: exp.Expr) -> int | None:
    known, v = constant(e)
    return v if known and type(v) is int else None


def _ordinal_of(e: exp.Expr) -> tuple[exp.Expr, int] | None:
    """(d, s) where ``e`` is the ordinal of date ``d`` plus ``s`` as `_ordinal` writes it
    (``DATE_DIFF('DAY', DATE e0, d) [+ c]``: ``ord(d) - ord(e0) + c``), else None. (A bound
    ordinal stays a number: a date literal is longer, and the binding is read elsewhere.)"""
    e, shift = e.unnest(), 0
    if type(e) in (exp.Add, exp.Sub):
        c = _int_of(e.expression)
        if c is None:
            return None
        shift, e = (c if type(e) is exp.Add else -c), e.this.unnest()
    if not isinstance(e, exp.DateDiff) or e.text("unit").upper() != "DAY":
        return None
    known, epoch = constant(e.expression)
    if not known or type(epoch) is not dt.date:
        return None
    return e.this, shift - epoch.toordinal()


def unbound(q: Any) -> Any:
    """``q`` itself where it names a binding (`let`) of a small expression (a blank read as
    0: ``COALESCE("x", 0)``): a form that reads it a few times writes that out instead of a
    lateral column (the binding, then unread, is dropped)."""
    e = Q(q).e
    inner = bound(e)
    if inner is e:
        return Q(q)
    n = 0
    for _ in inner.walk():
        n += 1
        if n > 5:
            return Q(q)
    return Q(inner.copy())


def lateral() -> bool:
    """Whether a binder is active (`let` binds as a lateral column): not in a lambda body,
    nor on a dialect without lateral subqueries (SQLite, BigQuery)."""
    return _BINDER.get() is not None


def table_column(e: Any) -> bool:
    """Whether ``e`` (a `Q` or an expression) reads a table's column, not a binding (`let`)."""
    e = Q(e).e
    while isinstance(e, exp.Paren):
        e = e.this
    if type(e) is not exp.Column or e.table:
        return False
    binder = _BINDER.get()
    return binder is None or e.name not in binder.exprs


def _ordinal(d: exp.Expr, shift: int) -> Q:
    """The ordinal of date ``d`` plus ``shift``: the engine's day count from the day whose
    ordinal is ``-shift`` (``DATE_DIFF('DAY', DATE '1899-12-31', d)`` is ord(d) - 693595),
    or from 0001-01-01 plus a constant where no such day exists."""
    if -MAX_ORDINAL <= shift <= -1:
        epoch = _date_literal(dt.date.fromordinal(-shift))
        return Q(exp.DateDiff(this=d, expression=epoch, unit=exp.var("DAY")))
    diff = exp.DateDiff(this=d, expression=_date_literal(dt.date(1, 1, 1)), unit=exp.var("DAY"))
    total, cls = shift + 1, exp.Add if shift >= -1 else exp.Sub
    return Q(cls(this=diff, expression=Q(abs(total)).e)) if total else Q(diff)


def _sql_lit(v: Any) -> exp.Expr:
    if v is None:
        return exp.Null()
    if isinstance(v, bool):
        return exp.Boolean(this=v)
    if isinstance(v, int):
        lit = exp.Literal.number(abs(v))
        return exp.Paren(this=exp.Neg(this=lit)) if v < 0 else lit
    if isinstance(v, str):
        return exp.Literal.string(v)
    if isinstance(v, dt.datetime):
        return exp.cast(exp.Literal.string(v.isoformat()), dtype("TIMESTAMPTZ"))
    if isinstance(v, dt.date):
        return _date_literal(v)
    raise TypeError(type(v).__name__)


def _fn(name: str, *args: Any) -> Q:
    return Q(exp.Anonymous(this=name, expressions=[Q(a).e for a in args]))


def _cast(v: Any, to: str) -> Q:
    return Q(exp.cast(Q(v).e, dtype(to)))


def _trivial(e: exp.Expr) -> bool:
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.Neg):
        e = e.this
    return isinstance(e, (exp.Column, exp.Literal, exp.Null, exp.Boolean))


#: A yielded SQL value of at most this many nodes is repeated rather than bound. Binding costs a
#: lambda level (DuckDB binds nested lambdas in time growing with their depth); repeating costs
#: text that doubles with each reuse along a chain (WORKDAY's text reached gigabytes when
#: nothing was bound). Ten nodes keeps both small (tests/test_backends.py runs every date case).
SMALL_SQL = 10


def _small(e: exp.Expr) -> bool:
    n = 0
    for _ in e.walk():
        n += 1
        if n > SMALL_SQL:
            return False
    return True


def _bare(e: exp.Expr) -> exp.Expr:
    """A negative number literal without its parentheses (``-1``), where a CASE's THEN or
    ELSE delimits it."""
    if isinstance(e, exp.Paren) and isinstance(e.this, exp.Neg) \
            and isinstance(e.this.this, exp.Literal):
        return e.this
    return e


def _lambda(body: Any, *names: exp.Identifier) -> exp.Lambda:
    return exp.Lambda(this=Q(body).e, expressions=list(names))


def _first(list_expr: exp.Expr) -> exp.Expr:
    return exp.Bracket(this=list_expr, expressions=[exp.Literal.number(1)], offset=1)


def _map(out: Any, f: Callable[[Any], Any], kind: type) -> Any:
    if isinstance(out, tuple):
        return tuple(_map(x, f, kind) for x in out)
    if isinstance(out, list):
        return [_map(x, f, kind) for x in out]
    if isinstance(out, kind):
        return f(out)
    return out


class SqlOps:
    backend = "sql"
    decimal = False

    # -- plumbing
    def run(self, gen: Program) -> Any:
        """Runs an algorithm; each non-trivial ``yield``ed value is bound once: a column of the
        query's lateral subqueries (`sql.let`) when a binder is active, else (a lambda body, a
        dialect without lateral subqueries) a list-lambda parameter."""
        binds: list[tuple[str, Q]] = []
        lateral = _BINDER.get() is not None
        try:
            value = next(gen)
            while True:
                q = Q(value)
                if lateral:
                    send = Q(let(q.e))
                elif _trivial(q.e) or _small(q.e):
                    send = q
                else:
                    name = fresh("_v")
                    binds.append((name, q))
                    send = Q(exp.column(name))
                value = gen.send(send)
        except StopIteration as stop:
            out = stop.value
        if not binds:
            return out
        return _map(out, lambda q: self._bound(q, binds), Q)

    @staticmethod
    def _bound(q: Q, binds: list[tuple[str, Q]]) -> Q:
        """``q`` inside the let bindings it needs (directly or through later bindings)."""
        e = q.e
        needed = {c.name for c in e.find_all(exp.Column)}
        for name, value in reversed(binds):
            if name not in needed:
                continue
            listed = exp.Array(expressions=[value.e])
            # exp.Transform renders per dialect (DuckDB LIST_TRANSFORM, Spark/Trino TRANSFORM)
            e = _first(exp.Transform(this=listed, expression=_lambda(e, exp.to_identifier(name))))
            needed |= {c.name for c in value.e.find_all(exp.Column)}
        return Q(e)

    def arg(self, call: Any, i: int, v: Any) -> Any:
        """Argument ``i`` as the algorithm reads it: a constant (``call.const``, the one
        reader of constants) as a literal built from its value, so that the algorithm's
        folding starts from the call's constants, not from the compiled SQL; else its
        compiled expression."""
        value = call.const(i)
        literal = _arg_literal(value)
        return Q(v) if literal is None else Q(literal)

    def unwrap(self, v: Any) -> Any:
        return v.e if isinstance(v, Q) else v

    def lit(self, v: Any) -> Any:
        return Q(v)

    def when(self, pairs: Sequence[tuple[Any, Any]], default: Any = None) -> Any:
        """CASE WHEN ... END, without the branches a literal condition rules out (a literal
        TRUE ends the CASE: its value becomes the ELSE)."""
        ifs = []
        for c, v in pairs:
            cond = Q(c).e
            known, truth = constant(cond)
            if not known:
                ifs.append(exp.If(this=cond, true=_bare(Q(v).e)))
            elif truth is True:
                default = v
                break
        if not ifs:
            return Q(default)
        d = None if default is None else Q(default).e
        if isinstance(d, exp.Case) and d.this is None:  # an ELSE CASE WHEN ... merges in
            ifs.extend(d.args.get("ifs") or [])
            d = d.args.get("default")
        if d is not None and isinstance(d, exp.Null):
            d = None
        return Q(exp.Case(ifs=ifs, default=None if d is None else _bare(d)))

    def true(self) -> Any:
        return Q(exp.true())

    def within(self, x: Any, lo: int, hi: int, blank: Any = None) -> Any:
        """``x BETWEEN lo AND hi`` (``x`` read once), ``blank`` where ``x`` is NULL (NULL: the
        engine's own NULL; FALSE: a NULL ``x`` is out of range)."""
        known, v = constant(Q(x).e)
        if known:
            return Q(blank if v is None else (lo <= v <= hi))
        test = Q(exp.Between(this=_atom(Q(x).e), low=Q(lo).e, high=Q(hi).e))
        if blank is None:
            return test
        return Q(exp.Coalesce(this=test.e, expressions=[Q(blank).e]))

    def coalesce(self, x: Any, default: int) -> Any:
        known, v = constant(Q(x).e)
        if known:
            return Q(default if v is None else v)
        e = Q(x).e
        if isinstance(e, exp.Case) and e.this is None and e.args.get("default") is None and \
                not any(isinstance(i.args.get("true"), exp.Null) for i in e.args["ifs"]):
            # a CASE without ELSE, no branch NULL: NULL exactly where no branch holds
            return Q(exp.Case(ifs=e.args["ifs"], default=Q(default).e))
        return Q(exp.Coalesce(this=e, expressions=[Q(default).e]))

    def code(self, v: int | None) -> Any:
        """A whole number decided now (a unit's code, a basis)."""
        return Q(v)

    # -- numbers
    # (arguments of these methods are bound values or small: they may be read more than once)
    def trunc(self, x: Any) -> tuple[Any, Any]:
        return self._rounded(x, exp.Trunc)

    def floor(self, x: Any) -> tuple[Any, Any]:
        return self._rounded(x, exp.Floor)

    def _rounded(self, x: Any, fn: type) -> tuple[Any, Any]:
        known, v = constant(x.e)
        if known and (v is None or _number(v)):
            if v is None:
                return Q(None), Q(None)
            if abs(v) >= BOUND:
                return Q(None), Q(True)
            whole = int(v) if fn is exp.Trunc else int(Decimal(v).to_integral_value("ROUND_FLOOR"))
            return Q(whole), Q(False)
        # 1e15 as a DOUBLE literal (4 characters, not 16): a value within a rounding of the
        # bound is #NUM! either way, every caller's range ends far below it (see `_base.BOUND`)
        ok = Q(exp.Abs(this=x.e)) < Q(exp.Literal.number("1e15"))
        return self.when([(ok, _cast(Q(fn(this=x.e)), "BIGINT"))]), ~ok

    def number(self, i: Any) -> Any:
        return i

    def ratio(self, num: Any, den: Any) -> Any:
        return _cast(num, "DOUBLE") / den

    def exact_micros(self, s: Any) -> Program:
        """A helper generator (``yield from``): see `PolarsOps.exact_micros`."""
        known, v = constant(s.e)
        exponent = Decimal(v).as_tuple().exponent if known and _number(v) else "n"
        if isinstance(exponent, int) and -exponent <= 24:  # DECIMAL(38, 24) holds it exactly
            if abs(v) > 10**12:
                return Q(None), Q(True)
            whole = int(v)
            return Q(whole * 1_000_000 + int((Decimal(v) - whole) * 1_000_000)), Q(False)
        big = yield ~(Q(exp.Abs(this=s.e)) <= 10**12)
        d = yield Q(exp.TryCast(this=_cast(self.when([(~big, s)]), "VARCHAR").e,
                                to=dtype("DECIMAL(38, 24)")))
        whole = yield _cast(Q(exp.Trunc(this=d.e)), "BIGINT")
        frac = d - whole
        return whole * 1_000_000 + _cast(Q(exp.Trunc(this=(frac * 1_000_000).e)), "BIGINT"), big

    # -- dates
    def ordinal(self, d: Any) -> Any:
        known, v = constant(Q(d).e)
        if known and (v is None or type(v) is dt.date):
            return Q(None if v is None else v.toordinal())
        return _ordinal(Q(d).e, 0)

    def date(self, o: Any) -> Any:
        known, v = constant(Q(o).e)
        if known and (v is None or (type(v) is int and 1 <= v <= MAX_ORDINAL)):
            return _cast(None, "DATE") if v is None else Q(_date_literal(dt.date.fromordinal(v)))
        # masked by the callers; guarded again so an engine never sees an impossible date
        safe = self.when([((o >= 1) & (o <= MAX_ORDINAL + 1), o - 1)])
        moved = exp.DateAdd(this=_date_literal(dt.date(1, 1, 1)), expression=Q(safe).e,
                            unit=exp.var("DAY"))
        return _cast(Q(moved), "DATE")

    def bind(self, x: Any) -> Any:
        """``x`` bound once (`let`) where a binder is active: for a value read several times
        that no lambda parameter appears in (else the algorithm ``yield``s it)."""
        return Q(let(Q(x).e))

    def masked_date(self, o: Any, bad: Any) -> Any:
        """The date of ordinal ``o`` where ``bad`` is not set (`_base._to_date`: ``bad``
        covers every ordinal out of range, so ``date``'s own guard is not repeated)."""
        epoch, rest = 1, Q(o) - 1
        e = Q(o).e
        while isinstance(e, exp.Paren):
            e = e.this
        if isinstance(e, exp.Add):  # c + x: x days from the day of ordinal c
            for c, x in ((_int_of(e.this), e.expression), (_int_of(e.expression), e.this)):
                if c is not None and 1 <= c <= MAX_ORDINAL:
                    epoch, rest = c, Q(x)
                    break
        days = self.when([(~bad, rest)])
        known, v = constant(days.e)
        if known:
            return self.date(Q(None if v is None else v + epoch))
        moved = exp.DateAdd(this=_date_literal(dt.date.fromordinal(epoch)), expression=days.e,
                            unit=exp.var("DAY"))
        return _cast(Q(moved), "DATE")

    def pick(self, index: Any, table: dict[int, Any], default: Any) -> Any:
        """``table[index]`` as a list read by index (``[0, 1, 2, 2][i + 1]``): the index is
        read once. The callers' indexes are 0..6 where the value is used (a list read past
        its end is NULL, never an error)."""
        known, v = constant(Q(index).e)
        if known:
            return Q(None if v is None else table.get(v, default))
        values = [table.get(k, default) for k in range(max(table) + 1)]
        if all(type(x) is int for x in values):
            # the table of a week whose working days come first: the index itself, or the
            # index capped (LEAST(i, 5): working days among the first i of Monday..Sunday)
            if values == list(range(len(values))):
                return Q(index)
            cap = values[-1]
            if values == [min(k, cap) for k in range(len(values))]:
                return Q(exp.Least(this=Q(index).e, expressions=[Q(cap).e], ignore_nulls=True))
        items = [Q(x).e for x in values]
        return Q(exp.Bracket(this=exp.Array(expressions=items),
                             expressions=[(Q(index) + 1).e], offset=1))

    def lookup(self, x: Any, table: dict[Any, Any], default: Any = None) -> Any:
        """``table[x]`` as a simple CASE (``CASE x WHEN 1 THEN ...``: ``x`` is read once);
        ``default`` for a key not in it or a NULL ``x``."""
        known, v = constant(Q(x).e)
        if known:
            return Q(default if v is None or v not in table else table[v])
        d = Q(default).e
        return Q(exp.Case(this=_atom(Q(x).e), ifs=[exp.If(this=Q(k).e, true=Q(v).e)
                                                    for k, v in table.items()],
                          default=None if isinstance(d, exp.Null) else d))

    def not_in(self, x: Any, keys: Sequence[Any]) -> Any:
        """Whether ``x`` is none of ``keys`` (TRUE for a NULL ``x``, as the polars form)."""
        return self.when([(self.one_of(x, keys), False)], True)

    def one_of(self, x: Any, values: Sequence[int]) -> Any:
        """``x IN (values)`` (NULL for a NULL ``x``, as the equivalent OR chain)."""
        known, v = constant(Q(x).e)
        if known:
            return Q(None if v is None else v in values)
        return Q(exp.In(this=_atom(Q(x).e), expressions=[Q(v).e for v in values]))

    def ord_ymd(self, Y: Any, M: Any, D: Any) -> Any:
        """A valid (year 1-10000, month, day) as an ordinal (MAKE_DATE reads each once)."""
        parts = [constant(Q(p).e) for p in (Y, M, D)]
        if all(k and type(v) is int for k, v in parts):
            try:
                return Q(dt.date(*(v for _, v in parts)).toordinal())
            except ValueError:
                pass  # year 10000: the engine's
        made = exp.DateFromParts(year=Q(Y).e, month=Q(M).e, day=Q(D).e)
        return self.ordinal(Q(made))

    def month_start(self, k: Any) -> Any:
        """Month index k (>= 12) as the ordinal of its first day (k is read once)."""
        known, v = constant(Q(k).e)
        if known and type(v) is int and 12 <= v < 10000 * 12:
            return Q(dt.date(v // 12, v % 12 + 1, 1).toordinal())
        moved = exp.DateAdd(this=_date_literal(dt.date(1, 1, 1)), expression=Q(k - 12).e,
                            unit=exp.var("MONTH"))
        return self.ordinal(_cast(Q(moved), "DATE"))

    def year_later(self, d: Any) -> Any:
        """The date a calendar year after ``d`` (February 29 to February 28, as every engine
        adds a year; a timestamp on some, which compares with a date as that day's midnight)."""
        known, v = constant(Q(d).e)
        if known and type(v) is dt.date and v.year < 9999:
            day = 28 if (v.month, v.day) == (2, 29) else v.day
            return Q(v.replace(year=v.year + 1, day=day))
        return Q(exp.DateAdd(this=Q(d).e, expression=Q(1).e, unit=exp.var("YEAR")))

    def ymd(self, d: Any) -> tuple[Any, Any, Any]:
        known, v = constant(Q(d).e)
        if known and v is None:
            return Q(None), Q(None), Q(None)
        if known and type(v) is dt.date:
            return Q(v.year), Q(v.month), Q(v.day)
        return tuple(Q(exp.Extract(this=exp.var(u), expression=Q(d).e))  # type: ignore[return-value]
                     for u in ("YEAR", "MONTH", "DAY"))

    def day_of_year(self, d: Any) -> Any:
        known, v = constant(Q(d).e)
        if known and (v is None or type(v) is dt.date):
            return Q(None if v is None else v.timetuple().tm_yday)
        return Q(exp.DayOfYear(this=Q(d).e))

    def leap(self, y: Any) -> Any:
        """Whether year ``y`` (1-9999, a date's) is a leap year: its December 31 is day 366
        (one engine function instead of three remainders)."""
        known, v = constant(Q(y).e)
        if known and type(v) is int:
            return Q(v % 4 == 0 and (v % 100 != 0 or v % 400 == 0))
        dec31 = exp.DateFromParts(year=Q(y).e, month=Q(12).e, day=Q(31).e)
        return Q(exp.DayOfYear(this=dec31)) == 366

    def iso_week(self, d: Any) -> Any:
        known, v = constant(Q(d).e)
        if known and (v is None or type(v) is dt.date):
            return Q(None if v is None else v.isocalendar()[1])
        return Q(exp.WeekOfYear(this=Q(d).e))

    # -- date-times (SQL: instants, read at UTC)
    def local_date(self, x: Any) -> Any:
        known, v = constant(Q(x).e)
        if known and v is None:
            return _cast(None, "DATE")
        if known and type(v) is dt.datetime:
            return Q(v.astimezone(dt.timezone.utc).date())
        return _cast(Q(exp.AtTimeZone(this=Q(x).e, zone=exp.Literal.string("UTC"))), "DATE")

    def wall_us(self, x: Any) -> Any:
        return self.instant_us(x)

    def instant_us(self, x: Any) -> Any:
        known, v = constant(Q(x).e)
        if known and (v is None or type(v) is dt.datetime):
            return Q(None if v is None else (v - _UTC_0001) // dt.timedelta(microseconds=1))
        return Q(exp.UnixMicros(this=Q(x).e)) + US_0001

    def from_instant_us(self, us: Any) -> Any:
        known, v = constant(Q(us).e)
        if known and (v is None or (type(v) is int and 0 <= v < US_10000)):
            if v is None:
                return _cast(None, "TIMESTAMPTZ")
            return Q(_UTC_0001 + dt.timedelta(microseconds=v))
        safe = self.when([((us >= 0) & (us < US_10000), us - US_0001)])
        naive = exp.UnixToTime(this=Q(safe).e, scale=exp.UnixToTime.MICROS)
        return Q(exp.AtTimeZone(this=naive, zone=exp.Literal.string("UTC")))

    def duration_us(self, x: Any) -> Any:
        known, v = constant(Q(x).e)
        if known and (v is None or type(v) is dt.timedelta):
            return Q(None if v is None else v // dt.timedelta(microseconds=1))
        made = _made_duration(Q(x).e)
        if made is not None:
            return Q(made)  # a Duration a form just made (`make_duration`)
        return Q(marked(exp.UnixMicros(this=Q(x).e), DURATION))  # (Spark reads it apart)

    def time_seconds(self, x: Any) -> Any:
        """The whole seconds of a Duration TIME made (`parts.f_time`: ``make_duration(s *
        1000000)`` with ``0 <= s < 86400``), else None: what HOUR, MINUTE and SECOND read of
        it, with no rounding and no negative test."""
        made = _made_duration(Q(x).e)
        made = None if made is None else made.unnest()
        if isinstance(made, exp.Mul) and _int_of(made.expression) == 1_000_000:
            seconds = made.this.unnest()
            if isinstance(seconds, exp.Mod) and _int_of(seconds.expression) == 86400:
                return Q(seconds)
        return None

    def make_duration(self, us: Any) -> Any:
        return _fn("TO_MICROSECONDS", us)

    # -- texts
    def key(self, text: Any, table: dict[str, int], upper: bool) -> Any:
        known, v = constant(Q(text).e)
        if known and (v is None or isinstance(v, str)):
            if v is None:
                return Q(None)
            v = v.strip(WHITESPACE)
            return Q(table.get(v.upper() if upper else v.lower()))
        t = Q(exp.Trim(this=Q(text).e, expression=exp.Literal.string(WHITESPACE)))
        t = Q(exp.Upper(this=t.e)) if upper else Q(exp.Lower(this=t.e))
        return self.when([(t == name, code) for name, code in table.items()])


def _made_duration(e: exp.Expr) -> exp.Expr | None:
    """The microseconds ``us`` of ``TO_MICROSECONDS(us)`` (`SqlOps.make_duration`), read
    through the compiler's binding of an argument; else None."""
    while isinstance(e, exp.Paren):
        e = e.this
    binder = _BINDER.get()
    if type(e) is exp.Column and not e.table and binder is not None and e.name in binder.exprs:
        e = binder.exprs[e.name].unnest()
    if isinstance(e, exp.Anonymous) and e.name == "TO_MICROSECONDS" and len(e.expressions) == 1:
        us: exp.Expr = e.expressions[0]
        return us
    return None


def _arg_literal(v: Any) -> exp.Expr | None:
    """The SQL literal of a constant argument's value where every use of it in the algorithms
    reads the same as the compiled one (numbers only ever reach `trunc`/`floor`/
    `exact_micros`, which fold them; texts, dates, lists of dates); None: keep the compiled
    expression (a blank, a DateTime, a Duration, a value without an exact literal)."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return _sql_lit(v)
    if isinstance(v, (float, Decimal)):
        d = Decimal(repr(v)) if isinstance(v, float) else v
        if not d.is_finite():
            return None
        text = format(abs(d), "f")
        lit = exp.Literal.number(text)
        return exp.Paren(this=exp.Neg(this=lit)) if d < 0 else lit
    if isinstance(v, str) or type(v) is dt.date:
        return _sql_lit(v)
    if isinstance(v, tuple) and v and all(type(i) is dt.date for i in v):
        return exp.Array(expressions=[_date_literal(i) for i in v])
    return None


#: 0001-01-01 00:00 UTC, the origin of the microsecond counts (`_base.US_0001`).
_UTC_0001 = dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)


def _date_literal(d: dt.date) -> exp.Expr:
    return exp.cast(exp.Literal.string(d.isoformat()), dtype("DATE"))
