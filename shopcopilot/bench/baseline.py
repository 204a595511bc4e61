"""The organiser's weak starter, reimplemented: a stateless BM25 search of the current message.

It is the floor every report is compared with: it never asks a question, so under the
official protocol the customer never discloses anything beyond the opening message.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..index import STARTER_WEIGHTS, open_index
from ..paths import resolve_catalog

MAX_QUERY_TOKENS = 40
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
    ]
)
MESSAGE = "Here are the closest matches I found."
_TOKEN = re.compile(r"[a-z0-9]+")


def query_tokens(message: str) -> list[str]:
    """Lower-cased [a-z0-9]+ tokens, without 1-letter tokens and stopwords, first 40 unique."""
    kept: list[str] = []
    for token in _TOKEN.findall(message.lower()):
        if len(token) > 1 and token not in STOPWORDS and token not in kept:
            kept.append(token)
            if len(kept) == MAX_QUERY_TOKENS:
                break
    return kept


class BaselineAgent:
    """BM25 OR-query over the FTS5 back end with the starter's field weights."""

    def __init__(self, catalog_path: str | Path | None = None) -> None:
        self._index = open_index(resolve_catalog(catalog_path))
        self._index.backend("fts5")  # built on first use: do it now, not inside a timed respond()

    def reset(self, session_id: str, user_profile: dict[str, Any]) -> None:
        """Stateless: nothing to forget."""

    def respond(self, session_id: str, user_message: str, turn: int, top_k: int) -> dict[str, Any]:
        tokens = query_tokens(user_message)
        hits = (
            self._index.search(
                " ".join(tokens), limit=top_k, weights=STARTER_WEIGHTS, backend="fts5"
            )
            if tokens
            else []
        )
        return {
            "message": MESSAGE,
            "ask_attribute": None,
            "recommendations": [{"parent_asin": hit.parent_asin} for hit in hits],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0},
        }
