"""Invented, pronounceable store names, and which store sells a product.

A marketplace has a few big sellers and a very long tail; each family gets its
own pool of specialist stores, plus a small pool of big brands selling across
families. A store's name is a pure function of (seed, pool, rank); the pools
are finite, so caching names keeps memory bounded however many products are made.
"""

from __future__ import annotations

import random
from functools import lru_cache

from .draws import pick, pick_distinct
from .vocabulary import load_vocabulary

STORES_PER_FAMILY = 2500
BIG_BRANDS = 150
BIG_BRAND_SHARE = 0.12
# Zipf-like rank choice: P(rank r) ~ 1 / (r + RANK_OFFSET); the offset keeps the top store near 3%.
RANK_OFFSET = 4.0


def pick_store(rng: random.Random, seed: int, family: str) -> str:
    if rng.random() < BIG_BRAND_SHARE:
        return store_name(seed, "big", _zipf_rank(rng, BIG_BRANDS))
    return store_name(seed, family, _zipf_rank(rng, STORES_PER_FAMILY))


def _zipf_rank(rng: random.Random, size: int) -> int:
    # Inverse CDF of the continuous 1/(x + offset) density on [0, size).
    span = (size + RANK_OFFSET) / RANK_OFFSET
    return min(size - 1, int(RANK_OFFSET * (span ** rng.random()) - RANK_OFFSET))


@lru_cache(maxsize=1 << 17)
def store_name(seed: int, pool: str, rank: int) -> str:
    words = load_vocabulary().words
    rng = random.Random(f"{seed}:store:{pool}:{rank}")
    style = rng.random()
    if style < 0.45:
        return _coined(rng).capitalize()
    if style < 0.72:
        return _coined(rng).upper()  # the all-caps marketplace style
    if style < 0.86:
        return f"{_coined(rng).capitalize()} {pick(rng, words['brand_words'])}"
    first, second = pick_distinct(rng, words["brand_pairs"], 2)
    return f"{first} & {second}" if rng.random() < 0.5 else f"{first}{second.lower()}"


def _coined(rng: random.Random) -> str:
    words = load_vocabulary().words
    onsets, vowels = words["brand_onsets"], words["brand_vowels"]
    syllables = pick(rng, (2, 2, 3, 3, 3, 4))
    parts = [pick(rng, onsets) + pick(rng, vowels) for _ in range(syllables - 1)]
    parts.append(pick(rng, onsets).lower() + pick(rng, vowels) + pick(rng, words["brand_codas"]))
    return "".join(parts).lower()
