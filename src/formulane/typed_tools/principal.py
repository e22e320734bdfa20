"""Who is calling: `Principal`, the field markers that bind arguments to it, and `CallContext`.

Contract: a `Principal` is immutable and validated on construction (non-empty subject and
tenant, scopes as a frozenset of non-empty strings, kind "user" or "workload"). `TenantKey`
marks an argument that must equal the caller's tenant; `Secret` marks an argument that is
redacted in receipts, logs and error envelopes. Both are used as `Annotated` metadata or via
`Field(json_schema_extra={"x-tenant-key": True})` / `{"x-secret": True}`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, cast

from ..errors import ToolError

PrincipalKind = Literal["user", "workload"]

#: JSON-schema extension keys equivalent to the Annotated markers below.
TENANT_KEY_EXTRA = "x-tenant-key"
SECRET_EXTRA = "x-secret"


class _Marker:
    """A singleton used as `Annotated` metadata; compared by identity."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: `Annotated[str, TenantKey]`: the value must equal `principal.tenant`.
TenantKey = _Marker("TenantKey")
#: `Annotated[str, Secret]`: never written to receipts, logs or error messages.
Secret = _Marker("Secret")


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller of a tool: a user or a workload, inside one tenant, holding scopes."""

    subject: str
    tenant: str
    scopes: frozenset[str] = field(default_factory=frozenset[str])
    kind: PrincipalKind = "user"

    def __init__(
        self,
        subject: str,
        tenant: str,
        scopes: Iterable[str] = (),
        kind: PrincipalKind = "user",
    ) -> None:
        # The checks run on whatever the caller passed, whatever the annotations say.
        if not isinstance(cast(object, subject), str) or not subject.strip():
            raise ToolError("Principal.subject must be a non-empty string", code="E503")
        if not isinstance(cast(object, tenant), str) or not tenant.strip():
            raise ToolError("Principal.tenant must be a non-empty string", code="E503")
        if isinstance(scopes, str):
            # A bare string would silently become a set of characters.
            raise ToolError(
                "Principal.scopes must be an iterable of scope names, not one string",
                code="E503",
                hint=f"use scopes=[{scopes!r}]",
            )
        frozen = frozenset(scopes)
        for scope in frozen:
            if not isinstance(cast(object, scope), str) or not scope.strip():
                raise ToolError(f"Principal scope {scope!r} must be a non-empty string", code="E503")
        if kind not in ("user", "workload"):
            raise ToolError(f"Principal.kind must be 'user' or 'workload', got {kind!r}", code="E503")
        object.__setattr__(self, "subject", subject)
        object.__setattr__(self, "tenant", tenant)
        object.__setattr__(self, "scopes", frozen)
        object.__setattr__(self, "kind", kind)

    def has_scopes(self, needed: Iterable[str]) -> bool:
        return self.scopes.issuperset(needed)

    def missing_scopes(self, needed: Iterable[str]) -> list[str]:
        return sorted(set(needed) - self.scopes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "tenant": self.tenant,
            "scopes": sorted(self.scopes),
            "kind": self.kind,
        }


@dataclass(frozen=True, slots=True)
class CallContext:
    """Injected into a tool parameter annotated `CallContext` (never part of its schema)."""

    principal: Principal
    call_id: str | None
    idempotency_key: str | None
    approval_id: str | None
    receipt_id: str
