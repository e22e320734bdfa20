"""Two `formulane serve` processes on one PostgreSQL database: one idempotency key runs once,
one approval is used once, one job is run by one worker, and a worker killed with SIGKILL
mid-job leaves the job ``unknown`` (settled by the survivor, never run twice)."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from conftest import Server, client, make_key, remove_dir, sandbox_dir

BASE_URL = os.environ.get("FORMULANE_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(
    not BASE_URL, reason="FORMULANE_TEST_POSTGRES_URL is not set (a PostgreSQL server URL; "
                         ".ci/run starts one)")


@pytest.fixture(scope="module")
def database() -> str:
    psycopg = pytest.importorskip("psycopg")
    assert BASE_URL is not None
    name = "formulane_api_test"
    with psycopg.connect(BASE_URL, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return BASE_URL.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(scope="module")
def pair(database: str) -> Iterator[tuple[Server, Server, str]]:
    dirs = [sandbox_dir(f"formulane-pg-serve-{i}-") for i in range(2)]
    key = make_key(dirs[0], "acme", database_url=database)
    extra = {"FORMULANE_DATABASE_URL": database, "FORMULANE_JOB_LEASE_S": "2",
             "FORMULANE_JOB_WORKERS": "1"}
    first = Server(dirs[0], extra_env=extra)
    second = Server(dirs[1], extra_env=extra)
    yield first, second, key
    for srv in (first, second):
        srv.stop()
    for path in dirs:
        remove_dir(path)


def both(fn_a, fn_b):  # type: ignore[no-untyped-def]
    with ThreadPoolExecutor(2) as pool:
        fa, fb = pool.submit(fn_a), pool.submit(fn_b)
        return fa.result(), fb.result()


def test_one_idempotency_key_runs_once_and_one_approval_is_used_once(
        pair: tuple[Server, Server, str]) -> None:
    first, second, key = pair
    with client(first, key) as a, client(second, key) as b:
        asked = a.post("/v1/tools/demo_add_note/call", json={"args": {"text": "once"}},
                       headers={"Idempotency-Key": "k-1"})
        assert asked.status_code == 202, asked.text
        approval = asked.json()["approval"]["id"]
        assert b.post(f"/v1/approvals/{approval}/approve",
                      json={"reason": "ok"}).status_code == 200
        body = {"args": {"text": "once"}, "approval": approval}
        ra, rb = both(lambda: a.post("/v1/tools/demo_add_note/call", json=body,
                                     headers={"Idempotency-Key": "k-1"}),
                      lambda: b.post("/v1/tools/demo_add_note/call", json=body,
                                     headers={"Idempotency-Key": "k-1"}))
        answers = [r.json() for r in (ra, rb)]
        ran = [x for x in answers if x.get("status") == "ok" and not x.get("replayed")]
        assert len(ran) == 1, answers
        receipts = a.get("/v1/receipts", params={"idempotency_key": "k-1",
                                                 "tool": "demo_add_note"}).json()["receipts"]
        executed = [r for r in receipts if r["outcome"] == "succeeded" and not r["replay_of"]]
        assert len(executed) == 1, receipts
        # the same (used) approval with two new keys, at once: at most one runs
        ra, rb = both(lambda: a.post("/v1/tools/demo_add_note/call", json=body,
                                     headers={"Idempotency-Key": "k-2"}),
                      lambda: b.post("/v1/tools/demo_add_note/call", json=body,
                                     headers={"Idempotency-Key": "k-3"}))
        ok = [r for r in (ra, rb) if r.status_code == 200 and r.json()["status"] == "ok"]
        assert not ok, [r.text for r in (ra, rb)]


def test_one_job_one_worker_and_a_killed_worker_leaves_it_unknown(
        pair: tuple[Server, Server, str]) -> None:
    first, second, key = pair
    with client(first, key) as a, client(second, key) as b:
        job = {"ask": "squares", "code": "import os\nprint(sum(i * i for i in range(10)))",
               "idempotency_key": "job-1"}
        if a.post("/v1/jobs/route", json=job).json()["lane"] != "sandbox":
            pytest.skip("the router does not send code to the sandbox on this machine")
        ra, rb = both(lambda: a.post("/v1/jobs", json=job), lambda: b.post("/v1/jobs", json=job))
        ids = {r.json()["job"]["job_id"] for r in (ra, rb)}
        assert len(ids) == 1, [r.text for r in (ra, rb)]
        job_id = ids.pop()
        done = wait_terminal(b, job_id, 120)
        assert done["outcome"] == "succeeded", done
        receipts = b.get(f"/v1/jobs/{job_id}/receipts").json()["receipts"]
        assert [r["attempt"] for r in receipts] == [1]
        # a long job, running in the first process, which then dies
        slow = {"ask": "sleep", "code": "import time\ntime.sleep(60)\nprint('done')",
                "idempotency_key": "job-slow"}
        r = a.post("/v1/jobs", json=slow)
        assert r.status_code == 202, r.text
        slow_id = r.json()["job"]["job_id"]
        deadline = time.monotonic() + 60
        while True:
            state = a.get(f"/v1/jobs/{slow_id}").json()
            if state["status"] == "running":
                break
            assert time.monotonic() < deadline, state
            time.sleep(0.2)
        owner_is_first = b.get(f"/v1/jobs/{slow_id}").json()
        first.stop(kill=True)
        settled = wait_terminal(b, slow_id, 90)
        assert settled["status"] == "unknown", (settled, owner_is_first)
        receipts = b.get(f"/v1/jobs/{slow_id}/receipts").json()["receipts"]
        assert {r["attempt"] for r in receipts} == {1}
        assert not any(r["outcome"] == "succeeded" for r in receipts)
        # a person settles it, with a reason
        r = b.post(f"/v1/jobs/{slow_id}/settle", json={"outcome": "cancelled",
                                                       "reason": "checked: it did nothing"})
        assert r.status_code == 200 and r.json()["status"] == "cancelled", r.text


def wait_terminal(c: httpx.Client, job_id: str, seconds: float) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        state = c.get(f"/v1/jobs/{job_id}").json()
        if state["status"] not in ("queued", "running", "lost"):
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.3)
