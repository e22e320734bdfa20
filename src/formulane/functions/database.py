"""Database functions over lists of records: DSUM, DAVERAGE, DCOUNT, DCOUNTA, DGET, DMAX, DMIN,
DPRODUCT, DSTDEV, DSTDEVP, DVAR, DVARP.

Contract: ``database`` is a list of records (Excel's range of rows under a header row), or
that range itself as a 2-D array whose first row names the fields (the excel profile's
``{"Tree","Height";"Apple",18;...}``), and so is ``criteria``;
``field`` names a field (case-insensitive, the first column of a name) or gives its 1-based
position; ``criteria`` is a list of records or Excel's criteria range (a 2-D array under a
header row, or one column given as a list: label first): a record matches when it satisfies
every field of at least one criteria row (fields AND, rows OR); a criterion value is read as
in COUNTIF (``">5"``, ``"a*"``, a number or a date for equality, blank for anything) except
that a text with no operator matches the texts that begin with it, as Excel's criteria
ranges do; an empty criteria list matches every record. In Excel's range a condition under a
blank label or a label the database lacks matches no record; in criteria records such a
field is ``#VALUE!`` (a misspelt field), as are a field that names none and an item that is
neither a record nor a cell. The aggregate then runs the
list family's own implementation over the matching values of ``field`` (one definition of
SUM, STDEV.S...): blanks and non-numbers are skipped where Excel skips them. One pass over
the records per criteria record: cost linear in the records. No polars or SQL form: the
arguments are lists of records, not columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Sequence

from ..types import ANY, NUMBER, TEXT, T, U, fn, list_of, var
from ..values import NUM, VALUE, ErrorValue, XLError
from . import _criteria as cr
from . import lists
from .spec import Cost, Example, Refuse, builtin, p, sig

#: The category of this module's functions (the reference groups them by it).
CATEGORY = "database"

_REFUSE = Refuse("a database function reads a list of records and a list of criteria records "
                 "per row; a column expression receives no such lists")
_DB = p("database", list_of(T), doc="a list of records (the rows)")
_CRITERIA = p("criteria", list_of(U), doc="a list of records: fields AND, records OR")
#: The examples' database (Microsoft's orchard example, trimmed): the variable ``trees``.
_TREES = tuple({"name": n, "height": h, "yield": y} for n, h, y in (
    ("Apple", 18, 14), ("Pear", 12, 10), ("Cherry", 13, 9), ("Apple", 14, 10), ("Pear", 9, 8),
    ("Apple", 8, 6)))


def _ex(expr: str, result: str, **criteria: Any) -> Example:
    """An example over ``trees`` with criteria records given as ``crit`` (a list of dicts)."""
    variables: list[tuple[str, Any]] = [("trees", list(_TREES))]
    for name, rows in criteria.items():
        variables.append((name, rows))
    return Example(expr, result, tuple(variables))


#: A grid column that no name reaches (a blank header, a repeated name): kept under a key of
#: its own, so a field given by position still counts every column of the grid.
_UNNAMED = "\x00column "


def _label(name: Any) -> str | None:
    """A header cell as the name Excel reads there: a text as is, TRUE/FALSE and numbers as
    they display; a blank cell names nothing."""
    if name is None:
        return None
    if type(name) is bool:
        return "TRUE" if name else "FALSE"
    return name if type(name) is str else str(name)


def _records(items: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    """Excel's layout, a 2-D array whose first row holds the field names (``{"Tree",
    "Height"; "Apple", 18; ...}``), as the list of records it stands for; a list of records
    as it is. Names are compared ignoring case and the first column of a name wins, as Excel
    reads the first match; a header TRUE names the field "TRUE"."""
    if not items or not all(type(row) is tuple for row in items):
        return items
    header = items[0]
    keys: list[str] = []
    seen: set[str] = set()
    for i, name in enumerate(header):
        label = _label(name)
        if label is None or label.lower() in seen:
            keys.append(f"{_UNNAMED}{i}")
        else:
            seen.add(label.lower())
            keys.append(label)
    out = []
    for row in items[1:]:
        if len(row) != len(header):
            raise XLError(VALUE, f"every {what} row must have as many cells as the header")
        out.append(dict(zip(keys, row)))
    return tuple(out)


def _record(item: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise XLError(VALUE, f"every {what} item must be a record")
    return item


def _names(record: Mapping[str, Any]) -> dict[str, str]:
    """Lower-cased name -> field, the first field of a name winning; unnamed columns left out."""
    out: dict[str, str] = {}
    for k in record:
        key = str(k)
        if not key.startswith(_UNNAMED):
            out.setdefault(key.lower(), key)
    return out


def _field_name(database: tuple[Any, ...], field: Any) -> str | None:
    database = _records(database, "database")
    if not database:
        return None
    first = _record(database[0], "database")
    names = list(first)
    if type(field) is str:
        found = _names(first).get(field.lower())
        if found is None:
            raise XLError(VALUE, f"the database has no field named {field!r}")
        return found
    index = cr.to_int(field, "field")
    if not 1 <= index <= len(names):
        raise XLError(VALUE, f"field must be between 1 and {len(names)}")
    return str(names[index - 1])


#: One criteria row: (label, value) pairs; a None label is a blank header cell.
_Row = list[tuple[Any, Any]]


def _criteria_rows(criteria: tuple[Any, ...]) -> tuple[list[_Row], bool]:
    """The criteria's rows of (label, condition), and whether they came from Excel's range
    (a 2-D array under a header row, or one column as a list: its first item is the header)
    rather than from records."""
    if not criteria:
        return [], False
    if all(type(row) is tuple for row in criteria):
        header = [_label(h) for h in criteria[0]]
        rows = []
        for row in criteria[1:]:
            if len(row) != len(header):
                raise XLError(VALUE, "every criteria row must have as many cells as the header")
            rows.append(list(zip(header, row)))
        return rows, True
    if not any(isinstance(c, Mapping) for c in criteria):
        # One column of Excel's criteria range (a row of labels alone sets no condition, and
        # Microsoft asks for a label with at least one cell below it): label, then conditions.
        label = _label(criteria[0])
        return [[(label, v)] for v in criteria[1:]], True
    return [list(_record(c, "criteria").items()) for c in criteria], False


def _condition(value: Any) -> Callable[[Any], bool]:
    """A criteria cell as Excel's database functions read it: as COUNTIF's criteria, except
    that a text with no operator matches the texts that begin with it ("Berlin" matches
    "Berlino"; "=Berlin" is the exact match), as Microsoft's advanced-criteria page says:
    https://support.microsoft.com/en-us/office/filter-by-using-advanced-criteria-4c9222fe-8529-4cd7-a898-3f16abdff32b"""
    if type(value) is ErrorValue:
        code = value.code  # an error cell matches the cells holding that error, as in COUNTIF
        return lambda v: type(v) is ErrorValue and v.code == code
    test = cr.criterion(value)
    if type(value) is str and test.op == "" and test.kind == "text":
        return cr.criterion(value + "*")
    return test


