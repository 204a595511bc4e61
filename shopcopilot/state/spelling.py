"""Typo tolerance: "slevee" -> "sleeve", "aloy" -> "alloy".

Only words the lexicon does not know are corrected, and only to a known word
one edit away (two from seven letters), so catalog terms and brand names survive.
A dictionary word is corrected only when the known word is far more common in
English ("earings" -> "earrings", "gril" -> "girl", while "sweeter" and "bots"
stay): dictionaries list rare words that are mostly typos when typed to a shop.
Requirement fragments keep the shopper's original spelling: the official
customer quotes catalog lines verbatim, typos included.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from english_words import get_english_words_set
from rapidfuzz import process
from rapidfuzz.distance import OSA
from wordfreq import zipf_frequency

from ..index.text import stem

MAX_CANDIDATES = 8
LONG_WORD = 7  # from this length two edits are one slip ("sandles")
# A dictionary word yields to a known word this much more common (zipf is log10 per billion
# words: 1.5 is about 30 times), so "pendent" stays in doubt but "leggins" becomes "leggings".
RARER_BY = 1.5
# A word no dictionary lists but people write this often (zipf: 1 in 1e6 words) is meant.
CHAT_WORD = 3.0
CLEARER_BY = 1.0  # ... and ten times as common as any other known word one slip away
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_VOWEL = re.compile(r"[aeiouy]")  # a word without one is shorthand ("wknd", "pls"), not a slip


class SpellFixer:
    """`targets`: words worth correcting towards; `known`: every word left alone (the catalog's
    own)."""

    def __init__(
        self, targets: Iterable[str], known: Iterable[str] = (), values: Iterable[str] = ()
    ) -> None:
        choices = sorted({w.lower() for w in targets if len(w) >= 3 and w.isalpha()})
        # By length: a word `limit` edits away is at most `limit` letters longer or shorter,
        # so each lookup scans a few lengths instead of every choice.
        self._by_length: dict[int, list[str]] = {}
        for choice in choices:
            self._by_length.setdefault(len(choice), []).append(choice)
        self._known = frozenset(choices) | frozenset(w.lower() for w in known)
        # The words of the values a shopper asks for (colours, materials, styles): between two
        # words a slip away, the one a shopper would ask for ("suade": suede, not spade).
        self._values = frozenset(w.lower() for w in values)
        self._cache: dict[str, str] = {}

    def fix(self, text: str) -> str:
        return _WORD.sub(lambda m: self._fix_word(m.group()), text)

    def knows(self, word: str) -> bool:
        lower = word.lower()
        return lower in self._known or stem(lower) in self._known

    def _fix_word(self, word: str) -> str:
        lower = word.lower()
        if len(lower) < 4 or "'" in lower or self.knows(lower):
            return word
        if lower not in self._cache:
            self._cache[lower] = self._correction(lower)
        fixed = self._cache[lower]
        return fixed if fixed and word.islower() else (fixed.capitalize() if fixed else word)

    def _correction(self, word: str) -> str:
        if not is_english(word):
            if zipf_frequency(word, "en") >= CHAT_WORD or not _VOWEL.search(word):
                return ""  # "haha", "tbh", "wknd": how people write, not a typo
            closest = self._closest(word, 1 if len(word) < LONG_WORD else 2)
            # "slipery" is slippery, one slip away, before the catalog's "slippers", two.
            plain = _plain_word_near(word)
            if plain and (not closest or OSA.distance(word, closest) > 1):
                return plain
            return closest
        if any(root in self._known for root in _roots_of_an_adjective(word)):
            return ""  # "lacy" is made from lace, not a slip for "lady"
        # A dictionary word is one slip from a far more common one, or it was meant.
        near = {stem(c): c for c in sorted((c for c, _ in self._near(word, 1)), key=len)}
        ranked = sorted(near.values(), key=lambda c: -zipf_frequency(c, "en"))
        if not ranked or not _far_more_common(ranked[0], word):
            return ""
        # Two known words one slip away: the typo is of the one far more common, or in doubt,
        # unless only one of them is a value a shopper asks for.
        if len(ranked) > 1 and not _far_more_common(ranked[0], ranked[1], CLEARER_BY):
            asked = [c for c in ranked if c in self._values]
            return asked[0] if len(asked) == 1 and _far_more_common(asked[0], word) else ""
        return ranked[0]

    def _near(self, word: str, limit: int) -> list[tuple[str, int]]:
        """Known words at most `limit` edits away, with their distances, alphabetical."""
        # OSA distance: a swapped pair of letters ("slevee") is one edit, as people type.
        return sorted(
            (choice, distance)
            for length in range(len(word) - limit, len(word) + limit + 1)
            for choice, distance, _ in process.extract(
                word,
                self._by_length.get(length, ()),
                scorer=OSA.distance,
                score_cutoff=limit,
                limit=MAX_CANDIDATES,
            )
        )

    def _closest(self, word: str, limit: int) -> str:
        found = self._near(word, limit)
        # The closest MAX_CANDIDATES, alphabetical among equals.
        found = sorted(found, key=lambda f: f[1])[:MAX_CANDIDATES]
        if not found:
            return ""
        # Ties go to a word with the same first letter, then the longer one: people drop letters
        # more often than they add them ("wmen" is "women", not "men").
        return min(found, key=lambda f: (f[1], f[0][0] != word[0], -len(f[0])))[0]


def _roots_of_an_adjective(word: str) -> tuple[str, ...]:
    """What a "-y" adjective may be made from ("lacy": lace, "silky": silk, "furry": fur)."""
    if len(word) < 4 or not word.endswith("y"):
        return ()
    return (word[:-1], word[:-1] + "e", word[:-2])


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _plain_word_near(word: str) -> str:
    """The common English word one slip from `word` that starts as it does ('' if none): a
    letter dropped, doubled, swapped or mistyped."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    near = {a + c + b for a, b in splits for c in _LETTERS}  # one letter dropped
    near |= {a + b[1:] for a, b in splits if b}  # one too many
    near |= {a + c + b[1:] for a, b in splits if b for c in _LETTERS}  # one mistyped
    near |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}  # two swapped
    found = [w for w in near if w[:2] == word[:2] and w in _dictionary()]
    common = [w for w in found if zipf_frequency(w, "en") >= CHAT_WORD]
    return max(common, key=lambda w: zipf_frequency(w, "en"), default="")


def _far_more_common(common: str, rare: str, by: float = 0.0) -> bool:
    return zipf_frequency(common, "en") - zipf_frequency(rare, "en") >= (by or RARER_BY)


@lru_cache(maxsize=1)
def _dictionary() -> frozenset[str]:
    return frozenset(get_english_words_set(["web2", "gcide"], lower=True))


def is_english(word: str) -> bool:
    """A dictionary word, allowing the inflections dictionaries leave out ("pockets", "jogging")."""
    words = _dictionary()
    if word in words or stem(word) in words:
        return True
    for suffix, replacements in (
        ("ing", ("", "e")),
        ("ed", ("", "e")),
        ("er", ("", "e")),
        ("s", ("",)),
    ):
        if word.endswith(suffix):
            root = word[: -len(suffix)]
            if any(root + r in words for r in replacements) or (
                len(root) > 2 and root[-1] == root[-2] and root[:-1] in words
            ):
                return True
    return False
