"""state -> Candidates: which products are worth reranking this turn."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..index.features import FeatureStore
from ..index.forms import word_forms
from ..index.query import Filters, Occur, Query, RowHits, phrase, terms
from ..index.text import stem, tokens
from ..state.budget import around
from ..state.model import ShoppingState
from ..terms import Attribute, Level
from .facts import fact_rows, rows_holding

# Phrase clauses look where the shopper's quoted requirements come from.
PHRASE_FIELDS = ("features", "details", "title", "description")
BRAND_FIELDS = ("store", "title", "details")


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    base_window: int = 150
    # A continuing conversation says earlier pages missed: look deeper each turn.
    window_growth: int = 75
    max_window: int = 600
    phrase_window: int = 100  # per quoted requirement
    max_phrase_hits: int = 300  # all quoted requirements together: bounds the slowest turns
    # In a catalog of more than `common_holders` products, only the newest requirements are
    # searched word for word (None: all): there a long quote of words thousands of products share
    # costs up to 100 ms of phrase matching. A smaller catalog searches every quote.
    max_quotes: int | None = 3
    # Past the same bound, each quote is searched on its own, `item_quote_window` deep, among the
    # products whose category path or title holds the item's head word: a quote of common words
    # then costs the phrase matching of one category, not of the catalog (docs/benchmarks.md).
    quotes_in_item: bool = True
    item_quote_window: int = 150
    # Past the bound too, a quote every word of which more than `quote_holders` products hold
    # ("Keep one at home and one for travel", "Department: womens") is not searched word for
    # word: its phrase matching costs 20 to 70 ms and the scored search has its words anyway.
    quote_holders: int | None = 100_000
    brand_window: int = 100
    browsing_window_bonus: int = 50
    # Index fields the agent does not search. Descriptions are long marketing text: searching
    # them cost a third of the search time and, on the tuning set, a little quality.
    skip_fields: tuple[str, ...] = ("description",)
    # With product vectors: the products nearest the shopper's words in meaning join the
    # candidates (with no lexical score), so a paraphrase can find what no word matches.
    dense_window: int = 0
    # In a category holding more than this many windows of products (its words all in the
    # category paths, counted within the budget), the products that hold every requirement the
    # shopper stated (retrieve/facts.py) join the candidates when they are at most a window:
    # the scored search's window is then only a slice of the category, and at a million
    # products it ranks those few no better than thousands of look-alikes. 0: never.
    facts_ratio: float = 1.0
    # Optional words held by more than this many products in a field are left out of the search
    # (index/query.py, Query.max_postings): they are most of its cost at a million products. A
    # count, not a share, so a smaller catalog is searched exactly as without it. None (the
    # default): every word is searched; the bound cost quality at a million (docs/benchmarks.md).
    max_postings: int | None = None
    # Two passes at scale: words held by more than `common_holders` products (the feature store's
    # count) are left out of the scored search, which then looks `common_depth` windows deep; each
    # product found gains what the common words it holds would have added (an estimate of their
    # BM25 share: the clause's boost x the word's IDF x `common_weight`), and the best window by
    # that sum stays. The common words' postings are most of a search's cost at a million
    # products and their scores are flat. A count, not a share: None, or a catalog smaller than
    # the bound, searches every word in one pass.
    common_holders: int | None = 200_000
    common_depth: int = 2
    common_weight: float = 6.0
    # A price said as a goal ("around $100") bounds the search to the band a shopper means by
    # it (state/budget.py, AROUND), as a limit does. Off for the benchmark, on for people.
    goal_band: bool = False
    # The products filed under a category named by the item's head word, this many, by the
    # rest of the words: "white v neck undershirts" finds white v-neck things of every kind
    # first, and without it a handful of undershirts. 0 (the benchmark's): no such search. Not
    # past `common_holders` products either: there a kind holds tens of thousands, and the
    # people's p99 at a million went 89 -> 121-132 ms with it, on a busy machine (docs/scaling.md).
    item_window: int = 0
    # The index keeps words as written, and the item's category words are stems: "red heels"
    # searched "pump", which no title says ("Pumps"), and found red jeans. With this the search
    # has every form. Off for the benchmark: its official score went 0.9633 -> 0.9605.
    item_forms: bool = False


@dataclass(slots=True)
class Candidates:
    """Store rows worth reranking with their lexical scores (0: found by a brand or phrase query
    only)."""

    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0))
    query_text: str = ""
    window: int = 0

    def __len__(self) -> int:
        return len(self.rows)

    def best_rows(self, count: int) -> list[int]:
        """The `count` lexically best rows, best first (for the trace)."""
        return self.rows[np.argsort(-self.scores, kind="stable")[:count]].tolist()


def window_for(state: ShoppingState, settings: RetrievalSettings) -> int:
    window = settings.base_window + settings.window_growth * state.turns_without_progress
    if state.intent == "browsing":
        window += settings.browsing_window_bonus
    return min(window, settings.max_window)


def build_query(state: ShoppingState, item_forms: bool = False) -> Query:
    """`item_forms`: the item's category words in every form titles use (see RetrievalSettings)."""
    clauses = []
    for constraint in state.active(Attribute.CATEGORY):
        stems = constraint.data.get("words", {})
        forms = [f for w in stems for f in (word_forms(w) if item_forms else (w,))]
        words = " ".join(forms) or constraint.value
        clauses.append(terms(words, boost=2.0, fields=("categories", "title")))
        clauses.append(terms(constraint.text or constraint.value, boost=1.0))
    for constraint in state.active():
        if constraint.attribute in ("category", "budget"):
            continue
        boost = 1.5 if constraint.level == Level.HARD else 1.0
        clauses.append(terms(f"{constraint.value} {constraint.text}", boost=boost))
    for fragment in state.active_fragments():
        boost = 1.0 if fragment.level == Level.HARD else 0.7
        clauses.append(terms(fragment.text, boost=boost))
    return Query(tuple(c for c in clauses if c.words))


