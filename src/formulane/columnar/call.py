"""The one contract a form receives: `FormCall`, the call being translated.

Contract: every form of the tables (`forms.form.Form`) is called as
``form(call: FormCall, *values)``: the values are the backend's compiled argument
values (polars expressions, sqlglot expressions); `FormCall` gives what a form needs beyond
them, read from the checked IR, never from the values:

- ``type(i)`` / ``kind(i)`` / ``elem(i)``: the argument's static type (a ``many(NUMBER)``
  argument may be a number or a list);
- ``const(i)`` / ``const_int(i, what)`` / ``omitted(i)``: the argument's value when it is a
  constant as `interpreter.fold.constant` decides (the one place that does: a literal, a list
  of constants, a call of constants computed as the scalar engine computes it), `MISSING`
  otherwise;
- ``numbers``: the program's numeric mode, "float" or "decimal", on both backends;
- what the IR cannot tell about an argument's *compiled* column (filled by the walker,
  `columnar.walk.Walker.call`; None/unknown for a lambda argument or outside a walk):
  ``column(i)`` the column itself (`sql.kit.SqlColumn` / `polars.kit.Column`), ``exact(i)``
  a Number surely computed exactly (SQL: a DECIMAL or integer, neither a DOUBLE nor a column
  whose engine type the caller did not give, which may be either; polars: decimal mode),
  ``double(i)`` a Number surely a DOUBLE (SQL), ``sql_type(i)`` its SQL type ("DOUBLE",
  "DECIMAL" (a DECIMAL, or a column of unknown type: typed as the mode's), or the type's
  column type), ``dtype(i)``
  its polars dtype (Decimal(38, scale) with the scale the compiler tracks, else the mode's
  dtype: Float64 in float mode, where integer columns are read as Float64), ``may_error(i)``
  whether it may carry an error code (including a pending non-finite test), ``strict(i)``
  whether its value is NULL on every row where its error is set, ``nullable(i)`` whether it
  may be blank (NULL);
- ``let(expr)``: bind an expression once instead of writing it at every use;
- ``refuse(reason)``: raise `Unsupported` at compile time, with the reason, in the words every
  backend uses ("polars cannot evaluate F: ...", "SQL cannot express F: ...").

A form that sees its arguments' columns, errors included (``style="columns"``: ISBLANK,
ISERROR...), is called as ``form(call, *columns)``. Importing this imports neither polars nor
sqlglot.
"""

from __future__ import annotations

from typing import Any, NoReturn, Sequence

from ..errors import Unsupported
from ..functions._criteria import to_int
from ..interpreter import ir
from ..interpreter.fold import MISSING as MISSING, FoldMemo, constant
from ..limits import Limits
from ..types import Type
from ..values import ErrorValue

_MISSING = MISSING


