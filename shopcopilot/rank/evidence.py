"""Evidence: what each candidate offers for each part of the shopper's state, as columns.

Every check returns one value per candidate: > 0 the product shows it, < 0 it
contradicts it, 0 unknown (a missing price or an unlisted colour is unknown,
never a violation). Checks are prepared once per turn from the state; the
words they test are gathered for all candidates at once (`Batch`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..catalog.vocabulary import accepted_departments as _accepted_departments
from ..index.features import FeatureStore
from ..index.forms import inflections, word_forms
from ..index.text import STOPWORDS, stem, tokens
from ..state.critique import CUES
from ..state.model import Constraint, Fragment


class Batch:
    """One turn's candidates (rows of the feature store) and which asked-about words each uses."""

    def __init__(
        self,
        features: FeatureStore,
        rows: np.ndarray,
        stems: Iterable[str],
        category_stems: Iterable[str],
    ) -> None:
        self.features, self.rows = features, rows
        self.has = _presence(features, rows, set(stems), plural_forms=True)
        self.in_category = _presence(features, rows, set(category_stems), plural_forms=False)

    def __len__(self) -> int:
        return len(self.rows)

    def titled(self, word: str) -> np.ndarray:
        """Per candidate: does a word of its title begin with `word` ("swimsuit": "Swimsuits")?"""
        found = np.asarray(self.features.find(f" {word}".encode(), self.rows), dtype=np.int64)
        ends = np.asarray(self.features.find(b" | ", self.rows), dtype=np.int64)
        return (found >= 0) & ((found < ends) | (ends < 0))  # a title and nothing else: all of it

    def listed(self, facet: str, value: str) -> np.ndarray:
        """Per candidate: is `value` among its `facet` values (colors, sizes, ...)?"""
        value_id = self.features.value_id.get(value)
        if value_id is None:
            return np.zeros(len(self.rows), dtype=bool)
        return self.features.holders(facet, (value_id,)).among(self.rows)

    def lists_any(self, facet: str) -> np.ndarray:
        return self.features.lists[facet].nonempty(self.rows)

    def code(self, facet: str) -> np.ndarray:
        return self.features.codes[facet][self.rows]

    def code_is(self, facet: str, values: Iterable[str]) -> np.ndarray:
        codes = self.code(facet)
        out = np.zeros(len(codes), dtype=bool)
        for value in values:  # a value or two: comparing beats np.isin's sort
            if (value_id := self.features.value_id.get(value)) is not None:
                out |= codes == value_id
        return out


def _presence(
    features: FeatureStore, rows: np.ndarray, stems: set[str], plural_forms: bool
) -> dict[str, np.ndarray]:
    """stem -> per candidate, do its words (or, without plural forms, its category stems) hold
    it."""
    postings = features.postings("words" if plural_forms else "category_stems")
    words = sorted(stems)
    forms = [word_forms(w) if plural_forms else (w,) for w in words]
    ids = [[i for i in map(features.word_id.get, f) if i is not None] for f in forms]
    return dict(zip(words, postings.held_by(ids, rows), strict=True))


# -- requirement fragments ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class FragmentProbe:
    """A requirement fragment prepared once per turn: its phrase and weighted words."""

    text: str
    key: str  # its token string, " tok tok ", for the exact-phrase test
    weights: dict[str, float]
    level: str

    @property
    def informativeness(self) -> float:
        return sum(self.weights.values())


def fragment_words(fragment: Fragment) -> list[str]:
    return list(dict.fromkeys(stem(t) for t in tokens(fragment.text) if t not in STOPWORDS))


def prepare_fragments(fragments: Iterable[Fragment], batch: Batch) -> list[FragmentProbe]:
    """IDF over the current candidates: a word every candidate has tells nothing."""
    n = max(len(batch), 1)
    probes = []
    for fragment in fragments:
        words = fragment_words(fragment)
        if not words:
            continue
        weights = {w: math.log(1 + n / (1 + int(batch.has[w].sum()))) for w in words}
        key = " " + " ".join(tokens(fragment.text)) + " "
        probes.append(FragmentProbe(fragment.text, key, weights, fragment.level))
    return probes


