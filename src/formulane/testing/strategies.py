"""Hypothesis strategies for testing formulas: well-typed formulas and matching inputs.

``formulas(schema, returns=..., max_depth=...)`` draws formula *source text* that type-checks
against the schema in the strict profile; ``formula_trees`` draws the same as ASTs. They walk
the function registry: each signature, its type variables bound to the types at hand, is a way
to build a value of its return type, so every function whose parameters can be produced is
reachable (`coverage` says which are and why the others are not). Arguments are literals,
the schema's variables (nullable ones handled with ``??`` or ``IF(ISBLANK(...))``), record
fields (``order.customer.name``), list items (``xs[2]``), nested calls and operators, lambdas
for MAP, FILTER, REDUCE, SORTBY... (``x => ...``, typed from the other arguments), LET
bindings, omitted optional arguments (``F(a, , c)``) and, rarely, error values (``NA()``).
Numbers given to functions that allocate (REPT's count, SEQUENCE's sizes) stay small, so a
generated formula does not hit a size limit by construction.

``values(schema)`` draws inputs for a schema: blanks wherever a type is nullable, and edge
values (0, -1, 0.1, very large and very small numbers, empty and non-ASCII text, leap days and
month ends, time zones, empty lists...).

First use costs what Hypothesis does once per storage directory (``.hypothesis/``): its
Unicode table (~0.1 s) and, when formulane is a source checkout or an editable install rather
than a package in site-packages, constants mined from every loaded module's source (~0.5 s);
the strategies' own share of a first draw is under 0.1 s (``bench/testing_first_draw.py``).

Use them in your own property tests::

    @given(formulas({"price": "Number"}, returns="Number"), values({"price": "Number"}))
    def test_never_crashes(source, variables):
        result = formulane.evaluate(source, variables, schema={"price": "Number"})
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence, TypeVar

from hypothesis import strategies as st

from ..functions.registry import Registry, default_registry
from ..functions.spec import FunctionSpec
from ..grammar import ast, print_formula
from ..schema import normalize_schema
from ..types import (
    BOOLEAN, DATE, DATETIME, DURATION, NUMBER, TEXT, Type, format_type, list_of, non_null,
    optional,
)

__all__ = ["coverage", "formula_trees", "formulas", "values"]

_T = TypeVar("_T")

SCALARS = (NUMBER, TEXT, BOOLEAN, DATE, DATETIME, DURATION)
#: What type variables are bound to (plus the schema's record types, for MAP over records).
_BINDINGS = (NUMBER, TEXT, BOOLEAN, DATE, list_of(NUMBER))
_LISTS = tuple(list_of(t) for t in SCALARS) + (list_of(list_of(NUMBER)),)
#: Operators spelled as operators (the spec name -> the AST operator).
_BINARY = {op: op for op in ast.BINARY_OPERATORS if op not in ("and", "or")}
_BINARY.update({"OP_AND": "and", "OP_OR": "or"})
_UNARY = {"NEG": "-", "POS": "+", "%": "%"}
#: Functions the generator builds by hand or as leaves.
_SPECIAL = {"LET", "BLANK", "ERROR", "NA"}
#: Number parameters that size an allocation: only small literals go there.
_SMALL = {"REPT": {1}, "SEQUENCE": {0, 1, 2, 3}}
_SMALL_NUMBERS = st.integers(0, 12).map(lambda n: ast.Number(Decimal(n)))


def _pick(items: Sequence[_T]) -> st.SearchStrategy[_T]:
    """``sampled_from(items)`` for types, ways and AST nodes: Hypothesis labels a sampled_from
    by hashing its elements on every draw (deep, for these frozen dataclasses: half the cost of
    a draw); over a ``range`` it does not. Same choices, same shrinking (towards the first)."""
    return st.sampled_from(range(len(items))).map(items.__getitem__)


@dataclass(frozen=True, eq=False)
class _Way:
    """A signature with its type variables bound: how to make a value of ``returns``.

    eq=False: hashed by identity. Hypothesis labels a ``sampled_from`` by hashing its elements
    on every draw; by value that hashed each way's whole FunctionSpec (issue 16 item 9)."""

    spec: FunctionSpec
    params: tuple[Type, ...]
    optional: tuple[bool, ...]
    repeat: int
    returns: Type
    generic: tuple[bool, ...] = ()  # the parameter's declared type has a type variable

    @property
    def name(self) -> str:
        return self.spec.name

    def __repr__(self) -> str:
        return f"<way {self.spec.name}: {', '.join(map(format_type, self.params))} -> " \
               f"{format_type(self.returns)}>"


