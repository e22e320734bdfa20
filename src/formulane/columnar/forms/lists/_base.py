"""Shared tools of the list forms (each receives a `FormCall` first, `columnar.call`): the
polars and SQL building blocks every list form uses (one place; the submodules import them).

Contract: nothing here imports polars at import time (``pl`` is deferred, `_lazy`); the SQL
helpers build sqlglot trees with the DuckDB list functions the package docstring names.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Callable, Sequence, cast

from sqlglot import exp

from ...sql.kit import dtype
from ....interpreter import ir
from ....types import Type
from ....values import ErrorValue
from ...call import MISSING
from ...names import fresh
from ...call import FormCall as FormCall
from ...sql.kit import cases as _cases
from ...sql.let import _trivial as _sql_trivial  # re-exported to the list modules
from .. import _lazy

# the list modules import these from here: polars and the compilers' modules, on first use
pl: Any = _lazy.pl
_vp: Any = _lazy.vp
_vs: Any = _lazy.vs
_MISSING: Any = MISSING


# polars is optional: the SQL forms never import it (nor the polars backend).

_EPOCH = dt.date(1899, 12, 30)  # Excel serial day 0 (see `_criteria.serial`)
_BIG = 1e308  # the engine's numbers stay below this magnitude (#NUM! beyond)


def _references(body: ir.IR, slot: int) -> bool:
    stack = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Var) and n.slot == slot:
            return True
        stack.extend(ir.ir_children(n))
    return False


# ---------------------------------------------------------------------------- polars tools


def _e() -> Any:
    return pl.element()


def _float() -> bool:
    return bool(_vp.numbers() == "float")


def _num(x: Any) -> Any:
    """A number in the program's numeric dtype. In decimal mode a float the Decimal(38, 18)
    cannot hold (NaN, an infinity, 1e20 or more: an error row's value, or a result
    `_pl_range_errors` names #NUM!) becomes null first: polars aborts the whole query on a
    strict cast that fails."""
    if _float():
        return x.cast(pl.Float64)
    return pl.when(x.cast(pl.Float64).abs() < _vp.DECIMAL_LIMIT).then(x).cast(_vp.DECIMAL_DTYPE)


def _pl_lit(v: Any) -> Any:
    if isinstance(v, (int, Decimal)) and not isinstance(v, bool):
        return _vp.literal(v, Type("Number"))
    return pl.lit(v)


def _pl_range_errors(value: Any) -> list[tuple[Any, str]]:
    """#NUM! for a float result the engine cannot hold (non-finite, or 1e308 and beyond; in
    decimal mode 1e20 and beyond, which Decimal(38, 18) cannot hold)."""
    v = value.cast(pl.Float64)
    if not _float():
        return [(~(v.abs() < _vp.DECIMAL_LIMIT), "#NUM!")]
    return [(v.is_nan() | (v.abs() >= _BIG), "#NUM!")]


def _pl_sum(items: Any) -> tuple[Any, list[tuple[Any, str]]]:
    """The sum of each list of numbers, and its #NUM! (0 for an empty list). Float mode: the
    float64 sum, tested as `_pl_range_errors` does. Decimal mode: exact, from
    `_pl_decimal_split`, never a polars decimal sum (polars aborts the whole query when a sum,
    or only a partial sum as in [9e19, 9e19, -9e19], passes Decimal(38, 18)): a total of 1e20
    or more is #NUM! and blank, the other rows keep their sums."""
    if _float():
        total = _num(items.list.sum()).fill_null(0)
        return total, _pl_range_errors(total)
    return _pl_split_total(*_pl_decimal_split(items))


