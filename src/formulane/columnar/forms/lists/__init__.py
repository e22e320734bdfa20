"""Polars and SQL forms of the list, lookup and statistics functions (named by the form tables,
`polars_table`/`sql_table`).

Each ``polars_<name>`` / ``sql_<name>`` mirrors its scalar twin (same errors, in the same order;
blanks skipped where the scalar skips them) and receives a `FormCall` first (`columnar.call`):
the IR call being translated, whose argument types and constant arguments decide the form (a
``many(NUMBER)`` argument may be a number or a list; a criteria text is translated when it is a
literal). A form that cannot be faithful for this call raises `Unsupported` through
``call.refuse(reason)``, so the refusal happens at compile time, with the reason, never a wrong
answer.

Polars: per-row lists are ``List`` columns; work inside a list runs in ``list.eval``/
``list.agg``, which see only the list's elements, so a per-row scalar that an item must meet
(XLOOKUP's value, a criteria column) is appended to the list and read back as its last item
(`_pl_with`), and lists walked in step (SUMPRODUCT) are concatenated and cut back into equal
slices (`_pl_zip`); both work for every dtype, decimals included.
SQL: DuckDB list functions (``list_filter``, ``list_transform`` with the element index as a
second lambda parameter, ``list_sort``...); they are written with their DuckDB names, so a
dialect without them fails loudly rather than answering differently (Spark's index lambdas
count from 0). Lists are 1-based in SQL, 0-based in polars.

Numbers: Float64 columns compute in float64 with the backends' float-policy tolerance; "no
spread" (STDEV of equal numbers, CORREL of a constant list) is decided exactly by comparing the
minimum and the maximum, never by a rounded variance, so the error values match the scalar's.
Decimal columns: sums, counts, extremes, sorting and lookups stay exact; moments, roots,
logarithms and products of two lists in SQL compute in DOUBLE (DuckDB's DECIMAL(38, 18) product
overflows from 100 on), as division does in the core.

Refused, with the reason: binary searches (XLOOKUP/XMATCH search modes 2 and -2, approximate
MATCH, vector LOOKUP: on unsorted data their answer depends on the probe order); criteria texts
that are not literals (they are parsed when compiling; a literal ``">=" & 2`` is folded);
numeric criteria over text items (Excel also reads numbers written as text); SEQUENCE whose size
is read from the data (the list limit is decided when compiling); REDUCE and two-list MAP in
polars (list.eval binds one element); Duration totals and, in SQL, Duration ordering.

Decimal SQL over lists whose items may be DOUBLEs (a column whose type the caller did not give):
each form reads the items as their shortest text shows, a row holding one past 1e20 is #NUM!,
and its sums never abort the query (`_sql_decimal`).

Layout: `_base` (the polars and SQL tools), `_sql_decimal` (the SQL forms' decimal reading),
then one module per group of functions: `aggregates`, `criteria`, `arrays`, `lookup`,
`statistics`.
"""
