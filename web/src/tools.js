// The tools console: the tenant's tools as each provider sees them (OpenAI, Anthropic, Gemini,
// MCP export formats), a call form generated from the chosen tool's input schema (an
// idempotency key per call, so a retry never runs twice), the approvals inbox (what will
// happen, to what, for whom, with which arguments, and the policy's answer) with approve and
// deny with a reason, and the receipts, searchable and readable.
import { api, R } from "./api.js";
import { h, clear, field, toast, fmtTime, debounce } from "./ui.js";

const FORMATS = ["openai_strict", "openai", "anthropic", "anthropic_strict", "gemini", "mcp"];
const OUTCOMES = ["succeeded", "tool_error", "invalid_arguments", "unknown_tool", "denied", "approval_required", "replayed", "unknown"];

/** A tool's name, description and input schema, whatever the export format's shape. */
export function toolInfo(t) {
  const fn = t.function || t;
  return {
    name: fn.name || t.name,
    description: fn.description || t.description || "",
    schema: fn.parameters || t.input_schema || t.inputSchema || t.parameters_json_schema || t.parameters || { type: "object", properties: {} },
    effect: t.effect || (t["x-formulane"] && t["x-formulane"].effect) || (t.annotations && (t.annotations.readOnlyHint ? "read" : t.annotations.destructiveHint ? "write" : undefined)),
  };
}

