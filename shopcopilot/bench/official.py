"""The official (TechJam 2026 Track 4) customer and scorer, rule by rule.

Every rule reads the target's RAW catalog record, because the official evaluator does:
a price is printed exactly as stored ("29.99", "25.0", even a stray string), list items
are turned into text with str(). See docs/benchmark-protocol.md in the shared docs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .sessions_io import Session

MAX_TURNS = 10
TOP_K = 10
CONSTRAINT_LIMIT = 180
ALLOWED_ATTRIBUTES = frozenset(
    {
        "category",
        "material",
        "color",
        "size",
        "style",
        "brand",
        "budget",
        "feature",
        "use_case",
        "other",
    }
)
MATERIAL_WORDS = (
    "cotton",
    "polyester",
    "nylon",
    "leather",
    "wool",
    "spandex",
    "silk",
    "rayon",
    "fabric",
)
COLOR_WORDS = (
    "black",
    "white",
    "blue",
    "red",
    "pink",
    "green",
    "brown",
    "gray",
    "grey",
    "purple",
    "yellow",
    "orange",
)
OVERRIDE_TURNS = (3, 4)

# Searchable text is built from these fields, in this order.
_TEXT_FIELDS = ("title", "features", "details", "description", "categories", "store")
_MATERIAL_RE = re.compile(r"\b(" + "|".join(MATERIAL_WORDS) + r")\b", re.IGNORECASE)
_COLOR_RE = re.compile(r"\b(" + "|".join(COLOR_WORDS) + r")\b", re.IGNORECASE)
_WHITESPACE_RUN = re.compile(r"\s+")
_EDGE_CHARS = " -;,.\t\n"
_BUDGET_NUMBER = re.compile(r"(?:\$|<=|under)\s*\d")
_NON_CATEGORY_PARTS = {"clothing", "clothing shoes & jewelry", "clothing, shoes & jewelry"}

# Ordered: the first class whose words occur in the lower-cased constraint wins.
_CLASS_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("material", MATERIAL_WORDS),
    ("color", ("color", "black", "white", "blue", "red", "pink", "green")),
    ("size", ("size", "sizing", "width", "wide", "narrow")),
    ("style", ("department", "style", "fit", "sleeve", "neck")),
    ("use_case", ("hiking", "running", "gym", "winter", "outdoor", "work")),
)

EMPTY_RESPONSE: dict[str, Any] = {"message": "", "ask_attribute": None, "recommendations": []}
GENERIC_REPLY = "Those options are not quite right yet. Ask me about one specific attribute."
DEFAULT_OVERRIDE_MESSAGE = "Actually, please ignore my earlier preference."


@dataclass(frozen=True, slots=True)
class IntentCard:
    """What the customer wants: two hard constraints, up to two soft preferences."""

    target_category: str
    hard_constraints: tuple[str, ...]
    soft_preferences: tuple[str, ...]

    @classmethod
    def from_dict(cls, card: Mapping[str, Any]) -> IntentCard:
        """A precomputed card from a session file (values coerced to text as the evaluator does)."""
        return cls(
            target_category=str(card.get("target_category", "")),
            hard_constraints=tuple(str(value) for value in card.get("hard_constraints", [])),
            soft_preferences=tuple(str(value) for value in card.get("soft_preferences", [])),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "target_category": self.target_category,
            "hard_constraints": list(self.hard_constraints),
            "soft_preferences": list(self.soft_preferences),
        }


# ---- the intent card ---------------------------------------------------------------


def clean_constraint(text: str, limit: int = CONSTRAINT_LIMIT) -> str:
    """Collapse whitespace, trim edge punctuation, cut to `limit`, right-strip."""
    return _WHITESPACE_RUN.sub(" ", text).strip(_EDGE_CHARS)[:limit].rstrip()


def searchable_text(record: Mapping[str, Any]) -> str:
    """Title, features, details as "key value", description, categories, store."""
    parts: list[str] = []
    for name in _TEXT_FIELDS:
        value = record.get(name)
        if isinstance(value, dict):
            parts.extend(f"{key} {item}" for key, item in value.items())
        elif isinstance(value, list):
            parts.extend(str(item) for item in value)
        elif value is not None:
            parts.append(str(value))
    return " ".join(parts).strip()


def _as_constraints(value: Any) -> list[str]:
    """Features or details as constraint strings; empty items and empty detail values are
    skipped."""
    if isinstance(value, dict):
        return [f"{key}: {item}" for key, item in value.items() if item not in (None, "", [])]
    if isinstance(value, list):
        return [str(item) for item in value if item not in (None, "")]
    return [] if value in (None, "") else [str(value)]


def constraint_candidates(record: Mapping[str, Any]) -> list[str]:
    """Raw candidates before cleaning: material word, color, features, details, budget."""
    candidates = _as_constraints(record.get("features")) + _as_constraints(record.get("details"))
    text = searchable_text(record)
    material = _MATERIAL_RE.search(text)
    color = _COLOR_RE.search(text)
    if material:
        candidates.insert(0, material.group(1).lower())
    if color:
        # list.insert: with an empty list this lands first, as in the evaluator.
        candidates.insert(1, f"color: {color.group(1).lower()}")
    price = record.get("price")
    if price not in (None, ""):
        candidates.append(f"budget around ${price}")
    return candidates


def derive_intent_card(record: Mapping[str, Any]) -> IntentCard:
    """The official intent card of a target product."""
    title = clean_constraint(str(record.get("title") or "product"))
    cleaned = (clean_constraint(candidate) for candidate in constraint_candidates(record))
    unique = list(dict.fromkeys(text for text in cleaned if text)) or [title]
    return IntentCard(
        target_category=title,
        hard_constraints=tuple(unique[:2]),
        soft_preferences=tuple(unique[2:4] or unique[:1]),
    )


# ---- behaviour, category, classes ------------------------------------------------------


def override_turn_for(sample_id: str, scenario_type: str) -> int:
    """The evaluator's seeded pick of the override turn."""
    return random.Random(f"{sample_id}\0{scenario_type}").choice(list(OVERRIDE_TURNS))


