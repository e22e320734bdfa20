"""DuckDB's list functions, which the forms call by name, rewritten into Spark SQL's own.

The list forms write DuckDB's functions (`LIST_SUM(xs)`, `LIST_FILTER(xs, x -> ...)`, `LEN`,
`RANGE`...) as `exp.Anonymous`, which sqlglot passes through unchanged; Spark 4 has the same
operations under other names and with other edges (https://spark.apache.org/docs/latest/
api/sql/). `rewrite` maps one such call to Spark's with DuckDB's answers, NULLs included
(https://duckdb.org/docs/sql/functions/list), and leaves what it cannot write faithfully as it
is, for `dialects.lacking` to refuse (E213). One table, `_BUILDERS`: DuckDB name -> builder.
`dialects._spark_node` calls it for every `exp.Anonymous` (children first, so an argument is
already Spark's); no other dialect reaches it, so their SQL is unchanged.

The differences the builders bridge (each checked on local Spark and DuckDB by
tests/test_backends_spark_families.py and tests/columnar/test_spark_lists.py):

- a lambda's index (`(x, i) -> ...` in LIST_TRANSFORM and LIST_FILTER) counts from 1 in DuckDB,
  from 0 in Spark: the body reads `i + 1`;
- LIST_SUM, LIST_AVG skip NULL items and answer NULL for an empty or all-NULL list, a DECIMAL
  sum staying DECIMAL(38, s) and exact. Spark's fold (AGGREGATE) needs its lambda typed as its
  start value, and Spark types `DECIMAL(38, 18) + DECIMAL(38, 18)` as DECIMAL(38, 17) (rounding
  the 18th digit away), while a rewrite here cannot name the items' type; Spark's exact SUM over
  the exploded list is a subquery, which Spark allows neither in a lambda nor in a lateral join
  (where `sql_select` binds what a formula reads twice). So they are rewritten only where the
  form marks the call `DOUBLE` (its items are DOUBLEs: summed in order, as DuckDB does) and
  stay refused otherwise (`REFUSED`); LIST_REDUCE too (its lambda's type is DuckDB's result);
- LIST_PRODUCT, LIST_VAR_*, LIST_STDDEV_* compute in DOUBLE in DuckDB (a DECIMAL list too): a
  fold in DOUBLE, the variance by DuckDB's own update (Welford's: mean and sum of squared
  differences), so the same operations in the same order give the same bits;
- LIST_MIN, LIST_MAX: ARRAY_MIN, ARRAY_MAX (NULLs skipped, NaN the largest, NULL when empty);
- LIST_MEDIAN: the middle of the sorted non-NULL items, or DuckDB's interpolation between the
  two middle ones (`lo + (hi - lo) * 0.5`), for items the form marks DOUBLE (Spark's DECIMAL
  arithmetic would keep 15 places of DECIMAL(38, 18) items);
- LIST_POSITION is NULL where the item is absent (ARRAY_POSITION answers 0) and finds a NULL
  item (ARRAY_POSITION of NULL is NULL): positions of `y <=> x`;
- LIST_SLICE(xs, begin, end) is 1-based and inclusive, a negative bound counting from the end
  and 0 read as 1, NULL for a NULL bound; Spark's SLICE takes a start and a length and fails on
  a start of 0: the items whose position lies between the bounds (FILTER with the index);
- LIST_SORT sorts ascending with NULLs last (ARRAY_SORT), 'DESC' with NULLs last too
  (SORT_ARRAY(xs, FALSE)); LIST_DISTINCT and LIST_UNIQUE leave NULL out, where ARRAY_DISTINCT
  keeps one; LIST_COUNT counts the non-NULL items; LIST_CONCAT reads a NULL list as empty
  (Spark's CONCAT would be NULL); LEN of a NULL list is NULL (ARRAY_SIZE, not SIZE's -1);
- RANGE(a, b) is [a, b) and empty when b <= a (Spark's SEQUENCE counts down there): the
  sequence from a to b, b itself and what lies past it filtered out; FLATTEN skips NULL inner
  lists (Spark's is NULL if one is NULL).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from ..names import fresh

#: The mark of a DuckDB call whose items the form knows are DOUBLEs (`dialects.DOUBLE`).
DOUBLE = "formulane.double"

#: The mark (in sqlglot's ``meta``, which renders as nothing) of a call of Spark's own that
#: shares its name with a DuckDB function `dialects.lacking` refuses (FLATTEN).
SPARK_OWN = "formulane.spark_own"

def _call(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _own(e: exp.Expr) -> exp.Expr:
    e.meta[SPARK_OWN] = True
    return e


def _n(v: int | str) -> exp.Expr:
    return exp.Literal.number(v)


def _p(e: exp.Expr) -> exp.Expr:
    return e if isinstance(e, (exp.Column, exp.Literal, exp.Anonymous, exp.Func, exp.Paren,
                               exp.Dot)) else exp.Paren(this=e)


def _lam(build: Callable[..., exp.Expr], arity: int = 1) -> exp.Lambda:
    """A Spark lambda with fresh parameter names."""
    names = [fresh("_sl") for _ in range(arity)]
    body = build(*[exp.column(n) for n in names])
    return exp.Lambda(this=body, expressions=[exp.to_identifier(n) for n in names])


def _double(e: exp.Expr) -> exp.Expr:
    return exp.cast(e, "DOUBLE")


def _present(xs: exp.Expr) -> exp.Expr:
    """The non-NULL items of ``xs``, in order."""
    return _call("FILTER", xs, _lam(lambda x: exp.Not(this=exp.Is(this=x, expression=exp.Null()))))


def _field(e: exp.Expr, name: str) -> exp.Expr:
    return exp.Dot(this=e, expression=exp.to_identifier(name))


def _struct(**fields: exp.Expr) -> exp.Expr:
    args: list[exp.Expr] = []
    for name, value in fields.items():
        args += [exp.Literal.string(name), value]
    return _call("NAMED_STRUCT", *args)


def _case(default: exp.Expr, *branches: tuple[exp.Expr, exp.Expr]) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=c, true=t) for c, t in branches], default=default)


def _is_null(e: exp.Expr) -> exp.Expr:
    return exp.Is(this=e, expression=exp.Null())


def _sum(node: exp.Anonymous, xs: exp.Expr) -> exp.Expr:
    if not node.meta.get(DOUBLE):
        return node  # a DECIMAL sum's type Spark's fold cannot keep (module docstring)
    # from NULL: the first item starts the sum, NULL items are skipped
    return _call("AGGREGATE", xs, exp.cast(exp.Null(), "DOUBLE"), _lam(lambda a, x: _case(
        exp.Add(this=_p(exp.Coalesce(this=a, expressions=[_n("0D")])), expression=x),
        (_is_null(x), a.copy())), 2))


def _avg(node: exp.Anonymous, xs: exp.Expr) -> exp.Expr:
    if not node.meta.get(DOUBLE):
        return node  # DuckDB's exact DECIMAL sum, then divided in DOUBLE: not Spark's fold
    # the DOUBLE sum over the count, NULL for no items
    return _moments(xs, lambda s, n: _case(
        exp.Div(this=_field(s, "s"), expression=n), (exp.EQ(this=n.copy(), expression=_n(0)),
                                                     exp.Null())))


def _product(node: exp.Anonymous, xs: exp.Expr) -> exp.Expr:
    # a DOUBLE fold from NULL: the first item starts it, NULL items are skipped
    return _call("AGGREGATE", xs, exp.cast(exp.Null(), "DOUBLE"), _lam(lambda a, x: _case(
        exp.Mul(this=_p(exp.Coalesce(this=a, expressions=[_n("1D")])), expression=_double(x)),
        (_is_null(x), a.copy())), 2))


def _moments(xs: exp.Expr, finish: Callable[[exp.Expr, exp.Expr], exp.Expr]) -> exp.Expr:
    """DuckDB's variance state over the non-NULL items as DOUBLEs (count, mean, sum of squared
    differences: its update, step by step; and their sum), then ``finish(state, count)``."""
    def merge(a: exp.Expr, x: exp.Expr) -> exp.Expr:
        n = exp.Add(this=_field(a, "n"), expression=_n(1))
        d = exp.Sub(this=_double(x), expression=_field(a.copy(), "m"))
        mean = exp.Add(this=_field(a.copy(), "m"),
                       expression=exp.Div(this=_p(d), expression=_p(n)))
        q = exp.Add(this=_field(a.copy(), "q"), expression=exp.Mul(
            this=exp.Paren(this=exp.Sub(this=_double(x.copy()), expression=_p(mean))),
            expression=_p(d.copy())))
        total = exp.Add(this=_field(a.copy(), "s"), expression=_double(x.copy()))
        return _case(_struct(n=n.copy(), m=mean.copy(), q=q, s=total),
                     (_is_null(x.copy()), a.copy()))

    zero = _struct(n=_n("0D"), m=_n("0D"), q=_n("0D"), s=_n("0D"))
    return _call("AGGREGATE", xs, zero, _lam(merge, 2),
                 _lam(lambda s: finish(s, _field(s.copy(), "n"))))


def _spread(name: str) -> Callable[[exp.Anonymous, exp.Expr], exp.Expr]:
    sample, root = name.endswith("SAMP"), "STDDEV" in name

    def build(node: exp.Anonymous, xs: exp.Expr) -> exp.Expr:
        def finish(s: exp.Expr, n: exp.Expr) -> exp.Expr:
            div = exp.Div(this=_field(s, "q"), expression=_p(
                exp.Sub(this=n.copy(), expression=_n(1)) if sample else n.copy()))
            value = _call("SQRT", div) if root else div
            if sample:  # NULL for fewer than two items
                return _case(value, (exp.LT(this=n, expression=_n(2)), exp.Null()))
            # NULL for none, 0 for one (DuckDB's pop variance answers 0 there)
            return _case(value, (exp.EQ(this=n, expression=_n(0)), exp.Null()),
                         (exp.EQ(this=n.copy(), expression=_n(1)), _n("0D")))
        return _moments(xs, finish)
    return build


def _median(node: exp.Anonymous, xs: exp.Expr) -> exp.Expr:
    # DuckDB's continuous median: the sorted non-NULL items' middle one, or lo + (hi - lo) / 2
    # between the two middle ones (DuckDB's interpolation, in the items' type); NULL for none.
    # The sorted list is bound once (a one-item TRANSFORM). DOUBLE items only (the form's mark):
    # Spark's DECIMAL `+ - *` trim the scale of DECIMAL(38, 18) operands (15 places here)
    if not node.meta.get(DOUBLE):
        return node
    def body(s: exp.Expr) -> exp.Expr:
        n = _call("ARRAY_SIZE", s)
        half = exp.IntDiv(this=n, expression=_n(2))
        lo = _call("GET", s.copy(), exp.Sub(this=half.copy(), expression=_n(1)))
        hi = _call("GET", s.copy(), half.copy())
        mid = exp.Add(this=lo, expression=exp.Mul(
            this=exp.Paren(this=exp.Sub(this=hi, expression=lo.copy())),
            expression=exp.Literal.number("0.5")))
        return _case(mid, (exp.EQ(this=exp.Mod(this=n.copy(), expression=_n(2)), expression=_n(1)),
                           hi.copy()))
    sorted_ = _call("ARRAY_SORT", _present(xs))
    return _call("GET", _call("TRANSFORM", exp.Array(expressions=[sorted_]), _lam(body)), _n(0))


def _position(node: exp.Anonymous, xs: exp.Expr, item: exp.Expr) -> exp.Expr:
    found = _call("ARRAY_POSITION", _call("TRANSFORM", xs, _lam(
        lambda y: exp.NullSafeEQ(this=y, expression=item))), exp.true())
    return exp.Nullif(this=found, expression=_n(0))


def _int(e: exp.Expr) -> int | None:
    if isinstance(e, exp.Literal) and not e.is_string:
        try:
            return int(e.this)
        except ValueError:
            return None
    return None


def _slice(node: exp.Anonymous, xs: exp.Expr, begin: exp.Expr, end: exp.Expr) -> exp.Expr:
    def bound(b: exp.Expr, i: exp.Expr) -> exp.Expr:
        k = _int(b)
        if k is not None and k >= 0:
            return b.copy()
        # from the end when negative (DuckDB's -1 is the last item); 0 and past the start
        # select from the first item on, as 1 does
        size = _call("ARRAY_SIZE", xs.copy())
        return _case(b.copy(), (exp.LT(this=b.copy(), expression=_n(0)),
                                exp.Add(this=exp.Add(this=size, expression=b.copy()),
                                        expression=_n(1))))

    def keep(x: exp.Expr, i: exp.Expr) -> exp.Expr:
        at = exp.Paren(this=exp.Add(this=i, expression=_n(1)))
        return exp.And(this=exp.GTE(this=at, expression=bound(begin, i)),
                       expression=exp.LTE(this=at.copy(), expression=bound(end, i)))

    kept = _call("FILTER", xs, _lam(keep, 2))
    unknown = [b for b in (begin, end) if _int(b) is None]
    if not unknown:
        return kept
    test = _is_null(unknown[0].copy()) if len(unknown) == 1 else exp.Or(
        this=_is_null(unknown[0].copy()), expression=_is_null(unknown[1].copy()))
    return _case(kept, (test, exp.Null()))


def _indexed(name: str) -> Callable[..., exp.Expr]:
    """TRANSFORM, FILTER: a lambda's second parameter, the index, counts from 1 in DuckDB."""
    def build(node: exp.Anonymous, xs: exp.Expr, lam: exp.Expr) -> exp.Expr:
        if not isinstance(lam, exp.Lambda):
            return node
        if len(lam.expressions) == 2:
            index = lam.expressions[1].name

            def shift(n: exp.Expr) -> exp.Expr:
                if isinstance(n, exp.Column) and not n.table and n.name == index:
                    return exp.Paren(this=exp.Add(this=n.copy(), expression=_n(1)))
                return n
            lam = exp.Lambda(this=lam.this.transform(shift),
                             expressions=[e.copy() for e in lam.expressions])
        elif len(lam.expressions) != 1:
            return node
        return _call(name, xs, lam)
    return build


