// Jobs (the escalation lane) and the lanes dashboard. A job is described in a form (the ask,
// the code, inputs, limits, network), the router's decision and its reasons are shown before
// anything runs, "Run" submits it, its state follows live (server-sent events over fetch),
// "Cancel" stops it, the receipt shows the limits requested next to those enforced, the
// network policy, the outcome and its basis, and artifacts download by id. The dashboard
// draws the lanes' metrics over time with uPlot.
import uPlot from "uplot";
import { api, R, streamEvents } from "./api.js";
import { h, clear, field, toast, fmtTime, saveBlob } from "./ui.js";

const SAMPLE = "import json, sys\nprint(json.dumps({'total': sum(range(10))}))\n";
const TERMINAL = new Set(["succeeded", "failed", "cancelled", "timed_out", "refused", "unknown", "done", "error", "completed", "killed"]);

function kv(rows) {
  return h("dl", { class: "kv" }, rows.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) => [h("dt", {}, k), h("dd", {}, typeof v === "object" ? h("code", {}, JSON.stringify(v)) : String(v))]));
}

function limitsTable(receipt) {
  const req = receipt.limits_requested || (receipt.limits && receipt.limits.requested) || {};
  const enf = receipt.limits_enforced || (receipt.limits && receipt.limits.enforced) || {};
  const keys = [...new Set([...Object.keys(req), ...Object.keys(enf)])];
  if (!keys.length) return null;
  return h("table", { class: "grid", id: "limits" }, h("caption", {}, "Limits"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Limit"), h("th", { scope: "col" }, "Requested"), h("th", { scope: "col" }, "Enforced"))),
    h("tbody", {}, keys.map((k) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, JSON.stringify(req[k] ?? null)), h("td", {}, JSON.stringify(enf[k] ?? null))))));
}

