"""The polars kit: what the polars compiler and the polars forms build expressions with.

A compiled sub-expression is a `Column` (value expression, error-code expression or None,
decimal scale/estimate/bound, float `unchecked`); `first_error`, `error_when`, `own_errors`
combine error codes left to right; `literal`, `dtype_of` and `numbers()` follow the program's
numeric mode (float or decimal, see the compiler's module docs); `let` binds an expression once
while `formulane.apply` binds (`Binder`); `to_text`/`general_text` show values as `&` does.
"""

from __future__ import annotations

import contextvars
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

import polars as pl

from ...errors import Unsupported
from ...types import Type

_MODE: contextvars.ContextVar[str] = contextvars.ContextVar("formulane_polars_numbers",
                                                           default="float")


#: True while a lambda body is compiled for ``list.eval`` (pl.element() context).
_ELEMENT: contextvars.ContextVar[bool] = contextvars.ContextVar("formulane_polars_element",
                                                               default=False)


DECIMAL_DTYPE = pl.Decimal(38, 18)


#: Decimal(38, 18) holds magnitudes below 1e20.
DECIMAL_LIMIT = 1e20


#: The scalar engine's bound on numbers (|x| < 1e308); float results beyond it are #NUM!.
FLOAT_LIMIT = 1e308


NULL_TEXT = pl.lit(None, dtype=pl.Utf8)


class Binder:
    """Sub-expressions computed once, as temporary columns (`formulane.apply` adds them level by
    level before the outputs and drops them after). Forms read an argument several times and
    polars expands a shared expression into a tree when it plans, so without binding nested
    calls grew the plan exponentially (eight levels per ROUND: depth 4 took 19 s to plan)."""

    def __init__(self, taken: Any) -> None:
        taken = set(taken)
        prefix = "_f"
        while any(n.startswith(prefix) for n in taken):
            prefix = "_" + prefix
        self.prefix = prefix
        self.bindings: list[tuple[str, pl.Expr]] = []

    def bind(self, e: pl.Expr) -> pl.Expr:
        name = f"{self.prefix}{len(self.bindings) + 1}"
        self.bindings.append((name, e.alias(name)))
        return pl.col(name)

    def stages(self) -> list[list[pl.Expr]]:
        """The bindings grouped so each group reads only the frame and earlier groups."""
        level: dict[str, int] = {}
        groups: list[list[pl.Expr]] = []
        for name, e in self.bindings:
            deps = [level[r] for r in e.meta.root_names() if r in level]
            level[name] = 1 + max(deps, default=0)
            while len(groups) < level[name]:
                groups.append([])
            groups[level[name] - 1].append(e)
        return groups

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.bindings]


_BINDER: contextvars.ContextVar[Binder | None] = contextvars.ContextVar(
    "formulane_polars_binder", default=None)


def let(e: pl.Expr) -> pl.Expr:
    """``e`` computed once (a temporary column) while `apply` binds, else ``e`` itself.
    Literals and plain columns are never bound; nor is anything inside ``list.eval``."""
    binder = _BINDER.get()
    if binder is None or _ELEMENT.get():
        return e
    meta = e.meta
    if meta.is_column() or meta.is_literal(allow_aliasing=True) or not meta.root_names():
        return e
    return binder.bind(e)


def special_name(name: str) -> bool:
    """True for a name `pl.col` would not take literally: ``*`` (every column) or ``^...$``
    (a regular expression over the column names)."""
    return name == "*" or (name.startswith("^") and name.endswith("$"))


def column(name: str) -> pl.Expr:
    """The column called exactly ``name``: never a regex or wildcard expansion (a column named
    ``^price.*$`` must not read ``price_secret``). A missing column is polars' own
    ColumnNotFoundError at collect time, as for `pl.col`."""
    if not special_name(name):
        return pl.col(name)
    import polars.selectors as cs

    return cs.by_name(name, require_all=True).as_expr()


