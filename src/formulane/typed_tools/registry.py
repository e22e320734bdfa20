"""`ToolRegistry`: where tools are declared, exported, approved and called.

Contract: `@registry.tool` (bare or with options) and `registry.add(Tool(...))` register
tools; names are unique and get one provider-safe alias each. `export(target)` compiles every
tool for a provider (see `export/`). `call`/`acall` run the checked pipeline in `invocation.py`
and never raise for anything a model can cause. `approve`/`deny` decide pending write requests.
`as_formula_functions` describes `read` tools for the formula engine and refuses the rest.
Receipts, approvals and idempotency records live in one durable store (SQLite by default,
PostgreSQL by URL).
"""

from __future__ import annotations

import difflib
import logging
import re
import threading
import time
import typing
from collections import OrderedDict
from dataclasses import dataclass
from datetime import date, datetime, time as dtime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeVar, cast, overload

from ..errors import ToolError
from .approvals import ApprovalRequest, refusal_for_approver
from .invocation import Invocation
from .names import provider_names
from .principal import Principal
from .receipts import Receipt
from .results import ToolResult
from .store import SQLStore, open_store
from .tool import Effect, Tool

if TYPE_CHECKING:
    from .export import Export

log = logging.getLogger("formulane.tools")

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_APPROVAL_TTL = 24 * 3600.0
_RETRY_KEYS_MAX = 10_000


@dataclass(frozen=True, slots=True)
class FormulaParam:
    name: str
    type: Any
    required: bool
    default: Any = None


@dataclass(frozen=True, slots=True)
class FormulaFunction:
    """A `read` tool described for the formula engine's function registry."""

    name: str
    tool: str
    params: tuple[FormulaParam, ...]
    returns: Any
    doc: str
    cost: int
    fn: Callable[..., Any]


#: Arguments larger than this (the JSON text, in UTF-8 bytes) are refused before parsing (E502).
DEFAULT_MAX_ARGUMENT_BYTES = 16 * 1024 * 1024


