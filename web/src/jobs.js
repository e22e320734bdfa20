// Jobs (the escalation lane) and the lanes dashboard. A job is described in a form (the ask,
// the code, inputs, limits, network), the router's decision and its reasons are shown before
// anything runs, "Run" submits it, its state follows live (server-sent events over fetch),
// "Cancel" stops it, the receipt shows the limits requested next to those enforced, the
// network policy, the outcome and its basis, and artifacts download by id. The dashboard
// draws the lanes' metrics over time with uPlot (loaded with the page, not with the studio).
import { api, R, streamEvents } from "./api.js";
import { h, clear, field, toast, fmtTime, saveBlob } from "./ui.js";

const SAMPLE = "import json, os\ntotal = sum(i * i for i in range(10))\nos.makedirs('out', exist_ok=True)\nwith open('out/result.json', 'w') as f:\n    json.dump({'total': total}, f)\nprint(json.dumps({'total': total}))\n";
const ACTIVE = new Set(["queued", "running", "lost"]);
const SETTLE = ["succeeded", "user_error", "cancelled", "crashed", "sandbox_error"];
const MiB = 1024 * 1024;

function kv(rows) {
  return h("dl", { class: "kv" }, rows.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) => [h("dt", {}, k), h("dd", {}, typeof v === "object" ? h("code", {}, JSON.stringify(v)) : String(v))]));
}

/** Limits requested next to those enforced, with the mechanism that enforced each. */
const RECENT_PAGE = 20;

