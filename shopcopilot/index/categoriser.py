"""The query categoriser: which kind of item a shopper's words name, learnt from the catalog.

Trained once per index (on first use, like the ranking features) from the catalog's own
products: each title is a document labelled with its category path, departments left out
(who an item is for is the department slot, never the item). A title becomes a TF-IDF vector
of its word stems, its stem pairs and its head noun (English names the thing last and
qualifies it after: "rain boots" are boots, "dress shoes for a wedding" are shoes), and each
path's titles average into one unit-length centroid (a Rocchio classifier: a linear model whose
weights are the centroids). A text's cosine to every centroid, through a softmax, is a
distribution over the paths; a node's mass is the mass of the paths through it.

`read()` names the most specific node holding enough of that mass, preferring a node the text
names in full ("shirts" are Shirts, not the T-Shirts most shirts in a catalog are), and the
most likely leaf. Training is bounded at any catalog size: at most `PER_PATH` titles per path
(a seeded reservoir over the streamed store) are learnt from. The model is saved beside the
index with the code version, the recipe and the index it was trained on; a mismatch retrains.
"""

from __future__ import annotations

import json
import logging
import math
import os
import pickle
import random
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.naive_bayes import MultinomialNB
from sklearn.preprocessing import normalize

from ..versions import source_hash
from . import text as text_module
from .store import read_only_connection
from .text import ROOT_CATEGORY, STOPWORDS, stem, tokens

log = logging.getLogger(__name__)

CATEGORISER_PREFIX = "categoriser-"
# The recipe: what a training document is and how the model reads it. Part of the fingerprint.
RECIPE: dict[str, Any] = {
    "document": "title",
    "label": "category path without the root and department nodes",
    "features": "tf-idf (sublinear) of stems, stem pairs and the head noun; min_df 2",
    "model": "centroid",
    "path_names_repeat": 3,
    "per_path": 400,
    "seed": 7,
}
PER_PATH = RECIPE["per_path"]  # titles learnt per path: bounds time and memory at any size
PATH_NAMES_REPEAT = RECIPE["path_names_repeat"]  # a path's own names, as extra documents
TEMPERATURE = 60.0  # cosines are close together; this spreads them into a usable distribution
NODE_MASS = 0.5  # a node is read when its paths hold this much of the distribution
NAMED_MASS = 0.3  # ... or this much when the text names the node in full
MIN_CLASSES = 2
# Who an item is for, as category nodes ("Women", "Baby Girls"): the department slot.
WHO_WORDS = frozenset({"women", "men", "girl", "boy", "baby", "kid", "unisex"})
# Where a title's or a request's item name ends and its qualifiers start.
_QUALIFIERS = re.compile(
    r"\s(?:for|with|size|sizes|fits?|by|from|in|that|which|under|without|to)\s|\s[-–—|(]\s?|,"
)
_CONJUNCTS = re.compile(r"&|,|\band\b")


@dataclass(frozen=True, slots=True)
class Reading:
    """What the categoriser reads in a text: the node it names (None when no node holds enough
    of the distribution) with its mass, and the most likely path with its probability."""

    node: str | None
    node_p: float
    path: tuple[str, ...]
    leaf_p: float

    @property
    def leaf(self) -> str:
        return self.path[-1] if self.path else ""

    def as_data(self) -> dict[str, Any]:
        """The reading as the state stores it (plain JSON)."""
        return {
            "node": self.node,
            "node_p": round(self.node_p, 3),
            "leaf": self.leaf,
            "leaf_p": round(self.leaf_p, 3),
        }


class Analyzer:
    """A text's features: stems without stop words, adjacent stem pairs, and `^head`, the last
    head noun before the qualifiers start (a class, not a closure, so the model pickles)."""

    def __init__(self, heads: Iterable[str]) -> None:
        self.heads = frozenset(heads)

    def __call__(self, text: str) -> list[str]:
        words = [stem(t) for t in tokens(text) if t not in STOPWORDS]
        features = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
        head = self.head(text)
        return features + [f"^{head}"] if head else features

    def head(self, text: str) -> str | None:
        """The item's head noun: "dress" in "sweater dress", "shoe" in "dress shoes for a
        wedding"; None when the name before the qualifiers has no catalog head noun."""
        name = _QUALIFIERS.split(f" {text.lower()} ", maxsplit=1)[0]
        return next((s for s in map(stem, reversed(tokens(name))) if s in self.heads), None)


