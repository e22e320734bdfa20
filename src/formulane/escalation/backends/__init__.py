"""Sandbox backends: local (bubblewrap, plain process), managed adapters (E2B, Modal, Daytona)
and provider-hosted code execution (OpenAI, Anthropic, Gemini: `hosted.HostedBackend`).

Contract: every backend implements `SandboxBackend`; `local_backend` returns the strongest local
backend this machine can run (bubblewrap when user namespaces work, else the plain-process
fallback marked ``isolation=process``), probing for real rather than guessing. Managed and hosted
adapters are imported from their own modules because their SDKs are optional extras.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import BackendCapabilities, SandboxBackend
from .bubblewrap import BubblewrapBackend
from .process import ProcessBackend


def local_backend(state_dir: Path | str, **kwargs: Any) -> SandboxBackend:
    """Bubblewrap if it can run here, else the plain-process fallback."""
    bwrap = BubblewrapBackend(state_dir, **kwargs)
    if bwrap.capabilities().available:
        return bwrap
    return ProcessBackend(state_dir, **kwargs)


__all__ = ["BackendCapabilities", "BubblewrapBackend", "ProcessBackend", "SandboxBackend",
           "local_backend"]
