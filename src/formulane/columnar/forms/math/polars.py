"""Polars forms of the math, information and finance families (``polars_<name>``).

Contract: as the package docstring says: float mode exact with respect to each float's
shortest repr on the decimal grid, decimal mode exact in Decimal(38, 18) with results of 1e20
or more #NUM! (operands masked first: polars aborts a query on a decimal overflow).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable

from ...call import MISSING, FormCall
from .. import _lazy

pl: Any = _lazy.pl
from ._base import (
    _DECIMAL_FIT, _DECIMAL_MAX, _FACTORIALS, _FLOAT_LIMIT, _GRID_LIMIT, _PI_DECIMAL, _TRIG_LIMIT,
)




def _backend() -> Any:
    return _lazy.vp


def _decimal(call: FormCall) -> bool:
    """The program's numeric mode is decimal (`FormCall.numbers`)."""
    return call.numbers == "decimal"


def _dec() -> Any:
    return pl.Decimal(38, 18)


def _f(e: Any) -> Any:
    return e.cast(pl.Float64)


def _zero(call: FormCall) -> Any:
    return pl.lit(Decimal(0), dtype=_dec()) if _decimal(call) else pl.lit(0.0)


def _lit(decimal: bool, value: float | int) -> Any:
    """A number literal in the program's numeric mode (``decimal``: `_decimal`)."""
    if decimal:
        return pl.lit(Decimal(repr(value)) if isinstance(value, float) else Decimal(value),
                      dtype=_dec())
    return pl.lit(float(value))


