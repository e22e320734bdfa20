"""One DECIMAL type for the Number branches of a CASE, COALESCE or list, and the exact
comparison of two DECIMALs whose scales may differ (SQL decimal mode).

Contract: `join_decimals` gives the Number branches of one CASE, COALESCE or list one DECIMAL
type where the engine would otherwise truncate the finer one (DuckDB types a CASE of
DECIMAL(38, 4) and DECIMAL(38, 0) as DECIMAL(38, 0)), casting only where the types may differ,
a value that DECIMAL(38, 18) cannot hold being #NUM!; `compare_decimals` compares two DECIMALs
exactly where Spark would compare at the smaller scale; `as_decimal_18` reads one value as
DECIMAL(38, 18) under its range test; `range_tests` counts the range tests written, which the
compiler reads to keep their #NUM!. Built on `sql_arith`'s builders; nothing imports this
module from there (one way). Importing this imports sqlglot, never polars.
"""

from __future__ import annotations

import contextvars
from dataclasses import replace

from sqlglot import exp

from ...sql.kit import D18, SqlColumn, cases, clone_type, first_error
from ...sql.let import let
from .sql_arith import (_BARE_LIMIT, _D18, DECIMAL_FIT, FLOAT_LIMIT, IN_LAMBDA, _plain, literal, p,
                        all_of, any_of, cast_to, decimal_cast, double, not_, num, when)

#: DECIMAL(38, 18) holds |x| < 1e20: a branch cast to it is #NUM! from there (a DOUBLE
#: literal; engines compare a DECIMAL with it in DOUBLE, where rounding keeps x >= 1e20).
_D18_LIMIT = exp.Literal.number("1e20")

#: How many range tests `join_decimals` has written in this context: the compiler compares it
#: before and after a call (`SqlCompiler._compile`) to keep that #NUM!, which the checker's
#: proof that a call cannot err does not see (an int in a context variable, as the binder).
_RANGE_TESTS: contextvars.ContextVar[int] = contextvars.ContextVar("formulane_sql_range_tests",
                                                                  default=0)


def range_tests() -> int:
    """The number of range tests `join_decimals` wrote so far in this context."""
    return _RANGE_TESTS.get()


def joins_losslessly(types: list[tuple[int, int]]) -> bool:
    """Whether DuckDB joins DECIMALs of these (precision, scale) without truncating: the
    joined type needs the most integer digits plus the largest scale, at most 38 (else DuckDB
    keeps precision 38 and truncates to a smaller scale: DECIMAL(38, 4) with DECIMAL(38, 0)
    answers DECIMAL(38, 0)); one scale for all never truncates."""
    if len({s for _, s in types}) <= 1:
        return True
    return max(p - s for p, s in types) + max(s for _, s in types) <= 38


def join_decimals(cols: list[SqlColumn | None], numbers: str) -> list[SqlColumn | None]:
    """The Number branches ``cols`` of one CASE, COALESCE or list (None: an absent branch),
    with one DECIMAL type where the engine could truncate the finer one (docs/columnar.md,
    "Engine notes": DuckDB types a CASE of DECIMAL(38, 4) and DECIMAL(38, 0) as
    DECIMAL(38, 0)). Decimal mode only; a DOUBLE branch makes the join a DOUBLE (no
    truncation). Branches are cast only where their types may differ: two branches of known
    types that join losslessly (`joins_losslessly`), one distinct branch beside NULLs and
    integer literals, or branches that are one expression, are left alone. Otherwise each
    branch not already DECIMAL(38, 18) is cast to it: a literal as itself, a value of known
    type whose range fits directly, any other behind a test so that a value no
    DECIMAL(38, 18) holds (|x| >= 1e20) is that row's #NUM!, never a query abort."""
    if numbers != "decimal" or IN_LAMBDA.get():
        return cols
    present = [c for c in cols if c is not None and not isinstance(c.value, exp.Null)]
    if any(c.double for c in present):
        return cols
    distinct = _differing(present)
    if distinct is None:
        return cols
    return [None if c is None else as_decimal_18(c) if any(c is d for d in distinct) else c
            for c in cols]


def _differing(present: list[SqlColumn]) -> list[SqlColumn] | None:
    """The DECIMAL values among ``present`` whose types may differ so that an engine joins
    them at a smaller scale (`join_decimals`), each column once; None where they cannot
    (integer literals, known types that join losslessly, one distinct value)."""
    # integer literals join any DECIMAL(38, s) exactly (DuckDB types them by their digits)
    ranked = [c for c in present if not (c.decimal is not None and c.decimal[1] == 0
                                         and _integer_literal(c.value))]
    known = [c.decimal for c in ranked if c.decimal is not None]
    if len(known) == len(ranked) and joins_losslessly(known):
        return None
    # one column (or binding) read in several branches is one type: compared by name only
    # (comparing whole trees would cost a deep hash per pair in a MAX of 200 terms)
    distinct: list[SqlColumn] = []
    names: set[exp.Expr] = set()
    for c in ranked:
        if type(c.value) is exp.Column:
            if c.value in names:
                continue
            names.add(c.value)
        distinct.append(c)
    return distinct if len(distinct) > 1 else None


