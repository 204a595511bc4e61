"""A stand-in for the people-facing turn the web page is built on, used by the web tests only while
the Agent does not have it yet: `requirements`, `answers` and `new` in a turn's response,
`respond_traced(..., drop=(facet, value))` and `Agent.examples(n)`.

`provide_contract(monkeypatch, examples)` patches the Agent class where it lacks them and does
nothing once it has them, so the same tests run on the Agent's own. Deliberately crude: it reads
the requirements off the state's constraints, answers only "how much is the Nth one?", and a drop
hides the requirement without changing the state. Remove it once the Agent provides all of it.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from shopcopilot.agent import Agent

FACETS = (
    "item",
    "department",
    "recipient",
    "age",
    "color",
    "size",
    "width",
    "material",
    "brand",
    "style",
    "use",
    "feature",
    "budget",
)
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
PRICE_QUESTION = re.compile(
    r"how much is the (first|second|third|fourth|fifth|\d+)(?:st|nd|rd|th)? one", re.IGNORECASE
)


class UnknownFacet(ValueError):
    pass


def agent_has_contract() -> bool:
    return "drop" in inspect.signature(Agent.respond_traced).parameters and hasattr(
        Agent, "examples"
    )


def provide_contract(monkeypatch: pytest.MonkeyPatch, examples: list[str]) -> None:
    if agent_has_contract():
        return
    original = Agent.respond_traced

    def respond_traced(
        self: Agent,
        session_id: str,
        user_message: str,
        turn: int | None = None,
        top_k: int = 10,
        on_event: Any = None,
        detailed: bool = True,
        drop: tuple[str, str | None] | None = None,
    ) -> Any:
        memory = self.__dict__.setdefault("_contract_memory", {}).setdefault(
            session_id, {"shown": [], "dropped": set()}
        )
        if drop is not None and drop[0] not in FACETS:
            raise UnknownFacet(f"unknown facet {drop[0]!r}")
        result = original(
            self, session_id, "" if drop else user_message, turn, top_k, on_event, detailed
        )
        response = result.response
        if drop is not None:
            memory["dropped"].add(drop)
        asked = PRICE_QUESTION.search(user_message or "") if drop is None else None
        answers = []
        if asked and memory["shown"]:
            word = asked.group(1).lower()
            position = ORDINALS.get(word) or (int(word) if word.isdigit() else 0)
            if 1 <= position <= len(memory["shown"]):
                asin = memory["shown"][position - 1]["parent_asin"]
                product = self.index.store.get(asin)
                text = f"#{position} costs ${product.price:.2f}."
                answers.append(
                    {"positions": [position], "parent_asins": [asin], "fact": "price", "text": text}
                )
                response["message"] = text
                response["recommendations"] = [dict(r) for r in memory["shown"]]
        before = {r["parent_asin"] for r in memory["shown"]}
        for recommendation in response["recommendations"]:
            recommendation["new"] = recommendation["parent_asin"] not in before
        memory["shown"] = [dict(r) for r in response["recommendations"]]
        response["answers"] = answers
        response["requirements"] = [
            r
            for r in _requirements(result.state)
            if (r["facet"], r["value"]) not in memory["dropped"]
            and (r["facet"], None) not in memory["dropped"]
        ]
        return result

    def sample_requests(self: Agent, n: int = 4) -> list[str]:
        return examples[:n]

    monkeypatch.setattr(Agent, "respond_traced", respond_traced)
    monkeypatch.setattr(Agent, "examples", sample_requests, raising=False)


def _requirements(state: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for constraint in state.get("constraints", []):
        attribute = str(getattr(constraint["attribute"], "value", constraint["attribute"]))
        facet = {"category": "department"}.get(attribute, attribute)
        value = str(constraint["value"])
        if constraint["status"] != "active" or facet not in FACETS:
            continue
        if any(r["value"] == value for r in found):
            continue
        label = value.replace("<=", "≤") if facet == "budget" else value
        label = f"size {value}" if facet == "size" else label
        found.append(
            {
                "facet": facet,
                "value": value,
                "label": label,
                "negated": False,
                "turn": constraint["source_turn"],
            }
        )
    for rejected in state.get("rejected", []):
        attribute = getattr(rejected["attribute"], "value", rejected["attribute"])
        found.append(
            {
                "facet": str(attribute),
                "value": str(rejected["value"]),
                "label": f"not {rejected['value']}",
                "negated": True,
                "turn": rejected["source_turn"],
            }
        )
    return found