# ---- the registry as ways to build each type -------------------------------------------------

def _vars(t: Type, out: set[str]) -> set[str]:
    if t.kind == "Var":
        out.add(t.name)
    for sub in (t.elem, *t.params, *(ft for _, ft in t.fields)):
        if sub is not None:
            _vars(sub, out)
    return out


def _subst(t: Type, binding: Mapping[str, Type]) -> Type:
    if t.kind == "Var":
        bound = binding[t.name]
        return optional(bound) if t.nullable else bound
    if t.kind in ("List", "Many", "Fn"):
        return replace(t, elem=_subst(t.elem, binding) if t.elem is not None else None,
                       params=tuple(_subst(p, binding) for p in t.params))
    return t


def _ways_for(spec: FunctionSpec, bindings: tuple[Type, ...]) -> list[_Way]:
    out: list[_Way] = []
    for s in spec.signatures:
        if s.profile is not None:
            continue  # an overload of one profile only (drawn formulas are checked as strict)
        names = sorted(set().union(*(_vars(p.type, set()) for p in s.params),
                                   _vars(s.returns, set())))
        seen: set[tuple[str, ...]] = set()
        for combo in itertools.product(bindings, repeat=len(names)):
            binding = dict(zip(names, combo))
            params = tuple(_subst(p.type, binding) for p in s.params)
            returns = _subst(s.returns, binding)
            key = tuple(format_type(t) for t in (*params, returns))
            if key in seen:
                continue
            seen.add(key)
            out.append(_Way(spec, params, tuple(p.optional for p in s.params), s.repeat,
                            returns, tuple(bool(_vars(p.type, set())) for p in s.params)))
    return out


def _custom_ways(spec: FunctionSpec) -> list[_Way]:
    """Signatures for specs whose type rule is code, not a declared signature."""
    if spec.name == "&":
        return [_Way(spec, (a, b), (False, False), 0, TEXT) for a in SCALARS for b in SCALARS]
    if spec.name == "??":
        return [_Way(spec, (optional(t), t), (False, False), 0, t) for t in SCALARS]
    if spec.name == "COALESCE":
        return [_Way(spec, (optional(t), optional(t), t), (False,) * 3, 0, t) for t in SCALARS]
    return []


@lru_cache(maxsize=16)
def _all_ways(registry: Registry, extra: tuple[Type, ...]) -> tuple[_Way, ...]:
    ways: list[_Way] = []
    for spec in registry:
        if spec.name in _SPECIAL:
            continue
        # With overloads, a type variable bound to a list could make an earlier signature
        # fit the same arguments (FLATTEN(List[T]) vs FLATTEN(List[List[T]])): scalars only.
        bindings = (_BINDINGS if len(spec.signatures) == 1 else SCALARS[:4]) + extra
        custom = _custom_ways(spec)
        ways += custom if custom else _ways_for(spec, bindings)
    return tuple(ways)


# ---- the environment of one formula ----------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Env:
    # eq=False: hashed by identity. Hypothesis hashes a composite strategy's arguments on
    # every draw; with value equality that walked every schema Type and then failed on the
    # ``ways`` dict, ~1.4 s of the first draw (issue 16 item 9).
    names: tuple[tuple[str, Type], ...]  # schema variables and locals in scope
    ways: dict[str, tuple[_Way, ...]]  # by return type
    volatile: bool
    errors: bool
    lambdas: bool
    taken: frozenset[str] = frozenset()  # every name in use, for fresh locals
    made: frozenset[str] = frozenset()  # types some usable way returns
    has: frozenset[str] = frozenset()  # the registry's names: literals use DATE, TIME...

    def __repr__(self) -> str:  # hypothesis shows strategies' arguments: keep it short
        return "<env " + ", ".join(f"{n}: {format_type(t)}" for n, t in self.names) + ">"

    def with_locals(self, pairs: list[tuple[str, Type]]) -> "_Env":
        return replace(self, names=self.names + tuple(pairs),
                       taken=self.taken | {n for n, _ in pairs})

    def fresh(self, draw: Any, base: str) -> str:
        for i in itertools.count(1):
            name = f"{base}{i}"
            if name not in self.taken:
                return name
        raise AssertionError  # pragma: no cover


