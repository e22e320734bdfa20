"""Polars forms of operators and lazy logic (see `forms`); each mirrors its scalar twin."""

from __future__ import annotations

from typing import Any

import polars as pl

from .polars import Column, first_error, numbers

_NO_ERROR = None


def _err(col: Column) -> pl.Expr:
    return col.error_or_null()


# ----------------------------------------------------------------------------------- numbers


def divide(a: pl.Expr, b: pl.Expr) -> Any:
    if numbers() == "decimal":
        a = a.cast(pl.Decimal(38, 18))
    return a / b, [(b == 0, "#DIV/0!")]


def arithmetic_checked(value: pl.Expr) -> Any:
    if numbers() == "float":
        return value, [(value.is_infinite(), "#NUM!")]
    return value


def add(a: pl.Expr, b: pl.Expr) -> Any:
    return arithmetic_checked(a + b)


def sub(a: pl.Expr, b: pl.Expr) -> Any:
    return arithmetic_checked(a - b)


def mul(a: pl.Expr, b: pl.Expr) -> Any:
    return arithmetic_checked(a * b)


def power(a: pl.Expr, b: pl.Expr) -> Any:
    base = a.cast(pl.Float64)
    exponent = b.cast(pl.Float64)
    value = base.pow(exponent)
    if numbers() == "decimal":
        value = value.cast(pl.Decimal(38, 18), strict=False)
    return value, [
        ((base == 0) & (exponent == 0), "#NUM!"),
        ((base == 0) & (exponent < 0), "#DIV/0!"),
        ((base < 0) & (exponent != exponent.floor()), "#NUM!"),
        (base.pow(exponent).abs() >= 1e308, "#NUM!"),
    ]


def percent(a: pl.Expr) -> Any:
    return a / 100


def date_plus_days(d: pl.Expr, n: pl.Expr) -> Any:
    return d + pl.duration(days=n.cast(pl.Int64))


def days_plus_date(n: pl.Expr, d: pl.Expr) -> Any:
    return date_plus_days(d, n)


def date_minus_days(d: pl.Expr, n: pl.Expr) -> Any:
    return d - pl.duration(days=n.cast(pl.Int64))


def date_diff(a: pl.Expr, b: pl.Expr) -> Any:
    days = (a - b).dt.total_days()
    return days.cast(pl.Decimal(38, 18)) if numbers() == "decimal" else days.cast(pl.Float64)


# -------------------------------------------------------------------------------- comparison


def text_compare(op: str) -> Any:
    def form(a: pl.Expr, b: pl.Expr) -> pl.Expr:
        left, right = a.str.to_lowercase(), b.str.to_lowercase()
        return {"=": left == right, "<>": left != right, "<": left < right,
                "<=": left <= right, ">": left > right, ">=": left >= right}[op]
    return form


