// Builds the playground into src/formulane/api/static/ (committed; the service mounts it at /).
// One command reproduces it: `npm --prefix web ci && npm --prefix web run build`.
// Output: index.html, app.js (one minified ES module bundle), app.css; no source maps, no
// external URL: everything the page loads is served by the app.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "src", "formulane", "api", "static");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const js = await build({
  entryPoints: [join(here, "src", "main.js")],
  metafile: true,
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020"],
  outdir: out,
  entryNames: "app",
  chunkNames: "chunk-[hash]",
  splitting: true,  // uPlot is a chunk loaded by the lanes page only
  legalComments: "none",  // the licences are collected whole in THIRD-PARTY-LICENSES.txt
  logLevel: "warning",
});
await build({
  entryPoints: [join(here, "src", "style.css")],
  bundle: true,
  minify: true,
  outfile: join(out, "app.css"),
  logLevel: "warning",
});
copyFileSync(join(here, "src", "index.html"), join(out, "index.html"));
copyFileSync(join(here, "src", "favicon.svg"), join(out, "favicon.svg"));

// The licence of every npm package bundled into app.js (and app.css), served beside them.
const pkgs = new Set();
for (const input of Object.keys(js.metafile.inputs)) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (m) pkgs.add(m[1]);
}
pkgs.add("uplot");  // its stylesheet is in app.css
const notices = [...pkgs].sort().map((name) => {
  const dir = join(here, "node_modules", name);
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  const text = file ? readFileSync(join(dir, file), "utf8").trim() : `(${meta.license}; no licence file in the package)`;
  return `${name} ${meta.version} (${meta.license})\n${"-".repeat(72)}\n${text}\n`;
});
writeFileSync(join(out, "THIRD-PARTY-LICENSES.txt"),
  "The formulane playground bundles these npm packages into app.js and app.css.\n\n" + notices.join("\n"));

// axe-core for the browser tests' accessibility check (CI runs no npm): shipped beside the
// tests with its licence, never served by the app.
const vendor = join(here, "..", "tests", "browser", "vendor");
mkdirSync(vendor, { recursive: true });
const axe = join(here, "node_modules", "axe-core");
copyFileSync(join(axe, "axe.min.js"), join(vendor, "axe.min.js"));
copyFileSync(join(axe, "LICENSE"), join(vendor, "axe-core.LICENSE"));
const axeVersion = JSON.parse(readFileSync(join(axe, "package.json"), "utf8")).version;
writeFileSync(join(vendor, "README.md"),
  `axe-core ${axeVersion} (MPL-2.0, see axe-core.LICENSE), copied from the npm package by ` +
  "`npm --prefix web run build`; used only by tests/browser for the accessibility check.\n");

for (const f of readdirSync(out).filter((f) => /\.(js|css|html)$/.test(f)).sort()) {
  console.log(`${f}: ${(statSync(join(out, f)).size / 1024).toFixed(1)} KiB`);
}
