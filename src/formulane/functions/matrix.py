"""Excel's matrix functions over 2-D number arrays: MMULT, MDETERM, MINVERSE, MUNIT.

Contract: a matrix is a 2-D array (a list of equal-length rows, row-major: Excel's {1,2;3,4}
is ``[[1, 2], [3, 4]]``), checked rectangular by `_arrays.grid_rows` (#VALUE! when ragged).
As Excel, a blank or empty item is #VALUE!, MDETERM and MINVERSE need a square array, MMULT
needs the first array's columns to equal the second's rows, and MINVERSE of a singular
matrix is #NUM!. Arithmetic is exact (fractions over the decimal inputs), each result rounded
once to the engine's Number (`_numeric.finish`), so MDETERM({1,2;3,4}) is exactly -2 where
Excel's floating point may answer -2.0000000000000004. Bounds, checked before any work:
square matrices for MDETERM and MINVERSE have at most `MAX_ORDER` rows (elimination is cubic
and exact fractions grow with the order), every result's size is checked against the list
limit (``ctx.check_list``) before it is built, and the work is charged per element visited
(m*n*p for MMULT, n^3 for elimination). No polars or SQL form: a 2-D array is not a column.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from ..runtime import EvalContext
from ..types import NUMBER, list_of
from ..values import NUM, VALUE, XLError
from . import _numeric as nm
from ._arrays import _GRID_REFUSED
from ._grids import grid_rows
from .spec import Cost, family, p, sig

#: The largest order MDETERM and MINVERSE accept (#NUM! beyond): 64^3 exact steps.
MAX_ORDER = 64
_MATRIX = list_of(list_of(NUMBER))
#: Every matrix function: a 2-D array has no columnar form; the result is sized and charged.
_declare = family(category="math", polars=_GRID_REFUSED, sql=_GRID_REFUSED,
                  cost=Cost.linear(1, 1), needs_ctx=True)


def _matrix(rows: tuple[Any, ...], what: str) -> tuple[tuple[Any, ...], ...]:
    grid = grid_rows(rows)
    if not grid or not grid[0]:
        raise XLError(VALUE, f"{what} is an empty array")
    for row in grid:
        for x in row:
            if type(x) is not Decimal and type(x) is not int:
                raise XLError(VALUE, f"{what} holds an item that is not a number")
    return grid


def _square(ctx: EvalContext, rows: tuple[Any, ...]) -> list[list[Fraction]]:
    grid = _matrix(rows, "the array")
    n = len(grid)
    if len(grid[0]) != n:
        raise XLError(VALUE, f"the array must be square; it has {n} rows and "
                             f"{len(grid[0])} columns")
    if n > MAX_ORDER:
        raise XLError(NUM, f"the array has {n} rows; at most {MAX_ORDER} are supported")
    ctx.charge(n * n * n)
    return [[Fraction(x) for x in row] for row in grid]


def _number(q: Fraction) -> Decimal:
    if q.denominator == 1:
        return nm.finish(Decimal(q.numerator) if abs(q.numerator) < 10**400
                         else _too_large())
    return nm.finish(nm.WIDE.divide(Decimal(q.numerator), Decimal(q.denominator)))


def _too_large() -> Decimal:
    raise XLError(NUM, "the result is too large (|x| >= 1e308)")


def _eliminate(a: list[list[Fraction]], b: list[list[Fraction]] | None) -> Fraction:
    """Gauss-Jordan elimination with exact fractions: returns the determinant of ``a`` and,
    when ``b`` is given (the identity), turns it into the inverse in place."""
    n = len(a)
    det = Fraction(1)
    for col in range(n):
        pivot = next((r for r in range(col, n) if a[r][col] != 0), None)
        if pivot is None:
            return Fraction(0)
        if pivot != col:
            a[col], a[pivot] = a[pivot], a[col]
            if b is not None:
                b[col], b[pivot] = b[pivot], b[col]
            det = -det
        pv = a[col][col]
        det *= pv
        start = 0 if b is not None else col + 1
        for r in range(start, n):
            if r == col or a[r][col] == 0:
                continue
            f = a[r][col] / pv
            ar, ac = a[r], a[col]
            for c in range(col, n):
                ar[c] -= f * ac[c]
            if b is not None:
                br, bc = b[r], b[col]
                for c in range(n):
                    br[c] -= f * bc[c]
    if b is not None:
        for r in range(n):
            d = a[r][r]
            b[r] = [x / d for x in b[r]]
    return det


def _mmult(ctx: EvalContext, left: tuple[Any, ...], right: tuple[Any, ...]) -> tuple[Any, ...]:
    a = _matrix(left, "array1")
    b = _matrix(right, "array2")
    m, n, q = len(a), len(a[0]), len(b[0])
    if len(b) != n:
        raise XLError(VALUE, f"array1 has {n} columns but array2 has {len(b)} rows; "
                             "they must be equal")
    ctx.check_list(m * q)  # before allocating the product
    ctx.charge(m * n * q)
    cols = [[Fraction(row[j]) for row in b] for j in range(q)]
    fa = [[Fraction(x) for x in row] for row in a]
    return tuple(tuple(_number(sum((x * y for x, y in zip(row, col)), Fraction(0)))
                       for col in cols) for row in fa)


@_declare(
    "MMULT",
    sig(p("array1", _MATRIX), p("array2", _MATRIX, doc="as many rows as array1 has columns"),
        returns=_MATRIX, impl=_mmult),
    doc="The matrix product of two 2-D arrays: as many rows as array1 and as many columns as "
        "array2; array1's columns must equal array2's rows (#VALUE! otherwise, or when an item "
        "is blank or not a number). Exact arithmetic.",
    examples=["MMULT([[1, 3], [7, 2]], [[2, 0], [0, 2]]) -> [[2, 6], [14, 4]]",
              "MMULT([[1, 2, 3]], [[4], [5], [6]]) -> [[32]]",
              "MMULT([[1, 2]], [[1, 2]]) -> #VALUE!"],
    errors=("#VALUE!", "#NUM!"),
)
def mmult(ctx: EvalContext, left: tuple[Any, ...], right: tuple[Any, ...]) -> tuple[Any, ...]:
    return _mmult(ctx, left, right)


@_declare(
    "MDETERM",
    sig(p("array", _MATRIX, doc="a square 2-D array of numbers"), returns=NUMBER),
    doc=f"The determinant of a square 2-D array of numbers (#VALUE! when it is not square or an "
        f"item is blank or not a number; #NUM! beyond {MAX_ORDER} rows). Exact arithmetic: "
        "MDETERM([[1, 2], [3, 4]]) is exactly -2.",
    examples=["MDETERM([[1, 3, 8, 5], [1, 3, 6, 1], [1, 1, 1, 0], [7, 3, 10, 2]]) -> 88",
              "MDETERM([[3, 6], [1, 1]]) -> -3", "MDETERM([[1, 2, 3], [4, 5, 6]]) -> #VALUE!"],
    errors=("#VALUE!", "#NUM!"),
)
def mdeterm(ctx: EvalContext, rows: tuple[Any, ...]) -> Decimal:
    return _number(_eliminate(_square(ctx, rows), None))


@_declare(
    "MINVERSE",
    sig(p("array", _MATRIX, doc="a square 2-D array of numbers"), returns=_MATRIX),
    doc=f"The inverse of a square 2-D array of numbers: #NUM! when the matrix is singular "
        f"(its determinant is 0), #VALUE! when it is not square or an item is blank or not a "
        f"number, #NUM! beyond {MAX_ORDER} rows. Exact arithmetic, each item rounded once.",
    examples=["MINVERSE([[4, -1], [2, 0]]) -> [[0, 0.5], [-1, 2]]",
              "MINVERSE([[1, 2], [2, 4]]) -> #NUM!"],
    errors=("#VALUE!", "#NUM!"),
)
def minverse(ctx: EvalContext, rows: tuple[Any, ...]) -> tuple[Any, ...]:
    a = _square(ctx, rows)
    n = len(a)
    ctx.check_list(n * n)
    ident = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    if _eliminate(a, ident) == 0:
        raise XLError(NUM, "the matrix is singular (its determinant is 0): it has no inverse")
    return tuple(tuple(_number(x) for x in row) for row in ident)


@_declare(
    "MUNIT",
    sig(p("dimension", NUMBER, doc="the number of rows and columns, at least 1"),
        returns=_MATRIX),
    doc="The identity matrix of the given dimension (1 on the diagonal, 0 elsewhere); "
        "#VALUE! when the dimension is below 1. Its size is checked against the list limit "
        "before it is built.",
    examples=["MUNIT(3) -> [[1, 0, 0], [0, 1, 0], [0, 0, 1]]", "MUNIT(1) -> [[1]]",
              "MUNIT(0) -> #VALUE!"],
    errors=("#VALUE!",),
)
def munit(ctx: EvalContext, dimension: Any) -> tuple[Any, ...]:
    n = nm.trunc_int(dimension)
    if n < 1:
        raise XLError(VALUE, "the dimension must be at least 1")
    ctx.check_list(n * n)  # before allocating: MUNIT(10^6) stops here
    ctx.charge(n * n)
    one, zero = Decimal(1), Decimal(0)
    return tuple(tuple(one if i == j else zero for j in range(n)) for i in range(n))
