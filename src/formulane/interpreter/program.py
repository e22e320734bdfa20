"""`Program`: a checked formula ready to run, and `compile_program`, the phase that makes it.

A Program is immutable: source, schema, profile, limits, the checked IR, its static type and
cost bound, and the compiled closure. `evaluate` converts inputs through `values.to_internal`
(refusing what the formula lane cannot take), runs the closure under the engine's decimal
context, and converts the result back; nothing but a `FormulaError` ever leaves it.

Two tiers, one semantics: a new Program runs its closures (cheap to build: compile stays within
its budget); after `TIER_UP_CALLS` evaluations it generates one Python function from the same IR
(`codegen.generate`, built with the `ast` module node by node, never from text) and runs that
from then on, 3-10x faster per call. Both are tested equal on every golden case. A metered
program (static cost bound over budget) stays on the closures, which meter every call.

`Program` is generic in what `evaluate` returns: ``Program[Value]`` (the default) when the
result's Python type is known only at run time, ``Program[Decimal]`` (and so on) when the
caller asked for one with ``returns=`` (`returning`): the checker's static type is then
required to produce exactly that Python type, non-blank (E214 at compile time), and an error
value at run time, which no Python type but `ErrorValue` holds, is raised as E304 instead of
returned. The static part is checked once per compile; a Program without ``returns`` pays
nothing for it.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import TYPE_CHECKING, Any, Callable, Generic, Mapping, cast

from typing_extensions import TypeVar

from ..errors import CheckError, Diagnostic, EvalError, FormulaError, InternalError, LimitExceeded
from ..functions.registry import Registry
from ..grammar import ast as ast_nodes
from ..grammar import parse
from ..limits import Limits
from ..source import Span
from ..types import Type
from ..values import CONTEXT, ErrorValue, Value, to_external, to_internal
from . import ir
from .checker import check
from .compile import Compiler
from ..runtime import EvalContext, activate, deactivate

if TYPE_CHECKING:
    from _typeshed import DataclassInstance
    from pydantic import BaseModel

    #: What `evaluate` takes (`formulane.inputs.as_variables` reads it): a mapping (a
    #: TypedDict value included), a pydantic model instance or a dataclass instance
    Variables = Mapping[str, Any] | BaseModel | DataclassInstance

_getcontext = decimal.getcontext
_setcontext = decimal.setcontext
_UTC = dt.timezone.utc
#: Ints below this magnitude are taken as they are: sums of them stay exact within 34 digits
#: (products go through Decimal), so no conversion is needed on the hot path.
_SMALL = 10**15
_FAST_TYPES: dict[str, type] = {"Number": int, "Text": str, "Boolean": bool}
_NO_TYPE = type("_NoFastPath", (), {})
#: Evaluations on the closures before a Program generates its fast function. Generating costs
#: 0.3-1 ms (about the price of 300-1000 closure calls of a small rule), so a program run once
#: or twice (a check, a preview) never pays for it, and a rule in a loop does after 8 calls.
TIER_UP_CALLS = 8

#: What `Program.evaluate` returns: `Value` unless the caller named a Python type (``returns=``)
R = TypeVar("R", covariant=True, default=Value)
#: ``returns=`` a type, for `Program.returning`
T = TypeVar("T")

#: The Python type each static result kind comes out as (`values.to_external`); ``returns=``
#: accepts these and their bases among them (``date`` takes a DateTime result too).
RESULT_TYPES: dict[str, type] = {
    "Number": decimal.Decimal, "Text": str, "Boolean": bool, "Date": dt.date,
    "DateTime": dt.datetime, "Duration": dt.timedelta, "List": list, "Record": dict,
}
_KIND_OF = {"Decimal": "Number", "str": "Text", "bool": "Boolean", "date": "Date",
            "datetime": "DateTime", "timedelta": "Duration", "list": "List", "dict": "Record"}
#: `to_external`, typed loosely so the hot path assigns its result to ``R`` without a cast call
_external: Callable[[Any], Any] = to_external


def _bind(convert: Callable[[Any, Type, str], Any], t: Type, name: str) -> Callable[[Any], Any]:
    if t.kind == "Number" and not t.nullable:
        from ..values import number_in

        def number(v: Any) -> Any:
            if v is None or type(v) is bool:
                return convert(v, t, name)  # the full path words the refusal
            return number_in(v, name)
        return number
    return lambda v: convert(v, t, name)


def _as_mapping(variables: Any) -> Mapping[str, Any]:
    if variables is None:
        return {}
    if not isinstance(variables, Mapping):
        # a pydantic model or dataclass instance: its fields, read without running its code
        from ..inputs import as_variables

        return as_variables(variables)
    return variables


class Program(Generic[R]):
    """A checked, compiled formula. Build it with `formulane.compile`; ``Program[Decimal]``
    when compiled with ``returns=Decimal`` (see the module doc), ``Program[Value]`` otherwise."""

    __slots__ = (
        "source", "schema", "profile", "limits", "registry", "tree", "root", "type",
        "cost_bound", "metered", "warnings", "variables", "_run", "_slots", "_frame_size",
        "_needs_ctx", "_needs_decimal", "_converters", "_inputs", "_fast", "_calls", "_returns",
    )

    def __init__(self, *, source: str, schema: Mapping[str, Type], profile: str, limits: Limits,
                 registry: Registry, tree: ast_nodes.Node, root: ir.IR,
                 variables: Mapping[str, tuple[int, Type]], slot_count: int,
                 warnings: tuple[Diagnostic, ...]) -> None:
        self.source = source
        self.schema = dict(schema)
        self.profile = profile
        self.limits = limits
        self.registry = registry
        self.tree = tree
        self.root = root
        self.type: Type = root.type
        self.cost_bound: int = root.cost
        self.metered: bool = root.cost > limits.max_cost
        self.warnings = warnings
        self.variables = dict(variables)
        self._returns: type | None = None
        compiler = Compiler(self.metered, limits)
        with decimal.localcontext(CONTEXT):
            self._run = compiler.compile(root)
        self._needs_ctx = compiler.uses_ctx
        self._needs_decimal = _uses_decimal(root)
        self._frame_size = slot_count
        self._slots = tuple(
            (name, slot, t) for name, (slot, t) in sorted(variables.items(), key=lambda kv: kv[1][0])
        )
        self._converters = tuple(_converter(name, slot, t) for name, slot, t in self._slots)
        self._fast: Callable[[Any, Any], Any] | None = None
        self._calls = 0
        self._inputs = tuple(
            (name, slot, _FAST_TYPES.get(t.kind) if not t.nullable else _NO_TYPE,
             _bind(to_internal, t, name))
            for name, slot, t in self._slots
        )

    def __repr__(self) -> str:
        returns = "" if self._returns is None else f", returns={self._returns.__name__}"
        return f"Program({self.source!r}, type={self.type}, profile={self.profile!r}{returns})"

    @property
    def returns(self) -> type | None:
        """The Python type `evaluate` is held to (``returns=``), or None: any `Value`."""
        return self._returns

    def returning(self, returns: type[T]) -> Program[T]:
        """This program held to return ``returns`` (Decimal, str, bool, date, datetime,
        timedelta, list or dict): raises CheckError E214 when the static type cannot produce
        it or may be blank; the copy raises EvalError E304 for an error value at run time.
        Shares the compiled code; `formulane.compile(..., returns=)` caches the copy."""
        expect_result(self.type, returns, self.source)
        typed = cast("_Returning[T]", object.__new__(_Returning))
        for name in Program.__slots__:
            object.__setattr__(typed, name, getattr(self, name))
        typed._returns = returns
        return typed

    def to_json(self) -> dict[str, Any]:
        """The stable stored form (see `program_to_json`); `program_from_json` reloads it."""
        return program_to_json(self)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickles the stored form (language version included) and rebuilds it against the
        # default registry; a program of a custom registry reloads with program_from_json.
        stored = program_to_json(self)
        if self._returns is None:
            return (program_from_json, (stored,))
        return (_reload_returning, (stored, self._returns))

    def explain(self, variables: Mapping[str, Any] | None = None, *,
                now: dt.datetime | None = None) -> Any:
        """Evaluate and return the tree of sub-expressions with their types, values, costs and
        whether they ran (`Explanation`: ``.to_text()``, ``.to_dict()``, ``.error_origin()``)."""
        from .explain import explain

        try:
            return explain(self, variables, now=now)
        except FormulaError as exc:
            raise exc.with_source(self.source)

    def to_polars(self, numbers: str = "float", dtypes: Mapping[str, Any] | None = None) -> Any:
        """This program as polars expressions (`PolarsForm`: value and error code). Raises
        `Unsupported` when a part has no faithful polars form. ``numbers``: "float" or
        "decimal" (the arithmetic of Number columns); ``dtypes``: the frame's column dtypes
        when known, so decimal mode keeps each Decimal column's own scale."""
        from ..columnar.polars.frame import to_polars_form

        # constants fold under this program's own limits
        return to_polars_form(self.root, numbers, dtypes, self.limits)

    def to_sql(self, dialect: str = "duckdb", numbers: str | None = None,
               column_types: Mapping[str, str] | None = None) -> Any:
        """This program as SQL (`SqlForm`: value and error-code expressions, ``.value_sql``,
        and the bindings they read: ``.select(table)`` gives the whole query).
        Raises `Unsupported` when a part has no faithful SQL form. ``numbers``: "decimal" when
        Number columns are DECIMAL, "float" when they are DOUBLE; None (the default): the
        dialect's own, "float" on SQLite (no DECIMAL type there), else "decimal".
        ``column_types``: the table's column SQL types (column name -> type text as the engine
        reports it), when known: fewer casts and range tests (`formulane.sql_select`)."""
        from ..columnar.sql.select import to_sql_form
        from ..errors import LimitExceeded

        try:
            return to_sql_form(self.root, dialect, numbers, self.limits, column_types)
        except RecursionError:
            # sqlglot renders an expression recursively, several frames per level: a formula
            # within max_depth can still nest its SQL past Python's stack (a sum of ~90 terms)
            raise LimitExceeded("the SQL of this formula nests too deeply to render",
                                code="E403", hint="split the formula into smaller ones (LET "
                                "names or several output columns), or lower Limits.max_depth"
                                ) from None

    def _tier_up(self) -> None:
        """Generate the fast function (see the module doc). Racing threads may both generate;
        either result is the same function, and until one is stored the closures run."""
        from .codegen import generate

        self._fast = generate(self.root, variables=self.variables, limits=self.limits,
                              metered=self.metered, source=self.source, external=True)

    @property
    def uses(self) -> tuple[str, ...]:
        """The schema variables this formula reads."""
        return tuple(name for name, _, _ in self._slots)

    def _run_active(self, frame: list[Any]) -> Any:
        """A metered run, its context published so functions' inner loops can poll it."""
        token = activate(frame[0])
        try:
            return self._run(frame)
        finally:
            deactivate(token)

    def evaluate(self, variables: Variables | None = None, *,
                 now: dt.datetime | None = None) -> R:
        """Run the formula. ``now`` is the clock TODAY() and NOW() read (default: the current
        UTC time, read once); values out are Decimal, str, bool, date, datetime, timedelta,
        list, dict, None or `ErrorValue` (a ``Program[Decimal]``: a Decimal, see `returning`)."""
        fast = self._fast
        if fast is not None:
            if type(variables) is not dict and variables is not None:
                variables = _as_mapping(variables)
            out: R = fast(variables, now)  # generated code keeps the same contract
            return out
        self._calls += 1
        if self._calls == TIER_UP_CALLS:
            self._tier_up()
        if type(variables) is not dict:
            variables = _as_mapping(variables)
        frame: list[Any] = [None] * self._frame_size
        try:
            # The common case inline: a small int, an ASCII str, a bool... is taken as is.
            for name, slot, kind, convert in self._inputs:
                v = variables[name]
                tv = type(v)
                if tv is kind and (tv is not int or -_SMALL < v < _SMALL) and (
                        tv is not str or v.isascii()):
                    frame[slot] = v
                else:
                    frame[slot] = convert(v)
        except KeyError:
            _read_inputs(self._converters, variables, frame)
        except FormulaError:
            raise
        except Exception as exc:  # a host object's method raised while its value was read
            raise _unreadable(exc) from None
        if self._needs_ctx:
            if now is None:
                now = dt.datetime.now(_UTC)
            elif not isinstance(now, dt.datetime) or now.tzinfo is None or now.utcoffset() is None:
                raise EvalError("now must be an aware datetime", code="E301")
            frame[0] = EvalContext(self.limits, now, self.metered)
        if self._needs_decimal:
            saved = _getcontext()
            _setcontext(CONTEXT)
            try:
                result = self._run_active(frame) if self.metered else self._run(frame)
            except FormulaError as exc:
                raise exc.with_source(self.source)
            except RecursionError:
                raise LimitExceeded("evaluation nested too deeply", code="E403") from None
            except MemoryError:
                raise LimitExceeded("evaluation ran out of memory", code="E407") from None
            except Exception as exc:  # a fault of ours: report it, never a bare traceback
                raise InternalError(f"internal error while evaluating: {type(exc).__name__}: "
                                    f"{exc}", source=self.source) from exc
            finally:
                _setcontext(saved)
        else:
            try:
                result = self._run_active(frame) if self.metered else self._run(frame)
            except FormulaError as exc:
                raise exc.with_source(self.source)
            except RecursionError:
                raise LimitExceeded("evaluation nested too deeply", code="E403") from None
            except MemoryError:
                raise LimitExceeded("evaluation ran out of memory", code="E407") from None
            except Exception as exc:
                raise InternalError(f"internal error while evaluating: {type(exc).__name__}: "
                                    f"{exc}", source=self.source) from exc
        plain: R = result  # (bound before the test below narrows ``result``)
        tr = type(result)
        if tr is bool or tr is str or result is None or tr is ErrorValue or (
                tr is decimal.Decimal and (result or not result.is_signed())):
            return plain  # already the caller's form (see `to_external`; a -0 is made 0 there)
        external: R = _external(result)
        return external


