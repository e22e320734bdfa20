"""In-process stand-ins for three providers' code-execution HTTP APIs, on 127.0.0.1.

One `ThreadingHTTPServer` answers, in each provider's documented JSON shapes, what the hosted
adapters call through the official SDKs (nothing inside an SDK is patched):

* OpenAI: ``POST /v1/containers``, ``GET /v1/containers/{id}/files``,
  ``GET /v1/containers/{id}/files/{file}/content``, ``DELETE /v1/containers/{id}`` and
  ``POST /v1/responses`` (a ``code_interpreter_call`` item with code, logs and status);
* Anthropic: ``POST /v1/messages`` (``server_tool_use`` plus a code execution tool result with
  stdout, stderr, return code and output file ids; ``container`` with ``expires_at``) and the
  Files API (``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``, ``DELETE /v1/files/{id}``);
* Gemini: ``POST /v1beta/models/{model}:generateContent`` (``executableCode``,
  ``codeExecutionResult`` with its outcome, ``inlineData`` images, ``usageMetadata``).

The "model" behind them does what the adapters ask: it takes the program between the markers
and runs it, for real, in the local bubblewrap sandbox (whose /workspace stands for the
provider's work directory), so outputs, tracebacks, exit codes and files are real. Markers in
the job's code script misbehaviour: ``# fake: alter`` (the model changes the program),
``# fake: no-tool`` (it answers without running anything), ``# fake: slow`` (no reply before
the client's timeout).
"""

from __future__ import annotations

import base64
import itertools
import json
import mimetypes
import re
import threading
import time
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.backends.hosted import extract_program
from formulane.escalation.contract import FileSpec

from .conftest import make_job

_ids = itertools.count(1)
_WORKDIRS = ("/mnt/data", "/tmp/formulane-job")


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


@dataclass
class Container:
    id: str
    memory_limit: str
    network_policy: Any
    files: dict[str, tuple[str, bytes, str]] = field(default_factory=dict)  # path -> (id, data, source)
    deleted: bool = False


@dataclass
class Executed:
    stdout: str
    stderr: str
    exit_code: int
    files: dict[str, bytes]
    timed_out: bool = False


