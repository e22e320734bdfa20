"""Shared by the managed-adapter fakes: run the job a fake provider received for real.

The fakes stand in for the provider's API only; the code they are asked to run executes in the
local bubblewrap sandbox, so exit codes, tracebacks and artifacts are real.
"""

from __future__ import annotations

import json

from formulane.escalation.backends import BubblewrapBackend
from formulane.escalation.backends.managed import JOB_DIR, WORK_DIR
from formulane.escalation.contract import FileSpec

from .conftest import make_job


def run_staged(sandbox: BubblewrapBackend, files: dict[str, bytes]) -> tuple[int, str, str]:
    """Run the staged ``main.py`` with its inputs and work files; write artifacts back."""
    code = files[f"{JOB_DIR}/main.py"].decode()
    inputs = json.loads(files[f"{JOB_DIR}/inputs.json"])
    work = [FileSpec(path=p[len(WORK_DIR) + 1:], content=d, mode="rw")
            for p, d in files.items() if p.startswith(WORK_DIR + "/")]
    receipt = sandbox.run(make_job(code, inputs=inputs, files=work, artifact_globs=("**",)))
    for art in receipt.artifacts:
        files[f"{WORK_DIR}/{art.path}"] = sandbox.artifacts.get(art.stored_ref or "")
    code_out = receipt.exit_code if receipt.signal is None else 128 + receipt.signal
    return int(code_out or 0), receipt.stdout.text, receipt.stderr.text
