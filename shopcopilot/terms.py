"""The words every stage shares: what a value is about, and how a requirement stands.

A `Facet` is the kind of value found in text (a product's or a shopper's): a vocabulary
table, a store name or a price range. An `Attribute` is what the shopper state and the
official protocol speak of (`ask_attribute`); several facets answer one attribute, and
`QUESTION_FOR` is the one place that says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType


class Facet(StrEnum):
    COLOR = "color"
    MATERIAL = "material"
    DEPARTMENT = "department"
    SIZE = "size"
    FIT = "fit"
    WIDTH = "width"
    CLOSURE = "closure"
    USE_CASE = "use_case"
    STYLE = "style"
    BRAND = "brand"  # a store name, from the catalog rather than the vocabulary file
    BUDGET = "budget"  # a price range, read by the budget parser


class Attribute(StrEnum):
    CATEGORY = "category"
    MATERIAL = "material"
    COLOR = "color"
    SIZE = "size"
    STYLE = "style"
    BRAND = "brand"
    BUDGET = "budget"
    FEATURE = "feature"
    USE_CASE = "use_case"
    OTHER = "other"


class Status(StrEnum):
    """Where a requirement stands; only active ones steer the search."""

    ACTIVE = "active"
    REPLACED = "replaced"  # a later value or a change of mind took its place
    NEGATED = "negated"  # the shopper turned it down
    UNCONSTRAINED = "unconstrained"  # the shopper said they don't mind


class Level(StrEnum):
    HARD = "hard"  # a requirement
    SOFT = "soft"  # a preference
    GOAL = "goal"  # a price to come close to ("around $50"), not a limit


# The attribute a facet's value answers. Department and fit are asked about as style: the
# official protocol has no department question, and fit ("slim", "relaxed") reads as a style.
QUESTION_FOR: Mapping[Facet, Attribute] = MappingProxyType(
    {
        Facet.COLOR: Attribute.COLOR,
        Facet.MATERIAL: Attribute.MATERIAL,
        Facet.SIZE: Attribute.SIZE,
        Facet.WIDTH: Attribute.SIZE,
        Facet.DEPARTMENT: Attribute.STYLE,
        Facet.STYLE: Attribute.STYLE,
        Facet.FIT: Attribute.STYLE,
        Facet.CLOSURE: Attribute.FEATURE,
        Facet.USE_CASE: Attribute.USE_CASE,
        Facet.BRAND: Attribute.BRAND,
        Facet.BUDGET: Attribute.BUDGET,
    }
)
