"""Excel's readings of arrays and ranges while fitting arguments (excel profile, coercion pass).

Mixed into the checker's `overloads.OverloadResolver`: when an argument does not fit a list
parameter as it is, `read_array` (a ``many(T)`` parameter), `read_cell` (a single value where
a range is expected) and `read_range` (a list of other items) say how Excel would read it,
as an explicit `Coerce` (or a one-item `ListOf`) the engines evaluate: numbers read out of a
mixed array (``array_numbers``, ``array_number_cells``), a 2-D array's items row by row
(``array_flat``), a one-column or one-row 2-D array as a list (``array_vector``), serial
numbers as dates, items shown as text (``each_to_text``), a mixed list where ``T`` meets at
Any (``meet_at_any``). None means "does not fit"; `MeetAtText` asks the resolver to try the
signature again with ``T`` bound to another type. The static cost and size bounds of each
coercion are set here (a list's size per item read). Nothing here decides which signature
wins: `overloads` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..types import NUMBER, Type, join, list_of, non_null, optional
from . import ir
from .ir import IR
from .serials import SERIAL_KINDS

if TYPE_CHECKING:
    from ..limits import Limits


class MeetAtText(Exception):
    """Raised while matching, in the excel profile, when a generic T bound to a non-text
    scalar meets a Text: the signature is tried again with T bound to Text."""

    def __init__(self, name: str, kind: str = "Text") -> None:
        super().__init__(name)
        self.name = name
        self.kind = kind


class ArrayMatching:
    """Mixed into `OverloadResolver`, which provides ``match``, ``limits``, ``profile`` and
    ``coercing``."""

    if TYPE_CHECKING:
        limits: Limits
        profile: str
        coercing: bool

        def match(self, expected: Type, arg: IR, bindings: dict[str, Type]) -> Any: ...

    @property
    def excel_coercions(self) -> bool:
        return self.profile == "excel" and self.coercing

    def read_array(self, elem: Type, arg: IR, bindings: dict[str, Type]) -> IR | None:
        """A list that does not fit a ``many(elem)`` parameter as it is."""
        a = arg.type
        if elem.kind == "Number" and self.excel_coercions:
            # Excel: numbers inside an array are read, texts and logicals skipped;
            # the rows of a 2-D array are read in order.
            return ir.Coerce(arg, "array_numbers", Type("List", elem=elem,
                                                        nullable=a.nullable),
                             arg.span, True, arg.cost + 1 + arg.size, arg.size)
        if elem.kind == "Text" and self.excel_coercions and a.elem is not None \
                and a.elem.kind == "List" and a.elem.elem is not None:
            # CONCAT({"a","b";"c","d"}): Excel joins a 2-D array's items row by row.
            # the items' count bounds the joined list: exact for a constant
            inner = arg.node if type(arg) is ir.Coerce else arg
            items = sum(i.size for i in inner.items) if type(inner) is ir.ListOf \
                else self.limits.max_list_length
            flat = ir.Coerce(arg, "array_flat", Type("List", elem=a.elem.elem,
                                                     nullable=a.nullable),
                             arg.span, arg.may_error, arg.cost + 1 + items, items)
            if unify(elem, non_null(a.elem.elem), bindings):
                return flat
            return self.each_to_text(flat)
        return self.each_to_text(arg) if elem.kind == "Text" else None

    def read_cell(self, expected: Type, arg: IR, bindings: dict[str, Type]) -> IR | None:
        """A single value where a list (a range) is expected."""
        a = arg.type
        if self.excel_coercions and a.is_scalar and a.kind not in ("Blank", "Never") \
                and expected.elem is not None and unify(expected.elem, a, bindings):
            # Excel reads a single value where a range is expected as a one-cell
            # range (IRR(-20), SMALL(3.4, 1)).
            return ir.ListOf((arg,), Type("List", elem=a), arg.span, arg.may_error,
                             arg.cost + 1, 1)
        if self.excel_coercions and a.kind in ("Text", "Boolean") and expected.elem \
                is not None and expected.elem.kind == "Number":  # SMALL("3.4", 1)
            cell = ir.Coerce(arg, f"{a.kind.lower()}_to_number", NUMBER, arg.span,
                             arg.may_error or a.kind == "Text", arg.cost + 1)
            return ir.ListOf((cell,), list_of(NUMBER), arg.span, cell.may_error,
                             cell.cost + 1, 1)
        return None

    def read_range(self, expected: Type, arg: IR, bindings: dict[str, Type]) -> IR | None:
        """A list whose items do not fit a list parameter's items as they are."""
        a = arg.type
        if self.excel_coercions and expected.elem is not None and expected.elem.kind \
                == "Number" and expected.elem.nullable and _number_cells(a.elem):
            # A range of numbers (SMALL, SUMIFS' sum range): rows in order, texts and
            # logicals skipped in place, as Excel reads a range.
            return ir.Coerce(arg, "array_number_cells",
                             Type("List", elem=optional(NUMBER), nullable=a.nullable),
                             arg.span, arg.may_error, arg.cost + 1 + arg.size, arg.size)
        if self.excel_coercions and a.elem is not None and a.elem.kind == "List" \
                and expected.elem is not None and expected.elem.kind != "List" \
                and unify(expected.elem, a.elem.elem, bindings):  # type: ignore[arg-type]
            # A one-column ({1;2;3}) or one-row 2-D array where a list is expected.
            return ir.Coerce(arg, "array_vector", Type("List", elem=a.elem.elem,
                                                       nullable=a.nullable),
                             arg.span, True, arg.cost + 1 + arg.size, arg.size)
        if self.excel_coercions and a.elem is not None and a.elem.kind == "Number" \
                and expected.elem is not None and expected.elem.kind == "Date":
            # Serial numbers where a list of dates is expected (XNPV's dates, as Excel).
            return ir.Coerce(arg, "each_serial_to_date",
                             Type("List", elem=Type("Date", nullable=a.elem.nullable),
                                  nullable=a.nullable),
                             arg.span, True, arg.cost + 1 + arg.size, arg.size)
        if self.excel_coercions and expected.elem is not None and expected.elem.kind == "Var":
            met = self.meet_at_any(expected.elem.name, arg, bindings)
            if met is not None:
                return met
        return self.each_to_text(arg) if expected.elem.kind == "Text" else None  # type: ignore[union-attr]

    def meet_at_any(self, name: str, arg: IR, bindings: dict[str, Type]) -> IR | None:
        """A list (or a one-row or one-column 2-D array) whose items differ in type from the
        value that bound T (``MATCH(0, {"a";"b"})``, ``XLOOKUP(1, {2;TRUE;"x"}, ...)``):
        Excel compares values of any types, a number never equal to a text, so T meets at
        Any (the signature is tried again) and the list is taken as it is. Excel profile,
        coercion pass only; a date and a number are left to the serial coercions."""
        bound = bindings.get(name)
        elem = arg.type.elem
        if bound is None or elem is None:
            return None
        vector = elem.kind == "List"
        item = elem.elem if vector else elem
        if item is None or not (item.is_scalar or item.kind == "Any"):
            return None
        if bound.kind != "Any":
            serials = {bound.kind, item.kind} & set(SERIAL_KINDS)
            if not bound.is_scalar or serials and {bound.kind, item.kind} & {"Number"}:
                return None
            raise MeetAtText(name, "Any")
        if not vector:
            # Marked as a mixed array: the columnar and SQL backends, whose columns hold one
            # type, refuse it when compiling rather than answer in another type.
            return ir.Coerce(arg, "array_mixed", arg.type, arg.span, arg.may_error,
                             arg.cost + 1, arg.size)
        return ir.Coerce(arg, "array_vector", Type("List", elem=item, nullable=arg.type.nullable),
                         arg.span, True, arg.cost + 1 + arg.size, arg.size)

    def each_to_text(self, arg: IR) -> IR | None:
        """A list of scalars where a list of texts is expected: Excel converts item by item
        (``CONCAT({1,2})`` is "12"); excel profile only, blanks and error values kept."""
        elem = arg.type.elem
        if not self.excel_coercions or elem is None \
                or not (elem.is_scalar or elem.kind in ("Any", "Blank")) or elem.kind == "Never":
            return None  # Any: a mixed array ({1,"p",TRUE}), each item shown as Excel shows it;
            # Blank: a range of empty cells (CONCAT of it is "")
        text = Type("Text", nullable=elem.nullable)
        # Two units an item: formatting a number as text costs about two list steps.
        return ir.Coerce(arg, "each_to_text", Type("List", elem=text, nullable=arg.type.nullable),
                         arg.span, arg.may_error, arg.cost + 1 + 2 * arg.size, arg.size)


