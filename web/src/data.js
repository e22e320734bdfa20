// Try the formula on data: a CSV or Parquet file (dropped or chosen; at most MAX_BYTES, the
// service bounds its batch size too) goes to the batch endpoint (CSV as JSON rows typed by the
// schema, Parquet as the file's bytes); the page shows the first rows with the formula's value
// and error columns, a summary of error codes over the whole file, and a CSV download.
import { api, R } from "./api.js";
import { h, clear, show, isErrorValue, toast, saveBlob } from "./ui.js";
import { workspace, schemaObject, parseInput } from "./state.js";

export const MAX_BYTES = 20 * 1024 * 1024;
const SHOWN = 50;
// Below the service's defaults (max_json_batch_rows 10,000; max_body_bytes 1 MiB).
const CHUNK_ROWS = 5000;
const CHUNK_BYTES = 700_000;

/** RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF). */
export function parseCsv(text) {
  const rows = []; let row = []; let cell = ""; let q = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (q) {
      if (ch === '"') { if (text[i + 1] === '"') { cell += '"'; i++; } else q = false; } else cell += ch;
    } else if (ch === '"') q = true;
    else if (ch === ",") { row.push(cell); cell = ""; }
    else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(cell); rows.push(row); row = []; cell = "";
    } else cell += ch;
  }
  if (cell !== "" || row.length) { row.push(cell); rows.push(row); }
  return rows.filter((r) => r.length > 1 || r[0] !== "");
}

