"""Text forms of the functions that build or read texts: CONCAT CONCATENATE TEXTJOIN
ENCODEURL REPT SUBSTITUTE REPLACE, VALUE NUMBERVALUE, and TEXT (number and logical formats).

Contract: a result whose length cannot be bounded when compiling is refused unless every
argument is a literal (then it is folded through the scalar implementation); TEXT has native
forms for ``0``/``#,##0`` formats with up to 9 decimals, ``%`` and ``General`` only.
"""

from __future__ import annotations

from typing import Any, Callable

from sqlglot import exp

from ...sql.dialects import NUMBER_TEXT, marked
from ...sql.kit import dtype
from ...call import FormCall
from ._base import (
    L, LIMIT, _NOT, _PAST_A_LIMIT, _add, _all_const, _case, _cat, _eq, _f, _fold, _folded_or, _ge, _grows, _gt, _int,
    _length, _let, _lt, _p, _pl_int, _pl_text, _sql_int, _sub, _substr, _vp, pl,
)


# ===================================================================== growing texts



def growing(call: FormCall, *args: Any) -> Any:
    """CONCAT, CONCATENATE and TEXTJOIN on both backends: folded when every argument is a
    constant, else refused (the result's length is not bounded when compiling)."""
    return _folded_or(call, _grows())


def polars_encodeurl(call: FormCall, text: Any) -> Any:
    return _folded_or(call, "percent-encoding has no polars "
                      "expression, and it can grow a text up to 12-fold past the text limit; "
                      "literal arguments are folded")


def sql_encodeurl(call: FormCall, text: Any) -> Any:
    return _folded_or(call, "percent-encoding has no portable SQL "
                      "function, and it can grow a text up to 12-fold past the text limit; "
                      "literal arguments are folded")


def _rept(call: FormCall) -> Any:
    folded = _fold(call)
    if folded is not _NOT:
        return folded
    t, k = call.const(0), call.const(1)
    if t == "":
        return "empty"
    if k is not _NOT and k is not None and _int(k) <= 1:
        return "at most once"
    if _all_const(call):  # folding stopped at a limit
        call.refuse(_PAST_A_LIMIT)
    call.refuse("the repetition count must be a literal 0 or 1 unless the text is "
            "a literal (" + _grows() + ")")


def polars_rept(call: FormCall, text: Any, n: Any) -> Any:
    plan = _rept(call)
    if not isinstance(plan, str):
        return plan
    if plan == "empty":
        return _pl_text(""), [(n < 0, "#VALUE!")]
    return pl.when(n >= 1).then(text).otherwise(_pl_text("")), [(n < 0, "#VALUE!")]


def sql_rept(call: FormCall, text: Any, n: Any) -> Any:
    plan = _rept(call)
    if not isinstance(plan, str):
        return plan
    bad = [(_lt(n, L.number(0)), "#VALUE!")]
    if plan == "empty":
        return L.string(""), bad
    return _case([(_ge(n, L.number(1)), text.copy())], L.string("")), bad


def _substitute_plan(call: FormCall) -> Any:
    folded = _fold(call)
    if folded is not _NOT:
        return folded
    old, new = call.const(1), call.const(2)
    if not isinstance(old, str) or not isinstance(new, str):
        call.refuse("old_text and new_text must be literals (the result's "
                "length must be bounded when compiling)")
    if old and len(new) > len(old):
        call.refuse("new_text is longer than old_text: " + _grows())
    return old, new


def polars_substitute(call: FormCall, text: Any, old: Any, new: Any, instance: Any = None) -> Any:
    plan = _substitute_plan(call)
    if not isinstance(plan, tuple) or len(plan) != 2 or not isinstance(plan[0], str):
        return plan
    o, w = plan
    if instance is None:
        return text if not o else text.str.replace_all(o, w, literal=True)
    errors = [(instance < 1, "#VALUE!")]
    if not o:
        return text, errors
    k = _pl_int(instance.clip(lower_bound=1))
    parts = text.str.split(o)
    head = parts.list.slice(0, k).list.join(o)
    tail = parts.list.slice(k).list.join(o)
    value = pl.when(parts.list.len() > k).then(pl.concat_str([head, _pl_text(w), tail])) \
        .otherwise(text)
    return value, errors


