"""Reading real files for `formulane apply`: null markers, declared dtypes, honest blanks, and
diagnostics that name the file, the column, the row and the option to use.

`scan` opens a CSV, Parquet or NDJSON file lazily: in a CSV every marker of
``ReadOptions.null_values`` (``NA``, ``N/A``, ``NULL``, an empty field... by default) reads as a
blank, column types are inferred from ``ReadOptions.infer_rows`` rows (10,000 by default; None:
every row), and a column the schema declares is *read* with the declared type's dtype (the CSV
parser's ``schema_overrides``; a cast for Parquet and NDJSON), so a declared ``Number`` column of
integers that holds ``1.5`` on row 20,000 parses instead of failing.

`file_types` gives the formula type of every column the schema does not declare, nullable
(``T?``) exactly when the column holds a blank, by one streaming pass that counts nulls (cheap
for Parquet, a parse of the file for CSV; declare the columns in ``--schema`` to skip it). So a formula that divides by a
column with blanks is refused by the strict profile with or without a schema, instead of
silently giving blanks without one.

`read_error` turns what polars raises while reading (messages that suggest keyword arguments the
command line does not have) into an `EvalError` (E303) naming the file, the column, the first
row whose value does not fit (found by a second, streaming pass over that one column) and the
options that fix it.
"""

from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Iterator, Mapping

import polars as pl

from ...errors import EvalError
from ...types import Type
from .frame import polars_dtype, type_of_dtype
from .kit import column

#: Text read as a blank in CSV files unless ``--null-values`` says otherwise ("" is an empty
#: field, quoted or not). ``NaN`` is not here: in a number column it is a number.
DEFAULT_NULL_VALUES: tuple[str, ...] = ("", "NA", "N/A", "n/a", "NULL", "null", "None", "<NA>")
#: Rows read to infer a CSV or NDJSON column's type (polars' own default is 100).
DEFAULT_INFER_ROWS = 10_000
#: Formula kinds a CSV field can be parsed as directly.
_CSV_KINDS = frozenset({"Number", "Text", "Boolean", "Date", "DateTime"})


#: Row groups (Parquet) or chunks (CSV, NDJSON) polars' streaming reader may decode ahead of
#: the formulas and the writer, unless ``ReadOptions.read_ahead`` or polars' own variable (see
#: `READ_AHEAD_VARIABLES`) says otherwise. Polars' default (at least 16 row groups, bounded by
#: the *compressed* bytes fetched) lets decoded batches pile up while the writer encodes: peak
#: RSS grew 338 -> 615 -> 844 MB over 1M, 3M and 10M rows of a well-compressed Parquet file,
#: and still 295 -> 420 -> 673 MB with 2. With 1 it stays at 255-285 MB, for the same CPU
#: time (bench/APPLY.md).
DEFAULT_READ_AHEAD = 1
#: The polars environment variable that sets the read-ahead of each format's streaming reader
#: (read by polars when a query starts).
READ_AHEAD_VARIABLES: dict[str, str] = {
    "parquet": "POLARS_ROW_GROUP_PREFETCH_SIZE",
    "csv": "POLARS_CSV_CHUNK_PREFETCH_LIMIT",
    "ndjson": "POLARS_NDJSON_CHUNK_PREFETCH_LIMIT",
}


@dataclass(frozen=True)
class ReadOptions:
    """How a file is read. ``infer_rows`` None infers each column's type from every row.
    ``read_ahead``: row groups or chunks decoded ahead of the writer (`DEFAULT_READ_AHEAD`
    when None and the polars variable of `READ_AHEAD_VARIABLES` is not set; 0: polars' own
    default, which is faster on some machines and holds more memory)."""

    null_values: tuple[str, ...] = DEFAULT_NULL_VALUES
    infer_rows: int | None = DEFAULT_INFER_ROWS
    read_ahead: int | None = None


_env_lock = threading.Lock()


@contextmanager
def read_ahead(fmt: str, options: ReadOptions) -> Iterator[None]:
    """Polars' read-ahead for ``fmt`` set from ``options`` while the block runs (a streaming
    query reads it when it starts), then put back as it was. An explicit ``read_ahead`` wins,
    then the user's own variable, then `DEFAULT_READ_AHEAD`; 0 leaves polars' default. The
    variable is process-wide: runs in parallel threads hold a lock around the change only,
    and the value they set is the same unless their options differ."""
    variable = READ_AHEAD_VARIABLES.get(fmt)
    want = options.read_ahead
    if variable is None or want == 0 or (want is None and variable in os.environ):
        yield
        return
    with _env_lock:
        before = os.environ.get(variable)
        os.environ[variable] = str(want if want is not None else DEFAULT_READ_AHEAD)
    try:
        yield
    finally:
        with _env_lock:
            if before is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = before