#: The largest decimal scale: quotients and long products round half-even there.
MAX_SCALE = 18


def numbers() -> str:
    """The numeric mode of the program being translated: "float" or "decimal"."""
    return _MODE.get()


#: Every integer of at most this magnitude is a float64 exactly.
_EXACT_INTEGERS = 2.0 ** 53

_ORDER = {"<": pl.Expr.__lt__, "<=": pl.Expr.__le__, ">": pl.Expr.__gt__, ">=": pl.Expr.__ge__}


def integer_threshold(op: str, threshold: float) -> int | None:
    """The integer K with ``float(v) <op> threshold`` == ``v <op> K`` for every int64 v, for
    ``op`` one of < <= > >=; None when there is none to be sure of (NaN, |threshold| >= 2**53).

    Why it holds: converting an integer to float64 rounds monotonically (v <= w implies
    float(v) <= float(w)) and is exact up to 2**53 in magnitude. For ``>``: every v <= floor(t)
    has float(v) <= float(floor(t)) = floor(t) <= t, and every v >= floor(t) + 1 has float(v)
    >= floor(t) + 1 > t (floor(t) + 1 <= 2**53 is exact). ``>=`` and ``<`` take ceil(t), ``<=``
    floor(t), by the same argument. `tests/columnar/test_speed_int_compare.py` checks it over
    the int64 edges (2**53 +- k, int64 min/max) against the float comparison and the scalar
    engine."""
    if not (abs(threshold) < _EXACT_INTEGERS):  # also NaN
        return None
    if op in (">", "<="):
        return math.floor(threshold)
    if op in (">=", "<"):
        return math.ceil(threshold)
    raise ValueError(f"not an order comparison: {op!r}")


def threshold_compare(integers: pl.Expr | None, value: pl.Expr, op: str,
                      threshold: float) -> pl.Expr:
    """``value <op> threshold`` (op one of < <= > >=), where ``value`` is a float-mode value
    and ``threshold`` a float. ``integers``: the value's own integers when it is an integer
    column read (`Column.integers`, which a form gets from ``call.column(i)``): then the
    comparison runs on those integers against an integer (`integer_threshold`: the same
    answer on every row) instead of casting every row to Float64 first (10M rows of
    ``qty > 50``: 26 -> 21 ms). Inside ``list.eval`` the value is compared as it is."""
    bound = integer_threshold(op, threshold) if integers is not None else None
    if integers is None or bound is None or _ELEMENT.get():
        return _ORDER[op](value, threshold)
    return _ORDER[op](integers, pl.lit(bound, dtype=pl.Int64))


@dataclass(frozen=True)
class Column:
    """A compiled sub-expression. ``unchecked``: a float value that may be non-finite and has
    not been tested yet (float mode only; see the module docs)."""

    value: pl.Expr
    error: pl.Expr | None = None
    unchecked: bool = False
    type: Type | None = None  # the node's static type (set by the compiler)
    #: decimal mode: a float64 estimate of the value, carried alongside so overflow guards
    #: never have to repeat (and so re-expand) the decimal expression itself
    estimate: pl.Expr | None = None
    #: decimal mode: the scale of the value's Decimal(38, scale) dtype, when known
    scale: int | None = None
    #: decimal mode: an upper bound of |value| known from the dtypes (None: unknown)
    bound: float | None = None
    #: float mode, a read of an integer column whose every value is an int64: the column
    #: uncast (``value`` is exactly these integers as Float64), for forms that compare it
    #: with a constant as integers (`threshold_compare`); None otherwise. Set by the
    #: compiler's column read only; whatever computes a new value builds a new Column.
    integers: pl.Expr | None = None

    def error_or_null(self) -> pl.Expr:
        return self.error if self.error is not None else NULL_TEXT


