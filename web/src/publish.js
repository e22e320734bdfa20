// The publish flow for a stored formula: its source, schema and profile (from the studio or
// loaded from a version), the known-answer cases in a table (one column per schema field and
// the expected value) run on every edit with pass/fail per case, "Save version" (every change
// is a new immutable version), "Publish" enabled only when every case passes (the server checks
// again and answers with the failures otherwise), the version history with a side-by-side diff
// of any two versions and a rollback of the `live` alias.
import { api, R } from "./api.js";
import { createEditor, setDoc } from "./editor.js";
import { h, clear, field, show, isErrorValue, jsonEqual, looseJson, debounce, toast, fmtTime } from "./ui.js";
import { workspace, saveWorkspace, schemaObject, parseInput } from "./state.js";
import { lineDiff } from "./diff.js";

/** Does an answer match a case's expected value? Numbers compare as numbers (the service may
 * send exact decimals as text), error values by their code. */
export function caseMatches(expected, actual) {
  if (isErrorValue(actual) || isErrorValue(expected)) return show(actual) === show(expected);
  if (typeof expected === "number") { const n = Number(actual); return actual !== null && actual !== "" && jsonEqual(expected, n); }
  if (typeof expected === "boolean") return actual === expected || String(actual).toUpperCase() === String(expected).toUpperCase();
  return jsonEqual(expected, actual) || (typeof actual !== "object" && String(actual) === String(expected));
}

function versionsOf(r) { return (r && (r.versions || r.items)) || (Array.isArray(r) ? r : []); }
function liveOf(info) { return info && info.live_version; }
/** A case's expected value as the service stores it: an error value as {error: code}. */
function expectOut(v) { return typeof v === "string" && isErrorValue(v) ? { error: v } : v; }
function expectIn(v) { return v && typeof v === "object" && typeof v.error === "string" ? v.error : v; }

