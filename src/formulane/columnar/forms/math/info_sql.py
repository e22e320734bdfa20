"""SQL forms of the information tests over a compiled column (ISBLANK, ISERROR, ISERR, ISNA,
ISNUMBER, ISTEXT, ISNONTEXT, ISLOGICAL, ISDATE, TYPE, ERROR.TYPE: the table's ``"columns"``
style, ``sql_<name>``).

Contract: as their polars twins in `math.polars`: each receives the argument's compiled column
(value, error code, static type) and decides a type test statically where the type settles it,
else per row; Any is refused. Split from `math.sql` (the numeric forms), whose builders they
use.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ....interpreter import ir
from ....values import ErrorValue
from ...call import FormCall
from ...sql.let import bound, let, size
from ..operators.sql_arith import all_of as _and
from ..operators.sql_arith import not_ as _not
from ..operators.sql_arith import num as _n
from ..operators.sql_arith import settled
from ..operators.sql_arith import when as _case
from .round_sql import _is_null


def _sql_clean(col: Any) -> Any:
    return exp.true() if col.error is None else _is_null(col.error.copy())


def _sql_kind_test(name: str, kinds: tuple[str, ...], col: Any) -> Any:
    from .polars import _static_kind

    if _static_kind(name, col, "sql") not in kinds:
        return exp.false()
    return _and(_not(_is_null(col.value.copy())), _sql_clean(col))


def _sql_code_is(col: Any, code: str, equal: bool) -> Any:
    test = (exp.EQ if equal else exp.NEQ)(this=exp.paren(col.error.copy()),
                                         expression=exp.Literal.string(code))
    return exp.Coalesce(this=test, expressions=[exp.false()])


@settled
def sql_isblank(call: FormCall, col: Any) -> Any:
    # the argument's own error, without a float result's pending non-finite test (the walk's
    # column, `FormCall.column`): that test fires only where the value is not NULL
    own = call.column(0) or col
    return _and(_is_null(col.value.copy()), _sql_clean(own))


@settled
def sql_iserror(call: FormCall, col: Any) -> Any:
    return exp.false() if col.error is None else _not(_is_null(col.error.copy()))


@settled
def sql_iserr(call: FormCall, col: Any) -> Any:
    return exp.false() if col.error is None else _sql_code_is(col, "#N/A", False)


@settled
def sql_isna(call: FormCall, col: Any) -> Any:
    return exp.false() if col.error is None else _sql_code_is(col, "#N/A", True)


@settled
def sql_isnumber(call: FormCall, col: Any) -> Any:
    return _sql_kind_test("ISNUMBER", ("Number",), col)


@settled
def sql_istext(call: FormCall, col: Any) -> Any:
    return _sql_kind_test("ISTEXT", ("Text",), col)


@settled
def sql_isnontext(call: FormCall, col: Any) -> Any:
    return _not(_sql_kind_test("ISNONTEXT", ("Text",), col))


@settled
def sql_islogical(call: FormCall, col: Any) -> Any:
    return _sql_kind_test("ISLOGICAL", ("Boolean",), col)


@settled
def sql_isdate(call: FormCall, col: Any) -> Any:
    return _sql_kind_test("ISDATE", ("Date", "DateTime"), col)


@settled
def sql_type(call: FormCall, col: Any) -> Any:
    """As `math.polars.polars_type`."""
    from .polars import _TYPE_NUMBERS, _static_kind

    kind = _static_kind("TYPE", col, "sql")
    number = _TYPE_NUMBERS.get(kind, 1)
    pairs: list[tuple[Any, Any]] = []
    if col.error is not None:
        pairs.append((_not(_is_null(col.error.copy())), _n(16)))
    if kind not in ("Never", "Blank") and number != 1:
        pairs.append((_is_null(col.value.copy()), _n(1)))
    return _case(pairs, _n(number)) if pairs else _n(number)


@settled
def sql_error_type(call: FormCall, col: Any) -> Any:
    """As `math.polars.polars_error_type`: the error's number, #N/A on a clean row."""
    from ....values import ERROR_TYPE_NUMBER
    from ...sql import kit as backend

    if col.error is None:
        return backend.SqlColumn(exp.Null(), exp.Literal.string("#N/A"), strict=True)
    a = call.args[0]
    if type(a) is ir.Const and type(a.value) is ErrorValue:
        # a constant error (a folded 1/0, NA()): its number, known when compiling
        return backend.SqlColumn(_n(ERROR_TYPE_NUMBER.get(a.value.code, 99)), None,
                                 strict=True)
    known = _known_codes(col.error)
    if known is not None:
        # each of the argument's own tests yields its number: no table of codes per row
        numbers = exp.Case(ifs=[exp.If(this=c.copy(), true=_n(ERROR_TYPE_NUMBER.get(k, 99)))
                                for c, k in known])
        clean = exp.Case(ifs=[exp.If(this=c.copy(), true=exp.Null()) for c, _ in known],
                         default=exp.Literal.string("#N/A"))
        return backend.SqlColumn(numbers, clean, strict=True)
    # the code as the operand of a simple CASE; the other codes are 99, matched by the code
    # itself (``WHEN code THEN 99``: equal to itself unless NULL), so a clean row's value is
    # NULL beside its #N/A and the result needs no wrapper (``null_on_error``)
    code = let(col.error)
    value = exp.Case(this=code, ifs=[
        *[exp.If(this=exp.Literal.string(c), true=_n(number))
          for c, number in ERROR_TYPE_NUMBER.items() if number != 99],
        exp.If(this=code.copy(), true=_n(99))])
    error = _case([(_is_null(code.copy()), exp.Literal.string("#N/A"))])
    return backend.SqlColumn(value, error, strict=True)


#: At most this many nodes of an error column's tests are written twice (`_known_codes`).
_SMALL_TESTS = 24


def _known_codes(error: exp.Expr) -> list[tuple[exp.Expr, str]] | None:
    """The (condition, code) pairs of an error column that is one searched CASE of constant
    codes and no ELSE (``CASE WHEN "y" = 0 THEN '#DIV/0!' END``: what a form's error list
    compiles to), when its tests are small; else None. A peephole of the built error, as
    `operators.sql_arith.literal` is of literals: ERROR.TYPE then writes the tests twice
    (value, error) instead of binding the code and matching it against Excel's table."""
    e = bound(error)
    if not isinstance(e, exp.Case) or e.this is not None or e.args.get("default") is not None:
        return None
    pairs: list[tuple[exp.Expr, str]] = []
    for branch in e.args["ifs"]:
        code = branch.args.get("true")
        if not (isinstance(code, exp.Literal) and code.is_string):
            return None
        pairs.append((branch.this, code.this))
    if not pairs or size(e, _SMALL_TESTS + 1) > _SMALL_TESTS:
        return None
    return pairs
