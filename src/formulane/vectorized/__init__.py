"""Columnar and SQL backends for checked programs (`Program.to_polars`, `Program.to_sql`,
`formulane.apply`, `formulane.sql_select`). Both refuse at compile time, with a typed reason,
what they cannot express faithfully; neither runs Python per row."""
