"""What the tagger sees of each token: the word, its shape and stem, the words around it, and
what the catalog's vocabulary and category names say of it. The vocabulary marks a value
wherever it occurs; the tagger learns when such a value is wanted, turned down or no value at
all ("not the bride", "size not important")."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..catalog.vocabulary import find_mentions
from .doc import Doc

# One-word cues: a negator, a money word, an ordinal, a person. Data the tagger weighs, not rules.
NEGATORS = frozenset(
    [
        "not",
        "no",
        "nothing",
        "without",
        "avoid",
        "hate",
        "hates",
        "dislike",
        "except",
        "but",
        "none",
        "never",
        "nor",
        "isn't",
        "aren't",
        "don't",
        "doesn't",
        "dont",
        "doesnt",
        "cant",
        "can't",
        "anything",
        "skip",
        "instead",
        "free",
    ]
)
MONEY = frozenset(
    [
        "$",
        "£",
        "€",
        "usd",
        "dollars",
        "dollar",
        "bucks",
        "buck",
        "quid",
        "pounds",
        "pound",
        "euros",
        "euro",
        "grand",
        "tenner",
        "fiver",
        "k",
    ]
)
LIMITS = frozenset(
    [
        "under",
        "below",
        "less",
        "max",
        "maximum",
        "upto",
        "up",
        "tops",
        "around",
        "about",
        "roughly",
        "between",
        "over",
        "least",
        "budget",
        "spend",
    ]
)
ORDINALS = frozenset(
    [
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "last",
        "1st",
        "2nd",
        "3rd",
        "4th",
        "5th",
        "6th",
        "#1",
        "#2",
        "#3",
        "one",
        "ones",
        "both",
        "these",
        "those",
        "them",
        "that",
        "this",
        "it",
    ]
)


def shape(word: str) -> str:
    out = re.sub(r"[A-Z]+", "X", word)
    out = re.sub(r"[a-z]+", "x", out)
    return re.sub(r"\d+", "d", out)


def vocabulary_marks(doc: Doc) -> list[set[str]]:
    """Per token, the vocabulary facets of the mentions that cover it (B- at a mention's start)."""
    marks: list[set[str]] = [set() for _ in doc.tokens]
    for mention in find_mentions(doc.text):
        for n, i in enumerate(doc.token_range(mention.start, mention.end)):
            marks[i].add(("B-" if n == 0 else "I-") + str(mention.facet.value))
    return marks


def token_features(doc: Doc, node_words: frozenset[str]) -> list[dict[str, float | str | bool]]:
    tokens = doc.tokens
    marks = vocabulary_marks(doc)
    own = [
        _own(t.lower, t.stem, t.text, node_words) | {f"v:{m}": True for m in marks[i]}
        for i, t in enumerate(tokens)
    ]
    out = []
    for i, features in enumerate(own):
        f = dict(features)
        f["bias"] = 1.0
        if i == 0:
            f["BOS"] = True
        if i == len(tokens) - 1:
            f["EOS"] = True
        for offset in (-3, -2, -1, 1, 2, 3):
            j = i + offset
            if 0 <= j < len(tokens):
                f[f"{offset}:w"] = tokens[j].lower
                if abs(offset) <= 2:
                    f[f"{offset}:s"] = tokens[j].stem
                    for key in ("neg", "money", "limit", "node", "digit"):
                        if key in own[j]:
                            f[f"{offset}:{key}"] = True
                    for m in marks[j]:
                        f[f"{offset}:v:{m}"] = True
        f["negated_before"] = any("neg" in own[j] for j in range(max(0, i - 4), i))
        out.append(f)
    return out


def _own(
    lower: str, stem: str, text: str, node_words: frozenset[str]
) -> dict[str, float | str | bool]:
    f: dict[str, float | str | bool] = {
        "w": lower,
        "s": stem,
        "suf3": lower[-3:],
        "pre3": lower[:3],
        "shape": shape(text),
    }
    if text[:1].isupper():
        f["title"] = True
    if any(c.isdigit() for c in lower):
        f["digit"] = True
    if lower in NEGATORS:
        f["neg"] = True
    if lower in MONEY:
        f["money"] = True
    if lower in LIMITS:
        f["limit"] = True
    if lower in ORDINALS:
        f["ord"] = True
    if stem in node_words or lower in node_words:
        f["node"] = True
    return f


def bio(doc: Doc, spans: Iterable[tuple[int, int, str]]) -> list[str]:
    """The tokens' BIO tags for (start, end, label) spans."""
    tags = ["O"] * len(doc.tokens)
    for start, end, label in spans:
        for n, i in enumerate(doc.token_range(start, end)):
            tags[i] = ("B-" if n == 0 else "I-") + label
    return tags


def spans_of(
    doc: Doc, tags: list[str], marginals: list[dict[str, float]] | None = None
) -> list[tuple[int, int, str, float]]:
    """(start, end, label, score) of each run of tags; an I- without its B- starts a span."""
    out: list[tuple[int, int, str, float]] = []
    current: list = []
    for i, tag in enumerate(tags + ["O"]):
        kind = tag[2:] if tag != "O" else None
        if current and (tag == "O" or tag.startswith("B-") or kind != current[2]):
            out.append((current[0], current[1], current[2], min(current[3])))
            current = []
        if kind is None:
            continue
        score = marginals[i][tag] if marginals else 1.0
        token = doc.tokens[i]
        if current:
            current[1] = token.end
            current[3].append(score)
        else:
            current = [token.start, token.end, kind, [score]]
    return out
