"""What a reactive shopper may truthfully say about the products it was shown.

The natural customer (bench/natural.py) with reactions on looks at the top of each list it
is shown, and either points at the shown product closest to its hidden target ("the
second one is close but too expensive") or turns the whole list down with a reason
("none of these, I need leather"). This module only judges: it compares plain `Seen`
records of the target and of the shown products and returns what is true. Every claim it
allows holds by the products' derived attributes: a product is "too expensive" only when
it costs more than the target, "not that brand" only when the brands differ, a list is
turned down for "leather" only when the target is leather and no shown product is. The
wording is the customer's (the "reactions" section of the templates file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# A price this far from the target's is a difference a shopper remarks on.
PRICE_HIGHER = 1.15  # "too expensive": the shown product costs over 15% more than the target
PRICE_LOWER = 1.5  # "looks cheap": the target costs over 1.5 times the shown product
MEASURE_MARGIN = 1.15  # "too long": the same measure over 15% longer than the target's
# Measures that make a product long or short, and big or small (nouns of the templates'
# dimension table).
LENGTH_NOUNS = frozenset({"length", "long", "shaft", "chain", "inseam", "drop", "strap", "blade"})
SIZE_NOUNS = frozenset(
    {"diameter", "width", "wide", "thick", "thickness", "case", "band", "pendant", "lens", "brim"}
)
LONG_STYLES = frozenset({"maxi", "knee high"})
SHORT_STYLES = frozenset({"mini", "cropped"})
# Each aspect a pick may be critiqued on, and the one that says the opposite.
ASPECTS = (
    "cheaper",
    "pricier",
    "brand",
    "color",
    "material",
    "shorter",
    "longer",
    "smaller",
    "bigger",
)
# Attributes a whole list may be turned down for, most telling first.
LIST_REASONS = ("category", "material", "color", "budget")


@dataclass(frozen=True, slots=True)
class Seen:
    """A product as the shopper judges it (the target, or one shown at `position`)."""

    position: int  # 1-based in the list shown; 0 for the target
    asin: str
    head: str = ""  # the product noun of its category ("boots")
    leaf: str = ""
    path: frozenset[str] = frozenset()  # its category path segments, lower-cased
    department: str | None = None
    price: float | None = None
    brand: str | None = None
    colors: frozenset[str] = frozenset()
    materials: frozenset[str] = frozenset()
    styles: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()  # lower-case title words
    measures: Mapping[str, float] = field(default_factory=dict)  # noun -> millimetres


@dataclass(frozen=True, slots=True)
class Critique:
    """A true difference between a shown product and the target."""

    aspect: str  # one of ASPECTS
    shown: str  # the shown product's value ("$54.00", "Nike", "red", "chain")
    wanted: str  # the target's value, when it has one to say ("leather"), else ""


@dataclass(frozen=True, slots=True)
class Reaction:
    """One reaction, as the transcript keeps it (what the tests check against the products).

    kind: "pick" (the shown product at `position` is the closest; `aspect` is the critique
    made of it, "" for none) or "reject_list" (no shown product fits; `aspect` names the
    target's attribute given as the reason, `wanted` its value).
    """

    kind: str
    position: int
    asin: str
    aspect: str = ""
    shown: str = ""
    wanted: str = ""
    text: str = ""  # the reaction's own words, before noise


def closeness(target: Seen, shown: Seen) -> float:
    """How much a shown product resembles the target, as a shopper would see it."""
    score = 0.0
    if shown.leaf and shown.leaf == target.leaf:
        score += 4
    elif shown.head and shown.head == target.head:
        score += 2
    score += sum(
        1.0
        for same in (
            bool(target.department) and target.department == shown.department,
            bool(target.colors & shown.colors),
            bool(target.materials & shown.materials),
            bool(target.brand) and _brand(target.brand) == _brand(shown.brand),
            _near_price(target.price, shown.price),
        )
        if same
    )
    union = target.words | shown.words
    return score + (2 * len(target.words & shown.words) / len(union) if union else 0.0)


def closest(target: Seen, shown: Sequence[Seen]) -> Seen | None:
    """The shown product closest to the target, if it is the same kind of product (the first
    shown wins a tie)."""
    if not shown:
        return None
    best = max(shown, key=lambda s: (closeness(target, s), -s.position))
    same_kind = (best.leaf and best.leaf == target.leaf) or (best.head and best.head == target.head)
    return best if same_kind else None


def critiques(target: Seen, shown: Seen) -> list[Critique]:
    """Every critique of `shown` that is true against the target."""
    found: list[Critique] = []
    if target.price and shown.price:
        if shown.price > target.price * PRICE_HIGHER:
            found.append(Critique("cheaper", _money(shown.price), ""))
        elif target.price > shown.price * PRICE_LOWER:
            found.append(Critique("pricier", _money(shown.price), ""))
    if target.brand and shown.brand and _brand(target.brand) != _brand(shown.brand):
        found.append(Critique("brand", shown.brand, target.brand))
    for aspect, mine, theirs in (
        ("color", target.colors, shown.colors),
        ("material", target.materials, shown.materials),
    ):
        if mine and theirs and not mine & theirs:
            found.append(Critique(aspect, sorted(theirs)[0], sorted(mine)[0]))
    found += _length_critiques(target, shown)
    return found


def _length_critiques(target: Seen, shown: Seen) -> list[Critique]:
    found = []
    if shown.styles & LONG_STYLES and target.styles & SHORT_STYLES:
        found.append(Critique("shorter", sorted(shown.styles & LONG_STYLES)[0], ""))
    if shown.styles & SHORT_STYLES and target.styles & LONG_STYLES:
        found.append(Critique("longer", sorted(shown.styles & SHORT_STYLES)[0], ""))
    for noun in sorted(set(target.measures) & set(shown.measures)):
        mine, theirs = target.measures[noun], shown.measures[noun]
        down, up = ("shorter", "longer") if noun in LENGTH_NOUNS else ("smaller", "bigger")
        if noun not in LENGTH_NOUNS | SIZE_NOUNS or any(c.aspect in (down, up) for c in found):
            continue
        if theirs > mine * MEASURE_MARGIN:
            found.append(Critique(down, noun, ""))
        elif mine > theirs * MEASURE_MARGIN:
            found.append(Critique(up, noun, ""))
    return found


def list_reasons(
    target: Seen, shown: Sequence[Seen], budget: tuple[float, float] | None
) -> list[str]:
    """The target's attributes that no shown product has: a true reason to turn the list down.

    `budget` is the (low, high) the shopper would state; it is a reason only when every
    shown product costs more than its top ("all of these cost too much").
    """
    if not shown:
        return []
    reasons = []
    if target.head and all(_other_kind(target, s) for s in shown):
        reasons.append("category")
    if target.materials and all(s.materials and not target.materials & s.materials for s in shown):
        reasons.append("material")
    if target.colors and all(s.colors and not target.colors & s.colors for s in shown):
        reasons.append("color")
    if budget and all(s.price and s.price > budget[1] for s in shown):
        reasons.append("budget")
    return reasons


def _other_kind(target: Seen, shown: Seen) -> bool:
    """Another kind of product by every reading: another product noun, and the target's leaf
    nowhere on its category path (loafers are shoes when "Shoes" is on their path)."""
    return bool(
        shown.head
        and shown.head != target.head
        and not ({target.leaf.lower(), target.head} & shown.path)
    )


def _brand(name: str | None) -> str:
    return " ".join((name or "").lower().split())


def _near_price(a: float | None, b: float | None) -> bool:
    return bool(a and b and max(a, b) <= min(a, b) * 1.25)


def _money(price: float) -> str:
    return f"${price:,.2f}".replace(".00", "")
