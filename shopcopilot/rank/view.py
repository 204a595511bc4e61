"""ProductView: what the reranker needs to know about a product, computed once per process.

Views are built from the index store's stored records, which were normalised and
validated when the index was built, so decoding here trusts them and skips the
loader's checks: building a view is on the path of every turn.
"""

from __future__ import annotations

import gc
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..catalog.attributes import Attributes, MaterialShare
from ..catalog.product import Product
from ..catalog.vocabulary import Measure
from ..state.lexicon import path_stems

# Sellers put a product's main selling points first; a requirement met there is met prominently.
LEAD_FEATURES = 4
# A whole product is tokenised in one pass as bytes: fields joined by a NUL byte, every byte
# that is not [a-z0-9] (state.text.tokens' token) turned into a space, non-ASCII first into "?".
_FIELD_BREAK = "\x00"
_SPACE_OUT = bytes(c if (48 <= c <= 57 or 97 <= c <= 122 or c == 0) else 32 for c in range(256))


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
    token_strings = _token_strings(fields)
    phrase_text = " | ".join(t for t in token_strings if t)
    category_stems = _category_stems(product.categories)
    return ProductView(
        parent_asin=product.parent_asin,
        product=product,
        attributes=attributes,
        category_stems=category_stems,
        words=frozenset(phrase_text.split()) | category_stems,
        phrase_text=f" {phrase_text} ",
        popularity=math.log1p(product.rating_number or 0) / math.log1p(100_000),
        material_names=attributes.material_names,
        lead_keys=tuple(f" {t} " for t in token_strings[1:1 + LEAD_FEATURES]),
    )


def _token_strings(fields: list[str]) -> list[str]:
    """Each field's tokens joined by single spaces (" ".join(tokens(field))), in one pass."""
    text = _FIELD_BREAK.join(f.replace(_FIELD_BREAK, " ") for f in fields).lower()
    spaced = text.encode("ascii", "replace").translate(_SPACE_OUT).decode("ascii")
    return [" ".join(part.split()) for part in spaced.split(_FIELD_BREAK)]


@lru_cache(maxsize=4096)
def _category_stems(categories: tuple[str, ...]) -> frozenset[str]:
    # Thousands of products share a few hundred category paths.
    return frozenset(path_stems(categories))


def stored_view(record_json: str, attributes_json: str) -> ProductView:
    """A view from one store row (its record and attributes as stored JSON)."""
    return build_view(_stored_product(json.loads(record_json)), _stored_attributes(json.loads(attributes_json)))


def _stored_product(record: dict[str, Any]) -> Product:
    return Product(
        parent_asin=record["parent_asin"],
        title=record["title"],
        features=tuple(record["features"]),
        description=tuple(record["description"]),
        price=record["price"],
        categories=tuple(record["categories"]),
        details=record["details"],
        average_rating=record["average_rating"],
        rating_number=record["rating_number"],
        store=record["store"],
    )


def _stored_attributes(data: dict[str, Any]) -> Attributes:
    return Attributes(
        category_path=tuple(data["category_path"]),
        leaf=data["leaf"],
        department=data["department"],
        materials=tuple(MaterialShare(m["name"], m["percent"]) for m in data["materials"]),
        colors=tuple(data["colors"]),
        sizes=tuple(data["sizes"]),
        closure=data["closure"],
        brand=data["brand"],
        price=data["price"],
        dimensions=tuple(Measure(tuple(d["values"]), d["unit"], d["text"]) for d in data["dimensions"]),
        use_cases=tuple(data["use_cases"]),
        styles=tuple(data["styles"]),
    )


class ViewCache:
    """Views built on demand from the index store and kept: a product's view never changes."""

    def __init__(self, store) -> None:
        self._store = store
        self._views: dict[str, ProductView] = {}

    def get_many(self, asins: list[str]) -> dict[str, ProductView]:
        missing = [a for a in asins if a not in self._views]
        if missing:
            for asin, (record, attributes) in self._store.stored_json_many(missing).items():
                self._views[asin] = stored_view(record, attributes)
            # Views live as long as the process: move them out of the cyclic collector's way,
            # or its full passes over a growing cache stall a turn for hundreds of ms.
            gc.freeze()
        return {a: self._views[a] for a in asins if a in self._views}
