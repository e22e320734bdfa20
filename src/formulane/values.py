"""Runtime values: the decimal context, error values, and conversion at the boundary.

Inside the engine a Number is a `Decimal` or a small `int` (|n| < 1e15, taken from the caller
as is; sums of such ints stay exact within 34 digits and products go through Decimal), Text is an NFC `str`, Boolean `bool`, Date `date`, DateTime an
aware `datetime`, Duration `timedelta`, List a `tuple`, Record a read-only mapping, blank
`None`, and an error an `ErrorValue`. `to_internal` is the only way in: it refuses anything
else (NaN, infinities, foreign objects) with a FormulaError naming the variable, so the formula
lane never touches a host object. `to_external` is the only way out.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Mapping, TypeAlias, Union

from .errors import EvalError
from .source import Span
from .types import (
    ANY, BLANK, BOOLEAN, DATE, DATETIME, DURATION, NUMBER, TEXT, Type, join, list_of, optional,
    record,
)

#: 34 significant digits (IEEE decimal128), |x| < 1e308; overflow and invalid operations trap
#: and become #NUM!, division by zero becomes #DIV/0!. Underflow rounds to zero.
CONTEXT = decimal.Context(
    prec=34,
    rounding=decimal.ROUND_HALF_EVEN,
    Emax=307,
    Emin=-340,
    capitals=1,
    clamp=0,
    traps=[decimal.Overflow, decimal.InvalidOperation, decimal.DivisionByZero],
)
MAX_NUMBER = Decimal("1e308")
#: Zero, the one a negative zero becomes where values leave the engine (`to_external`).
ZERO = Decimal(0)

# Excel error codes.
DIV0 = "#DIV/0!"
VALUE = "#VALUE!"
NUM = "#NUM!"
NA = "#N/A"
REF = "#REF!"
NAME = "#NAME?"
NULL = "#NULL!"
CALC = "#CALC!"
CUSTOM = "#ERROR!"
ERROR_CODES = (NULL, DIV0, VALUE, REF, NAME, NUM, NA, CALC, CUSTOM)
#: ERROR.TYPE numbers, as Excel documents them (custom errors get 99).
ERROR_TYPE_NUMBER = {NULL: 1, DIV0: 2, VALUE: 3, REF: 4, NAME: 5, NUM: 6, NA: 7, CALC: 14,
                     CUSTOM: 99}


@dataclass(frozen=True, slots=True)
class ErrorValue:
    """An Excel-style error value (data, not an exception). Equal when the codes are equal."""

    code: str
    message: str = field(default="", compare=False)
    span: Span | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"ErrorValue({self.code!r}" + (f", {self.message!r})" if self.message else ")")

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": self.code,
            "message": self.message,
            "span": self.span.to_dict() if self.span else None,
        }


#: A value as the caller receives it (`to_external`, `Program.evaluate`): a Number is a
#: `Decimal`, Text `str`, Boolean `bool`, Date `date`, DateTime `datetime`, Duration
#: `timedelta`, a List a `list`, a Record a `dict`, blank `None`, an error an `ErrorValue`.
#: (``Union`` spelled out: a recursive alias with forward references that runs on 3.11.)
Value: TypeAlias = Union[  # noqa: UP007
    Decimal, str, bool, dt.date, dt.datetime, dt.timedelta,
    list["Value"], dict[str, "Value"], ErrorValue, None,
]


class XLError(Exception):
    """Raised inside function implementations to produce an error value at the call's span."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------------------------
# Into the engine


def infer_type(value: Any, name: str = "value") -> Type:
    """The formula type of a Python value (used when no schema is given)."""
    if value is None:
        return BLANK
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, (int, float, Decimal)):
        return NUMBER
    if isinstance(value, str):
        return TEXT
    if isinstance(value, dt.datetime):
        return DATETIME
    if isinstance(value, dt.date):
        return DATE
    if isinstance(value, dt.timedelta):
        return DURATION
    if isinstance(value, (list, tuple)):
        elem: Type | None = None
        for i, item in enumerate(value):
            t = infer_type(item, f"{name}[{i + 1}]")
            elem = t if elem is None else join(elem, t)
            if elem is None:
                raise EvalError(
                    f"list {name!r} mixes types; a list holds one type of value",
                    code="E301",
                    hint="declare a schema with List[Any] for untyped JSON data",
                )
        if elem is None or elem.kind == "Blank":
            elem = ANY
        return list_of(elem)
    if isinstance(value, Mapping):
        fields = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise EvalError(f"record {name!r} has a non-text key {key!r}", code="E301",
                                hint="a record's keys are its field names: use text keys")
            t = infer_type(item, f"{name}.{key}")
            fields[key] = ANY if t.kind == "Blank" else t
        return record(fields)
    raise EvalError(
        f"variable {name!r} has a value of type {type(value).__name__}, which formulas cannot use",
        code="E301",
        hint="pass numbers, text, booleans, dates, datetimes, timedeltas, lists, dicts or None",
    )


