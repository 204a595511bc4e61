"""The derived attributes the index stores and searches, from `catalog.attributes`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ..catalog import attributes, vocabulary
from ..catalog.product import Product
from ..versions import source_hash


@dataclass(frozen=True, slots=True)
class Derived:
    attributes: dict[str, Any]  # Attributes.to_dict(), stored as JSON
    search_text: str  # canonical attribute words, indexed as the "attrs" field
    department: str  # lower-cased, "" when unknown; a filter column


def derive(product: Product) -> Derived:
    derived = attributes.derive(product)
    department = (derived.department or "").strip().lower()
    return Derived(derived.to_dict(), derived.search_text(), department)


def attributes_from_dict(data: dict[str, Any]) -> attributes.Attributes:
    return attributes.Attributes.from_dict(data)


@cache
def attributes_version() -> str:
    """A hash of the derivation code and its vocabulary: when they change, stored attributes are
    stale."""
    return source_hash(attributes.__file__, vocabulary.__file__, vocabulary.VOCABULARY_PATH)
