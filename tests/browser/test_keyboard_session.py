"""Keyboard alone, and the key's life: sign in, skip to the content, change page, write in the
editor, apply a fix-it and leave the editor with the keyboard only; a key revoked while the page
is open sends the person back to the sign-in form, saying why; the key is never in a URL."""

from __future__ import annotations

from browser._browser import axe_check


def tab_to(page, predicate: str, limit: int = 40, key: str = "Tab") -> None:
    for _ in range(limit):
        page.keyboard.press(key)
        if page.evaluate(f"(() => {{ const el = document.activeElement; return !!({predicate}); }})()"):
            return
    raise AssertionError(f"Tab never reached: {predicate}")


def test_keyboard_only(page, server):
    page.goto("/")
    axe_check(page, "sign-in")
    page.keyboard.type(server.keys["acme"])        # the key field has the focus
    page.keyboard.press("Enter")
    page.wait_for_selector("#whoami")
    page.wait_for_selector("#result .value")
    tab_to(page, "el.classList.contains('cm-content')")
    page.keyboard.press("Control+a")
    page.keyboard.type("ROUDN(price, 1)")
    page.wait_for_selector("#diagnostics .diag")
    page.keyboard.press("Control+.")
    page.wait_for_function("document.querySelector('#result').textContent === '12.5'")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")                       # Tab leaves the editor: no trap
    assert not page.evaluate("document.activeElement.classList.contains('cm-content')")
    page.focus("a.skip")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    assert page.evaluate("location.hash") in ("", "#studio")
    tab_to(page, "el.tagName === 'A' && el.textContent === 'Publish'", key="Shift+Tab")  # back up to the nav
    page.keyboard.press("Enter")
    page.wait_for_selector("#formula-name")
    assert server.keys["acme"] not in page.url


def test_revoked_key_back_to_sign_in(page, server):
    minted = server.api("POST", "/v1/keys", "acme", {"ttl_s": 600, "subject": "short@acme",
                                                       "scopes": ["formulas:read"]})
    page.goto("/")
    page.fill("#api-key", minted["key"])
    page.click("form.signin button[type=submit]")
    page.wait_for_selector("#whoami")
    assert "short@acme" in page.locator("#whoami").inner_text()
    page.wait_for_selector("#result .value")
    server.cli("keys", "revoke", minted["principal"]["key_id"])
    # The service caches a key for about a second (live_cache_s): the next checks after that
    # are refused (401). Keep editing until one is.
    for profile in ["excel", "strict"] * 10:
        if page.locator("form.signin [role=alert]").count():
            break
        page.select_option("#profile", profile)
        page.wait_for_timeout(400)
    page.wait_for_selector("form.signin [role=alert]")
    assert "Signed out" in page.locator("form.signin [role=alert]").inner_text()
    assert page.evaluate("sessionStorage.getItem('formulane.key')") is None
