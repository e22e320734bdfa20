"""The call pipeline behind `ToolRegistry.call` and `acall`.

Contract, in order: resolve the tool (unknown -> E501 with close names); validate strictly
(E502, retryable, capped per retry key); authorize scopes and tenant-bound arguments (E503);
for `write` tools hold for approval (E504) until a matching approval is given, then claim the
idempotency key durably, run once, and commit result + receipt durably; a repeated key replays
the stored outcome, and a claim that never completed answers `unknown` without running the
tool. Every path ends in exactly one receipt. Only programmer errors raise (a non-Principal
caller, a malformed idempotency key, an async tool called synchronously inside an event loop).
"""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from dataclasses import dataclass
from time import perf_counter_ns
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ValidationError

from ..errors import ToolError
from .approvals import ApprovalRequest, refusal_for_call
from .envelope import ErrorEnvelope
from .principal import CallContext, Principal
from .receipts import Receipt, iso, new_id, sha256_ref
from .results import Status, ToolResult
from .walk import redact_dump, tenant_values
from .tool import Tool, ToolFailure
from .validation import validate_arguments

if TYPE_CHECKING:
    from .registry import ToolRegistry

log = logging.getLogger("formulane.tools")

_KEY_MAX = 255


@dataclass(slots=True)
class _Call:
    tool: Tool
    principal: Principal
    validated: BaseModel
    args_json: str
    args_hash: str
    receipt_id: str
    started: float
    t0: int
    t_validate: int
    t_auth: int
    call_id: str | None
    retry_key: str | None
    key: str | None = None
    approval_id: str | None = None


def _us(start: int, end: int) -> int:
    return (end - start) // 1000


