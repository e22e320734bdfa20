"""Polars and SQL forms of the math, information and finance families (private).

Specs name these through `_numeric.polars_form` / `_numeric.sql_form` (``polars_<name>`` and
``sql_<name>`` here), resolved on first use, so declaring a function never imports polars. Each
form mirrors its scalar twin: the same errors, checked in the same order, and the same answer
within the backend's numeric policy (`formulane.vectorized.polars`):

- **Float mode** (Float64 columns). The scalar engine reads a float by its shortest repr
  (``2.675`` is exactly 2.675 there), so the decimal-grid functions must too:
  - ROUND, ROUNDUP, ROUNDDOWN, TRUNC use float arithmetic that is exact with respect to that
    reading: ``k = floor(|x| * 10^n)`` is corrected by comparing x with the float nearest to the
    decimal ``k / 10^n`` (one correctly rounded division), and a tie is detected by comparing x
    with the float nearest to ``(k + 0.5) / 10^n``. Since x's shortest repr is the unique
    shortest decimal that rounds to x, x lies on a grid point or tie exactly when its repr does
    (while ``|x| * 10^n < 2^48``; beyond that nothing below the grid is left to round). So
    ``ROUND(1.005, 2)`` is 1.01 as in the scalar engine (polars' own ``round`` gives 1.0).
  - MOD, QUOTIENT, MROUND, CEILING, FLOOR and the .MATH forms divide in float and take a
    quotient within 1e-15 relative of an integer (or of a half, for MROUND's ties) as exactly
    on it (the backend's float comparisons use the same 1e-15): the float error of a quotient
    of two shortest-repr decimals is below 3.4e-16 relative, while a quotient off the grid is
    further away whenever x, written on the finer of the two decimal grids, has at most 15
    digits. So ``MOD(0.3, 0.1)`` is 0 and ``CEILING(0.3, 0.1)`` is 0.3, as in the scalar
    engine. Past 2^48 steps nothing is snapped. The remainder itself is float arithmetic
    (``x % d``), as the operators' float mode: a remainder much smaller than x keeps x's float
    error. (Exact decimals for every row would need each value's digits, which polars only
    gives through text: ~100-300 ms per million values and per use, since an eager expression
    recomputes each use.)
  - INT, EVEN, ODD, ISEVEN, ISODD only floor/ceil/truncate, which are exact on floats.
  - Powers, roots, logarithms, trigonometry and finance compute in float64 (as the scalar
    engine's own float algorithms do for trigonometry); the backend tests non-finite results.
- **Decimal mode** (Decimal(38, 18) columns): the decimal-grid functions are exact decimal
  arithmetic; the float algorithms run on the float value and come back through its shortest
  repr (as the scalar engine's ``from_float``). A result of magnitude 1e20 or more does not fit
  Decimal(38, 18) and is #NUM! (the backend's decimal policy); operands are masked first,
  because polars aborts the whole query on a decimal overflow.
- **SQL** forms cannot see argument types: the decimal-grid functions read their operands as
  ``TRY_CAST(CAST(x AS VARCHAR) AS DECIMAL(38, 18))`` (a DOUBLE's text is its shortest repr, a
  DECIMAL's its own digits), compute exactly, and fall back to the engine's own arithmetic where
  that decimal does not round-trip. Float algorithms run in DOUBLE; the engines return NaN or
  infinities for domain errors, so every non-finite result is tested (#NUM!). Divisors are
  wrapped in NULLIF (DuckDB aborts on a decimal division or remainder by zero).
"""

from __future__ import annotations

import importlib
import math
from decimal import Decimal
from typing import Any, Callable

from sqlglot import exp


class _LazyPolars:
    """``pl`` imported on first attribute access: the SQL forms never import polars."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("polars"), name)


pl: Any = _LazyPolars()

#: Decimal(38, 18) holds |x| < 1e20 (tested in float64 with a margin, as the backend does).
_DECIMAL_FIT = 1e20 * (1 - 1e-12)
#: The scalar engine's bound: numbers have |x| < 1e308.
_FLOAT_LIMIT = 1e308
#: |x| * 10^n at or beyond this leaves nothing below the grid to round (see the module docs).
_GRID_LIMIT = float(2**48)
#: Operands at or beyond this magnitude are not read as Decimal(38, 18) (results stay < 1e20).
_EXACT_LIMIT = 1e18
_TRIG_LIMIT = float(2**27)
_PI_DECIMAL = Decimal("3.141592653589793238")
#: The largest Decimal(38, 18): ``a + step`` fits exactly when ``a <= _DECIMAL_MAX - step``.
_DECIMAL_MAX = Decimal("99999999999999999999.999999999999999999")


def _backend() -> Any:
    return importlib.import_module("formulane.vectorized.polars")


def _decimal_mode() -> bool:
    return _backend().numbers() == "decimal"


def _dec() -> Any:
    return pl.Decimal(38, 18)


def _f(e: Any) -> Any:
    return e.cast(pl.Float64)


def _zero() -> Any:
    return pl.lit(Decimal(0), dtype=_dec()) if _decimal_mode() else pl.lit(0.0)


def _lit(value: float | int) -> Any:
    """A number literal in the program's numeric mode."""
    if _decimal_mode():
        return pl.lit(Decimal(repr(value)) if isinstance(value, float) else Decimal(value),
                      dtype=_dec())
    return pl.lit(float(value))


