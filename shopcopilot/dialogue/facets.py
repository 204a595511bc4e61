"""Which attribute values each candidate has, for question choice and options."""

from __future__ import annotations

from ..rank.view import ProductView

PRICE_BANDS = ((0, 25, "under $25"), (25, 50, "$25-$50"), (50, 100, "$50-$100"), (100, float("inf"), "over $100"))


def facet_values(attribute: str, view: ProductView) -> tuple[str, ...]:
    """The product's values under an ask_attribute name; () when unknown."""
    attrs = view.attributes
    if attribute == "color":
        return attrs.colors
    if attribute == "material":
        return attrs.material_names
    if attribute == "size":
        return attrs.sizes
    if attribute == "style":
        return ((attrs.department,) if attrs.department else ()) + attrs.styles
    if attribute == "brand":
        return (attrs.brand or view.product.store,) if (attrs.brand or view.product.store) else ()
    if attribute == "use_case":
        return attrs.use_cases
    if attribute == "feature":
        return (attrs.closure,) if attrs.closure else ()
    if attribute == "category":
        return (attrs.leaf,) if attrs.leaf else ()
    if attribute == "budget":
        return _price_band(view.price)
    return ()


def _price_band(price: float | None) -> tuple[str, ...]:
    if price is None:
        return ()
    for low, high, label in PRICE_BANDS:
        if low <= price < high:
            return (label,)
    return ()