def _sort(node: exp.Anonymous, xs: exp.Expr, *how: exp.Expr) -> exp.Expr:
    words = []
    for h in how:
        if not (isinstance(h, exp.Literal) and h.is_string):
            return node
        words.append(h.this.upper())
    order = words[0] if words else "ASC"
    nulls = words[1] if len(words) > 1 else "NULLS LAST"
    if nulls != "NULLS LAST" or order not in ("ASC", "DESC"):
        return node  # (the forms sort with NULLs last)
    return _call("ARRAY_SORT", xs) if order == "ASC" else _call("SORT_ARRAY", xs, exp.false())


def _concat(node: exp.Anonymous, *lists: exp.Expr) -> exp.Expr:
    # DuckDB reads a NULL list as empty (all NULL: empty); ARRAY() takes the others' type
    return _call("CONCAT", *[exp.Coalesce(this=xs, expressions=[exp.Array(expressions=[])])
                             for xs in lists])


def _range(node: exp.Anonymous, *bounds: exp.Expr) -> exp.Expr:
    if len(bounds) == 1:
        start, stop = _n(0), bounds[0]
    elif len(bounds) == 2:
        start, stop = bounds
    else:
        return node  # (a step: the forms write none)
    return _call("FILTER", _call("SEQUENCE", start, stop), _lam(
        lambda i: exp.LT(this=i, expression=stop.copy())))