function newKey() { return (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`).replace(/-/g, ""); }

/** Form controls from a JSON Schema object: one per property; a value reader. */
export function schemaForm(schema, prefix) {
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const readers = {};
  const controls = Object.entries(props).map(([name, s]) => {
    const ty = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
    const label = `${name}${required.has(name) ? " (required)" : ""}`;
    let el;
    if (Array.isArray(s.enum)) {
      el = h("select", {}, (required.has(name) ? [] : [h("option", { value: "" }, "—")]).concat(s.enum.map((v) => h("option", { value: JSON.stringify(v) }, String(v)))));
      readers[name] = () => (el.value === "" ? undefined : JSON.parse(el.value));
    } else if (ty === "boolean") {
      el = h("input", { type: "checkbox", checked: s.default === true });
      readers[name] = () => el.checked;
    } else if (ty === "number" || ty === "integer") {
      el = h("input", { type: "number", step: ty === "integer" ? "1" : "any", value: s.default ?? "", min: s.minimum, max: s.maximum });
      readers[name] = () => (el.value === "" ? undefined : Number(el.value));
    } else if (ty === "string") {
      el = h("input", { type: s.format === "date" ? "date" : "text", value: s.default ?? "", maxlength: s.maxLength, required: required.has(name) || undefined });
      readers[name] = () => (el.value === "" && !required.has(name) ? undefined : el.value);
    } else {
      el = h("textarea", { rows: 3 }, s.default !== undefined ? JSON.stringify(s.default) : "");
      readers[name] = () => (el.value.trim() === "" ? undefined : JSON.parse(el.value));
    }
    el.id = `${prefix}-${name}`;
    el.name = name;
    return field(label, el, s.description);
  });
  const read = () => {
    const out = {};
    for (const [k, r] of Object.entries(readers)) { const v = r(); if (v !== undefined) out[k] = v; }
    return out;
  };
  return { controls, read };
}

function kv(rows) {
  return h("dl", { class: "kv" }, rows.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) => [h("dt", {}, k), h("dd", {}, typeof v === "object" ? h("code", {}, JSON.stringify(v)) : String(v))]));
}

export function renderTools(root) {
  const fmtSel = h("select", { id: "tool-format" }, FORMATS.map((f) => h("option", { value: f }, f)));
  const list = h("div", { id: "tool-list", class: "toollist" });
  const schemaView = h("pre", { id: "tool-schema", class: "json", tabindex: "0", role: "region", "aria-label": "The export as the provider sees it" });
  const callBox = h("div", { id: "tool-call" });
  const callOut = h("div", { id: "call-result", "aria-live": "polite" });
  const inbox = h("div", { id: "approvals", "aria-live": "polite" });
  const rQuery = h("input", { type: "search", id: "receipt-search", placeholder: "tool, outcome, principal, id…" });
  const rTool = h("select", { id: "receipt-tool" }, h("option", { value: "" }, "any tool"));
  const rOutcome = h("select", { id: "receipt-outcome" }, ["", ...OUTCOMES].map((o) => h("option", { value: o }, o || "any outcome")));
  const receipts = h("div", { id: "receipts" });
  let tools = [];
  let lastCall = null;

  async function loadTools() {
    try {
      const r = await api.get(R.tools(fmtSel.value));
      // Gemini groups declarations in one tool; the others list one entry per tool.
      tools = (r.tools || []).flatMap((t) => t.function_declarations || t.functionDeclarations || [t]);
      if (rTool.options.length === 1) (r.names || []).forEach((n) => rTool.appendChild(h("option", { value: n }, n)));
    } catch (e) { clear(list, h("p", { class: "bad" }, `${e.code}: ${e.message}`)); return; }
    clear(list, tools.length ? h("ul", {}, tools.map((t, i) => {
      const info = toolInfo(t);
      return h("li", {}, h("button", { type: "button", class: "linkish", "aria-label": `Open tool ${info.name}`, onclick: () => openTool(i) }, info.name),
        info.effect ? h("span", { class: `badge ${info.effect}` }, ` ${info.effect}`) : null, " ", h("span", { class: "muted" }, info.description.split("\n")[0]));
    })) : h("p", { class: "muted" }, "This tenant has no tools."));
  }

  function openTool(i) {
    const t = tools[i];
    const info = toolInfo(t);
    schemaView.textContent = JSON.stringify(t, null, 2);
    const form = schemaForm(info.schema, `arg-${info.name}`);
    const submit = h("button", { type: "submit", class: "primary" }, `Call ${info.name}`);
    clear(callBox, h("h3", {}, info.name), h("p", {}, info.description),
      h("form", { id: "call-form", onsubmit: async (e) => {
        e.preventDefault();
        let args;
        try { args = form.read(); } catch (err) { toast(`Arguments: ${err.message}`, "error"); return; }
        lastCall = { tool: info.name, args, key: newKey(), description: info.description };
        await call(lastCall);
      } }, form.controls, submit));
    callBox.querySelector("input,select,textarea")?.focus();
  }

  async function call(c, approval) {
    try {
      // One Idempotency-Key per call: a retry (or the run after its approval) never runs twice.
      const r = await api.post(R.toolCall(c.tool), { args: c.args, approval: approval || undefined }, { headers: { "Idempotency-Key": c.key } });
      if (r.approval) c.approvalId = r.approval.id;
      clear(callOut, h("div", { class: `callresult ${r.status}` },
        h("p", {}, h("strong", { id: "call-status" }, r.status), r.status === "approval_required" ? ` · approval ${r.approval.id} waits in the inbox` : "",
          r.replayed ? " · replayed (this key already ran)" : "", " · receipt ", h("code", { id: "call-receipt" }, r.receipt_id)),
        h("pre", { class: "json", tabindex: "0" }, r.text || JSON.stringify(r.value, null, 2)),
        r.status === "approval_required" ? h("button", { type: "button", id: "rerun", onclick: () => call(c, c.approvalId) }, "Run it once approved") : null));
    } catch (e) {
      clear(callOut, h("p", { class: "bad", role: "alert" }, `${e.code}: ${e.message}`));
    }
    loadInbox(); loadReceipts();
  }

  async function loadInbox() {
    let items;
    try { const r = await api.get(R.approvals); items = r.approvals || r.items || (Array.isArray(r) ? r : []); }
    catch (e) { clear(inbox, h("p", { class: "bad" }, `${e.code}: ${e.message}`)); return; }
    const pending = items.filter((a) => a.status === "pending");
    const described = Object.fromEntries(tools.map((t) => { const i = toolInfo(t); return [i.name, i.description]; }));
    clear(inbox, pending.length ? pending.map((a) => {
      const reason = h("input", { id: `reason-${a.id}`, autocomplete: "off" });
      let args = a.args ?? a.arguments;
      if (typeof args === "string") { try { args = JSON.parse(args); } catch { /* shown as text */ } }
      return h("article", { class: "approval card", dataset: { approval: a.id } },
        h("h3", {}, `${a.tool}${a.version ? ` v${a.version}` : ""}`),
        kv([
          // What, to what, for whom and the policy's answer are the service's (built from the
          // tool's declaration and the exact arguments); the page only shows them.
          ["What will happen", a.summary ? a.summary.what : `${a.tool} v${a.version} runs once: ${(described[a.tool] || "a write tool").split("\n")[0]}`],
          ["To what", a.summary ? a.summary.to_what : `the data of tenant ${a.tenant}`],
          ["For whom", a.summary ? a.summary.for_whom : `${a.requester} (${a.requester_kind})`],
          ["Arguments", args],
          ["Policy", a.policy ? `${a.policy.decision}: ${a.policy.rule}` : "approval required"],
          ["Requested", fmtTime(a.created_at)],
          ["Expires", fmtTime(a.expires_at)],
          ["Id", a.id],
        ]),
        field("Reason", reason),
        h("div", { class: "row" },
          h("button", { type: "button", class: "primary", onclick: () => decide(a, "approve", reason.value) }, `Approve ${a.tool}`),
          h("button", { type: "button", class: "danger", onclick: () => decide(a, "deny", reason.value) }, `Deny ${a.tool}`)));
    }) : h("p", { class: "muted", id: "inbox-empty" }, "No approval is waiting."));
  }

  async function decide(a, verb, reason) {
    try {
      if (!reason.trim()) { toast("Give a reason first", "error"); document.getElementById(`reason-${a.id}`)?.focus(); return; }
      await api.post(verb === "approve" ? R.approve(a.id) : R.deny(a.id), { reason: reason.trim() });
      toast(`${verb === "approve" ? "Approved" : "Denied"} ${a.tool}`);
      // The approved call runs when its caller calls again with the same key and arguments
      // (an approval covers exactly one call); when this tab made that call, run it now.
      if (verb === "approve" && lastCall && lastCall.approvalId === a.id) await call(lastCall, a.id);
    } catch (e) { toast(`${e.code}: ${e.message}`, "error"); }
    loadInbox(); loadReceipts();
  }

  async function loadReceipts() {
    const q = new URLSearchParams();
    if (rTool.value) q.set("tool", rTool.value);
    if (rOutcome.value) q.set("outcome", rOutcome.value);
    let items;
    try { const r = await api.get(R.receipts(q.toString())); items = r.receipts || r.items || (Array.isArray(r) ? r : []); }
    catch (e) { clear(receipts, h("p", { class: "bad" }, `${e.code}: ${e.message}`)); return; }
    const needle = rQuery.value.trim().toLowerCase();
    const shown = needle ? items.filter((x) => JSON.stringify(x).toLowerCase().includes(needle)) : items;
    clear(receipts, shown.length ? h("div", { class: "scroll" }, h("table", { class: "grid", id: "receipt-table" },
      h("thead", {}, h("tr", {}, ["When", "Tool", "Outcome", "Principal", "Approval", "Receipt"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, shown.map((x) => h("tr", {},
        h("td", {}, fmtTime(x.finished_at || x.started_at)), h("td", {}, x.tool), h("td", { class: x.outcome === "succeeded" || x.outcome === "replayed" ? "ok" : x.outcome === "approval_required" ? "" : "bad" }, x.outcome),
        h("td", {}, x.principal), h("td", {}, x.approval_id || ""),
        h("td", {}, h("details", {}, h("summary", {}, String(x.id).slice(0, 12)), h("pre", { class: "json", tabindex: "0" }, JSON.stringify(x, null, 2))))))))) : h("p", { class: "muted" }, "No receipt matches."));
    receipts.dataset.shown = [rTool.value, rOutcome.value, needle].join("|");  // what the table answers
  }

  fmtSel.addEventListener("change", loadTools);
  rQuery.addEventListener("input", debounce(loadReceipts, 200));
  rOutcome.addEventListener("change", loadReceipts);
  rTool.addEventListener("change", loadReceipts);

  clear(root, h("h1", {}, "Tools"),
    h("div", { class: "cols" },
      h("div", { class: "col-main" },
        h("section", { class: "card", "aria-labelledby": "tools-h" }, h("h2", { id: "tools-h" }, "Tools"), field("Provider format", fmtSel), list, callBox, callOut),
        h("section", { class: "card", "aria-labelledby": "inbox-h" }, h("div", { class: "row spread" }, h("h2", { id: "inbox-h" }, "Approvals inbox"), h("button", { type: "button", onclick: loadInbox }, "Refresh")), inbox),
        h("section", { class: "card", "aria-labelledby": "rec-h" }, h("h2", { id: "rec-h" }, "Receipts"), h("div", { class: "row" }, field("Search receipts", rQuery), field("Tool", rTool), field("Outcome", rOutcome)), receipts)),
      h("div", { class: "col-side" }, h("section", { class: "card", "aria-labelledby": "schema-h2" }, h("h2", { id: "schema-h2" }, "Export"), schemaView))));
  loadTools(); loadInbox(); loadReceipts();
}
