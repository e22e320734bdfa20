"""Try on data, and tenancy in a real browser: a CSV file runs the studio's formula on every row
(first rows with the value and error columns, error codes over the whole file, a download);
a second tenant signed in to the same page sees none of the first tenant's formulas, approvals,
receipts or jobs (and the service answers 404 for them)."""

from __future__ import annotations

import urllib.error
import uuid

import pytest

from browser._browser import axe_check, shot, signed_in


def test_csv_rows_errors_and_download(page, server, tmp_path):
    signed_in(page, server)
    page.click("#editor .cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text("ROUND(price / qty, 2)")
    page.wait_for_function("document.querySelector('#result').textContent !== ''")
    rows = ["price,qty"] + [f"{10 + i},{i % 4}" for i in range(2000)]   # every 4th row: qty 0
    csv = tmp_path / "orders.csv"
    csv.write_text("\n".join(rows) + "\n")
    page.goto("/#data")
    page.set_input_files("#data-file", str(csv))
    page.wait_for_selector("#error-summary")
    assert "orders.csv: 2000 rows" in page.locator("#data-result h2").inner_text()
    summary = page.locator("#error-summary tbody").inner_text()
    assert "#DIV/0!\t500" in summary, summary
    first = page.locator("#data-rows tbody tr")
    assert first.count() == 50
    assert first.nth(0).inner_text().split("\t")[-1] == "#DIV/0!"       # 10 / 0
    assert first.nth(1).inner_text().split("\t")[-2] == "11"             # 11 / 1
    shot(page, "try-on-data")
    axe_check(page, "try on data")
    with page.expect_download() as dl:
        page.click("#download")
    text = open(dl.value.path()).read().splitlines()
    assert text[0] == "price,qty,value,error" and len(text) == 2001
    assert text[1] == "10,0,,#DIV/0!" and text[3] == "12,2,6,"


def test_second_tenant_sees_nothing(page, server):
    name = f"acme_secret_{uuid.uuid4().hex[:6]}"
    server.api("POST", "/v1/formulas", "acme", {
        "name": name, "formula": "price * 2", "schema": {"price": "Number"},
        "cases": [{"inputs": {"price": 1}, "expect": 2}]})
    server.api("POST", f"/v1/formulas/{name}/versions/1/publish", "acme", {})
    pending = server.api("POST", "/v1/tools/demo_add_note/call", "acme", {"args": {"text": name}},
                         headers={"Idempotency-Key": uuid.uuid4().hex})
    job = server.api("POST", "/v1/jobs", "acme", {
        "ask": "acme only", "code": "import sys\nprint('acme')\n", "idempotency_key": uuid.uuid4().hex})
    job_id = job["job"]["job_id"]

    signed_in(page, server, key="globex", hash_="publish")
    assert "globex" in page.locator("#whoami").inner_text()
    page.fill("#formula-name", name)
    page.dispatch_event("#formula-name", "change")
    page.wait_for_function("n => document.querySelector('#versions').dataset.loaded === n", arg=name)
    assert page.locator("#versions tr").count() == 0
    page.goto("/#tools")
    page.wait_for_selector("#inbox-empty")
    assert name not in page.locator("#approvals").inner_text()
    page.wait_for_selector("#receipts p, #receipts table")
    assert name not in page.locator("#receipts").inner_text()
    assert pending["approval"]["id"] not in page.content()
    page.goto("/#jobs")
    page.wait_for_selector("#job-list[data-loaded]")
    assert job_id[:13] not in page.locator("#job-list").inner_text()
    assert not page.locator(f"#job-list li[data-id='{job_id}']").count()
    shot(page, "second-tenant")
    for path in (f"/v1/formulas/{name}", f"/v1/jobs/{job_id}",
                 f"/v1/approvals/{pending['approval']['id']}"):
        with pytest.raises(urllib.error.HTTPError) as err:
            server.api("GET", path, "globex")
        assert err.value.code == 404, path


def test_parquet_answer_downloads(page, server, tmp_path):
    import polars as pl

    signed_in(page, server)
    page.click("#editor .cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text("price / qty")
    page.wait_for_function("document.querySelector('#result').textContent !== ''")
    src = tmp_path / "orders.parquet"
    pl.DataFrame({"price": [1.5, 2.0, 4.0], "qty": [2.0, 0.0, 0.5]}).write_parquet(src)
    page.goto("/#data")
    page.set_input_files("#data-file", str(src))
    page.wait_for_selector("#download")
    assert "orders.parquet: 3 rows" in page.locator("#data-result h2").inner_text()
    # The service's JSON summary of the Parquet answer: error codes and the first rows.
    summary = page.locator("#error-summary tbody").inner_text()
    assert "#DIV/0!" in summary and "1" in summary
    rows = page.locator("#data-rows tbody tr")
    assert rows.count() == 3 and "0.75" in rows.nth(0).inner_text()
    assert "#DIV/0!" in rows.nth(1).inner_text()
    with page.expect_download() as dl:
        page.click("#download")
    out = pl.read_parquet(dl.value.path())
    assert out["value"].to_list() == [0.75, None, 8.0]
    assert {"price", "qty", "value"} <= set(out.columns)
