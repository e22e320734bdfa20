"""One job in a few lines: settings, the opened machinery (`default()`), and `run`.

Contract: `EscalationSettings` reads ``FORMULANE_*`` environment variables (pydantic-settings):
``FORMULANE_DATA_DIR`` (default ``/var/lib/formulane`` for root, whose jobs run as unprivileged
uids that must reach the workspaces; else ``$XDG_DATA_HOME/formulane`` or
``~/.local/share/formulane``),
``FORMULANE_STORE_URL`` (default: SQLite ``jobs.sqlite3`` in the data directory; a
``postgresql://`` URL for several servers), ``FORMULANE_POLICY_FILE`` (a JSON `PolicyBook`:
``{"default": {...}, "tenants": {"t": {...}}, "principals": {"t/subject": {...}}}``),
``FORMULANE_WORKERS``, ``FORMULANE_UID_FIRST`` / ``FORMULANE_UID_COUNT`` (the sandbox job uids),
``FORMULANE_RESULT_TIMEOUT_S``. `default()` opens the machine's backend (`local_backend`:
bubblewrap, else the plain-process fallback), the job store and a `JobManager`, the policy
book, the drafting room and its pinned tools, and a `Router` over them; it is a context
manager (or call ``close()``). `Escalation.run(request=None, **fields)` builds an
`EscalationRequest` from the fields, routes, runs the lane and returns the `LaneResult`, with
the lane receipt stored. `run(...)` (also ``formulane.run``) does the same on a shared default
opened on first use and closed at interpreter exit.

The local/dev default principal: when no ``principal`` is given, the request runs as
``Principal(subject="local-dev", tenant="local")``, and when no policy file is configured only
that local tenant may escalate to the sandbox (with the policy's safe defaults otherwise: no
network, read-only, public and internal data). Any real tenant needs a policy file. This
default is for a developer's machine; a server passes its authenticated principal.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from pathlib import Path
from typing import Any, Mapping, cast

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..jsonshape import is_object
from ..errors import EscalationError
from .backends import SandboxBackend, local_backend
from .broker import ToolCatalog
from .contract import Principal
from .jobs import JobManager
from .lanes import LaneResult, ReviewState, Submitted
from .policy import PolicyBook, PolicyRule
from .router import Decision, EscalationRequest, Router
from .store import JobStore, open_store

LOCAL_PRINCIPAL = Principal(subject="local-dev", tenant="local")


def _default_data_dir() -> Path:
    if os.geteuid() == 0:
        # Root runs jobs as unprivileged uids, which must be able to reach the workspaces:
        # /root is 0700, so the machine-wide place is the default.
        return Path("/var/lib/formulane")
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "formulane"


def _untraversable(path: Path) -> Path | None:
    """The first existing ancestor of ``path`` that other uids cannot enter, if any."""
    for parent in [path, *path.parents]:
        try:
            mode = parent.stat().st_mode
        except FileNotFoundError:
            continue
        if not mode & 0o001:
            return parent
    return None


class EscalationSettings(BaseSettings):
    """Where the escalation lane keeps its state and how it runs (``FORMULANE_`` prefix)."""

    model_config = SettingsConfigDict(env_prefix="FORMULANE_", extra="ignore")

    data_dir: Path = Field(default_factory=_default_data_dir)
    store_url: str | None = None
    policy_file: Path | None = None
    workers: int = Field(default=2, ge=1, le=64)
    uid_first: int = Field(default=190_000, ge=1000)
    uid_count: int = Field(default=64, ge=1, le=4096)
    result_timeout_s: float | None = Field(default=None, gt=0)
    warm_pool: int = Field(default=0, ge=0, le=64)

    def policies(self) -> PolicyBook:
        if self.policy_file is None:
            return PolicyBook(tenants={LOCAL_PRINCIPAL.tenant: PolicyRule(may_escalate=True)})
        return load_policy_book(self.policy_file)


def load_policy_book(path: Path | str) -> PolicyBook:
    """A `PolicyBook` from JSON; every problem is one E603 error naming the file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not is_object(data):
            raise ValueError("the file must hold a JSON object")
        unknown = set(data) - {"default", "tenants", "principals"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}")
        principals: dict[tuple[str, str], PolicyRule] = {}
        principal_rules: dict[str, Any] = data.get("principals") or {}
        for key, rule in principal_rules.items():
            tenant, sep, subject = key.partition("/")
            if not sep or not tenant or not subject:
                raise ValueError(f"principal key {key!r} must be 'tenant/subject'")
            principals[(tenant, subject)] = PolicyRule.model_validate(rule)
        return PolicyBook(
            PolicyRule.model_validate(data.get("default") or {}),
            tenants={t: PolicyRule.model_validate(r)
                     for t, r in cast("dict[str, Any]", data.get("tenants") or {}).items()},
            principals=principals)
    except (OSError, ValueError) as exc:
        raise EscalationError(f"policy file {path}: {exc}", code="E603",
                              hint="see docs/escalation.md, 'Policy'") from None


