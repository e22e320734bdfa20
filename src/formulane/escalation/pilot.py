"""The 30-day pilot report: did each lane earn its place? Read back from the lane receipts.

Contract: `pilot_report(store, since=..., until=..., catalog_names=..., thresholds=...)` reads
every `LaneReceipt` in the window (first settling submitted jobs that ended without anyone
asking for their result, see `settle`) and returns a `PilotReport`: per lane and per job kind, the
jobs, completion (share ``succeeded``), useful results (succeeded, a declared value or a file
created, and not rejected by review), timeouts (``timeout_wall``/``timeout_cpu``),
cancellations (``cancelled``) and ``unknown`` endings, blocked actions (refused or postponed
requests and ``network_denied`` jobs: the guard worked), human corrections (receipts whose
review state is ``rejected``), the data classes that crossed each lane's boundary, runtime cost
(wall and CPU seconds); and the share of sandbox jobs that a deterministic lane could have done:
each sandbox job's code is re-checked after the fact against demotion (the job's own inputs,
from the job store) and against the tool registry's names today (a bare call of a registered or
pinned tool). The reading follows the seed's days 27-30: ``go`` (the sandbox lane completes and
is useful, few jobs belonged elsewhere, failures are visible), ``no-go`` (too little completes or
too much is unclear), otherwise ``narrow`` (keep the kinds that work, move the rest to
deterministic lanes), with the figures and thresholds behind it. `render_table` prints it with
rich; `render_html` writes a self-contained page with inline SVG charts (no external requests).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Literal

from ..errors import EscalationError
from .lanes import LaneReceipt
from .store import JobStore

Reading = Literal["go", "narrow", "no-go"]
LANES = ("tool", "formula", "sandbox", "refuse", "postpone")
#: The report holds one window's receipts in memory: bounded before reading (configurable).
MAX_RECEIPTS = 500_000


@dataclass(frozen=True)
class Thresholds:
    """The reading's bars (configurable; defaults are the ones docs/escalation.md explains)."""

    go_completion: float = 0.8
    go_useful: float = 0.6
    go_max_deterministic: float = 0.2
    go_max_unknown: float = 0.02
    nogo_completion: float = 0.5
    nogo_useful: float = 0.3
    nogo_max_postponed: float = 0.3
    min_sandbox_jobs: int = 10


@dataclass
class Figures:
    jobs: int = 0
    succeeded: int = 0
    useful: int = 0
    timeouts: int = 0
    cancelled: int = 0
    unknown: int = 0
    blocked: int = 0
    corrections: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    classes: Counter[str] = field(default_factory=Counter[str])
    deterministic: int = 0  # sandbox jobs a tool or formula could have done (re-checked)

    @property
    def completion(self) -> float:
        return self.succeeded / self.jobs if self.jobs else 0.0

    @property
    def useful_rate(self) -> float:
        return self.useful / self.jobs if self.jobs else 0.0

    def add(self, r: LaneReceipt, deterministic: bool) -> None:
        self.jobs += 1
        ok = r.outcome == "succeeded"
        self.succeeded += ok
        self.useful += ok and (r.has_value or bool(r.files_created)) and \
            r.review_state != "rejected"
        self.timeouts += r.outcome in ("timeout_wall", "timeout_cpu")
        self.cancelled += r.outcome == "cancelled"
        self.unknown += r.outcome == "unknown"
        self.blocked += r.outcome in ("refused", "postponed", "network_denied")
        self.corrections += r.review_state == "rejected"
        self.wall_s += (r.wall_ms or 0.0) / 1000
        self.cpu_s += (r.cpu_ms or 0.0) / 1000
        self.classes.update(r.data_classes)
        self.deterministic += deterministic


@dataclass
class PilotReport:
    since: datetime
    until: datetime
    total: Figures
    by_lane: dict[str, Figures]
    by_kind: dict[tuple[str, str], Figures]
    by_day: dict[str, Counter[str]]
    reading: Reading
    why: list[str]
    keep_kinds: list[str]
    move_kinds: list[str]
    thresholds: Thresholds

    @property
    def sandbox(self) -> Figures:
        return self.by_lane.get("sandbox", Figures())

    @property
    def deterministic_share(self) -> float:
        s = self.sandbox
        return s.deterministic / s.jobs if s.jobs else 0.0