def parse_null_values(text: str) -> tuple[str, ...]:
    """``--null-values`` text: markers separated by commas (``"NA,-,"``: ``NA``, ``-`` and the
    empty field). The empty field is always a blank in a CSV."""
    markers = {m.strip() for m in text.split(",")}
    markers.add("")
    return tuple(sorted(markers))


def declared_dtype(t: Type, numbers: str) -> pl.DataType | None:
    """The dtype a declared column is read as (None: leave the file's own)."""
    if t.kind not in _CSV_KINDS:
        return None
    return polars_dtype(t, "decimal" if numbers == "decimal" else "float")


def _csv(path: str | Path, options: ReadOptions, overrides: Mapping[str, pl.DataType] | None
         ) -> pl.LazyFrame:
    separator = "\t" if str(path).lower().endswith(".tsv") else ","
    return pl.scan_csv(path, separator=separator, try_parse_dates=True,
                       null_values=list(options.null_values),
                       infer_schema_length=options.infer_rows or None,
                       schema_overrides=dict(overrides) if overrides else None)


def scan(path: str | Path, fmt: str, types: Mapping[str, Type] | None = None,
         options: ReadOptions = ReadOptions(), numbers: str = "auto") -> pl.LazyFrame:
    """The file as a LazyFrame whose declared columns have their declared types' dtypes."""
    types = types or {}
    if fmt == "csv":
        names = _csv(path, options, None).collect_schema()
        overrides = {n: d for n, t in types.items() if n in names
                     for d in [declared_dtype(t, numbers)] if d is not None}
        return _csv(path, options, overrides)
    frame = pl.scan_parquet(path) if fmt == "parquet" else \
        pl.scan_ndjson(path, infer_schema_length=options.infer_rows or None)
    present = frame.collect_schema()
    casts = []
    for name, t in types.items():
        dtype = present.get(name)
        want = declared_dtype(t, numbers)
        if dtype is None or want is None or dtype == want:
            continue
        if t.kind == "Number" and dtype.is_numeric() and numbers != "decimal":
            continue  # integers and floats are all Numbers; no cast needed
        if t.kind == "Date" and dtype == pl.Utf8:
            casts.append(column(name).str.to_date())
        elif t.kind == "DateTime" and isinstance(dtype, pl.Datetime):
            continue
        else:
            casts.append(column(name).cast(want))
    return frame.with_columns(casts) if casts else frame


def file_types(frame: pl.LazyFrame, path: str | Path, fmt: str,
               declared: Mapping[str, Type], options: ReadOptions = ReadOptions(),
               only: Collection[str] | None = None) -> dict[str, Type]:
    """Formula types of the columns ``declared`` does not name: ``T?`` where the column holds a
    blank, ``T`` otherwise, from one streaming pass counting nulls (for Parquet, polars reads
    only the columns' validity: about 30 ms per 1M rows of 19 columns). A column declared
    without ``?`` that holds a blank is an `EvalError` (E303) naming the first blank row: it
    would otherwise give blank results the checker was told cannot happen.

    ``only``: the columns whose blanks matter (those the formulas read, `stream.read_names`);
    only these are counted, and the others are typed ``T?`` unseen (their nullability changes
    no result, and the count grows with the file: 88 ms for 3M rows of 19 columns, 29 ms for
    the 6 a formula reads). None counts every column."""
    schema = frame.collect_schema()

    def counted(name: str) -> bool:
        return only is None or name in only

    names = [n for n in schema if n not in declared and counted(n)]
    unseen = {n: type_of_dtype(d, True) for n, d in schema.items()
              if n not in declared and not counted(n)}
    strict = [n for n, t in declared.items() if n in schema and not t.nullable and counted(n)]
    if not names and not strict:
        return unseen
    try:
        # each by its exact name: `pl.col` would read "^price.*$" as a pattern
        counts = frame.select([column(n).null_count() for n in [*names, *strict]]).collect(
            engine="streaming")
        for name in strict:
            if counts[name][0]:
                first = (frame.select(column(name)).with_row_index("__row", offset=1)
                         .filter(column(name).is_null()).head(1).collect(engine="streaming"))
                row = f"row {int(first['__row'][0]):,}" if first.height else "a row"
                raise EvalError(
                    f"{Path(path).name}, column {name!r}, {row}: a blank in a column the schema "
                    f"declares {declared[name]} ({int(counts[name][0]):,} blanks in all)",
                    code="E303",
                    hint=f"declare it \"{declared[name]}?\" in --schema and say in the formula "
                         f"what a blank means (x ?? default)")
    except pl.exceptions.PolarsError as exc:
        raise read_error(exc, path, fmt, options, declared) from None
    return {**{n: type_of_dtype(schema[n], bool(counts[n][0])) for n in names}, **unseen}


