"""``formulane route --explain`` and ``formulane pilot report``: the lanes from the command line.

    formulane route request.json --explain [--json]     # which lane, and every reason
    formulane pilot report --since 30d [--html report.html] [--json] [--tenant T]

Both open the escalation machinery from ``FORMULANE_*`` settings (see `facade`) without
starting job workers: ``route`` never runs anything, ``pilot`` only reads receipts. ``route``
reads the request as JSON (a file, or ``-`` for stdin) with the `EscalationRequest` fields
(``principal`` defaults to the local/dev principal). Exit codes: 0 done, 1 the request or the
store is invalid (the message says which field), 2 a usage error.

Wire it into `formulane.cli` with ``add_parser(sub)``; each sub-command sets ``func``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import FormulaError


def add_parser(subparsers: Any) -> None:
    """Add ``route`` and ``pilot`` to an argparse sub-parsers object."""
    rt = subparsers.add_parser("route", help="decide which lane a job request goes to, and why")
    rt.add_argument("request", help="the request as a JSON file ('-' for stdin)")
    rt.add_argument("--explain", action="store_true", help="print every reason (default: lane)")
    rt.add_argument("--json", action="store_true", help="print the decision as JSON")
    rt.set_defaults(func=cmd_route)
    pl = subparsers.add_parser("pilot", help="the 30-day pilot report over the lane receipts")
    pl_sub = pl.add_subparsers(dest="pilot_command", required=True)
    rp = pl_sub.add_parser("report", help="per lane and job kind figures, and the reading")
    rp.add_argument("--since", default="30d", help="window start: 30d, 12h, 2w or an ISO date")
    rp.add_argument("--until", help="window end (ISO date; default now)")
    rp.add_argument("--tenant", help="only this tenant's receipts")
    rp.add_argument("--tool", action="append", default=[], metavar="NAME",
                    help="a tool the application registers (repeatable): sandbox jobs that only "
                         "call it count as deterministic-lane work (pinned tools always do)")
    rp.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    rp.add_argument("--json", action="store_true", help="print the figures as JSON")
    rp.set_defaults(func=cmd_pilot)


def _open(start_workers: bool = False) -> Any:
    from .facade import Escalation

    return Escalation(start_workers=start_workers)


def cmd_route(args: argparse.Namespace) -> int:
    from .facade import build_request

    try:
        text = sys.stdin.read() if args.request == "-" else Path(args.request).read_text(
            encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError) as exc:
        print(f"formulane route: cannot read {args.request}: {exc}", file=sys.stderr)
        return 2
    try:
        with _open() as esc:
            request = build_request(data)
            decision = esc.router.route(request)
    except FormulaError as exc:
        print(exc.render(), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"request_id": request.request_id, "lane": decision.lane,
                          "reasons": [r.model_dump(mode="json") for r in decision.reasons],
                          "formula": decision.formula}, ensure_ascii=False, indent=2))
        return 0
    print(f"lane: {decision.lane}")
    if args.explain:
        for reason in decision.reasons:
            print(f"  - [{reason.code.value}] {reason.message}")
        if decision.formula:
            print(f"  formula: {decision.formula}")
        if decision.sandbox_job is not None:
            job = decision.sandbox_job
            print(f"  sandbox job: network {job.network.mode}, side effects "
                  f"{job.side_effect_class}, state {job.state}, isolation "
                  f"{job.min_isolation.value}, wall {job.limits.wall_timeout_s} s")
    return 0


def cmd_pilot(args: argparse.Namespace) -> int:
    from .drafts import DraftRoom, PinnedTools
    from .facade import EscalationSettings
    from .pilot import parse_since, pilot_report, render_html, render_table
    from .store import open_store

    try:
        since = parse_since(args.since)
        until = parse_since(args.until) if args.until else None
        settings = EscalationSettings()
        store = open_store(settings.store_url or settings.data_dir / "jobs.sqlite3")
        try:  # only the store: the report reads receipts and never starts a sandbox
            report = pilot_report(store, since=since, until=until, tenant=args.tenant,
                                  catalog_names=[*PinnedTools(DraftRoom(store, None)).names(),
                                                 *args.tool])
        finally:
            store.close()
    except FormulaError as exc:
        print(exc.render(), file=sys.stderr)
        return 1
    if args.html:
        Path(args.html).write_text(render_html(report), encoding="utf-8")
    if args.json:
        print(json.dumps({
            "since": report.since.isoformat(), "until": report.until.isoformat(),
            "reading": report.reading, "why": report.why, "keep": report.keep_kinds,
            "move": report.move_kinds, "deterministic_share": report.deterministic_share,
            "lanes": {lane: _figures(f) for lane, f in report.by_lane.items()},
            "kinds": [{"lane": lane, "kind": kind, **_figures(f)}
                      for (lane, kind), f in sorted(report.by_kind.items())]}, indent=2))
    else:
        render_table(report)
    return 0


def _figures(f: Any) -> dict[str, Any]:
    return {"jobs": f.jobs, "succeeded": f.succeeded, "completion": f.completion,
            "useful": f.useful, "useful_rate": f.useful_rate, "timeouts": f.timeouts,
            "cancelled": f.cancelled, "unknown": f.unknown, "blocked": f.blocked,
            "corrections": f.corrections, "data_classes": dict(f.classes),
            "wall_s": round(f.wall_s, 3), "cpu_s": round(f.cpu_s, 3),
            "deterministic": f.deterministic}