def first_error(*errors: pl.Expr | None) -> pl.Expr | None:
    """The first non-null error code, left to right (None when no part can error)."""
    present = [e for e in errors if e is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return pl.coalesce(present)


def error_when(condition: pl.Expr, code: str) -> pl.Expr:
    # no `.otherwise(NULL_TEXT)`: the same Utf8 column with nulls elsewhere, and polars builds
    # it without materialising a broadcast null branch (~6% of a guarded float product)
    return pl.when(condition).then(pl.lit(code))


def not_finite(value: pl.Expr) -> pl.Expr:
    """Float values the scalar engine could not hold: NaN, infinities, |x| >= 1e308 (#NUM!)."""
    return error_when(~in_range(value), "#NUM!")


def in_range(value: pl.Expr) -> pl.Expr:
    """Whether a float is one the scalar engine can hold (|x| < 1e308). One range test
    (polars orders NaN above every number, so NaN is outside the range too), not
    ``abs(x) < 1e308``, which writes an absolute value column first."""
    return value.is_between(-FLOAT_LIMIT, FLOAT_LIMIT, closed="none")


def own_errors(spec: Any) -> pl.Expr | None:
    """A form's errors: an error-code expression, or ``[(condition, code), ...]`` checked in
    order (the first true condition names the error)."""
    if spec is None or isinstance(spec, pl.Expr):
        return spec
    chain: Any = None
    for condition, code in spec:
        chain = (pl.when(condition) if chain is None else chain.when(condition)).then(pl.lit(code))
    return None if chain is None else chain.otherwise(NULL_TEXT)


def literal(value: Any, t: Type) -> pl.Expr:
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        if numbers() == "decimal":
            return pl.lit(Decimal(value), dtype=DECIMAL_DTYPE)
        return pl.lit(float(value), dtype=pl.Float64)
    if value is None:
        return pl.lit(None, dtype=dtype_of(t))
    if isinstance(value, tuple):
        # a one-row Series literal, taken as a scalar so it broadcasts over the frame
        return pl.lit(pl.Series([[_plain(v) for v in value]], dtype=dtype_of(t))).first()
    return pl.lit(value)


def _fits_decimal(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_fits_decimal(v) for v in value)
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        magnitude = cast("Decimal | int", abs(value))  # abs() of the union is object to mypy
        return magnitude < DECIMAL_LIMIT
    return True


def _plain(value: Any) -> Any:
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        return Decimal(value) if numbers() == "decimal" else float(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def dtype_of(t: Type) -> pl.DataType:
    kind = t.kind
    if kind == "Number":
        return DECIMAL_DTYPE if numbers() == "decimal" else pl.Float64()
    if kind == "Text":
        return pl.Utf8()
    if kind == "Boolean":
        return pl.Boolean()
    if kind == "Date":
        return pl.Date()
    if kind == "DateTime":
        return pl.Datetime("us", "UTC")
    if kind == "Duration":
        return pl.Duration("us")
    if kind == "List":
        return pl.List(dtype_of(t.elem))  # type: ignore[arg-type]
    if kind == "Record":
        return pl.Struct({name: dtype_of(ft) for name, ft in t.fields})
    return pl.Null()


def number_dtype_cast(expr: pl.Expr, t: Type) -> pl.Expr:
    """A column read as the program's numbers (integers and other widths cast; a no-op when
    the column already has the dtype)."""
    if t.kind == "Number":
        return expr.cast(dtype_of(t))
    if t.kind == "List" and t.elem is not None and t.elem.kind == "Number":
        return expr.cast(pl.List(dtype_of(t.elem)))
    return expr


_TEXT_FORMS = ("Text", "Number", "Boolean", "Date")


_ZEROS = "0" * 40


def concat_any(*parts: pl.Expr) -> pl.Expr:
    return pl.concat_str(list(parts))


def to_text(value: pl.Expr, t: Type) -> pl.Expr:
    """A value as `&` and text coercions show it (`values.display_text`)."""
    kind = t.kind
    if kind == "Text":
        return value
    if kind == "Boolean":
        shown = pl.when(value).then(pl.lit("TRUE")).otherwise(pl.lit("FALSE"))
    elif kind == "Number":
        shown = general_text(value)
    elif kind == "Date":
        return value.dt.to_string("%Y-%m-%d")
    else:
        shown = None
    if shown is not None:
        # A blank stays blank (the checker follows with blank_to_text where it joins as "").
        return shown if not t.nullable else pl.when(value.is_not_null()).then(shown)
    raise Unsupported(f"polars cannot show {t} as text", function="&", backend="polars",
                      reason=f"{t} to text is not vectorized")


def general_text(value: pl.Expr) -> pl.Expr:
    """Excel's General format natively: 15 significant digits rounded half up, no exponent for
    magnitudes 1e-9 .. <1e15, else ``d.dddE+XX`` (as `values.general_text`).

    The digits come from the value's exact decimal text: a Decimal column's own digits, and for
    a float its shortest round-trip representation (the digits Python's ``repr`` shows), so the
    rounding is decimal rounding, never a binary approximation of it."""
    text = value.abs().cast(pl.Utf8)
    parts = text.str.split_exact("e", 1)
    mantissa = parts.struct.field("field_0")
    shift = parts.struct.field("field_1").cast(pl.Int64, strict=False).fill_null(0)
    halves = mantissa.str.split_exact(".", 1)
    int_part = halves.struct.field("field_0").str.strip_chars_start("0")
    frac_part = halves.struct.field("field_1").fill_null("")
    frac_digits = frac_part.str.strip_chars_start("0")
    has_int = int_part.str.len_chars() > 0
    exponent = pl.when(has_int).then(int_part.str.len_chars().cast(pl.Int64) - 1).otherwise(
        frac_digits.str.len_chars().cast(pl.Int64) - frac_part.str.len_chars().cast(pl.Int64) - 1
    ) + shift
    digits = pl.when(has_int).then(int_part + frac_part).otherwise(frac_digits) \
        .str.strip_chars_end("0")
    # (strict=False: a non-finite float's "inf" reaches here on rows already flagged #NUM!)
    head = digits.str.slice(0, 15).str.pad_end(15, "0").cast(pl.Int64, strict=False)
    round_up = digits.str.slice(15) >= pl.lit("5")
    mant = head + round_up.cast(pl.Int64)
    carry = mant >= 10**15
    mant = pl.when(carry).then(mant // 10).otherwise(mant)
    exponent = exponent + carry.cast(pl.Int64)
    sig = mant.cast(pl.Utf8).str.strip_chars_end("0")
    n = sig.str.len_chars().cast(pl.Int64)
    # Fixed notation.
    whole = pl.when(exponent >= 0).then(
        sig.str.slice(0, (exponent + 1).clip(lower_bound=0))
        + pl.lit(_ZEROS).str.slice(0, (exponent + 1 - n).clip(lower_bound=0))
    ).otherwise(pl.lit("0"))
    fraction = pl.when(exponent >= 0).then(sig.str.slice((exponent + 1).clip(lower_bound=0))) \
        .otherwise(pl.lit(_ZEROS).str.slice(0, (-exponent - 1).clip(lower_bound=0)) + sig)
    fixed = pl.when(fraction.str.len_chars() > 0).then(whole + pl.lit(".") + fraction) \
        .otherwise(whole)
    # Scientific notation.
    sci_mantissa = pl.when(n > 1).then(sig.str.slice(0, 1) + pl.lit(".") + sig.str.slice(1)) \
        .otherwise(sig)
    sci = sci_mantissa + pl.when(exponent < 0).then(pl.lit("E-")).otherwise(pl.lit("E+")) \
        + exponent.abs().cast(pl.Utf8).str.pad_start(2, "0")
    body = pl.when((exponent > -10) & (exponent < 15)).then(fixed).otherwise(sci)
    signed = pl.when(value < 0).then(pl.lit("-") + body).otherwise(body)
    return pl.when(digits.str.len_chars() == 0).then(pl.lit("0")).otherwise(signed)
