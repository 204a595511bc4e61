"""Writing the FeatureStore's columns (see `features`): once per index, while it is built or
first opened by new code, never on a turn.

Products are read from the index store in slices, in parallel; each slice's words and values
get ids, and the slices are appended to flat column files as they arrive; then each word's and
value's rows are inverted a chunk at a time. Memory stays at a few slices plus the
vocabularies, whatever the catalog's size. The features' folder is named by a hash of this
module: changing it makes every index rebuild its features on next open.
"""

from __future__ import annotations

import itertools
import json
import math
import multiprocessing
import os
import shutil
from collections.abc import Iterable
from contextlib import ExitStack
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..catalog.attributes import Attributes
from ..catalog.product import Product
from ..workers import parallel_workers, progress_counter
from .categoriser import ensure_trained
from .errors import CorruptIndexError
from .features import (
    CODE_FACETS,
    FEATURES_META,
    FEATURES_PREFIX,
    LIST_FACETS,
    FeatureStore,
    Keys,
    Ragged,
    _open,
    _ragged_column,
    _read_meta,
    _stable_order,
    features_folder,
    features_version,
)
from .store import stored_json_rows
from .text import path_stems, tokens

# Sellers put a product's main selling points first; a requirement met there is met prominently.
LEAD_FEATURES = 4
POPULARITY_SCALE = math.log1p(100_000)
SLICE_ROWS = 5_000
PARALLEL_MIN_ROWS = 20_000
POSTING_CHUNK_IDS = 4_000_000  # ids inverted at a time while writing postings (bounded memory)

# A whole product is tokenised in one pass as bytes: fields joined by a NUL byte, every byte
# that is not [a-z0-9] (index.text.tokens' token) turned into a space, non-ASCII first into "?".
_FIELD_BREAK = "\x00"
_SPACE_OUT = bytes(c if (48 <= c <= 57 or 97 <= c <= 122 or c == 0) else 32 for c in range(256))


def is_written(store: Any, folder: Path) -> bool:
    """Are this code's features of the store in the index folder (not opened: cheap)?"""
    return _read_meta(features_folder(folder), len(store)) is not None


def ensure_written(store: Any, folder: Path, progress: bool = False) -> None:
    """Build and write the features unless this code's are already in `folder`. Called while the
    index is built or first opened by new code, never on a turn."""
    if not is_written(store, folder):
        build_features(store, folder, progress)


def ensure_built(store: Any, folder: Path, progress: bool = False) -> None:
    """`ensure_written`, and train the query categoriser unless it is saved (not loaded: cheap)."""
    ensure_written(store, folder, progress)
    ensure_trained(store, folder)


def load_or_build(store: Any, folder: Path, progress: bool = False) -> FeatureStore:
    """The features of an index's products, memory-mapped from its folder; built first when they
    are missing, damaged or from other code."""
    target = features_folder(folder)
    meta = _read_meta(target, len(store))
    if meta is None:
        build_features(store, folder, progress)
        meta = _read_meta(target, len(store))
        if meta is None:
            raise CorruptIndexError(f"{target}: written but unreadable")
    return _open(target, meta)