def _key(t: Type) -> str:
    return format_type(t)


#: The function a literal of these kinds is written with.
_LITERAL_CALLS = {"Date": "DATE", "DateTime": "DATETIME", "Duration": "TIME", "Blank": "BLANK"}


def _has_literal(t: Type, env: _Env) -> bool:
    if t.kind in ("Number", "Text", "Boolean"):
        return True
    if t.kind in _LITERAL_CALLS:
        return _LITERAL_CALLS[t.kind] in env.has
    if t.kind == "List":
        return t.elem is not None and _has_literal(non_null(t.elem), env)
    return False


def _sources(env: _Env, t: Type) -> list[ast.Node]:
    """Names, fields and list items of exactly type ``t`` (records followed 3 levels deep)."""
    out: list[ast.Node] = []
    frontier: list[tuple[ast.Node, Type, int]] = [(ast.Name(n), nt, 0) for n, nt in env.names]
    while frontier:
        node, nt, depth = frontier.pop()
        if nt == t:
            out.append(node)
        if depth >= 3:
            continue
        if nt.kind == "Record":
            for fname, ft in nt.fields:
                frontier.append((ast.Member(node, fname), optional(ft) if nt.nullable else ft,
                                 depth + 1))
        elif nt.kind == "List" and not nt.nullable and nt.elem is not None and depth == 0:
            frontier.append((ast.Index(node, ast.Number(Decimal(1))), nt.elem, depth + 1))
    return out


def _producible(env: _Env, t: Type, depth: int = 2) -> bool:
    """Whether an expression of ``t`` can be drawn here (``depth`` is not limiting: a type only
    calls make is still made by a call at depth 0)."""
    if t.kind == "List" and t.elem is not None and t.elem.kind == "Any":
        return True
    if t.kind == "Many":
        return t.elem is not None and _producible(env, t.elem, depth)
    if t.kind == "Any":
        return True
    if t.kind == "Fn":
        return env.lambdas and t.elem is not None and _producible(env, t.elem, depth)
    base = non_null(t)
    if _has_literal(base, env) or _key(base) in env.made or (
            t.nullable and _key(t) in env.made):
        return True
    return bool(_sources(env, base) or (t.nullable and _sources(env, t)))


def _usable(env: _Env, way: _Way) -> bool:
    if way.spec.volatile and not env.volatile:
        return False
    if way.returns.kind in ("Never", "Blank", "Any", "Fn", "Many"):
        return False
    return all(_producible(env, p) for p, opt in zip(way.params, way.optional) if not opt)


@lru_cache(maxsize=64)
def _env_for(names: tuple[tuple[str, Type], ...], registry: Registry, volatile: bool,
             errors: bool, lambdas: bool) -> _Env:
    extra = tuple(dict.fromkeys(
        t.elem for _, t in names
        if t.kind == "List" and t.elem is not None and t.elem.kind == "Record"))
    ways = _all_ways(registry, extra)
    env = _Env(names, {}, volatile, errors, lambdas, frozenset(n for n, _ in names),
               has=frozenset(spec.name for spec in registry))
    usable: list[_Way] = []
    pending = list(ways)
    while True:  # a fixpoint: what usable ways return makes more ways usable
        ready = [w for w in pending if _usable(env, w)]
        if not ready:
            break
        usable += ready
        # by identity, in one pass: the pairwise `any(w is r ...)` scan this replaces was
        # ~670,000 comparisons, a third of the first draw's cost (issue 16 item 9)
        taken = {id(r) for r in ready}
        pending = [w for w in pending if id(w) not in taken]
        env = replace(env, made=env.made | {_key(w.returns) for w in ready})
    table: dict[str, list[_Way]] = {}
    for way in usable:
        table.setdefault(_key(way.returns), []).append(way)
    return replace(env, ways={k: tuple(v) for k, v in table.items()})


def _make_env(schema: Mapping[str, Type], registry: Registry, *, volatile: bool, errors: bool,
              lambdas: bool) -> _Env:
    return _env_for(tuple(sorted(schema.items(), key=lambda kv: kv[0])), registry, volatile,
                    errors, lambdas)


