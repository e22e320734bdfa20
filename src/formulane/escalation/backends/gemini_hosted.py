"""Gemini's code execution as a hosted backend.

Contract: through the official ``google-genai`` SDK (extra ``gemini``): ``models.generate_content``
with the ``code_execution`` tool; the reply's ``executable_code`` part is the code it ran and
``code_execution_result`` its outcome (``OUTCOME_OK``, ``OUTCOME_FAILED``,
``OUTCOME_DEADLINE_EXCEEDED``) and output. There is no container to keep or reuse, no file
API for the program's files (only images come back, inline, and are stored as artifacts named
``image-N.<ext>``), a fixed 30 s execution limit, and no exit status: outcomes are ``inferred``.
"""

from __future__ import annotations

import mimetypes
from typing import Any, Callable, Literal

from ..contract import Isolation, SandboxJob
from .hosted import INSTRUCTIONS, HostedClient, HostedFile, HostedLimits, HostedRun, request_text


_OUTCOMES: dict[str, Literal["ok", "failed", "timeout", "error"]] = {
    "OUTCOME_OK": "ok", "OUTCOME_FAILED": "failed", "OUTCOME_DEADLINE_EXCEEDED": "timeout"}


class GeminiCodeExecution(HostedClient):
    name = "gemini-code-execution"
    isolation = Isolation.NAMESPACE
    mechanism = "Gemini code execution tool (provider sandbox, no network)"
    limits = HostedLimits(
        memory_bytes=None, memory_by="not_enforced", max_wall_s=30.0,
        network="no network access in the execution environment (provider policy)",
        lifetime="none: each request runs in a fresh environment, nothing persists",
        retention="prompts and outputs follow the Gemini API data-use terms of the account",
        states=("ephemeral",), artifacts="images only (inline), as image-N.<ext>")

    def __init__(self, *, api_key: str, model: str = "gemini-2.5-flash",
                 base_url: str | None = None, client: Any = None) -> None:
        from google import genai
        from google.genai import types
        self.version = f"google-genai {genai.__version__}"
        self.model = model
        self.types = types
        self.client: Any = client or genai.Client(
            api_key=api_key, http_options=types.HttpOptions(base_url=base_url)
            if base_url else None)

    def execute(self, job: SandboxJob, program: str, *, timeout_s: float,
                session: str | None, want_files: Callable[[str], bool]) -> HostedRun:
        types = self.types
        config = types.GenerateContentConfig(
            system_instruction=INSTRUCTIONS,
            tools=[types.Tool(code_execution=types.ToolCodeExecution())],
            http_options=types.HttpOptions(api_version="v1beta", timeout=int(timeout_s * 1000)))
        import httpx
        try:
            reply: Any = self.client.models.generate_content(model=self.model,
                                                        contents=request_text(program),
                                                        config=config)
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"no reply within {timeout_s} s: {exc}") from None
        meta = reply.usage_metadata
        run = HostedRun(executed_code=None, provider_ids={
            "response_id": reply.response_id or "", "model_version": reply.model_version or ""},
            usage={"prompt_tokens": (meta.prompt_token_count or 0) if meta else 0,
                   "output_tokens": (meta.candidates_token_count or 0) if meta else 0,
                   "tool_use_prompt_tokens": (meta.tool_use_prompt_token_count or 0)
                   if meta else 0})
        parts: list[Any] = reply.candidates[0].content.parts if reply.candidates else []
        codes = [p.executable_code for p in parts if p.executable_code is not None]
        results = [p.code_execution_result for p in parts if p.code_execution_result is not None]
        if len(codes) != 1 or len(results) != 1:
            run.detail = f"{len(codes)} code executions in the reply (one expected)"
            if len(codes) > 1:
                run.executed_code = "\n".join(c.code or "" for c in codes)
            return run
        run.executed_code = codes[0].code
        outcome = str(results[0].outcome.value if hasattr(results[0].outcome, "value")
                      else results[0].outcome)
        output = results[0].output or ""
        run.status = _OUTCOMES.get(outcome, "error")
        if run.status == "ok":
            run.stdout = output
        else:
            run.stderr = output  # stderr and stdout together, as the provider gives them
            run.detail = f"code execution outcome {outcome}"
        images = [p.inline_data for p in parts if p.inline_data is not None]
        for n, blob in enumerate(images):
            ext = mimetypes.guess_extension(blob.mime_type or "") or ".bin"
            name = f"image-{n}{ext}"
            if want_files(name):
                run.files.append(HostedFile(name, blob.data or b""))
        return run

    def close(self) -> None:
        closer = getattr(self.client, "close", None)
        if closer is not None:
            closer()
