"""Unit tests of the columnar (polars) and SQL backend core: `formulane.apply`, schema
inference, error columns, lazy forms, refusals, numeric modes and `sql_select` renders."""

from __future__ import annotations

import datetime as dt
import warnings
from decimal import Decimal

import pytest

import formulane
from formulane import Unsupported
from formulane.columnar.forms import declared_form
from formulane.functions.spec import Refuse, builtin, sig
from formulane.types import NUMBER

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

from formulane.columnar.polars.frame import infer_frame_schema, type_of_dtype  # noqa: E402
from formulane.columnar.sql.kit import DIALECTS  # noqa: E402


def frame() -> "pl.DataFrame":
    return pl.DataFrame({
        "price": [9.99, 0.5, 2.0, None],
        "qty": [3, 0, 7, 1],
        "name": ["Ann", "bob", "", "Dee"],
        "vip": [True, False, False, True],
        "due": [dt.date(2024, 1, 31), dt.date(2024, 2, 29), dt.date(2023, 12, 31),
                dt.date(2024, 3, 31)],
    })


# ---------------------------------------------------------------------------------- apply


def test_apply_dataframe_and_lazyframe_agree() -> None:
    formulas = {"total": "ROUND(price * qty, 2)" if _has_polars("ROUND") else "price * qty",
                "unit": "(price ?? 0) / qty", "tag": 'IF(vip, "vip", "std")'}
    schema = {"price": "Number?", "qty": "Number", "name": "Text", "vip": "Boolean",
              "due": "Date"}
    formulas["total"] = "(price ?? 0) * qty"
    eager = formulane.apply(frame(), formulas, schema)
    lazy = formulane.apply(frame().lazy(), formulas, schema)
    assert isinstance(eager, pl.DataFrame) and isinstance(lazy, pl.LazyFrame)
    assert eager.equals(lazy.collect())
    assert eager["total"].to_list() == pytest.approx([29.97, 0.0, 14.0, 0.0])
    assert eager["unit__error"].to_list() == [None, "#DIV/0!", None, None]
    assert eager["unit"][1] is None  # an errored row has no value
    assert eager["tag"].to_list() == ["vip", "std", "std", "vip"]
    assert "tag__error" not in eager.columns


def test_schema_is_inferred_from_dtypes() -> None:
    df = pl.DataFrame({
        "i": [1, 2], "f": [1.5, None], "d": pl.Series([Decimal("1.25"), Decimal("2")],
                                                        dtype=pl.Decimal(12, 2)),
        "s": ["a", "b"], "b": [True, False], "day": [dt.date(2024, 1, 1)] * 2,
        "xs": [[1.0, 2.0], []], "rec": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}],
    })
    schema = {n: str(t) for n, t in infer_frame_schema(df).items()}
    assert schema == {"i": "Number", "f": "Number?", "d": "Number", "s": "Text",
                      "b": "Boolean", "day": "Date", "xs": "List[Number?]",
                      "rec": "Record{a: Number?, b: Text?}"}
    lazy_schema = {n: str(t) for n, t in infer_frame_schema(df.lazy()).items()}
    assert lazy_schema == schema  # a LazyFrame's nulls are counted too (honest blanks)
    assert str(type_of_dtype(pl.Categorical())) == "Text"
    out = formulane.apply(df, {"x": "i * 2 + d"})
    # a Decimal input: decimal mode, at the scale the result needs (2 here)
    assert out["x"].dtype == pl.Decimal(38, 2)
    assert out["x"].to_list() == [Decimal("3.25"), Decimal("6")]


def test_integer_columns_compute_in_float64() -> None:
    df = pl.DataFrame({"a": [2**62, 7], "b": [4, 2]})
    out = formulane.apply(df, {"s": "a + a", "q": "b / 2"})
    assert out["s"].dtype == pl.Float64 and out["s"][0] == pytest.approx(2.0**63)
    assert out["q"].to_list() == [2.0, 1.0]


def test_error_columns_are_elided_when_the_checker_proves_none() -> None:
    schema = {"price": "Number?", "qty": "Number", "name": "Text", "vip": "Boolean",
              "due": "Date"}
    out = formulane.apply(frame(), {
        "a": "qty > 1", "b": 'IF(vip, name, "x")', "c": 'name & "!"',
        "d": "IFERROR(qty / 0, -1)", "e": "NOT(vip) or qty = 0", "f": "qty / 2",
    }, schema)
    assert {c for c in out.columns if c.endswith("__error")} == {"f__error"}
    assert out["d"].to_list() == [-1.0] * 4


