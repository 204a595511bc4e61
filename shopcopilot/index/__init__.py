"""The persistent catalog index: a product store plus BM25 search (tantivy, or SQLite FTS5).

index = open_index("catalog.jsonl.gz")         # built once, then reused
hits = index.search("red cotton dress", limit=10, filters=Filters(max_price=40))
product = index.store.get(hits[0].parent_asin)
found = index.search_rows("red cotton dress", limit=300)  # store rows and scores, no ids
"""

from .catalog_index import BACKENDS, DEFAULT_BACKEND, CatalogIndex, SearchBackend, open_index
from .errors import CorruptIndexError, UnsupportedQueryError
from .fields import DEFAULT_WEIGHTS, SEARCH_FIELDS, STARTER_WEIGHTS
from .query import Clause, Filters, Hit, Occur, Query, RowHits, phrase, terms
from .store import ProductFacts, ProductStore

__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "DEFAULT_WEIGHTS",
    "SEARCH_FIELDS",
    "STARTER_WEIGHTS",
    "CatalogIndex",
    "Clause",
    "CorruptIndexError",
    "Filters",
    "Hit",
    "Occur",
    "ProductFacts",
    "ProductStore",
    "Query",
    "RowHits",
    "SearchBackend",
    "UnsupportedQueryError",
    "open_index",
    "phrase",
    "terms",
]
