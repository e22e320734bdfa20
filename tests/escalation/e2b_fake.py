"""An in-process stand-in for e2b.dev: the E2B REST API and envd, as one WSGI application.

The E2B SDK's real client classes talk to it through the SDK's own transport hook
(`e2b.api.client_sync.get_pyqwest_transport`, replaced by pyqwest's `WSGITransport`); the envd
RPCs are served by the SDK's generated connectrpc WSGI applications with real protobuf
messages. Commands are executed by a callback the test provides (the real bubblewrap backend),
or follow a scripted behaviour: ``hang`` (the client timeout fires and the remote process keeps
running, E2B issue #500) or ``drop`` (the connection breaks mid-run).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from protobuf import Oneof

from e2b.envd.filesystem import filesystem_pb as fpb
from e2b.envd.filesystem.filesystem_connect import FilesystemWSGIApplication
from e2b.envd.process import process_pb as pb
from e2b.envd.process.process_connect import ProcessWSGIApplication


@dataclass
class Exec:
    exit_code: int | None = 0
    stdout: bytes = b""
    stderr: bytes = b""
    behaviour: str = "exit"  # exit | hang | drop


@dataclass
class FakeBox:
    sandbox_id: str
    metadata: dict[str, str]
    timeout: int
    envs: dict[str, str]
    internet: bool
    files: dict[str, bytes] = field(default_factory=dict)
    alive: bool = True
    running: list[int] = field(default_factory=list)


Executor = Callable[[FakeBox, str, str], Exec]


class FakeE2B:
    def __init__(self, execute: Executor) -> None:
        self.execute = execute
        self.boxes: dict[str, FakeBox] = {}
        self.log: list[tuple[str, str]] = []
        self.hosts: list[str] = []
        self._ids = itertools.count(1)
        self._local = threading.local()
        self.process_app = ProcessWSGIApplication(_Process(self))
        self.fs_app = FilesystemWSGIApplication(_Filesystem(self))

    # -- routing -----------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
        path = environ["PATH_INFO"]
        method = environ["REQUEST_METHOD"]
        self.log.append((method, path))
        self.hosts.append(host)
        if host.startswith("api."):
            return self._rest(method, path, environ, start_response)
        # envd traffic goes to sandbox.<domain> with the sandbox named in a header (older SDKs
        # used <port>-<id>.<domain>); accept both.
        sid = environ.get("HTTP_E2B_SANDBOX_ID") or host.split(".", 1)[0].split("-", 1)[-1]
        if environ.get("HTTP_X_ACCESS_TOKEN") not in (None, "envd-token"):
            return _json(start_response, 401, {"message": "bad envd token"})
        box = self.boxes.get(sid)
        if box is None or not box.alive:
            return _json(start_response, 502, {"message": "sandbox not found"})
        self._local.box = box
        if path.startswith("/process.Process/"):
            self._local.drop = False
            return self._droppable(self.process_app(environ, start_response))
        if path.startswith("/filesystem.Filesystem/"):
            return self.fs_app(environ, start_response)
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        if path == "/files" and method == "POST":
            box.files[query["path"]] = _body(environ)
            name = query["path"].rsplit("/", 1)[-1]
            return _json(start_response, 200, [{"name": name, "type": "file",
                                                "path": query["path"]}])
        if path == "/files" and method == "GET":
            data = box.files.get(query["path"])
            if data is None:
                return _json(start_response, 404, {"message": "file not found", "code": 404})
            start_response("200 OK", [("Content-Type", "application/octet-stream")])
            return [data]
        if path == "/health":
            start_response("204 No Content", [])
            return [b""]
        return _json(start_response, 404, {"message": f"no route {path}"})

    def _droppable(self, body: Any) -> Iterator[bytes]:
        """Stream the response; if the command asked for it, break the connection midway."""
        for chunk in body:
            yield chunk
            if self._local.drop:
                raise ConnectionResetError("fake network: connection reset mid-stream")

    def box(self) -> FakeBox:
        return self._local.box  # type: ignore[no-any-return]

    def _rest(self, method: str, path: str, environ: dict[str, Any],
              start_response: Callable[..., Any]) -> Any:
        parts = path.strip("/").split("/")
        if method == "POST" and path == "/v2/sandboxes":
            body = json.loads(_body(environ) or b"{}")
            sid = f"fake{next(self._ids)}"
            self.boxes[sid] = FakeBox(sid, body.get("metadata") or {}, body.get("timeout", 0),
                                      body.get("envVars") or {},
                                      body.get("allow_internet_access", True))
            return _json(start_response, 201, self._sandbox(sid))
        if method == "GET" and path == "/v2/sandboxes":
            query = parse_qs(environ.get("QUERY_STRING", ""))
            wanted = dict(pair.split("=", 1) for pair in
                          "&".join(query.get("metadata", [])).split("&") if "=" in pair)
            items = [self._detail(b) for b in self.boxes.values() if b.alive and all(
                b.metadata.get(k) == v for k, v in wanted.items())]
            return _json(start_response, 200, items)
        if parts[:1] == ["v2"] and len(parts) >= 3 and parts[1] == "sandboxes":
            parts = parts[1:]  # /v2/sandboxes/{id}/connect and friends
        if len(parts) >= 2 and parts[0] == "sandboxes":
            box = self.boxes.get(parts[1])
            if box is None or not box.alive:
                return _json(start_response, 404, {"code": 404, "message": "sandbox not found"})
            if method == "GET" and len(parts) == 2:
                return _json(start_response, 200, self._detail(box))
            if method == "DELETE" and len(parts) == 2:
                box.alive = False
                box.running.clear()
                start_response("204 No Content", [])
                return [b""]
            if method == "POST" and parts[2:] == ["connect"]:
                return _json(start_response, 200, self._sandbox(box.sandbox_id))
            if method == "POST" and parts[2:] == ["timeout"]:
                box.timeout = json.loads(_body(environ))["timeout"]
                start_response("204 No Content", [])
                return [b""]
        return _json(start_response, 404, {"code": 404, "message": f"no route {path}"})

    def _sandbox(self, sid: str) -> dict[str, Any]:
        return {"templateID": "base", "sandboxID": sid, "clientID": "fake",
                "envdVersion": "0.6.4", "envdAccessToken": "envd-token", "domain": "e2b.app"}

    def _detail(self, box: FakeBox) -> dict[str, Any]:
        return {"templateID": "base", "sandboxID": box.sandbox_id, "clientID": "fake",
                "startedAt": "2026-01-01T00:00:00Z", "endAt": "2026-01-01T01:00:00Z",
                "cpuCount": 2, "memoryMB": 512, "diskSizeMB": 1024, "envdVersion": "0.6.4",
                "state": "running", "metadata": box.metadata}


class _Unimplemented:
    """Every RPC the fake does not serve answers UNIMPLEMENTED, like an older envd."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def refuse(*args: Any) -> Any:
            raise ConnectError(Code.UNIMPLEMENTED, f"fake envd has no {name}")

        return refuse