def _const(e: Any) -> float | None:
    """The value of a constant expression (no column), else None: literal digits and
    significances take the fast, exact constant paths."""
    try:
        if e.meta.root_names():
            return None
        value = pl.select(e).item()
    except Exception:  # noqa: BLE001 - anything not a plain constant is not one
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _number(mode_float: Any) -> Any:
    """A float64 result in the program's numeric mode: (value, errors)."""
    if not _decimal_mode():
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


def polars_abs(x: Any) -> Any:
    return x.abs()


def polars_sign(x: Any) -> Any:
    return x.sign().cast(_dec() if _decimal_mode() else pl.Float64)


def polars_clamp(x: Any, low: Any, high: Any) -> Any:
    value = pl.when(x < low).then(low).when(x > high).then(high).otherwise(x)
    return value, [(low > high, "#NUM!")]


# ------------------------------------------------------------------------------ rounding


def _digits(digits: Any) -> int | None:
    """Literal digits truncated toward zero (clamped: nothing changes past +-308)."""
    c = _const(digits)
    if c is None:
        return None
    return max(-308, min(308, int(c)))


def _round_float(x: Any, digits: Any, mode: str) -> Any:
    n = _digits(digits)
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
    # Past 2^48 grid steps nothing below the grid is left to round (see the module docs).
    return x.sign() * pl.when(y < _GRID_LIMIT).then(unscale(r)).otherwise(a)


def _column(like: Any, value: float) -> Any:
    """The constant as a full column (null where ``like`` is), not a polars scalar."""
    return pl.when(like.is_not_null()).then(pl.lit(value))


def _step_decimal(n: int) -> Any:
    return pl.lit(Decimal(10) ** -n, dtype=_dec())


def _round_decimal(x: Any, digits: Any, mode: str) -> Any:
    zero = pl.lit(Decimal(0), dtype=_dec())
    a = x.abs()
    n = _digits(digits)
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


def _round(mode: str) -> Callable[[Any, Any], Any]:
    def form(x: Any, digits: Any) -> Any:
        if _decimal_mode():
            return _round_decimal(x, digits, mode)
        return _round_float(x, digits, mode)
    return form


polars_round = _round("half_up")
polars_roundup = _round("up")
polars_rounddown = _round("down")


def polars_int(x: Any) -> Any:
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


def _multiples(x: Any, step: Any) -> tuple[Any, Any, Any]:
    """(floor multiple, ceiling multiple, nearest multiple with ties away from zero) of x by
    the positive step. Decimal mode: `_decimal_multiples` (`_unfit` reports a candidate that
    does not fit, where it is chosen). Float mode: float quotients snapped to the grid."""
    if _decimal_mode():
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


def _unfit(value: Any, *inputs: Any) -> list[tuple[Any, str]]:
    """Decimal mode: a null result of non-null inputs is a multiple beyond Decimal(38, 18)."""
    if not _decimal_mode():
        return []
    present = value.is_null()
    for e in inputs:
        present = present & e.is_not_null()
    return [(present, "#NUM!")]


def polars_mround(x: Any, multiple: Any) -> Any:
    _, _, near = _multiples(x, multiple.abs())
    value = pl.when(multiple == 0).then(_zero()).otherwise(near)
    wrong = ((x > 0) & (multiple < 0)) | ((x < 0) & (multiple > 0))
    return value, [((multiple != 0) & wrong, "#NUM!")] + _unfit(value, x, multiple)


def polars_ceiling(x: Any, significance: Any) -> Any:
    low, high, _ = _multiples(x, significance.abs())
    value = pl.when(significance == 0).then(_zero()) \
        .when(significance > 0).then(high).otherwise(low)
    wrong = (x > 0) & (significance < 0)
    return value, [(wrong, "#NUM!")] + _unfit(value, x, significance)


def polars_floor(x: Any, significance: Any) -> Any:
    low, high, _ = _multiples(x, significance.abs())
    value = pl.when(significance == 0).then(_zero()) \
        .when(significance > 0).then(low).otherwise(high)
    wrong = (x > 0) & (significance < 0)
    return value, [(wrong, "#NUM!"), ((significance == 0) & (x != 0), "#DIV/0!")] \
        + _unfit(value, x, significance)


def _math_rounding(toward: str) -> Callable[..., Any]:
    def form(x: Any, significance: Any, mode: Any) -> Any:
        low, high, _ = _multiples(x, significance.abs())
        flip = (x < 0) & (mode != 0)
        if toward == "ceil":
            chosen = pl.when(flip).then(low).otherwise(high)
        else:
            chosen = pl.when(flip).then(high).otherwise(low)
        value = pl.when(significance == 0).then(_zero()).otherwise(chosen)
        return value, _unfit(value, x, significance, mode)
    return form


polars_ceiling_math = _math_rounding("ceil")
polars_floor_math = _math_rounding("floor")


def _even_odd(odd: bool) -> Callable[[Any], Any]:
    def form(x: Any) -> Any:
        a = x.abs()
        errors: list[tuple[Any, str]] = []
        if _decimal_mode():
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


def _decimal_quotient(x: Any, divisor: Any) -> Any:
    """trunc(x / divisor) of decimals, exactly (the divisor nonzero, the quotient fitting)."""
    floor_rem = x % divisor
    trunc_rem = pl.when((floor_rem != 0) & ((floor_rem < 0) != (x < 0))) \
        .then(floor_rem - divisor).otherwise(floor_rem)
    return ((x - trunc_rem) / divisor).cast(_dec())


