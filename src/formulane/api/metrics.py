"""What decides whether a lane earns its place: Prometheus metrics and a per-tenant time series.

Contract: `Metrics` owns one `CollectorRegistry` per app (no process-global state, so two apps
in one process do not mix). Counters: HTTP requests by route and status; requests per lane
(formula, batch, tool, sandbox, refuse) with their outcome; jobs by outcome, timeouts and
cancellations; refused and blocked actions by reason; escalation requests by the lane the router
chose, and the share of them a formula or a tool could have done. ``approvals_waiting`` is read
from the tool store at scrape time (so it is right across processes). `LaneSeries` keeps the
same lane counts per tenant in 10-second buckets for the last hour, in this process, for the
playground's dashboard (``GET /v1/metrics/lanes``): a tenant sees only its own.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any, Callable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

BUCKET_S = 10
KEEP_BUCKETS = 360
# The series key under which escalation requests are counted by the lane they were routed to.
_ESCALATION = "@escalation"


class LaneSeries:
    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        # tenant -> bucket start -> (lane, outcome) -> count
        self._data: dict[str, dict[int, dict[tuple[str, str], int]]] = defaultdict(dict)

    def add(self, tenant: str, lane: str, outcome: str) -> None:
        bucket = int(self.clock()) // BUCKET_S * BUCKET_S
        with self._lock:
            per = self._data[tenant]
            counts = per.get(bucket)
            if counts is None:
                counts = per[bucket] = defaultdict(int)
                cutoff = bucket - BUCKET_S * KEEP_BUCKETS
                for old in [b for b in per if b < cutoff]:
                    del per[old]
            counts[(lane, outcome)] += 1

    def add_escalation(self, tenant: str, routed_to: str) -> None:
        """One escalation request and the lane the router chose for it: a request routed to
        the formula or tool lane is one a formula or a tool could do (the dashboard's share)."""
        self.add(tenant, _ESCALATION, routed_to)

    def series(self, tenant: str, since_s: int = 3600) -> list[dict[str, Any]]:
        """Rows ``{t, lanes: {lane: {outcome: n}}, escalations: {routed_to: n}}``, oldest first."""
        cutoff = int(self.clock()) - since_s
        with self._lock:
            per = dict(self._data.get(tenant, {}))
            rows: list[dict[str, Any]] = []
            for bucket in sorted(b for b in per if b >= cutoff):
                lanes: dict[str, dict[str, int]] = defaultdict(dict)
                for (lane, outcome), n in per[bucket].items():
                    lanes[lane][outcome] = n
                escalations = lanes.pop(_ESCALATION, {})
                rows.append({"t": bucket, "lanes": {k: dict(v) for k, v in lanes.items()},
                             "escalations": dict(escalations)})
        return rows


class Metrics:
    def __init__(self, approvals_waiting: Callable[[], int] | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.http = Counter("formulane_http_requests", "HTTP requests by route and status",
                            ["method", "route", "status"], registry=r)
        self.http_seconds = Histogram(
            "formulane_http_request_seconds", "HTTP request latency by route", ["route"],
            buckets=(.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 10), registry=r)
        self.lane = Counter("formulane_lane_requests", "work done per lane, by outcome",
                            ["lane", "outcome"], registry=r)
        self.rows = Counter("formulane_batch_rows", "rows evaluated by batch requests",
                            registry=r)
        self.jobs = Counter("formulane_jobs", "sandbox jobs by final outcome", ["outcome"],
                            registry=r)
        self.timeouts = Counter("formulane_lane_timeouts", "work stopped by a time limit",
                                ["lane"], registry=r)
        self.cancellations = Counter("formulane_lane_cancellations", "work cancelled",
                                     ["lane"], registry=r)
        self.refusals = Counter("formulane_refusals", "refused or blocked actions by reason",
                                ["lane", "reason"], registry=r)
        self.escalations = Counter(
            "formulane_escalations", "escalation requests by the lane the router chose",
            ["routed_to"], registry=r)
        self.series = LaneSeries()
        self._approvals = approvals_waiting
        registry = self

        class _Derived:
            def collect(self) -> Any:
                waiting = GaugeMetricFamily("formulane_approvals_waiting",
                                            "tool calls waiting for an approval (all tenants)")
                waiting.add_metric([], float(registry._approvals() if registry._approvals else 0))
                yield waiting
                share = GaugeMetricFamily(
                    "formulane_escalations_smaller_lane_share",
                    "share of escalation requests a formula or a tool could do (0..1)")
                share.add_metric([], registry.smaller_lane_share())
                yield share

            def describe(self) -> Any:
                return []

        r.register(_Derived())

    def count(self, tenant: str, lane: str, outcome: str) -> None:
        self.lane.labels(lane, outcome).inc()
        self.series.add(tenant, lane, outcome)

    def smaller_lane_share(self) -> float:
        total = smaller = 0.0
        for metric in self.escalations.collect():
            for sample in metric.samples:
                if sample.name.endswith("_total"):
                    total += sample.value
                    if sample.labels.get("routed_to") in ("formula", "tool"):
                        smaller += sample.value
        return smaller / total if total else 0.0

    def observe_http(self, method: str, route: str, status: int, seconds: float) -> None:
        self.http.labels(method, route, str(status)).inc()
        self.http_seconds.labels(route).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