class _Returning(Program[R]):
    """A Program held to one Python result type (`Program.returning`): an error value or a
    blank at run time is raised (E304) rather than returned as something that type is not."""

    __slots__ = ()

    def evaluate(self, variables: Variables | None = None, *,
                 now: dt.datetime | None = None) -> R:
        out = super().evaluate(variables, now=now)
        returns = self._returns
        if returns is not None and not isinstance(out, returns):
            raise _not_returned(out, returns, self.source)
        return out


def expect_result(t: Type, returns: Any, source: str) -> None:
    """Raise CheckError E214 unless a result of static type ``t`` always comes out as an
    instance of ``returns`` (or an error value, which `_Returning` raises as E304)."""
    span = Span(0, len(source))
    names = ", ".join(sorted({c.__name__ for c in RESULT_TYPES.values()}))
    if not isinstance(returns, type) or returns not in RESULT_TYPES.values():
        shown = returns.__name__ if isinstance(returns, type) else repr(returns)
        raise CheckError(f"returns={shown} is not a type a formula's result comes out as",
                         code="E214", span=span, source=source,
                         hint=f"use one of {names} (a Number comes out as Decimal)")
    made = RESULT_TYPES.get(t.kind)
    if made is None:
        why = ("its type is known only at run time" if t.kind == "Any"
               else "it is always blank" if t.kind == "Blank" else f"its type is {t}")
        raise CheckError(f"the formula cannot be held to return {returns.__name__}: {why}",
                         code="E214", span=span, source=source,
                         hint=f"convert the result (e.g. VALUE(...), TEXT(...)) so the checker "
                              f"knows it is {_KIND_OF[returns.__name__]}, or leave returns= "
                              f"unset")
    if not issubclass(made, returns):
        raise CheckError(f"the formula returns {t}, which comes out as {made.__name__}, not "
                         f"{returns.__name__}", code="E214", span=span, source=source,
                         hint=f"pass returns={made.__name__}, or change the formula to "
                              f"return {_KIND_OF[returns.__name__]}")
    if t.nullable:
        raise CheckError(f"the formula returns {t}, which may be blank (None), not always "
                         f"{returns.__name__}", code="E214", span=span, source=source,
                         hint="give blanks a value with `?? default` (e.g. `(...) ?? 0`), or "
                              "leave returns= unset to receive None")


