"""A typed tool: reviewed Python code behind a strict input model, an output model and an effect.

Contract: `Tool(...)` (explicit models) and `Tool.from_function(fn, ...)` (models from the
signature, docstring argument docs and pydantic `Field`s) both validate the definition when
built and raise `ToolError` E506 naming the exact problem: a bad name, an unannotated or
variadic parameter, a missing return annotation, an input model that does not forbid extra
keys, an unknown effect. Everything a call needs later (canonical schemas, schema hash, field
plans, how to pass arguments) is computed here, once.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, RootModel, create_model
from pydantic.fields import FieldInfo

from ..errors import ToolError
from .docstrings import parse_docstring
from .principal import CallContext, Principal
from .schema import ModelPlan, build_plan, canonical_schema
from .walk import Shape, UnreachableMark, shape_of

Effect = Literal["read", "propose", "write"]
EFFECTS: tuple[str, ...] = get_args(Effect)

#: Canonical tool names: MCP's character set, starting like an identifier (Gemini's rule).
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
#: The field a root union (or any non-object input) is wrapped in.
ROOT_FIELD = "input"
#: The field a non-model return value is wrapped in (as the MCP SDK does).
RESULT_FIELD = "result"

CallStyle = Literal["kwargs", "model", "root"]


class ToolFailure(Exception):
    """Raise inside a tool to send `message` to the model as the error text.

    Any other exception reaches the model only as its class name: internal messages may
    carry data that must not leave the process.
    """

    def __init__(self, message: str, *, retryable: bool = False, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.hint = hint


def _definition_error(tool: str, message: str, hint: str = "") -> ToolError:
    return ToolError(f"tool {tool!r}: {message}", code="E506", hint=hint)


def _camel(name: str) -> str:
    parts = re.split(r"[^A-Za-z0-9]+", name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p) or "Tool"


def _hash_json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _is_model_type(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


@dataclass(frozen=True, eq=False)
class Tool:
    """One tool. Build it with `Tool(...)` or `Tool.from_function(...)`; it is immutable."""

    name: str
    fn: Callable[..., Any]
    input_model: Any
    output_model: Any = None
    description: str = ""
    version: str = "1"
    effect: Effect = "read"
    scopes: frozenset[str] = frozenset()
    approval_scope: str = "tools:approve"
    approver_kinds: frozenset[str] = frozenset({"user"})
    cost: int = 1
    title: str | None = None
    open_world: bool | None = None

    # Derived in __post_init__.
    call_style: CallStyle = field(init=False, default="model")
    arg_name: str | None = field(init=False, default=None)
    inject: dict[str, str] = field(init=False, default_factory=dict[str, str])
    is_async: bool = field(init=False, default=False)
    wraps_output: bool = field(init=False, default=False)
    input_schema: dict[str, Any] = field(init=False, default_factory=dict[str, Any])
    output_schema: dict[str, Any] = field(init=False, default_factory=dict[str, Any])
    schema_hash: str = field(init=False, default="")
    plan: ModelPlan = field(init=False, repr=False, default=None)  # type: ignore[assignment]
    output_plan: ModelPlan = field(init=False, repr=False, default=None)  # type: ignore[assignment]
    shape: Shape = field(init=False, repr=False, default=None)  # type: ignore[assignment]
    output_shape: Shape = field(init=False, repr=False, default=None)  # type: ignore[assignment]
    notes: tuple[str, ...] = field(init=False, default=())

    # The signature-derived path sets these before __post_init__ runs.
    _call_style_hint: CallStyle | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Declared as object: the checks below run on whatever the caller passed.
        name = cast(object, self.name)
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise ToolError(
                f"invalid tool name {name!r}",
                code="E506",
                hint="use 1-128 characters from [A-Za-z0-9_.-], starting with a letter or '_'",
            )
        if not callable(self.fn):
            raise _definition_error(name, "fn is not callable")
        if self.effect not in EFFECTS:
            raise _definition_error(name, f"effect must be one of {', '.join(EFFECTS)}, got {self.effect!r}")
        version = cast(object, self.version)
        if not isinstance(version, str) or not version.strip():
            raise _definition_error(name, "version must be a non-empty string")
        if isinstance(cast(object, self.scopes), str):
            raise _definition_error(name, "scopes must be a list of scope names, not one string",
                                    hint=f"scopes=[{self.scopes!r}]")
        scopes: frozenset[object] = frozenset(self.scopes)
        for scope in scopes:
            if not isinstance(scope, str) or not scope.strip():
                raise _definition_error(name, f"scope {scope!r} must be a non-empty string")
        approval_scope = cast(object, self.approval_scope)
        if not isinstance(approval_scope, str) or not approval_scope.strip():
            raise _definition_error(name, "approval_scope must be a non-empty string")
        kinds = frozenset(self.approver_kinds)
        if not kinds or not kinds <= {"user", "workload"}:
            raise _definition_error(name, "approver_kinds must be a non-empty subset of {'user', 'workload'}")
        cost = cast(object, self.cost)
        if isinstance(cost, bool) or not isinstance(cost, int) or cost < 0:
            raise _definition_error(name, f"cost must be a non-negative int, got {self.cost!r}")
        set_ = self._set
        set_("scopes", scopes)
        set_("approver_kinds", kinds)
        set_("is_async", inspect.iscoroutinefunction(self.fn)
             or inspect.iscoroutinefunction(getattr(self.fn, "__call__", None)))
        notes: list[str] = []

        input_model = self.input_model
        style: CallStyle = self._call_style_hint or "model"
        if not _is_model_type(input_model) or issubclass(input_model, RootModel):
            # A root union (or any non-object input) cannot be a provider's parameters object.
            inner = cast(Any, input_model.model_fields["root"].annotation if _is_model_type(input_model) else input_model)
            root_fields: dict[str, Any] = {ROOT_FIELD: (inner, Field(description="The tool input."))}
            input_model = create_model(  # field names come from a dict
                f"{_camel(name)}Args",
                __config__=ConfigDict(extra="forbid"),
                **root_fields,
            )
            style = "root"
            notes.append(f"root input type wrapped in the field {ROOT_FIELD!r}")
        elif input_model.model_config.get("extra") != "forbid":
            raise _definition_error(
                name,
                f"input model {input_model.__name__} must forbid unknown keys",
                hint='set model_config = ConfigDict(extra="forbid")',
            )
        set_("input_model", input_model)
        set_("call_style", style)

        output = self.output_model
        if _is_model_type(output) and not issubclass(output, RootModel):
            set_("wraps_output", False)
        else:
            inner_out = cast(Any, output.model_fields["root"].annotation if _is_model_type(output) else output)
            if inner_out is None:
                inner_out = type(None)
            result_fields: dict[str, Any] = {RESULT_FIELD: (inner_out, ...)}
            output = create_model(  # field names come from a dict
                f"{_camel(name)}Result",
                __config__=ConfigDict(extra="forbid"),
                **result_fields,
            )
            set_("wraps_output", True)
        set_("output_model", output)

        inject, arg_name = self._bind_parameters(style)
        set_("inject", inject)
        set_("arg_name", arg_name)
        try:
            input_schema = canonical_schema(input_model)
            output_schema = canonical_schema(output)
        except Exception as exc:  # pydantic raises several types for unschematizable types
            raise _definition_error(name, f"cannot build a JSON schema: {exc}") from exc
        set_("input_schema", input_schema)
        set_("output_schema", output_schema)
        set_("schema_hash", _hash_json({"input": input_schema, "output": output_schema}))
        set_("plan", build_plan(input_model))
        set_("output_plan", build_plan(output))
        try:
            set_("shape", shape_of(input_model))
            set_("output_shape", shape_of(output))
        except UnreachableMark as exc:
            raise _definition_error(name, str(exc), hint="put TenantKey/Secret fields in pydantic models") from exc
        set_("notes", tuple(notes))

    def _set(self, attr: str, value: Any) -> None:
        object.__setattr__(self, attr, value)  # the dataclass is frozen; derived fields are set once here

    def _bind_parameters(self, style: CallStyle) -> tuple[dict[str, str], str | None]:
        """Find injected parameters and, for model/root styles, the one argument parameter."""
        try:
            signature = inspect.signature(self.fn)
            hints = typing.get_type_hints(self.fn, include_extras=True)
        except (TypeError, ValueError):
            return {}, None
        except NameError as exc:
            raise _definition_error(self.name, f"cannot resolve a type annotation: {exc}") from exc
        inject: dict[str, str] = {}
        free: list[str] = []
        for pname, param in signature.parameters.items():
            hint = hints.get(pname)
            if hint is Principal:
                inject[pname] = "principal"
            elif hint is CallContext:
                inject[pname] = "context"
            elif param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                free.append(pname)
        if style == "kwargs":
            return inject, None
        required = [p for p in free if signature.parameters[p].default is inspect.Parameter.empty]
        if len(required) > 1 or not free:
            raise _definition_error(
                self.name,
                "a tool built from an explicit input model must take exactly one argument "
                f"(the validated model); {getattr(self.fn, '__name__', 'fn')} takes {free}",
            )
        return inject, free[0]

    # -- construction from a function ------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        effect: Effect = "read",
        scopes: Iterable[str] = (),
        version: str = "1",
        approval_scope: str = "tools:approve",
        approver_kinds: Iterable[str] = ("user",),
        cost: int = 1,
        title: str | None = None,
        open_world: bool | None = None,
    ) -> "Tool":
        tool_name = name if name is not None else getattr(fn, "__name__", "")
        if isinstance(scopes, str):
            raise _definition_error(str(tool_name), "scopes must be a list of scope names, not one string",
                                    hint=f"scopes=[{scopes!r}]")
        if not callable(fn):
            raise _definition_error(str(tool_name), "is not callable")
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise _definition_error(str(tool_name), f"has no inspectable signature: {exc}") from exc
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except NameError as exc:
            raise _definition_error(str(tool_name), f"cannot resolve a type annotation: {exc}") from exc
        doc = parse_docstring(inspect.getdoc(fn))
        fields: dict[str, Any] = {}
        for pname, param in signature.parameters.items():
            hint = hints.get(pname, inspect.Parameter.empty)
            if hint is Principal or hint is CallContext:
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise _definition_error(
                    str(tool_name), f"parameter {param}: *args/**kwargs cannot be described to a model",
                    hint="declare each argument with a type",
                )
            if param.kind is param.POSITIONAL_ONLY:
                raise _definition_error(str(tool_name), f"parameter {pname!r} is positional-only",
                                        hint="tools are called with keyword arguments")
            if pname.startswith("_"):
                raise _definition_error(str(tool_name), f"parameter {pname!r} starts with '_'",
                                        hint="pydantic treats such names as private; rename it")
            if hint is inspect.Parameter.empty:
                raise _definition_error(str(tool_name), f"parameter {pname!r} has no type annotation",
                                        hint=f"annotate it, e.g. {pname}: str")
            fields[pname] = _field_definition(hint, param.default, doc.args.get(pname))
        if "return" not in hints:
            raise _definition_error(str(tool_name), "has no return annotation",
                                    hint="annotate the result, e.g. -> dict[str, int] or -> None")
        try:
            input_model = create_model(
                f"{_camel(str(tool_name))}Args",
                __config__=ConfigDict(extra="forbid"),
                **fields,
            )
        except Exception as exc:
            raise _definition_error(str(tool_name), f"cannot build the input model: {exc}") from exc
        return cls(
            name=tool_name,
            fn=fn,
            input_model=input_model,
            output_model=hints["return"],
            description=description if description is not None else doc.description,
            version=version,
            effect=effect,
            scopes=frozenset(scopes),
            approval_scope=approval_scope,
            approver_kinds=frozenset(approver_kinds),
            cost=cost,
            title=title,
            open_world=open_world,
            _call_style_hint="kwargs",
        )

    # -- calling ---------------------------------------------------------------------------

    def arguments(self, validated: BaseModel, context: Callable[[], CallContext]) -> tuple[tuple[Any, ...],
                                                                                         dict[str, Any]]:
        """Positional and keyword arguments for `fn` from a validated input model.

        `context` builds the CallContext only when a parameter asks for it."""
        if self.call_style == "kwargs":
            kwargs = dict(validated.__dict__)
            args: tuple[Any, ...] = ()
        elif self.call_style == "root":
            args, kwargs = (getattr(validated, ROOT_FIELD),), {}
        else:
            args, kwargs = (validated,), {}
        if self.inject:
            built = context()
            for pname, what in self.inject.items():
                kwargs[pname] = built.principal if what == "principal" else built
        return args, kwargs

    def wrap_output(self, value: Any) -> BaseModel:
        """Validate the function's return value against the output model."""
        validator = self.output_model.__pydantic_validator__
        out: BaseModel = validator.validate_python({RESULT_FIELD: value} if self.wraps_output else value)
        return out

    def mcp_annotations(self) -> dict[str, Any]:
        """MCP hints from the effect class (clients must not trust these; we set them honestly)."""
        out: dict[str, Any] = {}
        if self.title:
            out["title"] = self.title
        if self.effect == "read":
            out["readOnlyHint"] = True
        elif self.effect == "propose":
            out["readOnlyHint"] = False
            out["destructiveHint"] = False
        else:
            out["readOnlyHint"] = False
            out["destructiveHint"] = True
        if self.open_world is not None:
            out["openWorldHint"] = self.open_world
        return out


def _field_definition(hint: Any, default: Any, doc: str | None) -> tuple[Any, Any]:
    """A create_model field tuple; docstring text fills the description only when none is set."""
    annotated_infos = []
    if typing.get_origin(hint) is typing.Annotated:
        annotated_infos = [m for m in typing.get_args(hint)[1:] if isinstance(m, FieldInfo)]
    has_description = any(info.description for info in annotated_infos)
    if isinstance(default, FieldInfo):
        if doc and not default.description and not has_description:
            # A merged copy: the caller's FieldInfo object is not ours to mutate.
            # Deprecated without a public replacement (pydantic 2.12+ says to open an issue).
            default = FieldInfo.merge_field_infos(default, description=doc)  # pyright: ignore[reportDeprecated]
        return (hint, default)
    value = ... if default is inspect.Parameter.empty else default
    if doc and not has_description:
        return (hint, Field(default=value, description=doc))
    return (hint, value)
