"""Fast draws from a seeded generator.

`random.choice` and `random.sample` spend most of their time in Python-level
rejection sampling; one `random()` call (C) scaled to the length is several
times faster and just as deterministic, which matters at millions of products.
"""

from __future__ import annotations

import random
from bisect import bisect
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def pick(rng: random.Random, items: Sequence[T]) -> T:
    return items[int(rng.random() * len(items))]


def pick_distinct(rng: random.Random, items: Sequence[T], count: int) -> list[T]:
    """`count` different positions of `items` (fewer if it is shorter), in random order."""
    size = len(items)
    count = min(count, size)
    if count * 2 > size:  # drawing most of the items: a partial shuffle avoids endless repeats
        pool = list(items)
        for slot in range(count):
            other = slot + int(rng.random() * (size - slot))
            pool[slot], pool[other] = pool[other], pool[slot]
        return pool[:count]
    chosen: list[int] = []
    while len(chosen) < count:
        position = int(rng.random() * size)
        if position not in chosen:
            chosen.append(position)
    return [items[position] for position in chosen]


def pick_weighted(rng: random.Random, items: Sequence[T], cumulative: Sequence[float]) -> T:
    """One of `items`, weighted by the running totals in `cumulative`."""
    return items[bisect(cumulative, rng.random() * cumulative[-1])]
