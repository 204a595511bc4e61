"""The searchable fields, how a product fills them, and their BM25 weights."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..catalog.product import Product

# Order matters: it is the FTS5 column order, so bm25() weights follow it.
SEARCH_FIELDS: tuple[str, ...] = (
    "title",
    "categories",
    "features",
    "details",
    "store",
    "description",
    "attrs",
)

# The organizer's starter: FTS5 bm25 with these column weights and no attribute column.
STARTER_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "title": 6.0,
        "categories": 4.0,
        "features": 2.5,
        "details": 2.5,
        "store": 1.5,
        "description": 1.0,
        "attrs": 0.0,
    }
)

# The agent's default: the starter's balance plus the canonical attribute words,
# weighted like categories because they restate category, department, colour...
DEFAULT_WEIGHTS: Mapping[str, float] = MappingProxyType({**STARTER_WEIGHTS, "attrs": 3.0})


def resolve_weights(
    overrides: Mapping[str, float] | None, base: Mapping[str, float]
) -> dict[str, float]:
    """`base` with `overrides` applied; unknown fields and negative weights are errors."""
    weights = dict(base)
    for name, value in (overrides or {}).items():
        if name not in weights:
            raise ValueError(
                f"unknown search field {name!r} in weights; known: {', '.join(SEARCH_FIELDS)}"
            )
        if not isinstance(value, (int, float)) or value < 0 or value != value:
            raise ValueError(f"weight for {name!r} must be a number >= 0, got {value!r}")
        weights[name] = float(value)
    return weights


def check_fields(fields: tuple[str, ...]) -> None:
    unknown = [name for name in fields if name not in SEARCH_FIELDS]
    if unknown:
        raise ValueError(
            f"unknown search field(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(SEARCH_FIELDS)}"
        )


def field_values(product: Product, attrs_text: str) -> dict[str, list[str]]:
    """Each search field's text values for one product (lists keep items apart)."""
    return {
        "title": [product.title],
        "categories": list(product.categories),
        "features": list(product.features),
        # "key value", as the official intent card reads details.
        "details": [f"{key} {value}".strip() for key, value in product.details.items()],
        "store": [product.store] if product.store else [],
        "description": list(product.description),
        "attrs": [attrs_text] if attrs_text else [],
    }
