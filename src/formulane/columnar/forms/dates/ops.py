"""The two backends the date algorithms run on: `PolarsOps` and `SqlOps`, with `Q` (a sqlglot
expression with Python operators) for the SQL side.

Contract: each ``yield``ed value of an algorithm is bound once (a polars struct field, a SQL
lambda parameter), so forms stay linear in the formula's size; constants fold when compiling.
"""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from typing import Any, Callable, Sequence

from sqlglot import exp

from ._base import BOUND, EPOCH_ORDINAL, MAX_ORDINAL, Program, US_0001, US_10000, WHITESPACE, pl


# =============================================================================================
# SQL values with Python operators


def _atom(e: exp.Expr) -> exp.Expr:
    # (AND/OR are sqlglot Funcs too, yet render infix: they need parentheses like any operator)
    if isinstance(e, (exp.Connector, exp.Binary, exp.Not, exp.Neg)):
        return exp.Paren(this=e)
    if isinstance(e, (exp.Column, exp.Func, exp.Paren, exp.Null, exp.Boolean, exp.Bracket)):
        return e
    if isinstance(e, exp.Literal) and (e.is_string or not e.this.startswith("-")):
        return e
    return exp.Paren(this=e)


class Q:
    """A sqlglot expression with Python operators (``==`` builds SQL ``=``)."""

    __slots__ = ("e",)
    e: exp.Expr

    def __init__(self, e: Any) -> None:
        self.e = e.e if isinstance(e, Q) else e if isinstance(e, exp.Expr) else _sql_lit(e)

    def _bin(self, cls: type, other: Any, swap: bool = False) -> "Q":
        a, b = _atom(self.e), _atom(Q(other).e)
        if swap:
            a, b = b, a
        return Q(cls(this=a, expression=b))

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
    def __invert__(self) -> "Q": return Q(exp.Not(this=_atom(self.e)))

    __hash__ = None  # type: ignore[assignment]


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
    raise TypeError(type(v).__name__)


def _fn(name: str, *args: Any) -> Q:
    return Q(exp.Anonymous(this=name, expressions=[Q(a).e for a in args]))


def _cast(v: Any, to: str) -> Q:
    return Q(exp.cast(Q(v).e, exp.DataType.build(to)))


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


_NAMES = itertools.count()


# =============================================================================================
# Backend operations


