"""Filling `{slot}` templates with product-specific or randomly drawn words."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from .draws import pick

_SLOT = re.compile(r"\{(\w+)\}")
# Template slot name -> list in synth_words.json it draws from.
WORD_LISTS = {
    "feel": "feel",
    "occasion": "occasions",
    "season": "seasons",
    "recipient": "recipients",
    "holiday": "holidays",
    "quality": "quality_words",
    "pair_with": "pair_with",
    "style": "style_words",
    "activity": "activities",
    "fit": "fit",
    "neck": "neck",
    "sleeve": "sleeve",
    "pattern": "pattern",
    "waist": "waist",
    "length": "length",
    "closure_word": "closure_word",
    "collar": "collar",
    "heel_word": "heel_word",
    "explore_word": "explore_word",
    "key_word": "key_word",
    "requirement_word": "requirement_word",
    "preference_word": "preference_word",
    "degree_word": "degree_word",
}


@lru_cache(maxsize=4096)
def _parse(template: str) -> tuple[str, ...]:
    """Split once: ("text", "slot", "text", ...); templates are few, products are many."""
    return tuple(_SLOT.split(template))


class SlotFiller:
    """Fills one product's templates. Fixed values (noun, brand, ...) come from `fixed`;
    other slots draw from the word lists, and numbered variants (`occasion2`) avoid repeats."""

    def __init__(
        self,
        rng: random.Random,
        words: Mapping[str, Any],
        numbers: Mapping[str, tuple[float, float, int]],
        fixed: Mapping[str, str],
    ) -> None:
        self._rng = rng
        self._words = words
        self._numbers = numbers
        self._fixed = fixed

    def fill(self, template: str) -> str:
        used: dict[str, set[str]] = {}
        pieces = _parse(template)
        # Even positions are literal text, odd positions slot names.
        return "".join(
            piece if position % 2 == 0 else self._value(piece, used)
            for position, piece in enumerate(pieces)
        )

    def _value(self, slot: str, used: dict[str, set[str]]) -> str:
        if slot.endswith("_cap"):
            text = self._value(slot[:-4], used)
            return text[:1].upper() + text[1:]
        if slot in self._fixed:
            return self._fixed[slot]
        if slot in self._numbers:
            return self._number(*self._numbers[slot])
        base = slot.rstrip("0123456789")
        if base in WORD_LISTS:
            return self._draw(WORD_LISTS[base], used.setdefault(base, set()))
        raise KeyError(
            f"template slot {{{slot}}} has no value: add it to the fixed slots or WORD_LISTS"
        )

    def _draw(self, list_name: str, used: set[str]) -> str:
        choices = self._words[list_name]
        for _ in range(4):  # a few tries for a value not yet used in this sentence
            value = pick(self._rng, choices)
            if value not in used:
                break
        used.add(value)
        return value

    def _number(self, low: float, high: float, digits: int) -> str:
        value = self._rng.uniform(low, high)
        return str(round(value)) if digits == 0 else f"{value:.{digits}f}"
