"""Database functions over lists of records: DSUM, DAVERAGE, DCOUNT, DCOUNTA, DGET, DMAX, DMIN,
DPRODUCT, DSTDEV, DSTDEVP, DVAR, DVARP.

Contract: ``database`` is a list of records (Excel's range of rows under a header row), or
that range itself as a 2-D array whose first row names the fields (the excel profile's
``{"Tree","Height";"Apple",18;...}``), and so is ``criteria``;
``field`` names a field (case-insensitive) or gives its 1-based position; ``criteria`` is a
list of records, Excel's criteria range: a record matches when it satisfies every field of
at least one criteria record (fields AND, records OR); a criterion value is read as in
COUNTIF (``">5"``, ``"a*"``, a number or a date for equality, blank for anything), and an
empty criteria list matches every record. A criteria field that the database lacks, a field
that names none, or an item that is not a record is ``#VALUE!``. The aggregate then runs the
list family's own implementation over the matching values of ``field`` (one definition of
SUM, STDEV.S...): blanks and non-numbers are skipped where Excel skips them. One pass over
the records per criteria record: cost linear in the records. No polars or SQL form: the
arguments are lists of records, not columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Sequence

from ..types import ANY, NUMBER, TEXT, T, U, fn, list_of, var
from ..values import NUM, VALUE, XLError
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


def _records(items: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    """Excel's layout, a 2-D array whose first row holds the field names (``{"Tree",
    "Height"; "Apple", 18; ...}``), as the list of records it stands for; a list of records
    as it is. A repeated name keeps its first column, as Excel reads the first match."""
    if not items or not all(type(row) is tuple for row in items):
        return items
    header = items[0]
    columns: dict[str, int] = {}
    for i, name in enumerate(header):
        if name is not None and not isinstance(name, bool):
            columns.setdefault(name if type(name) is str else str(name), i)
    out = []
    for row in items[1:]:
        if len(row) != len(header):
            raise XLError(VALUE, f"every {what} row must have as many cells as the header")
        out.append({name: row[i] for name, i in columns.items()})
    return tuple(out)


def _record(item: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise XLError(VALUE, f"every {what} item must be a record")
    return item


def _names(record: Mapping[str, Any]) -> dict[str, str]:
    return {str(k).lower(): str(k) for k in record}


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


def _matching(database: tuple[Any, ...], criteria: tuple[Any, ...]) -> list[Mapping[str, Any]]:
    database, criteria = _records(database, "database"), _records(criteria, "criteria")
    records = [_record(r, "database") for r in database]
    rows = [_record(c, "criteria") for c in criteria]
    if not rows:
        return records
    known = _names(records[0]) if records else {}
    tests: list[list[tuple[str, Callable[[Any], bool]]]] = []
    for row in rows:
        conditions: list[tuple[str, Callable[[Any], bool]]] = []
        for label, value in row.items():
            if value is None:
                continue  # an empty criteria cell places no condition
            name = known.get(str(label).lower())
            if name is None and records:
                raise XLError(VALUE, f"the database has no field named {label!r}")
            conditions.append((name or str(label), cr.criterion(value)))
        tests.append(conditions)
    return [r for r in records
            if any(all(test(r.get(name)) for name, test in row) for row in tests)]


def _values(database: tuple[Any, ...], field: Any, criteria: tuple[Any, ...]) -> tuple[Any, ...]:
    name = _field_name(database, field)
    if name is None:
        return ()
    return tuple(r.get(name) for r in _matching(database, criteria))


def _numbers_only(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(v for v in values if cr.is_number(v))


def _declare(name: str, aggregate: Callable[[tuple[Any, ...]], Any], doc: str, examples: list[Example],
             errors: tuple[str, ...] = ("#VALUE!",)) -> Any:
    def impl(database: tuple[Any, ...], field: Any, criteria: tuple[Any, ...]) -> Any:
        return aggregate(_values(database, field, criteria))

    impl.__name__ = name.lower()
    impl.__module__ = __name__
    return builtin(name, sig(_DB, p("field", TEXT, doc="a field name"), _CRITERIA,
                             returns=NUMBER),
                   sig(_DB, p("field", NUMBER, doc="a 1-based field position"), _CRITERIA,
                       returns=NUMBER),
                   doc=doc, examples=examples, cost=Cost.linear(60, 20), errors=errors,
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
         cost=Cost.higher_order(60, 20), errors=("#VALUE!", "#NUM!"), polars=_REFUSE,
         sql=_REFUSE)
def dget(database: tuple[Any, ...], field: Any, criteria: tuple[Any, ...]) -> Any:
    return _one(_values(database, field, criteria))