class Categoriser:
    """A trained model: the vectorizer, one weight column per path, and the node tables read()
    decodes with (worked out again on loading, not saved)."""

    def __init__(
        self,
        vectorizer: TfidfVectorizer,
        weights: sparse.csr_matrix,  # features x paths: centroids, or NB log-probabilities
        paths: list[tuple[str, ...]],  # department-free category paths, one per class
        items: frozenset[str],  # the nodes that name a kind of item (see `kinds_of_item`)
        kind: str = "centroid",
        bias: np.ndarray | None = None,  # per path, added to the scores (NB's log prior)
    ) -> None:
        self.vectorizer, self.weights, self.paths, self.items, self.kind, self.bias = (
            vectorizer,
            weights,
            paths,
            items,
            kind,
            bias,
        )
        self.nodes = sorted({name for path in paths for name in path})
        column = self._column = {name: i for i, name in enumerate(self.nodes)}
        rows = [i for i, path in enumerate(paths) for _ in set(path)]
        cols = [column[name] for path in paths for name in set(path)]
        # nodes x paths, 1 where the path runs through the node
        self.path_nodes = sparse.csr_matrix(
            (np.ones(len(rows)), (cols, rows)), shape=(len(self.nodes), len(paths))
        )
        # The nodes below each node on some path: a node is more specific than those above it.
        self.below: list[set[int]] = [set() for _ in self.nodes]
        for path in paths:
            for position, name in enumerate(path):
                self.below[column[name]].update(column[n] for n in path[position + 1 :])
        # A node is named by a text that says all the words of its name or of one of its parts
        # ("dangle earrings" names Drop & Dangle); only kinds of item are read as the item.
        self.node_parts = [
            [p for p in map(_stems, _CONJUNCTS.split(name)) if p] if name in items else []
            for name in self.nodes
        ]
        self.is_item = np.array([name in items for name in self.nodes])
        # Paths through no kind of item: store pages ("Designer Shoes & Handbags").
        self.store_pages = np.asarray(self.path_nodes[self.is_item].sum(axis=0)).ravel() == 0
        self.nodes_with: dict[str, list[int]] = {}  # word -> the nodes with it in their name
        for i, parts in enumerate(self.node_parts):
            for word in set().union(*parts) if parts else ():
                self.nodes_with.setdefault(word, []).append(i)
        self.vocabulary: dict[str, int] = vectorizer.vocabulary_
        self.idf: np.ndarray = vectorizer.idf_
        # paths x head nouns, 1 where one of the path's nodes is named by the head noun
        heads = [sorted(head_nouns([path])) for path in paths]
        self.head_column = {h: i for i, h in enumerate(sorted({h for hs in heads for h in hs}))}
        rows = [i for i, hs in enumerate(heads) for _ in hs]
        cols = [self.head_column[h] for hs in heads for h in hs]
        path_heads = sparse.csc_matrix(
            (np.ones(len(rows)), (rows, cols)), shape=(len(paths), len(self.head_column))
        ).toarray()
        self.on_head = {h: path_heads[:, i] for h, i in self.head_column.items()}
        self._leaves: dict[str, frozenset[str]] = {}

    def has_node(self, node: str) -> bool:
        return node in self._column

    def paths_through(self, node: str) -> list[int]:
        return self.path_nodes[self._column[node]].indices.tolist()

    def leaves_under(self, node: str) -> frozenset[str]:
        """The last node of every path through `node`: what a product filed under it ends in."""
        if node not in self._leaves:
            self._leaves[node] = frozenset(path[-1] for path in self.paths if node in path)
        return self._leaves[node]

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.vectorizer, self.weights, self.paths, self.items, self.kind, self.bias)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    def distribution(self, text: str) -> np.ndarray:
        """The probability of each path (in `paths` order) given the text."""
        scores = np.zeros(len(self.paths))
        weights = self.weights
        for column, value in self._vector(text):
            start, end = weights.indptr[column], weights.indptr[column + 1]
            scores[weights.indices[start:end]] += value * weights.data[start:end]
        if self.kind == "centroid":
            scores *= TEMPERATURE
        elif self.bias is not None:
            scores += self.bias
        odds = np.exp(scores - scores.max())
        return odds / odds.sum()

    def _vector(self, text: str) -> list[tuple[int, float]]:
        """The text's TF-IDF entries (column, value), as the fitted vectorizer makes them
        (sublinear counts times idf, unit length) without its per-call checks, which cost more
        than the rest of a read."""
        counts: dict[int, int] = {}
        for feature in self.vectorizer.analyzer(text):
            if (column := self.vocabulary.get(feature)) is not None:
                counts[column] = counts.get(column, 0) + 1
        values = [(1.0 + math.log(n)) * self.idf[column] for column, n in counts.items()]
        norm = math.sqrt(sum(v * v for v in values)) or 1.0
        return [(column, v / norm) for column, v in zip(counts, values, strict=True)]

    def read(self, text: str) -> Reading:
        """The node the text names and the most likely path (see the module's docstring)."""
        probabilities = self.distribution(text)
        best = int(probabilities.argmax())
        node, mass = self._node(probabilities, _stems(text), self.vectorizer.analyzer.head(text))
        return Reading(node, mass, self.paths[best], float(probabilities[best]))

    def _node(
        self, probabilities: np.ndarray, said: frozenset[str], head: str | None
    ) -> tuple[str | None, float]:
        """The most specific node (none of the others lies below it; then the heaviest) among the
        first tier that has one:
        named in full by the text, on the paths of its head noun ("sweater dress": Dresses, not
        Sweaters; "running shoes": Running, a kind of shoe); named in full; holding most of the
        mass on the head's paths; holding most of the mass; else a kind named over a store page
        (`_kind_over_a_page`)."""
        on_head = self.on_head.get(head) if head else None
        if on_head is None:
            on_head = np.zeros(len(self.paths))
        mass = self.path_nodes @ probabilities
        head_mass = self.path_nodes @ (probabilities * on_head)
        named = np.zeros(len(self.nodes), dtype=bool)
        for i in {i for word in said for i in self.nodes_with.get(word, ())}:
            named[i] = any(part <= said for part in self.node_parts[i])
        for weight, wanted in (
            (head_mass, named & (head_mass >= NAMED_MASS)),
            (mass, named & (mass >= NAMED_MASS)),
            (head_mass, self.is_item & (head_mass >= NODE_MASS)),
            (mass, self.is_item & (mass >= NODE_MASS)),
        ):
            if wanted.any():
                candidates = set(np.flatnonzero(wanted).tolist())
                lowest = [i for i in candidates if not self.below[i] & candidates] or candidates
                pick = max(lowest, key=lambda i: weight[i])
                return self.nodes[pick], float(weight[pick])
        return self._kind_over_a_page(probabilities, mass, named, said, head)

    def _kind_over_a_page(
        self,
        probabilities: np.ndarray,
        mass: np.ndarray,
        named: np.ndarray,
        said: frozenset[str],
        head: str | None,
    ) -> tuple[str | None, float]:
        """Where a store page holds most of the mass ("handbag": Designer Shoes & Handbags), the
        heaviest kind of item named in full by words holding the head noun (Handbags &
        Wallets), with the page's mass: the words that name the kind drew it there. Not where
        the page says more of the shopper's words ("tactical boots": then they speak alone)."""
        best = int(probabilities.argmax())
        if not self.store_pages[best]:
            return None, 0.0
        page = _named_words(said, map(_stems, _CONJUNCTS.split(self.paths[best][-1])))
        kinds = [
            i
            for i in np.flatnonzero(named).tolist()
            if any(head in part for part in self.node_parts[i])
            and _named_words(said, self.node_parts[i]) >= page
        ]
        if not kinds:
            return None, 0.0
        kind = max(kinds, key=lambda i: mass[i])
        return self.nodes[kind], float(mass[kind] + probabilities[best])