class FeatureBuilder:
    """Collects products one at a time; `finish()` freezes them into a FeatureStore."""

    def __init__(self) -> None:
        self.asins: list[str] = []
        self.word_id: dict[str, int] = {}
        self.value_id: dict[str, int] = {}
        self._words: list[list[int]] = []
        self._stems: list[list[int]] = []
        self._texts: list[bytes] = []
        self._leads: list[bytes] = []
        self._lists: dict[str, list[list[int]]] = {facet: [] for facet in LIST_FACETS}
        self._codes: dict[str, list[int]] = {facet: [] for facet in CODE_FACETS}
        self._numbers: list[tuple[float, float, float]] = []

    def add(self, product: Product, attributes: Attributes) -> None:
        self.add_stored(product.to_record(), attributes.to_dict())

    def add_stored(self, record: dict[str, Any], attributes: dict[str, Any]) -> None:
        """One product from its normalised record and its derived attributes, as the index stores
        them."""
        store = record["store"]
        fields = [
            record["title"],
            *record["features"],
            *(f"{k} {v}" for k, v in record["details"].items()),
            *record["description"],
            store,
        ]
        token_strings = _token_strings(fields)
        phrase_text = " | ".join(t for t in token_strings if t)
        stems = _category_stems(tuple(record["categories"]))
        self.asins.append(record["parent_asin"])
        self._words.append(self._ids(self.word_id, set(phrase_text.split()) | stems))
        self._stems.append(self._ids(self.word_id, stems))
        self._texts.append(f" {phrase_text} ".encode("ascii"))
        self._leads.append(
            _FIELD_BREAK.join(f" {t} " for t in token_strings[1 : 1 + LEAD_FEATURES]).encode(
                "ascii"
            )
        )
        materials = [m["name"] for m in attributes["materials"]]
        for facet, values in zip(
            LIST_FACETS,
            (
                attributes["colors"],
                materials,
                attributes["sizes"],
                attributes["use_cases"],
                attributes["styles"],
            ),
            strict=True,
        ):
            self._lists[facet].append(self._ids(self.value_id, dict.fromkeys(values)))
        brand = attributes["brand"] or ""
        for facet, value in zip(
            CODE_FACETS,
            (
                attributes["department"],
                attributes["closure"],
                attributes["leaf"],
                brand.lower(),
                store.lower(),
                brand or store,
            ),
            strict=True,
        ):
            self._codes[facet].append(self._ids(self.value_id, [value])[0] if value else -1)
        self._numbers.append(
            (
                _or_nan(record["price"]),
                _or_nan(record["average_rating"]),
                math.log1p(record["rating_number"] or 0) / POPULARITY_SCALE,
            )
        )

    def finish(self) -> FeatureStore:
        numbers = np.array(self._numbers, dtype=np.float64).reshape(-1, 3)
        text, text_ptr = _concatenate(self._texts)
        lead, lead_ptr = _concatenate(self._leads)
        return FeatureStore(
            asins=Keys.of(self.asins),
            word_id=Keys.of(self.word_id),
            words=_ragged(self._words),
            category_stems=_ragged(self._stems),
            text=text,
            text_ptr=text_ptr,
            lead=lead,
            lead_ptr=lead_ptr,
            lists={facet: _ragged(rows) for facet, rows in self._lists.items()},
            codes={facet: np.array(codes, dtype=np.int32) for facet, codes in self._codes.items()},
            value_names=list(self.value_id),
            price=numbers[:, 0].copy(),
            rating=numbers[:, 1].copy(),
            popularity=numbers[:, 2].copy(),
        )

    @staticmethod
    def _ids(table: dict[str, int], values: Iterable[str]) -> list[int]:
        values = list(values)
        # Set operations and map() keep the per-word work in C; sorted() keeps ids deterministic.
        for value in sorted(set(values).difference(table)):
            table[value] = len(table)
        return list(map(table.__getitem__, values))


def from_products(pairs: Iterable[tuple[Product, Attributes]]) -> FeatureStore:
    """A store in memory (tests, small catalogs made on the fly)."""
    builder = FeatureBuilder()
    for product, attributes in pairs:
        builder.add(product, attributes)
    return builder.finish()


def build_features(store: Any, folder: Path, progress: bool = False) -> None:
    """Write every product's features, in row order, into `folder`: slices built in parallel and
    appended to the column files as they arrive, then each word's and value's rows inverted in
    chunks. Memory stays at a few slices plus the vocabularies, whatever the catalog's size."""
    rows = len(store)
    workers = parallel_workers() if rows >= PARALLEL_MIN_ROWS else 1
    slices = [
        (store.path, first, min(first + SLICE_ROWS, rows)) for first in range(0, rows, SLICE_ROWS)
    ]
    target = features_folder(folder)
    work = folder / f".{target.name}.{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        with ExitStack() as stack:
            # The pool forks before the progress bar starts its thread: forking a threaded process
            # is unsafe.
            pool = (
                stack.enter_context(multiprocessing.get_context("fork").Pool(workers))
                if workers > 1
                else None
            )
            tick = stack.enter_context(progress_counter("ranking features", progress, total=rows))
            writer = stack.enter_context(ColumnWriter(work))
            for part in pool.imap(_build_slice, slices) if pool else map(_build_slice, slices):
                writer.add(part)
                tick(len(part))
        writer.finish(rows)
        _swap_into_place(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for stale in folder.glob(f"{FEATURES_PREFIX}*"):
        if stale == target:
            continue
        if stale.is_dir():  # from older code: never read again
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)


