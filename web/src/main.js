// The playground's shell: sign-in with an API key (sessionStorage only, sent as a Bearer
// header, never in a URL), the page links (hash routes, so the server serves one file), and
// each page's render function. Every page draws only what the key's tenant may see: the
// server scopes every answer; the page keeps no data across keys.
import { api, auth, R } from "./api.js";
import { h, clear, field, toast } from "./ui.js";
import { renderStudio } from "./studio.js";
import { renderPublish } from "./publish.js";
import { renderData } from "./data.js";
import { renderTools } from "./tools.js";
import { renderJobs, renderLanes } from "./jobs.js";

const PAGES = [
  ["studio", "Studio", renderStudio],
  ["publish", "Publish", renderPublish],
  ["data", "Try on data", renderData],
  ["tools", "Tools", renderTools],
  ["jobs", "Jobs", renderJobs],
  ["lanes", "Lanes", renderLanes],
];

let teardown = null;
let me = null;

function signIn(main, message) {
  const key = h("input", { type: "password", id: "api-key", autocomplete: "off", required: true });
  const form = h("form", { class: "card signin", onsubmit: async (e) => {
    e.preventDefault();
    auth.key = key.value.trim();
    try { me = await api.get(R.whoami); toast(`Signed in as ${me.principal || me.subject || ""} (${me.tenant || ""})`); route(); }
    catch (err) { auth.key = ""; signIn(main, `Sign-in refused: ${err.message}`); }
  } },
  h("h1", {}, "Sign in"),
  h("p", {}, "Paste an API key. ", h("code", {}, "formulane serve"), " prints a development key on its first start; ",
    h("code", {}, "formulane keys create --tenant T --scopes …"), " makes others. The key stays in this tab's session storage."),
  field("API key", key),
  message ? h("p", { class: "bad", role: "alert" }, message) : null,
  h("button", { type: "submit", class: "primary" }, "Sign in"));
  clear(main, form);
  key.focus();
}

function nav(current) {
  clear(document.getElementById("nav"), h("ul", {}, PAGES.map(([id, label]) =>
    h("li", {}, h("a", { href: `#${id}`, "aria-current": id === current ? "page" : undefined }, label)))));
  const who = document.getElementById("who");
  clear(who, me ? [h("span", { id: "whoami" }, `${me.principal || me.subject || "?"} · ${me.tenant || "?"}`), " ",
    h("button", { type: "button", onclick: () => { auth.key = ""; me = null; sessionStorage.clear(); route(); } }, "Sign out")] : null);
}

async function route() {
  const main = document.getElementById("main");
  if (teardown) { try { teardown(); } catch { /* page already gone */ } teardown = null; }
  if (!auth.key) { me = null; nav(null); signIn(main); return; }
  if (!me) {
    try { me = await api.get(R.whoami); } catch (e) { auth.key = ""; nav(null); signIn(main, `Sign-in refused: ${e.message}`); return; }
  }
  const id = (location.hash || "#studio").slice(1).split("/")[0];
  const page = PAGES.find((p) => p[0] === id) || PAGES[0];
  nav(page[0]);
  document.title = `${page[1]} · formulane playground`;
  clear(main);
  teardown = page[2](main, me) || null;
}

window.addEventListener("hashchange", () => {
  // Only page names route; any other fragment is an in-page link.
  const id = location.hash.slice(1);
  if (!id || PAGES.some((p) => p[0] === id)) route();
});
window.addEventListener("formulane:signed-out", (e) => {
  me = null;
  if (teardown) { try { teardown(); } catch { /* page already gone */ } teardown = null; }
  nav(null);
  signIn(document.getElementById("main"), `Signed out: ${e.detail}`);
});
document.querySelector(".skip").addEventListener("click", (e) => { e.preventDefault(); document.getElementById("main").focus(); });
route();