def number_in(value: Any, name: str) -> Decimal | int:
    """A caller's number as an engine Number (floats by their shortest repr)."""
    tv = type(value)
    if tv is int:
        # Always a Decimal: int arithmetic would bypass the 34-digit context and its traps.
        if -10**308 < value < 10**308:
            return CONTEXT.plus(Decimal(value)) if abs(value) >= 10**34 else Decimal(value)
    elif tv is Decimal:
        if value.is_finite() and abs(value) < MAX_NUMBER:
            return CONTEXT.plus(value)
    elif tv is float:
        if math.isfinite(value) and abs(value) < 1e308:
            if value.is_integer() and abs(value) < 2**53:
                return Decimal(int(value))
            return Decimal(repr(value))
    elif isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return number_in(tv.__mro__[1](value) if tv is not Decimal else value, name)
    else:
        raise _bad(name, value, "Number")
    raise EvalError(
        f"variable {name!r} is {safe_repr(value)}: numbers must be finite and below 1e308 in "
        "magnitude",
        code="E301",
        hint="pass a finite number below 1e308 in magnitude, or None for a blank",
    )


def safe_repr(value: Any, limit: int = 80) -> str:
    """A short repr for messages that never raises: huge ints are not turned into digits (the
    int-to-str limit raises), a host object's raising ``__repr__`` is not called twice."""
    if type(value) is int and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * 0.30103):,} digits"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a host object's own fault
        return f"a {type(value).__name__} value"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bad(name: str, value: Any, expected: str) -> EvalError:
    return EvalError(
        f"variable {name!r} should be {expected}, got {type(value).__name__} {_short(value)}",
        code="E303",
        hint=f"pass a {expected} value (or None for a blank), or change the schema's type "
             f"for {name!r}",
    )


def _short(value: Any) -> str:
    return safe_repr(value, 40)


#: Values a Number, Text or Boolean takes as they are (see `_taken_as_is`), as
#: `Program.evaluate` does for top-level inputs: no conversion on the common path.
_FAST_KIND: dict[str, type] = {"Number": int, "Text": str, "Boolean": bool}


def _taken_as_is(v: Any, kind: type) -> bool:
    tv = type(v)
    if tv is not kind:
        return False
    if tv is int:
        return bool(-10**15 < v < 10**15)
    return tv is bool or bool(v.isascii())