export function renderJobs(root) {
  const ask = h("input", { id: "job-ask", value: "Sum the numbers 0 to 9" });
  const code = h("textarea", { id: "job-code", rows: 6, class: "mono", spellcheck: "false" }, SAMPLE);
  const inputs = h("textarea", { id: "job-inputs", rows: 2, class: "mono" }, "{}");
  const wall = h("input", { id: "job-wall", type: "number", min: "0.1", step: "0.1", value: "10" });
  const memory = h("input", { id: "job-memory", type: "number", min: "16", step: "16", value: "256" });
  const network = h("select", { id: "job-network" }, ["none", "allowlist"].map((n) => h("option", { value: n }, n)));
  const decision = h("div", { id: "decision", "aria-live": "polite" });
  const jobBox = h("div", { id: "job", "aria-live": "polite" });
  const recent = h("div", { id: "job-list" });
  let stream = null;

  function request() {
    let parsed = {};
    try { parsed = JSON.parse(inputs.value || "{}"); } catch (e) { throw new Error(`inputs: ${e.message}`); }
    return {
      ask: ask.value, code: code.value, inputs: parsed,
      limits: { wall_time_s: Number(wall.value), memory_mb: Number(memory.value) },
      network: { mode: network.value },
      idempotency_key: (crypto.randomUUID ? crypto.randomUUID() : String(Date.now())).replace(/-/g, ""),
    };
  }

  async function route() {
    let body;
    try { body = request(); } catch (e) { toast(e.message, "error"); return null; }
    try {
      const r = await api.post(R.route, body);
      const d = r.decision || r;
      clear(decision, h("div", { class: "card inner" }, h("h3", {}, "Decision: ", h("strong", { id: "decision-lane" }, d.lane)),
        h("ul", { id: "reasons" }, (d.reasons || []).map((x) => h("li", {}, h("code", {}, x.code), ` ${x.message}`))),
        d.formula ? h("p", {}, "A formula can do it: ", h("code", {}, d.formula)) : null,
        d.tool_call ? h("p", {}, "A tool can do it: ", h("code", {}, JSON.stringify(d.tool_call))) : null));
      return body;
    } catch (e) { clear(decision, h("p", { class: "bad", role: "alert" }, `${e.code}: ${e.message}`)); return null; }
  }

  async function submit() {
    const body = await route();
    if (!body) return;
    try {
      const r = await api.post(R.jobs, body);
      const id = r.id || r.job_id || (r.job && (r.job.id || r.job.job_id));
      follow(id, r);
      loadRecent();
    } catch (e) { clear(jobBox, h("p", { class: "bad", role: "alert" }, `${e.code}: ${e.message}`)); }
  }

  function showJob(id, job) {
    const state = job.state || job.status || "submitted";
    const done = TERMINAL.has(state);
    clear(jobBox, h("div", { class: "card inner", dataset: { job: id, state } },
      h("h3", {}, "Job ", h("code", {}, String(id).slice(0, 16)), " · ", h("strong", { id: "job-state" }, state)),
      job.lane ? h("p", {}, `lane: ${job.lane}`) : null,
      h("div", { class: "row" },
        h("button", { type: "button", id: "cancel-job", class: "danger", disabled: done, onclick: () => cancel(id) }, "Cancel"),
        h("button", { type: "button", id: "read-receipt", onclick: () => receipt(id) }, "Receipt")),
      h("div", { id: "receipt" })));
  }

  function follow(id, first) {
    if (stream) stream.abort();
    stream = new AbortController();
    showJob(id, first || {});
    const ctl = stream;
    streamEvents(R.jobEvents(id), ({ data }) => {
      const job = data && (data.job || data);
      if (job && typeof job === "object") {
        showJob(id, job);
        if (TERMINAL.has(job.state || job.status)) { ctl.abort(); receipt(id); loadRecent(); }
      }
    }, ctl.signal).catch(async () => {
      if (ctl.signal.aborted) return;
      // No stream (a proxy that buffers, say): poll instead.
      for (let i = 0; i < 120 && !ctl.signal.aborted; i++) {
        try { const j = await api.get(R.job(id)); showJob(id, j.job || j); if (TERMINAL.has((j.job || j).state || (j.job || j).status)) { receipt(id); loadRecent(); return; } } catch { return; }
        await new Promise((res) => setTimeout(res, 500));
      }
    });
  }

  async function cancel(id) {
    try { await api.post(R.jobCancel(id), {}); toast("Cancel requested"); } catch (e) { toast(`${e.code}: ${e.message}`, "error"); }
    try { const j = await api.get(R.job(id)); showJob(id, j.job || j); } catch { /* the stream shows it */ }
  }

  async function receipt(id) {
    const box = jobBox.querySelector("#receipt");
    if (!box) return;
    try {
      const r = await api.get(R.jobReceipt(id));
      const rc = r.receipt || r;
      let arts = [];
      try { const a = await api.get(R.jobArtifacts(id)); arts = a.artifacts || a.items || (Array.isArray(a) ? a : []); } catch { arts = []; }
      clear(box, h("h4", {}, "Receipt"),
        kv([["Outcome", rc.outcome || rc.status], ["Basis", rc.outcome_basis || rc.basis], ["Backend", rc.backend], ["Isolation", rc.isolation],
          ["Network", rc.network_policy || rc.network], ["Exit", rc.exit_code], ["Wall time (s)", rc.wall_time_s ?? rc.duration_s], ["Started", fmtTime(rc.started_at)]]),
        limitsTable(rc),
        arts.length ? h("ul", { id: "artifacts" }, arts.map((a) => h("li", {}, h("button", { type: "button", class: "linkish", onclick: async () => {
          const res = await api.raw("GET", R.jobArtifact(id, a.id || a.artifact_id), { headers: { Accept: "*/*" } });
          saveBlob(await res.blob(), a.name || a.path || "artifact");
        } }, `Download ${a.name || a.path || a.id}`), a.size !== undefined ? ` (${a.size} bytes)` : "")))
          : h("p", { class: "muted" }, "No artifact."),
        h("details", {}, h("summary", {}, "Receipt as JSON"), h("pre", { class: "json" }, JSON.stringify(rc, null, 2))));
    } catch (e) { clear(box, h("p", { class: "muted" }, `No receipt yet (${e.message}).`)); }
  }

  async function loadRecent() {
    try {
      const r = await api.get(R.jobs);
      const items = r.jobs || r.items || (Array.isArray(r) ? r : []);
      clear(recent, items.length ? h("ul", {}, items.slice(0, 20).map((j) => {
        const id = j.id || j.job_id;
        return h("li", {}, h("button", { type: "button", class: "linkish", onclick: () => follow(id, j) }, String(id).slice(0, 12)), ` ${j.state || j.status} · ${fmtTime(j.created_at || j.submitted_at)}`);
      })) : h("p", { class: "muted" }, "No job yet."));
    } catch (e) { clear(recent, h("p", { class: "muted" }, `Jobs list unavailable: ${e.message}`)); }
  }

  clear(root, h("h1", {}, "Jobs"),
    h("div", { class: "cols" },
      h("div", { class: "col-main" },
        h("section", { class: "card", "aria-labelledby": "job-h" }, h("h2", { id: "job-h" }, "New job"),
          field("Ask", ask), field("Code (Python, runs in the sandbox)", code), field("Inputs (JSON object)", inputs),
          h("div", { class: "row" }, field("Wall time (s)", wall), field("Memory (MB)", memory), field("Network", network)),
          h("div", { class: "row" }, h("button", { type: "button", id: "route-job", onclick: route }, "See the decision"), h("button", { type: "button", class: "primary", id: "submit-job", onclick: submit }, "Run")),
          decision, jobBox)),
      h("div", { class: "col-side" }, h("section", { class: "card", "aria-labelledby": "recent-h" }, h("h2", { id: "recent-h" }, "Recent jobs"), recent))));
  loadRecent();
  return () => { if (stream) stream.abort(); };
}

