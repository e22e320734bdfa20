"""Logic functions: the lazy special forms (IF, IFS, SWITCH, IFERROR, AND, OR...) and friends.

Lazy implementations receive ``(frame, *arg_closures)`` and evaluate arguments left to right
only as far as needed, so ``IF(TRUE, 1, 1/0)`` is 1 and ``AND(FALSE, 1/0 = 1)`` is FALSE. They
handle error values themselves: a condition that is an error is the result. `LET` is declared
here for the catalogue; the checker compiles its bindings itself.
"""

from __future__ import annotations

from typing import Any

from ..types import ANY, BOOLEAN, NEVER, NUMBER, TEXT, T, U, Type, join, non_null, optional
from ..values import CUSTOM, NA, VALUE, ErrorValue, XLError
from .spec import Cost, FunctionSpec, Refuse, builtin, family, p, sig
from ._excel_arrays import no_logical_value

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "logic"


@builtin(
    "IF",
    sig(p("condition", BOOLEAN), p("then", T), p("else", T), returns=T),
    sig(p("condition", BOOLEAN), p("then", T), returns=optional(T)),
    doc="The `then` value when the condition is TRUE, else the `else` value (blank if omitted; "
        "in the excel profile FALSE when `then` is a Boolean or a Text, as in Excel).",
    examples=["IF(1 < 2, \"yes\", \"no\") -> \"yes\"", "IF(TRUE, 1, 1/0) -> 1",
              "IF(FALSE, 1) -> BLANK()", "IF(1/0 > 1, 1, 2) -> #DIV/0!"],
    lazy=True,
    cost=Cost.const(1),
    can_error=False,
    any_decimal_scale=True,
    total_on_floats=True,
)
def if_(f: Any, cond: Any, then: Any, else_: Any = None) -> Any:
    c = cond(f)
    if c is True:
        return then(f)
    if c is False:
        return else_(f) if else_ is not None else None
    return c  # an error value


@builtin(
    "IFS",
    sig(p("condition", BOOLEAN), p("value", T), returns=T, repeat=2),
    doc="The value of the first TRUE condition; #N/A when none is TRUE.",
    examples=["IFS(1 > 2, \"a\", 2 > 1, \"b\") -> \"b\"", "IFS(FALSE, 1) -> #N/A"],
    lazy=True,
    cost=Cost.const(1),
    errors=("#N/A",),
    any_decimal_scale=True,
)
def ifs(f: Any, *args: Any) -> Any:
    for i in range(0, len(args), 2):
        c = args[i](f)
        if c is True:
            return args[i + 1](f)
        if c is not False:
            return c
    raise XLError(NA, "no condition of IFS was TRUE")


def _switch_check(types: list[Type], profile: str) -> tuple[list[Type], Type]:
    if len(types) < 3:
        raise TypeError(-1, "SWITCH needs an expression and at least one value/result pair")
    subject = types[0]
    pairs = types[1:]
    default = pairs.pop() if len(pairs) % 2 else None
    result: Type | None = None
    params = [subject]
    for i in range(0, len(pairs), 2):
        params += [subject, pairs[i + 1]]
        result = pairs[i + 1] if result is None else join(result, pairs[i + 1])
        if result is None:
            raise TypeError(i + 2, "SWITCH results must all have one type")
    if default is not None:
        joined = join(result, default)  # type: ignore[arg-type]
        if joined is None:
            raise TypeError(len(types) - 1, "the SWITCH default must have the results' type")
        result = joined
        params.append(default)
    else:
        result = optional(result)  # type: ignore[arg-type]
        # Without a default, no match is #N/A (Excel), so the type stays as the results'.
        result = non_null(result) if not any(t.nullable for t in pairs[1::2]) else result
    return params, result


