"""List forms of the criteria functions: COUNTIF SUMIF AVERAGEIF and COUNTIFS SUMIFS
AVERAGEIFS MAXIFS MINIFS, with the Excel wildcard translation they share with the lookups.

Contract: a criteria text must be a literal (parsed when compiling, as `_criteria.criterion`
reads it) and becomes a predicate over the list's item type; number, logical or date criteria
may come from the data (equality). Anything else is refused with the reason.
"""

from __future__ import annotations

import datetime as dt
import decimal
from decimal import Decimal
from typing import Any, Callable, Sequence, cast

from sqlglot import exp

from ...sql.kit import dtype
from ....interpreter import ir
from ....functions._criteria import Criterion, criterion
from ._base import (
    FormCall, _and, _apply, _at, _case, _coalesce, _e, _EPOCH, _f, _is_null, _lam, _len,
    _MISSING, _n, _not, _not_null, _num, _op, _or, _p, pl, _pl_bcast, _pl_empty_like, _pl_lit,
    _pl_positions, _pl_sum, _pl_with, _sql_count, _sql_lengths_differ, _tracked, _vs,
)
from ._sql_decimal import _sql_reading_criteria, _sql_mean, _sql_sum
from .aggregates import _pl_mean


# -------------------------------------------------------------------------------- criteria


def _wildcard_atoms(pattern: str) -> list[tuple[str, str]]:
    """Excel wildcard atoms of a pattern, lowercased as `_criteria.Wildcard` reads them:
    ("lit", char), ("any", "") for ``?`` and ("star", "") for a run of ``*``."""
    low = pattern.lower()
    atoms: list[tuple[str, str]] = []
    i = 0
    while i < len(low):
        ch = low[i]
        if ch == "~" and i + 1 < len(low) and low[i + 1] in "*?~":
            atoms.append(("lit", low[i + 1]))
            i += 2
            continue
        if ch == "*":
            if not atoms or atoms[-1][0] != "star":
                atoms.append(("star", ""))
        elif ch == "?":
            atoms.append(("any", ""))
        else:
            atoms.append(("lit", ch))
        i += 1
    return atoms


def _regex(atoms: list[tuple[str, str]]) -> str:
    """A whole-text regular expression (Rust regex and RE2 syntax alike)."""
    out = ["(?s)^"]
    for kind, ch in atoms:
        if kind == "star":
            out.append(".*")
        elif kind == "any":
            out.append(".")
        elif ch.isalnum() or ch == " ":
            out.append(ch)
        else:
            out.append(f"\\x{{{ord(ch):x}}}")
    out.append("$")
    return "".join(out)


def _like(atoms: list[tuple[str, str]]) -> str:
    out = []
    for kind, ch in atoms:
        if kind == "star":
            out.append("%")
        elif kind == "any":
            out.append("_")
        elif ch in "%_\\":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


_WILD_TOKENS = r"~[*?~]|\*|\?|[^*?~]+|~"


def _pl_wild_regex(text: Any) -> Any:
    """A wildcard pattern read from the data as a whole-text regular expression, row by row:
    the lowercased text cut into tokens (``~x`` escapes, ``*``, ``?``, literal runs), each
    translated, then joined (as `_wildcard_atoms` and `_regex` do for a literal)."""
    e = _e()
    tokens = text.str.to_lowercase().str.extract_all(_WILD_TOKENS)
    piece = (pl.when(e == "*").then(pl.lit(".*"))
             .when(e == "?").then(pl.lit("."))
             .when((e.str.len_chars() == 2) & e.str.starts_with("~"))
             .then(e.str.slice(1).str.escape_regex())
             .otherwise(e.str.escape_regex()))
    return pl.lit("(?s)^") + tokens.list.eval(piece).list.join("") + pl.lit("$")