# ---- drawing expressions ---------------------------------------------------------------------

@lru_cache(maxsize=None)
def _number_literal() -> st.SearchStrategy[ast.Node]:
    plain = st.one_of(
        st.integers(0, 1000).map(Decimal),
        st.decimals(0, 10**6, places=3, allow_nan=False, allow_infinity=False),
        st.sampled_from([Decimal(0), Decimal(1), Decimal("0.5"), Decimal(100), Decimal("1E+3"),
                         Decimal("0.001"), Decimal("1E+15"), Decimal("1E-12")]),
    ).map(ast.Number)
    return st.one_of(plain, plain.map(lambda n: ast.Unary("-", n)))


@lru_cache(maxsize=256)
def _literal(t: Type, solid: bool = False) -> st.SearchStrategy[ast.Node]:
    """A literal of ``t``; ``solid``: no empty list (it has no element type to bind). One
    strategy per type, built once: Hypothesis validates each new strategy object on its first
    draw, and a fresh ``text(characters(...))`` per draw rebuilt its character table too."""
    kind = t.kind
    if kind == "Number":
        return _number_literal()
    if kind == "Text":
        return st.one_of(
            st.text(st.characters(exclude_categories=["Cs"]), max_size=8),
            st.sampled_from(["", " ", "a", "A", "abc", "a,b,c", "😀", "é", "%", "*", "1"]),
        ).map(ast.String)
    if kind == "Boolean":
        return st.booleans().map(ast.Boolean)
    if kind == "Date":
        return st.dates(dt.date(1901, 1, 1), dt.date(2099, 12, 31)).map(
            lambda d: ast.Call("DATE", tuple(ast.Number(Decimal(x))
                                             for x in (d.year, d.month, d.day))))
    if kind == "DateTime":
        return st.datetimes(dt.datetime(1970, 1, 1), dt.datetime(2090, 12, 31)).map(
            lambda d: ast.Call("DATETIME", tuple(ast.Number(Decimal(x)) for x in (
                d.year, d.month, d.day, d.hour, d.minute, d.second))))
    if kind == "Duration":
        return st.tuples(st.integers(0, 23), st.integers(0, 59), st.integers(0, 59)).map(
            lambda hms: ast.Call("TIME", tuple(ast.Number(Decimal(x)) for x in hms)))
    if kind == "Blank":
        return st.just(ast.Call("BLANK", ()))
    if kind == "List":
        assert t.elem is not None
        item = _literal(non_null(t.elem))
        if t.elem.nullable:
            item = st.one_of(item, st.just(ast.Call("BLANK", ())))
        # An empty [] has no element type: overloads pick their first (Number) reading.
        least = 0 if non_null(t.elem).kind in ("Number", "List") and not solid else 1
        return st.lists(item, min_size=least, max_size=4).map(lambda xs: ast.ListLit(tuple(xs)))
    raise ValueError(f"no literal of {t}")