def _not_returned(out: Any, returns: type, source: str) -> EvalError:
    if isinstance(out, ErrorValue):
        return EvalError(f"the formula gave the error value {out.code} where a "
                         f"{returns.__name__} was expected (returns={returns.__name__})",
                         code="E304", source=source,
                         hint="catch it in the formula with IFERROR(..., fallback), or compile "
                              "without returns= to receive error values as data")
    return EvalError(f"the formula gave {type(out).__name__} where a {returns.__name__} was "
                     f"expected (returns={returns.__name__})", code="E304", source=source,
                     hint="compile without returns= to receive any value")


def _reload_returning(stored: Mapping[str, Any], returns: type[T]) -> Program[T]:
    return program_from_json(stored).returning(returns)


def _read_inputs(converters: Any, variables: Any, frame: list[Any]) -> None:
    try:
        for convert in converters:
            convert(variables, frame)
    except FormulaError:
        raise
    except RecursionError:
        raise EvalError("variables are nested too deeply", code="E301") from None
    except Exception as exc:  # noqa: BLE001 - a host object's own fault
        raise _unreadable(exc) from None


def _unreadable(exc: Exception) -> EvalError:
    return EvalError(f"the variables could not be read: a host object raised {type(exc).__name__}",
                     code="E301", hint="pass plain values (numbers, text, lists, dicts)")


