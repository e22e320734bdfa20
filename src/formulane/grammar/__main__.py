"""``python -m formulane.grammar``: rewrite formula_table.json from formula.lark (see `table`)."""

from .table import main

main()
