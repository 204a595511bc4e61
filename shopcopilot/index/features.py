"""FeatureStore: every product's ranking evidence as arrays, built once per index.

A turn scores a few hundred candidates. Decoding each one's JSON and tokenising
its text at query time cost more than the scoring itself, so that work is done
once per catalog: each product's distinct words (as ids), its token text for
phrase tests, its canonical attribute values and its numbers are saved beside
the index and loaded in a fraction of a second. Scoring then gathers the
candidates' rows (see `gather`), and the reranker works on whole columns.
"""

from __future__ import annotations

import itertools
import json
import math
import multiprocessing
import os
import pickle
from collections.abc import Iterable
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
    asins: list[str]
    word_id: dict[str, int]  # product words and category stems share one vocabulary
    words: Ragged  # distinct words of each product's text, plus its category stems
    category_stems: Ragged
    # " tok tok | tok ... " per product: a phrase matches if its token string is a substring
    text: bytes
    text_ptr: np.ndarray
    lead: bytes  # the first feature lines' token strings, NUL-separated
    lead_ptr: np.ndarray
    lists: dict[str, Ragged]  # LIST_FACETS -> value ids
    codes: dict[str, np.ndarray]  # CODE_FACETS -> value id, -1 when unknown
    value_names: list[str]  # value id -> canonical value (every facet shares one table)
    price: np.ndarray  # NaN when unknown
    rating: np.ndarray  # NaN when unknown
    popularity: np.ndarray
    row_of: dict[str, int] = field(default_factory=dict)
    value_id: dict[str, int] = field(default_factory=dict)
    asin_order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    _facets: dict[int, Facets] = field(
        default_factory=dict
    )  # a session asks about the same products again
    # (phrase, in lead lines?) -> row -> where the phrase first occurs (-1: nowhere). A conversation
    # tests the same requirements on mostly the same candidates every turn.
    _found: dict[tuple[bytes, bool], dict[int, int]] = field(default_factory=dict)
    _found_count: int = 0
    _postings: dict[str, Postings] = field(default_factory=dict)  # built on first use (or warm-up)
    # (postings name, ids of a word's forms) -> their holders: conversations ask about the same
    # words.
    _holders: dict[tuple[str, tuple[int, ...]], Holders] = field(default_factory=dict)
    _holders_bytes: int = 0

    def __post_init__(self) -> None:
        self.row_of = {asin: row for row, asin in enumerate(self.asins)}
        self.value_id = {name: i for i, name in enumerate(self.value_names)}
        # Rank of each product's id in sorted order: the reranker's final tie-break.
        order = np.argsort(np.array(self.asins, dtype=object), kind="stable")
        self.asin_order = np.empty(len(self.asins), dtype=np.int64)
        self.asin_order[order] = np.arange(len(self.asins))

    def __len__(self) -> int:
        return len(self.asins)

    def rows(self, asins: Iterable[str]) -> np.ndarray:
        """Rows of the known ids, in the order given (unknown ids are skipped)."""
        row_of = self.row_of
        return np.array([row_of[a] for a in asins if a in row_of], dtype=np.int64)

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
            asins=self.asins,
            word_id=self.word_id,
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
    builder = FeatureBuilder()
    for product, attributes in pairs:
        builder.add(product, attributes)
    return builder.finish()


def ensure_built(store: Any, folder: Path, progress: bool = False) -> None:
    """Build and save the features, and train the query categoriser, unless this code's files are
    already there (not loaded: cheap)."""
    if not _features_path(folder).is_file():
        load_or_build(store, folder, progress)
    ensure_trained(store, folder)


def _features_path(folder: Path) -> Path:
    return folder / f"{FEATURES_PREFIX}{features_version()}.pkl"


def load_or_build(store: Any, folder: Path, progress: bool = False) -> FeatureStore:
    """The features of an index's products, built on first use and saved in its folder."""
    path = _features_path(folder)
    if path.is_file():
        try:
            with path.open("rb") as handle:
                features = _restore(pickle.load(handle))
            if len(features) == len(store):
                return features
        except (OSError, pickle.UnpicklingError, EOFError, KeyError, TypeError, ValueError):
            pass  # unreadable or from another build: rebuild below
    features = build_features(store, progress)
    _save(features, path)
    for stale in folder.glob(f"{FEATURES_PREFIX}*.pkl"):
        if stale != path:
            stale.unlink(missing_ok=True)  # from older code: never read again
    return features


@lru_cache(maxsize=1)
def features_version() -> str:
    """A hash of the code that computes the features: when it changes, saved features are stale."""
    return source_hash(__file__, text_module.__file__)


