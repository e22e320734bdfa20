"""Provider-hosted code execution: OpenAI's code interpreter, Anthropic's code execution tool
(both tool versions), Gemini's code execution, as backends under the sandbox contract.

Each adapter talks through the provider's official Python SDK (openai, anthropic,
google-genai) to `HostedFakes` (hosted_fakes.py): an in-process HTTP server on 127.0.0.1 that
answers in the provider's documented JSON shapes and runs the program for real in the local
bubblewrap sandbox. Nothing leaves the machine. Cases: data/hosted_cases.yaml, plus the
contract's refusals (data classes kept in-house, memory beyond the provider), cleanup (no
container or file left at the provider), opt-in container reuse, and receipts with provider
ids and billed usage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from formulane.errors import EscalationError
from formulane.escalation.artifacts import ArtifactStore
from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.backends.hosted import DataPolicy, HostedBackend, HostedClient
from formulane.escalation.contract import FileSpec, Limits, MiB, Outcome

from .conftest import make_job
from .hosted_fakes import HostedFakes

CASES = yaml.safe_load((Path(__file__).parent / "data" / "hosted_cases.yaml").read_text())
PROVIDERS = ["openai", "anthropic-20250522", "anthropic-20250825", "gemini"]
#: Which receipt fields each provider fills (ids) and how it reports the exit.
IDS = {"openai": {"container_id", "response_id", "call_id"},
       "anthropic-20250522": {"message_id", "container_id", "tool_use_id"},
       "anthropic-20250825": {"message_id", "container_id", "tool_use_id"},
       "gemini": {"response_id", "model_version"}}
BASIS = {"openai": "inferred", "anthropic-20250522": "observed",
         "anthropic-20250825": "observed", "gemini": "inferred"}


@pytest.fixture(scope="module")
def fakes(sandbox: BubblewrapBackend) -> Iterator[HostedFakes]:
    server = HostedFakes(sandbox)
    try:
        yield server
    finally:
        server.close()


def make_client(provider: str, fakes: HostedFakes) -> HostedClient:
    if provider == "openai":
        pytest.importorskip("openai")
        from formulane.escalation.backends.openai_hosted import OpenAICodeInterpreter
        return OpenAICodeInterpreter(api_key="test-key", base_url=f"{fakes.url}/v1")
    if provider.startswith("anthropic"):
        pytest.importorskip("anthropic")
        from formulane.escalation.backends.anthropic_hosted import AnthropicCodeExecution
        version = "code_execution_" + provider.split("-")[1]
        return AnthropicCodeExecution(api_key="test-key", base_url=fakes.url,
                                      tool_version=version)
    pytest.importorskip("google.genai")
    from formulane.escalation.backends.gemini_hosted import GeminiCodeExecution
    return GeminiCodeExecution(api_key="test-key", base_url=fakes.url)


@pytest.fixture(params=PROVIDERS)
def hosted(request: pytest.FixtureRequest, fakes: HostedFakes,
           tmp_path: Path) -> Iterator[tuple[str, HostedBackend]]:
    backend = HostedBackend(make_client(request.param, fakes),
                            artifacts=ArtifactStore(tmp_path / "artifacts"),
                            policy=DataPolicy(allowed=frozenset({"public", "internal"})))
    try:
        yield request.param, backend
    finally:
        backend.close()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_hosted_cases(case: dict[str, Any], hosted: tuple[str, HostedBackend],
                      fakes: HostedFakes) -> None:
    provider, backend = hosted
    files = tuple(FileSpec(path=p, content=t.encode(), mode="ro")
                  for p, t in case.get("files", {}).items())
    job = make_job(case["code"], inputs=case.get("inputs", {}), files=files,
                   artifact_globs=tuple(case.get("globs", ())),
                   limits=Limits(**case.get("limits", {})))
    receipt = backend.run(job)
    expect = case["expect"]
    detail = f"{receipt.outcome.value}: {receipt.outcome_detail} | {receipt.stderr.text[-300:]}"
    assert receipt.outcome is Outcome(expect["outcome"]), detail
    if "basis" in expect:
        assert receipt.outcome_basis == expect["basis"]
    elif receipt.outcome is not Outcome.SANDBOX_ERROR:
        assert receipt.outcome_basis == BASIS[provider], detail
    if "stdout" in expect:
        assert expect["stdout"] in receipt.stdout.text
    if "stderr" in expect:
        assert expect["stderr"] in receipt.stderr.text + receipt.stdout.text
    if "detail" in expect:
        assert expect["detail"] in receipt.outcome_detail
    assert receipt.provider_ids["provider"] == backend.name
    if receipt.outcome not in (Outcome.SANDBOX_ERROR, Outcome.TIMEOUT_WALL):
        assert IDS[provider] <= set(receipt.provider_ids), receipt.provider_ids
        assert any(k.startswith("usage.") for k in receipt.provider_ids)
    if "artifacts" in case:
        want = case["artifacts"].get(provider.split("-")[0], case["artifacts"]["default"])
        assert sorted(a.path for a in receipt.artifacts) == sorted(want)
        for art in receipt.artifacts:  # in our store, byte for byte, with provenance
            data = backend.artifacts.get(art.stored_ref or "")
            assert len(data) == art.size and art.complete is True
            if art.path == "out.csv":
                assert data == b"A,B\nC,D"
    # Nothing of an ephemeral job is left at the provider to expire there.
    assert not [c for c in fakes.containers.values() if not c.deleted]
    assert not fakes.anthropic_files


def test_data_classes_the_policy_keeps_in_house_are_refused(fakes: HostedFakes,
                                                           tmp_path: Path) -> None:
    for provider in PROVIDERS:
        backend = HostedBackend(
            make_client(provider, fakes), artifacts=ArtifactStore(tmp_path / "a"),
            policy=DataPolicy(allowed=frozenset({"public"}),
                              classes_of=lambda job: {"customers": "pii", "rates": "public"}))
        before = len(fakes.requests)
        with pytest.raises(EscalationError) as err:
            backend.run(make_job("print(len(customers))",
                                 inputs={"customers": ["ana"], "rates": [1]}))
        assert err.value.code == "E601" and "pii data (customers)" in err.value.message
        assert len(fakes.requests) == before, "nothing may be sent before the refusal"
        # Public data and code-only jobs go through.
        ok = backend.run(make_job("print(sum(rates))", inputs={"rates": [1, 2]}))
        assert ok.outcome is Outcome.SUCCEEDED and "3" in ok.stdout.text
        backend.close()


def test_limits_the_provider_cannot_give_are_refused_and_receipts_say_who_enforces(
        fakes: HostedFakes, tmp_path: Path) -> None:
    anthropic = HostedBackend(make_client("anthropic-20250522", fakes),
                              artifacts=ArtifactStore(tmp_path / "a"))
    with pytest.raises(EscalationError) as err:
        anthropic.check(make_job("print(1)", limits=Limits(memory_bytes=8192 * MiB)))
    assert "at most 5368709120 bytes of memory" in err.value.message
    receipt = anthropic.run(make_job("print(1)"))
    by = {e.knob: e.by for e in receipt.limits_enforced}
    assert by["memory_bytes"] == "provider" and by["wall_timeout_s"] == "host"
    assert by["cpu_time_s"] == "not_enforced" and by["network"] == "provider"
    assert "30 days" in receipt.capabilities["limits"]["retention"]
    gemini = HostedBackend(make_client("gemini", fakes), artifacts=ArtifactStore(tmp_path / "g"))
    caps = gemini.capabilities()
    assert caps.max_wall_s == 30.0 and caps.states == ("ephemeral",)
    with pytest.raises(EscalationError):
        gemini.check(make_job("print(1)", limits=Limits(wall_timeout_s=60)))
    with pytest.raises(EscalationError):  # no network, whatever the job asks
        gemini.check(make_job("print(1)", network={"mode": "open"}))
    anthropic.close()
    gemini.close()


@pytest.mark.parametrize("provider", ["openai", "anthropic-20250522"])
def test_a_container_is_reused_only_when_asked(provider: str, fakes: HostedFakes,
                                               tmp_path: Path) -> None:
    backend = HostedBackend(make_client(provider, fakes), artifacts=ArtifactStore(tmp_path))
    first = backend.run(make_job("print(1)"))
    second = backend.run(make_job("print(2)"))
    assert first.provider_ids["container_id"] != second.provider_ids["container_id"]
    s1 = backend.run(make_job("x = 41", state="session", session_id="s-1"))
    s2 = backend.run(make_job("print('again')", state="session", session_id="s-1"))
    assert s1.provider_ids["container_id"] == s2.provider_ids["container_id"]
    assert s2.cleanup.sandbox_destroyed is False and first.cleanup.sandbox_destroyed is True
    if provider == "openai":
        box = fakes.containers[s1.provider_ids["container_id"]]
        assert not box.deleted and box.network_policy == {"type": "disabled"}
        assert box.memory_limit == "1g"
        box.deleted = True  # the test's own cleanup of the kept session container
    backend.close()