_Builder = Callable[..., exp.Expr]
_ONE, _TWO = frozenset({1}), frozenset({2})

#: DuckDB's name -> a builder of Spark's call from (the node, its arguments), and the numbers
#: of arguments it takes.
_BUILDERS: dict[str, tuple[_Builder, frozenset[int]]] = {
    "LEN": (lambda node, xs: _call("ARRAY_SIZE", xs), _ONE),
    "LIST_TRANSFORM": (_indexed("TRANSFORM"), _TWO),
    "LIST_FILTER": (_indexed("FILTER"), _TWO),
    "LIST_SUM": (_sum, _ONE),
    "LIST_AVG": (_avg, _ONE),
    "LIST_PRODUCT": (_product, _ONE),
    "LIST_MIN": (lambda node, xs: _call("ARRAY_MIN", xs), _ONE),
    "LIST_MAX": (lambda node, xs: _call("ARRAY_MAX", xs), _ONE),
    "LIST_MEDIAN": (_median, _ONE),
    "LIST_VAR_SAMP": (_spread("LIST_VAR_SAMP"), _ONE),
    "LIST_VAR_POP": (_spread("LIST_VAR_POP"), _ONE),
    "LIST_STDDEV_SAMP": (_spread("LIST_STDDEV_SAMP"), _ONE),
    "LIST_STDDEV_POP": (_spread("LIST_STDDEV_POP"), _ONE),
    "LIST_COUNT": (lambda node, xs: _call("ARRAY_SIZE", _present(xs)), _ONE),
    "LIST_UNIQUE": (lambda node, xs: _call("ARRAY_SIZE", _call("ARRAY_DISTINCT", _present(xs))),
                    _ONE),
    "LIST_DISTINCT": (lambda node, xs: _call("ARRAY_DISTINCT", _present(xs)), _ONE),
    "LIST_REVERSE": (lambda node, xs: _call("REVERSE", xs), _ONE),
    "LIST_POSITION": (_position, _TWO),
    "LIST_SLICE": (_slice, frozenset({3})),
    "LIST_SORT": (_sort, frozenset({1, 2, 3})),
    "LIST_CONCAT": (_concat, frozenset(range(1, 64))),
    "RANGE": (_range, _ONE | _TWO),
    "FLATTEN": (lambda node, xs: _own(_call("FLATTEN", _present(xs))), _ONE),
}

