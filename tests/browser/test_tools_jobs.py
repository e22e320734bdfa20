"""Tools and jobs in a real browser: a write tool's call waits for approval, another person of
the tenant approves it in the inbox with a reason, the call then runs and its receipt is found;
a sandbox job shows the router's decision before it runs, follows its state to a receipt with
limits requested and enforced; another job is cancelled; the lanes dashboard draws its charts;
axe-core on every page."""

from __future__ import annotations

import json
import uuid

from browser._browser import axe_check, shot, signed_in


def test_write_tool_approval_and_receipt(page, browser, server):
    note = f"ship order {uuid.uuid4().hex[:6]}"
    signed_in(page, server, hash_="tools")
    page.select_option("#tool-format", "anthropic")
    page.get_by_role("button", name="Open tool demo_add_note").click()
    page.fill("#arg-demo_add_note-text", note)
    page.get_by_role("button", name="Call demo_add_note").click()
    page.wait_for_function("document.querySelector('#call-status')?.textContent === 'approval_required'")

    # Olga, another person of the tenant, reads what will happen and approves it.
    ctx = browser.new_context(base_url=server.url, bypass_csp=True, viewport={"width": 1280, "height": 900})
    try:
        olga = ctx.new_page()
        signed_in(olga, server, key="approver", hash_="tools")
        card = olga.locator("#approvals article", has_text=note)
        card.wait_for()
        text = card.inner_text()
        assert "ana@acme" in text and "demo_add_note" in text and "tools:approve" in text
        # the service's plain summary and policy result, shown as they are
        assert "write: changes data" in text and "of tenant 'acme'" in text
        assert "approval_required: a write tool runs only once" in text
        shot(olga, "tools-inbox")
        axe_check(olga, "tools with an approval waiting")
        card.locator("input").fill("the customer asked for it by phone")
        card.get_by_role("button", name="Approve demo_add_note").click()
        card.wait_for(state="detached")
    finally:
        ctx.close()

    page.click("#rerun")
    page.wait_for_function("document.querySelector('#call-status')?.textContent === 'ok'")
    assert note in page.locator("#call-result").inner_text()
    page.select_option("#receipt-tool", "demo_add_note")
    page.select_option("#receipt-outcome", "succeeded")
    page.wait_for_selector("#receipt-table")
    needle = note.split()[-1]
    page.fill("#receipt-search", needle)
    page.wait_for_function("n => document.querySelector('#receipts').dataset.shown === 'demo_add_note|succeeded|' + n",
                           arg=needle)
    assert page.locator("#receipt-table tbody tr").count() == 1
    row = page.locator("#receipt-table tbody tr")
    assert "succeeded" in row.inner_text() and "ana@acme" in row.inner_text()
    row.locator("summary").click()
    assert '"approval_id"' in row.inner_text()
    shot(page, "tools-receipt")
    axe_check(page, "tools")


def test_sandbox_job_decision_receipt_and_cancel(page, server):
    signed_in(page, server, hash_="jobs")
    page.click("#route-job")
    page.wait_for_selector("#decision-lane")
    assert page.locator("#decision-lane").inner_text() == "sandbox"
    assert page.locator("#reasons li").count() >= 1
    assert page.locator("#job").inner_text() == ""            # nothing ran yet
    page.click("#submit-job")
    page.wait_for_selector("#job-outcome", timeout=60_000)
    assert page.locator("#job-outcome").inner_text() == "succeeded", page.locator("#receipt").inner_text()
    page.wait_for_selector("#limits")
    limits = page.locator("#limits").inner_text()
    assert "wall_timeout_s" in limits and "memory_bytes" in limits
    assert '"total": 285' in page.locator("#job-stdout").inner_text()
    assert "none" in page.locator("#receipt").inner_text()      # the network policy
    page.wait_for_selector("#artifacts")
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download result.json").click()
    assert json.loads(open(dl.value.path()).read()) == {"total": 285}
    shot(page, "job-receipt")
    axe_check(page, "jobs")

    # A long job, cancelled while it runs.
    page.fill("#job-code", "import time\ntime.sleep(25)\n")
    page.fill("#job-ask", "wait 25 seconds")
    page.fill("#job-wall", "28")
    page.click("#submit-job")
    page.wait_for_function("['queued', 'running'].includes(document.querySelector('#job-state')?.textContent)")
    page.wait_for_function("document.querySelector('#job-state')?.textContent === 'running'", timeout=60_000)
    page.click("#cancel-job")
    page.wait_for_selector("#job-outcome", timeout=60_000)
    assert page.locator("#job-outcome").inner_text() == "cancelled"
    page.wait_for_function("document.querySelectorAll('#job-list li').length >= 2")
    # The list is the service's (GET /v1/jobs), not the tab's: a new tab of the same key sees
    # the jobs, newest first, and opens one from it.
    job_id = page.locator("#job [data-job]").get_attribute("data-job")
    fresh = page.context.new_page()
    signed_in(fresh, server, hash_="jobs")
    fresh.wait_for_selector("#job-list[data-loaded] li")
    first = fresh.locator("#job-list li").first
    assert first.get_attribute("data-id") == job_id and "wait 25 seconds" in first.inner_text()
    first.get_by_role("button").click()
    fresh.wait_for_function("document.querySelector('#job-state')?.textContent === 'cancelled'")
    fresh.close()


def test_lanes_dashboard(page, server):
    # Something to draw: a few formula evaluations in this tenant.
    for i in range(3):
        server.api("POST", "/v1/evaluate", "acme", {"formula": f"1 + {i}"})
    # ... and an escalation request the router keeps in the formula lane.
    server.api("POST", "/v1/jobs", "acme", {"ask": "total", "formula": "2 * 21"})
    signed_in(page, server, hash_="lanes")
    page.wait_for_selector("#charts figure canvas")
    could = page.locator("figure.chart", has_text="could have done")
    assert could.locator("canvas").count() == 1, could.inner_text()
    assert "formula" in page.locator("#lane-totals").inner_text()
    shot(page, "lanes")
    axe_check(page, "lanes")
