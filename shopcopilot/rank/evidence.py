"""Evidence: what a product offers for each part of the shopper's state.

Each check returns a signed strength: > 0 the product shows it, < 0 it
contradicts it, 0 unknown (a missing price or an unlisted colour is unknown,
never a violation).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from functools import lru_cache

from ..catalog.vocabulary import accepted_departments as _accepted_departments
from ..state.model import Constraint, Fragment
from ..state.text import STOPWORDS, stem, tokens
from .view import ProductView, word_forms


@dataclass(frozen=True, slots=True)
class FragmentProbe:
    """A requirement fragment prepared once per turn: its phrase and weighted words."""

    text: str
    key: str
    weights: dict[str, float]
    level: str
    forms: tuple[tuple[frozenset[str], float], ...]  # each word's plural forms with its weight

    @property
    def informativeness(self) -> float:
        return sum(self.weights.values())


def prepare_fragments(fragments: Iterable[Fragment], views: Iterable[ProductView]) -> list[FragmentProbe]:
    """IDF over the current candidates: a word every candidate has tells nothing."""
    views = list(views)
    probes = []
    for fragment in fragments:
        words = {stem(t) for t in tokens(fragment.text) if t not in STOPWORDS}
        if not words:
            continue
        n = max(len(views), 1)
        weights = {w: math.log(1 + n / (1 + _document_frequency(word_forms(w), views))) for w in words}
        key = " " + " ".join(tokens(fragment.text)) + " "
        forms = tuple((word_forms(w), weight) for w, weight in weights.items())
        probes.append(FragmentProbe(fragment.text, key, weights, fragment.level, forms))
    return probes


def _document_frequency(forms: frozenset[str], views: list[ProductView]) -> int:
    return sum([not view.words.isdisjoint(forms) for view in views])


def fragment_match(probe: FragmentProbe, view: ProductView) -> tuple[float, bool]:
    """(coverage 0..1, exact phrase found)."""
    if probe.key in view.phrase_text:
        return 1.0, True
    total = probe.informativeness or 1.0
    words = view.words
    covered = sum(weight for forms, weight in probe.forms if not words.isdisjoint(forms))
    return covered / total, False


def prominence(probe: FragmentProbe, view: ProductView) -> float:
    """1.0 when the requirement is the product's first feature line, less further down, 0 if absent."""
    for position, key in enumerate(view.lead_keys):
        if probe.key in key:
            return 1.0 - position / len(view.lead_keys)
    return 0.0


@dataclass(frozen=True, slots=True)
class CategoryProbe:
    """A category constraint prepared once per turn."""

    words: tuple[tuple[str, float], ...]
    total: float


def prepare_category(constraint: Constraint) -> CategoryProbe:
    words: dict[str, float] = constraint.data.get("words", {})
    return CategoryProbe(tuple(words.items()), sum(words.values()))


def category_match(probe: CategoryProbe, view: ProductView) -> float:
    """Share of the category words in the product's category path (in its text, a little)."""
    if not probe.total:
        return 0.0
    score = 0.0
    for word, weight in probe.words:
        if word in view.category_stems:
            score += weight
        elif view.has(word):
            score += 0.3 * weight
    return score / probe.total


def value_match(constraint: Constraint, view: ProductView) -> float:
    facet = constraint.data.get("facet")
    attrs = view.attributes
    value = constraint.value
    if facet == "color":
        return _listed(value, attrs.colors, soft_violation=0.3)
    if facet == "material":
        return _listed(value, view.material_names, soft_violation=0.5)
    if facet == "department":
        if not attrs.department:
            return 0.0
        return 1.0 if attrs.department in accepted_departments(value) else -1.0
    if facet == "closure":
        return 0.0 if not attrs.closure else (1.0 if attrs.closure == value else -0.3)
    if facet == "size" or facet == "width":
        return 1.0 if value in attrs.sizes else _words_present(value, view)
    if facet == "use_case":
        return 1.0 if value in attrs.use_cases else _words_present(value, view)
    if facet in ("style", "fit"):
        return 1.0 if value in attrs.styles else _words_present(value, view)
    if facet == "brand":
        brand = (attrs.brand or "").lower()
        return 1.0 if value.lower() in (brand, view.product.store.lower()) else -0.5
    return _words_present(value, view)


@lru_cache(maxsize=64)
def accepted_departments(wanted: str) -> frozenset[str]:
    return _accepted_departments(wanted)


def _listed(value: str, listed: tuple[str, ...], soft_violation: float) -> float:
    if value in listed:
        return 1.0
    return -soft_violation if listed else 0.0


def _words_present(value: str, view: ProductView) -> float:
    words = [stem(t) for t in tokens(value) if t not in STOPWORDS]
    if not words:
        return 0.0
    return sum(1 for w in words if view.has(w)) / len(words)


def budget_match(constraint: Constraint, view: ProductView) -> float:
    price = view.price
    if price is None:
        return 0.0
    low, high, target = constraint.data.get("min"), constraint.data.get("max"), constraint.data.get("target")
    if target is not None:
        # Closeness on a log scale: $29.99 vs $30 is a match, $60 vs $30 is not.
        return math.exp(-abs(math.log(max(price, 0.01) / max(target, 0.01))) / 0.1)
    if high is not None and price > high:
        return -min(1.0, (price - high) / max(high, 1.0) * 4 + 0.3)
    if low is not None and price < low:
        return -min(1.0, (low - price) / max(low, 1.0) * 4 + 0.3)
    return 1.0


def rejected_match(facet: str, value: str, view: ProductView) -> bool:
    attrs = view.attributes
    listed = {
        "color": attrs.colors, "material": view.material_names, "use_case": attrs.use_cases,
        "style": attrs.styles, "size": attrs.sizes,
    }.get(facet)
    if listed is not None:
        return value in listed
    if facet == "department":
        return attrs.department == value
    if facet == "closure":
        return attrs.closure == value
    if facet == "brand":
        return value.lower() in ((attrs.brand or "").lower(), view.product.store.lower())
    return view.has(stem(value))
