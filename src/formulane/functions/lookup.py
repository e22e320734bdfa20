"""Lookup functions: XLOOKUP, XMATCH, MATCH, VLOOKUP, HLOOKUP, INDEX, LOOKUP, ANY, ALL.

A 2-D array (VLOOKUP and HLOOKUP's table, INDEX(array, row, column)) is a list of rows.

Contract: positions are 1-based. Matching follows Excel: text ignores case, exact matches never
use wildcards except in match mode 2 (XLOOKUP/XMATCH) and MATCH type 0 (match mode 3 is a
regex); XLOOKUP/XMATCH's next smaller or larger item follows Excel's order across types
(numbers < texts < logicals), while MATCH/LOOKUP/VLOOKUP's approximate search only considers
items of the lookup value's own type; binary search modes assume the list is sorted as
declared and are O(log n); blanks never match. Not found is ``#N/A`` (or XLOOKUP's if_not_found).
``LOOKUP(records, predicate, [result])`` is Power Fx's LookUp (first match, ``#N/A`` when none,
where Power Fx gives blank: a missing record is an error worth seeing); ``LOOKUP(value, list,
[results])`` keeps Excel's vector form. Lambdas may return error values; the first one met
is the result.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..types import ANY, BOOLEAN, NUMBER, T, U, fn, list_of, optional
from ..values import NA, REF, VALUE, ErrorValue, XLError
from ._grids import along, grid_rows, pick_line
from ._criteria import order_key, to_int, truthy, wildcard
from ._textsearch import Regex
from .spec import Cost, Refuse, builtin, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "lookup"

_BLANK_KEY = (98, 0)
_OTHER_KEY = (99, 0)


def _key(v: Any) -> tuple[int, Any]:
    """A sort key for any item (blanks and unorderable values after everything else)."""
    if v is None:
        return _BLANK_KEY
    try:
        return order_key(v)
    except XLError:
        return _OTHER_KEY


def _modes(match_mode: Any, search_mode: Any) -> tuple[int, int]:
    mm = to_int(match_mode, "match_mode")
    sm = to_int(search_mode, "search_mode")
    if mm not in (0, -1, 1, 2, 3):
        raise XLError(VALUE, "match_mode must be 0 (exact), -1, 1, 2 (wildcards) or 3 (regex)")
    if sm not in (1, -1, 2, -2):
        raise XLError(VALUE, "search_mode must be 1, -1, 2 or -2")
    return mm, sm


def _linear(value: Any, keys: Sequence[Any], mm: int, backwards: bool) -> int | None:
    """Exact match first (in search order); failing that, the nearest smaller (-1) or larger (1)
    item in Excel's order across types (numbers < texts < logicals: the next smaller than
    FALSE may be a text), the first one met on ties; a blank (or an error value) is only
    ever an exact match."""
    order = range(len(keys) - 1, -1, -1) if backwards else range(len(keys))
    target = _key(value)
    best: int | None = None
    best_key: Any = None
    for i in order:
        k = keys[i]
        kk = _key(k)
        if kk == target:
            return i
        if mm == 0 or kk >= _BLANK_KEY or target >= _BLANK_KEY:
            continue
        if mm == -1 and kk < target and (best is None or kk > best_key):
            best, best_key = i, kk
        elif mm == 1 and kk > target and (best is None or kk < best_key):
            best, best_key = i, kk
    return best


def _binary(value: Any, keys: Sequence[Any], mm: int, descending: bool) -> int | None:
    """Binary search over a list sorted ascending (or descending), as Excel probes it: the
    last item <= value (>= when descending) is found first; it is the match when equal (so
    among equal items the last one, as Excel's XLOOKUP(5, {9;...;5;5;5;...}, ..., 1, -2)),
    else its neighbour on the side match_mode asks for, whatever its type."""
    target = _key(value)
    if target >= _BLANK_KEY:
        return None
    lo, hi, at = 0, len(keys) - 1, -1
    while lo <= hi:
        mid = (lo + hi) // 2
        k = _key(keys[mid])
        if (k >= target) if descending else (k <= target):
            at, lo = mid, mid + 1
        else:
            hi = mid - 1
    if at >= 0 and _key(keys[at]) == target:
        return at
    if mm == 0:
        return None
    # `at` is the last item on the value's near side; the next one is past it.
    pick = at + 1 if (mm == 1) != descending else at
    if 0 <= pick < len(keys) and _key(keys[pick]) < _BLANK_KEY:
        return pick
    return None


def _search(value: Any, keys: Sequence[Any], match_mode: Any, search_mode: Any) -> int | None:
    mm, sm = _modes(match_mode, search_mode)
    if mm >= 2:
        if type(value) is str:
            order = range(len(keys) - 1, -1, -1) if sm < 0 else range(len(keys))
            if mm == 3:
                # Excel's regex match (XLOOKUP/XMATCH match_mode 3): the pattern found
                # anywhere in the text, case-sensitive, as REGEXTEST by default (RE2 here).
                for i in order:
                    k = keys[i]
                    if type(k) is str and Regex(value, k, "XLOOKUP").search() is not None:
                        return i
                return None
            pattern = wildcard(value)
            for i in order:
                k = keys[i]
                if type(k) is str and pattern.matches(k):
                    return i
            return None
        mm = 0  # wildcards mean nothing for numbers, dates...
    if sm in (1, -1):
        return _linear(value, keys, mm, sm == -1)
    return _binary(value, keys, mm, sm == -2)


_MATCH_DOC = ("0 exact, -1 exact or next smaller, 1 exact or next larger, 2 wildcards (? * ~), "
              "3 regex (RE2, found anywhere, case-sensitive)")
_SEARCH_DOC = ("1 first to last, -1 last to first, 2 binary (sorted ascending), -2 binary "
               "(sorted descending)")


def _xlookup_grid(value: Any, keys: tuple[Any, ...], grid: tuple[Any, ...],
                  if_not_found: Any = None, match_mode: Any = 0, search_mode: Any = 1) -> Any:
    """XLOOKUP over a 2-D return array: the row at the match (the column, when the lookup
    list is as long as the array is wide: Excel's horizontal lookup array)."""
    rows = grid_rows(grid)
    across = along(rows, len(keys), "lookup_list")
    i = _search(value, keys, match_mode, search_mode)
    if i is None:
        if if_not_found is None:
            raise XLError(NA, "the value was not found")
        return if_not_found if type(if_not_found) is tuple else (if_not_found,)
    return pick_line(rows, i, across)


_GRID_RETURN = Refuse("a 2-D return array is a list of lists, which the columnar and SQL "
                      "backends do not hold as a column")
_IF_NOT_FOUND_ROW = "returned when nothing matches: a row, or one value (a one-item row)"


@builtin(
    "XLOOKUP",
    sig(p("lookup", T), p("lookup_list", list_of(optional(T))),
        p("return_array", list_of(list_of(U)), doc="a 2-D array: its row (or column) at the "
                                                   "match is the answer"),
        p("if_not_found", list_of(U), None, _IF_NOT_FOUND_ROW),
        p("match_mode", NUMBER, 0, _MATCH_DOC), p("search_mode", NUMBER, 1, _SEARCH_DOC),
        returns=list_of(U), impl=_xlookup_grid, polars=_GRID_RETURN, sql=_GRID_RETURN),
    sig(p("lookup", T), p("lookup_list", list_of(optional(T))),
        p("return_array", list_of(list_of(U))), p("if_not_found", U, doc=_IF_NOT_FOUND_ROW),
        p("match_mode", NUMBER, 0, _MATCH_DOC), p("search_mode", NUMBER, 1, _SEARCH_DOC),
        returns=list_of(U), impl=_xlookup_grid, polars=_GRID_RETURN, sql=_GRID_RETURN),
    sig(p("lookup", T), p("lookup_list", list_of(optional(T))), p("return_list", list_of(U)),
        p("if_not_found", U, None, "returned when nothing matches; #N/A when omitted or blank"),
        p("match_mode", NUMBER, 0, _MATCH_DOC), p("search_mode", NUMBER, 1, _SEARCH_DOC),
        returns=U),
    doc="The item of return_list at the position where lookup is found in lookup_list (text "
        "ignores case); if_not_found or #N/A when it is not there. A 2-D return array gives "
        "the row there (the column when lookup_list is as long as a row); a list of records, "
        "the record.",
    examples=['XLOOKUP("b", ["a", "b", "c"], [1, 2, 3]) -> 2',
              'XLOOKUP("B", ["a", "b"], [1, 2]) -> 2', 'XLOOKUP("z", ["a", "b"], [1, 2]) -> #N/A',
              'XLOOKUP("z", ["a", "b"], [1, 2], 0) -> 0',
              'XLOOKUP(25, [10, 20, 30], ["lo", "mid", "hi"], "none", -1) -> "mid"',
              'XLOOKUP(25, [10, 20, 30], ["lo", "mid", "hi"], "none", 1) -> "hi"',
              'XLOOKUP("b*", ["apple", "banana"], [1, 2], 0, 2) -> 2',
              'XLOOKUP(2, [1, 2, 2], ["a", "b", "c"], "", 0, -1) -> "c"',
              'XLOOKUP(1, [1, 2], [1]) -> #VALUE!',
              'XLOOKUP("b", ["a", "b"], [[1, 2, 3], [4, 5, 6]]) -> [4, 5, 6]',
              'XLOOKUP(2, [1, 2, 3], [[1, 2, 3], [4, 5, 6]]) -> [2, 5]',
              'XLOOKUP("z", ["a", "b"], [[1, 2], [3, 4]], 0) -> [0]',
              'XLOOKUP("z", ["a", "b"], [[1, 2], [3, 4]]) -> #N/A',
              'XLOOKUP(1, [1, 2], [[1, 2, 3]]) -> #VALUE!'],
    cost=Cost.criteria(4, 2),
    errors=("#N/A", "#VALUE!"),
)
def xlookup(value: Any, keys: tuple[Any, ...], results: tuple[Any, ...], if_not_found: Any = None,
            match_mode: Any = 0, search_mode: Any = 1) -> Any:
    if len(results) != len(keys):
        raise XLError(VALUE, f"return_list has {len(results)} items, lookup_list {len(keys)}")
    i = _search(value, keys, match_mode, search_mode)
    if i is None:
        if if_not_found is None:
            raise XLError(NA, "the value was not found")
        return if_not_found
    return results[i]


@builtin(
    "XMATCH",
    sig(p("lookup", T), p("lookup_list", list_of(optional(T))),
        p("match_mode", NUMBER, 0, _MATCH_DOC), p("search_mode", NUMBER, 1, _SEARCH_DOC),
        returns=NUMBER),
    doc="The 1-based position of lookup in a list (text ignores case); #N/A when not found.",
    examples=['XMATCH("c", ["a", "b", "c"]) -> 3', 'XMATCH(5, [1, 3]) -> #N/A',
              'XMATCH(4, [1, 3, 5], 1) -> 3', 'XMATCH(4, [1, 3, 5], -1) -> 2',
              'XMATCH("?b", ["ab", "bb"], 2, -1) -> 2', 'XMATCH(3, [1, 3, 5, 7], 0, 2) -> 2',
              'XMATCH(1, [1], 4) -> #VALUE!'],
    cost=Cost.criteria(4, 2),
    errors=("#N/A", "#VALUE!"),
)
def xmatch(value: Any, keys: tuple[Any, ...], match_mode: Any = 0, search_mode: Any = 1) -> int:
    i = _search(value, keys, match_mode, search_mode)
    if i is None:
        raise XLError(NA, "the value was not found")
    return i + 1


def _last_within(value: Any, keys: Sequence[Any], descending: bool) -> int | None:
    """Excel's approximate MATCH/LOOKUP/VLOOKUP on sorted data: the last item <= value
    (ascending) or >= value (descending), by binary search among the items of the value's
    type: blanks, error values and other types are passed over, as Excel's search does
    (MATCH(5, {1,"x",3,7}) is 3; LOOKUP(2, 1/(...), ...) finds the last 1 among errors)."""
    target = _key(value)
    same = [i for i, k in enumerate(keys) if k is not None and _key(k)[0] == target[0]]
    # Inclusive bounds, as Excel's own search: on unsorted data it then answers as Excel does
    # (the docs' MATCH(40, {25;38;40;41}, -1) is #N/A).
    lo, hi, at = 0, len(same) - 1, -1
    while lo <= hi:
        mid = (lo + hi) // 2
        k = _key(keys[same[mid]])
        if (k >= target) if descending else (k <= target):
            at, lo = mid, mid + 1
        else:
            hi = mid - 1
    return same[at] if at >= 0 else None


@builtin(
    "MATCH",
    sig(p("lookup", T), p("lookup_list", list_of(optional(T))),
        p("match_type", NUMBER, 1, "1 largest <= lookup (sorted ascending), 0 exact (wildcards "
          "for text), -1 smallest >= lookup (sorted descending)"),
        returns=NUMBER),
    doc="Excel's MATCH: the 1-based position of lookup; by default the last item <= lookup in "
        "an ascending list; #N/A when none.",
    examples=['MATCH(25, [10, 20, 30]) -> 2', 'MATCH("b?", ["a", "bc"], 0) -> 2',
              'MATCH(5, [10, 20]) -> #N/A', 'MATCH(25, [30, 20, 10], -1) -> 1',
              'MATCH("B", ["a", "b"], 0) -> 2'],
    cost=Cost.criteria(4, 2),
    errors=("#N/A",),
)
def match(value: Any, keys: tuple[Any, ...], match_type: Any = 1) -> int:
    mt = to_int(match_type, "match_type")
    if value is None:
        # Excel: MATCH of an empty cell finds nothing, not even an empty cell.
        raise XLError(NA, "the value was not found")
    if mt == 0:
        i = _search(value, keys, 2, 1)
    else:
        i = _last_within(value, keys, mt < 0)
    if i is None:
        raise XLError(NA, "the value was not found")
    return i + 1


# -------------------------------------------------------------------------- VLOOKUP, HLOOKUP


def _table_lookup(value: Any, keys: Sequence[Any], lines: Sequence[Any], index: Any,
                  approximate: Any, what: str) -> Any:
    """Excel's VLOOKUP/HLOOKUP over a 2-D array: find ``value`` among ``keys`` (the first
    column or row), answer the ``index``-th item of the matching line."""
    n = to_int(index, what)
    if n < 1:
        raise XLError(VALUE, f"{what} must be 1 or more")
    if approximate is None or truthy(approximate):
        i = _last_within(value, keys, False)
    else:
        i = _search(value, keys, 2, 1)  # exact, wildcards for text (Excel)
    if i is None:
        raise XLError(NA, "the value was not found")
    line = lines[i]
    if n > len(line):
        raise XLError(REF, f"{what} {n} is past the table's {len(line)}")
    return line[n - 1]


def _rows(table: tuple[Any, ...]) -> tuple[Any, ...]:
    for row in table:
        if type(row) is not tuple:
            raise XLError(VALUE, "the table's rows must all be lists")
    return table


_TABLE_REFUSED = Refuse("a 2-D table is a list of lists, which the columnar and SQL backends "
                        "do not hold as a column")


@builtin(
    "VLOOKUP",
    sig(p("lookup", T), p("table", list_of(list_of(U))),
        p("column", NUMBER, doc="1-based column of the table to answer"),
        p("approximate", BOOLEAN, True, "TRUE (default): the last row whose first item is <= "
          "lookup, the first column sorted ascending; FALSE: an exact match (wildcards for "
          "text)"),
        returns=U),
    doc="Excel's VLOOKUP over a 2-D array (a list of rows): finds lookup in the first column "
        "and answers that row's item in the given column; #N/A when not found, #REF! past the "
        "last column.",
    polars=_TABLE_REFUSED, sql=_TABLE_REFUSED,
    examples=['VLOOKUP(2, [[1, 10], [2, 20], [3, 30]], 2, FALSE) -> 20',
              'VLOOKUP(2.5, [[1, 10], [2, 20], [3, 30]], 2) -> 20',
              'VLOOKUP(9, [[1, 10], [2, 20]], 2, FALSE) -> #N/A',
              'VLOOKUP(1, [[1, 10]], 3, FALSE) -> #REF!'],
    cost=Cost.linear(4, 2),
    errors=("#N/A", "#REF!", "#VALUE!"),
)
def vlookup(value: Any, table: tuple[Any, ...], column: Any, approximate: Any = True) -> Any:
    rows = _rows(table)
    keys = [r[0] if r else None for r in rows]
    return _table_lookup(value, keys, rows, column, approximate, "column")


@builtin(
    "HLOOKUP",
    sig(p("lookup", T), p("table", list_of(list_of(U))),
        p("row", NUMBER, doc="1-based row of the table to answer"),
        p("approximate", BOOLEAN, True, "TRUE (default): the last column whose first item is "
          "<= lookup, the first row sorted ascending; FALSE: an exact match"),
        returns=U),
    doc="Excel's HLOOKUP over a 2-D array (a list of rows): finds lookup in the first row and "
        "answers that column's item in the given row; #N/A when not found, #REF! past the "
        "last row.",
    polars=_TABLE_REFUSED, sql=_TABLE_REFUSED,
    examples=['HLOOKUP(2, [[1, 2], [10, 20]], 2, FALSE) -> 20',
              'HLOOKUP(9, [[1, 2], [10, 20]], 2, FALSE) -> #N/A'],
    cost=Cost.linear(4, 2),
    errors=("#N/A", "#REF!", "#VALUE!"),
)
def hlookup(value: Any, table: tuple[Any, ...], row: Any, approximate: Any = True) -> Any:
    rows = _rows(table)
    if not rows:
        raise XLError(NA, "the table is empty")
    width = len(rows[0])
    columns = [tuple(r[c] if c < len(r) else None for r in rows) for c in range(width)]
    return _table_lookup(value, list(rows[0]), columns, row, approximate, "row")


# -------------------------------------------------------------------------------------- INDEX


def _position(n: Any, size: int, what: str) -> int:
    i = to_int(n, what)
    if i < 0:
        raise XLError(VALUE, f"{what} must not be negative")
    if i == 0 or i > size:
        raise XLError(REF, f"{what} {i} is outside 1..{size}")
    return i - 1


def _index_grid(rows: tuple[Any, ...], row: Any, column: Any) -> Any:
    line = rows[_position(row, len(rows), "row")]
    if line is None:
        raise XLError(REF, "that row is blank")
    return line[_position(column, len(line), "column")]


def _index_line(values: tuple[Any, ...], row: Any, column: Any) -> Any:
    r, c = to_int(row, "row"), to_int(column, "column")
    if c in (0, 1) and r >= 1:  # a column: INDEX(list, n, 1)
        return values[_position(r, len(values), "row")]
    if r in (0, 1) and c >= 1:  # a row: INDEX(list, 1, n)
        return values[_position(c, len(values), "column")]
    if r < 0 or c < 0:
        raise XLError(VALUE, "positions must not be negative")
    raise XLError(REF, "a list has one dimension: use INDEX(list, n)")


@builtin(
    "INDEX",
    sig(p("list", list_of(list_of(T))), p("row", NUMBER), p("column", NUMBER), returns=T,
        impl=_index_grid),
    sig(p("list", list_of(T)), p("row", NUMBER), p("column", NUMBER), returns=T, impl=_index_line),
    sig(p("list", list_of(T)), p("position", NUMBER, doc="1-based"), returns=T),
    doc="The item at a 1-based position (row and column for a list of lists); #REF! outside "
        "the list or at 0, #VALUE! for a negative position.",
    examples=['INDEX([10, 20, 30], 2) -> 20', 'INDEX([10, 20, 30], 4) -> #REF!',
              'INDEX([10, 20, 30], 0) -> #REF!', 'INDEX([10, 20], -1) -> #VALUE!',
              'INDEX([[1, 2], [3, 4]], 2, 1) -> 3', 'INDEX([10, 20, 30], 3, 1) -> 30',
              'INDEX([10, 20], 1.9) -> 10'],
    cost=Cost.const(1),
    errors=("#REF!", "#VALUE!"),
)
def index(values: tuple[Any, ...], position: Any) -> Any:
    return values[_position(position, len(values), "position")]


# ------------------------------------------------------------------------------------- LOOKUP


def _first(values: tuple[Any, ...], predicate: Callable[[Any], Any]) -> Any:
    for v in values:
        r = predicate(v)
        if type(r) is ErrorValue:
            return r, True
        if truthy(r):
            return v, True
    return None, False


def _lookup_result(values: tuple[Any, ...], predicate: Callable[[Any], Any],
                   result: Callable[[Any], Any]) -> Any:
    found, ok = _first(values, predicate)
    if not ok:
        raise XLError(NA, "no item matches")
    if type(found) is ErrorValue:
        return found
    return result(found)


_BINARY = Refuse("Excel's vector LOOKUP is a binary search whose answer on unsorted lists "
                 "depends on the probe order")


def _lookup_vector(value: Any, keys: tuple[Any, ...],
                   results: tuple[Any, ...] | None = None) -> Any:
    if results is not None and len(results) != len(keys):
        raise XLError(VALUE, f"result_list has {len(results)} items, lookup_list {len(keys)}")
    i = _last_within(value, keys, False)
    if i is None:
        raise XLError(NA, "no item is less than or equal to the value")
    return (keys if results is None else results)[i]


def _lookup_array(value: Any, grid: tuple[Any, ...]) -> Any:
    """Excel's array form: search the first row when the array is wider than tall, else the
    first column (approximately, as the vector form), and answer from the last row/column."""
    rows = grid_rows(grid)
    if not rows or not rows[0]:  # no rows, or rows of no items ([[]])
        raise XLError(NA, "the array is empty")
    wide = len(rows[0]) > len(rows)
    keys = rows[0] if wide else tuple(r[0] for r in rows)
    i = _last_within(value, keys, False)
    if i is None:
        raise XLError(NA, "no item is less than or equal to the value")
    return rows[-1][i] if wide else rows[i][-1]


def _lookup_vector2(value: Any, keys: tuple[Any, ...], results: tuple[Any, ...]) -> Any:
    """The vector form with a result vector given as a one-row or one-column 2-D array."""
    rows = grid_rows(results)
    if len(rows) == 1:
        line = rows[0]
    elif all(len(r) == 1 for r in rows):
        line = tuple(r[0] for r in rows)
    else:
        raise XLError(VALUE, "result_vector must be one row or one column")
    return _lookup_vector(value, keys, line)


@builtin(
    "LOOKUP",
    sig(p("list", list_of(T)), p("predicate", fn([T], BOOLEAN)), returns=T),
    sig(p("list", list_of(T)), p("predicate", fn([T], BOOLEAN)), p("result", fn([T], U)),
        returns=U, impl=_lookup_result),
    sig(p("lookup", T), p("array", list_of(list_of(T)), doc="a 2-D array: searched in its "
                                                           "first row when wider than tall, "
                                                           "else its first column"),
        returns=T, impl=_lookup_array, polars=_TABLE_REFUSED, sql=_TABLE_REFUSED),
    sig(p("lookup", ANY), p("array", list_of(list_of(ANY)), doc="a 2-D array whose items mix "
                                                               "types ({\"a\", 1; \"b\", 2})"),
        returns=ANY, impl=_lookup_array, polars=_TABLE_REFUSED, sql=_TABLE_REFUSED),
    sig(p("lookup", T), p("lookup_list", list_of(optional(T))), returns=T, impl=_lookup_vector,
        polars=_BINARY, sql=_BINARY),
    sig(p("lookup", T), p("lookup_list", list_of(optional(T))),
        p("result_vector", list_of(list_of(U)), doc="one row or one column of a 2-D array"),
        returns=U, impl=_lookup_vector2, polars=_TABLE_REFUSED, sql=_TABLE_REFUSED),
    sig(p("lookup", T), p("lookup_list", list_of(optional(T))), p("result_list", list_of(U)),
        returns=U, impl=_lookup_vector, polars=_BINARY, sql=_BINARY),
    doc="The first item (or result(item)) the predicate accepts, #N/A when none (Power Fx "
        "LookUp); Excel's LOOKUP(value, sorted_list, [results]) finds the last item <= value; "
        "LOOKUP(value, array) searches a 2-D array's first row (if wider than tall) or column "
        "and answers from the last.",
    examples=['LOOKUP([3, 8, 12], x => x > 5) -> 8', 'LOOKUP([3, 8], x => x > 50) -> #N/A',
              'LOOKUP([3, 8, 12], x => x > 5, x => x * 10) -> 80',
              'LOOKUP(7, [1, 5, 10], ["a", "b", "c"]) -> "b"', 'LOOKUP(0, [1, 5]) -> #N/A',
              'LOOKUP([1, 0], x => 1 / x > 2) -> #DIV/0!',
              'LOOKUP(2.5, [[1, 10], [2, 20], [3, 30]]) -> 20',
              'LOOKUP(3, [[1, 2, 3, 4], [10, 20, 30, 40]]) -> 30',
              'LOOKUP(0, [[1, 10], [2, 20]]) -> #N/A'],
    cost=Cost.higher_order(2, 2),
    errors=("#N/A", "#VALUE!"),
)
def lookup(values: tuple[Any, ...], predicate: Callable[[Any], Any]) -> Any:
    found, ok = _first(values, predicate)
    if not ok:
        raise XLError(NA, "no item matches")
    return found


# ------------------------------------------------------------------------------------ ANY, ALL


def _any_of(flags: tuple[Any, ...]) -> bool:
    return any(truthy(v) for v in flags)


def _all_of(flags: tuple[Any, ...]) -> bool:
    return all(truthy(v) for v in flags)


@builtin(
    "ANY",
    sig(p("list", list_of(T)), p("predicate", fn([T], BOOLEAN)), returns=BOOLEAN),
    sig(p("list", list_of(optional(BOOLEAN))), returns=BOOLEAN, impl=_any_of),
    doc="TRUE when the predicate accepts some item (or some item is TRUE); FALSE for an empty "
        "list. Stops at the first TRUE; an error before it is the result.",
    examples=['ANY([1, 5, 10], x => x > 8) -> TRUE', 'ANY([1, 2], x => x > 8) -> FALSE',
              'ANY(DROP([1], 1), x => x > 0) -> FALSE', 'ANY([FALSE, TRUE]) -> TRUE',
              'ANY([1, 0], x => 1 / x > 5) -> #DIV/0!',
              'ANY([0, 1], x => x = 0 or 1 / x > 5) -> TRUE'],
    cost=Cost.higher_order(2, 1),
    can_error=False,
)
def any_(values: tuple[Any, ...], predicate: Callable[[Any], Any]) -> Any:
    for v in values:
        r = predicate(v)
        if type(r) is ErrorValue:
            return r
        if truthy(r):
            return True
    return False


@builtin(
    "ALL",
    sig(p("list", list_of(T)), p("predicate", fn([T], BOOLEAN)), returns=BOOLEAN),
    sig(p("list", list_of(optional(BOOLEAN))), returns=BOOLEAN, impl=_all_of),
    doc="TRUE when the predicate accepts every item (or every item is TRUE); TRUE for an empty "
        "list. Stops at the first FALSE; an error before it is the result.",
    examples=['ALL([2, 4], x => MOD(x, 2) = 0) -> TRUE', 'ALL([2, 3], x => MOD(x, 2) = 0) -> FALSE',
              'ALL(DROP([1], 1), x => x > 0) -> TRUE', 'ALL([TRUE, BLANK()]) -> FALSE',
              'ALL([1, 0], x => 1 / x > 0) -> #DIV/0!'],
    cost=Cost.higher_order(2, 1),
    can_error=False,
)
def all_(values: tuple[Any, ...], predicate: Callable[[Any], Any]) -> Any:
    for v in values:
        r = predicate(v)
        if type(r) is ErrorValue:
            return r
        if not truthy(r):
            return False
    return True