class FormCall:
    """The call a form translates (see the module docs)."""

    def __init__(self, node: ir.Call, backend: str, numbers: str | None = None,
                 columns: Sequence[Any] | None = None, limits: Limits | None = None,
                 memo: FoldMemo | None = None) -> None:
        self.node = node
        self.backend = backend
        self.args: Sequence[ir.IR] = node.args  # a Sequence: pyright narrows a tuple by len()
        self.name = node.spec.name
        self._numbers = numbers
        #: the arguments' compiled columns as the walker passes them to the form (None: not
        #: known, e.g. a call with lambdas)
        self.columns = columns
        #: the program's limits, that constants fold under (None: the defaults)
        self.limits = limits
        #: the walk's folding memo (`interpreter.fold.FoldMemo`; None outside a walk)
        self.memo = memo

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
        value = constant(self.args[i], self.limits, self.memo)
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
    def numbers(self) -> str:
        """The program's numeric mode, "float" or "decimal": the walker's (the SQL compiler's
        ``numbers``), else polars' (`columnar.polars.kit.numbers`); "decimal" for SQL outside
        a walk (`to_sql`'s default)."""
        if self._numbers is not None:
            return self._numbers
        if self.backend == "polars":
            from .polars.kit import numbers

            return numbers()
        return "decimal"

    # ------------------------------------------------ the arguments' compiled columns

    def column(self, i: int) -> Any:
        """Argument ``i``'s compiled column, None when not known (a lambda, no walker)."""
        if self.columns is None or i >= len(self.columns):
            return None
        return self.columns[i]

    def exact(self, i: int) -> bool:
        """A Number argument surely computed exactly: on SQL a DECIMAL or an integer (not a
        DOUBLE: a float column, a division, a power, float mode's widened + - *; nor, in
        decimal mode, a column whose engine type the caller did not give, which may be a
        DOUBLE: `sql.kit.SqlColumn.maybe_double`); on polars decimal mode. False for other
        types. A form's exact SQL (a DECIMAL's ROUND to places, its cast) is right for such an
        argument only: any other is read through its shortest decimal (`math.sql._sql_exact`)."""
        if i >= len(self.args) or self.args[i].type.kind != "Number":
            return False
        if self.backend == "polars":
            return self.numbers == "decimal"
        col = self.column(i)
        if col is None:
            # no column: an exact literal in either mode; anything else follows the mode
            return type(self.args[i]) is ir.Const or self.numbers == "decimal"
        return not (bool(getattr(col, "double", False))
                    or bool(getattr(col, "maybe_double", False)))

    def double(self, i: int) -> bool:
        """A Number argument surely a DOUBLE on SQL (a float column, a division, a power,
        float mode's + - *, a column the caller typed DOUBLE); False on polars, for other
        types, and for a value that may be either (`exact` is False for both)."""
        if self.backend == "polars" or i >= len(self.args) \
                or self.args[i].type.kind != "Number":
            return False
        col = self.column(i)
        if col is None:
            return type(self.args[i]) is not ir.Const and self.numbers != "decimal"
        return bool(getattr(col, "double", False))

    def sql_type(self, i: int) -> str | None:
        """Argument ``i``'s SQL type: "DOUBLE" or "DECIMAL" for a Number (an exact literal is
        typed by the engine, INTEGER or a narrow DECIMAL: still exact; a column whose engine
        type is not known is typed as decimal mode's numbers, "DECIMAL": casting a DECIMAL to
        DOUBLE would lose its exactness), else the type's column type (`sql.kit.sql_type`);
        None on polars."""
        if self.backend == "polars":
            return None
        t = self.args[i].type
        if t.kind == "Number":
            return "DOUBLE" if self.double(i) else "DECIMAL"
        from .sql.kit import sql_type

        return sql_type(t, self.numbers)

    def dtype(self, i: int) -> Any:
        """Argument ``i``'s polars dtype as compiled: Decimal(38, scale) when the compiler
        tracks the scale (decimal mode), else the mode's dtype for its type (Float64 for a
        Number in float mode: integer columns are read as Float64); None on SQL."""
        if self.backend != "polars":
            return None
        import polars as pl

        from .polars.kit import dtype_of

        scale = getattr(self.column(i), "scale", None)
        if self.args[i].type.kind == "Number" and scale is not None:
            return pl.Decimal(38, scale)
        return dtype_of(self.args[i].type)

    def may_error(self, i: int) -> bool:
        """Whether argument ``i`` may carry an error code (its compiled error column, or a
        float value whose non-finite test is pending); the checker's ``may_error`` when the
        column is not known."""
        col = self.column(i)
        if col is None:
            return i < len(self.args) and self.args[i].may_error
        return col.error is not None or bool(getattr(col, "unchecked", False))

    def strict(self, i: int) -> bool:
        """Whether argument ``i``'s value is NULL on every row where its error is set (SQL's
        ``strict`` tracking; a column that cannot error is strict); unknown: False."""
        col = self.column(i)
        if col is None:
            return False
        if getattr(col, "unchecked", False):
            return False
        if col.error is None:
            return True
        return bool(getattr(col, "strict", False))

    def nullable(self, i: int) -> bool:
        """Whether argument ``i`` may be blank (its static type is nullable)."""
        return self.args[i].type.nullable

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