_CSV_PARSE = re.compile(r"could not parse `(?P<value>.*?)` as dtype `(?P<dtype>[^`]*)` at "
                        r"column '(?P<column>[^']*)'")
_CAST = re.compile(r"conversion from `(?P<src>[^`]*)` to `(?P<dtype>[^`]*)` failed in column "
                   r"'(?P<column>[^']*)'")
_KIND_OF = {"i": "an integer", "u": "an integer", "f": "a number", "b": "TRUE or FALSE",
            "d": "a date or time", "s": "text"}


def _first_bad_row(path: str | Path, fmt: str, options: ReadOptions, name: str,
                   dtype: pl.DataType | None) -> tuple[int, str] | None:
    """(1-based data row, its text) of the first value in column ``name`` that does not read
    as ``dtype``: the column alone, read as text, one streaming pass."""
    try:
        if fmt == "csv":
            frame = _csv(path, options, {name: pl.String()})
        elif fmt == "parquet":
            frame = pl.scan_parquet(path)
        else:
            frame = pl.scan_ndjson(path, infer_schema_length=options.infer_rows or None)
        value = column(name)
        bad = value.is_not_null() if dtype is None else \
            value.is_not_null() & value.cast(dtype, strict=False).is_null()
        found = (frame.select(value).with_row_index("__row", offset=1)
                 .filter(bad).head(1).collect(engine="streaming"))
    except pl.exceptions.PolarsError:
        return None
    if not found.height:
        return None
    return int(found["__row"][0]), str(found[name][0])


def _dtype_named(text: str) -> pl.DataType | None:
    table: dict[str, pl.DataType] = {
        "i8": pl.Int8(), "i16": pl.Int16(), "i32": pl.Int32(), "i64": pl.Int64(),
        "u8": pl.UInt8(), "u16": pl.UInt16(), "u32": pl.UInt32(), "u64": pl.UInt64(),
        "f32": pl.Float32(), "f64": pl.Float64(), "bool": pl.Boolean(), "date": pl.Date()}
    return table.get(text)


def read_error(exc: BaseException, path: str | Path, fmt: str,
               options: ReadOptions = ReadOptions(),
               declared: Mapping[str, Type] | None = None) -> EvalError:
    """A polars read or cast failure as a diagnostic naming file, column, row and options."""
    text = str(exc)
    file = Path(path).name
    match = _CSV_PARSE.search(text) or _CAST.search(text)
    if match is None:
        first = text.strip().split("\n", 1)[0][:300]
        return EvalError(f"cannot read {file}: {first}", code="E303",
                         hint=f"check that {file} is a well-formed {fmt.upper()} file"
                              + (" (--input-format sets the format)" if fmt else ""))
    name, dtype_text = match["column"], match["dtype"]
    kind = _KIND_OF.get(dtype_text[:1], dtype_text)
    located = _first_bad_row(path, fmt, options, name, _dtype_named(dtype_text))
    where = f"row {located[0]:,}" if located else "a row"
    value = located[1] if located else match.groupdict().get("value") or "a value"
    inferred = "declared in the schema" if declared and name in declared else (
        "inferred from the first "
        + (f"{options.infer_rows:,} rows" if options.infer_rows else "rows"))
    markers = ", ".join(repr(m) for m in options.null_values if m) or "only empty fields"
    try:
        float(value)
        numeric = True
    except ValueError:
        numeric = False
    if numeric:
        hint = (f"declare the column in --schema (\"{name}\": \"Number?\" reads integers and "
                f"decimals alike), or use --infer-rows 0 to infer types from every row")
    else:
        hint = (f"declare the column in --schema (\"{name}\": \"Text?\" reads it as text), or "
                f"use --infer-rows 0 to infer types from every row")
        if fmt == "csv":
            hint = (f"if {value!r} means a blank, add it to --null-values (now: {markers}); or "
                    + hint)
    return EvalError(f"{file}, column {name!r}, {where}: {value!r} is not {kind} (the "
                     f"column's type was {inferred})", code="E303", hint=hint)


__all__ = ["DEFAULT_INFER_ROWS", "DEFAULT_NULL_VALUES", "DEFAULT_READ_AHEAD",
           "READ_AHEAD_VARIABLES", "ReadOptions", "declared_dtype", "file_types",
           "parse_null_values", "read_ahead", "read_error", "scan"]
