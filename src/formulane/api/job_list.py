"""One tenant's jobs over every lane, newest first, a bounded page at a time.

Contract: `list_jobs(store, tenant, ...)` reads the job store's two durable records of what was
asked of the escalation lane: the queued sandbox jobs (``escalation_jobs``, with their state)
and the lane receipts of the lanes that answered at once (tool, formula, refuse, postpone; a
finished sandbox job's lane receipt is its job row, so it is not listed twice). Every row is
filtered by tenant in SQL; the page is at most ``limit`` rows (the route bounds it), ordered by
(created_at, id) descending, and the next page starts after an opaque cursor of that pair, so
pages are stable while new jobs arrive. ``state`` filters on the job's status (a sandbox job:
queued, running, succeeded, ...; another lane: its outcome); ``lane`` on the lane.

The query is built in SQLAlchemy Core from the store's declared tables (`escalation.store.schema`)
and read through the store's `fetch`, since the escalation store has no paged, per-tenant
listing of its own; tenant, filters and cursor are bound parameters.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from sqlalchemy import Subquery, and_, literal_column, or_, select, union_all

from ..errors import ServiceError
from ..escalation.store import JobStore
from ..escalation.store import schema as tables


def _rows(tenant: str) -> Subquery:
    """Every row of the tenant: sandbox jobs (with what was asked, if the lane kept it) and
    the other lanes' receipts, as (lane, id, state, created_at, job_id, request_id, detail,
    kind)."""
    j, p, r = tables.jobs.c, tables.lane_pending.c, tables.lane_receipts.c
    jobs = (select(literal_column("'sandbox'").label("lane"), j.job_id.label("id"),
                   j.status.label("state"), j.created_at.label("created_at"),
                   j.job_id.label("job_id"), p.request_id.label("request_id"),
                   p.request_json.label("detail"), literal_column("'job'").label("kind"))
            .select_from(tables.jobs.outerjoin(tables.lane_pending, p.job_id == j.job_id))
            .where(j.tenant == tenant))
    receipts = (select(r.lane.label("lane"), r.receipt_id.label("id"),
                       r.outcome.label("state"), r.created_at.label("created_at"),
                       r.job_id.label("job_id"), r.request_id.label("request_id"),
                       r.receipt_json.label("detail"), literal_column("'receipt'").label("kind"))
                .where(r.tenant == tenant, r.lane != "sandbox"))
    return union_all(jobs, receipts).subquery("x")


def encode_cursor(created_at: str, ident: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([created_at, ident]).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created_at, ident = json.loads(raw)
        if not isinstance(created_at, str) or not isinstance(ident, str):
            raise ValueError
        return created_at, ident
    except (ValueError, TypeError, json.JSONDecodeError):
        raise ServiceError("the cursor is not one this service gave", code="E706",
                           hint="pass the next_cursor of the previous page unchanged") from None


def _ask(kind: str, detail: str | None) -> str | None:
    if not detail:
        return None
    try:
        data = json.loads(detail)
    except json.JSONDecodeError:
        return None
    request: dict[str, Any] = data.get("request") or {}
    ask = data.get("ask") if kind == "job" else request.get("ask")
    return ask if isinstance(ask, str) else None


def list_jobs(store: JobStore, tenant: str, *, limit: int, cursor: str | None = None,
              state: str | None = None, lane: str | None = None) -> dict[str, Any]:
    """A page of the tenant's jobs: ``{"jobs": [...], "next_cursor": str | None}``."""
    x = _rows(tenant).c
    query = select(x.lane, x.id, x.state, x.created_at, x.job_id, x.request_id, x.detail,
                   x.kind)
    if state is not None:
        query = query.where(x.state == state)
    if lane is not None:
        query = query.where(x.lane == lane)
    if cursor is not None:
        created_at, ident = decode_cursor(cursor)
        query = query.where(or_(x.created_at < created_at,
                                and_(x.created_at == created_at, x.id < ident)))
    query = query.order_by(x.created_at.desc(), x.id.desc()).limit(int(limit) + 1)
    rows = store.fetch(query)
    page = rows[:limit]
    jobs = [{"id": r["id"], "lane": r["lane"], "state": r["state"],
             "created_at": r["created_at"], "job_id": r["job_id"],
             "request_id": r["request_id"], "ask": _ask(r["kind"], r["detail"])} for r in page]
    more = len(rows) > limit
    return {"jobs": jobs, "next_cursor": encode_cursor(page[-1]["created_at"], page[-1]["id"])
            if more and page else None}