def _sql_wild_regex(text: exp.Expr) -> exp.Expr:
    tokens = _f("REGEXP_EXTRACT_ALL", exp.Lower(this=text), exp.Literal.string(_WILD_TOKENS))

    def piece(t: exp.Expr) -> exp.Expr:
        escaped = _and(exp.EQ(this=_f("LENGTH", t), expression=_n(2)),
                       _f("STARTS_WITH", t, exp.Literal.string("~")))
        return _case([(exp.EQ(this=t, expression=exp.Literal.string("*")),
                       exp.Literal.string(".*")),
                      (exp.EQ(this=t, expression=exp.Literal.string("?")),
                       exp.Literal.string(".")),
                      (escaped, _f("REGEXP_ESCAPE", _f("SUBSTRING", t, _n(2))))],
                     _f("REGEXP_ESCAPE", t))

    body = _f("ARRAY_TO_STRING", _f("LIST_TRANSFORM", tokens, _lam(piece)),
              exp.Literal.string(""))
    return exp.DPipe(this=exp.Literal.string("(?s)"), expression=body, safe=True)


class _PlOps:
    """Predicate building blocks over polars expressions (see `_crit_pred`)."""

    def true(self) -> Any:
        return pl.lit(True)

    def false(self) -> Any:
        return pl.lit(False)

    def is_null(self, x: Any) -> Any:
        return x.is_null()

    def not_null(self, x: Any) -> Any:
        return x.is_not_null()

    def and_(self, a: Any, b: Any) -> Any:
        return a & b

    def or_(self, a: Any, b: Any) -> Any:
        return a | b

    def not_(self, a: Any) -> Any:
        return ~a

    def lit(self, v: Any) -> Any:
        return _pl_lit(v)

    def cmp(self, op: str, a: Any, b: Any) -> Any:
        return {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                ">=": a >= b}[op]

    def lower(self, x: Any) -> Any:
        return x.str.to_lowercase()

    def matches(self, x: Any, pattern: str) -> Any:
        atoms = _wildcard_atoms(pattern)
        low = x.str.to_lowercase()
        stars = [i for i, (k, _) in enumerate(atoms) if k == "star"]
        if all(k != "any" for k, _ in atoms):
            text = "".join(ch for k, ch in atoms if k == "lit")
            if not stars:
                return low == pl.lit(text)
            if stars == [len(atoms) - 1]:
                return low.str.starts_with(text)
            if stars == [0] and len(atoms) > 1:
                return low.str.ends_with(text)
            if stars == [0, len(atoms) - 1] and len(atoms) > 1:
                return low.str.contains(text, literal=True)
            if atoms == [("star", "")]:
                return x.is_not_null()
        return low.str.contains(_regex(atoms))

    def serial(self, x: Any) -> Any:
        return (x - pl.lit(_EPOCH)).dt.total_days()


class _SqlOps:
    """Predicate building blocks over sqlglot expressions. The predicates are read only by
    LIST_FILTER, which keeps the items whose predicate is TRUE: a comparison with a blank item
    is NULL, so it needs no blank guard (``filters_nulls``) unless it is negated (``<>``)."""

    filters_nulls = True

    def true(self) -> exp.Expr:
        return exp.Boolean(this=True)

    def false(self) -> exp.Expr:
        return exp.Boolean(this=False)

    def is_null(self, x: exp.Expr) -> exp.Expr:
        return _is_null(x)

    def not_null(self, x: exp.Expr) -> exp.Expr:
        return _not_null(x)

    def and_(self, a: exp.Expr, b: exp.Expr) -> exp.Expr:
        return _and(a, b)

    def or_(self, a: exp.Expr, b: exp.Expr) -> exp.Expr:
        return _or(a, b)

    def not_(self, a: exp.Expr) -> exp.Expr:
        return _not(a)

    def lit(self, v: Any) -> exp.Expr:
        return cast(exp.Expr, _vs.literal(v))

    def cmp(self, op: str, a: exp.Expr, b: exp.Expr) -> exp.Expr:
        return _op(op, a, b)

    def lower(self, x: exp.Expr) -> exp.Expr:
        return exp.Lower(this=x)

    def text_eq(self, x: exp.Expr, text: str) -> exp.Expr:
        return exp.EQ(this=exp.Lower(this=x), expression=exp.Literal.string(text.lower()))

    def matches(self, x: exp.Expr, pattern: str) -> exp.Expr:
        atoms = _wildcard_atoms(pattern)
        if all(k == "lit" for k, _ in atoms):
            return self.text_eq(x, "".join(ch for _, ch in atoms))
        like = exp.Like(this=exp.Lower(this=x), expression=exp.Literal.string(_like(atoms)))
        return exp.Escape(this=like, expression=exp.Literal.string("\\"))

    def serial(self, x: exp.Expr) -> exp.Expr:
        return exp.DateDiff(this=x, expression=_vs.literal(_EPOCH), unit=exp.var("DAY"))