#: Why a DuckDB function stays refused on Spark (where `rewrite` leaves it): `dialects.lacking`
#: says so in its refusal ("Spark has no ...").
REFUSED = {
    "LIST_SUM": "exact sum of a DECIMAL list (its fold, AGGREGATE, types DECIMAL(38, 18) + "
                "DECIMAL(38, 18) as DECIMAL(38, 17), rounding the 18th digit, and a subquery "
                "cannot sit in a lambda or a lateral join)",
    "LIST_AVG": "average of a DECIMAL list over its exact sum (its fold, AGGREGATE, cannot "
                "keep a DECIMAL sum's type)",
    "LIST_MEDIAN": "exact median of DECIMAL items (Spark's DECIMAL(38, 18) arithmetic keeps 15 "
                   "places)",
    "LIST_REDUCE": "fold typed by its lambda (AGGREGATE needs the lambda typed as the start "
                   "value; DuckDB's LIST_REDUCE takes the lambda's type)",
}

#: The names `rewrite` takes.
NAMES = frozenset(_BUILDERS)


def rewrite(node: exp.Anonymous) -> exp.Expr:
    """Spark's form of DuckDB's list function ``node``, or ``node`` itself where there is
    none that answers as DuckDB does (left for `dialects.lacking` to refuse)."""
    entry = _BUILDERS.get(node.name.upper())
    if entry is None or len(node.expressions) not in entry[1]:
        return node  # (an arity the forms do not write: left as it is, refused)
    return entry[0](node, *node.expressions)