def test_lazy_if_never_leaks_the_untaken_branch() -> None:
    df = pl.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.0, 4.0, 0.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = formulane.apply(df, {
            "r": "IF(b = 0, 0, a / b)",
            "s": "IF(b <> 0, a / b)",
            "t": 'IFS(b = 0, "zero", a / b > 0.4, "big", TRUE, "small")',
            "u": "b = 0 or a / b > 0.4",
            "v": "AND(b <> 0, a / b > 0.4)",
            "w": "CHOOSE(IF(b = 0, 1, 2), 0, a / b)",
            "x": "IFERROR(a / b, a)",
        })
    assert out["r"].to_list() == [0.0, 0.5, 0.0]
    assert "r__error" not in out.columns or out["r__error"].null_count() == 3
    assert out["s"].to_list() == [None, 0.5, None]
    assert out["t"].to_list() == ["zero", "big", "zero"]
    assert out["u"].to_list() == [True, True, True]
    assert out["v"].to_list() == [False, True, False]
    assert out["w"].to_list() == [0.0, 0.5, 0.0]
    assert out["x"].to_list() == [1.0, 0.5, 3.0]
    for name in "stuvwx":
        col = name + "__error"
        assert col not in out.columns or out[col].null_count() == 3, name


def test_condition_errors_win_over_both_branches() -> None:
    df = pl.DataFrame({"a": [1.0, 0.0]})
    out = formulane.apply(df, {"r": "IF(1 / a > 0, 1, 2)"})
    assert out["r__error"].to_list() == [None, "#DIV/0!"]
    assert out["r"].to_list() == [1.0, None]


def test_switch_compares_text_ignoring_case_everywhere() -> None:
    source = 'SWITCH(name, "ANN", 1, "Bob", 2, 0)'
    out = formulane.apply(frame(), {"s": source}, {"name": "Text"})
    assert out["s"].to_list() == [1.0, 2.0, 0.0, 0.0]
    assert formulane.evaluate(source, {"name": "ann"}) == 1
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('Ann'), ('bob'), ('')) v(name)")
    query = formulane.sql_select("t", {"s": source}, {"name": "Text"}, keep_columns=False)
    assert [r[0] for r in con.execute(query).fetchall()] == [1, 2, 0]


# ------------------------------------------------------------------------------ & and text


@pytest.mark.parametrize("value", [0, 1, -1, 0.1, 1 / 3, 2 / 3, 1e15, 123456789012345678,
                                   1e-9, 1.5e-10, 1e300, -2.5, 100, 0.30000000000000004,
                                   999999999999999.5])
def test_number_to_text_is_excel_general_format(value: float) -> None:
    df = pl.DataFrame({"x": [float(value)]})
    out = formulane.apply(df, {"t": '"n=" & x'})
    assert out["t"][0] == formulane.evaluate('"n=" & x', {"x": float(value)})


def test_decimal_number_to_text_is_exact() -> None:
    values = [Decimal("0.1234567890123455"), Decimal("12345678901234567.5"), Decimal("-0.5"),
              Decimal("1E-18"), Decimal("99999999999999999999")]
    df = pl.DataFrame({"x": pl.Series(values, dtype=pl.Decimal(38, 18)),
                       "d": [dt.date(2024, 2, 29)] * len(values)})
    out = formulane.apply(df, {"t": 'x & ""', "b": 'TRUE & "/" & d'})
    assert out["t"].to_list() == [formulane.evaluate('x & ""', {"x": v}) for v in values]
    assert out["b"][0] == "TRUE/2024-02-29"


def test_sql_refuses_number_to_text_with_a_reason() -> None:
    with pytest.raises(Unsupported) as info:
        formulane.compile('x & "!"', {"x": "Number"}).to_sql("duckdb")
    assert info.value.backend == "sql" and info.value.function == "&"
    assert "General format" in info.value.reason
    form = formulane.compile('flag & "/" & day', {"flag": "Boolean", "day": "Date"}).to_sql()
    con = duckdb.connect()
    row = con.execute(f"SELECT {form.value_sql} FROM (SELECT TRUE AS flag, "
                      f"DATE '2024-02-29' AS day)").fetchone()
    assert row[0] == "TRUE/2024-02-29"


# ------------------------------------------------------------------------------- numbers


