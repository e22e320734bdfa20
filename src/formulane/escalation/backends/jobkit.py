"""``formulane_job``: the helper module job code may import inside a sandbox (stdlib only).

Contract: `call_tool(name, **args)` asks the host broker to run one registered read-only typed
tool for this job and returns its JSON result, or raises `ToolCallError` with the broker's
reason; the channel is a unix socket bound into the sandbox with a per-job token that stops
working when the job ends. `mark_complete(*paths)` writes the completion manifest the host uses
to mark artifacts ``complete=True`` even if the process later crashes. No credential of any
kind is available here. This file is copied into the sandbox as ``formulane_job.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from typing import Any

_BROKER_FILE = "/job/broker.json"
_DONE = ".formulane/done.json"


class ToolCallError(Exception):
    def __init__(self, outcome: str, message: str) -> None:
        super().__init__("%s: %s" % (outcome, message))
        self.outcome = outcome


def _broker() -> dict[str, Any]:
    try:
        with open(_BROKER_FILE) as f:
            channel: dict[str, Any] = json.load(f)
            return channel
    except OSError:
        raise ToolCallError("denied", "this job has no broker channel (no broker_tools)")


def call_tool(name: str, **args: Any) -> Any:
    info = _broker()
    request = json.dumps({"token": info["token"], "tool": name, "args": args}).encode() + b"\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(info.get("timeout", 30))
        sock.connect(info["socket"])
        sock.sendall(request)
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
    if not buf:
        raise ToolCallError("expired", "the broker closed the channel")
    reply = json.loads(buf)
    if not reply.get("ok"):
        raise ToolCallError(reply.get("outcome", "failed"), reply.get("error", ""))
    return reply["result"]


def mark_complete(*paths: str) -> None:
    manifest: dict[str, str] = {}
    for path in paths:
        h = hashlib.sha256()
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                h.update(block)
        manifest[os.path.normpath(path)] = h.hexdigest()
    os.makedirs(os.path.dirname(_DONE), exist_ok=True)
    tmp = _DONE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(manifest, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, _DONE)
