"""`open_index`: find, verify, (re)build and open the index of a catalog.

An index folder lives at `cache_dir()/index/<fingerprint>/`; the fingerprint
covers the catalog's content, the index layout, the tokenizers and the
attribute derivation, so any change to those means a different folder.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from .. import paths
from ..catalog.loader import CatalogError
from ..workers import progress_counter
from . import features_build
from .build import MANIFEST_FILE, build_index, build_lock
from .derived import attributes_version
from .errors import CorruptIndexError
from .fields import DEFAULT_WEIGHTS, SEARCH_FIELDS, STARTER_WEIGHTS, resolve_weights
from .fingerprint import catalog_sha256, index_fingerprint, write_json_atomic
from .fts5_backend import FTS5_FILE, Fts5Backend, build_fts5
from .integrity import find_damage, snapshot
from .query import NO_FILTERS, Filters, Hit, Query, RowHits, as_query
from .store import ProductStore
from .tantivy_backend import TantivyBackend
from .tokenize import TOKENIZER_SETTINGS

log = logging.getLogger(__name__)

# Bump when the store schema, the tantivy schema, the FTS5 table or the field contents change.
INDEX_SCHEMA_VERSION = 1
BACKENDS = ("tantivy", "fts5")
DEFAULT_BACKEND = "tantivy"
FTS5_MANIFEST_FILE = "fts5.json"
HASH_CACHE_FILE = "catalog-hashes.json"
RECENT_SEARCHES = 512  # row answers kept for repeated searches
SEARCH_HELPERS = 2  # threads running a turn's second and third searches (a brand, the quotes)

# Each back end ranks with its own defaults: fts5 reproduces the starter as it was.
BACKEND_WEIGHTS: dict[str, Mapping[str, float]] = {
    "tantivy": DEFAULT_WEIGHTS,
    "fts5": STARTER_WEIGHTS,
}


class SearchBackend(Protocol):
    name: str

    def ranked_rows(
        self,
        query: Query,
        *,
        limit: int,
        offset: int,
        filters: Filters,
        weights: Mapping[str, float],
    ) -> RowHits: ...

    def count(self, query: Query, *, filters: Filters, weights: Mapping[str, float]) -> int: ...


def index_root() -> Path:
    return paths.cache_dir() / "index"


def open_index(
    catalog_path: str | Path | None = None, *, rebuild: bool = False, progress: bool = True
) -> CatalogIndex:
    """The index of `catalog_path` (None: the default synthetic catalog), built on first use.

    A missing, stale or damaged index is rebuilt (with a warning for the last
    two); `rebuild` forces a fresh build.
    """
    catalog = paths.resolve_catalog(catalog_path)
    if not catalog.is_file():
        raise CatalogError(f"catalog not found (or not a file): {catalog}")
    root = index_root()
    parts = fingerprint_parts(catalog_sha256(catalog, root / HASH_CACHE_FILE))
    fingerprint = index_fingerprint(parts)
    folder = root / fingerprint
    index = None if rebuild else _open_existing(folder, catalog, progress, announce=True)
    if index is not None and features_build.is_written(index.store, folder):
        return index
    built = False
    with build_lock(root, fingerprint):
        # Another process may have finished the build while this one waited for the lock.
        if index is None and not rebuild:
            index = _open_existing(folder, catalog, progress, announce=False)
        if index is None:
            build_index(catalog, folder, parts, progress=progress)
            index, built = CatalogIndex.load(folder, catalog, progress=progress), True
        # The ranking features belong to the index: written now, in slices, never on a turn.
        features_build.ensure_written(index.store, folder, progress=progress)
    if built:
        _prune_older_builds(root, catalog, parts)
    return index


def fingerprint_parts(catalog_sha: str) -> dict[str, Any]:
    return {
        "catalog_sha256": catalog_sha,
        "schema_version": INDEX_SCHEMA_VERSION,
        "tokenizers": TOKENIZER_SETTINGS,
        "fields": list(SEARCH_FIELDS),
        "attributes_version": attributes_version(),
    }


def _open_existing(
    folder: Path, catalog: Path, progress: bool, *, announce: bool
) -> CatalogIndex | None:
    if not folder.exists():
        return None
    try:
        return CatalogIndex.load(folder, catalog, progress=progress)
    except CorruptIndexError as exc:
        if announce:
            log.warning("index %s is unusable (%s); rebuilding it", folder, exc)
        return None


def _prune_older_builds(root: Path, catalog: Path, parts: dict[str, Any]) -> None:
    """Delete indexes of earlier contents of this catalog path, built by this same code.

    Builds by other code versions are left alone: another process may still be using them.
    """
    wanted = str(catalog.resolve())
    same_code = {key: value for key, value in parts.items() if key != "catalog_sha256"}
    for manifest_path in root.glob(f"*/{MANIFEST_FILE}"):
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            built_from = manifest["catalog"]["path"]
            old_parts = dict(manifest["fingerprint_parts"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        old_sha = old_parts.pop("catalog_sha256", None)
        if built_from == wanted and old_parts == same_code and old_sha != parts["catalog_sha256"]:
            folder = manifest_path.parent
            with build_lock(root, folder.name):
                log.info("removing index %s built from an earlier version of %s", folder, catalog)
                shutil.rmtree(folder, ignore_errors=True)


def prune_other_versions(root: Path | None = None, *, dry_run: bool = False) -> list[Path]:
    """Delete index folders this code can never open again (built by another code version, or
    unreadable) and temp folders of crashed builds; returns what was (or would be) deleted.

    A folder is only deleted while its build lock is free, so a build in progress is never
    touched; a process of an older version still reading one loses it (run this when none is).
    """
    root = root or index_root()
    same_code = {
        key: value for key, value in fingerprint_parts("").items() if key != "catalog_sha256"
    }
    doomed = []
    for folder in sorted(p for p in root.glob("*") if p.is_dir()):
        name = folder.name.lstrip(".").split(".")[0]
        if folder.name.startswith(".") or _built_by_other_code(folder, same_code):
            doomed.append((name, folder))
    removed = []
    for name, folder in doomed:
        with build_lock(root, name, wait=False) as free:
            if free:
                if not dry_run:
                    shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


def _built_by_other_code(folder: Path, same_code: dict[str, Any]) -> bool:
    try:
        parts = dict(
            json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))["fingerprint_parts"]
        )
    except (OSError, ValueError, KeyError, TypeError):
        return True  # no readable manifest: never opened as it is
    parts.pop("catalog_sha256", None)
    return parts != same_code


class CatalogIndex:
    """A built index: the product store plus the search back ends over it. Read-only."""

    def __init__(
        self,
        folder: Path,
        catalog_path: Path,
        manifest: dict[str, Any],
        store: ProductStore,
        *,
        progress: bool,
    ) -> None:
        self.path = folder
        self.catalog_path = catalog_path
        self.manifest = manifest
        self.store = store
        self.progress = progress  # show a bar if a lazy back end has to be built
        self._backends: dict[str, SearchBackend] = {
            "tantivy": TantivyBackend(folder / "tantivy", store)
        }
        # A conversation repeats searches (an unchanged quote list, a "no preference" turn); the
        # index never changes, so a repeated search can reuse its answer.
        self._recent: OrderedDict[tuple[Any, ...], RowHits] = OrderedDict()
        self._recent_lock = threading.Lock()
        self._helpers: ThreadPoolExecutor | None = None  # made on the first concurrent search
        self._helpers_lock = threading.Lock()

    @classmethod
    def load(cls, folder: Path, catalog_path: Path, *, progress: bool = True) -> CatalogIndex:
        """Open a built folder, checking it first; raises CorruptIndexError when anything is off."""
        manifest = _read_manifest(folder)
        damage = find_damage(folder, manifest["files"])
        if damage:
            raise CorruptIndexError(f"{folder}: {damage}")
        store = ProductStore(folder / "store.sqlite")
        if len(store) != manifest["products"]:
            expected = manifest["products"]
            raise CorruptIndexError(
                f"{folder}: store holds {len(store)} products, manifest says {expected}"
            )
        return cls(folder, Path(catalog_path), manifest, store, progress=progress)

    @property
    def fingerprint(self) -> str:
        return self.path.name

    def __reduce__(self) -> tuple[Any, ...]:
        # Workers re-open the same folder by path; nothing heavy crosses the process boundary.
        return (_reopen, (self.path, self.catalog_path, self.progress))

    def search(
        self,
        query: str | Query,
        *,
        limit: int = 10,
        offset: int = 0,
        filters: Filters | None = None,
        weights: Mapping[str, float] | None = None,
        backend: str | None = None,
    ) -> list[Hit]:
        """Ranked hits, best first. `weights` overrides the back end's per-field defaults (0 = not
        searched)."""
        found = self.search_rows(
            query, limit=limit, offset=offset, filters=filters, weights=weights, backend=backend
        )
        asins = self.store.asins_for_rows(found.rows)
        return [
            Hit(asin, float(score), offset + position)
            for position, (asin, score) in enumerate(zip(asins, found.scores, strict=True), start=1)
        ]

    def search_rows(
        self,
        query: str | Query,
        *,
        limit: int = 10,
        offset: int = 0,
        filters: Filters | None = None,
        weights: Mapping[str, float] | None = None,
        backend: str | None = None,
    ) -> RowHits:
        """`search` as store rows (1, 2, ...) and scores, for callers that work on rows."""
        if not isinstance(limit, int) or limit < 0:
            raise ValueError(f"limit must be an integer >= 0, got {limit!r}")
        if not isinstance(offset, int) or offset < 0:
            raise ValueError(f"offset must be an integer >= 0, got {offset!r}")
        chosen = self.backend(backend)
        parsed, used_filters = as_query(query), filters or NO_FILTERS
        used_weights = resolve_weights(weights, BACKEND_WEIGHTS[chosen.name])
        key = (chosen.name, parsed, limit, offset, used_filters, tuple(used_weights.items()))
        with self._recent_lock:
            if (found := self._recent.get(key)) is not None:
                self._recent.move_to_end(key)
                return found
        found = chosen.ranked_rows(
            parsed,
            limit=min(limit, len(self.store)),  # tantivy sizes its top-k heap by the limit
            offset=offset,
            filters=used_filters,
            weights=used_weights,
        )
        self.store.check_rows(found.rows)
        found = RowHits(tuple(found.rows), tuple(found.scores))  # shared from now on: read-only
        with self._recent_lock:
            self._recent[key] = found
            if len(self._recent) > RECENT_SEARCHES:
                self._recent.popitem(last=False)
        return found

    def search_rows_together(
        self,
        requests: Sequence[tuple[Query, int]],
        *,
        filters: Filters | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> list[RowHits]:
        """`search_rows` for several (query, limit) pairs, in order. tantivy releases the GIL
        while it searches, so the others run on helper threads while this one runs the first:
        a turn waits for its slowest search, not for their sum, when a core is free."""
        if not requests:
            return []
        (query, limit), rest = requests[0], requests[1:]
        if rest:
            helpers = self._search_helpers()
            later = [
                helpers.submit(self.search_rows, q, limit=n, filters=filters, weights=weights)
                for q, n in rest
            ]
        else:
            later = []
        first = self.search_rows(query, limit=limit, filters=filters, weights=weights)
        return [first, *(search.result() for search in later)]

    def _search_helpers(self) -> ThreadPoolExecutor:
        with self._helpers_lock:
            if self._helpers is None:
                self._helpers = ThreadPoolExecutor(
                    max_workers=SEARCH_HELPERS, thread_name_prefix="search"
                )
            return self._helpers

    def count(
        self,
        query: str | Query,
        *,
        filters: Filters | None = None,
        weights: Mapping[str, float] | None = None,
        backend: str | None = None,
    ) -> int:
        """How many products match (the number `search` could page through)."""
        chosen = self.backend(backend)
        weights_used = resolve_weights(weights, BACKEND_WEIGHTS[chosen.name])
        return chosen.count(as_query(query), filters=filters or NO_FILTERS, weights=weights_used)

    def backend(self, name: str | None = None) -> SearchBackend:
        """A search back end by name; FTS5 is built on first use (it only serves the starter
        baseline)."""
        name = name or DEFAULT_BACKEND
        if name not in BACKENDS:
            raise ValueError(
                f"unknown search back end {name!r}; choose one of {', '.join(BACKENDS)}"
            )
        if name not in self._backends:
            self._backends[name] = self._open_fts5()
        return self._backends[name]

    def _open_fts5(self) -> Fts5Backend:
        if (backend := self._try_fts5(announce=True)) is not None:
            return backend
        with build_lock(self.path.parent, self.fingerprint):
            if (backend := self._try_fts5(announce=False)) is not None:
                return backend
            self._build_fts5()
        return Fts5Backend(self.path, self.store)

    def _try_fts5(self, *, announce: bool) -> Fts5Backend | None:
        manifest_path = self.path / FTS5_MANIFEST_FILE
        if not manifest_path.exists():
            return None
        try:
            files = json.loads(manifest_path.read_text(encoding="utf-8"))["files"]
            damage = find_damage(self.path, files)
            if damage:
                raise CorruptIndexError(f"{self.path}: {damage}")
            return Fts5Backend(self.path, self.store)
        except (CorruptIndexError, OSError, ValueError, KeyError, TypeError) as exc:
            if announce:
                log.warning("FTS5 index in %s is unusable (%s); rebuilding it", self.path, exc)
            return None

    def _build_fts5(self) -> None:
        """Write fts5.sqlite beside the store via a temp file, then record its checksum."""
        started = time.perf_counter()
        (self.path / FTS5_MANIFEST_FILE).unlink(missing_ok=True)
        temp = self.path / f".{FTS5_FILE}.building-{os.getpid()}"
        temp.unlink(missing_ok=True)
        try:
            with progress_counter("building FTS5", enabled=self.progress) as tick:
                build_fts5(temp, self.store.indexable(), tick)
            os.replace(temp, self.path / FTS5_FILE)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        manifest = {
            "files": snapshot(self.path, [FTS5_FILE]),
            "build_seconds": round(time.perf_counter() - started, 3),
        }
        write_json_atomic(self.path / FTS5_MANIFEST_FILE, manifest)

    def close(self) -> None:
        if self._helpers is not None:
            self._helpers.shutdown(wait=True)
        fts5 = self._backends.get("fts5")
        if isinstance(fts5, Fts5Backend):
            fts5.close()
        self.store.close()


def _reopen(folder: Path, catalog_path: Path, progress: bool) -> CatalogIndex:
    return CatalogIndex.load(folder, catalog_path, progress=progress)


def _read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CorruptIndexError(f"{path}: missing (an interrupted or foreign build)") from exc
    except (OSError, ValueError) as exc:
        raise CorruptIndexError(f"{path}: unreadable ({exc})") from exc
    if (
        not isinstance(manifest, dict)
        or not isinstance(manifest.get("files"), dict)
        or "products" not in manifest
    ):
        raise CorruptIndexError(f"{path}: not an index manifest")
    if manifest.get("fingerprint") != folder.name:
        raise CorruptIndexError(
            f"{path}: built for fingerprint {manifest.get('fingerprint')!r}, not {folder.name!r}"
        )
    return manifest
