"""Turning what was observed about a finished job into one `Outcome` with its basis.

Contract: `classify` applies the detection rules in a fixed priority order: host-side events
first (cancellation, output flood, host deadline: these are facts we caused), then a sandbox
that never started (our fault), then kernel evidence (cgroup OOM kills, SIGXCPU, other
signals), then the exit status and the job's final exception line on stderr (missing module,
broken shared library, EOF on /dev/null stdin, EFBIG/ENOSPC, EAGAIN on fork, refused sockets).
The basis says whether the outcome was observed directly or inferred from weaker evidence; a
timeout whose kill could not be confirmed becomes ``unknown``. Only what the host saw is
``observed``: its own deadline and kills, cgroup events, and the job's wait status from the
bootstrap's monitor (`ExitRecord`); a wrapper's 128+N exit code, a signal the usage does not
corroborate (SIGXCPU below the CPU limit) and everything read from the job's output are
``inferred`` at most, so a job cannot forge a limit, a timeout or a signal.
"""

from __future__ import annotations

import math
import re
import signal
from dataclasses import dataclass, field
from typing import Callable

from ..contract import Outcome, OutcomeBasis

_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|error|Refused"
                       r"|Denied))(?::\s?(.*))?$")
_NO_MODULE = re.compile(r"No module named '([^']+)'")
_SO_PROBLEM = re.compile(r"(cannot open shared object file|undefined symbol|\.so[.\d]*:|"
                         r"ELF|wrong ELF class)")
_NETWORK = re.compile(
    r"(gaierror|Name or service not known|Temporary failure in name resolution|"
    r"ConnectionRefusedError|Network is unreachable|No route to host|URLError|"
    r"Address family not supported|\[Errno 97\])")
_FORK = re.compile(r"(BlockingIOError: \[Errno 11\]|Resource temporarily unavailable|"
                   r"can't start new thread)")


@dataclass(frozen=True)
class ExitRecord:
    """The job's wait status as its monitor saw it (the bootstrap's ``X`` record): written by
    a process the job's code cannot write as, so it is observed, unlike anything the job
    prints or the exit code a wrapper relays."""

    exit_code: int | None
    signal: int | None
    core_dumped: bool
    guarded: bool  # the monitor was non-dumpable (closed to the job's uid)
    cpu_s: float
    max_rss_bytes: int

    @classmethod
    def parse(cls, status: bytes) -> "ExitRecord | None":
        """The record in a status buffer (``S``, then ``X`` and 19 bytes), or None."""
        if not status.startswith(b"SX") or len(status) < 21:
            return None
        raw = status[2:21]
        kind, value, core, guarded = raw[0], raw[1], raw[2], raw[3]
        if kind not in (0, 1):
            return None
        cpu_us = int.from_bytes(raw[4:12], "big")
        rss_kb = int.from_bytes(raw[12:20], "big")
        return cls(exit_code=value if kind == 0 else None, signal=value if kind == 1 else None,
                   core_dumped=bool(core), guarded=bool(guarded), cpu_s=cpu_us / 1e6,
                   max_rss_bytes=rss_kb * 1024)


@dataclass
class Verdict:
    outcome: Outcome
    basis: OutcomeBasis
    detail: str = ""
    exit_code: int | None = None
    signal: int | None = None
    missing_module: str | None = None
    events: list[str] = field(default_factory=list[str])


def decode_status(returncode: int | None, wrapper: bool) -> tuple[int | None, int | None]:
    """(exit code, signal). bwrap reports a child's signal death as 128+N."""
    if returncode is None:
        return None, None
    if returncode < 0:
        return None, -returncode
    if wrapper and 128 < returncode <= 128 + 64:
        return None, returncode - 128
    return returncode, None


def last_exception(stderr: str) -> tuple[str, str] | None:
    """(type, message) of the final exception in a traceback, if stderr ends in one."""
    for line in reversed(stderr.strip().splitlines()[-60:]):
        match = _EXC_LINE.match(line.strip())
        if match:
            return match.group(1), match.group(2) or ""
    return None


