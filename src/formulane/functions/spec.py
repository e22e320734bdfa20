"""How a function is declared: once, with everything every consumer needs.

A `FunctionSpec` holds a function's name, typed signatures, doc, examples, cost formula, scalar
implementation (eager, or lazy for special forms), its category, and its polars and SQL
decisions where they are refusals (`Refuse`): a builtin's forms are in the static tables of
`columnar.forms`, found by name (`columnar.forms.declared_form`). The checker,
the compiled interpreter, the vectorizers, the docs, the authoring prompt and the tool export
all read this one declaration. Operators are specs too (named ``+``, ``&``, ``=``...).

Implementation contract (eager): the function receives engine values (see `values`), never an
error value and never a blank unless its parameter type is nullable (the interpreter's wrapper
propagates errors left to right and applies the profile's blank rules first). It returns an
engine value or raises `XLError(code, message)`; decimal traps become ``#NUM!``/``#DIV/0!``.
With ``needs_ctx=True`` it receives the `EvalContext` first (limits, clock, meter).

Lazy implementations (``lazy=True``) receive ``(frame, *arg_closures)`` and decide what to
evaluate, in which order, and how to treat errors: that is how IF, IFERROR, AND... are lazy.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from ..types import Type

_MISSING: Any = object()


class _Undecided:
    """A polars/SQL slot nobody has decided on yet (the completeness test fails on it)."""

    def __repr__(self) -> str:
        return "UNDECIDED"

    def __bool__(self) -> bool:
        return False


UNDECIDED: Any = _Undecided()


@dataclass(frozen=True, slots=True)
class Refuse:
    """An explicit decision that a backend has no faithful form of this function."""

    reason: str


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: Type
    default: Any = _MISSING  # engine value used when the argument is omitted
    doc: str = ""

    @property
    def optional(self) -> bool:
        return self.default is not _MISSING


def p(name: str, type_: Type, default: Any = _MISSING, doc: str = "") -> Param:
    """A parameter; give ``default`` to make it optional (``None`` means blank)."""
    return Param(name, type_, default, doc)


@dataclass(frozen=True, slots=True)
class Sig:
    """One overload. With ``repeat=k`` the last k parameters repeat (``SUM(n1, n2, ...)``,
    ``IFS(c1, v1, c2, v2, ...)``); ``max_repeat`` bounds the repetitions (None: the limit).
    With ``profile`` ("excel"), the overload exists only in that profile (Excel's shapes that
    the strict profile keeps as they were, such as SEQUENCE's 2-D array)."""

    params: tuple[Param, ...]
    returns: Type
    repeat: int = 0
    impl: Callable[..., Any] | None = None  # overrides the spec's impl for this overload
    polars: Any = None  # a Refuse (or a host function's form) for this overload only
    sql: Any = None  # likewise for SQL
    profile: str | None = None  # None: every profile; "excel": the excel profile only

    @property
    def min_args(self) -> int:
        required = 0
        for i, prm in enumerate(self.params):
            if not prm.optional:
                required = i + 1
        return required

    @property
    def max_args(self) -> int | None:
        return None if self.repeat else len(self.params)

    def param_for(self, index: int) -> Param | None:
        """The parameter that argument ``index`` binds to (following repeats)."""
        n = len(self.params)
        if index < n:
            return self.params[index]
        if not self.repeat:
            return None
        start = n - self.repeat
        return self.params[start + (index - start) % self.repeat]

    def describe(self, name: str) -> str:
        parts = []
        for i, prm in enumerate(self.params):
            text = f"{prm.name}: {prm.type}"
            if prm.optional:
                text = f"[{text}]"
            parts.append(text)
        if self.repeat:
            parts.append("...")
        only = f" (the {self.profile} profile)" if self.profile else ""
        return f"{name}({', '.join(parts)}) -> {self.returns}{only}"


def sig(
    *params: Param | Type,
    returns: Type,
    repeat: int = 0,
    impl: Callable[..., Any] | None = None,
    polars: Any = None,
    sql: Any = None,
    profile: str | None = None,
) -> Sig:
    """Shorthand: bare types become parameters named by position. ``impl`` gives this overload
    its own implementation (operators dispatch statically this way: Date + Number vs
    Number + Number)."""
    built = tuple(
        prm if isinstance(prm, Param) else Param(f"arg{i + 1}", prm) for i, prm in enumerate(params)
    )
    return Sig(built, returns, repeat, impl, polars, sql, profile)


@dataclass(frozen=True, slots=True)
class Cost:
    """Cost units of one call: ``base`` plus ``per_item`` for each element of every list
    argument, plus ``per_char`` for each code point of every Text argument (functions of the
    text family default to 1/16: one unit per 16 characters of C-speed string work).
    ``per_call`` marks higher-order functions whose lambda body runs once per item (its cost
    is added by the checker and charged by the implementation)."""

    base: int = 1
    per_item: int = 0
    per_call: bool = False
    per_char: float = 0.0  # for each code point of every Text argument (0: the family default)
    #: Whether ``per_char`` also counts the texts inside list arguments (criteria, lookups).
    list_chars: bool = False
    #: Wildcard matching: the static bound adds, for each code point of the texts inside list
    #: arguments, `MATCHER_PER_CHAR` plus one unit per `MATCHER_PAIR` code points of the Text
    #: arguments (the pattern); at run time the matcher charges what it really does
    #: (`runtime.poll`), since most patterns take C-speed paths.
    matcher: bool = False
    #: The function builds a text whose length is not bounded by its text arguments' (REPT,
    #: SUBSTITUTE): the static bound counts a text of the maximum length at ``per_char``, and
    #: the implementation charges the length it really builds (`EvalContext.charge`).
    builds_text: bool = False

    @staticmethod
    def const(units: int = 1) -> "Cost":
        return Cost(units, 0)

    @staticmethod
    def linear(per_item: int = 1, base: int = 1) -> "Cost":
        return Cost(base, per_item)

    @staticmethod
    def higher_order(per_item: int = 1, base: int = 1) -> "Cost":
        return Cost(base, per_item, per_call=True)

    @staticmethod
    def criteria(per_item: int, base: int, *, per_call: bool = False) -> "Cost":
        """Criteria and lookups: per item, a C-speed scan of every text (1/16 unit per code
        point), and the wildcard matcher's worst case in the static bound (`matcher`)."""
        return Cost(base, per_item, per_call=per_call, per_char=1 / 16, list_chars=True,
                    matcher=True)

    @staticmethod
    def text(per_char: float, base: int = 1) -> "Cost":
        """Work proportional to the length of the Text arguments (regular expressions...)."""
        return Cost(base, 0, per_char=per_char)


#: The wildcard matcher's Python loop, measured at 4-13 units per text code point
#: (bench/security_costs.py), and one more unit per text code point for each `MATCHER_PAIR`
#: pattern code points (big-integer state over the pattern).
MATCHER_PER_CHAR = 16
MATCHER_PAIR = 256


@dataclass(frozen=True, slots=True)
class Example:
    """``expr`` evaluates to the same value as the formula ``result`` (or an error code)."""

    expr: str
    result: str
    variables: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def parse(text: str) -> "Example":
        expr, sep, result = text.rpartition(" -> ")
        if not sep:
            raise ValueError(f"example {text!r} must read 'EXPR -> RESULT'")
        return Example(expr.strip(), result.strip())


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    name: str
    signatures: tuple[Sig, ...]
    doc: str
    examples: tuple[Example, ...]
    category: str
    impl: Callable[..., Any] | None = None
    lazy: bool = False
    cost: Cost = Cost()
    polars: Any = UNDECIDED
    sql: Any = UNDECIDED
    needs_ctx: bool = False
    volatile: bool = False  # depends on the clock or randomness: never constant-folded
    accepts_errors: bool = False  # eager impl sees error values (ISERROR, ERROR.TYPE...)
    can_error: bool = True  # may produce an error value from clean arguments
    pack: str | None = None  # optional pack ("finance", "statistics"); None = always on
    errors: tuple[str, ...] = ()  # error values it can produce, for the docs
    check: Callable[..., Any] | None = None  # custom type rule for irregular signatures
    aliases: tuple[str, ...] = ()
    # What the columnar backends need to know about a function, declared here so that no
    # backend recognises a function by its name (issue 10 item 4).
    #: The arithmetic operation the function is on Numbers: "+", "-", "*", "/", "%" (divides by
    #: 100), "neg", "pos"; "" for anything else. Backends compute these natively, tracking
    #: decimal scales and bounds of |x| (`columnar.walk.magnitude_bound`).
    arithmetic: str = ""
    #: A non-finite float operand gives a non-finite result (inf + 1, -inf, NaN * 2): a backend
    #: may leave the #NUM! test to whatever consumes the result instead of testing each step.
    carries_nonfinite: bool = False
    #: The columnar forms only select, compare or test their Number arguments (IF, IFERROR,
    #: AND, =...), so they take Decimals at any scale; other forms get Decimal(38, 18).
    any_decimal_scale: bool = False
    #: On float and boolean inputs the columnar form is plain arithmetic, comparison or logic:
    #: computed on a row that errs it gives inf, NaN or a boolean, never an engine exception.
    total_on_floats: bool = False
    #: The SQL form computes in DOUBLE whatever its operands' types (division, powers).
    sql_double: bool = False
    #: The SQL form computes in its Number arguments' own engine types (ABS of a SMALLINT,
    #: DuckDB's LIST_SUM of DECIMALs), which abort the query on an overflow: float mode widens
    #: an argument whose engine type may be narrower than DOUBLE first (+ - * are widened as
    #: arithmetic, `columnar.sql.compiler`).
    sql_widens: bool = False
    #: The value is NULL when any operand is NULL (the operators): an operand whose value is
    #: NULL wherever its error is set passes that on.
    propagates_null: bool = False
    #: Joins its operands' display texts (`&`): each operand is shown as text
    #: (`values.display_text`) before the join, by the backend's own text rules.
    joins_text: bool = False
    #: The scalar implementation never rounds a Decimal (it compares, tests or selects), so
    #: generated code may run it outside the decimal context (`interpreter.codegen`); the logic
    #: category is so by definition.
    decimal_free: bool = False
    #: The result is a list of some of the first argument's items as they are (FILTER, SORT,
    #: TAKE...): a backend that read the items exactly for a lambda need not read them again.
    keeps_items: bool = False
    #: The Text parameter naming the time zone of the DateTime result (DATETIME's, TZCONVERT's
    #: "time_zone"; its default when left out): one columnar column holds one zone.
    zone_param: str = ""

    def describe(self) -> list[str]:
        return [s.describe(self.name) for s in self.signatures]


#: The category of a function declared with neither ``category=`` nor a module ``CATEGORY``.
OTHER_CATEGORY = "other"


def _module_category(impl: Callable[..., Any]) -> str:
    """The ``CATEGORY`` its declaring module states (every module of `formulane.functions` that
    leaves ``category=`` out states one; tests/test_registry.py checks it)."""
    module = sys.modules.get(impl.__module__)
    declared = getattr(module, "CATEGORY", None)
    return declared if isinstance(declared, str) and declared else OTHER_CATEGORY


def builtin(
    name: str,
    *signatures: Sig,
    doc: str,
    examples: Sequence[str | Example],
    category: str = "",
    cost: Cost = Cost(),
    polars: Any = UNDECIDED,
    sql: Any = UNDECIDED,
    lazy: bool = False,
    needs_ctx: bool = False,
    volatile: bool = False,
    accepts_errors: bool = False,
    can_error: bool = True,
    pack: str | None = None,
    errors: Iterable[str] = (),
    check: Callable[..., Any] | None = None,
    aliases: Iterable[str] = (),
    arithmetic: str = "",
    carries_nonfinite: bool = False,
    any_decimal_scale: bool = False,
    total_on_floats: bool = False,
    sql_double: bool = False,
    sql_widens: bool = False,
    propagates_null: bool = False,
    joins_text: bool = False,
    decimal_free: bool = False,
    keeps_items: bool = False,
    zone_param: str = "",
) -> Callable[[Callable[..., Any]], FunctionSpec]:
    """Declare a function; the decorated name becomes its `FunctionSpec`. Its category is
    ``category``, else the declaring module's ``CATEGORY``, else "other" (never a file name).
    ``polars`` and ``sql`` hold only a `Refuse` for a builtin (its forms are in the tables of
    `columnar.forms`); a host function may give its own forms there."""

    def wrap(impl: Callable[..., Any]) -> FunctionSpec:
        category_ = category or _module_category(impl)
        return FunctionSpec(
            name=name.upper(),
            signatures=tuple(signatures),
            doc=doc,
            examples=tuple(e if isinstance(e, Example) else Example.parse(e) for e in examples),
            category=category_,
            impl=impl,
            lazy=lazy,
            cost=cost,
            polars=polars,
            sql=sql,
            needs_ctx=needs_ctx,
            volatile=volatile,
            accepts_errors=accepts_errors,
            can_error=can_error,
            pack=pack,
            errors=tuple(errors),
            check=check,
            aliases=tuple(a.upper() for a in aliases),
            arithmetic=arithmetic,
            carries_nonfinite=carries_nonfinite,
            any_decimal_scale=any_decimal_scale,
            total_on_floats=total_on_floats,
            sql_double=sql_double,
            sql_widens=sql_widens,
            propagates_null=propagates_null,
            joins_text=joins_text,
            decimal_free=decimal_free,
            keeps_items=keeps_items,
            zone_param=zone_param,
        )

    return wrap


Declare = Callable[[Callable[..., Any]], FunctionSpec]


def family(*signatures: Sig, **shared: Any) -> Callable[..., Declare]:
    """A family's own `builtin`: the signatures and keywords its members share, stated once.
    ``_is = family(sig(p("value", ANY), returns=BOOLEAN), cost=Cost.const(1))`` then
    ``@_is("ISTEXT", doc=..., examples=[...])`` above each member's implementation, which
    keeps its name, doc and examples where grep and an IDE find them. A member's own
    signatures follow the shared ones; a keyword given twice is a TypeError at import."""

    def declare(name: str, *own_signatures: Sig, **own: Any) -> Declare:
        return builtin(name, *signatures, *own_signatures, **shared, **own)

    return declare


__all__ = [
    "Cost", "Declare", "Example", "FunctionSpec", "Param", "Refuse", "Sig", "UNDECIDED",
    "builtin", "family", "p", "sig", "field",
]
