"""FeatureStore: every product's ranking evidence as arrays, built once per index.

A turn scores a few hundred candidates. Decoding each one's JSON and tokenising
its text at query time cost more than the scoring itself, so that work is done
once per catalog, while the index is built: each product's distinct words (as ids),
its token text for phrase tests, its canonical attribute values and its numbers,
and the inverted rows of each word and value, are written beside the index as flat
column files, slice by slice. A process opens them memory-mapped, so a million
products cost the pages a turn touches, not the whole catalog in memory, and every
worker shares one copy through the page cache. Scoring gathers the candidates' rows
(see `gather`), and the reranker works on whole columns.
"""

from __future__ import annotations

import itertools
import json
import math
import mmap
import multiprocessing
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..catalog.attributes import Attributes
from ..catalog.product import Product
from ..versions import source_hash
from ..workers import parallel_workers, progress_counter
from . import text as text_module
from .categoriser import ensure_trained
from .errors import CorruptIndexError
from .store import stored_json_rows
from .text import path_stems, tokens

FEATURES_PREFIX = "rank-features-"
# Sellers put a product's main selling points first; a requirement met there is met prominently.
LEAD_FEATURES = 4
LIST_FACETS = ("colors", "materials", "sizes", "use_cases", "styles")
CODE_FACETS = ("department", "closure", "leaf", "brand_key", "store_key", "brand_name")
POPULARITY_SCALE = math.log1p(100_000)
SLICE_ROWS = 5_000
PARALLEL_MIN_ROWS = 20_000
FACETS_CACHE = 100_000
FOUND_CACHE = 1_000_000  # remembered phrase searches (about 100 MB at most)
POSTING_CHUNK_IDS = 4_000_000  # ids inverted at a time while writing postings (bounded memory)
DENSE_HOLDERS = 2_000  # a word held by more rows is looked up in a mask
HOLDERS_CACHE_BYTES = 64 << 20  # remembered holders of asked-about words

# A whole product is tokenised in one pass as bytes: fields joined by a NUL byte, every byte
# that is not [a-z0-9] (index.text.tokens' token) turned into a space, non-ASCII first into "?".
_FIELD_BREAK = "\x00"
_SPACE_OUT = bytes(c if (48 <= c <= 57 or 97 <= c <= 122 or c == 0) else 32 for c in range(256))


@dataclass(frozen=True, slots=True)
class Ragged:
    """Rows of variable-length id lists in two flat arrays (row r is ids[ptr[r]:ptr[r+1]])."""

    ptr: np.ndarray  # int64, rows + 1
    ids: np.ndarray  # int32

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in `rows`, id) for every id of the given rows, without a Python loop."""
        starts = self.ptr[rows]
        lengths = self.ptr[rows + 1] - starts
        owner = np.repeat(np.arange(len(rows)), lengths)
        first_out = np.cumsum(lengths) - lengths
        index = np.arange(int(lengths.sum())) + np.repeat(starts - first_out, lengths)
        return owner, self.ids[index]

    def row(self, row: int) -> np.ndarray:
        return self.ids[self.ptr[row] : self.ptr[row + 1]]

    def nonempty(self, rows: np.ndarray) -> np.ndarray:
        return self.ptr[rows + 1] > self.ptr[rows]


@dataclass(frozen=True, slots=True)
class Keys:
    """Strings numbered 0, 1, ... (product ids, words) as one fixed-width byte array, found by a
    binary search through their sorted order: a dict of a million Python strings costs about
    150 MB in every process, these arrays are mapped from disk and shared."""

    raw: np.ndarray  # S<width>: key i, UTF-8
    by_rank: np.ndarray  # intp: key numbers in sorted order
    rank: np.ndarray  # int32: each key's position in sorted order

    def __post_init__(self) -> None:
        # searchsorted copies a sorter of any other dtype on every call: 0.4 ms at a million keys.
        if self.by_rank.dtype != np.intp:
            object.__setattr__(self, "by_rank", self.by_rank.astype(np.intp))

    @classmethod
    def of(cls, keys: Iterable[str]) -> Keys:
        raw = np.array([k.encode("utf-8") for k in keys], dtype=np.bytes_)
        return cls.sorted(raw if len(raw) else np.zeros(0, dtype="S1"))

    @classmethod
    def sorted(cls, raw: np.ndarray) -> Keys:
        """The keys of a fixed-width byte array, in its order."""
        by_rank = np.argsort(raw, kind="stable").astype(np.intp)
        rank = np.empty(len(raw), dtype=np.int32)
        rank[by_rank] = np.arange(len(raw), dtype=np.int32)
        return cls(raw, by_rank, rank)

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, number: int) -> str:
        return bytes(self.raw[number]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self.raw), SLICE_ROWS):
            yield from (k.decode("utf-8") for k in self.raw[start : start + SLICE_ROWS].tolist())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def get(self, key: str) -> int | None:
        """The key's number, or None."""
        encoded = key.encode("utf-8")
        # A fixed-width array drops trailing NULs and cannot hold a longer key: neither is stored.
        if not len(self.raw) or len(encoded) > self.raw.itemsize or encoded.endswith(b"\0"):
            return None
        at = int(self.raw.searchsorted(encoded, sorter=self.by_rank))
        if at < len(self.raw) and self.raw[number := int(self.by_rank[at])] == encoded:
            return number
        return None

    def numbers(self, keys: Iterable[str]) -> np.ndarray:
        """The numbers of the known keys, in the order given (unknown keys are skipped)."""
        found = (self.get(k) for k in keys)
        return np.array([n for n in found if n is not None], dtype=np.int64)


