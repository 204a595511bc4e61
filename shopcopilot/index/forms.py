"""The forms a product's text may use for a stemmed word. Read when a turn is ranked, never when
an index is built: a change here rebuilds nothing."""

from __future__ import annotations

from functools import lru_cache

from .text import F_PLURALS


@lru_cache(maxsize=100_000)
def word_forms(stemmed: str) -> tuple[str, ...]:
    """The plural forms a product's text may use for a stemmed word."""
    forms = [stemmed, stemmed + "s", stemmed + "es"]
    if stemmed.endswith("y"):
        forms += [stemmed[:-1] + "ies", stemmed[:-1] + "ie"]  # "hoodies", "hoodie"
    forms += _F_PLURAL_OF.get(stemmed, ())
    return tuple(forms)


_F_PLURAL_OF = {singular: (plural,) for plural, singular in F_PLURALS.items()}