_SPAN = re.compile(r"^(\d{1,4})([dhw])$")


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``30d``, ``12h``, ``2w`` or an ISO date/datetime: the start of the window (UTC)."""
    now = now or datetime.now(timezone.utc)
    match = _SPAN.match(text.strip())
    if match:
        n, unit = int(match.group(1)), match.group(2)
        return now - {"d": timedelta(days=n), "h": timedelta(hours=n),
                      "w": timedelta(weeks=n)}[unit]
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise EscalationError(f"--since {text!r} is neither a span (30d, 12h, 2w) nor an ISO "
                              "date", code="E603") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def could_be_deterministic(store: JobStore, receipt: LaneReceipt,
                           catalog_names: set[str]) -> bool:
    """Re-check one sandbox job: would demotion or a registered tool take it today?"""
    from .demotion import demote
    from .router import code_as_tool_call

    code: str | None = None
    inputs: dict[str, Any] = {}
    record = store.get(receipt.job_id) if receipt.job_id else None
    if record is not None:
        code, inputs = record.job.source, dict(record.job.inputs)
    elif receipt.request.code is not None:
        code = receipt.request.code
    if code is None:
        return False
    if code_as_tool_call(code, inputs, catalog_names) is not None:
        return True
    try:
        demote(code, inputs)
        return True
    except EscalationError:
        return False


def settle(store: JobStore) -> int:
    """Write the lane receipts of submitted sandbox jobs that ended but were never finished
    (nobody asked for their result): the report counts every job. Returns how many."""
    from .router import Router

    written = 0
    for job_id in store.unsettled():
        Router(store=store).finish(job_id)
        written += 1
    return written


def pilot_report(store: JobStore, *, since: datetime, until: datetime | None = None,
                 tenant: str | None = None, catalog_names: Iterable[str] = (),
                 thresholds: Thresholds | None = None,
                 max_receipts: int = MAX_RECEIPTS) -> PilotReport:
    until = until or datetime.now(timezone.utc)
    limits = thresholds or Thresholds()
    names = set(catalog_names)
    total = Figures()
    by_lane: dict[str, Figures] = {}
    by_kind: dict[tuple[str, str], Figures] = {}
    by_day: dict[str, Counter[str]] = {}
    settle(store)
    receipts = store.lane_receipts(since=since, until=until, tenant=tenant,
                                   limit=max_receipts + 1)
    if len(receipts) > max_receipts:
        raise EscalationError(f"more than {max_receipts} receipts in the window",
                              code="E603", hint="narrow --since/--until or --tenant, or raise "
                                                "--max-receipts")
    for r in receipts:
        det = r.lane == "sandbox" and could_be_deterministic(store, r, names)
        for figures in (total, by_lane.setdefault(r.lane, Figures()),
                        by_kind.setdefault((r.lane, r.job_kind), Figures())):
            figures.add(r, det)
        by_day.setdefault(r.created_at.astimezone(timezone.utc).date().isoformat(),
                          Counter())[r.lane] += 1
    reading, why, keep, move = _read(total, by_lane, by_kind, limits)
    return PilotReport(since, until, total, by_lane, by_kind, dict(sorted(by_day.items())),
                       reading, why, keep, move, limits)


def _read(total: Figures, by_lane: dict[str, Figures], by_kind: dict[tuple[str, str], Figures],
          t: Thresholds) -> tuple[Reading, list[str], list[str], list[str]]:
    s = by_lane.get("sandbox", Figures())
    postponed = by_lane.get("postpone", Figures()).jobs
    asked = total.jobs
    if s.jobs < t.min_sandbox_jobs:
        return "no-go", [f"only {s.jobs} sandbox job(s) in the window (at least "
                         f"{t.min_sandbox_jobs} are needed to judge the lane)"], [], []
    det = s.deterministic / s.jobs
    unknown = s.unknown / s.jobs
    postponed_share = postponed / asked if asked else 0.0
    figures = [f"sandbox completion {s.completion:.0%}", f"useful {s.useful_rate:.0%}",
               f"deterministic lanes could have done {det:.0%}",
               f"unknown endings {unknown:.1%}", f"postponed {postponed_share:.0%} of requests"]
    keep = sorted(k for (lane, k), f in by_kind.items() if lane == "sandbox"
                  and f.completion >= t.go_completion and f.useful_rate >= t.go_useful
                  and (f.deterministic / f.jobs if f.jobs else 0) <= t.go_max_deterministic)
    move = sorted(k for (lane, k), f in by_kind.items() if lane == "sandbox"
                  and f.jobs and f.deterministic / f.jobs > t.go_max_deterministic)
    if (s.completion < t.nogo_completion or s.useful_rate < t.nogo_useful
            or postponed_share > t.nogo_max_postponed):
        return "no-go", figures + [
            "below the no-go bars: completion < {:.0%}, useful < {:.0%} or postponed > {:.0%}"
            .format(t.nogo_completion, t.nogo_useful, t.nogo_max_postponed)], keep, move
    if (s.completion >= t.go_completion and s.useful_rate >= t.go_useful
            and det <= t.go_max_deterministic and unknown <= t.go_max_unknown):
        return "go", figures + ["every go bar met"], keep, move
    return "narrow", figures + ["between the bars: keep the job kinds that work in the sandbox, "
                                "move the rest to tools or formulas"], keep, move


# ------------------------------------------------------------------------------ rendering


def _rows(report: PilotReport) -> list[tuple[str, str, Figures]]:
    rows = [(lane, "all", report.by_lane[lane]) for lane in LANES if lane in report.by_lane]
    rows += [(lane, kind, f) for (lane, kind), f in sorted(report.by_kind.items())]
    return rows


COLUMNS = ("lane", "kind", "jobs", "completed", "useful", "timeouts", "cancelled", "unknown",
           "blocked", "corrections", "data classes", "wall s", "cpu s", "could be det.")


def row_cells(lane: str, kind: str, f: Figures) -> list[str]:
    det = f"{f.deterministic}/{f.jobs}" if lane == "sandbox" else "-"
    return [lane, kind, str(f.jobs), f"{f.completion:.0%}", f"{f.useful_rate:.0%}",
            str(f.timeouts), str(f.cancelled), str(f.unknown), str(f.blocked),
            str(f.corrections), ", ".join(f"{c} {n}" for c, n in sorted(f.classes.items())),
            f"{f.wall_s:.1f}", f"{f.cpu_s:.1f}", det]


_SHORT = {"completed": "ok", "timeouts": "t/o", "cancelled": "cancel", "unknown": "unkn",
          "corrections": "rejected", "could be det.": "det."}


def render_table(report: PilotReport, console: Any = None) -> None:
    """Two tables (outcomes; classes and cost), so an 80-column terminal shows every figure."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    split = COLUMNS.index("data classes")
    title = f"Pilot report {report.since:%Y-%m-%d} to {report.until:%Y-%m-%d}"
    for caption, names, cells in (
            (title, COLUMNS[:split], slice(0, split)),
            ("Data classes that crossed, runtime cost, jobs a deterministic lane could have "
             "done", COLUMNS[:2] + COLUMNS[split:], slice(split, None))):
        table = Table(title=caption)
        for name in names:
            table.add_column(_SHORT.get(name, name), no_wrap=name in ("lane", "kind"),
                             justify="left" if name in ("lane", "kind", "data classes")
                             else "right", overflow="fold")
        for lane, kind, f in _rows(report):
            row = row_cells(lane, kind, f)
            table.add_row(*(row[:2] + row[cells] if cells.start else row[cells]),
                          style="bold" if kind == "all" else None)
        console.print(table)
    console.print("ok: completed; t/o: timeouts; cancel: cancelled; unkn: ended unknown; "
                  "blocked: refused, postponed or network denied; rejected: review rejected; "
                  "det.: sandbox jobs a tool or formula could have done", style="dim")
    colour = {"go": "green", "narrow": "yellow", "no-go": "red"}[report.reading]
    console.print(f"[bold {colour}]Reading: {report.reading}[/]")
    for line in report.why:
        console.print(f"  - {line}")
    if report.keep_kinds:
        console.print(f"  keep in the sandbox: {', '.join(report.keep_kinds)}")
    if report.move_kinds:
        console.print(f"  move to a tool or formula: {', '.join(report.move_kinds)}")


