"""One tenant's jobs over every lane, newest first, a bounded page at a time.

Contract: `list_jobs(store, tenant, ...)` reads the job store's two durable records of what was
asked of the escalation lane: the queued sandbox jobs (``escalation_jobs``, with their state)
and the lane receipts of the lanes that answered at once (tool, formula, refuse, postpone; a
finished sandbox job's lane receipt is its job row, so it is not listed twice). Every row is
filtered by tenant in SQL; the page is at most ``limit`` rows (the route bounds it), ordered by
(created_at, id) descending, and the next page starts after an opaque cursor of that pair, so
pages are stable while new jobs arrive. ``state`` filters on the job's status (a sandbox job:
queued, running, succeeded, ...; another lane: its outcome); ``lane`` on the lane.

The SQL is plain and portable (SQLite and PostgreSQL) and goes through the store's own
connection (``_run``), since the escalation store has no paged, per-tenant listing of its own.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..errors import ServiceError

_SELECT = (
    "SELECT * FROM ("
    " SELECT 'sandbox' AS lane, j.job_id AS id, j.status AS state, j.created_at AS created_at,"
    " j.job_id AS job_id, p.request_id AS request_id, p.request_json AS detail, 'job' AS kind"
    " FROM escalation_jobs j LEFT JOIN lane_pending p ON p.job_id = j.job_id"
    " WHERE j.tenant = ?"
    " UNION ALL"
    " SELECT r.lane AS lane, r.receipt_id AS id, r.outcome AS state, r.created_at AS created_at,"
    " r.job_id AS job_id, r.request_id AS request_id, r.receipt_json AS detail, 'receipt' AS kind"
    " FROM lane_receipts r WHERE r.tenant = ? AND r.lane <> 'sandbox'"
    ") AS x")


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


def list_jobs(store: Any, tenant: str, *, limit: int, cursor: str | None = None,
              state: str | None = None, lane: str | None = None) -> dict[str, Any]:
    """A page of the tenant's jobs: ``{"jobs": [...], "next_cursor": str | None}``."""
    where: list[str] = []
    params: list[Any] = [tenant, tenant]
    if state is not None:
        where.append("state = ?")
        params.append(state)
    if lane is not None:
        where.append("lane = ?")
        params.append(lane)
    if cursor is not None:
        created_at, ident = decode_cursor(cursor)
        where.append("(created_at < ? OR (created_at = ? AND id < ?))")
        params += [created_at, created_at, ident]
    sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "")
    sql += f" ORDER BY created_at DESC, id DESC LIMIT {int(limit) + 1}"
    rows = store._run(sql, params, fetch="all")
    page = rows[:limit]
    jobs = [{"id": r[1], "lane": r[0], "state": r[2], "created_at": r[3], "job_id": r[4],
             "request_id": r[5], "ask": _ask(r[7], r[6])} for r in page]
    more = len(rows) > limit
    return {"jobs": jobs,
            "next_cursor": encode_cursor(page[-1][3], page[-1][1]) if more and page else None}