@dataclass(frozen=True, slots=True)
class Postings:
    """A Ragged turned inside out: for each id, the rows that hold it, ascending. A turn asks
    about a dozen words over a few hundred candidates; looking the candidates up in each word's
    rows is cheaper than gathering every word of every candidate."""

    ptr: np.ndarray  # int64, ids + 1
    rows: np.ndarray  # int32

    @classmethod
    def of(cls, ragged: Ragged, id_count: int) -> Postings:
        owner = np.repeat(np.arange(len(ragged.ptr) - 1, dtype=np.int32), np.diff(ragged.ptr))
        ptr = np.zeros(id_count + 1, dtype=np.int64)
        np.cumsum(np.bincount(ragged.ids, minlength=id_count), out=ptr[1:])
        return cls(ptr, owner[_stable_order(ragged.ids)])

    def rows_of(self, wanted: int) -> np.ndarray:
        return self.rows[self.ptr[wanted] : self.ptr[wanted + 1]]

    def held_by(self, groups: Sequence[Iterable[int]], rows: np.ndarray) -> list[np.ndarray]:
        """Per group of ids (a word's forms), per row: does any of the group's ids list it? A
        binary search of the rows, sorted once, in each id's sorted rows (each search starts
        where the last ended): a few thousand lookups, where a mask over the catalog would cost
        a pass over a common word's rows."""
        order = np.argsort(rows, kind="stable")
        ascending = rows[order]
        out = []
        for ids in groups:
            found = np.zeros(len(rows), dtype=bool)
            for number in ids:
                held = self.rows_of(number)
                if len(held):
                    wanted = ascending.astype(held.dtype, copy=False)
                    found |= held.take(held.searchsorted(wanted), mode="clip") == wanted
            in_order = np.empty_like(found)
            in_order[order] = found
            out.append(in_order)
        return out


@dataclass(frozen=True, slots=True)
class Holders:
    """The rows holding a word in any of its forms: sorted rows when few, else a mask over all
    rows (a lookup per candidate, where a binary search through thousands of rows is slow)."""

    sorted_rows: np.ndarray | None  # int32
    mask: np.ndarray | None

    @classmethod
    def of(cls, parts: list[np.ndarray], row_count: int) -> Holders:
        """The holders of several sorted row lists (a word's forms)."""
        if sum(map(len, parts)) <= DENSE_HOLDERS:
            return cls(parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts)), None)
        mask = np.zeros(row_count, dtype=bool)
        for rows in parts:
            mask[rows] = True
        return cls(None, mask)

    @property
    def nbytes(self) -> int:
        held = self.mask if self.mask is not None else self.sorted_rows
        assert held is not None  # `of` sets exactly one of mask and sorted_rows
        return held.nbytes

    def among(self, rows: np.ndarray) -> np.ndarray:
        """Per row: does it hold the word?"""
        if self.mask is not None:
            return self.mask[rows]
        held = self.sorted_rows
        assert held is not None  # `of` sets sorted_rows whenever it leaves mask None
        if not len(held):
            return np.zeros(len(rows), dtype=bool)
        rows = rows.astype(held.dtype, copy=False)  # else numpy widens all of `held` per call
        return held.take(held.searchsorted(rows), mode="clip") == rows