def _crit_pred(c: FormCall, o: Any, crit: Criterion, kind: str, x: Any) -> Any:
    """The criteria as a predicate over one item ``x`` of type ``kind``: `Criterion.__call__`
    decided at compile time for the list's item type (blanks never equal a value, so ``<>``
    accepts them)."""
    if crit.op == "<>":
        return o.not_(_crit_equal(c, o, crit, kind, x, True, negated=True))
    if crit.op in ("", "="):
        return _crit_equal(c, o, crit, kind, x, crit.op == "=")
    return _guarded(o, x, _crit_order(c, o, crit, kind, x), False)


def _guarded(o: Any, x: Any, match: Any, negated: bool) -> Any:
    """``match`` false for a blank item ``x`` (see ``_SqlOps.filters_nulls``)."""
    if getattr(o, "filters_nulls", False) and not negated:
        return match
    return o.and_(o.not_null(x), match)


def _crit_equal(c: FormCall, o: Any, crit: Criterion, kind: str, x: Any, explicit: bool,
                negated: bool = False) -> Any:
    ck = crit.kind
    if ck == "empty":
        if kind == "Text" and not explicit:
            return o.or_(o.is_null(x), o.cmp("=", x, o.lit("")))
        return o.is_null(x)
    if kind in ("Never", "Blank"):
        return o.false()
    if kind == "Text":
        if ck == "number":
            c.refuse("a numeric criteria over text items (Excel also reads numbers written "
                     "as text; no exact form)")
        if ck != "text" or crit.pattern is None:
            return o.false()
        match = o.matches(x, crit.pattern.pattern)
    elif kind == "Number":
        if ck != "number":
            return o.false()
        match = o.cmp("=", x, o.lit(crit.number))
    elif kind == "Date":
        if ck == "number":
            match = _date_cmp(o, "=", x, crit.number)
        elif ck == "value" and type(crit.value) is dt.date:
            match = o.cmp("=", x, o.lit(crit.value))
        else:
            return o.false()
    elif kind == "Boolean":
        if ck != "bool":
            return o.false()
        match = o.cmp("=", x, o.lit(crit.flag))
    else:
        c.refuse(f"criteria over {kind} items")
    return _guarded(o, x, match, negated)


def _crit_order(c: FormCall, o: Any, crit: Criterion, kind: str, x: Any) -> Any:
    ck = crit.kind
    op = crit.op
    if kind in ("Never", "Blank"):
        return o.false()
    if ck == "number":
        if kind == "Number":
            return o.cmp(op, x, o.lit(crit.number))
        if kind == "Date":
            return _date_cmp(o, op, x, crit.number)
        if kind in ("Text", "Boolean"):
            return o.false()
        c.refuse(f"a numeric criteria over {kind} items")
    if ck == "bool":
        return o.cmp(op, x, o.lit(crit.flag)) if kind == "Boolean" else o.false()
    if ck in ("text", "empty"):
        return o.cmp(op, o.lower(x), o.lit(crit.text.lower())) if kind == "Text" else o.false()
    c.refuse("this criteria")


def _date_cmp(o: Any, op: str, x: Any, number: Any) -> Any:
    """``serial(x) op number`` for a date item ``x``: a date's serial is a whole number, so
    this is ``x op date`` with the number rounded to the date it admits (the items are
    compared as dates, no serial computed per item); past the dates a date holds, serials."""
    n = Decimal(number)
    whole = n.to_integral_value(decimal.ROUND_FLOOR)
    if op in (">", ">=") and n != whole:
        op, whole = ">=", whole + 1
    elif op == "=" and n != whole:
        return o.false()  # no date has this serial
    try:
        day = _EPOCH + dt.timedelta(days=int(whole))
    except OverflowError:
        return o.cmp(op, o.serial(x), o.lit(number))
    return o.cmp(op, x, o.lit(day))


