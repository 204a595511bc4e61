"""One synthetic product record per index, in the Amazon Reviews 2023 layout.

Every product is a pure function of (seed, index): its generator is seeded with
f"{seed}:{index}", so any slice can be produced alone and the stream needs no
state that grows with its length. Near-duplicate crowds come from title
"stems": each leaf category has a fixed set of stems (also a pure function of
seed and leaf), most products reuse a popular one, and different stores dress
the same stem with their own brand, extras, details and marketing lines.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

from .draws import pick, pick_distinct, pick_weighted
from .names import pick_store
from .slots import SlotFiller
from .vocabulary import Family, Leaf, Topic, Vocabulary, load_vocabulary

ID_PREFIX = "SYN"
ID_DIGITS = 7
STEMS_PER_LEAF = 40
STEM_SKEW = 2.0  # stem index = STEMS_PER_LEAF * u**STEM_SKEW: low stems are crowded
MISSING_PRICE_RATE = 0.16
MISSING_RATING_RATE = 0.05
EMPTY_DESCRIPTION_RATE = 0.55
# Real listings: most carry 5-9 feature lines, a few have none or only the generic ones.
MARKETING_COUNTS = (0, 1, 2, 3, 4, 5, 6)
MARKETING_CUMULATIVE = tuple(accumulate((10, 3, 3, 6, 10, 55, 13)))
ORIGINS = ("Imported", "Made in USA or Imported", "Made in USA")
ORIGIN_CUMULATIVE = tuple(accumulate((85, 10, 5)))
DIMENSION_KEYS = ("Package Dimensions", "Product Dimensions", None)
DIMENSION_CUMULATIVE = tuple(accumulate((36, 19, 45)))
NO_FEATURES_RATE = 0.04
SECOND_SENTENCE_RATE = 0.6
# Real copy mixes product facts with everyday English; without it the synthetic
# text would have an unnaturally small vocabulary and lose every query made of common words.
GENERAL_SENTENCE_RATE = 0.35
DEPARTMENTS = ("Women", "Men", "Girls", "Boys")
DEPARTMENT_VALUES = {
    "Women": ("womens", "Womens", "Women"),
    "Men": ("mens", "Mens", "Men"),
    "Girls": ("girls", "Girls"),
    "Boys": ("boys", "Boys"),
    "Baby Girls": ("baby-girls", "Baby-girls"),
    "Baby Boys": ("baby-boys", "Baby-boys"),
    "Unisex": ("unisex-adult", "Unisex-adult", "Unisex"),
}
TITLE_DEPARTMENTS = {
    "Women": ("Women's", "Womens"),
    "Men": ("Men's", "Mens"),
    "Girls": ("Girls'", "Girls"),
    "Boys": ("Boys'", "Boys"),
    "Baby Girls": ("Baby Girls'", "Baby Girl"),
    "Baby Boys": ("Baby Boys'", "Baby Boy"),
    "Unisex": ("Unisex", "Unisex Adult"),
}
TITLE_FOR = {
    "Women": "Women",
    "Men": "Men",
    "Girls": "Girls",
    "Boys": "Boys",
    "Baby Girls": "Baby Girls",
    "Baby Boys": "Baby Boys",
    "Unisex": "Men and Women",
}


def synthetic_id(index: int) -> str:
    """The id of the product at 0-based `index`: SYN plus digits, never shaped like an Amazon id."""
    return f"{ID_PREFIX}{index + 1:0{ID_DIGITS}d}"


def iter_synthetic(size: int, seed: int, start: int = 0) -> Iterator[dict[str, Any]]:
    """Yield `size` records for indices start.., one at a time."""
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    generator = ProductGenerator(seed)
    for index in range(start, start + size):
        yield generator.record(index)


class ProductGenerator:
    def __init__(self, seed: int, vocabulary: Vocabulary | None = None) -> None:
        self.seed = seed
        self.vocab = vocabulary or load_vocabulary()
        self._stems: dict[tuple[tuple[str, ...], int], tuple[tuple[str, ...], str]] = {}

    def record(self, index: int) -> dict[str, Any]:
        rng = random.Random(f"{self.seed}:{index}")
        leaf = pick_weighted(rng, self.vocab.leaves, self.vocab.cumulative_weights)
        family = leaf.family
        department = _department(leaf)
        store = pick_store(rng, self.seed, family.name)
        stem_mods, noun = self._stem(leaf, int(STEMS_PER_LEAF * rng.random() ** STEM_SKEW))
        colors = pick_distinct(rng, self.vocab.words["colors"], 2)
        fabric = _fabric_line(rng, family)
        slots = SlotFiller(
            rng,
            self.vocab.words,
            self.vocab.number_slots,
            {
                "noun": noun.lower(),
                "brand": store,
                "material": _material_word(fabric, family),
                "metal": _material_word(fabric, family),
                "fabric": _fabric_phrase(fabric, family),
                "size_range": _size_range(rng, family, self.vocab.words),
                "pockets": str(rng.randint(2, 6)),
                "fabric_text": fabric or "see images",
                "care_text": pick(rng, family.care or ("wipe clean",)),
            },
        )
        return {
            "parent_asin": synthetic_id(index),
            "title": _title(
                rng, store, department, stem_mods, noun, family, colors[0], self.vocab.words
            ),
            "features": self._features(rng, family, fabric, slots),
            "description": self._description(rng, slots),
            "price": _price(rng, family),
            "categories": list(leaf.path),
            "details": _details(rng, leaf, department, store, colors, fabric, self.vocab.words),
            **_ratings(rng),
            "store": store,
        }

    def _stem(self, leaf: Leaf, stem_index: int) -> tuple[list[str], str]:
        """The shared core of a crowd's titles: a few modifiers and a noun, fixed per (seed, leaf,
        index)."""
        key = (leaf.path, stem_index)
        if key not in self._stems:  # bounded: leaves x STEMS_PER_LEAF entries
            self._stems[key] = self._make_stem(leaf, stem_index)
        mods, noun = self._stems[key]
        return list(mods), noun

    def _make_stem(self, leaf: Leaf, stem_index: int) -> tuple[tuple[str, ...], str]:
        rng = random.Random(f"{self.seed}:stem:{' > '.join(leaf.path)}:{stem_index}")
        groups = [group for group in leaf.family.mods if rng.random() < 0.7] or [
            pick(rng, leaf.family.mods)
        ]
        mods = [pick(rng, group) for group in groups]
        if leaf.tags:
            mods.insert(rng.randrange(len(mods) + 1), pick(rng, leaf.tags))
        return tuple(mods), pick(rng, leaf.nouns)

    def _features(
        self, rng: random.Random, family: Family, fabric: str | None, slots: SlotFiller
    ) -> list[str]:
        if rng.random() < NO_FEATURES_RATE:
            return []
        lines = _generic_lines(rng, family, fabric, slots)
        count = pick_weighted(rng, MARKETING_COUNTS, MARKETING_CUMULATIVE)
        lead_format = pick_weighted(rng, self.vocab.lead_formats, self.vocab.lead_format_cumulative)
        for topic in self._topics(rng, family, count):
            lines.append(
                _marketing_line(
                    rng, topic, lead_format, slots, self.vocab.words["general_sentences"]
                )
            )
        return lines

    def _topics(self, rng: random.Random, family: Family, count: int) -> list[Topic]:
        own = pick_distinct(rng, family.topics, len(family.topics))
        extra = pick_distinct(
            rng,
            self.vocab.common_topics,
            min(len(self.vocab.common_topics), max(0, count - len(own))),
        )
        return (own + extra)[:count]

    def _description(self, rng: random.Random, slots: SlotFiller) -> list[str]:
        if rng.random() < EMPTY_DESCRIPTION_RATE:
            return []
        templates = pick_distinct(
            rng, self.vocab.words["description_templates"], pick(rng, (1, 1, 2, 3))
        )
        general = pick_distinct(rng, self.vocab.words["general_sentences"], pick(rng, (0, 1, 2)))
        return [slots.fill(template) for template in templates + general]


def _department(leaf: Leaf) -> str:
    path = leaf.path
    if "Baby" in path:
        return (
            "Baby Boys"
            if "Baby Boys" in path
            else "Baby Girls"
            if "Baby Girls" in path
            else "Unisex"
        )
    for department in DEPARTMENTS:
        if department in path:
            return department
    return "Unisex"


def _title(
    rng: random.Random,
    store: str,
    department: str,
    mods: list[str],
    noun: str,
    family: Family,
    color: str,
    words: dict[str, Any],
) -> str:
    parts: list[str] = [store] if rng.random() < 0.75 else []
    suffix_department = rng.random() < 0.2
    if not suffix_department and rng.random() < 0.85:
        parts.append(pick(rng, TITLE_DEPARTMENTS[department]))
    before, after = _variations(rng, mods, family)
    parts.extend(before)
    parts.extend(mods)
    parts.append(noun)
    parts.extend(after)
    extras = pick_distinct(
        rng, family.extras, min(len(family.extras), pick(rng, (0, 1, 1, 2, 2, 3)))
    )
    if suffix_department and not any(extra.startswith("for ") for extra in extras):
        parts.append(f"for {TITLE_FOR[department]}")
    parts.extend(extras)
    title = " ".join(parts)
    if rng.random() < 0.15:
        title += f" {color}" if rng.random() < 0.5 else f", {color}, {_size(rng, family, words)}"
    return title


def _variations(rng: random.Random, mods: list[str], family: Family) -> tuple[list[str], list[str]]:
    """Stores word the same product a little differently: an extra modifier before the shared
    stem or after its noun, so the stem itself stays intact across the crowd."""
    if rng.random() >= 0.5:
        return [], []
    extra = pick(rng, pick(rng, family.mods))
    if extra in mods:
        return [], []
    return ([extra], []) if rng.random() < 0.4 else ([], [extra])


def _fabric_line(rng: random.Random, family: Family) -> str | None:
    if rng.random() >= family.fabric_rate:
        return None
    blend = pick(rng, family.fabrics)
    if family.fabric_style == "plain":
        return blend[0] if rng.random() < 0.8 else f"100% {blend[0]}"
    if len(blend) == 1:
        return f"100% {blend[0]}" if rng.random() < 0.85 else blend[0]
    shares = _blend_shares(rng, len(blend))
    return ", ".join(f"{share}% {material}" for share, material in zip(shares, blend, strict=True))


def _blend_shares(rng: random.Random, parts: int) -> list[int]:
    major = pick(rng, (50, 55, 60, 65, 70, 75, 80, 85, 88, 90, 92, 95, 96, 97))
    if parts == 2:
        return [major, 100 - major]
    minor = rng.randint(1, max(1, (100 - major) // 2))
    return [major, 100 - major - minor, minor]


def _material_word(fabric: str | None, family: Family) -> str:
    if fabric:
        return fabric.split(", ")[0].split("% ")[-1].lower()
    return family.materials[0].lower()


def _fabric_phrase(fabric: str | None, family: Family) -> str:
    word = _material_word(fabric, family)
    return f"{word} blend" if fabric and "," in fabric else word


def _generic_lines(
    rng: random.Random, family: Family, fabric: str | None, slots: SlotFiller
) -> list[str]:
    """The lines real listings share word for word: material, origin, sole, closure, care,
    measurements."""
    lines = [fabric] if fabric else []
    if rng.random() < family.origin_rate:
        lines.append(pick_weighted(rng, ORIGINS, ORIGIN_CUMULATIVE))
    if family.lining and rng.random() < 0.5:
        lines.append(pick(rng, family.lining))
    if family.sole and rng.random() < 0.85:
        lines.append(pick(rng, family.sole))
    if family.closures and rng.random() < family.closure_rate:
        lines.append(pick(rng, family.closures))
    if family.care and rng.random() < family.care_rate:
        lines.append(pick(rng, family.care))
    for spec in family.spec:
        if rng.random() < family.spec_rate:
            lines.append(slots.fill(spec))
    return lines


def _marketing_line(
    rng: random.Random,
    topic: Topic,
    lead_format: str,
    slots: SlotFiller,
    general: list[str],
) -> str:
    sentences = topic.sentences
    first = int(rng.random() * len(sentences))
    text = slots.fill(sentences[first])
    if len(sentences) > 1 and rng.random() < SECOND_SENTENCE_RATE:
        # A second, different sentence of the same topic: step 1..n-1 places around the ring.
        second = (first + 1 + int(rng.random() * (len(sentences) - 1))) % len(sentences)
        text += " " + slots.fill(sentences[second])
    if rng.random() < GENERAL_SENTENCE_RATE:
        text += " " + slots.fill(pick(rng, general))
    return lead_format.format(LEAD=topic.lead.upper(), Lead=topic.lead, text=text)


def _price(rng: random.Random, family: Family) -> float | None:
    if rng.random() < MISSING_PRICE_RATE:
        return None
    raw = min(
        999.0, max(2.99, rng.lognormvariate(math.log(family.price_median), family.price_sigma))
    )
    ending = rng.random()
    if ending < 0.6:
        return round(max(3.0, round(raw)) - 0.01, 2)
    if ending < 0.85:
        return round(raw, 2)
    return float(round(raw))


def _ratings(rng: random.Random) -> dict[str, Any]:
    if rng.random() < MISSING_RATING_RATE:
        return {"average_rating": None, "rating_number": None}
    # Heavy tail: a median of a few hundred, a long run to six figures.
    count = max(1, int(rng.lognormvariate(5.4, 2.1)))
    spread = 0.7 if count < 10 else 0.32
    average = min(5.0, max(1.0, rng.gauss(4.35, spread)))
    return {"average_rating": round(average, 1), "rating_number": count}


def _size(rng: random.Random, family: Family, words: dict[str, Any]) -> str:
    pool = {"shoes": "sizes_shoes", "baby": "sizes_baby"}.get(family.sized or "", "sizes_apparel")
    return pick(rng, words[pool])


def _size_range(rng: random.Random, family: Family, words: dict[str, Any]) -> str:
    pool = {"shoes": "sizes_shoes", "baby": "sizes_baby"}.get(family.sized or "", "sizes_apparel")
    low, high = sorted(pick_distinct(rng, range(len(words[pool])), 2))
    return f"{words[pool][low]} to {words[pool][high]}"


def _details(
    rng: random.Random,
    leaf: Leaf,
    department: str,
    store: str,
    colors: list[str],
    fabric: str | None,
    words: dict[str, Any],
) -> dict[str, str]:
    """Detail keys at roughly the rates real listings carry them."""
    family = leaf.family
    details: dict[str, str] = {}
    if rng.random() < 0.22:
        details["Is Discontinued By Manufacturer"] = "No" if rng.random() < 0.99 else "Yes"
    dimension_key = pick_weighted(rng, DIMENSION_KEYS, DIMENSION_CUMULATIVE)
    if dimension_key:
        details[dimension_key] = _dimensions(rng, family)
    if rng.random() < 0.43:
        details["Item model number"] = _model_number(rng, store)
    if rng.random() < 0.89:
        details["Department"] = pick(rng, DEPARTMENT_VALUES[department])
    if rng.random() < 0.94:
        details["Date First Available"] = _date(rng, words)
    if rng.random() < 0.49:
        details["Manufacturer"] = (
            store
            if rng.random() < 0.8
            else f"{store} {pick(rng, ('Inc.', 'Co., Ltd', 'LLC', 'Trading'))}"
        )
    optional = (
        ("Color", 0.09, lambda: colors[1]),
        ("Item Weight", 0.085, lambda: _weight(rng, family)),
        ("Brand", 0.08, lambda: store),
        ("Material", 0.075, lambda: _material_word(fabric, family).title()),
        ("Style", 0.057, lambda: pick(rng, words["style_words"]).title()),
        ("Country of Origin", 0.04, lambda: pick(rng, words["countries"])),
        ("Size", 0.034, lambda: _size(rng, family, words)),
    )
    for key, rate, value in optional:
        if rng.random() < rate:
            details[key] = value()
    return details


def _dimensions(rng: random.Random, family: Family) -> str:
    sides = " x ".join(_measure(rng, *bounds) for bounds in family.dims)
    return f"{sides} inches; {_weight(rng, family)}" if rng.random() < 0.8 else f"{sides} inches"


def _measure(rng: random.Random, low: float, high: float) -> str:
    value = rng.uniform(low, high)
    return str(round(value)) if rng.random() < 0.3 else f"{value:.2f}".rstrip("0").rstrip(".")


def _weight(rng: random.Random, family: Family) -> str:
    low, high, unit = family.weight
    return f"{_measure(rng, low, high)} {unit}"


def _model_number(rng: random.Random, store: str) -> str:
    letters = "".join(ch for ch in store.upper() if ch.isalpha())[: pick(rng, (1, 2, 3))] or "X"
    number = rng.randint(100, 99999)
    suffix = pick(
        rng,
        (
            "",
            "",
            f"-{pick(rng, ('BK', 'WH', 'NV', 'S', 'M', 'L', 'XL'))}",
            f"-{rng.randint(1, 99):02d}",
        ),
    )
    return f"{letters}{number}{suffix}"


def _date(rng: random.Random, words: dict[str, Any]) -> str:
    # Skewed toward recent years, as listings are.
    year = 2023 - min(17, int(rng.expovariate(0.28)))
    return f"{pick(rng, words['months'])} {rng.randint(1, 28)}, {year}"