def _named_words(said: frozenset[str], parts: Iterable[frozenset[str]]) -> int:
    """How many of the shopper's words the longest part of a name they say in full holds."""
    return max((len(part) for part in parts if part and part <= said), default=0)


# -- training ---------------------------------------------------------------------------------


def train(
    documents: Iterable[tuple[str, tuple[str, ...]]], kind: str = "centroid"
) -> Categoriser | None:
    """A categoriser from (title, full category path) pairs; None when the catalog has fewer
    than two kinds of item. `kind`: "centroid" (the default) or "nb" (multinomial naive Bayes,
    kept to compare against)."""
    titles, labels, items = _sample(documents)
    paths = sorted(set(labels))
    if len(paths) < MIN_CLASSES:
        return None
    for path in paths:  # the path's own names teach the words shoppers borrow from the shop
        titles += [" ".join(path[-2:])] * PATH_NAMES_REPEAT
        labels += [path] * PATH_NAMES_REPEAT
    vectorizer = TfidfVectorizer(
        analyzer=Analyzer(head_nouns(paths)), sublinear_tf=True, min_df=2, dtype=np.float32
    )
    matrix = vectorizer.fit_transform(titles)
    column = {path: i for i, path in enumerate(paths)}
    y = np.array([column[label] for label in labels])
    if kind == "nb":
        model = MultinomialNB(alpha=0.01, fit_prior=False).fit(matrix, y)
        weights = sparse.csr_matrix(model.feature_log_prob_.T.astype(np.float32))
        return Categoriser(vectorizer, weights, paths, items, "nb", model.class_log_prior_)
    members = sparse.csr_matrix(
        (np.ones(len(y), dtype=np.float32), (y, np.arange(len(y)))),
        shape=(len(paths), len(y)),
    )
    centroids = normalize(members @ matrix)  # paths x features, unit length
    return Categoriser(vectorizer, sparse.csr_matrix(centroids.T), paths, items)