@st.composite
def _expr(draw: st.DrawFn, t: Type, depth: int, env: _Env, error_ok: bool = False,
          solid: bool = False) -> ast.Node:
    """An expression of type ``t`` (a nullable ``t`` may also be given a value of ``t``);
    ``solid``: for a generic parameter, no ``[]`` whose element type is unknown."""
    if t.kind == "Any":
        t = draw(_pick(SCALARS))
    if t.kind == "List" and t.elem is not None and t.elem.kind == "Any":
        t = draw(_pick([u for u in _LISTS if _producible(env, u, depth)]))
    if t.kind == "Many":
        assert t.elem is not None
        inner = non_null(t.elem)
        choices = [inner] + ([list_of(t.elem)] if _producible(env, list_of(t.elem), depth)
                             else [])
        return draw(_expr(draw(_pick(choices)), depth, env, error_ok, solid))
    if t.nullable and t.kind not in ("Blank",):
        return draw(_nullable(t, depth, env))
    options: list[str] = []
    if _has_literal(t, env):
        options += ["literal"] * 2
    sources = _sources(env, t)
    if sources:
        options += ["source"] * 3
    defaulted = [s for s in _sources(env, optional(t))] if t.kind in (
        "Number", "Text", "Boolean", "Date", "DateTime", "Duration") and _has_literal(t, env) \
        and ("??" in env.has or {"IF", "ISBLANK"} <= env.has) else []
    if defaulted:
        options.append("defaulted")
    ways = env.ways.get(_key(t), ())
    if ways and depth > 0:
        options += ["call"] * 4
        if "LET" in env.has:
            options.append("let")
    errors = [e for e in ("NA", "ERROR") if e in env.has]
    if error_ok and env.errors and errors:
        options.append("error")
    if not options and ways:
        options.append("call")  # only calls make this type: one more level, whatever depth
    if not options:
        raise ValueError(f"cannot produce a value of {t} here")
    choice = draw(st.sampled_from(options))
    if choice == "literal":
        return draw(_literal(t, solid))
    if choice == "source":
        return draw(_pick(sources))
    if choice == "defaulted":
        source = draw(_pick(defaulted))
        fallback = draw(_literal(t))
        narrow = isinstance(source, ast.Name) and {"IF", "ISBLANK"} <= env.has
        if "??" in env.has and (not narrow or draw(st.booleans())):
            return ast.Binary("??", source, fallback)
        return ast.Call("IF", (ast.Call("ISBLANK", (source,)), fallback, source))
    if choice == "error":
        name = draw(st.sampled_from(errors))
        return ast.Call(name, () if name == "NA" else (ast.String("x"),))
    if choice == "let":
        return draw(_let(t, depth, env))
    way = draw(_pick(ways))
    return draw(_call(way, depth, env))


@st.composite
def _nullable(draw: st.DrawFn, t: Type, depth: int, env: _Env) -> ast.Node:
    base = non_null(t)
    options = ["value"] * 3
    nullable_sources = _sources(env, t)
    if nullable_sources:
        options += ["source"] * 2
    if "BLANK" in env.has:
        options.append("blank")
    if depth > 0 and any(w.name == "IF" for w in env.ways.get(_key(t), ())):
        options.append("if")
    choice = draw(st.sampled_from(options))
    if choice == "source":
        return draw(_pick(nullable_sources))
    if choice == "blank":
        return ast.Call("BLANK", ())
    if choice == "if":
        return ast.Call("IF", (draw(_expr(BOOLEAN, depth - 1, env)),
                               draw(_expr(base, depth - 1, env))))
    if not _producible(env, base, depth):
        return draw(_pick(nullable_sources)) if nullable_sources else \
            ast.Call("BLANK", ())
    return draw(_expr(base, depth, env))


@st.composite
def _let(draw: st.DrawFn, t: Type, depth: int, env: _Env) -> ast.Node:
    bound = draw(_pick([s for s in SCALARS + _LISTS[:2] if _producible(env, s, 0)]))
    name = env.fresh(draw, "v")
    value = draw(_expr(bound, depth - 1, env))  # error values included: LET passes them on
    body = draw(_expr(t, depth - 1, env.with_locals([(name, bound)])))
    return ast.Call("LET", (ast.Name(name), value, body))


@st.composite
def _call(draw: st.DrawFn, way: _Way, depth: int, env: _Env) -> ast.Node:
    spec = way.spec
    params = list(way.params)
    optional_flags = list(way.optional)
    # An error value (type Never) may stand in only where the parameter's type is fixed: a
    # generic parameter would be bound to Never by it, and overloads would pick the first.
    fixed = [not g for g in way.generic] if way.generic else [False] * len(params)
    if spec.check is not None or spec.category == "operators" or len(spec.signatures) > 1:
        fixed = [False] * len(params)
    if way.repeat:
        group = params[len(params) - way.repeat:]
        extra = draw(st.integers(0, 2))
        params += group * extra
        optional_flags += [False] * (way.repeat * extra)
        fixed += fixed[len(fixed) - way.repeat:] * extra
    args: list[ast.Node | None] = []
    small = _SMALL.get(spec.name, set())
    for i, (ptype, opt) in enumerate(zip(params, optional_flags)):
        if opt and (not _producible(env, ptype) or draw(st.integers(0, 2)) == 0):
            args.append(None)  # left out
            continue
        if i in small and ptype.kind == "Number":
            args.append(draw(_SMALL_NUMBERS))
        elif ptype.kind == "Fn":
            args.append(draw(_lambda(ptype, depth, env)))
        else:
            generic = _is_generic(way, i) or spec.check is not None
            if generic:
                ptype = _solid(ptype)  # a blank would bind the type variable to T?
            args.append(draw(_expr(ptype, depth - 1, env,
                                   error_ok=fixed[i] and ptype.kind != "Any", solid=generic)))
    while args and args[-1] is None:
        args.pop()  # trailing omitted arguments are simply not written
    nodes = tuple(ast.Omitted() if a is None else a for a in args)
    if len(nodes) == 1 and isinstance(nodes[0], ast.Omitted):
        nodes = ()
    if spec.name in _BINARY and len(nodes) == 2:
        return ast.Binary(_BINARY[spec.name], nodes[0], nodes[1])
    if spec.name in _UNARY and len(nodes) == 1:
        return ast.Unary(_UNARY[spec.name], nodes[0])
    if spec.name == "NOT" and len(nodes) == 1 and draw(st.booleans()):
        return ast.Unary("not", nodes[0])
    return ast.Call(spec.name, nodes)


