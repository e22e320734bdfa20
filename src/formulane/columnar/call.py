"""The one contract a form receives: `FormCall`, the call being translated.

Contract: a form that declares it (``style="call"`` in its table entry, `forms.form.Form`) is
called as ``form(call: FormCall, *values)``: the values are the backend's compiled argument
values (polars expressions, sqlglot expressions); `FormCall` gives what a form needs beyond
them, read from the checked IR, never from the values:

- ``type(i)`` / ``kind(i)`` / ``elem(i)``: the argument's static type (a ``many(NUMBER)``
  argument may be a number or a list);
- ``const(i)`` / ``const_int(i, what)`` / ``omitted(i)``: the argument's value when it is a
  constant as `interpreter.fold.constant` decides (the one place that does: a literal, a list
  of constants, a call of constants computed as the scalar engine computes it), `MISSING`
  otherwise;
- ``numbers``: the numeric mode ("float" or "decimal"; polars only);
- ``let(expr)``: bind an expression once instead of writing it at every use;
- ``refuse(reason)``: raise `Unsupported` at compile time, with the reason, in the words every
  backend uses ("polars cannot evaluate F: ...", "SQL cannot express F: ...").

Older forms take only the values; their table entries say so (``style="values"``), and `Form`
adapts the call for them. Importing this imports neither polars nor sqlglot.
"""

from __future__ import annotations

from typing import Any, NoReturn, Sequence

from ..errors import Unsupported
from ..functions._criteria import to_int
from ..interpreter import ir
from ..interpreter.fold import MISSING as MISSING, constant
from ..types import Type
from ..values import ErrorValue

_MISSING = MISSING


class FormCall:
    """The call a form translates (see the module docs)."""

    def __init__(self, node: ir.Call, backend: str) -> None:
        self.node = node
        self.backend = backend
        self.args: Sequence[ir.IR] = node.args  # a Sequence: pyright narrows a tuple by len()
        self.name = node.spec.name

    def type(self, i: int) -> Type:
        return self.args[i].type

    def kind(self, i: int) -> str:
        return self.args[i].type.kind

    def elem(self, i: int) -> Type:
        t = self.args[i].type
        if t.kind != "List" or t.elem is None:
            self.refuse(f"argument {i + 1} is not a list")
        return t.elem

    def const(self, i: int) -> Any:
        """The argument's value when it is a constant (`interpreter.fold.constant`, the one
        reader of constants: a literal, a list of constants, or a call of constants the
        scalar engine computes), else `_MISSING` (also for a constant error value)."""
        if i >= len(self.args):
            return _MISSING
        value = constant(self.args[i])
        return _MISSING if type(value) is ErrorValue else value

    def omitted(self, i: int) -> bool:
        """An optional argument left out (or given as a literal blank)."""
        return i >= len(self.args) or self.const(i) is None

    def const_int(self, i: int, what: str) -> int:
        """A literal whole-number argument (Excel truncates), else a refusal."""
        v = self.const(i)
        if v is _MISSING or v is None or isinstance(v, (str, tuple)):
            self.refuse(f"{what} must be a literal number")
        return to_int(v, what)

    @property
    def numbers(self) -> str | None:
        """The program's numeric mode on polars ("float" or "decimal", `columnar.polars.kit`);
        None on SQL, whose compiler does not publish its mode to the forms (yet)."""
        if self.backend != "polars":
            return None
        from .polars.kit import numbers

        return numbers()

    def let(self, expr: Any) -> Any:
        """``expr`` bound once in the compiled program (a form that reads an expression many
        times writes it once): the backend's own ``let`` (`columnar.polars.kit.let`,
        `columnar.sql.let.let`)."""
        if self.backend == "polars":
            from .polars.kit import let as polars_let

            return polars_let(expr)
        from .sql.let import let as sql_let

        return sql_let(expr)

    def lambda_body(self, i: int) -> ir.IR:
        a = self.args[i]
        assert isinstance(a, ir.Lambda)
        return a.body

    def refuse(self, reason: str) -> NoReturn:
        backend = "polars" if self.backend == "polars" else "SQL"
        verb = "evaluate" if self.backend == "polars" else "express"
        raise Unsupported(f"{backend} cannot {verb} {self.name}: {reason}", function=self.name,
                          backend=self.backend, reason=reason, span=self.node.span)
