"""formulane: run customer- and model-written logic in the smallest safe lane.

The facade of the formula lane::

    import formulane
    program = formulane.compile("ROUND(price * qty * 1.2, 2)", {"price": "Number", "qty": "Number"})
    program.evaluate({"price": 9.99, "qty": 3})        # Decimal('35.96')
    formulane.evaluate("1/0")                          # ErrorValue('#DIV/0!')

`compile` raises `FormulaError` subclasses for static problems; `Program.evaluate` returns
values (error values included) and raises only `FormulaError` (a `LimitExceeded` when a budget
runs out). Compiled programs are cached by (source, schema, profile, limits, registry) in
`formulane.interpreter.cache`; ``compile(..., returns=Decimal)`` gives a ``Program[Decimal]``.

Authoring (see docs/authoring.md; the implementations live in `formulane.authoring`)::

    formulane.complete("ROUND(order.", 12, schema)     # completion items, best first
    formulane.signature_help("ROUND(x, ", 9)           # the call being written
    formulane.format("if(a>1,'x','y') /* why */")      # 'IF(a > 1, "x", "y") /* why */'
    formulane.to_json(program)                         # {"call": "IF", "args": [...]}
    formulane.from_json(obj, schema)                   # a checked Program, as compile gives
"""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Mapping, TypeVar, overload

from .errors import (
    CheckError, Diagnostic, EvalError, Fix, FormulaError, InternalError, LimitExceeded,
    ParseError, Unsupported,
)
from .functions.host import host_function, with_host_functions
from .functions.registry import Registry, default_registry
from .interpreter.cache import PROFILES as PROFILES
from .interpreter.cache import compile_cached
from .interpreter.program import Program
from .limits import Limits
from .schema import infer_schema
from .types import Type, parse_type
from .values import ErrorValue, Value

if TYPE_CHECKING:  # the facade's return types; the modules load on first use
    from .authoring.completion import CompletionItem, SignatureHelp
    from .authoring.hover import HoverInfo
    from .escalation.lanes import LaneResult

__version__ = "0.1.0"

_T = TypeVar("_T")


@overload
def compile(  # noqa: A001 - the phase is called compile on purpose
    source: str, schema: Any = None, *, profile: str = "strict", limits: Limits | None = None,
    registry: Registry | None = None, returns: None = None,
) -> Program[Value]: ...


@overload
def compile(  # noqa: A001
    source: str, schema: Any = None, *, profile: str = "strict", limits: Limits | None = None,
    registry: Registry | None = None, returns: type[_T],
) -> Program[_T]: ...


def compile(  # noqa: A001
    source: str,
    schema: Any = None,
    *,
    profile: str = "strict",
    limits: Limits | None = None,
    registry: Registry | None = None,
    returns: type[Any] | None = None,
) -> Program[Any]:
    """Parse, type-check and compile a formula against a schema (cached). A ``Program[Value]``;
    with ``returns=`` (Decimal, str, bool, date, datetime, timedelta, list, dict) a
    ``Program[that type]``, after checking that the formula's static type always produces it
    (CheckError E214 otherwise; an error value at run time raises EvalError E304)."""
    return compile_cached(source, schema, profile=profile, limits=limits, registry=registry,
                          returns=returns)


@overload
def evaluate(
    source: str, variables: Any = None, *, schema: Any = None, profile: str = "strict",
    limits: Limits | None = None, registry: Registry | None = None,
    now: _dt.datetime | None = None, returns: None = None,
) -> Value: ...


@overload
def evaluate(
    source: str, variables: Any = None, *, schema: Any = None, profile: str = "strict",
    limits: Limits | None = None, registry: Registry | None = None,
    now: _dt.datetime | None = None, returns: type[_T],
) -> _T: ...


def evaluate(
    source: str,
    variables: Any = None,
    *,
    schema: Any = None,
    profile: str = "strict",
    limits: Limits | None = None,
    registry: Registry | None = None,
    now: _dt.datetime | None = None,
    returns: type[Any] | None = None,
) -> Any:
    """Compile (cached) and evaluate in one step. ``variables``: a mapping (a TypedDict value
    too), a pydantic model or a dataclass instance, read field by field (`formulane.inputs`);
    the schema is inferred from them when not given. ``returns``: as for `compile`."""
    if type(variables) is not dict or not _plain(variables):
        # a model, dataclass or TypedDict value, or host objects nested: plain data first
        from .inputs import as_variables

        variables = as_variables(variables, limits)
    if schema is None:
        schema = infer_schema(variables)
    program = compile_cached(source, schema, profile=profile, limits=limits, registry=registry,
                             returns=returns)
    return program.evaluate(variables, now=now)


