"""Query-side tokenization that matches what the index stored."""

from __future__ import annotations

import tantivy

# tantivy's "default" tokenizer is exactly this chain; queries must be cut the
# same way or their terms would never meet the indexed ones.
MAX_TOKEN_CHARS = 40

# Part of the index fingerprint: changing any of these invalidates built indexes.
TOKENIZER_SETTINGS: dict[str, str] = {
    "tantivy": f"default: simple split, remove_long({MAX_TOKEN_CHARS}), lowercase, no stemming",
    "fts5": "unicode61 (case folded, diacritics removed), no stemming",
}

_ANALYZER = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.remove_long(MAX_TOKEN_CHARS))
    .filter(tantivy.Filter.lowercase())
    .build()
)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, split on anything that is not a letter or digit."""
    return _ANALYZER.analyze(text) if text else []
