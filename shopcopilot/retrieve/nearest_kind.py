"""The nearest kind of item a department has, when it has none of the kind asked for.

A raincoat for a nine-year-old girl: the catalog's raincoats are women's, and a woman's coat
does not fit a child, so the girls' coats are the better answer than the women's raincoats. The
kind is read from the catalog's own tree: the words the item's category paths share
("Coats, Jackets & Vests > Trench, Rain & Anoraks > Raincoats": coat, jacket, rain) and the
parts of a compound name (rain + coat, swim + suit), each weighed by how rare it is among the
category paths. The department's leaf whose path holds the most of that weight is the nearest
kind ("Jackets & Coats > Dress Coats"); a leaf sharing only a common word ("Accessories") is
none.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..index.features import FeatureStore
from ..index.text import STOPWORDS, stem, tokens
from .facts import rows_holding

COMMON = 0.05  # a category word on more than this share of products tells no kind apart
SHARED = 0.5  # ...a word on at least this share of the item's products' paths is the item's
A_KIND = 3  # products a leaf needs to be offered as the nearest kind
PART = 3  # letters each part of a compound needs ("rain" + "coat", not "leg" + "ging")
HEAD = 2.0  # a compound's last part names what it is (a raincoat is a coat), so weighs more
LEAF_NODES, ITEM_NODES = 2, 3  # the nodes of a path that say its kind (see nearest_kind)


@dataclass(frozen=True, slots=True)
class NearestKind:
    leaf: str  # the leaf's name, as the catalog writes it ("Dress Coats")
    words: tuple[str, ...]  # the stems that made it near ("coat", "jacket")


def nearest_kind(
    features: FeatureStore,
    item: tuple[str, ...],
    departments: tuple[str, ...],
    path_of: Callable[[int], tuple[str, ...]],
) -> NearestKind | None:
    """The leaf of `departments` nearest the item named by the category stems `item`, or None
    when the departments have the item, the catalog files nothing under it, or no leaf is near.
    `path_of`: a row's category path. A leaf's kind is the last two nodes of its path, and the
    item's the last three ("Coats, Jackets & Vests > Trench, Rain & Anoraks > Raincoats"): a
    kids' backpack shares "Luggage & Travel Gear" with an umbrella, but is no kind of one."""
    rows = rows_holding(features, [("category_stems", w) for w in item])
    department = _department_rows(features, departments)
    if not len(rows) or not len(department) or np.isin(rows, department).any():
        return None
    weights = _shared_words(features, rows, item, path_of)
    for word, weight in _parts(features, item).items():
        weights[word] = max(weights.get(word, 0.0), weight)
    if not weights:
        return None
    best: NearestKind | None = None
    best_score = 0.0
    for code, first in _leaves(features, department, A_KIND):
        words = tuple(w for w in _kind_words(path_of(first), LEAF_NODES) if w in weights)
        score = sum(weights[w] for w in words)
        if score > best_score:
            best, best_score = NearestKind(features.value_names[code], words), score
    return best


def _leaves(features: FeatureStore, rows: np.ndarray, least: int = 1) -> list[tuple[int, int]]:
    """(leaf code, its first row) of each leaf at least `least` of the rows are filed under."""
    leaves = features.codes["leaf"][rows]
    codes, firsts, counts = np.unique(leaves, return_index=True, return_counts=True)
    keep = (codes >= 0) & (counts >= least)
    return list(zip(codes[keep].tolist(), rows[firsts[keep]].tolist(), strict=True))


def _kind_words(path: tuple[str, ...], nodes: int) -> set[str]:
    return {stem(t) for node in path[-nodes:] for t in tokens(node) if t not in STOPWORDS}


def _rarity(features: FeatureStore, word: str) -> float:
    """How rare the word is among category paths (log inverse share); 0 when common or absent."""
    number = features.word_id.get(word)
    held = len(features.postings("category_stems").rows_of(number)) if number is not None else 0
    if not held or held > COMMON * len(features):
        return 0.0
    return math.log(len(features) / held)


def _shared_words(
    features: FeatureStore,
    rows: np.ndarray,
    item: tuple[str, ...],
    path_of: Callable[[int], tuple[str, ...]],
) -> dict[str, float]:
    """The rare words of the kinds most of the item's products are filed under, weighed by share
    and rarity."""
    leaves = features.codes["leaf"][rows]
    share: dict[str, float] = {}
    for code, first in _leaves(features, rows):
        for word in _kind_words(path_of(first), ITEM_NODES) - set(item):
            share[word] = share.get(word, 0.0) + np.count_nonzero(leaves == code) / len(rows)
    out: dict[str, float] = {}
    for word, part in share.items():
        if part >= SHARED and (rarity := _rarity(features, word)):
            out[word] = rarity * part
    return out


def _parts(features: FeatureStore, item: tuple[str, ...]) -> dict[str, float]:
    """The two parts of a compound item word both of which products use ("swim" + "suit"),
    weighed by rarity, the last part more."""
    out: dict[str, float] = {}
    for word in item:
        for cut in range(PART, len(word) - PART + 1):
            head, tail = word[:cut], word[cut:]
            if features.word_id.get(head) is None or features.word_id.get(tail) is None:
                continue
            for part, weight in ((head, 1.0), (tail, HEAD)):
                if rarity := _rarity(features, part):
                    out[part] = max(out.get(part, 0.0), weight * rarity)
    return out


def _department_rows(features: FeatureStore, departments: tuple[str, ...]) -> np.ndarray:
    """The rows filed under the departments, once per feature store."""

    def rows() -> np.ndarray:
        wanted = [features.value_id[d] for d in departments if d in features.value_id]
        return np.flatnonzero(np.isin(features.codes["department"], wanted))

    return features.remembered(("department rows", departments), rows)


def department_leaves(features: FeatureStore, departments: tuple[str, ...]) -> frozenset[str]:
    """The names of the leaves the departments file products under, once per feature store."""

    def names() -> frozenset[str]:
        rows = _department_rows(features, departments)
        return frozenset(features.value_names[code] for code, _ in _leaves(features, rows))

    return features.remembered(("department leaves", departments), names)


def same_kind(leaves: frozenset[str], item: tuple[str, ...]) -> frozenset[str]:
    """The leaves whose names hold every stem of the item ("Down Jackets & Parkas" of a down
    jacket, where the categoriser read the men's "Down & Down Alternative")."""
    return frozenset(
        leaf
        for leaf in leaves
        if set(item) <= {stem(t) for t in tokens(leaf) if t not in STOPWORDS}
    )
