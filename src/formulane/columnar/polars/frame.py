"""Whole-table entry point over polars frames: `apply` (SQL's is `columnar.sql.select`).

`apply(frame, {"total": "ROUND(price * qty, 2)"})` compiles each formula against the frame's
schema (inferred from its dtypes unless given), translates it to native polars expressions and
adds one column per formula, plus ``<name>__error`` holding the Excel error code (null where the
row is fine) whenever the checker cannot prove the formula error-free. It works on DataFrame and
LazyFrame alike (lazy in, lazy out), so it streams when the caller sinks the result.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Collection, Iterable, Mapping

import polars as pl

from ...errors import CheckError, FormulaError
from ...types import (
    ANY, BOOLEAN, DATE, DATETIME, DURATION, NUMBER, TEXT, Type, list_of, optional, record,
)
from ..names import ERROR_SUFFIX, check_output_names  # ERROR_SUFFIX re-exported
from . import compiler, kit

if TYPE_CHECKING:
    from polars.datatypes import DataTypeClass
# SQL for whole tables (`sql_select`, `SqlForm`) lives in `columnar.sql.select`: importing
# sqlglot costs about 0.3 s, which `formulane apply` (polars only) should not pay at start-up.

DECIMAL_LIMIT = Decimal("1e20")
_QUANTUM = Decimal("1e-18")
_WIDE = decimal.Context(prec=80)


@dataclass(frozen=True)
class PolarsForm:
    """A program as polars expressions: the value, and the error code (None: cannot error)."""

    value: pl.Expr
    error: pl.Expr | None
    #: The value before errored rows are nulled, when computing it on those rows is safe
    #: (`polars.raw_is_safe`); None otherwise.
    raw: pl.Expr | None = None
    #: Whether the error is only the range test of ``raw`` (`kit.not_finite`: #NUM! where the
    #: float result is not finite or reaches 1e308), as for + - * over numeric columns.
    range_only: bool = False

    def exprs(self, name: str, error_suffix: str = ERROR_SUFFIX) -> list[pl.Expr]:
        """One step: the value (null where the row errs) and the error column."""
        out = [self.value.alias(name)]
        if self.error is not None:
            out.append(self.error.alias(name + error_suffix))
        return out

    def steps(self, name: str, error_suffix: str = ERROR_SUFFIX, placeholder: bool = False,
              blank_free: bool = False) -> list[list[pl.Expr]]:
        """`with_columns` steps with the same result as `exprs`, each reading the columns the
        one before wrote. With a raw value: the raw value and the error column, then the value
        nulled where the error column is set (the nulling reads the error column instead of
        recomputing the error expression: polars' common subexpression elimination does not
        reach inside the nested when/then). When the error is only the raw value's range
        test, three steps: the raw value, its range test over the column just written, the
        nulling. Nothing is left for common-subexpression elimination to find, whose hidden
        step and projection cost more (1M rows of `price * qty * (1 - disc)`, LazyFrame:
        0.52 ms over the bare expression, against 0.63 ms; see bench/COLUMNAR.md).
        ``blank_free``: the columns read are known to hold no blank (counted by `apply` over
        data that cannot change), so the raw value is null nowhere: the second step nulls it
        out of range straight from the test and the third writes `#NUM!` where it is null
        (0.03-0.05 ms less at 1M rows; with a blank the error column would read `#NUM!`
        where the one-step form leaves it blank, so a schema the caller declares does not
        take this path). ``placeholder``: the first of the three steps also adds the error
        column, all null, so that it sits next to its value before the columns later outputs
        add."""
        if self.error is None or self.raw is None:
            return [self.exprs(name, error_suffix)]
        error = name + error_suffix
        value = kit.column(name)
        nulling = [pl.when(kit.column(error).is_null()).then(value).alias(name)]
        if not self.range_only:
            return [[self.raw.alias(name), self.error.alias(error)], nulling]
        first = [self.raw.alias(name)]
        if placeholder:
            first.append(kit.NULL_TEXT.alias(error))
        if blank_free:
            return [first, [pl.when(kit.in_range(value)).then(value).alias(name)],
                    [kit.error_when(value.is_null(), "#NUM!").alias(error)]]
        return [first, [kit.not_finite(value).alias(error)], nulling]


def type_of_dtype(dtype: pl.DataType | DataTypeClass, nullable: bool = False) -> Type:
    """The formula type of a polars column."""
    if dtype.is_numeric():
        t = NUMBER
    elif dtype == pl.Utf8 or dtype == pl.Categorical:
        t = TEXT
    elif dtype == pl.Boolean:
        t = BOOLEAN
    elif dtype == pl.Date:
        t = DATE
    elif isinstance(dtype, pl.Datetime):
        t = DATETIME
    elif isinstance(dtype, pl.Duration):
        t = DURATION
    elif isinstance(dtype, pl.List):
        t = list_of(type_of_dtype(dtype.inner, nullable=True))
    elif isinstance(dtype, pl.Struct):
        t = record({f.name: type_of_dtype(f.dtype, nullable=True) for f in dtype.fields})
    else:
        t = ANY
    return optional(t) if nullable else t


def infer_frame_schema(frame: pl.DataFrame | pl.LazyFrame,
                       only: Collection[str] | None = None,
                       dtypes: Mapping[str, pl.DataType] | None = None) -> dict[str, Type]:
    """Column types; a column with nulls is nullable (``T?``), so the strict profile asks the
    formula to handle blanks whether or not a schema declares them. A LazyFrame's null counts
    are computed by one streaming pass over its plan (for a Parquet scan, only the columns'
    validity; for a plain ``df.lazy()``, read from the DataFrame in memory); pass a schema to
    `apply` to skip it. ``only``: the columns whose blanks matter
    (those the formulas read, `read_names`): a LazyFrame counts only these and types the
    others ``T?`` unseen, as `reading.infer_types` does (their nullability changes no result);
    None counts every column. ``dtypes``: a LazyFrame's schema when the caller has it already
    (collecting it resolves the plan); a DataFrame's is read from its columns."""
    if isinstance(frame, pl.LazyFrame):
        schema = frame.collect_schema() if dtypes is None else dtypes
        counted = [n for n in schema if only is None or n in only]
        if not counted:
            return {name: type_of_dtype(dtype, True) for name, dtype in schema.items()}
        if _in_memory_scan(frame):
            return _held_types(_held(frame), counted)
        # each by its exact name: `pl.col` would read "^price.*$" as a pattern
        query = frame.select([kit.column(n).null_count() for n in counted])
        nulls = query.collect(engine="streaming").row(0, named=True)
        return {name: type_of_dtype(dtype, bool(nulls[name]) if name in nulls else True)
                for name, dtype in schema.items()}
    return _held_types(frame, None)


