"""Helpers of the playground's browser tests (the fixtures are in conftest.py).

The session starts one server (``python -m formulane serve``) with three keys made by
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
import urllib.request
from pathlib import Path
from typing import Any


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
NO_CHROMIUM = ("no Chromium found (install the Debian `chromium` package, or set "
               "FORMULANE_CHROMIUM to its path)")


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
    def __init__(self, url: str, keys: dict[str, str], data: Path) -> None:
        self.url = url
        self.keys = keys
        self.data = data

    def cli(self, *args: str) -> str:
        """Runs ``formulane ARGS --data-dir DATA`` (keys, db) and returns its output."""
        out = subprocess.run([sys.executable, "-m", "formulane", *args, "--data-dir", str(self.data)],
                             env=_env(self.data), capture_output=True, text=True, timeout=60,
                             check=True)
        return out.stdout

    def api(self, method: str, path: str, key: str, body: Any = None,
            headers: dict[str, str] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.keys[key]}", "Content-Type": "application/json",
            **(headers or {})})
        with urllib.request.urlopen(req, timeout=30) as res:  # loopback only
            return json.loads(res.read() or b"null")


def _unmount_under(path: Path) -> None:
    """Unmounts what the service left mounted under its data directory (the sandbox's prepared
    tmpfs workspace outlives `formulane serve`'s shutdown today), deepest first."""
    prefix = str(path.resolve()) + "/"
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return
    points = [ln.split()[4] for ln in lines if ln.split()[4].startswith(prefix)]
    for point in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", point], capture_output=True, timeout=30, check=False)


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