def _converter(name: str, slot: int, t: Type) -> Callable[[Mapping[str, Any], list[Any]], None]:
    """A per-variable input step, specialised for the common scalar types."""
    from ..values import number_in

    if t.kind == "Number" and not t.nullable:
        def number(variables: Mapping[str, Any], frame: list[Any]) -> None:
            try:
                v = variables[name]
            except KeyError:
                raise _missing(name, t) from None
            if type(v) is int and -_SMALL < v < _SMALL:
                frame[slot] = v
            elif type(v) is bool or v is None:
                frame[slot] = to_internal(v, t, name)
            else:
                frame[slot] = number_in(v, name)
        return number
    if t.kind == "Text" and not t.nullable:
        def text(variables: Mapping[str, Any], frame: list[Any]) -> None:
            try:
                v = variables[name]
            except KeyError:
                raise _missing(name, t) from None
            frame[slot] = v if type(v) is str and v.isascii() else to_internal(v, t, name)
        return text

    def general(variables: Mapping[str, Any], frame: list[Any]) -> None:
        if name in variables:
            frame[slot] = to_internal(variables[name], t, name)
        elif t.nullable:
            frame[slot] = None
        else:
            raise _missing(name, t)
    return general


def _missing(name: str, t: Type) -> EvalError:
    return EvalError(f"variable {name!r} ({t}) was not given a value", code="E302",
                     hint=f"pass it in variables, or declare it as {t}? to allow a blank")


