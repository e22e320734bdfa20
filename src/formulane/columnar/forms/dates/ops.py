"""The polars side of the date algorithms: `PolarsOps` (`sqlops` holds the SQL side, `SqlOps`
and `Q`, re-exported here for the algorithms).

Contract: each ``yield``ed value of an algorithm is bound once (a polars struct field), so forms
stay linear in the formula's size; constants fold when compiling.
"""

from __future__ import annotations

from typing import Any, Sequence

from ._base import BOUND, EPOCH_ORDINAL, Program, US_0001, WHITESPACE, pl
from ...names import fresh
from .sqlops import Q, SqlOps, _cast, _lambda, _map

__all__ = ["PolarsOps", "Q", "SqlOps", "_cast", "_lambda"]

# =============================================================================================
# Backend operations


class PolarsOps:
    backend = "polars"

    def __init__(self) -> None:
        from ...polars import kit as backend

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
                    name = fresh("_v")
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

    def arg(self, call: Any, i: int, v: Any) -> Any:
        """Argument ``i`` as the algorithm reads it (polars: its compiled expression; the
        algorithms read what they need of a constant through ``call.const``)."""
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

    def coalesce(self, x: Any, default: int) -> Any:
        return pl.coalesce(x, pl.lit(default, dtype=pl.Int64))

    def code(self, v: int | None) -> Any:
        """A whole number decided now (a unit's code, a basis) as an Int64 literal."""
        return pl.lit(v, dtype=pl.Int64)

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

    def bind(self, x: Any) -> Any:
        """``x`` as it is (`SqlOps.bind` binds; polars shares the expression itself)."""
        return x

    def masked_date(self, o: Any, bad: Any) -> Any:
        return self.date(self.when([(~bad, o)]))

    def pick(self, index: Any, table: dict[int, Any], default: Any) -> Any:
        """``table[index]`` (``default`` for an index not in it)."""
        return self.when([(index == k, v) for k, v in table.items()], default)

    def lookup(self, x: Any, table: dict[Any, Any], default: Any = None) -> Any:
        """``table[x]``, ``default`` for a key not in it (or a NULL ``x``); a key decided now
        (a Python int) picks its entry now."""
        if isinstance(x, int):
            return self.lit(table.get(x, default))
        return self.when([(x == k, v) for k, v in table.items()], default)

    def not_in(self, x: Any, keys: Sequence[Any]) -> Any:
        """Whether ``x`` is none of ``keys`` (TRUE for a NULL ``x``)."""
        return self.when([(x == k, False) for k in keys], True)

    def one_of(self, x: Any, values: Sequence[int]) -> Any:
        result: Any = None
        for v in values:
            result = (x == v) if result is None else result | (x == v)
        return result

    def ord_ymd(self, Y: Any, M: Any, D: Any) -> Any:
        """A valid (year 1-10000, month, day) as an ordinal."""
        return self.ordinal(pl.date(Y, M, D))

    def month_start(self, k: Any) -> Any:
        """Month index k (>= 12, a bound value: read twice) as its first day's ordinal."""
        return self.ord_ymd(k // 12, k % 12 + 1, 1)

    def year_later(self, d: Any) -> Any:
        """The date a calendar year after ``d`` (February 29 to February 28)."""
        return d.dt.offset_by("1y")

    def ymd(self, d: Any) -> tuple[Any, Any, Any]:
        return (d.dt.year().cast(pl.Int64), d.dt.month().cast(pl.Int64),
                d.dt.day().cast(pl.Int64))

    def day_of_year(self, d: Any) -> Any:
        return d.dt.ordinal_day().cast(pl.Int64)

    def leap(self, y: Any) -> Any:
        """Whether year ``y`` is a leap year."""
        return (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))

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


def _fold(value: Any) -> Any:
    """A constant polars expression as a literal of its one value (None: not foldable)."""
    try:
        series = pl.select(value.alias("_c")).to_series()
    except Exception:
        return None
    if len(series) != 1 or series.dtype.is_nested():
        return None
    return pl.lit(series.item(), dtype=series.dtype)
