"""Which attribute values each candidate has, for question choice and options."""

from __future__ import annotations

from ..rank.features import Facets

PRICE_BANDS = ((0, 25, "under $25"), (25, 50, "$25-$50"), (50, 100, "$50-$100"), (100, float("inf"), "over $100"))


def facet_values(attribute: str, attrs: Facets) -> tuple[str, ...]:
    """The product's values under an ask_attribute name; () when unknown."""
    if attribute == "color":
        return attrs.colors
    if attribute == "material":
        return attrs.materials
    if attribute == "size":
        return attrs.sizes
    if attribute == "style":
        return ((attrs.department,) if attrs.department else ()) + attrs.styles
    if attribute == "brand":
        return (attrs.brand,) if attrs.brand else ()
    if attribute == "use_case":
        return attrs.use_cases
    if attribute == "feature":
        return (attrs.closure,) if attrs.closure else ()
    if attribute == "category":
        return (attrs.leaf,) if attrs.leaf else ()
    if attribute == "budget":
        return _price_band(attrs.price)
    return ()


def _price_band(price: float | None) -> tuple[str, ...]:
    if price is None:
        return ()
    for low, high, label in PRICE_BANDS:
        if low <= price < high:
            return (label,)
    return ()
