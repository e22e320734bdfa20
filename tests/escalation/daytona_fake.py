"""An in-process stand-in for the Daytona API and toolbox, served on loopback.

The Daytona SDK's real client classes (urllib3 underneath) talk to it over 127.0.0.1, so the
only thing replaced is the far end of the network. Commands run through a callback the test
provides (the real bubblewrap backend) or follow a scripted behaviour (``timeout``, ``drop``).
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import default
from typing import Any, Callable
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class DayBox:
    sandbox_id: str
    labels: dict[str, str]
    network_block_all: bool
    auto_stop: float
    env: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)
    alive: bool = True


@dataclass
class DayExec:
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    behaviour: str = "exit"  # exit | timeout | drop


class FakeDaytona:
    def __init__(self, execute: Callable[[DayBox, str, str], DayExec]) -> None:
        self.execute = execute
        self.boxes: dict[str, DayBox] = {}
        self.log: list[tuple[str, str]] = []
        self._ids = itertools.count(1)
        self.server: WSGIServer = make_server("127.0.0.1", 0, self, handler_class=_Quiet)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(target=self.server.serve_forever,
                                        name="fake-daytona", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        method = environ["REQUEST_METHOD"]
        path = environ["PATH_INFO"]
        self.log.append((method, path))
        query = {k: v for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        parts = path.strip("/").split("/")
        if parts[0] == "toolbox" and len(parts) >= 3:
            return self._toolbox(parts[1], "/" + "/".join(parts[2:]), method, query, environ,
                                 start_response)
        if parts[0] == "sandbox":
            if method == "POST" and len(parts) == 1:
                body = json.loads(_body(environ) or b"{}")
                sid = f"day{next(self._ids)}"
                box = DayBox(sid, body.get("labels") or {}, body.get("networkBlockAll", False),
                             body.get("autoStopInterval", 0), body.get("env") or {})
                self.boxes[sid] = box
                return _json(start_response, 200, self._dto(box))
            if method == "GET" and (len(parts) == 1 or parts[1] == "paginated"):
                wanted = json.loads(query.get("labels", ["{}"])[0])
                items = [self._dto(b) for b in self.boxes.values() if b.alive and all(
                    b.labels.get(k) == v for k, v in wanted.items())]
                return _json(start_response, 200, {"items": items, "nextCursor": None})
            box = self.boxes.get(parts[1]) if len(parts) > 1 else None
            if box is None or not box.alive:
                return _json(start_response, 404, {"message": "Sandbox not found",
                                                   "statusCode": 404})
            if method == "GET" and len(parts) == 2:
                return _json(start_response, 200, self._dto(box))
            if method == "DELETE" and len(parts) == 2:
                box.alive = False
                return _json(start_response, 200, self._dto(box, "destroyed"))
            if method == "GET" and parts[2:] == ["toolbox-proxy-url"]:
                return _json(start_response, 200, {"url": f"{self.url}/toolbox"})
        return _json(start_response, 404, {"message": f"no route {method} {path}",
                                           "statusCode": 404})

    def _toolbox(self, sid: str, path: str, method: str, query: dict[str, list[str]],
                 environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        box = self.boxes.get(sid)
        if box is None or not box.alive:
            return _json(start_response, 404, {"message": "Sandbox not found",
                                               "statusCode": 404})
        if path == "/process/execute" and method == "POST":
            body = json.loads(_body(environ))
            result = self.execute(box, body["command"], body.get("cwd") or "/")
            if result.behaviour == "timeout":
                return _json(start_response, 200, {"exitCode": -1, "result": ""})
            if result.behaviour == "drop":
                raise ConnectionResetError("fake network: connection reset")
            target = body["command"].rsplit("2> ", 1)[-1].strip("'")
            box.files[target] = result.stderr.encode()
            return _json(start_response, 200, {"exitCode": result.exit_code,
                                               "result": result.stdout})
        if path.startswith("/files/upload") or path == "/files/bulk-upload":
            for name, data in _multipart(environ):
                box.files[name] = data
            return _json(start_response, 200, {})
        if path == "/files/bulk-download":
            # One multipart part per requested path: name="file" with the bytes, or "error".
            boundary = "fakeboundary7d3"
            chunks = []
            for wanted in json.loads(_body(environ) or b"{}").get("paths", []):
                data = box.files.get(wanted)
                name = "file" if data is not None else "error"
                payload = data if data is not None else json.dumps(
                    {"message": "file not found", "statusCode": 404}).encode()
                kind = "application/octet-stream" if data is not None else "application/json"
                chunks.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; "
                              f"filename=\"{wanted}\"\r\nContent-Type: {kind}\r\n\r\n".encode()
                              + payload + b"\r\n")
            chunks.append(f"--{boundary}--\r\n".encode())
            start_response("200 OK", [("Content-Type",
                                       f"multipart/form-data; boundary={boundary}")])
            return [b"".join(chunks)]
        if path == "/files" and method == "GET":
            prefix = query["path"][0].rstrip("/") + "/"
            names: dict[str, tuple[bool, int]] = {}
            for full, data in box.files.items():
                if full.startswith(prefix):
                    head, _, rest = full[len(prefix):].partition("/")
                    names[head] = (bool(rest), len(data)) if head not in names else names[head]
            return _json(start_response, 200, [
                {"name": n, "isDir": d, "size": 0 if d else s, "mode": "", "modTime": "",
                 "owner": "", "group": "", "permissions": ""} for n, (d, s) in names.items()])
        return _json(start_response, 404, {"message": f"no toolbox route {path}",
                                           "statusCode": 404})

    def _dto(self, box: DayBox, state: str = "started") -> dict[str, Any]:
        return {"id": box.sandbox_id, "organizationId": "org", "name": box.sandbox_id,
                "user": "daytona", "env": box.env, "labels": box.labels, "public": False,
                "networkBlockAll": box.network_block_all, "kvm": False, "target": "eu",
                "cpu": 1, "gpu": 0, "memory": 1, "disk": 3, "state": state,
                "autoStopInterval": box.auto_stop,
                "toolboxProxyUrl": f"{self.url}/toolbox"}


def _body(environ: dict[str, Any]) -> bytes:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    return environ["wsgi.input"].read(length) if length else b""


def _multipart(environ: dict[str, Any]) -> list[tuple[str, bytes]]:
    """(path, bytes) pairs from a multipart upload (path fields and file parts, in order)."""
    body = _body(environ)
    head = f"Content-Type: {environ.get('CONTENT_TYPE', '')}\r\n\r\n".encode()
    message = BytesParser(policy=default).parsebytes(head + body)
    paths: list[str] = []
    files: list[bytes] = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition") or ""
        filename = part.get_filename()
        payload = part.get_payload(decode=True) or b""
        if filename is None:
            if name.endswith("path"):
                paths.append(payload.decode())
        else:
            files.append(payload)
            if filename.startswith("/"):
                paths.append(filename)
    return list(zip(paths, files))


def _json(start_response: Callable[..., Any], status: int, body: Any) -> list[bytes]:
    reason = {200: "OK", 404: "Not Found"}.get(status, "Status")
    start_response(f"{status} {reason}", [("Content-Type", "application/json")])
    return [json.dumps(body).encode()]
