"""OpenAI's code interpreter (Responses API, containers and container files) as a hosted backend.

Contract: through the official ``openai`` SDK (extra ``openai``), per job: create a container
(``memory_limit`` the smallest tier that covers the job's memory, ``network_policy``
disabled, ``expires_after`` a few minutes past the deadline), ask ``responses.create`` with
the ``code_interpreter`` tool bound to that container and ``tool_choice="required"`` to run
the program, read the ``code_interpreter_call`` item (the code it ran, its logs, its status),
list the container's files, download those the job's globs match (``source`` assistant, under
the work directory), then delete the container, so nothing is left to expire at OpenAI. A
session job keeps its container and reuses it (only when asked). The provider reports a tool
status and combined logs, never a process exit status: outcomes are ``inferred``.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Literal

from ..contract import Isolation, MiB, SandboxJob
from .hosted import INSTRUCTIONS, HostedClient, HostedFile, HostedLimits, HostedRun, request_text

WORKDIR = "/mnt/data"
MEMORY_TIERS = (("1g", 1024 * MiB), ("4g", 4096 * MiB), ("16g", 16384 * MiB),
                ("64g", 65536 * MiB))


_STATUS: dict[str, Literal["ok", "failed", "timeout", "error"]] = {
    "completed": "ok", "failed": "failed", "incomplete": "timeout"}


def memory_tier(memory_bytes: int) -> str:
    for name, size in MEMORY_TIERS:
        if memory_bytes <= size:
            return name
    return MEMORY_TIERS[-1][0]


class OpenAICodeInterpreter(HostedClient):
    name = "openai-code-interpreter"
    isolation = Isolation.NAMESPACE  # a provider container: nothing stronger can be verified
    mechanism = "OpenAI code interpreter container (Responses API), network policy disabled"
    workdir = WORKDIR
    limits = HostedLimits(
        memory_bytes=64 * 1024 * MiB, memory_by="provider", max_wall_s=20 * 60.0,
        network="container network_policy 'disabled' (set per container)",
        lifetime="expires 20 minutes after last use (expires_after, last_active_at); deleted "
                 "by us after each ephemeral job",
        retention="container files are deleted with the container; responses are stored by "
                  "OpenAI unless store=false (we send store=false)",
        states=("ephemeral", "session"), artifacts="files in /mnt/data")

    def __init__(self, *, api_key: str, model: str = "gpt-4.1", base_url: str | None = None,
                 client: Any = None) -> None:
        import openai
        self.version = f"openai-python {openai.__version__}"
        self.model = model
        self.client: Any = client or openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0)

    def execute(self, job: SandboxJob, program: str, *, timeout_s: float,
                session: str | None, want_files: Callable[[str], bool]) -> HostedRun:
        c: Any = self.client
        ids: dict[str, str] = {}
        if session is None:
            container = c.containers.create(
                name=f"formulane-{job.job_id}", memory_limit=memory_tier(job.limits.memory_bytes),
                network_policy={"type": "disabled"},
                expires_after={"anchor": "last_active_at",
                               "minutes": max(1, int(timeout_s // 60) + 2)},
                timeout=timeout_s)
            container_id = container.id
        else:
            container_id = session
        ids["container_id"] = container_id
        keep = job.state == "session"
        try:
            t0 = time.monotonic()
            import openai
            try:
                response: Any = c.responses.create(
                    model=self.model, instructions=INSTRUCTIONS, input=request_text(program),
                    tools=[{"type": "code_interpreter", "container": container_id}],
                    tool_choice="required", store=False,
                    include=["code_interpreter_call.outputs"], timeout=timeout_s)
            except openai.APITimeoutError as exc:
                raise TimeoutError(f"no reply within {timeout_s} s: {exc}") from None
            if time.monotonic() - t0 > timeout_s:
                raise TimeoutError(f"the response took longer than {timeout_s} s")
            ids["response_id"] = response.id
            usage = response.usage
            run = HostedRun(executed_code=None, provider_ids=ids, usage={
                "input_tokens": getattr(usage, "input_tokens", 0) or 0,
                "output_tokens": getattr(usage, "output_tokens", 0) or 0,
                "containers": 0 if session else 1})
            calls = [item for item in response.output if item.type == "code_interpreter_call"]
            if len(calls) != 1:
                run.detail = f"{len(calls)} code interpreter calls in the reply (one expected)"
                if len(calls) > 1:
                    run.executed_code = "\n".join(call.code or "" for call in calls)
                return run
            call = calls[0]
            ids["call_id"] = call.id
            run.executed_code = call.code
            outputs: list[Any] = call.outputs or []
            logs = "".join(o.logs for o in outputs if o.type == "logs")
            run.stdout = logs  # stdout and stderr come back interleaved, as one log
            run.status = _STATUS.get(str(call.status), "error")
            if run.status == "ok" and "Traceback (most recent call last)" in logs:
                run.status, run.stderr = "failed", logs
            if run.status == "error":
                run.detail = f"tool call status {call.status!r}"
            for item in c.containers.files.list(container_id):
                rel = item.path[len(WORKDIR) + 1:] if item.path.startswith(WORKDIR + "/") \
                    else None
                if rel is None or item.source == "user" or not want_files(rel):
                    continue
                data = c.containers.files.content.retrieve(item.id, container_id=container_id)
                run.files.append(HostedFile(rel, data.read()))
            return run
        finally:
            if not keep:
                try:
                    c.containers.delete(container_id)
                except Exception:  # noqa: BLE001 - it expires on its own; recorded below
                    ids["cleanup"] = "container delete failed; it expires on its own"

    def close(self) -> None:
        self.client.close()
