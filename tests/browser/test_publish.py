"""The publish flow in a real browser: a failing known-answer case keeps Publish disabled (and
the service refuses the saved version), fixing it publishes, a new version is published, the
side-by-side diff shows the change, a rollback moves `live` back; axe-core on the page."""

from __future__ import annotations

import urllib.error
import uuid

import pytest

from browser._browser import axe_check, shot, signed_in


def set_source(page, text: str) -> None:
    page.click("#publish-editor .cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


def verdict(page, i: int = 0) -> str:
    # A case is 'pending' while its run is in flight: wait for the settled verdict.
    page.wait_for_function(
        f"(v => v && v !== 'pending')(document.querySelector('#cases tr[data-case=\"{i}\"]')?.dataset.verdict)")
    return page.locator(f"#cases tr[data-case='{i}']").get_attribute("data-verdict")


def test_cases_gate_publish_then_rollback(page, server):
    name = f"order_total_{uuid.uuid4().hex[:8]}"
    signed_in(page, server, hash_="publish")
    page.fill("#formula-name", name)
    page.dispatch_event("#formula-name", "change")
    set_source(page, "ROUND(price * qty, 2)")
    page.click("#add-case")                        # inputs: the studio's row (12.5, 12)
    page.fill("[aria-label='Case 1 expected']", "151")
    page.wait_for_function("document.querySelector('#cases tr[data-case=\"0\"] .actual').textContent === '150'")
    assert verdict(page) == "fail"
    assert page.locator("#publish").is_disabled()
    assert "publish refused" in page.locator("#cases-summary").inner_text()

    # The service refuses it too: save the failing version and ask it to publish.
    page.click("#save-version")
    page.wait_for_selector("#versions tr[data-version='1']")
    with pytest.raises(urllib.error.HTTPError) as refused:
        server.api("POST", f"/v1/formulas/{name}/versions/1/publish", "acme", {})
    assert refused.value.code == 409
    shot(page, "publish-refused")

    page.fill("[aria-label='Case 1 expected']", "150")
    page.wait_for_function("document.querySelector('#cases tr[data-case=\"0\"]').dataset.verdict === 'pass'")
    assert page.locator("#publish").is_enabled()
    page.click("#publish")
    page.wait_for_selector("#published")
    page.wait_for_selector("#versions tr[data-version='2'] .badge")   # v2 is live

    # A second published version, then the diff and a rollback.
    set_source(page, "ROUND(price * qty * 1.1, 2)")
    page.fill("[aria-label='Case 1 expected']", "165")
    page.wait_for_function("document.querySelector('#cases tr[data-case=\"0\"]').dataset.verdict === 'pass'")
    page.click("#publish")
    page.wait_for_selector("#versions tr[data-version='3'] .badge")
    page.select_option("#diff-from", "2")
    page.select_option("#diff-to", "3")
    diff = page.locator("#diff table.diff")
    assert "ROUND(price * qty, 2)" in diff.locator("td.del").inner_text()
    assert "ROUND(price * qty * 1.1, 2)" in diff.locator("td.add").inner_text()
    page.fill("#rollback-reason", "the 10% surcharge is not approved yet")
    page.get_by_role("button", name="Make v2 live").click()
    page.wait_for_selector("#versions tr[data-version='2'] .badge")
    assert server.api("GET", f"/v1/formulas/{name}", "acme")["live_version"] == 2
    assert server.api("POST", f"/v1/formulas/{name}/evaluate", "acme",
                      {"variables": {"price": 10, "qty": 2}})["value"] == 20
    shot(page, "publish-rolled-back")
    axe_check(page, "publish")