def _plain(variables: dict[str, Any]) -> bool:
    return all(type(v) in _PLAIN_TYPES for v in variables.values())


_PLAIN_TYPES = frozenset({int, float, str, bool, type(None), Decimal, _dt.date, _dt.datetime,
                          _dt.timedelta})


def check(source: str, schema: Any = None, *, profile: str = "strict",
          limits: Limits | None = None, registry: Registry | None = None) -> Type:
    """The formula's static type, or a FormulaError."""
    return compile(source, schema, profile=profile, limits=limits, registry=registry).type


def apply(frame: Any, formulas: Mapping[str, str], schema: Any = None, *,
          profile: str = "strict", numbers: str = "auto", error_suffix: str | None = None,
          limits: Limits | None = None, registry: Registry | None = None) -> Any:
    """Add one column per formula (and ``<name>__error`` where errors are possible) to a polars
    DataFrame or LazyFrame, with native polars expressions only (docs/columnar.md). The schema
    is inferred from the frame's dtypes when not given; ``numbers``: "auto" (decimal when a
    Number column is Decimal), "float" or "decimal"."""
    from .columnar.names import ERROR_SUFFIX
    from .columnar.polars.frame import apply as _apply

    return _apply(frame, formulas, schema, profile=profile, numbers=numbers,
                  error_suffix=error_suffix or ERROR_SUFFIX, limits=limits, registry=registry)


def sql_select(table: Any, formulas: Mapping[str, str], schema: Any, *, dialect: str = "duckdb",
               profile: str = "strict", numbers: str | None = None,
               error_suffix: str | None = None, keep_columns: bool = True,
               registry: Registry | None = None, limits: Limits | None = None,
               column_types: Mapping[str, str] | None = None) -> str:
    """``SELECT *, <formula> AS name, <error code> AS name__error FROM table`` in a SQL dialect
    (duckdb, postgres, spark, trino, bigquery, snowflake...). ``table`` is an identifier, never
    SQL: a name (quoted as one), a tuple ``(schema, table)`` or ``(catalog, schema, table)``,
    or a `sqlglot.exp.Table` built from identifiers. ``numbers``: "decimal" when the table's
    Number columns are DECIMAL, "float" for DOUBLE; by default the dialect's own ("float" on
    SQLite, which has no DECIMAL; "decimal" elsewhere). A sub-expression read more than once is
    computed once (a lateral subquery where the dialect has them), so the SQL grows linearly;
    past ``limits.max_sql_length`` characters it is refused (E411). ``column_types``: the
    table's column SQL types as the engine reports them (column name -> type text, e.g. from
    DuckDB's ``DESCRIBE``: ``{"price": "DECIMAL(38,4)"}``), for any columns the caller knows;
    the answers are the same without it, the SQL shorter with it (casts and range tests the
    types make needless are left out). An unparseable type, or a type that is not a number
    for a Number column, is a `CheckError` (E209) naming the column."""
    from .columnar.names import ERROR_SUFFIX
    from .columnar.sql.select import sql_select as _sql_select

    return _sql_select(table, formulas, schema, dialect=dialect, profile=profile,
                       numbers=numbers, error_suffix=error_suffix or ERROR_SUFFIX,
                       keep_columns=keep_columns, registry=registry, limits=limits,
                       column_types=column_types)


def prompt(schema: Any = None, *, max_tokens: int = 4000, registry: Registry | None = None) -> str:
    """A compact authoring prompt for language models: the language in brief, the schema's
    names and types, the function signatures, within ``max_tokens`` (estimated)."""
    from .reference import prompt as _prompt

    return _prompt(schema, max_tokens=max_tokens, registry=registry)


def complete(source: str, cursor: int, schema: Any = None, *, profile: str = "strict",
             registry: Registry | None = None) -> list[CompletionItem]:
    """Completion items (`formulane.authoring.CompletionItem`) at offset ``cursor``, best first;
    works on the incomplete, broken text being typed."""
    from .authoring.completion import complete as _complete

    return _complete(source, cursor, schema, profile=profile, registry=registry)


