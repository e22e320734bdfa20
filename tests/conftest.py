"""Shared test configuration: Hypothesis profiles, the `slow` marker, local Spark.

Every run draws the same examples (``derandomize``), so CI on a clean checkout is repeatable
and a red run is a real regression, not an unlucky draw. ``FORMULANE_EXPLORE=1`` draws new
examples (more of them) for hunting bugs locally; what it finds becomes a fixed case.
"""

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "fixed", max_examples=100, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore", max_examples=1000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("explore" if os.environ.get("FORMULANE_EXPLORE") == "1" else "fixed")


# ------------------------------------------------------------------------ the `slow` marker
# `python -m pytest -m "not slow"` is the fast local loop (the scalar core, the checker, the
# golden cases on the scalar engine, the tools); plain `python -m pytest` (and CI) runs all.
# Whole modules whose cost is in the backends' matrices, real engines or sandboxes are slow
# here, in one place; a single test elsewhere uses `@pytest.mark.slow`.
SLOW_PATHS = (
    "test_backends.py",           # 4 backends x every golden case, and Spark
    "test_differential.py",       # Hypothesis across scalar, polars and DuckDB
    "test_differential_backends.py",  # every golden case and example x 5 backends x 3 layouts
    "test_adversarial_sweep.py",
    "functions/test_dates_backends.py", "functions/test_lists_backends.py",
    "functions/test_math_backends.py", "functions/test_text_backends.py",
    "escalation/",                # real sandboxes (bubblewrap, processes)
    "browser/",                   # Chromium
    "api/",                       # a real uvicorn server, schemathesis, PostgreSQL
    "security/test_sandbox_",     # real sandboxes
    "security/test_fuzz.py",
    "docs/",                      # mkdocs build --strict
    "examples/",
    "test_typing.py",             # mypy --strict and pyright over the package (minutes)
)


def pytest_collection_modifyitems(config, items):  # noqa: ANN001 - pytest's hook signature
    import pytest

    slow = pytest.mark.slow
    for item in items:
        path = str(item.path).replace(os.sep, "/")
        if any(("/tests/" + p) in path for p in SLOW_PATHS):
            item.add_marker(slow)


# ------------------------------------------------------------------------------- local Spark


def spark_missing() -> str | None:
    """Why the Spark tests cannot run here, or None (pyspark and a Java runtime present)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'formulane[spark]')"
    java = shutil.which("java") or (os.environ.get("JAVA_HOME") and
                                    Path(os.environ["JAVA_HOME"], "bin", "java").exists())
    if not java:
        return "no Java runtime (pyspark needs Java 17: set JAVA_HOME or put java on PATH)"
    return None


@pytest.fixture(scope="session")
def spark():  # noqa: ANN201 - a pyspark SparkSession (pyspark is optional)
    """One local Spark session for every test that runs SQL on Spark (starting one takes
    seconds); skipped, with the reason, when pyspark or Java is missing."""
    reason = spark_missing()
    if reason:
        pytest.skip(reason)
    from formulane.columnar.sql.spark import local_session

    session = local_session()
    yield session
    session.stop()


# ---------------------------------------------------------------------------- local PostgreSQL


@pytest.fixture
def postgres():  # noqa: ANN201 - a psycopg connection (psycopg is optional)
    """A fresh autocommit connection to ``FORMULANE_TEST_POSTGRES_URL`` (CI starts a server;
    README "Tests"), closed after the test, so its temporary tables go with it; skipped, with
    the reason, when the variable is unset or psycopg is missing."""
    url = os.environ.get("FORMULANE_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("FORMULANE_TEST_POSTGRES_URL is not set")
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(url, autocommit=True) as connection:
        yield connection