class Invocation:
    def __init__(self, registry: "ToolRegistry") -> None:
        self.registry = registry

    # -- entry points -----------------------------------------------------------------------

    def call(self, name: str, raw: Any, *, principal: Principal, idempotency_key: str | None,
             approval: Any, call_id: str | None, retry_key: str | None) -> ToolResult:
        tool = self.registry.resolve(name) if isinstance(cast(object, name), str) else None
        if tool is not None and tool.is_async and _loop_running():
            raise ToolError(f"tool {tool.name!r} is async and an event loop is running",
                            code="E506", hint="use `await registry.acall(...)`")
        prepared = self._prepare(tool, name, raw, principal, idempotency_key, approval, call_id, retry_key)
        if isinstance(prepared, ToolResult):
            return prepared
        args, kwargs = prepared.tool.arguments(prepared.validated, lambda: self._context(prepared))
        t_exec = perf_counter_ns()
        try:
            if prepared.tool.is_async:
                value = asyncio.run(prepared.tool.fn(*args, **kwargs))
            else:
                value = prepared.tool.fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every tool failure becomes an envelope
            return self._failed(prepared, exc, t_exec)
        return self._succeeded(prepared, value, t_exec)

    async def acall(self, name: str, raw: Any, *, principal: Principal, idempotency_key: str | None,
                    approval: Any, call_id: str | None, retry_key: str | None) -> ToolResult:
        tool = self.registry.resolve(name) if isinstance(cast(object, name), str) else None
        prepared = self._prepare(tool, name, raw, principal, idempotency_key, approval, call_id, retry_key)
        if isinstance(prepared, ToolResult):
            return prepared
        args, kwargs = prepared.tool.arguments(prepared.validated, lambda: self._context(prepared))
        t_exec = perf_counter_ns()
        try:
            if prepared.tool.is_async:
                value = await prepared.tool.fn(*args, **kwargs)
            else:
                # A sync tool must not block the event loop.
                value = await asyncio.to_thread(prepared.tool.fn, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            return self._failed(prepared, exc, t_exec)
        return self._succeeded(prepared, value, t_exec)

    # -- before execution -------------------------------------------------------------------

    def _prepare(self, tool: Tool | None, name: Any, raw: Any, principal: Principal,
                 idempotency_key: str | None, approval: Any, call_id: str | None,
                 retry_key: str | None) -> _Call | ToolResult:
        t0 = perf_counter_ns()
        started = self.registry.clock()
        if not isinstance(cast(object, principal), Principal):
            raise ToolError("principal must be a formulane Principal", code="E503")
        if idempotency_key is not None and (not isinstance(cast(object, idempotency_key), str) or not idempotency_key
                                            or len(idempotency_key) > _KEY_MAX):
            raise ToolError(f"idempotency_key must be a non-empty string of at most {_KEY_MAX} characters",
                            code="E502")
        rkey = retry_key if retry_key is not None else call_id
        receipt_id = new_id("rcpt")
        if tool is None:
            shown = str(name)[:200]
            # Only tools this caller may call are named: the catalogue is not everyone's to read.
            allowed = [t.name for t in self.registry.tools() if t.scopes <= principal.scopes]
            close = [c for c in self.registry.close_names(shown) if c in allowed]
            envelope = ErrorEnvelope(
                code="E501", tool=shown, message=f"there is no tool named {shown!r}", retryable=True,
                hint=("did you mean " + " or ".join(repr(c) for c in close) + "?") if close
                else "call one of the tools you were given",
                details={"did_you_mean": close} if close else {},
            )
            receipt = Receipt(id=receipt_id, tool=shown, version="", schema_hash="", effect="",
                              principal=principal.subject, principal_kind=principal.kind,
                              tenant=principal.tenant, outcome="unknown_tool", started_at=started,
                              finished_at=self.registry.clock(), call_id=call_id,
                              timings={"total_us": _us(t0, perf_counter_ns())})
            return self._refused(receipt, envelope, shown, rkey, retry=True)

        if tool.scopes and not tool.scopes <= principal.scopes:
            # Refused before validation: a caller without the scope learns nothing of the schema.
            missing = principal.missing_scopes(tool.scopes)
            envelope = ErrorEnvelope(code="E503", tool=tool.name, retryable=False,
                                     message=f"principal {principal.subject!r} lacks the scope(s) "
                                             f"{', '.join(missing)} required by tool {tool.name!r}",
                                     hint="this call is not allowed for this user; do not retry it")
            receipt = self._receipt(tool, principal, receipt_id, started, "denied", t0, call_id=call_id)
            return self._refused(receipt, envelope, tool.name, None, retry=False)
        validated = validate_arguments(tool, raw, decode_stringified_json=self.registry.decode_stringified_json,
                                       max_bytes=self.registry.max_argument_bytes)
        t_validate = perf_counter_ns()
        if isinstance(validated, ErrorEnvelope):
            receipt = self._receipt(tool, principal, receipt_id, started, "invalid_arguments", t0,
                                    t_validate=t_validate, call_id=call_id)
            return self._refused(receipt, validated, tool.name, rkey, retry=True)

        args_json = self._args_json(tool, validated)
        args_hash = sha256_ref(args_json)
        call = _Call(tool, principal, validated, args_json, args_hash, receipt_id, started, t0, t_validate,
                     t_validate, call_id, rkey)
        if tool.shape.has_tenant:
            for path, value in tenant_values(tool.shape, validated):
                if value != principal.tenant:
                    return self._deny(call, "E503",
                                      f"argument {path!r} must name the caller's own tenant",
                                      hint="only data of the caller's tenant can be used")
        call.t_auth = perf_counter_ns()
        if tool.effect == "write":
            return self._prepare_write(call, idempotency_key, approval)
        return call

    def _args_json(self, tool: Tool, validated: BaseModel) -> str:
        if not tool.shape.has_secret:
            return validated.model_dump_json()
        dumped = redact_dump(tool.shape, validated, validated.model_dump(mode="json"))
        return json.dumps(dumped, ensure_ascii=False, separators=(",", ":"))

    def _prepare_write(self, call: _Call, key: str | None, approval: Any) -> _Call | ToolResult:
        registry, tool, principal = self.registry, call.tool, call.principal
        store = registry.store
        now = registry.clock()
        request: ApprovalRequest | None
        if approval is None or approval == "auto":
            request = store.open_approval(tool=tool.name, version=tool.version, tenant=principal.tenant,
                                          requester=principal.subject, args_hash=call.args_hash, now=now)
            if not (approval == "auto" and request is not None and request.status == "approved"):
                if request is None:
                    request = ApprovalRequest(
                        id=new_id("apr"), tool=tool.name, version=tool.version, args_hash=call.args_hash,
                        args=call.args_json, requester=principal.subject, requester_kind=principal.kind,
                        tenant=principal.tenant, status="pending", created_at=now,
                        expires_at=now + registry.approval_ttl,
                    )
                    store.add_approval(request)
                envelope = ErrorEnvelope(
                    code="E504", tool=tool.name,
                    message=(f"tool {tool.name!r} changes state and needs an approval for these exact "
                             f"arguments; request {request.id} is {request.status}"),
                    retryable=False,
                    hint="wait for a person to approve it, then call again with the approval id",
                    details={"approval_id": request.id, "args_hash": call.args_hash,
                             "status": request.status, "expires_at": iso(request.expires_at)},
                )
                receipt = self._receipt(tool, principal, call.receipt_id, call.started, "approval_required",
                                        call.t0, call=call, approval_id=request.id, idempotency_key=key)
                return self._refused(receipt, envelope, tool.name, None, retry=False, approval=request)
        else:
            approval_id = approval.id if isinstance(approval, ApprovalRequest) else str(approval)
            request = store.approval(approval_id)
            if request is None:
                return self._deny(call, "E504", f"there is no approval {approval_id!r}",
                                  approval_id=approval_id[:200])
        key = key or f"approval:{request.id}"
        refusal = refusal_for_call(request, tool=tool.name, version=tool.version, args_hash=call.args_hash,
                                   principal=principal, idempotency_key=key, now=now)
        if refusal is not None:
            return self._deny(call, "E504", refusal, approval_id=request.id, idempotency_key=key)
        reservation = store.reserve(
            tenant=principal.tenant, tool=tool.name, key=key, args_hash=call.args_hash,
            receipt_id=call.receipt_id, approval_id=request.id if request.status == "approved" else None, now=now,
        )
        if reservation.state == "new":
            call.key, call.approval_id = key, request.id
            return call
        if reservation.state == "done":
            return self._replay(call, key, request.id, reservation)
        if reservation.state == "started":
            envelope = ErrorEnvelope(
                code="E505", tool=tool.name,
                message=(f"an earlier execution with idempotency key {key!r} started and its outcome was "
                         "never recorded: it may or may not have taken effect"),
                retryable=False,
                hint="it will not run again automatically; an operator must check and reconcile it",
                details={"idempotency_key": key, "first_receipt": reservation.receipt_id},
            )
            receipt = self._receipt(tool, principal, call.receipt_id, call.started, "unknown", call.t0, call=call,
                                    approval_id=request.id, idempotency_key=key, replay_of=reservation.receipt_id)
            receipt.error_code, receipt.error_message = envelope.code, envelope.message
            store.record(receipt, durable=True)
            log.warning("write %s with key %r has an unknown outcome (receipt %s)", tool.name, key, receipt.id)
            return ToolResult(tool.name, "unknown", receipt, error=envelope)
        if reservation.state == "conflict":
            return self._deny(call, "E502",
                              f"idempotency key {key!r} was already used with different arguments",
                              approval_id=request.id, idempotency_key=key,
                              hint="use a new idempotency key for a different request")
        return self._deny(call, "E504", f"approval {request.id} was used concurrently by another call",
                          approval_id=request.id, idempotency_key=key)

    # -- after execution --------------------------------------------------------------------

    def _succeeded(self, call: _Call, value: Any, t_exec: int) -> ToolResult:
        tool = call.tool
        try:
            output = tool.wrap_output(value)
        except ValidationError as exc:
            return self._failed(call, _BadOutput(exc), t_exec)
        t_end = perf_counter_ns()
        result_json = output.model_dump_json()
        stored = result_json
        if tool.output_shape.has_secret:
            stored = json.dumps(redact_dump(tool.output_shape, output, output.model_dump(mode="json")),
                                ensure_ascii=False,
                                separators=(",", ":"))
        receipt = self._receipt(tool, call.principal, call.receipt_id, call.started, "succeeded", call.t0,
                                call=call, t_exec=t_exec, t_end=t_end)
        receipt.result_hash = sha256_ref(stored)
        if call.retry_key is not None:
            self.registry.count_retry(call.retry_key, failed=False)
        if tool.effect == "write":
            lost = self._complete_write(call, "succeeded", stored, None, receipt)
            if lost is not None:
                return lost
        else:
            self.registry.store.record(receipt)
        return ToolResult(tool.name, "ok", receipt, output=output, wraps_output=tool.wraps_output,
                          result_json=result_json)

    def _failed(self, call: _Call, exc: Exception, t_exec: int) -> ToolResult:
        tool = call.tool
        t_end = perf_counter_ns()
        if isinstance(exc, ToolFailure):
            envelope = ErrorEnvelope(code="E505", tool=tool.name, message=exc.message, retryable=exc.retryable,
                                     hint=exc.hint)
        elif isinstance(exc, _BadOutput):
            envelope = ErrorEnvelope(code="E505", tool=tool.name,
                                     message=f"tool {tool.name!r} returned a value that does not match its "
                                             "output schema", retryable=False)
        else:
            envelope = ErrorEnvelope(code="E505", tool=tool.name,
                                     message=f"tool {tool.name!r} failed ({type(exc).__name__})", retryable=False)
        if not isinstance(exc, ToolFailure):
            # The traceback without the exception's message: messages can carry argument values.
            log.error("tool %s raised %s (receipt %s)\n%s", tool.name, type(exc).__name__, call.receipt_id,
                      "".join(traceback.format_tb(exc.__traceback__)))
        if envelope.retryable:
            left, exhausted = self.registry.count_retry(call.retry_key, failed=True)
            envelope = envelope.with_attempts(left, exhausted=exhausted)
        receipt = self._receipt(tool, call.principal, call.receipt_id, call.started, "tool_error", call.t0,
                                call=call, t_exec=t_exec, t_end=t_end)
        receipt.error_code, receipt.error_message = envelope.code, envelope.message
        if tool.effect == "write":
            lost = self._complete_write(call, "tool_error", None, json.dumps(envelope.to_dict()), receipt)
            if lost is not None:
                return lost
        else:
            self.registry.store.record(receipt)
        return ToolResult(tool.name, "error", receipt, error=envelope)

    def _complete_write(self, call: _Call, outcome: str, result: str | None, error: str | None,
                        receipt: Receipt) -> ToolResult | None:
        """Commit a write's outcome; if that fails the outcome is unknown, never retried."""
        assert call.key is not None
        try:
            self.registry.store.complete(tenant=call.principal.tenant, tool=call.tool.name, key=call.key,
                                         outcome=outcome, result=result, error=error, receipt=receipt,
                                         now=self.registry.clock())
        except Exception as exc:  # noqa: BLE001 - the side effect happened; its record did not
            log.error("write %s ran but its outcome could not be recorded (%s); key %r is now unknown",
                      call.tool.name, type(exc).__name__, call.key)
            envelope = ErrorEnvelope(
                code="E505", tool=call.tool.name,
                message="the tool ran but its outcome could not be recorded: it may or may not have taken effect",
                retryable=False, hint="do not retry; an operator must check and reconcile it",
                details={"idempotency_key": call.key},
            )
            receipt.outcome = "unknown"
            receipt.error_code, receipt.error_message = envelope.code, envelope.message
            try:
                self.registry.store.record(receipt, durable=True)
            except Exception:  # noqa: BLE001 - the store is down; the log line above is the record
                log.error("could not record the unknown-outcome receipt %s", receipt.id)
            return ToolResult(call.tool.name, "unknown", receipt, error=envelope)
        return None

    def _replay(self, call: _Call, key: str, approval_id: str, reservation: Any) -> ToolResult:
        tool = call.tool
        receipt = self._receipt(tool, call.principal, call.receipt_id, call.started, "replayed", call.t0, call=call,
                                approval_id=approval_id, idempotency_key=key, replay_of=reservation.receipt_id)
        original = self.registry.store.receipt(reservation.receipt_id) if reservation.receipt_id else None
        if reservation.outcome == "succeeded" and reservation.result is not None:
            receipt.result_hash = sha256_ref(reservation.result)
            self.registry.store.record(receipt)
            try:
                output: BaseModel | None = tool.output_model.model_validate_json(reservation.result)
            except ValidationError:
                output = None  # e.g. a redacted secret no longer fits its type; the JSON is still exact
            return ToolResult(tool.name, "ok", receipt, output=output, replayed=True,
                              wraps_output=tool.wraps_output, result_json=reservation.result, original=original)
        stored = json.loads(reservation.error or "{}").get("error", {})
        envelope = ErrorEnvelope(code=stored.get("code", "E505"), tool=tool.name,
                                 message=stored.get("message", "the original execution failed"),
                                 retryable=False, hint="this is the stored outcome of the original execution",
                                 details={"idempotency_key": key, "replay_of": reservation.receipt_id})
        receipt.error_code, receipt.error_message = envelope.code, envelope.message
        self.registry.store.record(receipt)
        return ToolResult(tool.name, "error", receipt, error=envelope, replayed=True, original=original)

    # -- shared helpers ---------------------------------------------------------------------

    def _context(self, call: _Call) -> CallContext:
        return CallContext(principal=call.principal, call_id=call.call_id, idempotency_key=call.key,
                           approval_id=call.approval_id, receipt_id=call.receipt_id)

    def _receipt(self, tool: Tool, principal: Principal, receipt_id: str, started: float, outcome: str, t0: int,
                 *, call: _Call | None = None, t_validate: int | None = None, t_exec: int | None = None,
                 t_end: int | None = None, call_id: str | None = None, approval_id: str | None = None,
                 idempotency_key: str | None = None, replay_of: str | None = None) -> Receipt:
        now_ns = perf_counter_ns()
        timings: dict[str, int] = {}
        if call is not None:
            timings["validate_us"] = (call.t_validate - t0) // 1000
            if call.t_auth != call.t_validate:
                timings["authorize_us"] = (call.t_auth - call.t_validate) // 1000
        elif t_validate is not None:
            timings["validate_us"] = (t_validate - t0) // 1000
        if t_exec is not None and t_end is not None:
            timings["execute_us"] = (t_end - t_exec) // 1000
        timings["total_us"] = (now_ns - t0) // 1000
        if call is None:
            return Receipt(receipt_id, tool.name, tool.version, tool.schema_hash, tool.effect, principal.subject,
                           principal.kind, principal.tenant, outcome, started, self.registry.clock(), timings,
                           None, None, None, None, None, approval_id, idempotency_key, call_id, replay_of)
        return Receipt(
            receipt_id, tool.name, tool.version, tool.schema_hash, tool.effect, principal.subject, principal.kind,
            principal.tenant, outcome, started, self.registry.clock(), timings, call.args_hash,
            _receipt_args(call.args_json, call.args_hash),
            None, None, None,
            approval_id if approval_id is not None else call.approval_id,
            idempotency_key if idempotency_key is not None else call.key,
            call.call_id, replay_of,
        )

    def _deny(self, call: _Call, code: str, message: str, *, hint: str = "", approval_id: str | None = None,
              idempotency_key: str | None = None) -> ToolResult:
        envelope = ErrorEnvelope(code=code, tool=call.tool.name, message=message, retryable=False, hint=hint,
                                 details={"approval_id": approval_id} if approval_id else {})
        receipt = self._receipt(call.tool, call.principal, call.receipt_id, call.started, "denied", call.t0,
                                call=call, approval_id=approval_id, idempotency_key=idempotency_key)
        log.info("denied %s for %s: %s (receipt %s)", call.tool.name, call.principal.subject, message, receipt.id)
        return self._refused(receipt, envelope, call.tool.name, None, retry=False)

    def _refused(self, receipt: Receipt, envelope: ErrorEnvelope, tool_name: str, retry_key: str | None, *,
                 retry: bool, approval: ApprovalRequest | None = None) -> ToolResult:
        if retry:
            left, exhausted = self.registry.count_retry(retry_key, failed=True)
            envelope = envelope.with_attempts(left, exhausted=exhausted)
        receipt.error_code, receipt.error_message = envelope.code, envelope.message
        self.registry.store.record(receipt)
        status: Status = "approval_required" if receipt.outcome == "approval_required" else "error"
        return ToolResult(tool_name, status, receipt, error=envelope, approval=approval)


#: A receipt keeps arguments up to this many characters; longer ones are kept as their size,
#: hash and a prefix (the hash is of the whole, so a receipt still names exactly what ran).
RECEIPT_ARGS_MAX = 64 * 1024
_RECEIPT_PREVIEW = 1024


def _receipt_args(args_json: str, args_hash: str) -> str:
    if len(args_json) <= RECEIPT_ARGS_MAX:
        return args_json
    return json.dumps({"truncated": True, "characters": len(args_json), "hash": args_hash,
                       "preview": args_json[:_RECEIPT_PREVIEW]}, ensure_ascii=False, separators=(",", ":"))


class _BadOutput(Exception):
    def __init__(self, error: ValidationError) -> None:
        super().__init__(f"{error.error_count()} output validation error(s)")
        self.error = error


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