/** Time series from /v1/metrics/lanes ({series: [{t, lanes: {lane: {outcome: n}}}]}):
 * jobs per lane, per outcome, and the rare outcomes (timeouts, cancellations, refusals). */
export function lanesSeries(m) {
  const rows = (m && m.series) || [];
  const t = rows.map((r) => r.t);
  const perLane = {}, perOutcome = {};
  rows.forEach((r, i) => {
    for (const [lane, outcomes] of Object.entries(r.lanes || {})) {
      for (const [outcome, n] of Object.entries(outcomes)) {
        (perLane[lane] ||= new Array(rows.length).fill(0))[i] += n;
        (perOutcome[outcome] ||= new Array(rows.length).fill(0))[i] += n;
      }
    }
  });
  const rare = Object.fromEntries(Object.entries(perOutcome).filter(([k]) => /timeout|timed_out|cancel|refus|block|denied|unknown/i.test(k)));
  const avoidable = Object.fromEntries(Object.entries(perOutcome).filter(([k]) => /could|avoidable/i.test(k)));
  return { t, groups: [["Requests and jobs per lane", perLane], ["Outcomes", perOutcome], ["Timeouts, cancellations, refusals", rare], ["Escalated jobs a formula or tool could have done", avoidable]] };
}

const COLORS = ["#1f4e79", "#b35900", "#2e7d32", "#8e24aa", "#c62828", "#00838f", "#5d4037", "#455a64"];

export function renderLanes(root) {
  const charts = h("div", { class: "charts", id: "charts" });
  const table = h("div", { id: "lane-table" });
  let plots = [];
  let timer = 0;

  async function load() {
    let m;
    try { m = await api.get(R.lanes); } catch (e) { clear(charts, h("p", { class: "bad" }, `${e.code}: ${e.message}`)); return; }
    const { t, groups } = lanesSeries(m);
    const width = Math.max(260, Math.min(charts.clientWidth || 600, 720) - 24);
    plots.forEach((p) => p.destroy()); plots = [];
    clear(charts);
    for (const [title, series] of groups) {
      const names = Object.keys(series).slice(0, 8);
      const box = h("figure", { class: "chart card" }, h("figcaption", {}, title));
      charts.appendChild(box);
      if (!names.length || !t.length) { box.appendChild(h("p", { class: "muted" }, "Nothing yet.")); continue; }
      plots.push(new uPlot({ width, height: 200, series: [{}, ...names.map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length], width: 2, points: { show: t.length < 3 } }))], scales: { x: { time: true } } },
        [t, ...names.map((n) => series[n])], box));
      box.querySelector(".u-wrap")?.setAttribute("aria-hidden", "true");
    }
    const totals = m.totals || {};
    clear(table, h("table", { class: "grid", id: "lane-totals" }, h("caption", {}, `Totals over the last hour (tenant ${m.tenant || ""})`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Lane"), h("th", { scope: "col" }, "Outcome"), h("th", { scope: "col" }, "Count"))),
      h("tbody", {}, Object.entries(totals).flatMap(([lane, outs]) => Object.entries(outs).map(([o, n]) => h("tr", {}, h("th", { scope: "row" }, lane), h("td", {}, o), h("td", {}, String(n))))))));
  }

  clear(root, h("h1", {}, "Lanes"),
    h("p", {}, "Jobs per lane, outcomes, timeouts and refusals over time, and the share of escalated jobs a formula or a tool could have done."),
    charts, h("section", { class: "card" }, table));
  load();
  timer = setInterval(load, 5000);
  return () => { clearInterval(timer); plots.forEach((p) => p.destroy()); };
}
