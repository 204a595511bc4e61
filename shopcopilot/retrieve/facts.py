"""The products holding every fact the shopper stated, from the feature store's postings.

In a large category a scored search ranks the few products that hold every stated requirement
no better than thousands that hold most of them (BM25 favours short texts among equals). Looking
the facts up word by word finds those few exactly, without scoring anything.
"""

from __future__ import annotations

import numpy as np

from ..index.features import FeatureStore
from ..index.text import tokens
from ..state.model import ShoppingState
from ..terms import Attribute

NONE = np.zeros(0, dtype=np.int64)


def fact_rows(state: ShoppingState, features: FeatureStore, limit: int) -> np.ndarray:
    """Feature rows of the products whose category words hold every category word of the state
    and whose text holds every word of every active requirement, in row order; empty when the
    state states no requirement, when nothing holds them all, or when more than `limit` do
    (then they are look-alikes the scored search chooses among)."""
    words = sorted({t for f in state.active_fragments() for t in tokens(f.text)})
    if not words:
        return NONE
    category = state.active(Attribute.CATEGORY)[-1:]
    stems = sorted(category[0].data.get("words", {})) if category else []
    wanted = [("category_stems", s) for s in stems] + [("words", w) for w in words]
    rows = rows_holding(features, wanted)
    return rows if 0 < len(rows) <= limit else NONE


def rows_holding(features: FeatureStore, wanted: list[tuple[str, str]]) -> np.ndarray:
    """Feature rows, ascending, listed in every (postings, word) wanted: a word's rows in
    "words" or a stem's in "category_stems". Empty when a word is in none (a paraphrase, a
    typo)."""
    lists = []
    for postings, word in wanted:
        number = features.word_id.get(word)
        if number is None:
            return NONE
        lists.append(features.postings(postings).rows_of(number))
    if not lists:
        return NONE
    # From the shortest list, keep the rows every other (sorted) list holds: a binary search
    # per kept row, where a mask over every row would cost a pass over the catalog per word.
    lists.sort(key=len)
    rows = lists[0]
    for held in lists[1:]:
        if not len(rows):
            break
        rows = rows[held.take(held.searchsorted(rows), mode="clip") == rows]
    return rows.astype(np.int64)
