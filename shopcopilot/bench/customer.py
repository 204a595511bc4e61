"""The simulated customer: the pluggable half of a benchmark session.

The runner owns the session loop (turns, scoring, the hit rule); a Customer owns
everything the shopper says. One Customer object lives for one session and may keep
state (what it has disclosed, whether a one-off reply was used).

    class Customer(Protocol):
        def first_message(self) -> str
            The opening message (turn 1).
        def reply(self, response: Mapping[str, Any], turn: int) -> str
            The next message after the agent's `response` at `turn` did not hit.
            `response` is the agent's dict after sanitising: "message" (str),
            "ask_attribute" (whatever the agent sent, may be None or an unknown name),
            "recommendations" (list as sent). A response that raised, timed out or was
            malformed arrives as {"message": "", "ask_attribute": None, "recommendations": []}.
        def override_turn(self) -> int | None
            The turn whose message is the override (intent_override sessions), else None.
            Hits before that message has been sent do not count.
        def override_message(self) -> str
            The override message; called once, when it is sent (the customer may mark
            the new value as disclosed).

Customers are built with `make_customer(protocol, session, product, seed, record, lookup)`:
"official" is the organiser's protocol (shopcopilot.bench.official); "natural" is
shopcopilot.bench.natural.NaturalCustomer(session, product, seed, lookup=...);
"natural-reactive" is the same shopper reacting to the products shown ("the second one is
close but too expensive", "none of these, I need leather"; reactions=True).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..catalog.product import Product
from .sessions_io import Session

PROTOCOLS = ("official", "natural", "natural-reactive")
NATURAL_PROTOCOLS = frozenset({"natural", "natural-reactive"})  # they read the shown products
# What `bench-real --protocol both` runs (the pair every results table reports).
BOTH = ("official", "natural")


class Customer(Protocol):
    def first_message(self) -> str: ...

    def reply(self, response: Mapping[str, Any], turn: int) -> str: ...

    def override_turn(self) -> int | None: ...

    def override_message(self) -> str: ...


def make_customer(
    protocol: str,
    session: Session,
    product: Product,
    seed: int = 0,
    record: Mapping[str, Any] | None = None,
    lookup: Callable[[str], Product | None] | None = None,
) -> Customer:
    """A fresh customer for one session.

    `record` is the target's raw catalog line: the official protocol reads raw values
    (a price printed as stored, untrimmed text), so the runner passes it; without it
    the normalised `product.to_record()` stands in. `lookup` (asin -> Product) lets the
    natural customer read the items it is shown.
    """
    if protocol == "official":
        from .official import OfficialCustomer

        return OfficialCustomer.for_session(
            session, record if record is not None else product.to_record()
        )
    if protocol in NATURAL_PROTOCOLS:
        from .natural import NaturalCustomer  # written separately; imported only when asked for

        reactive = protocol == "natural-reactive"
        return NaturalCustomer(session, product, seed, lookup=lookup, reactions=reactive)
    raise ValueError(f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}")
