"""Polars and SQL forms of the date and time family (private).

`dates.py` names these through its lazy `_P`/`_S` wrappers, resolved on first use, so declaring
a function never imports polars (nor this module). Each algorithm is written once, over an
"ops" object (`PolarsOps` or `SqlOps`) whose values support Python's operators, and mirrors
the scalar implementation in `_calendar`: the same arithmetic on proleptic Gregorian ordinals
(``date.toordinal()``), the same errors in the same order.

Conventions shared by both backends:

- Dates compute as int64 ordinals (1 is 0001-01-01); a date is built only from an ordinal that
  passed the scalar's range test, and every value that could make an engine raise (an int64
  overflow, a date out of range) is masked first, so no row can abort the query.
- Number arguments are truncated toward zero as `_calendar.to_int` does; a magnitude of 1e15
  or more is #NUM! wherever the scalar's answer is #NUM! for it anyway (each form says why).
- DateTime fields are read in the value's zone: in polars the column's own zone (one zone per
  column, the wall clock of ``dt.replace_time_zone(None)``); in SQL a TIMESTAMPTZ is an
  instant and is read at UTC (``AT TIME ZONE 'UTC'``, ``EPOCH_US``), never in the session's
  zone. So SQL has no form for what would need another zone (TZCONVERT to a zone other than
  UTC, DATETIME in another zone), and polars none for a zone that is not a literal.
- Texts naming units ("month", "YD") are trimmed of exactly the characters Python's
  ``str.strip`` removes and compared after lower/upper-casing, as the scalar does.
- Holiday lists may be columns: polars injects the row's bounds into the list by broadcast
  arithmetic (``list - column``) and counts inside ``list.eval``; SQL uses list lambdas that
  capture the row's columns (DuckDB ``list_filter(xs, lambda x: x > col)``).
- Weekend codes must be literals (their mask decides the shape of the expression); a weekend
  that is a column is refused.

Sharing. Neither engine has a let: an expression used twice is written twice, and chains of
reuse grow exponentially (polars walks its expression trees without memo, SQL text repeats).
So the algorithms are generators: ``v = yield expr`` names a value (helpers join the chain with
``yield from``). Polars binds it as a struct field (``pl.struct(v0=...).struct.with_fields(
v1=f(pl.field("v0")))``, outputs read from the last struct), SQL as a lambda parameter
(``LIST_TRANSFORM([expr], LAMBDA v : ...)[1]``): the forms stay linear in the formula's size.
"""

from __future__ import annotations

import datetime as dt
import importlib
import itertools
from decimal import Decimal
from typing import Any, Callable, Generator, Sequence

from sqlglot import exp

from ..errors import Unsupported
from ..values import XLError
from . import _calendar as cal


