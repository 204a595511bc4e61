"""What understanding needs to know of a catalog, counted once per index: its category
paths with their product counts, its store names and the words it uses often.

Counted inside SQLite (without decoding every record in Python) and kept beside the
index as JSON, with any value worked out from them (`CatalogCounts.remembered`), so the
state stage itself reads no files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .store import read_only_connection
from .text import tokens

COUNTS_FILE = "lexicon-counts.json"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class CatalogCounts:
    paths: dict[tuple[str, ...], int]  # category path -> products filed under it
    brands: list[str]  # distinct store names
    words: list[str]  # words the catalog uses at least a few times: never taken for typos
    raw: dict[str, Any]  # the cached JSON, derived values included
    cache: Path | None

    def remembered(self, name: str, version: str, compute: Callable[[], T]) -> T:
        """A value derived from the counts, worked out once per `version` and kept in the cache."""
        if self.raw.get(f"{name}_version") == version and name in self.raw:
            return self.raw[name]
        value = compute()
        self.raw[name], self.raw[f"{name}_version"] = value, version
        if self.cache:
            _write_cached(self.cache, self.raw)
        return value


def catalog_counts(store: Any, folder: Path | None = None) -> CatalogCounts:
    """The counts of the store's catalog, read from `folder`'s cache or counted (and cached)."""
    cached = folder / COUNTS_FILE if folder else None
    data = _read_cached(cached) if cached else None
    if data is None:
        data = _count_store(store)
        if cached:
            _write_cached(cached, data)
    paths = {tuple(path): count for path, count in data["paths"]}
    return CatalogCounts(paths, data["brands"], data.get("words", []), data, cached)


def _count_store(store: Any) -> dict[str, Any]:
    db = read_only_connection(store.path)
    try:
        paths: dict[tuple[str, ...], int] = {}
        for raw, count in db.execute(
            "SELECT json_extract(record, '$.categories'), count(*) FROM products GROUP BY 1"
        ):
            path = tuple(json.loads(raw)) if raw else ()
            paths[path] = paths.get(path, 0) + count
        brands = [
            name
            for (name,) in db.execute(
                "SELECT DISTINCT json_extract(record, '$.store') FROM products"
                " WHERE json_extract(record, '$.store') != ''"
            )
            if name
        ]
        words = _frequent_words(db)
    finally:
        db.close()
    return {"paths": [[list(p), c] for p, c in paths.items()], "brands": brands, "words": words}


def _frequent_words(db: Any, min_count: int = 3) -> list[str]:
    counts: dict[str, int] = {}
    sql = (
        "SELECT json_extract(record, '$.title') || ' ' || "
        "coalesce(json_extract(record, '$.features'), '') FROM products"
    )
    for (text,) in db.execute(sql):
        for word in set(tokens(text or "")):
            counts[word] = counts.get(word, 0) + 1
    return sorted(w for w, c in counts.items() if c >= min_count and w.isalpha())


def _read_cached(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # missing or damaged: count again
    return data if isinstance(data, dict) and {"paths", "brands"} <= data.keys() else None


def _write_cached(path: Path, data: dict[str, Any]) -> None:
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(json.dumps(data), encoding="utf-8")
        partial.replace(path)
    except OSError:
        partial.unlink(missing_ok=True)  # a read-only index folder only costs a recount next time
