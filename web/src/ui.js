// Small DOM helpers shared by every page: an element builder (text is always set as text,
// never parsed as HTML, so nothing a user or the server wrote can become markup), a toast, a
// debounce and the value formatting used in tables.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "value") el.value = v;
    else if (k === "checked") el.checked = !!v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let toastTimer = 0;
export function toast(message, kind = "info") {
  const el = document.getElementById("toast");
  el.textContent = message;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 5000);
}

export function debounce(fn, ms) {
  let t = 0;
  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
}

let uid = 0;
export function nextId(prefix) { uid += 1; return `${prefix}-${uid}`; }

/** A labelled form field: label + control, ids wired for screen readers. */
export function field(label, control, help) {
  const id = control.id || nextId("f");
  control.id = id;
  const helpEl = help ? h("small", { class: "help", id: `${id}-help` }, help) : null;
  if (helpEl) control.setAttribute("aria-describedby", helpEl.id);
  return h("div", { class: "field" }, h("label", { for: id }, label), control, helpEl);
}

/** A value as the tables show it: error values and text as written, others as JSON. */
export function show(v) {
  if (v === undefined) return "";
  if (v === null) return "null";
  if (typeof v === "string") return v;
  if (typeof v === "object" && v && typeof v.error === "string") return v.error;
  return JSON.stringify(v);
}

export function isErrorValue(v) {
  return (typeof v === "string" && /^#[A-Z0-9/!?]+[!?A-Z]*$/.test(v) && v.length <= 12)
    || (v && typeof v === "object" && typeof v.error === "string");
}

/** Deep equality for JSON values (a case's expected value against the answer). */
export function jsonEqual(a, b) {
  if (typeof a === "number" && typeof b === "number") {
    return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  }
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => jsonEqual(a[k], b[k]));
}

/** Parses text the user typed as a JSON value, falling back to the text itself. */
export function looseJson(text) {
  const t = text.trim();
  if (t === "") return null;
  try { return JSON.parse(t); } catch { return text; }
}

export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: filename });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function fmtTime(t) {
  if (!t) return "";
  const d = typeof t === "number" ? new Date(t * (t < 1e12 ? 1000 : 1)) : new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}
