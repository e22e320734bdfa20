"""Polars and SQL forms of the operators and of the logic functions (private).

Layout: `polars` (the polars forms, which read the polars compiler's numeric policy), `sql`
(the SQL forms) and `sql_arith` (the SQL builders the operators and math forms share, with
the decimal + - * the SQL compiler delegates to). Each mirrors its scalar twin in `functions/operators.py` and
`functions/logic.py`: the same order of evaluation and the same error values; lazy forms (IF,
IFERROR, AND...) select value and error with the condition, as the compilers' docs say.
"""
