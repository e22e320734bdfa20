"""The per-evaluation context (limits, the injected clock, the cost meter), read by functions and
the interpreter alike: it sits below both so that `functions/` never imports the interpreter.

One `EvalContext` is made for each `Program.evaluate` call and passed to implementations that
declare ``needs_ctx``. When the checker's static cost bound already proves the budget, the
program runs unmetered and `charge` returns at once; otherwise every call charges its cost
before running, so a runaway program stops with `LimitExceeded` (which no formula can catch).
Size checks (`check_text`, `check_list`) run *before* a value is allocated, and also count the
bytes against the evaluation's memory budget (E413), metered or not.

While a metered program runs, its context is published in a `ContextVar` (`active()`), so the
loops deep inside a function (wildcard matching, format codes, criteria, lookups, regex
replacement) can `poll` the meter: charge the work they do and stop at the deadline, instead
of running until the call returns. Unmetered programs have an honest static bound and pay
nothing for this.
"""

from __future__ import annotations

import datetime as dt
import time
from contextvars import ContextVar, Token

from .errors import LimitExceeded
from .limits import Limits


class EvalContext:
    __slots__ = ("limits", "now", "metered", "left", "deadline", "max_text", "max_list", "memory_left")

    def __init__(self, limits: Limits, now: dt.datetime, metered: bool) -> None:
        self.limits = limits
        self.now = now
        self.metered = metered
        self.left = limits.max_cost
        self.max_text = limits.max_text_length
        self.max_list = limits.max_list_length
        self.memory_left = limits.max_memory_bytes
        self.deadline = (
            time.monotonic() + limits.deadline_ms / 1000.0
            if metered and limits.deadline_ms is not None
            else None
        )

    @property
    def today(self) -> dt.date:
        return self.now.date()

    def charge(self, units: int) -> None:
        if not self.metered:
            return
        self.left -= units
        if self.left < 0:
            raise LimitExceeded(
                f"evaluation cost exceeded the budget of {self.limits.max_cost:,} units",
                code="E405",
                hint="simplify the formula, use smaller lists, or raise Limits.max_cost",
            )
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise LimitExceeded(
                f"evaluation ran past its deadline of {self.limits.deadline_ms:g} ms",
                code="E408",
                hint="raise Limits.deadline_ms if this formula is expected to take longer",
            )

    def check_text(self, length: int) -> None:
        if length > self.max_text:
            raise LimitExceeded(
                f"a text of {length:,} characters would exceed the limit of {self.max_text:,}",
                code="E406",
                hint="raise Limits.max_text_length to allow longer texts",
            )
        self.check_memory(length)

    def check_list(self, length: int) -> None:
        if length > self.max_list:
            raise LimitExceeded(
                f"a list of {length:,} items would exceed the limit of {self.max_list:,}",
                code="E407",
                hint="raise Limits.max_list_length to allow longer lists",
            )
        self.check_memory(8 * length)

    def check_memory(self, nbytes: int) -> None:
        """Count ``nbytes`` about to be allocated against the memory budget (E413)."""
        self.memory_left -= nbytes
        if self.memory_left < 0:
            raise LimitExceeded(
                f"evaluation would build more than {self.limits.max_memory_bytes:,} bytes of "
                "texts and lists",
                code="E413",
                hint="work on fewer or shorter values, or raise Limits.max_memory_bytes",
            )


_ACTIVE: ContextVar[EvalContext | None] = ContextVar("formulane_active_evaluation", default=None)


def activate(ctx: EvalContext) -> Token[EvalContext | None]:
    """Publish a metered evaluation's context for `poll` (undo with `deactivate`)."""
    return _ACTIVE.set(ctx)


def deactivate(token: Token[EvalContext | None]) -> None:
    _ACTIVE.reset(token)


def active() -> EvalContext | None:
    """The metered evaluation running in this thread or task, if any."""
    return _ACTIVE.get()


def poll(units: int) -> None:
    """Charge ``units`` of work done inside a function's loop to the running metered evaluation
    (cost budget and deadline); free when nothing metered is running."""
    ctx = _ACTIVE.get()
    if ctx is not None:
        ctx.charge(units)
