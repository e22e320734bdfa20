"""First use of `formulane.testing.formulas(...).example()`: where the time goes (issue 16 #9).

Run: ``python bench/testing_first_draw.py``. Prints CPU and wall seconds for the import, building
the strategy, and the first draw, with Hypothesis' constants cache cold (a fresh
HYPOTHESIS_STORAGE_DIRECTORY) and warm. CPU time is the honest figure on a shared machine: wall
time there is mostly waiting for a core. Hypothesis itself, on the first draw of a process,
parses the source of every *local* module (a source checkout or PYTHONPATH, not site-packages)
to mine constants, and caches them under its storage directory: that is the cold/warm gap.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

_CHILD = r"""
import time, warnings
warnings.simplefilter("ignore")
c0, w0 = time.process_time(), time.perf_counter()
from formulane.testing import formulas
c1, w1 = time.process_time(), time.perf_counter()
s = formulas({"price": "Number", "qty": "Number?", "name": "Text"})
c2, w2 = time.process_time(), time.perf_counter()
s.example()
c3, w3 = time.process_time(), time.perf_counter()
print(f"import {c1-c0:.2f}s cpu ({w1-w0:.2f}s wall)  formulas() {c2-c1:.2f}s cpu "
      f"({w2-w1:.2f}s wall)  first example {c3-c2:.2f}s cpu ({w3-w2:.2f}s wall)")
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as storage:
        env = dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=storage)
        for label in ("cold constants cache", "warm constants cache"):
            out = subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True,
                                 capture_output=True, text=True).stdout.strip()
            print(f"{label:22} {out}")


if __name__ == "__main__":
    main()
