"""The forms a product's text may use for a stemmed word. Read when a turn is ranked, never when
an index is built: a change here rebuilds nothing."""

from __future__ import annotations

from functools import lru_cache

from .text import F_PLURALS, stem


@lru_cache(maxsize=100_000)
def word_forms(stemmed: str) -> tuple[str, ...]:
    """The plural forms a product's text may use for a stemmed word."""
    forms = [stemmed, stemmed + "s", stemmed + "es"]
    if stemmed.endswith("y"):
        forms += [stemmed[:-1] + "ies", stemmed[:-1] + "ie"]  # "hoodies", "hoodie"
    forms += _F_PLURAL_OF.get(stemmed, ())
    return tuple(forms)


_F_PLURAL_OF = {singular: (plural,) for plural, singular in F_PLURALS.items()}


@lru_cache(maxsize=10_000)
def inflections(word: str) -> tuple[str, ...]:
    """The stems of a word's plain inflections, so turning down one turns down all: "padding"
    is also "padded", "hoods" also "hooded", "lace" also "lacy"."""
    said = stem(word)
    if len(word) < MIN_ROOT or not word.isalpha():
        return (said,)
    if word.endswith("s") and not word.endswith("ss") and len(word) > MIN_ROOT:
        word = word[:-1]
    root = word
    for ending in ("ing", "ed", "y"):
        if word.endswith(ending) and len(word) - len(ending) >= MIN_ROOT:
            root = word[: -len(ending)]
            root = root[:-1] if root[-1] == root[-2] else root  # "padd" -> "pad"
            break
    if root.endswith("e"):
        made = {root + "d", root[:-1] + "ing", root[:-1] + "y"}
    else:
        # Ending consonant-vowel-consonant, the last may double: "padded", "strapped", "furry".
        cvc = root[-3] not in VOWELS and root[-2] in VOWELS and root[-1] not in VOWELS + "wxy"
        grown = {root, root + root[-1]} if cvc else {root}
        made = {g + end for g in grown for end in ("ed", "ing", "y")}
    return tuple(sorted({said, *(stem(f) for f in {word, root, *made})}))


MIN_ROOT = 3  # letters: "red" is no inflection of "r"
VOWELS = "aeiou"
