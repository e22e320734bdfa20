"""Every lane answers one result shape over HTTP: the `LaneResult` of a sandbox job (at submit
with ``?wait=``, and from ``GET /v1/jobs/{id}`` once it ended) has the same keys as the tool,
formula and refuse lanes' answers; another tenant gets none of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from test_http import envelope_ok

CASES = yaml.safe_load((Path(__file__).parent / "cases" / "job_lanes.yaml").read_text())


def _sandbox_available(a: httpx.Client) -> bool:
    routed = a.post("/v1/jobs/route", json={"ask": "sum of squares", "code": "print(sum(i * i for i in range(10)))"}).json()
    return bool(routed["lane"] == "sandbox")


@pytest.fixture(scope="module")
def answers(a: httpx.Client) -> dict[str, dict[str, Any]]:
    out = {}
    for case in CASES:
        if case["lane"] == "sandbox" and not _sandbox_available(a):
            continue
        r = a.post("/v1/jobs", params={"wait": 60}, json=case["request"])
        assert r.status_code == 200, r.text
        out[case["name"]] = r.json()
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_lane_answers_a_lane_result(case: dict[str, Any],
                                          answers: dict[str, dict[str, Any]]) -> None:
    if case["name"] not in answers:
        pytest.skip("the router does not send code to the sandbox here")
    body = answers[case["name"]]
    assert body["lane"] == case["lane"]
    result = body["result"]
    assert result is not None, body
    assert result["lane"] == case["lane"] and result["outcome"] == case["outcome"], result
    assert body["outcome"] == case["outcome"], body
    if "value_keys" in case:
        assert sorted(body["value"]) == sorted(case["value_keys"]), body
    else:
        assert body["value"] == case["value"], body
    assert result["value"] == body["value"]
    shapes = {frozenset(b["result"]) for b in answers.values()}
    assert len(shapes) == 1, shapes  # one shape, whichever lane ran
    assert result["receipt"]["lane"] == case["lane"]


def test_a_finished_sandbox_job_carries_its_lane_result(a: httpx.Client, b: httpx.Client) -> None:
    if not _sandbox_available(a):
        pytest.skip("the router does not send code to the sandbox here")
    request = {"ask": "a value", "code": "import json\nresult = json.loads('{\"n\": 42}')",
               "idempotency_key": "lane-result-get"}
    r = a.post("/v1/jobs", json=request)  # no wait: queued
    assert r.status_code in (200, 202), r.text
    job_id = r.json()["job"]["job_id"]
    with a.stream("GET", f"/v1/jobs/{job_id}/events") as stream:
        lines = [line for line in stream.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: {}"  # the end event
    job = a.get(f"/v1/jobs/{job_id}").json()
    assert job["status"] == "succeeded" and job["lane"] == "sandbox"
    result = job["result"]
    assert result["job_id"] == job_id and result["value"] == {"n": 42} and job["value"] == {"n": 42}
    assert result["receipt"]["sandbox"]["outcome"] == "succeeded"
    # the lane receipt is written once: reading again gives the same receipt
    assert a.get(f"/v1/jobs/{job_id}").json()["result"]["receipt"] == result["receipt"]
    # the same idempotency key answers the finished job's result at once
    again = a.post("/v1/jobs", json=request)
    assert again.status_code == 200 and again.json()["result"] == result
    # the other tenant: not found, and its own submit of the same key is its own job
    envelope_ok(b.get(f"/v1/jobs/{job_id}"), "E703", 404)
    theirs = b.post("/v1/jobs", params={"wait": 60}, json=request).json()
    assert theirs["job"]["job_id"] != job_id


def test_wait_is_validated(a: httpx.Client) -> None:
    envelope_ok(a.post("/v1/jobs", params={"wait": -1},
                       json={"ask": "x", "formula": "1"}), "E706", 422)


def _all_pages(c: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cursor = None
    for _ in range(200):
        page = c.get("/v1/jobs", params={**params, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        body = page.json()
        assert len(body["jobs"]) <= params.get("limit", 20)
        rows += body["jobs"]
        cursor = body["next_cursor"]
        if cursor is None:
            return rows
    raise AssertionError("the pages never ended")


def test_jobs_list_newest_first_paged_filtered_and_per_tenant(a: httpx.Client,
                                                              b: httpx.Client) -> None:
    mine = []
    for i in range(3):
        r = a.post("/v1/jobs", json={"ask": f"listed {i}", "formula": f"{i} + 1"})
        assert r.status_code == 200, r.text
        mine.append(r.json()["result"]["receipt"]["receipt_id"])
    r = a.post("/v1/jobs", json={"ask": "listed tool", "tool_call": {"name": "demo_list_notes"}})
    mine.append(r.json()["result"]["receipt"]["receipt_id"])
    rows = _all_pages(a, limit=2)
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))  # no row twice across pages
    assert [ids.index(x) for x in reversed(mine)] == sorted(ids.index(x) for x in mine)
    stamps = [row["created_at"] for row in rows]
    assert stamps == sorted(stamps, reverse=True)  # newest first
    newest = a.get("/v1/jobs", params={"limit": 1}).json()["jobs"][0]
    assert newest["id"] == mine[-1] and newest["lane"] == "tool" and newest["ask"] == "listed tool"
    formulas = _all_pages(a, lane="formula", limit=100)
    assert formulas and all(row["lane"] == "formula" for row in formulas)
    assert set(mine[:3]) <= {row["id"] for row in formulas}
    assert all(row["state"] == "succeeded" for row in _all_pages(a, state="succeeded", limit=50))
    sandbox = _all_pages(a, lane="sandbox")
    for row in sandbox:  # a sandbox job opens by its job id
        assert row["job_id"] == row["id"]
        assert a.get(f"/v1/jobs/{row['job_id']}").status_code == 200
    # the other tenant lists none of it
    theirs = {row["id"] for row in _all_pages(b, limit=100)}
    assert not theirs & set(ids)
    # bounds and bad input: one envelope
    envelope_ok(a.get("/v1/jobs", params={"limit": 101}), "E706", 422)
    envelope_ok(a.get("/v1/jobs", params={"cursor": "not-a-cursor"}), "E706", 422)
    envelope_ok(a.get("/v1/jobs", params={"lane": "teleport"}), "E706", 422)
