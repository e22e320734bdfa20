"""The service's state, built once per process: database, keys, tools, jobs, metrics.

Contract: `Service(settings)` opens the database (running the Alembic migrations), the key
store, the tool registry (``--tools module:attr``, or the built-in formula tools plus the demo
registry), the job store and a `JobManager` over the local sandbox backend, and the metrics.
With ``FORMULANE_DATABASE_URL=postgresql://...`` every store lives in that one database, so
several processes share formulas, keys, approvals, idempotency and jobs; without it they are
SQLite files in the data directory. Jobs are run with ``retry_lost=False``: a job whose worker
died is settled ``unknown`` (never run twice) and a person settles it with a reason.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from pathlib import Path
from typing import Any

from ..errors import ServiceError
from ..escalation import JobManager
from .auth import KeyStore, RateLimiter
from .db import make_engine, ping, upgrade
from .metrics import Metrics
from .settings import Settings

log = logging.getLogger("formulane.api")


def load_tools(spec: str | None, store: Any) -> tuple[Any, bool]:
    """(registry, is_demo). ``spec`` is ``module:attr``: a ToolRegistry, or a callable taking
    the service's tool store and returning one (so its receipts and approvals are shared)."""
    from ..typed_tools import ToolRegistry
    from ..typed_tools import formula_tools

    if not spec:
        from . import demo_tools

        registry = ToolRegistry(store=store)
        formula_tools.register(registry)
        demo_tools.register(registry)
        return registry, True
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ServiceError(f"--tools takes module:attr, got {spec!r}", code="E706")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ServiceError(f"cannot load tools {spec!r}: {exc}", code="E706") from None
    if not isinstance(target, ToolRegistry) and callable(target):
        target = target(store)
    if not isinstance(target, ToolRegistry):
        raise ServiceError(f"{spec!r} is not a ToolRegistry", code="E706")
    return target, False