class _LazyPolars:
    """``pl`` imported on first attribute access: the SQL forms never import polars."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("polars"), name)


pl: Any = _LazyPolars()

#: Integer arguments at or beyond this magnitude are not converted (int64 stays exact).
BOUND = 10**15
#: Python's ordinal of 1970-01-01 (polars dates count days from it).
EPOCH_ORDINAL = 719163
MAX_ORDINAL = cal.MAX_ORDINAL
EXCEL_MIN_ORDINAL = cal.EXCEL_MIN_ORDINAL
MARCH_1900 = dt.date(1900, 3, 1).toordinal()
DAY_US = 86_400_000_000
#: Wall and instant times count microseconds from 0001-01-01 00:00 (never negative in range).
US_0001 = (EPOCH_ORDINAL - 1) * DAY_US
#: 10000-01-01 in those microseconds: instants and wall times must stay below it.
US_10000 = MAX_ORDINAL * DAY_US
#: The characters Python's ``str.strip()`` removes.
WHITESPACE = "".join(chr(c) for c in range(0x3000 + 1) if chr(c).isspace())

Program = Generator[Any, Any, Any]


def _refuse(backend: str, function: str, reason: str) -> Unsupported:
    what = "evaluate" if backend == "polars" else "express"
    return Unsupported(f"{backend} cannot {what} {function}: {reason}", function=function,
                       backend=backend, reason=reason)


def program(f: Callable[..., Program]) -> Callable[..., Any]:
    """A generator algorithm as a function of (ops, *args) returning its outputs."""

    def run(o: Any, *args: Any) -> Any:
        return o.run(f(o, *args))

    run.__name__ = f.__name__
    run.__doc__ = f.__doc__
    return run


# =============================================================================================
# SQL values with Python operators


def _atom(e: exp.Expression) -> exp.Expression:
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

    def __init__(self, e: Any) -> None:
        self.e = e.e if isinstance(e, Q) else e if isinstance(e, exp.Expression) else _sql_lit(e)

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


def _sql_lit(v: Any) -> exp.Expression:
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


def _trivial(e: exp.Expression) -> bool:
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


def _small(e: exp.Expression) -> bool:
    n = 0
    for _ in e.walk():
        n += 1
        if n > SMALL_SQL:
            return False
    return True


def _lambda(body: Any, *names: exp.Identifier) -> exp.Lambda:
    return exp.Lambda(this=Q(body).e, expressions=list(names))


def _first(list_expr: exp.Expression) -> exp.Expression:
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
        backend = importlib.import_module("formulane.vectorized.polars")
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

    def inline(self, gen: Program) -> Any:
        """Runs an algorithm without bindings (inside ``list.eval``, on the element)."""
        try:
            value = next(gen)
            while True:
                value = gen.send(value)
        except StopIteration as stop:
            return stop.value

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

    def inline(self, gen: Program) -> Any:
        try:
            value = next(gen)
            while True:
                value = gen.send(Q(value))
        except StopIteration as stop:
            return stop.value

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


def _date_literal(d: dt.date) -> exp.Expression:
    return exp.cast(exp.Literal.string(d.isoformat()), exp.DataType.build("DATE"))


# =============================================================================================
# Calendar arithmetic on ordinals (both backends)


def is_leap(y: Any) -> Any:
    return (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))


def _min(o: Any, a: Any, b: Any) -> Any:
    return o.when([(a < b, a)], b)


def _month_ok(k: Any) -> Any:
    return (k >= 12) & (k <= 9999 * 12 + 11)


def _to_date(o: Any, ordinal: Any, bad: Any) -> Any:
    return o.date(o.when([(~bad, ordinal)]))


def _dates(o: Any, kinds: Sequence[str | None], args: Sequence[Any]) -> list[Any]:
    """Arguments as the scalar reads them: a DateTime by its local calendar date."""
    return [o.local_date(a) if k == "DateTime" else a for k, a in zip(kinds, args)]


# ------------------------------------------------------------------------------------ DATE


def _date_body(o: Any, y: Any, m: Any, d: Any) -> Program:
    """make_date: years 0-1899 offset by 1900; months then days roll over; the result must be
    1899-12-31..9999-12-31. |month| >= 1e15 leaves the years 1-9999, |day| >= 1e15 the date
    range: #NUM! in the scalar too. Returns (ordinal, bad)."""
    y, m, d = (yield y), (yield m), (yield d)
    yi, by = o.trunc(y)
    mi, bm = o.trunc(m)
    di, bd = o.trunc(d)
    yi = yield yi
    bad = yield by | bm | bd | (yi < 0) | (yi >= 10000)
    k = yield o.when([(yi < 1900, yi + 1900)], yi) * 12 + mi - 1
    bad = yield bad | ~_month_ok(k)
    ordinal = yield o.month_start(o.when([(~bad, k)], 12)) + o.when([(~bad, di)], 1) - 1
    bad = yield bad | (ordinal < EXCEL_MIN_ORDINAL) | (ordinal > MAX_ORDINAL)
    return ordinal, bad


@program
def f_date(o: Any, kinds: Any, y: Any, m: Any, d: Any) -> Program:
    ordinal, bad = yield from _date_body(o, y, m, d)
    return _to_date(o, ordinal, bad), [(bad, "#NUM!")]


@program
def f_time(o: Any, kinds: Any, h: Any, m: Any, s: Any) -> Program:
    """Each argument at most 32767, the total not negative; wrapped to under 24 hours.
    |x| >= 1e15 is #NUM! either way (too large, or a negative total)."""
    h, m, s = (yield h), (yield m), (yield s)
    hi, bh = o.trunc(h)
    mi, bm = o.trunc(m)
    si, bs = o.trunc(s)
    hi, mi, si = (yield hi), (yield mi), (yield si)
    total = yield hi * 3600 + mi * 60 + si
    bad = yield bh | bm | bs | (hi > 32767) | (mi > 32767) | (si > 32767) | (total < 0)
    seconds = o.when([(~bad, total)], 0) % 86400
    return o.make_duration(seconds * 1_000_000), [(bad, "#NUM!")]


def _zone(o: Any, function: str, value: Any) -> dt.tzinfo | None:
    """A literal time-zone argument (None when the text names no zone: #VALUE!)."""
    is_lit, text = o.literal(value)
    if not is_lit or not isinstance(text, str):
        raise _refuse(o.backend, function, "the time zone must be a literal text (a column "
                      "holds one zone per column, not one per value)")
    try:
        return cal.zone(text)
    except XLError:
        return None


def _polars_zone_key(function: str, tz: dt.tzinfo) -> str:
    if tz is dt.timezone.utc:
        return "UTC"
    if isinstance(tz, dt.timezone):
        offset = tz.utcoffset(None)
        seconds = int(offset.total_seconds())
        if seconds % 3600:
            raise _refuse("polars", function, "polars has no zone for an offset that is not a "
                          "whole number of hours")
        hours = seconds // 3600
        return "UTC" if not hours else "Etc/GMT" + ("-" if hours > 0 else "+") + str(abs(hours))
    return str(getattr(tz, "key"))


