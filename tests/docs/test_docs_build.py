"""The documentation site builds with warnings as errors (``mkdocs build --strict``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("mkdocs") is None and not (
    Path(sys.executable).parent / "mkdocs").exists(),
    reason="mkdocs is not installed (pip install 'formulane[docs]')")
def test_docs_build_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed (the docs extra)")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "site" / "reference" / "python" / "index.html").read_text()
    assert "render_end_user" in api and "schema_from_json_schema" in api
    functions = (tmp_path / "site" / "functions" / "index.html").read_text()
    assert "ROUND" in functions
    assert "E205" in (tmp_path / "site" / "errors" / "index.html").read_text()