def sql_substitute(call: FormCall, text: Any, old: Any, new: Any, instance: Any = None) -> Any:
    plan = _substitute_plan(call)
    if not isinstance(plan, tuple) or len(plan) != 2 or not isinstance(plan[0], str):
        return plan
    o, w = plan
    if instance is None:
        return text if not o else _f("REPLACE", text.copy(), L.string(o), L.string(w))
    errors = [(_lt(instance, L.number(1)), "#VALUE!")]
    if not o:
        return text, errors
    k = _f("GREATEST", _sql_int(instance), L.number(1))
    parts = _f("STRING_SPLIT", text.copy(), L.string(o))
    size = exp.ArraySize(this=parts.copy())
    head = _f("ARRAY_TO_STRING", _f("LIST_SLICE", parts.copy(), L.number(1), k.copy()),
              L.string(o))
    tail = _f("ARRAY_TO_STRING", _f("LIST_SLICE", parts.copy(), _add(k.copy(), L.number(1)),
                                    size.copy()), L.string(o))
    value = _case([(_gt(size, k.copy()), _cat(head, L.string(w), tail))], text.copy())
    return value, errors


def _replace_plan(call: FormCall) -> Any:
    folded = _fold(call)
    if folded is not _NOT:
        return folded
    t, s, k, w = (call.const(i) for i in range(4))
    if isinstance(t, str) and isinstance(w, str):
        if len(t) + len(w) <= LIMIT:
            return None
    elif all(v is not _NOT and v is not None for v in (s, k)) and isinstance(w, str):
        start, count = _int(s), _int(k)
        if start < 1 or count < 0 or len(w) <= min(count, max(0, LIMIT - start + 1)):
            return None  # every row an error, or the result never outgrows the text
    call.refuse("start_num, num_chars and new_text must be literals with "
            "new_text no longer than the characters it replaces (" + _grows() + ")")


def polars_replace(call: FormCall, text: Any, start: Any, n: Any, new: Any) -> Any:
    plan = _replace_plan(call)
    if plan is not None:
        return plan
    s = _pl_int(start.clip(lower_bound=1))
    k = _pl_int(n.clip(lower_bound=0))
    value = pl.concat_str([text.str.slice(0, s - 1), new, text.str.slice(s - 1 + k)])
    return value, [(start < 1, "#VALUE!"), (n < 0, "#VALUE!")]


def sql_replace(call: FormCall, text: Any, start: Any, n: Any, new: Any) -> Any:
    plan = _replace_plan(call)
    if plan is not None:
        return plan
    s = _f("GREATEST", _sql_int(start), L.number(1))
    k = _f("GREATEST", _sql_int(n), L.number(0))
    value = _cat(_substr(text, L.number(1), _sub(s, L.number(1))), new.copy(),
                 _substr(text, _add(s.copy(), k)))
    return value, [(_lt(start, L.number(1)), "#VALUE!"), (_lt(n, L.number(0)), "#VALUE!")]


# ----------------------------------------------------------------------- conversions

_READS_NUMBERS = ("Excel's reading of a number in a text (currency, accounting negatives, "
                  "groups of three, mixed fractions, times, 34-digit decimals) has no exact "
                  "native equivalent; literal arguments are folded")


def polars_value(call: FormCall, text: Any) -> Any:
    return _folded_or(call, _READS_NUMBERS)


def sql_value(call: FormCall, text: Any) -> Any:
    return _folded_or(call, _READS_NUMBERS)


def polars_numbervalue(call: FormCall, *args: Any) -> Any:
    return _folded_or(call, _READS_NUMBERS)


def sql_numbervalue(call: FormCall, *args: Any) -> Any:
    return _folded_or(call, _READS_NUMBERS)


# ========================================================================== TEXT


