"""/proc inside the sandbox shows neither host store paths nor the bwrap command line (issue 15
item 11, last bullet).

Family: /proc views (cases/sandbox_proc.yaml), on the real bubblewrap backend. The environment
is mounted through an overlay whose options name only ``/proc/self/fd/N`` (a bind mount showed
its host path in mountinfo), and bwrap takes its options through ``--args FD`` (its namespace
init, pid 1, showed them all in its cmdline).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from formulane.escalation.backends import BubblewrapBackend

from .sandbox_support import (  # noqa: F401  (fixtures)
    bwrap, case_ids, load_cases, make_job, no_job_process_survives, sbx_dir,
)

CASES = load_cases("sandbox_proc.yaml")
BWRAP_OPTIONS = ("--ro-bind", "--bind-fd", "--setenv", "--seccomp", "--unshare", "--cap-drop",
                 "--clearenv", "--remount-ro", "--die-with-parent", "--tmpfs")

READER = """
import glob, json, os
out = {}
for pattern in PATHS:
    for path in sorted(glob.glob(pattern)) or [pattern]:
        try:
            with open(path, 'rb') as f:
                out[path] = f.read(1 << 20).decode('utf-8', 'replace')
        except OSError as exc:
            out[path] = 'ERROR ' + exc.strerror
for pattern in LINKS:
    for path in sorted(glob.glob(pattern)) or [pattern]:
        try:
            out[path] = os.readlink(path)
        except OSError as exc:
            out[path] = 'ERROR ' + exc.strerror
print(json.dumps(out))
"""


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_proc_shows_no_host_path_and_no_bwrap_option(case: dict[str, Any],
                                                     bwrap: BubblewrapBackend,
                                                     sbx_dir: Path) -> None:
    code = (f"PATHS = {case.get('paths', [])!r}\nLINKS = {case.get('links', [])!r}\n" + READER)
    receipt = bwrap.run(make_job(code, env={"REPORT_MONTH": "2026-05"}))
    assert receipt.outcome.value == "succeeded", receipt.stderr.text[-800:]
    seen = json.loads(receipt.stdout.text)
    for path in case["readable"]:
        assert path in seen and not seen[path].startswith("ERROR"), (path, seen.get(path))
    env_root = str(bwrap.environments.root)
    forbidden = [str(sbx_dir), env_root, str(Path(env_root).resolve()), "/tmp/formulane",
                 str(bwrap.state_dir), *BWRAP_OPTIONS]
    for path, text in seen.items():
        for secret in forbidden:
            assert secret not in text, f"{path} shows {secret!r}: {text[:400]}"