def eq(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return a == b


def ne(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return a != b


def lt(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return a < b


def le(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return a <= b


def gt(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return a > b


def ge(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return a >= b


def text_eq(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return text_compare("=")(a, b)


def text_ne(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return text_compare("<>")(a, b)


def text_lt(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return text_compare("<")(a, b)


def text_le(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return text_compare("<=")(a, b)


def text_gt(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return text_compare(">")(a, b)


def text_ge(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return text_compare(">=")(a, b)


# ----------------------------------------------------------------------------- lazy logic


def if_(cond: Column, then: Column, otherwise: Column | None = None) -> Column:
    c = cond.value
    if otherwise is None:
        value = pl.when(c).then(then.value)
        other_error = None
    else:
        value = pl.when(c).then(then.value).otherwise(otherwise.value)
        other_error = otherwise.error
    if cond.error is None and then.error is None and other_error is None:
        return Column(value)
    error = pl.when(_err(cond).is_not_null()).then(_err(cond)).when(c).then(_err(then))
    if otherwise is not None:
        error = error.otherwise(_err(otherwise))
    return Column(value, error)


def ifs(*args: Column) -> Column:
    value: Any = None
    error: Any = None
    for i in range(0, len(args), 2):
        c, v = args[i], args[i + 1]
        value = (pl.when(c.value) if value is None else value.when(c.value)).then(v.value)
        if c.error is not None:
            error = (pl.when(c.error.is_not_null()) if error is None
                     else error.when(c.error.is_not_null())).then(c.error)
        error = (pl.when(c.value) if error is None else error.when(c.value)).then(_err(v))
    return Column(value, error.otherwise(pl.lit("#N/A")))


def op_and(a: Column, b: Column) -> Column:
    value = a.value & b.value
    if a.error is None and b.error is None:
        return Column(value)
    error = pl.when(_err(a).is_not_null()).then(_err(a)).when(a.value.not_()).then(
        pl.lit(None, dtype=pl.Utf8)).otherwise(_err(b))
    return Column(value, error)


def op_or(a: Column, b: Column) -> Column:
    value = a.value | b.value
    if a.error is None and b.error is None:
        return Column(value)
    error = pl.when(_err(a).is_not_null()).then(_err(a)).when(a.value).then(
        pl.lit(None, dtype=pl.Utf8)).otherwise(_err(b))
    return Column(value, error)


def and_(*args: Column) -> Column:
    result = args[0]
    for nxt in args[1:]:
        result = op_and(result, nxt)
    return result


def or_(*args: Column) -> Column:
    result = args[0]
    for nxt in args[1:]:
        result = op_or(result, nxt)
    return result


def coalesce_op(a: Column, b: Column) -> Column:
    value = pl.coalesce([a.value, b.value])
    if a.error is None and b.error is None:
        return Column(value)
    error = pl.when(_err(a).is_not_null()).then(_err(a)).when(a.value.is_null()).then(_err(b))
    return Column(value, error)


def coalesce(*args: Column) -> Column:
    result = args[0]
    for nxt in args[1:]:
        result = coalesce_op(result, nxt)
    return result


def iferror(value: Column, fallback: Column) -> Column:
    if value.error is None:
        return value
    out = pl.when(value.error.is_null()).then(value.value).otherwise(fallback.value)
    error = None if fallback.error is None else pl.when(value.error.is_not_null()).then(
        fallback.error)
    return Column(out, error)


def ifna(value: Column, fallback: Column) -> Column:
    if value.error is None:
        return value
    is_na = value.error == "#N/A"
    out = pl.when(is_na).then(fallback.value).otherwise(value.value)
    error = pl.when(is_na).then(_err(fallback)).otherwise(value.error)
    return Column(out, error)


def choose(index: Column, *values: Column) -> Column:
    i = index.value.cast(pl.Int64)
    value: Any = None
    error: Any = None
    for n, v in enumerate(values, start=1):
        value = (pl.when(i == n) if value is None else value.when(i == n)).then(v.value)
        error = (pl.when(i == n) if error is None else error.when(i == n)).then(_err(v))
    error = error.otherwise(pl.lit("#VALUE!"))
    return Column(value, first_error(index.error, error))


def switch(subject: Column, *args: Column) -> Column:
    pairs = len(args) - len(args) % 2
    value: Any = None
    error: Any = None
    s = subject.value
    for i in range(0, pairs, 2):
        match = s == args[i].value
        value = (pl.when(match) if value is None else value.when(match)).then(args[i + 1].value)
        error = (pl.when(match) if error is None else error.when(match)).then(_err(args[i + 1]))
    if len(args) % 2:
        value = value.otherwise(args[-1].value)
        error = error.otherwise(_err(args[-1]))
    else:
        error = error.otherwise(pl.lit("#N/A"))
    return Column(value, first_error(subject.error, error))


def ifblank(value: Column, fallback: Column) -> Column:
    return coalesce_op(value, fallback)


def xor(*args: pl.Expr) -> pl.Expr:
    total = pl.sum_horizontal([a.cast(pl.Int64) for a in args])
    return (total % 2) == 1


def error(message: pl.Expr) -> Any:
    return pl.lit(None, dtype=pl.Null), pl.lit("#ERROR!")


def blank() -> pl.Expr:
    return pl.lit(None)


def not_(a: pl.Expr) -> pl.Expr:
    return a.not_()


def concat_text(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return pl.concat_str([a, b])