def _stable_order(ids: np.ndarray) -> np.ndarray:
    """argsort(ids, kind="stable") for ids >= 0, as a radix sort on 16-bit digits: numpy sorts
    16-bit keys by radix, several times faster than its stable sort of wider ones."""
    order = np.arange(len(ids))
    shift, top = 0, int(ids.max()) if len(ids) else 0
    while True:
        digit = ((ids[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
        if top >> shift == 0:
            return order


class Facets(NamedTuple):
    """A product's canonical values, decoded for the few products a question or reason needs
    (a tuple: a turn may create dozens, and a frozen dataclass costs ten times more to make)."""

    colors: tuple[str, ...]
    materials: tuple[str, ...]
    sizes: tuple[str, ...]
    use_cases: tuple[str, ...]
    styles: tuple[str, ...]
    department: str | None
    closure: str | None
    leaf: str
    brand: str | None  # the brand, else the store: what a shopper would call it
    price: float | None


@dataclass(slots=True)
class FeatureStore:
    asins: Keys  # product id of each row; rank: the reranker's final tie-break
    word_id: Keys  # product words and category stems share one vocabulary
    words: Ragged  # distinct words of each product's text, plus its category stems
    category_stems: Ragged
    # " tok tok | tok ... " per product: a phrase matches if its token string is a substring
    text: bytes | mmap.mmap
    text_ptr: np.ndarray
    lead: bytes | mmap.mmap  # the first feature lines' token strings, NUL-separated
    lead_ptr: np.ndarray
    lists: dict[str, Ragged]  # LIST_FACETS -> value ids
    codes: dict[str, np.ndarray]  # CODE_FACETS -> value id, -1 when unknown
    value_names: list[str]  # value id -> canonical value (every facet shares one table)
    price: np.ndarray  # NaN when unknown
    rating: np.ndarray  # NaN when unknown
    popularity: np.ndarray
    # The inverted rows of "words", "category_stems" and each list facet: read from the index
    # folder, or built on first use for a store made in memory.
    _postings: dict[str, Postings] = field(default_factory=dict)
    value_id: dict[str, int] = field(default_factory=dict)
    _facets: dict[int, Facets] = field(
        default_factory=dict
    )  # a session asks about the same products again
    # (phrase, in lead lines?) -> row -> where the phrase first occurs (-1: nowhere). A conversation
    # tests the same requirements on mostly the same candidates every turn.
    _found: dict[tuple[bytes, bool], dict[int, int]] = field(default_factory=dict)
    _found_count: int = 0
    # (postings name, ids of a word's forms) -> their holders: conversations ask about the same
    # words.
    _holders: dict[tuple[str, tuple[int, ...]], Holders] = field(default_factory=dict)
    _holders_bytes: int = 0

    def __post_init__(self) -> None:
        self.value_id = {name: i for i, name in enumerate(self.value_names)}

    @property
    def asin_order(self) -> np.ndarray:
        """Rank of each product's id in sorted order: the reranker's final tie-break."""
        return self.asins.rank

    def __len__(self) -> int:
        return len(self.asins)

    def rows(self, asins: Iterable[str]) -> np.ndarray:
        """Rows of the known ids, in the order given (unknown ids are skipped)."""
        return self.asins.numbers(asins)

    def row_of(self, asin: str) -> int | None:
        return self.asins.get(asin)

    @staticmethod
    def of_store_rows(store_rows: np.ndarray) -> np.ndarray:
        """Feature rows of index-store rows: the store numbers products 1, 2, ... and this store
        was built from it in that order."""
        return store_rows - 1

    def code_name(self, facet: str, row: int) -> str | None:
        code = int(self.codes[facet][row])
        return self.value_names[code] if code >= 0 else None

    def warm_facets(self) -> None:
        """Decode every product's facets now (about 0.3 s at 50k, in slices), if the cache holds
        them all."""
        if len(self) > FACETS_CACHE:
            return
        for start in range(0, len(self), SLICE_ROWS):
            self.facets(list(range(start, min(start + SLICE_ROWS, len(self)))))

    def postings(self, name: str) -> Postings:
        """The inverted rows of "words", "category_stems" or a list facet (about 0.3 s for the
        words of 50k products, once)."""
        postings = self._postings.get(name)
        if postings is None:
            ragged = self.lists[name] if name in self.lists else getattr(self, name)
            id_count = len(self.value_names) if name in self.lists else len(self.word_id)
            postings = self._postings[name] = Postings.of(ragged, id_count)
        return postings

    def holders(self, name: str, ids: tuple[int, ...]) -> Holders:
        """The rows holding any of `ids` in the postings `name`."""
        key = (name, ids)
        found = self._holders.get(key)
        if found is None:
            postings = self.postings(name)
            found = Holders.of([postings.rows_of(i) for i in ids], len(self))
            if self._holders_bytes + found.nbytes > HOLDERS_CACHE_BYTES:
                self._holders.clear()
                self._holders_bytes = 0
            self._holders[key] = found
            self._holders_bytes += found.nbytes
        return found

    def word_ids(self, word: str) -> tuple[int, ...]:
        """The ids of an index token and of its category stem ("shoes": the word in titles and
        features, "shoe" in category paths), where the store has them."""
        forms = dict.fromkeys((word, text_module.stem(word)))
        return tuple(i for i in map(self.word_id.get, forms) if i is not None)

    def holder_count(self, word: str) -> int:
        """About how many products hold an index token (its commoner form's count)."""
        ptr = self.postings("words").ptr
        return max((int(ptr[i + 1] - ptr[i]) for i in self.word_ids(word)), default=0)

    def holds_words(self, words: Sequence[str], rows: np.ndarray) -> list[np.ndarray]:
        """Per word, per row: does the product hold the index token (or its category stem)?"""
        return self.postings("words").held_by([self.word_ids(w) for w in words], rows)

    def facets(self, rows: list[int]) -> list[Facets]:
        """The rows' canonical values, in order; rows not seen before are decoded together."""
        missing = [row for row in dict.fromkeys(rows) if row not in self._facets]
        if missing:
            if len(self._facets) + len(missing) > FACETS_CACHE:
                self._facets.clear()
            self._facets.update(zip(missing, self._decode_facets(missing), strict=True))
        return [self._facets[row] for row in rows]

    def find(self, key: bytes, rows: np.ndarray, lead: bool = False) -> list[int]:
        """Where `key` first occurs in each row's token text (or lead lines), as an offset into
        `text` (`lead`); -1 where it does not."""
        known = self._found.get((key, lead))
        if known is None:
            known = self._found[(key, lead)] = {}
        wanted = rows.tolist()
        missing = [row for row in wanted if row not in known]
        if missing:
            if self._found_count + len(missing) > FOUND_CACHE:
                self._found.clear()
                self._found_count = 0
                known = self._found[(key, lead)] = {}
            blob, ptr = (self.lead, self.lead_ptr) if lead else (self.text, self.text_ptr)
            at = np.array(missing)
            find = blob.find
            known.update(
                (row, find(key, start, end))
                for row, start, end in zip(
                    missing, ptr[at].tolist(), ptr[at + 1].tolist(), strict=True
                )
            )
            self._found_count += len(missing)
        return [known[row] for row in wanted]

    def _decode_facets(self, rows: list[int]) -> list[Facets]:
        names = self.value_names
        at = np.asarray(rows, dtype=np.int64)
        listed: dict[str, list[list[str]]] = {}
        for facet in LIST_FACETS:
            values: list[list[str]] = [[] for _ in rows]
            listed[facet] = values
            owner, ids = self.lists[facet].gather(at)
            for position, value_id in zip(owner.tolist(), ids.tolist(), strict=True):
                values[position].append(names[value_id])
        codes = {
            facet: self.codes[facet][at].tolist()
            for facet in ("department", "closure", "leaf", "brand_name")
        }
        named = {
            facet: [names[c] if c >= 0 else None for c in column] for facet, column in codes.items()
        }
        prices = self.price[at].tolist()
        return [
            Facets(
                colors=tuple(listed["colors"][i]),
                materials=tuple(listed["materials"][i]),
                sizes=tuple(listed["sizes"][i]),
                use_cases=tuple(listed["use_cases"][i]),
                styles=tuple(listed["styles"][i]),
                department=named["department"][i],
                closure=named["closure"][i],
                leaf=named["leaf"][i] or "",
                brand=named["brand_name"][i],
                price=None if math.isnan(prices[i]) else prices[i],
            )
            for i in range(len(rows))
        ]


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


FEATURES_META = "meta.json"


def features_folder(folder: Path) -> Path:
    """Where this code's features of the index in `folder` live."""
    return folder / f"{FEATURES_PREFIX}{features_version()}"


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


@lru_cache(maxsize=1)
def features_version() -> str:
    """A hash of the code that computes the features: when it changes, saved features are stale."""
    return source_hash(__file__, text_module.__file__)


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


def _read_meta(target: Path, rows: int | None) -> dict[str, Any] | None:
    """The features folder's meta when it is complete, for `rows` products (None: any), and every
    file has the size it was written with; else None."""
    try:
        meta = json.loads((target / FEATURES_META).read_text(encoding="utf-8"))
        if rows is not None and meta["rows"] != rows:
            return None
        for name, size in meta["sizes"].items():
            if (target / name).stat().st_size != size:
                return None
        return meta if isinstance(meta["dtypes"], dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _open(target: Path, meta: dict[str, Any]) -> FeatureStore:
    """Every column mapped read-only: pages are read when a turn touches them, and shared by every
    process that opens the same index."""
    dtypes = meta["dtypes"]

    def column(name: str) -> np.ndarray:
        return _column(target / name, dtypes[name])

    def keys(name: str) -> Keys:
        return Keys(*(column(f"{name}-{part}") for part in ("raw", "by_rank", "rank")))

    return FeatureStore(
        asins=keys("asins"),
        word_id=keys("words"),
        words=_ragged_column(target, "words", dtypes),
        category_stems=_ragged_column(target, "category_stems", dtypes),
        text=_mapped(target / "text-ids"),
        text_ptr=column("text-ptr"),
        lead=_mapped(target / "lead-ids"),
        lead_ptr=column("lead-ptr"),
        lists={f: _ragged_column(target, f"list-{f}", dtypes) for f in LIST_FACETS},
        codes={f: column(f"code-{f}") for f in CODE_FACETS},
        value_names=json.loads((target / "values.json").read_text(encoding="utf-8")),
        price=column("price"),
        rating=column("rating"),
        popularity=column("popularity"),
        _postings={
            name: Postings(column(f"postings-{key}-ptr"), column(f"postings-{key}-rows"))
            for name, key in (
                ("words", "words"),
                ("category_stems", "category_stems"),
                *((f, f"list-{f}") for f in LIST_FACETS),
            )
        },
    )


def _ragged_column(target: Path, name: str, dtypes: dict[str, str]) -> Ragged:
    return Ragged(
        _column(target / f"{name}-ptr", dtypes[f"{name}-ptr"]),
        _column(target / f"{name}-ids", dtypes[f"{name}-ids"]),
    )


def _mapped(path: Path) -> bytes | mmap.mmap:
    """A file's bytes, mapped read-only (an empty file cannot be mapped: b"")."""
    with path.open("rb") as handle:
        if not os.fstat(handle.fileno()).st_size:
            return b""
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


def _column(path: Path, dtype: str) -> np.ndarray:
    """A read-only array over the mapped file (a plain ndarray, not np.memmap: arithmetic on it
    returns ordinary arrays)."""
    return np.frombuffer(_mapped(path), dtype=np.dtype(dtype))


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
