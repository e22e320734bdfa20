"""First use of `formulane.testing.formulas(...).example()`: where the time goes (issue 16 #9).

Run: ``python bench/testing_first_draw.py [--runs N]``. Each run is a fresh process with a fresh
Hypothesis storage directory (what a new project sees), and prints CPU seconds for each step of
the first draw, the median over the runs. CPU time is the honest figure on a shared machine:
wall time there is mostly waiting for a core.

Steps, in the order the first draw meets them:
- ``import``: ``from formulane.testing import formulas``;
- ``registry``: loading every function module (the strategies walk the whole registry);
- ``charmap``: Hypothesis' Unicode table, built once per storage directory (any text strategy);
- ``constants``: Hypothesis mining constants from the source of every *local* module: a source
  checkout or an editable install, never a package in site-packages; cached per directory;
- ``formulas()``: building the strategy (lazy) and ``env``: the ways to build each type;
- ``draw``: ``.example()`` itself, the rest.
Two layouts: this checkout (``checkout``) and a copy of the package under a ``site-packages``
directory (``installed``: what users of the wheel get; Hypothesis skips its constants).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

_CHILD = r"""
import json, time, warnings
warnings.simplefilter("ignore")
t = time.process_time
c0 = t()
from formulane.testing import formulas
c1 = t()
from formulane.functions.registry import default_registry
default_registry()
c2 = t()
from hypothesis.internal import charmap
charmap.charmap()
c3 = t()
from hypothesis.internal.conjecture import providers
providers._get_local_constants()
c4 = t()
s = formulas({"price": "Number", "qty": "Number?", "name": "Text"})
c5 = t()
from formulane.testing.strategies import _make_env
from formulane.schema import normalize_schema
_make_env(normalize_schema({"price": "Number", "qty": "Number?", "name": "Text"}), default_registry(),
          volatile=False, errors=True, lambdas=True)
c6 = t()
s.example()
c7 = t()
print(json.dumps({"import": c1 - c0, "registry": c2 - c1, "charmap": c3 - c2, "constants": c4 - c3,
                  "formulas()": c5 - c4, "env": c6 - c5, "draw": c7 - c6, "total": c7 - c0}))
"""


def _run(pythonpath: str, runs: int) -> dict[str, float]:
    import json

    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as storage:
            env = dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=storage, PYTHONPATH=pythonpath,
                       PYTHONDONTWRITEBYTECODE="")
            out = subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True, cwd=storage,
                                 capture_output=True, text=True).stdout.strip().splitlines()[-1]
        for key, value in json.loads(out).items():
            samples.setdefault(key, []).append(value)
    return {key: statistics.median(values) for key, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        installed = Path(tmp) / "lib" / "site-packages"
        shutil.copytree(SRC / "formulane", installed / "formulane",
                        ignore=shutil.ignore_patterns("__pycache__", "static"))
        # byte-compiled, as pip installs a wheel (and as a checkout is after its first import)
        for tree in (installed, SRC / "formulane"):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True,
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE=""))
        for label, path in (("checkout", str(SRC)), ("installed", str(installed))):
            figures = _run(path, args.runs)
            print(f"{label:10} " + "  ".join(f"{k} {v:.2f}s" for k, v in figures.items())
                  + f"   (CPU, median of {args.runs} fresh processes and storage directories)")


if __name__ == "__main__":
    main()