class PolarsOps:
    backend = "polars"

    def __init__(self) -> None:
        from ....vectorized import polars as backend

        self.decimal = backend.numbers() == "decimal"
        self.DECIMAL = backend.DECIMAL_DTYPE

    # -- plumbing
    def run(self, gen: Program) -> Any:
        """Runs an algorithm; each non-trivial ``yield``ed value becomes a struct field."""
        struct: Any = None
        try:
            value = next(gen)
            while True:
                meta = value.meta
                folded = _fold(value) if struct is None and not meta.root_names() else None
                if folded is not None:
                    # a constant before any binding is computed now (one row): a one-row
                    # struct would not take the full-length fields bound after it, and
                    # inlining constants would repeat them along the chain
                    send = folded
                elif meta.is_column() or meta.is_literal():
                    send = value
                else:
                    name = f"_v{next(_NAMES)}"
                    struct = pl.struct(**{name: value}) if struct is None \
                        else struct.struct.with_fields(**{name: value})
                    send = pl.field(name)
                value = gen.send(send)
        except StopIteration as stop:
            out = stop.value
        if struct is None:
            return out
        return _map(out, lambda e: struct.struct.with_fields(_out=e).struct.field("_out"),
                    pl.Expr)

    def wrap(self, v: Any) -> Any:
        return v

    def unwrap(self, v: Any) -> Any:
        return v

    def lit(self, v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return pl.lit(v)
        if isinstance(v, int):
            return pl.lit(v, dtype=pl.Int64)
        return v

    def when(self, pairs: Sequence[tuple[Any, Any]], default: Any = None) -> Any:
        chain: Any = None
        for c, v in pairs:
            chain = (pl.when(c) if chain is None else chain.when(c)).then(self.lit(v))
        if chain is None:
            return self.lit(default)
        return chain.otherwise(self.lit(default)) if default is not None else chain

    def true(self) -> Any:
        return pl.lit(True)

    def literal(self, v: Any) -> tuple[bool, Any]:
        """(True, python value) when ``v`` is a literal expression."""
        try:
            if not v.meta.is_literal():
                return False, None
            return True, pl.select(v.alias("v")).item()
        except Exception:
            return False, None

    def empty_list(self, v: Any) -> bool:
        is_lit, value = self.literal(v)
        return is_lit and value is not None and len(value) == 0

    # -- numbers
    def _f(self, x: Any) -> Any:
        return x.cast(pl.Float64)

    def trunc(self, x: Any) -> tuple[Any, Any]:
        """(x truncated toward zero as int64, |x| >= 1e15) (null where too large)."""
        ok = self._f(x).abs() < BOUND
        return pl.when(ok).then(x).cast(pl.Int64, strict=False), ~ok

    def floor(self, x: Any) -> tuple[Any, Any]:
        ok = self._f(x).abs() < BOUND
        return pl.when(ok).then(x).floor().cast(pl.Int64, strict=False), ~ok

    def number(self, i: Any) -> Any:
        return i.cast(self.DECIMAL if self.decimal else pl.Float64)

    def ratio(self, num: Any, den: Any) -> Any:
        if self.decimal:
            return num.cast(self.DECIMAL) / den.cast(self.DECIMAL)
        return num.cast(pl.Float64) / den.cast(pl.Float64)

    def exact_micros(self, s: Any) -> Program:
        """A helper generator (``yield from``): (trunc(s * 10^6) as int64, |s| > 1e12), the
        seconds read by their decimal digits (a float by its shortest repr, as the scalar
        engine reads it); Decimal(38, 24) holds every such reading of |s| <= 1e12 exactly."""
        big = yield ~(self._f(s).abs() <= 10**12)
        d = yield pl.when(~big).then(s).cast(pl.Utf8).cast(pl.Decimal(38, 24), strict=False)
        whole = yield d.cast(pl.Int64, strict=False)
        frac = d - whole.cast(pl.Decimal(38, 24))
        return whole * 1_000_000 + (frac * 1_000_000).cast(pl.Int64, strict=False), big

    # -- dates
    def ordinal(self, d: Any) -> Any:
        return d.cast(pl.Int32).cast(pl.Int64) + EPOCH_ORDINAL

    def date(self, o: Any) -> Any:
        return (o - EPOCH_ORDINAL).cast(pl.Int32, strict=False).cast(pl.Date)

    def ord_ymd(self, Y: Any, M: Any, D: Any) -> Any:
        """A valid (year 1-10000, month, day) as an ordinal."""
        return self.ordinal(pl.date(Y, M, D))

    def month_start(self, k: Any) -> Any:
        """Month index k (>= 12, a bound value: read twice) as its first day's ordinal."""
        return self.ord_ymd(k // 12, k % 12 + 1, 1)

    def ymd(self, d: Any) -> tuple[Any, Any, Any]:
        return (d.dt.year().cast(pl.Int64), d.dt.month().cast(pl.Int64),
                d.dt.day().cast(pl.Int64))

    def day_of_year(self, d: Any) -> Any:
        return d.dt.ordinal_day().cast(pl.Int64)

    def iso_week(self, d: Any) -> Any:
        return d.dt.week().cast(pl.Int64)

    # -- date-times (polars: the wall clock of the column's own zone)
    def local_date(self, x: Any) -> Any:
        return x.dt.date()

    def wall_us(self, x: Any) -> Any:
        return x.dt.replace_time_zone(None).dt.timestamp("us") + US_0001

    def instant_us(self, x: Any) -> Any:
        return x.dt.timestamp("us") + US_0001

    def duration_us(self, x: Any) -> Any:
        return x.dt.total_microseconds().cast(pl.Int64)

    def make_duration(self, us: Any) -> Any:
        return us.cast(pl.Int64).cast(pl.Duration("us"))

    # -- texts
    def key(self, text: Any, table: dict[str, int], upper: bool) -> Any:
        t = text.str.strip_chars(WHITESPACE)
        t = t.str.to_uppercase() if upper else t.str.to_lowercase()
        return t.replace_strict(list(table), list(table.values()), default=None,
                                return_dtype=pl.Int64)


class SqlOps:
    backend = "sql"
    decimal = False

    # -- plumbing
    def run(self, gen: Program) -> Any:
        """Runs an algorithm; each non-trivial ``yield``ed value becomes a let binding."""
        binds: list[tuple[str, Q]] = []
        try:
            value = next(gen)
            while True:
                q = Q(value)
                if _trivial(q.e) or _small(q.e):
                    send = q
                else:
                    name = f"_v{next(_NAMES)}"
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

    def wrap(self, v: Any) -> Any:
        return Q(v)

    def unwrap(self, v: Any) -> Any:
        return v.e if isinstance(v, Q) else v

    def lit(self, v: Any) -> Any:
        return Q(v)

    def when(self, pairs: Sequence[tuple[Any, Any]], default: Any = None) -> Any:
        if not pairs:
            return Q(default)
        ifs = [exp.If(this=Q(c).e, true=Q(v).e) for c, v in pairs]
        d = None if default is None else Q(default).e
        return Q(exp.Case(ifs=ifs, default=d))

    def true(self) -> Any:
        return Q(exp.true())

    def literal(self, v: Any) -> tuple[bool, Any]:
        e = v.e if isinstance(v, Q) else v
        while isinstance(e, exp.Paren):
            e = e.this
        sign = 1
        if isinstance(e, exp.Neg):
            sign, e = -1, e.this
            while isinstance(e, exp.Paren):
                e = e.this
        if isinstance(e, exp.Literal):
            if e.is_string:
                return sign == 1, e.this
            return True, sign * Decimal(e.this)
        return False, None

    def empty_list(self, v: Any) -> bool:
        e = v.e if isinstance(v, Q) else v
        return isinstance(e, exp.Array) and not e.expressions

    # -- numbers
    # (arguments of these methods are bound values or small: they may be read more than once)
    def trunc(self, x: Any) -> tuple[Any, Any]:
        return self._rounded(x, exp.Trunc)

    def floor(self, x: Any) -> tuple[Any, Any]:
        return self._rounded(x, exp.Floor)

    def _rounded(self, x: Any, fn: type) -> tuple[Any, Any]:
        ok = Q(exp.Abs(this=x.e)) < BOUND
        return self.when([(ok, _cast(Q(fn(this=x.e)), "BIGINT"))]), ~ok

    def number(self, i: Any) -> Any:
        return i

    def ratio(self, num: Any, den: Any) -> Any:
        return _cast(num, "DOUBLE") / den

    def exact_micros(self, s: Any) -> Program:
        """A helper generator (``yield from``): see `PolarsOps.exact_micros`."""
        big = yield ~(Q(exp.Abs(this=s.e)) <= 10**12)
        d = yield Q(exp.TryCast(this=_cast(self.when([(~big, s)]), "VARCHAR").e,
                                to=exp.DataType.build("DECIMAL(38, 24)")))
        whole = yield _cast(Q(exp.Trunc(this=d.e)), "BIGINT")
        frac = d - whole
        return whole * 1_000_000 + _cast(Q(exp.Trunc(this=(frac * 1_000_000).e)), "BIGINT"), big

    # -- dates
    def ordinal(self, d: Any) -> Any:
        return Q(exp.DateDiff(this=Q(d).e, expression=_date_literal(dt.date(1, 1, 1)),
                              unit=exp.var("DAY"))) + 1

    def date(self, o: Any) -> Any:
        # masked by the callers; guarded again so an engine never sees an impossible date
        safe = self.when([((o >= 1) & (o <= MAX_ORDINAL + 1), o - 1)])
        moved = exp.DateAdd(this=_date_literal(dt.date(1, 1, 1)), expression=Q(safe).e,
                            unit=exp.var("DAY"))
        return _cast(Q(moved), "DATE")

    def ord_ymd(self, Y: Any, M: Any, D: Any) -> Any:
        """A valid (year 1-10000, month, day) as an ordinal (MAKE_DATE reads each once)."""
        made = exp.DateFromParts(year=Q(Y).e, month=Q(M).e, day=Q(D).e)
        return self.ordinal(Q(made))

    def month_start(self, k: Any) -> Any:
        """Month index k (>= 12) as the ordinal of its first day (k is read once)."""
        moved = exp.DateAdd(this=_date_literal(dt.date(1, 1, 1)), expression=Q(k - 12).e,
                            unit=exp.var("MONTH"))
        return self.ordinal(_cast(Q(moved), "DATE"))

    def ymd(self, d: Any) -> tuple[Any, Any, Any]:
        return tuple(Q(exp.Extract(this=exp.var(u), expression=Q(d).e))  # type: ignore[return-value]
                     for u in ("YEAR", "MONTH", "DAY"))

    def day_of_year(self, d: Any) -> Any:
        return Q(exp.DayOfYear(this=Q(d).e))

    def iso_week(self, d: Any) -> Any:
        return Q(exp.WeekOfYear(this=Q(d).e))

    # -- date-times (SQL: instants, read at UTC)
    def local_date(self, x: Any) -> Any:
        return _cast(Q(exp.AtTimeZone(this=Q(x).e, zone=exp.Literal.string("UTC"))), "DATE")

    def wall_us(self, x: Any) -> Any:
        return self.instant_us(x)

    def instant_us(self, x: Any) -> Any:
        return Q(exp.UnixMicros(this=Q(x).e)) + US_0001

    def from_instant_us(self, us: Any) -> Any:
        safe = self.when([((us >= 0) & (us < US_10000), us - US_0001)])
        naive = exp.UnixToTime(this=Q(safe).e, scale=exp.UnixToTime.MICROS)
        return Q(exp.AtTimeZone(this=naive, zone=exp.Literal.string("UTC")))

    def duration_us(self, x: Any) -> Any:
        return Q(exp.UnixMicros(this=Q(x).e))

    def make_duration(self, us: Any) -> Any:
        return _fn("TO_MICROSECONDS", us)

    # -- texts
    def key(self, text: Any, table: dict[str, int], upper: bool) -> Any:
        t = Q(exp.Trim(this=Q(text).e, expression=exp.Literal.string(WHITESPACE)))
        t = Q(exp.Upper(this=t.e)) if upper else Q(exp.Lower(this=t.e))
        return self.when([(t == name, code) for name, code in table.items()])


def _fold(value: Any) -> Any:
    """A constant polars expression as a literal of its one value (None: not foldable)."""
    try:
        series = pl.select(value.alias("_c")).to_series()
    except Exception:
        return None
    if len(series) != 1 or series.dtype.is_nested():
        return None
    return pl.lit(series.item(), dtype=series.dtype)


def _date_literal(d: dt.date) -> exp.Expr:
    return exp.cast(exp.Literal.string(d.isoformat()), exp.DataType.build("DATE"))