def _held_types(held: pl.DataFrame, only: Collection[str] | None) -> dict[str, Type]:
    """`infer_frame_schema` of a DataFrame in memory (an eager frame, or the one a
    ``df.lazy()`` scans, `_held`), whose columns know their null counts: 0.015 ms, against
    0.06 ms for a query of null counts (0.13-0.20 ms streaming). ``only``: the columns
    counted (the others typed ``T?`` unseen); None: every column."""
    return {name: type_of_dtype(dtype, series.null_count() > 0
                                if only is None or name in only else True)
            for name, dtype, series in zip(held.columns, held.dtypes, held.get_columns())}


_NO_OPTIMIZATIONS = pl.QueryOptFlags.none()


def _held(frame: pl.LazyFrame) -> pl.DataFrame:
    """The DataFrame an in-memory scan (`_in_memory_scan`) reads, its columns shared."""
    return frame.collect(engine="in-memory", optimizations=_NO_OPTIMIZATIONS)


def _in_memory_scan(frame: pl.LazyFrame) -> bool:
    """Whether the plan is only a scan of an in-memory DataFrame (``df.lazy()``,
    ``pl.LazyFrame(data)``): nothing to compute, nothing to read from a file, so no memory
    to bound. Read from the unoptimized plan's description, one line ``DF [...]`` for such a
    plan (about 3 us); any other plan (a projection, a computed column, a file scan) keeps
    the streaming count."""
    plan = frame.explain(optimized=False)
    return plan.startswith("DF [") and "\n" not in plan


