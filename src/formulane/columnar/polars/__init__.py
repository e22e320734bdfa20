"""The polars backend: `compiler` (checked IR -> polars expressions, on the shared walk) and
`kit` (the `Column` and expression builders its forms use). Importing this package imports
nothing; its modules import polars."""