def to_internal(value: Any, t: Type, name: str) -> Any:
    """Check ``value`` against type ``t`` and convert it to the engine's representation."""
    if value is None:
        if t.nullable:
            return None
        raise EvalError(
            f"variable {name!r} is blank but the schema says {t} (not nullable)",
            code="E303",
            hint=f"declare it as {optional(t)} to allow blanks",
        )
    kind = t.kind
    if kind == "Number":
        if isinstance(value, bool):
            raise _bad(name, value, "Number")
        return number_in(value, name)
    if kind == "Text":
        if not isinstance(value, str):
            raise _bad(name, value, "Text")
        return unicodedata.normalize("NFC", value) if not value.isascii() else value
    if kind == "Boolean":
        if not isinstance(value, bool):
            raise _bad(name, value, "Boolean")
        return value
    if kind == "DateTime":
        if not isinstance(value, dt.datetime):
            raise _bad(name, value, "DateTime")
        if value.tzinfo is None or value.utcoffset() is None:
            raise EvalError(
                f"variable {name!r} is a naive datetime; DateTime values must carry a time zone",
                code="E303",
                hint="attach one, e.g. value.replace(tzinfo=datetime.timezone.utc)",
            )
        return value
    if kind == "Date":
        if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
            raise _bad(name, value, "Date")
        return value
    if kind == "Duration":
        if not isinstance(value, dt.timedelta):
            raise _bad(name, value, "Duration")
        return value
    if kind == "List":
        if not isinstance(value, (list, tuple)):
            raise _bad(name, value, str(t))
        elem = t.elem
        fast = _FAST_KIND.get(elem.kind) if elem is not None else None
        if fast is not None and all(_taken_as_is(v, fast) for v in value):
            return tuple(value)  # small ints, ASCII texts, booleans: nothing to convert
        return tuple(to_internal(v, elem, f"{name}[{i + 1}]") for i, v in enumerate(value))  # type: ignore[arg-type]
    if kind == "Record":
        if type(value) is not dict and not isinstance(value, Mapping):
            raise _bad(name, value, str(t))
        out = {}
        get = value.get
        for fname, ftype in t.fields:
            v = get(fname)
            fast = _FAST_KIND.get(ftype.kind)
            out[fname] = v if fast is not None and _taken_as_is(v, fast) \
                else to_internal(v, ftype, f"{name}.{fname}")
        return MappingProxyType(out)
    if kind in ("Any", "Blank"):
        # Untyped JSON: keep its shape, but still only our own immutable values.
        return to_internal(value, _any_shape(value, name), name)
    raise EvalError(f"variable {name!r}: unsupported schema type {t}", code="E303")


def _any_shape(value: Any, name: str) -> Type:
    if isinstance(value, (list, tuple)):
        return list_of(ANY)
    if isinstance(value, Mapping):
        return record({k: ANY for k in value})
    return optional(infer_type(value, name))


# ---------------------------------------------------------------------------------------------
# Out of the engine


def to_external(value: Any) -> Value:
    """The caller's view of an engine value: Decimal, str, bool, date, list, dict, None..."""
    tv = type(value)
    if tv is Decimal:
        number: Decimal = value
        # Excel has no negative zero: `0 * -1` and `-0.001` rounded are 0, not -0
        return ZERO if number.is_signed() and number.is_zero() else number
    if tv is int:
        return Decimal(value)
    if tv is tuple:
        return [to_external(v) for v in value]
    if tv is MappingProxyType or isinstance(value, Mapping):
        return {k: to_external(v) for k, v in value.items()}
    plain: Value = value  # str, bool, date, datetime, timedelta, ErrorValue or None
    return plain


def is_error(value: Any) -> bool:
    return type(value) is ErrorValue


# ---------------------------------------------------------------------------------------------
# Number formatting shared by TEXT(), `&` and the printer: Excel's General format shows 15
# significant digits.


def general_text(value: Decimal | int) -> str:
    """Excel's General format of a number: at most 15 significant digits, no exponent for
    ordinary magnitudes, no trailing zeros."""
    if isinstance(value, int):  # never a bool here (display_text words those)
        if abs(value) < 10**15:
            return str(value)
        value = Decimal(value)
    if value.is_zero():
        return "0"
    rounded = value.quantize(Decimal(1).scaleb(value.adjusted() - 14), rounding=decimal.ROUND_HALF_UP,
                             context=CONTEXT) if value.adjusted() - 14 > -360 else value
    normalized = rounded.normalize(CONTEXT)
    exponent = normalized.adjusted()
    if -10 < exponent < 15:
        text = format(normalized, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    mantissa, _, exp = format(normalized, "E").partition("E")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    sign = "-" if exp.startswith("-") else "+"
    return f"{mantissa}E{sign}{exp.lstrip('+-').zfill(2)}"


def display_text(value: Any) -> str:
    """How a value reads when joined into text (``&``, TEXTJOIN, excel-profile coercions)."""
    tv = type(value)
    if tv is str:
        text: str = value
        return text
    if tv is Decimal or tv is int:
        return general_text(value)
    if tv is bool:
        return "TRUE" if value else "FALSE"
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        total = int(value.total_seconds())
        sign = "-" if total < 0 else ""
        total = abs(total)
        return f"{sign}{total // 3600}:{total // 60 % 60:02d}:{total % 60:02d}"
    if isinstance(value, ErrorValue):
        return value.code
    raise TypeError(f"no text form for {tv.__name__}")
