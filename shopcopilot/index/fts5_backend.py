"""The SQLite FTS5 back end: the organizer's weak starter, reproduced faithfully.

The starter ranked with FTS5 `bm25()` column weights over an OR of quoted
tokens (unicode61, no stemming). Every user word is quoted here, so no text can
produce an FTS5 syntax error.

The table holds the starter's six columns and not the derived "attrs" words:
bm25() normalises by the length of the whole row, so even an unweighted extra
column would change every score. Per-clause boosts have no FTS5 equivalent.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..catalog.product import Product
from .errors import CorruptIndexError, UnsupportedQueryError, sqlite_errors_as_corruption
from .fields import SEARCH_FIELDS, field_values
from .query import Filters, Occur, Query, RowHits
from .store import STORE_FILE, ProductStore, read_only_connection

FTS5_FILE = "fts5.sqlite"
FTS5_FIELDS = tuple(name for name in SEARCH_FIELDS if name != "attrs")
INSERT_BATCH = 1000

_CREATE = (
    f"CREATE VIRTUAL TABLE fts USING fts5({', '.join(FTS5_FIELDS)}, "
    "content='', tokenize='unicode61')"  # contentless: the store already holds the text
)
_INSERT = (
    f"INSERT INTO fts(rowid, {', '.join(FTS5_FIELDS)}) "
    f"VALUES ({','.join('?' * (len(FTS5_FIELDS) + 1))})"
)


def build_fts5(
    path: Path, products: Iterable[tuple[int, Product]], on_product: Callable[[], None]
) -> None:
    """Write the FTS5 table at `path`; rowids are the store rows."""
    db = sqlite3.connect(path)
    try:
        db.execute(
            "PRAGMA journal_mode=OFF"
        )  # written in place of a temp file; a crash discards it
        db.execute("PRAGMA synchronous=OFF")
        db.execute(_CREATE)
        batch: list[tuple[Any, ...]] = []
        for row, product in products:
            values = field_values(product, attrs_text="")
            batch.append((row, *("\n".join(values[name]) for name in FTS5_FIELDS)))
            on_product()
            if len(batch) >= INSERT_BATCH:
                db.executemany(_INSERT, batch)
                batch.clear()
        if batch:
            db.executemany(_INSERT, batch)
        db.execute(
            "INSERT INTO fts(fts) VALUES ('optimize')"
        )  # one b-tree per term: faster queries
        db.commit()
    finally:
        db.close()


class Fts5Backend:
    name = "fts5"

    def __init__(self, folder: Path, store: ProductStore) -> None:
        self.path = folder / FTS5_FILE
        self._store = store
        self._db = read_only_connection(self.path)
        self._lock = threading.Lock()  # one connection shared by threads
        store_uri = f"{(folder / STORE_FILE).as_uri()}?mode=ro&immutable=1"
        with sqlite_errors_as_corruption(self.path):
            # Filters read price and department from the store's columns.
            self._db.execute("ATTACH DATABASE ? AS store", (store_uri,))
            rows = self._db.execute("SELECT count(*) FROM fts_docsize").fetchone()[0]
        if rows != len(store):
            raise CorruptIndexError(
                f"{self.path}: FTS5 holds {rows} rows but the store holds {len(store)}"
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
        plan = _plan(query, weights)
        if plan is None or limit == 0:
            return RowHits.empty()
        rank = f"bm25(fts, {', '.join('?' * len(FTS5_FIELDS))})"
        where, params = _where(plan, filters)
        sql = (
            f"SELECT fts.rowid, {rank} AS s FROM fts {where} ORDER BY s, fts.rowid LIMIT ? OFFSET ?"
        )
        all_params = [weights[name] for name in FTS5_FIELDS] + params + [limit, offset]
        with self._lock, sqlite_errors_as_corruption(self.path):
            found = self._db.execute(sql, all_params).fetchall()
        # bm25() is "lower is better"; flip it so every back end reports higher = better.
        return RowHits([row for row, _ in found], [-score for _, score in found])

    def count(self, query: Query, *, filters: Filters, weights: Mapping[str, float]) -> int:
        plan = _plan(query, weights)
        if plan is None:
            return 0
        where, params = _where(plan, filters)
        with self._lock, sqlite_errors_as_corruption(self.path):
            return self._db.execute(f"SELECT count(*) FROM fts {where}", params).fetchone()[0]

    def close(self) -> None:
        self._db.close()


@dataclass(frozen=True, slots=True)
class _Plan:
    """FTS5 MATCH strings: `ranked` scores every positive phrase once; `required` (if any)
    filters."""

    ranked: str
    required: str | None


def _plan(query: Query, weights: Mapping[str, float]) -> _Plan | None:
    if weights["attrs"] > 0:
        raise UnsupportedQueryError(
            "the fts5 back end has no 'attrs' column (it reproduces the starter); "
            "set its weight to 0 or use the tantivy back end"
        )
    if query.max_postings is not None:
        raise UnsupportedQueryError(
            "the fts5 back end scores every word (it reproduces the starter); "
            "leave max_postings unset or use the tantivy back end"
        )
    should: list[str] = []
    must: list[str] = []
    excluded: list[str] = []
    for clause in query.clauses:
        if clause.boost != 1.0:
            raise UnsupportedQueryError(
                f"the fts5 back end ranks only by bm25() column weights; "
                f"clause {clause.text!r} has boost {clause.boost} "
                f"(use the tantivy back end for per-clause boosts)"
            )
        if "attrs" in clause.fields:
            raise UnsupportedQueryError(
                f"the fts5 back end has no 'attrs' column; clause {clause.text!r} asks for it"
            )
        columns = [name for name in (clause.fields or FTS5_FIELDS) if weights[name] > 0]
        words = clause.words
        if not columns or not words:
            if clause.occur is Occur.MUST:
                return None  # required, yet no searched column can hold it
            continue
        phrases = [_quoted(" ".join(words))] if clause.phrase else [_quoted(word) for word in words]
        scoped = [_scoped(phrase, columns) for phrase in phrases]
        {Occur.SHOULD: should, Occur.MUST: must, Occur.MUST_NOT: excluded}[clause.occur].extend(
            scoped
        )
    if not should and not must:
        return None
    negative = f" NOT ({' OR '.join(excluded)})" if excluded else ""
    if must and not should:
        return _Plan(f"({' AND '.join(must)}){negative}", None)
    # bm25() sums over the phrases of the MATCH expression, so each positive phrase
    # appears there once; the must-clauses are checked by a second MATCH.
    required = f"({' AND '.join(must)})" if must else None
    return _Plan(f"({' OR '.join(must + should)}){negative}", required)


def _where(plan: _Plan, filters: Filters) -> tuple[str, list[Any]]:
    joins = ""
    conditions = ["fts MATCH ?"]
    params: list[Any] = [plan.ranked]
    if plan.required:
        conditions.append("fts.rowid IN (SELECT rowid FROM fts WHERE fts MATCH ?)")
        params.append(plan.required)
    if not filters.is_empty:
        joins = "JOIN store.products AS p ON p.row = fts.rowid "
        missing = "p.price IS NULL OR " if filters.include_missing_price else ""
        if filters.min_price is not None:
            conditions.append(f"({missing}p.price >= ?)")
            params.append(filters.min_price)
        if filters.max_price is not None:
            conditions.append(f"({missing}p.price <= ?)")
            params.append(filters.max_price)
        if filters.departments:
            conditions.append(f"p.department IN ({','.join('?' * len(filters.departments))})")
            params.extend(filters.departments)
    return f"{joins}WHERE {' AND '.join(conditions)}", params


def _quoted(text: str) -> str:
    # An FTS5 string: everything inside is text, never syntax ("" is a literal quote).
    return '"' + text.replace('"', '""') + '"'


def _scoped(phrase: str, columns: list[str]) -> str:
    if len(columns) == len(FTS5_FIELDS):
        return phrase
    return f"{{{' '.join(columns)}}} : {phrase}"
