"""The first code that runs inside every local sandbox, before any job code (stdlib only).

Contract: started as ``python -I -S -X utf8 bootstrap.py GATE_FD STATUS_FD``. It reads one
length-prefixed marshal frame (the run configuration, written by the trusted host) from the gate,
applies the resource limits (and, for the plain-process backend, no_new_privs + Landlock +
seccomp), prepares ``sys.path`` and the job's globals (``inputs`` and one global per input
name), writes ``S`` on the status pipe and closes both control fds, then executes the job.
Nothing the job does can run before the limits are in place: the bootstrap says ``R`` and
waits; the host moves this one process into the job's cgroup and only then writes the
configuration, so every process the job ever creates is born inside the group. Before ``R`` it
also pays the start-up work a job would otherwise wait for (see `_main`). To run a job it
forks: the child runs the job's code, and this process stays behind as the job's monitor
(`_monitor`): it alone keeps the status pipe, waits for the child and writes its wait status
and resource usage there as an ``X`` record. The job cannot forge that record: the child closes
its copies of the control fds before any job code runs, the monitor blocks every signal and is
made non-dumpable (so its ``/proc/PID/fd`` and ``/proc/PID/mem`` are closed to the job's uid,
and ptrace is refused by seccomp anyway). The host reads outcomes from this record, never from
what the job prints or the exit code the wrapper relays (``sys.exit(152)`` and SIGXCPU both
reach bwrap's caller as 152). When the job's
code ends, `_finish` does what a normal interpreter exit does that the job can observe
(threads joined, atexit, globals dropped so unclosed files flush, stdio flushed) and exits
with the same status Python would, skipping the rest of the interpreter teardown. In session
mode the gate and status pipes stay open and carry JSON frames: one request to execute code, one
reply.
This file is copied into the sandbox and run there; the host never imports it.
"""

from __future__ import annotations

import marshal
import os
import sys

MYPY = False
if MYPY:  # type checkers read this; the sandbox never imports typing (~10 ms of start-up)
    from typing import Any