def polars_mod(x: Any, divisor: Any) -> Any:
    errors = [(divisor == 0, "#DIV/0!")]
    if _decimal_mode():
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


def polars_quotient(x: Any, divisor: Any) -> Any:
    errors = [(divisor == 0, "#DIV/0!")]
    if not _decimal_mode():
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


def polars_power(x: Any, power: Any) -> Any:
    from ..vectorized import _polars_forms

    return _polars_forms.power(x, power)


def _float_of(x: Any) -> Any:
    return _f(x)


def polars_sqrt(x: Any) -> Any:
    v = _float_of(x)
    return _with([(v < 0, "#NUM!")], _number(pl.when(v >= 0).then(v).sqrt()))


def polars_exp(x: Any) -> Any:
    v = _float_of(x)
    return _number(v.exp())


def polars_ln(x: Any) -> Any:
    v = _float_of(x)
    return _with([(v <= 0, "#NUM!")], _number(pl.when(v > 0).then(v).log()))


def polars_log10(x: Any) -> Any:
    v = _float_of(x)
    return _with([(v <= 0, "#NUM!")], _number(pl.when(v > 0).then(v).log10()))


def polars_log(x: Any, base: Any) -> Any:
    v, b = _float_of(x), _float_of(base)
    errors = [((v <= 0) | (b <= 0), "#NUM!"), (b == 1, "#DIV/0!")]
    v = pl.when(v > 0).then(v)
    if _const(base) == 10.0:
        value = v.log10()
    else:
        good = (b > 0) & (b != 1)
        value = pl.when(b == 10).then(v.log10()).otherwise(v.log() / pl.when(good).then(b).log())
    return _with(errors, _number(value))


def polars_pi() -> Any:
    if _decimal_mode():
        return pl.lit(_PI_DECIMAL, dtype=_dec())
    return pl.lit(math.pi)


# ---------------------------------------------------------------------------- trigonometry


def _trig(name: str) -> Callable[[Any], Any]:
    def form(x: Any) -> Any:
        v = _float_of(x)
        big = v.abs() >= _TRIG_LIMIT
        return _with([(big, "#NUM!")], _number(getattr(pl.when(~big).then(v), name)()))
    return form


polars_sin = _trig("sin")
polars_cos = _trig("cos")
polars_tan = _trig("tan")


def _inverse(name: str) -> Callable[[Any], Any]:
    def form(x: Any) -> Any:
        v = _float_of(x)
        outside = (v < -1) | (v > 1)
        return _with([(outside, "#NUM!")], _number(getattr(pl.when(~outside).then(v), name)()))
    return form


polars_asin = _inverse("arcsin")
polars_acos = _inverse("arccos")


def polars_atan(x: Any) -> Any:
    return _number(_float_of(x).arctan())


def polars_atan2(x_num: Any, y_num: Any) -> Any:
    origin = (x_num == 0) & (y_num == 0)
    return _with([(origin, "#DIV/0!")], _number(pl.arctan2(_float_of(y_num), _float_of(x_num))))


def _decimal_angle(angle: Any, times: Any, over: Any, by_float: Any) -> Any:
    """Decimal mode: angle * times / over in decimal, as the scalar computes it (so
    RADIANS(180) = PI() holds), rounded at 18 places; from |angle| >= 1e18 on (where the
    decimal product would not fit) the float64 form ``by_float``."""
    fits = _float_of(angle).abs() < 1e18
    exact = pl.when(fits).then(angle.cast(_dec())) * pl.lit(times, dtype=_dec()) \
        / pl.lit(over, dtype=_dec())
    value, errors = by_float
    return pl.when(fits).then(exact).otherwise(value), errors


def polars_degrees(angle: Any) -> Any:
    by_float = _number(_float_of(angle).degrees())
    if _decimal_mode():
        return _decimal_angle(angle, Decimal(180), _PI_DECIMAL, by_float)
    return by_float


def polars_radians(angle: Any) -> Any:
    by_float = _number(_float_of(angle).radians())
    if _decimal_mode():
        return _decimal_angle(angle, _PI_DECIMAL, Decimal(180), by_float)
    return by_float


# -------------------------------------------------------------------------- integer functions

_FACTORIALS = [float(math.factorial(i)) for i in range(171)]


def polars_fact(x: Any) -> Any:
    v = _float_of(x)
    bad = (v < 0) | (v >= 171)
    index = pl.when(~bad).then(v.truncate()).cast(pl.Int64)
    table = pl.lit(pl.Series("factorials", _FACTORIALS, dtype=pl.Float64))
    return _with([(bad, "#NUM!")], _number(table.gather(index)))


def _flatten(args: tuple[Any, ...]) -> Any:
    """Numbers and lists of numbers as one list per row (lists flattened, blanks kept)."""
    return pl.concat_list(list(args))


def polars_sumsq(*args: Any) -> Any:
    items = _flatten(args)
    if not _decimal_mode():
        return items.list.eval(pl.element() * pl.element()).list.sum()
    estimate = items.cast(pl.List(pl.Float64)).list.eval(pl.element() * pl.element()).list.sum()
    over = ~(estimate < _DECIMAL_FIT)
    value = pl.when(~over).then(items).list.eval(pl.element() * pl.element()).list.sum()
    return value.cast(_dec()), [(over, "#NUM!")]