def _localize_polars(naive_us: Any, key: str) -> Any:
    """A wall-clock time (microseconds from 0001-01-01) in zone ``key``: an ambiguous time takes
    its first occurrence, a time in a gap moves forward by the gap (`_calendar.localize`)."""
    naive = (naive_us - US_0001).cast(pl.Datetime("us"))
    direct = naive.dt.replace_time_zone(key, ambiguous="earliest", non_existent="null")
    # In a gap: from the same wall time a day earlier, one wall-clock day on (polars puts a
    # time in a gap at the later offset), then fixed as `_fix_gap` does.
    day_before = (naive - pl.duration(days=1)).dt.replace_time_zone(
        key, ambiguous="earliest", non_existent="null").dt.offset_by("1d")
    return pl.coalesce(direct, _fix_gap(day_before, naive_us))


def _fix_gap(value: Any, wanted_wall_us: Any) -> Any:
    """``value`` from polars' offset_by: a wall time that fell in a DST gap was put at the
    offset after the gap, the scalar engine (Python's fold=0) reads it at the offset before:
    the instant moves on by the gap, i.e. by the wall time that was missed."""
    missed = wanted_wall_us - PolarsOps().wall_us(value)
    return value + missed.cast(pl.Duration("us"))


@program
def f_datetime(o: Any, kinds: Any, y: Any, mo: Any, d: Any, h: Any, mi: Any, s: Any,
               zone: Any) -> Program:
    """The zone first (#VALUE!), then DATE's rules for the day (#NUM!), then the clock fields
    carried into days; the time must stay within the years 1-9999 in UTC and in the zone."""
    tz = _zone(o, "DATETIME", zone)
    if tz is None:
        null = pl.lit(None, dtype=pl.Datetime("us", "UTC")) if o.backend == "polars" \
            else _cast(None, "TIMESTAMPTZ")
        return null, [(o.true(), "#VALUE!")]
    if o.backend == "sql" and tz.utcoffset(None) != dt.timedelta(0):
        raise _refuse("sql", "DATETIME", "a SQL TIMESTAMPTZ is read at UTC; a DateTime in "
                      "another zone has no SQL form")
    key = _polars_zone_key("DATETIME", tz) if o.backend == "polars" else "UTC"
    day0, bad0 = yield from _date_body(o, y, mo, d)
    h, mi, s = (yield h), (yield mi), (yield s)
    hi, bh = o.trunc(h)
    mi_, bm = o.trunc(mi)
    su, bs = yield from o.exact_micros(s)
    # The scalar: max(|h|, |m|, |s|) > 1e12 is #NUM!; below that, a total beyond 1e12 seconds
    # moves the date more than 11 million days, outside the years 1-9999 (#NUM! as well).
    secs = yield hi * 3600 + mi_ * 60
    bad = yield bad0 | bh | bm | bs | ~(secs <= 10**12) | ~(secs >= -10**12)
    shift = 25_000_000  # days: keeps the division's operand non-negative
    micros = yield o.when([(~bad, secs * 1_000_000 + su)], 0) + shift * DAY_US
    day1 = yield day0 + micros // DAY_US - shift
    bad = yield bad | (day1 < 1) | (day1 > MAX_ORDINAL)
    wall = yield o.when([(~bad, (day1 - 1) * DAY_US + micros % DAY_US)])
    if o.backend == "sql":
        return o.from_instant_us(wall), [(bad, "#NUM!")]
    value = yield _localize_polars(wall, key)
    instant = o.instant_us(value)
    bad = bad | (instant < 0) | (instant >= US_10000) | (o.wall_us(value) >= US_10000)
    return value, [(bad, "#NUM!")]


# ------------------------------------------------------------------------------ fields


def f_year(o: Any, kinds: Any, d: Any) -> Any:
    return o.number(o.ymd(_dates(o, kinds, [d])[0])[0])


def f_month(o: Any, kinds: Any, d: Any) -> Any:
    return o.number(o.ymd(_dates(o, kinds, [d])[0])[1])


def f_day(o: Any, kinds: Any, d: Any) -> Any:
    return o.number(o.ymd(_dates(o, kinds, [d])[0])[2])


