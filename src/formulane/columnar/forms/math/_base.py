"""Numeric constants shared by the polars and SQL forms of the math, information and finance
families (one place: both backends bound their results by the same limits).

Contract: constants only; importing this imports neither polars nor sqlglot.
"""

from __future__ import annotations

import math
from decimal import Decimal


#: Decimal(38, 18) holds |x| < 1e20 (tested in float64 with a margin, as the backend does).
_DECIMAL_FIT = 1e20 * (1 - 1e-12)
#: The scalar engine's bound: numbers have |x| < 1e308.
_FLOAT_LIMIT = 1e308
#: |x| * 10^n at or beyond this leaves nothing below the grid to round (see the package docs).
_GRID_LIMIT = float(2**48)
#: Operands at or beyond this magnitude are not read as Decimal(38, 18) (results stay < 1e20).
_EXACT_LIMIT = 1e18
_TRIG_LIMIT = float(2**27)
_PI_DECIMAL = Decimal("3.141592653589793238")
#: The largest Decimal(38, 18): ``a + step`` fits exactly when ``a <= _DECIMAL_MAX - step``.
_DECIMAL_MAX = Decimal("99999999999999999999.999999999999999999")
#: n! in float64 for FACT (171! is beyond float64).
_FACTORIALS = [float(math.factorial(i)) for i in range(171)]