def _pl_split_total(whole: Any, units: Any) -> tuple[Any, list[tuple[Any, str]]]:
    """Decimal mode: the Decimal(38, 18) ``whole + units / 1e18`` (``0 <= units < 1e18``, a
    blank whole read as 0) and its #NUM! where it does not fit (`_pl_decimal_split`)."""
    # whole + units / 1e18 with 0 <= units < 1e18: below 1e20 in magnitude exactly when
    limit = pl.lit(_WHOLE_LIMIT, dtype=pl.Int128)
    fits = _vp.let((whole < limit) & ((whole > -limit) | ((whole == -limit) & (units > 0))))
    exact = pl.when(fits).then(whole) * pl.lit(_UNIT, dtype=pl.Int128) + units
    return pl.when(fits.fill_null(True)).then(_pl_from_units(exact).fill_null(0)), \
        [(~fits, "#NUM!")]


def _pl_decimal_mean(items: Any) -> tuple[Any, Any]:
    """Decimal mode: the mean of each list of numbers, exact but for the division (rounded
    half-even at 18 places, as a decimal division of the sum would be: adding an integer does
    not change that rounding) and whether it fits; null for an empty list. The sum
    (`_pl_decimal_split`) may pass 1e20 where the mean does not, so its integer part is
    divided in Int128: ``q = whole // n``, ``r = whole - q * n`` (0 <= r < n) and the mean is
    ``q + (r + units / 1e18) / n``, which lies in [q, q + 1]. A mean whose q is within 1 of
    1e20 in magnitude is counted as not fitting (#NUM!): it could round onto 1e20."""
    whole, units = _pl_decimal_split(items)
    n = items.list.len()
    count = _vp.let(pl.when(n > 0).then(n).cast(pl.Int128))
    q = _vp.let(whole // count)
    r = whole - q * count
    limit = pl.lit(_WHOLE_LIMIT, dtype=pl.Int128)
    fits = (q > -limit) & (q < limit - 1)
    dec = _vp.DECIMAL_DTYPE
    part = _pl_from_units(r * pl.lit(_UNIT, dtype=pl.Int128) + units) / count.cast(dec)
    return pl.when(fits).then(q).cast(dec) + part, fits


def _pl_decimal_split(items: Any) -> tuple[Any, Any]:
    """Decimal mode: the exact sum of each list of numbers as ``(whole, units)``, Int128s with
    sum = whole + units / 1e18 and 0 <= units < 1e18 (whole is the floor). Integer
    arithmetic on the Decimal(38, 18)'s physical Int128 (the number times 1e18), each split
    into its floor and the rest first, so neither sum can overflow whatever the partial
    sums; and integer sums are ten times faster than polars' decimal sum."""
    unit = pl.lit(_UNIT, dtype=pl.Int128)
    raw = items.cast(pl.List(_vp.DECIMAL_DTYPE)).list.eval(_e().to_physical())
    floors = raw.list.eval(_e() // unit)
    rests = _vp.let((raw - floors * unit).list.sum())  # each in [0, 1e18)
    return _vp.let(floors.list.sum() + rests // unit), _vp.let(rests % unit)


def _pl_from_units(units: Any) -> Any:
    """A Decimal(38, 18) from an Int128 count of 1e-18 (|units| < 1e38)."""
    return units.cast(pl.Decimal(38, 0)) * pl.lit(Decimal(1).scaleb(-_SCALE),
                                                  dtype=_vp.DECIMAL_DTYPE)


_SCALE = 18  # Decimal(38, 18), the decimal mode's dtype
_UNIT = 10**_SCALE
_WHOLE_LIMIT = 10**20  # Decimal(38, 18) holds |x| < 1e20


def _pl_int(x: Any) -> Any:
    """Excel's integer argument: truncated toward zero (huge magnitudes clipped, harmlessly)."""
    return x.cast(pl.Float64).clip(-1e15, 1e15).cast(pl.Int64)


def _pl_empty_like(lst: Any) -> Any:
    return lst.list.head(0)


def _many(c: FormCall, values: Sequence[Any], start: int,
          as_list: Callable[[Type, Any], Any], as_item: Callable[[Any], Any]
          ) -> tuple[list[Any], Any]:
    """The parts of ``many(...)`` arguments, in order (both backends): ``as_list(type, value)``
    for a list argument, ``as_item(value)`` for one given directly; and the list part when it
    is the only part (else None). Nested lists are refused."""
    parts = []
    only_list = None
    for i in range(start, len(values)):
        t = c.type(i)
        if t.kind == "List":
            if t.elem is not None and t.elem.kind == "List":
                c.refuse("nested lists")
            only_list = as_list(t, values[i])
            parts.append(only_list)
        else:
            parts.append(as_item(values[i]))
    return parts, (only_list if len(parts) == 1 else None)


def _pl_items(c: FormCall, values: Sequence[Any], start: int = 0) -> Any:
    """``many(...)`` arguments as one list (numbers given directly and list items, in order;
    blanks dropped; a blank list counts as empty)."""
    def as_list(t: Type, v: Any) -> Any:
        if t.elem is None or t.elem.kind in ("Number", "Never", "Blank"):
            v = v.cast(pl.List(_vp.dtype_of(Type("Number"))))  # [] is a list of nulls
        return v.fill_null([]) if t.nullable else v

    parts, only_list = _many(c, values, start, as_list, lambda v: v)
    if only_list is not None:
        return only_list.list.drop_nulls()
    return pl.concat_list(parts).list.drop_nulls()


def _pl_bcast(body: Any, c: FormCall, i: int) -> Any:
    """A lambda body made element-wise even when it ignores its parameter (x => TRUE)."""
    lam = c.args[i]
    assert isinstance(lam, ir.Lambda)
    if _references(lam.body, lam.slots[0]):
        return body
    e = _e()
    return pl.when(e.is_null() | e.is_not_null()).then(body)


def _pl_positions(mask: Any) -> Any:
    """0-based positions where a list of booleans is TRUE (blank is FALSE)."""
    e = _e()
    return mask.list.eval(pl.int_range(pl.len()).filter(e.fill_null(False)))


def _pl_zip(lists: Sequence[Any], build: Callable[..., Any]) -> Any:
    """``list.agg`` of ``build(*items)`` over lists of one length, item by item: the lists are
    concatenated and cut back into equal slices inside (any dtype, decimals included)."""
    e = _e()
    k = len(lists)
    n = pl.len() // k
    slices = [e.slice(n * j, n) for j in range(k)]
    return pl.concat_list(list(lists)).list.agg(build(*slices))


def _pl_with(lst: Any, extras: Sequence[Any], build: Callable[[Any, list[Any]], Any],
             agg: bool = False) -> Any:
    """``list.eval`` (or ``list.agg``) of ``build(items, extras)`` where the per-row scalars
    ``extras`` are appended to the list and read back inside (list.eval sees only the list)."""
    e = _e()
    if not extras:
        body = build(e, [])
        return lst.list.agg(body) if agg else lst.list.eval(body)
    k = len(extras)
    n = pl.len() - k
    items = e.head(n)
    got = [e.get(n + j) for j in range(k)]
    body = build(items, got)
    base = pl.concat_list([lst, *extras])
    return base.list.agg(body) if agg else base.list.eval(body)


# ------------------------------------------------------------------------------- SQL tools

def _f(name: str, *args: Any) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _p(e: exp.Expr) -> exp.Expr:
    """Parenthesized when it is an operator expression (sqlglot prints the tree as built)."""
    if isinstance(e, (exp.Binary, exp.Unary, exp.Connector, exp.Escape)) and not isinstance(
            e, exp.Paren):
        return exp.Paren(this=e)
    return e


def _n(v: Any) -> exp.Expr:
    return cast(exp.Expr, _vs.literal(v))


def _lam(build: Callable[..., exp.Expr], arity: int = 1) -> exp.Lambda:
    """A SQL lambda with fresh parameter names (``LAMBDA _l1, _l2 : ...`` in DuckDB)."""
    names = [fresh("_l") for _ in range(arity)]
    body = build(*[exp.column(n) for n in names])
    return exp.Lambda(this=body, expressions=[exp.to_identifier(n) for n in names])


def _apply(lam: exp.Lambda, *args: exp.Expr) -> exp.Expr:
    """A lambda's body with its parameters replaced by expressions."""
    names = [i.name for i in lam.expressions]
    subst = dict(zip(names, args))

    def swap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in subst:
            return _p(subst[node.name].copy())
        return node

    return cast(exp.Expr, lam.this.copy().transform(swap))


def _at(lst: exp.Expr, i: exp.Expr) -> exp.Expr:
    """The i-th item (1-based; NULL outside)."""
    return exp.Bracket(this=_p(lst), expressions=[i], offset=1)


def _len(lst: exp.Expr) -> exp.Expr:
    return _f("LEN", lst)


def _and(*xs: exp.Expr) -> exp.Expr:
    out = _p(xs[0])
    for x in xs[1:]:
        out = exp.And(this=out, expression=_p(x))
    return out


def _or(*xs: exp.Expr) -> exp.Expr:
    out = _p(xs[0])
    for x in xs[1:]:
        out = exp.Or(this=out, expression=_p(x))
    return out


def _any(*xs: exp.Expr | bool) -> exp.Expr | bool:
    """OR of conditions some of which the compiler decided (Python booleans)."""
    if any(x is True for x in xs):
        return True
    kept = [x for x in xs if x is not False]
    if not kept:
        return False
    return _or(*kept) if len(kept) > 1 else kept[0]  # type: ignore[arg-type]


def _not(x: exp.Expr) -> exp.Expr:
    return exp.Not(this=_p(x))


def _is_null(x: exp.Expr) -> exp.Expr:
    return exp.Is(this=_p(x), expression=exp.Null())


def _not_null(x: exp.Expr) -> exp.Expr:
    return exp.Not(this=exp.Is(this=_p(x), expression=exp.Null()))


#: The binary operators the SQL forms build (`_op`).
_OPS: dict[str, type[exp.Binary]] = {
    "+": exp.Add, "-": exp.Sub, "*": exp.Mul, "/": exp.Div, "=": exp.EQ, "<>": exp.NEQ,
    "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}


def _op(op: str, a: exp.Expr, b: exp.Expr) -> exp.Expr:
    """``a op b``, each operand parenthesized when it is an operator expression (a division
    is the engine's own: no typed or safe variant)."""
    if op == "/":
        return exp.Div(this=_p(a), expression=_p(b), typed=False, safe=False)
    return _OPS[op](this=_p(a), expression=_p(b))


def _case(pairs: Sequence[tuple[exp.Expr, exp.Expr]],
          default: exp.Expr | None = None) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=default)


def _coalesce(a: exp.Expr, *rest: exp.Expr) -> exp.Expr:
    return exp.Coalesce(this=a, expressions=list(rest))


def _trunc(x: exp.Expr) -> exp.Expr:
    return _f("TRUNC", x)


def _sql_int(x: exp.Expr) -> exp.Expr:
    """Excel's integer argument as BIGINT: truncated, clamped far beyond any list length."""
    clamped = _f("LEAST", _f("GREATEST", _trunc(x), _n(-(10**15))), _n(10**15))
    return exp.cast(clamped, dtype("BIGINT"))


def _sql_int_arg(c: FormCall, i: int, value: exp.Expr) -> tuple[exp.Expr, int | None]:
    """Argument ``i`` as `_sql_int` does, and its value when the compiler knows it: a literal
    number is truncated and clamped here (the forms then decide at compile time what it
    selects); any other value is computed once (`FormCall.let`; total: clamped first)."""
    k = c.const(i)
    if isinstance(k, (int, Decimal)) and not isinstance(k, bool):
        known = max(-(10**15), min(10**15, int(k)))
        return _n(known), known
    return c.let(_sql_int(value)), None


def _sql_range_errors(value: exp.Expr) -> list[tuple[exp.Expr, str]]:
    # NaN compares above every number in DuckDB, so this also catches inf - inf.
    return [(exp.GTE(this=_f("ABS", value), expression=exp.Literal.number("1e308")), "#NUM!")]


def _sql_in_range(value: exp.Expr) -> exp.Expr:
    """``value`` where `_sql_range_errors` does not fire, else NULL (a form flagged
    ``null_on_error`` blanks its value where its error is set)."""
    return _case([(exp.LT(this=_f("ABS", value.copy()), expression=exp.Literal.number("1e308")),
                   value)])


def _sql_checked(c: FormCall, value: exp.Expr, errors: Sequence[tuple[Any, str]] = (),
                 total: bool = True, tracked: bool = False
                 ) -> tuple[exp.Expr, list[tuple[Any, str]]]:
    """``(value, [*errors, #NUM! beyond 1e308])`` with the value computed once (it is read by
    the range test and by the result). ``total``: the value never aborts the query (a DOUBLE,
    a list aggregate); binding computes it on every row, where the range test reads it only
    after ``errors``, so a value that may abort (a DECIMAL sum) stays inline after errors.
    ``tracked``: the range test is left to the compiler (`_tracked`), nothing is added."""
    if tracked:
        return value, list(errors)
    if (total or not errors) and _sql_nodes(value) > _BIND_NODES:
        value = c.let(value)
    return value, [*errors, *_sql_range_errors(value)]


#: A value read twice is bound (`FormCall.let`) only past this many nodes: a binding costs a
#: lateral subquery (about 60 characters) when it starts a level of its own.
_BIND_NODES = 16


def _sql_nodes(e: exp.Expr) -> int:
    return sum(1 for _ in e.walk())


def _sql_errors(pairs: Sequence[tuple[exp.Expr | bool, str]]) -> Any:
    """A form's errors with the conditions the compiler decided (Python booleans) folded: a
    false one is dropped, a true one ends the list as its constant code."""
    kept: list[tuple[exp.Expr, str]] = []
    for condition, code in pairs:
        if condition is False:
            continue
        if condition is True:
            return _cases([(cond, exp.Literal.string(k)) for cond, k in kept],
                          exp.Literal.string(code))
        kept.append((condition, code))
    return kept


def _sql_items(c: FormCall, values: Sequence[Any], start: int = 0) -> exp.Expr:
    """``many(...)`` arguments as one list (blanks kept: list aggregates skip them); values
    given directly next to each other share one list (``["x", 1]``, not a concatenation of
    one-item lists)."""
    parts, _ = _many(
        c, values, start,
        lambda t, v: _coalesce(v, exp.Array(expressions=[])) if t.nullable else v,
        lambda v: [v])  # an item given directly (a Python list: merged with its neighbours)
    merged: list[Any] = []
    for part in parts:
        if isinstance(part, list) and merged and isinstance(merged[-1], list):
            merged[-1].extend(part)
        else:
            merged.append(part)
    lists = [exp.Array(expressions=p) if isinstance(p, list) else p for p in merged]
    return lists[0] if len(lists) == 1 else _f("LIST_CONCAT", *lists)


def _tracked(c: FormCall, start: int = 0, stop: int | None = None) -> bool:
    """Whether a sum, variance or deviation of the numbers of arguments ``start:stop`` needs no
    range test of its own: each argument is a column of the data (a number or a list of
    numbers), a literal number or a list of literal numbers, all below 1e20. With float
    columns the compiler reads such a column as a DOUBLE and tests the call's result for #NUM!
    itself (a test here would be a second copy); DECIMAL columns hold |x| < 1e20, so a
    variance stays far below 1e308: the test could never fire; and literals alone cannot
    reach 1e308 either. (A decimal sum's own #NUM!, from 1e20, is `_sql_decimal._sql_sum`'s.)
    Not for a call with a lambda argument (SUMIF with a predicate): the compiler's
    higher-order path writes no test of its own."""
    if any(isinstance(a, ir.Lambda) for a in c.args):
        return False
    for a in c.args[start:stop]:
        if c.numbers == "decimal" and type(a) is ir.Call and a.spec.name == "FILTER" \
                and a.args:
            a = a.args[0]  # decimal mode: a filtered column's items are some of its items
        if isinstance(a, ir.Var) and not a.local and (
                a.type.kind == "Number" or (a.type.kind == "List" and a.type.elem is not None
                                            and a.type.elem.kind == "Number")):
            continue
        items = a.items if isinstance(a, ir.ListOf) else (a,)
        if not all(isinstance(i, ir.Const) and _small_number(i.value) for i in items):
            return False
    return True


def _literal_sum(c: FormCall, start: int = 0, stop: int | None = None) -> bool:
    """Whether arguments ``start:stop`` are literal numbers and lists of them (blanks
    allowed) whose magnitudes add up below 1e20: no partial sum of theirs can pass
    DECIMAL(38, 18)."""
    total = Decimal(0)
    for a in c.args[start:stop]:
        for item in (a.items if isinstance(a, ir.ListOf) else (a,)):
            if not isinstance(item, ir.Const) or not _small_number(item.value):
                return False
            total += abs(Decimal(item.value)) if item.value is not None else 0
    return total < _DECIMAL_LIMIT


def _small_number(v: Any) -> bool:
    if v is None:
        return True
    return isinstance(v, (int, Decimal)) and not isinstance(v, bool) \
        and abs(Decimal(v)) < _DECIMAL_LIMIT


_DECIMAL_LIMIT = Decimal("1e20")  # DECIMAL(38, 18) holds |x| below this


def _known_len(c: FormCall, i: int) -> int | None:
    """The length of list argument ``i`` when the compiler knows it (a list written out, such
    as ``[1, x]``), else None."""
    a = c.args[i] if i < len(c.args) else None
    return len(a.items) if isinstance(a, ir.ListOf) else None


def _sql_lengths_differ(c: FormCall, i: int, j: int, a: exp.Expr, b: exp.Expr
                        ) -> exp.Expr | bool:
    """Whether list arguments ``i`` and ``j`` (as ``a`` and ``b``) differ in length: decided
    here when both lengths are known, a comparison with the known one otherwise."""
    n, m = _known_len(c, i), _known_len(c, j)
    if n is not None and m is not None:
        return n != m
    if _mapped_from(c.args[i], c.args[j]) or _mapped_from(c.args[j], c.args[i]):
        return False
    if n is not None:
        return exp.NEQ(this=_len(b), expression=_n(n))
    if m is not None:
        return exp.NEQ(this=_len(a), expression=_n(m))
    return exp.NEQ(this=_len(a), expression=_len(b))


def _mapped_from(a: ir.IR, source: ir.IR) -> bool:
    """Whether ``a`` is ``MAP(source, lambda)`` of the list read by ``source`` (a column or a
    name): a list of the same length."""
    return isinstance(a, ir.Call) and a.spec.name == "MAP" and len(a.args) == 2 \
        and isinstance(a.args[0], ir.Var) and isinstance(source, ir.Var) \
        and a.args[0].slot == source.slot and a.args[0].local == source.local


def _known_number(c: FormCall, i: int) -> Decimal | None:
    """Argument ``i`` when it is a literal number (a Decimal), else None."""
    k = c.const(i)
    if isinstance(k, (int, Decimal)) and not isinstance(k, bool):
        return Decimal(k)
    return None


def _known_items(c: FormCall, i: int) -> tuple[Any, ...] | None:
    """The items of list argument ``i`` when it is written out of literals (no error value),
    else None."""
    a = c.args[i] if i < len(c.args) else None
    if not isinstance(a, ir.ListOf) or not all(
            isinstance(item, ir.Const) and not isinstance(item.value, ErrorValue)
            for item in a.items):
        return None
    return tuple(item.value for item in a.items)  # type: ignore[union-attr]


def _known_count(c: FormCall, start: int = 0, stop: int | None = None) -> int | None:
    """How many non-blank items `_sql_items` / `_pl_items` hold when the compiler knows it
    (lists written out and values given directly, each item a literal or of a type that is
    never blank), else None."""
    total = 0
    for a in c.args[start:stop]:
        for item in (a.items if isinstance(a, ir.ListOf) else (a,)):
            if (isinstance(item, ir.Const) and item.value is None) \
                    or item.type.kind == "Blank":
                continue  # a literal blank, BLANK()
            if item.type.nullable or item.type.kind in ("List", "Never", "Any", "Var"):
                return None
            total += 1
    return total


def _sql_too_few(c: FormCall, items: exp.Expr, minimum: int, start: int = 0,
                 stop: int | None = None) -> exp.Expr | bool:
    """Whether the ``many(...)`` arguments ``start:stop`` (as the list ``items``) hold fewer
    than ``minimum`` non-blank items: decided here when the count is known (`_known_count`)."""
    known = _known_count(c, start, stop)
    if known is not None:
        return known < minimum
    if minimum == 1:
        return exp.EQ(this=_sql_count(items), expression=_n(0))
    return exp.LT(this=_sql_count(items), expression=_n(minimum))


def _sql_none(c: FormCall, aggregate: exp.Expr, start: int = 0, stop: int | None = None
              ) -> exp.Expr | bool:
    """Whether the ``many(...)`` arguments ``start:stop`` hold no non-blank item: decided here
    when the count is known (`_known_count`), else read from ``aggregate``, an aggregate of
    those items that is NULL exactly when there is none (``LIST_AVG``, ``LIST_MIN``...,
    ``LIST_VAR_SAMP`` for fewer than two): shorter than counting them again."""
    known = _known_count(c, start, stop)
    if known is not None:
        return known < 1
    return _is_null(aggregate)


def _sql_present(lst: exp.Expr) -> exp.Expr:
    return _f("LIST_FILTER", lst, _lam(lambda x: _not_null(x)))


def _sql_count(lst: exp.Expr) -> exp.Expr:
    """The non-blank items of a list (0 for a blank list)."""
    return _coalesce(_f("LIST_COUNT", lst), _n(0))


def _once(c: FormCall, e: exp.Expr) -> exp.Expr:
    """``e`` computed once per row (`FormCall.let`: bound by the compiler when it binds)."""
    return cast(exp.Expr, c.let(e))


def _sql_let(values: dict[str, exp.Expr],
             body: Callable[[dict[str, exp.Expr]], exp.Expr]) -> exp.Expr:
    """``body`` reading each of ``values`` computed once per row, inside the expression itself
    (``list_transform([{...}], s -> ...)[1]``), so a lambda that needs a list's mean does not
    recompute it for every item. (A binding of the compiler, `FormCall.let`, may be inlined
    back where it is read once, which inside a lambda is once per item.) Values that are
    already columns or literals (`FormCall.let` results among them) are passed as they are."""
    heavy = {k: v for k, v in values.items() if not _sql_trivial(v)}
    if not heavy:
        return body(values)
    name = fresh("_s")
    struct = exp.Struct(expressions=[
        exp.PropertyEQ(this=exp.to_identifier(k), expression=v) for k, v in heavy.items()])
    fields: dict[str, exp.Expr] = {
        k: exp.Dot(this=exp.column(name), expression=exp.to_identifier(k)) if k in heavy else v
        for k, v in values.items()}
    lam = exp.Lambda(this=body(fields), expressions=[exp.to_identifier(name)])
    return _at(_f("LIST_TRANSFORM", exp.Array(expressions=[struct]), lam), _n(1))
