"""What the shopper has asked for, as they would list it: one requirement a chip ("women",
"<= $60", "not green", "size 10.5"), and dropping one as a turn of its own.

The state keeps constraints, rejections, the audience and free fragments apart, each in the
shape its readers need; this is the one view of them a person (and the conversation suite)
sees, named by facets a shopper would use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wordfreq import zipf_frequency

from ..index.text import stem, tokens
from ..terms import Attribute, Facet, Status
from .audience import GROWN
from .budget import NUMBER_WORDS
from .model import Constraint, ShoppingState, StateDiff, Turn
from .parse import COUNT_WORDS, NOT_A_WISH, content_word
from .spelling import CHAT_WORD, is_english

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

# The state's facet names, where they differ from a shopper's.
_FACET_OF = {
    Facet.USE_CASE: "use",
    Facet.FIT: "style",
    Facet.CLOSURE: "feature",
    "word": "feature",
}
_ATTRIBUTE_FACET = {Attribute.CATEGORY: "item", Attribute.FEATURE: "feature"}


class UnknownFacet(ValueError):
    def __init__(self, facet: str) -> None:
        super().__init__(f"unknown facet {facet!r}: one of {', '.join(FACETS)}")
        self.facet = facet


@dataclass(frozen=True, slots=True)
class Requirement:
    facet: str
    value: str
    label: str
    negated: bool
    turn: int
    low: float | None = None  # a budget's bounds
    high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "facet": self.facet,
            "value": self.value,
            "label": self.label,
            "negated": self.negated,
            "turn": self.turn,
        }
        if self.facet == "budget":
            data["low"], data["high"] = self.low, self.high
        return data


def facet_of(constraint: Constraint) -> str:
    if constraint.attribute in _ATTRIBUTE_FACET:
        return _ATTRIBUTE_FACET[constraint.attribute]
    facet = str(constraint.data.get("facet") or constraint.attribute)
    return str(_FACET_OF.get(facet, facet))


def requirements(state: ShoppingState) -> list[Requirement]:
    """Everything the shopper asked for that still steers the search, in the order said."""
    held: list[Requirement] = []
    for constraint in state.active():
        held.append(_from_constraint(constraint))
    held.extend(_audience(state))
    for rejection in state.rejected:
        facet = str(_FACET_OF.get(rejection.attribute, rejection.attribute))
        held.append(
            Requirement(
                facet, rejection.value, f"not {rejection.value}", True, rejection.source_turn
            )
        )
    read = {stem(w) for r in held for w in tokens(f"{r.value} {r.label}")}
    for fragment in state.active_fragments():
        label = (
            ""
            if fragment.covered
            else fragment_label(fragment.text, read, frozenset(fragment.catalog_words))
        )
        if label:  # nothing left to show: said in other requirements, chat or typos
            held.append(Requirement("feature", fragment.text, label, False, fragment.source_turn))
    items = {stem(w) for r in held if r.facet == "item" for w in tokens(r.value)}
    # "running" beside "running shoes", the style "jogger" beside "joggers": said by the item.
    held = [r for r in held if not (r.facet in ("use", "style") and _said_by(r.value, items))]
    # "something for my kids": the item "kids" is who it is for, said by the department chip.
    who = {r.value.lower() for r in held if r.facet == "department"}
    held = [r for r in held if not (r.facet == "item" and r.value.lower() in who)]
    unique = {(r.facet, r.value.lower(), r.negated): r for r in held}
    return sorted(
        unique.values(), key=lambda r: (r.turn, FACETS.index(r.facet) if r.facet in FACETS else 99)
    )


LABEL_WORDS = 5  # a chip is a few words, not the sentence they came in


def _said_by(value: str, item_stems: set[str]) -> bool:
    said = tokens(value)
    return bool(said) and all(stem(w) in item_stems for w in said)


def fragment_label(text: str, read: set[str], catalog_words: frozenset[str] = frozenset()) -> str:
    """A wish in the shopper's words, as a chip: the words that say something of the product
    and that no other requirement already says ("I need a pirate costume for me (woman)":
    "pirate", beside "costume" and "women"; a count before a word kept stays: "6 pack",
    "two piece"); '' when nothing is left."""
    said = tokens(text)
    kept = [
        content_word(w)
        and w not in NOT_A_WISH
        and w not in NUMBER_WORDS  # "around forty bucks": the budget's, unless it counts
        and stem(w) not in read
        and (_spelled(w) or w in catalog_words)
        for w in said
    ]
    counted = [
        (w.isdigit() or w in COUNT_WORDS) and k
        for w, k in zip(said, [*kept[1:], False], strict=True)
    ]
    words = [w for w, k, c in zip(said, kept, counted, strict=True) if k or c]
    return " ".join(list(dict.fromkeys(words))[:LABEL_WORDS]) if any(kept) else ""


def _spelled(word: str) -> bool:
    """A word as a chip may show it: not a typo ("hunderd", "pleese", read as meant elsewhere)."""
    return word.isalpha() and (is_english(word) or zipf_frequency(word, "en") >= CHAT_WORD)


def _from_constraint(constraint: Constraint) -> Requirement:
    facet = facet_of(constraint)
    value, turn = constraint.value, constraint.source_turn
    if facet == "budget" and constraint.data.get("lean") == "low":
        return Requirement(facet, value, value, False, turn)  # "cheap": no limit said
    if facet == "budget":
        low, high = constraint.data.get("min"), constraint.data.get("max")
        target = constraint.data.get("target")
        return Requirement(facet, value, _budget_label(low, high, target), False, turn, low, high)
    label = f"size {value}" if facet == "size" else value
    if (
        constraint.data.get("facet") == Facet.DEPARTMENT
        and constraint.data.get("assumed")
        and value in GROWN
    ):
        label = f"{value} or {GROWN.get(value, value)}"  # "my daughter", age unsaid: either
    if constraint.data.get("facet") == Facet.FIT and value == "plus":
        label = "plus size"  # "plus" alone reads as nothing a person said
    if facet in ("color", "material") and _shade_said(constraint.text, value):
        # "navy" (searched as blue), "rose gold"; "memory foam" (searched as eva foam)
        label = constraint.text.lower()
    return Requirement(facet, value, label, False, turn)


def _shade_said(text: str, value: str) -> bool:
    """Did the shopper name the colour by a shade of a word or two, spelled right?"""
    said = tokens(text)
    return 0 < len(said) <= 2 and text.lower() != value.lower() and all(map(_spelled, said))


def _budget_label(low: float | None, high: float | None, target: float | None) -> str:
    if target is not None:
        return f"around {_dollars(target)}"
    if low is not None and high is not None:
        return f"{_dollars(low)}–{_dollars(high)}"
    return f"≤ {_dollars(high)}" if high is not None else f"≥ {_dollars(low or 0)}"


def _dollars(amount: float) -> str:
    """ "$60", or with its cents as a price shows them: "$55.60", never "$55.6"."""
    return f"${amount:.0f}" if amount == int(amount) else f"${amount:.2f}"


def _audience(state: ShoppingState) -> list[Requirement]:
    audience, out = state.audience, []
    if audience.recipient is not None:
        fact = audience.recipient
        out.append(
            Requirement("recipient", fact.value, f"for your {fact.value}", False, fact.source_turn)
        )
    if audience.age_group is not None and audience.age_group.cue == "age":
        fact = audience.age_group
        out.append(Requirement("age", fact.text, f"age {fact.text}", False, fact.source_turn))
    return out


def drop(
    state: ShoppingState, facet: str, value: str | None, turn: int
) -> tuple[ShoppingState, StateDiff, list[Requirement]]:
    """The shopper takes back a requirement (a chip's ×): every one of `facet` (with `value`,
    that one only). Returns the new state, its diff and what was dropped."""
    if facet not in FACETS:
        raise UnknownFacet(facet)
    new = state.copy()
    new.turn = turn
    diff = StateDiff()
    wanted = value.lower() if value else None
    gone = [
        r
        for r in requirements(state)
        if r.facet == facet and (wanted is None or r.value.lower() == wanted)
    ]

    def matches(candidate: str) -> bool:
        return wanted is None or candidate.lower() == wanted

    for constraint in new.active():
        if facet_of(constraint) == facet and matches(constraint.value):
            constraint.status = Status.REPLACED
            diff.replaced.append(constraint.described())
    kept = [
        r
        for r in new.rejected
        if not (_FACET_OF.get(r.attribute, r.attribute) == facet and matches(r.value))
    ]
    for rejection in new.rejected:
        if rejection not in kept:
            diff.replaced.append(
                {"attribute": rejection.attribute, "value": f"not {rejection.value}"}
            )
    new.rejected = kept
    if facet == "feature":
        for fragment in new.active_fragments():
            if not fragment.covered and matches(fragment.text):
                fragment.status = Status.REPLACED
                diff.replaced.append({"attribute": "feature", "value": fragment.text})
    if facet in ("recipient", "age"):
        _drop_audience(new, facet)
    label = ", ".join(r.label for r in gone) or (value or facet)
    new.history.append(Turn(turn=turn, user=f"(removed {label})"))
    return new, diff, gone


def _drop_audience(state: ShoppingState, facet: str) -> None:
    audience = state.audience
    if facet == "recipient":
        audience.recipient = None
    else:
        audience.age_group = None
    for constraint in state.active():
        if constraint.data.get("from") == "audience":
            constraint.status = Status.REPLACED
