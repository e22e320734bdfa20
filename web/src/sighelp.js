// Signature help without a round trip: the call around the cursor (the innermost unclosed
// "NAME(" outside strings and comments, and which argument the cursor is in) and its
// signatures from the function catalog ("ROUND(number: Number, [num_digits: Number]) -> Number").

export function callAt(text, cursor) {
  const stack = [];
  let i = 0;
  while (i < cursor) {
    const ch = text[i];
    if (ch === '"' || ch === "'") {
      const q = ch; i++;
      while (i < cursor) { if (text[i] === q) { if (text[i + 1] === q) i += 2; else break; } else i++; }
      i++; continue;
    }
    if (ch === "/" && text[i + 1] === "*") { const e = text.indexOf("*/", i + 2); i = e < 0 ? cursor : e + 2; continue; }
    if (ch === "(") {
      const m = /([^\W\d][\w]*(?:\.[^\W\d]\w*)*)\s*$/u.exec(text.slice(Math.max(0, i - 64), i));
      stack.push({ name: m ? m[1] : null, arg: 0, open: i });
    } else if (ch === "[" || ch === "{") stack.push({ name: null, arg: 0, open: i });
    else if (ch === ")" || ch === "]" || ch === "}") stack.pop();
    else if (ch === "," && stack.length) stack[stack.length - 1].arg += 1;
    i++;
  }
  for (let k = stack.length - 1; k >= 0; k--) if (stack[k].name) return stack[k];
  return null;
}

/** Splits "NAME(a: X, [b: Y]) -> Z" into its parameter labels with their offsets. */
export function parseSignature(sig) {
  const open = sig.indexOf("(");
  let depth = 0, start = open + 1;
  const params = [];
  for (let i = open + 1; i < sig.length; i++) {
    const ch = sig[i];
    if (ch === "(" || ch === "[" || ch === "{" || ch === "<") depth++;
    else if ((ch === ")" || ch === "]" || ch === "}" || ch === ">") && depth > 0) depth--;
    else if ((ch === "," && depth === 0) || (ch === ")" && depth === 0)) {
      let a = start; while (sig[a] === " ") a++;
      if (i > a) params.push([a, i]);
      start = i + 1;
      if (ch === ")") break;
    }
  }
  return params;
}

/** The parameter span to highlight for argument index `arg` (variadic tails repeat). */
export function activeParam(sig, arg) {
  const params = parseSignature(sig).filter(([a, b]) => sig.slice(a, b).trim() !== "...");
  if (!params.length) return null;
  if (arg < params.length) return params[arg];
  const last = params[params.length - 1];
  return sig.slice(last[0], last[1]).includes("...") ? last : null;
}
