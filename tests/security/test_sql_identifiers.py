"""`formulane.sql_select` takes its table as an identifier, never as SQL (issue 15, item 5).

A red-team run passed ``read_csv_auto('/etc/passwd')`` as the table and got the file's rows
back from DuckDB; ``"secrets --"`` silently became ``FROM secrets``. Each row of `CASES` is one
table argument and what must happen on a real DuckDB database holding a ``secrets`` table:

- ``rows``: the query runs and reads exactly the named table (its marker row);
- ``missing``: the argument is quoted as one identifier, so DuckDB reports a missing table
  (CatalogException): nothing else runs, nothing is read;
- ``refused``: `sql_select` raises CheckError E209 before any SQL exists.

Whatever the outcome, the ``secrets`` table is never read and still exists afterwards.
"""

from __future__ import annotations

from typing import Any

import pytest

import formulane
from formulane import CheckError

duckdb = pytest.importorskip("duckdb")
exp = pytest.importorskip("sqlglot").exp

SCHEMA = {"x": "Number"}


def _table(**parts: Any) -> Any:
    return exp.Table(**parts)


#: (case id, table argument, outcome, marker expected for ``rows``)
CASES: list[tuple[str, Any, str, str | None]] = [
    ("plain name", "orders", "rows", "orders"),
    ("schema-qualified tuple", ("main", "orders"), "rows", "orders"),
    ("catalog-qualified tuple", ("memory", "main", "orders"), "rows", "orders"),
    ("name with a space and comment marker", "secrets --", "rows", "secrets --"),
    ("name that is a dotted path is one identifier", "main.orders", "missing", None),
    ("table function", "read_csv_auto('/etc/passwd')", "missing", None),
    ("block comment swallows the rest", "secrets /* x", "missing", None),
    ("stacked statement", "orders; DROP TABLE secrets", "missing", None),
    ("union injection through a quote", 'orders" UNION SELECT 1, \'x\' FROM secrets --',
     "missing", None),
    ("backtick injection", "orders` UNION SELECT * FROM secrets --", "missing", None),
    ("subquery text", "(SELECT * FROM secrets)", "missing", None),
    ("caller-built table", _table(this=exp.to_identifier("orders")), "rows", "orders"),
    ("caller-built qualified table",
     _table(this=exp.to_identifier("orders"), db=exp.to_identifier("main")), "rows", "orders"),
    ("caller-built table function",
     _table(this=exp.Anonymous(this="read_csv_auto",
                               expressions=[exp.Literal.string("/etc/passwd")])),
     "refused", None),
    ("caller-built table with a join",
     _table(this=exp.to_identifier("orders"),
            joins=[exp.Join(this=_table(this=exp.to_identifier("secrets")))]),
     "refused", None),
    ("empty name", "", "refused", None),
    ("caller-built table with a subquery as its name",
     _table(this=exp.Subquery(this=exp.select("*").from_("secrets"))), "refused", None),
    ("NUL in a name", "orders\x00", "refused", None),
    ("overlong name", "t" * 5000, "refused", None),
    ("not text", 42, "refused", None),
    ("four parts", ("a", "b", "c", "d"), "refused", None),
    ("a list is not a name", ["orders"], "refused", None),
    ("tuple with a non-text part", ("main", 7), "refused", None),
]


@pytest.fixture()
def con():
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (x DECIMAL(18, 4), marker VARCHAR)")
    con.execute("INSERT INTO orders VALUES (2, 'orders')")
    con.execute("CREATE TABLE secrets (x DECIMAL(18, 4), marker VARCHAR)")
    con.execute("INSERT INTO secrets VALUES (99, 'SECRET')")
    con.execute('CREATE TABLE "secrets --" (x DECIMAL(18, 4), marker VARCHAR)')
    con.execute("INSERT INTO \"secrets --\" VALUES (3, 'secrets --')")
    yield con
    con.close()


@pytest.mark.parametrize("case_id,table,outcome,marker", CASES, ids=[c[0] for c in CASES])
def test_table_argument_is_an_identifier(con, case_id: str, table: Any, outcome: str,
                                         marker: str | None) -> None:
    if outcome == "refused":
        with pytest.raises(CheckError) as info:
            formulane.sql_select(table, {"y": "x * 2"}, SCHEMA)
        assert info.value.code == "E209"
        return
    query = formulane.sql_select(table, {"y": "x * 2"}, SCHEMA)
    if outcome == "rows":
        rows = con.execute(query).fetchall()
        assert [r[1] for r in rows] == [marker]
        assert all("SECRET" not in map(str, r) for r in rows)
    else:
        with pytest.raises(duckdb.CatalogException):
            con.execute(query)
    assert con.execute("SELECT marker FROM secrets").fetchall() == [("SECRET",)]


@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "spark", "trino", "bigquery",
                                     "snowflake", "sqlite"])
def test_every_dialect_quotes_the_name_as_one_identifier(dialect: str) -> None:
    """The rendered FROM clause is the name quoted: nothing of it reads as SQL."""
    name = "t\" UNION SELECT 1 --"
    query = formulane.sql_select(name, {"y": "x * 2"}, SCHEMA, dialect=dialect)
    quote = "`" if dialect in ("spark", "bigquery") else '"'
    doubled = name.replace(quote, quote * 2) if dialect != "bigquery" else name
    assert query.endswith(f"FROM {quote}{doubled}{quote}") or \
        f"FROM {quote}{doubled}{quote} " in query


def test_a_table_column_named_like_a_binding_is_never_read_in_its_place(con) -> None:
    """The query's own bindings (``"_fl1"."_f1"``...) are read qualified: a table column of
    the same name changes nothing."""
    formula = "ROUND(ROUND(x * 1.2, 2) * 1.1, 2)"
    decoys = ", ".join(f"_f{i} INTEGER" for i in range(1, 30)) + ", _fl1 INTEGER, _t INTEGER"
    con.execute(f"CREATE TABLE decoy (x DECIMAL(18, 4), {decoys})")
    con.execute(f"INSERT INTO decoy VALUES (2{', 999' * 31})")
    query = formulane.sql_select("decoy", {"out": formula}, SCHEMA)
    assert "LATERAL" in query
    row = con.execute(query).fetchall()[0]
    assert str(row[-2]) == str(formulane.evaluate(formula, {"x": 2}))