class ToolRegistry:
    def __init__(
        self,
        *,
        store: str | SQLStore | None = None,
        max_retries: int = 3,
        decode_stringified_json: bool = False,
        approval_ttl: float = DEFAULT_APPROVAL_TTL,
        four_eyes: bool = False,
        clock: Callable[[], float] = time.time,
        max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
    ) -> None:
        if isinstance(max_argument_bytes, bool) or not isinstance(cast(object, max_argument_bytes), int) or max_argument_bytes < 1:
            raise ToolError(f"max_argument_bytes must be a positive int, got {max_argument_bytes!r}", code="E506")
        if isinstance(max_retries, bool) or not isinstance(cast(object, max_retries), int) or max_retries < 0:
            raise ToolError(f"max_retries must be a non-negative int, got {max_retries!r}", code="E506")
        if approval_ttl <= 0:
            raise ToolError("approval_ttl must be positive (seconds)", code="E506")
        self._tools: dict[str, Tool] = {}
        self._aliases: dict[str, str] = {}
        self._provider: dict[str, str] = {}
        self.store: SQLStore = open_store(store)
        self.max_retries = max_retries
        self.decode_stringified_json = decode_stringified_json
        self.approval_ttl = approval_ttl
        self.four_eyes = four_eyes
        self.clock = clock
        self.max_argument_bytes = max_argument_bytes
        self._retries: OrderedDict[str, int] = OrderedDict()
        self._retries_lock = threading.Lock()
        self._invocation = Invocation(self)

    # -- registration -----------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = ...,
        effect: Effect = ...,
        scopes: Iterable[str] = ...,
        version: str = ...,
        description: str | None = ...,
        approval_scope: str = ...,
        approver_kinds: Iterable[str] = ...,
        cost: int = ...,
        title: str | None = ...,
        open_world: bool | None = ...,
    ) -> Callable[[F], F]: ...

    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Register a function as a tool; works bare (`@registry.tool`) or with options.

        The function is returned unchanged, so it can still be called directly.
        """
        if fn is not None:
            if options:
                raise ToolError("use @registry.tool or @registry.tool(...), not both", code="E506")
            self.add(Tool.from_function(fn))
            return fn

        def decorate(func: F) -> F:
            self.add(Tool.from_function(func, **options))
            return func

        return decorate

    def add(self, tool: Tool) -> Tool:
        if not isinstance(cast(object, tool), Tool):
            raise ToolError(f"expected a Tool, got {type(tool).__name__}", code="E506")
        if tool.name in self._tools:
            raise ToolError(f"a tool named {tool.name!r} is already registered", code="E506",
                            hint="give one of them another name=")
        mapping = provider_names([*self._tools, tool.name])
        self._tools[tool.name] = tool
        self._provider = mapping
        self._aliases = {alias: name for name, alias in mapping.items() if alias != name}
        if tool.effect == "write" and getattr(self.store, "path", None) == ":memory:":
            log.warning("write tool %r uses an in-memory store: idempotency does not survive a restart",
                        tool.name)
        return tool

    def resolve(self, name: str) -> Tool | None:
        """A tool by canonical name or by its provider alias."""
        tool = self._tools.get(name)
        if tool is None:
            canonical = self._aliases.get(name)
            tool = self._tools.get(canonical) if canonical else None
        return tool

    def get(self, name: str) -> Tool:
        tool = self.resolve(name)
        if tool is None:
            raise ToolError(f"unknown tool {name!r}", code="E501", hint=self.did_you_mean(name))
        return tool

    def did_you_mean(self, name: str) -> str:
        close = self.close_names(name)
        return ("did you mean " + " or ".join(repr(c) for c in close) + "?") if close else ""

    def close_names(self, name: str) -> list[str]:
        pool = sorted({*self._tools, *self._aliases})
        return difflib.get_close_matches(str(name), pool, n=3, cutoff=0.5)

    def provider_name(self, name: str) -> str:
        return self._provider[self.get(name).name]

    def names(self) -> list[str]:
        return sorted(self._tools)

    def tools(self) -> list[Tool]:
        return [self._tools[name] for name in self.names()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) is not None

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools())

    def __len__(self) -> int:
        return len(self._tools)

    # -- export -----------------------------------------------------------------------------

    def export(self, target: str, *, api: str = "chat", tools: Iterable[str] | None = None,
               skip_unexportable: bool = False) -> "Export":
        """Compile the tools for one provider target; see `typed_tools.export.export_tools`."""
        from .export import export_tools

        selected = self.tools() if tools is None else [self.get(n) for n in tools]
        return export_tools(selected, target, names=self._provider, api=api,
                            skip_unexportable=skip_unexportable)

    # -- calls ------------------------------------------------------------------------------

    def call(
        self,
        name: str,
        raw_args: str | bytes | dict[str, Any],
        *,
        principal: Principal,
        idempotency_key: str | None = None,
        approval: str | ApprovalRequest | None = None,
        call_id: str | None = None,
        retry_key: str | None = None,
    ) -> ToolResult:
        """Validate, authorize, (for writes) check approval and idempotency, run, receipt.

        `approval` is an approval id (or request), or "auto" to use an approved request for
        exactly these arguments. Failures come back as `ToolResult` with an error envelope.
        """
        return self._invocation.call(name, raw_args, principal=principal, idempotency_key=idempotency_key,
                                     approval=approval, call_id=call_id, retry_key=retry_key)

    async def acall(
        self,
        name: str,
        raw_args: str | bytes | dict[str, Any],
        *,
        principal: Principal,
        idempotency_key: str | None = None,
        approval: str | ApprovalRequest | None = None,
        call_id: str | None = None,
        retry_key: str | None = None,
    ) -> ToolResult:
        """`call` for async code: async tools are awaited, sync tools run in a worker thread."""
        return await self._invocation.acall(name, raw_args, principal=principal,
                                            idempotency_key=idempotency_key, approval=approval,
                                            call_id=call_id, retry_key=retry_key)

    def count_retry(self, key: str | None, *, failed: bool) -> tuple[int | None, bool]:
        """Count a retryable failure under `key`: (attempts left, exhausted?)."""
        if key is None:
            return None, False
        with self._retries_lock:
            if not failed:
                self._retries.pop(key, None)
                return None, False
            count = self._retries.pop(key, 0) + 1
            self._retries[key] = count  # most recent last: the oldest keys are evicted first
            while len(self._retries) > _RETRY_KEYS_MAX:
                self._retries.popitem(last=False)
        left = self.max_retries - count
        return max(left, 0), left < 0

    # -- approvals --------------------------------------------------------------------------

    def approval(self, approval_id: str) -> ApprovalRequest | None:
        return self.store.approval(approval_id)

    def approve(self, approval_id: str, *, approver: Principal, reason: str | None = None) -> ApprovalRequest:
        """Approve a pending write request; raises ToolError E503/E504 when not allowed."""
        return self._decide(approval_id, approver, "approved", reason)

    def deny(self, approval_id: str, *, approver: Principal, reason: str | None = None) -> ApprovalRequest:
        return self._decide(approval_id, approver, "denied", reason)

    def _decide(self, approval_id: str, approver: Principal, status: str, reason: str | None) -> ApprovalRequest:
        if not isinstance(cast(object, approver), Principal):
            raise ToolError("approver must be a Principal", code="E503")
        request = self.store.approval(approval_id)
        if request is None:
            raise ToolError(f"unknown approval {approval_id!r}", code="E504")
        tool = self.resolve(request.tool)
        scope = tool.approval_scope if tool else "tools:approve"
        kinds = tool.approver_kinds if tool else frozenset({"user"})
        now = self.clock()
        refusal = refusal_for_approver(request, approver, approval_scope=scope, approver_kinds=kinds,
                                       four_eyes=self.four_eyes, now=now)
        if refusal is not None:
            raise ToolError(refusal, code="E503")
        if not self.store.decide_approval(approval_id, status=status, approver=approver.subject,
                                          reason=reason, now=now):
            raise ToolError(f"approval {approval_id} was decided concurrently", code="E504")
        decided = self.store.approval(approval_id)
        assert decided is not None
        log.info("approval %s %s by %s", approval_id, status, approver.subject)
        return decided

    # -- receipts ---------------------------------------------------------------------------

    def receipts(self, **filters: Any) -> list[Receipt]:
        return self.store.receipts(**filters)

    def flush(self) -> None:
        self.store.flush()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "ToolRegistry":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- formulas ---------------------------------------------------------------------------

    def as_formula_functions(self, names: Iterable[str] | None = None, *,
                             principal: Principal) -> list[FormulaFunction]:
        """Describe `read` tools as formula functions, each call going through `call`.

        Named side-effecting tools are refused (E506): a formula must never change state.
        """
        if not isinstance(cast(object, principal), Principal):
            raise ToolError("as_formula_functions needs the Principal the formulas run as", code="E503")
        if names is None:
            selected: list[Tool] = [t for t in self.tools() if t.effect == "read"]
        else:
            selected = []
            for name in names:
                tool = self.get(name)
                if tool.effect != "read":
                    raise ToolError(
                        f"tool {tool.name!r} has effect {tool.effect!r}; only read tools can be formula functions",
                        code="E506",
                        hint="formulas are pure: call side-effecting tools through the registry instead",
                    )
                selected.append(tool)
        out: list[FormulaFunction] = []
        seen: dict[str, str] = {}
        for tool in selected:
            fname = re.sub(r"[^A-Za-z0-9]+", "_", tool.name).strip("_").upper()
            if fname in seen:
                raise ToolError(f"tools {seen[fname]!r} and {tool.name!r} both become formula function {fname}",
                                code="E506")
            seen[fname] = tool.name
            params = tuple(
                FormulaParam(name=field_name, type=info.annotation, required=info.is_required(),
                             default=None if info.is_required() else info.get_default(call_default_factory=True))
                for field_name, info in tool.input_model.model_fields.items()
            )
            returns = (tool.output_model.model_fields["result"].annotation if tool.wraps_output
                       else tool.output_model)
            out.append(FormulaFunction(name=fname, tool=tool.name, params=params, returns=returns,
                                       doc=tool.description, cost=tool.cost,
                                       fn=self._formula_callable(tool, params, principal)))
        return out

    def _formula_callable(self, tool: Tool, params: tuple[FormulaParam, ...],
                          principal: Principal) -> Callable[..., Any]:
        def call_from_formula(*args: Any) -> Any:
            if len(args) > len(params):
                raise ToolError(f"{tool.name} takes at most {len(params)} arguments, got {len(args)}",
                                code="E502")
            payload = {p.name: _formula_value(v, p.type) for p, v in zip(params, args)}
            result = self.call(tool.name, payload, principal=principal)
            if not result.ok:
                assert result.error is not None
                raise ToolError(result.error.message, code=result.error.code, hint=result.error.hint)
            return result.value

        call_from_formula.__name__ = tool.name.replace(".", "_")
        call_from_formula.__doc__ = tool.description
        return call_from_formula


def _formula_value(value: Any, annotation: Any) -> Any:
    """Formula values (Decimal, date...) as the JSON the tool's strict schema expects."""
    base = annotation
    args = typing.get_args(annotation)
    if args and type(None) in args:
        non_none = [a for a in args if a is not type(None)]
        base = non_none[0] if len(non_none) == 1 else annotation
    if isinstance(value, Decimal):
        if base is int and value == value.to_integral_value():
            return int(value)
        if base is float or base is int:
            return float(value)
        return str(value)
    if isinstance(value, (datetime, date, dtime)):
        return value.isoformat()
    if isinstance(value, list):
        items = cast("Sequence[Any]", value)
        return [_formula_value(v, typing.get_args(base)[0] if typing.get_args(base) else Any) for v in items]
    return value