def budget_filters(state: ShoppingState, goal_band: bool = False) -> Filters | None:
    for constraint in state.active(Attribute.BUDGET):
        low, high = constraint.data.get("min"), constraint.data.get("max")
        if goal_band and low is None and high is None:
            low, high = around(constraint.data.get("target")) or (None, None)
        if low is not None or high is not None:
            # A little slack: shoppers round, and $40.99 on a "$40" budget is a near miss, not a no.
            return Filters(
                min_price=low * 0.9 if low else None, max_price=high * 1.05 if high else None
            )
    return None


def retrieve(
    state: ShoppingState,
    index,
    settings: RetrievalSettings,
    features: FeatureStore | None = None,
    departments: tuple[str, ...] = (),
) -> Candidates:
    """The candidates for this turn's state; with `features` (the index's feature store), the
    products holding every stated requirement in a large category too. `departments`: only
    products of these departments (asked of the whole catalog before a department is given up)."""
    query = build_query(state, settings.item_forms)
    window = window_for(state, settings)
    out = Candidates(query_text=_describe(query), window=window)
    if not query.clauses:
        return out
    filters = budget_filters(state, settings.goal_band)
    if departments:
        bounds = filters or Filters()
        filters = Filters(bounds.min_price, bounds.max_price, departments)
    weights = dict.fromkeys(settings.skip_fields, 0.0)
    selective, common = split_common(query, features, settings.common_holders)
    depth = window * settings.common_depth if common else window
    searches = [(replace(selective, max_postings=settings.max_postings), depth)]
    # A named brand is a short list of its own: make sure it is among the candidates.
    searches += [
        (Query((terms(c.value, fields=BRAND_FIELDS),)), settings.brand_window)
        for c in state.active(Attribute.BRAND)
    ]
    searches += quote_searches(state, settings, features)
    if settings.item_window and not quotes_cap(settings, features):
        searches += [
            (replace(selective, clauses=(*selective.clauses, within)), settings.item_window)
            for within in _of_the_item(state, features if settings.item_forms else None)
        ]
    main, *others = index.search_rows_together(searches, filters=filters, weights=weights)
    if common and features is not None:
        main = with_common_words(main, common, features, settings.common_weight, window)
    found = [main, *map(_unscored, others)]
    if (
        features is not None
        and state.active_fragments()
        and large_category(state, index, window, settings, filters, weights, features)
    ):
        rows = within_budget(fact_rows(state, features, window), features, filters)
        found.insert(1, RowHits((rows + 1).tolist(), [0.0] * len(rows)))  # feature -> store rows
    out.rows, out.scores = _first_of_each(found)
    return out