function csvCell(v) {
  const s = v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The JSON batch answer ({rows: [{value, value__error}], count}) as two columns. */
function readBatch(r) {
  const rows = r.rows || [];
  return { values: rows.map((x) => x.value), errors: rows.map((x) => x.value__error ?? null) };
}

export function renderData(root) {
  const out = h("div", { id: "data-result", "aria-live": "polite" });
  const input = h("input", { type: "file", id: "data-file", accept: ".csv,.parquet,text/csv" });
  const drop = h("div", { class: "drop", id: "drop", tabindex: "0", role: "button",
    onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); input.click(); } },
    onclick: () => input.click(),
    ondragover: (e) => { e.preventDefault(); drop.classList.add("over"); },
    ondragleave: () => drop.classList.remove("over"),
    ondrop: (e) => { e.preventDefault(); drop.classList.remove("over"); if (e.dataTransfer.files[0]) run(e.dataTransfer.files[0]); } },
  "Drop a CSV or Parquet file here (at most 20 MiB), or click or press Enter to choose one");
  input.addEventListener("change", () => { if (input.files[0]) run(input.files[0]); });

  async function run(file) {
    if (file.size > MAX_BYTES) { clear(out, h("p", { class: "bad", role: "alert" }, `${file.name} is ${(file.size / 1048576).toFixed(1)} MiB: the limit is 20 MiB.`)); return; }
    clear(out, h("p", {}, `Running on ${file.name}…`));
    const types = schemaObject();
    let header = [], rows = [], answer;
    try {
      if (/\.parquet$/i.test(file.name)) {
        // The page cannot read Parquet without a large decoder: the service reads it and
        // answers its JSON summary (error codes over the whole file, the first rows); the
        // Parquet answer (input, value and value__error columns) is fetched on Download.
        const q = new URLSearchParams({ profile: workspace.profile, keep_input: "true" });
        q.append("formula", `value=${workspace.source}`);
        if (Object.keys(types).length) q.set("schema", JSON.stringify(types));
        const bytes = await file.arrayBuffer();
        const sq = new URLSearchParams(q); sq.set("summary", "true"); sq.set("summary_rows", String(SHOWN));
        const res = await api.raw("POST", `${R.batch}?${sq}`, { body: bytes, headers: { "Content-Type": "application/vnd.apache.parquet", Accept: "application/json" } });
        const sum = await res.json();
        const codes = Object.entries((sum.errors || {}).value || {});
        const cols = (sum.columns || []).filter((c) => c !== "value__error");
        clear(out, h("h2", {}, `${file.name}: ${sum.rows} rows`),
          h("table", { class: "grid", id: "error-summary" }, h("caption", {}, "Error codes over the whole file"),
            h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Code"), h("th", { scope: "col" }, "Rows"))),
            h("tbody", {}, codes.length ? codes.map(([k, n]) => h("tr", {}, h("td", {}, k), h("td", {}, String(n))))
              : h("tr", {}, h("td", { colspan: 2 }, "no error in any row")))),
          h("div", { class: "scroll" }, h("table", { class: "grid", id: "data-rows" }, h("caption", {}, `First ${(sum.first_rows || []).length} rows`),
            h("thead", {}, h("tr", {}, cols.map((c) => h("th", { scope: "col" }, c)), h("th", { scope: "col" }, "error"))),
            h("tbody", {}, (sum.first_rows || []).map((r) => h("tr", {}, cols.map((c) => h("td", {}, show(r[c]))), h("td", { class: r.value__error ? "bad" : "" }, r.value__error || "")))))),
          h("button", { type: "button", id: "download", onclick: async () => {
            try {
              const ans = await api.raw("POST", `${R.batch}?${q}`, { body: bytes, headers: { "Content-Type": "application/vnd.apache.parquet", Accept: "application/vnd.apache.parquet" } });
              saveBlob(await ans.blob(), file.name.replace(/\.parquet$/i, "") + ".formulane.parquet");
            } catch (e) { toast(`${e.code || "error"}: ${e.message}`, "error"); }
          } }, "Download the Parquet answer"));
        return;
      } else {
        const table = parseCsv(await file.text());
        header = table[0] || [];
        rows = table.slice(1);
        const objects = rows.map((r) => Object.fromEntries(header.map((c, i) => [c, c in types ? parseInput(types[c], r[i]) : r[i]])));
        // In chunks under the service's JSON limits (rows per batch, bytes per body).
        answer = { rows: [], count: 0 };
        let chunk = [], size = 0;
        const flush = async () => {
          if (!chunk.length) return;
          const r = await api.post(R.batch, { formulas: { value: workspace.source }, schema: Object.keys(types).length ? types : undefined, profile: workspace.profile, rows: chunk });
          answer.rows.push(...r.rows); answer.count += r.count;
          chunk = []; size = 0;
          out.firstChild.textContent = `Running on ${file.name}… ${answer.count} of ${objects.length} rows`;
        };
        for (const o of objects) {
          const n = JSON.stringify(o).length + 1;
          if (chunk.length >= CHUNK_ROWS || size + n > CHUNK_BYTES) await flush();
          chunk.push(o); size += n;
        }
        await flush();
      }
    } catch (e) { clear(out, h("p", { class: "bad", role: "alert" }, `${e.code || "error"}: ${e.message}`)); return; }
    const { values, errors } = readBatch(answer);
    const counts = {};
    errors.forEach((e) => { if (e) counts[show(e)] = (counts[show(e)] || 0) + 1; });
    const total = answer.count ?? values.length;
    clear(out,
      h("h2", {}, `${file.name}: ${total} rows`),
      h("table", { class: "grid", id: "error-summary" }, h("caption", {}, "Error codes over the whole file"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Code"), h("th", { scope: "col" }, "Rows"))),
        h("tbody", {}, Object.keys(counts).length ? Object.entries(counts).sort((a, b) => b[1] - a[1]).map(([k, n]) => h("tr", {}, h("td", {}, k), h("td", {}, String(n))))
          : h("tr", {}, h("td", { colspan: 2 }, "no error in any row")))),
      h("div", { class: "scroll" }, h("table", { class: "grid", id: "data-rows" }, h("caption", {}, `First ${Math.min(SHOWN, rows.length)} rows`),
        h("thead", {}, h("tr", {}, header.map((c) => h("th", { scope: "col" }, c)), h("th", { scope: "col" }, "value"), h("th", { scope: "col" }, "error"))),
        h("tbody", {}, rows.slice(0, SHOWN).map((r, i) => h("tr", {}, r.map((c) => h("td", {}, show(c))), h("td", {}, show(values[i])), h("td", { class: errors[i] ? "bad" : "" }, errors[i] ? show(errors[i]) : "")))))),
      h("button", { type: "button", id: "download", onclick: () => {
        const lines = [[...header, "value", "error"].map(csvCell).join(",")];
        rows.forEach((r, i) => lines.push([...r, isErrorValue(values[i]) ? "" : values[i], errors[i] ? show(errors[i]) : ""].map(csvCell).join(",")));
        saveBlob(new Blob([lines.join("\n") + "\n"], { type: "text/csv" }), file.name.replace(/\.(csv|parquet)$/i, "") + ".formulane.csv");
        toast("Download started");
      } }, "Download as CSV"));
  }

  clear(root, h("h1", {}, "Try on data"),
    h("section", { class: "card" },
      h("p", {}, "The studio's formula ", h("code", {}, workspace.source.length > 60 ? `${workspace.source.slice(0, 60)}…` : workspace.source), ` (${workspace.profile}) runs on every row.`),
      drop, h("label", { for: "data-file", class: "sr" }, "Choose a CSV or Parquet file"), input, out));
}
