"""ProductView: what the reranker needs to know about a product, computed once."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ..catalog.attributes import Attributes
from ..catalog.product import Product
from ..state.lexicon import path_stems
from ..state.text import tokens


@dataclass(frozen=True, slots=True)
class ProductView:
    parent_asin: str
    product: Product
    attributes: Attributes
    category_stems: frozenset[str]
    words: frozenset[str]  # every distinct word of its text, as written (lower case)
    phrase_text: str  # " tok tok | tok ... ": a fragment matches if its token string is a substring
    popularity: float  # log-scaled rating count, 0..~1
    material_names: tuple[str, ...]
    lead_keys: tuple[str, ...]  # the first feature lines as token strings: what the product leads with

    @property
    def price(self) -> float | None:
        return self.product.price

    def has(self, stemmed: str) -> bool:
        """Does the product's text or category path use this word, in any plural form?
        (Checking a few forms of one query word is cheaper than stemming every product word.)"""
        return not self.words.isdisjoint(word_forms(stemmed))


@lru_cache(maxsize=100_000)
def word_forms(stemmed: str) -> frozenset[str]:
    forms = {stemmed, stemmed + "s", stemmed + "es"}
    if stemmed.endswith("y"):
        forms.add(stemmed[:-1] + "ies")
    return frozenset(forms)


def build_view(product: Product, attributes: Attributes) -> ProductView:
    fields = [product.title, *product.features, *(f"{k} {v}" for k, v in product.details.items()),
              *product.description, product.store]
    token_lists = [tokens(text) for text in fields]
    phrase_text = " | ".join(" ".join(t) for t in token_lists if t)
    category_stems = frozenset(path_stems(product.categories))
    return ProductView(
        parent_asin=product.parent_asin,
        product=product,
        attributes=attributes,
        category_stems=category_stems,
        words=frozenset(phrase_text.split()) | category_stems,
        phrase_text=f" {phrase_text} ",
        popularity=math.log1p(product.rating_number or 0) / math.log1p(100_000),
        material_names=attributes.material_names,
        lead_keys=tuple(f" {' '.join(t)} " for t in token_lists[1:1 + LEAD_FEATURES]),
    )


# Sellers put a product's main selling points first; a requirement met there is met prominently.
LEAD_FEATURES = 4


class ViewCache:
    """Views built on demand from the index store and kept: a product's view never changes."""

    def __init__(self, store) -> None:
        self._store = store
        self._views: dict[str, ProductView] = {}

    def get_many(self, asins: list[str]) -> dict[str, ProductView]:
        missing = [a for a in asins if a not in self._views]
        if missing:
            for asin, (product, attributes) in self._store.get_many_with_attributes(missing).items():
                self._views[asin] = build_view(product, attributes)
        return {a: self._views[a] for a in asins if a in self._views}
