"""Dates and times as serial numbers: the excel profile's conversions, made explicit.

Contract: mixed into `OverloadResolver` (which provides ``registry``, ``make_call``, ``match``
and ``profile``). In the excel profile a Date, DateTime or Duration is also the number Excel
holds for it, and a number or a date text is accepted wherever a date or time is expected.
Every conversion is a node of the checked program, so `Program.explain` shows it and each
backend compiles it or refuses it at compile time:

* date, datetime or duration -> number: ``SERIAL(x)`` (every backend has it);
* number -> date: ``FROMSERIAL(n)`` (every backend); number -> datetime or duration, and
  text -> date, datetime or duration: `Coerce` modes of the scalar engine
  (functions/_serial.py), which the columnar and SQL backends refuse with the reason;
* a blank where a date is expected is serial 0 (``COALESCE(x, 1899-12-31)``), and as a
  number 0;
* a date joined into text is its serial number's text (``"" & DATE(2000, 1, 1)`` is "36526",
  as Excel gives);
* ``Date ± Number`` keeps the number's fraction of a day along a chain of additions and
  subtractions (``DATE(2001,2,14) + 2.3 + 0.7`` is 2001-02-17): the sum is computed on the
  serial number and read back as a date once (``FROMSERIAL(SERIAL(d) + 2.3 + 0.7)``); a whole
  literal number of days keeps the plain ``Date + Number`` overload. ``DateTime ± Number`` and
  ``Duration ± Number`` add the number as days (a Duration).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Sequence

from ..functions._serial import BlankPassing, SERIAL_ZERO_DATE, SERIAL_ZERO_DATETIME
from ..source import Span
from ..types import DATE, NUMBER, TEXT, Type, non_null
from . import ir
from .ir import IR

if TYPE_CHECKING:
    from ..functions.registry import Registry
    from ..functions.spec import FunctionSpec, Sig
    from ..grammar import ast
    from .checker import Scope

#: Kinds Excel holds as serial numbers, besides Number itself.
SERIAL_KINDS = frozenset(("Date", "DateTime", "Duration"))
_AS_NUMBER = frozenset(("Number", "Text", "Boolean", "Blank"))
_ZERO = {"Date": SERIAL_ZERO_DATE, "DateTime": SERIAL_ZERO_DATETIME,
         "Duration": dt.timedelta(0)}


def _whole_constant(node: IR) -> bool:
    value = node.value if type(node) is ir.Const else None
    return isinstance(value, (int, Decimal)) and not isinstance(value, bool) \
        and value == int(value)


class SerialCoercions:
    """Excel-profile conversions between serial numbers and dates, times and durations."""

    registry: Registry
    profile: str

    if TYPE_CHECKING:  # provided by `OverloadResolver`
        def make_call(self, spec: FunctionSpec, s: Sig, args: tuple[IR, ...], returns: Type,
                      span: Span, lambda_cost: int = 0) -> IR: ...

        def match(self, expected: Type, arg: IR, bindings: dict[str, Type]) -> Any: ...

        def coerce(self, arg: IR, target: Type) -> IR | None: ...

        def resolve(self, spec: FunctionSpec, nodes: Sequence[ast.Node | None],
                    args: list[IR | None], span: Span, name_span: Span, *,
                    display: str | None = None, scope: Scope | None = None) -> IR: ...

    def serial_coerce(self, arg: IR, target: Type) -> IR | None:
        """``arg`` converted to ``target`` as Excel's serial numbers convert, or None when
        neither side is a date, a time or a duration (or the registry lacks the helpers)."""
        src, dst = arg.type.kind, target.kind
        if src in SERIAL_KINDS and dst == "Number":
            return self.to_serial(arg)
        if src in SERIAL_KINDS and dst == "Text":
            # An empty cell joins as "", not as "0": the serial of a blank stays blank.
            number = self.to_serial(arg, keep_blank=True)
            if number is None:
                return None
            nullable = arg.type.nullable
            text = ir.Coerce(number, "to_text", Type("Text", nullable=nullable), arg.span,
                             number.may_error, number.cost + 1)
            if not nullable:
                return text
            return ir.Coerce(text, "blank_to_text", TEXT, arg.span, text.may_error,
                             text.cost + 1)
        if dst in SERIAL_KINDS and src == "Number":
            return self.from_serial(arg, dst)
        if dst in SERIAL_KINDS and src == "Text":
            node = ir.Coerce(arg, "text_to_" + dst.lower(), Type(dst, nullable=arg.type.nullable),
                             arg.span, True, arg.cost + 1)
            return self.blank_serial(node) if arg.type.nullable else node
        if dst in SERIAL_KINDS and src == "Blank":
            return ir.Const(_ZERO[dst], Type(dst), arg.span)
        if dst in SERIAL_KINDS and src == "Boolean":
            # Excel reads a logical where a date is expected as its number (DAYS(x, FALSE)
            # counts from serial 0); the Analysis ToolPak functions answer #VALUE! instead
            # (TBILLYIELD(TRUE, ...); overloads.REFUSE_LOGICALS), which `coerce` decides.
            number = self.coerce(arg, NUMBER)
            return None if number is None else self.from_serial(number, dst)
        return None

    def blank_serial(self, arg: IR) -> IR:
        """A possibly-blank date, datetime or duration with the blank read as serial 0."""
        kind = arg.type.kind
        coalesce = self.registry.get("COALESCE")
        if coalesce is None or kind not in _ZERO:
            return arg
        zero = ir.Const(_ZERO[kind], Type(kind), arg.span)
        return self.make_call(coalesce, coalesce.signatures[0], (arg, zero),
                              non_null(arg.type), arg.span)

    def to_serial(self, arg: IR, keep_blank: bool = False) -> IR | None:
        """``SERIAL(arg)``; a blank is serial 0, or stays blank with ``keep_blank``."""
        spec = self.registry.get("SERIAL")
        if spec is None:
            return None
        kind = arg.type.kind
        sig = next((s for s in spec.signatures if s.params[0].type.kind == kind), None)
        if sig is None:
            return None
        if arg.type.nullable and keep_blank:
            # The same overload (and backend forms: a null stays null there) with a scalar
            # implementation that passes a blank on.
            impl = sig.impl or spec.impl
            prm = replace(sig.params[0], type=arg.type)
            sig = replace(sig, params=(prm,), returns=Type("Number", nullable=True),
                          impl=BlankPassing(impl))
            return self.make_call(spec, sig, (arg,), sig.returns,
                                  arg.span)
        node = self.blank_serial(arg) if arg.type.nullable else arg
        return self.make_call(spec, sig, (node,), NUMBER, arg.span)

    def from_serial(self, arg: IR, kind: str) -> IR | None:
        node = arg
        if arg.type.nullable:
            node = ir.Coerce(arg, "blank_to_number", NUMBER, arg.span, arg.may_error,
                             arg.cost + 1)
        if kind == "Date":
            spec = self.registry.get("FROMSERIAL")
            if spec is None:
                return None
            return self.make_call(spec, spec.signatures[0], (node,), DATE,
                                  arg.span)
        mode = "serial_to_datetime" if kind == "DateTime" else "serial_to_duration"
        return ir.Coerce(node, mode, Type(kind), arg.span, True, node.cost + 1)

    def serial_call(self, spec: Any, arg: IR, span: Span) -> IR | None:
        """Excel's ``VALUE`` of an empty cell is 0 (of "" it is #VALUE!): a blank text
        passes VALUE's overload as blank and reads as 0. None for every other call."""
        if spec.name != "VALUE" or not (arg.type.kind == "Blank"
                                        or arg.type.kind == "Text" and arg.type.nullable):
            return None
        if arg.type.kind == "Blank":
            return ir.Const(0, NUMBER, span)
        sig = spec.signatures[0]
        impl = sig.impl or spec.impl
        if spec.needs_ctx or impl is None or len(sig.params) != 1:
            return None
        sig = replace(sig, params=(replace(sig.params[0], type=arg.type),),
                      returns=Type("Number", nullable=True), impl=BlankPassing(impl))
        call = self.make_call(spec, sig, (arg,), sig.returns, span)
        return ir.Coerce(call, "blank_to_number", NUMBER, span, call.may_error, call.cost + 1)

    # ------------------------------------------------------------------------- arithmetic

    def serial_arithmetic(self, op: str, left: IR, right: IR, span: Span,
                          op_span: Span) -> IR | None:
        """Excel's ``date ± number`` on serial numbers (see the module's contract), or None
        to resolve the operator as usual."""
        if op not in ("+", "-"):
            return None
        lk, rk = left.type.kind, right.type.kind
        # A text, a logical or a blank beside a date is read as a number of days, too.
        lk = "Number" if lk in _AS_NUMBER else lk
        rk = "Number" if rk in _AS_NUMBER else rk
        if lk == "Date" and rk == "Number" or op == "+" and lk == "Number" and rk == "Date":
            date, number = (left, right) if lk == "Date" else (right, left)
            inner = self.serial_sums.get(id(date))
            if inner is None and _whole_constant(number):
                return None  # a whole literal number of days: the Date + Number overload
            spec = self.registry.get(op)
            serial = inner[1] if inner is not None else self.to_serial(date)
            fitted = self.fit_number(number)
            if spec is None or serial is None or fitted is None:
                return None
            sig = spec.signatures[0]  # Number op Number
            operands = (serial, fitted) if lk == "Date" else (fitted, serial)
            total = self.make_call(spec, sig, operands, NUMBER, span)
            out = self.from_serial(total, "Date")
            if out is not None:
                self.serial_sums[id(out)] = (out, total)
            return out
        if lk in ("DateTime", "Duration") and rk == "Number" \
                or op == "+" and lk == "Number" and rk in ("DateTime", "Duration"):
            spec = self.registry.get(op)
            if spec is None:
                return None
            amount = self.fit_number(left if lk == "Number" else right)
            days = None if amount is None else self.from_serial(amount, "Duration")
            if days is None:
                return None
            args: list[IR | None] = [days, right] if lk == "Number" else [left, days]
            return self.resolve(spec, [None, None], args, span, op_span,
                                display=op)
        return None

    def fit_number(self, node: IR) -> IR | None:
        """``node`` as a (non-blank) Number, with the profile's conversions, or None."""
        fitted = self.match(NUMBER, node, {})
        return fitted if fitted is not None and not isinstance(fitted, str) else None

    @property
    def serial_sums(self) -> dict[int, tuple[IR, IR]]:
        """The ``FROMSERIAL(sum)`` nodes built here, by id: a chain continues on the sum."""
        sums = getattr(self, "_serial_sums", None)
        if sums is None:
            sums = {}
            self._serial_sums = sums
        return sums
