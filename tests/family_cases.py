"""The function families' formulas over columns, as one list for the SQL engines' tests.

tests/functions/test_{math,text,excelfns,dates,lists}_backends.py each hold rows (month ends,
leap days, ties, huge and tiny numbers, blanks...) and formulas run on DuckDB and polars;
`family_cases` gathers them so that another engine (SQLite, PostgreSQL) runs the same
formulas over the same rows and compares them with the scalar engine the same way.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from functions import _engines as E


@dataclass(frozen=True)
class FamilyCase:
    module: str  # "test_math_backends"...
    formula: str
    schema: dict[str, str]
    rows: list[dict[str, Any]]
    profile: str
    registry: Any

    @property
    def id(self) -> str:
        return f"{self.module[5:-9]}: {self.formula}"


def family_cases() -> list[FamilyCase]:
    cases = []
    for name in ("test_math_backends", "test_text_backends", "test_excelfns_backends"):
        module = importlib.import_module(f"functions.{name}")
        for case in module.CASES:
            schema, rows = module.DATASETS[case[1]]
            cases.append(FamilyCase(name, case[0], schema, rows, module.PROFILE,
                                    getattr(module, "REGISTRY", None)))
    for name in ("test_dates_backends", "test_lists_backends"):
        module = importlib.import_module(f"functions.{name}")
        registry = getattr(module, "_registry", None)
        for table in module.TABLES:
            if not any(layout.startswith("duckdb")
                       for layout in getattr(table, "layouts", ("duckdb",))):
                continue  # a table only polars can lay out (zoned columns)
            rows = [dict(zip(table.schema, row)) for row in table.rows]
            for formula in table.formulas:
                if not isinstance(formula, str) and "sql" in formula.refuse:
                    continue  # refused on every dialect (its own test says so)
                cases.append(FamilyCase(name, E.source_of(formula), table.schema, rows,
                                        table.profile, registry(table) if registry else None))
    return cases