def fragment_coverage(probe: FragmentProbe, batch: Batch) -> np.ndarray:
    """Share (0..1) of the fragment's information each candidate's words cover."""
    covered = np.zeros(len(batch))
    for word, weight in probe.weights.items():
        covered += np.where(batch.has[word], weight, 0.0)
    return covered / (probe.informativeness or 1.0)


def exact_phrase(probe: FragmentProbe, batch: Batch) -> np.ndarray:
    """Per candidate: does its text contain the fragment word for word?"""
    # Only a product using every word of the fragment can quote it (a word's plural forms
    # include the word itself), so the substring test runs on those alone.
    possible = np.ones(len(batch), dtype=bool)
    for word in probe.weights:
        possible &= batch.has[word]
    positions = np.flatnonzero(possible)
    found = batch.features.find(probe.key.encode("ascii", "replace"), batch.rows[positions])
    out = np.zeros(len(batch), dtype=bool)
    out[positions] = [at >= 0 for at in found]
    return out


def shown_coverage(
    probe: FragmentProbe, batch: Batch, wanted: np.ndarray, words: tuple[str, ...]
) -> np.ndarray:
    """Per `wanted` candidate: the share of the wish's `words` (stems) its card shows, in its
    title or first feature lines ("Laptop Backpack" shows the laptop; a description deep down
    does not)."""
    out = np.zeros(len(batch))
    features = batch.features
    weights = {w: probe.weights[w] for w in words if w in probe.weights}
    for word, weight in weights.items():
        positions = np.flatnonzero(wanted & batch.has[word])
        if not len(positions):
            continue
        rows = batch.rows[positions]
        key = f" {word}".encode("ascii", "replace")
        found = np.asarray(features.find(key, rows), dtype=np.int64)
        ends = np.asarray(features.find(b" | ", rows), dtype=np.int64)
        titled = (found >= 0) & ((found < ends) | (ends < 0))
        led = np.asarray(features.find(key, rows, lead=True), dtype=np.int64) >= 0
        out[positions] += weight * (titled | led)
    return out / (sum(weights.values()) or 1.0)


def prominence(probe: FragmentProbe, batch: Batch, exact: np.ndarray) -> np.ndarray:
    """Per candidate quoting the fragment: 1.0 when it is the product's first feature line,
    less further down, 0 if not among the lead lines."""
    features, key = batch.features, probe.key.encode("ascii", "replace")
    lead, ptr = features.lead, features.lead_ptr
    positions = np.flatnonzero(exact)
    rows = batch.rows[positions]
    out = np.zeros(len(batch))
    for position, start, end, found in zip(
        positions.tolist(),
        ptr[rows].tolist(),
        ptr[rows + 1].tolist(),
        features.find(key, rows, lead=True),
        strict=True,
    ):
        if found >= 0:  # lead lines are NUL-separated: the line number is the NULs before the hit
            # (sliced: the lead lines may be a memory map, which has no count())
            out[position] = 1.0 - lead[start:found].count(b"\x00") / (
                lead[start:end].count(b"\x00") + 1
            )
    return out


# -- categories ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CategoryProbe:
    """A category constraint prepared once per turn."""

    words: tuple[tuple[str, float], ...]
    total: float


def prepare_category(constraint: Constraint) -> CategoryProbe:
    words: dict[str, float] = constraint.data.get("words", {})
    return CategoryProbe(tuple(words.items()), sum(words.values()))


def category_match(probe: CategoryProbe, batch: Batch) -> np.ndarray:
    """Share of the category words in each product's category path (in its text, a little)."""
    score = np.zeros(len(batch))
    if not probe.total:
        return score
    for word, weight in probe.words:
        score += np.where(
            batch.in_category[word], weight, np.where(batch.has[word], 0.3 * weight, 0.0)
        )
    return score / probe.total


# -- attribute values and rejections ---------------------------------------------

Check = Callable[[Batch], np.ndarray]
_LISTED = {
    "size": "sizes",
    "width": "sizes",
    "use_case": "use_cases",
    "style": "styles",
    "fit": "styles",
}


@dataclass(frozen=True, slots=True)
class PreparedCheck:
    check: Check
    stems: tuple[str, ...]  # the words it asks Batch.has about


