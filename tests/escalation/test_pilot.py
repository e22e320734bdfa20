"""The pilot report over a generated month of lane receipts, figures computed independently.

The month is generated here (seeded): requests in every lane, sandbox jobs of three kinds whose
code is stored as real job rows (``totals``: a pure expression that demotion takes; ``lookup``:
a bare call of a registered tool; ``explore``: open-ended code), outcomes and review states
drawn at random, and receipts outside the window that must not count. The test recomputes each
figure from its own records and compares it with the report, the JSON of ``formulane pilot
report`` and the HTML page (self-contained: no external reference).
"""

from __future__ import annotations

import io
import json
import random
import re
import uuid
from contextlib import redirect_stdout
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from formulane.escalation.contract import ArtifactRecord, SandboxJob
from formulane.escalation.lanes import DecisionRecord, LaneReceipt, RequestRecord
from formulane.escalation.pilot import Thresholds, pilot_report, render_html, render_table
from formulane.escalation.store import JobStore, open_store

NOW = datetime.now(timezone.utc).replace(microsecond=0)
KINDS = {
    "totals": ("round(price * qty, 2)", {"price": 2.5, "qty": 3}),
    "lookup": ("invoice_total(invoice_id=inv)", {"inv": "A1"}),
    "explore": ("import os\nfor name in os.listdir('.'):\n    print(name)", {}),
}
FAILURES = ["timeout_wall", "timeout_cpu", "cancelled", "unknown", "network_denied",
            "user_error", "missing_package"]


@dataclass
class Row:
    lane: str
    kind: str
    outcome: str
    has_value: bool
    files: int
    review: str
    wall_ms: float
    cpu_ms: float
    classes: tuple[str, ...]
    inside: bool


def _receipt(store: JobStore, row: Row, when: datetime) -> LaneReceipt:
    job_id = None
    code = None
    if row.lane == "sandbox":
        code, inputs = KINDS[row.kind]
        job = SandboxJob(idempotency_key=uuid.uuid4().hex, tenant="acme", principal="ana",
                         purpose="pilot", code=code, inputs=inputs)
        record, _ = store.create(job, "bubblewrap")
        job_id = record.job_id
    return LaneReceipt(
        request_id=uuid.uuid4().hex, created_at=when, lane=row.lane,  # type: ignore[arg-type]
        job_kind=row.kind, tenant="acme", principal="ana",
        request=RequestRecord(ask="pilot", code=code),
        decision=DecisionRecord(lane=row.lane, reasons=()),  # type: ignore[arg-type]
        runtime="test", outcome=row.outcome, has_value=row.has_value,
        files_created=tuple(ArtifactRecord(path=f"out/{i}.csv", size=1, sha256="0" * 64)
                            for i in range(row.files)),
        wall_ms=row.wall_ms, cpu_ms=row.cpu_ms, data_classes=row.classes, job_id=job_id,
        review_state=row.review)  # type: ignore[arg-type]


def generate(store: JobStore, seed: int, *, sandbox_share: float,
             bad: float) -> list[Row]:
    rng = random.Random(seed)
    rows: list[Row] = []
    for day in range(34):
        for _ in range(rng.randint(2, 9)):
            lane = rng.choices(["formula", "tool", "sandbox", "refuse", "postpone"],
                               [3, 2, sandbox_share * 10, 1, 0.5])[0]
            kind = rng.choice(list(KINDS)) if lane == "sandbox" else rng.choice(
                ["pricing", "renewal"])
            if lane == "sandbox":
                outcome = rng.choice(FAILURES) if rng.random() < bad else "succeeded"
            elif lane in ("refuse", "postpone"):
                outcome = "refused" if lane == "refuse" else "postponed"
            else:
                outcome = rng.choice(["succeeded"] * 9 + ["user_error"])
            row = Row(lane, kind, outcome, rng.random() < 0.8, rng.choice([0, 0, 1, 2]),
                      rng.choice(["accepted"] * 6 + ["needs_review", "rejected"]),
                      round(rng.uniform(1, 3000), 3), round(rng.uniform(0, 900), 3),
                      tuple(sorted(rng.sample(["public", "internal", "tenant"],
                                              rng.randint(0, 2)))) if lane not in (
                          "refuse", "postpone") else (),
                      inside=day < 30)
            when = NOW - timedelta(days=day, seconds=rng.randint(1, 86_000))
            receipt = _receipt(store, row, when)
            store.append_lane(receipt)
            if row.review != "needs_review":  # the review lands later, appended
                store.review(receipt.receipt_id, row.review, by="rita")
            rows.append(row)
    return rows


