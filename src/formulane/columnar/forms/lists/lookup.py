"""List forms of the lookups: XLOOKUP XMATCH MATCH INDEX LOOKUP ANY ALL.

Contract: linear searches only (exact, next smaller or larger, wildcard), forwards or
backwards; binary searches and approximate MATCH are refused (on unsorted data their answer
depends on the probe order).
"""

from __future__ import annotations

from typing import Any, Callable

from sqlglot import exp

from ....interpreter import ir
from ...sql.let import _trivial as _sql_trivial

from ._base import (
    FormCall, _and, _apply, _at, _case, _coalesce, _e, _f, _is_null, _known_len, _lam, _len,
    _MISSING, _n, _not, _num, _once, _op, _or, pl, _pl_bcast, _pl_int, _pl_with, _sql_errors,
    _mapped_from, _sql_int_arg, _sql_lengths_differ, _sql_let, _vp,
)
from ._sql_decimal import _sql_checking, _sql_picking
from .arrays import _pl_key, _sql_key
from .criteria import _PlOps, _SqlOps, _pl_wild_regex, _sql_wild_regex


# ---------------------------------------------------------------------------------- lookup


class _Search:
    """A search decided at compile time: exact (0), next smaller (-1) or larger (1), or a
    wildcard pattern; forwards or backwards. ``invalid``: the modes themselves are #VALUE!."""

    def __init__(self, c: FormCall, i_value: int, i_keys: int, match_mode: int, search_mode: int
                 ) -> None:
        self.invalid = False
        self.pattern: str | None = None
        self.dynamic = False  # a wildcard pattern read from the data (translated per row)
        self.kind = c.elem(i_keys).kind
        mm, sm = match_mode, search_mode
        if mm not in (0, -1, 1, 2) or sm not in (1, -1, 2, -2):
            self.invalid = True
            mm, sm = 0, 1
        if mm == 2:
            if c.kind(i_value) == "Text":
                pattern = c.const(i_value)
                if isinstance(pattern, str):
                    self.pattern = pattern
                else:
                    self.dynamic = True
                sm = -1 if sm < 0 else 1  # a wildcard search is always a scan
            else:
                mm = 0
        if sm in (2, -2):
            c.refuse("binary search (search_mode 2 or -2): on a list that is not sorted its "
                     "answer depends on the probe order")
        if self.kind in ("List", "Record", "Any"):
            c.refuse(f"a search among {self.kind} items")
        if mm != 0 and self.kind == "Duration" and c.backend == "sql":
            c.refuse("Duration ordering: SQL intervals are not compared as plain lengths of "
                     "time in every engine")
        self.mm = mm
        self.backwards = sm < 0


def _search_modes(c: FormCall, i_mm: int, i_sm: int | None) -> tuple[int, int]:
    mm = c.const_int(i_mm, "match_mode")
    sm = 1 if i_sm is None else c.const_int(i_sm, "search_mode")
    return mm, sm


def _pl_find(s: _Search, keys: Any, value: Any) -> Any:
    """The 0-based position found (null when not found)."""
    kind = s.kind

    def pick(hit: Any) -> Any:
        found = hit.arg_true()
        return found.last() if s.backwards else found.first()

    if s.pattern is not None:
        hit = _PlOps().matches(_e(), s.pattern)
        return keys.list.agg(pick(hit.fill_null(False))).cast(pl.Int64)
    if s.dynamic:
        return _pl_with(keys, [_pl_wild_regex(value)], lambda items, got: pick(
            items.str.to_lowercase().str.contains(got[0]).fill_null(False)),
            agg=True).cast(pl.Int64)

    def build(items: Any, got: list[Any]) -> Any:
        k, v = _pl_key(items, kind), _pl_key(got[0], kind)
        exact = pick((k == v).fill_null(False))
        if s.mm == 0:
            return exact
        candidates = k.filter(k < v if s.mm == -1 else k > v)
        best = candidates.max() if s.mm == -1 else candidates.min()
        near = pick((k == best).fill_null(False))
        return pl.coalesce([exact, near])

    return _pl_with(keys, [value], build, agg=True).cast(pl.Int64)


