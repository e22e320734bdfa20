"""A zoo of tools covering what exporters must handle: optionals, enums, nested models,
constraints, dates, decimals, lists, sets, recursion, unions (plain, discriminated, root),
dicts, tuples, free-form values, secrets, tenant keys, every effect class, a dotted name.

`build_zoo()` returns a fresh registry; `PORTABLE` names the tools every target can express.
"""

from __future__ import annotations

import enum
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from formulane.typed_tools import Secret, TenantKey, Tool, ToolRegistry


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str = Field(description="Street and number.")
    city: str
    postcode: Annotated[str, Field(pattern=r"^[0-9]{5}$")]
    country: str = "FR"


class Customer(BaseModel):
    name: Annotated[str, Field(min_length=1, max_length=80)]
    email: Optional[str] = None
    address: Address
    previous: list[Address] = []


class Node(BaseModel):
    """A tree node."""

    value: int
    children: list["Node"] = []


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    radius: float = Field(gt=0)


class Square(BaseModel):
    kind: Literal["square"] = "square"
    side: float = Field(gt=0)


class Refund(BaseModel):
    model_config = ConfigDict(extra="forbid")
    order_id: str
    amount: Decimal


class CancelOrder(BaseModel):
    model_config = ConfigDict(extra="forbid")
    order_id: str
    reason: str


class Quote(BaseModel):
    total: Decimal
    currency: Literal["EUR", "USD"]
    valid_until: datetime


def build_zoo(store: str | None = None) -> ToolRegistry:
    reg = ToolRegistry(store=store)

    @reg.tool
    def search_orders(query: str, limit: int = 10, cursor: str | None = None,
                      status: Literal["open", "closed"] | None = None) -> list[str]:
        """Search orders by free text.

        Args:
            query: Words to look for.
            limit: How many results to return.
            cursor: Where the previous page ended.
            status: Only orders in this state.
        """
        return []

    @reg.tool
    def paint(color: Color = Field(description="The paint color."), priority: Priority = Priority.LOW,
              shade: Literal["light", "dark"] = "light") -> str:
        """Pick a paint color."""
        return color.value

    @reg.tool
    def create_customer(customer: Customer, notify: bool = True) -> Customer:
        """Create a customer record."""
        return customer

    @reg.tool
    def reserve_slot(day: date, start: time, starts_at: datetime, length: timedelta,
                     seats: Annotated[int, Field(ge=1, le=12, description="Number of seats.")] = 2,
                     note: Annotated[str, Field(max_length=200)] = "") -> bool:
        """Reserve a time slot."""
        return True

    @reg.tool
    def price_quote(amount: Annotated[Decimal, Field(ge=0, decimal_places=2)], currency: Literal["EUR", "USD"],
                    discounts: list[Decimal] = []) -> Quote:
        """Quote a price."""
        return Quote(total=amount, currency=currency, valid_until=datetime(2030, 1, 1))

    @reg.tool
    def tag_items(tags: list[str], ids: Annotated[list[int], Field(min_length=1, max_length=50)],
                  unique_ids: set[int] = set(), pairs: list[tuple[str, int]] | None = None) -> int:
        """Tag several items."""
        return len(ids)

    @reg.tool
    def tree_sum(root: Node) -> int:
        """Sum every value in a tree."""
        return root.value + sum(tree_sum(c) for c in root.children)

    @reg.tool
    def measure(shape: Annotated[Union[Circle, Square], Field(discriminator="kind")],
                scale: int | float = 1) -> float:
        """Area of a shape."""
        return 0.0

    @reg.tool
    def set_labels(labels: dict[str, str], counts: dict[str, int] = {},
                   addresses: dict[str, Address] | None = None) -> int:
        """Set labels on a record."""
        return len(labels)

    @reg.tool
    def store_blob(name: str, payload: bytes, meta: dict[str, Any] = {}, extra: Any = None) -> str:
        """Store an opaque blob."""
        return name

    @reg.tool(name="billing.refund", effect="write", scopes=["billing:write"], version="2")
    def refund(tenant_id: Annotated[str, TenantKey], order_id: str, amount: Decimal,
               api_key: Annotated[str, Secret], password: SecretStr | None = None) -> dict[str, str]:
        """Refund an order.

        Args:
            tenant_id: The tenant that owns the order.
            order_id: The order to refund.
            amount: How much to refund.
            api_key: Payment provider key.
            password: Optional second factor.
        """
        return {"status": "refunded"}

    @reg.tool(effect="propose", title="Plan a change")
    def plan_change(description: str) -> dict[str, list[str]]:
        """Propose a change without applying it."""
        return {"steps": [description]}

    @reg.tool
    def ping() -> None:
        """Check the service is alive."""

    reg.add(Tool(name="order_action", fn=lambda action: action.order_id,
                 input_model=Union[Refund, CancelOrder], output_model=str,
                 description="Refund or cancel an order."))
    return reg


#: Tools every target can express (no recursion, tuples or free-form values).
PORTABLE = [
    "search_orders", "paint", "create_customer", "reserve_slot", "price_quote", "measure",
    "set_labels", "billing.refund", "plan_change", "ping", "order_action",
]
