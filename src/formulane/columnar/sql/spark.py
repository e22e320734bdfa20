"""Running formulas on Apache Spark: the SQL backend rendered for the ``spark`` dialect.

Spark needs no separate backend: `Program.to_sql("spark")` / `formulane.sql_select(...,
dialect="spark")` give Spark SQL (value and error-code columns), and `with_formulas` adds them
to a Spark DataFrame with ``selectExpr``, so the same checked formula runs on a laptop with
polars and on a cluster with Spark. `local_session` starts a small local-mode session for tests
and examples (pyspark from PyPI, Java 17).

Numbers on Spark: DECIMAL columns use Spark's decimal arithmetic (+, - and * are exact while
the result fits DECIMAL(38); Spark trims the scale of very wide products to 6 places), division
and powers compute in DOUBLE, as on every SQL dialect (see docs/columnar.md).
"""

from __future__ import annotations

from typing import Any, Mapping

from ...errors import CheckError
from ..names import ERROR_SUFFIX


def local_session(app_name: str = "formulane", cores: int = 2) -> Any:
    """A local-mode SparkSession sized for tests: no UI, few shuffle partitions, UTC."""
    import os

    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only
    session = (SparkSession.builder.master(f"local[{cores}]").appName(app_name)
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", str(cores))
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.memory", "2g")  # a family table's lambdas need more than 1g
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def with_formulas(frame: Any, formulas: Mapping[str, str], schema: Any, *,
                  profile: str = "strict", numbers: str = "decimal",
                  error_suffix: str = ERROR_SUFFIX, registry: Any = None) -> Any:
    """A Spark DataFrame with one column per formula (and ``<name>__error`` where the formula
    may produce an error value). Refuses at compile time (`Unsupported`) what Spark SQL cannot
    express faithfully."""
    from ...interpreter.cache import compile_cached as compile_formula
    from ...limits import DEFAULT_LIMITS
    from ..names import check_output_names
    from .select import to_sql_forms

    if not hasattr(frame, "selectExpr"):
        raise CheckError(f"with_formulas takes a Spark DataFrame, got {type(frame).__name__}",
                         code="E209")
    check_output_names(formulas, error_suffix)
    programs = [(name, compile_formula(source, schema, profile=profile, registry=registry))
                for name, source in formulas.items()]
    forms = to_sql_forms([p.root for _, p in programs], "spark", numbers, DEFAULT_LIMITS,
                         taken=[*frame.columns, *formulas], qualify=False)
    # what the formulas read twice is computed once: a column per binding, level by level
    # (the DataFrame form of the lateral joins `sql_select` writes), dropped at the end
    bindings = forms[0].bindings if forms else ()
    helpers = [name for name, _, _ in bindings]
    for level in sorted({lv for _, _, lv in bindings}):
        frame = frame.selectExpr("*", *[f"{e.sql('spark')} AS `{name}`"
                                        for name, e, lv in bindings if lv == level])
    exprs = ["*"]
    for (name, _), form in zip(programs, forms):
        exprs.append(f"{form.value_sql} AS `{name.replace('`', '``')}`")
        if form.error is not None:
            exprs.append(f"{form.error_sql} AS `{(name + error_suffix).replace('`', '``')}`")
    out = frame.selectExpr(*exprs)
    return out.drop(*helpers) if helpers else out
