"""HTTP tests against a real `formulane serve` on loopback: every resource, and a second
tenant that must get nothing (a foreign id answers 404, lists are empty)."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from conftest import Server, client

CASES = yaml.safe_load((Path(__file__).parent / "cases" / "formula_requests.yaml").read_text())


def subset(actual: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and subset(actual[k], v)
                                                for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            subset(x, y) for x, y in zip(actual, expected))
    return bool(actual == expected)


def envelope_ok(r: httpx.Response, code: str, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["code"] == code, body
    for key in ("message", "span", "hint", "fixes", "rendered", "request_id"):
        assert key in body
    assert body["request_id"] == r.headers["x-request-id"]
    assert "Traceback" not in r.text
    return body


def test_first_start_prints_a_dev_key_and_the_playground(server: Server) -> None:
    out = server.output()
    assert f"playground: {server.base}/" in out
    key = next(line.strip() for line in out.splitlines() if line.strip().startswith("fk_"))
    with client(server, key) as dev:
        who = dev.get("/v1/whoami").json()
    assert who["tenant"] == "dev" and "tools:approve" in who["scopes"]
    assert key not in out.split(key, 1)[1]  # printed once, never logged again


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['path']}:{json.dumps(c['body'])[:40]}")
def test_formula_routes(a: httpx.Client, case: dict[str, Any]) -> None:
    r = a.post(f"/v1/{case['path']}", json=case["body"])
    assert r.status_code == case["status"], r.text
    assert subset(r.json(), case.get("expect", {})), r.json()


def test_functions_catalog(a: httpx.Client) -> None:
    body = a.get("/v1/functions", params={"query": "round"}).json()
    assert "ROUND" in {f["name"] for f in body["functions"]}


def test_arrow_and_parquet_batches(a: httpx.Client) -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"price": [9.99, 5.0, 2.0], "qty": [3, 0, 4]})
    for kind, write, read in (
            ("application/vnd.apache.arrow.stream", frame.write_ipc_stream, pl.read_ipc_stream),
            ("application/vnd.apache.parquet", frame.write_parquet, pl.read_parquet)):
        sink = io.BytesIO()
        write(sink)
        r = a.post("/v1/evaluate/batch", content=sink.getvalue(), headers={"content-type": kind},
                   params={"formula": ["total=ROUND(price * qty, 2)", "unit=price / qty"]})
        assert r.status_code == 200, r.text
        out = read(io.BytesIO(r.content))
        assert out["total"].to_list() == [29.97, 0.0, 8.0]
        assert out["unit__error"].to_list() == [None, "#DIV/0!", None]
    bad = a.post("/v1/evaluate/batch", content=b"not arrow",
                 headers={"content-type": "application/vnd.apache.arrow.stream"},
                 params={"formula": "x=1"})
    envelope_ok(bad, "E706", 422)


def test_envelope_auth_scope_validation_and_limits(server: Server, a: httpx.Client,
                                                   keys: dict[str, str]) -> None:
    with client(server, None) as anon:
        envelope_ok(anon.get("/v1/whoami"), "E701", 401)
    with client(server, keys["a"][:-2] + "xx") as wrong:
        envelope_ok(wrong.get("/v1/whoami"), "E701", 401)
    with client(server, keys["a_read"]) as reader:
        envelope_ok(reader.post("/v1/formulas", json={"name": "n", "formula": "1"}), "E702", 403)
    body = envelope_ok(a.post("/v1/evaluate", json={"formul": "1"}), "E706", 422)
    assert {d["loc"][-1] for d in body["detail"]} == {"formula", "formul"}
    envelope_ok(a.get("/v1/nothing-here"), "E703", 404)
    envelope_ok(a.post("/v1/evaluate", content=b"{" + b" " * (2 << 20) + b"}",
                       headers={"content-type": "application/json"}), "E705", 413)
    r = a.get("/v1/whoami", headers={"X-Request-ID": "trace-123"})
    assert r.headers["x-request-id"] == "trace-123"


def test_minted_key_is_down_scoped_and_expires(server: Server, a: httpx.Client) -> None:
    r = a.post("/v1/keys", json={"scopes": ["formulas:read"], "ttl_s": 2, "subject": "end-user"})
    assert r.status_code == 201, r.text
    minted = r.json()["key"]
    with client(server, minted) as child:
        who = child.get("/v1/whoami").json()
        assert who["tenant"] == "acme" and who["scopes"] == ["formulas:read"]
        envelope_ok(child.post("/v1/keys", json={}), "E702", 403)
        time.sleep(2.1)
        envelope_ok(child.get("/v1/whoami"), "E701", 401)
    envelope_ok(a.post("/v1/keys", json={"scopes": ["no:such"]}), "E702", 403)


def test_stored_formula_lifecycle(a: httpx.Client, b: httpx.Client) -> None:
    create = {"name": "order_total", "formula": "ROUND(price * qty * 1.2, 2)",
              "schema": {"price": "Number", "qty": "Number"},
              "cases": [{"inputs": {"price": 9.99, "qty": 3}, "expect": 35.96}]}
    r = a.post("/v1/formulas", json=create)
    assert r.status_code == 201, r.text
    envelope_ok(a.post("/v1/formulas", json=create), "E707", 409)
    envelope_ok(a.post("/v1/formulas/order_total/evaluate", json={}), "E703", 404)  # not live
    assert a.post("/v1/formulas/order_total/versions/1/publish").status_code == 200
    v = a.post("/v1/formulas/order_total/evaluate", json={"variables": {"price": 10, "qty": 1}})
    assert v.json()["value"] == 12 and v.json()["version"] == 1
    # v2 breaks its case: not published, failures returned
    r = a.post("/v1/formulas/order_total/versions",
               json={"formula": "ROUND(price * qty * 1.25, 2)"})
    assert r.status_code == 201 and r.json()["version"] == 2
    body = envelope_ok(a.post("/v1/formulas/order_total/versions/2/publish"), "E708", 409)
    assert body["extra"]["failures"][0]["actual"] == 37.46
    # v3 fixes the cases; publishing moves live; rollback moves it back
    r = a.post("/v1/formulas/order_total/versions", json={
        "cases": [{"inputs": {"price": 10, "qty": 2}, "expect": 25}], "note": "new tax"})
    assert r.json()["version"] == 3
    assert a.post("/v1/formulas/order_total/versions/3/test").json()["passed"] is True
    assert a.post("/v1/formulas/order_total/versions/3/publish").status_code == 200
    ev = lambda ref: a.post(f"/v1/formulas/{ref}/evaluate",  # noqa: E731
                            json={"variables": {"price": 10, "qty": 1}}).json()
    assert ev("order_total")["value"] == 12.5
    assert ev("order_total@1")["value"] == 12
    r = a.post("/v1/formulas/order_total/rollback", json={"reason": "tax not yet in force"})
    assert r.json()["live_version"] == 1 and ev("order_total")["value"] == 12
    versions = a.get("/v1/formulas/order_total/versions").json()["versions"]
    assert [x["status"] for x in versions] == ["published", "draft", "published"]
    assert versions[2]["published_by"] and "+ROUND(price * qty * 1.25, 2)" in versions[1]["diff"]
    actions = [e["action"] for e in a.get("/v1/formulas/order_total/events").json()["events"]]
    assert actions == ["create", "publish", "version", "version", "publish", "rollback"]
    # the other tenant sees nothing of it
    assert b.get("/v1/formulas").json()["formulas"] == []
    for method, path in (("get", "/v1/formulas/order_total"),
                         ("get", "/v1/formulas/order_total/versions"),
                         ("get", "/v1/formulas/order_total/versions/1"),
                         ("get", "/v1/formulas/order_total/events"),
                         ("post", "/v1/formulas/order_total/versions/1/test"),
                         ("post", "/v1/formulas/order_total/versions/1/publish"),
                         ("post", "/v1/formulas/order_total/evaluate"),
                         ("post", "/v1/formulas/order_total@1/evaluate"),
                         ("delete", "/v1/formulas/order_total")):
        kwargs = {"json": {}} if method == "post" and path.endswith("evaluate") else {}
        envelope_ok(getattr(b, method)(path, **kwargs), "E703", 404)
    envelope_ok(b.post("/v1/formulas/order_total/versions", json={"formula": "1"}), "E703", 404)
    envelope_ok(b.post("/v1/formulas/order_total/rollback", json={"reason": "x"}), "E703", 404)
    # a tombstone: gone from lists and evaluation, history kept, name stays taken
    assert a.delete("/v1/formulas/order_total").status_code == 204
    envelope_ok(a.post("/v1/formulas/order_total/evaluate", json={}), "E703", 404)
    assert "order_total" not in {f["name"] for f in a.get("/v1/formulas").json()["formulas"]}
    envelope_ok(a.post("/v1/formulas", json=create), "E707", 409)


def test_tools_approvals_idempotency_receipts(a: httpx.Client, b: httpx.Client) -> None:
    listed = a.get("/v1/tools", params={"format": "anthropic"}).json()
    assert listed["demo"] is True and "demo_add_note" in listed["names"]
    assert {t["name"] for t in listed["tools"]} >= {"evaluate_formula", "demo_list_notes"}
    r = a.post("/v1/tools/evaluate_formula/call", json={"args": {"formula": "ROUND(1/3, 2)"}})
    assert r.status_code == 200 and r.json()["value"]["value"] == 0.33
    envelope_ok(a.post("/v1/tools/no_such_tool/call", json={}), "E501", 404)
    envelope_ok(a.post("/v1/tools/demo_add_note/call", json={"args": {"text": 5}}), "E502", 422)
    # a write needs an approval
    first = a.post("/v1/tools/demo_add_note/call", json={"args": {"text": "hello"}},
                   headers={"Idempotency-Key": "note-1"})
    assert first.status_code == 202, first.text
    approval = first.json()["approval"]["id"]
    pending = a.get("/v1/approvals").json()["approvals"]
    assert approval in {p["id"] for p in pending}
    # the other tenant cannot see, approve or deny it
    assert b.get("/v1/approvals").json()["approvals"] == []
    envelope_ok(b.get(f"/v1/approvals/{approval}"), "E703", 404)
    envelope_ok(b.post(f"/v1/approvals/{approval}/approve", json={"reason": "x"}), "E703", 404)
    envelope_ok(b.post(f"/v1/approvals/{approval}/deny", json={"reason": "x"}), "E703", 404)
    decided = a.post(f"/v1/approvals/{approval}/approve", json={"reason": "fine"})
    assert decided.status_code == 200 and decided.json()["status"] == "approved", decided.text
    done = a.post("/v1/tools/demo_add_note/call",
                  json={"args": {"text": "hello"}, "approval": approval},
                  headers={"Idempotency-Key": "note-1"})
    assert done.status_code == 200 and done.json()["value"]["notes"] == ["hello"], done.text
    again = a.post("/v1/tools/demo_add_note/call",
                   json={"args": {"text": "hello"}, "approval": approval},
                   headers={"Idempotency-Key": "note-1"})
    assert again.json()["replayed"] is True and again.json()["value"]["notes"] == ["hello"]
    receipts = a.get("/v1/receipts", params={"idempotency_key": "note-1"}).json()["receipts"]
    assert receipts and {r["tenant"] for r in receipts} == {"acme"}
    rid = receipts[0]["id"]
    assert a.get(f"/v1/receipts/{rid}").status_code == 200
    envelope_ok(b.get(f"/v1/receipts/{rid}"), "E703", 404)
    assert b.get("/v1/receipts").json()["receipts"] == []
    # the other tenant's own notes are its own
    r = b.post("/v1/tools/demo_list_notes/call", json={"args": {}})
    assert r.json()["value"]["notes"] == []


def test_jobs_route_run_stream_cancel_settle(a: httpx.Client, b: httpx.Client) -> None:
    formula = {"ask": "total", "formula": "ROUND(price * qty, 2)",
               "inputs": {"price": 9.99, "qty": 3}}
    decision = a.post("/v1/jobs/route", json=formula).json()
    assert decision["lane"] == "formula"
    response = a.post("/v1/jobs", json=formula)
    ran = response.json()
    assert ran["lane"] == "formula" and ran["value"] == 29.97
    assert ran["result"]["receipt"]["request_id"] == response.headers["x-request-id"]
    envelope_ok(a.post("/v1/jobs", json={**formula, "principal": {"subject": "x",
                                                                   "tenant": "globex"}}),
                "E706", 422)
    code = {"ask": "sum of squares", "code": "print(sum(i * i for i in range(10)))",
            "idempotency_key": "squares-1"}
    routed = a.post("/v1/jobs/route", json=code).json()
    if routed["lane"] != "sandbox":
        pytest.skip(f"the router does not send code to the sandbox here: {routed['reasons']}")
    r = a.post("/v1/jobs", json=code)
    assert r.status_code == 202, r.text
    job_id = r.json()["job"]["job_id"]
    events = []
    with a.stream("GET", f"/v1/jobs/{job_id}/events") as stream:
        for line in stream.iter_lines():
            if line.startswith("data: ") and line != "data: {}":
                events.append(json.loads(line[6:]))
    final = events[-1]
    assert final["status"] == "succeeded", events
    job = a.get(f"/v1/jobs/{job_id}").json()
    assert job["outcome"] == final["outcome"] and job["receipt"]
    assert a.get(f"/v1/jobs/{job_id}/receipts").json()["receipts"]
    assert isinstance(a.get(f"/v1/jobs/{job_id}/artifacts").json()["artifacts"], list)
    # same idempotency key: the same job, never run again
    again = a.post("/v1/jobs", json=code).json()
    assert again["job"]["job_id"] == job_id
    for method, path, body in (("get", f"/v1/jobs/{job_id}", None),
                               ("get", f"/v1/jobs/{job_id}/events", None),
                               ("get", f"/v1/jobs/{job_id}/receipts", None),
                               ("get", f"/v1/jobs/{job_id}/artifacts", None),
                               ("get", f"/v1/jobs/{job_id}/artifacts/sha256:{'0' * 64}", None),
                               ("post", f"/v1/jobs/{job_id}/cancel", {}),
                               ("post", f"/v1/jobs/{job_id}/settle",
                                {"outcome": "succeeded", "reason": "x"})):
        kwargs = {"json": body} if body is not None else {}
        envelope_ok(getattr(b, method)(path, **kwargs), "E703", 404)
    # only an unknown job can be settled
    envelope_ok(a.post(f"/v1/jobs/{job_id}/settle", json={"outcome": "succeeded",
                                                           "reason": "x"}), "E603", 422)


def test_health_readiness_metrics_lanes(server: Server, a: httpx.Client, b: httpx.Client) -> None:
    assert httpx.get(server.base + "/healthz").json() == {"status": "ok"}
    ready = httpx.get(server.base + "/readyz").json()
    assert ready["checks"]["database"]["ok"] is True
    a.post("/v1/evaluate", json={"formula": "1 + 1"})
    text = httpx.get(server.base + "/metrics").text
    assert 'formulane_jobs_total{outcome="succeeded"}' in text
    for name in ("formulane_lane_requests_total", "formulane_approvals_waiting",
                 "formulane_escalations_smaller_lane_share", "formulane_http_requests_total"):
        assert name in text
    assert "acme" not in text
    lanes = a.get("/v1/metrics/lanes").json()
    assert lanes["tenant"] == "acme" and lanes["totals"]["formula"]["ok"] >= 1
    assert b.get("/v1/metrics/lanes").json()["totals"].get("formula") in (None, {})
    # An escalation request the router keeps in the formula lane counts, for this tenant only,
    # as one a formula could do (the dashboard's share).
    def routed(client: httpx.Client) -> dict[str, int]:
        out: dict[str, int] = {}
        for row in client.get("/v1/metrics/lanes").json()["series"]:
            for lane, n in row["escalations"].items():
                out[lane] = out.get(lane, 0) + n
        return out

    before = routed(a).get("formula", 0)
    ran = a.post("/v1/jobs", json={"ask": "total", "formula": "1 + 1"})
    assert ran.json()["lane"] == "formula"
    assert routed(a)["formula"] == before + 1
    assert routed(b).get("formula", 0) == 0