_VALUE_CRITERIA = ("Number", "Boolean", "Date")


def _criteria(c: FormCall, i: int, list_index: int) -> Criterion | str:
    """The literal criteria of argument ``i`` (parsed now), or "column" for a number, logical or
    date criteria read from the data (equality; a blank criteria matches blanks)."""
    kind = c.kind(i)
    if kind in ("List", "Record"):
        c.refuse("a list or record as criteria (#VALUE! in the scalar engine)")
    value = c.const(i)
    if value is not _MISSING:
        return criterion(value)
    if kind == "Text":
        c.refuse("a criteria text that is not a literal (it is parsed when compiling)")
    if kind not in _VALUE_CRITERIA or kind != c.elem(list_index).kind:
        c.refuse(f"a {kind} criteria read from the data over {c.elem(list_index).kind} items")
    return "column"


def _pl_crit_mask(c: FormCall, i_list: int, i_crit: int, values: Sequence[Any]) -> Any:
    """A List(Boolean) as long as the list: the items meeting the criteria."""
    lst, crit_value = values[i_list], values[i_crit]
    crit = _criteria(c, i_crit, i_list)
    kind = c.elem(i_list).kind
    if crit == "column":
        # Equality with the row's value; a blank criteria ("") matches the blank items.
        return _pl_with(lst, [crit_value], lambda items, got: items.eq_missing(got[0]))
    assert isinstance(crit, Criterion)
    return lst.list.eval(_crit_pred(c, _PlOps(), crit, kind, _e()))


def _sql_crit_pred(c: FormCall, i_list: int, i_crit: int, values: Sequence[Any]
                   ) -> Callable[[exp.Expr], exp.Expr]:
    crit_value = values[i_crit]
    crit = _criteria(c, i_crit, i_list)
    kind = c.elem(i_list).kind
    if crit == "column":
        return lambda x: exp.NullSafeEQ(this=_p(x), expression=_p(crit_value))
    return lambda x: _crit_pred(c, _SqlOps(), crit, kind, x)  # type: ignore[arg-type]


def _pl_lambda_mask(c: FormCall, lst: Any, body: Any, i: int) -> Any:
    return lst.list.eval(_pl_bcast(body, c, i).fill_null(False))


def _pl_pick(target: Any, positions: Any) -> Any:
    """The numbers of ``target`` at the positions (blanks dropped)."""
    return target.list.gather(positions, null_on_oob=True).list.drop_nulls()


def _pl_if_family(c: FormCall, *values: Any, how: str) -> Any:
    lst, crit = values[0], values[1]
    if isinstance(c.args[1], ir.Lambda):
        mask = _pl_lambda_mask(c, lst, crit, 1)
    else:
        mask = _pl_crit_mask(c, 0, 1, values)
    if how == "count":
        return _num(mask.list.agg(_e().fill_null(False).sum()))
    errors: list[tuple[Any, str]] = []
    if c.omitted(2):
        if c.elem(0).kind != "Number":
            target = None  # only numbers are totalled: none here
        else:
            target = lst
    else:
        target = values[2]
        errors.append((target.list.len() != lst.list.len(), "#VALUE!"))
    if target is None:
        picked = pl.concat_list([pl.lit(None, dtype=pl.Float64)]).list.drop_nulls()
    else:
        picked = _pl_pick(target, _pl_positions(mask))
    if how == "sum":
        value, range_errors = _pl_sum(picked)
        return value, [*errors, *range_errors]
    value, mean_errors = _pl_mean(picked)
    return value, [*errors, *mean_errors]


