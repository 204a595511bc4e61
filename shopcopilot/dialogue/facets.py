"""Which attribute values each candidate has, for question choice and options."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

from ..index.features import Facets
from ..terms import Attribute

PRICE_BANDS = (
    (0, 25, "under $25"),
    (25, 50, "$25-$50"),
    (50, 100, "$50-$100"),
    (100, float("inf"), "over $100"),
)

ValuesOf = Callable[[Facets], tuple[str, ...]]


def _price_band(attrs: Facets) -> tuple[str, ...]:
    price = attrs.price
    if price is None:
        return ()
    for low, high, label in PRICE_BANDS:
        if low <= price < high:
            return (label,)
    return ()


def _one(name: str) -> ValuesOf:
    get = attrgetter(name)
    return lambda attrs: (value,) if (value := get(attrs)) else ()


def _style(attrs: Facets) -> tuple[str, ...]:
    return ((attrs.department,) if attrs.department else ()) + attrs.styles


# A product's values under each question, the converse of terms.QUESTION_FOR (product sizes
# hold fit and width words too). Looked up once per question, then applied to every
# candidate: question choice reads a few thousand values a turn.
VALUES_OF: dict[str, ValuesOf] = {
    Attribute.COLOR: attrgetter("colors"),
    Attribute.MATERIAL: attrgetter("materials"),
    Attribute.SIZE: attrgetter("sizes"),
    Attribute.STYLE: _style,
    Attribute.BRAND: _one("brand"),
    Attribute.USE_CASE: attrgetter("use_cases"),
    Attribute.FEATURE: _one("closure"),
    Attribute.CATEGORY: _one("leaf"),
    Attribute.BUDGET: _price_band,
}


def values_of(attribute: str) -> ValuesOf:
    """The function giving a product's values under an ask_attribute name (() when unknown)."""
    return VALUES_OF.get(attribute, _no_values)


def _no_values(attrs: Facets) -> tuple[str, ...]:
    return ()
