"""DateTime columns in a zone of their own on polars: two zones in one operation are refused
when compiling, never an aborted query (found by tests/test_differential.py,
`test_zoned_times_agree`; columnar/polars/zones.py).

polars holds one zone per column. A DateTime column in Europe/Paris beside a DATETIME literal
(UTC) in an IF, MIN, a list or a comparison failed the whole query ("failed to determine
supertype of datetime[μs, UTC] and datetime[μs, Europe/Paris]", "could not evaluate
comparison"); the scalar engine keeps each value's zone, which one polars column cannot. So
such a formula is refused (`Unsupported`, E213) with the zones named; what reads each DateTime
in its own zone (DATEDIF, HOUR), joins one zone (MAX(at, at)) or converts first (TZCONVERT to
UTC) runs, and answers what the scalar engine does.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import formulane
from formulane import ErrorValue, Unsupported

pl = pytest.importorskip("polars")

PARIS = ZoneInfo("Europe/Paris")
SCHEMA = {"at": "DateTime", "u": "DateTime", "c": "Boolean"}
#: the same instants: `at` in Paris (polars: a Europe/Paris column), `u` at UTC
INSTANTS = [dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc),
            dt.datetime(2024, 7, 31, 22, 30, tzinfo=dt.timezone.utc)]
ROWS = [{"at": t.astimezone(PARIS), "u": t, "c": i == 0} for i, t in enumerate(INSTANTS)]

MIXED = [
    "IF(c, at, DATETIME(2000, 1, 1, 0, 0, 0))",
    "MIN(DATETIME(2000, 1, 1, 0, 0, 0), at)",
    "[at, u]",
    "LET(v, at, IF(c, v, u))",
    "at = DATETIME(2000, 1, 1, 0, 0, 0)",
    "at < u",
    "HOUR(IF(c, u, DATETIME(2000, 1, 1, 0, 0, 0, \"Europe/Paris\")))",
    "IF(c, TZCONVERT(u, \"Europe/Paris\"), u)",
]
RUNS = [
    "HOUR(at)",
    "DATEDIF(at, DATETIME(2030, 1, 5, 0, 0, 0), \"d\")",
    "MAX(at, at)",
    "IF(c, TZCONVERT(at, \"UTC\"), DATETIME(2000, 1, 1, 0, 0, 0))",
    "TZCONVERT(at, \"UTC\") = u",
    "IF(c, at, TZCONVERT(u, \"Europe/Paris\"))",
    "HOUR(IF(c, u, DATETIME(2000, 1, 1, 0, 0, 0)))",
]


def _frame() -> Any:
    frame = pl.DataFrame({"at": INSTANTS, "u": INSTANTS, "c": [r["c"] for r in ROWS]},
                         schema={"at": pl.Datetime("us", "UTC"), "u": pl.Datetime("us", "UTC"),
                                 "c": pl.Boolean})
    return frame.with_columns(pl.col("at").dt.convert_time_zone("Europe/Paris"))


@pytest.mark.parametrize("source", MIXED)
def test_two_zones_in_one_operation_are_refused(source: str) -> None:
    with pytest.raises(Unsupported) as refused:
        formulane.apply(_frame(), {"o": source}, SCHEMA)
    assert refused.value.backend == "polars"
    assert "different time zones" in refused.value.reason
    assert "UTC" in refused.value.reason


@pytest.mark.parametrize("source", RUNS)
def test_one_zone_per_operation_runs_as_the_scalar_engine(source: str) -> None:
    program = formulane.compile(source, SCHEMA)
    out = formulane.apply(_frame(), {"o": source}, SCHEMA)
    errors = out["o__error"].to_list() if "o__error" in out.columns else [None] * len(ROWS)
    for row, value, error in zip(ROWS, out["o"].to_list(), errors):
        want = program.evaluate(row)
        assert not isinstance(want, ErrorValue) and error is None, (source, row, error)
        if isinstance(want, dt.datetime):
            # the instant, and the wall clock of the value's own zone
            assert value == want and value.replace(tzinfo=None) == want.replace(tzinfo=None)
        elif isinstance(want, bool):
            assert value is want
        else:
            assert value == want, (source, row, value, want)


def test_utc_columns_compile_as_before() -> None:
    """Every column and literal at UTC (the default layout): nothing to refuse."""
    frame = _frame().with_columns(pl.col("at").dt.convert_time_zone("UTC"))
    utc_rows = [{**r, "at": r["u"]} for r in ROWS]
    for source in MIXED[:6]:
        program = formulane.compile(source, SCHEMA)
        out = formulane.apply(frame, {"o": source}, SCHEMA)
        assert out["o"].to_list() == [program.evaluate(r) for r in utc_rows], source
