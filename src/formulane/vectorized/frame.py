"""Whole-table entry points: `apply` over polars frames and `sql_select` for SQL engines.

`apply(frame, {"total": "ROUND(price * qty, 2)"})` compiles each formula against the frame's
schema (inferred from its dtypes unless given), translates it to native polars expressions and
adds one column per formula, plus ``<name>__error`` holding the Excel error code (null where the
row is fine) whenever the checker cannot prove the formula error-free. It works on DataFrame and
LazyFrame alike (lazy in, lazy out), so it streams when the caller sinks the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import polars as pl
from sqlglot import exp

from ..errors import CheckError
from ..types import (
    ANY, BOOLEAN, DATE, DATETIME, DURATION, NUMBER, TEXT, Type, list_of, optional, record,
)
from . import polars as pl_backend
from . import sql as sql_backend

ERROR_SUFFIX = "__error"


@dataclass(frozen=True)
class PolarsForm:
    """A program as polars expressions: the value, and the error code (None: cannot error)."""

    value: pl.Expr
    error: pl.Expr | None

    def exprs(self, name: str, error_suffix: str = ERROR_SUFFIX) -> list[pl.Expr]:
        out = [self.value.alias(name)]
        if self.error is not None:
            out.append(self.error.alias(name + error_suffix))
        return out


@dataclass(frozen=True)
class SqlForm:
    value: exp.Expression
    error: exp.Expression | None
    dialect: str

    @property
    def value_sql(self) -> str:
        return self.value.sql(self.dialect)

    @property
    def error_sql(self) -> str | None:
        return None if self.error is None else self.error.sql(self.dialect)


def type_of_dtype(dtype: pl.DataType, nullable: bool = False) -> Type:
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


def infer_frame_schema(frame: pl.DataFrame | pl.LazyFrame) -> dict[str, Type]:
    """Column types; a DataFrame column with nulls is nullable (``T?``). A LazyFrame's columns
    are taken as non-null (its data is not read to find out): declare ``T?`` in a schema where
    blanks are expected, otherwise nulls simply propagate as blanks."""
    if isinstance(frame, pl.LazyFrame):
        return {name: type_of_dtype(dtype) for name, dtype in frame.collect_schema().items()}
    nulls = frame.null_count().row(0, named=True) if frame.width else {}
    return {name: type_of_dtype(dtype, nulls.get(name, 0) > 0)
            for name, dtype in frame.schema.items()}


def numbers_mode(frame_schema: Mapping[str, pl.DataType], used: tuple[str, ...]) -> str:
    decimal = any(isinstance(frame_schema.get(n), pl.Decimal) for n in used)
    return "decimal" if decimal else "float"


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
    from .. import compile as compile_formula

    if not isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        raise CheckError(f"apply takes a polars DataFrame or LazyFrame, got "
                         f"{type(frame).__name__}", code="E209")
    if schema is None:
        schema = infer_frame_schema(frame)
    dtypes = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    exprs: list[pl.Expr] = []
    for name, source in formulas.items():
        program = compile_formula(source, schema, profile=profile, limits=limits,
                                  registry=registry)
        mode = numbers if numbers != "auto" else numbers_mode(dtypes, program.uses)
        exprs += program.to_polars(numbers=mode).exprs(name, error_suffix)
    return frame.with_columns(exprs)


def sql_select(
    table: str,
    formulas: Mapping[str, str],
    schema: Any,
    *,
    dialect: str = "duckdb",
    profile: str = "strict",
    error_suffix: str = ERROR_SUFFIX,
    keep_columns: bool = True,
) -> str:
    """``SELECT *, <formula> AS name, <error> AS name__error FROM table`` in a dialect."""
    from .. import compile as compile_formula

    columns: list[exp.Expression] = [exp.Star()] if keep_columns else []
    for name, source in formulas.items():
        form = compile_formula(source, schema, profile=profile).to_sql(dialect)
        columns.append(exp.alias_(form.value, name, quoted=True))
        if form.error is not None:
            columns.append(exp.alias_(form.error, name + error_suffix, quoted=True))
    query = exp.select(*columns).from_(exp.to_table(table))
    return query.sql(dialect)


def to_polars_form(root: Any, numbers: str) -> PolarsForm:
    value, error = pl_backend.to_polars(root, numbers_mode=numbers)
    return PolarsForm(value, error)


def to_sql_form(root: Any, dialect: str) -> SqlForm:
    if dialect not in sql_backend.DIALECTS:
        raise CheckError(f"unknown SQL dialect {dialect!r}; known: "
                         f"{', '.join(sql_backend.DIALECTS)}", code="E209")
    value, error = sql_backend.to_sql(root)
    return SqlForm(value, error, dialect)