def _sample(
    documents: Iterable[tuple[str, tuple[str, ...]]],
) -> tuple[list[str], list[tuple[str, ...]], frozenset[str]]:
    """At most PER_PATH titles per item path (a seeded reservoir over the stream), and the nodes
    that name kinds of item."""
    rng = random.Random(RECIPE["seed"])
    kept: dict[tuple[str, ...], list[str]] = {}
    seen: dict[tuple[str, ...], int] = {}
    raw_paths: set[tuple[str, ...]] = set()
    for title, categories in documents:
        path = item_path(categories)
        if not path or not title:
            continue
        # A store page ("Designer Shoes & Handbags") is learnt too, though never read as the
        # item: the words that lead there ("designer", "made in") then read no kind of item.
        raw_paths.add(categories)
        count = seen[path] = seen.get(path, 0) + 1
        bucket = kept.setdefault(path, [])
        if len(bucket) < PER_PATH:
            bucket.append(title)
        elif (slot := rng.randrange(count)) < PER_PATH:
            bucket[slot] = title
    pairs = [(title, path) for path in sorted(kept) for title in kept[path]]
    return [t for t, _ in pairs], [p for _, p in pairs], kinds_of_item(raw_paths)


@lru_cache(maxsize=8192)
def item_path(categories: tuple[str, ...]) -> tuple[str, ...]:
    """The path's nodes that say what the item is: no root, no department ("Women", "Baby Boys")."""
    return tuple(
        part
        for part in categories
        if part.strip().lower() != ROOT_CATEGORY and not _stems(part) <= WHO_WORDS
    )


def kinds_of_item(all_paths: Iterable[tuple[str, ...]]) -> frozenset[str]:
    """The nodes that name a kind of item: those below a department node on some path ("Women >
    Shoes > Boots"), and in paths without one, the nodes of two or more (a lone node is a store
    page such as "Free One-Day Shipping on Jewelry, Watches, & More") that never sit above a
    department (in "Boot Shop > Women > Fashion > Chelsea" the shop is a way into the store)."""
    below: set[str] = set()
    free: set[str] = set()
    above: set[str] = set()
    for categories in all_paths:
        parts = [p for p in categories if p.strip().lower() != ROOT_CATEGORY]
        last = max((i for i, p in enumerate(parts) if _stems(p) <= WHO_WORDS), default=-1)
        if last >= 0:
            below.update(parts[last + 1 :])
            above.update(p for p in parts[:last] if not _stems(p) <= WHO_WORDS)
        elif len(parts) >= 2:
            free.update(parts)
    return frozenset(below | (free - above))


