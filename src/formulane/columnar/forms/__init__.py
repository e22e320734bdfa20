"""Which form a function has on a columnar backend: the one lookup the compilers call.

Contract: `form_for(call, backend)` returns what the ``backend`` compiler ("polars" or "sql")
must do with the `ir.Call` ``call``:

- a callable form (its protocol is the compiler's: see `vectorized.polars` and
  `vectorized.sql`), the overload's own form before the function's;
- a `Refuse` with the reason the backend has no faithful form (the compiler raises
  `Unsupported` with that reason, at compile time);
- None when nothing is declared (the compiler refuses: "no polars form is declared").

`declared_form(spec, backend, sig)` is the same decision without a call (tests, the
completeness check, the docs). Importing this module imports neither polars nor sqlglot: the
forms' own modules are imported on the first call of a form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ...functions.spec import FunctionSpec, Sig
    from ...interpreter import ir

#: The columnar backends that have a form table.
Backend = Literal["polars", "sql"]

#: Comparisons whose polars form on two numbers is `_polars_forms.number_compare` (float mode
#: compares within the scalar engine's tolerance, decimal mode exactly).
_COMPARISONS = frozenset({"=", "<>", "<", "<=", ">", ">="})


def declared_form(spec: FunctionSpec, backend: Backend, sig: Sig | None = None) -> Any:
    """The form declared for ``spec`` on ``backend``: the overload ``sig``'s own form if it has
    one, else the function's (a callable, a `Refuse`, or a falsy value: nothing declared)."""
    own = None if sig is None else (sig.polars if backend == "polars" else sig.sql)
    return own or (spec.polars if backend == "polars" else spec.sql)


def form_for(call: ir.Call, backend: Backend) -> Any:
    """The form the ``backend`` compiler calls for ``call`` (see the module docs)."""
    spec = call.spec
    if backend == "polars" and spec.name in _COMPARISONS and not spec.lazy \
            and call.args[0].type.kind == "Number" and call.args[1].type.kind == "Number":
        from ...vectorized import _polars_forms

        return _polars_forms.number_compare(spec.name)
    return declared_form(spec, backend, call.sig)


__all__ = ["Backend", "declared_form", "form_for"]