def value_check(constraint: Constraint) -> PreparedCheck:
    """How each product meets one attribute constraint: 1 shown, < 0 contradicted, 0 unknown,
    a share for partly matching words."""
    facet, value = constraint.data.get("facet"), constraint.value
    if facet == "color":
        return PreparedCheck(lambda b: _listed(b, "colors", value, soft_violation=0.3), ())
    if facet == "material":
        return PreparedCheck(lambda b: _listed(b, "materials", value, soft_violation=0.5), ())
    if facet == "department":
        accepted = accepted_departments(value) | accepted_departments(
            constraint.data.get("also") or value
        )
        return PreparedCheck(
            lambda b: _known_code(
                b, "department", np.where(b.code_is("department", accepted), 1.0, -1.0)
            ),
            (),
        )
    if facet == "closure":
        return PreparedCheck(
            lambda b: _known_code(
                b, "closure", np.where(b.code_is("closure", (value,)), 1.0, -0.3)
            ),
            (),
        )
    if facet == "brand":
        return PreparedCheck(lambda b: np.where(_brand_is(b, value), 1.0, -0.5), ())
    stems = value_words(value)
    listed = _LISTED.get(facet) if facet else None
    if listed is None:
        return PreparedCheck(lambda b: _words_present(b, stems), stems)
    return PreparedCheck(
        lambda b: np.where(b.listed(listed, value), 1.0, _words_present(b, stems)), stems
    )


def value_words(value: str) -> tuple[str, ...]:
    return tuple(stem(t) for t in tokens(value) if t not in STOPWORDS)


@lru_cache(maxsize=64)
def accepted_departments(wanted: str) -> frozenset[str]:
    return _accepted_departments(wanted)


def _listed(batch: Batch, facet: str, value: str, soft_violation: float) -> np.ndarray:
    return np.where(
        batch.listed(facet, value), 1.0, np.where(batch.lists_any(facet), -soft_violation, 0.0)
    )


def _known_code(batch: Batch, facet: str, matched: np.ndarray) -> np.ndarray:
    return np.where(batch.code(facet) >= 0, matched, 0.0)


def _brand_is(batch: Batch, value: str) -> np.ndarray:
    wanted = (value.lower(),)
    return batch.code_is("brand_key", wanted) | batch.code_is("store_key", wanted)


def _words_present(batch: Batch, stems: tuple[str, ...]) -> np.ndarray:
    """Share of the value's words each product's text uses."""
    if not stems:
        return np.zeros(len(batch))
    count = np.zeros(len(batch))
    for word in stems:
        count += batch.has[word]
    return count / len(stems)


def rejection_check(facet: str, value: str) -> PreparedCheck:
    """Does each product have a value the shopper turned down?"""
    listed = {
        "color": "colors",
        "material": "materials",
        "use_case": "use_cases",
        "style": "styles",
        "size": "sizes",
    }.get(facet)
    if listed is not None:
        return PreparedCheck(lambda b: b.listed(listed, value), ())
    if facet == "department" and value in _OTHER_HALF:
        return PreparedCheck(lambda b: b.code_is(facet, (value,)) | _titled_as(b, value), ())
    if facet in ("department", "closure"):
        return PreparedCheck(lambda b: b.code_is(facet, (value,)), ())
    if facet == "brand":
        return PreparedCheck(lambda b: _brand_is(b, value), ())
    if facet == "length":  # "too long": the lengths the catalog lists as styles (maxi, ...)
        styles = CUES.length_styles.get(value, (value,))
        return PreparedCheck(lambda b: _listed_any(b, "styles", styles), ())
    said = tokens(value)
    if len(said) > 1:
        return _phrase_check(said)
    forms = inflections(value.lower())
    return PreparedCheck(lambda b: _has_any(b, forms), forms)


def _has_any(batch: Batch, stems: tuple[str, ...]) -> np.ndarray:
    out = np.zeros(len(batch), dtype=bool)
    for word in stems:
        out |= batch.has[word]
    return out


_OTHER_HALF = {"women": "men", "men": "women"}


def _titled_as(batch: Batch, department: str) -> np.ndarray:
    """Is the product titled as the department's, whatever it is filed under ("... for Women",
    "Women's ..." and not also men's)? "these say for women, he's a man" turns those down."""
    other = _OTHER_HALF[department]
    return batch.titled(f"for {department}") | (batch.titled(department) & ~batch.titled(other))