def head_nouns(paths: Iterable[tuple[str, ...]]) -> frozenset[str]:
    """The plural last word of each node's name and of each part joined by "&" or a comma
    ("Down Jackets & Parkas": jacket, parka): a shop names its kinds of item in the plural."""
    heads = set()
    for path in paths:
        for part in path:
            for conjunct in _CONJUNCTS.split(part):
                words = [t for t in tokens(conjunct) if t not in STOPWORDS]
                if words and words[-1].endswith("s") and not words[-1].endswith("ss"):
                    heads.add(stem(words[-1]))
    return frozenset(heads - WHO_WORDS)


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem(t) for t in tokens(text) if t not in STOPWORDS)


# -- persistence beside the index -------------------------------------------------------------


@lru_cache(maxsize=1)
def categoriser_version() -> str:
    """The code and recipe the model comes from: when either changes, a saved model is stale."""
    return source_hash(__file__, text_module.__file__)


def fingerprint(store: Any, folder: Path) -> dict[str, Any]:
    """What a saved model must match: this code, this recipe, this index (its folder is named by
    the catalog's content hash and the index code) and its product count."""
    return {
        "version": categoriser_version(),
        "recipe": RECIPE,
        "index": folder.name,
        "products": len(store),
    }


def model_path(folder: Path) -> Path:
    return folder / f"{CATEGORISER_PREFIX}{categoriser_version()}.pkl"


def load_or_train(store: Any, folder: Path) -> Categoriser | None:
    """The index's categoriser, trained on first use and saved in its folder."""
    path, wanted = model_path(folder), fingerprint(store, folder)
    saved = _load(path)
    if saved is not None and saved.get("fingerprint") == wanted:
        return saved["model"]
    started = time.perf_counter()
    model = train(catalog_documents(store.path))
    seconds = time.perf_counter() - started
    log.info("categoriser trained on %s products in %.1f s", len(store), seconds)
    _save(path, {"fingerprint": wanted, "model": model, "train_seconds": round(seconds, 2)})
    for stale in folder.glob(f"{CATEGORISER_PREFIX}*.pkl"):
        if stale != path:
            stale.unlink(missing_ok=True)  # from older code: never read again
    return model


def ensure_trained(store: Any, folder: Path) -> None:
    """Train and save the categoriser unless a matching one is saved (not loaded: cheap)."""
    if not model_path(folder).is_file():
        load_or_train(store, folder)


def describe(store: Any, folder: Path) -> str:
    """One line for `index build`: the index's categoriser (trained now if it is not saved), its
    size on disk and how long its training took."""
    model = load_or_train(store, folder)
    saved, path = _load(model_path(folder)) or {}, model_path(folder)
    if model is None:
        return "none (the catalog has fewer than two kinds of item)"
    size = path.stat().st_size / 1e6 if path.is_file() else 0.0
    return (
        f"{len(model.paths):,} category paths, {len(model.vocabulary):,} features, "
        f"{size:.1f} MB, trained in {saved.get('train_seconds', 0.0):.1f} s"
    )


def catalog_documents(store_path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(title, category path) of every product, streamed from the index store."""
    db = read_only_connection(store_path)
    try:
        sql = (
            "SELECT json_extract(record, '$.title'), json_extract(record, '$.categories')"
            " FROM products ORDER BY row"
        )
        for title, categories in db.execute(sql):
            yield title or "", _path(categories)
    finally:
        db.close()


@lru_cache(maxsize=8192)
def _path(raw: str | None) -> tuple[str, ...]:
    return tuple(json.loads(raw)) if raw else ()


def _load(path: Path) -> Mapping[str, Any] | None:
    try:
        with path.open("rb") as handle:
            saved = pickle.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        return None  # unreadable or from other code: retrain
    return saved if isinstance(saved, dict) else None


def _save(path: Path, saved: dict[str, Any]) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        with temp.open("wb") as handle:
            pickle.dump(saved, handle, protocol=pickle.HIGHEST_PROTOCOL)
        temp.replace(path)  # atomic: a concurrent reader sees no file or the whole new one
    except OSError:
        temp.unlink(missing_ok=True)  # a read-only index folder only costs a retrain next time
