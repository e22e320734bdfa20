"""Stored formulas per tenant: immutable versions gated by known-answer cases, a ``live`` alias.

Contract: a formula is a name in a tenant; every change (`add_version`) writes a new, immutable
version holding the source, schema, profile, known-answer cases and the checked program's
stored form (`Program.to_json`, which records the language version), so evaluating a stored
version reloads it without parsing the text. A version is published only when every case
passes (`publish` raises E708 with the failures otherwise); publishing moves the ``live`` alias,
`rollback` moves it back to an earlier published version with a reason. `delete` is a
tombstone: the history stays, evaluation and listing stop. Every read is by (tenant, name): a
formula of another tenant is not found (E703), the same answer as one that does not exist.
Every action is an event (who, when, what, why, request id).
"""

from __future__ import annotations

import difflib
import json
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import and_, func, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

import formulane

from ..errors import FormulaError, ServiceError
from ..interpreter.program import Program, program_from_json
from ..schema import LANGUAGE_VERSION, schema_to_json
from .db import formula_aliases, formula_events, formula_versions, formulas
from .values import same, to_engine, to_json

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,99}$")
LIVE = "live"


@dataclass(frozen=True)
class Actor:
    tenant: str
    subject: str
    request_id: str = ""


def _not_found(what: str) -> ServiceError:
    return ServiceError(f"no {what} in this tenant", code="E703")


def parse_ref(ref: str) -> tuple[str, int | None]:
    name, sep, version = ref.partition("@")
    if not NAME.match(name):
        raise _not_found(f"formula {ref!r}")
    if not sep:
        return name, None
    if not version.isdigit() or not 0 < int(version) < 2**31:
        raise ServiceError(f"version in {ref!r} must be a positive integer", code="E706",
                           hint="name@3, or name for the live version")
    return name, int(version)