def _phrase_check(said: list[str]) -> PreparedCheck:
    """Does each product's text say the words together ("puff sleeves": "Puff Sleeve Blouse")?
    The last word is matched by its start, so its plural counts too."""
    stems = tuple(stem(w) for w in said)
    last = said[-1][:-1] if said[-1].endswith("s") and not said[-1].endswith("ss") else said[-1]
    key = (" " + " ".join([*said[:-1], last])).encode("ascii", "replace")

    def check(batch: Batch) -> np.ndarray:
        possible = np.ones(len(batch), dtype=bool)
        for word in stems:
            possible &= batch.has[word]
        positions = np.flatnonzero(possible)
        out = np.zeros(len(batch), dtype=bool)
        out[positions] = [at >= 0 for at in batch.features.find(key, batch.rows[positions])]
        return out

    return PreparedCheck(check, stems)


def _listed_any(batch: Batch, facet: str, values: Iterable[str]) -> np.ndarray:
    out = np.zeros(len(batch), dtype=bool)
    for value in values:
        out |= batch.listed(facet, value)
    return out


# -- critiques of shown products -------------------------------------------------

ANCHOR_PRICE_SCALE = 0.35  # log-ratio at which a price counts as e^-1 similar


def anchor_parts(anchor: dict, batch: Batch) -> dict[str, np.ndarray]:
    """How like the anchor product ("more like the second one") each candidate is: same leaf
    category, share of its colours / materials / styles, closeness of price (each 0..1)."""
    n = len(batch)
    same_leaf = batch.code_is("leaf", (anchor["leaf"],)) if anchor.get("leaf") else np.zeros(n)
    values = [
        (facet, value)
        for facet in ("colors", "materials", "styles")
        for value in anchor.get(facet, ())
    ]
    shared = np.zeros(n)
    for facet, value in values:
        shared += batch.listed(facet, value)
    price = batch.features.price[batch.rows]
    close = np.zeros(n)
    if anchor.get("price"):
        known = ~np.isnan(price)
        ratio = np.maximum(np.where(known, price, 1.0), 0.01) / anchor["price"]
        close = np.where(known, np.exp(-np.abs(np.log(ratio)) / ANCHOR_PRICE_SCALE), 0.0)
    return {
        "leaf": same_leaf.astype(float),
        "shared": shared / len(values) if values else shared,
        "price": close,
    }


def brands_of(batch: Batch, brands: Iterable[str]) -> np.ndarray:
    """Per candidate: is it of one of `brands` (a list the shopper turned down)?"""
    out = np.zeros(len(batch), dtype=bool)
    for brand in brands:
        out |= _brand_is(batch, brand)
    return out


# -- budget --------------------------------------------------------------------


def budget_match(constraint: Constraint, batch: Batch) -> np.ndarray:
    price = batch.features.price[batch.rows]
    known = ~np.isnan(price)
    if constraint.data.get("lean") == "low":
        # "cheap": 1 for the cheapest candidate, 0 for the dearest, by rank (no limit said)
        order = np.argsort(np.where(known, price, np.inf), kind="stable")
        rank = np.empty(len(batch))
        rank[order] = np.arange(len(batch))
        return np.where(known, 1.0 - rank / max(int(known.sum()) - 1, 1), 0.0)
    low, high, target = (
        constraint.data.get("min"),
        constraint.data.get("max"),
        constraint.data.get("target"),
    )
    if target is not None:
        # Closeness on a log scale: $29.99 vs $30 is a match, $60 vs $30 is not.
        ratio = np.maximum(np.where(known, price, 1.0), 0.01) / max(target, 0.01)
        return np.where(known, np.exp(-np.abs(np.log(ratio)) / 0.1), 0.0)
    match = np.ones(len(batch))
    with np.errstate(invalid="ignore"):
        if low is not None:
            under = price < low
            match = np.where(
                under, -np.minimum(1.0, (low - price) / max(low, 1.0) * 4 + 0.3), match
            )
        if high is not None:
            over = price > high
            match = np.where(
                over, -np.minimum(1.0, (price - high) / max(high, 1.0) * 4 + 0.3), match
            )
    return np.where(known, match, 0.0)
