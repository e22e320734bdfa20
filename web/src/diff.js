// A line diff (longest common subsequence) for the side-by-side view of two versions; the
// sources are formulas (bounded by the service's formula size limit), so O(n*m) is fine.
// Rows: {kind: "same"|"del"|"add"|"chg", left, right}; a deletion followed by an addition
// pairs up as one changed row.
export function lineDiff(a, b) {
  const x = a.split("\n"), y = b.split("\n");
  const n = x.length, m = y.length;
  const L = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const raw = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { raw.push({ kind: "same", left: x[i++], right: y[j++] }); }
    else if (L[i + 1][j] >= L[i][j + 1]) raw.push({ kind: "del", left: x[i++] });
    else raw.push({ kind: "add", right: y[j++] });
  }
  while (i < n) raw.push({ kind: "del", left: x[i++] });
  while (j < m) raw.push({ kind: "add", right: y[j++] });
  const out = [];
  for (let k = 0; k < raw.length; k++) {
    if (raw[k].kind === "del" && raw[k + 1] && raw[k + 1].kind === "add") { out.push({ kind: "chg", left: raw[k].left, right: raw[k + 1].right }); k++; }
    else out.push(raw[k]);
  }
  return out;
}