def expected(rows: list[Row], lane: str, kind: str | None = None) -> dict[str, float]:
    mine = [r for r in rows if r.inside and r.lane == lane and (kind is None or r.kind == kind)]
    ok = [r for r in mine if r.outcome == "succeeded"]
    return {
        "jobs": len(mine), "succeeded": len(ok),
        "useful": sum(1 for r in ok if (r.has_value or r.files) and r.review != "rejected"),
        "timeouts": sum(r.outcome in ("timeout_wall", "timeout_cpu") for r in mine),
        "cancelled": sum(r.outcome == "cancelled" for r in mine),
        "unknown": sum(r.outcome == "unknown" for r in mine),
        "blocked": sum(r.outcome in ("refused", "postponed", "network_denied") for r in mine),
        "corrections": sum(r.review == "rejected" for r in mine),
        "wall_s": sum(r.wall_ms for r in mine) / 1000, "cpu_s": sum(r.cpu_ms for r in mine) / 1000,
        "deterministic": sum(r.kind in ("totals", "lookup") for r in mine)
        if lane == "sandbox" else 0,
    }


def check_figures(report: object, rows: list[Row]) -> None:
    for lane in ("formula", "tool", "sandbox", "refuse", "postpone"):
        want = expected(rows, lane)
        got = report.by_lane.get(lane)  # type: ignore[attr-defined]
        assert got is not None and got.jobs == want["jobs"], lane
        for key in ("succeeded", "useful", "timeouts", "cancelled", "unknown", "blocked",
                    "corrections", "deterministic"):
            assert getattr(got, key) == want[key], (lane, key)
        assert got.wall_s == pytest.approx(want["wall_s"])
        assert got.cpu_s == pytest.approx(want["cpu_s"])
        classes: dict[str, int] = {}
        for r in rows:
            if r.inside and r.lane == lane:
                for c in r.classes:
                    classes[c] = classes.get(c, 0) + 1
        assert dict(got.classes) == classes
    for kind in KINDS:
        want = expected(rows, "sandbox", kind)
        got = report.by_kind[("sandbox", kind)]  # type: ignore[attr-defined]
        assert (got.jobs, got.succeeded, got.useful, got.deterministic) == (
            want["jobs"], want["succeeded"], want["useful"], want["deterministic"])


def independent_reading(rows: list[Row], t: Thresholds) -> str:
    s = expected(rows, "sandbox")
    asked = sum(1 for r in rows if r.inside)
    postponed = expected(rows, "postpone")["jobs"] / asked
    if s["jobs"] < t.min_sandbox_jobs:
        return "no-go"
    completion, useful = s["succeeded"] / s["jobs"], s["useful"] / s["jobs"]
    if completion < t.nogo_completion or useful < t.nogo_useful or \
            postponed > t.nogo_max_postponed:
        return "no-go"
    if (completion >= t.go_completion and useful >= t.go_useful
            and s["deterministic"] / s["jobs"] <= t.go_max_deterministic
            and s["unknown"] / s["jobs"] <= t.go_max_unknown):
        return "go"
    return "narrow"