def _is_generic(way: _Way, i: int) -> bool:
    """Whether argument ``i`` (repeats followed) fills a parameter declared with a type
    variable."""
    n = len(way.generic)
    if not n:
        return False
    if i >= n:
        start = n - way.repeat
        i = start + (i - start) % max(1, way.repeat)
    return way.generic[i]


def _solid(t: Type) -> Type:
    """``t`` with no nullable part (List[T?] -> List[T])."""
    t = non_null(t)
    if t.kind in ("List", "Many") and t.elem is not None:
        return replace(t, elem=_solid(t.elem))
    return t


@st.composite
def _lambda(draw: st.DrawFn, fn_type: Type, depth: int, env: _Env) -> ast.Node:
    names: list[str] = []
    scope = env
    for ptype in fn_type.params:
        name = scope.fresh(draw, "x")
        names.append(name)
        scope = scope.with_locals([(name, ptype)])
    assert fn_type.elem is not None
    body = draw(_expr(fn_type.elem, max(depth - 1, 0), scope))
    return ast.Lambda(tuple(names), body)


# ---- public strategies -----------------------------------------------------------------------

def formula_trees(schema: Any = None, returns: str | Type | None = None, *, max_depth: int = 3,
                  registry: Registry | None = None, functions: Iterable[str] | None = None,
                  volatile: bool = False, errors: bool = True,
                  lambdas: bool = True) -> st.SearchStrategy[ast.Node]:
    """Well-typed formula ASTs (strict profile); see `formulas` for the options."""
    types = normalize_schema(schema)
    env = _make_env(types, registry or default_registry(), volatile=volatile, errors=errors,
                    lambdas=lambdas)
    depth = max(0, max_depth)
    target = None if returns is None else _as_type(returns)
    if functions is not None:
        wanted = {f.upper() for f in functions}
        ways = [w for ws in env.ways.values() for w in ws if w.name in wanted and (
            target is None or w.returns == target)]
        if not ways:
            raise ValueError(f"no way to call {sorted(wanted)} here" +
                             (f" returning {format_type(target)}" if target else ""))
        return _pick(ways).flatmap(lambda w: _call(w, max(depth, 1), env))
    if target is not None:
        if not _producible(env, target, depth):
            raise ValueError(f"cannot generate formulas of type {format_type(target)}")
        return _expr(target, depth, env)
    targets = [t for t in (*SCALARS, *_LISTS) if _producible(env, t, depth)]
    return _pick(targets).flatmap(lambda t: _expr(t, depth, env))


def formulas(schema: Any = None, returns: str | Type | None = None, *, max_depth: int = 3,
             registry: Registry | None = None, functions: Iterable[str] | None = None,
             volatile: bool = False, errors: bool = True,
             lambdas: bool = True) -> st.SearchStrategy[str]:
    """Formula source text that checks against ``schema`` in the strict profile.

    ``returns``: the static type of every formula (a type string or `Type`; any type when
    None). ``max_depth``: how deeply calls nest (0: only literals, names and fields).
    ``functions``: the formula is a call to one of these. ``volatile``: allow TODAY() and
    NOW(). ``errors``: allow NA() and ERROR(...) as arguments. ``lambdas``: allow lambda
    arguments (MAP, FILTER, REDUCE, SORTBY...)."""
    return formula_trees(schema, returns, max_depth=max_depth, registry=registry,
                         functions=functions, volatile=volatile, errors=errors,
                         lambdas=lambdas).map(print_formula)