def _build_slice(piece: tuple[Path, int, int]) -> FeatureStore:
    path, first, last = piece
    builder = FeatureBuilder()
    for record, attributes in stored_json_rows(path, first, last):
        builder.add_stored(json.loads(record), json.loads(attributes))
    return builder.finish()


def _swap_into_place(work: Path, target: Path) -> None:
    """Rename the finished folder into place; a concurrent build that got there first wins."""
    if target.exists() and _read_meta(target, None) is None:
        shutil.rmtree(target, ignore_errors=True)  # damaged: replaced
    try:
        work.rename(target)
    except OSError:
        if _read_meta(target, None) is None:
            raise


class ColumnWriter:
    """Appends slices of features to flat column files, renumbering each slice's words and values
    into one vocabulary; keeps only the vocabularies and the slices' ids in memory."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.word_id: dict[str, int] = {}
        self.value_id: dict[str, int] = {}
        self.dtypes: dict[str, str] = {}
        self._asins: list[np.ndarray] = []
        self._files: dict[str, Any] = {}
        self._ends: dict[str, int] = {}  # the last pointer written to each ragged column

    def __enter__(self) -> ColumnWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()

    def add(self, part: FeatureStore) -> None:
        word_map = _merge_vocabulary(self.word_id, part.word_id)
        value_map = _merge_vocabulary(self.value_id, part.value_names)
        self._ragged("words", part.words.ptr, word_map[part.words.ids])
        stems = part.category_stems
        self._ragged("category_stems", stems.ptr, word_map[stems.ids])
        for facet in LIST_FACETS:
            ragged = part.lists[facet]
            self._ragged(f"list-{facet}", ragged.ptr, value_map[ragged.ids])
        self._ragged("text", part.text_ptr, np.frombuffer(part.text, dtype=np.uint8))
        self._ragged("lead", part.lead_ptr, np.frombuffer(part.lead, dtype=np.uint8))
        for facet in CODE_FACETS:
            codes = part.codes[facet]
            mapped = np.where(codes >= 0, value_map[np.maximum(codes, 0)], -1)
            self._append(f"code-{facet}", mapped.astype(np.int32))
        for name in ("price", "rating", "popularity"):
            self._append(name, getattr(part, name).astype(np.float64))
        self._asins.append(part.asins.raw)

    def finish(self, rows: int) -> None:
        """Writes the vocabularies, the ids, the postings and, last, the meta file that makes the
        folder complete."""
        self.close()
        asins = np.concatenate(self._asins) if self._asins else np.zeros(0, dtype="S1")
        if len(asins) != rows:
            raise CorruptIndexError(f"{self.folder}: features of {len(asins)} rows, not {rows}")
        self._keys("asins", Keys.sorted(asins))
        self._keys("words", Keys.of(self.word_id))
        (self.folder / "values.json").write_text(json.dumps(list(self.value_id)), "utf-8")
        for name in ("words", "category_stems", *(f"list-{f}" for f in LIST_FACETS)):
            id_count = (
                len(self.word_id) if name in ("words", "category_stems") else len(self.value_id)
            )
            self._postings(name, id_count)
        self.close()
        meta = {
            "rows": rows,
            "version": features_version(),
            "dtypes": self.dtypes,
            "sizes": {p.name: p.stat().st_size for p in sorted(self.folder.iterdir())},
        }
        (self.folder / FEATURES_META).write_text(json.dumps(meta, indent=1), "utf-8")

    def _keys(self, name: str, keys: Keys) -> None:
        for part in ("raw", "by_rank", "rank"):
            self._append(f"{name}-{part}", getattr(keys, part))
        self.close()

    def _append(self, name: str, values: np.ndarray) -> None:
        handle = self._files.get(name)
        if handle is None:
            handle = self._files[name] = (self.folder / name).open("wb")
            self.dtypes[name] = values.dtype.str
        values.tofile(handle)

    def _ragged(self, name: str, ptr: np.ndarray, ids: np.ndarray) -> None:
        """Appends rows of a ragged column: `ptr` counts from 0 within the slice."""
        if name not in self._ends:
            self._append(f"{name}-ptr", np.zeros(1, dtype=np.int64))
        offset = self._ends.get(name, 0)
        self._append(f"{name}-ptr", ptr[1:].astype(np.int64) + offset)
        self._append(f"{name}-ids", ids.astype(np.int32) if ids.dtype != np.uint8 else ids)
        self._ends[name] = offset + int(ptr[-1])

    def _postings(self, name: str, id_count: int) -> None:
        """The rows holding each id, ascending (as `Postings.of`), inverted a chunk of rows at a
        time into a file mapped for writing."""
        ragged = _ragged_column(self.folder, name, self.dtypes)
        rows, total = len(ragged.ptr) - 1, len(ragged.ids)
        ptr = np.zeros(id_count + 1, dtype=np.int64)
        for start in range(0, total, POSTING_CHUNK_IDS):
            ptr[1:] += np.bincount(
                ragged.ids[start : start + POSTING_CHUNK_IDS], minlength=id_count
            )
        np.cumsum(ptr, out=ptr)
        self._append(f"postings-{name}-ptr", ptr)
        out_path = self.folder / f"postings-{name}-rows"
        self.dtypes[out_path.name] = np.dtype(np.int32).str
        if not total:
            out_path.touch()
            return
        out = np.memmap(out_path, dtype=np.int32, mode="w+", shape=(total,))
        cursor = ptr[:-1].copy()
        row = 0
        while row < rows:
            end = int(ragged.ptr.searchsorted(ragged.ptr[row] + POSTING_CHUNK_IDS, "right")) - 1
            end = min(max(end, row + 1), rows)
            ids = ragged.ids[ragged.ptr[row] : ragged.ptr[end]]
            owner = np.repeat(
                np.arange(row, end, dtype=np.int32), np.diff(ragged.ptr[row : end + 1])
            )
            order = _stable_order(ids)
            ordered = ids[order]
            # Within this chunk, an id's holders follow its earlier ones in row order.
            rank = np.arange(len(ordered)) - ordered.searchsorted(ordered, "left")
            out[cursor[ordered] + rank] = owner[order]
            cursor += np.bincount(ids, minlength=id_count)
            row = end
        out.flush()
        del out


def _merge_vocabulary(merged: dict[str, int], names: Iterable[str]) -> np.ndarray:
    """Adds a slice's names (in id order) to `merged`; returns the slice's id -> merged id map."""
    mapping = [merged.setdefault(name, len(merged)) for name in names]
    return np.array(mapping or [0], dtype=np.int32)


def _token_strings(fields: list[str]) -> list[str]:
    """Each field's tokens joined by single spaces (" ".join(tokens(field))), in one pass."""
    fields = [f if f.isascii() else " ".join(tokens(f)) for f in fields]  # accents folded
    text = _FIELD_BREAK.join(f.replace(_FIELD_BREAK, " ") for f in fields).lower()
    spaced = text.encode("ascii", "replace").translate(_SPACE_OUT).decode("ascii")
    return [" ".join(part.split()) for part in spaced.split(_FIELD_BREAK)]


@lru_cache(maxsize=4096)
def _category_stems(categories: tuple[str, ...]) -> frozenset[str]:
    # Thousands of products share a few hundred category paths.
    return frozenset(path_stems(categories))


def _ragged(rows: list[list[int]]) -> Ragged:
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    ids = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int32, count=int(ptr[-1]))
    return Ragged(ptr, ids)


def _concatenate(chunks: list[bytes]) -> tuple[bytes, np.ndarray]:
    ptr = np.zeros(len(chunks) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in chunks], out=ptr[1:])
    return b"".join(chunks), ptr


def _or_nan(value: float | None) -> float:
    return float("nan") if value is None else float(value)
