"""The runtime contract of the escalation lane: what a sandbox job may ask, what a receipt records.

Contract: every model here is a frozen pydantic model with ``extra="forbid"``; unknown fields,
unsafe paths, host-looking environment keys and impossible limits are refused at construction
with a clear message (pydantic ``ValidationError``; `SandboxJob.parse` turns it into
`EscalationError` E603). Defaults are the safe ones: no network, stdin is /dev/null, 30 s wall,
512 MiB memory, 64 processes, 1 MiB stdout and 256 KiB stderr keeping head and tail, namespace
isolation at least, read-only side effects. A `Receipt` is append-only evidence: it is hashed
(`Receipt.sha256`) over its canonical JSON, and stores chain receipts by that hash.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import threading
import uuid
from datetime import datetime
from enum import Enum
from pathlib import PurePosixPath
from typing import Any, Literal, Mapping, Sequence, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..jsonshape import is_object
from ..errors import EscalationError

MiB = 1024 * 1024
KiB = 1024

#: Inline file content above this is refused: big inputs belong in a blob store, not a job row.
MAX_INLINE_FILE_BYTES = 16 * MiB
MAX_TOTAL_FILE_BYTES = 64 * MiB
MAX_CODE_BYTES = 1 * MiB
MAX_STDIN_BYTES = 4 * MiB

_ENV_KEY = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
# Keys that change how the interpreter or the loader behaves, or that look like credentials:
# a job may never set them, whatever the policy says.
_ENV_DENIED_PREFIXES = ("LD_", "PYTHON", "BASH_", "DYLD_")
_ENV_DENIED = frozenset({"PATH", "HOME", "IFS", "ENV", "SHELL", "TMPDIR", "FORMULANE_BROKER"})
_ENV_SECRETISH = re.compile(r"(SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|CREDENTIAL)")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_bytes="base64",
                              val_json_bytes="base64")


class Isolation(str, Enum):
    """How strongly a job is separated from the host, weakest first."""

    PROCESS = "process"      # plain process: rlimits, setsid, Landlock, seccomp
    NAMESPACE = "namespace"  # user/pid/net/mount namespaces (bubblewrap)
    KERNEL = "kernel"        # a user-space kernel (gVisor)
    MICROVM = "microvm"      # a virtual machine per sandbox (Firecracker)

    @property
    def rank(self) -> int:
        return _ISOLATION_ORDER.index(self)

    def covers(self, other: "Isolation") -> bool:
        """True when this level is at least as strong as ``other``."""
        return self.rank >= other.rank


_ISOLATION_ORDER = [Isolation.PROCESS, Isolation.NAMESPACE, Isolation.KERNEL, Isolation.MICROVM]


class Outcome(str, Enum):
    """Every way a sandbox job can end; each has one detection rule (see docs/escalation.md)."""

    SUCCEEDED = "succeeded"
    USER_ERROR = "user_error"
    SYNTAX_ERROR = "syntax_error"
    MISSING_PACKAGE = "missing_package"
    ENVIRONMENT_ERROR = "environment_error"
    INPUT_REQUIRED = "input_required"
    TIMEOUT_WALL = "timeout_wall"
    TIMEOUT_CPU = "timeout_cpu"
    OOM_KILLED = "oom_killed"
    OUTPUT_LIMIT = "output_limit"
    FS_LIMIT = "fs_limit"
    PIDS_LIMIT = "pids_limit"
    NETWORK_DENIED = "network_denied"
    CANCELLED = "cancelled"
    CRASHED = "crashed"
    SANDBOX_ERROR = "sandbox_error"
    LOST = "lost"
    UNKNOWN = "unknown"

    @property
    def terminal(self) -> bool:
        """`lost` is the only non-terminal outcome: it must be reconciled."""
        return self is not Outcome.LOST

    @property
    def our_fault(self) -> bool:
        """Outcomes that must not be fed back to a model as a bug in its code."""
        return self in (Outcome.ENVIRONMENT_ERROR, Outcome.SANDBOX_ERROR, Outcome.LOST,
                        Outcome.UNKNOWN)


OutcomeBasis = Literal["observed", "inferred", "unknown"]
SideEffectClass = Literal["read_only", "proposes_change", "write_requires_approval"]
NetworkMode = Literal["none", "allowlist", "open"]
JobState = Literal["ephemeral", "session"]
EnforcedBy = Literal["rlimit", "cgroup", "tmpfs", "host", "seccomp", "netns", "landlock",
                     "provider", "not_enforced"]

_HOST = re.compile(r"^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}"
                   r"[a-z0-9])?$")


class NetworkPolicy(_Frozen):
    """Egress for the job. ``none`` is the default and the only mode every backend enforces."""

    mode: NetworkMode = "none"
    allow: tuple[str, ...] = ()
    dns: bool = False

    @field_validator("allow")
    @classmethod
    def _valid_targets(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
                continue
            except ValueError:
                pass
            if not _HOST.match(item.lower()):
                raise ValueError(f"network allow entry {item!r} is neither a CIDR nor a hostname")
        return value

    @model_validator(mode="after")
    def _allow_only_with_allowlist(self) -> "NetworkPolicy":
        if self.mode == "allowlist" and not self.allow:
            raise ValueError("network mode 'allowlist' needs at least one entry in 'allow'")
        if self.mode != "allowlist" and self.allow:
            raise ValueError(f"'allow' entries make no sense with network mode {self.mode!r}")
        return self

    @property
    def rank(self) -> int:
        return ("none", "allowlist", "open").index(self.mode)


class Limits(_Frozen):
    """Resource limits, all with safe defaults. Sizes are bytes, times seconds."""

    wall_timeout_s: float = Field(default=30.0, gt=0, le=24 * 3600)
    cpu_time_s: float = Field(default=30.0, gt=0, le=24 * 3600)
    memory_bytes: int = Field(default=512 * MiB, ge=32 * MiB, le=256 * 1024 * MiB)
    max_processes: int = Field(default=64, ge=1, le=4096)
    max_file_bytes: int = Field(default=64 * MiB, ge=1, le=64 * 1024 * MiB)
    workspace_bytes: int = Field(default=256 * MiB, ge=1 * MiB, le=256 * 1024 * MiB)
    tmp_bytes: int = Field(default=64 * MiB, ge=1 * MiB, le=64 * 1024 * MiB)
    max_open_files: int = Field(default=256, ge=16, le=65536)
    stdout_max_bytes: int = Field(default=1 * MiB, ge=1 * KiB, le=256 * MiB)
    stderr_max_bytes: int = Field(default=256 * KiB, ge=1 * KiB, le=256 * MiB)
    #: Bytes read from one stream after which the job is killed (`output_limit`). Between the
    #: kept size and this, output is streamed through and only head and tail are kept.
    stream_kill_bytes: int = Field(default=16 * MiB, ge=1 * KiB, le=4096 * MiB)
    artifact_max_bytes_total: int = Field(default=64 * MiB, ge=0, le=64 * 1024 * MiB)
    artifact_max_count: int = Field(default=256, ge=0, le=100_000)
    kill_grace_s: float = Field(default=0.5, ge=0, le=60)

    @model_validator(mode="after")
    def _coherent(self) -> "Limits":
        if self.stream_kill_bytes < max(self.stdout_max_bytes, self.stderr_max_bytes):
            raise ValueError("stream_kill_bytes must be at least the kept stdout/stderr size")
        return self

    def within(self, ceiling: "Limits") -> list[str]:
        """Names of the knobs where this asks for more than ``ceiling`` allows."""
        over: list[str] = []
        for name in type(self).model_fields:
            if name == "kill_grace_s":
                continue
            if getattr(self, name) > getattr(ceiling, name):
                over.append(name)
        return over


_REQ = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")


class PinnedRequirement(_Frozen):
    """``name==version``, optionally with the expected sha256 of the installed RECORD."""

    name: str
    version: str
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")

    @classmethod
    def parse(cls, text: str) -> "PinnedRequirement":
        match = _REQ.match(text.strip())
        if not match:
            raise EscalationError(f"package requirement {text!r} must be pinned as name==version",
                                  code="E603", hint="for example 'annotated-types==0.7.0'")
        return cls(name=match.group(1), version=match.group(2))

    @property
    def key(self) -> str:
        return re.sub(r"[-_.]+", "-", self.name).lower()

    def __str__(self) -> str:
        return f"{self.name}=={self.version}"


class RuntimeSpec(_Frozen):
    """Which interpreter and packages the job runs with: a named, content-digested environment."""

    language: Literal["python"] = "python"
    version: str | None = Field(default=None, pattern=r"^3\.\d{1,2}(\.\d{1,3})?$")
    environment: str = Field(default="default", pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    environment_digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    packages: tuple[PinnedRequirement, ...] = ()
    package_policy: Literal["preinstalled_only", "install_from_mirror"] = "preinstalled_only"


def check_relative_path(path: str, what: str = "path") -> str:
    """A workspace path: relative POSIX, no ``..``, no empty parts, no control characters."""
    if not path or len(path) > 512:
        raise ValueError(f"{what} must be 1-512 characters")
    if "\\" in path or any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        raise ValueError(f"{what} {path!r} has backslashes or control characters")
    pure = PurePosixPath(path)
    if pure.is_absolute():
        raise ValueError(f"{what} {path!r} must be relative to the workspace")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{what} {path!r} may not contain '', '.' or '..' parts")
    if parts[0] == ".formulane":
        raise ValueError(f"{what} {path!r}: '.formulane' is reserved for the runner")
    return path


class FileSpec(_Frozen):
    """An input file placed in the workspace before the job starts."""

    path: str
    content: bytes
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    mode: Literal["ro", "rw"] = "ro"

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        return check_relative_path(value, "file path")

    @field_validator("content")
    @classmethod
    def _size(cls, value: bytes) -> bytes:
        if len(value) > MAX_INLINE_FILE_BYTES:
            raise ValueError(f"inline file content is {len(value)} bytes; the cap is "
                             f"{MAX_INLINE_FILE_BYTES}")
        return value

    @model_validator(mode="after")
    def _hash_matches(self) -> "FileSpec":
        actual = hashlib.sha256(self.content).hexdigest()
        if self.sha256 is not None and self.sha256 != actual:
            raise ValueError(f"file {self.path!r}: content sha256 is {actual}, not the declared "
                             f"{self.sha256}")
        return self

    @property
    def digest(self) -> str:
        return self.sha256 or hashlib.sha256(self.content).hexdigest()


class Principal(_Frozen):
    """Who asks: the same four fields as the typed-tool lane's principal."""

    subject: str = Field(min_length=1, max_length=256)
    tenant: str = Field(min_length=1, max_length=256)
    scopes: frozenset[str] = frozenset()
    kind: Literal["user", "workload"] = "user"


