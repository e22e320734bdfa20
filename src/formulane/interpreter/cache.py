"""The compile cache: `compile_cached`, what `formulane.compile` is, below the facade.

Contract: `compile_cached(source, schema, profile=, limits=, registry=, returns=)` returns the
checked `Program` for that formula, built once per (source, schema fingerprint, profile,
limits, registry, returns) and then shared (programs are immutable; `Program.evaluate` is
safe from several threads). It raises what `compile_program` raises, plus E101 for a source
that is not text and E209 for an unknown profile, before any work. A schema form that cannot
be hashed compiles without the cache. ``returns`` (a Python type) gives the copy of the cached
program held to that result type (`Program.returning`; E214 when the static type cannot
produce it), cached too, so a typed program tiers up like any other.

It lives here, not in the facade, so that the columnar backends (which compile every formula
of a frame through it) reach it without importing `formulane` itself: dependencies point one
way (DESIGN.md).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, overload

from typing_extensions import TypeVar

from ..errors import CheckError, ParseError
from ..functions.registry import Registry, default_registry
from ..limits import DEFAULT_LIMITS, Limits
from ..schema import normalize_schema, schema_key
from ..values import Value
from .program import Program, compile_program

__all__ = ["CACHE_SIZE", "PROFILES", "compile_cached", "cache_clear", "cache_info"]

PROFILES = ("strict", "excel")
#: Programs kept (least recently used dropped first); each holds its checked IR and closures.
CACHE_SIZE = 2048

T = TypeVar("T")


@lru_cache(maxsize=CACHE_SIZE)
def _cached(source: str, key: Any, profile: str, limits: Limits, registry: Registry,
            returns: type | None) -> Program[Any]:
    if returns is not None:  # the untyped program is cached too and shared with the copy
        return _cached(source, key, profile, limits, registry, None).returning(returns)
    return compile_program(source, normalize_schema(key), profile=profile, limits=limits,
                           registry=registry)


@overload
def compile_cached(source: str, schema: Any = None, *, profile: str = "strict",
                   limits: Limits | None = None, registry: Registry | None = None,
                   returns: None = None) -> Program[Value]: ...


@overload
def compile_cached(source: str, schema: Any = None, *, profile: str = "strict",
                   limits: Limits | None = None, registry: Registry | None = None,
                   returns: type[T]) -> Program[T]: ...


def compile_cached(source: str, schema: Any = None, *, profile: str = "strict",
                   limits: Limits | None = None, registry: Registry | None = None,
                   returns: type[Any] | None = None) -> Program[Any]:
    """Parse, type-check and compile a formula against a schema, cached (see the module)."""
    if not isinstance(source, str):
        raise ParseError(f"a formula must be text, got {type(source).__name__}", code="E101")
    if profile not in PROFILES:
        raise CheckError(f"unknown profile {profile!r}: use 'strict' or 'excel'", code="E209")
    limits = limits or DEFAULT_LIMITS
    registry = registry or default_registry()
    key = schema_key(schema)
    expected: Any = returns  # a type is hashable; anything else is refused by `returning`
    try:
        return _cached(source, key, profile, limits, registry, expected)
    except TypeError:  # an unhashable schema form (or returns=): compile without the cache
        program = compile_program(source, normalize_schema(schema), profile=profile,
                                  limits=limits, registry=registry)
        return program if returns is None else program.returning(returns)


def cache_info() -> Any:
    """The cache's hits, misses and size (`functools.lru_cache`'s ``cache_info()``)."""
    return _cached.cache_info()


def cache_clear() -> None:
    """Drop every cached program (tests; a registry changed in place)."""
    _cached.cache_clear()