def compare_decimals(cls: type[exp.Binary], a: SqlColumn, b: SqlColumn, numbers: str
                     ) -> exp.Expr | None:
    """``a cls b`` of two Number values whose DECIMAL types may differ (`_differing`), exact
    and never an abort, else None (the engine compares them as they are). Spark compares
    DECIMAL(38, 4) with DECIMAL(38, 0) at the smaller scale (0.1143 = 0 is TRUE) and DuckDB at
    the larger, aborting the query on a value that scale cannot hold (docs/columnar.md, "Engine
    notes"). So both sides are compared as DECIMAL(38, 18) where both fit (|x| < 1e20), else
    as DOUBLE: ``COALESCE(x18 > y18, CAST(x AS DOUBLE) > CAST(y AS DOUBLE))`` (NULL only where
    a side is blank). Past 1e20 two values within DOUBLE's precision of each other (relative
    1e-16) compare as equal. ``cls``: a comparison; `exp.NullSafeEQ` (SWITCH's match: blank
    matches blank) is written with the blanks' own test last."""
    if numbers != "decimal" or IN_LAMBDA.get() or a.double or b.double:
        return None
    if _differing([c for c in (a, b) if not isinstance(c.value, exp.Null)]) is None:
        return None
    safe = cls is exp.NullSafeEQ
    op = exp.EQ if safe else cls
    # a side is read up to four times below (twice in its guarded cast, once more in DOUBLE,
    # and by SWITCH's blank test): a computed value bound once (`let`), as `as_decimal_18`
    # binds its own (the walk's arguments are bound already: then this changes nothing)
    a, b = _once(a), _once(b)
    x, y = _within_18(a), _within_18(b)
    exact = op(this=p(x), expression=p(y))
    parts = [exact]
    if not (_held_18(a) and _held_18(b)):  # a side may be past 1e20: compared in DOUBLE there
        parts.append(op(this=double(a.value.copy()), expression=double(b.value.copy())))
    if safe:
        parts.append(exp.And(this=exp.Is(this=p(a.value.copy()), expression=exp.Null()),
                             expression=exp.Is(this=p(b.value.copy()), expression=exp.Null())))
    if len(parts) == 1:
        return exact
    return exp.Coalesce(this=parts[0], expressions=parts[1:])


def _once(c: SqlColumn) -> SqlColumn:
    """``c`` with its value bound once (`let`) unless it is a plain column (or a literal, a
    cast of one: `let` leaves those as they are)."""
    return c if _plain(c.value) else c.but(value=let(c.value))


def _held_18(c: SqlColumn) -> bool:
    """A value DECIMAL(38, 18) always holds: a literal below 1e20, or of a known type with at
    most 20 integer digits."""
    k = literal(c.value)
    if k is not None:
        return abs(k) < DECIMAL_FIT
    return c.decimal is not None and c.decimal[0] - c.decimal[1] <= 20


def _cast_18(c: SqlColumn) -> exp.Expr | None:
    """The value cast to DECIMAL(38, 18) where that always holds it (`_held_18`: a literal
    written as one), else None (the callers guard the cast)."""
    if not _held_18(c):
        return None
    k = literal(c.value)
    return cast_to(num(k), _D18) if k is not None else decimal_cast(c, _D18)


def _within_18(c: SqlColumn) -> exp.Expr:
    """The value as DECIMAL(38, 18), NULL where that cannot hold it (no error: the caller
    compares such a value in DOUBLE)."""
    if c.decimal == D18:
        return c.value
    held = _cast_18(c)
    if held is not None:
        return held
    fits = exp.LT(this=exp.Abs(this=c.value.copy()), expression=_D18_LIMIT.copy())
    return decimal_cast(c, _D18, cases([(fits, c.value)]))


def _integer_literal(e: exp.Expr) -> bool:
    k = literal(e)
    return k is not None and k == k.to_integral_value() and abs(k) < _BARE_LIMIT


def as_decimal_18(c: SqlColumn) -> SqlColumn:
    """A Number value as DECIMAL(38, 18) (a branch of `join_decimals`, or a form's own
    fallback joined with an exact DECIMAL(38, 18) result): a literal written as one, a value of
    a known type DECIMAL(38, 18) holds cast, any other cast behind a range test (|x| >= 1e20 is
    #NUM!, added to the column's errors)."""
    if c.decimal == D18:
        return c
    held = _cast_18(c)
    if held is not None:
        return replace(c, value=held, decimal=D18, maybe_double=False)
    if literal(c.value) is not None:  # a literal DECIMAL(38, 18) cannot hold: #NUM!
        return replace(c, value=exp.Cast(this=exp.Null(), to=clone_type(_D18)),
                       error=first_error(c.error, exp.Literal.string("#NUM!")), strict=False,
                       decimal=D18, maybe_double=False)
    _RANGE_TESTS.set(_RANGE_TESTS.get() + 1)
    v = c.value if _plain(c.value) else let(c.value)
    fits = exp.LT(this=exp.Abs(this=v), expression=_D18_LIMIT.copy())
    # the reading is total (it sits inside its range test), so it may be bound: the error
    # chain's blank test of a COALESCE reads it again (`let`'s contract)
    value = let(decimal_cast(c, _D18, cases([(fits, v)])))
    over = cases([(exp.GTE(this=exp.Abs(this=v.copy()), expression=_D18_LIMIT.copy()),
                   exp.Literal.string("#NUM!"))])
    # the value is NULL where the new error is set; where the branch's own error is set, as
    # before (a strict branch is NULL there, and stays NULL through the test)
    return replace(c, value=value, error=first_error(c.error, over), decimal=D18,
                   maybe_double=False)


__all__ = ["join_decimals", "compare_decimals", "as_decimal_18", "range_tests", "joins_losslessly"]