def _signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def classify(*, reason: str, started: bool, returncode: int | None, wrapper: bool,
             stderr: str, oom_kills: int = 0, pids_max_hits: int = 0,
             cpu_s: float | None = None, cpu_limit_s: float | None = None,
             network_mode: str = "none", provided_modules: dict[str, str] | None = None,
             kill_confirmed: bool = True, cancel_reason: str = "",
             monitored: bool = False, exit_record: ExitRecord | None = None,
             side_effects_possible: bool = False, writes: str = "",
             shell_failures: tuple[str, ...] | list[str] = ()) -> Verdict:
    """One outcome with its basis. ``monitored``: the job ran under the bootstrap's monitor,
    so its wait status is ``exit_record`` (None: the monitor never reported, and nothing the
    job's side could have written is trusted). Without a monitor a wrapper's 128+N is taken
    as signal N, but only as ``inferred``: a job exiting with that code looks the same. What
    is read from the job's stderr (the last exception line) is ``inferred`` at most.

    A job that may have written outside its workspace (``side_effects_possible``; ``writes``
    says how) and was stopped part-way (cancelled, timed out, killed at the output limit) ends
    ``unknown``: what it changed cannot be told, so it is never reported as a plain
    cancellation or timeout, nor retried. A job that exited 0 after a shell-out whose command
    could not run (``shell_failures``) is a ``user_error``, not a success."""
    verdict = _classify(reason, started, returncode, wrapper, stderr, oom_kills, pids_max_hits,
                        cpu_s, cpu_limit_s, network_mode, provided_modules, kill_confirmed,
                        cancel_reason, monitored, exit_record, shell_failures)
    if side_effects_possible and started and verdict.outcome in _STOPPED:
        what = _STOPPED[verdict.outcome]
        verdict.outcome, verdict.basis = Outcome.UNKNOWN, "unknown"
        verdict.detail = (f"{what} while it may have written ({writes or 'side effects possible'})"
                          f": what it changed is unknown; not retried, settle it after "
                          f"checking ({verdict.detail})")
    return verdict


def _classify(reason: str, started: bool, returncode: int | None, wrapper: bool, stderr: str,
              oom_kills: int, pids_max_hits: int, cpu_s: float | None,
              cpu_limit_s: float | None, network_mode: str,
              provided_modules: dict[str, str] | None, kill_confirmed: bool,
              cancel_reason: str, monitored: bool, exit_record: ExitRecord | None,
              shell_failures: tuple[str, ...] | list[str]) -> Verdict:
    record = exit_record if monitored else None
    if record is not None:
        code, sig = record.exit_code, record.signal
        status_basis: OutcomeBasis = "observed" if record.guarded else "inferred"
    else:
        code, sig = decode_status(returncode, wrapper)
        status_basis = "inferred" if (wrapper and sig is not None) or monitored else "observed"
    events: list[str] = []
    if oom_kills:
        events.append(f"oom_kill x{oom_kills}")
    if pids_max_hits:
        events.append(f"pids.max hit x{pids_max_hits}")

    def verdict(outcome: Outcome, basis: OutcomeBasis, detail: str = "",
                module: str | None = None) -> Verdict:
        return Verdict(outcome, basis, detail, code, sig, module, events)

    if reason == "cancelled":
        if not kill_confirmed:
            return verdict(Outcome.UNKNOWN, "unknown", "cancelled but the kill was not confirmed")
        return verdict(Outcome.CANCELLED, "observed", cancel_reason or "cancelled")
    if reason == "output_limit":
        return verdict(Outcome.OUTPUT_LIMIT, "observed",
                       "output passed the stream kill limit; the job was killed")
    if reason == "timeout":
        if not kill_confirmed:
            return verdict(Outcome.UNKNOWN, "unknown",
                           "the host deadline fired and the kill could not be confirmed")
        return verdict(Outcome.TIMEOUT_WALL, "observed", "the host deadline fired; killed")
    if not started:
        return verdict(Outcome.SANDBOX_ERROR, "observed",
                       "the sandbox failed before job code started: " + stderr.strip()[-500:])
    if oom_kills and (sig is not None or code not in (0, None)):
        return verdict(Outcome.OOM_KILLED, "observed", "killed by the memory cgroup")
    if monitored and record is None:
        status = f"status {returncode}" if returncode is not None else "no status"
        code = sig = None  # what the wrapper relayed is not the job's status
        return verdict(Outcome.CRASHED, "inferred",
                       "the job's monitor ended without reporting the job's exit (it was killed "
                       f"or died); the sandbox ended with {status}")
    if sig is not None:
        # The cgroup's count is exact; rusage is tick-sampled and read ~20% low under load.
        known = [x for x in (record.cpu_s if record is not None else None, cpu_s) if x is not None]
        used = max(known) if known else None
        if sig == signal.SIGXCPU:
            soft = math.ceil(cpu_limit_s) if cpu_limit_s is not None else None
            if soft is None or used is None or used >= soft * 0.75:
                return verdict(Outcome.TIMEOUT_CPU, status_basis,
                               "SIGXCPU: CPU time limit reached")
            return verdict(Outcome.CRASHED, status_basis,
                           f"terminated by SIGXCPU after {used:.3f} s of CPU, below the {soft} s "
                           "limit: the signal was sent, not the limit reached")
        if sig == signal.SIGKILL and used is not None and cpu_limit_s is not None \
                and used >= cpu_limit_s:
            return verdict(Outcome.TIMEOUT_CPU, "inferred", "SIGKILL after the CPU limit")
        if sig == signal.SIGXFSZ:
            # Python ignores SIGXFSZ (a write past the limit fails with EFBIG instead), so a
            # death by it is rarer than a sent one: the cause is inferred, the signal observed.
            return verdict(Outcome.FS_LIMIT, "inferred", "SIGXFSZ: file size limit reached")
        basis: OutcomeBasis = status_basis if sig != signal.SIGKILL else "inferred"
        return verdict(Outcome.CRASHED, basis, f"terminated by {_signame(sig)}")
    if code == 0 and shell_failures:
        return verdict(Outcome.USER_ERROR, "inferred",
                       "exit status 0, but " + "; ".join(shell_failures[:3])
                       + "; the job ignored that status")
    if code == 0:
        return verdict(Outcome.SUCCEEDED, status_basis)
    return _from_stderr(verdict, code, stderr, status_basis, pids_max_hits, network_mode,
                        provided_modules)