_COLOURS = {"tool": "#4c78a8", "formula": "#54a24b", "sandbox": "#f58518", "refuse": "#e45756",
            "postpone": "#b279a2"}


def _bar_chart(title: str, items: list[tuple[str, float]], unit: str = "%") -> str:
    width, bar_h, gap, left = 520, 18, 6, 170
    height = 30 + len(items) * (bar_h + gap)
    top = max([v for _, v in items] + [1e-9]) if unit != "%" else 1.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" aria-label="{html.escape(title)}">',
             f'<text x="0" y="16" font-size="13" font-weight="bold">{html.escape(title)}</text>']
    for i, (label, value) in enumerate(items):
        y = 26 + i * (bar_h + gap)
        w = (width - left - 60) * (value / top if top else 0)
        shown = f"{value:.0%}" if unit == "%" else f"{value:g}"
        parts.append(f'<text x="0" y="{y + 13}" font-size="12">{html.escape(label)}</text>'
                     f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                     f'fill="#f58518"/><text x="{left + w + 4:.1f}" y="{y + 13}" '
                     f'font-size="12">{shown}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _daily_chart(report: PilotReport) -> str:
    days = list(report.by_day)
    width, height, left, bottom = 640, 220, 30, 30
    top = max([sum(c.values()) for c in report.by_day.values()] + [1])
    step = (width - left) / max(len(days), 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 40}" '
             'role="img" aria-label="requests per day by lane">',
             '<text x="0" y="14" font-size="13" font-weight="bold">Requests per day, by lane'
             '</text>']
    for i, day in enumerate(days):
        y: float = height
        for lane in LANES:
            n = report.by_day[day].get(lane, 0)
            if not n:
                continue
            h = (height - bottom) * n / top
            y -= h
            parts.append(f'<rect x="{left + i * step:.1f}" y="{y:.1f}" width="{step * 0.8:.1f}" '
                         f'height="{h:.1f}" fill="{_COLOURS[lane]}"><title>{day} {lane}: {n}'
                         '</title></rect>')
    for j, lane in enumerate(LANES):
        parts.append(f'<rect x="{left + j * 110}" y="{height + 18}" width="10" height="10" '
                     f'fill="{_COLOURS[lane]}"/><text x="{left + j * 110 + 14}" '
                     f'y="{height + 27}" font-size="12">{lane}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(report: PilotReport) -> str:
    """One self-contained HTML page: tables, the reading, inline SVG charts."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row_cells(*row))
                   + "</tr>" for row in _rows(report))
    sandbox_kinds = [(k, f) for (lane, k), f in sorted(report.by_kind.items())
                     if lane == "sandbox"]
    charts = [
        _daily_chart(report),
        _bar_chart("Completion by lane", [(lane, f.completion)
                                          for lane, f in report.by_lane.items()]),
        _bar_chart("Sandbox useful rate by job kind", [(k, f.useful_rate)
                                                       for k, f in sandbox_kinds]),
        _bar_chart("Sandbox jobs a deterministic lane could have done, by kind",
                   [(k, f.deterministic / f.jobs if f.jobs else 0.0) for k, f in sandbox_kinds]),
    ]
    why = "".join(f"<li>{html.escape(w)}</li>" for w in report.why)
    extra = ""
    if report.keep_kinds:
        extra += f"<p>Keep in the sandbox: {html.escape(', '.join(report.keep_kinds))}</p>"
    if report.move_kinds:
        extra += f"<p>Move to a tool or formula: {html.escape(', '.join(report.move_kinds))}</p>"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>formulane pilot report</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;color:#222}}
table{{border-collapse:collapse;font-size:13px}}td,th{{border:1px solid #ccc;padding:3px 6px}}
td:nth-child(n+3){{text-align:right}}.reading{{font-size:1.4em;font-weight:bold}}
.go{{color:#2a7d2a}}.narrow{{color:#a67c00}}.no-go{{color:#b22}}svg{{display:block;margin:1em 0}}
</style></head><body>
<h1>Pilot report</h1>
<p>{report.since:%Y-%m-%d %H:%M} to {report.until:%Y-%m-%d %H:%M} UTC, {report.total.jobs}
requests.</p>
<p class="reading {report.reading}" id="reading">Reading: {report.reading}</p>
<ul>{why}</ul>{extra}
<table id="figures"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>
{''.join(charts)}
</body></html>
"""
