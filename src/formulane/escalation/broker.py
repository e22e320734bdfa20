"""The broker: sandboxed code asks the host for data through registered read-only typed tools.

Contract: `Broker.open_channel` gives one job one narrow channel: a unix socket in the job's
read-only directory, owned by the job's uid, answered by one host thread, accepting only a
per-job random token, only the tools the job declared (``broker_tools``) that the catalog marks
read-only, at most ``max_calls`` calls of bounded size, and only until the job's deadline. The
tools run on the host as the job's principal; no credential ever enters the sandbox. Every
call, refused ones included, is receipted as a `BrokerCall`, returned by `Channel.close`, which
also stops the thread and removes the socket. `ToolCatalog` is the small protocol the broker and
the router need; `StaticCatalog` is a plain implementation and `TypedToolCatalog` adapts the
typed-tool lane's `ToolRegistry`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import selectors
import socket
import struct
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, runtime_checkable

from ..jsonshape import is_object
from .contract import BrokerCall, Principal, SandboxJob, canonical_json
from .backends.base import utcnow

_READ_TIMEOUT_S = 5.0


class ToolCallFailed(Exception):
    """A catalog tool refused or failed; the message goes back to the sandbox."""


@runtime_checkable
class ToolCatalog(Protocol):
    def names(self) -> Iterable[str]: ...

    def is_read_only(self, name: str) -> bool: ...

    def call(self, name: str, args: Mapping[str, Any], *, principal: Principal) -> Any: ...


@dataclass
class _Entry:
    fn: Callable[..., Any]
    read_only: bool
    scopes: frozenset[str]


class StaticCatalog:
    """Plain functions as tools; the function receives the arguments and the principal."""

    def __init__(self) -> None:
        self._tools: dict[str, _Entry] = {}

    def register(self, name: str, fn: Callable[..., Any], *, read_only: bool = True,
                 scopes: Iterable[str] = ()) -> None:
        self._tools[name] = _Entry(fn, read_only, frozenset(scopes))

    def names(self) -> list[str]:
        return sorted(self._tools)

    def is_read_only(self, name: str) -> bool:
        return name in self._tools and self._tools[name].read_only

    def call(self, name: str, args: Mapping[str, Any], *, principal: Principal) -> Any:
        entry = self._tools.get(name)
        if entry is None:
            raise ToolCallFailed(f"unknown tool {name!r}")
        if not entry.scopes <= principal.scopes:
            raise ToolCallFailed(f"principal lacks scopes {sorted(entry.scopes - principal.scopes)}")
        return entry.fn(principal=principal, **dict(args))


class TypedToolCatalog:
    """Adapter over `formulane.typed_tools.ToolRegistry` (validation, scopes, receipts there)."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry

    def names(self) -> list[str]:
        return list(self.registry.names())

    def is_read_only(self, name: str) -> bool:
        tool = self.registry.resolve(name)
        return tool is not None and tool.effect == "read"

    def call(self, name: str, args: Mapping[str, Any], *, principal: Principal) -> Any:
        from ..typed_tools.principal import Principal as ToolPrincipal

        who = ToolPrincipal(principal.subject, principal.tenant, principal.scopes, principal.kind)
        result = self.registry.call(name, dict(args), principal=who)
        if not result.ok:
            raise ToolCallFailed(result.text())
        data = result.data
        # Plain return values travel wrapped as {"result": ...} in the typed-tool lane.
        if getattr(result, "wraps_output", False) and is_object(data):
            return data.get("result")
        return data