@_sql_reading_criteria
def _sql_if_family(c: FormCall, *values: Any, how: str) -> Any:
    lst, crit = values[0], values[1]
    pred: Callable[[exp.Expr], exp.Expr]
    if isinstance(c.args[1], ir.Lambda):
        lam = cast(exp.Lambda, crit)
        pred = lambda x: _apply(lam, x)
    else:
        pred = _sql_crit_pred(c, 0, 1, values)
    if how == "count":
        hits = _len(_f("LIST_FILTER", lst, _lam(pred)))
        return _coalesce(hits, _n(0)) if c.type(0).nullable else hits
    errors: list[tuple[Any, str]] = []
    numbers = 0  # the argument whose numbers are totalled
    if c.omitted(2):
        if c.elem(0).kind != "Number":
            picked: exp.Expr = exp.cast(exp.Array(expressions=[]),
                                              dtype("DOUBLE[]"))
        else:
            picked = _f("LIST_FILTER", lst, _lam(pred))
    else:
        target = values[2]
        numbers = 2
        mismatch = _sql_lengths_differ(c, 2, 0, target, lst)
        if mismatch is True:
            return exp.Null(), exp.Literal.string("#VALUE!")
        if mismatch is not False:
            errors.append((mismatch, "#VALUE!"))
        picked = _f("LIST_FILTER", target, _lam(lambda t, i: pred(_at(lst, i)), 2))
    if how == "sum":
        return _sql_sum(c, picked, errors, tracked=_tracked(c, numbers, numbers + 1),
                        span=(numbers, numbers + 1))
    picked = c.let(picked)  # read by the value and its test (a filter: total)
    return _sql_mean(c, picked), [
        *errors, (exp.EQ(this=_sql_count(picked), expression=_n(0)), "#DIV/0!")]


def _ifs_layout(c: FormCall, target_first: bool) -> tuple[int | None, list[tuple[int, int]]]:
    start = 1 if target_first else 0
    pairs = [(j, j + 1) for j in range(start, len(c.args), 2)]
    if any(j + 1 >= len(c.args) for j, _ in pairs):
        c.refuse("criteria come in pairs")
    return (0 if target_first else None), pairs


def _pl_ifs(c: FormCall, *values: Any, how: str) -> Any:
    target_i, pairs = _ifs_layout(c, how != "count")
    first = values[target_i if target_i is not None else pairs[0][0]]
    n = first.list.len()
    ok = pl.all_horizontal([values[j].list.len() == n for j, _ in pairs])
    mask = None
    for j, k in pairs:
        m = _pl_crit_mask(c, j, k, values).list.eval(_e().fill_null(False).cast(pl.UInt8))
        m = pl.when(ok).then(m).otherwise(_pl_empty_like(m))
        mask = m if mask is None else mask * m
    errors = [(~ok, "#VALUE!")]
    assert mask is not None
    if how == "count":
        return _num(mask.list.sum().fill_null(0)), errors
    positions = mask.list.eval(pl.int_range(pl.len()).filter(_e() == 1))
    picked = _pl_pick(values[0], positions)
    if how == "sum":
        value, range_errors = _pl_sum(picked)
        return value, [*errors, *range_errors]
    if how == "average":
        value, mean_errors = _pl_mean(picked)
        return value, [*errors, *mean_errors]
    extreme = picked.list.max() if how == "max" else picked.list.min()
    return _num(extreme).fill_null(0), errors


@_sql_reading_criteria
def _sql_ifs(c: FormCall, *values: Any, how: str) -> Any:
    target_i, pairs = _ifs_layout(c, how != "count")
    first = values[target_i if target_i is not None else pairs[0][0]]
    preds = [(values[j], _sql_crit_pred(c, j, k, values)) for j, k in pairs]
    errors = [(_or(*[exp.NEQ(this=_len(values[j]), expression=_len(first)) for j, _ in pairs]),
               "#VALUE!")]

    def every(i: exp.Expr) -> exp.Expr:
        return _and(*[pred(_at(lst, i)) for lst, pred in preds])

    if how == "count":
        hits = _f("LIST_FILTER", first, _lam(lambda x, i: every(i), 2))
        return _coalesce(_len(hits), _n(0)), errors
    picked = _f("LIST_FILTER", values[0], _lam(lambda x, i: every(i), 2))
    if how == "sum":
        return _sql_sum(c, picked, errors, tracked=_tracked(c, 0, 1), span=(0, 1))
    picked = c.let(picked)  # read by the value and its test (a filter: total)
    if how == "average":
        return _sql_mean(c, picked), [
            *errors, (exp.EQ(this=_sql_count(picked), expression=_n(0)), "#DIV/0!")]
    extreme = _f("LIST_MAX" if how == "max" else "LIST_MIN", picked)
    return _coalesce(extreme, _n(0)), errors
