"""An approval carries the policy result and a plain summary built on the server from the tool's
declaration and the exact arguments (what, to what, for whom); the other tenant gets none of it."""

from __future__ import annotations

import httpx

from test_http import envelope_ok


def test_approval_says_what_to_what_for_whom_and_why(a: httpx.Client, b: httpx.Client) -> None:
    text = "call the customer about order 42 " + "x" * 400   # a long argument is cut
    r = a.post("/v1/tools/demo_add_note/call", json={"args": {"text": text[:200]}},
               headers={"Idempotency-Key": "approval-view-1"})
    assert r.status_code == 202, r.text
    made = r.json()["approval"]
    assert made["summary"]["to_what"].startswith('text = "call the customer about order 42 ')
    for view in (made, a.get(f"/v1/approvals/{made['id']}").json(),
                 next(x for x in a.get("/v1/approvals").json()["approvals"]
                      if x["id"] == made["id"])):
        summary, policy = view["summary"], view["policy"]
        assert summary["what"].startswith("demo_add_note (write: changes data): DEMO tool")
        assert summary["for_whom"].endswith("of tenant 'acme', on that tenant's data")
        assert "demo_add_note" in summary["text"] and summary["to_what"] in summary["text"]
        assert len(summary["to_what"]) <= 220
        assert policy["decision"] == "approval_required" and policy["effect"] == "write"
        assert policy["approval_scope"] == "tools:approve" and policy["status"] == "pending"
        assert "tools:approve" in policy["rule"] and policy["expires_at"]
    envelope_ok(b.get(f"/v1/approvals/{made['id']}"), "E703", 404)
    assert made["id"] not in {x["id"] for x in b.get("/v1/approvals").json()["approvals"]}
    denied = a.post(f"/v1/approvals/{made['id']}/deny", json={"reason": "not today"}).json()
    assert denied["status"] == "denied" and denied["policy"]["status"] == "denied"
    assert denied["summary"] == made["summary"]