def signature_help(source: str, cursor: int, *,
                   registry: Registry | None = None) -> SignatureHelp | None:
    """The innermost call around ``cursor``: its signatures and the active argument (a
    `formulane.authoring.SignatureHelp`), or None outside a call."""
    from .authoring.completion import signature_help as _signature_help

    return _signature_help(source, cursor, registry=registry)


def hover(source: str, offset: int, schema: Any = None, *, profile: str = "strict",
          registry: Registry | None = None) -> HoverInfo | None:
    """Docs or the type of what is at ``offset`` (a `formulane.authoring.HoverInfo`), or None."""
    from .authoring.hover import hover as _hover

    return _hover(source, offset, schema, profile=profile, registry=registry)


def diagnose(source: str, schema: Any = None, *, profile: str = "strict",
             limits: Limits | None = None, registry: Registry | None = None) -> list[Diagnostic]:
    """Every parse, check and limit problem and warning of a formula, without compiling it."""
    from .authoring.hover import diagnose as _diagnose

    return _diagnose(source, schema, profile=profile, limits=limits, registry=registry)


def format(source: str, width: int = 80, *, limits: Limits | None = None) -> str:  # noqa: A001
    """The canonical form of a formula, comments kept, lines broken past ``width`` columns;
    raises the ParseError of a source that does not parse."""
    from .authoring.formatter import format as _format

    return _format(source, width, limits=limits)


def to_json(formula: Any) -> dict[str, Any]:
    """The JSON form (``{"call": "IF", "args": [...]}``) of a Program, an AST or formula text."""
    from .authoring.jsonform import to_json as _to_json

    return _to_json(formula)


def from_json(obj: Any, schema: Any = None, *, profile: str = "strict",
              limits: Limits | None = None, registry: Registry | None = None) -> Program:
    """Check and compile a JSON form through the same checker, limits and cache as text
    (`formulane.authoring.compile_json`); errors carry ``json_path``. For the unchecked AST
    use `formulane.authoring.from_json`."""
    from .authoring.jsonform import compile_json

    return compile_json(obj, schema, profile=profile, limits=limits, registry=registry)


def json_form_schema(*, root_object: bool = False) -> dict[str, Any]:
    """The JSON Schema (2020-12) of the JSON form, for structured output."""
    from .authoring.jsonform import json_form_schema as _schema

    return _schema(root_object=root_object)


def schema_from_json_schema(json_schema: Any) -> dict[str, Type]:
    """A schema from a JSON Schema object (`formulane.inputs`); a property not ``required``
    is nullable."""
    from .inputs import schema_from_json_schema as _from

    return _from(json_schema)


def to_json_schema(schema: Any) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a schema (a mapping, a pydantic model, dataclass or
    TypedDict class); `schema_from_json_schema` reads it back."""
    from .inputs import to_json_schema as _to

    return _to(schema)


def function_catalog(registry: Registry | None = None) -> list[dict[str, Any]]:
    """Every callable function: name, category, signatures, doc, examples (for docs, prompts
    and tool listings)."""
    reg = registry or default_registry()
    return [
        {
            "name": spec.name,
            "category": spec.category,
            "signatures": spec.describe(),
            "doc": spec.doc,
            "examples": [f"{e.expr} -> {e.result}" for e in spec.examples],
            "errors": list(spec.errors),
            "pack": spec.pack,
        }
        for spec in reg.functions()
    ]


__all__ = [
    "CheckError", "Diagnostic", "ErrorValue", "EvalError", "Fix", "FormulaError",
    "InternalError", "LimitExceeded", "Limits", "ParseError", "Program", "Registry", "Type",
    "Unsupported", "apply", "check", "compile", "complete", "default_registry", "diagnose",
    "evaluate", "format", "from_json", "function_catalog", "host_function", "hover",
    "json_form_schema",
    "parse_type", "prompt", "run", "schema_from_json_schema", "signature_help", "sql_select",
    "to_json", "to_json_schema", "Value", "with_host_functions",
]


def run(request: Any = None, **fields: Any) -> LaneResult:
    """Route one job to the smallest lane that can do it, run it, return its `LaneResult`.

    ``formulane.run(code="...", inputs={...})``: fields as `escalation.EscalationRequest`'s
    (``code``, ``formula``, ``tool_call``, ``inputs``, ``principal``, ``spec``, ...), plus
    ``escalation=`` (an opened `escalation.default()`); see `formulane.escalation.facade`.
    """
    from .escalation.facade import run as run_lane

    return run_lane(request, **fields)