# ------------------------------------------------------------------------------ information


def polars_iseven(x: Any) -> Any:
    t = pl.when(x < 0).then(x.ceil()).otherwise(x.floor())
    return (t % 2) == 0


def polars_isodd(x: Any) -> Any:
    t = pl.when(x < 0).then(x.ceil()).otherwise(x.floor())
    return (t % 2) != 0


def polars_na() -> Any:
    return pl.lit(None, dtype=pl.Null), pl.lit("#N/A")


def polars_boolean_identity(x: Any) -> Any:
    return x


def polars_boolean_number(x: Any) -> Any:
    return x != 0


def polars_boolean_text(x: Any) -> Any:
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


def polars_pmt(rate: Any, nper: Any, pv: Any, fv: Any, type_: Any) -> Any:
    r, n, p, f, t = _finance_args(rate, nper, pv, fv, type_)
    g, gm1, _, power_errors = _pl_growth(r, n)
    denominator = (1 + r * _timing(t)) * gm1
    value = pl.when(r == 0).then(-(p + f) / n) \
        .otherwise(-(r * (p * g + f)) / denominator)
    errors = [((r == 0) & (n == 0), "#DIV/0!")] + power_errors \
        + [((r != 0) & (denominator == 0), "#NUM!")]
    return _with(errors, _number(value))


def polars_pv(rate: Any, nper: Any, pmt: Any, fv: Any, type_: Any) -> Any:
    r, n, payment, f, t = _finance_args(rate, nper, pmt, fv, type_)
    g, gm1, lg, power_errors = _pl_growth(r, n)
    # The scalar power gives exactly 0 below 1e-400 (log10 estimate): then PV divides by 0.
    vanished = (g == 0) | (lg < -400 * math.log(10))
    value = pl.when(r == 0).then(-(f + payment * n)) \
        .otherwise(-(f + payment * (1 + r * _timing(t)) * gm1 / r) / g)
    return _with(power_errors + [(vanished, "#DIV/0!")], _number(value))


def polars_fv(rate: Any, nper: Any, pmt: Any, pv: Any, type_: Any) -> Any:
    r, n, payment, p, t = _finance_args(rate, nper, pmt, pv, type_)
    g, gm1, _, power_errors = _pl_growth(r, n)
    value = pl.when(r == 0).then(-(p + payment * n)) \
        .otherwise(-(p * g + payment * (1 + r * _timing(t)) * gm1 / r))
    return _with(power_errors, _number(value))


def polars_npv(rate: Any, *values: Any) -> Any:
    r = _f(rate)
    factor = r + 1
    flows = _flatten(values).list.drop_nulls().cast(pl.List(pl.Float64))
    positions = pl.int_ranges(1, flows.list.len() + 1).cast(pl.List(pl.Float64))
    log_factor = pl.when(factor != 0).then(factor.abs()).log()
    discounts = (positions * -log_factor).list.eval(pl.element().exp())
    signs = (positions % 2) * -2 + 1  # (-1)^i, for a factor below zero
    terms = pl.when(factor < 0).then(flows * discounts * signs).otherwise(flows * discounts)
    return _with([(factor == 0, "#DIV/0!")], _number(terms.list.sum()))


# =================================================================================== SQL


def _n(value: Any) -> exp.Expression:
    if isinstance(value, float):
        return exp.Literal.number(repr(value))
    return exp.Literal.number(format(Decimal(value), "f") if isinstance(value, Decimal)
                              else str(value))


def _p(e: exp.Expression) -> exp.Expression:
    # (AND/OR are sqlglot Funcs too, yet render infix: they need parentheses)
    if isinstance(e, exp.Connector):
        return exp.Paren(this=e)
    if isinstance(e, (exp.Column, exp.Literal, exp.Paren, exp.Null)) or isinstance(e, exp.Func):
        return e
    return exp.Paren(this=e)


