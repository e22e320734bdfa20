"""Fixtures of the playground's browser tests: a real `formulane serve` on a loopback port with a
temporary data directory (`server`), Debian's headless Chromium through Playwright (`browser`),
a context that refuses every request off the app (`context`) and a page that fails the test on
an uncaught script error (`page`). Every test here is skipped, saying why, when no Chromium is
found; helpers are in _browser.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from browser._browser import (
    CHROMIUM, CHROMIUM_FLAGS, NO_CHROMIUM, Server, _env, _free_port, _key, _unmount_under,
)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    if CHROMIUM is None:
        skip = pytest.mark.skip(reason=NO_CHROMIUM)
        here = str(Path(__file__).parent)
        for item in items:
            if str(item.fspath).startswith(here):
                item.add_marker(skip)


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    # Not under pytest's tmp path: that is 0700, and sandbox jobs run under their own uids,
    # which must reach the workspace the service lays out under its data directory.
    data = Path(tempfile.mkdtemp(prefix="formulane-browser-"))
    data.chmod(0o755)
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
        yield Server(url, keys, data)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        _unmount_under(data)
        shutil.rmtree(data, ignore_errors=True)


# One Chromium per module, not per session: Playwright's sync API keeps an asyncio loop running
# in the main thread while it is started, so a session-long one breaks every later test that
# runs its own loop (anyio.run in the MCP tests, another sync_playwright in the pilot report).
@pytest.fixture(scope="module")
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


