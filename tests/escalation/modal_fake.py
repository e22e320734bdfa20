"""An in-process stand-in for modal.com: the control plane and the task command router, as gRPC.

The Modal SDK's real `Client`, `App`, `Image`, `Sandbox`, `ContainerProcess` and sandbox
filesystem classes talk to it over real gRPC (grpclib on 127.0.0.1, plain HTTP/2, which the SDK
accepts for a localhost server only) with the SDK's own protobuf messages: nothing is patched
inside the SDK. Two servicers:

* the control plane (`modal_proto.api_grpc.ModalClientBase`): apps, images, sandbox create /
  wait / terminate / list / tags, task ids, command-router access. RPCs it does not serve answer
  UNIMPLEMENTED (the SDK's own `patch_mock_servicer`), so an adapter that starts using a new
  one fails here first;
* the task command router (`TaskCommandRouterBase`): exec start / stdio read / stdin stream /
  poll / wait. Exec of the SDK's filesystem helper (``modal-sandbox-fs-tools`` with its JSON
  command) is answered from the fake sandbox's file table; any other command is handed to the
  test's executor, which runs it for real in the local bubblewrap sandbox.

Scripted behaviours are chosen by the test's executor (markers in the job's code): a command
that never ends on its own (only a terminate stops it), a sandbox whose terminate is
acknowledged but which keeps running (as in a provider outage), symlinks in the file table.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import grpclib.server
from grpclib import GRPCError, Status

from modal._utils.grpc_testing import patch_mock_servicer
from modal._utils.grpc_utils import custom_detail_codec
from modal.sandbox._filesystem import _SANDBOX_FS_TOOLS_PATH
from modal_proto import api_grpc, api_pb2, task_command_router_grpc
from modal_proto import task_command_router_pb2 as sr

GENERIC = api_pb2.GenericResult


@dataclass
class ExecResult:
    exit_code: int
    stdout: bytes = b""
    stderr: bytes = b""


@dataclass
class FakeModalBox:
    sandbox_id: str
    task_id: str
    app_id: str
    tags: dict[str, str]
    definition: Any
    files: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=lambda: {"/"})
    symlinks: dict[str, str] = field(default_factory=dict)  # path -> target
    alive: bool = True
    unkillable: bool = False
    terminated: asyncio.Event | None = None


#: The test's executor: (box, argv, workdir) -> result, or None for "never ends by itself".
Executor = Callable[[FakeModalBox, list[str], str], "ExecResult | None"]


@dataclass
class _Exec:
    box: FakeModalBox
    argv: list[str]
    workdir: str
    stdin: bytearray = field(default_factory=bytearray)
    stdin_closed: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    result: ExecResult | None = None


class FakeModal:
    """Both servers on one private event loop in a background thread; `close` stops them."""

    def __init__(self, execute: Executor) -> None:
        self.execute = execute
        self.boxes: dict[str, FakeModalBox] = {}
        self.apps: dict[str, str] = {}
        self.calls: list[str] = []  # control-plane and router RPC names, in order
        self.exec_argv: list[list[str]] = []  # every command the router was asked to run
        self._ids = itertools.count(1)
        self._execs: dict[tuple[str, str], _Exec] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fake-modal-exec")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-modal-loop",
                                        daemon=True)
        self._servers: list[grpclib.server.Server] = []
        self._thread.start()
        self.port, self.router_port = asyncio.run_coroutine_threadsafe(
            self._start(), self._loop).result(30)
        self.url = f"http://127.0.0.1:{self.port}"
        self.router_url = f"http://127.0.0.1:{self.router_port}"

    async def _start(self) -> tuple[int, int]:
        ports = []
        # patch_mock_servicer filled in every RPC not served here (UNIMPLEMENTED).
        servicers = (_ControlPlane(self), _Router(self))  # type: ignore[abstract]
        for servicer in servicers:
            server = grpclib.server.Server([servicer], status_details_codec=custom_detail_codec)
            await server.start(host="127.0.0.1", port=0)
            self._servers.append(server)
            ports.append(server._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        return ports[0], ports[1]

    def close(self) -> None:
        async def stop() -> None:
            for box in self.boxes.values():  # ends scripted hangs, as a real teardown would
                if box.terminated is not None:
                    box.terminated.set()
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=30)
            for server in self._servers:
                server.close()
                await server.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()
        self._pool.shutdown(wait=True)

    def alive(self) -> list[FakeModalBox]:
        return [b for b in self.boxes.values() if b.alive]

    # -- helpers used by both servicers -----------------------------------------------------

    def box_by_task(self, task_id: str) -> FakeModalBox:
        for box in self.boxes.values():
            if box.task_id == task_id:
                if not box.alive:
                    raise GRPCError(Status.NOT_FOUND, f"task {task_id} has finished")
                return box
        raise GRPCError(Status.NOT_FOUND, f"no task {task_id}")

    async def run_exec(self, ex: _Exec) -> None:
        if ex.argv[:1] == [_SANDBOX_FS_TOOLS_PATH]:
            ex.result = await self._fs_tool(ex)
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self._pool, self.execute, ex.box, ex.argv,
                                                ex.workdir)
            if result is None:  # scripted hang: ends only when the sandbox is terminated
                assert ex.box.terminated is not None
                await ex.box.terminated.wait()
                result = ExecResult(137, b"", b"")
            ex.result = result
        ex.done.set()

    async def _fs_tool(self, ex: _Exec) -> ExecResult:
        box = ex.box
        command = json.loads(ex.argv[1])
        (op, args), = command.items()
        path = args["path"].rstrip("/") or "/"
        if op == "WriteFile":
            await ex.stdin_closed.wait()
            box.files[path] = bytes(ex.stdin)
            _add_parents(box, path)
            return ExecResult(0)
        if op == "MakeDirectory":
            box.dirs.add(path)
            _add_parents(box, path)
            return ExecResult(0)
        if op == "ReadFile":
            if path not in box.files:
                return _fs_error("NotFound", "No such file or directory")
            return ExecResult(0, box.files[path])
        if op == "ListFiles":
            if path not in box.dirs:
                return _fs_error("NotFound", "No such file or directory")
            entries = []
            prefix = path.rstrip("/") + "/"
            known = list(box.files) + list(box.dirs) + list(box.symlinks)
            children = {p[len(prefix):].split("/", 1)[0] for p in known
                        if p.startswith(prefix) and p != path}
            for name in sorted(children):
                full = prefix + name
                kind = ("symlink" if full in box.symlinks else
                        "directory" if full in box.dirs else "file")
                entries.append({
                    "name": name, "path": full, "type": kind,
                    "size": len(box.files[full]) if kind == "file" else 0,
                    "mode": 0o644 if kind == "file" else 0o755,
                    "permissions": "rw-r--r--" if kind == "file" else "rwxr-xr-x",
                    "owner": "root", "group": "root", "modified_time": 0.0,
                    "symlink_target": box.symlinks.get(full)})
            return ExecResult(0, json.dumps(entries).encode())
        return _fs_error("NotSupported", f"fake fs-tools has no {op}")


def _add_parents(box: FakeModalBox, path: str) -> None:
    parts = path.strip("/").split("/")[:-1]
    for i in range(len(parts)):
        box.dirs.add("/" + "/".join(parts[:i + 1]))


def _fs_error(kind: str, message: str) -> ExecResult:
    payload = {"error_kind": kind, "message": message, "detail": None}
    return ExecResult(1, b"", json.dumps(payload).encode())


@patch_mock_servicer
class _ControlPlane(api_grpc.ModalClientBase):
    def __init__(self, fake: FakeModal) -> None:
        self.fake = fake

    async def ClientHello(self, stream: Any) -> None:
        await stream.recv_message()
        self.fake.calls.append("ClientHello")
        await stream.send_message(api_pb2.ClientHelloResponse())

    async def AppGetOrCreate(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("AppGetOrCreate")
        if request.app_name not in self.fake.apps:
            if request.object_creation_type != api_pb2.OBJECT_CREATION_TYPE_CREATE_IF_MISSING:
                raise GRPCError(Status.NOT_FOUND, f"App '{request.app_name}' not found")
            self.fake.apps[request.app_name] = f"ap-{next(self.fake._ids)}"
        await stream.send_message(api_pb2.AppGetOrCreateResponse(
            app_id=self.fake.apps[request.app_name]))

    async def ImageGetOrCreate(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("ImageGetOrCreate")
        await stream.send_message(api_pb2.ImageGetOrCreateResponse(
            image_id="im-debian-slim",
            metadata=api_pb2.ImageMetadata(image_builder_version=request.builder_version)))

    async def ImageJoinStreaming(self, stream: Any) -> None:
        await stream.recv_message()
        self.fake.calls.append("ImageJoinStreaming")
        await stream.send_message(api_pb2.ImageJoinStreamingResponse(
            result=GENERIC(status=GENERIC.GENERIC_STATUS_SUCCESS)))

    async def EnvironmentGetOrCreate(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("EnvironmentGetOrCreate")
        name = request.deployment_name or "main"
        await stream.send_message(api_pb2.EnvironmentGetOrCreateResponse(
            environment_id="en-1", metadata=api_pb2.EnvironmentMetadata(
                name=name, settings=api_pb2.EnvironmentSettings(
                    image_builder_version=_builder_version()))))

    async def AuthTokenGet(self, stream: Any) -> None:
        await stream.recv_message()
        self.fake.calls.append("AuthTokenGet")
        await stream.send_message(api_pb2.AuthTokenGetResponse(token=_jwt()))

    def _create(self, request: Any) -> FakeModalBox:
        n = next(self.fake._ids)
        box = FakeModalBox(f"sb-fake{n}", f"ta-fake{n}", request.app_id,
                           {t.tag_name: t.tag_value for t in request.tags}, request.definition,
                           terminated=asyncio.Event())
        self.fake.boxes[box.sandbox_id] = box
        return box

    async def SandboxCreate(self, stream: Any) -> None:  # modal's V1 sandboxes
        request = await stream.recv_message()
        self.fake.calls.append("SandboxCreate")
        box = self._create(request)
        await stream.send_message(api_pb2.SandboxCreateResponse(
            sandbox_id=box.sandbox_id, metadata=api_pb2.SandboxHandleMetadata(
                app_id=request.app_id)))

    async def SandboxCreateV2(self, stream: Any) -> None:  # the default from modal 1.6
        request = await stream.recv_message()
        self.fake.calls.append("SandboxCreateV2")
        box = self._create(request)
        await stream.send_message(api_pb2.SandboxCreateV2Response(
            sandbox_id=box.sandbox_id, task_id=box.task_id,
            metadata=api_pb2.SandboxHandleMetadata(app_id=request.app_id),
            command_router_access=api_pb2.CommandRouterAccess(url=self.fake.router_url,
                                                              jwt=_jwt())))

    async def SandboxGetCommandRouterAccess(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("SandboxGetCommandRouterAccess")
        box = self._box(request.sandbox_id) if request.sandbox_id else \
            self.fake.box_by_task(request.task_id)
        if not box.alive:
            raise GRPCError(Status.NOT_FOUND, f"Sandbox {box.sandbox_id} has finished")
        await stream.send_message(api_pb2.SandboxGetCommandRouterAccessResponse(
            url=self.fake.router_url, jwt=_jwt()))

    def _box(self, sandbox_id: str) -> FakeModalBox:
        box = self.fake.boxes.get(sandbox_id)
        if box is None:
            raise GRPCError(Status.NOT_FOUND, f"Sandbox {sandbox_id} not found")
        return box

    async def SandboxGetTaskId(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("SandboxGetTaskId")
        box = self._box(request.sandbox_id)
        if not box.alive:
            await stream.send_message(api_pb2.SandboxGetTaskIdResponse(
                task_result=GENERIC(status=GENERIC.GENERIC_STATUS_TERMINATED)))
            return
        await stream.send_message(api_pb2.SandboxGetTaskIdResponse(task_id=box.task_id))

    async def TaskGetCommandRouterAccess(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("TaskGetCommandRouterAccess")
        self.fake.box_by_task(request.task_id)
        await stream.send_message(api_pb2.TaskGetCommandRouterAccessResponse(
            url=self.fake.router_url, jwt="fake-jwt"))

    async def SandboxWait(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("SandboxWait")
        box = self._box(request.sandbox_id)
        if box.alive:  # still running when the wait's timeout (0 for a poll) ran out
            result = GENERIC()
        else:
            result = GENERIC(status=GENERIC.GENERIC_STATUS_TERMINATED, exitcode=137)
        await stream.send_message(api_pb2.SandboxWaitResponse(
            result=result, metadata=api_pb2.SandboxHandleMetadata(result=result,
                                                                  app_id=box.app_id)))

    async def SandboxTerminate(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("SandboxTerminate")
        box = self._box(request.sandbox_id)
        if not box.unkillable:
            box.alive = False
            assert box.terminated is not None
            box.terminated.set()
        await stream.send_message(api_pb2.SandboxTerminateResponse())

    async def SandboxList(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("SandboxList")
        wanted = {t.tag_name: t.tag_value for t in request.tags}
        found = [api_pb2.SandboxInfo(id=b.sandbox_id, created_at=1,
                                     metadata=api_pb2.SandboxHandleMetadata(app_id=b.app_id))
                 for b in self.fake.alive()
                 if (not request.app_id or b.app_id == request.app_id)
                 and all(b.tags.get(k) == v for k, v in wanted.items())
                 and (not request.before_timestamp or request.before_timestamp > 1)]
        await stream.send_message(api_pb2.SandboxListResponse(sandboxes=found))

    async def SandboxTagsGet(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("SandboxTagsGet")
        box = self._box(request.sandbox_id)
        await stream.send_message(api_pb2.SandboxTagsGetResponse(
            tags=[api_pb2.SandboxTag(tag_name=k, tag_value=v) for k, v in box.tags.items()]))

    # The V2 RPCs carry the same messages; the SDK picks one family per sandbox id.
    SandboxGetTaskIdV2 = SandboxGetTaskId
    SandboxWaitV2 = SandboxWait
    SandboxTerminateV2 = SandboxTerminate
    SandboxListV2 = SandboxList
    SandboxTagsGetV2 = SandboxTagsGet


def _builder_version() -> str:
    from typing import get_args

    from modal._image import ImageBuilderVersion  # the SDK's own list of builder versions

    return str(max(get_args(ImageBuilderVersion)))


def _jwt(lifetime_s: int = 3600) -> str:
    """An unsigned token with an expiry: the SDK reads ``exp`` to schedule refreshes."""
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part({'exp': int(time.time()) + lifetime_s})}.sig"


@patch_mock_servicer
class _Router(task_command_router_grpc.TaskCommandRouterBase):
    def __init__(self, fake: FakeModal) -> None:
        self.fake = fake

    def _exec(self, task_id: str, exec_id: str) -> _Exec:
        ex = self.fake._execs.get((task_id, exec_id))
        if ex is None:
            raise GRPCError(Status.NOT_FOUND, f"no exec {exec_id}")
        return ex

    async def TaskExecStart(self, stream: Any) -> None:
        request = await stream.recv_message()
        self.fake.calls.append("TaskExecStart")
        box = self.fake.box_by_task(request.task_id)
        argv = list(request.command_args)
        self.fake.exec_argv.append(argv)
        if request.workdir and request.workdir.rstrip("/") not in box.dirs:
            # A container runtime cannot chdir into a directory that does not exist.
            raise GRPCError(Status.FAILED_PRECONDITION,
                            f"workdir {request.workdir} does not exist in the sandbox")
        ex = _Exec(box, argv, request.workdir or "/")
        self.fake._execs[(request.task_id, request.exec_id)] = ex
        task = asyncio.get_running_loop().create_task(self.fake.run_exec(ex))
        self.fake._tasks.add(task)
        task.add_done_callback(self.fake._tasks.discard)
        await stream.send_message(sr.TaskExecStartResponse())

    async def TaskExecStdinWriteStream(self, stream: Any) -> None:
        request = await stream.recv_message()
        start = request.start
        ex = self._exec(start.task_id, start.exec_id)
        while (request := await stream.recv_message()) is not None:
            which = request.WhichOneof("payload")
            if which == "end":
                ex.stdin_closed.set()
                break
            ex.stdin += request.data
        await stream.send_message(sr.TaskExecStdinWriteStreamResponse())

    async def TaskExecStdioRead(self, stream: Any) -> None:
        request = await stream.recv_message()
        ex = self._exec(request.task_id, request.exec_id)
        await ex.done.wait()
        assert ex.result is not None
        data = (ex.result.stdout if request.file_descriptor
                == sr.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT else ex.result.stderr)
        data = data[request.offset:]
        for i in range(0, len(data), 4096):
            await stream.send_message(sr.TaskExecStdioReadResponse(data=data[i:i + 4096]))

    async def TaskExecPoll(self, stream: Any) -> None:
        request = await stream.recv_message()
        ex = self._exec(request.task_id, request.exec_id)
        if ex.result is None:
            await stream.send_message(sr.TaskExecPollResponse())
        else:
            await stream.send_message(sr.TaskExecPollResponse(code=ex.result.exit_code))

    async def TaskExecWait(self, stream: Any) -> None:
        request = await stream.recv_message()
        ex = self._exec(request.task_id, request.exec_id)
        await ex.done.wait()
        assert ex.result is not None
        await stream.send_message(sr.TaskExecWaitResponse(code=ex.result.exit_code))
