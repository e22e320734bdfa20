"""The SQL backend: `compiler` (checked IR -> sqlglot expressions, on the shared walk), `kit`
(the `SqlColumn` and builders its forms use), `let` (binding an expression once through
lateral subqueries) and `spark` (running on Spark). Importing this package imports nothing;
its modules import sqlglot."""
