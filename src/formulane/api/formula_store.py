"""(built next)"""


class FormulaStore:
    def __init__(self, engine, *, max_cases: int) -> None:
        self.engine = engine
