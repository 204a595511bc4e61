"""A vague shopper gets a spread; a pick from it narrows to that product's neighbourhood.

A shopper who answers "not sure", "whatever", "no idea" several times in a row cannot be
narrowed by questions; a list of ten near-twins does not help them either. After
`RankWeights.spread_after` blank turns (turns that added nothing to the state) the list
shown is a spread instead: each next card is the best-scored of the top candidates that
adds the most not yet shown among leaf category, brand and price band. The reply invites a
pick ("the second one"), and a pick then anchors the ranking on the product picked (leaf,
shared values, price) as "more like that one" does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..index.features import FeatureStore
from ..state.model import ShoppingState

PRICE_BANDS = np.array([15.0, 30.0, 60.0, 120.0, 250.0])  # edges, in dollars
POOL = 40  # the best candidates a spread is chosen from


def blank_streak(state: ShoppingState) -> int:
    """How many of the latest turns added nothing to the state (no value, budget, words,
    rejection, critique, or who it is for): "not sure", "whatever", "no idea"."""
    said = {c.source_turn for c in state.constraints}
    said |= {f.source_turn for f in state.fragments}
    said |= {r.source_turn for r in state.rejected}
    said |= {r.turn for r in state.critiques}
    audience = state.audience
    said |= {f.source_turn for f in (audience.recipient, audience.age_group, audience.gender) if f}
    streak = 0
    for turn in reversed(state.history):
        if turn.turn in said:
            break
        streak += 1
    return streak


def spread_order(features: FeatureStore, rows: Sequence[int], width: int) -> list[int]:
    """Indices into `rows` (best first): the first `width` chosen greedily, each the best of
    the first POOL adding the most new among leaf, brand and price band; then the rest."""
    head = np.asarray(rows[:POOL], dtype=np.int64)
    keys = _keys(features, head)
    seen: list[set[int]] = [set() for _ in keys]
    left, chosen = list(range(len(head))), []
    for _ in range(min(width, len(head))):
        best = max(left, key=lambda i: (_novelty(keys, seen, i), -i))
        chosen.append(best)
        left.remove(best)
        for column, values in zip(keys, seen, strict=True):
            if column[best] >= 0:
                values.add(int(column[best]))
    return chosen + left + list(range(len(head), len(rows)))


def _keys(features: FeatureStore, rows: np.ndarray) -> list[np.ndarray]:
    """Per candidate: its leaf, brand (else store) and price band; -1 where unknown."""
    brand = features.codes["brand_key"][rows]
    brand = np.where(brand >= 0, brand, features.codes["store_key"][rows])
    price = features.price[rows]
    band = np.where(np.isnan(price), -1, np.searchsorted(PRICE_BANDS, np.nan_to_num(price)))
    return [features.codes["leaf"][rows], brand, band]


def _novelty(keys: list[np.ndarray], seen: list[set[int]], i: int) -> int:
    """A new kind of item counts for more than a new brand and a new price band together."""
    return sum(
        weight
        for weight, column, values in zip(NOVELTY_WEIGHTS, keys, seen, strict=True)
        if column[i] >= 0 and int(column[i]) not in values
    )


NOVELTY_WEIGHTS = (3, 1, 1)  # leaf, brand, price band


def picked(state: ShoppingState) -> tuple[str, int] | None:
    """(id, position) of the product the shopper picked last this epoch ("the second one"),
    unless they asked for more like another or turned the list down since."""
    for record in reversed(state.critiques):
        if record.epoch != state.epoch or record.kind in ("none_of_these", "more_like"):
            return None
        if record.kind == "pick" and record.products:
            return record.products[0], (record.positions or [0])[0]
    return None


def anchor_of(features: FeatureStore, asin: str, position: int) -> dict[str, Any]:
    """The facts "more like that one" reads of a product: its leaf, values and price."""
    row = features.row_of(asin)
    if row is None:
        return {}
    facets = features.facets([row])[0]
    price = float(features.price[row])
    return {
        "leaf": facets.leaf,
        "colors": list(facets.colors),
        "materials": list(facets.materials),
        "styles": list(facets.styles),
        "price": None if np.isnan(price) else price,
        "position": position,
    }
