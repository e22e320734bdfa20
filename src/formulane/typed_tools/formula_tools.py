"""Built-in tools so a model writes a formula instead of code: evaluate, check, explain, list.

Contract: `register(registry)` adds four `read` tools: `evaluate_formula`, `check_formula`,
`explain_formula` and `list_functions`. A formula problem is not a tool failure: the tools
answer `ok: false` with the engine's diagnostics (code, message, span with line/column, hint,
machine-applicable fixes, rendered caret text) so the model can apply a fix and call again.
Formula error values (`#DIV/0!`...) come back as `error_value`. Inputs are typed so every
export target can express them (scalars and lists of scalars; numbers may be sent as strings
to keep their digits). The engine is imported when a tool runs, not at registration.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Sequence, cast

from pydantic import BaseModel, Field, JsonValue
from pydantic_core import to_jsonable_python

from ..jsonshape import is_array, is_object
from .tool import ToolFailure

from ..limits import DEFAULT_LIMITS

#: Inputs are bounded by the engine's own limits, in the schema (the model sees them) and by
#: strict validation before any work: a text as long as a formula text may be, a list as long
#: as a formula list, a bounded number of variables and type entries, short names and types.
MAX_FORMULA = 10_000
MAX_TEXT = DEFAULT_LIMITS.max_text_length
MAX_ITEMS = DEFAULT_LIMITS.max_list_length
MAX_VARIABLES = 1_000
MAX_NAME = 255
MAX_TYPE = 1_000
#: All texts and list items of one call together (code points + items), the memory budget's size.
MAX_TOTAL = DEFAULT_LIMITS.max_memory_bytes

BoundedText = Annotated[str, Field(max_length=MAX_TEXT)]
Scalar = BoundedText | int | float | bool | None
Variable = Scalar | Annotated[list[Scalar], Field(max_length=MAX_ITEMS)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME)]


class ErrorValueOut(BaseModel):
    code: str = Field(description='The spreadsheet error code, e.g. "#DIV/0!".')
    message: str = ""


class FormulaOutcome(BaseModel):
    ok: bool = Field(description="True when the formula compiled and produced a value.")
    value: JsonValue = Field(default=None, description="The result as JSON (numbers keep their digits).")
    type: str | None = Field(default=None, description="The formula's static type, e.g. Number or List[Text].")
    error_value: ErrorValueOut | None = Field(default=None, description="Set when the result is an error value.")
    diagnostics: list[dict[str, JsonValue]] = Field(
        default_factory=list[dict[str, JsonValue]], description="Problems with code, span, hint and fixes to apply.")


class CheckOutcome(BaseModel):
    ok: bool
    type: str | None = None
    diagnostics: list[dict[str, JsonValue]] = Field(default_factory=list[dict[str, JsonValue]])


class Explanation(BaseModel):
    ok: bool
    value: JsonValue = None
    type: str | None = None
    explanation: JsonValue = None
    diagnostics: list[dict[str, JsonValue]] = Field(default_factory=list[dict[str, JsonValue]])


class FunctionInfo(BaseModel):
    name: str
    category: str
    signatures: list[str]
    doc: str
    examples: list[str]


class FunctionList(BaseModel):
    functions: list[FunctionInfo]
    categories: list[str]


FormulaText = Annotated[str, Field(min_length=1, max_length=MAX_FORMULA,
                                   description="The formula, e.g. IF(qty > 10, price * 0.9, price).")]
Variables = Annotated[dict[Name, Variable], Field(
    max_length=MAX_VARIABLES,
    description="Values for the names the formula uses. Numbers may be strings to keep their digits.")]
TypesArg = Annotated[dict[Name, Annotated[str, Field(max_length=MAX_TYPE)]] | None, Field(
    max_length=MAX_VARIABLES,
    description="Optional types of the variables, e.g. {\"qty\": \"Number\", \"due\": \"Date\"}; "
                "dates are ISO 8601 text.")]


def _check_total(variables: dict[str, Variable]) -> None:
    """All texts and items together within the memory budget, before any conversion."""
    total = 0
    for value in variables.values():
        items = value if is_array(value) else (value,)
        total += len(items)
        for item in items:
            if isinstance(item, str):
                total += len(item)
        if total > MAX_TOTAL:
            raise ToolFailure(f"the variables hold more than {MAX_TOTAL:,} characters and items in all",
                              retryable=False, hint="send fewer or shorter values")


def _engine() -> Any:
    import formulane

    if not hasattr(formulane, "compile"):
        raise ToolFailure("the formula engine is not available in this installation", retryable=False)
    return formulane


def _number(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    return value


def _convert(value: Any, declared: str) -> Any:
    """A JSON value as the engine value its declared type needs (ISO text for dates)."""
    if value is None:
        return None
    kind = declared.strip().rstrip("?")
    if kind.startswith("List[") and kind.endswith("]") and is_array(value):
        return [_convert(v, kind[5:-1]) for v in value]
    if is_array(value):
        return [_number(v) for v in value]
    if isinstance(value, str):
        try:
            if kind == "Number":
                return Decimal(value)
            if kind == "Date":
                return date.fromisoformat(value)
            if kind == "DateTime":
                return datetime.fromisoformat(value)
        except (InvalidOperation, ValueError):
            return value  # left as text: the engine reports the mismatch with a diagnostic
    return _number(value)


def _inputs(variables: dict[str, Variable], types: dict[str, str] | None) -> dict[str, Any]:
    declared = types or {}
    return {name: _convert(value, declared.get(name, "")) for name, value in variables.items()}


def _compile(engine: Any, formula: str, types: dict[str, str] | None, inputs: dict[str, Any]) -> Any:
    # Without declared types the schema is inferred from the values, as formulane.evaluate does.
    schema: Any = types
    if schema is None and inputs and hasattr(engine, "infer_schema"):
        schema = engine.infer_schema(inputs)
    return engine.compile(formula, schema)


def to_json_value(value: Any) -> JsonValue:
    """An engine value as JSON: exact numbers stay numbers when that loses nothing."""
    if isinstance(value, Decimal):
        if value == value.to_integral_value() and abs(value) < 2**53:
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else str(value)
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in cast("Sequence[Any]", value)]
    if is_object(value):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (datetime, date, time, timedelta)):
        return str(to_jsonable_python(value))
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


def _diagnostics(error: Any, source: str) -> list[dict[str, Any]]:
    data = error.to_dict(source)
    diags = data.get("diagnostics") or [data]
    return [to_json_value(d) for d in diags]  # type: ignore[misc]


def _error_value(engine: Any, value: Any) -> ErrorValueOut | None:
    kind = getattr(engine, "ErrorValue", None)
    if kind is not None and isinstance(value, kind):
        return ErrorValueOut(code=str(value.code), message=str(getattr(value, "message", "")))
    return None


def evaluate_formula(formula: FormulaText, variables: Variables = {}, types: TypesArg = None) -> FormulaOutcome:
    """Evaluate a formula with the given variables and return its value and type.

    Use this instead of writing code for arithmetic, conditions, text, dates and lists.
    """
    engine = _engine()
    _check_total(variables)
    inputs = _inputs(variables, types)
    try:
        program = _compile(engine, formula, types, inputs)
        value = program.evaluate(inputs)
    except engine.FormulaError as exc:
        return FormulaOutcome(ok=False, diagnostics=_diagnostics(exc, formula))
    kind = str(program.type) if getattr(program, "type", None) is not None else None
    failed = _error_value(engine, value)
    if failed is not None:
        return FormulaOutcome(ok=False, type=kind, error_value=failed)
    return FormulaOutcome(ok=True, value=to_json_value(value), type=kind)


def check_formula(formula: FormulaText, types: TypesArg = None) -> CheckOutcome:
    """Check a formula without running it: its type, or diagnostics with fixes to apply."""
    engine = _engine()
    try:
        program = engine.compile(formula, types)
    except engine.FormulaError as exc:
        return CheckOutcome(ok=False, diagnostics=_diagnostics(exc, formula))
    return CheckOutcome(ok=True, type=str(program.type) if getattr(program, "type", None) is not None else None)


def explain_formula(formula: FormulaText, variables: Variables = {}, types: TypesArg = None) -> Explanation:
    """Explain step by step how a formula computes its value for the given variables."""
    engine = _engine()
    _check_total(variables)
    inputs = _inputs(variables, types)
    try:
        program = _compile(engine, formula, types, inputs)
    except engine.FormulaError as exc:
        return Explanation(ok=False, diagnostics=_diagnostics(exc, formula))
    if not hasattr(program, "explain"):
        raise ToolFailure("explain_formula is not available in this formulane version", retryable=False,
                          hint="use evaluate_formula instead")
    try:
        explanation = program.explain(inputs)
        value = program.evaluate(inputs)
    except engine.FormulaError as exc:
        return Explanation(ok=False, diagnostics=_diagnostics(exc, formula))
    if hasattr(explanation, "to_dict"):
        explanation = explanation.to_dict()
    failed = _error_value(engine, value)
    return Explanation(ok=failed is None, value=None if failed else to_json_value(value),
                       type=str(program.type) if getattr(program, "type", None) is not None else None,
                       explanation=to_json_value(explanation))


def list_functions(category: str | None = None, query: str | None = None) -> FunctionList:
    """List the formula functions, optionally one category or those matching a word.

    Args:
        category: Only functions of this category (e.g. text, math, dates).
        query: Only functions whose name or description contains this word.
    """
    engine = _engine()
    catalog = list(engine.function_catalog())
    categories = sorted({str(entry.get("category", "")) for entry in catalog})
    needle = (query or "").lower()
    out: list[FunctionInfo] = []
    for entry in catalog:
        if category is not None and str(entry.get("category", "")).lower() != category.lower():
            continue
        if needle and needle not in str(entry.get("name", "")).lower() and needle not in str(
                entry.get("doc", "")).lower():
            continue
        out.append(FunctionInfo(name=str(entry.get("name", "")), category=str(entry.get("category", "")),
                                signatures=[str(s) for s in entry.get("signatures", [])],
                                doc=str(entry.get("doc", "")), examples=[str(e) for e in entry.get("examples", [])]))
    return FunctionList(functions=out, categories=categories)


TOOLS = (evaluate_formula, check_formula, explain_formula, list_functions)


def register(registry: Any) -> Any:
    """Add the four formula tools (effect `read`, no scopes) to a registry and return it."""
    for fn in TOOLS:
        registry.tool(fn)
    return registry
