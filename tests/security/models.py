"""Models shared by the security suite's typed-tool cases, and the tiny structured type syntax the
case files use (so no case text is ever evaluated as Python)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from formulane.typed_tools import Secret, TenantKey

SECRET = "sk-live-SECRET-7f3a"


class Account(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenant: Annotated[str, TenantKey]
    id: int


class Vault(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenant: Annotated[str, TenantKey]
    key: Annotated[str, Secret, Field(min_length=8)]


class Refund(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["refund"]
    tenant: Annotated[str, TenantKey]
    cents: int
    card: Annotated[str, Secret, Field(min_length=8)]


class Cancel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["cancel"]
    tenant: Annotated[str, TenantKey]
    order: int
    token: Annotated[str, Secret, Field(min_length=8)]


class Folder(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenant: Annotated[str, TenantKey]
    children: list["Folder"]


class Tenants(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenants: list[Annotated[str, TenantKey]]


MODELS: dict[str, Any] = {m.__name__: m for m in (Account, Vault, Refund, Cancel, Folder, Tenants)}


def build_type(spec: Any) -> Any:
    """`Account`, `{list: T}`, `{dict: T}`, `{tuple: [T, ...]}`, `{seq: T}`, `{set: T}`, `{union: [...]}`,
    `{optional: T}` -> the Python type."""
    if isinstance(spec, str):
        return MODELS[spec]
    (kind, arg), = spec.items()
    if kind == "list":
        return list[build_type(arg)]
    if kind == "set":
        return frozenset[build_type(arg)]
    if kind == "dict":
        return dict[str, build_type(arg)]
    if kind == "seq":
        return tuple[build_type(arg), ...]
    if kind == "tuple":
        return tuple[tuple(build_type(a) for a in arg)]
    if kind == "union":
        return Union[tuple(build_type(a) for a in arg)]
    if kind == "optional":
        return Optional[build_type(arg)]
    raise ValueError(f"unknown type form {kind!r}")


def with_secret(value: Any) -> Any:
    """The case value with the placeholder SECRET replaced by the real-looking secret."""
    if isinstance(value, dict):
        return {k: with_secret(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_secret(v) for v in value]
    return SECRET if value == "SECRET" else value
