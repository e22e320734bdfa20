"""Anthropic's code execution tool as a hosted backend (versioned tool types, opt-in reuse).

Contract: through the official ``anthropic`` SDK (extra ``anthropic``): ``beta.messages.create``
with the code execution tool of the configured version (``code_execution_20250522``: Python,
``{"code": ...}``; ``code_execution_20250825``: bash and files, the program written by a
``python3 - <<`` heredoc) and its beta header; the container is passed only for a session job
(reuse is opt-in); the reply's ``server_tool_use`` block is the code it ran and the tool result
gives stdout, stderr and the process return code (so outcomes are as the provider observed
them); files the program created come back as file ids, downloaded through the Files API into
our store and then deleted there. Containers live at Anthropic up to 30 days: a receipt says so.
"""

from __future__ import annotations

from typing import Any, Callable, cast

from ...jsonshape import is_object
from ..contract import Isolation, MiB, SandboxJob
from .hosted import INSTRUCTIONS, HostedClient, HostedFile, HostedLimits, HostedRun, request_text

TOOL_VERSIONS = {
    "code_execution_20250522": ("code-execution-2025-05-22", "code_execution"),
    "code_execution_20250825": ("code-execution-2025-08-25", "bash_code_execution"),
}
FILES_BETA = "files-api-2025-04-14"


def bash_command(program: str) -> str:
    """How the 20250825 tool runs the program: bash feeding it to Python on stdin."""
    return f"python3 - <<'FORMULANE_EOF'\n{program}\nFORMULANE_EOF"


class AnthropicCodeExecution(HostedClient):
    name = "anthropic-code-execution"
    isolation = Isolation.NAMESPACE
    mechanism = "Anthropic code execution tool container (internet access disabled)"
    limits = HostedLimits(
        memory_bytes=5 * 1024 * MiB, memory_by="provider", max_wall_s=15 * 60.0,
        network="internet access disabled in the tool's container (provider policy; cannot "
                "be set per request)",
        lifetime="a container expires 30 days after creation (reply's container.expires_at)",
        retention="container data is kept up to 30 days and is not zero-data-retention "
                  "eligible; output files are deleted from the Files API after download",
        states=("ephemeral", "session"), artifacts="files the program writes (file ids)")

    def __init__(self, *, api_key: str, model: str = "claude-sonnet-4-5",
                 tool_version: str = "code_execution_20250522", base_url: str | None = None,
                 client: Any = None, max_tokens: int = 1024) -> None:
        import anthropic
        if tool_version not in TOOL_VERSIONS:
            raise ValueError(f"unknown code execution tool version {tool_version!r}; known: "
                             f"{', '.join(TOOL_VERSIONS)}")
        self.version = f"anthropic-python {anthropic.__version__}, {tool_version}"
        self.model = model
        self.tool_version = tool_version
        self.max_tokens = max_tokens
        self.client: Any = client or anthropic.Anthropic(api_key=api_key, base_url=base_url,
                                                    max_retries=0)

    def expected(self, program: str) -> str:
        return program if self.tool_version == "code_execution_20250522" else \
            bash_command(program)

    def execute(self, job: SandboxJob, program: str, *, timeout_s: float,
                session: str | None, want_files: Callable[[str], bool]) -> HostedRun:
        beta, tool_name = TOOL_VERSIONS[self.tool_version]
        extra: dict[str, Any] = {}
        if session is not None:
            extra["container"] = session  # reuse only when the job asked for a session
        import anthropic
        try:
            reply: Any = self.client.beta.messages.create(
                model=self.model, max_tokens=self.max_tokens, system=INSTRUCTIONS,
                messages=[{"role": "user", "content": request_text(program)}],
                tools=[cast(Any, {"type": self.tool_version, "name": "code_execution"})],
                betas=[beta, FILES_BETA], timeout=timeout_s, **extra)
        except anthropic.APITimeoutError as exc:
            raise TimeoutError(f"no reply within {timeout_s} s: {exc}") from None
        ids = {"message_id": reply.id}
        container = getattr(reply, "container", None)
        if container is not None:
            ids["container_id"] = container.id
            ids["container_expires_at"] = str(container.expires_at)
        usage = reply.usage
        run = HostedRun(executed_code=None, provider_ids=ids, usage={
            "input_tokens": usage.input_tokens or 0, "output_tokens": usage.output_tokens or 0})
        uses = [b for b in reply.content if b.type == "server_tool_use" and b.name == tool_name]
        results = [b for b in reply.content if b.type.endswith("code_execution_tool_result")]
        if len(uses) != 1 or len(results) != 1:
            run.detail = f"{len(uses)} code executions in the reply (one expected)"
            if len(uses) > 1:
                run.executed_code = "\n".join(str(u.input) for u in uses)
            return run
        use, result = uses[0], results[0]
        ids["tool_use_id"] = use.id
        key = "code" if self.tool_version == "code_execution_20250522" else "command"
        ran = use.input.get(key) if is_object(use.input) else None
        # The backend compares the program itself: map the bash form back onto it.
        run.executed_code = program if ran == self.expected(program) else (ran or "")
        content = result.content
        if content.type.endswith("_error"):
            run.status = "timeout" if content.error_code == "execution_time_exceeded" else "error"
            run.detail = f"tool error {content.error_code}"
            return run
        run.stdout, run.stderr, run.exit_code = content.stdout, content.stderr, content.return_code
        for block in content.content:
            meta: Any = self.client.beta.files.retrieve_metadata(block.file_id, betas=[FILES_BETA])
            ids[f"file:{meta.filename}"] = block.file_id
            if want_files(meta.filename):
                data = self.client.beta.files.download(block.file_id, betas=[FILES_BETA])
                run.files.append(HostedFile(meta.filename, data.read()))
            try:
                self.client.beta.files.delete(block.file_id, betas=[FILES_BETA])
            except Exception:  # noqa: BLE001 - recorded: the provider keeps it until expiry
                run.cleanup_ok = False
        return run

    def close(self) -> None:
        self.client.close()