def polars_dtype(t: Type, numbers: str = "float") -> pl.DataType:
    """The polars dtype that holds a formula type (Number: Float64, or Decimal(38, 18) in
    decimal mode)."""
    token = kit._MODE.set(numbers)
    try:
        return kit.dtype_of(t)
    finally:
        kit._MODE.reset(token)


def _to_polars_value(value: Any, t: Type, numbers: str) -> Any:
    if value is None:
        return None
    kind = t.kind
    if kind == "Number":
        if numbers != "decimal":
            return float(value)
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if not abs(number) < DECIMAL_LIMIT or number != number.quantize(_QUANTUM,
                                                                          context=_WIDE):
            raise ValueError(f"{value!r} does not fit Decimal(38, 18)")
        return number
    if kind == "DateTime":
        return value.astimezone(dt.timezone.utc)
    if kind == "List":
        return [_to_polars_value(v, t.elem, numbers) for v in value]  # type: ignore[arg-type]
    if kind == "Record":
        return {name: _to_polars_value(value.get(name), ft, numbers) for name, ft in t.fields}
    return value


def frame_from_rows(rows: list[Mapping[str, Any]], schema: Any, numbers: str = "float"
                    ) -> pl.DataFrame:
    """A DataFrame of formula values (as `Program.evaluate` takes them) with the dtypes the
    schema's types have in the given numeric mode. A frame of no columns still has its rows."""
    from ...schema import normalize_schema

    types = normalize_schema(schema)
    if not types:
        return pl.DataFrame({"__row": list(range(len(rows)))})
    data = {name: [_to_polars_value(r.get(name), t, numbers) for r in rows]
            for name, t in types.items()}
    return pl.DataFrame(data, schema={n: polars_dtype(t, numbers) for n, t in types.items()},
                        strict=False)


def from_polars_value(value: Any, t: Type) -> Any:
    """A polars cell as the scalar engine returns it (numbers as Decimal: a float by its
    shortest representation)."""
    if value is None:
        return None
    kind = t.kind
    if kind == "Number":
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                return value
            return Decimal(repr(value)) if not value.is_integer() else Decimal(int(value))
        return Decimal(value)
    if kind == "List":
        return [from_polars_value(v, t.elem) for v in value]  # type: ignore[arg-type]
    if kind == "Record":
        return {name: from_polars_value(value.get(name), ft) for name, ft in t.fields}
    return value


def numbers_mode(frame_schema: Mapping[str, pl.DataType], used: tuple[str, ...]) -> str:
    """Decimal when a column the formula reads is Decimal (or, reading no number column, when
    the frame has one); float otherwise."""
    def numeric(dtype: Any) -> bool:
        while isinstance(dtype, pl.List):
            dtype = dtype.inner
        return dtype is not None and dtype.is_numeric()

    def decimal(dtype: Any) -> bool:
        while isinstance(dtype, pl.List):
            dtype = dtype.inner
        return isinstance(dtype, pl.Decimal)

    if any(decimal(frame_schema.get(n)) for n in used):
        return "decimal"
    if not any(numeric(frame_schema.get(n)) for n in used) and \
            any(decimal(d) for d in frame_schema.values()):
        return "decimal"
    return "float"


