// What the pages share in one tab: the formula being written, its schema, profile and input
// row (kept in sessionStorage beside the key, so a reload keeps the work; nothing in a URL).
const KEY = "formulane.workspace";

const defaults = {
  source: 'IF(qty > 10, price * qty * 0.9, price * qty)',
  profile: "strict",
  schema: [{ name: "price", type: "Number" }, { name: "qty", type: "Number" }],
  row: { price: 12.5, qty: 12 },
};

function load() {
  try { return { ...defaults, ...JSON.parse(sessionStorage.getItem(KEY) || "{}") }; } catch { return { ...defaults }; }
}

export const workspace = load();

export function saveWorkspace() {
  sessionStorage.setItem(KEY, JSON.stringify(workspace));
}

/** The schema as the API takes it: {name: "Type"}. */
export function schemaObject(rows = workspace.schema) {
  const out = {};
  for (const r of rows) if (r.name && r.name.trim()) out[r.name.trim()] = (r.type || "Any").trim();
  return out;
}

/** Turns a pasted JSON Schema (an object schema) or a sample row into schema rows. */
export function schemaFromPaste(text) {
  const value = JSON.parse(text);
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("paste a JSON object: a JSON Schema or one sample row");
  const isJsonSchema = value.type === "object" && value.properties && typeof value.properties === "object";
  if (isJsonSchema) {
    const required = new Set(value.required || []);
    return Object.entries(value.properties).map(([name, s]) => ({ name, type: fromJsonSchema(s, !required.has(name)) }));
  }
  return Object.entries(value).map(([name, v]) => ({ name, type: fromSample(v) }));
}

function fromJsonSchema(s, optional) {
  let types = Array.isArray(s.type) ? s.type : [s.type];
  const nullable = optional || types.includes("null") || s.nullable === true;
  types = types.filter((x) => x && x !== "null");
  const ty = types[0];
  let out;
  if (ty === "string") out = s.format === "date" ? "Date" : s.format === "date-time" ? "DateTime" : s.format === "duration" ? "Duration" : "Text";
  else if (ty === "number" || ty === "integer") out = "Number";
  else if (ty === "boolean") out = "Boolean";
  else if (ty === "array") out = `List[${s.items ? fromJsonSchema(s.items, false) : "Any"}]`;
  else if (ty === "object" && s.properties) {
    const req = new Set(s.required || []);
    out = `Record{${Object.entries(s.properties).map(([k, v]) => `${k}: ${fromJsonSchema(v, !req.has(k))}`).join(", ")}}`;
  } else out = "Any";
  return nullable && out !== "Any" ? `${out}?` : out;
}

function fromSample(v) {
  if (v === null) return "Any";
  if (typeof v === "number") return "Number";
  if (typeof v === "boolean") return "Boolean";
  if (typeof v === "string") {
    if (/^\d{4}-\d{2}-\d{2}$/.test(v)) return "Date";
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v)) return "DateTime";
    return "Text";
  }
  if (Array.isArray(v)) return `List[${v.length ? fromSample(v[0]) : "Any"}]`;
  return `Record{${Object.entries(v).map(([k, x]) => `${k}: ${fromSample(x)}`).join(", ")}}`;
}

/** A typed input's text as the value the API gets. */
export function parseInput(type, text) {
  const base = (type || "Any").replace(/\?$/, "");
  const t = String(text ?? "").trim();
  if (t === "") return null;
  if (base === "Number") { const n = Number(t); return Number.isFinite(n) ? n : t; }
  if (base === "Boolean") return /^(true|1|yes)$/i.test(t);
  if (base === "Text" || base === "Date" || base === "DateTime" || base === "Duration") return String(text);
  try { return JSON.parse(t); } catch { return String(text); }
}