def build_features(store: Any, progress: bool = False) -> FeatureStore:
    """Every product of an index store, in row order; large stores in parallel slices."""
    rows = len(store)
    workers = parallel_workers() if rows >= PARALLEL_MIN_ROWS else 1
    slices = [
        (store.path, first, min(first + SLICE_ROWS, rows)) for first in range(0, rows, SLICE_ROWS)
    ]
    parts = []
    with ExitStack() as stack:
        # The pool forks before the progress bar starts its thread: forking a threaded process is
        # unsafe.
        pool = (
            stack.enter_context(multiprocessing.get_context("fork").Pool(workers))
            if workers > 1
            else None
        )
        tick = stack.enter_context(progress_counter("ranking features", progress, total=rows))
        for part in pool.imap(_build_slice, slices) if pool else map(_build_slice, slices):
            parts.append(part)
            tick(len(part))
    return concatenate(parts)


def _build_slice(piece: tuple[Path, int, int]) -> FeatureStore:
    path, first, last = piece
    builder = FeatureBuilder()
    for record, attributes in stored_json_rows(path, first, last):
        builder.add_stored(json.loads(record), json.loads(attributes))
    return builder.finish()


def concatenate(parts: list[FeatureStore]) -> FeatureStore:
    """One store from slices built separately: their vocabularies merged, ids renumbered."""
    word_id: dict[str, int] = {}
    value_id: dict[str, int] = {}
    word_maps = [_merge_vocabulary(word_id, part.word_id) for part in parts]
    value_maps = [_merge_vocabulary(value_id, part.value_id) for part in parts]
    return FeatureStore(
        asins=[asin for part in parts for asin in part.asins],
        word_id=word_id,
        words=_join_ragged([p.words for p in parts], word_maps),
        category_stems=_join_ragged([p.category_stems for p in parts], word_maps),
        text=b"".join(p.text for p in parts),
        text_ptr=_join_pointers([p.text_ptr for p in parts]),
        lead=b"".join(p.lead for p in parts),
        lead_ptr=_join_pointers([p.lead_ptr for p in parts]),
        lists={f: _join_ragged([p.lists[f] for p in parts], value_maps) for f in LIST_FACETS},
        codes={f: _join_codes([p.codes[f] for p in parts], value_maps) for f in CODE_FACETS},
        value_names=list(value_id),
        price=np.concatenate([p.price for p in parts]),
        rating=np.concatenate([p.rating for p in parts]),
        popularity=np.concatenate([p.popularity for p in parts]),
    )


def _merge_vocabulary(merged: dict[str, int], part: dict[str, int]) -> np.ndarray:
    """Adds a slice's vocabulary to `merged`; returns the slice's id -> merged id map."""
    mapping = np.zeros(max(len(part), 1), dtype=np.int32)
    for word, local in part.items():
        mapping[local] = merged.setdefault(word, len(merged))
    return mapping


def _join_ragged(pieces: list[Ragged], maps: list[np.ndarray]) -> Ragged:
    ids = np.concatenate([m[r.ids] for r, m in zip(pieces, maps, strict=True)]).astype(np.int32)
    return Ragged(_join_pointers([r.ptr for r in pieces]), ids)


def _join_codes(pieces: list[np.ndarray], maps: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(
        [
            np.where(codes >= 0, m[np.maximum(codes, 0)], -1)
            for codes, m in zip(pieces, maps, strict=True)
        ]
    ).astype(np.int32)


def _join_pointers(pointers: list[np.ndarray]) -> np.ndarray:
    out, offset = [np.zeros(1, dtype=np.int64)], 0
    for ptr in pointers:
        out.append(ptr[1:] + offset)
        offset += int(ptr[-1])
    return np.concatenate(out)


def _save(features: FeatureStore, path: Path) -> None:
    state = {name: getattr(features, name) for name in _STORED}
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    with temp.open("wb") as handle:
        pickle.dump(state, handle, protocol=pickle.HIGHEST_PROTOCOL)
    temp.replace(path)  # atomic: a concurrent reader sees the old file or the whole new one


_STORED = (
    "asins",
    "word_id",
    "words",
    "category_stems",
    "text",
    "text_ptr",
    "lead",
    "lead_ptr",
    "lists",
    "codes",
    "value_names",
    "price",
    "rating",
    "popularity",
)


def _restore(state: dict[str, Any]) -> FeatureStore:
    return FeatureStore(**{name: state[name] for name in _STORED})


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
