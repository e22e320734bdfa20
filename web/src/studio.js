// The formula studio: the editor with live diagnostics (each keystroke checks the text on the
// server; the caret rendering, hint and fix-its under the editor and in the gutter; a fix-it
// applies with a click, or Ctrl/Cmd-. / Alt-Enter at the cursor), completion, signature help,
// hover docs, the inferred type and cost bound; the schema editor (rows, or a pasted JSON
// Schema / sample row); the input row with its result and the explain tree at once; the
// function reference with insertable examples; the strict and excel profiles.
import { EditorView, keymap, hoverTooltip } from "@codemirror/view";
import { setDiagnostics, lintGutter } from "@codemirror/lint";
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { api, R, ApiError } from "./api.js";
import { createEditor, setDoc } from "./editor.js";
import { h, clear, field, show, isErrorValue, debounce, toast } from "./ui.js";
import { workspace, saveWorkspace, schemaObject, schemaFromPaste, parseInput } from "./state.js";

/** Normalizes a check answer (or an error envelope) into {diagnostics, type, cost}. */
export function readCheck(r) {
  const body = r instanceof ApiError ? (r.body && (r.body.error || r.body)) || {} : r || {};
  let diags = body.diagnostics || (body.code && body.message ? [body] : []);
  if (!Array.isArray(diags)) diags = [];
  return {
    ok: r instanceof ApiError ? false : body.ok !== false && !diags.some((d) => (d.severity || "error") === "error"),
    diagnostics: diags,
    type: body.type ?? body.result_type ?? null,
    cost: body.cost ?? body.cost_bound ?? null,
  };
}

function toCmDiagnostics(diags, docLength) {
  return diags.map((d) => {
    const span = d.span || { start: 0, end: docLength };
    let from = Math.max(0, Math.min(span.start ?? 0, docLength));
    let to = Math.max(from, Math.min(span.end ?? from, docLength));
    if (to === from && to < docLength) to += 1;
    if (to === from && from > 0) from -= 1;
    return {
      from, to,
      severity: d.severity === "warning" ? "warning" : "error",
      source: d.code,
      message: `${d.message}${d.hint ? `\nhint: ${d.hint}` : ""}`,
      actions: (d.fixes || []).map((f) => ({
        name: `Fix: ${f.description || `replace with ${f.replacement}`}`,
        apply: (view) => applyFix(view, f),
      })),
    };
  });
}

export function applyFix(view, fix) {
  const len = view.state.doc.length;
  const from = Math.max(0, Math.min(fix.span.start, len));
  const to = Math.max(from, Math.min(fix.span.end, len));
  view.dispatch({ changes: { from, to, insert: fix.replacement }, selection: { anchor: from + fix.replacement.length } });
  view.focus();
}

const KIND = { function: "function", variable: "variable", field: "property", local: "variable", keyword: "keyword" };

export function completionSource(getBody) {
  return async (ctx) => {
    const word = ctx.matchBefore(/[\w.]+/u);
    if (!ctx.explicit && !word) return null;
    let r;
    try {
      r = await api.post(R.complete, { ...getBody(), formula: ctx.state.doc.toString(), cursor: ctx.pos });
    } catch { return null; }
    const items = r.items || r.completions || (Array.isArray(r) ? r : []);
    if (!items.length) return null;
    const from = items[0].span ? items[0].span.start : word ? word.from : ctx.pos;
    return {
      from,
      validFor: /^[\w.]*$/u,
      options: items.map((it) => ({
        label: it.label,
        type: KIND[it.kind] || "text",
        detail: it.detail || undefined,
        info: it.documentation || undefined,
        apply: it.insert_text || it.label,
        boost: it.sort_text ? -Number(it.sort_text.replace(/\D/g, "").slice(0, 6) || 0) / 1e6 : 0,
      })),
    };
  };
}

export function hoverSource(getBody) {
  // CodeMirror shows a hover whose source resolves after the pointer has left the editor (and
  // then keeps it): an answer that comes back once the pointer is gone is dropped here.
  let inside = false;
  const track = EditorView.domEventHandlers({
    mousemove: () => { inside = true; return false; },
    mouseleave: () => { inside = false; return false; },
  });
  return [track, hoverTooltip(async (view, pos) => {
    let r;
    try { r = await api.post(R.hover, { ...getBody(), formula: view.state.doc.toString(), cursor: pos }); } catch { return null; }
    if (!inside) return null;
    const info = r && (r.hover !== undefined ? r.hover : r);
    if (!info || !info.title) return null;
    const span = info.span || { start: pos, end: pos };
    return {
      pos: span.start, end: span.end, above: true,
      create: () => ({ dom: h("div", { class: "hover" }, h("code", {}, info.title), info.type ? h("div", { class: "muted" }, `type: ${info.type}`) : null, info.documentation ? h("p", {}, info.documentation) : null) }),
    };
  })];
}