class _Format:
    """A number format TEXT reproduces natively: ``0``, ``#,##0``, with 1-9 decimals and an
    optional ``%`` (``0.00``, ``#,##0.00``, ``0.0%``...), or ``General``."""

    def __init__(self, fmt: str) -> None:
        import re

        self.general = fmt.lower() == "general"
        m = re.fullmatch(r"(#,##)?0(?:\.(0{1,9}))?(%)?", fmt)
        if not self.general and not m:
            raise ValueError(fmt)
        self.grouping = bool(m and m.group(1))
        self.decimals = len(m.group(2) or "") if m else 0
        self.percent = bool(m and m.group(3))


def _format_plan(call: FormCall) -> Any:
    folded = _fold(call)
    if folded is not _NOT:
        return folded
    if _all_const(call):  # folding stopped at a limit: say so, not that the format is odd
        call.refuse(_PAST_A_LIMIT)
    fmt = call.const(1)
    if not isinstance(fmt, str):
        call.refuse("format_text must be a literal")
    try:
        return _Format(fmt)
    except ValueError:
        call.refuse(f"the format {fmt!r} is not one of those reproduced natively "
                "(0, #,##0, with up to 9 decimals, optionally %; General)")


_ZEROS = "0" * 400


def _pl_scaled_digits(value: Any, f: _Format) -> tuple[Any, Any]:
    """(integer digits, decimals) of |value|, rounded as the scalar engine rounds: to 15
    significant digits (half up), times 100 for %, then to the format's decimals (half up),
    all on the value's exact decimal text (a float's shortest repr)."""
    text = value.abs().cast(pl.Utf8)
    parts = text.str.split_exact("e", 1)
    shift = parts.struct.field("field_1").str.strip_chars_start("+") \
        .cast(pl.Int64, strict=False).fill_null(0)
    halves = parts.struct.field("field_0").str.split_exact(".", 1)
    whole = halves.struct.field("field_0")
    digits = whole + halves.struct.field("field_1").fill_null("")
    sig = digits.str.strip_chars_start("0")
    # |value| = 0.<sig> x 10^point
    point = whole.str.len_chars().cast(pl.Int64) + shift \
        - (digits.str.len_chars().cast(pl.Int64) - sig.str.len_chars().cast(pl.Int64))
    head = sig.str.slice(0, 15).str.pad_end(15, "0").cast(pl.Int64, strict=False).fill_null(0)
    mant = head + (sig.str.slice(15, 1) >= pl.lit("5")).cast(pl.Int64)
    carry = mant >= 10 ** 15
    mant = pl.when(carry).then(mant // 10).otherwise(mant)
    point = point + carry.cast(pl.Int64) + (2 if f.percent else 0)
    # value x 10^decimals = mant x 10^s
    s = point - 15 + f.decimals
    up = s.clip(lower_bound=0)
    big = mant.cast(pl.Utf8) + pl.lit(_ZEROS).str.slice(0, up)
    d = (-s).clip(1, 17)
    kept = mant // pl.lit(10, dtype=pl.Int64).pow(d)
    first_dropped = (mant // pl.lit(10, dtype=pl.Int64).pow(d - 1)) % 10
    small = (kept + (first_dropped >= 5).cast(pl.Int64)).cast(pl.Utf8)
    scaled = pl.when(sig.str.len_chars() == 0).then(pl.lit("0")) \
        .when(s >= 0).then(big).otherwise(small)
    if not f.decimals:
        return scaled.str.strip_chars_start("0"), None
    padded = scaled.str.pad_start(f.decimals + 1, "0")
    n = padded.str.len_chars().cast(pl.Int64)
    return (padded.str.slice(0, n - f.decimals).str.strip_chars_start("0"),
            padded.str.slice(n - f.decimals))


def _pl_group(int_digits: Any) -> Any:
    reversed_ = int_digits.str.reverse()  # ASCII digits: graphemes are characters here
    return reversed_.str.replace_all("([0-9]{3})", "${1},").str.strip_chars_end(",") \
        .str.reverse()


def polars_text(call: FormCall, value: Any, fmt: Any) -> Any:
    plan = _format_plan(call)
    if not isinstance(plan, _Format):
        return plan
    if plan.general:
        return _vp.general_text(value)
    int_digits, decimals = _pl_scaled_digits(value, plan)
    int_digits = pl.when(int_digits == "").then(pl.lit("0")).otherwise(int_digits)
    if plan.grouping:
        int_digits = _pl_group(int_digits)
    # Excel shows no minus on a number that shows as zero (TEXT(-1/3, "0") is "0").
    shown = int_digits if decimals is None else int_digits + decimals
    nonzero = shown.str.strip_chars("0,") != ""
    parts = [pl.when((value < 0) & nonzero).then(pl.lit("-")).otherwise(pl.lit("")),
             int_digits]
    if decimals is not None:
        parts += [pl.lit("."), decimals]
    if plan.percent:
        parts.append(pl.lit("%"))
    return pl.concat_str(parts)


def _sql_scaled_digits(value: Any, f: _Format,
                       finish: Callable[[Any, Any], Any]) -> Any:
    """`_pl_scaled_digits` in SQL (a DOUBLE's VARCHAR is its shortest repr, a DECIMAL's its
    own digits): ``finish(integer digits, decimals or None)`` builds the text; the steps
    bind their intermediate values once (`_let`)."""
    big_int = dtype("BIGINT")
    varchar = dtype("VARCHAR")
    # parsed as a shortest repr: digits, ".", a lowercase "e" (Spark's is Java's "1.0E15")
    text = marked(exp.cast(exp.Abs(this=value.copy()), varchar), NUMBER_TEXT)

    def on_text(t: Any) -> Any:
        mantissa = _f("SPLIT_PART", t.copy(), L.string("e"), L.number(1))
        exponent = _f("SPLIT_PART", t.copy(), L.string("e"), L.number(2))
        shift = _f("COALESCE", exp.TryCast(this=_f("LTRIM", exponent, L.string("+")), safe=True,
                                           to=big_int), L.number(0))
        whole = _f("SPLIT_PART", mantissa.copy(), L.string("."), L.number(1))
        digits = _cat(whole.copy(), _f("SPLIT_PART", mantissa.copy(), L.string("."),
                                       L.number(2)))
        # |value| = 0.<sig> x 10^point
        point = _add(_length(whole), shift)
        return _let(digits, lambda d: _let(_f("LTRIM", d.copy(), L.string("0")),
                                           lambda sig: on_sig(d, sig, point)))

    def on_sig(d: Any, sig: Any, point: Any) -> Any:
        point = _sub(point, _sub(_length(d), _length(sig)))
        head = _f("COALESCE", exp.TryCast(this=_f("RPAD", _substr(sig, L.number(1), L.number(15)),
                                                  L.number(15), L.string("0")), to=big_int,
                                        safe=True),
                  L.number(0))
        round_up = _case([(_ge(_substr(sig, L.number(16), L.number(1)), L.string("5")),
                           L.number(1))], L.number(0))
        empty = _eq(_length(sig), L.number(0))
        return _let(_add(head, round_up), lambda m0: on_mant(m0, point, empty))

    def on_mant(m0: Any, point: Any, empty: Any) -> Any:
        carry = _ge(m0.copy(), L.number(10 ** 15))
        mant = _case([(carry.copy(), exp.IntDiv(this=_p(m0.copy()), expression=L.number(10)))],
                     m0.copy())
        s = _add(_add(point, _case([(carry, L.number(1))], L.number(0))),
                 L.number(f.decimals - 15 + (2 if f.percent else 0)))
        return _let(mant, lambda m: _let(s, lambda sv: on_scale(m, sv, empty)))

    def on_scale(m: Any, sv: Any, empty: Any) -> Any:
        # value x 10^decimals = m x 10^sv
        big = _cat(exp.cast(m.copy(), varchar),
                   _substr(L.string(_ZEROS), L.number(1), _f("GREATEST", sv.copy(), L.number(0))))
        d = _f("LEAST", _f("GREATEST", exp.Neg(this=_p(sv.copy())), L.number(1)), L.number(17))
        scale = exp.cast(_f("POW", L.number(10), d.copy()), big_int)
        scale1 = exp.cast(_f("POW", L.number(10), _sub(d.copy(), L.number(1))), big_int)
        kept = exp.IntDiv(this=_p(m.copy()), expression=scale)
        dropped = exp.Mod(this=_p(exp.IntDiv(this=_p(m.copy()), expression=scale1)),
                          expression=L.number(10))
        small = exp.cast(_add(kept, _case([(_ge(dropped, L.number(5)), L.number(1))],
                                           L.number(0))), varchar)
        scaled = _case([(empty, L.string("0")), (_ge(sv.copy(), L.number(0)), big)], small)
        if not f.decimals:
            return finish(_f("LTRIM", scaled, L.string("0")), None)
        return _let(scaled, on_scaled)

    def on_scaled(scaled: Any) -> Any:
        width = exp.cast(_f("GREATEST", _length(scaled), L.number(f.decimals + 1)),
                         dtype("INT"))
        return _let(_f("LPAD", scaled.copy(), width, L.string("0")), on_padded)

    def on_padded(padded: Any) -> Any:
        n = _length(padded)
        return finish(_f("LTRIM", _substr(padded, L.number(1), _sub(n, L.number(f.decimals))),
                         L.string("0")),
                      _f("RIGHT", padded.copy(), L.number(f.decimals)))

    return _let(text, on_text)


def sql_text(call: FormCall, value: Any, fmt: Any) -> Any:
    plan = _format_plan(call)
    if not isinstance(plan, _Format):
        return plan
    if plan.general:
        call.refuse("the General format has no portable SQL form")

    def finish(int_digits: Any, decimals: Any) -> Any:
        def build(digits: Any) -> Any:
            shown = _case([(_eq(digits, L.string("")), L.string("0"))], digits.copy())
            if plan.grouping:
                grouped = exp.RegexpReplace(this=_f("REVERSE", shown), expression=L.string(
                    "([0-9]{3})"), replacement=L.string("\\1,"), modifiers=L.string("g"))
                shown = _f("REVERSE", _f("RTRIM", grouped, L.string(",")))
            every = shown.copy() if decimals is None else _cat(shown.copy(), decimals.copy())
            # Excel shows no minus on a number that shows as zero (TEXT(-1/3, "0") is "0").
            nonzero = exp.NEQ(this=_f("LTRIM", every, L.string("0,")), expression=L.string(""))
            sign = _case([(exp.and_(_lt(value, L.number(0)), nonzero), L.string("-"))],
                         L.string(""))
            parts = [sign, shown]
            if decimals is not None:
                parts += [L.string("."), decimals]
            if plan.percent:
                parts.append(L.string("%"))
            return _cat(*parts)
        return _let(int_digits, build)

    return _sql_scaled_digits(value, plan, finish)


def polars_text_boolean(call: FormCall, value: Any, fmt: Any) -> Any:
    """A logical through a number format (no text section) shows as TRUE or FALSE."""
    plan = _format_plan(call)
    if not isinstance(plan, _Format):
        return plan
    return pl.when(value).then(pl.lit("TRUE")).otherwise(pl.lit("FALSE"))


def sql_text_boolean(call: FormCall, value: Any, fmt: Any) -> Any:
    plan = _format_plan(call)
    if not isinstance(plan, _Format):
        return plan
    return _case([(value.copy(), L.string("TRUE"))], L.string("FALSE"))


_TEXT_OF_TEXT = ("a text that reads as a number is formatted as that number (Excel's reading "
                 "of numbers in text has no exact native equivalent); literal arguments are "
                 "folded")


def polars_text_of_text(call: FormCall, value: Any, fmt: Any) -> Any:
    return _folded_or(call, _TEXT_OF_TEXT)


def sql_text_of_text(call: FormCall, value: Any, fmt: Any) -> Any:
    return _folded_or(call, _TEXT_OF_TEXT)