def _known(call: FormCall, i: int) -> float | None:
    """Argument ``i`` as a finite float when it is a constant number (`FormCall.const`, the
    one reader of constants), else None: literal digits take the fast, exact constant paths."""
    value = call.const(i)
    if value is MISSING or isinstance(value, bool) \
            or not isinstance(value, (int, float, Decimal)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _number(call: FormCall, mode_float: Any) -> Any:
    """A float64 result in the program's numeric mode: (value, errors)."""
    if not _decimal(call):
        return mode_float, []
    fits = mode_float.abs() < _DECIMAL_FIT
    value = pl.when(fits).then(mode_float).cast(pl.Utf8).cast(_dec(), strict=False)
    return value, [(~fits, "#NUM!")]


def _with(errors: list[tuple[Any, str]], result: tuple[Any, list[tuple[Any, str]]]) -> Any:
    value, more = result
    return value, errors + more


def _masked(d: Any, ok: Any) -> Any:
    return pl.when(ok).then(d)


def _sign_apply(x: Any, magnitude: Any) -> Any:
    return pl.when(x < 0).then(-magnitude).otherwise(magnitude)


# ------------------------------------------------------------------------ sign and size


def polars_abs(call: FormCall, x: Any) -> Any:
    return x.abs()


def polars_sign(call: FormCall, x: Any) -> Any:
    return x.sign().cast(_dec() if _decimal(call) else pl.Float64)


def polars_clamp(call: FormCall, x: Any, low: Any, high: Any) -> Any:
    value = pl.when(x < low).then(low).when(x > high).then(high).otherwise(x)
    return value, [(low > high, "#NUM!")]


# ------------------------------------------------------------------------------ rounding


def _digits(call: FormCall) -> int | None:
    """Constant digits (argument 2) truncated toward zero (clamped: nothing changes past
    +-308), else None."""
    c = _known(call, 1)
    if c is None:
        return None
    return max(-308, min(308, int(c)))


def _round_float(n: int | None, x: Any, digits: Any, mode: str) -> Any:
    a = x.abs()
    scale: Callable[[Any], Any]
    unscale: Callable[[Any], Any]
    if n is not None and n > 0:
        s = 10.0 ** n
        # polars divides by a scalar as a product with its reciprocal (267.5 / 100 gives
        # 2.6750000000000003): a divisor that is a column keeps the division correctly
        # rounded, which the tie and grid tests rely on.
        s_col = a * 0.0 + s
        scale, unscale = (lambda v: v * s), (lambda k: k / s_col)
    elif n is not None:
        m = 10.0 ** -n
        scale, unscale = (lambda v: v / m), (lambda k: k * m)
    else:
        nn = _f(digits).clip(-308, 308).truncate()
        s_e = pl.lit(10.0).pow(nn.clip(lower_bound=0))
        m_e = pl.lit(10.0).pow((-nn).clip(lower_bound=0))
        scale, unscale = (lambda v: v * s_e / m_e), (lambda k: k * m_e / s_e)
    y = scale(a)
    if mode == "half_up":
        k = y.floor()
        r = k + (a >= unscale(k + 0.5)).cast(pl.Float64)
    elif mode == "down":
        k = y.floor()
        k = pl.when(a < unscale(k)).then(k - 1).otherwise(k)
        r = pl.when(a >= unscale(k + 1)).then(k + 1).otherwise(k)
    else:  # up: away from zero
        k = y.ceil()
        k = pl.when((k >= 1) & (a <= unscale(k - 1))).then(k - 1).otherwise(k)
        r = pl.when(a > unscale(k)).then(k + 1).otherwise(k)
    # Past 2^48 grid steps nothing below the grid is left to round (see the package docs).
    return x.sign() * pl.when(y < _GRID_LIMIT).then(unscale(r)).otherwise(a)


def _step_decimal(n: int) -> Any:
    return pl.lit(Decimal(10) ** -n, dtype=_dec())


def _round_decimal(n: int | None, x: Any, digits: Any, mode: str) -> Any:
    zero = pl.lit(Decimal(0), dtype=_dec())
    a = x.abs()
    beyond: Any = None  # rows whose digits are <= -20 (every |x| < 1e20 is below the step)
    if n is not None:
        if n >= 18:
            return x, []
        if n <= -20:
            over = {"down": pl.lit(False), "half_up": _f(a) >= 5e19, "up": a != 0}[mode]
            return zero, [(over, "#NUM!")]
        step = _step_decimal(n)
    else:
        nn = _f(digits).clip(-308, 308).truncate()
        beyond = nn <= -20
        step = pl.lit(10.0).pow(-nn.clip(-19, 18)).cast(pl.Utf8).cast(_dec(), strict=False)
    r = a % step
    base = a - r
    need = {"down": pl.lit(False), "up": r != 0, "half_up": r * 2 >= step}[mode]
    over = need & (base > pl.lit(_DECIMAL_MAX, dtype=_dec()) - step)
    magnitude = base + pl.when(~over).then(pl.when(need).then(step).otherwise(zero))
    errors = [(over, "#NUM!")]
    if beyond is not None:
        big = {"down": pl.lit(False), "half_up": _f(a) >= 5e19, "up": a != 0}[mode]
        magnitude = pl.when(beyond).then(zero).otherwise(magnitude)
        errors = [(beyond & big, "#NUM!"), (~beyond & over, "#NUM!")]
    return _sign_apply(x, magnitude), errors


def _round(mode: str) -> Callable[..., Any]:
    def form(call: FormCall, x: Any, digits: Any) -> Any:
        n = _digits(call)
        if _decimal(call):
            return _round_decimal(n, x, digits, mode)
        return _round_float(n, x, digits, mode)
    return form


polars_round = _round("half_up")
polars_roundup = _round("up")
polars_rounddown = _round("down")


def polars_int(call: FormCall, x: Any) -> Any:
    return x.floor()


#: Float mode: a quotient within this relative distance of an integer (or of a half, for
#: MROUND's ties) is taken as exactly on it: the same 1e-15 the backend's float comparisons
#: use (0.1 + 0.2 = 0.3), and more than the float error of a quotient of two shortest-repr
#: decimals (< 3.4e-16). Past 2^48 the window would span half a step: no snapping there.
_SNAP = 1e-15
_SNAP_LIMIT = float(2**48)


def _decimal_multiples(x: Any, step: Any) -> tuple[Any, Any, Any]:
    """(floor multiple, ceiling multiple, nearest multiple with ties away from zero) of the
    decimal x by the positive decimal step, exactly; a candidate beyond Decimal(38, 18) is null
    (never computed: polars would abort the query)."""
    sd = pl.when(step != 0).then(step)  # a zero step is the caller's case; never divide by it
    r = x % sd  # floor remainder: 0 <= r < step
    top = pl.lit(_DECIMAL_MAX, dtype=_dec())
    low = x - pl.when(x >= r - top).then(r)
    up = sd - r
    high = pl.when(r == 0).then(x).otherwise(x + pl.when(x <= top - up).then(up))
    twice = r * 2
    near = pl.when(twice > sd).then(high).when(twice < sd).then(low) \
        .when(x > 0).then(high).otherwise(low)
    return low, high, near


def _snapped(x: Any, step: Any) -> tuple[Any, Any, Any, Any]:
    """Float mode: (x / step, its nearest integer, whether it is on that integer, the snap
    window)."""
    q = x / (step + x * 0.0)  # a column divisor: polars divides by a scalar inexactly
    n = q.round()
    window = _SNAP * q.abs()
    return q, n, ((q - n).abs() <= window) & (q.abs() < _SNAP_LIMIT), window


def _multiples(call: FormCall, x: Any, step: Any) -> tuple[Any, Any, Any]:
    """(floor multiple, ceiling multiple, nearest multiple with ties away from zero) of x by
    the positive step. Decimal mode: `_decimal_multiples` (`_unfit` reports a candidate that
    does not fit, where it is chosen). Float mode: float quotients snapped to the grid."""
    if _decimal(call):
        return _decimal_multiples(x, step)
    q, n, on_grid, window = _snapped(x, step)
    half = q.floor() + 0.5
    tie = ~on_grid & ((q - half).abs() <= window) & (q.abs() < _SNAP_LIMIT)
    low = pl.when(on_grid).then(n).otherwise(q.floor())
    high = pl.when(on_grid).then(n).otherwise(q.ceil())
    near = pl.when(on_grid).then(n) \
        .when(tie).then(pl.when(q > 0).then(half + 0.5).otherwise(half - 0.5)) \
        .otherwise((q + 0.5).floor())
    return low * step, high * step, near * step


def _unfit(call: FormCall, value: Any, *inputs: Any) -> list[tuple[Any, str]]:
    """Decimal mode: a null result of non-null inputs is a multiple beyond Decimal(38, 18)."""
    if not _decimal(call):
        return []
    present = value.is_null()
    for e in inputs:
        present = present & e.is_not_null()
    return [(present, "#NUM!")]


def polars_mround(call: FormCall, x: Any, multiple: Any) -> Any:
    _, _, near = _multiples(call, x, multiple.abs())
    value = pl.when(multiple == 0).then(_zero(call)).otherwise(near)
    wrong = ((x > 0) & (multiple < 0)) | ((x < 0) & (multiple > 0))
    return value, [((multiple != 0) & wrong, "#NUM!")] + _unfit(call, value, x, multiple)


def polars_ceiling(call: FormCall, x: Any, significance: Any) -> Any:
    low, high, _ = _multiples(call, x, significance.abs())
    value = pl.when(significance == 0).then(_zero(call)) \
        .when(significance > 0).then(high).otherwise(low)
    wrong = (x > 0) & (significance < 0)
    return value, [(wrong, "#NUM!")] + _unfit(call, value, x, significance)


def polars_floor(call: FormCall, x: Any, significance: Any) -> Any:
    low, high, _ = _multiples(call, x, significance.abs())
    value = pl.when(significance == 0).then(_zero(call)) \
        .when(significance > 0).then(low).otherwise(high)
    wrong = (x > 0) & (significance < 0)
    return value, [(wrong, "#NUM!"), ((significance == 0) & (x != 0), "#DIV/0!")] \
        + _unfit(call, value, x, significance)


def _math_rounding(toward: str) -> Callable[..., Any]:
    def form(call: FormCall, x: Any, significance: Any, mode: Any) -> Any:
        low, high, _ = _multiples(call, x, significance.abs())
        flip = (x < 0) & (mode != 0)
        if toward == "ceil":
            chosen = pl.when(flip).then(low).otherwise(high)
        else:
            chosen = pl.when(flip).then(high).otherwise(low)
        value = pl.when(significance == 0).then(_zero(call)).otherwise(chosen)
        return value, _unfit(call, value, x, significance, mode)
    return form


polars_ceiling_math = _math_rounding("ceil")
polars_floor_math = _math_rounding("floor")


def _even_odd(odd: bool) -> Callable[..., Any]:
    def form(call: FormCall, x: Any) -> Any:
        a = x.abs()
        errors: list[tuple[Any, str]] = []
        if _decimal(call):
            # the next even (odd) integer must still fit Decimal(38, 18)
            limit = Decimal("99999999999999999999") - (0 if odd else 1)
            over = a > pl.lit(limit, dtype=_dec())
            a = pl.when(~over).then(a)
            errors = [(over, "#NUM!")]
        n = a.ceil()
        parity = n % 2
        magnitude = n + (1 - parity) if odd else n + parity
        return _sign_apply(x, magnitude), errors
    return form


polars_even = _even_odd(False)
polars_odd = _even_odd(True)


# ---------------------------------------------------------------------------- remainders


def polars_mod(call: FormCall, x: Any, divisor: Any) -> Any:
    errors = [(divisor == 0, "#DIV/0!")]
    if _decimal(call):
        return x % pl.when(divisor != 0).then(divisor), errors  # exact, the divisor's sign
    _, _, on_grid, _ = _snapped(x, divisor)
    # As the scalar engine does, read each float by its shortest decimal text and take the
    # remainder exactly in decimal (a float remainder of 1e15 by 1.9 is off by 0.1); outside
    # what Decimal(38, 18) holds well, the float remainder snapped to the grid.
    exact = (x.abs() < 1e19) & (divisor.abs() < 1e19) & (divisor.abs() >= 1e-9)
    xd = pl.when(exact).then(x).cast(pl.Utf8).cast(_dec(), strict=False)
    dd = pl.when(exact).then(divisor).cast(pl.Utf8).cast(_dec(), strict=False)
    # (only where 18 places hold the float's digits: its decimal reading converts back)
    exact = exact & (xd.cast(pl.Float64) == x) & (dd.cast(pl.Float64) == divisor)
    by_decimal = (xd % pl.when(exact).then(dd)).cast(pl.Float64)
    return pl.when(exact).then(by_decimal).when(on_grid).then(0.0) \
        .otherwise(x % divisor), errors


def polars_quotient(call: FormCall, x: Any, divisor: Any) -> Any:
    errors = [(divisor == 0, "#DIV/0!")]
    if not _decimal(call):
        q, n, on_grid, _ = _snapped(x, divisor)
        return pl.when(on_grid).then(n).otherwise(q.truncate()), errors
    ok = (divisor != 0) & ((_f(x) / _f(divisor)).abs() < _DECIMAL_FIT)
    errors.append(((divisor != 0) & ~ok, "#NUM!"))
    xd, dd = _masked(x, ok), _masked(divisor, ok)
    floor_rem = xd % dd
    trunc_rem = pl.when((floor_rem != 0) & ((floor_rem < 0) != (xd < 0))) \
        .then(floor_rem - dd).otherwise(floor_rem)
    return ((xd - trunc_rem) / dd).cast(_dec()), errors


# --------------------------------------------------------------- powers, roots, logarithms


def polars_power(call: FormCall, x: Any, power: Any) -> Any:
    from ..operators import polars as _polars_forms

    return _polars_forms.power(x, power, call.const(1))


def _float_of(x: Any) -> Any:
    return _f(x)


def polars_sqrt(call: FormCall, x: Any) -> Any:
    v = _float_of(x)
    return _with([(v < 0, "#NUM!")], _number(call, pl.when(v >= 0).then(v).sqrt()))


def polars_exp(call: FormCall, x: Any) -> Any:
    v = _float_of(x)
    return _number(call, v.exp())


def polars_ln(call: FormCall, x: Any) -> Any:
    v = _float_of(x)
    return _with([(v <= 0, "#NUM!")], _number(call, pl.when(v > 0).then(v).log()))


def polars_log10(call: FormCall, x: Any) -> Any:
    v = _float_of(x)
    return _with([(v <= 0, "#NUM!")], _number(call, pl.when(v > 0).then(v).log10()))


def polars_log(call: FormCall, x: Any, base: Any) -> Any:
    v, b = _float_of(x), _float_of(base)
    errors = [((v <= 0) | (b <= 0), "#NUM!"), (b == 1, "#DIV/0!")]
    v = pl.when(v > 0).then(v)
    if _known(call, 1) == 10.0:
        value = v.log10()
    else:
        good = (b > 0) & (b != 1)
        value = pl.when(b == 10).then(v.log10()).otherwise(v.log() / pl.when(good).then(b).log())
    return _with(errors, _number(call, value))


def polars_pi(call: FormCall) -> Any:
    if _decimal(call):
        return pl.lit(_PI_DECIMAL, dtype=_dec())
    return pl.lit(math.pi)


# ---------------------------------------------------------------------------- trigonometry


def _trig(name: str) -> Callable[..., Any]:
    def form(call: FormCall, x: Any) -> Any:
        v = _float_of(x)
        big = v.abs() >= _TRIG_LIMIT
        return _with([(big, "#NUM!")], _number(call, getattr(pl.when(~big).then(v), name)()))
    return form


polars_sin = _trig("sin")
polars_cos = _trig("cos")
polars_tan = _trig("tan")


def _inverse(name: str) -> Callable[..., Any]:
    def form(call: FormCall, x: Any) -> Any:
        v = _float_of(x)
        outside = (v < -1) | (v > 1)
        return _with([(outside, "#NUM!")], _number(call, getattr(pl.when(~outside).then(v), name)()))
    return form


polars_asin = _inverse("arcsin")
polars_acos = _inverse("arccos")


def polars_atan(call: FormCall, x: Any) -> Any:
    return _number(call, _float_of(x).arctan())


def polars_atan2(call: FormCall, x_num: Any, y_num: Any) -> Any:
    origin = (x_num == 0) & (y_num == 0)
    return _with([(origin, "#DIV/0!")], _number(call, pl.arctan2(_float_of(y_num), _float_of(x_num))))


def _decimal_angle(angle: Any, times: Any, over: Any, by_float: Any) -> Any:
    """Decimal mode: angle * times / over in decimal, as the scalar computes it (so
    RADIANS(180) = PI() holds), rounded at 18 places; from |angle| >= 1e18 on (where the
    decimal product would not fit) the float64 form ``by_float``."""
    fits = _float_of(angle).abs() < 1e18
    exact = pl.when(fits).then(angle.cast(_dec())) * pl.lit(times, dtype=_dec()) \
        / pl.lit(over, dtype=_dec())
    value, errors = by_float
    return pl.when(fits).then(exact).otherwise(value), errors


def polars_degrees(call: FormCall, angle: Any) -> Any:
    by_float = _number(call, _float_of(angle).degrees())
    if _decimal(call):
        return _decimal_angle(angle, Decimal(180), _PI_DECIMAL, by_float)
    return by_float


def polars_radians(call: FormCall, angle: Any) -> Any:
    by_float = _number(call, _float_of(angle).radians())
    if _decimal(call):
        return _decimal_angle(angle, _PI_DECIMAL, Decimal(180), by_float)
    return by_float


# -------------------------------------------------------------------------- integer functions



def polars_fact(call: FormCall, x: Any) -> Any:
    v = _float_of(x)
    bad = (v < 0) | (v >= 171)
    index = pl.when(~bad).then(v.truncate()).cast(pl.Int64)
    table = pl.lit(pl.Series("factorials", _FACTORIALS, dtype=pl.Float64))
    return _with([(bad, "#NUM!")], _number(call, table.gather(index)))


def _flatten(args: tuple[Any, ...]) -> Any:
    """Numbers and lists of numbers as one list per row (lists flattened, blanks kept)."""
    return pl.concat_list(list(args))


def polars_sumsq(call: FormCall, *args: Any) -> Any:
    items = _flatten(args)
    if not _decimal(call):
        return items.list.eval(pl.element() * pl.element()).list.sum()
    estimate = items.cast(pl.List(pl.Float64)).list.eval(pl.element() * pl.element()).list.sum()
    over = ~(estimate < _DECIMAL_FIT)
    # the rows past the range squared no item: an empty list there, not a null one (polars
    # still computes over a nulled list's items, and a decimal product past Decimal(38, 18)
    # failed the whole frame: SUMSQ(l) of a list holding 9e19)
    kept = pl.when(~over).then(items).otherwise(items.list.head(0))
    value = kept.list.eval(pl.element() * pl.element()).list.sum()
    return pl.when(~over).then(value).cast(_dec()), [(over, "#NUM!")]


# ------------------------------------------------------------------------------ information


def polars_iseven(call: FormCall, x: Any) -> Any:
    t = pl.when(x < 0).then(x.ceil()).otherwise(x.floor())
    return (t % 2) == 0


def polars_isodd(call: FormCall, x: Any) -> Any:
    t = pl.when(x < 0).then(x.ceil()).otherwise(x.floor())
    return (t % 2) != 0


def polars_na(call: FormCall) -> Any:
    return pl.lit(None, dtype=pl.Null), pl.lit("#N/A")


def polars_boolean_identity(call: FormCall, x: Any) -> Any:
    return x


def polars_boolean_number(call: FormCall, x: Any) -> Any:
    return x != 0


def polars_boolean_text(call: FormCall, x: Any) -> Any:
    word = x.str.strip_chars().str.to_lowercase()
    value = pl.when(word.is_in(["true", "yes", "1"])).then(True) \
        .when(word.is_in(["false", "no", "0"])).then(False)
    return value, [(value.is_null() & x.is_not_null(), "#VALUE!")]


# ---------------------------------------------------------------------------------- finance


def _pl_growth(rate: Any, nper: Any) -> tuple[Any, Any, Any, list[tuple[Any, str]]]:
    """((1+rate)^nper, (1+rate)^nper - 1, ln of the first, the checked power's errors) in
    float64, with the power's rules (0^0, 0^negative, negative^fraction, overflow). For a
    positive base g - 1 is expm1(nper * log1p(rate)) (Kahan's formulation of expm1), so small
    rates keep their digits: (1 + 1e-9)^12 - 1 is not 1.2e-8 minus float noise."""
    base = rate + 1
    negative = base < 0
    lg = nper * rate.log1p()
    e = lg.exp()
    em1 = pl.when(e == 1).then(lg).when(e == 0).then(-1.0).otherwise((e - 1) * lg / e.log())
    power = base.pow(nper)  # a negative base (whole nper): sign and magnitude
    g = pl.when(negative).then(power).otherwise(e)
    gm1 = pl.when(negative).then(power - 1).otherwise(em1)
    errors = [
        ((base == 0) & (nper == 0), "#NUM!"),
        ((base == 0) & (nper < 0), "#DIV/0!"),
        (negative & (nper != nper.floor()), "#NUM!"),
        (~(g.abs() < _FLOAT_LIMIT), "#NUM!"),
    ]
    return g, gm1, lg, errors


def _finance_args(*args: Any) -> list[Any]:
    return [_f(a) for a in args]


def _timing(t: Any) -> Any:
    return pl.when(t != 0).then(1.0).otherwise(0.0)


# The power's errors cannot fire at rate 0 (the base is 1): the closed forms need no guard.


def polars_pmt(call: FormCall, rate: Any, nper: Any, pv: Any, fv: Any, type_: Any) -> Any:
    r, n, p, f, t = _finance_args(rate, nper, pv, fv, type_)
    g, gm1, _, power_errors = _pl_growth(r, n)
    denominator = (1 + r * _timing(t)) * gm1
    value = pl.when(r == 0).then(-(p + f) / n) \
        .otherwise(-(r * (p * g + f)) / denominator)
    errors = [((r == 0) & (n == 0), "#DIV/0!")] + power_errors \
        + [((r != 0) & (denominator == 0), "#NUM!")]
    return _with(errors, _number(call, value))


def polars_pv(call: FormCall, rate: Any, nper: Any, pmt: Any, fv: Any, type_: Any) -> Any:
    r, n, payment, f, t = _finance_args(rate, nper, pmt, fv, type_)
    g, gm1, lg, power_errors = _pl_growth(r, n)
    # The scalar power gives exactly 0 below 1e-400 (log10 estimate): then PV divides by 0.
    vanished = (g == 0) | (lg < -400 * math.log(10))
    value = pl.when(r == 0).then(-(f + payment * n)) \
        .otherwise(-(f + payment * (1 + r * _timing(t)) * gm1 / r) / g)
    return _with(power_errors + [(vanished, "#DIV/0!")], _number(call, value))


def polars_fv(call: FormCall, rate: Any, nper: Any, pmt: Any, pv: Any, type_: Any) -> Any:
    r, n, payment, p, t = _finance_args(rate, nper, pmt, pv, type_)
    g, gm1, _, power_errors = _pl_growth(r, n)
    value = pl.when(r == 0).then(-(p + payment * n)) \
        .otherwise(-(p * g + payment * (1 + r * _timing(t)) * gm1 / r))
    return _with(power_errors, _number(call, value))


def polars_npv(call: FormCall, rate: Any, *values: Any) -> Any:
    r = _f(rate)
    factor = r + 1
    flows = _flatten(values).list.drop_nulls().cast(pl.List(pl.Float64))
    positions = pl.int_ranges(1, flows.list.len() + 1).cast(pl.List(pl.Float64))
    log_factor = pl.when(factor != 0).then(factor.abs()).log()
    discounts = (positions * -log_factor).list.eval(pl.element().exp())
    signs = (positions % 2) * -2 + 1  # (-1)^i, for a factor below zero
    terms = pl.when(factor < 0).then(flows * discounts * signs).otherwise(flows * discounts)
    return _with([(factor == 0, "#DIV/0!")], _number(call, terms.list.sum()))




# ------------------------------------------------------------------------ information (IS*)
# These forms receive their argument's compiled column (value, error code, static type:
# ``wants_columns``), as the IS* functions see errors. A type test is decided by the static
# type where it settles it (ISNUMBER of a Text is FALSE on every row), else per row: the value
# is present and the row has no error. A dynamically typed argument (Any) is refused.

def _pl_clean(col: Any) -> Any:
    """TRUE on the rows where the argument is not an error value."""
    return pl.lit(True) if col.error is None else col.error.is_null()


def _static_kind(name: str, col: Any, backend: str = "polars") -> str:
    from ....errors import Unsupported

    kind = "Any" if col.type is None else str(col.type.kind)
    if kind in ("Any", "Var", "Many", "Fn"):
        reason = "its argument's type is only known per value (Any), not from the schema"
        verb = "polars cannot evaluate" if backend == "polars" else "SQL cannot express"
        raise Unsupported(f"{verb} {name}: {reason}", function=name, backend=backend,
                          reason=reason)
    return kind


def _pl_kind_test(name: str, kinds: tuple[str, ...], col: Any) -> Any:
    if _static_kind(name, col) not in kinds:
        return pl.lit(False)
    return col.value.is_not_null() & _pl_clean(col)


def polars_isblank(call: FormCall, col: Any) -> Any:
    return col.value.is_null() & _pl_clean(col)


def polars_iserror(call: FormCall, col: Any) -> Any:
    return pl.lit(False) if col.error is None else col.error.is_not_null()


def polars_iserr(call: FormCall, col: Any) -> Any:
    if col.error is None:
        return pl.lit(False)
    return (col.error.is_not_null() & (col.error != "#N/A")).fill_null(False)


def polars_isna(call: FormCall, col: Any) -> Any:
    return pl.lit(False) if col.error is None else (col.error == "#N/A").fill_null(False)


def polars_isnumber(call: FormCall, col: Any) -> Any:
    return _pl_kind_test("ISNUMBER", ("Number",), col)


def polars_istext(call: FormCall, col: Any) -> Any:
    return _pl_kind_test("ISTEXT", ("Text",), col)


def polars_isnontext(call: FormCall, col: Any) -> Any:
    return ~_pl_kind_test("ISNONTEXT", ("Text",), col)


def polars_islogical(call: FormCall, col: Any) -> Any:
    return _pl_kind_test("ISLOGICAL", ("Boolean",), col)


def polars_isdate(call: FormCall, col: Any) -> Any:
    return _pl_kind_test("ISDATE", ("Date", "DateTime"), col)


_TYPE_NUMBERS = {"Text": 2, "Boolean": 4, "List": 64, "Record": 128, "Never": 16}


def polars_type(call: FormCall, col: Any) -> Any:
    """Excel's type number from the static type; a blank row is 1 and an error row 16."""
    kind = _static_kind("TYPE", col)
    dec = _decimal(call)
    value = _lit(dec, _TYPE_NUMBERS.get(kind, 1))
    if kind not in ("Never", "Blank") and _TYPE_NUMBERS.get(kind, 1) != 1:
        value = pl.when(col.value.is_null()).then(_lit(dec, 1)).otherwise(value)
    if col.error is not None:
        value = pl.when(col.error.is_not_null()).then(_lit(dec, 16)).otherwise(value)
    return value


def polars_error_type(call: FormCall, col: Any) -> Any:
    """The error's number (`values.ERROR_TYPE_NUMBER`, 99 for others); #N/A on a clean row."""
    from ....values import ERROR_TYPE_NUMBER

    column = _backend().Column
    dec = _decimal(call)
    if col.error is None:
        return column(pl.lit(None, dtype=_dec() if dec else pl.Float64),
                      pl.lit("#N/A"))
    chain: Any = pl
    for code, number in ERROR_TYPE_NUMBER.items():
        chain = chain.when(col.error == code).then(_lit(dec, number))
    value = chain.when(col.error.is_not_null()).then(_lit(dec, 99))
    return column(value, pl.when(col.error.is_null()).then(pl.lit("#N/A")))