#: Outcomes of a job stopped part-way: for a job that may have written they become ``unknown``.
_STOPPED = {Outcome.CANCELLED: "cancelled", Outcome.TIMEOUT_WALL: "timed out (wall clock)",
            Outcome.TIMEOUT_CPU: "timed out (CPU time)",
            Outcome.OUTPUT_LIMIT: "killed at the output limit"}


def _from_stderr(verdict: Callable[..., Verdict], code: int | None, stderr: str, status_basis: OutcomeBasis,
                 pids_max_hits: int, network_mode: str,
                 provided_modules: dict[str, str] | None) -> Verdict:
    """A failed exit, refined by the job's last exception line. The job writes its own
    stderr, so every outcome read from it is ``inferred``: only the plain ``user_error`` (a
    non-zero exit) and a pids.max event (the kernel's count) are observed."""
    exc = last_exception(stderr)
    exc_type, message = exc if exc else ("", "")
    short = exc_type.rsplit(".", 1)[-1]
    line = f"{exc_type}: {message}".strip(": ") if exc else f"exit status {code}"
    if short == "MemoryError":
        return verdict(Outcome.OOM_KILLED, "inferred",
                       "MemoryError under the address-space limit (read from stderr)")
    if short == "ModuleNotFoundError":
        match = _NO_MODULE.search(message)
        module = match.group(1) if match else None
        if module and provided_modules and module.split(".")[0] in provided_modules:
            return verdict(Outcome.ENVIRONMENT_ERROR, "inferred",
                           f"module {module!r} belongs to declared package "
                           f"{provided_modules[module.split('.')[0]]} but failed to import",
                           module)
        return verdict(Outcome.MISSING_PACKAGE, "inferred",
                       f"no module named {module!r} in this environment", module)
    if short == "ImportError" and _SO_PROBLEM.search(message):
        return verdict(Outcome.ENVIRONMENT_ERROR, "inferred", line)
    if short == "EOFError":
        return verdict(Outcome.INPUT_REQUIRED, "inferred",
                       "the job read from stdin, which is /dev/null: interactive input is "
                       "not available")
    if "[Errno 27]" in message or "[Errno 28]" in message or "[Errno 122]" in message \
            or "File too large" in message or "No space left" in message:
        return verdict(Outcome.FS_LIMIT, "inferred", line)
    if pids_max_hits or _FORK.search(stderr[-4000:]):
        return verdict(Outcome.PIDS_LIMIT, "observed" if pids_max_hits else "inferred", line)
    if network_mode == "none" and (_NETWORK.search(line) or (
            short == "PermissionError" and "[Errno 1]" in message
            and re.search(r"socket|connect|urlopen|create_connection", stderr[-4000:]))):
        return verdict(Outcome.NETWORK_DENIED, "inferred",
                       f"network access is not allowed for this job ({line})")
    return verdict(Outcome.USER_ERROR, status_basis, line)