class HostedFakes:
    def __init__(self, sandbox: BubblewrapBackend) -> None:
        self.sandbox = sandbox
        self.containers: dict[str, Container] = {}
        self.anthropic_files: dict[str, tuple[str, bytes]] = {}
        self.anthropic_containers: list[str] = []
        self.requests: list[tuple[str, str, Any]] = []
        self.lock = threading.Lock()
        fakes = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _send(self, status: int, payload: Any, ctype: str = "application/json") -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                # One request per connection: no handler thread waits on an idle keep-alive
                # connection after the test (the suite checks for leftover threads).
                self.send_header("Connection", "close")
                self.close_connection = True
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                fakes.route(self, "GET", b"")

            def do_POST(self) -> None:  # noqa: N802
                fakes.route(self, "POST", self._body())

            def do_DELETE(self) -> None:  # noqa: N802
                fakes.route(self, "DELETE", b"")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="hosted-fakes",
                                       daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    # -- the "model": run the program for real ------------------------------------------------

    def execute(self, program: str, staged: dict[str, bytes]) -> Executed:
        code = program
        for workdir in _WORKDIRS:  # the provider's work directory is the sandbox's /workspace
            code = code.replace(f"_fo.makedirs({workdir!r}, exist_ok=True)\n_fo.chdir({workdir!r})",
                                "_fo.chdir('/workspace')")
        files = [FileSpec(path=p, content=d, mode="rw") for p, d in staged.items()]
        receipt = self.sandbox.run(make_job(code, files=files, artifact_globs=("**",)))
        out = {a.path: self.sandbox.artifacts.get(a.stored_ref or "") for a in receipt.artifacts}
        exit_code = receipt.exit_code if receipt.signal is None else 128 + receipt.signal
        return Executed(receipt.stdout.text, receipt.stderr.text, int(exit_code or 0), out,
                        timed_out=receipt.outcome.value == "timeout_wall")

    def model(self, text: str) -> tuple[str | None, str | None]:
        """(the program asked for, the code the model runs): scripted by markers."""
        program = extract_program(text)
        if program is None or "# fake: no-tool" in program:
            return program, None
        if "# fake: slow" in program:
            time.sleep(3)  # past the client's 1 s timeout; the client has gone: run nothing
            return program, None
        if "# fake: alter" in program:
            return program, program + "\nprint('the model added this')"
        return program, program

    # -- routing ------------------------------------------------------------------------------

    def route(self, h: Any, method: str, body: bytes) -> None:
        path = h.path.split("?")[0]
        with self.lock:
            self.requests.append((method, path, dict(h.headers)))
        try:
            if path.startswith("/v1/containers") or path == "/v1/responses":
                return self.openai(h, method, path, body)
            if path == "/v1/messages" or path.startswith("/v1/files"):
                return self.anthropic(h, method, path, body)
            if path.startswith("/v1beta/models/"):
                return self.gemini(h, method, path, body)
            h._send(404, {"error": {"message": f"no route {method} {path}"}})
        except (BrokenPipeError, ConnectionResetError):
            pass

    # -- OpenAI -------------------------------------------------------------------------------

    def openai(self, h: Any, method: str, path: str, body: bytes) -> None:
        parts = path.strip("/").split("/")  # v1 containers {id} files {fid} content
        if path == "/v1/containers" and method == "POST":
            req = json.loads(body)
            box = Container(_id("cntr"), req.get("memory_limit", "1g"), req.get("network_policy"))
            self.containers[box.id] = box
            return h._send(200, {"id": box.id, "object": "container", "name": req["name"],
                                 "created_at": int(time.time()), "status": "running",
                                 "expires_after": req.get("expires_after"),
                                 "memory_limit": box.memory_limit})
        if len(parts) >= 3 and parts[1] == "containers":
            box = self.containers.get(parts[2])
            if box is None or box.deleted:
                return h._send(404, {"error": {"message": "container not found"}})
            if method == "DELETE" and len(parts) == 3:
                box.deleted = True
                return h._send(200, {"id": box.id, "object": "container.deleted",
                                     "deleted": True})
            if method == "POST" and parts[3:] == ["files"]:
                msg = BytesParser(policy=HTTP).parsebytes(
                    b"Content-Type: " + h.headers["Content-Type"].encode() + b"\r\n\r\n" + body)
                part = next(p for p in msg.iter_parts() if p.get_param("name", header="content-disposition") == "file")
                name = part.get_filename()
                fid = _id("cfile")
                box.files[f"/mnt/data/{name}"] = (fid, part.get_payload(decode=True), "user")
                return h._send(200, self._cfile(box, f"/mnt/data/{name}"))
            if method == "GET" and parts[3:] == ["files"]:
                data = [self._cfile(box, p) for p in sorted(box.files)]
                return h._send(200, {"object": "list", "data": data, "has_more": False,
                                     "first_id": data[0]["id"] if data else None,
                                     "last_id": data[-1]["id"] if data else None})
            if method == "GET" and len(parts) == 6 and parts[5] == "content":
                for fid, data, _ in box.files.values():
                    if fid == parts[4]:
                        return h._send(200, data, "application/octet-stream")
                return h._send(404, {"error": {"message": "file not found"}})
        if path == "/v1/responses" and method == "POST":
            req = json.loads(body)
            tool = req["tools"][0]
            box = self.containers[tool["container"]]
            program, ran = self.model(req["input"])
            output: list[dict[str, Any]] = []
            if ran is not None:
                staged = {p[len("/mnt/data/"):]: d for p, (_, d, src) in box.files.items()}
                result = self.execute(ran, staged)
                for rel, data in result.files.items():
                    known = box.files.get(f"/mnt/data/{rel}")
                    if known is None or known[1] != data:
                        box.files[f"/mnt/data/{rel}"] = (_id("cfile"), data, "assistant")
                # The code interpreter is a notebook: stdout and the traceback come as logs.
                logs = result.stdout + result.stderr
                output.append({"type": "code_interpreter_call", "id": _id("ci"), "code": ran,
                               "container_id": box.id, "status": "completed",
                               "outputs": [{"type": "logs", "logs": logs}] if logs else []})
            output.append({"type": "message", "id": _id("msg"), "role": "assistant",
                           "status": "completed", "content": [
                               {"type": "output_text", "text": "done", "annotations": []}]})
            return h._send(200, {
                "id": _id("resp"), "object": "response", "created_at": int(time.time()),
                "status": "completed", "model": req["model"], "output": output,
                "parallel_tool_calls": True, "tool_choice": req.get("tool_choice"),
                "tools": req["tools"], "store": req.get("store", True),
                "usage": {"input_tokens": len(req["input"]) // 4, "output_tokens": 7,
                          "total_tokens": len(req["input"]) // 4 + 7,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}})
        h._send(404, {"error": {"message": f"no route {method} {path}"}})

    @staticmethod
    def _cfile(box: Container, path: str) -> dict[str, Any]:
        fid, data, source = box.files[path]
        return {"id": fid, "object": "container.file", "container_id": box.id, "path": path,
                "bytes": len(data), "created_at": int(time.time()), "source": source}

    # -- Anthropic ----------------------------------------------------------------------------

    def anthropic(self, h: Any, method: str, path: str, body: bytes) -> None:
        parts = path.strip("/").split("/")
        if path == "/v1/messages" and method == "POST":
            req = json.loads(body)
            tool = req["tools"][0]["type"]
            text = req["messages"][0]["content"]
            program, ran = self.model(text if isinstance(text, str) else text[0]["text"])
            container = req.get("container") or _id("container")
            self.anthropic_containers.append(container)
            content: list[dict[str, Any]] = []
            if ran is not None:
                use_id = _id("srvtoolu")
                result = self.execute(ran, {})
                outputs = []
                for rel, data in sorted(result.files.items()):
                    fid = _id("file")
                    self.anthropic_files[fid] = (rel, data)
                    outputs.append(fid)
                if tool == "code_execution_20250522":
                    content.append({"type": "server_tool_use", "id": use_id,
                                    "name": "code_execution", "input": {"code": ran}})
                    content.append({"type": "code_execution_tool_result", "tool_use_id": use_id,
                                    "content": {"type": "code_execution_result",
                                                "stdout": result.stdout, "stderr": result.stderr,
                                                "return_code": result.exit_code, "content": [
                                                    {"type": "code_execution_output", "file_id": f}
                                                    for f in outputs]}})
                else:
                    command = f"python3 - <<'FORMULANE_EOF'\n{ran}\nFORMULANE_EOF"
                    content.append({"type": "server_tool_use", "id": use_id,
                                    "name": "bash_code_execution", "input": {"command": command}})
                    content.append({"type": "bash_code_execution_tool_result",
                                    "tool_use_id": use_id,
                                    "content": {"type": "bash_code_execution_result",
                                                "stdout": result.stdout, "stderr": result.stderr,
                                                "return_code": result.exit_code, "content": [
                                                    {"type": "bash_code_execution_output",
                                                     "file_id": f} for f in outputs]}})
            content.append({"type": "text", "text": "done"})
            return h._send(200, {
                "id": _id("msg"), "type": "message", "role": "assistant", "model": req["model"],
                "content": content, "stop_reason": "end_turn", "stop_sequence": None,
                "container": {"id": container, "expires_at": "2026-12-31T00:00:00Z"},
                "usage": {"input_tokens": len(str(text)) // 4, "output_tokens": 9,
                          "server_tool_use": {"web_search_requests": 0,
                                              "web_fetch_requests": 0}}})
        if len(parts) >= 3 and parts[1] == "files":
            entry = self.anthropic_files.get(parts[2])
            if entry is None:
                return h._send(404, {"type": "error", "error": {"type": "not_found_error",
                                                               "message": "no such file"}})
            name, data = entry
            if method == "DELETE":
                del self.anthropic_files[parts[2]]
                return h._send(200, {"id": parts[2], "type": "file_deleted"})
            if parts[3:] == ["content"]:
                return h._send(200, data, mimetypes.guess_type(name)[0] or "application/octet-stream")
            return h._send(200, {"id": parts[2], "type": "file", "filename": name,
                                 "mime_type": mimetypes.guess_type(name)[0] or "text/plain",
                                 "size_bytes": len(data), "created_at": "2026-01-01T00:00:00Z",
                                 "downloadable": True})
        h._send(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})

    # -- Gemini -------------------------------------------------------------------------------

    def gemini(self, h: Any, method: str, path: str, body: bytes) -> None:
        match = re.fullmatch(r"/v1beta/models/([^:]+):generateContent", path)
        if match is None or method != "POST":
            return h._send(404, {"error": {"code": 404, "message": path, "status": "NOT_FOUND"}})
        req = json.loads(body)
        text = req["contents"][0]["parts"][0]["text"]
        program, ran = self.model(text)
        parts: list[dict[str, Any]] = []
        if ran is not None:
            result = self.execute(ran, {})
            outcome = "OUTCOME_OK" if result.exit_code == 0 else "OUTCOME_FAILED"
            if result.timed_out:
                outcome = "OUTCOME_DEADLINE_EXCEEDED"
            parts.append({"executableCode": {"language": "PYTHON", "code": ran}})
            parts.append({"codeExecutionResult": {
                "outcome": outcome,
                "output": result.stdout if outcome == "OUTCOME_OK" else result.stdout + result.stderr}})
            for rel, data in sorted(result.files.items()):
                mime = mimetypes.guess_type(rel)[0] or ""
                if mime.startswith("image/"):  # only images come back from Gemini
                    parts.append({"inlineData": {"mimeType": mime,
                                                 "data": base64.b64encode(data).decode()}})
        parts.append({"text": "done"})
        h._send(200, {"candidates": [{"content": {"role": "model", "parts": parts},
                                      "finishReason": "STOP", "index": 0}],
                      "usageMetadata": {"promptTokenCount": len(text) // 4,
                                        "candidatesTokenCount": 5,
                                        "toolUsePromptTokenCount": 11,
                                        "totalTokenCount": len(text) // 4 + 16},
                      "modelVersion": match.group(1), "responseId": _id("gresp")})