@builtin(
    "SWITCH",
    sig(p("expression", T), p("value", T), p("result", U), returns=U, repeat=2),
    doc="Compares the expression with each value and returns the matching result, else the "
        "default (last argument, optional), else #N/A.",
    examples=["SWITCH(2, 1, \"one\", 2, \"two\") -> \"two\"",
              "SWITCH(3, 1, \"one\", \"other\") -> \"other\"", "SWITCH(3, 1, \"one\") -> #N/A"],
    lazy=True,
    cost=Cost.const(2),
    check=_switch_check,
    errors=("#N/A",),
    any_decimal_scale=True,
)
def switch(f: Any, subject: Any, *args: Any) -> Any:
    s = subject(f)
    if type(s) is ErrorValue:
        return s
    n = len(args) - (len(args) % 2)
    for i in range(0, n, 2):
        v = args[i](f)
        if type(v) is ErrorValue:
            return v
        if v == s or (type(v) is str and type(s) is str and v.lower() == s.lower()):
            return args[i + 1](f)
    if len(args) % 2:
        return args[-1](f)
    raise XLError(NA, "no SWITCH value matched")


def _all_true(f: Any, args: tuple[Any, ...], stop: bool) -> Any:
    seen = False
    for a in args:
        v = a(f)
        if v is stop or type(v) is ErrorValue:
            return v
        seen = seen or v is not None
    if not seen and args:
        # Only an excel-profile array with no logical value gives None (`_excel_arrays`).
        raise no_logical_value("OR" if stop else "AND")
    return not stop


#: AND and OR: lazy, left to right, stopping at the first deciding value or error.
_lazy_all = family(sig(p("logical", BOOLEAN), returns=BOOLEAN, repeat=1), lazy=True,
                   cost=Cost.const(1), can_error=False, any_decimal_scale=True)


@_lazy_all(
    "AND",
    doc="TRUE when every argument is TRUE; lazy, left to right.",
    examples=["AND(TRUE, 1 < 2) -> TRUE", "AND(FALSE, 1/0 = 1) -> FALSE",
              "AND(1/0 = 1, FALSE) -> #DIV/0!"],
)
def and_(f: Any, *args: Any) -> Any:
    return _all_true(f, args, False)


@_lazy_all(
    "OR",
    doc="TRUE when any argument is TRUE; lazy, left to right.",
    examples=["OR(FALSE, 1 < 2) -> TRUE", "OR(TRUE, 1/0 = 1) -> TRUE"],
)
def or_(f: Any, *args: Any) -> Any:
    return _all_true(f, args, True)


@builtin(
    "XOR",
    sig(p("logical", BOOLEAN), returns=BOOLEAN, repeat=1),
    doc="TRUE when an odd number of arguments are TRUE.",
    examples=["XOR(TRUE, FALSE) -> TRUE", "XOR(TRUE, TRUE) -> FALSE"],
    cost=Cost.const(1),
    can_error=False,
)
def xor(*args: bool) -> bool:
    if args and all(a is None for a in args):
        raise no_logical_value("XOR")  # every argument an array with no logical value
    return sum(1 for a in args if a) % 2 == 1


def _constant(value: bool, *, doc: str, examples: list[str]) -> FunctionSpec:
    """TRUE() and FALSE(): Excel's functions for the logical constants."""
    return builtin(str(value).upper(), sig(returns=BOOLEAN), doc=doc, examples=examples,
                   cost=Cost.const(1), can_error=False)(lambda: value)


true_ = _constant(
    True, doc="The logical value TRUE (Excel's TRUE() function; the same as the constant TRUE).",
    examples=["TRUE() -> TRUE", "AND(TRUE(), 1 < 2) -> TRUE"],
)
false_ = _constant(
    False,
    doc="The logical value FALSE (Excel's FALSE() function; the same as the constant FALSE).",
    examples=["FALSE() -> FALSE", "OR(FALSE(), 1 > 2) -> FALSE"],
)


@builtin(
    "IFERROR",
    sig(p("value", T), p("value_if_error", T), returns=T),
    doc="The value, or the fallback when the value is any error value. Limits are not errors: "
        "IFERROR never catches a LimitExceeded.",
    examples=["IFERROR(1/0, 0) -> 0", "IFERROR(5, 0) -> 5"],
    lazy=True,
    cost=Cost.const(1),
    can_error=False,
    any_decimal_scale=True,
)
def iferror(f: Any, value: Any, fallback: Any) -> Any:
    v = value(f)
    return fallback(f) if type(v) is ErrorValue else v