@pytest.mark.parametrize("seed,bad,reading", [(7, 0.25, "narrow"), (11, 0.6, "no-go")])
def test_generated_month(tmp_path: Path, seed: int, bad: float, reading: str) -> None:
    store = open_store(tmp_path / "jobs.sqlite3")
    try:
        rows = generate(store, seed, sandbox_share=0.6, bad=bad)
        report = pilot_report(store, since=NOW - timedelta(days=30),
                              until=NOW + timedelta(seconds=1),
                              catalog_names=["invoice_total"])
    finally:
        store.close()
    assert report.total.jobs == sum(r.inside for r in rows)
    check_figures(report, rows)
    det = expected(rows, "sandbox")
    assert report.deterministic_share == pytest.approx(det["deterministic"] / det["jobs"])
    assert report.reading == independent_reading(rows, report.thresholds) == reading
    assert "explore" not in report.move_kinds and "totals" in report.move_kinds
    # without the tool registered, lookups are no longer deterministic
    store = open_store(tmp_path / "jobs.sqlite3")
    try:
        bare = pilot_report(store, since=NOW - timedelta(days=30),
                            until=NOW + timedelta(seconds=1))
    finally:
        store.close()
    assert bare.sandbox.deterministic == expected(rows, "sandbox", "totals")["jobs"]


def test_a_clean_month_reads_go(tmp_path: Path) -> None:
    store = open_store(tmp_path / "jobs.sqlite3")
    try:
        rng = random.Random(3)
        rows = []
        for i in range(40):
            row = Row("sandbox", "explore", "succeeded", True, 1, "accepted", 100.0, 50.0,
                      ("internal",), True)
            store.append_lane(_receipt(store, row, NOW - timedelta(hours=i * rng.randint(1, 9))))
            rows.append(row)
        report = pilot_report(store, since=NOW - timedelta(days=30),
                              until=NOW + timedelta(seconds=1))
    finally:
        store.close()
    assert report.reading == independent_reading(rows, report.thresholds) == "go"
    assert report.keep_kinds == ["explore"]


def test_report_cli_table_json_and_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from formulane.cli import main

    store = open_store(tmp_path / "jobs.sqlite3")
    try:
        rows = generate(store, 5, sandbox_share=0.6, bad=0.3)
    finally:
        store.close()
    monkeypatch.setenv("FORMULANE_DATA_DIR", str(tmp_path))
    out = io.StringIO()
    html_path = tmp_path / "report.html"
    with redirect_stdout(out):
        assert main(["pilot", "report", "--since", "30d", "--json", "--html",
                     str(html_path)]) == 0
    data = json.loads(out.getvalue())
    want = expected(rows, "sandbox")
    got = data["lanes"]["sandbox"]
    # No tool registered here: only the pure expressions could have been deterministic.
    assert (got["jobs"], got["succeeded"], got["useful"], got["deterministic"]) == (
        want["jobs"], want["succeeded"], want["useful"],
        expected(rows, "sandbox", "totals")["jobs"])
    page = html_path.read_text()
    assert page.count("<svg") == 4 and f'id="reading"' in page
    assert data["reading"] in page
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page)
    assert refs == []  # nothing fetched from anywhere
    assert re.findall(r"https?://(?!www\.w3\.org/2000/svg)", page) == []
    out = io.StringIO()
    with redirect_stdout(out):  # the application's tool named: lookups count too
        assert main(["pilot", "report", "--since", "30d", "--json", "--tool",
                     "invoice_total"]) == 0
    assert json.loads(out.getvalue())["lanes"]["sandbox"]["deterministic"] == \
        want["deterministic"]
    store = open_store(tmp_path / "jobs.sqlite3")
    try:
        report = pilot_report(store, since=NOW - timedelta(days=30),
                              until=NOW + timedelta(seconds=1))
    finally:
        store.close()
    console = Console(record=True, width=240)
    render_table(report, console)
    text = console.export_text()
    assert f"Reading: {report.reading}" in text
    assert re.search(rf"sandbox\s+│\s+all\s+│\s+{want['jobs']}\s+│", text)
    assert render_html(report).count("<tr>") == 1 + len(report.by_lane) + len(report.by_kind)
