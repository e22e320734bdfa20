"""Hypothesis strategies for testing formulas: well-typed formulas and matching inputs.

`formulas(schema, returns=...)` draws formula *source text* that type-checks against the schema
(in the strict profile) by walking the function registry: each function signature whose types
are concrete, or generic in a way that can be instantiated, is a way to build a value of its
return type. `values(schema)` draws inputs for a schema, blanks and edge values included.
Use them in your own property tests::

    @given(formulas({"price": "Number"}, returns="Number"), values({"price": "Number"}))
    def test_never_crashes(source, variables):
        result = formulane.evaluate(source, variables, schema={"price": "Number"})
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Mapping

from hypothesis import strategies as st

from ..functions.registry import Registry, default_registry
from ..functions.spec import FunctionSpec, Sig
from ..schema import normalize_schema
from ..types import BOOLEAN, DATE, NUMBER, TEXT, Type, format_type, list_of, non_null, parse_type

_GENERATED = (NUMBER, TEXT, BOOLEAN, DATE, list_of(NUMBER), list_of(TEXT))
_GENERATABLE = {format_type(t) for t in _GENERATED}
_SKIP = {"LET", "BLANK", "ERROR", "NA", "TODAY", "NOW", "SEQUENCE", "REPT", "TEXTSPLIT"}
_OPERATORS = {"+": "+", "-": "-", "*": "*", "/": "/", "&": "&", "=": "=", "<>": "<>", "<": "<",
              "<=": "<=", ">": ">", ">=": ">=", "OP_AND": "and", "OP_OR": "or"}


def _concrete(t: Type, binding: Type) -> Type | None:
    """Instantiate generic T/U with ``binding``; None when the type is not generatable."""
    if t.kind == "Var":
        return binding
    if t.kind == "Many":
        return _concrete(t.elem, binding)  # type: ignore[arg-type]
    if t.kind == "List":
        inner = _concrete(non_null(t.elem), binding)  # type: ignore[arg-type]
        return list_of(inner) if inner is not None else None
    if t.kind in ("Any", "Fn", "Record", "Blank", "Never"):
        return None if t.kind != "Any" else NUMBER
    return non_null(t)


def _key(t: Type) -> str:
    return format_type(t)


def _ways(registry: Registry) -> dict[str, list[tuple[FunctionSpec, Sig, tuple[Type, ...], Type]]]:
    """Return type -> [(spec, sig, concrete param types, return type)] over the registry."""
    table: dict[str, list[tuple[FunctionSpec, Sig, tuple[Type, ...], Type]]] = {}
    for spec in registry:
        if spec.name in _SKIP or spec.check is not None or spec.volatile:
            continue
        for s in spec.signatures:
            for binding in (NUMBER, TEXT):
                params = [_concrete(p.type, binding) for p in s.params if not p.optional]
                if any(p is None or _key(p) not in _GENERATABLE for p in params):
                    break
                if any(p.type.kind == "Fn" for p in s.params):
                    break
                if s.returns.nullable:
                    break  # may be blank: not a value of the type asked for
                ret = _concrete(s.returns, binding)
                if ret is None or _key(ret) not in {_key(g) for g in _GENERATED}:
                    break
                table.setdefault(_key(ret), []).append((spec, s, tuple(params), ret))  # type: ignore[arg-type]
                if not any(p.type.kind == "Var" or (p.type.elem and p.type.elem.kind == "Var")
                           for p in s.params) and s.returns.kind != "Var":
                    break
    return table


def _literal(t: Type) -> st.SearchStrategy[str]:
    if t.kind == "Number":
        return st.one_of(
            st.integers(-1000, 1000).map(str),
            st.decimals(-10**6, 10**6, places=3, allow_nan=False, allow_infinity=False)
            .map(lambda d: format(d, "f")),
            st.sampled_from(["0", "1", "0.5", "100", "1e3"]),
        ).map(lambda s: f"({s})" if s.startswith("-") else s)
    if t.kind == "Text":
        return st.text(st.characters(blacklist_categories=("Cs",)), max_size=8).map(
            lambda s: '"' + s.replace('"', '""') + '"')
    if t.kind == "Boolean":
        return st.sampled_from(["TRUE", "FALSE"])
    if t.kind == "Date":
        return st.dates(dt.date(1990, 1, 1), dt.date(2090, 12, 31)).map(
            lambda d: f"DATE({d.year}, {d.month}, {d.day})")
    if t.kind == "List":
        return st.lists(_literal(t.elem), max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]")  # type: ignore[arg-type]
    raise ValueError(f"cannot generate literals of {t}")


def _name_source(name: str) -> str:
    return name if name.isidentifier() else "{" + name + "}"


@st.composite
def _expr(draw: Any, t: Type, depth: int, schema: Mapping[str, Type],
          ways: dict[str, list[Any]]) -> str:
    options = ["literal"]
    names = [n for n, nt in schema.items() if _key(nt) == _key(t)]
    if names:
        options.append("name")
    if depth > 0 and ways.get(_key(t)):
        options += ["call", "call"]
    choice = draw(st.sampled_from(options))
    if choice == "literal":
        return draw(_literal(t))
    if choice == "name":
        return _name_source(draw(st.sampled_from(names)))
    spec, s, params, _ = draw(st.sampled_from(ways[_key(t)]))
    args = [draw(_expr(p, depth - 1, schema, ways)) for p in params]
    if spec.name in _OPERATORS:
        op = _OPERATORS[spec.name]
        return f"({args[0]} {op} {args[1]})"
    if spec.category == "operators":
        if spec.name == "NEG":
            return f"(-{args[0]})"
        if spec.name == "%":
            return f"({args[0]})%"
        if spec.name == "??":
            return f"({args[0]} ?? {args[1]})"
        if spec.name == "^":
            return f"(({args[0]}) ^ ({args[1]}))"
        return args[0] if args else draw(_literal(t))
    return f"{spec.name}({', '.join(args)})"


def formulas(schema: Any = None, returns: str | Type | None = None, *, max_depth: int = 3,
             registry: Registry | None = None) -> st.SearchStrategy[str]:
    """Well-typed formula source over the schema (strict profile)."""
    types = normalize_schema(schema)
    concrete = {n: t for n, t in types.items() if not t.nullable}
    ways = _ways(registry or default_registry())
    if returns is None:
        targets: list[Type] = list(_GENERATED)
    else:
        targets = [parse_type(returns) if isinstance(returns, str) else returns]
    return st.sampled_from(targets).flatmap(lambda t: _expr(t, max_depth, concrete, ways))


def _value(t: Type) -> st.SearchStrategy[Any]:
    base: st.SearchStrategy[Any]
    if t.kind == "Number":
        base = st.one_of(st.integers(-10**6, 10**6), st.sampled_from([0, 1, -1]),
                         st.decimals(-10**9, 10**9, places=4, allow_nan=False,
                                     allow_infinity=False))
    elif t.kind == "Text":
        base = st.one_of(st.text(max_size=12), st.sampled_from(["", " ", "a", "A", "😀"]))
    elif t.kind == "Boolean":
        base = st.booleans()
    elif t.kind == "Date":
        base = st.one_of(st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31)),
                         st.sampled_from([dt.date(2024, 2, 29), dt.date(2023, 12, 31),
                                          dt.date(2024, 1, 31)]))
    elif t.kind == "DateTime":
        base = st.datetimes(dt.datetime(1970, 1, 1), dt.datetime(2100, 1, 1),
                            timezones=st.just(dt.timezone.utc))
    elif t.kind == "Duration":
        base = st.timedeltas(dt.timedelta(days=-1000), dt.timedelta(days=1000))
    elif t.kind == "List":
        base = st.lists(_value(t.elem), max_size=6)  # type: ignore[arg-type]
    elif t.kind == "Record":
        base = st.fixed_dictionaries({n: _value(ft) for n, ft in t.fields})
    else:
        base = st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=4))
    return st.one_of(st.none(), base) if t.nullable else base


def values(schema: Any) -> st.SearchStrategy[dict[str, Any]]:
    """Inputs for a schema, including blanks where allowed and edge values."""
    types = normalize_schema(schema)
    return st.fixed_dictionaries({n: _value(t) for n, t in types.items()})


__all__ = ["formulas", "values", "Decimal"]
