"""Polars forms of the operators and of the logic functions; each mirrors its scalar twin.

Contract: the forms of `polars_table` marked for this module (``style="call"``), called by the
polars compiler as ``form(call, *values)``: `columnar.call.FormCall` first (the numeric mode,
the arguments' types and constants, read from the checked IR), then the arguments' compiled
values, or their columns for lazy functions. No form reads a constant back out of a built
expression: a literal operand is known through ``call.const``. ``number_compare`` is the form
of a comparison of two numbers (`forms.form_for`); ``power`` is also the helper of POWER.
Importing this imports polars and the compiler.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal
from typing import Any

import polars as pl

from ...call import MISSING, FormCall
from ...polars.kit import (DECIMAL_DTYPE, FLOAT_LIMIT, Column, first_error, numbers,
                           threshold_compare)

_NO_ERROR = None


def _err(col: Column) -> pl.Expr:
    return col.error_or_null()


# ----------------------------------------------------------------------------------- numbers

#: Decimal(38, 18) holds |x| < 1e20; a row whose result would not fit is #NUM! and its operands
#: are masked before polars computes it (polars aborts the whole query on a decimal overflow).
#: The test runs in float64 with a margin, so no row can slip past it and abort the query.
_DECIMAL_FIT = 1e20 * (1 - 1e-12)


def _f(e: pl.Expr) -> pl.Expr:
    return e.cast(pl.Float64)


def _decimal_guarded(a: pl.Expr, b: pl.Expr, estimate: pl.Expr,
                     op: Any) -> tuple[pl.Expr, list[tuple[pl.Expr, str]]]:
    over = estimate.abs() >= _DECIMAL_FIT
    return op(a, pl.when(~over).then(b)), [(over, "#NUM!")]


def divide(call: FormCall, a: pl.Expr, b: pl.Expr) -> Any:
    if call.numbers == "decimal":
        a = a.cast(DECIMAL_DTYPE)
        zero = b == 0
        over = (_f(a) / _f(b)).abs() >= _DECIMAL_FIT
        # polars aborts the query on a decimal division by zero: mask the divisor first.
        return a / pl.when(~(zero | over)).then(b), [(zero, "#DIV/0!"), (over, "#NUM!")]
    divisor = _known_float(call.const(1))
    if divisor is not None and divisor != 0:
        # a constant divisor that is not 0 (as the float its literal is): no row divides by
        # zero, and the error left is the result's own range test, which `apply` runs as its
        # own step after the value (`PolarsForm.range_only`), where the constant's zero test
        # made the value and the error share `x / 12`, which polars' common-subexpression
        # elimination split (1M rows, the plan alone: 0.88 -> 0.80 ms, bare 0.45 ms)
        return a / b
    return a / b, [(b == 0, "#DIV/0!")]


def add(call: FormCall, a: pl.Expr, b: pl.Expr) -> Any:
    if call.numbers == "decimal":
        return _decimal_guarded(a, b, _f(a) + _f(b), lambda x, y: x + y)
    return a + b


def sub(call: FormCall, a: pl.Expr, b: pl.Expr) -> Any:
    if call.numbers == "decimal":
        return _decimal_guarded(a, b, _f(a) - _f(b), lambda x, y: x - y)
    return a - b


def _product(a: pl.Expr, b: pl.Expr) -> Any:
    if numbers() == "decimal":
        return _decimal_guarded(a, b, _f(a) * _f(b), lambda x, y: x * y)
    return a * b


def mul(call: FormCall, a: pl.Expr, b: pl.Expr) -> Any:
    return _product(a, b)


def _small_integer(value: Any) -> int | None:
    """A known exponent 1..8 (``x ^ 2`` is an exact decimal product), else None."""
    if value is MISSING or value is None or isinstance(value, (bool, str, tuple)):
        return None
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return n if n == value and 1 <= n <= 8 else None


def power_op(call: FormCall, a: pl.Expr, b: pl.Expr) -> Any:
    """``^``: its exponent known through the call when it is a constant."""
    return power(a, b, call.const(1))


def power(a: pl.Expr, b: pl.Expr, exponent: Any) -> Any:
    """``a ^ b`` (also POWER's form): ``exponent`` is b's value when known (`FormCall.const`,
    `MISSING` when not); a whole exponent 1..8 in decimal mode is an exact product."""
    n = _small_integer(exponent) if numbers() == "decimal" else None
    if n is not None:
        # x ^ 2, x ^ 3...: exact decimal products (each step guarded like `*`)
        value, errors = a, []
        for _ in range(n - 1):
            value, step = _product(value, a)
            errors += step
        return value, errors
    base = a.cast(pl.Float64)
    exponent_f = b.cast(pl.Float64)
    raw = base.pow(exponent_f)
    errors = [
        ((base == 0) & (exponent_f == 0), "#NUM!"),
        ((base == 0) & (exponent_f < 0), "#DIV/0!"),
        ((base < 0) & (exponent_f != exponent_f.floor()), "#NUM!"),
    ]
    if numbers() == "decimal":
        fits = raw.abs() < _DECIMAL_FIT
        errors.append((~fits, "#NUM!"))
        return pl.when(fits).then(raw).cast(DECIMAL_DTYPE, strict=False), errors
    errors.append((~(raw.abs() < FLOAT_LIMIT), "#NUM!"))
    return raw, errors


def percent(call: FormCall, a: pl.Expr) -> Any:
    return a / 100


def _date_checked(value: pl.Expr) -> Any:
    year = value.dt.year()
    return value, [((year < 1) | (year > 9999), "#NUM!")]


def date_plus_days(call: FormCall, d: pl.Expr, n: pl.Expr) -> Any:
    return _date_checked(d + pl.duration(days=n.cast(pl.Int64, strict=False)))


def days_plus_date(call: FormCall, n: pl.Expr, d: pl.Expr) -> Any:
    return date_plus_days(call, d, n)


def date_minus_days(call: FormCall, d: pl.Expr, n: pl.Expr) -> Any:
    return _date_checked(d - pl.duration(days=n.cast(pl.Int64, strict=False)))


def date_diff(call: FormCall, a: pl.Expr, b: pl.Expr) -> Any:
    days = (a - b).dt.total_days()
    return days.cast(DECIMAL_DTYPE) if call.numbers == "decimal" else days.cast(pl.Float64)


# -------------------------------------------------------------------------------- comparison


def _text_compare(op: str, call: FormCall, a: pl.Expr, b: pl.Expr) -> pl.Expr:
    if op in ("=", "<>"):
        for column, known in ((a, call.const(1)), (b, call.const(0))):
            fast = _equals_ascii_literal(column, known)
            if fast is not None:
                return fast if op == "=" else ~fast
    left, right = a.str.to_lowercase(), b.str.to_lowercase()
    return {"=": left == right, "<>": left != right, "<": left < right,
            "<=": left <= right, ">": left > right, ">=": left >= right}[op]


#: Characters other than the letter itself whose Python ``lower()`` is an ASCII letter (the
#: Kelvin sign lowers to k); tests/test_vectorized.py checks this against all of Unicode.
_EXTRA_LOWER = {"k": "\u212a"}


@functools.lru_cache(maxsize=1)
def _ascii_case_classes() -> dict[str, str]:
    """For each ASCII letter, every character whose Python ``lower()`` is that letter: a regex
    built from these matches exactly the texts the scalar engine's ``a.lower() == b.lower()``
    calls equal to an ASCII literal."""
    import string

    return {c: "[" + re.escape(c + c.upper() + _EXTRA_LOWER.get(c, "")) + "]"
            for c in string.ascii_lowercase}


def _equals_ascii_literal(column: pl.Expr, value: Any) -> pl.Expr | None:
    """Case-insensitive equality with a constant ASCII text ``value`` (`FormCall.const`)
    without lowercasing every row (which costs polars far more than a match): exact equality
    when the text has no letters, else an anchored regex of exact case classes."""
    if not isinstance(value, str) or not value.isascii():
        return None
    if not any(c.isalpha() for c in value):
        return column == pl.lit(value)
    classes = _ascii_case_classes()
    pattern = "".join(classes[c.lower()] if c.isalpha() else re.escape(c) for c in value)
    return column.str.contains("^(?s:" + pattern + ")$")


#: Float mode compares numbers to 15 significant digits, as Excel does (0.1 + 0.2 = 0.3 is
#: TRUE): two floats within a relative 1e-15 of each other are equal. Decimal mode is exact.
EPSILON = 1e-15


def _known_float(value: Any) -> float | None:
    """A constant number operand (`FormCall.const`) as the float its literal is in float
    mode (a cheap comparison bound), else None."""
    if value is MISSING or isinstance(value, bool) \
            or not isinstance(value, (int, float, Decimal)):
        return None
    return float(value)


def _near(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return (a == b) | ((a - b).abs() <= EPSILON * pl.max_horizontal(a.abs(), b.abs()))


def _bounds(c: float) -> tuple[float, float]:
    """[lo, hi]: the floats within 1e-15 of literal c (relative to the larger magnitude)."""
    if c > 0:
        return c * (1 - EPSILON), c / (1 - EPSILON)
    if c < 0:
        return c / (1 - EPSILON), c * (1 - EPSILON)
    return 0.0, 0.0


_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _float_compare(op: str, a: pl.Expr, b: pl.Expr, ka: float | None = None,
                   kb: float | None = None, ia: pl.Expr | None = None,
                   ib: pl.Expr | None = None) -> pl.Expr:
    """``a op b`` within Excel's tolerance; ``ka``/``kb``: an operand's known value;
    ``ia``/``ib``: an operand's own integers when it reads an integer column
    (`Column.integers`: compared as integers, `kit.threshold_compare`)."""
    c = kb
    if c is not None and c == c:
        def cmp(o: str, t: float) -> pl.Expr:
            return threshold_compare(ia, a, o, t)
        if c == 0:  # only 0 is within 1e-15 of 0
            if op == "=":
                return a == 0
            if op == "<>":
                return a != 0
            return cmp(op, 0.0)
        lo, hi = _bounds(c)
        if op == "=":
            return cmp(">=", lo) & cmp("<=", hi)
        if op == "<>":
            return cmp("<", lo) | cmp(">", hi)
        return cmp(op, {"<": lo, "<=": hi, ">": hi, ">=": lo}[op])
    if ka is not None and ka == ka:
        return _float_compare(_FLIPPED[op], b, a, None, ka, ib, ia)
    near = _near(a, b)
    return {"=": near, "<>": ~near, "<": (a < b) & ~near, "<=": (a <= b) | near,
            ">": (a > b) & ~near, ">=": (a >= b) | near}[op]


def number_compare(call: FormCall, op: str, a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """``a op b`` on two numbers (the table binds ``op``): float mode within the scalar
    engine's tolerance, decimal mode exactly."""
    if call.numbers == "float":
        return _float_compare(op, a, b, _known_float(call.const(0)),
                              _known_float(call.const(1)), _integers(call, 0),
                              _integers(call, 1))
    return _ORDER[op](a, b)


def _integers(call: FormCall, i: int) -> pl.Expr | None:
    """Argument ``i``'s own integers when it reads an integer column (`Column.integers`)."""
    col = call.column(i)
    return col.integers if isinstance(col, Column) else None


_ORDER = {"=": pl.Expr.__eq__, "<>": pl.Expr.__ne__, "<": pl.Expr.__lt__,
          "<=": pl.Expr.__le__, ">": pl.Expr.__gt__, ">=": pl.Expr.__ge__}


def compare(call: FormCall, op: str, a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """``a op b`` on two dates, date-times, durations or booleans (the table binds ``op``)."""
    return _ORDER[op](a, b)


def text_compare(call: FormCall, op: str, a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """``a op b`` on two texts, case-insensitive as Excel compares (the table binds ``op``)."""
    return _text_compare(op, call, a, b)


# ----------------------------------------------------------------------------- lazy logic


def _branch(value: pl.Expr, like: pl.Expr, *others: Any) -> pl.Expr:
    """A literal branch as a full-length column when every branch is a literal: polars (2.1)
    returns such a when/then whose mask is all true as its one-row literal, which then fails to
    broadcast in a comparison of two literals (``"" = IF(flag, "", "")``). One column branch is
    enough to give the result its length, so the common case costs nothing. The length comes
    from ``like`` (the condition, a column) row by row: ``pl.repeat(value, pl.len())`` would
    need the whole frame's length and stop the streaming engine from streaming."""
    if value.meta.is_literal() and not _in_element_context() and all(
            o is None or (o.value if isinstance(o, Column) else o).meta.is_literal()
            for o in others):
        if like.meta.is_literal():
            return value
        # a column of `like`'s length, batch by batch (replace_strict and pl.repeat would not
        # stream either)
        return pl.when(like.is_null()).then(value).otherwise(value)
    return value


def _in_element_context() -> bool:
    from ...polars.kit import _ELEMENT

    return _ELEMENT.get()


def if_(call: FormCall, cond: Column, then: Column, otherwise: Column | None = None) -> Column:
    c = cond.value
    if otherwise is None:
        value: pl.Expr = pl.when(c).then(_branch(then.value, c, None))
        other_error = None
    else:
        value = pl.when(c).then(_branch(then.value, c, otherwise)).otherwise(otherwise.value)
        other_error = otherwise.error
    if cond.error is None and then.error is None and other_error is None:
        return Column(value)
    chained = pl.when(_err(cond).is_not_null()).then(_err(cond)).when(c).then(_err(then))
    error: pl.Expr = chained if otherwise is None else chained.otherwise(_err(otherwise))
    return Column(value, error)


def ifs(call: FormCall, *args: Column) -> Column:
    value: Any = None
    error: Any = None
    for i in range(0, len(args), 2):
        c, v = args[i], args[i + 1]
        value = (pl.when(c.value) if value is None else value.when(c.value)).then(
            _branch(v.value, c.value, *args[1::2]))
        if c.error is not None:
            error = (pl.when(c.error.is_not_null()) if error is None
                     else error.when(c.error.is_not_null())).then(c.error)
        error = (pl.when(c.value) if error is None else error.when(c.value)).then(_err(v))
    return Column(value, error.otherwise(pl.lit("#N/A")))


def op_and(call: FormCall, a: Column, b: Column) -> Column:
    value = a.value & b.value
    if a.error is None and b.error is None:
        return Column(value)
    error = pl.when(_err(a).is_not_null()).then(_err(a)).when(a.value.not_()).then(
        pl.lit(None, dtype=pl.Utf8)).otherwise(_err(b))
    return Column(value, error)


def op_or(call: FormCall, a: Column, b: Column) -> Column:
    value = a.value | b.value
    if a.error is None and b.error is None:
        return Column(value)
    error = pl.when(_err(a).is_not_null()).then(_err(a)).when(a.value).then(
        pl.lit(None, dtype=pl.Utf8)).otherwise(_err(b))
    return Column(value, error)


def and_(call: FormCall, *args: Column) -> Column:
    result = args[0]
    for nxt in args[1:]:
        result = op_and(call, result, nxt)
    return result


def or_(call: FormCall, *args: Column) -> Column:
    result = args[0]
    for nxt in args[1:]:
        result = op_or(call, result, nxt)
    return result


def coalesce_op(call: FormCall, a: Column, b: Column) -> Column:
    value = pl.coalesce([a.value, b.value])
    if a.error is None and b.error is None:
        return Column(value)
    error = pl.when(_err(a).is_not_null()).then(_err(a)).when(a.value.is_null()).then(_err(b))
    return Column(value, error)


def coalesce(call: FormCall, *args: Column) -> Column:
    result = args[0]
    for nxt in args[1:]:
        result = coalesce_op(call, result, nxt)
    return result


def iferror(call: FormCall, value: Column, fallback: Column) -> Column:
    if value.error is None:
        return value
    out = pl.when(value.error.is_null()).then(value.value).otherwise(fallback.value)
    error = None if fallback.error is None else pl.when(value.error.is_not_null()).then(
        fallback.error)
    return Column(out, error)


def ifna(call: FormCall, value: Column, fallback: Column) -> Column:
    if value.error is None:
        return value
    is_na = value.error == "#N/A"
    out = pl.when(is_na).then(fallback.value).otherwise(value.value)
    error = pl.when(is_na).then(_err(fallback)).otherwise(value.error)
    return Column(out, error)


def choose(call: FormCall, index: Column, *values: Column) -> Column:
    i = index.value.cast(pl.Int64, strict=False)
    value: Any = None
    error: Any = None
    for n, v in enumerate(values, start=1):
        value = (pl.when(i == n) if value is None else value.when(i == n)).then(
            _branch(v.value, i, *values))
        error = (pl.when(i == n) if error is None else error.when(i == n)).then(_err(v))
    error = error.otherwise(pl.lit("#VALUE!"))
    return Column(value, first_error(index.error, error))


def switch(call: FormCall, subject: Column, *args: Column) -> Column:
    """SWITCH: the scalar form compares Text ignoring case (as `=` does). The candidates are
    compared in order; a candidate's error stops the search where the scalar form would."""
    pairs = len(args) - len(args) % 2
    value: Any = None
    error: Any = None
    s = subject.value
    text = subject.type is not None and subject.type.kind == "Text"
    if text:
        s = s.str.to_lowercase()
    for i in range(0, pairs, 2):
        fast = _equals_ascii_literal(subject.value, call.const(1 + i)) if text else None
        if fast is not None:
            match = fast.fill_null(False)
        else:
            candidate = args[i].value.str.to_lowercase() if text else args[i].value
            match = s.eq_missing(candidate)  # the scalar form: blank matches blank
        candidate_error = args[i].error
        if candidate_error is not None:
            # an erroring candidate ends the search with its error (scalar: left to right)
            value = (pl.when(candidate_error.is_not_null()) if value is None
                     else value.when(candidate_error.is_not_null())).then(None)
            error = (pl.when(candidate_error.is_not_null()) if error is None
                     else error.when(candidate_error.is_not_null())).then(candidate_error)
        value = (pl.when(match) if value is None else value.when(match)).then(
            _branch(args[i + 1].value, match, *args[1:pairs:2],
                    *(args[-1:] if len(args) % 2 else ())))
        error = (pl.when(match) if error is None else error.when(match)).then(_err(args[i + 1]))
    if len(args) % 2:
        value = value.otherwise(args[-1].value)
        error = error.otherwise(_err(args[-1]))
    else:
        error = error.otherwise(pl.lit("#N/A"))
    return Column(value, first_error(subject.error, error))


def ifblank(call: FormCall, value: Column, fallback: Column) -> Column:
    return coalesce_op(call, value, fallback)


def xor(call: FormCall, *args: pl.Expr) -> pl.Expr:
    total = pl.sum_horizontal([a.cast(pl.Int64) for a in args])
    return (total % 2) == 1


def error(call: FormCall, message: pl.Expr) -> Any:
    return pl.lit(None, dtype=pl.Null), pl.lit("#ERROR!")


def blank(call: FormCall) -> pl.Expr:
    return pl.lit(None)


def not_(call: FormCall, a: pl.Expr) -> pl.Expr:
    return a.not_()


def concat_text(call: FormCall, a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return pl.concat_str([a, b])


def neg(call: FormCall, a: pl.Expr) -> pl.Expr:
    return -a


def pos(call: FormCall, a: pl.Expr) -> pl.Expr:
    return a


def true_(call: FormCall) -> pl.Expr:
    return pl.lit(True)


def false_(call: FormCall) -> pl.Expr:
    return pl.lit(False)
