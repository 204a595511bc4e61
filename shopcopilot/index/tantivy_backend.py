"""The tantivy back end: one text field per catalog field, boosts applied at query time."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import cast

import orjson
import tantivy

from ..catalog.product import Product
from .derived import Derived
from .errors import CorruptIndexError
from .fields import SEARCH_FIELDS, field_values
from .query import Filters, Occur, Query, RowHits
from .store import ProductStore

TANTIVY_DIR = "tantivy"
# One indexing thread keeps a 50k catalog in one segment, so equal scores
# tie-break by catalog order exactly as the FTS5 back end does.
WRITER_THREADS = 1
WRITER_HEAP_BYTES = 256_000_000
TERM_CACHE_SIZE = 200_000


def build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in SEARCH_FIELDS:
        builder.add_text_field(
            name, stored=False, tokenizer_name="default", index_option="position"
        )
    builder.add_unsigned_field("row", stored=False, indexed=False, fast=True)
    builder.add_float_field("price", stored=False, indexed=False, fast=True)
    builder.add_text_field("department", stored=False, tokenizer_name="raw", index_option="basic")
    return builder.build()


def document_json(product: Product, derived: Derived) -> str:
    """A product's tantivy document without its row number, as JSON (made in the build's
    workers)."""
    texts = field_values(product, derived.search_text)
    doc: dict[str, object] = {name: values for name, values in texts.items() if values}
    if product.price is not None and math.isfinite(product.price):
        doc["price"] = product.price
    if derived.department:
        doc["department"] = derived.department
    # Strings and a finite price only, so orjson writes it (about 4x faster than the stdlib)
    # unless a string holds a lone surrogate, which it refuses: the stdlib escapes that one.
    try:
        return orjson.dumps(doc).decode()
    except orjson.JSONEncodeError:
        return json.dumps(doc)


class TantivyWriter:
    """Feeds documents to tantivy's own indexing thread while Python reads the catalog."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True)
        self._schema = build_schema()
        self._index = tantivy.Index(
            self._schema, path=str(folder), reuse=False, sort_by_field="row"
        )
        self._writer = self._index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=WRITER_THREADS)

    def add(self, row: int, document: str, price: float | None) -> None:
        """Index `document_json()` of a product as store row `row`."""
        if price is not None and not math.isfinite(price):
            # JSON cannot hold an infinite price: that rare document is built from the dict instead.
            fields = json.loads(document)
            fields.update(row=row, price=price)
            self._writer.add_document(tantivy.Document.from_dict(fields, self._schema))
            return
        # Tantivy parses a JSON document in Rust, much faster than it converts a dict; the row
        # number, known only here, goes first (document always holds the title).
        self._writer.add_json(f'{{"row": {row}, {document[1:]}')

    def close(self) -> None:
        self._writer.commit()
        self._writer.wait_merging_threads()

    def abort(self) -> None:
        """Stop tantivy's threads before the temp folder is deleted under them."""
        self._writer.rollback()
        self._writer.wait_merging_threads()