function limitsTable(rc) {
  const req = rc.limits_requested || {};
  const enforced = Object.fromEntries((rc.limits_enforced || []).map((e) => [e.knob, e]));
  const keys = [...new Set([...Object.keys(req), ...Object.keys(enforced)])];
  if (!keys.length) return null;
  return h("div", { class: "scroll" }, h("table", { class: "grid", id: "limits" }, h("caption", {}, "Limits: requested and enforced"),
    h("thead", {}, h("tr", {}, ["Limit", "Requested", "Enforced", "By"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, keys.map((k) => h("tr", {}, h("th", { scope: "row" }, k),
      h("td", {}, JSON.stringify(enforced[k] ? enforced[k].requested : req[k] ?? null)),
      h("td", { class: enforced[k] ? "" : "bad" }, enforced[k] ? JSON.stringify(enforced[k].enforced) : "not enforced"),
      h("td", {}, enforced[k] ? enforced[k].by : ""))))));
}

export function renderJobs(root) {
  const ask = h("input", { id: "job-ask", value: "Sum of the squares of 0 to 9, in Python" });
  const code = h("textarea", { id: "job-code", rows: 6, class: "mono", spellcheck: "false" }, SAMPLE);
  const formula = h("input", { id: "job-formula", placeholder: "optional: a formula proposed for the same ask" });
  const inputs = h("textarea", { id: "job-inputs", rows: 2, class: "mono" }, "{}");
  const wall = h("input", { id: "job-wall", type: "number", min: "0.1", step: "0.1", value: "10" });
  const memory = h("input", { id: "job-memory", type: "number", min: "32", step: "32", value: "256" });
  const network = h("select", { id: "job-network" }, ["none", "allowlist"].map((n) => h("option", { value: n }, n)));
  const globs = h("input", { id: "job-artifacts", value: "out/*" });
  const decision = h("div", { id: "decision", "aria-live": "polite" });
  const jobBox = h("div", { id: "job", "aria-live": "polite" });
  const recent = h("div", { id: "job-list" });
  let stream = null;

  function request() {
    let parsed;
    try { parsed = JSON.parse(inputs.value || "{}"); } catch (e) { throw new Error(`inputs: ${e.message}`); }
    const body = {
      ask: ask.value, inputs: parsed,
      limits: { wall_timeout_s: Number(wall.value), cpu_time_s: Number(wall.value), memory_bytes: Math.round(Number(memory.value) * MiB) },
      network: { mode: network.value },
      idempotency_key: (crypto.randomUUID ? crypto.randomUUID() : String(Date.now())).replace(/-/g, ""),
    };
    if (code.value.trim()) body.code = code.value;
    const g = globs.value.split(",").map((x) => x.trim()).filter(Boolean);
    if (g.length) body.artifact_globs = g;
    if (formula.value.trim()) body.formula = formula.value.trim();
    return body;
  }

  function showDecision(d) {
    clear(decision, h("div", { class: "card inner" }, h("h3", {}, "Decision: ", h("strong", { id: "decision-lane" }, d.lane)),
      h("ul", { id: "reasons" }, (d.reasons || []).map((x) => h("li", {}, h("code", {}, x.code), ` ${x.message}`))),
      d.formula ? h("p", {}, "A formula does it: ", h("code", {}, d.formula)) : null,
      d.tool_call ? h("p", {}, "A tool does it: ", h("code", {}, JSON.stringify(d.tool_call))) : null,
      d.sandbox ? kv([["Runtime", d.sandbox.runtime], ["Limits", d.sandbox.limits], ["Network", d.sandbox.network]]) : null));
  }

  async function route() {
    let body;
    try { body = request(); } catch (e) { toast(e.message, "error"); return null; }
    try { showDecision(await api.post(R.route, body)); return body; }
    catch (e) { clear(decision, h("p", { class: "bad", role: "alert" }, `${e.code}: ${e.message}`)); return null; }
  }

  async function submit() {
    const body = await route();
    if (!body) return;
    try {
      const r = await api.post(R.jobs, body);
      showDecision(r.decision);
      loadRecent();
      if (r.job) {
        follow(r.job.job_id, r.job);
      } else {
        clear(jobBox, h("div", { class: "card inner" }, h("h3", {}, `Answered by the ${r.lane} lane`),
          r.lane === "refuse" ? h("p", { class: "bad" }, "Refused: nothing ran.") : h("p", {}, "Value: ", h("code", { id: "job-value" }, JSON.stringify(r.value)))));
      }
    } catch (e) { clear(jobBox, h("p", { class: "bad", role: "alert" }, `${e.code}: ${e.message}`)); }
  }

  function showJob(job) {
    const id = job.job_id;
    const done = !ACTIVE.has(job.status);
    clear(jobBox, h("div", { class: "card inner", dataset: { job: id, status: job.status } },
      h("h3", {}, "Job ", h("code", {}, id.slice(0, 13)), " · ", h("strong", { id: "job-state" }, job.status), job.outcome ? [" · ", h("strong", { id: "job-outcome" }, job.outcome)] : null),
      kv([["Backend", job.backend], ["Attempt", job.attempt], ["Cancel requested", job.cancel_requested], ["Side effects possible", job.side_effects_possible ? "yes" : "no"]]),
      h("div", { class: "row" },
        h("button", { type: "button", id: "cancel-job", class: "danger", disabled: done, onclick: () => cancel(id) }, "Cancel"),
        h("button", { type: "button", id: "read-receipt", disabled: !done, onclick: () => receipt(id) }, "Receipt")),
      job.status === "unknown" ? settleForm(id) : null,
      h("div", { id: "receipt" })));
    if (done && job.receipt) showReceipt(id, job.receipt);
  }

  /** A job whose worker died is `unknown` (it may have had effects): a person settles it. */
  function settleForm(id) {
    const outcome = h("select", { id: "settle-outcome" }, SETTLE.map((o) => h("option", { value: o }, o)));
    const reason = h("input", { id: "settle-reason", autocomplete: "off" });
    return h("form", { class: "card inner", onsubmit: async (e) => {
      e.preventDefault();
      if (!reason.value.trim()) { toast("Give a reason", "error"); reason.focus(); return; }
      try { showJob(await api.post(R.jobSettle(id), { outcome: outcome.value, reason: reason.value.trim() })); }
      catch (err) { toast(`${err.code}: ${err.message}`, "error"); }
    } }, h("h4", {}, "Settle this unknown job by hand"), h("div", { class: "row" }, field("Outcome", outcome), field("Reason", reason)),
    h("button", { type: "submit" }, "Settle"));
  }

  function follow(id, first) {
    if (stream) stream.abort();
    stream = new AbortController();
    if (first) showJob(first);
    const ctl = stream;
    streamEvents(R.jobEvents(id), ({ event, data }) => {
      if (event === "state" && data && data.job_id) { showJob(data); if (!ACTIVE.has(data.status)) loadRecent(); }
    }, ctl.signal).catch(async () => {
      if (ctl.signal.aborted) return;
      for (let i = 0; i < 240 && !ctl.signal.aborted; i++) {   // no stream (a buffering proxy): poll
        try { const j = await api.get(R.job(id)); showJob(j); if (!ACTIVE.has(j.status)) return; } catch { return; }
        await new Promise((res) => setTimeout(res, 500));
      }
    });
  }

  async function cancel(id) {
    try { showJob(await api.post(R.jobCancel(id), { reason: "cancelled in the playground" })); toast("Cancel requested"); }
    catch (e) { toast(`${e.code}: ${e.message}`, "error"); }
  }

  async function receipt(id) {
    try { const j = await api.get(R.job(id)); showJob(j); } catch (e) { toast(`${e.code}: ${e.message}`, "error"); }
  }

  async function showReceipt(id, rc) {
    const box = jobBox.querySelector("#receipt");
    let arts = [];
    try { arts = (await api.get(R.jobArtifacts(id))).artifacts || []; } catch { arts = []; }
    if (!box.isConnected) return;
    const net = rc.network || {};
    clear(box, h("h4", {}, "Receipt"),
      kv([["Outcome", rc.outcome], ["Basis", `${rc.outcome_basis}${rc.outcome_detail ? ` — ${rc.outcome_detail}` : ""}`],
        ["Backend", rc.backend ? `${rc.backend.name} ${rc.backend.version} (${rc.backend.isolation}, ${rc.backend.mechanism})` : ""],
        ["Network", `${net.mode || "none"}${net.allow && net.allow.length ? ` to ${net.allow.join(", ")}` : ""} · enforced by ${rc.network_enforcement}`],
        ["Exit", rc.exit_code ?? (rc.signal ? `signal ${rc.signal}` : "")], ["Wall (ms)", rc.wall_ms], ["CPU (ms)", rc.cpu_ms],
        ["Peak memory (bytes)", rc.peak_memory_bytes], ["Code sha256", rc.code_sha256], ["Started", fmtTime(rc.started_at)], ["Ended", fmtTime(rc.ended_at)]]),
      limitsTable(rc),
      rc.stdout && rc.stdout.head ? [h("h5", {}, "stdout"), h("pre", { class: "json", id: "job-stdout", tabindex: "0" }, rc.stdout.head + (rc.stdout.tail ? `\n…\n${rc.stdout.tail}` : ""))] : null,
      rc.stderr && rc.stderr.head ? [h("h5", {}, "stderr"), h("pre", { class: "json", tabindex: "0" }, rc.stderr.head)] : null,
      arts.length ? h("ul", { id: "artifacts" }, arts.map((a) => h("li", {}, h("button", { type: "button", class: "linkish", onclick: async () => {
        const res = await api.raw("GET", R.jobArtifact(id, a.id), { headers: { Accept: "*/*" } });
        saveBlob(await res.blob(), a.name || "artifact");
      } }, `Download ${a.name}`), ` (${a.size} bytes, ${a.mime})`))) : h("p", { class: "muted" }, "No artifact."),
      h("details", {}, h("summary", {}, "Receipt as JSON"), h("pre", { class: "json", tabindex: "0" }, JSON.stringify(rc, null, 2))));
  }

  // The tenant's jobs over every lane, newest first, from the service (GET /v1/jobs), a page
  // at a time: the same list in every tab and for every person of the tenant.
  let recentSeq = 0;
  async function loadRecent(cursor = null, shown = []) {
    const my = ++recentSeq;
    let page;
    try { page = await api.get(R.jobs + `?limit=${RECENT_PAGE}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "")); }
    catch (e) { if (my === recentSeq) clear(recent, h("p", { class: "bad" }, `${e.code}: ${e.message}`)); return; }
    if (my !== recentSeq) return;
    const rows = shown.concat(page.jobs || []);
    recent.dataset.loaded = "1";
    clear(recent, rows.length ? h("ul", {}, rows.map((j) => h("li", { dataset: { id: j.id, lane: j.lane } },
      j.job_id ? h("button", { type: "button", class: "linkish", onclick: () => api.get(R.job(j.job_id)).then((s) => follow(j.job_id, s)).catch((e) => toast(`${e.code}: ${e.message}`, "error")) }, j.job_id.slice(0, 13))
        : h("code", {}, j.lane),
      ` ${j.state} · ${(j.ask || "").slice(0, 40)}`, " ", h("span", { class: "muted" }, fmtTime(j.created_at)))))
      : h("p", { class: "muted" }, "No job yet."),
    page.next_cursor ? h("button", { type: "button", id: "more-jobs", onclick: () => loadRecent(page.next_cursor, rows) }, "More") : null);
  }

  clear(root, h("h1", {}, "Jobs"),
    h("div", { class: "cols" },
      h("div", { class: "col-main" },
        h("section", { class: "card", "aria-labelledby": "job-h" }, h("h2", { id: "job-h" }, "New job"),
          field("Ask", ask), field("Code (Python, runs in the sandbox)", code), field("Formula", formula, "When a formula does the job, the router picks the formula lane."),
          field("Inputs (JSON object)", inputs),
          h("div", { class: "row" }, field("Wall and CPU time (s)", wall), field("Memory (MiB)", memory), field("Network", network)),
          field("Artifacts (file globs, comma separated)", globs, "Files the job writes that match are kept, by content id."),
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
  // Escalation requests by the lane the router chose: those routed to a formula or a tool
  // are ones a formula or a tool could do; the share is over every escalation request.
  const esc = rows.map((r) => r.escalations || {});
  const total = esc.map((e) => Object.values(e).reduce((a, b) => a + b, 0));
  const smaller = esc.map((e) => (e.formula || 0) + (e.tool || 0));
  const avoidable = total.some((n) => n > 0)
    ? { "could have done (requests)": smaller,
        "share of escalations (%)": smaller.map((n, i) => (total[i] ? Math.round((100 * n) / total[i]) : 0)) }
    : {};
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
    const { default: uPlot } = await import("uplot");   // its own chunk: only this page needs it
    const width = Math.max(260, Math.min(charts.clientWidth || 600, 720) - 24);
    plots.forEach((p) => p.destroy()); plots = [];
    clear(charts);
    for (const [title, series] of groups) {
      const names = Object.keys(series).slice(0, 8);
      const box = h("figure", { class: "chart card" }, h("figcaption", {}, title));
      charts.appendChild(box);
      if (!names.length || !t.length) {
        box.appendChild(h("p", { class: "muted" }, title.startsWith("Escalated") && t.length
          ? "No escalation request in this window yet."
          : "Nothing yet."));
        continue;
      }
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
