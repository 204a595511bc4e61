"""Word analysis shared by the feature store, understanding, retrieval and reranking: a
shopper's words and a product's must be cut and plural-folded the same way to meet."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import tantivy

ROOT_CATEGORY = "clothing, shoes & jewelry"

# tantivy's own accent folding ("ß" -> "ss", "é" -> "e"), for the rare text that is not ASCII.
_FOLDING = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.ascii_fold())
    .build()
)

_TOKEN = re.compile(r"[a-z0-9]+")

# Words that carry no product meaning in a shopper's message.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "please",
        "some",
        "that",
        "the",
        "this",
        "to",
        "want",
        "with",
        "would",
        "you",
        "looking",
        "im",
        "i'm",
        "id",
        "i'd",
        "ive",
        "just",
        "also",
        "really",
        "very",
        "so",
        "too",
        "something",
        "thing",
        "things",
        "anything",
        "one",
        "ones",
        "any",
        "its",
        "it's",
        "we",
        "our",
        "your",
        "yours",
        "they",
        "them",
        "their",
        "there",
        "here",
        "what",
        "which",
        "who",
        "how",
        "can",
        "could",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "having",
        "get",
        "got",
        "need",
        "needs",
        "like",
        "love",
        "prefer",
        "preferred",
        "preference",
        "ideally",
        "maybe",
        "perhaps",
        "kind",
        "sort",
        "bit",
        "lot",
        "little",
        "pretty",
        "quite",
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank",
        "ok",
        "okay",
        "hmm",
        "um",
        "uh",
        "well",
        "yeah",
        "yes",
        "yep",
        "sure",
        "great",
        "nice",
        "cool",
        "good",
        "fine",
        "about",
        "around",
        "into",
        "onto",
        "over",
        "under",
        "than",
        "then",
        "if",
        "else",
        "when",
        "where",
        "while",
        "all",
        "more",
        "most",
        "much",
        "many",
        "no",
        "not",
        "nor",
        "only",
        "own",
        "same",
        "such",
        "other",
        "others",
        "another",
        "again",
        "further",
        "once",
        "now",
        "still",
        "yet",
        "ever",
        "be",
        "been",
        "being",
        "am",
        "was",
        "were",
        "ll",
        "ve",
        "re",
        "s",
        "t",
        "d",
        "m",
        "don",
        "doesn",
        "didn",
        "isn",
        "aren",
        "wasn",
        "weren",
        "won",
        "wouldn",
        "shouldn",
        "couldn",
        "cant",
        "can't",
        "dont",
        "doesnt",
        "didnt",
        "isnt",
        "wont",
        "wouldnt",
        "find",
        "show",
        "give",
        "see",
        "look",
        "looks",
        "shopping",
        "shop",
        "buy",
        "buying",
        "purchase",
        "searching",
        "search",
        "help",
    ]
)


def tokens(text: str) -> list[str]:
    """Lower-case ASCII words; accents are folded first ("Café crème" -> cafe, creme)."""
    lowered = text.lower()
    if not lowered.isascii():
        lowered = " ".join(_FOLDING.analyze(lowered))
    return _TOKEN.findall(lowered)


# The few "-f" words whose plural ends in "-ves" ("gloves" and "sleeves" are regular).
F_PLURALS = {
    "scarves": "scarf",
    "knives": "knife",
    "leaves": "leaf",
    "shelves": "shelf",
    "halves": "half",
    "calves": "calf",
    "wolves": "wolf",
    "hooves": "hoof",
    "loaves": "loaf",
    "wives": "wife",
    "thieves": "thief",
}


@lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    """A light plural folding: 'dresses'->'dress', 'shoes'->'shoe', 'scarves'->'scarf', and
    'hoodies' and 'hoodie' both -> 'hoody' (so the singular a shopper says meets the plural a
    catalog files it under)."""
    if len(token) <= 3 or token.isdigit():
        return token
    if token in F_PLURALS:
        return F_PLURALS[token]
    if token.endswith("ie"):
        return token[:-2] + "y"
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "shes", "ches", "xes", "zes")):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def path_stems(categories: Iterable[str]) -> set[str]:
    """Plural-folded words of a product's category path, without the catalog root."""
    out: set[str] = set()
    for part in categories:
        if part.strip().lower() == ROOT_CATEGORY:
            continue
        out.update(stem(t) for t in tokens(part))
    return out
