"""Excel's skip rules for values inside arrays: the excel profile's array coercions.

Contract: scalar implementations of the `Coerce` modes the checker inserts (excel profile only)
where an array meets a function that reads its items (docs/language.md, "Two profiles"). An
array is a list, possibly of rows (a 2-D array is a list of equal-length rows, row-major), and
its items may mix types (``{1, "a", TRUE}``). As Excel, inside an array:

- ``array_numbers`` (SUM, AVERAGE, MAX, MIN, PRODUCT... over ``Number...|List``): numbers are
  kept, texts, logicals and blanks are skipped, rows are read in order, an error value is kept
  (the function then answers it, as ``SUM({1, #N/A})`` is #N/A);
- ``array_and`` / ``array_or`` / ``array_xor``: one logical value for the whole array, numbers
  read as logicals (0 is FALSE), texts and blanks skipped; an array with no logical value is
  skipped (None), and the function is #VALUE! when no argument gives one; the first error
  value is the answer;
- ``array_mixed``: marks an array constant whose items mix types (the identity here);
- ``array_vector``: a one-column or one-row 2-D array where a list is expected (MATCH,
  XLOOKUP... over ``{1;2;3}``);
- ``array_flat``: a 2-D array's items row by row where texts are joined (CONCAT, TEXTJOIN);
- ``array_skip_errors`` (COUNT) and ``array_errors_counted`` (COUNTA): COUNT skips error values
  inside arrays, COUNTA counts them.
The columnar and SQL backends refuse these modes at compile time (an array of mixed types has
no column type).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterator

from ..values import VALUE, ErrorValue, XLError


def _items(value: Any) -> Iterator[Any]:
    for item in value:
        if type(item) is tuple or type(item) is list:
            yield from _items(item)
        else:
            yield item


def array_numbers(value: Any) -> tuple[Any, ...] | None:
    if value is None:
        return None
    return tuple(x for x in _items(value)
                 if type(x) in (Decimal, int) or type(x) is ErrorValue)


def _logicals(value: Any) -> list[bool]:
    out: list[bool] = []
    for x in _items(value):
        t = type(x)
        if t is ErrorValue:
            raise XLError(x.code, x.message)
        if t is bool:
            out.append(x)
        elif t is Decimal or t is int:
            out.append(x != 0)
    return out


def _one_logical(value: Any, fold: Any) -> bool | None:
    """The array's logical value, or None when it holds none: the argument is then skipped,
    and AND/OR/XOR answer #VALUE! only when no argument gives one (Excel's
    OR({blank,blank}, TRUE) is TRUE; `no_logical_value`)."""
    if value is None:
        return None
    found = _logicals(value)
    return fold(found) if found else None


def array_and(value: Any) -> bool | None:
    return _one_logical(value, all)


def array_or(value: Any) -> bool | None:
    return _one_logical(value, any)


def array_xor(value: Any) -> bool | None:
    return _one_logical(value, lambda found: sum(found) % 2 == 1)


def no_logical_value(name: str) -> XLError:
    return XLError(VALUE, f"{name} has no logical value: its arrays hold none")


def array_skip_errors(value: Any) -> tuple[Any, ...] | None:
    """COUNT's reading of an array: error values inside it are skipped (not counted)."""
    if value is None:
        return None
    return tuple(array_skip_errors(x) if type(x) is tuple else x for x in value
                 if type(x) is not ErrorValue)


def array_errors_counted(value: Any) -> tuple[Any, ...] | None:
    """COUNTA's reading of an array: an error value inside it is a value like any other
    (counted as its code's text, which no function answers)."""
    if value is None:
        return None
    return tuple(array_errors_counted(x) if type(x) is tuple
                 else x.code if type(x) is ErrorValue else x for x in value)


def array_vector(value: Any) -> tuple[Any, ...] | None:
    """A one-column or one-row 2-D array as a list ({1;2;3} where a list is expected)."""
    if value is None:
        return None
    if all(type(r) is tuple and len(r) == 1 for r in value):
        return tuple(r[0] for r in value)
    if len(value) == 1 and type(value[0]) is tuple:
        return value[0]
    raise XLError(VALUE, "a list is expected here: give one row or one column")


def array_flat(value: Any) -> tuple[Any, ...] | None:
    """A 2-D array's items row by row, where a list of texts is read (CONCAT, TEXTJOIN)."""
    return None if value is None else tuple(_items(value))


def array_mixed(value: Any) -> Any:
    """An array whose items mix types ({1, "a", TRUE}): the scalar engine holds it as is."""
    return value


ARRAY_COERCIONS = {
    "array_mixed": array_mixed,
    "array_vector": array_vector,
    "array_flat": array_flat,
    "array_skip_errors": array_skip_errors,
    "array_errors_counted": array_errors_counted,
    "array_numbers": array_numbers,
    "array_and": array_and,
    "array_or": array_or,
    "array_xor": array_xor,
}
