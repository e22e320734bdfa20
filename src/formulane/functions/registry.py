"""The set of functions a program may call: an immutable mapping from names to specs.

The default registry is collected once from the declaration modules (every `FunctionSpec`
found at module level). Applications build their own with `Registry.extend` (host functions)
or `with_packs` (optional packs such as finance); nothing mutates a registry in place, so one
registry can serve many threads, and compiled programs are cached per registry.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from types import MappingProxyType, ModuleType
from typing import Any, Iterable, Iterator, Mapping

from ..source import ascii_upper
from .spec import FunctionSpec

def declaration_modules() -> tuple[ModuleType, ...]:
    """The declaration modules, in documentation order.

    Imported here, on first use, rather than at the top: the declaration modules import `spec`
    and the scalar helpers, and `import formulane.functions.registry` stays cheap. The imports are
    plain statements so that grep, an IDE and the layering test can follow them; a module that
    fails to import fails the registry loudly instead of silently dropping its family.
    """
    from . import (bonds, cashflows, complex, conversion, database, dates, depreciation,
                   distributions, engineering, finance, info, lists, logic, lookup, math, matrix,
                   moremath, morestats, operators, statistics, text, text_regex, trig)
    return (operators, logic, info, math, text, text_regex, dates, lists, lookup, finance,
            statistics,
            # issue 11's families
            trig, conversion, engineering, complex, database, depreciation, cashflows, bonds,
            distributions, moremath, morestats,
            # issue 11 item 2: matrix functions over 2-D arrays
            matrix)


class Registry:
    """Immutable name -> spec mapping (names upper-case; operators under their symbols)."""

    __slots__ = ("_specs", "_packs", "_all")

    def __init__(self, specs: Iterable[FunctionSpec], packs: Iterable[str] = ()) -> None:
        table: dict[str, FunctionSpec] = {}
        for spec in specs:
            for name in (spec.name, *spec.aliases):
                if name in table and table[name] is not spec:
                    raise ValueError(f"function {name} is declared twice")
                table[name] = spec
        self._all: Mapping[str, FunctionSpec] = MappingProxyType(table)
        self._packs = frozenset(packs)
        self._specs: Mapping[str, FunctionSpec] = MappingProxyType(
            {n: s for n, s in table.items() if s.pack is None or s.pack in self._packs}
        )

    def get(self, name: str) -> FunctionSpec | None:
        return self._specs.get(ascii_upper(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and ascii_upper(name) in self._specs

    def __iter__(self) -> Iterator[FunctionSpec]:
        seen: set[int] = set()
        for spec in self._specs.values():
            if id(spec) not in seen:
                seen.add(id(spec))
                yield spec

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def functions(self) -> list[FunctionSpec]:
        """Callable functions (not operators), sorted by name."""
        return sorted((s for s in self if s.category != "operators"), key=lambda s: s.name)

    def pack_of(self, name: str) -> str | None:
        """The pack a known-but-disabled function belongs to (for a helpful error)."""
        spec = self._all.get(ascii_upper(name))
        return spec.pack if spec is not None and ascii_upper(name) not in self._specs else None

    def suggest(self, name: str, n: int = 3) -> list[str]:
        names = [k for k, s in self._specs.items() if s.category != "operators"]
        return difflib.get_close_matches(ascii_upper(name), names, n=n, cutoff=0.6)

    def extend(self, *specs: FunctionSpec) -> "Registry":
        """A new registry with more functions (host functions are declared like builtins)."""
        return Registry([*self._all.values(), *specs], self._packs)

    def with_packs(self, *packs: str) -> "Registry":
        known = {s.pack for s in self._all.values() if s.pack}
        unknown = set(packs) - known
        if unknown:
            raise ValueError(f"unknown pack(s) {sorted(unknown)}; known: {sorted(known)}")
        return Registry(self._all.values(), self._packs | set(packs))


def _collect() -> list[FunctionSpec]:
    specs: list[FunctionSpec] = []
    seen: set[int] = set()
    for module in declaration_modules():
        for value in vars(module).values():
            if isinstance(value, FunctionSpec) and id(value) not in seen:
                seen.add(id(value))
                specs.append(value)
    return specs


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """Every builtin, optional packs off."""
    return Registry(_collect())