def _clock(unit: str) -> Callable[..., Any]:
    @program
    def form(o: Any, kinds: Any, v: Any) -> Program:
        """Seconds since midnight rounded to the nearest second, mod 86400
        (`dates._seconds_of_day`): a Date is midnight, a negative Duration #NUM!."""
        kind = kinds[0]
        errors: list[Any] = []
        if kind == "Date":
            return o.number(o.lit(0)), []
        if kind == "DateTime":
            tod = yield o.wall_us(v) % DAY_US
        else:  # Duration: whole days are dropped
            us = yield o.duration_us(v)
            negative = yield us < 0
            tod = yield o.when([(~negative, us)], 0) % DAY_US
            errors = [(negative, "#NUM!")]
        seconds = yield (tod // 1_000_000 + o.when([(tod % 1_000_000 >= 500_000, 1)], 0)) \
            % 86400
        value = {"hour": seconds // 3600, "minute": seconds // 60 % 60,
                 "second": seconds % 60}[unit]
        return o.number(value), errors
    return form


f_hour, f_minute, f_second = _clock("hour"), _clock("minute"), _clock("second")


# ---------------------------------------------------------------------------- weekdays


@program
def f_weekday(o: Any, kinds: Any, d: Any, rt: Any) -> Program:
    (d,) = _dates(o, kinds, [d])
    rt = yield rt
    r, big = o.trunc(rt)
    r = yield r
    table = cal.WEEKDAY_TYPES
    first = o.when([(r == t, f) for t, (f, _) in table.items()])
    base = o.when([(r == t, b) for t, (_, b) in table.items()])
    bad = big | o.when([(r == t, False) for t in table], True)
    weekday0 = (o.ordinal(d) - 1) % 7  # Python's weekday(): ordinal 1 is a Monday
    return o.number((weekday0 - first + 7) % 7 + base), [(bad, "#NUM!")]


@program
def f_weeknum(o: Any, kinds: Any, d: Any, rt: Any) -> Program:
    (d,) = _dates(o, kinds, [d])
    d, rt = (yield d), (yield rt)
    r, big = o.trunc(rt)
    r = yield r
    table = cal.WEEKNUM_TYPES
    first = o.when([(r == t, f) for t, f in table.items()], 0)
    bad = big | o.when([(r == t, False) for t in [*table, 21]], True)
    ordinal = yield o.ordinal(d)
    jan1 = yield ordinal - o.day_of_year(d) + 1
    offset = ((jan1 - 1) % 7 - first + 7) % 7
    week = (ordinal - jan1 + offset) // 7 + 1
    value = o.when([(r == 21, o.iso_week(d))], week)
    return o.number(value), [(bad, "#NUM!")]


def f_isoweeknum(o: Any, kinds: Any, d: Any) -> Any:
    (d,) = _dates(o, kinds, [d])
    return o.number(o.iso_week(d))


# ------------------------------------------------------------------------ moving dates


def _add_months(o: Any, d: Any, months: Any, bad: Any) -> Program:
    """(ordinal of d + months clamped to the month's end, bad) (`_calendar.add_months`)."""
    d = yield d
    Y, M, D = o.ymd(d)
    k = yield Y * 12 + M - 1 + o.when([(~bad, months)], 0)
    bad = yield bad | ~_month_ok(k)
    ks = yield o.when([(~bad, k)], 12)
    start = yield o.month_start(ks)
    length = o.month_start(ks + 1) - start
    return start + _min(o, D, length) - 1, bad


@program
def f_edate(o: Any, kinds: Any, d: Any, n: Any) -> Program:
    (d,) = _dates(o, kinds, [d])
    n = yield n
    months, big = o.trunc(n)
    ordinal, bad = yield from _add_months(o, d, months, big)
    return _to_date(o, ordinal, bad), [(bad, "#NUM!")]


@program
def f_eomonth(o: Any, kinds: Any, d: Any, n: Any) -> Program:
    (d,) = _dates(o, kinds, [d])
    d, n = (yield d), (yield n)
    months, big = o.trunc(n)
    Y, M, _ = o.ymd(d)
    k = yield Y * 12 + M - 1 + o.when([(~big, months)], 0)
    bad = yield big | ~_month_ok(k)
    ordinal = yield o.month_start(o.when([(~bad, k)], 12) + 1) - 1
    return _to_date(o, ordinal, bad), [(bad, "#NUM!")]


#: DATEADD's units as codes: 1-3 count months, 4-5 days, 6-8 seconds (tables below).
_UNIT_CODES = {"year": 1, "quarter": 2, "month": 3, "week": 4, "day": 5, "hour": 6,
               "minute": 7, "second": 8}
_MONTHS_PER = {1: 12, 2: 3, 3: 1}
_DAYS_PER = {4: 7, 5: 1}
_SECONDS_PER = {6: 3600, 7: 60, 8: 1}


def _unit_table() -> dict[str, int]:
    dates = importlib.import_module("formulane.functions.dates")
    return {alias: _UNIT_CODES[key] for alias, key in dates._UNITS.items()}


@program
def f_dateadd(o: Any, kinds: Any, x: Any, n: Any, unit: Any) -> Program:
    """Unknown unit #VALUE!, a clock unit on a Date #VALUE!, then the range (#NUM!). |n| >= 1e15
    is #NUM!: that many months, days or seconds leave the years 1-9999."""
    x, n, unit = (yield x), (yield n), (yield unit)
    code = yield o.key(unit, _unit_table(), upper=False)
    unknown = yield o.when([(code >= 1, False)], True)
    ni, big = o.trunc(n)
    big = yield big
    nn = yield o.when([(~big, ni)], 0)
    is_months = yield code <= 3
    is_clock = yield code >= 6
    date = yield o.local_date(x) if kinds[0] == "DateTime" else x
    months = nn * o.when([(code == c, k) for c, k in _MONTHS_PER.items()], 0)
    days = nn * o.when([(code == c, k) for c, k in _DAYS_PER.items()], 0)
    by_month, bad_month = yield from _add_months(o, date, months, big)
    by_day = yield o.ordinal(date) + days
    bad_day = big | (by_day < 1) | (by_day > MAX_ORDINAL)
    moved = yield o.when([(is_months, by_month)], by_day)
    bad_calendar = yield o.when([(is_months, bad_month)], bad_day)
    if kinds[0] != "DateTime":
        errors = [(unknown, "#VALUE!"), (is_clock, "#VALUE!"), (bad_calendar, "#NUM!")]
        return _to_date(o, moved, unknown | is_clock | bad_calendar), errors
    # DateTime: calendar units keep the wall clock; clock units add elapsed time.
    seconds = yield nn * o.when([(code == c, k) for c, k in _SECONDS_PER.items()], 0)
    too_far = yield big | (seconds > 3_700_000 * 86400) | (seconds < -3_700_000 * 86400)
    delta_days = yield o.when([(~(unknown | is_clock | bad_calendar), moved - o.ordinal(date))],
                              0)
    delta_us = o.when([(~(unknown | too_far) & is_clock, seconds * 1_000_000)], 0)
    if o.backend == "sql":
        instant = yield o.instant_us(x) + delta_days * DAY_US + delta_us
        out_of_range = (instant < 0) | (instant >= US_10000)
        value = o.from_instant_us(instant)
    else:
        wanted = o.wall_us(x) + delta_days * DAY_US
        calendar = _fix_gap(x.dt.offset_by(pl.format("{}d", delta_days)), wanted)
        clock = x + delta_us.cast(pl.Duration("us"))
        value = pl.when(is_clock).then(clock).otherwise(calendar)
        instant, wall = o.instant_us(value), o.wall_us(value)
        out_of_range = (instant < 0) | (instant >= US_10000) | (wall < 0) | (wall >= US_10000)
    bad = o.when([(is_clock, too_far)], bad_calendar) | out_of_range
    return value, [(unknown, "#VALUE!"), (bad, "#NUM!")]


# -------------------------------------------------------------------------- differences

_DATEDIF_CODES = {"D": 1, "Y": 2, "M": 3, "YM": 4, "MD": 5, "YD": 6}


@program
def f_datedif(o: Any, kinds: Any, s: Any, e: Any, unit: Any) -> Program:
    s, e = _dates(o, kinds, [s, e])
    s, e, unit = (yield s), (yield e), (yield unit)
    code = yield o.key(unit, _DATEDIF_CODES, upper=True)
    os_, oe = (yield o.ordinal(s)), (yield o.ordinal(e))
    sy, sm, sd = (yield o.ymd(s)[0]), (yield o.ymd(s)[1]), (yield o.ymd(s)[2])
    ey, em, ed = (yield o.ymd(e)[0]), (yield o.ymd(e)[1]), (yield o.ymd(e)[2])
    early = yield (em < sm) | ((em == sm) & (ed < sd))  # (em, ed) < (sm, sd)
    day_short = o.when([(ed < sd, 1)], 0)
    d_ = oe - os_
    y_ = ey - sy - o.when([(early, 1)], 0)
    m_ = (ey - sy) * 12 + em - sm - day_short
    ym = (em - sm - day_short + 12) % 12
    # MD: the length of the month before e's month (December of year 0 has 31 days)
    k_e = yield ey * 12 + em - 1
    prev_len = o.when([(k_e >= 13, o.month_start(k_e) - o.month_start(o.when([(k_e >= 13,
                                                                                 k_e - 1)],
                                                                               12)))], 31)
    md = o.when([(ed >= sd, ed - sd)], prev_len + ed - sd)
    # YD: from s's month and day in e's year (Feb 29 rolls to Mar 1), or dropping the whole
    # calendar years between the two
    anchor = o.ord_ymd(ey, sm, 1) + sd - 1
    between = o.ord_ymd(ey, 1, 1) - o.ord_ymd(o.when([(sy < ey, sy + 1)], ey), 1, 1)
    yd = o.when([(~early, oe - anchor)], oe - os_ - between)
    value = o.when([(code == 1, d_), (code == 2, y_), (code == 3, m_), (code == 4, ym),
                    (code == 5, md)], yd)
    unknown = o.when([(code >= 1, False)], True)
    return o.number(value), [(os_ > oe, "#NUM!"), (unknown, "#NUM!")]


def f_days(o: Any, kinds: Any, e: Any, s: Any) -> Any:
    e, s = _dates(o, kinds, [e, s])
    return o.number(o.ordinal(e) - o.ordinal(s))


def _days360_us(o: Any, Y1: Any, M1: Any, D1: Any, Y2: Any, M2: Any, D2: Any) -> Program:
    feb1 = yield (M1 == 2) & (D1 == o.when([(is_leap(Y1), 29)], 28))
    feb2 = yield (M2 == 2) & (D2 == o.when([(is_leap(Y2), 29)], 28))
    d1 = o.when([((D1 == 31) & (D2 == 31), 30), (D1 == 31, 30), ((D1 == 30) & (D2 == 31), D1),
                 (feb1 & feb2, 30), (feb1, 30)], D1)
    d2 = o.when([((D1 == 31) & (D2 == 31), 30), (D1 == 31, D2), ((D1 == 30) & (D2 == 31), 30),
                 (feb1 & feb2, 30)], D2)
    return (Y2 - Y1) * 360 + (M2 - M1) * 30 + d2 - d1


@program
def f_yearfrac(o: Any, kinds: Any, s: Any, e: Any, basis: Any) -> Program:
    s, e = _dates(o, kinds, [s, e])
    s, e, basis = (yield s), (yield e), (yield basis)
    b, big = o.trunc(basis)
    b = yield b
    bad = big | o.when([(b == k, False) for k in range(5)], True)
    o1, o2 = (yield o.ordinal(s)), (yield o.ordinal(e))
    swap = yield o1 > o2
    lo, hi = o.when([(swap, e)], s), o.when([(swap, s)], e)
    lo, hi = (yield lo), (yield hi)
    Y1, M1, D1 = (yield o.ymd(lo)[0]), (yield o.ymd(lo)[1]), (yield o.ymd(lo)[2])
    Y2, M2, D2 = (yield o.ymd(hi)[0]), (yield o.ymd(hi)[1]), (yield o.ymd(hi)[2])
    lo_o = yield o.when([(swap, o2)], o1)
    days = yield o.when([(swap, o1)], o2) - lo_o
    d360 = yield from _days360_us(o, Y1, M1, D1, Y2, M2, D2)
    d360_eu = (Y2 - Y1) * 360 + (M2 - M1) * 30 + _min(o, D2, 30) - _min(o, D1, 30)
    # basis 1, actual/actual
    one_year = yield (Y1 == Y2) | ((Y1 + 1 == Y2) & ((M1 > M2) | ((M1 == M2) & (D1 >= D2))))
    feb29 = (is_leap(Y1) & (M1 <= 2)) | (is_leap(Y2) & (M2 >= 3)
                                         & (o.ord_ymd(Y2, 3, 1) > lo_o))
    year_len = o.when([(Y1 == Y2, o.when([(is_leap(Y1), 366)], 365)),
                       (feb29 | ((M2 == 2) & (D2 == 29)), 366)], 365)
    span = o.ord_ymd(Y2 + 1, 1, 1) - o.ord_ymd(Y1, 1, 1)
    num = o.when([(b == 0, d360), (b == 4, d360_eu),
                  (b == 1, o.when([(one_year, days)], days * (Y2 - Y1 + 1)))], days)
    den = o.when([(b == 0, 360), (b == 2, 360), (b == 3, 365), (b == 4, 360),
                  (b == 1, o.when([(one_year, year_len)], span))], 1)
    return o.ratio(num, den), [(bad, "#NUM!")]


# ------------------------------------------------------------------------- working days


def _static_mask(o: Any, function: str, weekend: Any, allow_all: bool
                 ) -> tuple[tuple[bool, ...] | None, str | None]:
    """(mask, error code) of a literal weekend argument."""
    is_lit, value = o.literal(weekend)
    if not is_lit or value is None:
        raise _refuse(o.backend, function, "the weekend must be a literal code or text (its "
                      "mask shapes the expression)")
    if isinstance(value, float):
        value = Decimal(repr(value))
    try:
        return cal.weekend_mask(value, allow_all=allow_all), None
    except XLError as error:
        return None, error.code


class _Week:
    """Working-day arithmetic for one static weekend mask (Monday first, True = weekend)."""

    def __init__(self, o: Any, mask: tuple[bool, ...]) -> None:
        self.o = o
        self.mask = mask
        self.per_week = mask.count(False)
        self.prefix = [sum(1 for j in range(r) if not mask[j]) for r in range(8)]
        self.work = [j for j in range(7) if not mask[j]]
        self.position = {k + 1: j + 1 for k, j in enumerate(self.work)}

    # (arguments are bound values or list elements: they are read several times)
    def count_to(self, x: Any) -> Any:
        """W(x): working days among ordinals 1..x (x >= 0; ordinal 1 is a Monday)."""
        r = x % 7
        partial = self.o.when([(r == j, self.prefix[j]) for j in range(1, 7)], 0)
        return (x // 7) * self.per_week + partial

    def nth(self, c: Any) -> Any:
        """The ordinal of the c-th working day from ordinal 1 (c >= 1)."""
        c = c - 1
        rem = c % self.per_week + 1
        day = self.o.when([(rem == k, p) for k, p in self.position.items()], 0)
        return (c // self.per_week) * 7 + day

    def is_workday(self, ordinal: Any) -> Any:
        wd = (ordinal - 1) % 7
        result = None
        for j in self.work:
            result = (wd == j) if result is None else result | (wd == j)
        return result


def _holiday_ordinals(o: Any, week: _Week, holidays: Any) -> Any:
    """The distinct working-day holidays as sorted ordinals (blanks skipped)."""
    if o.backend == "polars":
        e = pl.element().cast(pl.Int32).cast(pl.Int64) + EPOCH_ORDINAL
        keep = e.is_not_null() & _Week(o, week.mask).is_workday(e)
        return holidays.list.eval(e.filter(keep).unique().sort())
    x, y = exp.to_identifier("_h"), exp.to_identifier("_w")
    mapped = exp.Anonymous(this="LIST_TRANSFORM", expressions=[
        Q(holidays).e, _lambda(o.ordinal(Q(exp.column(x))), x)])
    kept = exp.Anonymous(this="LIST_FILTER", expressions=[
        mapped, _lambda(_Week(o, week.mask).is_workday(Q(exp.column(y))), y)])
    return Q(exp.Anonymous(this="LIST_SORT", expressions=[
        exp.Anonymous(this="LIST_DISTINCT", expressions=[kept])]))


def _count_where(o: Any, items: Any, bound: Any, op: str) -> Any:
    """How many items compare ``op`` with the row's bound (``>=``, ``<=``, ``>``)."""
    if o.backend == "polars":
        e = pl.element()
        test = {">=": e >= 0, "<=": e <= 0, ">": e > 0}[op]
        return (items - bound).list.eval(test.cast(pl.Int64)).list.sum()
    x = exp.to_identifier("_c")
    xe = Q(exp.column(x))
    test = {">=": xe >= bound, "<=": xe <= bound, ">": xe > bound}[op]
    kept = exp.Anonymous(this="LIST_FILTER", expressions=[Q(items).e, _lambda(test, x)])
    return _cast(Q(exp.ArraySize(this=kept)), "BIGINT")


def _weekend_args(o: Any, function: str, rest: Sequence[Any], allow_all: bool
                  ) -> tuple[tuple[bool, ...] | None, str | None, Any]:
    if len(rest) == 1:  # NETWORKDAYS / WORKDAY: Saturday and Sunday
        return cal.weekend_mask(1, allow_all=False), None, rest[0]
    weekend, holidays = rest
    mask, code = _static_mask(o, function, weekend, allow_all=allow_all)
    return mask, code, holidays


@program
def f_networkdays(o: Any, kinds: Any, a: Any, b: Any, *rest: Any) -> Program:
    """NETWORKDAYS(start, end, holidays) / NETWORKDAYS.INTL(start, end, weekend, holidays):
    W(hi) - W(lo - 1) minus the distinct working-day holidays in [lo, hi], signed."""
    mask, code, holidays = _weekend_args(o, "NETWORKDAYS.INTL", rest, allow_all=True)
    if code is not None or mask is None:
        return o.number(o.lit(0)), [(o.true(), code)]
    if all(mask):
        return o.number(o.ordinal(a) * 0), []
    week = _Week(o, mask)
    oa, ob = (yield o.ordinal(a)), (yield o.ordinal(b))
    lo, hi = (yield _min(o, oa, ob)), (yield o.when([(oa < ob, ob)], oa))
    count = week.count_to(hi) - week.count_to(lo - 1)
    if not o.empty_list(holidays):
        hols = yield _holiday_ordinals(o, week, holidays)
        count = count - (_count_where(o, hols, lo, ">=") - _count_where(o, hols, hi, ">"))
    count = yield count
    return o.number(o.when([(oa <= ob, count)], o.lit(0) - count)), []


@program
def f_workday(o: Any, kinds: Any, start: Any, n: Any, *rest: Any) -> Program:
    """WORKDAY(start, days, holidays) / WORKDAY.INTL(start, days, weekend, holidays).

    With W(x) the working days among ordinals 1..x and h_0 < h_1 < ... the working-day
    holidays after start, the scalar's loop consumes holiday i exactly when W(h_i) - i <=
    W(start) + n (a prefix of the list); the answer is the (W(start) + n + consumed)-th working
    day. Backwards, with the holidays before start in descending order, holiday i is consumed
    when W(h_i) + i >= W(start - 1) + n + 1. |days| >= 1e15 is #NUM! (beyond the years)."""
    mask, code, holidays = _weekend_args(o, "WORKDAY.INTL", rest, allow_all=False)
    if code is not None or mask is None:
        return o.date(o.lit(None)), [(o.true(), code)]
    week = _Week(o, mask)
    n = yield n
    ni, big = o.trunc(n)
    big = yield big
    nn = yield o.when([(~big, ni)], 0)
    s = yield o.ordinal(start)
    forward = yield week.count_to(s) + nn
    backward = yield week.count_to(s - 1) + nn + 1
    if o.empty_list(holidays):
        c_fwd, c_back = forward, backward
    else:
        hols = yield _holiday_ordinals(o, week, holidays)
        if o.backend == "polars":
            e = pl.element()
            rank = pl.int_range(pl.len(), dtype=pl.Int64)
            after = (hols - s).list.eval(e.filter(e > 0)) + s
            before = (hols - s).list.eval(e.filter(e < 0).sort(descending=True)) + s
            w_e = _Week(o, mask).count_to(e)
            fwd_keys = after.list.eval(w_e - rank)
            back_keys = before.list.eval(w_e + rank)
        else:
            x, i = exp.to_identifier("_x"), exp.to_identifier("_i")
            xe = Q(exp.column(x))
            w_x = _Week(o, mask).count_to(xe)
            rank = Q(exp.column(i)) - 1
            after = exp.Anonymous(this="LIST_FILTER", expressions=[hols.e, _lambda(xe > s, x)])
            before = exp.Anonymous(this="LIST_REVERSE", expressions=[exp.Anonymous(
                this="LIST_FILTER", expressions=[hols.e, _lambda(xe < s, x)])])
            fwd_keys = Q(exp.Anonymous(this="LIST_TRANSFORM", expressions=[
                after, _lambda(w_x - rank, x, i)]))
            back_keys = Q(exp.Anonymous(this="LIST_TRANSFORM", expressions=[
                before, _lambda(w_x + rank, x, i)]))
        c_fwd = forward + _count_where(o, fwd_keys, forward, "<=")
        c_back = backward - _count_where(o, back_keys, backward, ">=")
    c = yield o.when([(nn > 0, c_fwd)], c_back)
    bad_c = yield (nn != 0) & (c < 1)
    result = yield o.when([(nn == 0, s)], week.nth(o.when([(~bad_c, c)], 1)))
    bad = yield big | bad_c | (result > MAX_ORDINAL) | (result < 1)
    return _to_date(o, result, bad), [(bad, "#NUM!")]


# ----------------------------------------------------------------- zones and serials


@program
def f_tzconvert(o: Any, kinds: Any, x: Any, zone: Any) -> Program:
    tz = _zone(o, "TZCONVERT", zone)
    if tz is None:
        return x, [(o.true(), "#VALUE!")]
    if o.backend == "sql":
        if tz.utcoffset(None) != dt.timedelta(0):
            raise _refuse("sql", "TZCONVERT", "a SQL TIMESTAMPTZ is read at UTC; converting "
                          "to another zone has no SQL form")
        return x  # the same instant, read at UTC
    value = yield x.dt.convert_time_zone(_polars_zone_key("TZCONVERT", tz))
    wall = o.wall_us(value)
    return value, [((wall < 0) | (wall >= US_10000), "#NUM!")]


@program
def f_serial(o: Any, kinds: Any, v: Any) -> Program:
    """Days from 1899-12-31, plus Excel's phantom 1900-02-29 from 1900-03-01 on; a DateTime
    adds its local time as a fraction of the day; a Duration is its length in days."""
    kind = kinds[0]
    if kind == "Duration":
        return o.ratio(o.duration_us(v), o.lit(DAY_US))
    v = yield v
    d = o.local_date(v) if kind == "DateTime" else v
    ordinal = yield o.ordinal(d)
    bad = ordinal < EXCEL_MIN_ORDINAL
    whole = ordinal - EXCEL_MIN_ORDINAL + o.when([(ordinal >= MARCH_1900, 1)], 0)
    if kind == "Date":
        return o.number(whole), [(bad, "#NUM!")]
    tod = o.wall_us(v) % DAY_US
    return o.ratio(whole * DAY_US + tod, o.lit(DAY_US)), [(bad, "#NUM!")]


@program
def f_fromserial(o: Any, kinds: Any, x: Any) -> Program:
    x = yield x
    n, big = o.floor(x)
    n = yield n
    bad = yield big | (n < 0) | (n > cal.EXCEL_MAX_SERIAL) | (n == 60)
    ordinal = EXCEL_MIN_ORDINAL + o.when([(n > 60, n - 1)], n)
    return _to_date(o, ordinal, bad), [(bad, "#NUM!")]


# =============================================================================================
# Entry points (see dates._P / dates._S)

FORMS: dict[str, Callable[..., Any]] = {
    "date": f_date, "time": f_time, "datetime": f_datetime, "year": f_year, "month": f_month,
    "day": f_day, "hour": f_hour, "minute": f_minute, "second": f_second,
    "weekday": f_weekday, "weeknum": f_weeknum, "isoweeknum": f_isoweeknum, "edate": f_edate,
    "eomonth": f_eomonth, "dateadd": f_dateadd, "datedif": f_datedif, "days": f_days,
    "yearfrac": f_yearfrac, "networkdays": f_networkdays, "workday": f_workday,
    "tzconvert": f_tzconvert, "serial": f_serial, "fromserial": f_fromserial,
}


def _run(o: Any, name: str, kinds: tuple[str | None, ...], args: Sequence[Any]) -> Any:
    out = FORMS[name](o, kinds, *[o.wrap(a) for a in args])
    if isinstance(out, tuple):
        value, errors = out
        return o.unwrap(value), [(o.unwrap(c), code) for c, code in errors]
    return o.unwrap(out)


def polars(name: str, kinds: tuple[str | None, ...], *args: Any) -> Any:
    return _run(PolarsOps(), name, kinds, args)


def sql(name: str, kinds: tuple[str | None, ...], *args: Any) -> Any:
    return _run(SqlOps(), name, kinds, args)