export function renderPublish(root) {
  const st = { name: sessionStorage.getItem("formulane.publish.name") || "order_total", cases: [], info: null, versions: [], results: [] };
  try { st.cases = JSON.parse(sessionStorage.getItem("formulane.publish.cases") || "[]"); } catch { st.cases = []; }
  const saveCases = () => sessionStorage.setItem("formulane.publish.cases", JSON.stringify(st.cases));

  const nameIn = h("input", { id: "formula-name", value: st.name, pattern: "[A-Za-z_][A-Za-z0-9_.-]*", autocomplete: "off" });
  const editorBox = h("div", { class: "editor", id: "publish-editor" });
  const casesBody = h("tbody", { id: "cases" });
  const summary = h("p", { id: "cases-summary", "aria-live": "polite" });
  const publishBtn = h("button", { type: "button", class: "primary", id: "publish", disabled: true }, "Publish");
  const saveBtn = h("button", { type: "button", id: "save-version" }, "Save version");
  const answer = h("div", { id: "publish-answer", "aria-live": "polite" });
  const history = h("tbody", { id: "versions" });
  const diffBox = h("div", { id: "diff" });
  const fromSel = h("select", { id: "diff-from" });
  const toSel = h("select", { id: "diff-to" });
  const reasonIn = h("input", { id: "rollback-reason", autocomplete: "off" });

  // Any edit makes the verdicts stale at once (Publish off) until the cases have run again.
  const runSoon = debounce(() => runCases(), 60);
  function edited() {
    runSeq++;
    publishBtn.disabled = true;
    summary.textContent = "Running the cases…";
    summary.className = "";
    for (const row of casesBody.querySelectorAll("tr")) row.dataset.verdict = "pending";
    runSoon();
  }
  const view = createEditor(editorBox, { doc: workspace.source, label: "Stored formula source", onChange: () => { workspace.source = view.state.doc.toString(); saveWorkspace(); edited(); } });
  const fields = () => workspace.schema.filter((f) => f.name);

  function renderCases() {
    const fs = fields();
    clear(casesBody, st.cases.map((c, i) => h("tr", { dataset: { case: String(i) } },
      fs.map((f) => h("td", {}, h("input", { "aria-label": `Case ${i + 1} ${f.name}`, value: c.inputs[f.name] === undefined || c.inputs[f.name] === null ? "" : typeof c.inputs[f.name] === "object" ? JSON.stringify(c.inputs[f.name]) : String(c.inputs[f.name]),
        oninput: (e) => { c.inputs[f.name] = parseInput(f.type, e.target.value); saveCases(); edited(); } }))),
      h("td", {}, h("input", { "aria-label": `Case ${i + 1} expected`, class: "expected", value: c.expected === undefined ? "" : typeof c.expected === "string" ? c.expected : JSON.stringify(c.expected),
        oninput: (e) => { c.expected = looseJson(e.target.value); saveCases(); edited(); } })),
      h("td", { class: "actual" }, ""),
      h("td", { class: "verdict" }, ""),
      h("td", {}, h("button", { type: "button", "aria-label": `Remove case ${i + 1}`, onclick: () => { st.cases.splice(i, 1); saveCases(); renderCases(); runCases(); } }, "✕")))));
  }

  let runSeq = 0;
  async function runCases() {
    const my = ++runSeq;
    const source = view.state.doc.toString();
    const results = await Promise.all(st.cases.map(async (c) => {
      try {
        const r = await api.post(R.evaluate, { formula: source, schema: schemaObject(), profile: workspace.profile, variables: c.inputs });
        const value = r.error_value || r.value;
        return { value, pass: caseMatches(c.expected, value) };
      } catch (e) { return { value: `${e.code}: ${e.message}`, pass: false, error: true }; }
    }));
    if (my !== runSeq) return;
    st.results = results;
    results.forEach((r, i) => {
      const row = casesBody.querySelector(`tr[data-case="${i}"]`);
      if (!row) return;
      row.querySelector(".actual").textContent = show(r.value);
      const v = row.querySelector(".verdict");
      v.textContent = r.pass ? "✓ pass" : "✗ fail";
      v.className = `verdict ${r.pass ? "ok" : "bad"}`;
      row.dataset.verdict = r.pass ? "pass" : "fail";
    });
    const failing = results.filter((r) => !r.pass).length;
    const ready = st.cases.length > 0 && failing === 0;
    publishBtn.disabled = !ready;
    summary.textContent = !st.cases.length ? "Add at least one known-answer case: publishing needs them."
      : failing ? `${failing} of ${results.length} cases fail: publish refused until every case passes.`
        : `All ${results.length} cases pass.`;
    summary.className = ready ? "ok" : "bad";
  }

  function body() {
    return { formula: view.state.doc.toString(), schema: schemaObject(), profile: workspace.profile,
      cases: st.cases.map((c, i) => ({ name: `case ${i + 1}`, inputs: c.inputs, expect: expectOut(c.expected) })) };
  }

  async function saveVersion() {
    st.name = nameIn.value.trim();
    sessionStorage.setItem("formulane.publish.name", st.name);
    let exists = true;
    try { await api.get(R.formula(st.name)); } catch (e) { if (e.status === 404) exists = false; else throw e; }
    const r = exists ? await api.post(R.versions(st.name), body())
      : await api.post(R.formulas, { name: st.name, ...body() }).then((f) => ({ version: f.latest_version }));
    await loadHistory();
    return r;
  }

  saveBtn.addEventListener("click", async () => {
    try { const r = await saveVersion(); clear(answer, h("p", { class: "ok" }, `Saved version ${r.version ?? ""}.`)); }
    catch (e) { clear(answer, h("p", { class: "bad", role: "alert" }, `${e.code}: ${e.message}`)); }
  });
  publishBtn.addEventListener("click", async () => {
    try {
      const saved = await saveVersion();
      const version = saved.version;
      await api.post(R.publish(st.name, version), {});
      clear(answer, h("p", { class: "ok", id: "published" }, `Published version ${version}: live now points at it.`));
      await loadHistory();
    } catch (e) {
      const failures = (e.body && ((e.body.extra && e.body.extra.failures) || e.body.failures)) || [];
      clear(answer, h("div", { class: "bad", role: "alert", id: "publish-refused" }, h("p", {}, `Publish refused: ${e.message}`),
        failures.length ? h("ul", {}, failures.map((f) => h("li", {}, `${f.case}: expected ${show(f.expected)}, got ${f.error ? `${f.error.code} ${f.error.message}` : show(f.actual)}`))) : null));
    }
  });

  async function loadHistory() {
    const name = nameIn.value.trim();
    try {
      const [info, vs] = await Promise.all([api.get(R.formula(name)).catch(() => null), api.get(R.versions(name))]);
      st.info = info; st.versions = versionsOf(vs).slice().sort((a, b) => Number(a.version) - Number(b.version));
    } catch { st.info = null; st.versions = []; }
    const live = liveOf(st.info) ?? st.versions.filter((v) => v.live).map((v) => v.version)[0];
    clear(history, st.versions.slice().reverse().map((v) => h("tr", { dataset: { version: String(v.version) } },
      h("td", {}, String(v.version), String(v.version) === String(live) ? h("strong", { class: "badge" }, " live") : null),
      h("td", {}, h("code", {}, (v.source || "").slice(0, 80))),
      h("td", {}, v.created_by || ""),
      h("td", {}, v.status === "published" ? `${v.published_by || ""} · ${fmtTime(v.published_at)}` : "draft"),
      h("td", {},
        h("button", { type: "button", onclick: () => { setDoc(view, v.source || ""); if (v.cases) { st.cases = v.cases.map((c) => ({ inputs: { ...c.inputs }, expected: expectIn(c.expect) })); saveCases(); renderCases(); runCases(); } } }, `Load v${v.version}`), " ",
        v.status === "published" ? h("button", { type: "button", class: "rollback", disabled: String(v.version) === String(live), onclick: async () => {
          if (!reasonIn.value.trim()) { toast("Give a reason for the rollback first", "error"); reasonIn.focus(); return; }
          try { await api.post(R.rollback(name), { version: v.version, reason: reasonIn.value.trim() }); toast(`live → v${v.version}`); await loadHistory(); }
          catch (e) { toast(`${e.code}: ${e.message}`, "error"); }
        } }, `Make v${v.version} live`) : null))));
    const opts = (sel, pick) => clear(sel, st.versions.map((v, i) => h("option", { value: String(v.version), selected: i === pick }, `v${v.version}`)));
    opts(fromSel, Math.max(0, st.versions.length - 2)); opts(toSel, st.versions.length - 1);
    history.dataset.loaded = name;  // whose history the table shows
    showDiff();
  }

  function showDiff() {
    const a = st.versions.find((v) => String(v.version) === fromSel.value);
    const b = st.versions.find((v) => String(v.version) === toSel.value);
    if (!a || !b) { clear(diffBox, h("p", { class: "muted" }, "Two versions make a diff.")); return; }
    const rows = lineDiff(a.source || "", b.source || "");
    clear(diffBox, h("table", { class: "diff" },
      h("caption", {}, `v${a.version} → v${b.version}`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, `v${a.version}`), h("th", { scope: "col" }, `v${b.version}`))),
      h("tbody", {}, rows.map((r) => h("tr", {},
        h("td", { class: r.kind === "del" || r.kind === "chg" ? "del" : "" }, h("code", {}, r.left ?? "")),
        h("td", { class: r.kind === "add" || r.kind === "chg" ? "add" : "" }, h("code", {}, r.right ?? "")))))));
  }
  fromSel.addEventListener("change", showDiff);
  toSel.addEventListener("change", showDiff);
  nameIn.addEventListener("change", () => { sessionStorage.setItem("formulane.publish.name", nameIn.value.trim()); loadHistory(); });

  clear(root,
    h("h1", {}, "Publish a formula"),
    h("ol", { class: "steps" },
      h("li", {}, "Name the formula; its source starts as the studio's (schema and profile too)."),
      h("li", {}, "Add known-answer cases: inputs, and the answer you know is right. They run on every edit."),
      h("li", {}, "Publish when every case passes: the version becomes ", h("code", {}, "live"), ", and applications evaluate it by name.")),
    h("section", { class: "card", "aria-labelledby": "pub-h" },
      h("h2", { id: "pub-h" }, "Stored formula"),
      field("Name", nameIn, "The schema and profile are the studio's."),
      editorBox,
      h("h3", {}, "Known-answer cases"),
      h("div", { class: "scroll" }, h("table", { class: "grid cases" },
        h("thead", {}, h("tr", {}, fields().map((f) => h("th", { scope: "col" }, f.name)), h("th", { scope: "col" }, "Expected"), h("th", { scope: "col" }, "Answer"), h("th", { scope: "col" }, "Verdict"), h("th", { scope: "col" }, h("span", { class: "sr" }, "Remove")))),
        casesBody)),
      h("div", { class: "row" },
        h("button", { type: "button", id: "add-case", onclick: () => { st.cases.push({ inputs: { ...workspace.row }, expected: null }); saveCases(); renderCases(); runCases(); casesBody.querySelector("tr:last-child input.expected")?.focus(); } }, "Add case"),
        saveBtn, publishBtn),
      summary, answer),
    h("section", { class: "card", "aria-labelledby": "hist-h" },
      h("h2", { id: "hist-h" }, "Versions"),
      h("div", { class: "scroll" }, h("table", { class: "grid" },
        h("thead", {}, h("tr", {}, ["Version", "Source", "Author", "Published", "Actions"].map((c) => h("th", { scope: "col" }, c)))), history)),
      field("Reason for a rollback", reasonIn, "Recorded in the formula's audit trail."),
      h("h3", {}, "Diff"),
      h("div", { class: "row" }, field("From", fromSel), field("To", toSel)),
      diffBox));
  renderCases();
  runCases();
  loadHistory();
  return () => view.destroy();
}
