"""Which form a function has on a columnar backend: the one lookup the compilers call.

Contract: `form_for(call, backend)` returns what the ``backend`` compiler ("polars" or "sql")
must do with the `ir.Call` ``call``:

- a callable form (its protocol is the compiler's: see `columnar.polars.compiler` and
  `columnar.sql.compiler`), the overload's own form before the function's;
- a `Refuse` with the reason the backend has no faithful form (the compiler raises
  `Unsupported` with that reason, at compile time);
- None when nothing is declared (the compiler refuses: "no polars form is declared").

`declared_form(spec, backend, sig)` is the same decision without a call (tests, the
completeness check, the docs). The order, first found wins: the overload's declaration (a
`Refuse`, or a host function's own form), the table's entry for the overload
(``"NAME(Type, ...)"``), the function's declaration, the table's entry for the function. The
tables (`polars_table.POLARS`, `sql_table.SQL`) hold every builtin form; declarations hold only
refusals (so a function's "no" sits beside its scalar code, where a change to the one shows
the other) and the forms of host functions (`Registry.extend`).

Importing this module imports neither polars nor sqlglot (nor the tables: they are read on the
first lookup); a family's module is imported on the first call of one of its forms.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ...functions.spec import FunctionSpec, Sig
    from ...interpreter import ir

#: The columnar backends that have a form table.
Backend = Literal["polars", "sql"]



def table(backend: Backend) -> dict[str, Any]:
    """The static form table of ``backend`` (`polars_table.POLARS` or `sql_table.SQL`)."""
    if backend == "polars":
        from .polars_table import POLARS

        return POLARS
    from .sql_table import SQL

    return SQL


def overload_key(name: str, sig: Sig) -> str:
    """The table key of one overload: ``"+(Date, Number)"``."""
    return f"{name}({', '.join(str(p.type) for p in sig.params)})"


@functools.cache
def _builtins() -> frozenset[int]:
    """The builtin specs (by identity): only they read the tables, so a host function that
    replaces a builtin's name (`with_host_functions(replace=True)`) never gets its form."""
    from ...functions.registry import declaration_modules
    from ...functions.spec import FunctionSpec as Spec

    return frozenset(id(v) for m in declaration_modules() for v in vars(m).values()
                     if isinstance(v, Spec))


def declared_form(spec: FunctionSpec, backend: Backend, sig: Sig | None = None) -> Any:
    """The form of ``spec`` on ``backend`` (overload ``sig`` first): a callable, a `Refuse`,
    or a falsy value when nothing is declared (see the module docs for the order)."""
    forms = table(backend) if id(spec) in _builtins() else {}
    if sig is not None:
        own = (sig.polars if backend == "polars" else sig.sql) \
            or forms.get(overload_key(spec.name, sig))
        if own:
            return own
    return (spec.polars if backend == "polars" else spec.sql) or forms.get(spec.name)


def form_for(call: ir.Call, backend: Backend) -> Any:
    """The form the ``backend`` compiler calls for ``call`` (see the module docs)."""
    return declared_form(call.spec, backend, call.sig)


__all__ = ["Backend", "declared_form", "form_for", "overload_key", "table"]
