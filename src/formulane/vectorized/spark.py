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

from ..errors import CheckError
from .forms import ERROR_SUFFIX


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
            .config("spark.driver.memory", "1g")
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
    from .. import compile as compile_formula
    from .frame import to_sql_form

    if not hasattr(frame, "selectExpr"):
        raise CheckError(f"with_formulas takes a Spark DataFrame, got {type(frame).__name__}",
                         code="E209")
    exprs = ["*"]
    for name, source in formulas.items():
        program = compile_formula(source, schema, profile=profile, registry=registry)
        form = to_sql_form(program.root, "spark", numbers)
        exprs.append(f"{form.value_sql} AS `{name}`")
        if form.error is not None:
            exprs.append(f"{form.error_sql} AS `{name}{error_suffix}`")
    return frame.selectExpr(*exprs)
