"""Shared pieces of the date forms: the lazy ``pl``, the range constants, refusals, the
`program` decorator for generator algorithms, and the calendar helpers both backends run.

Contract: importing this imports polars only on first use of ``pl``; every helper takes the
ops object (`ops.PolarsOps` or `ops.SqlOps`) and mirrors `_calendar`'s arithmetic on ordinals.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable, Generator, Sequence

from ....errors import Unsupported
from ....functions import _calendar as cal
from .. import _lazy

if TYPE_CHECKING:
    from ...call import FormCall

# the date modules import it from here: polars, on first use
pl: Any = _lazy.pl


# the SQL forms never import polars

#: Integer arguments at or beyond this magnitude are not converted (int64 stays exact).
BOUND = 10**15
#: Python's ordinal of 1970-01-01 (polars dates count days from it).
EPOCH_ORDINAL = 719163
MAX_ORDINAL = cal.MAX_ORDINAL
EXCEL_MIN_ORDINAL = cal.EXCEL_MIN_ORDINAL
MARCH_1900 = dt.date(1900, 3, 1).toordinal()
DAY_US = 86_400_000_000
#: Wall and instant times count microseconds from 0001-01-01 00:00 (never negative in range).
US_0001 = (EPOCH_ORDINAL - 1) * DAY_US
#: 10000-01-01 in those microseconds: instants and wall times must stay below it.
US_10000 = MAX_ORDINAL * DAY_US
#: The characters Python's ``str.strip()`` removes.
WHITESPACE = "".join(chr(c) for c in range(0x3000 + 1) if chr(c).isspace())

Program = Generator[Any, Any, Any]


def _refuse(backend: str, function: str, reason: str) -> Unsupported:
    what = "evaluate" if backend == "polars" else "express"
    return Unsupported(f"{backend} cannot {what} {function}: {reason}", function=function,
                       backend=backend, reason=reason)


def program(f: Callable[..., Program]) -> Callable[..., Any]:
    """A generator algorithm as a function of (ops, *args) returning its outputs."""

    def run(o: Any, *args: Any) -> Any:
        return o.run(f(o, *args))

    run.__name__ = f.__name__
    run.__doc__ = f.__doc__
    return run


# =============================================================================================
# Calendar arithmetic on ordinals (both backends)


def is_leap(y: Any) -> Any:
    return (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))


def _min(o: Any, a: Any, b: Any) -> Any:
    return o.when([(a < b, a)], b)


def _month_ok(k: Any) -> Any:
    return (k >= 12) & (k <= 9999 * 12 + 11)


def _to_date(o: Any, ordinal: Any, bad: Any) -> Any:
    """The date of ``ordinal`` on the rows where ``bad`` is not set; every caller's ``bad``
    covers the ordinals outside 1..MAX_ORDINAL (so no engine sees an impossible date)."""
    return o.masked_date(ordinal, bad)


def _dates(o: Any, c: FormCall, args: Sequence[Any]) -> list[Any]:
    """The first arguments as the scalar reads them: a DateTime by its local calendar date
    (the overload's kinds are the call's argument types)."""
    return [o.local_date(a) if c.kind(i) == "DateTime" else a for i, a in enumerate(args)]


def literal_int(c: FormCall, i: int) -> tuple[bool, int | None, bool]:
    """(known, whole number, too large) of a constant Number argument ``i``: truncated toward
    zero as `trunc` does (None for a blank; too large at ``BOUND``); (False, None, False) when
    the argument is not a constant number."""
    v = c.const(i)
    if v is None:
        return True, None, False
    if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
        return False, None, False
    number = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
    if not number.is_finite():
        return False, None, False
    if abs(number) >= BOUND:
        return True, None, True
    return True, int(number), False


def literal_key(c: FormCall, i: int, table: dict[str, int], upper: bool) -> tuple[bool, Any]:
    """(known, code) of a constant unit text argument ``i`` (`ops.key`'s reading, now)."""
    v = c.const(i)
    if v is None:
        return True, None
    if not isinstance(v, str):
        return False, None
    v = v.strip(WHITESPACE)
    return True, table.get(v.upper() if upper else v.lower())