class TantivyBackend:
    name = "tantivy"

    def __init__(self, folder: Path, store: ProductStore) -> None:
        self.folder = folder
        self._store = store
        try:
            self._index = tantivy.Index.open(str(folder))
            self._searcher = self._index.searcher()
        except (ValueError, OSError) as exc:
            raise CorruptIndexError(f"{folder}: tantivy index unreadable ({exc})") from exc
        self._schema = self._index.schema
        self._term_cache: dict[tuple[str, str, float], tantivy.Query] = {}
        self._doc_freqs: dict[tuple[str, str], int] = {}
        if self._searcher.num_docs != len(store):
            raise CorruptIndexError(
                f"{folder}: tantivy holds {self._searcher.num_docs} documents "
                f"but the store holds {len(store)}"
            )

    def ranked_rows(
        self,
        query: Query,
        *,
        limit: int,
        offset: int,
        filters: Filters,
        weights: Mapping[str, float],
    ) -> RowHits:
        compiled = self._compile(query, filters, weights)
        if compiled is None or limit == 0:
            return RowHits.empty()
        hits = self._searcher.search(compiled, limit=limit, offset=offset, count=False).hits
        if not hits:
            return RowHits.empty()
        # "row" is a u64 fast field that every `add` writes: ints, never None.
        rows = cast(
            "list[int]", self._searcher.fast_field_values("row", [address for _, address in hits])
        )
        return RowHits(rows, [score for score, _ in hits])

    def count(self, query: Query, *, filters: Filters, weights: Mapping[str, float]) -> int:
        compiled = self._compile(query, filters, weights)
        if compiled is None:
            return 0
        # tantivy's stub (0.27) omits SearchResult.count, which the binding has.
        return self._searcher.search(compiled, limit=1, count=True).count  # type: ignore[attr-defined]

    def _compile(
        self, query: Query, filters: Filters, weights: Mapping[str, float]
    ) -> tantivy.Query | None:
        """The text query AND the filters, or None when nothing can match."""
        text = self._text_query(query, weights)
        if text is None:
            return None
        if filters.is_empty:
            return text
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, text), *self._filter_clauses(filters)]
        )

    def _text_query(self, query: Query, weights: Mapping[str, float]) -> tantivy.Query | None:
        """One flat boolean query: optional (field, word) terms are summed in a single union,
        which tantivy scores about twice as fast as one nested group per word."""
        subqueries = self._subqueries(query, weights, query.max_postings)
        if (
            subqueries is not None
            and query.max_postings is not None
            and _nothing_scores(subqueries)
        ):
            subqueries = self._subqueries(query, weights, None)  # every word was too common
        if subqueries is None or _nothing_scores(subqueries):
            return None
        return tantivy.Query.boolean_query(subqueries)

    def _subqueries(
        self, query: Query, weights: Mapping[str, float], max_postings: int | None
    ) -> list[tuple[tantivy.Occur, tantivy.Query]] | None:
        """The clauses' tantivy subqueries, without optional words (and phrases) held by more
        than `max_postings` products in a field; None when a required clause cannot match."""
        optional: dict[tuple[str, str], float] = defaultdict(
            float
        )  # repeated words add up their boosts
        grouped: list[tuple[tantivy.Occur, tantivy.Query]] = []
        field_boosts: dict[
            tuple[tuple[str, ...], float], dict[str, float]
        ] = {}  # parsed text: a clause a word
        for clause in query.clauses:
            boosts = field_boosts.get((clause.fields, clause.boost))
            if boosts is None:
                fields = [name for name in (clause.fields or SEARCH_FIELDS) if weights[name] > 0]
                boosts = field_boosts[(clause.fields, clause.boost)] = {
                    name: weights[name] * clause.boost for name in fields
                }
            if not boosts or not clause.words:
                if clause.occur is Occur.MUST:
                    return None  # a required clause that no searched field can satisfy
                continue
            if clause.occur is Occur.MUST_NOT:
                grouped += [
                    (tantivy.Occur.MustNot, self._term(word, name))
                    for word in clause.words
                    for name in boosts
                ]
            elif clause.phrase and len(clause.words) > 1:
                per_field = [
                    _boosted(self._phrase(clause.words, name), boost)
                    for name, boost in boosts.items()
                    if clause.occur is Occur.MUST
                    or not self._too_common(clause.words, name, max_postings)
                ]
                if clause.occur is Occur.MUST:
                    grouped.append((tantivy.Occur.Must, _any_of(per_field)))
                else:
                    grouped += [(tantivy.Occur.Should, query) for query in per_field]
            elif clause.occur is Occur.MUST:
                for word in clause.words:
                    per_field = [
                        self._boosted_term(word, name, boost) for name, boost in boosts.items()
                    ]
                    grouped.append((tantivy.Occur.Must, _any_of(per_field)))
            else:
                for word in clause.words:
                    for name, boost in boosts.items():
                        if not self._too_common((word,), name, max_postings):
                            optional[(name, word)] += boost
        return grouped + [
            (tantivy.Occur.Should, self._boosted_term(word, name, boost))
            for (name, word), boost in optional.items()
        ]

    def _too_common(
        self, words: tuple[str, ...], field_name: str, max_postings: int | None
    ) -> bool:
        """Under a bound: is every one of `words` held by more than `max_postings` products in
        the field, or one by none (a term that matches nothing is left out too, so that a query
        left with nothing to score is known as such)?"""
        if max_postings is None or max_postings >= self._searcher.num_docs:
            return False  # no word can pass the bound: no need to look
        held = [self._doc_freq(word, field_name) for word in words]
        return min(held) == 0 or min(held) > max_postings

    def _doc_freq(self, word: str, field_name: str) -> int:
        key = (word, field_name)
        found = self._doc_freqs.get(key)
        if found is None:
            if len(self._doc_freqs) >= TERM_CACHE_SIZE:
                self._doc_freqs.clear()
            found = self._doc_freqs[key] = self._searcher.doc_freq(field_name, word)
        return found

    def _boosted_term(self, word: str, field_name: str, boost: float) -> tantivy.Query:
        # Building query objects costs a fifth of a search, and conversations repeat their words:
        # tantivy queries are immutable, so one object serves every search that needs it.
        key = (word, field_name, boost)
        query = self._term_cache.get(key)
        if query is None:
            if len(self._term_cache) >= TERM_CACHE_SIZE:
                self._term_cache.clear()
            query = self._term_cache[key] = _boosted(self._term(word, field_name), boost)
        return query

    def _term(self, word: str, field_name: str) -> tantivy.Query:
        return tantivy.Query.term_query(self._schema, field_name, word)

    def _phrase(self, words: tuple[str, ...], field_name: str) -> tantivy.Query:
        return tantivy.Query.phrase_query(self._schema, field_name, list(words))

    def _filter_clauses(self, filters: Filters) -> list[tuple[tantivy.Occur, tantivy.Query]]:
        """Filters as clauses that never change the score: exclusions, or required zero-score
        matches."""
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        price = tantivy.FieldType.Float
        if filters.min_price is not None:
            below = tantivy.Query.range_query(
                self._schema,
                "price",
                price,
                upper_bound=float(filters.min_price),
                include_upper=False,
            )
            clauses.append((tantivy.Occur.MustNot, below))
        if filters.max_price is not None:
            above = tantivy.Query.range_query(
                self._schema,
                "price",
                price,
                lower_bound=float(filters.max_price),
                include_lower=False,
            )
            clauses.append((tantivy.Occur.MustNot, above))
        if filters.limits_price and not filters.include_missing_price:
            clauses.append((tantivy.Occur.Must, _zero_score(tantivy.Query.exists_query("price"))))
        if filters.departments:
            departments = tantivy.Query.term_set_query(
                self._schema, "department", list(filters.departments)
            )
            clauses.append((tantivy.Occur.Must, _zero_score(departments)))
        return clauses


def _any_of(queries: list[tantivy.Query]) -> tantivy.Query:
    if len(queries) == 1:
        return queries[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, query) for query in queries])


def _boosted(query: tantivy.Query, boost: float) -> tantivy.Query:
    return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)


def _nothing_scores(subqueries: list[tuple[tantivy.Occur, tantivy.Query]]) -> bool:
    """Only exclusions (or nothing): such a query would match no product."""
    return all(occur is tantivy.Occur.MustNot for occur, _ in subqueries)


def _zero_score(query: tantivy.Query) -> tantivy.Query:
    return tantivy.Query.const_score_query(query, 0.0)