def _as_type(t: str | Type) -> Type:
    if isinstance(t, Type):
        return t
    from ..types import parse_type

    return parse_type(t)


def coverage(schema: Any = None, *, registry: Registry | None = None,
             volatile: bool = False) -> tuple[set[str], dict[str, str]]:
    """Which functions of the registry `formulas` can call with this schema, and for the
    others the reason."""
    reg = registry or default_registry()
    env = _make_env(normalize_schema(schema), reg, volatile=volatile, errors=True, lambdas=True)
    reachable = {w.name for ws in env.ways.values() for w in ws} | {"LET", "BLANK", "NA", "ERROR"}
    missing: dict[str, str] = {}
    for spec in reg:
        if spec.name in reachable or spec.name in _BINARY or spec.name in _UNARY:
            continue
        if spec.volatile and not volatile:
            missing[spec.name] = "volatile (pass volatile=True)"
        else:
            missing[spec.name] = "no signature whose parameters can be produced with this schema"
    return reachable, missing


# ---- inputs ----------------------------------------------------------------------------------

_EDGE_NUMBERS = [0, 1, -1, Decimal("0.1"), Decimal("-0.5"), Decimal("1E-10"), 10**15,
                 -10**15, Decimal("123456789.123456789"), Decimal("9.99E+20"), 2, 100]
_EDGE_TEXT = ["", " ", "a", "A", "abc", "ABC", "😀", "é", "e\u0301", "a,b", '"quoted"', "'",
              "  padded  ", "line\nbreak", "1", "1.5", "TRUE", "#N/A", "x" * 40]
_EDGE_DATES = [dt.date(2024, 2, 29), dt.date(2023, 12, 31), dt.date(2024, 1, 31),
               dt.date(1900, 1, 1), dt.date(2000, 1, 1), dt.date(2100, 12, 31)]
_ZONES = [dt.timezone.utc, dt.timezone(dt.timedelta(hours=5, minutes=30)),
          dt.timezone(dt.timedelta(hours=-8))]


def _value(t: Type) -> st.SearchStrategy[Any]:
    base: st.SearchStrategy[Any]
    if t.kind == "Number":
        base = st.one_of(
            st.integers(-10**6, 10**6),
            st.sampled_from(_EDGE_NUMBERS),
            st.decimals(-10**9, 10**9, places=4, allow_nan=False, allow_infinity=False),
            st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False, width=64),
        )
    elif t.kind == "Text":
        base = st.one_of(st.text(max_size=12), st.sampled_from(_EDGE_TEXT))
    elif t.kind == "Boolean":
        base = st.booleans()
    elif t.kind == "Date":
        base = st.one_of(st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31)),
                         st.sampled_from(_EDGE_DATES))
    elif t.kind == "DateTime":
        base = st.datetimes(dt.datetime(1970, 1, 1), dt.datetime(2100, 1, 1),
                            timezones=st.sampled_from(_ZONES))
    elif t.kind == "Duration":
        base = st.one_of(st.timedeltas(dt.timedelta(days=-1000), dt.timedelta(days=1000)),
                         st.sampled_from([dt.timedelta(0), dt.timedelta(seconds=1),
                                          dt.timedelta(days=-1), dt.timedelta(hours=36)]))
    elif t.kind == "List":
        assert t.elem is not None
        base = st.one_of(st.just([]), st.lists(_value(t.elem), min_size=1, max_size=6))
    elif t.kind == "Record":
        base = st.fixed_dictionaries({n: _value(ft) for n, ft in t.fields})
    else:  # Any: untyped JSON-like values
        base = st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=4), st.booleans(),
                         st.lists(st.integers(-5, 5), max_size=3))
    if t.nullable and t.kind != "Any":
        return st.one_of(st.none(), base)
    return base


def values(schema: Any) -> st.SearchStrategy[dict[str, Any]]:
    """Inputs for a schema: one value per variable, blanks where the type allows them, edge
    values often."""
    types = normalize_schema(schema)
    return st.fixed_dictionaries({n: _value(t) for n, t in types.items()})