/** Renders an explain tree: each sub-expression with its value; the error origin marked. */
export function explainTree(node) {
  if (!node) return h("p", { class: "muted" }, "No tree.");
  const vals = node.values || (node.value !== undefined ? [node.value] : []);
  const value = !node.evaluated && node.evaluated !== undefined ? "not evaluated" : vals.length ? show(vals[0]) : "";
  const err = vals.length && isErrorValue(vals[0]);
  const label = h("span", { class: "node" },
    h("code", {}, node.source || node.label),
    " ", h("span", { class: "arrow", "aria-hidden": "true" }, "→"), " ",
    h("span", { class: err ? "value err" : "value" }, value),
    node.type ? h("span", { class: "muted" }, ` : ${node.type}`) : null,
    node.calls > 1 ? h("span", { class: "muted" }, ` (${node.calls} calls; the first shown)`) : null,
    node.origin ? h("strong", { class: "origin" }, " ← error starts here") : null);
  const kids = node.children || [];
  if (!kids.length) return h("li", {}, label);
  return h("li", {}, h("details", { open: true }, h("summary", {}, label), h("ul", {}, kids.map(explainTree))));
}

export function renderStudio(root) {
  const body = () => ({ schema: schemaObject(), profile: workspace.profile });

  const status = h("p", { class: "status", id: "check-status", "aria-live": "polite" }, "");
  const sigLine = h("p", { class: "sig", id: "sig-help", "aria-live": "polite" });
  const diagList = h("div", { class: "diags", id: "diagnostics", "aria-live": "polite" });
  const result = h("output", { class: "result", id: "result", "aria-live": "polite" }, "");
  const tree = h("ul", { class: "tree", id: "explain" });
  const editorBox = h("div", { class: "editor", id: "editor" });

  let seq = 0;
  let currentFixes = []; // the fixes of the latest answer, for the quick-fix key
  const perf = (window.__formulane = window.__formulane || {});

  async function check() {
    const my = ++seq;
    const source = view.state.doc.toString();
    workspace.source = source; saveWorkspace();
    let c;
    try { c = readCheck(await api.post(R.check, { ...body(), formula: source })); } catch (e) { c = readCheck(e); }
    if (my !== seq) return;
    view.dispatch(setDiagnostics(view.state, toCmDiagnostics(c.diagnostics, view.state.doc.length)));
    currentFixes = c.diagnostics.flatMap((d) => d.fixes || []);
    perf.lastDiagnostics = { seq: my, at: performance.now(), count: c.diagnostics.length, source };
    clear(status,
      c.ok ? h("span", { class: "ok" }, "✓ checks") : h("span", { class: "bad" }, `${c.diagnostics.length} problem${c.diagnostics.length === 1 ? "" : "s"}`),
      c.type ? [" · type ", h("code", { id: "inferred-type" }, c.type)] : null,
      c.cost !== null && c.cost !== undefined ? [" · cost bound ", h("code", { id: "cost-bound" }, typeof c.cost === "object" ? JSON.stringify(c.cost) : String(c.cost))] : null);
    clear(diagList, c.diagnostics.map((d) => h("div", { class: `diag ${d.severity || "error"}` },
      h("pre", { class: "rendered", tabindex: "0" }, d.rendered || `${d.code}: ${d.message}`),
      d.hint && !(d.rendered || "").includes(d.hint) ? h("p", { class: "hint" }, `hint: ${d.hint}`) : null,
      (d.fixes || []).map((f) => h("button", { type: "button", class: "fix", onclick: () => applyFix(view, f) },
        `Apply fix: ${f.description || `replace with “${f.replacement}”`}`)))));
    if (c.ok) await run(source, my); else { clear(result, h("span", { class: "muted" }, "fix the problems to see the result")); clear(tree); }
  }

  async function run(source, my) {
    try {
      const r = await api.post(R.explain, { ...body(), formula: source, variables: workspace.row });
      if (my !== seq) return;
      const value = r.error_value || r.value;
      clear(result, h("span", { class: isErrorValue(value) ? "value err" : "value" }, show(value)));
      clear(tree, explainTree((r.explanation && r.explanation.tree) || r.tree));
    } catch (e) {
      if (my !== seq) return;
      clear(result, h("span", { class: "bad" }, `${e.code}: ${e.message}`));
      clear(tree);
    }
  }

  // The call around the cursor and its signatures come from the service (/v1/signature-help,
  // formulane.signature_help), so the page and every other client agree on what is shown.
  let sigSeq = 0;
  async function signature() {
    const my = ++sigSeq;
    let r;
    try {
      r = await api.post(R.signatureHelp, { ...body(), formula: view.state.doc.toString(), cursor: view.state.selection.main.head });
    } catch (e) {
      if (my === sigSeq) sigLine.textContent = "";
      return;
    }
    if (my !== sigSeq) return;
    const s = r.signature;
    if (!s || !s.signatures.length) { sigLine.textContent = ""; return; }
    const active = s.signatures[s.active_signature] || s.signatures[0];
    clear(sigLine, s.signatures.slice(0, 2).map((sig) => {
      const p = sig.active_parameter == null ? null : sig.parameters[sig.active_parameter];
      const [a, b] = p ? p.offsets : [0, 0];
      return h("span", { class: "sigrow" }, p ? [sig.label.slice(0, a), h("strong", {}, sig.label.slice(a, b)), sig.label.slice(b)] : sig.label);
    }), active.documentation ? h("span", { class: "muted" }, active.documentation.split("\n")[0]) : null);
  }
  const signatureSoon = debounce(signature, 30);

  function quickFix(v) {
    const pos = v.state.selection.main.head;
    const diags = currentFixes;
    const at = diags.find((f) => f.span.start <= pos && pos <= f.span.end) || diags[0];
    if (!at) return false;
    applyFix(v, at);
    return true;
  }

  const view = createEditor(editorBox, {
    doc: workspace.source,
    label: "Formula",
    onChange: () => { perf.lastEdit = performance.now(); check(); signatureSoon(); },
    onSelect: () => signatureSoon(),
    extensions: [
      lintGutter(),
      closeBrackets(),
      autocompletion({ override: [completionSource(body)], activateOnTyping: true }),
      hoverSource(body),
      keymap.of([{ key: "Mod-.", run: quickFix }, { key: "Alt-Enter", run: quickFix }, ...closeBracketsKeymap, ...completionKeymap]),
    ],
  });
  perf.view = view;

  // Profile, format.
  const profile = h("select", { id: "profile", onchange: (e) => { workspace.profile = e.target.value; saveWorkspace(); check(); } },
    ["strict", "excel"].map((p) => h("option", { value: p, selected: workspace.profile === p }, p)));
  const formatBtn = h("button", { type: "button", onclick: async () => {
    try { const r = await api.post(R.format, { formula: view.state.doc.toString() }); setDoc(view, r.formatted); } catch (e) { toast(`${e.code}: ${e.message}`, "error"); }
  } }, "Format");

  // Schema editor.
  const schemaTable = h("tbody");
  const inputsBox = h("div", { class: "inputs", id: "inputs" });
  function renderSchema() {
    clear(schemaTable, workspace.schema.map((r, i) => h("tr", {},
      h("td", {}, h("input", { "aria-label": `Field ${i + 1} name`, value: r.name, onchange: (e) => { r.name = e.target.value; changed(); } })),
      h("td", {}, h("input", { "aria-label": `Field ${i + 1} type`, value: r.type, list: "type-names", onchange: (e) => { r.type = e.target.value; changed(); } })),
      h("td", {}, h("button", { type: "button", "aria-label": `Remove field ${r.name || i + 1}`, onclick: () => { workspace.schema.splice(i, 1); changed(); } }, "✕")))));
    renderInputs();
  }
  function renderInputs() {
    clear(inputsBox, workspace.schema.filter((r) => r.name).map((r) => {
      const base = r.type.replace(/\?$/, "");
      const cur = workspace.row[r.name];
      const input = base === "Boolean"
        ? h("input", { type: "checkbox", checked: !!cur, onchange: (e) => { workspace.row[r.name] = e.target.checked; saveWorkspace(); check(); } })
        : h("input", { type: base === "Date" ? "date" : "text", inputmode: base === "Number" ? "decimal" : undefined, value: cur === undefined || cur === null ? "" : typeof cur === "object" ? JSON.stringify(cur) : String(cur),
          oninput: debounce((e) => { workspace.row[r.name] = parseInput(r.type, e.target.value); saveWorkspace(); check(); }, 60) });
      input.name = r.name;
      return field(`${r.name} (${r.type})`, input);
    }));
  }
  function changed() { saveWorkspace(); renderSchema(); check(); }
  const paste = h("textarea", { id: "schema-paste", rows: 3, placeholder: '{"type":"object","properties":{"price":{"type":"number"}}} or {"price": 9.5}' });
  const schemaBox = h("section", { class: "card", "aria-labelledby": "schema-h" },
    h("h2", { id: "schema-h" }, "Schema"),
    h("table", { class: "grid" }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Type"), h("th", { scope: "col" }, h("span", { class: "sr" }, "Remove")))), schemaTable),
    h("datalist", { id: "type-names" }, ["Number", "Text", "Boolean", "Date", "DateTime", "Duration", "Any", "List[Number]", "List[Text]", "Number?", "Text?"].map((t) => h("option", { value: t }))),
    h("div", { class: "row" },
      h("button", { type: "button", onclick: () => { workspace.schema.push({ name: `field${workspace.schema.length + 1}`, type: "Number" }); changed(); } }, "Add field")),
    field("Paste a JSON Schema or a sample row", paste),
    h("button", { type: "button", onclick: () => {
      try {
        workspace.schema = schemaFromPaste(paste.value);
        const sample = JSON.parse(paste.value);
        if (!(sample.type === "object" && sample.properties)) workspace.row = { ...sample };
        changed(); toast("Schema imported");
      } catch (e) { toast(`Cannot import: ${e.message}`, "error"); }
    } }, "Import schema"));

  // Function reference.
  const refSearch = h("input", { type: "search", id: "fn-search", placeholder: "SUM, text, date…" });
  const refList = h("div", { class: "fnlist", id: "fn-list" });
  let catalog = [];
  function renderRef() {
    const q = refSearch.value.trim().toLowerCase();
    const hits = catalog.filter((f) => !q || f.name.toLowerCase().includes(q) || (f.doc || "").toLowerCase().includes(q) || (f.category || "").toLowerCase().includes(q)).slice(0, 60);
    clear(refList, hits.length ? hits.map((f) => h("article", { class: "fn" },
      h("h3", {}, f.name, f.category ? h("span", { class: "muted" }, ` · ${f.category}`) : null),
      [].concat(f.signatures || f.signature || []).slice(0, 3).map((s) => h("code", { class: "sigtext" }, typeof s === "string" ? s : s.label || JSON.stringify(s))),
      f.doc ? h("p", {}, f.doc) : null,
      (f.examples || []).slice(0, 3).map((ex) => {
        const text = typeof ex === "string" ? ex.split(" -> ")[0] : ex.formula || ex.expr;
        return h("div", { class: "example" }, h("code", {}, typeof ex === "string" ? ex : text),
          h("button", { type: "button", "aria-label": `Insert example ${text}`, onclick: () => {
            const sel = view.state.selection.main;
            view.dispatch({ changes: { from: sel.from, to: sel.to, insert: text }, selection: { anchor: sel.from + text.length } });
            view.focus();
          } }, "Insert"));
      }))) : h("p", { class: "muted" }, catalog.length ? "No function matches." : "Loading the catalog…"));
  }
  refSearch.addEventListener("input", debounce(renderRef, 80));
  api.get(R.functions).then((r) => { catalog = r.functions || r.items || r || []; if (!Array.isArray(catalog)) catalog = Object.values(catalog); renderRef(); })
    .catch((e) => clear(refList, h("p", { class: "bad" }, `Catalog unavailable: ${e.message}`)));

  clear(root,
    h("h1", {}, "Formula studio"),
    h("div", { class: "cols" },
      h("div", { class: "col-main" },
        h("section", { class: "card", "aria-labelledby": "editor-h" },
          h("div", { class: "row spread" }, h("h2", { id: "editor-h" }, "Formula"),
            h("div", { class: "row" }, field("Profile", profile), formatBtn)),
          editorBox,
          h("p", { class: "muted small" }, "Ctrl-Space completes · Ctrl-. or Alt-Enter applies the fix at the cursor · Esc then Tab leaves the editor"),
          sigLine, status, diagList,
          h("p", {}, h("a", { href: "#publish" }, "Pin its known answers and publish it →"))),
        h("section", { class: "card", "aria-labelledby": "result-h" },
          h("h2", { id: "result-h" }, "Input row and result"), inputsBox,
          h("p", {}, "Result: ", result),
          h("h3", {}, "Explain"), tree)),
      h("div", { class: "col-side" }, schemaBox,
        h("section", { class: "card", "aria-labelledby": "ref-h" }, h("h2", { id: "ref-h" }, "Functions"), field("Search functions", refSearch), refList))));
  renderSchema();
  renderRef();
  check();
  return () => view.destroy();
}