def _never(_: Any) -> bool:
    return False


def _matching(database: tuple[Any, ...], criteria: tuple[Any, ...]) -> list[Mapping[str, Any]]:
    database = _records(database, "database")
    records = [_record(r, "database") for r in database]
    rows, excel_range = _criteria_rows(criteria)
    if not rows:
        return records
    known = _names(records[0]) if records else {}
    tests: list[list[tuple[str, Callable[[Any], bool]]]] = []
    for row in rows:
        conditions: list[tuple[str, Callable[[Any], bool]]] = []
        for label, value in row:
            if value is None:
                continue  # an empty criteria cell places no condition
            name = known.get(str(label).lower()) if label is not None else None
            if name is None and excel_range:
                # A condition under a blank label or a label the database lacks: no record
                # satisfies it (Excel's DVARP(db, f, {"";"East"}) is #DIV/0!).
                conditions.append(("", _never))
                continue
            if name is None and records:
                raise XLError(VALUE, f"the database has no field named {label!r}")
            conditions.append((name or str(label), _condition(value)))
        tests.append(conditions)
    return [r for r in records
            if any(all(test(r.get(name)) for name, test in row) for row in tests)]


def _values(database: tuple[Any, ...], field: Any, criteria: tuple[Any, ...]) -> tuple[Any, ...]:
    name = _field_name(database, field)
    if name is None:
        return ()
    return tuple(r.get(name) for r in _matching(database, criteria))