def _read_exact(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _read_frame(fd: int) -> bytes | None:
    head = _read_exact(fd, 4)
    if head is None:
        return None
    return _read_exact(fd, int.from_bytes(head, "big"))


def _write_frame(fd: int, payload: bytes) -> None:
    data = len(payload).to_bytes(4, "big") + payload
    while data:
        data = data[os.write(fd, data):]


def _confine(conf: dict[str, Any]) -> None:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "no_new_privs")
    land = conf.get("landlock")
    if land:
        abi = land["abi"]
        fs_all = (1 << 13) - 1
        if abi >= 2:
            fs_all |= 1 << 13  # REFER
        if abi >= 3:
            fs_all |= 1 << 14  # TRUNCATE
        if abi >= 5:
            fs_all |= 1 << 15  # IOCTL_DEV
        net_all = 3 if abi >= 4 else 0
        scoped = 3 if abi >= 6 else 0
        fields = [fs_all]
        if abi >= 4:
            fields.append(net_all)
        if abi >= 6:
            fields.append(scoped)
        attr = (ctypes.c_uint64 * len(fields))(*fields)
        ruleset = libc.syscall(444, ctypes.byref(attr), ctypes.sizeof(attr), 0)
        if ruleset < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
        read_exec = 1 | 4 | 8
        file_read_exec = 1 | 4
        for path, writable in land["rules"]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            import stat as _stat
            is_dir = _stat.S_ISDIR(os.fstat(fd).st_mode)
            access = fs_all if writable else read_exec
            if not is_dir:
                access = (fs_all & (2 | 4 | 1 | (1 << 14))) if writable else file_read_exec
            rule = (ctypes.c_uint8 * 12)()
            ctypes.memmove(rule, access.to_bytes(8, "little") + fd.to_bytes(4, "little",
                                                                           signed=True), 12)
            rc = libc.syscall(445, ruleset, 1, ctypes.byref(rule), 0)
            os.close(fd)
            if rc != 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule " + path)
        if libc.syscall(446, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        os.close(ruleset)
    program = conf.get("seccomp")
    if program:
        buf = ctypes.create_string_buffer(program, len(program))

        class _Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        prog = _Prog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
        if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
            raise OSError(ctypes.get_errno(), "seccomp")


def _globals(cfg: dict[str, Any]) -> dict[str, Any]:
    main = cfg["main"]
    g = {"__name__": "__main__", "__builtins__": __builtins__, "__file__": main}
    if cfg.get("inputs"):
        values = marshal.loads(cfg["inputs"])
        g["inputs"] = values
        for name, value in values.items():
            g[name] = value
    module = type(sys)("__main__")
    module.__dict__.update(g)
    sys.modules["__main__"] = module
    return module.__dict__


def _session(cfg: dict[str, Any], gate: int, status: int, g: dict[str, Any]) -> None:
    import json
    import traceback
    _write_frame(status, b'{"ready": true}')
    count = 0
    while True:
        raw = _read_frame(gate)
        if raw is None:
            os._exit(0)
        request = json.loads(raw)
        count += 1
        if request.get("inputs"):
            g.update(request["inputs"])
            g["inputs"] = request["inputs"]
        reply = {"id": request.get("id"), "ok": True}
        try:
            # Inside the sandbox, after the limits: running job code here is the escalation
            # lane's whole purpose; the host process never compiles or runs it.
            code = compile(request["code"], "<call %d>" % count, "exec")
            exec(code, g)
        except SystemExit as exc:
            reply = {"id": request.get("id"), "ok": exc.code in (None, 0), "exit": True,
                     "type": "SystemExit", "message": str(exc.code)}
        except BaseException as exc:  # the job's exception, reported, session stays alive
            traceback.print_exc()
            reply = {"id": request.get("id"), "ok": False, "type": type(exc).__name__,
                     "module": type(exc).__module__, "message": str(exc)[:2000]}
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        _write_frame(status, json.dumps(reply).encode())
        if reply.get("exit"):
            os._exit(0)


def _main() -> None:
    gate, status = int(sys.argv[1]), int(sys.argv[2])
    # Before "R", so a pooled sandbox has done it when its job arrives (a cold one does it
    # either way, only earlier): the modules used after the frame; the compiler's one-time
    # set-up (~1.1 ms on the first compile() of the process, whatever the source); and
    # gc.freeze(), which moves the ~4,700 objects of the interpreter's start-up and this
    # bootstrap out of the collector's way, so `_finish`'s collection looks at the job's
    # objects only (0.4 ms -> 0.01 ms). Nothing frozen is job data: the frame is read after.
    import atexit  # noqa: F401  # pyright: ignore[reportUnusedImport]  (loaded now; `_finish` imports it again, then for free)
    import gc
    import resource
    import signal  # noqa: F401  # pyright: ignore[reportUnusedImport]  (the monitor's signal mask, after the frame)
    compile(b"", "<warm-up>", "exec")
    prctl = _prctl()
    gc.freeze()
    os.write(status, b"R")  # ready: the host now moves this process into the job's cgroup
    raw = _read_frame(gate)
    if raw is None:
        os._exit(70)  # the host went away before starting us
    cfg = marshal.loads(raw)
    for name, soft, hard in cfg["rlimits"]:
        resource.setrlimit(getattr(resource, name), (soft, hard))
    if cfg.get("confine"):
        _confine(cfg["confine"])
    os.chdir(cfg["workspace"])
    for path in reversed(cfg["paths"]):
        sys.path.insert(0, path)
    g = _globals(cfg)
    sys.argv = [cfg["main"]] + list(cfg["argv"])
    if cfg["mode"] == "session":
        _session(cfg, gate, status, g)
        return
    _monitor(status, gate, prctl)
    with open(cfg["main"], "rb") as f:
        source = f.read()
    result = cfg.get("result")
    split = result.get("split") if result else None
    expr = None
    if split:
        # The host found that the code ends in an expression statement (at byte split[0],
        # line split[1]): that expression is evaluated, not executed, so its value is kept.
        head, tail = source[:split[0]], source[split[0]:]
        code = compile(head, cfg["main"], "exec")  # inside the sandbox only (module doc)
        expr = compile(b"\n" * (split[1] - 1) + tail, cfg["main"], "eval")
    else:
        code = compile(source, cfg["main"], "exec")  # inside the sandbox only (module doc)
    given = g["inputs"].get("result", _NOTHING) if "inputs" in g else _NOTHING
    if result and result.get("shell"):
        _watch_shell(result["shell"])
    del cfg, raw
    value: Any = _NOTHING
    try:
        exec(code, g)
        if expr is not None:
            value = eval(expr, g)
    except SystemExit as exc:
        _finish(g, _exit_status(exc), result, value, given)
    except BaseException as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)  # the job's traceback on stderr, as Python prints it
        _finish(g, 1, result, value, given)
    _finish(g, 0, result, value, given)


