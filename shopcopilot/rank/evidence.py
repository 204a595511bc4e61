"""Evidence: what a product offers for each part of the shopper's state.

Each check returns a signed strength: > 0 the product shows it, < 0 it
contradicts it, 0 unknown (a missing price or an unlisted colour is unknown,
never a violation).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
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
    wanted = [(fragment, {stem(t) for t in tokens(fragment.text) if t not in STOPWORDS}) for fragment in fragments]
    frequency = _document_frequencies({w for _, words in wanted for w in words}, views)
    n = max(len(views), 1)
    probes = []
    for fragment, words in wanted:
        if not words:
            continue
        weights = {w: math.log(1 + n / (1 + frequency[w])) for w in words}
        key = " " + " ".join(tokens(fragment.text)) + " "
        forms = tuple((word_forms(w), weight) for w, weight in weights.items())
        probes.append(FragmentProbe(fragment.text, key, weights, fragment.level, forms))
    return probes


def _document_frequencies(words: set[str], views: list[ProductView]) -> dict[str, int]:
    """How many views use each word in any plural form: one set intersection per view."""
    owners: dict[str, list[str]] = {}
    for word in words:
        for form in word_forms(word):
            owners.setdefault(form, []).append(word)
    forms = frozenset(owners)
    counts = dict.fromkeys(words, 0)
    for view in views:
        found = forms.intersection(view.words)
        for word in {w for form in found for w in owners[form]} if found else ():
            counts[word] += 1
    return counts


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

    words: tuple[tuple[str, frozenset[str], float], ...]  # stem, its plural forms, weight
    total: float


def prepare_category(constraint: Constraint) -> CategoryProbe:
    words: dict[str, float] = constraint.data.get("words", {})
    return CategoryProbe(tuple((w, word_forms(w), weight) for w, weight in words.items()), sum(words.values()))


def category_match(probe: CategoryProbe, view: ProductView) -> float:
    """Share of the category words in the product's category path (in its text, a little)."""
    if not probe.total:
        return 0.0
    score = 0.0
    for word, forms, weight in probe.words:
        if word in view.category_stems:
            score += weight
        elif not view.words.isdisjoint(forms):
            score += 0.3 * weight
    return score / probe.total


ViewCheck = Callable[[ProductView], float]


def value_check(constraint: Constraint) -> ViewCheck:
    """How a product meets one attribute constraint, as a function prepared once per turn:
    1 shown, < 0 contradicted, 0 unknown, a share for partly matching words."""
    facet, value = constraint.data.get("facet"), constraint.value
    if facet == "color":
        return lambda view: _listed(value, view.attributes.colors, soft_violation=0.3)
    if facet == "material":
        return lambda view: _listed(value, view.material_names, soft_violation=0.5)
    if facet == "department":
        accepted = accepted_departments(value)
        return lambda view: (1.0 if view.attributes.department in accepted else -1.0) if view.attributes.department else 0.0
    if facet == "closure":
        return lambda view: 0.0 if not view.attributes.closure else (1.0 if view.attributes.closure == value else -0.3)
    if facet == "brand":
        wanted = value.lower()
        return lambda view: 1.0 if wanted in ((view.attributes.brand or "").lower(), view.product.store.lower()) else -0.5
    words_present = _words_present_check(value)
    listed = {"size": "sizes", "width": "sizes", "use_case": "use_cases", "style": "styles", "fit": "styles"}.get(facet)
    if listed is None:
        return words_present
    return lambda view: 1.0 if value in getattr(view.attributes, listed) else words_present(view)


@lru_cache(maxsize=64)
def accepted_departments(wanted: str) -> frozenset[str]:
    return _accepted_departments(wanted)


def _listed(value: str, listed: tuple[str, ...], soft_violation: float) -> float:
    if value in listed:
        return 1.0
    return -soft_violation if listed else 0.0


def _words_present_check(value: str) -> ViewCheck:
    """Share of the value's words the product's text uses."""
    forms = [word_forms(stem(t)) for t in tokens(value) if t not in STOPWORDS]
    if not forms:
        return lambda view: 0.0
    return lambda view: sum(1 for f in forms if not view.words.isdisjoint(f)) / len(forms)


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


def rejection_check(facet: str, value: str) -> Callable[[ProductView], bool]:
    """Does a product have a value the shopper turned down? Prepared once per turn."""
    listed = {"color": "colors", "use_case": "use_cases", "style": "styles", "size": "sizes"}.get(facet)
    if listed is not None:
        return lambda view: value in getattr(view.attributes, listed)
    if facet == "material":
        return lambda view: value in view.material_names
    if facet in ("department", "closure"):
        return lambda view: getattr(view.attributes, facet) == value
    if facet == "brand":
        wanted = value.lower()
        return lambda view: wanted in ((view.attributes.brand or "").lower(), view.product.store.lower())
    forms = word_forms(stem(value))
    return lambda view: not view.words.isdisjoint(forms)