def _argument_error(*args: Any) -> ErrorValue | None:
    """An argument that is itself an error value is the answer. The functions take error
    values (``accepts_errors``) because an error *inside* the ranges is a cell like any
    other: a criteria cell holding #N/A is a condition no record meets, not the answer."""
    for a in args:
        if type(a) is ErrorValue:
            return a
    return None


def _numbers_only(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(v for v in values if cr.is_number(v))


def _declare(name: str, aggregate: Callable[[tuple[Any, ...]], Any], doc: str, examples: list[Example],
             errors: tuple[str, ...] = ("#VALUE!",)) -> Any:
    def impl(database: tuple[Any, ...], field: Any, criteria: tuple[Any, ...]) -> Any:
        error = _argument_error(database, field, criteria)
        return error if error is not None else aggregate(_values(database, field, criteria))

    impl.__name__ = name.lower()
    impl.__module__ = __name__
    return builtin(name, sig(_DB, p("field", TEXT, doc="a field name"), _CRITERIA,
                             returns=NUMBER),
                   sig(_DB, p("field", NUMBER, doc="a 1-based field position"), _CRITERIA,
                       returns=NUMBER),
                   doc=doc, examples=examples, cost=Cost.linear(60, 20), errors=errors,
                   accepts_errors=True,
                   polars=_REFUSE, sql=_REFUSE)(impl)


def _via(spec: Any) -> Callable[[tuple[Any, ...]], Any]:
    run = spec.impl
    return lambda values: run(_numbers_only(values))


DSUM = _declare("DSUM", _via(lists.sum_),
                "The sum of a field over the records that match the criteria (the examples "
                "use trees = six records {name, height, yield}: Apple 18 14, Pear 12 10, "
                "Cherry 13 9, Apple 14 10, Pear 9 8, Apple 8 6).",
                [_ex('DSUM(trees, "yield", crit)', '30', crit=[{'name': 'Apple'}]),
                 _ex('DSUM(trees, 3, crit)', '24', crit=[{'name': 'Apple', 'height': '>10'}]),
                 _ex('DSUM(trees, "profit", crit)', '#VALUE!', crit=[{'name': 'Apple'}])])
DAVERAGE = _declare("DAVERAGE", _via(lists.average),
                    "The average of a field over the matching records; #DIV/0! when none "
                    "has a number there.",
                    [_ex('DAVERAGE(trees, "yield", crit)', '10.75', crit=[{'height': '>10'}]),
                     _ex('DAVERAGE(trees, "yield", crit)', '#DIV/0!', crit=[{'name': 'Plum'}])],
                    errors=("#VALUE!", "#DIV/0!"))
DCOUNT = _declare("DCOUNT", lambda values: len(_numbers_only(values)),
                  "How many matching records hold a number in the field.",
                  [_ex('DCOUNT(trees, "height", crit)', '5', crit=[{'name': 'Apple'}, {'name': 'Pear'}]),
                   _ex('DCOUNT(trees, "name", crit)', '0', crit=[{'height': '<10'}]),
                   _ex('DCOUNT(trees, 9, crit)', '#VALUE!', crit=[{'height': '<10'}])])
DCOUNTA = _declare("DCOUNTA", lambda values: sum(1 for v in values if v is not None),
                   "How many matching records have a value (not blank) in the field.",
                   [_ex('DCOUNTA(trees, "name", crit)', '3', crit=[{'yield': '>=10'}]),
                    _ex('DCOUNTA(trees, "name", crit)', '2', crit=[{'name': 'P*'}]),
                    _ex('DCOUNTA(trees, "name", crit)', '#VALUE!', crit=[{'kind': 'x'}])])
DMAX = _declare("DMAX", _via(lists.max_),
                "The largest number in the field of the matching records (0 when none).",
                [_ex('DMAX(trees, "yield", crit)', '14', crit=[{'name': 'Apple'}, {'name': 'Pear'}]),
                 _ex('DMAX(trees, "yield", crit)', '0', crit=[{'name': 'Plum'}])])
DMIN = _declare("DMIN", _via(lists.min_),
                "The smallest number in the field of the matching records (0 when none).",
                [_ex('DMIN(trees, "yield", crit)', '10', crit=[{'name': 'Apple', 'height': '>10'}]),
                 _ex('DMIN(trees, "height", crit)', '9', crit=[{'name': 'P*'}])])
DPRODUCT = _declare("DPRODUCT", _via(lists.product),
                    "The product of the numbers in the field of the matching records.",
                    [_ex('DPRODUCT(trees, "yield", crit)', '140', crit=[{'name': 'Apple', 'height': '>10'}]),
                     _ex('DPRODUCT(trees, "yield", crit)', '0', crit=[{'name': 'Plum'}])],
                    errors=("#VALUE!", "#NUM!"))
DSTDEV = _declare("DSTDEV", _via(lists.STDEV_S),
                  "The sample standard deviation of the field over the matching records.",
                  [_ex('ROUND(DSTDEV(trees, "yield", crit), 6)', '4', crit=[{'name': 'Apple'}]),
                   _ex('DSTDEV(trees, "yield", crit)', '#DIV/0!', crit=[{'name': 'Cherry'}])],
                  errors=("#VALUE!", "#DIV/0!"))
DSTDEVP = _declare("DSTDEVP", _via(lists.STDEV_P),
                   "The population standard deviation of the field over the matching records.",
                   [_ex('ROUND(DSTDEVP(trees, "yield", crit), 6)', '1', crit=[{'name': 'Pear'}]),
                    _ex('DSTDEVP(trees, "yield", crit)', '#DIV/0!', crit=[{'name': 'Plum'}])],
                   errors=("#VALUE!", "#DIV/0!"))
DVAR = _declare("DVAR", _via(lists.VAR_S),
                "The sample variance of the field over the matching records.",
                [_ex('DVAR(trees, "yield", crit)', '16', crit=[{'name': 'Apple'}]),
                 _ex('DVAR(trees, "yield", crit)', '#DIV/0!', crit=[{'name': 'Cherry'}])],
                errors=("#VALUE!", "#DIV/0!"))
DVARP = _declare("DVARP", _via(lists.VAR_P),
                 "The population variance of the field over the matching records.",
                 [_ex('DVARP(trees, "yield", crit)', '1', crit=[{'name': 'Pear'}]),
                  _ex('DVARP(trees, "yield", crit)', '#DIV/0!', crit=[{'name': 'Plum'}])],
                 errors=("#VALUE!", "#DIV/0!"))


def _one(values: Sequence[Any]) -> Any:
    if not values:
        raise XLError(VALUE, "no record matches the criteria")
    if len(values) > 1:
        raise XLError(NUM, "more than one record matches the criteria")
    return values[0]


def _dget_by(database: tuple[Any, ...], field: Callable[[Any], Any], criteria: tuple[Any, ...]) -> Any:
    """DGET with the field given as a lambda (``r => r.yield``): typed by the lambda."""
    error = _argument_error(database, criteria)
    if error is not None:
        return error
    record = _one(tuple(_matching(database, criteria)))
    return field(record)  # an error value from the lambda is the result, as it should be


_V = var("V")


@builtin("DGET", sig(_DB, p("field", TEXT), _CRITERIA, returns=ANY),
         sig(_DB, p("field", NUMBER), _CRITERIA, returns=ANY),
         sig(_DB, p("field", fn([T], _V), doc="a lambda picking the value from the record"),
             _CRITERIA, returns=_V, impl=_dget_by),
         doc="The field of the one record that matches the criteria; #VALUE! when none "
             "matches, #NUM! when several do. Named by text or position the result's type is "
             "known only at run time (Any); named by a lambda (r => r.yield) it is typed.",
         examples=[_ex('DGET(trees, "yield", crit)', '9', crit=[{'name': 'Cherry'}]),
                   _ex('DGET(trees, "name", crit)', '"Apple"', crit=[{'height': '>17'}]),
                   _ex('DGET(trees, t => t.name, crit) & "!"', '"Apple!"', crit=[{'height': '>17'}]),
                   _ex('DGET(trees, "yield", crit)', '#NUM!', crit=[{'name': 'Apple'}]),
                   _ex('DGET(trees, "yield", crit)', '#VALUE!', crit=[{'name': 'Plum'}])],
         cost=Cost.higher_order(60, 20), errors=("#VALUE!", "#NUM!"), accepts_errors=True,
         polars=_REFUSE,
         sql=_REFUSE)
def dget(database: tuple[Any, ...], field: Any, criteria: tuple[Any, ...]) -> Any:
    error = _argument_error(database, field, criteria)
    if error is not None:
        return error
    return _one(_values(database, field, criteria))