@builtin(
    "IFNA",
    sig(p("value", T), p("value_if_na", T), returns=T),
    doc="The value, or the fallback when the value is #N/A.",
    examples=["IFNA(NA(), 0) -> 0", "IFNA(1/0, 0) -> #DIV/0!"],
    lazy=True,
    cost=Cost.const(1),
    any_decimal_scale=True,
)
def ifna(f: Any, value: Any, fallback: Any) -> Any:
    v = value(f)
    return fallback(f) if type(v) is ErrorValue and v.code == NA else v


@builtin(
    "ERROR",
    sig(p("message", TEXT), returns=NEVER),
    doc="An error value carrying a message (#ERROR!); fits wherever a value is expected.",
    examples=["IFERROR(ERROR(\"bad\"), 1) -> 1", "ERROR(\"bad\") -> #ERROR!"],
    cost=Cost.const(1),
    errors=("#ERROR!",),
)
def error(message: str) -> Any:
    raise XLError(CUSTOM, message)


def _coalesce_check(types: list[Type], profile: str) -> tuple[list[Type], Type]:
    result: Type | None = None
    for i, t in enumerate(types):
        if t.kind == "Blank":
            continue
        result = non_null(t) if result is None else join(result, non_null(t))
        if result is None:
            raise TypeError(i, "COALESCE arguments must all have one type")
    if result is None:
        return list(types), types[0]
    if types[-1].nullable:
        result = optional(result)
    return [optional(result)] * (len(types) - 1) + [types[-1]], result


@builtin(
    "COALESCE",
    sig(p("value", T), returns=T, repeat=1),
    doc="The first argument that is not blank (lazy, left to right).",
    examples=["COALESCE(BLANK(), 2, 3) -> 2", "COALESCE(BLANK(), BLANK()) -> BLANK()"],
    lazy=True,
    cost=Cost.const(1),
    check=_coalesce_check,
    can_error=False,
    any_decimal_scale=True,
)
def coalesce(f: Any, *args: Any) -> Any:
    for a in args:
        v = a(f)
        if v is not None:
            return v
    return None


@builtin(
    "IFBLANK",
    sig(p("value", optional(T)), p("value_if_blank", T), returns=T),
    doc="The value, or the fallback when the value is blank.",
    examples=["IFBLANK(BLANK(), 0) -> 0", "IFBLANK(3, 0) -> 3"],
    lazy=True,
    cost=Cost.const(1),
    can_error=False,
    any_decimal_scale=True,
)
def ifblank(f: Any, value: Any, fallback: Any) -> Any:
    v = value(f)
    return fallback(f) if v is None else v


@builtin(
    "CHOOSE",
    sig(p("index", NUMBER), p("value", T), returns=T, repeat=1),
    doc="The index-th value (1-based); #VALUE! when out of range.",
    examples=["CHOOSE(2, \"a\", \"b\", \"c\") -> \"b\"", "CHOOSE(4, 1, 2, 3) -> #VALUE!"],
    lazy=True,
    cost=Cost.const(1),
    errors=("#VALUE!",),
    any_decimal_scale=True,
)
def choose(f: Any, index: Any, *values: Any) -> Any:
    i = index(f)
    if type(i) is ErrorValue:
        return i
    n = int(i)
    if not 1 <= n <= len(values):
        raise XLError(VALUE, f"CHOOSE index {n} is outside 1..{len(values)}")
    return values[n - 1](f)


@builtin(
    "LET",
    sig(p("name", ANY), p("value", ANY), p("calculation", T), returns=T),
    doc="Names intermediate values: LET(name1, value1, [name2, value2, ...], calculation).",
    polars=Refuse("compiled by the backends themselves"), sql=Refuse("compiled by the backends themselves"),
    examples=["LET(x, 2, y, x * 3, x + y) -> 8", "LET(r, 1/0, IFERROR(r, 0)) -> 0"],
    lazy=True,
    cost=Cost.const(1),
    can_error=False,
)
def let(f: Any, *args: Any) -> Any:  # compiled by the checker itself; never called
    raise AssertionError("LET is compiled by the interpreter")


@builtin(
    "BLANK",
    sig(returns=Type("Blank", nullable=True)),
    doc="The blank value (also written `null`).",
    examples=["ISBLANK(BLANK()) -> TRUE", "BLANK() ?? 1 -> 1"],
    cost=Cost.const(0),
    can_error=False,
)
def blank() -> None:
    return None