def quote_searches(
    state: ShoppingState, settings: RetrievalSettings, features: FeatureStore | None
) -> list[tuple[Query, int]]:
    """Searches for the products quoting the shopper's requirements word for word: one query, in
    which a product quoting several comes first; past the common-words bound, one per quote
    among the products whose category path or title holds the item's head word."""
    cap = quotes_cap(settings, features)
    quoted = [f.text for f in state.active_fragments() if len(tokens(f.text)) >= 2]
    if cap and features is not None and settings.quote_holders is not None:
        quoted = [q for q in quoted if not _all_held_by_over(q, settings.quote_holders, features)]
    phrases = tuple(phrase(q, fields=PHRASE_FIELDS) for q in quoted)[-(cap or 0) :]
    if not phrases or not settings.phrase_window:
        return []
    head = _item_head(state)
    if cap and settings.quotes_in_item and head is not None:
        within = terms(head, occur=Occur.MUST, fields=("categories", "title"))
        quotes = [replace(p, occur=Occur.MUST) for p in phrases]
        return [(Query((quote, within)), settings.item_quote_window) for quote in quotes]
    limit = min(settings.phrase_window * len(phrases), settings.max_phrase_hits)
    return [(Query(phrases, max_postings=settings.max_postings), limit)]


def _all_held_by_over(text: str, bound: int, features: FeatureStore) -> bool:
    """Is every word of the quote held by more than `bound` products?"""
    return min(features.holder_count(w) for w in tokens(text)) > bound


def _item_head(state: ShoppingState) -> str | None:
    """The item's head word: the last category word of the item asked for last ("shoe" of
    "running shoes"); None without an item."""
    words = [w for c in state.active(Attribute.CATEGORY)[-1:] for w in c.data.get("words", {})]
    return words[-1] if words else None


def _of_the_item(state: ShoppingState, features: FeatureStore | None = None) -> list:
    """Clauses every product of the item holds: its head word in the title or category path
    ("undershirt"), or the category named as the shopper names the kind ("Socks" for "running
    socks"; the path is matched as written, in the plural catalogs name kinds by). With
    `features`, the head in its plural when the catalog has it, as category paths name kinds:
    the index keeps words as written, and "pump" alone missed every "Pumps" (for "black heels
    for a wedding" one pump was found among wedding bands). One form, one search: a search for
    each form doubled the people's p99."""
    head = _item_head(state)
    if head is None:
        return []
    heads: tuple[str, ...] = (head,)
    if features is not None:
        plural = [f for f in word_forms(head)[1:] if features.word_id.get(f) is not None]
        heads = tuple(plural[:1]) or heads
    said = tokens(state.active(Attribute.CATEGORY)[-1].value)
    kind = said[-1] if said else head
    named = kind if kind.endswith("s") else kind + "s"
    return [
        *(terms(h, occur=Occur.MUST, fields=("categories", "title")) for h in heads),
        terms(named, occur=Occur.MUST, fields=("categories",)),
    ]


def quotes_cap(settings: RetrievalSettings, features: FeatureStore | None) -> int | None:
    """How many of the newest quotes the quote search holds in this catalog (None: all)."""
    bound = settings.common_holders
    at_scale = features is not None and bound is not None and len(features) > bound
    return settings.max_quotes if at_scale else None


def split_common(
    query: Query, features: FeatureStore | None, bound: int | None
) -> tuple[Query, dict[str, float]]:
    """The query without the optional words more than `bound` products hold, and those words
    with their summed clause boosts; the whole query when it has no such word or no other."""
    if features is None or bound is None or len(features) <= bound:
        return query, {}
    common: dict[str, float] = {}
    kept = []
    for clause in query.clauses:
        if clause.phrase or clause.occur is not Occur.SHOULD:
            kept.append(clause)
            continue
        rare = [w for w in clause.words if features.holder_count(w) <= bound]
        for word in clause.words:
            if word not in rare:
                common[word] = common.get(word, 0.0) + clause.boost
        if rare:
            kept.append(replace(clause, text=" ".join(rare)))
    if not common or not kept:
        return query, {}
    return Query(tuple(kept), max_postings=query.max_postings), common