def apply(
    frame: pl.DataFrame | pl.LazyFrame,
    formulas: Mapping[str, str],
    schema: Any = None,
    *,
    profile: str = "strict",
    numbers: str = "auto",
    error_suffix: str = ERROR_SUFFIX,
    limits: Any = None,
    registry: Any = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Add one column per formula (and its error column where errors are possible)."""
    from ...interpreter.cache import compile_cached as compile_formula

    if not isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        raise CheckError(f"apply takes a polars DataFrame or LazyFrame, got "
                         f"{type(frame).__name__}", code="E209")
    check_output_names(formulas, error_suffix)
    # the data in memory, when they are (an eager frame, or the DataFrame a `df.lazy()` scans,
    # collected once here: its schema and null counts are then read from it, one polars call
    # where a collected schema, a second plan description and the count took three: about
    # 0.03 ms of `apply`'s 0.1 ms right after a 1M-row query)
    held = frame if isinstance(frame, pl.DataFrame) else \
        _held(frame) if _in_memory_scan(frame) else None
    # (the names and dtypes as a dict: 1.3 us, against 3.2 us for the `Schema` object)
    dtypes: Mapping[str, Any] = dict(zip(held.columns, held.dtypes)) if held is not None \
        else frame.collect_schema()
    # blanks counted over data that cannot change before the plan runs: a column typed
    # non-nullable then holds no blank (`PolarsForm.steps`)
    inferred = schema is None
    blank_free = inferred and held is not None
    if schema is None:
        only = read_names(formulas.values()) if isinstance(frame, pl.LazyFrame) else None
        schema = infer_frame_schema(frame, only=only, dtypes=dtypes) if held is None else \
            _held_types(held, only)
    programs: list[tuple[str, Any]] = []
    for name, source in formulas.items():
        try:
            programs.append((name, compile_formula(source, schema, profile=profile,
                                                   limits=limits, registry=registry)))
        except FormulaError as exc:  # say which of the formulas it came from
            exc.add_note(f"in the formula for output column {name!r}")
            raise
    if not inferred:
        # a declared schema is checked against the frame: its dtypes always, its blanks where
        # the data are in memory (`conform`)
        from .conform import check_declared

        declared = {n: p.schema[n] for _, p in programs for n in p.uses}
        check_declared(held, dtypes, declared.items())
    key = (tuple(programs), numbers, tuple(dtypes.items()), error_suffix, blank_free)
    try:
        plan = _plan(*key)
    except TypeError:  # an unhashable argument: built without the cache, which words the error
        plan = _plan.__wrapped__(*key)
    if isinstance(frame, pl.DataFrame) and plan.single:
        return frame.with_columns(plan.steps[0])  # ~0.1 ms less than planning a lazy query
    # An eager frame otherwise runs the same plan lazily, collected once: polars' eager
    # `with_columns` skips common-subexpression elimination, so a value read by its error
    # column was computed twice (1M rows of `price * qty * (1 - disc)`: 4x the bare
    # expression before).
    out = frame.lazy()
    for group in plan.stages:
        out = out.with_columns(group)
    # Every formula's first step reads the input frame; each later step reads only the
    # columns its formula's steps before it wrote.
    for step in plan.steps:
        out = out.with_columns(step)
    out = out.drop(plan.drop) if plan.drop else out
    if isinstance(frame, pl.LazyFrame):
        return out
    if frame.height < IN_MEMORY_ROWS:
        # polars' own eager operations run on the in-memory engine, whose fixed cost is lower
        # (10 rows of `price * qty * (1 - disc)`: 0.06 ms without plan optimizations, 0.14 ms
        # with them, 0.22 ms on the streaming engine); a plan with nothing for common-
        # subexpression elimination to share skips the optimizer, as eager `with_columns` does
        return out.collect(engine="in-memory",
                           optimizations=_NO_OPTIMIZATIONS if plan.cse_free else _DEFAULT)
    return out.collect()


#: Rows from which an eager frame's plan (more than one step) runs on polars' default engine
#: (streaming): its batches stay in the CPU's caches, which wins once the columns do not (2M
#: rows of `price * qty * (1 - disc)`: 4.8 ms streaming, 5.3 ms in memory; 1M rows: 2.8 ms
#: streaming, 2.3 ms in memory; measured on a 2-core EPYC with a 32 MB L3 cache).
IN_MEMORY_ROWS = 1_500_000
_DEFAULT = pl.QueryOptFlags()


@dataclass(frozen=True)
class _Plan:
    """What `apply` adds to a frame: the binder's temporary columns level by level, the
    outputs' steps (`PolarsForm.steps`: step k of every output in one `with_columns`), the
    temporaries to drop."""

    stages: tuple[tuple[pl.Expr, ...], ...]
    steps: tuple[tuple[pl.Expr, ...], ...]
    drop: tuple[str, ...]
    #: one step of one expression per output (no error column, nothing bound): nothing for
    #: common-subexpression elimination to share
    single: bool = False
    #: no step has two expressions computing the same thing (every output errs by its range
    #: test alone, `PolarsForm.steps`, or not at all): common-subexpression elimination has
    #: nothing to share between them
    cse_free: bool = False


#: Plans kept (least recently used dropped first). A plan's expressions are immutable and
#: shared; building them walks the program (~0.5 ms for `price * qty * (1 - disc)`, a fifth
#: of what polars then takes over 1M rows), so a frame applied again, or a batch of the same
#: shape, reuses them.
PLAN_CACHE_SIZE = 256


@functools.lru_cache(maxsize=PLAN_CACHE_SIZE)
def _plan(programs: tuple[tuple[str, Any], ...], numbers: str,
          dtypes: tuple[tuple[str, pl.DataType], ...], error_suffix: str,
          blank_free: bool = False) -> _Plan:
    """The polars plan of compiled programs over a frame of these dtypes (programs are keyed
    by identity: `compile_cached` returns the same object for the same formula and schema);
    ``blank_free``: see `PolarsForm.steps`."""
    frame_dtypes = dict(dtypes)
    steps: list[list[pl.Expr]] = []
    # nested calls are computed once each, as temporary columns named apart from the frame's
    # and the outputs' (`kit.Binder`), added before the outputs and dropped after
    binder = kit.Binder([*frame_dtypes, *(name for name, _ in programs)])
    token = kit._BINDER.set(binder)
    last = programs[-1][0] if programs else None  # the outputs after it add no columns
    cse_free = True
    try:
        for name, program in programs:
            try:
                mode = numbers if numbers != "auto" else numbers_mode(frame_dtypes,
                                                                      program.uses)
                form = to_polars_form(program.root, mode, frame_dtypes, program.limits)
                own = form.steps(name, error_suffix, placeholder=name != last,
                                 blank_free=blank_free)
            except FormulaError as exc:  # say which of the formulas it came from
                exc.add_note(f"in the formula for output column {name!r}")
                raise
            cse_free &= form.error is None or form.range_only
            steps += [[] for _ in range(len(own) - len(steps))]
            for k, step in enumerate(own):
                steps[k] += step
    finally:
        kit._BINDER.reset(token)
    return _Plan(tuple(tuple(g) for g in binder.stages()), tuple(tuple(s) for s in steps),
                 tuple(binder.names),
                 single=not binder.bindings and len(steps) == 1
                 and len(steps[0]) == len(programs), cse_free=cse_free)


def read_names(sources: Iterable[str]) -> set[str] | None:
    """Every name the formulas mention as a variable: the columns they may read (and the
    names of their LET bindings and lambda parameters, which only widen the set). None when a
    formula does not parse: compiling it reports why, and until then every column counts."""
    names: set[str] = set()
    for source in sources:
        found = _names_in(source) if isinstance(source, str) else frozenset()
        if found is None:
            return None
        names |= found
    return names


@functools.lru_cache(maxsize=2048)
def _names_in(source: str) -> frozenset[str] | None:
    # cached: parsing costs ~0.25 ms, as much as the whole blank count of a small frame
    from ...grammar import parse
    from ...grammar.ast import Name, children

    try:
        stack = [parse(source)]
    except FormulaError:
        return None
    names = set()
    while stack:
        node = stack.pop()
        if isinstance(node, Name):
            names.add(node.name)
        stack.extend(children(node))
    return frozenset(names)


def to_polars_form(root: Any, numbers: str, dtypes: Any = None, limits: Any = None
                   ) -> PolarsForm:
    """Polars expressions for a checked program; ``dtypes`` (the frame's, when known) lets
    decimal mode keep each Decimal column's own scale; ``limits``: the program's, that its
    constants fold under."""
    raw, error = compiler.to_polars(root, numbers_mode=numbers, dtypes=dtypes, limits=limits)
    if error is None:
        return PolarsForm(raw, None)
    # A row with an error has no value: never a half-computed number next to an error code.
    safe = compiler.raw_is_safe(root, numbers, dtypes)
    # the error is the raw value's range test alone: the walk's last pending test, nothing
    # before it (compared as expressions, built alike by `kit.not_finite`)
    range_only = safe and error.meta.eq(kit.not_finite(raw))
    return PolarsForm(pl.when(error.is_null()).then(raw), error, raw if safe else None,
                      range_only)
