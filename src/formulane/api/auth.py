"""API keys: minted, hashed at rest, resolved to a principal (tenant, subject, scopes).

Contract: a key reads ``fk_<key id>_<secret>``; only the id and sha256(secret) are stored, so a
database leak gives no usable key. `KeyStore.create` returns the key text once; `resolve`
checks it in constant time and refuses revoked or expired keys (E701, one message for every
case, so a caller cannot tell an unknown id from a wrong secret). `mint` makes a child key for
one end user or agent task: its scopes are a subset of the parent's, its tenant the parent's,
and it expires (at most ``max_minted_key_ttl_s``). Scopes are plain strings; `SCOPES` lists the
service's own, and a tool's scopes (e.g. ``demo:write``) are carried the same way into the
typed-tool lane. `RateLimiter` is a token bucket per key id, in this process.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterable

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine

from ..errors import ServiceError
from .db import api_keys

#: The service's scopes; a route names the one it needs.
SCOPES: dict[str, str] = {
    "formulas:read": "check, evaluate, explain, format, complete, hover; read stored formulas",
    "formulas:write": "create stored formulas and new versions; delete (tombstone)",
    "formulas:publish": "publish a version and move the live alias (rollback)",
    "tools:read": "list tools, read receipts and pending approvals",
    "tools:call": "call tools (plus each tool's own scopes)",
    "tools:approve": "approve or deny pending tool calls",
    "jobs:read": "route requests, read jobs, receipts and artifacts",
    "jobs:run": "submit and cancel jobs",
    "jobs:settle": "settle an unknown job by hand",
    "keys:mint": "mint short-lived, down-scoped keys",
    "metrics:read": "read the lanes metrics",
}
_KEY = re.compile(r"^fk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True, slots=True)
class ApiPrincipal:
    key_id: str
    tenant: str
    subject: str
    scopes: frozenset[str]
    kind: str = "user"
    expires_at: float | None = None

    def require(self, scope: str) -> None:
        if scope not in self.scopes:
            raise ServiceError(f"this key lacks the scope {scope!r}", code="E702",
                               hint="mint or create a key that has it (formulane keys create "
                                    f"--scopes {scope} ...)")

    def to_tool_principal(self) -> Any:
        from ..typed_tools import Principal

        return Principal(self.subject, self.tenant, self.scopes, kind=self.kind)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return {"key_id": self.key_id, "tenant": self.tenant, "subject": self.subject,
                "scopes": sorted(self.scopes), "kind": self.kind, "expires_at": self.expires_at}


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def check_tenant(tenant: str) -> str:
    if not _TENANT.match(tenant or ""):
        raise ServiceError(f"invalid tenant {tenant!r}", code="E706",
                           hint="1-64 letters, digits, '.', '_' or '-', starting alphanumeric")
    return tenant


def check_scopes(scopes: Iterable[str]) -> frozenset[str]:
    out = frozenset(s.strip() for s in scopes if s.strip())
    for s in out:
        if not re.match(r"^[A-Za-z0-9_.:*-]{1,64}$", s):
            raise ServiceError(f"invalid scope {s!r}", code="E706")
    return out


class KeyStore:
    def __init__(self, engine: Engine, *, ttl_s: float = 2.0, clock: Any = time.time) -> None:
        self.engine = engine
        self.ttl_s = ttl_s
        self.clock = clock
        self._cache: dict[str, tuple[float, ApiPrincipal, str]] = {}
        self._lock = threading.Lock()

    def create(self, *, tenant: str, scopes: Iterable[str], subject: str | None = None,
               kind: str = "user", label: str = "", ttl_s: float | None = None,
               parent: str | None = None) -> tuple[str, ApiPrincipal]:
        check_tenant(tenant)
        if kind not in ("user", "workload"):
            raise ServiceError("kind must be 'user' or 'workload'", code="E706")
        scope_set = check_scopes(scopes)
        key_id = secrets.token_hex(8)
        secret = secrets.token_urlsafe(32)
        now = self.clock()
        expires = None if ttl_s is None else now + ttl_s
        subject = subject or f"key:{key_id}"
        with self.engine.begin() as conn:
            conn.execute(insert(api_keys).values(
                key_id=key_id, secret_hash=_hash(secret), tenant=tenant, subject=subject,
                kind=kind, scopes=json.dumps(sorted(scope_set)), label=label[:200],
                parent_key_id=parent, created_at=now, expires_at=expires, revoked_at=None))
        principal = ApiPrincipal(key_id, tenant, subject, scope_set, kind, expires)
        return f"fk_{key_id}_{secret}", principal

    def mint(self, parent: ApiPrincipal, *, scopes: Iterable[str] | None, ttl_s: float,
             subject: str | None, kind: str, label: str, max_ttl_s: float) -> tuple[str, ApiPrincipal]:
        wanted = parent.scopes if scopes is None else check_scopes(scopes)
        extra = sorted(wanted - parent.scopes)
        if extra:
            raise ServiceError(f"a minted key cannot have scopes its parent lacks: {extra}",
                               code="E702", hint="ask for a subset of this key's scopes")
        if not 1 <= ttl_s <= max_ttl_s:
            raise ServiceError(f"ttl_s must be between 1 and {max_ttl_s:g} seconds", code="E706")
        if parent.expires_at is not None:
            ttl_s = min(ttl_s, max(1.0, parent.expires_at - self.clock()))
        return self.create(tenant=parent.tenant, scopes=wanted,
                           subject=subject or f"{parent.subject}/{kind}", kind=kind,
                           label=label, ttl_s=ttl_s, parent=parent.key_id)

    def resolve_cached(self, token: str) -> ApiPrincipal | None:
        """`resolve` when the key is in this process's cache (no I/O), else None."""
        match = _KEY.match(token or "")
        if match is None:
            return self.resolve(token)  # raises the one E701
        with self._lock:
            cached = self._cache.get(match.group(1))
        if cached is None or self.clock() - cached[0] > self.ttl_s:
            return None
        return self.resolve(token)

    def resolve(self, token: str) -> ApiPrincipal:
        refused = ServiceError("missing or invalid API key", code="E701",
                               hint="send 'Authorization: Bearer <key>'")
        match = _KEY.match(token or "")
        if match is None:
            raise refused
        key_id, secret = match.groups()
        now = self.clock()
        with self._lock:
            cached = self._cache.get(key_id)
        # A resolved key is trusted for ttl_s in this process: revocation takes effect
        # everywhere within that time, and a hot path costs no database round trip.
        if cached is None or now - cached[0] > self.ttl_s:
            with self.engine.connect() as conn:
                row = conn.execute(select(api_keys).where(api_keys.c.key_id == key_id)).first()
            if row is None or row.revoked_at is not None:
                with self._lock:
                    self._cache.pop(key_id, None)
                raise refused
            principal = ApiPrincipal(row.key_id, row.tenant, row.subject,
                                     frozenset(json.loads(row.scopes)), row.kind, row.expires_at)
            cached = (now, principal, row.secret_hash)
            with self._lock:
                if len(self._cache) > 10_000:
                    self._cache.clear()
                self._cache[key_id] = cached
        _, principal, digest = cached
        if not hmac.compare_digest(digest, _hash(secret)):
            raise refused
        if principal.expires_at is not None and principal.expires_at <= now:
            raise refused
        return principal

    def keys(self, tenant: str | None = None) -> list[dict[str, Any]]:
        query = select(api_keys).order_by(api_keys.c.created_at)
        if tenant is not None:
            query = query.where(api_keys.c.tenant == tenant)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [{"key_id": r.key_id, "tenant": r.tenant, "subject": r.subject, "kind": r.kind,
                 "scopes": json.loads(r.scopes), "label": r.label, "parent_key_id": r.parent_key_id,
                 "created_at": r.created_at, "expires_at": r.expires_at,
                 "revoked_at": r.revoked_at} for r in rows]

    def revoke(self, key_id: str) -> bool:
        with self.engine.begin() as conn:
            done = conn.execute(update(api_keys).where(api_keys.c.key_id == key_id,
                                                       api_keys.c.revoked_at.is_(None))
                                .values(revoked_at=self.clock())).rowcount
        with self._lock:
            self._cache.pop(key_id, None)
        return bool(done)

    def count(self) -> int:
        with self.engine.connect() as conn:
            return len(conn.execute(select(api_keys.c.key_id).limit(1)).all())


class RateLimiter:
    """Token bucket per key: ``rate`` tokens a second, at most ``burst`` banked."""

    def __init__(self, rate: float, burst: int, *, clock: Any = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when allowed, else the seconds to wait before the next token."""
        now: float = self.clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            if len(self._buckets) > 100_000:
                self._buckets.clear()
            return (1.0 - tokens) / self.rate