def with_common_words(
    hits: RowHits, common: dict[str, float], features: FeatureStore, weight: float, window: int
) -> RowHits:
    """The best `window` of `hits` once each gains its common words' estimated share."""
    if not hits.rows:
        return hits
    rows = np.asarray(hits.rows, dtype=np.int64)
    scores = np.asarray(hits.scores, dtype=np.float64).copy()
    feature_rows = rows - 1  # store rows -> feature rows
    total = len(features)
    holding = features.holds_words(list(common), feature_rows)
    for (word, boost), holds in zip(common.items(), holding, strict=True):
        held = features.holder_count(word)
        idf = math.log(1.0 + (total - held + 0.5) / (held + 0.5))
        scores += boost * idf * weight * holds
    best = np.argsort(-scores, kind="stable")[:window]
    return RowHits(rows[best].tolist(), scores[best].tolist())


def within_budget(rows: np.ndarray, features: FeatureStore, filters: Filters | None) -> np.ndarray:
    """The feature rows whose price passes the budget filters (an unknown price passes, as in
    the search)."""
    if filters is None or not len(rows):
        return rows
    price = features.price[rows]
    keep = np.ones(len(rows), dtype=bool)
    if filters.min_price is not None:
        keep &= ~(price < filters.min_price)
    if filters.max_price is not None:
        keep &= ~(price > filters.max_price)
    return rows[keep]


def large_category(
    state: ShoppingState,
    index,
    window: int,
    settings: RetrievalSettings,
    filters: Filters | None,
    weights: dict[str, float],
    features: FeatureStore | None = None,
) -> bool:
    """Do the products whose category paths hold every word the shopper named the item with
    (within the budget) outnumber the window `facts_ratio` times? Words no path holds (a
    shopper's own word for the item) make no large category. With the feature store the paths'
    stems are counted there (a search counting a word every path holds, under a price filter,
    walked a million products)."""
    words = [tokens(c.text or c.value) for c in state.active(Attribute.CATEGORY)[-1:]]
    if not words or not words[0] or not settings.facts_ratio:
        return False
    limit = settings.facts_ratio * window
    if features is not None:
        stems = [("category_stems", stem(w)) for w in words[0]]
        return len(within_budget(rows_holding(features, stems), features, filters)) > limit
    inside = Query((terms(" ".join(words[0]), occur=Occur.MUST, fields=("categories",)),))
    return index.count(inside, filters=filters, weights=weights) > limit


def meaning_text(state: ShoppingState) -> str:
    """The shopper's own words for what they want this epoch, for the sentence encoder."""
    parts = [
        c.text or c.value
        for c in state.active()
        if c.attribute not in (Attribute.BUDGET, Attribute.SIZE)
    ]
    parts += [f.text for f in state.active_fragments()]
    return " ".join(p for p in parts if p)


def with_nearest(candidates: Candidates, store_rows: np.ndarray) -> Candidates:
    """The candidates plus the rows nearest in meaning that the words did not find (score 0)."""
    new = store_rows[~np.isin(store_rows, candidates.rows)]
    candidates.rows = np.concatenate([candidates.rows, new.astype(np.int64)])
    candidates.scores = np.concatenate([candidates.scores, np.zeros(len(new))])
    return candidates


def with_found(candidates: Candidates, more: Candidates) -> Candidates:
    """The candidates plus another search's rows they lack, with that search's scores."""
    new = ~np.isin(more.rows, candidates.rows)
    candidates.rows = np.concatenate([candidates.rows, np.asarray(more.rows)[new].astype(np.int64)])
    candidates.scores = np.concatenate([candidates.scores, np.asarray(more.scores)[new]])
    return candidates


def _unscored(hits: RowHits) -> RowHits:
    return RowHits(hits.rows, [0.0] * len(hits.rows))


def _first_of_each(found: list[RowHits]) -> tuple[np.ndarray, np.ndarray]:
    """All rows once, each with the score of the first search that found it."""
    if len(found) == 1:  # one search never returns a row twice
        return np.asarray(found[0].rows, dtype=np.int64), np.asarray(
            found[0].scores, dtype=np.float64
        )
    rows = np.concatenate([np.asarray(hits.rows, dtype=np.int64) for hits in found])
    scores = np.concatenate([np.asarray(hits.scores, dtype=np.float64) for hits in found])
    _, first = np.unique(rows, return_index=True)
    first.sort()
    return rows[first], scores[first]


def _describe(query: Query) -> str:
    parts = []
    for clause in query.clauses:
        text = " ".join(clause.words)
        parts.append(f'"{text}"' if clause.phrase else text)
    return " | ".join(parts)
