// The one place that talks to the service: the key (kept in sessionStorage only, sent as a
// Bearer header, never put in a URL), the route table (docs/api.md is the contract), the error
// envelope turned into an ApiError, and server-sent events read over fetch (EventSource cannot
// send an Authorization header, and a key in a query string would land in logs).

const KEY = "formulane.key";

export class ApiError extends Error {
  constructor(status, body) {
    const env = (body && (body.error || body)) || {};
    super(env.message || `HTTP ${status}`);
    this.status = status;
    this.code = env.code || `HTTP${status}`;
    this.hint = env.hint || "";
    this.fixes = env.fixes || [];
    this.rendered = env.rendered || "";
    this.requestId = env.request_id || "";
    this.body = body;
  }
}

export const auth = {
  get key() { return sessionStorage.getItem(KEY) || ""; },
  set key(v) { if (v) sessionStorage.setItem(KEY, v); else sessionStorage.removeItem(KEY); },
};

async function request(method, path, { json, body, headers = {}, signal, raw = false } = {}) {
  const h = { Accept: "application/json", ...headers };
  if (auth.key) h.Authorization = `Bearer ${auth.key}`;
  let payload = body;
  if (json !== undefined) { h["Content-Type"] = "application/json"; payload = JSON.stringify(json); }
  const res = await fetch(path, { method, headers: h, body: payload, signal, credentials: "omit", cache: "no-store" });
  if (raw && res.ok) return res;
  const text = await res.text();
  let data = null;
  if (text) { try { data = JSON.parse(text); } catch { data = { message: text }; } }
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    // A key revoked or expired mid-session: back to the sign-in form, saying why.
    if (res.status === 401 && auth.key) { auth.key = ""; window.dispatchEvent(new CustomEvent("formulane:signed-out", { detail: err.message })); }
    throw err;
  }
  return data;
}

export const api = {
  get: (p, o) => request("GET", p, o),
  post: (p, json, o = {}) => request("POST", p, { ...o, json }),
  put: (p, json, o = {}) => request("PUT", p, { ...o, json }),
  del: (p, o) => request("DELETE", p, o),
  raw: (method, p, o = {}) => request(method, p, { ...o, raw: true }),
};

const enc = encodeURIComponent;
/** Every route the page uses, in one table, as docs/api.md names them. */
export const R = {
  whoami: "/v1/whoami",
  check: "/v1/check", evaluate: "/v1/evaluate", batch: "/v1/evaluate/batch",
  explain: "/v1/explain", format: "/v1/format", complete: "/v1/complete", hover: "/v1/hover",
  signatureHelp: "/v1/signature-help",
  functions: "/v1/functions",
  formulas: "/v1/formulas",
  formula: (n) => `/v1/formulas/${enc(n)}`,
  versions: (n) => `/v1/formulas/${enc(n)}/versions`,
  version: (n, v) => `/v1/formulas/${enc(n)}/versions/${enc(v)}`,
  testVersion: (n, v) => `/v1/formulas/${enc(n)}/versions/${enc(v)}/test`,
  publish: (n, v) => `/v1/formulas/${enc(n)}/versions/${enc(v)}/publish`,
  rollback: (n) => `/v1/formulas/${enc(n)}/rollback`,
  tools: (fmt) => `/v1/tools?format=${enc(fmt)}`,
  toolCall: (n) => `/v1/tools/${enc(n)}/call`,
  approvals: "/v1/approvals",
  approve: (id) => `/v1/approvals/${enc(id)}/approve`,
  deny: (id) => `/v1/approvals/${enc(id)}/deny`,
  receipts: (q) => `/v1/receipts${q ? `?${q}` : ""}`,
  route: "/v1/jobs/route",
  jobs: "/v1/jobs",
  job: (id) => `/v1/jobs/${enc(id)}`,
  jobEvents: (id) => `/v1/jobs/${enc(id)}/events`,
  jobCancel: (id) => `/v1/jobs/${enc(id)}/cancel`,
  jobReceipts: (id) => `/v1/jobs/${enc(id)}/receipts`,
  jobSettle: (id) => `/v1/jobs/${enc(id)}/settle`,
  jobArtifacts: (id) => `/v1/jobs/${enc(id)}/artifacts`,
  jobArtifact: (id, a) => `/v1/jobs/${enc(id)}/artifacts/${enc(a)}`,
  lanes: "/v1/metrics/lanes",
};

/** Reads a server-sent event stream over fetch; calls onEvent({event, data}) per event. */
export async function streamEvents(path, onEvent, signal) {
  const res = await request("GET", path, { raw: true, signal, headers: { Accept: "text/event-stream" } });
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
      const chunk = buf.slice(0, i);
      buf = buf.slice(i).replace(/^\r?\n\r?\n/, "");
      let event = "message"; const data = [];
      for (const line of chunk.split(/\r?\n/)) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) {
        let parsed = data.join("\n");
        try { parsed = JSON.parse(parsed); } catch { /* plain text event */ }
        onEvent({ event, data: parsed });
      }
    }
  }
}
