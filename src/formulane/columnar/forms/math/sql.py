"""SQL forms of the math, information and finance families (``sql_<name>``); the information
tests over a compiled column (ISBLANK..., TYPE, ERROR.TYPE) are in `info_sql`; the decimal
reading and the rounding algorithms the grid forms choose among are `round_sql`'s.

Contract: as the package docstring says: decimal-grid functions read operands through
their shortest decimal (`round_sql._sql_exact`) and compute exactly, falling back to the
engine's arithmetic where that does not round-trip; float algorithms run in DOUBLE and every
non-finite result is #NUM!; divisors are wrapped in NULLIF. The builders are the operators'
(`operators.sql_arith`): a test of literals is decided when compiling, and `settled` drops
the error tests so decided from a form's result.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable

from sqlglot import exp

from ....interpreter import ir
from ....values import ErrorValue
from ...call import MISSING, FormCall
from ...sql.kit import SqlColumn, dtype, not_null
from ...sql.let import let
from ..operators.sql_arith import (DECIMAL_FIT, IN_LAMBDA, add, all_of, any_of, cast_to,
                                   decimal_cast, div, double, double_literal, eq, ge, gt, le,
                                   lt, mod, mul, ne, not_, not_finite, nullif_zero, num, only,
                                   p, settled, sub, when)
from ..operators.sql_join import as_decimal_18
from .grid_sql import quotient_grid
from .round_sql import (_HALF_UNIT_18, _abs, _ceil, _floor, _is_null, _near_grid, _neg,
                        _sql_exact, _sql_round_float, _sql_round_places, _sql_round_unknown,
                        _sql_sign_apply)
from ._base import _EXACT_LIMIT, _FACTORIALS, _PI_DECIMAL, _TRIG_LIMIT


# The builders shared with the operators' SQL (`operators.sql_arith`), by the names the math
# forms (and `elementwise_sql`) read them: comparisons of literals are decided when compiling,
# AND/OR/CASE settle the decided conditions.
_n = num
_p = p
_add, _sub, _mul, _div, _mod = add, sub, mul, div, mod
_eq, _ne, _lt, _le, _gt, _ge = eq, ne, lt, le, gt, ge
_and, _or, _not, _case = all_of, any_of, not_, when
_double, _nullif_zero, _only = double, nullif_zero, only


def _known(call: FormCall, i: int) -> Decimal | None:
    """Argument ``i`` as a number when it is a constant (`FormCall.const`, the one reader of
    constants; never read back out of the built SQL), else None."""
    value = call.const(i)
    if value is MISSING or isinstance(value, bool) \
            or not isinstance(value, (int, float, Decimal)):
        return None
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _no_value(call: FormCall, i: int) -> bool:
    """Argument ``i`` has no value on any row: typed Never, or a constant error value (its
    code is the result's error)."""
    a = call.args[i]
    return a.type.kind == "Never" or (type(a) is ir.Const and type(a.value) is ErrorValue)


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _not_finite(value: exp.Expr) -> exp.Expr:
    """NaN, infinities and |x| >= 1e308: the numbers the scalar engine cannot hold."""
    return not_finite(value)


@settled
def sql_abs(call: FormCall, x: exp.Expr) -> exp.Expr:
    return exp.Abs(this=x)


@settled
def sql_sign(call: FormCall, x: exp.Expr) -> exp.Expr:
    return exp.Sign(this=x)


@settled
def sql_clamp(call: FormCall, x: exp.Expr, low: exp.Expr, high: exp.Expr) -> Any:
    value = _case([(_lt(x, low), low), (_gt(x, high), high)], x)
    return value, [(_gt(low, high), "#NUM!")]


# ------------------------------------------------------------------------------ rounding


def _sql_round(mode: str) -> Callable[..., Any]:
    @settled
    def form(call: FormCall, x: exp.Expr, digits: exp.Expr) -> Any:
        if _no_value(call, 0) or _no_value(call, 1):
            # an argument with no value on any row (a constant error: its code is the
            # result's error): no value, and no algorithm written for it
            return exp.Cast(this=exp.Null(), to=dtype("DOUBLE"))
        c = _known(call, 1)
        grid = quotient_grid(call, 0, Decimal(1).scaleb(-int(c))) \
            if c is not None and -19 <= c < 18 else None
        if c is not None and grid is not None:
            # a quotient of decimals: placed on the grid exactly (`grid_sql.quotient_grid`),
            # else (past 1e15 steps) the float algorithm of its DOUBLE
            places = int(c)  # truncated toward zero, as below
            more = {"down": None, "up": grid.off(), "half_up": grid.half()}[mode]
            value = let(_case([(grid.ok, grid.signed(grid.steps(more)))],
                              _sql_round_float(x, places, None, mode)))
            return value, [(_not_finite(x if places >= 0 else value), "#NUM!")]
        if c is not None and call.exact(0) and 0 <= c < 18:
            # an exact number (a DECIMAL or an integer, `FormCall.exact`) rounded to places:
            # the engine's own decimal ROUND, exact, and no error (a DECIMAL is finite)
            return _sql_round_places(mode, x, int(c))
        if c is not None and 0 <= c < 18 and not call.double(0) and _known(call, 0) is None:
            # a number that may be a DECIMAL or a DOUBLE: its text reading, exact for both
            return _sql_round_unknown(mode, x, int(c)), [(_not_finite(x), "#NUM!")]
        near, scaled = _near_grid(mode, x, int(c)) if c is not None and 0 <= c < 18 \
            else (None, None)
        xd, ok = _sql_exact(x, _known(call, 0), call.exact(0), near)
        ad = _abs(xd)
        nn: exp.Expr | None = None
        n: int | None = None
        if c is not None:
            n = max(-308, min(308, int(c)))
            if n >= 18:
                return x
            step: exp.Expr = _n(Decimal(10) ** -n)
            decimal_ok = ok if n >= -19 else exp.false()
            if n < -19:
                exact = _n(0)  # never chosen: no DECIMAL(38, 18) reaches the step
            elif mode == "half_up":
                exact = exp.Round(this=xd, decimals=_n(n))
            else:
                exact = None
        else:
            nn = exp.Trunc(this=exp.Greatest(this=exp.Least(this=_double(digits), expressions=[
                _n(308)]), expressions=[_n(-308)]))
            step = exp.TryCast(this=exp.cast(exp.Pow(this=_n(10.0), expression=_neg(nn)),
                                             dtype("VARCHAR")),
                               to=dtype("DECIMAL(38, 18)"), safe=True)
            in_range = _and(_ge(nn, _n(-19)), _le(nn, _n(17)))
            step = _case([(in_range, step)])
            decimal_ok = _and(ok, in_range)
            exact = None
        if exact is None:
            r = _mod(ad, step)
            base = _sub(ad, r)
            need = {"down": exp.false(), "up": _ne(r, _n(0)),
                    "half_up": _ge(_mul(r, _n(2)), step)}[mode]
            exact = _sql_sign_apply(xd, _add(base, _case([(need, step)], _n(0))))
        fallback = _sql_round_float(x, n, nn, mode, scaled)
        if nn is not None:
            fallback = _case([(_ge(nn, _n(18)), x)], fallback)
        value = let(_case([(decimal_ok, exact)], fallback))
        if n is not None and n >= 0:
            # rounding to places leaves a finite x finite (|x| >= 2**48 is x itself): only
            # a non-finite or too large x gives #NUM!
            return value, [(_not_finite(x), "#NUM!")]
        return value, [(_not_finite(value), "#NUM!")]
    return form


sql_round = _sql_round("half_up")
sql_roundup = _sql_round("up")
sql_rounddown = _sql_round("down")


@settled
def sql_int(call: FormCall, x: exp.Expr) -> exp.Expr:
    grid = quotient_grid(call, 0, Decimal(1))
    if grid is not None:  # a quotient of decimals, exactly (`grid_sql.quotient_grid`)
        return _case([(grid.ok, grid.floor())], _floor(x))
    return _floor(x, not call.exact(0))


def _sql_multiples(call: FormCall, x: exp.Expr, step: exp.Expr
                   ) -> tuple[exp.Expr, exp.Expr, exp.Expr]:
    """(floor multiple, ceiling multiple, nearest multiple with ties away from zero) of x
    (argument 1) by the positive step (the magnitude of argument 2): exact through DECIMAL
    where both round-trip, else in the engine; a quotient of decimals by a constant step
    placed on its grid (`grid_sql.quotient_grid`)."""
    k = _known(call, 1)
    q = _div(_double(x), _nullif_zero(_double(step)))
    f_low = _mul(_floor(q), step)
    f_high = _mul(_ceil(q), step)
    f_near = _mul(_case([(_ge(x, _n(0)), _floor(_add(q, _n(0.5))))],
                        _ceil(_sub(q, _n(0.5)))), step)
    grid = quotient_grid(call, 0, abs(k)) if k else None
    if grid is not None:
        # a quotient of decimals, exactly (`grid_sql.quotient_grid`); never its text reading
        return (_case([(grid.ok, grid.floor())], f_low),
                _case([(grid.ok, grid.ceiling())], f_high),
                _case([(grid.ok, grid.signed(grid.steps(grid.half())))], f_near))
    xd, ok_x = _sql_exact(x, _known(call, 0), call.exact(0))
    sd, ok_s = _sql_exact(step, None if k is None else abs(k), call.exact(1))
    ok = _and(ok_x, ok_s, _ne(step, _n(0)))
    sd_safe = _nullif_zero(sd)
    r0 = _mod(xd, sd_safe)  # truncated: the sign of x
    r = _case([(_lt(r0, _n(0)), _add(r0, sd_safe))], r0)
    low = _sub(xd, r)
    high = _case([(_eq(r, _n(0)), xd)], _add(low, sd_safe))
    twice = _mul(r, _n(2))
    near = _case([(_gt(twice, sd_safe), high), (_lt(twice, sd_safe), low),
                  (_gt(xd, _n(0)), high)], low)
    return (_case([(ok, low)], f_low), _case([(ok, high)], f_high),
            _case([(ok, near)], f_near))


@settled
def sql_mround(call: FormCall, x: exp.Expr, multiple: exp.Expr) -> Any:
    _, _, near = _sql_multiples(call, x, _abs(multiple))
    value = _case([(_eq(multiple, _n(0)), _n(0))], near)
    wrong = _or(_and(_gt(x, _n(0)), _lt(multiple, _n(0))),
                _and(_lt(x, _n(0)), _gt(multiple, _n(0))))
    return value, [(_and(_ne(multiple, _n(0)), wrong), "#NUM!"), (_not_finite(value), "#NUM!")]


@settled
def sql_ceiling(call: FormCall, x: exp.Expr, significance: exp.Expr) -> Any:
    low, high, _ = _sql_multiples(call, x, _abs(significance))
    value = _case([(_eq(significance, _n(0)), _n(0)), (_gt(significance, _n(0)), high)], low)
    wrong = _and(_gt(x, _n(0)), _lt(significance, _n(0)))
    return value, [(wrong, "#NUM!"), (_not_finite(value), "#NUM!")]


@settled
def sql_floor(call: FormCall, x: exp.Expr, significance: exp.Expr) -> Any:
    low, high, _ = _sql_multiples(call, x, _abs(significance))
    value = _case([(_eq(significance, _n(0)), _n(0)), (_gt(significance, _n(0)), low)], high)
    wrong = _and(_gt(x, _n(0)), _lt(significance, _n(0)))
    zero_step = _and(_eq(significance, _n(0)), _ne(x, _n(0)))
    return value, [(wrong, "#NUM!"), (zero_step, "#DIV/0!"), (_not_finite(value), "#NUM!")]


def _sql_math_rounding(toward: str) -> Callable[..., Any]:
    @settled
    def form(call: FormCall, x: exp.Expr, significance: exp.Expr, mode: exp.Expr) -> Any:
        low, high, _ = _sql_multiples(call, x, _abs(significance))
        flip = _and(_lt(x, _n(0)), _ne(mode, _n(0)))
        chosen = _case([(flip, low)], high) if toward == "ceil" else _case([(flip, high)], low)
        value = _case([(_eq(significance, _n(0)), _n(0))], chosen)
        return value, [(_not_finite(value), "#NUM!")]
    return form


sql_ceiling_math = _sql_math_rounding("ceil")
sql_floor_math = _sql_math_rounding("floor")


def _sql_even_odd(odd: bool) -> Callable[..., Any]:
    @settled
    def form(call: FormCall, x: exp.Expr) -> Any:
        n = _ceil(_abs(x), not call.exact(0))
        grid = quotient_grid(call, 0, Decimal(1))
        if grid is not None:  # a quotient of decimals, exactly (`grid_sql.quotient_grid`)
            n = let(_case([(grid.ok, grid.steps(grid.off()))], n))
        parity = _mod(n, _n(2))
        magnitude = _sub(_add(n, _n(1)), parity) if odd else _add(n, parity)
        value = _sql_sign_apply(x, magnitude)
        return value, [(_not_finite(value), "#NUM!")]
    return form


sql_even = _sql_even_odd(False)
sql_odd = _sql_even_odd(True)


# ---------------------------------------------------------------------------- remainders


def _sql_floor_mod(a: exp.Expr, b: exp.Expr, k: Decimal | None = None) -> exp.Expr:
    """a - b * floor(a / b): the remainder with the sign of the divisor (b never zero); ``k``:
    the divisor's value when known, whose sign decides the test when compiling (a remainder
    below zero moves up by b > 0, one above zero down by b < 0). Not ``(a % b + b) % b``,
    which writes ``a`` once but adds on every row: Spark types a sum of two DECIMAL(38, 18)
    as DECIMAL(38, 17), so a remainder's 18th place would be lost where no sign moves it."""
    r = let(_mod(a, b))  # read four times (DECIMAL or DOUBLE %, total: b is never zero)
    if k is not None and k != 0:
        return _case([((_gt if k < 0 else _lt)(r, _n(0)), _add(r, b))], r)
    return _case([(_and(_ne(r, _n(0)), _ne(_lt(r, _n(0)), _lt(b, _n(0)))), _add(r, b))], r)


def _unreadable(call: FormCall) -> Decimal | None:
    """A known argument no DECIMAL(38, 18) holds (|k| >= 1e20): its exact reading
    (`_decimal_reading`) is NULL on every row, so the exact algorithm is never chosen and is
    not written. Returns the divisor's known value (None when not known)."""
    kd = _known(call, 1)
    if any(k is not None and abs(k) >= _UNREADABLE for k in (_known(call, 0), kd)):
        return kd if kd is not None else Decimal(0)  # Decimal(0): known x, unknown divisor
    return None


_UNREADABLE = Decimal("1e20")


def _decimal_reading(call: FormCall, i: int, x: exp.Expr) -> exp.Expr:
    """A DECIMAL argument (`_decimal_or_unknown`) as DECIMAL(38, 18): NULL where it does not
    fit (|x| >= 1e20 of a wider DECIMAL: the CAST reads NULL there, since PostgreSQL has no
    TRY_CAST and Spark's ANSI CAST fails the query), a constant written from its value; one
    that may be a DOUBLE through its text (`sql_arith.decimal_cast`: its shortest decimal),
    NULL where that is not the number."""
    k = _known(call, i)
    if k is not None and abs(k) < Decimal(_EXACT_LIMIT) and -int(k.as_tuple().exponent) <= 18:
        return exp.Cast(this=_n(k), to=dtype("DECIMAL(38, 18)"))
    if k is not None and k != 0 and abs(k) < _HALF_UNIT_18:
        # a constant that reads as 0 at 18 places (1E-25) has no reading (as `_sql_exact`):
        # NULL, so the caller's fallback answers, never a DECIMAL % 0, which DuckDB raises
        return exp.Cast(this=exp.Null(), to=dtype("DECIMAL(38, 18)"))
    # the test in DOUBLE: a DECIMAL literal 1e20 beside a DECIMAL(38, 18) operand is cast to
    # its type by DuckDB, and fails; 1e20 is exact in DOUBLE and rounding keeps x >= 1e20 there
    fits = _lt(_abs(_double(x)), double_literal(float(_UNREADABLE)))
    guarded = _case([(fits, x.copy())])
    col = call.column(i)
    if col is not None and not call.exact(i):
        # NULL too where the text does not read the number back (a DOUBLE of more than 18
        # places, 1e-300): the caller's fallback computes that row in the engine's type
        reading = let(decimal_cast(col, "DECIMAL(38, 18)", guarded))
        return _case([(_eq(_double(reading), _double(x)), reading)])
    return exp.Cast(this=guarded, to=dtype("DECIMAL(38, 18)"))


def _decimal_or_unknown(call: FormCall, i: int) -> bool:
    """Argument ``i`` is exact (`FormCall.exact`) or, in decimal mode, a number whose engine
    type is not known (a DECIMAL or a DOUBLE, read through its text by `_decimal_reading`):
    not surely a DOUBLE."""
    return call.exact(i) or (call.numbers == "decimal" and call.kind(i) == "Number"
                             and not call.double(i))


def _both_exact(call: FormCall) -> bool:
    return _decimal_or_unknown(call, 0) and _decimal_or_unknown(call, 1)


@settled
def sql_mod(call: FormCall, x: exp.Expr, divisor: exp.Expr) -> Any:
    kd = _known(call, 1)
    grid = quotient_grid(call, 0, abs(kd)) if kd else None
    if kd and grid is not None:
        # a quotient of decimals by a constant (`grid_sql.quotient_grid`): 0 exactly where it
        # is on the divisor's grid, else the rest in DOUBLE (Spark divides DECIMALs to 6
        # places), with d's sign: q - d * FLOOR(q / d)
        d = abs(kd)
        r = _mul(_div(_double(grid.rest), _double(grid.unit)), _n(d))
        same = _not(grid.negative) if kd > 0 else grid.negative
        rest = _case([(_eq(grid.rest, _n(0)), _n(0)), (same, r)], _sub(_n(d), r))
        exact = rest if kd > 0 else _neg(rest)
        return _case([(grid.ok, exact)], _sql_floor_mod(x, divisor, kd))
    if _both_exact(call):
        # both exact (DECIMAL or integer): the remainder of their DECIMAL(38, 18) readings
        # (one scale: DuckDB takes % of two scales in DOUBLE), else, beyond 1e20, of the
        # operands themselves (a zero divisor is NULL in both: the error says #DIV/0!)
        fallback = _sql_floor_mod(x, _nullif_zero(divisor, kd), kd)
        if _unreadable(call) is not None:
            return fallback, [(_eq(divisor, _n(0)), "#DIV/0!")]
        exact = _sql_floor_mod(_decimal_reading(call, 0, x),
                               let(_nullif_zero(_decimal_reading(call, 1, divisor), kd)), kd)
        # the fallback at DECIMAL(38, 18) too: DuckDB types a COALESCE of DECIMAL(38, 18) and
        # a remainder of two other scales (a DOUBLE) as DOUBLE (MOD(-7, 1e19) gave 1e19);
        # not in a lambda body, which may not err (the join casts' documented gap there)
        if IN_LAMBDA.get():
            return exp.Coalesce(this=exact, expressions=[fallback]), \
                [(_eq(divisor, _n(0)), "#DIV/0!")]
        if kd is not None and abs(kd) < DECIMAL_FIT:
            # |remainder| < |divisor| < 1e20: DECIMAL(38, 18) always holds it, no range test
            held = cast_to(fallback, "DECIMAL(38, 18)")
            return exp.Coalesce(this=exact, expressions=[held]), \
                [(_eq(divisor, _n(0)), "#DIV/0!")]
        wide = as_decimal_18(SqlColumn(fallback))
        value = exp.Coalesce(this=exact, expressions=[wide.value])
        return value, [(_eq(divisor, _n(0)), "#DIV/0!"),
                       *([] if wide.error is None else [(not_null(wide.error), "#NUM!")])]
    xd, ok_x = _sql_exact(x, _known(call, 0), call.exact(0))
    dd, ok_d = _sql_exact(divisor, kd, call.exact(1))
    ok = _and(ok_x, ok_d, _ne(divisor, _n(0)))
    exact = _sql_floor_mod(xd, _nullif_zero(dd, kd), kd)
    fallback = _sql_floor_mod(x, _nullif_zero(divisor, kd), kd)
    return _case([(ok, exact)], fallback), [(_eq(divisor, _n(0)), "#DIV/0!")]


@settled
def sql_quotient(call: FormCall, x: exp.Expr, divisor: exp.Expr) -> Any:
    kd = _known(call, 1)
    grid = quotient_grid(call, 0, abs(kd)) if kd else None
    if kd and grid is not None:  # a quotient of decimals by a constant (`quotient_grid`)
        count = grid.signed(grid.k) if kd > 0 else \
            _case([(grid.negative, grid.k)], _neg(grid.k))
        chosen = _case([(grid.ok, count)],
                       exp.Trunc(this=_div(_double(x), double_literal(float(kd)))))
        return chosen, [(_not_finite(chosen), "#NUM!")]
    if _both_exact(call):
        # as MOD; the quotient of exact operands below 1e38 is finite (no #NUM! test)
        kd = _known(call, 1)
        d = _double(divisor) if kd is None else double_literal(float(kd))
        fallback = exp.Trunc(this=_div(_double(x), _nullif_zero(d, kd)))
        if _unreadable(call) is not None:
            return fallback, [(_eq(divisor, _n(0)), "#DIV/0!")]
        xd = let(_decimal_reading(call, 0, x))
        dd = let(_nullif_zero(_decimal_reading(call, 1, divisor)))
        exact = exp.Round(this=_div(_sub(xd, _mod(xd, dd)), dd))
        value = exp.Coalesce(this=exact, expressions=[fallback])
        return value, [(_eq(divisor, _n(0)), "#DIV/0!")]
    xd, ok_x = _sql_exact(x, _known(call, 0), call.exact(0))
    dd, ok_d = _sql_exact(divisor, _known(call, 1), call.exact(1))
    ok = _and(ok_x, ok_d, _ne(divisor, _n(0)))
    dd_safe = _nullif_zero(dd)
    # the remainder is truncated in SQL; the quotient of the two decimals is a whole number,
    # which an engine dividing DECIMALs in DOUBLE (DuckDB) may miss by an ulp: rounded
    exact = exp.Round(this=_div(_sub(xd, _mod(xd, dd_safe)), dd_safe))
    fallback = exp.Trunc(this=_div(_double(x), _nullif_zero(_double(divisor))))
    chosen = _case([(ok, exact)], fallback)
    return chosen, [(_eq(divisor, _n(0)), "#DIV/0!"), (_not_finite(chosen), "#NUM!")]


# --------------------------------------------------------------- powers, roots, logarithms


@settled
def sql_power(call: FormCall, x: exp.Expr, power: exp.Expr) -> Any:
    from ..operators import sql as _sql_forms

    # POWER is not declared sql_double (``^`` is): its result is tested here, unless both
    # arguments are constants whose power DOUBLE holds (POWER(2, 1023)): that power, written
    # as a literal (`power_literal`, which computes it as the engine would)
    folded = _sql_forms.power_literal(_known(call, 0), _known(call, 1))
    if folded is not None:
        return folded
    return _guarded(*_sql_forms.power_parts(x, power))


def _guarded(value: exp.Expr, errors: list[tuple[exp.Expr, str]] | None = None) -> Any:
    """The value with its errors and, last, #NUM! where it is not finite. (The value is
    written twice, not bound: its argument is bound by the compiler already, so the text
    grows by a constant factor, and a lateral join costs more than the copy.)"""
    return value, [*(errors or []), (_not_finite(value), "#NUM!")]


@settled
def sql_sqrt(call: FormCall, x: exp.Expr) -> Any:
    # the root of a finite number (inputs are finite, docs/columnar.md) is finite: no test
    return exp.Sqrt(this=_only(_ge(x, _n(0)), x)), [(_lt(x, _n(0)), "#NUM!")]


@settled
def sql_exp(call: FormCall, x: exp.Expr) -> Any:
    value = exp.Exp(this=_only(_le(x, _n(709.5)), x))
    return value, [(_or(_gt(x, _n(709.5)), _not_finite(value)), "#NUM!")]


@settled
def sql_ln(call: FormCall, x: exp.Expr) -> Any:
    return _guarded(exp.Ln(this=_only(_gt(x, _n(0)), x)), [(_le(x, _n(0)), "#NUM!")])


@settled
def sql_log10(call: FormCall, x: exp.Expr) -> Any:
    return _guarded(_fn("LOG10", _only(_gt(x, _n(0)), x)), [(_le(x, _n(0)), "#NUM!")])


@settled
def sql_log(call: FormCall, x: exp.Expr, base: exp.Expr) -> Any:
    positive = _only(_gt(x, _n(0)), x)
    errors = [(_or(_le(x, _n(0)), _le(base, _n(0))), "#NUM!"), (_eq(base, _n(1)), "#DIV/0!")]
    if _known(call, 1) == 10:
        return _guarded(_fn("LOG10", positive), errors)
    good_base = _only(_and(_gt(base, _n(0)), _ne(base, _n(1))), base)
    value = _case([(_eq(base, _n(10)), _fn("LOG10", positive))],
                  _div(exp.Ln(this=positive), exp.Ln(this=good_base)))
    return _guarded(value, errors)


@settled
def sql_pi(call: FormCall) -> exp.Expr:
    # 18 places, the SQL decimal policy's scale: a 33-place literal makes engines type its
    # comparisons DECIMAL(38, 33), which cannot hold 134217728 (DuckDB aborts the query)
    return _n(_PI_DECIMAL)


# ---------------------------------------------------------------------------- trigonometry


def _sql_trig(cls: type[exp.Func]) -> Callable[..., Any]:
    @settled
    def form(call: FormCall, x: exp.Expr) -> Any:
        big = _ge(_abs(x), _n(_TRIG_LIMIT))
        # |x| < 2**27 (NaN and infinities sort above it): the result is finite, untested
        return cls(this=_only(_not(big), x)), [(big, "#NUM!")]
    return form


sql_sin = _sql_trig(exp.Sin)
sql_cos = _sql_trig(exp.Cos)
sql_tan = _sql_trig(exp.Tan)


def _sql_inverse(cls: type[exp.Func]) -> Callable[..., Any]:
    @settled
    def form(call: FormCall, x: exp.Expr) -> Any:
        outside = _or(_lt(x, _n(-1)), _gt(x, _n(1)))
        return _guarded(cls(this=_only(_not(outside), x)), [(outside, "#NUM!")])
    return form


sql_asin = _sql_inverse(exp.Asin)
sql_acos = _sql_inverse(exp.Acos)


@settled
def sql_atan(call: FormCall, x: exp.Expr) -> exp.Expr:
    return exp.Atan(this=_double(x))


@settled
def sql_atan2(call: FormCall, x_num: exp.Expr, y_num: exp.Expr) -> Any:
    origin = _and(_eq(x_num, _n(0)), _eq(y_num, _n(0)))
    return exp.Atan2(this=_double(y_num), expression=_double(x_num)), [(origin, "#DIV/0!")]


@settled
def sql_degrees(call: FormCall, angle: exp.Expr) -> Any:
    return _guarded(exp.Degrees(this=_double(angle)), [])


@settled
def sql_radians(call: FormCall, angle: exp.Expr) -> exp.Expr:
    return exp.Radians(this=_double(angle))


# -------------------------------------------------------------------------- integer functions


@settled
def sql_fact(call: FormCall, x: exp.Expr) -> Any:
    k = _known(call, 0)
    if k is not None and 0 <= k < 171:  # a literal: its entry, not the table
        return _n(_FACTORIALS[int(k)])
    bad = _or(_lt(x, _n(0)), _ge(x, _n(171)))
    # n! = (10q)! * (10q + 1) * ... * n with q = n // 10: a table of the 18 anchors (every
    # tenth factorial, correctly rounded) and at most 9 factors, where the 171-entry table
    # was 3,500 characters of SQL. Exact through 22! (every partial product is a double
    # there), then within 10 roundings (relative 1.2e-15) of the scalar engine's n!.
    # (NULL outside 0..170: the lookup is total.)
    q = let(exp.cast(exp.Trunc(this=_div(_only(_not(bad), x), _n(10))),
                     dtype("INT")))
    base = let(_mul(q, _n(10)))
    m = exp.Trunc(this=_only(_not(bad), x))
    rest = let(_sub(m, base))
    table = exp.Array(expressions=[_n(_FACTORIALS[10 * j]) for j in range(18)])
    value: exp.Expr = exp.Bracket(this=table, expressions=[_add(q, _n(1))], offset=1)
    for i in range(1, 10):
        value = _mul(value, _case([(_ge(rest, _n(i)), _add(base, _n(i)))], _n(1)))
    # bound once: float mode's non-finite test of the result would copy it
    return let(value), [(bad, "#NUM!")]


# ------------------------------------------------------------------------------ information


def _sql_trunc_mod2(x: exp.Expr) -> exp.Expr:
    return _mod(exp.Trunc(this=x), _n(2))


@settled
def sql_iseven(call: FormCall, x: exp.Expr) -> exp.Expr:
    return _eq(_sql_trunc_mod2(x), _n(0))


@settled
def sql_isodd(call: FormCall, x: exp.Expr) -> exp.Expr:
    return _ne(_sql_trunc_mod2(x), _n(0))


@settled
def sql_na(call: FormCall) -> Any:
    return exp.Null(), exp.Literal.string("#N/A")


@settled
def sql_boolean_identity(call: FormCall, x: exp.Expr) -> exp.Expr:
    return x


@settled
def sql_boolean_number(call: FormCall, x: exp.Expr) -> exp.Expr:
    return _ne(x, _n(0))


#: ASCII whitespace (Python's ``str.strip`` also strips other Unicode spaces).
_SPACES = " \t\n\r\x0b\x0c"


@settled
def sql_boolean_text(call: FormCall, x: exp.Expr) -> Any:
    word = exp.Lower(this=exp.Trim(this=x, expression=exp.Literal.string(_SPACES)))

    def words(items: tuple[str, ...]) -> exp.Expr:
        return exp.In(this=word, expressions=[exp.Literal.string(w) for w in items])

    value = _case([(words(("true", "yes", "1")), exp.true()),
                   (words(("false", "no", "0")), exp.false())])
    return value, [(_and(_is_null(value), _not(_is_null(x))), "#VALUE!")]


# ---------------------------------------------------------------------------------- finance


def _sql_log1p(r: exp.Expr) -> exp.Expr:
    """ln(1 + r) without cancellation (Goldberg: ln(u) * r / (u - 1) with u = 1 + r)."""
    u = _add(_n(1), r)
    return _case([(_eq(u, _n(1)), r)], _div(_mul(exp.Ln(this=u), r), _sub(u, _n(1))))


def _sql_expm1(z: exp.Expr) -> exp.Expr:
    """e^z - 1 without cancellation (Kahan: (e - 1) * z / ln(e) with e = e^z)."""
    e = exp.Exp(this=z)
    return _case([(_eq(e, _n(1)), z), (_eq(e, _n(0)), _n(-1))],
                 _div(_mul(_sub(e, _n(1)), z), exp.Ln(this=e)))


def _sql_growth(rate: exp.Expr, nper: exp.Expr
                ) -> tuple[exp.Expr, exp.Expr, exp.Expr,
                           list[tuple[exp.Expr, str]]]:
    """As `_pl_growth`, in DOUBLE."""
    base = _add(rate, _n(1))
    negative = _lt(base, _n(0))
    lg = _mul(nper, _sql_log1p(rate))
    power = exp.Pow(this=base, expression=nper)
    g = _case([(negative, power)], exp.Exp(this=lg))
    gm1 = _case([(negative, _sub(power, _n(1)))], _sql_expm1(lg))
    errors = [
        (_and(_eq(base, _n(0)), _eq(nper, _n(0))), "#NUM!"),
        (_and(_eq(base, _n(0)), _lt(nper, _n(0))), "#DIV/0!"),
        (_and(negative, _ne(nper, _floor(nper))), "#NUM!"),
        (_not_finite(g), "#NUM!"),
    ]
    return g, gm1, lg, errors


def _sql_timing(t: exp.Expr) -> exp.Expr:
    return _case([(_ne(t, _n(0)), _n(1.0))], _n(0.0))


@settled
def sql_pmt(call: FormCall, rate: exp.Expr, nper: exp.Expr, pv: exp.Expr,
            fv: exp.Expr, type_: exp.Expr) -> Any:
    r, n, p, f = (_double(a) for a in (rate, nper, pv, fv))
    g, gm1, _, power_errors = _sql_growth(r, n)
    denominator = _mul(_add(_n(1), _mul(r, _sql_timing(type_))), gm1)
    at_zero = _div(_neg(_add(p, f)), _nullif_zero(n))
    general = _div(_neg(_mul(r, _add(_mul(p, g), f))), _nullif_zero(denominator))
    value = _case([(_eq(r, _n(0)), at_zero)], general)
    errors = [(_and(_eq(r, _n(0)), _eq(n, _n(0))), "#DIV/0!")] + power_errors \
        + [(_and(_ne(r, _n(0)), _eq(denominator, _n(0))), "#NUM!")]
    return _guarded(value, errors)


@settled
def sql_pv(call: FormCall, rate: exp.Expr, nper: exp.Expr, pmt: exp.Expr,
           fv: exp.Expr, type_: exp.Expr) -> Any:
    r, n, payment, f = (_double(a) for a in (rate, nper, pmt, fv))
    g, gm1, lg, power_errors = _sql_growth(r, n)
    vanished = _or(_eq(g, _n(0)), _lt(lg, _n(-400 * math.log(10))))
    annuity = _div(_mul(_mul(payment, _add(_n(1), _mul(r, _sql_timing(type_)))), gm1),
                   _nullif_zero(r))
    general = _div(_neg(_add(f, annuity)), _nullif_zero(g))
    value = _case([(_eq(r, _n(0)), _neg(_add(f, _mul(payment, n))))], general)
    return _guarded(value, power_errors + [(vanished, "#DIV/0!")])


@settled
def sql_fv(call: FormCall, rate: exp.Expr, nper: exp.Expr, pmt: exp.Expr,
           pv: exp.Expr, type_: exp.Expr) -> Any:
    r, n, payment, p = (_double(a) for a in (rate, nper, pmt, pv))
    g, gm1, _, power_errors = _sql_growth(r, n)
    annuity = _div(_mul(_mul(payment, _add(_n(1), _mul(r, _sql_timing(type_)))), gm1),
                   _nullif_zero(r))
    value = _case([(_eq(r, _n(0)), _neg(_add(p, _mul(payment, n))))],
                  _neg(_add(_mul(p, g), annuity)))
    return _guarded(value, power_errors)
