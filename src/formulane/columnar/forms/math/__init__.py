"""Polars and SQL forms of the math, information and finance families (private).

The form tables (`polars_table`, `sql_table`) name these (``polars_<name>`` in `polars`,
``sql_<name>`` in `sql`, the SQL information tests over a column in `info_sql`), imported on
a form's first call, so declaring a function never imports
polars. Each form mirrors its scalar twin: the same errors, checked in the same order, and the
same answer within the backend's numeric policy (`formulane.columnar.polars.kit`):

- **Float mode** (Float64 columns). The scalar engine reads a float by its shortest repr
  (``2.675`` is exactly 2.675 there), so the decimal-grid functions must too:
  - ROUND, ROUNDUP, ROUNDDOWN, TRUNC use float arithmetic that is exact with respect to that
    reading: ``k = floor(|x| * 10^n)`` is corrected by comparing x with the float nearest to the
    decimal ``k / 10^n`` (one correctly rounded division), and a tie is detected by comparing x
    with the float nearest to ``(k + 0.5) / 10^n``. Since x's shortest repr is the unique
    shortest decimal that rounds to x, x lies on a grid point or tie exactly when its repr does
    (while ``|x| * 10^n < 2^48``; beyond that nothing below the grid is left to round). So
    ``ROUND(1.005, 2)`` is 1.01 as in the scalar engine (polars' own ``round`` gives 1.0).
  - MOD, QUOTIENT, MROUND, CEILING, FLOOR and the .MATH forms divide in float and take a
    quotient within 1e-15 relative of an integer (or of a half, for MROUND's ties) as exactly
    on it (the backend's float comparisons use the same 1e-15): the float error of a quotient
    of two shortest-repr decimals is below 3.4e-16 relative, while a quotient off the grid is
    further away whenever x, written on the finer of the two decimal grids, has at most 15
    digits. So ``MOD(0.3, 0.1)`` is 0 and ``CEILING(0.3, 0.1)`` is 0.3, as in the scalar
    engine. Past 2^48 steps nothing is snapped. The remainder itself is float arithmetic
    (``x % d``), as the operators' float mode: a remainder much smaller than x keeps x's float
    error. (Exact decimals for every row would need each value's digits, which polars only
    gives through text: ~100-300 ms per million values and per use, since an eager expression
    recomputes each use.)
  - INT, EVEN, ODD, ISEVEN, ISODD only floor/ceil/truncate, which are exact on floats.
  - Powers, roots, logarithms, trigonometry and finance compute in float64 (as the scalar
    engine's own float algorithms do for trigonometry); the backend tests non-finite results.
- **Decimal mode** (Decimal(38, 18) columns): the decimal-grid functions are exact decimal
  arithmetic; the float algorithms run on the float value and come back through its shortest
  repr (as the scalar engine's ``from_float``). A result of magnitude 1e20 or more does not fit
  Decimal(38, 18) and is #NUM! (the backend's decimal policy); operands are masked first,
  because polars aborts the whole query on a decimal overflow.
- **SQL** forms cannot see argument types: the decimal-grid functions read their operands as
  ``TRY_CAST(CAST(x AS VARCHAR) AS DECIMAL(38, 18))`` (a DOUBLE's text is its shortest repr, a
  DECIMAL's its own digits), compute exactly, and fall back to the engine's own arithmetic where
  that decimal does not round-trip. Float algorithms run in DOUBLE; the engines return NaN or
  infinities for domain errors, so every non-finite result is tested (#NUM!). Divisors are
  wrapped in NULLIF (DuckDB aborts on a decimal division or remainder by zero).

Layout: `_base` (the limits both backends share), `polars`, `sql`, and `elementwise` /
`elementwise_sql` (the hyperbolic and reciprocal trigonometry, SQRTPI, SLN, SYD...).
"""