class Escalation:
    """The opened lane machinery: backend, store, job manager, policies, drafts, router."""

    def __init__(self, settings: EscalationSettings | None = None, *,
                 catalog: ToolCatalog | None = None, policies: PolicyBook | None = None,
                 backend: SandboxBackend | None = None, store: JobStore | None = None,
                 start_workers: bool = True) -> None:
        from .drafts import DraftRoom, PinnedTools, ToolCatalogs

        self.settings = settings or EscalationSettings()
        data = self.settings.data_dir
        data.mkdir(parents=True, exist_ok=True)
        if backend is None and os.geteuid() == 0:
            blocked = _untraversable(data)
            if blocked is not None:
                raise EscalationError(
                    f"data directory {data}: sandbox jobs run as unprivileged uids and cannot "
                    f"enter {blocked} (mode {blocked.stat().st_mode & 0o777:o})",
                    code="E602", hint="set FORMULANE_DATA_DIR to a directory every ancestor of "
                                      "which is o+x (the default for root is /var/lib/formulane)")
        self._owned: list[Any] = []
        self.backend = backend or local_backend(data / "sandbox",
                                                uid_first=self.settings.uid_first,
                                                uid_count=self.settings.uid_count)
        if backend is None:
            self._owned.append(self.backend)
        self.store = store or open_store(self.settings.store_url or data / "jobs.sqlite3")
        if store is None:
            self._owned.append(self.store)
        self.policies = policies or self.settings.policies()
        if self.settings.warm_pool and hasattr(self.backend, "enable_pool"):
            cast(Any, self.backend).enable_pool(self.settings.warm_pool)
        self.jobs = JobManager(self.store, self.backend, workers=self.settings.workers,
                               start=start_workers)
        self.drafts = DraftRoom(self.store, self.jobs)
        self.pinned = PinnedTools(self.drafts)
        self.catalog = ToolCatalogs(self.pinned, catalog)
        self.router = Router(policies=self.policies, catalog=self.catalog, backend=self.backend,
                             store=self.store)
        self._closed = False

    def request(self, request: EscalationRequest | Mapping[str, Any] | None = None,
                **fields: Any) -> EscalationRequest:
        return build_request(request, **fields)

    def route(self, request: EscalationRequest | Mapping[str, Any] | None = None,
              **fields: Any) -> Decision:
        return self.router.route(build_request(request, **fields))

    def run(self, request: EscalationRequest | Mapping[str, Any] | None = None, *,
            timeout: float | None = None, review: ReviewState = "needs_review",
            **fields: Any) -> LaneResult:
        req = build_request(request, **fields)
        return self.router.execute(req, jobs=self.jobs, timeout=timeout or
                                   self.settings.result_timeout_s, review=review)

    def submit(self, request: EscalationRequest | Mapping[str, Any] | None = None, *,
               review: ReviewState = "needs_review", **fields: Any) -> Submitted:
        """Route and start: a sandbox job is queued (``.job_id``; then `finish`), any other
        lane's `LaneResult` is in ``.result`` at once."""
        return self.router.submit(build_request(request, **fields), jobs=self.jobs,
                                  review=review)

    def finish(self, job_id: str, *, timeout: float | None = None) -> LaneResult:
        """The `LaneResult` of a submitted job (`ResultTimeout` while it still runs)."""
        return self.router.finish(job_id, jobs=self.jobs, timeout=timeout)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.jobs.close()
        for thing in reversed(self._owned):
            thing.close()

    def __enter__(self) -> "Escalation":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def build_request(request: EscalationRequest | Mapping[str, Any] | None = None,
                  **fields: Any) -> EscalationRequest:
    """An `EscalationRequest` from a request, a mapping, or keyword fields (not both)."""
    if request is not None and fields:
        raise EscalationError("give a request or its fields as keywords, not both", code="E603")
    if isinstance(request, EscalationRequest):
        return request
    data = dict(request if request is not None else fields)
    data.setdefault("principal", LOCAL_PRINCIPAL)
    data.setdefault("ask", "run the proposed " + next(
        (k for k in ("tool_call", "formula", "code") if data.get(k) is not None), "code"))
    if isinstance(data.get("tool_call"), str):
        data["tool_call"] = {"name": data["tool_call"], "args": data.pop("args", {})}
    return EscalationRequest.parse(data)


def default(settings: EscalationSettings | None = None, **kwargs: Any) -> Escalation:
    """Open the machine's backend, job store and policy from settings (a context manager)."""
    return Escalation(settings, **kwargs)


_shared: Escalation | None = None
_shared_lock = threading.Lock()


def shared() -> Escalation:
    """The process-wide default `Escalation`, opened on first use, closed at exit."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared._closed:  # pyright: ignore[reportPrivateUsage]  # same module
            _shared = Escalation()
            atexit.register(_shared.close)
        return _shared


def run(request: EscalationRequest | Mapping[str, Any] | None = None, *,
        escalation: Escalation | None = None, **fields: Any) -> LaneResult:
    """Route one request to the smallest lane, run it, and return its `LaneResult`.

    ``formulane.run(code="...", inputs={...})`` runs as the local/dev principal on the shared
    default (see the module doc); pass ``principal=`` and ``escalation=`` in an application.
    """
    return (escalation or shared()).run(request, **fields)