def _number_cells(elem: Type | None) -> bool:
    """Items read as a range of numbers (excel profile): mixed, texts or logicals, or rows."""
    inner = elem.elem if elem is not None and elem.kind == "List" else elem
    return inner is not None and inner.kind in ("Any", "Text", "Boolean", "Number") \
        and (inner is not elem or inner.kind != "Number")


def literal_vector(node: IR) -> bool:
    """An array constant one column wide ({1;2;3}) or one row high ({1,2,3} as a 2-D row)."""
    if type(node) is ir.Coerce and node.mode == "array_mixed":
        node = node.node
    if type(node) is not ir.ListOf or not node.items \
            or not all(type(row) is ir.ListOf for row in node.items):
        return False
    rows: Any = node.items
    return len(rows) == 1 and len(rows[0].items) > 0 or all(len(row.items) == 1 for row in rows)


def as_vector(node: IR) -> IR:
    """A one-column or one-row array constant read as a list (``array_vector``)."""
    elem = node.type.elem.elem  # type: ignore[union-attr]
    return ir.Coerce(node, "array_vector", Type("List", elem=elem, nullable=node.type.nullable),
                     node.span, True, node.cost + 1 + node.size, node.size)


def literal_vectors(call: IR) -> tuple[int, ...]:
    """The positions where a call passes such a constant as is to a 2-D (list of lists)
    parameter."""
    if type(call) is not ir.Call:
        return ()
    return tuple(i for i, (prm, arg) in enumerate(zip(call.sig.params, call.args))
                 if prm.type.kind == "List" and prm.type.elem is not None
                 and prm.type.elem.kind == "List" and literal_vector(arg))


def unify(expected: Type, actual: Type, bindings: dict[str, Type]) -> bool:
    """Type-level fit without coercions (list elements, lambda results)."""
    if actual.kind == "Never":
        return True
    k = expected.kind
    if k == "Var":
        bound = bindings.get(expected.name)
        value = non_null(actual) if expected.nullable else actual
        if bound is None:
            bindings[expected.name] = value
            return True
        joined = join(bound, value)
        if joined is None:
            return False
        bindings[expected.name] = joined
        return True
    if k == "Any":
        return True
    if actual.kind == "Blank":
        return expected.nullable
    if actual.nullable and not expected.nullable:
        return False
    if k != actual.kind:
        return False
    if k == "List":
        return unify(expected.elem, actual.elem, bindings)  # type: ignore[arg-type]
    if k == "Record":
        from ..types import is_assignable

        return is_assignable(non_null(actual), non_null(expected))
    return True


__all__ = ["ArrayMatching", "MeetAtText", "as_vector", "literal_vector", "literal_vectors", "unify"]