def test_float_overflow_and_non_finite_results_are_num() -> None:
    df = pl.DataFrame({"x": [1e200, 2.0, 1e-200], "y": [1e200, 0.0, 1e-200]})
    out = formulane.apply(df, {"m": "x * y", "d": "x / y", "p": "x ^ 2",
                               "c": "x * y * 10 > 1", "h": "1 / (x * y * 1e200)"})
    assert out["m__error"].to_list() == ["#NUM!", None, None]
    assert out["d__error"].to_list() == [None, "#DIV/0!", None]
    assert out["p__error"].to_list() == ["#NUM!", None, None]
    assert out["c__error"].to_list() == ["#NUM!", None, None]  # not swallowed by >
    assert out["h__error"][0] == "#NUM!"  # 1/inf would be a silent 0
    assert out["m"][0] is None


def test_outputs_read_the_input_frame_even_when_they_replace_a_column() -> None:
    # apply computes in two steps (raw value and error, then the value nulled where the row
    # errs): an output named like an input column must not change what the others read.
    df = pl.DataFrame({"x": [1e300, 2.0], "y": [1e10, 0.0]})
    out = formulane.apply(df, {"x": "x * y", "r": "x / y", "k": "x + 1"})
    assert out.columns == ["x", "y", "x__error", "r", "r__error", "k", "k__error"]
    assert out["x"].to_list() == [None, 0.0] and out["x__error"].to_list() == ["#NUM!", None]
    assert out["r"].to_list() == [1e290, None] and out["r__error"].to_list() == [None, "#DIV/0!"]
    assert out["k"].to_list() == [1e300, 3.0]
    assert out.equals(formulane.apply(df.lazy(), {"x": "x * y", "r": "x / y",
                                                  "k": "x + 1"}).collect())


def test_float_errors_keep_their_left_to_right_order() -> None:
    df = pl.DataFrame({"x": [1e300]})
    out = formulane.apply(df, {"a": "(x * x) + (1 / 0)", "b": "(1 / 0) + (x * x)"})
    assert out["a__error"][0] == formulane.evaluate("(x * x) + (1 / 0)", {"x": 1e300}).code
    assert out["b__error"][0] == "#DIV/0!"


def test_float_comparisons_use_fifteen_digits() -> None:
    df = pl.DataFrame({"x": [0.1, 1e-20]})
    out = formulane.apply(df, {"a": "x + 0.2 = 0.3", "b": "x * 3 <> 0.3", "c": "x + 0.2 > 0.3",
                               "d": "0.3 >= x + 0.2"})
    assert out["a"].to_list() == [True, False]
    assert out["b"].to_list() == [False, True]
    assert out["c"].to_list() == [False, False]
    assert out["d"].to_list() == [True, True]


def test_decimal_mode_is_exact_and_never_aborts_the_query() -> None:
    dec = pl.Decimal(38, 18)
    df = pl.DataFrame({"a": pl.Series([Decimal("0.1"), Decimal("1e19"), Decimal("5")], dtype=dec),
                       "b": pl.Series([Decimal("0.2"), Decimal("10"), Decimal("0")], dtype=dec)})
    out = formulane.apply(df, {"s": "a + b = 0.3", "m": "a * b", "d": "a / b",
                               "k": "1 / 3 * 3"})
    assert out["s"].to_list() == [True, False, False]
    assert out["m__error"].to_list() == [None, "#NUM!", None]  # beyond Decimal(38, 18)
    assert out["m"].to_list() == [Decimal("0.02"), None, Decimal("0")]
    assert out["d__error"].to_list() == [None, None, "#DIV/0!"]
    assert out["d"][0] == Decimal("0.5")
    assert out["k"][0] == Decimal("0.999999999999999999")


def test_numbers_mode_can_be_forced() -> None:
    df = pl.DataFrame({"a": [0.1], "b": [0.2]})
    out = formulane.apply(df, {"s": "a + b"}, numbers="decimal")
    assert out["s"][0] == Decimal("0.3")


# ------------------------------------------------------------------------------- refusals


def test_refusal_is_typed_and_raised_at_compile_time() -> None:
    program = formulane.compile("t + d", {"t": "DateTime", "d": "Duration"})
    with pytest.raises(Unsupported) as info:
        program.to_polars()
    assert info.value.code == "E213" and info.value.backend == "polars"
    assert info.value.function == "+" and "DateTime" in info.value.reason
    with pytest.raises(Unsupported) as info:
        program.to_sql("duckdb")
    assert info.value.backend == "sql"