class _Process(_Unimplemented):
    def __init__(self, fake: FakeE2B) -> None:
        self.fake = fake
        self._pids = itertools.count(100)

    def start(self, request: pb.StartRequest, ctx: Any) -> Iterator[pb.StartResponse]:
        box = self.fake.box()
        config = request.process
        command = config.args[-1] if config.args else config.cmd
        result = self.fake.execute(box, command, config.cwd or "/")
        pid = next(self._pids)
        yield _event(pb.ProcessEvent(event=Oneof("start", pb.ProcessEvent.StartEvent(pid=pid))))
        if result.behaviour == "hang":
            box.running.append(pid)
            timeout_ms = ctx.timeout_ms() if callable(ctx.timeout_ms) else ctx.timeout_ms
            time.sleep(min(timeout_ms / 1000 if timeout_ms else 1.0, 5.0))
            raise ConnectError(Code.DEADLINE_EXCEEDED, "deadline exceeded")
        if result.behaviour == "drop":
            box.running.append(pid)
            self.fake._local.drop = True  # the transport breaks right after this event
            time.sleep(0.05)
        for stream, data in (("stdout", result.stdout), ("stderr", result.stderr)):
            if data:
                yield _event(pb.ProcessEvent(event=Oneof("data", pb.ProcessEvent.DataEvent(
                    output=Oneof(stream, data)))))
        yield _event(pb.ProcessEvent(event=Oneof("end", pb.ProcessEvent.EndEvent(
            exit_code=result.exit_code or 0, exited=True,
            status=f"exit status {result.exit_code}"))))

    def list(self, request: pb.ListRequest, ctx: Any) -> pb.ListResponse:
        box = self.fake.box()
        return pb.ListResponse(processes=[pb.ProcessInfo(pid=p) for p in box.running])


class _Filesystem(_Unimplemented):
    def __init__(self, fake: FakeE2B) -> None:
        self.fake = fake

    def list_dir(self, request: fpb.ListDirRequest, ctx: Any) -> fpb.ListDirResponse:
        box = self.fake.box()
        prefix = request.path.rstrip("/") + "/"
        entries = [fpb.EntryInfo(name=p.rsplit("/", 1)[-1], type=fpb.FileType.FILE, path=p,
                                 size=len(data))
                   for p, data in sorted(box.files.items()) if p.startswith(prefix)]
        return fpb.ListDirResponse(entries=entries)


def _event(event: pb.ProcessEvent) -> pb.StartResponse:
    return pb.StartResponse(event=event)


def _body(environ: dict[str, Any]) -> bytes:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    stream = environ["wsgi.input"]
    return stream.read(length) if length else stream.read()


def _json(start_response: Callable[..., Any], status: int, body: Any) -> list[bytes]:
    reason = {200: "OK", 201: "Created", 404: "Not Found", 502: "Bad Gateway"}.get(status, "X")
    start_response(f"{status} {reason}", [("Content-Type", "application/json")])
    return [json.dumps(body).encode()]