def _sql_find(c: FormCall, s: _Search, keys: Any, value: Any) -> exp.Expr:
    """The 1-based position found (NULL when not found), computed once per row."""
    kind = s.kind
    pick = "LIST_MAX" if s.backwards else "LIST_MIN"

    def first(pred: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
        return _f(pick, _f("LIST_TRANSFORM", keys, _lam(
            lambda k, i: _case([(pred(k), i)]), 2)))

    if s.pattern is not None:
        return _once(c, first(lambda k: _SqlOps().matches(k, s.pattern)))  # type: ignore[arg-type]
    if s.dynamic:
        regex = _sql_wild_regex(value)
        return _once(c, first(lambda k: _f("REGEXP_FULL_MATCH", exp.Lower(this=k), regex)))
    v = _sql_key(value, kind)
    if s.mm == 0 and not s.backwards and kind in _POSITION_KINDS and not c.type(0).nullable:
        # the engine's own search: the first position of an equal item (it would also match
        # a blank with a blank, which a value that is never blank cannot be)
        found = _f("LIST_POSITION", keys, value)
        # (a column searched for a column or a literal: shorter repeated than bound)
        return found if _sql_trivial(keys) and _sql_trivial(value) else _once(c, found)
    exact = first(lambda k: exp.EQ(this=_sql_key(k, kind), expression=v))
    if s.mm == 0:
        return _once(c, exact)
    op = "<" if s.mm == -1 else ">"
    candidates = _f("LIST_FILTER", keys, _lam(lambda k: _op(op, _sql_key(k, kind), v)))
    best = _f("LIST_MAX" if s.mm == -1 else "LIST_MIN",
              _f("LIST_TRANSFORM", candidates, _lam(lambda k: _sql_key(k, kind))))
    near = _sql_let({"b": best}, lambda b: first(
        lambda k: exp.EQ(this=_sql_key(k, kind), expression=b["b"])))
    return _once(c, _coalesce(exact, near))


#: Item kinds compared by plain equality (no case folding): `LIST_POSITION` searches them.
_POSITION_KINDS = ("Number", "Date", "Boolean")


def polars_xlookup(c: FormCall, value: Any, keys: Any, results: Any, if_not_found: Any,
                   match_mode: Any, search_mode: Any) -> Any:
    s = _Search(c, 0, 1, *_search_modes(c, 4, 5))
    errors: list[tuple[Any, str]] = [(results.list.len() != keys.list.len(), "#VALUE!")]
    if s.invalid:
        return pl.lit(None, dtype=_vp.dtype_of(c.node.type)), [*errors, (pl.lit(True),
                                                                         "#VALUE!")]
    position = _pl_find(s, keys, value)
    found = results.list.get(position, null_on_oob=True)
    missing = position.is_null()
    if c.omitted(3):
        return found, [*errors, (missing, "#N/A")]
    value_out = pl.when(missing).then(if_not_found).otherwise(found)
    return value_out, [*errors, (missing & if_not_found.is_null(), "#N/A")]


@_sql_picking
def sql_xlookup(c: FormCall, value: Any, keys: Any, results: Any, if_not_found: Any,
                match_mode: Any, search_mode: Any) -> Any:
    s = _Search(c, 0, 1, *_search_modes(c, 4, 5))
    mismatch = _sql_lengths_differ(c, 2, 1, results, keys)
    if mismatch is True or s.invalid:
        return exp.Null(), _sql_errors([(mismatch, "#VALUE!"), (True, "#VALUE!")])
    errors: list[tuple[Any, str]] = [] if mismatch is False else [(mismatch, "#VALUE!")]
    position = _sql_find(c, s, keys, value)
    missing = _is_null(position)
    found = _at(results, position)
    if c.omitted(3):
        value = found  # NULL where #N/A: the position is NULL
        errors.append((missing, "#N/A"))
    else:
        given = c.const(3)  # a literal if_not_found is never blank
        value = _case([(missing, if_not_found)], found)  # NULL where #N/A: a blank one
        if given is _MISSING or given is None:
            errors.append((_and(missing, _is_null(if_not_found)), "#N/A"))
    if isinstance(mismatch, exp.NEQ) and not (
            c.numbers == "float" and c.node.type.kind == "Number"
            and not isinstance(c.args[2], ir.ListOf)):
        # NULL where the lengths differ too (the table flags XLOOKUP null_on_error: no
        # wrapper around the value, no binding of the error to read it twice); not for the
        # DOUBLE items of a float column, whose non-finite test keeps the wrapper anyway
        value = _case([(exp.EQ(this=mismatch.this.copy(), expression=mismatch.expression.copy()),
                        value)])
    return value, errors


def polars_xmatch(c: FormCall, value: Any, keys: Any, match_mode: Any, search_mode: Any) -> Any:
    s = _Search(c, 0, 1, *_search_modes(c, 2, 3))
    if s.invalid:
        return _num(pl.lit(None)), [(pl.lit(True), "#VALUE!")]
    position = _pl_find(s, keys, value)
    return _num(position + 1), [(position.is_null(), "#N/A")]


@_sql_checking
def sql_xmatch(c: FormCall, value: Any, keys: Any, match_mode: Any, search_mode: Any) -> Any:
    s = _Search(c, 0, 1, *_search_modes(c, 2, 3))
    if s.invalid:
        return exp.Null(), [(exp.Boolean(this=True), "#VALUE!")]
    position = _sql_find(c, s, keys, value)
    return position, [(_is_null(position), "#N/A")]


def _match_search(c: FormCall) -> _Search:
    mt = c.const_int(2, "match_type")
    if mt != 0:
        c.refuse("approximate MATCH (match_type 1 or -1) is a binary search whose answer on "
                 "unsorted lists depends on the probe order")
    return _Search(c, 0, 1, 2, 1)


def polars_match(c: FormCall, value: Any, keys: Any, match_type: Any) -> Any:
    position = _pl_find(_match_search(c), keys, value)
    return _num(position + 1), [(position.is_null(), "#N/A")]


@_sql_checking
def sql_match(c: FormCall, value: Any, keys: Any, match_type: Any) -> Any:
    position = _sql_find(c, _match_search(c), keys, value)
    return position, [(_is_null(position), "#N/A")]


def polars_index(c: FormCall, values: Any, row: Any, column: Any = None) -> Any:
    size = values.list.len().cast(pl.Int64)
    r = _pl_int(row)
    if column is None:  # INDEX(list, position)
        index = pl.when((r >= 1) & (r <= size)).then(r - 1)
        return values.list.get(index, null_on_oob=True), [
            (r < 0, "#VALUE!"), ((r == 0) | (r > size), "#REF!")]
    col = _pl_int(column)
    if c.node.sig is c.node.spec.signatures[0]:  # a list of lists: row, then column
        line = values.list.get(pl.when((r >= 1) & (r <= size)).then(r - 1), null_on_oob=True)
        width = line.list.len().cast(pl.Int64)
        value = line.list.get(pl.when((col >= 1) & (col <= width)).then(col - 1),
                              null_on_oob=True)
        return value, [(r < 0, "#VALUE!"), ((r == 0) | (r > size), "#REF!"),
                       (line.is_null(), "#REF!"), (col < 0, "#VALUE!"),
                       ((col == 0) | (col > width), "#REF!")]
    # One dimension: INDEX(list, n, 1) reads a column, INDEX(list, 1, n) a row.
    position = pl.when(((col == 0) | (col == 1)) & (r >= 1)).then(r) \
        .when(((r == 0) | (r == 1)) & (col >= 1)).then(col)
    index = pl.when(position <= size).then(position - 1)
    return values.list.get(index, null_on_oob=True), [
        (position.is_null() & ((r < 0) | (col < 0)), "#VALUE!"),
        (position.is_null() | (position > size), "#REF!")]


def _searched(c: FormCall, i: int) -> ir.IR | None:
    """The list searched when argument ``i`` is a MATCH or XMATCH call (a whole position from
    1 to that list's length, or an error), else None."""
    a = c.args[i] if i < len(c.args) else None
    if isinstance(a, ir.Call) and a.spec.name in ("MATCH", "XMATCH") and len(a.args) > 1:
        return a.args[1]
    return None


@_sql_picking
def sql_index(c: FormCall, values: Any, row: Any, column: Any = None) -> Any:
    length = _known_len(c, 0)
    searched = _searched(c, 1) if column is None else None
    if searched is not None:  # INDEX(list, MATCH(...)): a position from 1 on, no guard
        source = c.args[0]
        same = _mapped_from(searched, source) or (
            isinstance(searched, ir.Var) and isinstance(source, ir.Var)
            and searched.slot == source.slot and searched.local == source.local)
        past = False if same else exp.LT(this=_n(length) if length is not None
                                          else _len(values), expression=row)
        # read unguarded (past the end is NULL, except on Spark, whose ANSI mode aborts):
        # a MATCH position may always err, so the walk keeps its wrapper around this value
        # whatever the flag says, and a guard here would only cost characters
        return _at(values, row), _sql_errors([(past, "#REF!")])
    r, rk = _sql_int_arg(c, 1, row)
    # (read once when the position alone is known: no binding)
    size = _n(length) if length is not None else _len(values) \
        if column is None and rk is not None else c.let(_len(values))

    def within(i: exp.Expr, n: exp.Expr) -> exp.Expr:
        return _and(exp.GTE(this=i, expression=_n(1)), exp.LTE(this=i, expression=n))

    def out_of(i: exp.Expr, n: exp.Expr) -> exp.Expr:
        return _or(exp.EQ(this=i, expression=_n(0)), exp.GT(this=i, expression=n))

    def outside(i: exp.Expr, known: int | None, n: exp.Expr) -> exp.Expr | bool:
        """#REF!: 0 or past the end (a negative position is #VALUE! before this test)."""
        if known is None:
            return out_of(i, n)
        if known > 0 and n is size and length is not None:
            return known > length
        return known == 0 or (exp.LT(this=n, expression=i) if known > 0 else False)

    def pick(lst: exp.Expr, i: exp.Expr, known: int | None, n: exp.Expr) -> exp.Expr:
        # the item is read only where it exists, so the value is NULL beside every #REF! and
        # #VALUE! (null_on_error; Spark's ANSI mode aborts the query on an index past the end)
        if known is not None and known >= 1:
            if n is size and length is not None:  # decided here
                return _at(lst, i) if known <= length else exp.Null()
            return _case([(exp.GTE(this=n, expression=i), _at(lst, i))])
        return _at(lst, _case([(within(i, n), i)]))

    negative: exp.Expr | bool = rk < 0 if rk is not None else exp.LT(this=r, expression=_n(0))
    if column is None:
        return pick(values, r, rk, size), _sql_errors([
            (negative, "#VALUE!"),
            (outside(r, rk, size), "#REF!")])
    col, ck = _sql_int_arg(c, 2, column)
    col_negative: exp.Expr | bool = ck < 0 if ck is not None else exp.LT(this=col, expression=_n(0))
    if c.node.sig is c.node.spec.signatures[0]:  # a list of lists
        line = c.let(pick(values, r, rk, size))
        width = c.let(_len(line))
        value = pick(line, col, ck, width)
        return value, _sql_errors([
            (negative, "#VALUE!"), (outside(r, rk, size), "#REF!"),
            (_is_null(line), "#REF!"), (col_negative, "#VALUE!"),
            (outside(col, ck, width), "#REF!")])
    if rk is not None and ck is not None:  # decided here: the position is known
        at = rk if ck in (0, 1) and rk >= 1 else ck if rk in (0, 1) and ck >= 1 else None
        if at is None:
            return exp.Null(), exp.Literal.string("#VALUE!" if rk < 0 or ck < 0 else "#REF!")
        return pick(values, _n(at), at, size), _sql_errors([
            (at > length if length is not None else exp.GT(this=_n(at), expression=size),
             "#REF!")])
    first = _or(exp.EQ(this=col, expression=_n(0)), exp.EQ(this=col, expression=_n(1)))
    second = _or(exp.EQ(this=r, expression=_n(0)), exp.EQ(this=r, expression=_n(1)))
    position = c.let(_case([(_and(first, exp.GTE(this=r, expression=_n(1))), r),
                            (_and(second, exp.GTE(this=col, expression=_n(1))), col)]))
    value = _at(values, _case([(exp.LTE(this=position, expression=size), position)]))
    return value, [
        (_and(_is_null(position), _or(exp.LT(this=r, expression=_n(0)),
                                      exp.LT(this=col, expression=_n(0)))), "#VALUE!"),
        (_or(_is_null(position), exp.GT(this=position, expression=size)), "#REF!")]


def polars_lookup(c: FormCall, values: Any, predicate: Any, result: Any = None) -> Any:
    kept = values.list.filter(_pl_bcast(predicate, c, 1).fill_null(False))
    errors = [(kept.list.len() == 0, "#N/A")]
    if result is None:
        return kept.list.first(), errors
    return kept.list.head(1).list.eval(_pl_bcast(result, c, 2)).list.first(), errors


@_sql_picking
def sql_lookup(c: FormCall, values: Any, predicate: Any, result: Any = None) -> Any:
    kept = _f("LIST_FILTER", values, predicate)
    errors = [(exp.EQ(this=_len(kept), expression=_n(0)), "#N/A")]
    if result is None:
        return _at(kept, _n(1)), errors
    return _at(_f("LIST_TRANSFORM", kept, result), _n(1)), errors


def _pl_flags(c: FormCall, values: Any, predicate: Any) -> Any:
    if predicate is None:
        return values.list.eval(_e().fill_null(False))
    return values.list.eval(_pl_bcast(predicate, c, 1).fill_null(False))


def polars_any(c: FormCall, values: Any, predicate: Any = None) -> Any:
    return _pl_flags(c, values, predicate).list.any()


def polars_all(c: FormCall, values: Any, predicate: Any = None) -> Any:
    return _pl_flags(c, values, predicate).list.all()


def _sql_flag(predicate: Any) -> Callable[[exp.Expr], exp.Expr]:
    if predicate is None:
        return lambda x: _coalesce(x, exp.Boolean(this=False))
    return lambda x: _coalesce(_apply(predicate, x), exp.Boolean(this=False))


@_sql_checking
def sql_any(c: FormCall, values: Any, predicate: Any = None) -> Any:
    flag = _sql_flag(predicate)
    return exp.GT(this=_len(_f("LIST_FILTER", values, _lam(flag))), expression=_n(0))


@_sql_checking
def sql_all(c: FormCall, values: Any, predicate: Any = None) -> Any:
    flag = _sql_flag(predicate)
    return exp.EQ(this=_len(_f("LIST_FILTER", values, _lam(lambda x: _not(flag(x))))),
                  expression=_n(0))