def test_a_function_without_forms_refuses_rather_than_falling_back() -> None:
    @builtin("TWICE", sig(NUMBER, returns=NUMBER), doc="Doubles.", examples=[
        "TWICE(2) -> 4", "TWICE(0) -> 0"], category="math")
    def twice(x):  # pragma: no cover - the scalar path is not under test here
        return x * 2

    @builtin("THRICE", sig(NUMBER, returns=NUMBER), doc="Triples.", examples=[
        "THRICE(2) -> 6", "THRICE(0) -> 0"], category="math",
        polars=Refuse("host functions run in Python"), sql=Refuse("no SQL twin"))
    def thrice(x):  # pragma: no cover
        return x * 3

    registry = formulane.default_registry().extend(twice, thrice)
    df = pl.DataFrame({"x": [1.0]})
    with pytest.raises(Unsupported, match="no polars form is declared"):
        formulane.apply(df, {"y": "TWICE(x) + 1"}, registry=registry)
    with pytest.raises(Unsupported) as info:
        formulane.apply(df, {"y": "IF(x > 0, THRICE(x), 0)"}, registry=registry)
    assert info.value.reason == "host functions run in Python"
    with pytest.raises(Unsupported, match="no SQL twin"):
        formulane.sql_select("t", {"y": "THRICE(x)"}, {"x": "Number"}, registry=registry)


def test_apply_rejects_other_frames() -> None:
    with pytest.raises(formulane.CheckError):
        formulane.apply({"x": [1]}, {"y": "x"})


# ----------------------------------------------------------------------------------- SQL


@pytest.mark.parametrize("dialect", DIALECTS)
def test_sql_select_renders_in_every_dialect(dialect: str) -> None:
    import sqlglot

    query = formulane.sql_select("orders", {
        "total": "price * qty", "unit": "price / qty", "tag": 'IF(vip, "vip", "std")',
        # the date family's SQL forms bind values with array lambdas (TRANSFORM), which SQLite
        # lacks (docs/columnar.md); SQLite gets plain date arithmetic
        "late": "due + 30 > DATE(2024, 3, 1)" if _has_sql("DATE") and dialect != "sqlite"
        else "due + 30 > due",
    }, {"price": "Number", "qty": "Number", "vip": "Boolean", "due": "Date"}, dialect=dialect)
    assert query.upper().startswith("SELECT")
    assert '"unit__error"' in query or "`unit__error`" in query
    sqlglot.parse_one(query, read=dialect)  # renders valid SQL for that dialect
    if dialect == "duckdb":
        con = duckdb.connect()
        con.execute("CREATE TABLE orders AS SELECT * FROM (VALUES (9.99, 3, TRUE, "
                    "DATE '2024-02-15'), (1.00, 0, FALSE, DATE '2024-01-01')) "
                    "v(price, qty, vip, due)")
        cursor = con.execute(query)
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, r)) for r in cursor.fetchall()]
        assert rows[0]["total"] == Decimal("29.97") and rows[0]["total__error"] is None
        assert rows[1]["unit__error"] == "#DIV/0!" and rows[1]["unit"] is None


def test_sql_is_simplified_where_no_error_is_possible() -> None:
    schema = {"a": "Number", "b": "Number", "s": "Text"}
    compare = formulane.compile('IF(a > b, "x", s)', schema).to_sql("duckdb")
    assert compare.error is None  # (untyped DECIMAL columns compare through DECIMAL(38, 18))
    typed = formulane.compile('IF(a > b, "x", s)', schema).to_sql(
        "duckdb", column_types={"a": "DECIMAL(18, 2)", "b": "DECIMAL(18, 4)"})
    assert typed.error is None and typed.value_sql.count("CASE") == 1
    divide = formulane.compile("a / b", schema).to_sql("duckdb")
    # NULLIF already blanks the value on #DIV/0! rows: no CASE around the value
    assert "CASE" not in divide.value_sql
    assert divide.error_sql == "CASE WHEN \"b\" = 0 THEN '#DIV/0!' END"
    # (inline: BigQuery has no lateral subqueries; on DuckDB the error, read twice, is bound
    # once and the query holds its text once)
    nested = formulane.compile("IF(a > 0, a / b, 0)", schema).to_sql("bigquery")
    # (the branch's own test merged into the IF's: `kit.cases`, a last nested plain test)
    assert nested.error_sql == "CASE WHEN `a` > 0 AND `b` = 0 THEN '#DIV/0!' END", \
        nested.error_sql
    bound = formulane.compile("IF(a > 0, a / b, 0)", schema).to_sql("duckdb")
    assert bound.select("t").count("#DIV/0!") == 1
    chained = formulane.compile("a / b + b / a + 1 / a", schema).to_sql("bigquery")
    assert chained.error_sql.count("COALESCE") == 1


