"""Measure the prices declared for the functions whose work grows with their text sizes, and
print measured units (1 unit = 50 ns: 1,000,000 units is the default 50 ms budget) beside the
declared ones: `python bench/security_costs.py`.

The declared figures live in `functions/spec.py` (`Cost.criteria`, `MATCHER_PER_CHAR`,
`MATCHER_PAIR`, `builds_text`) and `functions/text.py` (TEXT: 128 units per format code point).
A measured figure above its declared one means the static bound lies: raise the price.
"""

from __future__ import annotations

import time
from typing import Callable

from formulane.functions._criteria import Wildcard
from formulane.functions._textformat import format_value
from formulane.functions.spec import MATCHER_PAIR, MATCHER_PER_CHAR

UNIT_NS = 50.0


def best(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return float(min(times))


def main() -> None:
    print("TEXT: units per format code point (declared 128)")
    for label, fmt in (("0 x n", "0" * 32767), ("#, x n", "#," * 16383), ("0.0 x n", "0." + "0" * 32000),
                       ("@ x n (value 'ab')", "@" * 8000)):
        value: object = "ab" if "@" in fmt else 1
        ns = best(lambda: format_value(value, fmt))
        print(f"  {label:<22} {ns / len(fmt) / UNIT_NS:6.1f}")
    print(f"Wildcard matcher: units per text code point (declared {MATCHER_PER_CHAR} + pattern/{MATCHER_PAIR})")
    for atoms in (10, 100, 1_000, 4_000, 16_000):
        pattern = "*a" * (atoms // 2) + "b"
        matcher = Wildcard(pattern)
        text = "a" * 4000
        ns = best(lambda: matcher.matches(text))
        declared = MATCHER_PER_CHAR + (atoms + 1) // MATCHER_PAIR
        print(f"  pattern {atoms + 1:>6} atoms  measured {ns / len(text) / UNIT_NS:6.1f}  declared {declared}")
    print("Wildcard pattern build: units (charged 16*atoms + distinct*atoms/256; static bound 16*chars + chars^2/256)")
    for atoms, distinct in ((1_000, 1), (8_000, 1), (32_000, 1), (4_000, 2_000), (16_000, 8_000)):
        pattern = "".join("*" + chr(0x4E00 + i % distinct) for i in range(atoms // 2))
        ns = best(lambda: Wildcard(pattern), repeat=1)
        charged = 16 * atoms + (distinct + 1) * atoms // 256
        print(f"  {atoms:>6} atoms {distinct:>5} distinct  measured {ns / UNIT_NS:10.0f}  charged {charged:10d}")


if __name__ == "__main__":
    main()