def _add(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Paren(this=exp.Add(this=_p(a), expression=_p(b)))


def _sub(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Paren(this=exp.Sub(this=_p(a), expression=_p(b)))


def _mul(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Paren(this=exp.Mul(this=_p(a), expression=_p(b)))


def _div(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Paren(this=exp.Div(this=_p(a), expression=_p(b), typed=False, safe=False))


def _neg(a: exp.Expression) -> exp.Expression:
    return exp.Neg(this=_p(a))


def _mod(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Paren(this=exp.Mod(this=_p(a), expression=_p(b)))


def _abs(a: exp.Expression) -> exp.Expression:
    return exp.Abs(this=a)


def _eq(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.EQ(this=_p(a), expression=_p(b))


def _ne(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.NEQ(this=_p(a), expression=_p(b))


def _lt(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.LT(this=_p(a), expression=_p(b))


def _le(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.LTE(this=_p(a), expression=_p(b))


def _gt(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.GT(this=_p(a), expression=_p(b))


def _ge(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.GTE(this=_p(a), expression=_p(b))


def _and(*parts: exp.Expression) -> exp.Expression:
    out = parts[0]
    for part in parts[1:]:
        out = exp.And(this=_p(out), expression=_p(part))
    return exp.Paren(this=out)


def _or(*parts: exp.Expression) -> exp.Expression:
    out = parts[0]
    for part in parts[1:]:
        out = exp.Or(this=_p(out), expression=_p(part))
    return exp.Paren(this=out)


def _not(a: exp.Expression) -> exp.Expression:
    return exp.Not(this=_p(a))


def _is_null(a: exp.Expression) -> exp.Expression:
    return exp.Is(this=_p(a), expression=exp.Null())


def _case(pairs: list[tuple[exp.Expression, exp.Expression]],
          default: exp.Expression | None = None) -> exp.Expression:
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in pairs], default=default)


def _double(a: exp.Expression) -> exp.Expression:
    return exp.cast(a, exp.DataType.build("DOUBLE"))


def _nullif_zero(a: exp.Expression) -> exp.Expression:
    return exp.Nullif(this=_p(a), expression=_n(0))


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _not_finite(value: exp.Expression) -> exp.Expression:
    """NaN, infinities and |x| >= 1e308: the numbers the scalar engine cannot hold."""
    return _not(_lt(_abs(value), _n(1e308)))


def _sql_const(e: exp.Expression) -> Decimal | None:
    """The value of a literal number (possibly negated or parenthesized), else None."""
    if isinstance(e, exp.Paren):
        return _sql_const(e.this)
    if isinstance(e, exp.Neg):
        inner = _sql_const(e.this)
        return None if inner is None else -inner
    if isinstance(e, exp.Literal) and not e.is_string:
        try:
            return Decimal(e.this)
        except ArithmeticError:
            return None
    return None


def _sql_exact(x: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    """(x as DECIMAL(38, 18) through its text, whether that decimal is exactly x)."""
    d = exp.TryCast(this=exp.cast(_p(x), exp.DataType.build("VARCHAR")),
                    to=exp.DataType.build("DECIMAL(38, 18)"))
    guarded = _case([(_lt(_abs(x), _n(_EXACT_LIMIT)), d)])
    ok = _and(_not(_is_null(guarded)), _eq(_double(guarded), _double(x)))
    return guarded, ok


def _sql_sign_apply(x: exp.Expression, magnitude: exp.Expression) -> exp.Expression:
    return _case([(_lt(x, _n(0)), _neg(magnitude))], magnitude)


# ------------------------------------------------------------------------ sign and size


def sql_abs(x: exp.Expression) -> exp.Expression:
    return exp.Abs(this=x)


def sql_sign(x: exp.Expression) -> exp.Expression:
    return exp.Sign(this=x)


def sql_clamp(x: exp.Expression, low: exp.Expression, high: exp.Expression) -> Any:
    value = _case([(_lt(x, low), low), (_gt(x, high), high)], x)
    return value, [(_gt(low, high), "#NUM!")]


# ------------------------------------------------------------------------------ rounding


def _sql_round_float(x: exp.Expression, n: int | None, nn: exp.Expression | None,
                     mode: str) -> exp.Expression:
    """The float algorithm of `_round_float`, in DOUBLE (for values no DECIMAL(38, 18) holds
    exactly: beyond 1e18, or with more than 18 decimal places)."""
    xf = _double(x)
    a = _abs(xf)
    scale: Callable[[exp.Expression], exp.Expression]
    unscale: Callable[[exp.Expression], exp.Expression]
    if n is not None and n >= 0:
        s_lit = _double(_n(10.0 ** n))
        scale, unscale = (lambda v: _mul(v, s_lit)), (lambda k: _div(k, s_lit))
    elif n is not None:
        m_lit = _double(_n(10.0 ** -n))
        scale, unscale = (lambda v: _div(v, m_lit)), (lambda k: _mul(k, m_lit))
    else:
        assert nn is not None
        s_e = exp.Pow(this=_n(10.0), expression=exp.Greatest(this=nn, expressions=[_n(0)]))
        m_e = exp.Pow(this=_n(10.0), expression=exp.Greatest(this=_neg(nn), expressions=[_n(0)]))
        scale = lambda v: _div(_mul(v, s_e), m_e)  # noqa: E731
        unscale = lambda k: _div(_mul(k, m_e), s_e)  # noqa: E731
    y = scale(a)
    one = _n(1)
    if mode == "half_up":
        k = exp.Floor(this=y)
        r = _add(k, _case([(_ge(a, unscale(_add(k, _n(0.5)))), one)], _n(0)))
    elif mode == "down":
        k0 = exp.Floor(this=y)
        k = _case([(_lt(a, unscale(k0)), _sub(k0, one))], k0)
        r = _case([(_ge(a, unscale(_add(k, one))), _add(k, one))], k)
    else:
        k0 = exp.Ceil(this=y)
        k = _case([(_and(_ge(k0, one), _le(a, unscale(_sub(k0, one)))), _sub(k0, one))], k0)
        r = _case([(_gt(a, unscale(k)), _add(k, one))], k)
    return _case([(_ge(y, _n(_GRID_LIMIT)), xf)], _mul(exp.Sign(this=xf), unscale(r)))


def _sql_round(mode: str) -> Callable[[exp.Expression, exp.Expression], Any]:
    def form(x: exp.Expression, digits: exp.Expression) -> Any:
        xd, ok = _sql_exact(x)
        c = _sql_const(digits)
        ad = _abs(xd)
        nn: exp.Expression | None = None
        n: int | None = None
        if c is not None:
            n = max(-308, min(308, int(c)))
            if n >= 18:
                return x
            step: exp.Expression = _n(Decimal(10) ** -n)
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
                                             exp.DataType.build("VARCHAR")),
                               to=exp.DataType.build("DECIMAL(38, 18)"))
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
        fallback = _sql_round_float(x, n, nn, mode)
        if nn is not None:
            fallback = _case([(_ge(nn, _n(18)), x)], fallback)
        value = _case([(decimal_ok, exact)], fallback)
        return value, [(_not_finite(value), "#NUM!")]
    return form


sql_round = _sql_round("half_up")
sql_roundup = _sql_round("up")
sql_rounddown = _sql_round("down")


def sql_int(x: exp.Expression) -> exp.Expression:
    return exp.Floor(this=x)


def _sql_multiples(x: exp.Expression, step: exp.Expression
                   ) -> tuple[exp.Expression, exp.Expression, exp.Expression]:
    """(floor multiple, ceiling multiple, nearest multiple with ties away from zero) of x by
    the positive step: exact through DECIMAL where both round-trip, else in the engine."""
    xd, ok_x = _sql_exact(x)
    sd, ok_s = _sql_exact(step)
    ok = _and(ok_x, ok_s, _ne(step, _n(0)))
    sd_safe = _nullif_zero(sd)
    r0 = _mod(xd, sd_safe)  # truncated: the sign of x
    r = _case([(_lt(r0, _n(0)), _add(r0, sd_safe))], r0)
    low = _sub(xd, r)
    high = _case([(_eq(r, _n(0)), xd)], _add(low, sd_safe))
    twice = _mul(r, _n(2))
    near = _case([(_gt(twice, sd_safe), high), (_lt(twice, sd_safe), low),
                  (_gt(xd, _n(0)), high)], low)
    q = _div(_double(x), _nullif_zero(_double(step)))
    f_low = _mul(exp.Floor(this=q), step)
    f_high = _mul(exp.Ceil(this=q), step)
    f_near = _mul(_case([(_ge(x, _n(0)), exp.Floor(this=_add(q, _n(0.5))))],
                        exp.Ceil(this=_sub(q, _n(0.5)))), step)
    return (_case([(ok, low)], f_low), _case([(ok, high)], f_high),
            _case([(ok, near)], f_near))


def sql_mround(x: exp.Expression, multiple: exp.Expression) -> Any:
    _, _, near = _sql_multiples(x, _abs(multiple))
    value = _case([(_eq(multiple, _n(0)), _n(0))], near)
    wrong = _or(_and(_gt(x, _n(0)), _lt(multiple, _n(0))),
                _and(_lt(x, _n(0)), _gt(multiple, _n(0))))
    return value, [(_and(_ne(multiple, _n(0)), wrong), "#NUM!"), (_not_finite(value), "#NUM!")]


def sql_ceiling(x: exp.Expression, significance: exp.Expression) -> Any:
    low, high, _ = _sql_multiples(x, _abs(significance))
    value = _case([(_eq(significance, _n(0)), _n(0)), (_gt(significance, _n(0)), high)], low)
    wrong = _and(_gt(x, _n(0)), _lt(significance, _n(0)))
    return value, [(wrong, "#NUM!"), (_not_finite(value), "#NUM!")]


def sql_floor(x: exp.Expression, significance: exp.Expression) -> Any:
    low, high, _ = _sql_multiples(x, _abs(significance))
    value = _case([(_eq(significance, _n(0)), _n(0)), (_gt(significance, _n(0)), low)], high)
    wrong = _and(_gt(x, _n(0)), _lt(significance, _n(0)))
    zero_step = _and(_eq(significance, _n(0)), _ne(x, _n(0)))
    return value, [(wrong, "#NUM!"), (zero_step, "#DIV/0!"), (_not_finite(value), "#NUM!")]


def _sql_math_rounding(toward: str) -> Callable[..., Any]:
    def form(x: exp.Expression, significance: exp.Expression, mode: exp.Expression) -> Any:
        low, high, _ = _sql_multiples(x, _abs(significance))
        flip = _and(_lt(x, _n(0)), _ne(mode, _n(0)))
        chosen = _case([(flip, low)], high) if toward == "ceil" else _case([(flip, high)], low)
        value = _case([(_eq(significance, _n(0)), _n(0))], chosen)
        return value, [(_not_finite(value), "#NUM!")]
    return form


sql_ceiling_math = _sql_math_rounding("ceil")
sql_floor_math = _sql_math_rounding("floor")


def _sql_even_odd(odd: bool) -> Callable[[exp.Expression], Any]:
    def form(x: exp.Expression) -> Any:
        n = exp.Ceil(this=_abs(x))
        parity = _mod(n, _n(2))
        magnitude = _sub(_add(n, _n(1)), parity) if odd else _add(n, parity)
        value = _sql_sign_apply(x, magnitude)
        return value, [(_not_finite(value), "#NUM!")]
    return form


sql_even = _sql_even_odd(False)
sql_odd = _sql_even_odd(True)


# ---------------------------------------------------------------------------- remainders


def _sql_floor_mod(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    """a - b * floor(a / b): the remainder with the sign of the divisor (b never zero)."""
    r = _mod(a, b)
    return _case([(_and(_ne(r, _n(0)), _ne(_lt(r, _n(0)), _lt(b, _n(0)))), _add(r, b))], r)


def sql_mod(x: exp.Expression, divisor: exp.Expression) -> Any:
    xd, ok_x = _sql_exact(x)
    dd, ok_d = _sql_exact(divisor)
    ok = _and(ok_x, ok_d, _ne(divisor, _n(0)))
    exact = _sql_floor_mod(xd, _nullif_zero(dd))
    fallback = _sql_floor_mod(x, _nullif_zero(divisor))
    return _case([(ok, exact)], fallback), [(_eq(divisor, _n(0)), "#DIV/0!")]


def sql_quotient(x: exp.Expression, divisor: exp.Expression) -> Any:
    xd, ok_x = _sql_exact(x)
    dd, ok_d = _sql_exact(divisor)
    ok = _and(ok_x, ok_d, _ne(divisor, _n(0)))
    dd_safe = _nullif_zero(dd)
    exact = _div(_sub(xd, _mod(xd, dd_safe)), dd_safe)  # the remainder is truncated in SQL
    fallback = exp.Trunc(this=_div(_double(x), _nullif_zero(_double(divisor))))
    value = _case([(ok, exact)], fallback)
    return value, [(_eq(divisor, _n(0)), "#DIV/0!"), (_not_finite(value), "#NUM!")]


# --------------------------------------------------------------- powers, roots, logarithms


def sql_power(x: exp.Expression, power: exp.Expression) -> Any:
    from ..vectorized import _sql_forms

    value, errors = _sql_forms.power(x, power)
    return value, list(errors) + [(_not_finite(value), "#NUM!")]


def _guarded(value: exp.Expression, errors: list[tuple[exp.Expression, str]]) -> Any:
    return value, errors + [(_not_finite(value), "#NUM!")]


def _only(condition: exp.Expression, x: exp.Expression) -> exp.Expression:
    """x where condition holds, else NULL: engines never see an argument outside a domain."""
    return _case([(condition, _double(x))])


def sql_sqrt(x: exp.Expression) -> Any:
    return _guarded(exp.Sqrt(this=_only(_ge(x, _n(0)), x)), [(_lt(x, _n(0)), "#NUM!")])


def sql_exp(x: exp.Expression) -> Any:
    value = exp.Exp(this=_only(_le(x, _n(709.5)), x))
    return value, [(_or(_gt(x, _n(709.5)), _not_finite(value)), "#NUM!")]


def sql_ln(x: exp.Expression) -> Any:
    return _guarded(exp.Ln(this=_only(_gt(x, _n(0)), x)), [(_le(x, _n(0)), "#NUM!")])


def sql_log10(x: exp.Expression) -> Any:
    return _guarded(_fn("LOG10", _only(_gt(x, _n(0)), x)), [(_le(x, _n(0)), "#NUM!")])


def sql_log(x: exp.Expression, base: exp.Expression) -> Any:
    positive = _only(_gt(x, _n(0)), x)
    errors = [(_or(_le(x, _n(0)), _le(base, _n(0))), "#NUM!"), (_eq(base, _n(1)), "#DIV/0!")]
    if _sql_const(base) == 10:
        return _guarded(_fn("LOG10", positive), errors)
    good_base = _only(_and(_gt(base, _n(0)), _ne(base, _n(1))), base)
    value = _case([(_eq(base, _n(10)), _fn("LOG10", positive))],
                  _div(exp.Ln(this=positive), exp.Ln(this=good_base)))
    return _guarded(value, errors)


def sql_pi() -> exp.Expression:
    # 18 places, the SQL decimal policy's scale: a 33-place literal makes engines type its
    # comparisons DECIMAL(38, 33), which cannot hold 134217728 (DuckDB aborts the query)
    return _n(_PI_DECIMAL)


# ---------------------------------------------------------------------------- trigonometry


def _sql_trig(cls: type[exp.Func]) -> Callable[[exp.Expression], Any]:
    def form(x: exp.Expression) -> Any:
        big = _ge(_abs(x), _n(_TRIG_LIMIT))
        return _guarded(cls(this=_only(_not(big), x)), [(big, "#NUM!")])
    return form


sql_sin = _sql_trig(exp.Sin)
sql_cos = _sql_trig(exp.Cos)
sql_tan = _sql_trig(exp.Tan)


def _sql_inverse(cls: type[exp.Func]) -> Callable[[exp.Expression], Any]:
    def form(x: exp.Expression) -> Any:
        outside = _or(_lt(x, _n(-1)), _gt(x, _n(1)))
        return _guarded(cls(this=_only(_not(outside), x)), [(outside, "#NUM!")])
    return form


sql_asin = _sql_inverse(exp.Asin)
sql_acos = _sql_inverse(exp.Acos)


def sql_atan(x: exp.Expression) -> exp.Expression:
    return exp.Atan(this=_double(x))


def sql_atan2(x_num: exp.Expression, y_num: exp.Expression) -> Any:
    origin = _and(_eq(x_num, _n(0)), _eq(y_num, _n(0)))
    return exp.Atan2(this=_double(y_num), expression=_double(x_num)), [(origin, "#DIV/0!")]


def sql_degrees(angle: exp.Expression) -> Any:
    return _guarded(exp.Degrees(this=_double(angle)), [])


def sql_radians(angle: exp.Expression) -> exp.Expression:
    return exp.Radians(this=_double(angle))


# -------------------------------------------------------------------------- integer functions


def sql_fact(x: exp.Expression) -> Any:
    bad = _or(_lt(x, _n(0)), _ge(x, _n(171)))
    index = _add(exp.cast(exp.Trunc(this=_only(_not(bad), x)), exp.DataType.build("INT")),
                 _n(1))
    table = exp.Array(expressions=[_n(v) for v in _FACTORIALS])
    return exp.Bracket(this=table, expressions=[index], offset=1), [(bad, "#NUM!")]


# ------------------------------------------------------------------------------ information


def _sql_trunc_mod2(x: exp.Expression) -> exp.Expression:
    return _mod(exp.Trunc(this=x), _n(2))


def sql_iseven(x: exp.Expression) -> exp.Expression:
    return _eq(_sql_trunc_mod2(x), _n(0))


def sql_isodd(x: exp.Expression) -> exp.Expression:
    return _ne(_sql_trunc_mod2(x), _n(0))


def sql_na() -> Any:
    return exp.Null(), exp.Literal.string("#N/A")


def sql_boolean_identity(x: exp.Expression) -> exp.Expression:
    return x


def sql_boolean_number(x: exp.Expression) -> exp.Expression:
    return _ne(x, _n(0))


#: ASCII whitespace (Python's ``str.strip`` also strips other Unicode spaces).
_SPACES = " \t\n\r\x0b\x0c"


def sql_boolean_text(x: exp.Expression) -> Any:
    word = exp.Lower(this=exp.Trim(this=x, expression=exp.Literal.string(_SPACES)))
    words = lambda items: exp.In(this=word, expressions=[exp.Literal.string(w) for w in items])  # noqa: E731
    value = _case([(words(("true", "yes", "1")), exp.true()),
                   (words(("false", "no", "0")), exp.false())])
    return value, [(_and(_is_null(value), _not(_is_null(x))), "#VALUE!")]


# ---------------------------------------------------------------------------------- finance


def _sql_log1p(r: exp.Expression) -> exp.Expression:
    """ln(1 + r) without cancellation (Goldberg: ln(u) * r / (u - 1) with u = 1 + r)."""
    u = _add(_n(1), r)
    return _case([(_eq(u, _n(1)), r)], _div(_mul(exp.Ln(this=u), r), _sub(u, _n(1))))


def _sql_expm1(z: exp.Expression) -> exp.Expression:
    """e^z - 1 without cancellation (Kahan: (e - 1) * z / ln(e) with e = e^z)."""
    e = exp.Exp(this=z)
    return _case([(_eq(e, _n(1)), z), (_eq(e, _n(0)), _n(-1))],
                 _div(_mul(_sub(e, _n(1)), z), exp.Ln(this=e)))


def _sql_growth(rate: exp.Expression, nper: exp.Expression
                ) -> tuple[exp.Expression, exp.Expression, exp.Expression,
                           list[tuple[exp.Expression, str]]]:
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
        (_and(negative, _ne(nper, exp.Floor(this=nper))), "#NUM!"),
        (_not_finite(g), "#NUM!"),
    ]
    return g, gm1, lg, errors


def _sql_timing(t: exp.Expression) -> exp.Expression:
    return _case([(_ne(t, _n(0)), _n(1.0))], _n(0.0))


def sql_pmt(rate: exp.Expression, nper: exp.Expression, pv: exp.Expression,
            fv: exp.Expression, type_: exp.Expression) -> Any:
    r, n, p, f = (_double(a) for a in (rate, nper, pv, fv))
    g, gm1, _, power_errors = _sql_growth(r, n)
    denominator = _mul(_add(_n(1), _mul(r, _sql_timing(type_))), gm1)
    at_zero = _div(_neg(_add(p, f)), _nullif_zero(n))
    general = _div(_neg(_mul(r, _add(_mul(p, g), f))), _nullif_zero(denominator))
    value = _case([(_eq(r, _n(0)), at_zero)], general)
    errors = [(_and(_eq(r, _n(0)), _eq(n, _n(0))), "#DIV/0!")] + power_errors \
        + [(_and(_ne(r, _n(0)), _eq(denominator, _n(0))), "#NUM!")]
    return _guarded(value, errors)


def sql_pv(rate: exp.Expression, nper: exp.Expression, pmt: exp.Expression,
           fv: exp.Expression, type_: exp.Expression) -> Any:
    r, n, payment, f = (_double(a) for a in (rate, nper, pmt, fv))
    g, gm1, lg, power_errors = _sql_growth(r, n)
    vanished = _or(_eq(g, _n(0)), _lt(lg, _n(-400 * math.log(10))))
    annuity = _div(_mul(_mul(payment, _add(_n(1), _mul(r, _sql_timing(type_)))), gm1),
                   _nullif_zero(r))
    general = _div(_neg(_add(f, annuity)), _nullif_zero(g))
    value = _case([(_eq(r, _n(0)), _neg(_add(f, _mul(payment, n))))], general)
    return _guarded(value, power_errors + [(vanished, "#DIV/0!")])


def sql_fv(rate: exp.Expression, nper: exp.Expression, pmt: exp.Expression,
           pv: exp.Expression, type_: exp.Expression) -> Any:
    r, n, payment, p = (_double(a) for a in (rate, nper, pmt, pv))
    g, gm1, _, power_errors = _sql_growth(r, n)
    annuity = _div(_mul(_mul(payment, _add(_n(1), _mul(r, _sql_timing(type_)))), gm1),
                   _nullif_zero(r))
    value = _case([(_eq(r, _n(0)), _neg(_add(p, _mul(payment, n))))],
                  _neg(_add(_mul(p, g), annuity)))
    return _guarded(value, power_errors)