def derive_behavior(sample_id: str, scenario_type: str, card: IntentCard) -> dict[str, Any]:
    behavior: dict[str, Any] = {"scenario_type": scenario_type}
    if scenario_type == "intent_override":
        old_value = (
            card.soft_preferences[-1] if card.soft_preferences else "I prefer a different style."
        )
        new_value = (
            card.hard_constraints[0]
            if card.hard_constraints
            else "Please prioritize the target requirements."
        )
        behavior["override"] = {
            "turn": override_turn_for(sample_id, scenario_type),
            "old_value": old_value,
            "new_value": new_value,
            "message": f"Actually, ignore my earlier preference. What I need is: {new_value}.",
        }
    return behavior


def category_phrase(categories: Iterable[Any]) -> str:
    """The opening's product phrase: the last two comma parts that are not generic."""
    parts = [
        part.strip()
        for entry in categories
        for part in str(entry).split(",")
        if part.strip() and part.strip().lower() not in _NON_CATEGORY_PARTS
    ]
    return " ".join(parts[-2:]) if parts else "clothing item"


def classify_constraint(text: str) -> str:
    """Which ask_attribute a constraint string answers."""
    lowered = text.lower()
    if "budget" in lowered or _BUDGET_NUMBER.search(lowered):
        return "budget"
    for name, words in _CLASS_WORDS:
        if any(word in lowered for word in words):
            return name
    return "feature"


# ---- scoring ---------------------------------------------------------------------------


def score_recommendations(
    payload: Any, catalog_ids: set[str] | frozenset[str], limit: int = TOP_K
) -> list[str]:
    """Ids that count: stripped, non-empty, first occurrence only, in the catalog, first `limit`."""
    if not isinstance(payload, list):
        return []
    ranked: list[str] = []
    for item in payload:
        value = item.get("parent_asin", "") if isinstance(item, dict) else item
        asin = str(value).strip()
        if asin and asin not in ranked and asin in catalog_ids:
            ranked.append(asin)
            if len(ranked) == limit:
                break
    return ranked


# ---- the customer ------------------------------------------------------------------------


@dataclass(slots=True)
class OfficialCustomer:
    """The organiser's scripted shopper: repeats catalog strings when asked the right attribute."""

    scenario_type: str
    card: IntentCard
    behavior: dict[str, Any]
    category: str
    disclosed: set[str] = field(default_factory=set)
    boundary_used: bool = False

    @classmethod
    def for_session(cls, session: Session, record: Mapping[str, Any]) -> OfficialCustomer:
        """Precomputed card/behaviour from the session win; missing ones are derived."""
        card = (
            IntentCard.from_dict(session.intent_card)
            if session.intent_card is not None
            else derive_intent_card(record)
        )
        behavior = session.behavior
        if behavior is None:
            behavior = derive_behavior(session.sample_id, session.scenario_type, card)
        categories = record.get("categories") or []
        return cls(session.scenario_type, card, behavior, category_phrase(categories))

    def _override(self) -> Mapping[str, Any]:
        return self.behavior.get("override") or {}

    def first_message(self) -> str:
        if self.scenario_type == "buying" and self.card.hard_constraints:
            requirement = self.card.hard_constraints[0]
            self.disclosed.add(requirement)
            return f"I'm looking for {self.category}. A key requirement is: {requirement}."
        if self.scenario_type == "intent_override":
            return f"I'm looking for {self.category}. {self._override()['old_value']}"
        return f"I'm looking for {self.category}, but I'm still exploring."

    def reply(self, response: Mapping[str, Any], turn: int) -> str:
        asked = response.get("ask_attribute")
        attribute = asked if isinstance(asked, str) else None
        if self.scenario_type == "boundary" and not self.boundary_used and attribute:
            self.boundary_used = True
            return f"I don't have a preference for {attribute}; please use your judgment."
        if not attribute:
            return GENERIC_REPLY
        if attribute not in ALLOWED_ATTRIBUTES:
            attribute = "other"
        constraints = self.card.hard_constraints + self.card.soft_preferences
        matches = [
            value
            for value in constraints
            if value not in self.disclosed
            and (attribute == "other" or classify_constraint(value) == attribute)
        ][:2]
        if not matches:
            return f"I don't have an additional preference for {attribute}."
        self.disclosed.update(matches)
        return "For that, what matters is: " + "; ".join(matches) + "."

    def override_turn(self) -> int | None:
        if self.scenario_type != "intent_override":
            return None
        return int(self._override().get("turn", 3))

    def override_message(self) -> str:
        override = self._override()
        new_value = str(override.get("new_value", ""))
        if new_value:
            self.disclosed.add(new_value)
        return str(override.get("message", DEFAULT_OVERRIDE_MESSAGE))