def _has_polars(name: str) -> bool:
    spec = formulane.default_registry().get(name)
    return spec is not None and callable(declared_form(spec, "polars"))


def _has_sql(name: str) -> bool:
    spec = formulane.default_registry().get(name)
    return spec is not None and callable(declared_form(spec, "sql"))


# ------------------------------------------------------------------------- streaming apply

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

CLI = [sys.executable, "-m", "formulane.columnar.polars.cli_apply"]
FORMULAS = ["-f", "total=price * qty", "-f", "unit=price / qty",
            "-f", 'tag=IF(qty > 3, "big", "small")']


def _generate(path: Path, rows: int) -> None:
    """A Parquet file of random-looking rows (hash strings do not compress), written with the
    streaming engine in small row groups."""
    frame = pl.LazyFrame().select(i=pl.int_range(0, rows)).with_columns(
        price=(pl.col("i").hash(1) % 100000).cast(pl.Float64) / 100,
        qty=(pl.col("i").hash(2) % 9).cast(pl.Float64),
        name=pl.col("i").hash(3).cast(pl.Utf8) + pl.lit("-") + pl.col("i").hash(4).cast(pl.Utf8),
    )
    frame.sink_parquet(path, engine="streaming", row_group_size=20_000)


def test_cli_apply_over_csv_and_ndjson(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("price,qty,name,day\n9.99,3,Ann,2024-01-31\n0.5,0,bob,2024-02-29\n"
                   ",2,,2023-12-31\n", encoding="utf-8")
    schema = tmp_path / "schema.json"
    schema.write_text('{"price": "Number?", "qty": "Number", "name": "Text?", "day": "Date"}')
    out = tmp_path / "out.ndjson"
    proc = subprocess.run([*CLI, str(src), "-f", "unit=(price ?? 0) / qty",
                           "-f", 'who=(name ?? "?") & "!"', "-f", "next=day + 1", "-o", str(out),
                           "--schema", str(schema), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert '"unit": 1' in proc.stdout and "rows: 3" in proc.stderr
    assert "errors in unit: 1" in proc.stderr and "formulane apply: 3 of 3 rows" in proc.stderr
    got = pl.read_ndjson(out)
    assert got["unit__error"].to_list() == [None, "#DIV/0!", None]
    assert got["who"].to_list() == ["Ann!", "bob!", "?!"]
    assert got["next"].to_list() == ["2024-02-01", "2024-03-01", "2024-01-01"]
    bad = subprocess.run([*CLI, str(src), "-f", "x=nope + 1", "-o", str(tmp_path / "o.csv")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "E201" in bad.stderr
    assert not (tmp_path / "o.csv").exists()  # refused before any data was read
    usage = subprocess.run([*CLI, str(src), "-f", "oops", "-o", str(tmp_path / "o.csv")],
                           capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2 and "NAME=EXPR" in usage.stderr


def _cgroup(limit_mb: int) -> str | None:
    """A cgroup-v1 memory cgroup limited to ``limit_mb`` (root only), else None."""
    base = Path("/sys/fs/cgroup/memory")
    if not base.is_dir() or not os.access(base, os.W_OK):
        return None
    path = base / f"formulane-stream-test-{os.getpid()}"
    try:
        path.mkdir(exist_ok=True)
        (path / "memory.limit_in_bytes").write_text(str(limit_mb * 2**20))
        swap = path / "memory.memsw.limit_in_bytes"
        if swap.exists():
            swap.write_text(str(limit_mb * 2**20))
    except OSError:
        return None
    return str(path)


def _measured(cmd: list[str], cgroup: str | None) -> tuple[int, str, float]:
    """Exit status, stderr and peak RSS (MB) of a child process, optionally in a cgroup."""
    def join() -> None:
        if cgroup:
            Path(cgroup, "cgroup.procs").write_text(str(os.getpid()))

    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=join, env={**os.environ, "POLARS_MAX_THREADS": "2"})
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    return code, stderr, usage.ru_maxrss / 1024


@pytest.mark.slow
def test_streaming_apply_runs_in_less_memory_than_its_input(tmp_path: Path) -> None:
    """A Parquet file whose rows take ~255 MB in memory runs through `formulane apply` under
    a 250 MB memory limit (a cgroup, when this process may make one; reading the same file
    eagerly under that limit is killed), and the peak RSS barely moves from 1M to 4M rows."""
    small, big = tmp_path / "small.parquet", tmp_path / "big.parquet"
    _generate(small, 1_000_000)
    _generate(big, 4_000_000)
    in_memory = pl.scan_parquet(big).select(pl.all().len()).collect()  # the file is complete
    assert in_memory.item(0, 0) == 4_000_000
    limit = 250
    cgroup = _cgroup(limit)
    try:
        if cgroup:
            eager = [sys.executable, "-c", "import polars as pl; "
                     f"print(pl.read_parquet({str(big)!r}).estimated_size())"]
            code, _, _ = _measured(eager, cgroup)
            assert code != 0, "the eager read fitted: the limit does not bind"
        code_s, err_s, rss_small = _measured(
            [*CLI, str(small), *FORMULAS, "-o", str(tmp_path / "s.parquet"), "--no-progress"],
            cgroup)
        code_b, err_b, rss_big = _measured(
            [*CLI, str(big), *FORMULAS, "-o", str(tmp_path / "b.parquet"), "--no-progress"],
            cgroup)
    finally:
        if cgroup:
            os.rmdir(cgroup)
    assert code_s == 0 and code_b == 0, err_s + err_b
    assert "rows: 4,000,000" in err_b
    assert rss_big < rss_small * 1.5, (rss_small, rss_big)  # flat in the input size
    if not cgroup:
        assert rss_big < 255 * 1.2
    out = pl.scan_parquet(tmp_path / "b.parquet")
    counts = out.select(pl.len(), pl.col("unit__error").is_not_null().sum()).collect(
        engine="streaming")
    zero_qty = pl.scan_parquet(big).select((pl.col("qty") == 0).sum()).collect().item()
    assert counts.row(0) == (4_000_000, zero_qty)
    assert f"errors in unit: {zero_qty:,}" in err_b


def test_ascii_case_classes_match_python_lower() -> None:
    """Text `=` against an ASCII literal runs as a regex of case classes: each class must hold
    exactly the characters whose Python lower() is that letter."""
    import string

    from formulane.columnar.forms.operators.polars import _EXTRA_LOWER

    for cp in range(0x110000):
        ch = chr(cp)
        low = ch.lower()
        if len(low) == 1 and low in string.ascii_lowercase and ch not in (low, low.upper()):
            assert ch in _EXTRA_LOWER.get(low, ""), (hex(cp), low)
    df = pl.DataFrame({"s": ["alice", "ALICE", "Alice ", "\u212aate", "kate", "ſam", "sam", "a.b",
                             "axb", None]})
    out = formulane.apply(df, {"a": 's = "Alice"', "k": 's = "KATE"', "m": 's <> "SAM"',
                               "d": 's = "a.b"'}, {"s": "Text?"}, profile="excel")
    expected = {name: [formulane.evaluate(src, {"s": v}, schema={"s": "Text?"}, profile="excel")
                       for v in df["s"]]
                for name, src in (("a", 's = "Alice"'), ("k", 's = "KATE"'),
                                  ("m", 's <> "SAM"'), ("d", 's = "a.b"'))}
    for name, values in expected.items():
        assert out[name].to_list() == values, name


@pytest.mark.parametrize("formula", ["v * 2", "IF(v, 1, 2)", 'n & "x"', 'b & "x"', "LEN(n)"])
def test_excel_blanks_coerce_to_the_targets_zero_in_polars_as_in_scalar(formula: str) -> None:
    """A blank Text? multiplies as 0; a blank of any type joins as "" (excel profile): the
    coercions pass the blank on and fill it with the target's zero on every backend."""
    schema = {"v": "Text?", "n": "Number?", "b": "Boolean?"}
    rows = [(None, None, None), ("3", 1.5, True), ("x", 2.0, False)]
    df = pl.DataFrame({"v": [r[0] for r in rows], "n": [r[1] for r in rows],
                       "b": [r[2] for r in rows]},
                      schema={"v": pl.Utf8, "n": pl.Float64, "b": pl.Boolean})
    out = formulane.apply(df, {"r": formula}, schema, profile="excel")
    errors = out["r__error"].to_list() if "r__error" in out.columns else [None] * len(rows)
    for (v, n, b), got, code in zip(rows, out["r"].to_list(), errors):
        want = formulane.evaluate(formula, {"v": v, "n": n, "b": b}, schema=schema,
                                  profile="excel")
        if isinstance(want, formulane.ErrorValue):
            assert code == want.code, (formula, v, n, b)
        else:
            assert code is None and (got == want or Decimal(str(got)) == want), (formula, got, want)
