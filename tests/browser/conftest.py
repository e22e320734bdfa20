"""Browser tests of the playground: a real `formulane serve` on a loopback port with a temporary
data directory, driven by Playwright through Debian's headless Chromium.

Contract: the session starts one server (``python -m formulane serve``) with three keys made by
``formulane keys create``: tenant ``acme`` (every scope), a second ``acme`` key for a person who
approves (another subject, so four-eyes rules hold), and tenant ``globex`` (every scope), which
must see none of acme's work. `signed_in(page, key)` signs a page in through the form, as a
person would. `axe_check(page, name)` runs axe-core (shipped in ``vendor/``) and fails on any
serious or critical violation. Screenshots go to ``tests/browser/artifacts/`` (gitignored).
The tests skip, saying why, only when no Chromium is found.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ARTIFACTS = HERE / "artifacts"
AXE = HERE / "vendor" / "axe.min.js"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_path() -> str | None:
    env = os.environ.get("FORMULANE_CHROMIUM")
    for candidate in (env, "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


CHROMIUM = chromium_path()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium found (install the Debian "
                                "`chromium` package, or set FORMULANE_CHROMIUM)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORMULANE_")}
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["FORMULANE_DATA_DIR"] = str(data)
    return env


def _key(data: Path, tenant: str, subject: str) -> str:
    out = subprocess.run([sys.executable, "-m", "formulane", "keys", "create", "--tenant", tenant,
                          "--subject", subject, "--data-dir", str(data)],
                         env=_env(data), capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip().splitlines()[-1]


class Server:
    def __init__(self, url: str, keys: dict[str, str]) -> None:
        self.url = url
        self.keys = keys

    def api(self, method: str, path: str, key: str, body: Any = None,
            headers: dict[str, str] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.keys[key]}", "Content-Type": "application/json",
            **(headers or {})})
        with urllib.request.urlopen(req, timeout=30) as res:  # loopback only
            return json.loads(res.read() or b"null")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("formulane-data")
    keys = {"acme": _key(data, "acme", "ana@acme"), "approver": _key(data, "acme", "olga@acme"),
            "globex": _key(data, "globex", "gus@globex")}
    port = _free_port()
    log = open(data / "serve.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "formulane", "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--data-dir", str(data)],
                            env=_env(data), stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError(f"formulane serve exited: {(data / 'serve.log').read_text()}")
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("formulane serve did not answer /healthz in 30 s")
        yield Server(url, keys)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture
def context(browser: Any, server: Server) -> Iterator[Any]:
    # bypass_csp lets the test inject axe-core; the page itself runs under its own CSP.
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True,
                              base_url=server.url)
    # Nothing but the app: any request off loopback fails the test.
    outside: list[str] = []

    def guard(route: Any) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    ctx.route("**/*", guard)
    yield ctx
    ctx.close()
    assert not outside, f"the page requested outside the app: {outside}"


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    assert not errors, f"uncaught errors in the page: {errors}"


def signed_in(page: Any, server: Server, key: str = "acme", hash_: str = "studio") -> Any:
    page.goto("/")
    page.fill("#api-key", server.keys[key])
    page.click("form.signin button[type=submit]")
    page.wait_for_selector("#whoami")
    if hash_ != "studio":
        page.goto(f"/#{hash_}")
    return page


def shot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def axe_check(page: Any, name: str) -> list[dict[str, Any]]:
    """Runs axe-core (WCAG 2 A and AA rules) on the page; fails on serious or critical issues."""
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}});
        return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
    }""")
    bad = [v for v in result if v["impact"] in ("serious", "critical")]
    assert not bad, f"axe-core on {name}: {json.dumps(bad, indent=1)}"
    return result