def _uses_decimal(node: ir.IR) -> bool:
    """Whether any step may do decimal arithmetic (comparisons and logic never round)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Call):
            if not (n.spec.category == "logic" or n.spec.decimal_free):
                return True
        elif isinstance(n, ir.Coerce):
            return True
        stack.extend(ir.ir_children(n))
    return False


def compile_program(source: str, schema: Mapping[str, Type], *, profile: str, limits: Limits,
                    registry: Registry) -> Program[Value]:
    """Parse, check and compile. Raises only FormulaError subclasses."""
    try:
        tree = parse(source, limits=limits)
        root, checker = check(tree, source, schema, profile=profile, limits=limits,
                              registry=registry)
        return Program(source=source, schema=schema, profile=profile, limits=limits,
                       registry=registry, tree=tree, root=root, variables=checker.variables,
                       slot_count=checker.slot_count, warnings=tuple(checker.warnings))
    except FormulaError as exc:
        raise exc.with_source(source)
    except RecursionError:
        raise LimitExceeded("formula nested too deeply", code="E403", source=source) from None
    except MemoryError:
        raise LimitExceeded("formula too large", code="E402", source=source) from None
    except Exception as exc:
        raise InternalError(f"internal error while compiling: {type(exc).__name__}: {exc}",
                            source=source) from exc


# ---- stable stored form: reload a checked program without parsing its text again ----------

_FORMAT = "formulane.program"


def _node_to_json(node: Any) -> Any:
    """An AST node as JSON: ``{"n": class, field: value...}``; spans as [start, end]."""
    from dataclasses import fields as dc_fields

    from ..source import Span

    if isinstance(node, Span):
        return [node.start, node.end]
    if isinstance(node, tuple):
        return [_node_to_json(x) for x in node]
    if isinstance(node, decimal.Decimal):
        return {"d": str(node)}
    if node is None or isinstance(node, (str, bool, int)):
        return node
    out: dict[str, Any] = {"n": type(node).__name__}
    for f in dc_fields(node):
        value = getattr(node, f.name)
        if f.name == "parenthesized" and not value:
            continue
        out[f.name] = _node_to_json(value)
    return out


_SPAN_FIELDS = frozenset({"span", "name_span", "op_span"})


def _node_from_json(data: Any, depth: int = 0) -> Any:
    from ..source import Span

    if depth > 500:
        raise LimitExceeded("stored program nests too deeply", code="E403")
    if isinstance(data, list):
        return tuple(_node_from_json(x, depth + 1) for x in data)
    if not isinstance(data, dict):
        return data
    if set(data) == {"d"}:
        return decimal.Decimal(data["d"])
    cls = getattr(ast_nodes, str(data.get("n", "")), None)
    if cls is None or not isinstance(cls, type) or not hasattr(cls, "__dataclass_fields__"):
        raise FormulaError(f"stored program has an unknown node {data.get('n')!r}", code="E209")
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        if name == "n":
            continue
        if name in _SPAN_FIELDS:
            kwargs[name] = Span(int(value[0]), int(value[1]))
        elif name == "param_spans":
            kwargs[name] = tuple(Span(int(a), int(b)) for a, b in value)
        elif isinstance(value, list) and name in ("args", "items"):
            kwargs[name] = tuple(_node_from_json(x, depth + 1) for x in value)
        elif name == "params":
            kwargs[name] = tuple(str(x) for x in value)
        else:
            kwargs[name] = _node_from_json(value, depth + 1)
    return cls(**kwargs)


def program_to_json(program: Program[Any]) -> dict[str, Any]:
    """The stable JSON form of a Program: language version, source, schema, profile, limits,
    the checked AST (spans kept) and its type. `program_from_json` rebuilds the Program from
    it by checking that AST again, without parsing the text."""
    from dataclasses import asdict

    from ..schema import LANGUAGE_VERSION, schema_to_json

    return {
        "format": _FORMAT, "language_version": LANGUAGE_VERSION, "source": program.source,
        "schema": schema_to_json(program.schema), "profile": program.profile,
        "limits": {k: v for k, v in asdict(program.limits).items()
                   if isinstance(v, (int, float, str, bool)) or v is None},
        "type": str(program.type), "tree": _node_to_json(program.tree),
    }


def program_from_json(data: Mapping[str, Any], *,
                      registry: Registry | None = None) -> Program[Value]:
    """A Program from `program_to_json`'s form; the AST is checked again (types, costs, the
    functions of this version), never parsed from text. A form from a newer language version
    is refused (E209) rather than guessed at."""
    from ..functions.registry import default_registry
    from ..schema import LANGUAGE_VERSION, schema_from_json

    if not isinstance(data, Mapping) or data.get("format") != _FORMAT:
        raise FormulaError("not a stored formulane program", code="E209")
    version = str(data.get("language_version", ""))
    if not version.isdigit() or int(version) > int(LANGUAGE_VERSION):
        raise FormulaError(f"stored program is of language version {version!r}; this formulane "
                           f"reads up to {LANGUAGE_VERSION}", code="E209",
                           hint="upgrade formulane to read it")
    source = str(data["source"])
    schema = schema_from_json(data["schema"])
    profile = str(data["profile"])
    known = {f for f in Limits.__dataclass_fields__}
    limits = Limits(**{k: v for k, v in dict(data.get("limits") or {}).items() if k in known})
    reg = registry or default_registry()
    try:
        tree = _node_from_json(data["tree"])
        root, checker = check(tree, source, schema, profile=profile, limits=limits, registry=reg)
    except FormulaError as exc:
        raise exc.with_source(source)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise FormulaError(f"malformed stored program: {type(exc).__name__}", code="E209") from None
    return Program(source=source, schema=schema, profile=profile, limits=limits, registry=reg,
                   tree=tree, root=root, variables=checker.variables,
                   slot_count=checker.slot_count, warnings=tuple(checker.warnings))