def _prctl() -> Any:
    """libc's ``prctl`` through ``_ctypes`` alone (~0.7 ms; ``import ctypes`` cost 5-10 ms
    here), or None when this interpreter has no ctypes."""
    try:
        import _ctypes
    except ImportError:
        return None

    class _Int(_ctypes._SimpleCData):  # type: ignore[type-arg]  # ctypes' private base: `import ctypes` costs 5-10 ms
        _type_ = "i"

    class _Func(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL
        _restype_ = _Int

    class _Libc:
        _handle = _ctypes.dlopen(None, 0)  # type: ignore[arg-type]  # None: the program itself, as dlopen(3)

    return _Func(("prctl", _Libc()))  # type: ignore[arg-type]  # any object with a _handle, as ctypes.CDLL


def _monitor(status: int, gate: int, prctl: Any) -> None:
    """Fork; return in the child (which then runs the job), never in the parent, which
    becomes the job's monitor: wait for the child, write its ``X`` record, exit."""
    import signal
    # Blocked before the fork, so no signal from the job can reach the monitor, even in the
    # instant after it; the child restores the mask before any job code runs.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    guarded = prctl is not None and prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE 0
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise  # not started: the host reports sandbox_error with this traceback
    if pid == 0:
        os.close(status)
        os.close(gate)
        if guarded and prctl is not None:
            prctl(4, 1, 0, 0, 0)  # the job's own process stays an ordinary one
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return
    os.close(gate)
    os.write(status, b"S")
    _, wstatus, usage = os.wait4(pid, 0)
    if os.WIFSIGNALED(wstatus):
        kind, value, core = 1, os.WTERMSIG(wstatus), int(os.WCOREDUMP(wstatus))
        code = 128 + value
    else:
        kind, value, core = 0, os.WEXITSTATUS(wstatus), 0
        code = value
    cpu_us = int((usage.ru_utime + usage.ru_stime) * 1e6)
    record = (b"X" + bytes((kind, value, core, int(guarded))) + cpu_us.to_bytes(8, "big")
              + max(0, usage.ru_maxrss).to_bytes(8, "big"))
    try:
        os.write(status, record)
    except OSError:
        pass
    os._exit(code)


def _exit_status(exc: SystemExit) -> int:
    """What the interpreter would exit with for an uncaught SystemExit."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    try:
        sys.stderr.write(str(exc.code) + "\n")
    except Exception:
        pass
    return 1


_NOTHING = object()


def _watch_shell(path: str) -> None:
    """Wrap ``os.system`` so a shell-out whose command could not run (no shell in the
    sandbox, command not found or not executable: status 126/127, or no fork) is noted in
    the runner's file: a job that ignores that status must not read as ``succeeded``."""
    def note(code: int, command: Any) -> None:
        try:
            line = ("%d\t%s\n" % (code, str(command)[:200].replace("\n", " "))).encode(
                "utf-8", "replace")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
            try:
                if os.fstat(fd).st_size < 16384:
                    os.write(fd, line)
            finally:
                os.close(fd)
        except OSError:
            pass

    real = os.system  # pyright: ignore[reportDeprecated]  (wrapped, not called: the job may call it)

    def system(command: Any) -> int:
        status = real(command)
        code = os.waitstatus_to_exitcode(status) if status >= 0 else -1
        if code in (126, 127, -1):
            note(code, command)
        return status

    system.__doc__ = real.__doc__
    os.system = system
    # os.spawn*(P_WAIT, ...) return 127 when the program could not be executed; the
    # os.spawnl* forms call these through the module, so they are covered too.
    for name in ("spawnv", "spawnve", "spawnvp", "spawnvpe"):
        spawn = getattr(os, name, None)
        if spawn is not None:
            setattr(os, name, _watched_spawn(spawn, note))


def _watched_spawn(spawn: Any, note: Any) -> Any:
    def watched(mode: int, file: Any, args: Any, *rest: Any) -> int:
        status: int = spawn(mode, file, args, *rest)
        if mode == os.P_WAIT and status == 127:
            note(127, " ".join(str(a) for a in args) or file)
        return status

    watched.__doc__ = spawn.__doc__
    return watched


def _write_result(rcfg: dict[str, Any], g: dict[str, Any], value: Any, given: Any) -> None:
    """The job's declared result, as JSON, into the runner's result file (read by the host,
    bounded there too): the global ``result`` if the job assigned one (an input of that name
    it left alone does not count), else the value of its final expression unless that is
    None. A value that is not JSON or is larger than the limit is reported as an error."""
    found = g.get("result", _NOTHING)
    if found is not _NOTHING and found is not given:
        how, value = b"a", found
    elif value is not _NOTHING and value is not None:
        how = b"e"
    else:
        return
    try:
        import json
        text = json.dumps(value, allow_nan=False, separators=(",", ":")).encode()
        record = b"V" + how + text
        if len(text) > rcfg["max"]:
            record = b"E" + how + ("the result is %d bytes of JSON; the limit is %d"
                                   % (len(text), rcfg["max"])).encode()
    except (TypeError, ValueError, RecursionError, OverflowError) as exc:
        record = b"E" + how + ("the result is not JSON: %s: %s"
                               % (type(exc).__name__, exc)).encode("utf-8", "replace")[:500]
    path = rcfg["path"]
    try:
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(record)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(path + ".tmp", path)
    except OSError as exc:
        try:
            sys.stderr.write("formulane: the result could not be written: %s\n" % exc)
        except Exception:
            pass


def _finish(g: dict[str, Any], status: int, result: dict[str, Any] | None = None,
            value: Any = _NOTHING, given: Any = _NOTHING) -> None:
    """End the job the way the interpreter's shutdown would, as far as the job can observe it,
    then `os._exit`: wait for non-daemon threads, run atexit handlers, drop the job's globals
    and collect garbage (unclosed files are flushed and closed, ``__del__`` runs), flush
    stdout and stderr. The full interpreter teardown that follows a normal exit is skipped:
    it cost ~8 ms per job inside the sandbox and nothing outside the process can see it."""
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException as exc:
            sys.excepthook(type(exc), exc, exc.__traceback__)
    import atexit
    atexit._run_exitfuncs()  # pyright: ignore[reportPrivateUsage]  # what interpreter shutdown runs
    if result is not None:
        try:
            _write_result(result, g, value, given)
        except BaseException:
            pass
    try:
        g.clear()
        import gc
        gc.collect()  # the job's cycles (the start-up's objects are frozen, see `_main`)
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:
            status = status or 120  # what CPython exits with when flushing stdout fails
    os._exit(status)


_main()
