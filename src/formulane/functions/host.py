"""Host functions: an application's own read-only functions, declared and checked like builtins.

Contract: `host_function(...)` takes the same declaration as a builtin (name, typed signatures,
doc, examples, cost, errors) and returns a `FunctionSpec`; `with_host_functions(registry,
*specs)` returns a new registry holding them after the checks the test suite makes of every
builtin: a free, well-formed name, a doc line, at least two examples, and every example giving
its stated result through the real engine with the new registry. The checker, interpreter,
`functions_markdown(registry)`, `prompt(registry=...)` and the completion all read the same
declaration, so a host function is typed, documented and offered like any other.

What a host function may do: read the application's own state (a price list, a tax table) and
compute. It receives engine values (Decimal or small int, str, bool, date, tuple, read-only
mapping) and returns one; it must not write anything. Raising `ValueError("...")` gives the
formula a `#VALUE!` error value with that message at the call's span (ArithmeticError gives
`#NUM!`); any other exception is a bug of the host function and surfaces as an InternalError
(E901), never a traceback. A host function is not folded at compile time unless it is declared
``pure`` (its answer depends on its arguments only), since the state it reads may change after
a formula is compiled. It has no polars or SQL form unless one is given: columnar and SQL
compilation refuse it with that reason, never run it row by row in silence.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..errors import CheckError
from ..types import Type, parse_type
from .registry import Registry
from .spec import Cost, Example, FunctionSpec, Param, Refuse, Sig, builtin

_NAME = re.compile(r"[A-Z][A-Z0-9_]*(\.[A-Z][A-Z0-9_]*)*")
_NO_FORM = Refuse("a host function runs in Python; declare polars= / sql= forms to vectorize it")


def host_function(name: str, *signatures: Sig, doc: str, examples: Sequence[str | Example],
                  params: Mapping[str, str | Type] | None = None, returns: str | Type | None = None,
                  cost: Cost = Cost.const(10), errors: Iterable[str] = (), pure: bool = False,
                  polars: Any = _NO_FORM, sql: Any = _NO_FORM, category: str = "host",
                  ) -> Callable[[Callable[..., Any]], FunctionSpec]:
    """Declare an application function (a decorator, like `builtin`).

    One signature can be given as ``params={"region": "Text"}, returns="Number"`` (type strings
    as in schemas); several overloads as `sig(...)` values. ``cost`` is its price in meter units
    (about 50 ns each): give what a call really costs, the budget depends on it."""
    if params is not None or returns is not None:
        if signatures or returns is None:
            raise TypeError("give either sig(...) overloads or params= and returns=")
        signatures = (Sig(tuple(Param(n, _type(t)) for n, t in (params or {}).items()),
                          _type(returns)),)
    return builtin(name, *signatures, doc=doc, examples=examples, category=category, cost=cost,
                   errors=errors, volatile=not pure, polars=polars, sql=sql)


def _type(t: str | Type) -> Type:
    return parse_type(t) if isinstance(t, str) else t


def with_host_functions(registry: Registry, *specs: FunctionSpec,
                        replace: bool = False) -> Registry:
    """``registry`` plus ``specs``, each checked as a builtin is (see the module doc). A name
    that is already a function is refused unless ``replace=True``. Raises `CheckError` (E209)
    naming the function and what is wrong."""
    for spec in specs:
        _check_declaration(spec, registry, replace)
    extended = registry.extend(*specs)
    for spec in specs:
        for example in spec.examples:
            _check_example(spec, example, extended)
    return extended


def _refuse(spec: FunctionSpec, problem: str) -> CheckError:
    return CheckError(f"host function {spec.name}: {problem}", code="E209")


def _check_declaration(spec: FunctionSpec, registry: Registry, replace: bool) -> None:
    if not isinstance(spec, FunctionSpec):
        raise CheckError(f"not a function declaration: {spec!r} (decorate it with "
                         "@host_function)", code="E209")
    if not _NAME.fullmatch(spec.name):
        raise _refuse(spec, "a name is letters, digits, '_' and '.', starting with a letter")
    if spec.name in registry and not replace:
        raise _refuse(spec, "the name is already a function (pass replace=True to override)")
    if not spec.signatures:
        raise _refuse(spec, "it needs at least one signature")
    if not spec.doc.strip():
        raise _refuse(spec, "it needs a doc line (it is shown in the reference and prompts)")
    if len(spec.examples) < 2:
        raise _refuse(spec, "it needs at least two examples (they are run as checks)")
    if spec.lazy or spec.check is not None:
        raise _refuse(spec, "lazy functions and custom checks are for builtins only")


def _check_example(spec: FunctionSpec, example: Example, registry: Registry) -> None:
    from .. import evaluate
    from ..errors import FormulaError
    from ..values import ErrorValue

    variables = dict(example.variables)
    try:
        got = evaluate(example.expr, variables, registry=registry)
        want = evaluate(example.result, variables, registry=registry) \
            if not example.result.startswith("#") else ErrorValue(example.result)
    except FormulaError as exc:
        raise _refuse(spec, f"example {example.expr!r} does not run: {exc}") from None
    same = (got.code == want.code) if isinstance(got, ErrorValue) and isinstance(
        want, ErrorValue) else got == want
    if not same:
        raise _refuse(spec, f"example {example.expr!r} gives {got!r}, "
                            f"not {example.result!r}")


__all__ = ["host_function", "with_host_functions"]