JsonScalar = str | int | float | bool | None


def _check_json_value(value: Any, where: str, depth: int = 0) -> None:
    if depth > 16:
        raise ValueError(f"input {where} nests deeper than 16 levels")
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"input {where} is NaN or infinite")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(cast("Sequence[Any]", value)):
            _check_json_value(item, f"{where}[{i}]", depth + 1)
        return
    if is_object(value):
        for key, item in value.items():
            if not isinstance(cast(object, key), str):
                raise ValueError(f"input {where} has a non-text key {key!r}")
            _check_json_value(item, f"{where}.{key}", depth + 1)
        return
    raise ValueError(f"input {where} is a {type(value).__name__}; only JSON values may cross")


class SandboxJob(_Frozen):
    """One request to run code in a sandbox. Frozen; build a new one to change anything."""

    job_id: uuid.UUID = Field(default_factory=uuid.uuid4)
    idempotency_key: str = Field(min_length=1, max_length=200)
    tenant: str = Field(min_length=1, max_length=256)
    principal: str = Field(min_length=1, max_length=256)
    purpose: str = Field(min_length=1, max_length=2000)
    parent_call_id: str | None = Field(default=None, max_length=200)
    side_effect_class: SideEffectClass = "read_only"
    runtime: RuntimeSpec = RuntimeSpec()
    code: str | None = None
    entrypoint: str | None = None
    argv: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict[str, str])
    stdin: bytes | None = None
    inputs: dict[str, Any] = Field(default_factory=dict[str, Any])
    files: tuple[FileSpec, ...] = ()
    artifact_globs: tuple[str, ...] = ()
    limits: Limits = Limits()
    network: NetworkPolicy = NetworkPolicy()
    state: JobState = "ephemeral"
    session_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,128}$")
    session_ttl_s: float = Field(default=600.0, gt=0, le=24 * 3600)
    min_isolation: Isolation = Isolation.NAMESPACE
    deadline: datetime | None = None
    broker_tools: tuple[str, ...] = ()

    @field_validator("code")
    @classmethod
    def _code_size(cls, value: str | None) -> str | None:
        if value is not None and len(value.encode("utf-8", "surrogatepass")) > MAX_CODE_BYTES:
            raise ValueError(f"code is larger than {MAX_CODE_BYTES} bytes")
        if value is not None and "\x00" in value:
            raise ValueError("code contains a NUL byte")
        return value

    @field_validator("entrypoint")
    @classmethod
    def _entrypoint(cls, value: str | None) -> str | None:
        if value is not None:
            check_relative_path(value, "entrypoint")
            if not value.endswith(".py"):
                raise ValueError("entrypoint must be a .py file among the job's files")
        return value

    @field_validator("argv")
    @classmethod
    def _argv(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(value) > 256 or any("\x00" in a or len(a) > 4096 for a in value):
            raise ValueError("argv: at most 256 arguments of 4096 characters, no NUL bytes")
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        if len(value) > 64:
            raise ValueError("env: at most 64 variables")
        for key, item in value.items():
            if not _ENV_KEY.match(key):
                raise ValueError(f"env key {key!r} must match [A-Z][A-Z0-9_]*")
            if key in _ENV_DENIED or key.startswith(_ENV_DENIED_PREFIXES):
                raise ValueError(f"env key {key!r} changes the interpreter or loader and is "
                                 "never passed into a sandbox")
            if _ENV_SECRETISH.search(key):
                raise ValueError(f"env key {key!r} looks like a credential; credentials never "
                                 "enter a sandbox (use a brokered read-only tool)")
            if "\x00" in item or len(item) > 4096:
                raise ValueError(f"env value of {key!r}: at most 4096 characters, no NUL")
        return value

    @field_validator("stdin")
    @classmethod
    def _stdin(cls, value: bytes | None) -> bytes | None:
        if value is not None and len(value) > MAX_STDIN_BYTES:
            raise ValueError(f"stdin is larger than {MAX_STDIN_BYTES} bytes")
        return value

    @field_validator("inputs")
    @classmethod
    def _inputs(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(value) > 256:
            raise ValueError("inputs: at most 256 named values")
        for key, item in value.items():
            if not _IDENT.match(key):
                raise ValueError(f"input name {key!r} must be a Python identifier")
            _check_json_value(item, key)
        if len(json.dumps(value, default=str)) > MAX_TOTAL_FILE_BYTES:
            raise ValueError("inputs are too large; pass big data as files")
        return value

    @field_validator("artifact_globs")
    @classmethod
    def _globs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            check_relative_path(pattern.replace("**", "x").replace("*", "x").replace("?", "x"),
                                "artifact glob")
        return value

    @field_validator("broker_tools")
    @classmethod
    def _tools(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not re.match(r"^[A-Za-z0-9_.-]{1,64}$", name):
                raise ValueError(f"broker tool name {name!r} is not a valid tool name")
        return value

    @field_validator("deadline")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("deadline must be timezone-aware (an absolute instant)")
        return value

    @model_validator(mode="after")
    def _coherent(self) -> "SandboxJob":
        if (self.code is None) == (self.entrypoint is None):
            raise ValueError("give exactly one of 'code' or 'entrypoint'")
        paths = [f.path for f in self.files]
        if len(set(paths)) != len(paths):
            raise ValueError("two files share one path")
        if self.entrypoint is not None and self.entrypoint not in paths:
            raise ValueError(f"entrypoint {self.entrypoint!r} is not among the job's files")
        if sum(len(f.content) for f in self.files) > MAX_TOTAL_FILE_BYTES:
            raise ValueError(f"files total more than {MAX_TOTAL_FILE_BYTES} bytes")
        if self.state == "session" and self.session_id is None:
            raise ValueError("state 'session' needs a session_id")
        if self.state == "ephemeral" and self.session_id is not None:
            raise ValueError("session_id is only meaningful with state 'session'")
        for pkg in self.runtime.packages:
            if self.runtime.package_policy == "install_from_mirror" and self.network.mode == "none":
                raise ValueError(f"package {pkg} would be installed from a mirror but the "
                                 "network is 'none'")
        return self

    @classmethod
    def parse(cls, data: Mapping[str, Any] | str | bytes) -> "SandboxJob":
        """Validate untrusted data into a job; every problem becomes one E603 error."""
        return parse_untrusted(cls, data, "sandbox job", "job", count_in_hint=True)

    @property
    def source(self) -> str:
        """The Python source that will run (inline code or the entrypoint file's text)."""
        if self.code is not None:
            return self.code
        for f in self.files:
            if f.path == self.entrypoint:
                return f.content.decode("utf-8")
        raise EscalationError("entrypoint vanished", code="E603")  # unreachable: validated

    @property
    def code_sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8", "surrogatepass")).hexdigest()

    @property
    def side_effects_possible(self) -> bool:
        """Could running this have changed anything outside its private workspace?"""
        # Brokered tools are read-only by construction, so they do not count here.
        return (self.network.mode != "none" or self.state == "session"
                or self.side_effect_class != "read_only")

    def fingerprint(self) -> str:
        """Hash of what the job asks (everything but its id): same key must mean same job."""
        data = self.model_dump(mode="json", exclude={"job_id", "deadline"})
        return hashlib.sha256(canonical_json(data)).hexdigest()


class CancelToken:
    """Cancellation for one run; thread-safe, one-way."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str = "cancelled") -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)


# ---------------------------------------------------------------------------- the receipt


class BackendInfo(_Frozen):
    name: str
    version: str
    isolation: Isolation
    mechanism: str


class Enforcement(_Frozen):
    """One limit: what was asked, what was applied, and by which mechanism."""

    knob: str
    requested: float | int | str | None
    enforced: float | int | str | None
    by: EnforcedBy


class StreamRecord(_Frozen):
    head: str = ""
    tail: str = ""
    total_bytes: int = 0
    kept_bytes: int = 0
    truncated: bool = False
    sha256: str = hashlib.sha256(b"").hexdigest()
    read_to_end: bool = True

    @property
    def text(self) -> str:
        return self.head + ("\n[... truncated ...]\n" if self.truncated else "") + self.tail


class ArtifactRecord(_Frozen):
    path: str
    size: int
    sha256: str
    mime: str = "application/octet-stream"
    complete: bool | None = None
    stored_ref: str | None = None


class CleanupRecord(_Frozen):
    group_killed: bool = False
    cgroup_empty: bool | None = None
    orphans_found: int = 0
    survivors: int = 0
    sandbox_destroyed: bool = True
    workspace_removed: bool = False


class BrokerCall(_Frozen):
    """Receipt of one brokered tool call made from inside a sandbox."""

    call_id: str
    job_id: str
    tool: str
    principal: str
    tenant: str
    args_sha256: str
    result_sha256: str | None
    outcome: Literal["ok", "denied", "invalid", "failed", "expired"]
    error: str = ""
    started_at: datetime
    duration_ms: float


class InputDigest(_Frozen):
    name: str
    sha256: str
    kind: Literal["file", "value", "stdin"]


class ResultValue(_Frozen):
    """The job's declared result (the sandbox's result channel): the JSON value its code
    assigned to ``result`` or its final expression evaluated to, serialised by the bootstrap
    and bounded in size, so no caller parses stdout. The value is what the job's code said;
    the receipt's outcome says whether the run that said it succeeded."""

    declared: bool
    how: Literal["assigned", "expression", "none"] = "none"
    value: Any = None
    json_bytes: int = 0
    sha256: str | None = None
    error: str = ""  # declared but not returned: not JSON, too large, unreadable


class Receipt(_Frozen):
    """What happened, as evidence. Never edited: a reconciliation appends a new receipt."""

    receipt_version: Literal[1] = 1
    job_id: str
    idempotency_key: str
    attempt: int = Field(default=1, ge=1)
    tenant: str
    principal: str
    purpose: str
    backend: BackendInfo
    capabilities: dict[str, Any] = Field(default_factory=dict[str, Any])
    environment: str
    environment_digest: str | None = None
    code_sha256: str
    inputs: tuple[InputDigest, ...] = ()
    limits_requested: Limits
    limits_enforced: tuple[Enforcement, ...] = ()
    network: NetworkPolicy
    network_enforcement: str
    started_at: datetime | None = None
    ended_at: datetime | None = None
    wall_ms: float | None = None
    cpu_ms: float | None = None
    peak_memory_bytes: int | None = None
    exit_code: int | None = None
    signal: int | None = None
    stdout: StreamRecord = StreamRecord()
    stderr: StreamRecord = StreamRecord()
    artifacts: tuple[ArtifactRecord, ...] = ()
    cleanup: CleanupRecord = CleanupRecord()
    outcome: Outcome
    outcome_basis: OutcomeBasis
    outcome_detail: str = ""
    missing_module: str | None = None
    events: tuple[str, ...] = ()
    side_effects_possible: bool = False
    provider_ids: dict[str, str] = Field(default_factory=dict[str, str])
    broker_calls: tuple[BrokerCall, ...] = ()
    session_id: str | None = None
    result: ResultValue | None = None  # None: the job never ran (or an older backend)

    def canonical(self) -> bytes:
        return canonical_json(self.model_dump(mode="json"))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical()).hexdigest()

    @property
    def succeeded(self) -> bool:
        return self.outcome is Outcome.SUCCEEDED


def canonical_json(data: Any) -> bytes:
    """Deterministic JSON bytes for hashing (sorted keys, no spaces, UTF-8)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str).encode("utf-8")


def sha256_json(data: Any) -> str:
    return hashlib.sha256(canonical_json(data)).hexdigest()


_M = TypeVar("_M", bound=BaseModel)


def parse_untrusted(model: type[_M], data: Mapping[str, Any] | str | bytes, what: str,
                    root: str, *, count_in_hint: bool = False) -> _M:
    """``model`` validated from untrusted JSON text or a mapping; the first problem becomes
    one E603 `EscalationError` naming the field (``root`` when it is the whole object)."""
    try:
        if isinstance(data, (str, bytes)):
            return model.model_validate_json(data)
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or root
        hint = f"{exc.error_count()} problem(s) in total" if count_in_hint else ""
        raise EscalationError(f"invalid {what}: {where}: {first['msg']}", code="E603",
                              hint=hint) from None
