"""Customer pricing formulas in a small web app (FastAPI).

Each customer stores a pricing formula (checked when saved, against the order schema); a quote
evaluates it on an order. Errors come back as the diagnostic in plain words for the customer
(`audience="end_user"`) plus the stable code for the programmer.

Run: ``uvicorn examples.pricing_app:app`` (tested in-process with FastAPI's TestClient).
"""

from decimal import Decimal

import pydantic
from fastapi import FastAPI, HTTPException

import formulane


class Order(pydantic.BaseModel):
    price: Decimal
    qty: int
    country: str
    coupon: str | None = None


class Rule(pydantic.BaseModel):
    formula: str = pydantic.Field(max_length=2000)


app = FastAPI(title="pricing")
_rules: dict[str, formulane.Program] = {}


def _problem(exc: formulane.FormulaError, source: str) -> HTTPException:
    return HTTPException(422, {"code": exc.code,
                               "message": exc.render(source, audience="end_user")})


@app.put("/customers/{customer}/rule")
def save_rule(customer: str, rule: Rule) -> dict[str, str]:
    try:
        program = formulane.compile(rule.formula, Order)  # the schema is the pydantic model
    except formulane.FormulaError as exc:
        raise _problem(exc, rule.formula) from None
    if program.type.kind != "Number":
        raise HTTPException(422, {"code": "E202", "message": "A price formula must give a number."})
    _rules[customer] = program
    return {"type": str(program.type)}


@app.post("/customers/{customer}/quote")
def quote(customer: str, order: Order) -> dict[str, str]:
    program = _rules.get(customer)
    if program is None:
        raise HTTPException(404, {"code": "E703", "message": "No pricing rule for this customer."})
    result = program.evaluate(order)  # the model instance itself: fields read, nothing called
    if isinstance(result, formulane.ErrorValue):
        return {"error": result.code}
    return {"total": str(result)}
