"""Retrieval stage: a BM25F query built from the active state, not from the transcript."""

from .candidates import (
    Candidates,
    RetrievalSettings,
    build_query,
    meaning_text,
    retrieve,
    with_nearest,
)

__all__ = [
    "Candidates",
    "RetrievalSettings",
    "build_query",
    "meaning_text",
    "retrieve",
    "with_nearest",
]
