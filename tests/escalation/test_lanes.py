"""Four lanes, one contract: `formulane.run`, `LaneResult`, lane receipts, `JobSpec`, `route`.

On the real bubblewrap backend (the package's `sandbox` fixture) and the real SQLite store
(PostgreSQL too when FORMULANE_TEST_POSTGRES_URL is set). Every seed failure story goes through
`formulane.run`; the job contract cases are in ``data/jobspec_cases.yaml``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import uuid
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any, Iterator

import pytest
from sqlalchemy import text
import yaml

import formulane
from formulane.errors import EscalationError
from formulane.escalation import (
    Escalation, EscalationRequest, EscalationSettings, JobSpec, LaneResult, Principal, default,
)
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.broker import StaticCatalog
from formulane.escalation.contract import FileSpec
from formulane.escalation.lanes import redact_code
from formulane.escalation.policy import PolicyBook, PolicyRule
from formulane.escalation.store import PostgresJobStore, open_store

from .conftest import UID_COUNT, UID_FIRST

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "jobspec_cases.yaml").read_text())
CLEAR = {"kind": "test", "operation": "open_ended", "needs": "runtime", "state_owner": "job",
         "may_change": "read_only_scratch", "data_classes": ["internal"],
         "failure_story": {"retry": "safe", "owner": "ops"}}
ANA = Principal(subject="ana", tenant="acme")


def _catalog() -> StaticCatalog:
    catalog = StaticCatalog()
    catalog.register("invoice_total",
                     lambda *, principal, invoice_id: {"A1": 99.5}.get(invoice_id, 0.0))
    return catalog


def _settings(path: Path) -> EscalationSettings:
    return EscalationSettings(data_dir=path, uid_first=UID_FIRST, uid_count=UID_COUNT)


def _data_dir() -> Path:
    """A data directory the job uids can traverse (pytest's tmp_path parents are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="formulane-lanes-", dir="/tmp"))
    os.chmod(path, 0o711)
    return path


@pytest.fixture(scope="module")
def esc(sandbox: BubblewrapBackend, state_dir: Path) -> Iterator[Escalation]:
    policies = PolicyBook(tenants={
        "acme": PolicyRule(may_escalate=True), "local": PolicyRule(may_escalate=True),
        "acme-known": PolicyRule(may_escalate=True, known_operations_in_sandbox=True),
        "acme-proposals": PolicyRule(may_escalate=True,
                                     side_effects=("read_only", "proposes_change"))})
    with default(_settings(state_dir / "lanes"), backend=sandbox,
                 catalog=_catalog(), policies=policies) as opened:
        yield opened


# ------------------------------------------------------------------------ item 1: one result


def test_one_job_in_five_lines_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    tmp_path = _data_dir()
    monkeypatch.setenv("FORMULANE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FORMULANE_UID_FIRST", str(UID_FIRST))
    monkeypatch.setenv("FORMULANE_UID_COUNT", str(UID_COUNT))
    # The user's five lines (the local/dev principal, the machine's own backend):
    with formulane.escalation.default() as lanes:
        result = formulane.run(code="rows = [r for r in range(n) if r % 2]\nresult = len(rows)",
                               inputs={"n": 9}, escalation=lanes)
    assert isinstance(result, LaneResult)
    assert result.lane == "sandbox" and result.outcome == "succeeded", result.receipt
    assert result.value == 4 and result.receipt.has_value  # the declared result, not stdout
    assert result.receipt.principal == "local-dev" and result.receipt.tenant == "local"
    assert result.job_id is not None
    assert (tmp_path / "jobs.sqlite3").exists()
    store = open_store(tmp_path / "jobs.sqlite3")
    try:
        stored = store.lane_receipts(request_id=result.request_id)
        assert [r.receipt_id for r in stored] == [result.receipt.receipt_id]
        assert store.latest(result.job_id) is not None  # the sandbox receipt, same store
    finally:
        store.close()
        shutil.rmtree(tmp_path, ignore_errors=True)


def test_every_lane_returns_the_same_result_and_one_store_holds_them(esc: Escalation) -> None:
    formula = esc.run(formula="price * qty", inputs={"price": 2, "qty": 3}, principal=ANA)
    demoted = esc.run(code="round(price * qty * 1.2, 2)", inputs={"price": 9.99, "qty": 3},
                      principal=ANA)
    tool = esc.run(tool_call={"name": "invoice_total", "args": {"invoice_id": "A1"}},
                   principal=ANA)
    sandbox = esc.run(code="import sys\nresult = {'major': sys.version_info[0]}",
                      principal=ANA)
    refused = esc.run(code="import os\nprint(1)",
                      principal=Principal(subject="eve", tenant="other"))
    postponed = esc.run(code="import os\nprint(1)", principal=ANA,
                        spec=JobSpec(kind="unclear-thing"))
    assert [r.lane for r in (formula, demoted, tool, sandbox, refused, postponed)] == \
        ["formula", "formula", "tool", "sandbox", "refuse", "postpone"]
    assert [r.outcome for r in (formula, demoted, tool, sandbox, refused, postponed)] == \
        ["succeeded"] * 4 + ["refused", "postponed"]
    assert (formula.value, demoted.value, tool.value) == (6, 35.96, 99.5)
    assert sandbox.value == {"major": 3}
    json.dumps([r.value for r in (formula, demoted, tool)])  # JSON-able values
    assert sandbox.job_id and sandbox.sandbox_receipt is not None
    assert formula.job_id is None and refused.job_id is None
    assert esc.store.verify_lane_chain()
    for result in (formula, demoted, tool, sandbox, refused, postponed):
        assert result.receipt.decision.reasons == tuple(result.decision.reasons)
        assert result.receipt.request_id == result.request_id
        stored = esc.store.lane_receipts(request_id=result.request_id)
        assert len(stored) == 1 and stored[0].sha256 == result.receipt.sha256


def test_submit_then_finish_writes_one_lane_receipt(esc: Escalation) -> None:
    from formulane.escalation.jobs import ResultTimeout
    from formulane.escalation.pilot import settle

    now = esc.submit(formula="2 + 3", principal=ANA)
    assert now.job_id is None and now.result is not None and now.result.value == 5
    slow = esc.submit(code="import time\ntime.sleep(1.5)\nprint('ok')", principal=ANA,
                      proposer={"model": "m-1"})
    assert slow.result is None and slow.job_id is not None
    with pytest.raises(ResultTimeout):
        esc.finish(slow.job_id, timeout=0.05)  # still running: left running
    done = esc.finish(slow.job_id, timeout=60)
    assert done.lane == "sandbox" and done.outcome == "succeeded"
    assert done.request_id == slow.request_id and done.receipt.proposer.model == "m-1"
    again = esc.finish(slow.job_id)
    assert again.receipt.receipt_id == done.receipt.receipt_id
    assert len([r for r in esc.store.lane_receipts(request_id=slow.request_id)]) == 1
    # A job nobody asked about still reaches the report: settle writes its receipt.
    forgotten = esc.submit(code="import os\nprint(2)", principal=ANA)
    assert forgotten.job_id is not None
    esc.jobs.result(forgotten.job_id, timeout=60)
    assert forgotten.job_id in esc.store.unsettled()
    assert settle(esc.store) >= 1 and forgotten.job_id not in esc.store.unsettled()
    assert esc.store.lane_receipt_for_job(forgotten.job_id).outcome == "succeeded"  # type: ignore
    with pytest.raises(EscalationError, match="not submitted"):
        esc.finish("no-such-job")


def test_a_result_that_cannot_be_returned_is_no_value(esc: Escalation) -> None:
    printed = esc.run(code="import sys\nprint(42)\nsys.stdout.flush()", principal=ANA)
    assert printed.outcome == "succeeded" and printed.value is None  # stdout is not a value
    assert not printed.receipt.has_value and printed.receipt.value_sha256 is None
    odd = esc.run(code="import sys\nresult = {1, 2}", principal=ANA)
    assert odd.outcome == "succeeded" and odd.value is None
    assert odd.sandbox_receipt is not None and odd.sandbox_receipt.result is not None
    assert odd.sandbox_receipt.result.error  # the reason stays on the sandbox receipt


def test_a_failing_tool_or_formula_is_an_outcome_not_an_exception(esc: Escalation) -> None:
    failed = esc.run(tool_call={"name": "invoice_total", "args": {"nope": 1}}, principal=ANA)
    assert failed.lane == "tool" and failed.outcome == "user_error"
    assert "invoice_total" in failed.receipt.outcome_detail
    div = esc.run(formula="a / b", inputs={"a": 1, "b": 0}, principal=ANA)
    assert div.lane == "formula" and div.outcome == "user_error" and div.value is None
    assert "#DIV/0!" in div.receipt.outcome_detail


def test_request_and_fields_are_not_both_given(esc: Escalation) -> None:
    request = EscalationRequest(principal=ANA, ask="x", formula="1")
    with pytest.raises(EscalationError, match="not both"):
        esc.run(request, formula="2")
    with pytest.raises(EscalationError) as err:
        esc.run(code=None)
    assert err.value.code == "E603"


# ------------------------------------------------------------------------ item 2: receipts


def test_the_receipt_answers_the_seed_list(esc: Escalation) -> None:
    code = ("import csv\napi_key = 'sk-abcdefghijklmnopqrstuvwx'\n"
            "dsn = 'postgresql://app:hunter2@db/prod'\n"
            "rows = list(csv.reader(open('data/in.csv')))\n"
            "open('out/report.csv', 'w').write(str(len(rows)))\n")
    result = esc.run(
        code=code, principal=ANA, ask="count the rows",
        files=(FileSpec(path="data/in.csv", content=b"a,b\n1,2\n", mode="ro"),
               FileSpec(path="out/keep.txt", content=b"", mode="rw")),
        inputs={"limit": 5}, input_classes={"data/in.csv": "public"},
        artifact_globs=("out/*.csv",),
        spec=JobSpec(**{**CLEAR, "data_classes": ["internal", "public"]}),
        proposer={"provider": "anthropic", "model": "claude-x", "prompt_version": "p-7"})
    r = result.receipt
    assert result.outcome == "succeeded", r.outcome_detail
    assert r.request_id == result.request_id and r.request.ask == "count the rows"
    assert (r.proposer.provider, r.proposer.model, r.proposer.prompt_version) == \
        ("anthropic", "claude-x", "p-7")
    assert [x.code.value for x in r.decision.reasons] == ["not_demotable", "needs_sandbox"]
    assert r.runtime.startswith("python") and r.environment == "default"
    assert r.environment_digest and r.environment_digest.startswith("sha256:")
    assert r.backend == "bubblewrap" and r.isolation == "namespace"
    mounted = {i.name: (i.kind, i.mode, i.data_class) for i in r.inputs}
    assert mounted == {"data/in.csv": ("file", "ro", "public"),
                       "out/keep.txt": ("file", "rw", "internal"),
                       "limit": ("value", "ro", "internal")}
    assert r.data_classes == ("internal", "public")
    assert r.network is not None and r.network.mode == "none" and "seccomp" in \
        r.network_enforcement
    assert r.request.code is not None and "hunter2" not in r.request.code
    assert "sk-abcdefghijklmnop" not in r.request.code and "[redacted]" in r.request.code
    assert "rows = list(csv.reader(open('data/in.csv')))" in r.request.code  # the code itself
    assert r.request.code_sha256 == r.sandbox.code_sha256  # hash of what really ran
    assert [a.path for a in r.files_created] == ["out/report.csv"]
    assert r.exit_code == 0 and r.job_kind == "test"
    assert r.review_state == "needs_review"
    reviewed = esc.store.review(r.receipt_id, "accepted", by="rita", note="checked the count")
    assert reviewed.review_state == "accepted"
    assert esc.store.lane_receipts(request_id=result.request_id)[0].review_state == "accepted"
    assert [s for s, *_ in esc.store.reviews(r.receipt_id)] == ["accepted"]
    with pytest.raises(EscalationError, match="review state"):
        esc.store.review(r.receipt_id, "approved", by="rita")


def test_receipts_are_append_only(esc: Escalation) -> None:
    result = esc.run(formula="1 + 1", principal=ANA)
    with pytest.raises(Exception, match="append-only"):
        esc.store.execute(text("UPDATE lane_receipts SET outcome = 'x' WHERE receipt_id = :id")
                          .bindparams(id=result.receipt.receipt_id))
    esc.store.review(result.receipt.receipt_id, "accepted", by="app")
    with pytest.raises(Exception, match="append-only"):
        esc.store.execute(text("DELETE FROM lane_reviews"))


REDACTIONS = [
    ("token = 'ghp_abcdefghijklmnopqrstuvwxyz0123'", "ghp_"),
    ("headers = {'Authorization': 'Bearer abc.def'}", "Bearer abc"),
    ("PASSWORD = \"s3cret!\"", "s3cret"),
    ("url = 'https://user:pa55@example.com/x'", "pa55"),
    ("k = 'AKIAABCDEFGHIJKLMNOP'", "AKIAABCDEFGHIJKLMNOP"),
]


@pytest.mark.parametrize("code,secret", REDACTIONS, ids=[c for c, _ in REDACTIONS])
def test_redaction(code: str, secret: str) -> None:
    assert secret not in redact_code(code)
    assert redact_code("total = price * qty") == "total = price * qty"


@pytest.mark.skipif(not os.environ.get("FORMULANE_TEST_POSTGRES_URL"),
                    reason="FORMULANE_TEST_POSTGRES_URL is not set")
def test_lane_receipts_on_postgresql(sandbox: BubblewrapBackend, tmp_path: Path) -> None:
    url = os.environ["FORMULANE_TEST_POSTGRES_URL"]
    store = PostgresJobStore(url, schema=f"lanes_{uuid.uuid4().hex[:10]}")
    try:
        with default(_settings(tmp_path), backend=sandbox, store=store) as lanes:
            a = lanes.run(formula="2 * 21")
            b = lanes.run(code="def f(:\n    pass")  # refused before any sandbox: a receipt
            c = lanes.run(code="import os\nprint(os.getpid())")
            d = lanes.submit(code="import os\nprint(3)")
            assert d.job_id is not None
            lanes.jobs.result(d.job_id, timeout=60)
            assert store.unsettled() == [d.job_id]
            assert lanes.finish(d.job_id).outcome == "succeeded"
            assert lanes.finish(d.job_id).receipt.receipt_id == \
                store.lane_receipt_for_job(d.job_id).receipt_id  # type: ignore[union-attr]
            assert store.unsettled() == []
        assert (a.value, b.outcome, c.outcome) == (42, "syntax_error", "succeeded")
        got = store.lane_receipts()
        assert [r.lane for r in got] == ["formula", "refuse", "sandbox", "sandbox"]
        assert store.verify_lane_chain()
        store.review(got[2].receipt_id, "rejected", by="rita", note="wrong file")
        assert store.lane_receipt(got[2].receipt_id).review_state == "rejected"  # type: ignore
        with pytest.raises(Exception, match="append-only"):
            store.execute(text("DELETE FROM lane_receipts"))
    finally:
        store.drop_schema()
        store.close()


# ------------------------------------------------------------ the seed's failure stories


STORIES = [
    # (story, run() fields, lane, outcome, fragment in the receipt's detail)
    ("the code has a syntax error", {"code": "for x in range(3)\n    print(x)"},
     "refuse", "syntax_error", "SyntaxError"),
    ("the code runs out of time", {"code": "import time\ntime.sleep(30)",
                                   "limits": {"wall_timeout_s": 1}},
     "sandbox", "timeout_wall", ""),
    ("the command waits for interactive input", {"code": "x = input('name? ')\nprint(x)"},
     "sandbox", "input_required", "stdin"),
    ("a package is missing", {"code": "import pandas_not_here_xyz\nprint(1)"},
     "sandbox", "missing_package", "pandas_not_here_xyz"),
    ("the runtime has no network", {"code": "import socket\n"
                                    "socket.create_connection(('192.0.2.1', 80), timeout=2)"},
     "sandbox", "network_denied", ""),
    ("an artifact is created, then the process crashes",
     {"code": "import os\nos.makedirs('out')\nopen('out/partial.csv', 'w').write('a,b\\n')\n"
              "os.abort()",
      "artifact_globs": ["out/*.csv"]}, "sandbox", "crashed", ""),
]


@pytest.mark.parametrize("story,fields,lane,outcome,fragment", STORIES,
                         ids=[s[0] for s in STORIES])
def test_failure_story_through_run(esc: Escalation, story: str, fields: dict[str, Any],
                                   lane: str, outcome: str, fragment: str) -> None:
    result = formulane.run(escalation=esc, principal=ANA, **fields)
    assert (result.lane, result.outcome) == (lane, outcome), result.receipt.outcome_detail
    assert fragment in result.receipt.outcome_detail
    assert result.value is None
    stored = esc.store.lane_receipts(request_id=result.request_id)
    assert len(stored) == 1 and stored[0].outcome == outcome
    if lane == "refuse":
        assert result.job_id is None and result.receipt.sandbox is None  # nothing spawned
    if outcome == "crashed":
        assert [a.path for a in result.receipt.files_created] == ["out/partial.csv"]


def test_a_write_may_have_happened_before_the_client_gave_up(esc: Escalation) -> None:
    writer = Principal(subject="wanda", tenant="acme-writes")
    esc.router.policies.tenants["acme-writes"] = PolicyRule(
        may_escalate=True, side_effects=("read_only", "proposes_change"))
    result = formulane.run(
        # The caller gives up well after the job has started and written (a loaded machine may
        # take over a second to start a sandbox; giving up before the start is a plain cancel).
        escalation=esc, principal=writer, timeout=8.0,
        code="import time\nopen('proposal.diff', 'w').write('-a\\n+b\\n')\ntime.sleep(20)",
        spec={**CLEAR, "may_change": "proposed_change"})
    assert result.decision.sandbox_job.side_effect_class == "proposes_change"
    # Not a plain "cancelled": a side effect may have happened, so a person or reconciliation
    # settles it, and nothing retries it.
    assert result.outcome == "unknown", result.receipt.outcome_detail
    assert result.receipt.sandbox is not None
    assert result.receipt.sandbox.outcome_basis == "unknown"


def test_shell_out_that_could_not_run_is_not_success(esc: Escalation) -> None:
    result = formulane.run(escalation=esc, principal=ANA,
                           code="import os\nos.system('ls -l')\nresult = 'done'")
    assert result.lane == "sandbox" and result.outcome != "succeeded"


def test_the_application_times_out_but_the_runtime_keeps_working(esc: Escalation) -> None:
    result = esc.run(code="import time\ntime.sleep(20)\nprint('done')", principal=ANA,
                     timeout=1.0)
    # The caller gave up: the job is cancelled and the kill confirmed, never left running.
    assert result.outcome in ("cancelled", "unknown")
    assert result.receipt.sandbox is not None
    assert esc.jobs.status(result.job_id).terminal  # type: ignore[arg-type]


# ------------------------------------------------------------------ item 3: the job contract


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_job_contract_decides(esc: Escalation, case: dict[str, Any]) -> None:
    spec = {**CLEAR, **case["spec"]}
    principal = Principal(subject="ana", tenant=case.get("tenant", "acme"))
    request = EscalationRequest.model_validate({
        "principal": principal, "ask": case["id"], "spec": spec, **case["request"]})
    decision = esc.router.route(request)
    assert decision.lane == case["lane"], [r.message for r in decision.reasons]
    assert [r.code.value for r in decision.reasons] == case["reasons"]
    if decision.lane == "sandbox":
        assert decision.sandbox_job is not None
        assert decision.sandbox_job.side_effect_class == case.get("side_effect_class",
                                                                  "read_only")


def test_postponed_job_is_recorded_with_its_reasons(esc: Escalation) -> None:
    result = esc.run(code="import os\nprint(1)", principal=ANA,
                     spec={**CLEAR, "operation": "unclear", "kind": "export-explore"})
    assert result.lane == "postpone" and result.outcome == "postponed"
    assert result.receipt.job_kind == "export-explore"
    assert "operation" in result.reasons[-1].message


def test_route_explain_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    from formulane.cli import main

    tmp_path = _data_dir()
    monkeypatch.setenv("FORMULANE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FORMULANE_UID_FIRST", str(UID_FIRST))
    monkeypatch.setenv("FORMULANE_UID_COUNT", str(UID_COUNT))
    request = tmp_path / "req.json"
    request.write_text(json.dumps({"ask": "explore", "code": "import os\nprint(1)",
                                   "spec": {**CLEAR, "may_change": "approved_write"}}))
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["route", str(request), "--explain"]) == 0
    text = out.getvalue()
    assert text.startswith("lane: refuse\n")
    assert "[write_needs_tool]" in text and "[not_demotable]" in text
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["route", str(request), "--json"]) == 0
    assert json.loads(out.getvalue())["lane"] == "refuse"
    request.write_text(json.dumps({"ask": "x", "code": "1", "spec": {"operation": "maybe"}}))
    assert main(["route", str(request)]) == 1
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_run_without_an_escalation_uses_the_shared_default(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    from formulane.escalation import facade

    tmp_path = _data_dir()
    monkeypatch.setenv("FORMULANE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FORMULANE_UID_FIRST", str(UID_FIRST))
    monkeypatch.setenv("FORMULANE_UID_COUNT", str(UID_COUNT))
    try:
        assert formulane.run(formula="1 + 2").value == 3
        assert formulane.run(code="import os\nprint(1)").outcome == "succeeded"
        assert facade.shared().settings.data_dir == tmp_path
    finally:
        facade.shared().close()
        shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's jobs run as other uids")
def test_a_data_directory_job_uids_cannot_reach_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EscalationError, match="cannot enter") as err:
        default(_settings(tmp_path / "data"))
    assert err.value.code == "E602" and "FORMULANE_DATA_DIR" in (err.value.hint or "")