class Service:
    def __init__(self, settings: Settings, *, start_jobs: bool = True) -> None:
        self.settings = settings
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.engine = make_engine(settings.resolved_database_url())
        self.revision = upgrade(self.engine)
        self.keys = KeyStore(self.engine, ttl_s=max(settings.live_cache_s, 0.0))
        self.limiter = RateLimiter(settings.rate_per_s, settings.rate_burst)
        plain = settings.plain_database_url()
        from ..typed_tools.store import open_store as open_tool_store

        self.tool_store = open_tool_store(plain or str(settings.data_dir / "tools.db"))
        self.tools, self.demo_tools = load_tools(settings.tools, self.tool_store)
        self.metrics = Metrics(approvals_waiting=self._approvals_waiting)
        from .formula_store import FormulaStore

        self.formulas = FormulaStore(self.engine, max_cases=settings.max_cases,
                                     live_ttl_s=settings.live_cache_s)
        self.policies = self._load_policies()
        self.backend: Any = None
        self.backend_note = ""
        self.jobs: Any = None
        self.job_store: Any = None
        self._jobs_lock = threading.Lock()
        if start_jobs:
            self._start_jobs()

    # -- jobs ------------------------------------------------------------------------------

    def _start_jobs(self) -> None:
        from ..escalation import open_store as open_job_store
        from ..escalation.backends import BubblewrapBackend, ProcessBackend

        mode = self.settings.sandbox
        plain = self.settings.plain_database_url()
        self.job_store = open_job_store(plain or (self.settings.data_dir / "jobs.db"))
        if mode == "none":
            self.backend_note = "jobs disabled (--sandbox none)"
            return
        state = self.settings.data_dir / "sandbox"
        state.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0 and _blocked(state) is not None:
            # Jobs run as unprivileged uids that must reach the workspaces: a data dir under
            # /root (0700) cannot hold them, so they go where the escalation lane puts them.
            blocked = _blocked(state)
            state = Path("/var/lib/formulane/sandbox")
            state.mkdir(parents=True, exist_ok=True)
            for part in (state, state.parent):
                part.chmod(part.stat().st_mode | 0o011)
            self.backend_note = (f"sandbox workspaces in {state}: the job uids cannot enter "
                                 f"{blocked}")
        backend: Any = None
        if mode in ("auto", "bubblewrap"):
            bwrap = BubblewrapBackend(state)
            caps = bwrap.capabilities()
            if caps.available:
                backend = bwrap
            elif mode == "bubblewrap":
                raise ServiceError(f"bubblewrap is not usable here: {caps.unavailable_reason}",
                                   code="E602")
            else:
                self.backend_note = "; ".join(filter(None, (
                    self.backend_note,
                    f"bubblewrap is not usable here ({caps.unavailable_reason})")))
        if backend is None:
            backend = ProcessBackend(state)
            caps = backend.capabilities()
            self.backend_note = (
                (self.backend_note + "; " if self.backend_note else "")
                + "jobs run in the PROCESS backend: a plain child process with resource limits "
                  "only, no filesystem or network isolation; routes that need namespace "
                  "isolation are refused" + (f" ({caps.unavailable_reason})"
                                              if caps.unavailable_reason else ""))
        self.backend = backend
        self.jobs = _CountingJobManager(
            self.job_store, backend, workers=self.settings.job_workers,
            lease_s=self.settings.job_lease_s, retry_lost=False,
            start=self.settings.job_workers > 0, metrics=self.metrics)
        if self.settings.job_workers > 0:
            self._stop = threading.Event()
            self._reconciler = threading.Thread(target=self._reconcile_loop, daemon=True,
                                                name="formulane-api-reconciler")
            self._reconciler.start()

    def _reconcile_loop(self) -> None:
        """Another process's death must not wait for a restart: every half lease, settle the
        jobs whose owner is gone (``unknown``: never run twice) and pick up queued jobs a dead
        process had accepted (claiming is atomic, so one worker runs each)."""
        while not self._stop.wait(max(0.5, self.settings.job_lease_s / 2)):
            try:
                handled = self.jobs.recover()
                if handled:
                    log.warning("settled jobs of a gone worker: %s", ", ".join(handled))
            except Exception:  # noqa: BLE001 - the loop must outlive a database hiccup
                log.exception("job reconciliation failed")

    def router(self) -> Any:
        from ..escalation import Router, TypedToolCatalog

        return Router(policies=self.policies, catalog=TypedToolCatalog(self.tools),
                      backend=self.backend, store=self.job_store)

    def _load_policies(self) -> Any:
        from ..escalation import PolicyBook, PolicyRule

        spec = self.settings.policies
        if not spec:
            return PolicyBook(PolicyRule(may_escalate=self.settings.sandbox_policy == "allow"))
        module_name, _, attr = spec.partition(":")
        try:
            target: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                target = getattr(target, part)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ServiceError(f"cannot load policies {spec!r}: {exc}", code="E706") from None
        if not isinstance(target, PolicyBook):
            raise ServiceError(f"{spec!r} is not a PolicyBook", code="E706")
        return target

    # -- health ----------------------------------------------------------------------------

    def readiness(self) -> dict[str, Any]:
        checks: dict[str, Any] = {}
        try:
            ping(self.engine)
            checks["database"] = {"ok": True, "revision": self.revision}
        except Exception as exc:  # noqa: BLE001 - readiness reports, never raises
            checks["database"] = {"ok": False, "error": type(exc).__name__}
        if self.backend is None:
            checks["sandbox"] = {"ok": self.settings.sandbox == "none",
                                 "note": self.backend_note or "no sandbox backend"}
        else:
            caps = self.backend.capabilities()
            checks["sandbox"] = {"ok": bool(caps.available), "backend": caps.name,
                                 "isolation": str(caps.isolation.value if hasattr(
                                     caps.isolation, "value") else caps.isolation),
                                 "note": self.backend_note}
        return checks

    def _approvals_waiting(self) -> int:
        try:
            return self.tool_store.count_approvals("pending")
        except Exception:  # noqa: BLE001 - a scrape must not fail on the store
            return 0

    def close(self) -> None:
        if getattr(self, "_stop", None) is not None:
            self._stop.set()
        if self.jobs is not None:
            self.jobs.close()
        if self.backend is not None:
            self.backend.close()  # releases the spare sandbox and its mounts
        if self.job_store is not None:
            self.job_store.close()
        self.tools.close()
        self.engine.dispose()


class _CountingJobManager(JobManager):
    """A JobManager that counts each job this process finishes, by outcome and tenant."""

    def __init__(self, *args: Any, metrics: Metrics, **kwargs: Any) -> None:
        self.metrics = metrics
        super().__init__(*args, **kwargs)

    def _finish(self, record: Any, receipt: Any) -> None:
        super()._finish(record, receipt)
        outcome = getattr(receipt.outcome, "value", str(receipt.outcome))
        self.metrics.jobs.labels(outcome).inc()
        self.metrics.count(record.tenant, "sandbox", outcome)
        if outcome.startswith("timeout"):
            self.metrics.timeouts.labels("sandbox").inc()


def _blocked(path: Path) -> Path | None:
    """The first parent of ``path`` that other uids cannot traverse, if any."""
    for parent in [path.resolve(), *path.resolve().parents]:
        if parent.exists() and not parent.stat().st_mode & 0o001:
            return parent
    return None

