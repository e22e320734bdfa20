"""The columnar backends' home (issue 10): what turns a checked program into polars
expressions or SQL, and the forms every function has there.

Contract: importing this package imports neither polars nor sqlglot; `forms` answers which form
a function has on a backend (`forms.form_for`), the backends' compilers call it.
"""