class FormulaStore:
    def __init__(self, engine: Engine, *, max_cases: int = 200, cache_size: int = 1024,
                 live_ttl_s: float = 1.0, clock: Any = time.time) -> None:
        self.engine = engine
        self.live_ttl_s = live_ttl_s
        # (tenant, ref) -> (expires, program, where): the hot path of evaluate-by-name costs
        # no database round trip; a publish, rollback or delete in this process clears it at
        # once, one in another process is seen within live_ttl_s.
        self._resolved: dict[tuple[str, str], tuple[float, Program, dict[str, Any]]] = {}
        self.max_cases = max_cases
        self.clock = clock
        self._programs: OrderedDict[tuple[str, int], Program] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # -- writes ----------------------------------------------------------------------------

    def create(self, actor: Actor, name: str, *, source: str, schema: dict[str, str],
               profile: str, cases: list[dict[str, Any]], note: str = "") -> dict[str, Any]:
        if not NAME.match(name):
            raise ServiceError(f"invalid formula name {name!r}", code="E706",
                               hint="a letter, then up to 99 letters, digits, '_', '.' or '-'")
        program = self._compile(source, schema, profile, cases)
        now = self.clock()
        formula_id = "fml_" + secrets.token_hex(12)
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(formulas).values(
                    formula_id=formula_id, tenant=actor.tenant, name=name, created_at=now,
                    created_by=actor.subject))
                self._insert_version(conn, formula_id, 1, program, cases, actor, now, note)
                self._event(conn, formula_id, actor, "create", 1, note)
        except IntegrityError:
            raise ServiceError(f"a formula named {name!r} exists in this tenant (or did: a "
                               "deleted name stays taken, with its history)", code="E707",
                               hint="add a version to it, or pick another name") from None
        return self.formula(actor.tenant, name)

    def add_version(self, actor: Actor, name: str, *, source: str | None,
                    schema: dict[str, str] | None, profile: str | None,
                    cases: list[dict[str, Any]] | None, note: str = "") -> dict[str, Any]:
        row = self._formula_row(actor.tenant, name)
        latest = self._version_row(row.formula_id, None)
        source = cast(str, latest.source) if source is None else source
        schema = cast("dict[str, str]", json.loads(latest.schema_json)) if schema is None else schema
        profile = cast(str, latest.profile) if profile is None else profile
        cases = cast("list[dict[str, Any]]", json.loads(latest.cases_json)) if cases is None else cases
        program = self._compile(source, schema, profile, cases)
        now = self.clock()
        for _ in range(3):  # two writers at once: the loser takes the next number
            with self.engine.begin() as conn:
                version = (conn.execute(select(func.max(formula_versions.c.version)).where(
                    formula_versions.c.formula_id == row.formula_id)).scalar() or 0) + 1
                try:
                    with conn.begin_nested():
                        self._insert_version(conn, row.formula_id, version, program, cases,
                                             actor, now, note)
                except IntegrityError:
                    continue
                self._event(conn, row.formula_id, actor, "version", version, note)
            return self.version(actor.tenant, name, version)
        raise ServiceError("too many concurrent versions of this formula", code="E707")

    def publish(self, actor: Actor, name: str, version: int) -> dict[str, Any]:
        row = self._formula_row(actor.tenant, name)
        vrow = self._version_row(row.formula_id, version)
        results = self.run_cases(actor.tenant, name, version)
        failures = [r for r in results if not r["passed"]]
        if failures:
            exc = ServiceError(f"{len(failures)} of {len(results)} known-answer cases failed; "
                               f"version {version} is not published", code="E708",
                               hint="fix the formula (a new version) or the cases")
            exc.extra = {"failures": failures, "results": results}  # type: ignore[attr-defined]
            raise exc
        if not results:
            raise ServiceError("a version needs at least one known-answer case to be published",
                               code="E708", hint="add cases: [{inputs, expect}]")
        now = self.clock()
        with self.engine.begin() as conn:
            if vrow.status != "published":
                conn.execute(update(formula_versions).where(and_(
                    formula_versions.c.formula_id == row.formula_id,
                    formula_versions.c.version == version)).values(
                    status="published", published_at=now, published_by=actor.subject))
            self._move_alias(conn, row.formula_id, version, actor, now)
            self._event(conn, row.formula_id, actor, "publish", version, "")
        self._forget(actor.tenant, name)
        return {"formula": self.formula(actor.tenant, name), "results": results}

    def rollback(self, actor: Actor, name: str, version: int | None, reason: str) -> dict[str, Any]:
        row = self._formula_row(actor.tenant, name)
        live = self._alias(row.formula_id)
        with self.engine.connect() as conn:
            published: list[int] = [r.version for r in conn.execute(
                select(formula_versions.c.version).where(and_(
                    formula_versions.c.formula_id == row.formula_id,
                    formula_versions.c.status == "published"))
                .order_by(formula_versions.c.version))]
        if version is None:
            earlier = [v for v in published if live is None or v < live]
            if not earlier:
                raise ServiceError("no earlier published version to roll back to", code="E707")
            version = earlier[-1]
        if version not in published:
            raise ServiceError(f"version {version} was never published", code="E707",
                               hint=f"published versions: {published}")
        now = self.clock()
        with self.engine.begin() as conn:
            self._move_alias(conn, row.formula_id, version, actor, now)
            self._event(conn, row.formula_id, actor, "rollback", version, reason)
        self._forget(actor.tenant, name)
        return self.formula(actor.tenant, name)

    def delete(self, actor: Actor, name: str, reason: str = "") -> None:
        row = self._formula_row(actor.tenant, name)
        with self.engine.begin() as conn:
            conn.execute(update(formulas).where(formulas.c.formula_id == row.formula_id)
                         .values(deleted_at=self.clock(), deleted_by=actor.subject))
            self._event(conn, row.formula_id, actor, "delete", None, reason)
        self._forget(actor.tenant, name)

    # -- reads -----------------------------------------------------------------------------

    def formulas(self, tenant: str) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(formulas).where(and_(
                formulas.c.tenant == tenant, formulas.c.deleted_at.is_(None)))
                .order_by(formulas.c.name)).all()
        return [self._formula_out(r) for r in rows]

    def formula(self, tenant: str, name: str) -> dict[str, Any]:
        return self._formula_out(self._formula_row(tenant, name))

    def versions(self, tenant: str, name: str) -> list[dict[str, Any]]:
        row = self._formula_row(tenant, name)
        with self.engine.connect() as conn:
            rows = conn.execute(select(formula_versions).where(
                formula_versions.c.formula_id == row.formula_id)
                .order_by(formula_versions.c.version)).all()
        out: list[dict[str, Any]] = []
        previous = ""
        for r in rows:
            item = self._version_out(r)
            item["diff"] = "".join(difflib.unified_diff(
                previous.splitlines(keepends=True) or [""], r.source.splitlines(keepends=True),
                f"v{r.version - 1}" if r.version > 1 else "empty", f"v{r.version}"))
            previous = r.source
            out.append(item)
        return out

    def version(self, tenant: str, name: str, version: int) -> dict[str, Any]:
        row = self._formula_row(tenant, name)
        return self._version_out(self._version_row(row.formula_id, version))

    def events(self, tenant: str, name: str) -> list[dict[str, Any]]:
        row = self._formula_row(tenant, name)
        with self.engine.connect() as conn:
            rows = conn.execute(select(formula_events).where(
                formula_events.c.formula_id == row.formula_id)
                .order_by(formula_events.c.at, formula_events.c.event_id)).all()
        return [{"at": r.at, "actor": r.actor, "action": r.action, "version": r.version,
                 "reason": r.reason, "request_id": r.request_id} for r in rows]

    def run_cases(self, tenant: str, name: str, version: int) -> list[dict[str, Any]]:
        row = self._formula_row(tenant, name)
        vrow = self._version_row(row.formula_id, version)
        program = self._program(row.formula_id, vrow)
        return [self._run_case(program, i, case)
                for i, case in enumerate(json.loads(vrow.cases_json))]

    def cached(self, tenant: str, ref: str) -> tuple[Program, dict[str, Any]] | None:
        hit = self._resolved.get((tenant, ref))
        if hit is not None and hit[0] > time.monotonic():
            return hit[1], hit[2]
        return None

    def _forget(self, tenant: str, name: str) -> None:
        with self._lock:
            for key in [k for k in self._resolved if k[0] == tenant and
                        k[1].partition("@")[0] == name]:
                del self._resolved[key]

    def resolve(self, tenant: str, ref: str) -> tuple[Program, dict[str, Any]]:
        """The Program of ``name`` (its live version) or ``name@version``."""
        program, where = self._resolve(tenant, ref)
        with self._lock:
            if len(self._resolved) > 10_000:
                self._resolved.clear()
            self._resolved[(tenant, ref)] = (time.monotonic() + self.live_ttl_s, program, where)
        return program, where

    def _resolve(self, tenant: str, ref: str) -> tuple[Program, dict[str, Any]]:
        name, version = parse_ref(ref)
        with self.engine.connect() as conn:
            row = conn.execute(select(formulas.c.formula_id, formulas.c.deleted_at).where(and_(
                formulas.c.tenant == tenant, formulas.c.name == name))).first()
            if row is None or row.deleted_at is not None:
                raise _not_found(f"formula {name!r}")
            if version is None:
                version = conn.execute(select(formula_aliases.c.version).where(and_(
                    formula_aliases.c.formula_id == row.formula_id,
                    formula_aliases.c.alias == LIVE))).scalar()
                if version is None:
                    raise ServiceError(f"formula {name!r} has no published version yet",
                                       code="E703", hint=f"evaluate {name}@1, or publish it")
            key = (row.formula_id, version)
            with self._lock:
                program = self._programs.get(key)
                if program is not None:
                    self._programs.move_to_end(key)
            if program is None:
                vrow = conn.execute(select(formula_versions).where(and_(
                    formula_versions.c.formula_id == row.formula_id,
                    formula_versions.c.version == version))).first()
                if vrow is None:
                    raise _not_found(f"version {version} of {name!r}")
                program = self._program(row.formula_id, vrow)
        return program, {"name": name, "version": version}

    # -- helpers ---------------------------------------------------------------------------

    def _compile(self, source: str, schema: dict[str, str], profile: str,
                 cases: list[dict[str, Any]]) -> Program:
        if len(cases) > self.max_cases:
            raise ServiceError(f"{len(cases)} cases is over the limit of {self.max_cases}",
                               code="E705")
        return formulane.compile(source, schema, profile=profile)

    def _program(self, formula_id: str, vrow: Any) -> Program:
        key = (formula_id, vrow.version)
        with self._lock:
            program = self._programs.get(key)
        if program is None:
            program = program_from_json(json.loads(vrow.program_json))
            with self._lock:
                self._programs[key] = program
                while len(self._programs) > self._cache_size:
                    self._programs.popitem(last=False)
        return program

    @staticmethod
    def _run_case(program: Program, index: int, case: dict[str, Any]) -> dict[str, Any]:
        label = case.get("name") or f"case {index + 1}"
        expected = case.get("expect")
        try:
            value = program.evaluate(to_engine(case.get("inputs") or {}, program.schema))
        except FormulaError as exc:
            return {"case": label, "passed": False, "expected": expected, "actual": None,
                    "error": {"code": exc.code, "message": exc.message}}
        return {"case": label, "passed": same(value, expected), "expected": expected,
                "actual": to_json(value), "error": None}

    def _insert_version(self, conn: Any, formula_id: str, version: int, program: Program,
                        cases: list[dict[str, Any]], actor: Actor, now: float, note: str) -> None:
        conn.execute(insert(formula_versions).values(
            formula_id=formula_id, version=version, source=program.source,
            schema_json=json.dumps(schema_to_json(program.schema)), profile=program.profile,
            cases_json=json.dumps(cases), program_json=json.dumps(program.to_json()),
            language_version=LANGUAGE_VERSION, type=str(program.type), created_at=now,
            created_by=actor.subject, status="draft", published_at=None, published_by=None,
            note=note))

    def _move_alias(self, conn: Any, formula_id: str, version: int, actor: Actor,
                    now: float) -> None:
        done = conn.execute(update(formula_aliases).where(and_(
            formula_aliases.c.formula_id == formula_id, formula_aliases.c.alias == LIVE))
            .values(version=version, updated_at=now, updated_by=actor.subject)).rowcount
        if not done:
            conn.execute(insert(formula_aliases).values(
                formula_id=formula_id, alias=LIVE, version=version, updated_at=now,
                updated_by=actor.subject))

    def _event(self, conn: Any, formula_id: str, actor: Actor, action: str,
               version: int | None, reason: str) -> None:
        conn.execute(insert(formula_events).values(
            event_id="fev_" + secrets.token_hex(10), formula_id=formula_id, at=self.clock(),
            actor=actor.subject, action=action, version=version, reason=reason[:2000],
            request_id=actor.request_id[:64]))

    def _formula_row(self, tenant: str, name: str) -> Any:
        if not NAME.match(name or ""):
            raise _not_found(f"formula {name!r}")
        with self.engine.connect() as conn:
            row = conn.execute(select(formulas).where(and_(
                formulas.c.tenant == tenant, formulas.c.name == name))).first()
        if row is None or row.deleted_at is not None:
            raise _not_found(f"formula {name!r}")
        return row

    def _version_row(self, formula_id: str, version: int | None) -> Any:
        query = select(formula_versions).where(formula_versions.c.formula_id == formula_id)
        if version is None:
            query = query.order_by(formula_versions.c.version.desc()).limit(1)
        else:
            query = query.where(formula_versions.c.version == version)
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        if row is None:
            raise _not_found(f"version {version}")
        return row

    def _alias(self, formula_id: str) -> int | None:
        with self.engine.connect() as conn:
            return conn.execute(select(formula_aliases.c.version).where(and_(
                formula_aliases.c.formula_id == formula_id,
                formula_aliases.c.alias == LIVE))).scalar()

    def _formula_out(self, row: Any) -> dict[str, Any]:
        with self.engine.connect() as conn:
            latest = conn.execute(select(func.max(formula_versions.c.version)).where(
                formula_versions.c.formula_id == row.formula_id)).scalar()
        return {"name": row.name, "live_version": self._alias(row.formula_id),
                "latest_version": latest, "created_at": row.created_at,
                "created_by": row.created_by}

    @staticmethod
    def _version_out(r: Any) -> dict[str, Any]:
        return {"version": r.version, "source": r.source, "schema": json.loads(r.schema_json),
                "profile": r.profile, "cases": json.loads(r.cases_json), "type": r.type,
                "language_version": r.language_version, "status": r.status,
                "created_at": r.created_at, "created_by": r.created_by,
                "published_at": r.published_at, "published_by": r.published_by,
                "note": r.note}