class Channel:
    """One job's broker channel: a socket, a token, a deadline, one serving thread."""

    def __init__(self, broker: "Broker", job: SandboxJob, principal: Principal,
                 socket_path: Path, peer_uid: int | None, expires_at: float) -> None:
        self.broker = broker
        self.job = job
        self.principal = principal
        self.socket_path = socket_path
        self.peer_uid = peer_uid
        self.expires_at = expires_at
        self.token = secrets.token_urlsafe(32)
        allowed = set(job.broker_tools) & set(broker.catalog.names())
        self.allowed = {n for n in allowed if broker.catalog.is_read_only(n)}
        self.calls: list[BrokerCall] = []
        self._stop_r, self._stop_w = os.pipe2(os.O_CLOEXEC)
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        # Bind through /proc/self/fd so a long state directory cannot exceed sun_path's 108 bytes.
        dirfd = os.open(socket_path.parent, os.O_PATH | os.O_CLOEXEC)
        try:
            self._server.bind(f"/proc/self/fd/{dirfd}/{socket_path.name}")
        finally:
            os.close(dirfd)
        if peer_uid is not None:
            os.chown(socket_path, peer_uid, peer_uid)
        os.chmod(socket_path, 0o600)
        self._server.listen(4)
        self._server.setblocking(False)
        self._thread = threading.Thread(target=self._serve, name=f"formulane-broker-{job.job_id}",
                                        daemon=True)
        self._thread.start()
        self._closed = False

    def ticket(self) -> str:
        return json.dumps({"socket": "@SOCKET@", "token": self.token,
                           "timeout": self.broker.call_timeout_s,
                           "tools": sorted(self.allowed)})

    def _serve(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._server, selectors.EVENT_READ)
        sel.register(self._stop_r, selectors.EVENT_READ)
        try:
            while True:
                ready = sel.select(0.25)
                if any(key.fileobj == self._stop_r for key, _ in ready):
                    return
                for key, _ in ready:
                    if key.fileobj is self._server:
                        try:
                            conn, _ = self._server.accept()
                        except BlockingIOError:
                            continue
                        with conn:
                            self._handle(conn)
        finally:
            sel.close()

    def _peer_ok(self, conn: socket.socket) -> bool:
        if self.peer_uid is None:
            return True
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        uid: int
        _, uid, _ = struct.unpack("3i", creds)
        return uid == self.peer_uid

    def _handle(self, conn: socket.socket) -> None:
        conn.setblocking(True)
        conn.settimeout(_READ_TIMEOUT_S)
        started = utcnow()
        t0 = time.monotonic()
        call_id = uuid.uuid4().hex
        raw = b""
        try:
            while not raw.endswith(b"\n") and len(raw) <= self.broker.max_request_bytes:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                raw += chunk
        except OSError:
            return
        tool = "?"
        args: Any = None

        def reply(outcome: str, *, result: Any = None, error: str = "") -> None:
            body: dict[str, Any] = {"ok": outcome == "ok", "outcome": outcome, "call_id": call_id}
            result_hash = None
            if outcome == "ok":
                body["result"] = result
                result_hash = hashlib.sha256(canonical_json(result)).hexdigest()
            else:
                body["error"] = error
            self.calls.append(BrokerCall(
                call_id=call_id, job_id=str(self.job.job_id), tool=tool,
                principal=self.principal.subject, tenant=self.principal.tenant,
                args_sha256=hashlib.sha256(canonical_json(args)).hexdigest(),
                result_sha256=result_hash, outcome=outcome, error=error[:500],  # type: ignore[arg-type]
                started_at=started, duration_ms=round((time.monotonic() - t0) * 1000, 3)))
            try:
                conn.sendall(json.dumps(body).encode() + b"\n")
            except OSError:
                pass

        if len(raw) > self.broker.max_request_bytes:
            return reply("invalid", error=f"request larger than {self.broker.max_request_bytes}")
        try:
            request = json.loads(raw)
            tool = str(request.get("tool", "?"))[:64]
            args = request.get("args", {})
            token = str(request.get("token", ""))
        except (ValueError, AttributeError):
            return reply("invalid", error="the request is not a JSON object line")
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            return reply("denied", error="bad token for this channel")
        if not self._peer_ok(conn):
            return reply("denied", error="the caller is not this job's sandbox")
        if time.monotonic() > self.expires_at:
            return reply("expired", error="the channel expired with the job's deadline")
        if len(self.calls) >= self.broker.max_calls:
            return reply("denied", error=f"at most {self.broker.max_calls} calls per job")
        if tool not in self.allowed:
            why = ("it is not a registered read-only tool" if tool in self.job.broker_tools
                   else "the job did not declare it in broker_tools")
            return reply("denied", error=f"tool {tool!r} is not available here: {why}")
        if not is_object(args):
            return reply("invalid", error="args must be a JSON object")
        try:
            result = self.broker.catalog.call(tool, args, principal=self.principal)
            encoded = canonical_json(result)
        except ToolCallFailed as exc:
            return reply("failed", error=str(exc))
        except Exception as exc:  # a tool's own bug must not kill the channel
            return reply("failed", error=f"{type(exc).__name__}: {exc}")
        if len(encoded) > self.broker.max_result_bytes:
            return reply("failed", error=f"result larger than {self.broker.max_result_bytes}")
        return reply("ok", result=json.loads(encoded))

    def close(self) -> tuple[BrokerCall, ...]:
        if not self._closed:
            self._closed = True
            os.write(self._stop_w, b"x")
            self._thread.join()
            self._server.close()
            for fd in (self._stop_r, self._stop_w):
                os.close(fd)
            try:
                self.socket_path.unlink()
            except OSError:
                pass
        return tuple(self.calls)


class Broker:
    def __init__(self, catalog: ToolCatalog, *, max_calls: int = 64,
                 max_request_bytes: int = 64 * 1024, max_result_bytes: int = 1024 * 1024,
                 call_timeout_s: float = 30.0) -> None:
        self.catalog = catalog
        self.max_calls = max_calls
        self.max_request_bytes = max_request_bytes
        self.max_result_bytes = max_result_bytes
        self.call_timeout_s = call_timeout_s
        self._principals: dict[str, Principal] = {}
        self._lock = threading.Lock()

    def grant(self, job: SandboxJob, principal: Principal) -> None:
        """Say which full principal (scopes included) the job's tool calls run as."""
        if principal.subject != job.principal or principal.tenant != job.tenant:
            raise ValueError("the principal must be the job's own principal and tenant")
        with self._lock:
            self._principals[str(job.job_id)] = principal

    def open_channel(self, job: SandboxJob, *, socket_path: Path, peer_uid: int | None,
                     expires_in_s: float) -> tuple[Channel, str]:
        with self._lock:
            principal = self._principals.pop(str(job.job_id), None) or Principal(
                subject=job.principal, tenant=job.tenant, kind="workload")
        channel = Channel(self, job, principal, socket_path, peer_uid,
                          time.monotonic() + expires_in_s)
        return channel, channel.ticket()
